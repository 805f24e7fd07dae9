// Layers for ptxas-mma-sync-a8.test (not a test itself): si4 activations in
// the mma_sync m16n8k64 s4 kernels (W4A4 int), tiles from the chip's
// representative device.
func.func @w4a4(%a: memref<?x512xi4>, %w: memref<8x2048xi32>, %s: memref<1x256xf16>, %as: memref<?x1xf32>, %c: memref<?x256xf16>) {
  humming.gemm %a, %w scales(%s : memref<1x256xf16>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = si4, scale = f16, granularity = channel>,
       input_schema = #humming.input_schema<type = si4, scaling = token>, layout = #humming.layout<chip = "sm_80">}
      : memref<?x512xi4>, memref<8x2048xi32> -> memref<?x256xf16>
  return
}
