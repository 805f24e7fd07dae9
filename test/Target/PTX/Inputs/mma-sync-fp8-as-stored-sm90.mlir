// A layer for ptxas-mma-sync-fp8-sm90.test (not a test itself): fp8
// weights taken as stored with fp8 activations in sm_90's mma_sync kernels
// (a cooperative tile of two warp rows). sm_90 has no wgmma, so its
// prepared tiles keep the fragment order (on sm_90a they lie K-major, for
// wgmma alone).
#coop = #humming.tile_config<m = [1, inf], block = [64, 64, 64], warp = [32, 64, 64], stages = 3>
func.func @w8a8(%a: memref<?x512xf8E4M3FN>, %w: memref<16x2048xi32>, %s: memref<1x256xf16>, %as: memref<?x1xf32>, %c: memref<?x256xf16>) {
  humming.gemm %a, %w scales(%s : memref<1x256xf16>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = f8E4M3FN, scale = f16, granularity = channel>,
       input_schema = #humming.input_schema<type = f8E4M3FN, scaling = token>, layout = #humming.layout<chip = "sm_90">,
       tile_configs = [#coop]}
      : memref<?x512xf8E4M3FN>, memref<16x2048xi32> -> memref<?x256xf16>
  return
}
