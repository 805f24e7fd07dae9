// RUN: humming-opt %s --humming-lower-to-nvvm="chip=sm_90a" -split-input-file -verify-diagnostics

// 8-bit activations and the tiles the wgmma k32 kernels honour: everything
// else is a diagnostic naming what was expected.

// The canonical-weight kernel takes 16-bit activations.
func.func @canonical(%a: memref<?x512xf8E4M3FN>, %w: memref<256x64xi32>, %s: memref<256x1xf16>, %as: memref<?x1xf32>, %c: memref<?x256xf16>) {
  // expected-error @+1 {{8- and 4-bit activations run in the kernels over prepared weights ('layout') only; the canonical-weight kernel takes 16-bit activations, got 'f8E4M3FN' on sm_90a}}
  humming.gemm %a, %w scales(%s : memref<256x1xf16>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16>,
       input_schema = #humming.input_schema<type = f8E4M3FN, scaling = token>}
      : memref<?x512xf8E4M3FN>, memref<256x64xi32> -> memref<?x256xf16>
  return
}

// -----

#t = #humming.tile_config<m = [1, inf], block = [64, 256, 64], warp = [64, 32, 64], mma = wgmma, warp_specialized = true, mbarrier = true, wgmma_in_flight = 1>
func.func @in_flight(%a: memref<?x512xf8E4M3FN>, %w: memref<16x1024xi32>, %s: memref<1x256xf16>, %as: memref<?x1xf32>, %c: memref<?x256xf16>) {
  // expected-error @+1 {{tile_configs[0]: expected wgmma_in_flight = 0 with f8E4M3FN activations (each iteration's sums are added to the running ones after its wgmmas are waited for, and the next iteration's first wgmma rewrites them)}}
  humming.gemm %a, %w scales(%s : memref<1x256xf16>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = channel>,
       input_schema = #humming.input_schema<type = f8E4M3FN, scaling = token>, layout = #humming.layout<chip = "sm_90a">,
       tile_configs = [#t]}
      : memref<?x512xf8E4M3FN>, memref<16x1024xi32> -> memref<?x256xf16>
  return
}

// -----

#t = #humming.tile_config<m = [1, inf], block = [64, 256, 128], warp = [64, 32, 128], mma = wgmma, stages = 3>
func.func @group_split(%a: memref<?x512xf8E4M3FN>, %w: memref<16x1024xi32>, %s: memref<8x256xf16>, %as: memref<?x1xf32>, %c: memref<?x256xf16>) {
  // expected-error @+1 {{tile_configs[0]: expected warp_k <= the group size (64) with f8E4M3FN activations (each iteration's f32 sums take one group scale), got 128}}
  humming.gemm %a, %w scales(%s : memref<8x256xf16>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<64>>,
       input_schema = #humming.input_schema<type = f8E4M3FN, scaling = token>, layout = #humming.layout<chip = "sm_90a">,
       tile_configs = [#t]}
      : memref<?x512xf8E4M3FN>, memref<16x1024xi32> -> memref<?x256xf16>
  return
}

// -----

#t = #humming.tile_config<m = [1, inf], block = [128, 256, 64], warp = [128, 32, 64], mma = wgmma, warp_specialized = true, mbarrier = true>
func.func @sums(%a: memref<?x512xf8E4M3FN>, %w: memref<16x1024xi32>, %s: memref<1x256xf16>, %as: memref<?x1xf32>, %c: memref<?x256xf16>) {
  // expected-error @+1 {{tile_configs[0]: warp_m = 128, warp_n = 32 keep 256 f32 sums per thread (two sets with 8-bit activations); expected at most 192 with warp_specialized (warp_m x warp_n <= 3072)}}
  humming.gemm %a, %w scales(%s : memref<1x256xf16>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = channel>,
       input_schema = #humming.input_schema<type = f8E4M3FN, scaling = token>, layout = #humming.layout<chip = "sm_90a">,
       tile_configs = [#t]}
      : memref<?x512xf8E4M3FN>, memref<16x1024xi32> -> memref<?x256xf16>
  return
}

// -----

// 192 tokens per warpgroup (2 x 96 sums) only where a producer warpgroup
// leaves the consumers its registers.
#t = #humming.tile_config<m = [1, inf], block = [192, 128, 64], warp = [192, 16, 64], mma = wgmma, stages = 3>
func.func @sums_without_producer(%a: memref<?x512xf8E4M3FN>, %w: memref<16x1024xi32>, %s: memref<1x256xf16>, %as: memref<?x1xf32>, %c: memref<?x256xf16>) {
  // expected-error @+1 {{tile_configs[0]: warp_m = 192, warp_n = 16 keep 192 f32 sums per thread (two sets with 8-bit activations); expected at most 128 without warp_specialized (warp_m x warp_n <= 2048)}}
  humming.gemm %a, %w scales(%s : memref<1x256xf16>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = channel>,
       input_schema = #humming.input_schema<type = f8E4M3FN, scaling = token>, layout = #humming.layout<chip = "sm_90a">,
       tile_configs = [#t]}
      : memref<?x512xf8E4M3FN>, memref<16x1024xi32> -> memref<?x256xf16>
  return
}

// -----

// ... and only one block per SM: two would leave the consumers 96 each.
#t = #humming.tile_config<m = [1, inf], block = [192, 128, 64], warp = [192, 16, 64], mma = wgmma, stages = 3, warp_specialized = true, mbarrier = true, ctas_per_sm = 2>
func.func @sums_two_blocks(%a: memref<?x512xf8E4M3FN>, %w: memref<16x1024xi32>, %s: memref<1x256xf16>, %as: memref<?x1xf32>, %c: memref<?x256xf16>) {
  // expected-error @+1 {{tile_configs[0]: warp_specialized with ctas_per_sm = 2 leaves the consumer warpgroups 96 registers per thread; expected at least 216 (warp_m x warp_n / 32 f32 sums and 24 for the operands)}}
  humming.gemm %a, %w scales(%s : memref<1x256xf16>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = channel>,
       input_schema = #humming.input_schema<type = f8E4M3FN, scaling = token>, layout = #humming.layout<chip = "sm_90a">,
       tile_configs = [#t]}
      : memref<?x512xf8E4M3FN>, memref<16x1024xi32> -> memref<?x256xf16>
  return
}

// -----

// A partial last block of columns (N = 320 on 128-column blocks) only where
// every copy is by TMA (layout::partialColumnBlocks): the weights' cp.async
// copies would read past N.
#t = #humming.tile_config<m = [1, inf], block = [128, 128, 128], warp = [128, 16, 128], stages = 4, mma = wgmma, warp_specialized = true, mbarrier = true, tma = [a]>
func.func @partial_block_without_bulk_weights(%a: memref<?x512xf8E4M3FN>, %w: memref<16x2560xi32>, %s: memref<1x320xf32>, %as: memref<?x1xf32>, %c: memref<?x320xbf16>) {
  // expected-error @+1 {{tile_configs[0]: expected block_n (128) to divide the padded N (320)}}
  humming.gemm %a, %w scales(%s : memref<1x320xf32>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = f8E4M3FN, scale = f32, granularity = channel>,
       input_schema = #humming.input_schema<type = f8E4M3FN, scaling = token>, layout = #humming.layout<chip = "sm_90a">,
       tile_configs = [#t]}
      : memref<?x512xf8E4M3FN>, memref<16x2560xi32> -> memref<?x320xbf16>
  return
}

// -----

// multicast_a = 2: pairs of column blocks form the clusters, so their
// count must be even (N = 384: three blocks of 128).
#t = #humming.tile_config<m = [1, inf], block = [128, 128, 128], warp = [128, 16, 128], stages = 4, mma = wgmma, warp_specialized = true, mbarrier = true, tma = [a, b], multicast_a = 2>
func.func @multicast_odd_blocks(%a: memref<?x512xf8E4M3FN>, %w: memref<16x3072xi32>, %s: memref<1x384xf32>, %as: memref<?x1xf32>, %c: memref<?x384xbf16>) {
  // expected-error @+1 {{tile_configs[0]: expected an even number of column blocks with multicast_a = 2 (pairs of them form the clusters), got 3 (padded N = 384, block_n = 128)}}
  humming.gemm %a, %w scales(%s : memref<1x384xf32>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = f8E4M3FN, scale = f32, granularity = channel>,
       input_schema = #humming.input_schema<type = f8E4M3FN, scaling = token>, layout = #humming.layout<chip = "sm_90a">,
       tile_configs = [#t]}
      : memref<?x512xf8E4M3FN>, memref<16x3072xi32> -> memref<?x384xbf16>
  return
}

// -----

// multicast_a shares the activations' tensor copies of the TMA kernels.
#t = #humming.tile_config<m = [1, inf], block = [128, 128, 128], warp = [128, 16, 128], stages = 4, mma = wgmma, warp_specialized = true, mbarrier = true, tma = [a], multicast_a = 2>
func.func @multicast_without_tma_b(%a: memref<?x512xf8E4M3FN>, %w: memref<16x2048xi32>, %s: memref<1x256xf32>, %as: memref<?x1xf32>, %c: memref<?x256xbf16>) {
  // expected-error @+1 {{tile_configs[0]: multicast_a = 2 shares the activations' tensor copies of the warp-specialized wgmma kernels; expected mma = wgmma, warp_specialized = true, tma = [a, b]}}
  humming.gemm %a, %w scales(%s : memref<1x256xf32>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = f8E4M3FN, scale = f32, granularity = channel>,
       input_schema = #humming.input_schema<type = f8E4M3FN, scaling = token>, layout = #humming.layout<chip = "sm_90a">,
       tile_configs = [#t]}
      : memref<?x512xf8E4M3FN>, memref<16x2048xi32> -> memref<?x256xbf16>
  return
}

// -----

// The cluster is the pair of column blocks: no K split beside it.
#t = #humming.tile_config<m = [1, inf], block = [128, 128, 128], warp = [128, 16, 128], stages = 4, mma = wgmma, warp_specialized = true, mbarrier = true, tma = [a, b], multicast_a = 2, split_k = 2>
func.func @multicast_split(%a: memref<?x512xf8E4M3FN>, %w: memref<16x2048xi32>, %s: memref<1x256xf32>, %as: memref<?x1xf32>, %c: memref<?x256xbf16>) {
  // expected-error @+1 {{tile_configs[0]: expected split_k = 1 with multicast_a = 2 (the cluster is the pair of column blocks), got 2}}
  humming.gemm %a, %w scales(%s : memref<1x256xf32>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = f8E4M3FN, scale = f32, granularity = channel>,
       input_schema = #humming.input_schema<type = f8E4M3FN, scaling = token>, layout = #humming.layout<chip = "sm_90a">,
       tile_configs = [#t]}
      : memref<?x512xf8E4M3FN>, memref<16x2048xi32> -> memref<?x256xbf16>
  return
}

// -----

// Each CTA of the pair copies half the rows, starting at a multiple of the
// swizzle's eight rows: block_m 24 would split at 12.
#t = #humming.tile_config<m = [1, inf], block = [24, 128, 128], warp = [24, 16, 128], stages = 4, mma = wgmma, warp_specialized = true, mbarrier = true, tma = [a, b], multicast_a = 2>
func.func @multicast_rows(%a: memref<?x512xf8E4M3FN>, %w: memref<16x2048xi32>, %s: memref<1x256xf32>, %as: memref<?x1xf32>, %c: memref<?x256xbf16>) {
  // expected-error @+1 {{tile_configs[0]: expected block_m to be a multiple of 16 with multicast_a = 2 (each CTA's half of the rows starts at a multiple of the swizzle's eight rows), got 24}}
  humming.gemm %a, %w scales(%s : memref<1x256xf32>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = f8E4M3FN, scale = f32, granularity = channel>,
       input_schema = #humming.input_schema<type = f8E4M3FN, scaling = token>, layout = #humming.layout<chip = "sm_90a">,
       tile_configs = [#t]}
      : memref<?x512xf8E4M3FN>, memref<16x2048xi32> -> memref<?x256xbf16>
  return
}

// -----

// promotion_interval: the wgmmas read both operands by descriptor; W4A8's
// weights are dequantized into registers.
#t = #humming.tile_config<m = [1, inf], block = [128, 128, 64], warp = [128, 16, 64], mma = wgmma, warp_specialized = true, mbarrier = true, tma = [a, b], promotion_interval = 2>
func.func @promotion_w4a8(%a: memref<?x512xf8E4M3FN>, %w: memref<16x1024xi32>, %s: memref<4x256xf16>, %as: memref<?x1xf32>, %c: memref<?x256xf16>) {
  // expected-error @+1 {{tile_configs[0]: expected weights the wgmmas read by descriptor (8-bit weights of the activations' MMA type, K-major on sm_90a) with promotion_interval > 1, got ui4 weights}}
  humming.gemm %a, %w scales(%s : memref<4x256xf16>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>>,
       input_schema = #humming.input_schema<type = f8E4M3FN, scaling = token>, layout = #humming.layout<chip = "sm_90a">,
       tile_configs = [#t]}
      : memref<?x512xf8E4M3FN>, memref<16x1024xi32> -> memref<?x256xf16>
  return
}

// -----

// Three iterations of K do not make whole intervals of two.
#t = #humming.tile_config<m = [1, inf], block = [128, 128, 128], warp = [128, 16, 128], mma = wgmma, warp_specialized = true, mbarrier = true, tma = [a, b], promotion_interval = 2>
func.func @promotion_odd_k(%a: memref<?x384xf8E4M3FN>, %w: memref<12x2048xi32>, %s: memref<1x256xf32>, %as: memref<?x1xf32>, %c: memref<?x256xf16>) {
  // expected-error @+1 {{tile_configs[0]: expected split_k = 1 and the K iterations (padded K 384 / block_k 128 = 3) a multiple of promotion_interval (2), got split_k = 1}}
  humming.gemm %a, %w scales(%s : memref<1x256xf32>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = f8E4M3FN, scale = f32, granularity = channel>,
       input_schema = #humming.input_schema<type = f8E4M3FN, scaling = token>, layout = #humming.layout<chip = "sm_90a">,
       tile_configs = [#t]}
      : memref<?x384xf8E4M3FN>, memref<12x2048xi32> -> memref<?x256xf16>
  return
}

// -----

#t = #humming.tile_config<m = [1, inf], block = [128, 128, 128], warp = [128, 16, 128], mma = wgmma, warp_specialized = true, mbarrier = true, tma = [a, b], split_k = 2, promotion_interval = 2>
func.func @promotion_split(%a: memref<?x512xf8E4M3FN>, %w: memref<16x2048xi32>, %s: memref<1x256xf32>, %as: memref<?x1xf32>, %c: memref<?x256xf16>) {
  // expected-error @+1 {{tile_configs[0]: expected split_k = 1 and the K iterations (padded K 512 / block_k 128 = 4) a multiple of promotion_interval (2), got split_k = 2}}
  humming.gemm %a, %w scales(%s : memref<1x256xf32>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = f8E4M3FN, scale = f32, granularity = channel>,
       input_schema = #humming.input_schema<type = f8E4M3FN, scaling = token>, layout = #humming.layout<chip = "sm_90a">,
       tile_configs = [#t]}
      : memref<?x512xf8E4M3FN>, memref<16x2048xi32> -> memref<?x256xf16>
  return
}

// -----

// The mbarrier pipelines index their slots at run time: up to 16.
#t = #humming.tile_config<m = [1, inf], block = [128, 128, 64], warp = [128, 16, 64], mma = wgmma, stages = 17, warp_specialized = true, mbarrier = true, tma = [a, b]>
func.func @stages_mbarrier(%a: memref<?x512xf8E4M3FN>, %w: memref<16x2048xi32>, %s: memref<1x256xf32>, %as: memref<?x1xf32>, %c: memref<?x256xf16>) {
  // expected-error @+1 {{tile_configs[0]: expected at most 16 stages (pipeline slots, with mbarrier), got 17}}
  humming.gemm %a, %w scales(%s : memref<1x256xf32>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = f8E4M3FN, scale = f32, granularity = channel>,
       input_schema = #humming.input_schema<type = f8E4M3FN, scaling = token>, layout = #humming.layout<chip = "sm_90a">,
       tile_configs = [#t]}
      : memref<?x512xf8E4M3FN>, memref<16x2048xi32> -> memref<?x256xf16>
  return
}
