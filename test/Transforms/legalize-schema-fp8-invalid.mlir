// RUN: humming-opt %s -split-input-file --humming-legalize-schema="chip=sm_90a" -verify-diagnostics
// RUN: not humming-opt %s -split-input-file --humming-legalize-schema="chip=sm_89" 2>&1 | FileCheck %s --check-prefix=ADA

// Weights prepared for fp8 activations that the kernels do not take (groups
// of 32, on sm_90a and sm_89 alike): the fallback to 16-bit activations
// would read them in the 16-bit layout, so it is refused with both reasons.
// ADA: error: 'humming.gemm' op the prepared mma_sync layout applies group scales to each 64-column iteration's f32 sums with f8E4M3FN activations and expects groups of at least 64, got 32; the weights are prepared for f8E4M3FN activations, which the 16-bit fallback cannot read: prepare them for 16-bit activations or pass canonical weights
func.func @small_groups(%x: memref<?x512xf16>, %q: memref<?x512xf8E4M3FN>, %as: memref<?x1xf32>, %w: memref<16x1024xi32>, %s: memref<16x256xf16>, %c: memref<?x256xf16>) {
  humming.quantize %x into %q scales(%as : memref<?x1xf32>)
      {schema = #humming.input_schema<type = f8E4M3FN, scaling = token>}
      : memref<?x512xf16> -> memref<?x512xf8E4M3FN>
  // expected-error @+1 {{the prepared mma_sync layout applies group scales to each 64-column iteration's f32 sums with f8E4M3FN activations and expects groups of at least 64, got 32; the weights are prepared for f8E4M3FN activations, which the 16-bit fallback cannot read: prepare them for 16-bit activations or pass canonical weights}}
  humming.gemm %q, %w scales(%s : memref<16x256xf16>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<32>>,
       input_schema = #humming.input_schema<type = f8E4M3FN, scaling = token>, layout = #humming.layout<chip = "sm_90a">}
      : memref<?x512xf8E4M3FN>, memref<16x1024xi32> -> memref<?x256xf16>
  return
}
