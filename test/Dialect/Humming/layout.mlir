// RUN: humming-opt %s | humming-opt | FileCheck %s
// RUN: humming-opt %s --mlir-print-op-generic | humming-opt | FileCheck %s

// CHECK-LABEL: func.func @layouts
// CHECK-SAME: a = #humming.layout<chip = "sm_80">
// CHECK-SAME: b = #humming.layout<mma = wgmma, chip = "sm_90a">
// CHECK-SAME: c = #humming.layout<mma = tcgen05, chip = "sm_100a">
// CHECK-SAME: d = #humming.layout<mma = tcgen05, chip = "sm_103f">
// CHECK-SAME: e = #humming.layout<mma = block_scaled, chip = "sm_120a">
// CHECK-SAME: f = #humming.layout<chip = "sm_90a">
func.func @layouts() attributes {
  a = #humming.layout<mma = mma_sync, chip = "sm_80">,
  b = #humming.layout<mma = wgmma, chip = "sm_90a">,
  c = #humming.layout<chip = "sm_100a", mma = tcgen05>,
  d = #humming.layout<mma = tcgen05, chip = "sm_103f">,
  e = #humming.layout<mma = block_scaled, chip = "sm_120a">,
  f = #humming.layout<chip = "sm_90a">
} { return }
