// RUN: not humming-opt %s --humming-attach-target="device=H300" 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not humming-opt %s --humming-attach-target="device=H200 chip=sm_95" 2>&1 | FileCheck %s --check-prefix=CHIP
// RUN: not humming-opt %s --humming-attach-target="device=H200 ptx-version=70" 2>&1 | FileCheck %s --check-prefix=PTX
// RUN: not humming-opt %s --humming-attach-target="device=A100" 2>&1 | FileCheck %s --check-prefix=VERIFY

// UNKNOWN: error: humming-attach-target: unknown device 'H300'; expected one of T4, A100, A800, A10, RTX 3090, Orin, L4, L40S, RTX 4090, H20, H100, H800, H200, B200, GB200, B300, Thor, RTX 5090, RTX PRO 6000, DGX Spark
// CHIP: error: humming-attach-target: expected a chip among sm_75,
// CHIP-SAME: got 'sm_95'
// PTX: error: humming-attach-target: expected a PTX ISA version between 80 and 90 for sm_90a, got 70

// An fp8 layer is legal IR on its own, but not once the module targets an A100.
// VERIFY: error: 'humming.gemm' op expected sm_89 or newer for f8E4M3FN activations, got sm_80
func.func @gemm_fp8(%a: memref<?x4096xf8E4M3FN>, %w: memref<4096x1024xi32>, %s: memref<4096x1xf16>, %as: memref<?x1xf32>, %c: memref<?x4096xf16>) {
  humming.gemm %a, %w scales(%s : memref<4096x1xf16>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = f8E4M3FN, scale = f16>,
       input_schema = #humming.input_schema<type = f8E4M3FN, scaling = token>}
      : memref<?x4096xf8E4M3FN>, memref<4096x1024xi32> -> memref<?x4096xf16>
  return
}
