// RUN: humming-opt %s --humming-attach-target="device=H200" | FileCheck %s --check-prefix=H200
// RUN: humming-opt %s --humming-attach-target="device=h100 chip=sm_90 ptx-version=85" | FileCheck %s --check-prefix=SM90
// RUN: humming-opt %s --humming-attach-target="device=RTX5090" | FileCheck %s --check-prefix=RTX
// RUN: humming-opt %s --humming-attach-target="device=thor" | FileCheck %s --check-prefix=THOR
// RUN: humming-opt %s --humming-attach-target="device=GB200" | FileCheck %s --check-prefix=GB200

// H200: module attributes {humming.target = #humming.target<device = "H200">}
// SM90: module attributes {humming.target = #humming.target<device = "H100", chip = "sm_90", ptx = 85>}
// RTX: module attributes {humming.target = #humming.target<device = "RTX 5090">}
// THOR: module attributes {humming.target = #humming.target<device = "Thor">}
// GB200: module attributes {humming.target = #humming.target<device = "GB200">}

// The layer is re-verified against the attached chip.
// H200-LABEL: func.func @gemm_w4a16
func.func @gemm_w4a16(%a: memref<?x4096xf16>, %w: memref<4096x512xi32>, %s: memref<4096x1xf16>, %c: memref<?x4096xf16>) {
  humming.gemm %a, %w scales(%s : memref<4096x1xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16>, input_schema = #humming.input_schema<type = f16>}
      : memref<?x4096xf16>, memref<4096x512xi32> -> memref<?x4096xf16>
  return
}
