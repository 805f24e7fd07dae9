// RUN: humming-opt %s --humming-lower-to-nvvm="chip=sm_75" -split-input-file -verify-diagnostics

// A T4 (sm_75) has no m16n8k16 f16 MMA with f32 accumulation of the kind the
// mma_sync family emits: refused by the verifier under a target, by the
// lowering without one.
module attributes {humming.target = #humming.target<device = "T4">} {
func.func @turing(%a: memref<?x128xf16>, %w: memref<128x16xi32>, %s: memref<128x1xf16>, %c: memref<?x128xf16>) {
  // expected-error @+1 {{the GEMM kernels need sm_80 or newer (mma.sync m16n8k16 and cp.async), got sm_75}}
  humming.gemm %a, %w scales(%s : memref<128x1xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16>, input_schema = #humming.input_schema<type = f16>}
      : memref<?x128xf16>, memref<128x16xi32> -> memref<?x128xf16>
  return
}
}

// -----

func.func @no_target(%a: memref<?x128xf16>, %w: memref<128x16xi32>, %s: memref<128x1xf16>, %c: memref<?x128xf16>) {
  // expected-error @+1 {{the mma_sync lowering needs sm_80 or newer (m16n8k16), got sm_75}}
  humming.gemm %a, %w scales(%s : memref<128x1xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16>, input_schema = #humming.input_schema<type = f16>}
      : memref<?x128xf16>, memref<128x16xi32> -> memref<?x128xf16>
  return
}
