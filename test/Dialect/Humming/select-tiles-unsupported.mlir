// RUN: humming-opt %s -split-input-file -verify-diagnostics --humming-select-tiles="device=H200"

// Weights the prepared mma_sync layout cannot hold get no tiles, and say why.
func.func @ue8m0_f16(%a: memref<?x128xf16>, %w: memref<8x256xi32>, %s: memref<4x128xf8E8M0FNU>, %c: memref<?x128xf16>) {
  // expected-error @+1 {{the prepared mma_sync layout applies scales in the activation type and expects scales that f16 represents exactly, got f8E8M0FNU (the weights are prepared)}}
  humming.gemm %a, %w scales(%s : memref<4x128xf8E8M0FNU>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f8E8M0FNU, granularity = group<32>>, input_schema = #humming.input_schema<type = f16>,
       layout = #humming.layout<chip = "sm_90a">}
      : memref<?x128xf16>, memref<8x256xi32> -> memref<?x128xf16>
  return
}
