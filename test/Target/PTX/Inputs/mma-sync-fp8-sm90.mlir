// Layers for ptxas-mma-sync-fp8-sm90.test (not a test itself): fp8
// activations in sm_90a's mma_sync kernels with forced tiles: e4m3 over
// dequantized 4-bit weights with group scales (the 16-row decode tile) and
// e5m2 with a static scale. (fp8 weights taken as stored lie K-major on
// sm_90a, for wgmma alone: mma-sync-fp8-as-stored-sm90.mlir has them on
// sm_90, whose layout keeps the fragment order.)
#dec = #humming.tile_config<m = [1, inf], block = [16, 64, 256], warp = [16, 64, 64], stages = 3, scale_after_mma = true>
#decc = #humming.tile_config<m = [1, inf], block = [16, 64, 256], warp = [16, 64, 64], stages = 3>
func.func @w4a8_g128(%a: memref<?x512xf8E4M3FN>, %w: memref<16x1024xi32>, %s: memref<4x256xbf16>, %as: memref<?x1xf32>, %c: memref<?x256xbf16>) {
  humming.gemm %a, %w scales(%s : memref<4x256xbf16>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = bf16, granularity = group<128>>,
       input_schema = #humming.input_schema<type = f8E4M3FN, scaling = token>, layout = #humming.layout<chip = "sm_90a">,
       tile_configs = [#dec]}
      : memref<?x512xf8E4M3FN>, memref<16x1024xi32> -> memref<?x256xbf16>
  return
}
func.func @w4a8_e5m2_static(%a: memref<?x512xf8E5M2>, %w: memref<16x1024xi32>, %s: memref<1x256xf16>, %as: memref<1xf32>, %c: memref<?x256xf16>) {
  humming.gemm %a, %w scales(%s : memref<1x256xf16>) input_scale(%as : memref<1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = si4, scale = f16, granularity = channel>,
       input_schema = #humming.input_schema<type = f8E5M2, scaling = static>, layout = #humming.layout<chip = "sm_90a">,
       tile_configs = [#decc]}
      : memref<?x512xf8E5M2>, memref<16x1024xi32> -> memref<?x256xf16>
  return
}
