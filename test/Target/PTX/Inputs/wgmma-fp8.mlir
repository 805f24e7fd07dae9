// sm_90a kernels of 8-bit activations (ptxas-wgmma-fp8.test): the tiles the
// H200 heuristics choose for them, W8A8 fp8 and W4A8 g128, and the same
// kernels with si8 activations (s8 wgmmas, s32 sums).

#w8a8ws64c4 = #humming.tile_config<m = [1, inf], block = [64, 256, 64], warp = [64, 32, 64], mma = wgmma, warp_specialized = true, mbarrier = true, split_k = 4>
func.func @w8a8ws64c4(%a: memref<?x8192xf8E4M3FN>, %w: memref<256x65536xi32>, %s: memref<1x8192xf16>, %as: memref<?x1xf32>, %c: memref<?x8192xf16>) {
  humming.gemm %a, %w scales(%s : memref<1x8192xf16>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = f8E4M3FN, scale = f16, granularity = channel>,
       input_schema = #humming.input_schema<type = f8E4M3FN, scaling = token>, layout = #humming.layout<chip = "sm_90a">,
       tile_configs = [#w8a8ws64c4]}
      : memref<?x8192xf8E4M3FN>, memref<256x65536xi32> -> memref<?x8192xf16>
  return
}

#w8a8ws64 = #humming.tile_config<m = [1, inf], block = [64, 256, 64], warp = [64, 32, 64], mma = wgmma, warp_specialized = true, mbarrier = true>
func.func @w8a8ws64(%a: memref<?x8192xf8E4M3FN>, %w: memref<256x65536xi32>, %s: memref<1x8192xf16>, %as: memref<?x1xf32>, %c: memref<?x8192xf16>) {
  humming.gemm %a, %w scales(%s : memref<1x8192xf16>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = f8E4M3FN, scale = f16, granularity = channel>,
       input_schema = #humming.input_schema<type = f8E4M3FN, scaling = token>, layout = #humming.layout<chip = "sm_90a">,
       tile_configs = [#w8a8ws64]}
      : memref<?x8192xf8E4M3FN>, memref<256x65536xi32> -> memref<?x8192xf16>
  return
}

#w8a8ws128 = #humming.tile_config<m = [1, inf], block = [128, 128, 64], warp = [128, 16, 64], mma = wgmma, warp_specialized = true, mbarrier = true, tma = [b]>
func.func @w8a8ws128(%a: memref<?x8192xf8E4M3FN>, %w: memref<256x65536xi32>, %s: memref<1x8192xf16>, %as: memref<?x1xf32>, %c: memref<?x8192xf16>) {
  humming.gemm %a, %w scales(%s : memref<1x8192xf16>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = f8E4M3FN, scale = f16, granularity = channel>,
       input_schema = #humming.input_schema<type = f8E4M3FN, scaling = token>, layout = #humming.layout<chip = "sm_90a">,
       tile_configs = [#w8a8ws128]}
      : memref<?x8192xf8E4M3FN>, memref<256x65536xi32> -> memref<?x8192xf16>
  return
}

#w8a8n64 = #humming.tile_config<m = [1, inf], block = [64, 64, 64], warp = [64, 16, 64], mma = wgmma, stages = 4>
func.func @w8a8n64(%a: memref<?x8192xf8E4M3FN>, %w: memref<256x65536xi32>, %s: memref<1x8192xf16>, %as: memref<?x1xf32>, %c: memref<?x8192xf16>) {
  humming.gemm %a, %w scales(%s : memref<1x8192xf16>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = f8E4M3FN, scale = f16, granularity = channel>,
       input_schema = #humming.input_schema<type = f8E4M3FN, scaling = token>, layout = #humming.layout<chip = "sm_90a">,
       tile_configs = [#w8a8n64]}
      : memref<?x8192xf8E4M3FN>, memref<256x65536xi32> -> memref<?x8192xf16>
  return
}

#w4a8ws64c4 = #humming.tile_config<m = [1, inf], block = [64, 256, 64], warp = [64, 32, 64], mma = wgmma, warp_specialized = true, mbarrier = true, split_k = 4>
func.func @w4a8ws64c4(%a: memref<?x8192xf8E4M3FN>, %w: memref<256x32768xi32>, %s: memref<64x8192xf16>, %as: memref<?x1xf32>, %c: memref<?x8192xf16>) {
  humming.gemm %a, %w scales(%s : memref<64x8192xf16>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>>,
       input_schema = #humming.input_schema<type = f8E4M3FN, scaling = token>, layout = #humming.layout<chip = "sm_90a">,
       tile_configs = [#w4a8ws64c4]}
      : memref<?x8192xf8E4M3FN>, memref<256x32768xi32> -> memref<?x8192xf16>
  return
}

#w4a8ws64 = #humming.tile_config<m = [1, inf], block = [64, 256, 64], warp = [64, 32, 64], mma = wgmma, warp_specialized = true, mbarrier = true>
func.func @w4a8ws64(%a: memref<?x8192xf8E4M3FN>, %w: memref<256x32768xi32>, %s: memref<64x8192xf16>, %as: memref<?x1xf32>, %c: memref<?x8192xf16>) {
  humming.gemm %a, %w scales(%s : memref<64x8192xf16>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>>,
       input_schema = #humming.input_schema<type = f8E4M3FN, scaling = token>, layout = #humming.layout<chip = "sm_90a">,
       tile_configs = [#w4a8ws64]}
      : memref<?x8192xf8E4M3FN>, memref<256x32768xi32> -> memref<?x8192xf16>
  return
}

#w4a8ws128 = #humming.tile_config<m = [1, inf], block = [128, 128, 64], warp = [128, 16, 64], mma = wgmma, warp_specialized = true, mbarrier = true, tma = [b]>
func.func @w4a8ws128(%a: memref<?x8192xf8E4M3FN>, %w: memref<256x32768xi32>, %s: memref<64x8192xf16>, %as: memref<?x1xf32>, %c: memref<?x8192xf16>) {
  humming.gemm %a, %w scales(%s : memref<64x8192xf16>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>>,
       input_schema = #humming.input_schema<type = f8E4M3FN, scaling = token>, layout = #humming.layout<chip = "sm_90a">,
       tile_configs = [#w4a8ws128]}
      : memref<?x8192xf8E4M3FN>, memref<256x32768xi32> -> memref<?x8192xf16>
  return
}

#w4a8n64 = #humming.tile_config<m = [1, inf], block = [64, 64, 64], warp = [64, 16, 64], mma = wgmma, stages = 4>
func.func @w4a8n64(%a: memref<?x8192xf8E4M3FN>, %w: memref<256x32768xi32>, %s: memref<64x8192xf16>, %as: memref<?x1xf32>, %c: memref<?x8192xf16>) {
  humming.gemm %a, %w scales(%s : memref<64x8192xf16>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>>,
       input_schema = #humming.input_schema<type = f8E4M3FN, scaling = token>, layout = #humming.layout<chip = "sm_90a">,
       tile_configs = [#w4a8n64]}
      : memref<?x8192xf8E4M3FN>, memref<256x32768xi32> -> memref<?x8192xf16>
  return
}

// The decode tiles (M = 1..8 and 9..16): 8 and 16 tokens, K split four
// ways through the workspace.
#w8a8ws8 = #humming.tile_config<m = [1, 8], block = [8, 256, 64], warp = [8, 32, 64], mma = wgmma, warp_specialized = true, mbarrier = true, split_k = 4, workspace_split = true, ctas_per_sm = 2>
func.func @w8a8ws8(%a: memref<?x8192xf8E4M3FN>, %w: memref<256x65536xi32>, %s: memref<1x8192xf16>, %as: memref<?x1xf32>, %c: memref<?x8192xf16>) {
  humming.gemm %a, %w scales(%s : memref<1x8192xf16>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = f8E4M3FN, scale = f16, granularity = channel>,
       input_schema = #humming.input_schema<type = f8E4M3FN, scaling = token>, layout = #humming.layout<chip = "sm_90a">,
       tile_configs = [#w8a8ws8, #humming.tile_config<m = [9, inf], block = [64, 64, 64], warp = [64, 16, 64], mma = wgmma, stages = 4>]}
      : memref<?x8192xf8E4M3FN>, memref<256x65536xi32> -> memref<?x8192xf16>
  return
}

#w4a8ws16 = #humming.tile_config<m = [1, 16], block = [16, 256, 64], warp = [16, 32, 64], mma = wgmma, warp_specialized = true, mbarrier = true, split_k = 4, workspace_split = true>
func.func @w4a8ws16(%a: memref<?x8192xf8E4M3FN>, %w: memref<256x32768xi32>, %s: memref<64x8192xf16>, %as: memref<?x1xf32>, %c: memref<?x8192xf16>) {
  humming.gemm %a, %w scales(%s : memref<64x8192xf16>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>>,
       input_schema = #humming.input_schema<type = f8E4M3FN, scaling = token>, layout = #humming.layout<chip = "sm_90a">,
       tile_configs = [#w4a8ws16, #humming.tile_config<m = [17, inf], block = [64, 64, 64], warp = [64, 16, 64], mma = wgmma, stages = 4>]}
      : memref<?x8192xf8E4M3FN>, memref<256x32768xi32> -> memref<?x8192xf16>
  return
}

// si8 activations: W8A8 (si8 weights: the words with their sign bits
// flipped) and W4A8 (ui4 g128: f16 codes + 1152, two bytes each).
#i8w8ws64c4 = #humming.tile_config<m = [1, inf], block = [64, 256, 64], warp = [64, 32, 64], mma = wgmma, warp_specialized = true, mbarrier = true, split_k = 4>
func.func @i8w8ws64c4(%a: memref<?x8192xi8>, %w: memref<256x65536xi32>, %s: memref<1x8192xf16>, %as: memref<?x1xf32>, %c: memref<?x8192xf16>) {
  humming.gemm %a, %w scales(%s : memref<1x8192xf16>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = si8, scale = f16, granularity = channel>,
       input_schema = #humming.input_schema<type = si8, scaling = token>, layout = #humming.layout<chip = "sm_90a">,
       tile_configs = [#i8w8ws64c4]}
      : memref<?x8192xi8>, memref<256x65536xi32> -> memref<?x8192xf16>
  return
}

#i8w8ws128 = #humming.tile_config<m = [1, inf], block = [128, 128, 64], warp = [128, 16, 64], mma = wgmma, warp_specialized = true, mbarrier = true, tma = [b]>
func.func @i8w8ws128(%a: memref<?x8192xi8>, %w: memref<256x65536xi32>, %s: memref<1x8192xf16>, %as: memref<?x1xf32>, %c: memref<?x8192xf16>) {
  humming.gemm %a, %w scales(%s : memref<1x8192xf16>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = si8, scale = f16, granularity = channel>,
       input_schema = #humming.input_schema<type = si8, scaling = token>, layout = #humming.layout<chip = "sm_90a">,
       tile_configs = [#i8w8ws128]}
      : memref<?x8192xi8>, memref<256x65536xi32> -> memref<?x8192xf16>
  return
}

#i8w4ws8 = #humming.tile_config<m = [1, 8], block = [8, 256, 64], warp = [8, 32, 64], mma = wgmma, warp_specialized = true, mbarrier = true, split_k = 4, workspace_split = true, ctas_per_sm = 2>
func.func @i8w4ws8(%a: memref<?x8192xi8>, %w: memref<256x32768xi32>, %s: memref<64x8192xf16>, %as: memref<?x1xf32>, %c: memref<?x8192xf16>) {
  humming.gemm %a, %w scales(%s : memref<64x8192xf16>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>>,
       input_schema = #humming.input_schema<type = si8, scaling = token>, layout = #humming.layout<chip = "sm_90a">,
       tile_configs = [#i8w4ws8, #humming.tile_config<m = [9, inf], block = [64, 64, 64], warp = [64, 16, 64], mma = wgmma, stages = 4>]}
      : memref<?x8192xi8>, memref<256x32768xi32> -> memref<?x8192xf16>
  return
}

#i8w4ws128 = #humming.tile_config<m = [1, inf], block = [128, 128, 64], warp = [128, 16, 64], mma = wgmma, warp_specialized = true, mbarrier = true, tma = [b]>
func.func @i8w4ws128(%a: memref<?x8192xi8>, %w: memref<256x32768xi32>, %s: memref<64x8192xf16>, %as: memref<?x1xf32>, %c: memref<?x8192xf16>) {
  humming.gemm %a, %w scales(%s : memref<64x8192xf16>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>>,
       input_schema = #humming.input_schema<type = si8, scaling = token>, layout = #humming.layout<chip = "sm_90a">,
       tile_configs = [#i8w4ws128]}
      : memref<?x8192xi8>, memref<256x32768xi32> -> memref<?x8192xf16>
  return
}

// The K-major prefill tile (fp8 weights by descriptor, 128 of K per
// iteration, every copy by TMA, the grid in groups of eight rows of
// blocks), per-token fp8 and, DeepSeek-V3's fine-grained FP8, block<128,
// 128> weight scales with activations per group of 128 (their scales by
// cp.async into the slot).
#kmajor128 = #humming.tile_config<m = [1, inf], block = [128, 128, 128], warp = [128, 16, 128], stages = 6, mma = wgmma, warp_specialized = true, mbarrier = true, tma = [a, b], raster_m = 8>
func.func @kmajor128(%a: memref<?x8192xf8E4M3FN>, %w: memref<256x65536xi32>, %s: memref<1x8192xf32>, %as: memref<?x1xf32>, %c: memref<?x8192xbf16>) {
  humming.gemm %a, %w scales(%s : memref<1x8192xf32>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = f8E4M3FN, scale = f32, granularity = channel>,
       input_schema = #humming.input_schema<type = f8E4M3FN, scaling = token>, layout = #humming.layout<chip = "sm_90a">,
       tile_configs = [#kmajor128]}
      : memref<?x8192xf8E4M3FN>, memref<256x65536xi32> -> memref<?x8192xbf16>
  return
}

func.func @blockfp8(%a: memref<?x8192xf8E4M3FN>, %w: memref<256x65536xi32>, %s: memref<64x8192xf32>, %as: memref<?x64xf32>, %c: memref<?x8192xbf16>) {
  humming.gemm %a, %w scales(%s : memref<64x8192xf32>) input_scale(%as : memref<?x64xf32>) into %c
      {weight_schema = #humming.weight_schema<type = f8E4M3FN, scale = f32, granularity = block<128, 128>>,
       input_schema = #humming.input_schema<type = f8E4M3FN, scaling = group<128>>, layout = #humming.layout<chip = "sm_90a">,
       tile_configs = [#kmajor128]}
      : memref<?x8192xf8E4M3FN>, memref<256x65536xi32> -> memref<?x8192xbf16>
  return
}

#kmajor192 = #humming.tile_config<m = [1, inf], block = [192, 128, 128], warp = [192, 16, 128], stages = 5, mma = wgmma, warp_specialized = true, mbarrier = true, tma = [a, b], raster_m = 8>
func.func @kmajor192(%a: memref<?x8192xf8E4M3FN>, %w: memref<256x65536xi32>, %s: memref<1x8192xf32>, %as: memref<?x1xf32>, %c: memref<?x8192xbf16>) {
  humming.gemm %a, %w scales(%s : memref<1x8192xf32>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = f8E4M3FN, scale = f32, granularity = channel>,
       input_schema = #humming.input_schema<type = f8E4M3FN, scaling = token>, layout = #humming.layout<chip = "sm_90a">,
       tile_configs = [#kmajor192]}
      : memref<?x8192xf8E4M3FN>, memref<256x65536xi32> -> memref<?x8192xbf16>
  return
}

// N = 2112 (33 n-tiles) on 128-column blocks: the last block is partial.
func.func @kmajor_partial(%a: memref<?x7168xf8E4M3FN>, %w: memref<224x16896xi32>, %s: memref<1x2112xf32>, %as: memref<?x1xf32>, %c: memref<?x2112xbf16>) {
  humming.gemm %a, %w scales(%s : memref<1x2112xf32>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = f8E4M3FN, scale = f32, granularity = channel>,
       input_schema = #humming.input_schema<type = f8E4M3FN, scaling = token>, layout = #humming.layout<chip = "sm_90a">,
       tile_configs = [#kmajor128]}
      : memref<?x7168xf8E4M3FN>, memref<224x16896xi32> -> memref<?x2112xbf16>
  return
}

// multicast_a = 2: pairs of column blocks share each iteration's 192 x 128
// activation tile (each CTA copies 96 rows into both).
#kmajor192mc = #humming.tile_config<m = [1, inf], block = [192, 128, 128], warp = [192, 16, 128], stages = 5, mma = wgmma, warp_specialized = true, mbarrier = true, tma = [a, b], raster_m = 8, multicast_a = 2>
func.func @kmajor192mc(%a: memref<?x8192xf8E4M3FN>, %w: memref<256x65536xi32>, %s: memref<1x8192xf32>, %as: memref<?x1xf32>, %c: memref<?x8192xbf16>) {
  humming.gemm %a, %w scales(%s : memref<1x8192xf32>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = f8E4M3FN, scale = f32, granularity = channel>,
       input_schema = #humming.input_schema<type = f8E4M3FN, scaling = token>, layout = #humming.layout<chip = "sm_90a">,
       tile_configs = [#kmajor192mc]}
      : memref<?x8192xf8E4M3FN>, memref<256x65536xi32> -> memref<?x8192xbf16>
  return
}

// l2_prefetch = 4: the producer's copying thread asks L2 for the weights
// of the fill four ahead, one prefetch per k-tile of the block, and for
// its activation box.
#kmajor192pf = #humming.tile_config<m = [1, inf], block = [192, 128, 128], warp = [192, 16, 128], stages = 5, mma = wgmma, warp_specialized = true, mbarrier = true, tma = [a, b], raster_m = 8, l2_prefetch = 4>
func.func @kmajor192pf(%a: memref<?x8192xf8E4M3FN>, %w: memref<256x65536xi32>, %s: memref<1x8192xf32>, %as: memref<?x1xf32>, %c: memref<?x8192xbf16>) {
  humming.gemm %a, %w scales(%s : memref<1x8192xf32>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = f8E4M3FN, scale = f32, granularity = channel>,
       input_schema = #humming.input_schema<type = f8E4M3FN, scaling = token>, layout = #humming.layout<chip = "sm_90a">,
       tile_configs = [#kmajor192pf]}
      : memref<?x8192xf8E4M3FN>, memref<256x65536xi32> -> memref<?x8192xbf16>
  return
}

// persistent = 1: the CTAs take output tiles in turn (blockIdx.x + j
// gridDim.x), the producer's fills and the consumers' uses counted across
// them.
#kmajor192p = #humming.tile_config<m = [1, inf], block = [192, 128, 128], warp = [192, 16, 128], stages = 5, mma = wgmma, warp_specialized = true, mbarrier = true, tma = [a, b], raster_m = 8, persistent = 1>
func.func @kmajor192p(%a: memref<?x8192xf8E4M3FN>, %w: memref<256x65536xi32>, %s: memref<1x8192xf32>, %as: memref<?x1xf32>, %c: memref<?x8192xbf16>) {
  humming.gemm %a, %w scales(%s : memref<1x8192xf32>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = f8E4M3FN, scale = f32, granularity = channel>,
       input_schema = #humming.input_schema<type = f8E4M3FN, scaling = token>, layout = #humming.layout<chip = "sm_90a">,
       tile_configs = [#kmajor192p]}
      : memref<?x8192xf8E4M3FN>, memref<256x65536xi32> -> memref<?x8192xbf16>
  return
}

// Fine-grained FP8 persistent on N = 2112 (a partial last block of
// columns): the tracked fills' cp.async token scales, each tile's share
// of the block's n-tiles.
#blockfp8p = #humming.tile_config<m = [1, inf], block = [128, 128, 128], warp = [128, 16, 128], stages = 6, mma = wgmma, warp_specialized = true, mbarrier = true, tma = [a, b], raster_m = 8, persistent = 1>
func.func @blockfp8p(%a: memref<?x7168xf8E4M3FN>, %w: memref<224x16896xi32>, %s: memref<56x2112xf32>, %as: memref<?x56xf32>, %c: memref<?x2112xbf16>) {
  humming.gemm %a, %w scales(%s : memref<56x2112xf32>) input_scale(%as : memref<?x56xf32>) into %c
      {weight_schema = #humming.weight_schema<type = f8E4M3FN, scale = f32, granularity = block<128, 128>>,
       input_schema = #humming.input_schema<type = f8E4M3FN, scaling = group<128>>, layout = #humming.layout<chip = "sm_90a">,
       tile_configs = [#blockfp8p]}
      : memref<?x7168xf8E4M3FN>, memref<224x16896xi32> -> memref<?x2112xbf16>
  return
}

// promotion_interval = 2 over 64-of-K slots (eleven of 20 KiB): the fp8
// per-channel 192-token tile and fine-grained FP8 (one 128 x 128 block and
// one activation group per interval).
#kmajor192pi = #humming.tile_config<m = [1, inf], block = [192, 128, 64], warp = [192, 16, 64], stages = 11, mma = wgmma, warp_specialized = true, mbarrier = true, tma = [a, b], raster_m = 8, promotion_interval = 2>
func.func @kmajor192pi(%a: memref<?x8192xf8E4M3FN>, %w: memref<256x65536xi32>, %s: memref<1x8192xf32>, %as: memref<?x1xf32>, %c: memref<?x8192xbf16>) {
  humming.gemm %a, %w scales(%s : memref<1x8192xf32>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = f8E4M3FN, scale = f32, granularity = channel>,
       input_schema = #humming.input_schema<type = f8E4M3FN, scaling = token>, layout = #humming.layout<chip = "sm_90a">,
       tile_configs = [#kmajor192pi]}
      : memref<?x8192xf8E4M3FN>, memref<256x65536xi32> -> memref<?x8192xbf16>
  return
}

#blockfp8pi = #humming.tile_config<m = [1, inf], block = [128, 128, 64], warp = [128, 16, 64], stages = 13, mma = wgmma, warp_specialized = true, mbarrier = true, tma = [a, b], raster_m = 8, promotion_interval = 2>
func.func @blockfp8pi(%a: memref<?x7168xf8E4M3FN>, %w: memref<224x16896xi32>, %s: memref<56x2112xf32>, %as: memref<?x56xf32>, %c: memref<?x2112xbf16>) {
  humming.gemm %a, %w scales(%s : memref<56x2112xf32>) input_scale(%as : memref<?x56xf32>) into %c
      {weight_schema = #humming.weight_schema<type = f8E4M3FN, scale = f32, granularity = block<128, 128>>,
       input_schema = #humming.input_schema<type = f8E4M3FN, scaling = group<128>>, layout = #humming.layout<chip = "sm_90a">,
       tile_configs = [#blockfp8pi]}
      : memref<?x7168xf8E4M3FN>, memref<224x16896xi32> -> memref<?x2112xbf16>
  return
}

// weight_map = true: each iteration's weights by one 3-D tensor copy
// through the weights' tensor map (the 128-token tile; N = 8192, and
// N = 2112 with its partial last block of columns).
#kmajor128w = #humming.tile_config<m = [1, inf], block = [128, 128, 128], warp = [128, 16, 128], stages = 6, mma = wgmma, warp_specialized = true, mbarrier = true, tma = [a, b], raster_m = 8, weight_map = true>
func.func @kmajor128w(%a: memref<?x8192xf8E4M3FN>, %w: memref<256x65536xi32>, %s: memref<1x8192xf32>, %as: memref<?x1xf32>, %c: memref<?x8192xbf16>) {
  humming.gemm %a, %w scales(%s : memref<1x8192xf32>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = f8E4M3FN, scale = f32, granularity = channel>,
       input_schema = #humming.input_schema<type = f8E4M3FN, scaling = token>, layout = #humming.layout<chip = "sm_90a">,
       tile_configs = [#kmajor128w]}
      : memref<?x8192xf8E4M3FN>, memref<256x65536xi32> -> memref<?x8192xbf16>
  return
}

func.func @kmajor_partial_w(%a: memref<?x7168xf8E4M3FN>, %w: memref<224x16896xi32>, %s: memref<1x2112xf32>, %as: memref<?x1xf32>, %c: memref<?x2112xbf16>) {
  humming.gemm %a, %w scales(%s : memref<1x2112xf32>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = f8E4M3FN, scale = f32, granularity = channel>,
       input_schema = #humming.input_schema<type = f8E4M3FN, scaling = token>, layout = #humming.layout<chip = "sm_90a">,
       tile_configs = [#kmajor128w]}
      : memref<?x7168xf8E4M3FN>, memref<224x16896xi32> -> memref<?x2112xbf16>
  return
}

// W4A8 over weights converted into a shared-memory stage (staged_weights):
// uint4 g128 x e4m3 (promoted sums, group scales) and uint4 per channel x
// si8 (one set of s32 sums: no scales carried).
#w4a8s128 = #humming.tile_config<m = [1, inf], block = [128, 128, 128], warp = [128, 16, 128], stages = 6, mma = wgmma, warp_specialized = true, mbarrier = true, tma = [a, b], raster_m = 8, staged_weights = true>
func.func @w4a8s128(%a: memref<?x8192xf8E4M3FN>, %w: memref<256x32768xi32>, %s: memref<64x8192xf16>, %as: memref<?x1xf32>, %c: memref<?x8192xf16>) {
  humming.gemm %a, %w scales(%s : memref<64x8192xf16>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>>,
       input_schema = #humming.input_schema<type = f8E4M3FN, scaling = token>, layout = #humming.layout<chip = "sm_90a">,
       tile_configs = [#w4a8s128]}
      : memref<?x8192xf8E4M3FN>, memref<256x32768xi32> -> memref<?x8192xf16>
  return
}

func.func @i8w4s128(%a: memref<?x8192xi8>, %w: memref<256x32768xi32>, %s: memref<1x8192xf16>, %as: memref<?x1xf32>, %c: memref<?x8192xf16>) {
  humming.gemm %a, %w scales(%s : memref<1x8192xf16>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = channel>,
       input_schema = #humming.input_schema<type = si8, scaling = token>, layout = #humming.layout<chip = "sm_90a">,
       tile_configs = [#w4a8s128]}
      : memref<?x8192xi8>, memref<256x32768xi32> -> memref<?x8192xf16>
  return
}

// Fine-grained FP8 on 192 tokens per warpgroup: the token scales are read
// in the fold after the wgmma wait (lateTokenScales), not carried.
#blockfp8t192 = #humming.tile_config<m = [1, inf], block = [192, 128, 128], warp = [192, 16, 128], stages = 5, mma = wgmma, warp_specialized = true, mbarrier = true, tma = [a, b], raster_m = 8>
func.func @blockfp8t192(%a: memref<?x8192xf8E4M3FN>, %w: memref<256x65536xi32>, %s: memref<64x8192xf32>, %as: memref<?x64xf32>, %c: memref<?x8192xbf16>) {
  humming.gemm %a, %w scales(%s : memref<64x8192xf32>) input_scale(%as : memref<?x64xf32>) into %c
      {weight_schema = #humming.weight_schema<type = f8E4M3FN, scale = f32, granularity = block<128, 128>>,
       input_schema = #humming.input_schema<type = f8E4M3FN, scaling = group<128>>, layout = #humming.layout<chip = "sm_90a">,
       tile_configs = [#blockfp8t192]}
      : memref<?x8192xf8E4M3FN>, memref<256x65536xi32> -> memref<?x8192xbf16>
  return
}

// staged_weights on 192 tokens: the conversion's registers beside 2 x 96
// sums take the producers down to 40 (layout::ws::consumerRegisters).
#w4a8s192 = #humming.tile_config<m = [1, inf], block = [192, 128, 128], warp = [192, 16, 128], stages = 5, mma = wgmma, warp_specialized = true, mbarrier = true, tma = [a, b], raster_m = 8, staged_weights = true>
func.func @w4a8s192(%a: memref<?x8192xf8E4M3FN>, %w: memref<256x32768xi32>, %s: memref<64x8192xf16>, %as: memref<?x1xf32>, %c: memref<?x8192xf16>) {
  humming.gemm %a, %w scales(%s : memref<64x8192xf16>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>>,
       input_schema = #humming.input_schema<type = f8E4M3FN, scaling = token>, layout = #humming.layout<chip = "sm_90a">,
       tile_configs = [#w4a8s192]}
      : memref<?x8192xf8E4M3FN>, memref<256x32768xi32> -> memref<?x8192xf16>
  return
}

// W4A8's prefill tiles (selectEightBitTiles from M = 129 / 257): the K-major
// tile's structure with the 4-bit weights converted in registers each
// iteration (wgmma A from registers, the activations by TMA), on 128 and
// 192 tokens; uint4 g128 x e4m3 and uint4 per channel x si8.
#w4a8r128 = #humming.tile_config<m = [1, inf], block = [128, 128, 128], warp = [128, 16, 128], stages = 6, mma = wgmma, warp_specialized = true, mbarrier = true, tma = [a, b], raster_m = 8>
#w4a8r192 = #humming.tile_config<m = [1, inf], block = [192, 128, 128], warp = [192, 16, 128], stages = 5, mma = wgmma, warp_specialized = true, mbarrier = true, tma = [a, b], raster_m = 8>
func.func @w4a8r128(%a: memref<?x8192xf8E4M3FN>, %w: memref<256x32768xi32>, %s: memref<64x8192xf16>, %as: memref<?x1xf32>, %c: memref<?x8192xf16>) {
  humming.gemm %a, %w scales(%s : memref<64x8192xf16>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>>,
       input_schema = #humming.input_schema<type = f8E4M3FN, scaling = token>, layout = #humming.layout<chip = "sm_90a">,
       tile_configs = [#w4a8r128]}
      : memref<?x8192xf8E4M3FN>, memref<256x32768xi32> -> memref<?x8192xf16>
  return
}

func.func @w4a8r192(%a: memref<?x8192xf8E4M3FN>, %w: memref<256x32768xi32>, %s: memref<64x8192xf16>, %as: memref<?x1xf32>, %c: memref<?x8192xf16>) {
  humming.gemm %a, %w scales(%s : memref<64x8192xf16>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>>,
       input_schema = #humming.input_schema<type = f8E4M3FN, scaling = token>, layout = #humming.layout<chip = "sm_90a">,
       tile_configs = [#w4a8r192]}
      : memref<?x8192xf8E4M3FN>, memref<256x32768xi32> -> memref<?x8192xf16>
  return
}

func.func @i8w4r192(%a: memref<?x8192xi8>, %w: memref<256x32768xi32>, %s: memref<1x8192xf16>, %as: memref<?x1xf32>, %c: memref<?x8192xf16>) {
  humming.gemm %a, %w scales(%s : memref<1x8192xf16>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = channel>,
       input_schema = #humming.input_schema<type = si8, scaling = token>, layout = #humming.layout<chip = "sm_90a">,
       tile_configs = [#w4a8r192]}
      : memref<?x8192xi8>, memref<256x32768xi32> -> memref<?x8192xf16>
  return
}
