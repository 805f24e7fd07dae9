// Layers for ptxas-wgmma.test (not a test itself).
#t = #humming.tile_config<m = [1, inf], block = [128, 256, 32], warp = [128, 32, 32], mma = wgmma>
func.func @w4(%a: memref<?x512xf16>, %w: memref<32x512xi32>, %s: memref<4x256xf16>, %c: memref<?x256xf16>) {
  humming.gemm %a, %w scales(%s : memref<4x256xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>>,
       input_schema = #humming.input_schema<type = f16>, layout = #humming.layout<chip = "sm_90a">,
       tile_configs = [#t]}
      : memref<?x512xf16>, memref<32x512xi32> -> memref<?x256xf16>
  return
}
func.func @w3(%a: memref<?x512xf16>, %w: memref<32x384xi32>, %s: memref<4x256xf16>, %c: memref<?x256xf16>) {
  humming.gemm %a, %w scales(%s : memref<4x256xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui3, scale = f16, granularity = group<128>>,
       input_schema = #humming.input_schema<type = f16>, layout = #humming.layout<chip = "sm_90a">,
       tile_configs = [#t]}
      : memref<?x512xf16>, memref<32x384xi32> -> memref<?x256xf16>
  return
}
func.func @w8(%a: memref<?x512xbf16>, %w: memref<32x1024xi32>, %s: memref<1x256xbf16>, %c: memref<?x256xbf16>) {
  humming.gemm %a, %w scales(%s : memref<1x256xbf16>) into %c
      {weight_schema = #humming.weight_schema<type = f8E4M3FN, scale = bf16>,
       input_schema = #humming.input_schema<type = bf16>, layout = #humming.layout<chip = "sm_90a">,
       tile_configs = [#t]}
      : memref<?x512xbf16>, memref<32x1024xi32> -> memref<?x256xbf16>
  return
}
// The tiles the H200 heuristics choose: 128 tokens x 64 of K per iteration
// (M >= 513) and 64 tokens x 64 of K (M = 129-512).
#t64 = #humming.tile_config<m = [1, inf], block = [128, 256, 64], warp = [128, 32, 64], mma = wgmma>
#m64 = #humming.tile_config<m = [1, inf], block = [64, 256, 64], warp = [64, 32, 64], mma = wgmma>
func.func @w4k64(%a: memref<?x512xf16>, %w: memref<32x512xi32>, %s: memref<4x256xf16>, %c: memref<?x256xf16>) {
  humming.gemm %a, %w scales(%s : memref<4x256xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>>,
       input_schema = #humming.input_schema<type = f16>, layout = #humming.layout<chip = "sm_90a">,
       tile_configs = [#t64]}
      : memref<?x512xf16>, memref<32x512xi32> -> memref<?x256xf16>
  return
}
func.func @w4m64(%a: memref<?x512xf16>, %w: memref<32x512xi32>, %s: memref<4x256xf16>, %c: memref<?x256xf16>) {
  humming.gemm %a, %w scales(%s : memref<4x256xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>>,
       input_schema = #humming.input_schema<type = f16>, layout = #humming.layout<chip = "sm_90a">,
       tile_configs = [#m64]}
      : memref<?x512xf16>, memref<32x512xi32> -> memref<?x256xf16>
  return
}
// warp_specialized: a producer warpgroup, setmaxnreg 56 / 224.
#ws = #humming.tile_config<m = [1, inf], block = [128, 256, 64], warp = [128, 32, 64], stages = 4, mma = wgmma, warp_specialized = true, mbarrier = true>
func.func @w4ws(%a: memref<?x512xf16>, %w: memref<32x512xi32>, %s: memref<4x256xf16>, %c: memref<?x256xf16>) {
  humming.gemm %a, %w scales(%s : memref<4x256xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>>,
       input_schema = #humming.input_schema<type = f16>, layout = #humming.layout<chip = "sm_90a">,
       tile_configs = [#ws]}
      : memref<?x512xf16>, memref<32x512xi32> -> memref<?x256xf16>
  return
}
// split_k = 4 in a thread block cluster (64 tokens), and 2 with a producer
// warpgroup (128 tokens): the sums meet in distributed shared memory.
#cl = #humming.tile_config<m = [1, inf], block = [64, 256, 64], warp = [64, 32, 64], stages = 4, mma = wgmma, split_k = 4>
func.func @w4cluster(%a: memref<?x1024xf16>, %w: memref<64x512xi32>, %s: memref<8x256xf16>, %c: memref<?x256xf16>) {
  humming.gemm %a, %w scales(%s : memref<8x256xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>>,
       input_schema = #humming.input_schema<type = f16>, layout = #humming.layout<chip = "sm_90a">,
       tile_configs = [#cl]}
      : memref<?x1024xf16>, memref<64x512xi32> -> memref<?x256xf16>
  return
}
#wscl = #humming.tile_config<m = [1, inf], block = [128, 256, 64], warp = [128, 32, 64], stages = 4, mma = wgmma, warp_specialized = true, mbarrier = true, split_k = 2>
func.func @w4wscluster(%a: memref<?x1024xf16>, %w: memref<64x512xi32>, %s: memref<8x256xf16>, %c: memref<?x256xf16>) {
  humming.gemm %a, %w scales(%s : memref<8x256xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>>,
       input_schema = #humming.input_schema<type = f16>, layout = #humming.layout<chip = "sm_90a">,
       tile_configs = [#wscl]}
      : memref<?x1024xf16>, memref<64x512xi32> -> memref<?x256xf16>
  return
}
// The 64-token warp-specialized tile in a cluster of two (the H200
// heuristics' choice at M = 33-128 of 8192 x 8192): ptxas alone would
// launch it with 130 registers, less than its setmaxnreg split assumes.
#ws64cl = #humming.tile_config<m = [1, inf], block = [64, 256, 64], warp = [64, 32, 64], stages = 4, mma = wgmma, warp_specialized = true, mbarrier = true, split_k = 2>
func.func @w4ws64cluster(%a: memref<?x1024xf16>, %w: memref<64x512xi32>, %s: memref<8x256xf16>, %c: memref<?x256xf16>) {
  humming.gemm %a, %w scales(%s : memref<8x256xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>>,
       input_schema = #humming.input_schema<type = f16>, layout = #humming.layout<chip = "sm_90a">,
       tile_configs = [#ws64cl]}
      : memref<?x1024xf16>, memref<64x512xi32> -> memref<?x256xf16>
  return
}
// tma = [b]: the weights by bulk copies on the full mbarriers; 3-bit (two
// planes, 1.5 KiB per k-tile) and 8-bit float codes (4 KiB).
#wstma = #humming.tile_config<m = [1, inf], block = [128, 256, 64], warp = [128, 32, 64], stages = 4, mma = wgmma, warp_specialized = true, mbarrier = true, tma = [b]>
func.func @w3wstma(%a: memref<?x512xf16>, %w: memref<32x384xi32>, %s: memref<4x256xf16>, %c: memref<?x256xf16>) {
  humming.gemm %a, %w scales(%s : memref<4x256xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui3, scale = f16, granularity = group<128>>,
       input_schema = #humming.input_schema<type = f16>, layout = #humming.layout<chip = "sm_90a">,
       tile_configs = [#wstma]}
      : memref<?x512xf16>, memref<32x384xi32> -> memref<?x256xf16>
  return
}
func.func @w8wstma(%a: memref<?x512xbf16>, %w: memref<32x1024xi32>, %s: memref<1x256xbf16>, %c: memref<?x256xbf16>) {
  humming.gemm %a, %w scales(%s : memref<1x256xbf16>) into %c
      {weight_schema = #humming.weight_schema<type = f8E4M3FN, scale = bf16>,
       input_schema = #humming.input_schema<type = bf16>, layout = #humming.layout<chip = "sm_90a">,
       tile_configs = [#wstma]}
      : memref<?x512xbf16>, memref<32x1024xi32> -> memref<?x256xbf16>
  return
}
// An mma_sync kernel with cluster_split (sm_90a): the M = 9-16 tile, K split
// over a cluster of four through distributed shared memory.
#mscl = #humming.tile_config<m = [1, inf], block = [16, 128, 128], warp = [16, 64, 32], split_k = 4, block_copies = true, cluster_split = true>
func.func @w4mmasynccluster(%a: memref<?x1024xf16>, %w: memref<64x512xi32>, %s: memref<8x256xf16>, %c: memref<?x256xf16>) {
  humming.gemm %a, %w scales(%s : memref<8x256xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>>,
       input_schema = #humming.input_schema<type = f16>, layout = #humming.layout<chip = "sm_90a">,
       tile_configs = [#mscl]}
      : memref<?x1024xf16>, memref<64x512xi32> -> memref<?x256xf16>
  return
}
// wgmma_in_flight = 1: an iteration's wgmmas stay in flight into the next.
#wsflight = #humming.tile_config<m = [1, inf], block = [128, 256, 64], warp = [128, 32, 64], stages = 4, mma = wgmma, warp_specialized = true, mbarrier = true, wgmma_in_flight = 1>
func.func @w4wsflight(%a: memref<?x512xf16>, %w: memref<32x512xi32>, %s: memref<4x256xf16>, %c: memref<?x256xf16>) {
  humming.gemm %a, %w scales(%s : memref<4x256xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>>,
       input_schema = #humming.input_schema<type = f16>, layout = #humming.layout<chip = "sm_90a">,
       tile_configs = [#wsflight]}
      : memref<?x512xf16>, memref<32x512xi32> -> memref<?x256xf16>
  return
}
// tma = [a, b]: the activations by one 2-D tensor copy per iteration
// through the by-value tensor map after M (a box of 64 columns x block_m
// rows, 128-byte swizzle) and the weights by bulk copies; the 128-token
// tile and the 64-token tile with K split in a cluster of two.
#wstmaab = #humming.tile_config<m = [1, inf], block = [128, 256, 64], warp = [128, 32, 64], stages = 4, mma = wgmma, warp_specialized = true, mbarrier = true, tma = [a, b]>
func.func @w4wstmaab(%a: memref<?x512xf16>, %w: memref<32x512xi32>, %s: memref<4x256xf16>, %c: memref<?x256xf16>) {
  humming.gemm %a, %w scales(%s : memref<4x256xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>>,
       input_schema = #humming.input_schema<type = f16>, layout = #humming.layout<chip = "sm_90a">,
       tile_configs = [#wstmaab]}
      : memref<?x512xf16>, memref<32x512xi32> -> memref<?x256xf16>
  return
}
#ws64tmaab = #humming.tile_config<m = [1, inf], block = [64, 256, 64], warp = [64, 32, 64], stages = 4, mma = wgmma, warp_specialized = true, mbarrier = true, split_k = 2, tma = [a, b]>
func.func @w4ws64tmaab(%a: memref<?x1024xf16>, %w: memref<64x512xi32>, %s: memref<8x256xf16>, %c: memref<?x256xf16>) {
  humming.gemm %a, %w scales(%s : memref<8x256xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>>,
       input_schema = #humming.input_schema<type = f16>, layout = #humming.layout<chip = "sm_90a">,
       tile_configs = [#ws64tmaab]}
      : memref<?x1024xf16>, memref<64x512xi32> -> memref<?x256xf16>
  return
}
