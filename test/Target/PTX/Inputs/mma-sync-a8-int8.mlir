// Layers for ptxas-mma-sync-a8.test (not a test itself): int8 activations
// in the mma_sync m16n8k32 kernels (sm_80 and later), tiles from the chip's
// representative device.
func.func @w8a8(%a: memref<?x512xi8>, %w: memref<16x2048xi32>, %s: memref<1x256xf16>, %as: memref<?x1xf32>, %c: memref<?x256xf16>) {
  humming.gemm %a, %w scales(%s : memref<1x256xf16>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = si8, scale = f16, granularity = channel>,
       input_schema = #humming.input_schema<type = si8, scaling = token>, layout = #humming.layout<chip = "CHIP">}
      : memref<?x512xi8>, memref<16x2048xi32> -> memref<?x256xf16>
  return
}
func.func @w4a8_zp_g64(%a: memref<?x512xi8>, %w: memref<16x1024xi32>, %s: memref<8x256xbf16>, %z: memref<8x32xi32>, %as: memref<?x1xf32>, %c: memref<?x256xbf16>) {
  humming.gemm %a, %w scales(%s : memref<8x256xbf16>) zero_points(%z : memref<8x32xi32>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = bf16, granularity = group<64>, zero_point = int>,
       input_schema = #humming.input_schema<type = si8, scaling = token>, layout = #humming.layout<chip = "CHIP">}
      : memref<?x512xi8>, memref<16x1024xi32> -> memref<?x256xbf16>
  return
}
