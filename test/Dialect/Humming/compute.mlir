// RUN: humming-opt %s | humming-opt | FileCheck %s
// RUN: humming-opt %s --mlir-print-op-generic | humming-opt | FileCheck %s

// CHECK-LABEL: func.func @compute
// CHECK-SAME: a = #humming.compute<>
// CHECK-SAME: b = #humming.compute<gemm = indexed>
// CHECK-SAME: c = #humming.compute<gemm = grouped_contiguous, f16_accumulation = true>
// CHECK-SAME: d = #humming.compute<gemm = grouped_masked, batch_invariant = true>
// CHECK-SAME: e = #humming.compute<f16_accumulation = true, batch_invariant = true>
func.func @compute() attributes {
  a = #humming.compute<gemm = dense, f16_accumulation = false, batch_invariant = false>,
  b = #humming.compute<gemm = indexed>,
  c = #humming.compute<f16_accumulation = true, gemm = grouped_contiguous>,
  d = #humming.compute<gemm = grouped_masked, batch_invariant = true>,
  e = #humming.compute<batch_invariant = true, f16_accumulation = true>
} { return }

// CHECK-LABEL: func.func @operands
// CHECK-SAME: a = #humming.operand<weight>
// CHECK-SAME: b = #humming.operand<scales>
// CHECK-SAME: c = #humming.operand<zero_points>
// CHECK-SAME: d = #humming.operand<global_scale>
// CHECK-SAME: e = #humming.operand<bias>
func.func @operands() attributes {
  a = #humming.operand<weight>, b = #humming.operand<scales>, c = #humming.operand<zero_points>,
  d = #humming.operand<global_scale>, e = #humming.operand<bias>
} { return }
