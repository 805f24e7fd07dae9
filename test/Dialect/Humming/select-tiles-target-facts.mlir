// RUN: humming-opt %s -split-input-file -verify-diagnostics --humming-select-tiles
// RUN: not humming-opt %s --humming-select-tiles="device=H200" 2>&1 | FileCheck %s --check-prefix=DEVICE

// A module whose #humming.target gives a device's facts: select-tiles takes
// them (device= may not replace them).
// DEVICE: error: humming-select-tiles: the module's humming.target gives its device's facts (sm_89); expected no device=, got 'H200'

// A device whose shared memory cannot hold even a two-slot pipeline.
module attributes {humming.target = #humming.target<chip = "sm_89", sms = 84, bandwidth = 960.0, smem = 4, l2 = 64, f16 = 150.0, bf16 = 150.0, fp8 = 300.0, int8 = 300.0, int4 = 0.0, fp4 = 0.0>} {
func.func @tiny_smem(%a: memref<?x128xf16>, %w: memref<8x256xi32>, %s: memref<1x128xf16>, %c: memref<?x128xf16>) {
  // expected-error @+1 {{humming-select-tiles: no mma_sync tile fits sm_89 (4096 bytes of shared memory) for warp_m = 16}}
  humming.gemm %a, %w scales(%s : memref<1x128xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>>, input_schema = #humming.input_schema<type = f16>,
       layout = #humming.layout<chip = "sm_89">}
      : memref<?x128xf16>, memref<8x256xi32> -> memref<?x128xf16>
  return
}
}
