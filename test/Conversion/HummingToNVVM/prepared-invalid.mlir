// RUN: humming-opt %s --humming-lower-to-nvvm="chip=sm_90a" -split-input-file -verify-diagnostics

// Prepared weights and the tile configurations the mma_sync kernels honour:
// everything else is a diagnostic naming what was expected.

#tile = #humming.tile_config<m = [1, inf], block = [16, 64, 64], warp = [16, 64, 32], stages = 3>

func.func @other_chip(%a: memref<?x128xf16>, %w: memref<8x256xi32>, %s: memref<1x128xf16>, %c: memref<?x128xf16>) {
  // expected-error @+1 {{the weights are prepared for sm_80; expected chip=sm_80, got chip=sm_90a}}
  humming.gemm %a, %w scales(%s : memref<1x128xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16>, input_schema = #humming.input_schema<type = f16>,
       layout = #humming.layout<chip = "sm_80">, tile_configs = [#tile]}
      : memref<?x128xf16>, memref<8x256xi32> -> memref<?x128xf16>
  return
}

// -----

#tile = #humming.tile_config<m = [1, inf], block = [16, 128, 64], warp = [16, 32, 64], stages = 3, mma = wgmma>

func.func @other_family(%a: memref<?x128xf16>, %w: memref<8x256xi32>, %s: memref<1x128xf16>, %c: memref<?x128xf16>) {
  // expected-error @+1 {{expected a layout for mma = mma_sync, got wgmma}}
  humming.gemm %a, %w scales(%s : memref<1x128xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16>, input_schema = #humming.input_schema<type = f16>,
       layout = #humming.layout<mma = wgmma, chip = "sm_90a">, tile_configs = [#tile]}
      : memref<?x128xf16>, memref<8x256xi32> -> memref<?x128xf16>
  return
}

// -----

#tile = #humming.tile_config<m = [1, inf], block = [16, 64, 64], warp = [16, 64, 32], stages = 3>

// N = 96 is not a multiple of the 64-column weight tile (the verifier's
// rule for every prepared layout).
func.func @narrow(%a: memref<?x128xf16>, %w: memref<8x192xi32>, %s: memref<1x96xf16>, %c: memref<?x96xf16>) {
  // expected-error @+1 {{expected the padded N to be a multiple of 64, got 96 (pad N with pad_n)}}
  humming.gemm %a, %w scales(%s : memref<1x96xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16>, input_schema = #humming.input_schema<type = f16>,
       layout = #humming.layout<chip = "sm_90a">, tile_configs = [#tile]}
      : memref<?x128xf16>, memref<8x192xi32> -> memref<?x96xf16>
  return
}

// -----

#tile = #humming.tile_config<m = [1, inf], block = [16, 64, 64], warp = [16, 64, 32], stages = 3>

func.func @ue8m0_f16(%a: memref<?x128xf16>, %w: memref<8x256xi32>, %s: memref<4x128xf8E8M0FNU>, %c: memref<?x128xf16>) {
  // expected-error @+1 {{the prepared mma_sync layout applies scales in the activation type and expects scales that f16 represents exactly, got f8E8M0FNU}}
  humming.gemm %a, %w scales(%s : memref<4x128xf8E8M0FNU>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f8E8M0FNU, granularity = group<32>>, input_schema = #humming.input_schema<type = f16>,
       layout = #humming.layout<chip = "sm_90a">, tile_configs = [#tile]}
      : memref<?x128xf16>, memref<8x256xi32> -> memref<?x128xf16>
  return
}

// -----

#tile = #humming.tile_config<m = [1, inf], block = [16, 64, 64], warp = [16, 32, 32], stages = 3>

func.func @warp_n(%a: memref<?x128xf16>, %w: memref<8x256xi32>, %s: memref<1x128xf16>, %c: memref<?x128xf16>) {
  // expected-error @+1 {{tile_configs[0]: expected warp_n = 64 (one 16x64 weight tile per warp), got 32}}
  humming.gemm %a, %w scales(%s : memref<1x128xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16>, input_schema = #humming.input_schema<type = f16>,
       layout = #humming.layout<chip = "sm_90a">, tile_configs = [#tile]}
      : memref<?x128xf16>, memref<8x256xi32> -> memref<?x128xf16>
  return
}

// -----

#tile = #humming.tile_config<m = [1, inf], block = [16, 64, 64], warp = [16, 64, 32], stages = 3, cp_async = false>

func.func @cp_async(%a: memref<?x128xf16>, %w: memref<8x256xi32>, %s: memref<1x128xf16>, %c: memref<?x128xf16>) {
  // expected-error @+1 {{tile_configs[0]: the mma_sync kernels stage their operands with cp.async; expected cp_async = true}}
  humming.gemm %a, %w scales(%s : memref<1x128xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16>, input_schema = #humming.input_schema<type = f16>,
       layout = #humming.layout<chip = "sm_90a">, tile_configs = [#tile]}
      : memref<?x128xf16>, memref<8x256xi32> -> memref<?x128xf16>
  return
}

// -----

#tile = #humming.tile_config<m = [1, inf], block = [16, 64, 64], warp = [16, 64, 32], stages = 3, stream_k = true>

func.func @stream_k(%a: memref<?x128xf16>, %w: memref<8x256xi32>, %s: memref<1x128xf16>, %c: memref<?x128xf16>) {
  // expected-error @+1 {{tile_configs[0]: the prepared kernels do not implement stream-K, multicast of the weights (multicast_b), grid_cap or write_splits yet; expected their defaults}}
  humming.gemm %a, %w scales(%s : memref<1x128xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16>, input_schema = #humming.input_schema<type = f16>,
       layout = #humming.layout<chip = "sm_90a">, tile_configs = [#tile]}
      : memref<?x128xf16>, memref<8x256xi32> -> memref<?x128xf16>
  return
}

// -----

#tile = #humming.tile_config<m = [1, inf], block = [16, 64, 256], warp = [16, 64, 32], stages = 3, ctas_per_sm = 5>

func.func @ctas_per_sm(%a: memref<?x512xf16>, %w: memref<32x256xi32>, %s: memref<1x128xf16>, %c: memref<?x128xf16>) {
  // expected-error @+1 {{tile_configs[0]: ctas_per_sm = 5 blocks of 256 threads leave 51 registers per thread; expected at least 64}}
  humming.gemm %a, %w scales(%s : memref<1x128xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16>, input_schema = #humming.input_schema<type = f16>,
       layout = #humming.layout<chip = "sm_90a">, tile_configs = [#tile]}
      : memref<?x512xf16>, memref<32x256xi32> -> memref<?x128xf16>
  return
}

// -----

#tile = #humming.tile_config<m = [1, inf], block = [16, 256, 64], warp = [16, 64, 32], stages = 3>

func.func @block_n(%a: memref<?x128xf16>, %w: memref<8x256xi32>, %s: memref<1x128xf16>, %c: memref<?x128xf16>) {
  // expected-error @+1 {{tile_configs[0]: expected block_n (256) to divide the padded N (128)}}
  humming.gemm %a, %w scales(%s : memref<1x128xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16>, input_schema = #humming.input_schema<type = f16>,
       layout = #humming.layout<chip = "sm_90a">, tile_configs = [#tile]}
      : memref<?x128xf16>, memref<8x256xi32> -> memref<?x128xf16>
  return
}

// -----

#tile = #humming.tile_config<m = [1, inf], block = [256, 64, 32], warp = [16, 64, 32], stages = 3>

func.func @block_m(%a: memref<?x128xf16>, %w: memref<8x256xi32>, %s: memref<1x128xf16>, %c: memref<?x128xf16>) {
  // expected-error @+1 {{tile_configs[0]: expected block_m = warp_m x 1, 2, 4 or 8 (warp rows along M), got block_m = 256, warp_m = 16}}
  humming.gemm %a, %w scales(%s : memref<1x128xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16>, input_schema = #humming.input_schema<type = f16>,
       layout = #humming.layout<chip = "sm_90a">, tile_configs = [#tile]}
      : memref<?x128xf16>, memref<8x256xi32> -> memref<?x128xf16>
  return
}

// -----

#tile = #humming.tile_config<m = [1, inf], block = [64, 128, 128], warp = [64, 64, 32], stages = 8>

func.func @shared_memory(%a: memref<?x128xf16>, %w: memref<8x256xi32>, %s: memref<1x128xf16>, %c: memref<?x128xf16>) {
  // expected-error @+1 {{tile_configs[0]: the kernel needs 327680 bytes of shared memory (pipeline stages and split-K sums); expected at most 232448 on sm_90a (reduce stages, block_k / warp_k, block_n or warp_m)}}
  humming.gemm %a, %w scales(%s : memref<1x128xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16>, input_schema = #humming.input_schema<type = f16>,
       layout = #humming.layout<chip = "sm_90a">, tile_configs = [#tile]}
      : memref<?x128xf16>, memref<8x256xi32> -> memref<?x128xf16>
  return
}

// -----

#tile = #humming.tile_config<m = [1, inf], block = [8, 64, 64], warp = [8, 64, 32], stages = 3>

func.func @warp_m(%a: memref<?x128xf16>, %w: memref<8x256xi32>, %s: memref<1x128xf16>, %c: memref<?x128xf16>) {
  // expected-error @+1 {{tile_configs[0]: expected warp_m of 16, 32, 48 or 64, got 8}}
  humming.gemm %a, %w scales(%s : memref<1x128xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16>, input_schema = #humming.input_schema<type = f16>,
       layout = #humming.layout<chip = "sm_90a">, tile_configs = [#tile]}
      : memref<?x128xf16>, memref<8x256xi32> -> memref<?x128xf16>
  return
}

// -----

#tile = #humming.tile_config<m = [1, inf], block = [16, 64, 64], warp = [16, 64, 32], stages = 9>

func.func @stages(%a: memref<?x128xf16>, %w: memref<8x256xi32>, %s: memref<1x128xf16>, %c: memref<?x128xf16>) {
  // expected-error @+1 {{tile_configs[0]: expected at most 8 stages (pipeline slots, without mbarrier), got 9}}
  humming.gemm %a, %w scales(%s : memref<1x128xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16>, input_schema = #humming.input_schema<type = f16>,
       layout = #humming.layout<chip = "sm_90a">, tile_configs = [#tile]}
      : memref<?x128xf16>, memref<8x256xi32> -> memref<?x128xf16>
  return
}

// -----

// K = 128 is 4 iterations of block_k = 32: no work for a fifth CTA.
#tile = #humming.tile_config<m = [1, 16], block = [16, 64, 32], warp = [16, 64, 32], stages = 3, split_k = 5>
#rest = #humming.tile_config<m = [17, inf], block = [16, 64, 32], warp = [16, 64, 32], stages = 3>

func.func @split_k_past_k(%a: memref<?x128xf16>, %w: memref<8x256xi32>, %s: memref<1x128xf16>, %c: memref<?x128xf16>) {
  // expected-error @+1 {{tile_configs[0]: expected split_k <= 4 (the K iterations of 32 to share among the CTAs), got 5}}
  humming.gemm %a, %w scales(%s : memref<1x128xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16>, input_schema = #humming.input_schema<type = f16>,
       layout = #humming.layout<chip = "sm_90a">, tile_configs = [#tile, #rest]}
      : memref<?x128xf16>, memref<8x256xi32> -> memref<?x128xf16>
  return
}

// -----

#tile = #humming.tile_config<m = [1, inf], block = [16, 64, 64], warp = [16, 64, 32], stages = 3>

func.func @f16_accumulation_f32_channel_scales(%a: memref<?x128xf16>, %w: memref<8x256xi32>, %s: memref<1x128xf32>, %c: memref<?x128xf16>) {
  // expected-error @+1 {{f16 accumulation applies channel scales to the weights in f16 and expects scales it represents exactly, got f32}}
  humming.gemm %a, %w scales(%s : memref<1x128xf32>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f32>, input_schema = #humming.input_schema<type = f16>,
       compute = #humming.compute<f16_accumulation = true>,
       layout = #humming.layout<chip = "sm_90a">, tile_configs = [#tile]}
      : memref<?x128xf16>, memref<8x256xi32> -> memref<?x128xf16>
  return
}

// -----

// scale_after_mma scales the f32 sums of a warp's k-tiles by their group's
// scales: it needs group scales of 16 bits, f32 sums, per-warp copies and a
// warp's k-tiles of an iteration inside one group.
#tile = #humming.tile_config<block = [16, 64, 64], warp = [16, 64, 32], stages = 3, scale_after_mma = true>

func.func @scale_after_mma_channel(%a: memref<?x128xf16>, %w: memref<8x256xi32>, %s: memref<1x128xf16>, %c: memref<?x128xf16>) {
  // expected-error @+1 {{tile_configs[0]: scale_after_mma applies group scales; expected group or group_tensor granularity, got channel}}
  humming.gemm %a, %w scales(%s : memref<1x128xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16>, input_schema = #humming.input_schema<type = f16>,
       layout = #humming.layout<chip = "sm_90a">, tile_configs = [#tile]}
      : memref<?x128xf16>, memref<8x256xi32> -> memref<?x128xf16>
  return
}

// -----

#tile = #humming.tile_config<block = [16, 64, 64], warp = [16, 64, 32], stages = 3, scale_after_mma = true>

func.func @scale_after_mma_8bit_scales(%a: memref<?x128xbf16>, %w: memref<8x256xi32>, %s: memref<4x128xf8E8M0FNU>, %c: memref<?x128xbf16>) {
  // expected-error @+1 {{tile_configs[0]: scale_after_mma reads 16-bit scales; expected f16 or bf16 scales, got f8E8M0FNU}}
  humming.gemm %a, %w scales(%s : memref<4x128xf8E8M0FNU>) into %c
      {weight_schema = #humming.weight_schema<type = f4E2M1FN, scale = f8E8M0FNU, granularity = group<32>>,
       input_schema = #humming.input_schema<type = bf16>, layout = #humming.layout<chip = "sm_90a">, tile_configs = [#tile]}
      : memref<?x128xbf16>, memref<8x256xi32> -> memref<?x128xbf16>
  return
}

// -----

#tile = #humming.tile_config<block = [16, 64, 64], warp = [16, 64, 32], stages = 3, scale_after_mma = true>

func.func @scale_after_mma_f16_accumulation(%a: memref<?x128xf16>, %w: memref<8x256xi32>, %s: memref<1x128xf16>, %c: memref<?x128xf16>) {
  // expected-error @+1 {{tile_configs[0]: scale_after_mma scales f32 sums; expected f32 accumulation}}
  humming.gemm %a, %w scales(%s : memref<1x128xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>>, input_schema = #humming.input_schema<type = f16>,
       compute = #humming.compute<f16_accumulation = true>,
       layout = #humming.layout<chip = "sm_90a">, tile_configs = [#tile]}
      : memref<?x128xf16>, memref<8x256xi32> -> memref<?x128xf16>
  return
}

// -----

#tile = #humming.tile_config<block = [32, 128, 64], warp = [32, 64, 32], stages = 3, scale_after_mma = true>

func.func @scale_after_mma_warp_m_32(%a: memref<?x128xf16>, %w: memref<8x512xi32>, %s: memref<1x256xf16>, %c: memref<?x256xf16>) {
  // expected-error @+1 {{tile_configs[0]: scale_after_mma keeps a second set of f32 sums per warp; expected warp_m = block_m = 16, got warp_m = 32, block_m = 32}}
  humming.gemm %a, %w scales(%s : memref<1x256xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>>, input_schema = #humming.input_schema<type = f16>,
       layout = #humming.layout<chip = "sm_90a">, tile_configs = [#tile]}
      : memref<?x128xf16>, memref<8x512xi32> -> memref<?x256xf16>
  return
}

// -----

#tile = #humming.tile_config<block = [16, 64, 64], warp = [16, 64, 64], stages = 3, scale_after_mma = true>

func.func @scale_after_mma_group_smaller_than_warp_k(%a: memref<?x128xf16>, %w: memref<8x256xi32>, %s: memref<4x128xf16>, %c: memref<?x128xf16>) {
  // expected-error @+1 {{tile_configs[0]: scale_after_mma needs a warp's k-tiles of an iteration in one group: expected warp_k (64) <= the group size (32)}}
  humming.gemm %a, %w scales(%s : memref<4x128xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<32>>, input_schema = #humming.input_schema<type = f16>,
       layout = #humming.layout<chip = "sm_90a">, tile_configs = [#tile]}
      : memref<?x128xf16>, memref<8x256xi32> -> memref<?x128xf16>
  return
}

// -----

// The sm_90a wgmma kernels (mma = wgmma over the prepared mma_sync layout):
// f32 sums, no K split inside the block or across CTAs, at least three
// stages, at most 128 f32 sums per thread (192 with warp_specialized).
#tile = #humming.tile_config<block = [128, 256, 32], warp = [128, 32, 32], mma = wgmma>

func.func @wgmma_f16_accumulation(%a: memref<?x512xf16>, %w: memref<32x512xi32>, %s: memref<4x256xf16>, %c: memref<?x256xf16>) {
  // expected-error @+1 {{tile_configs[0]: the wgmma kernels accumulate in f32; expected f16_accumulation = false}}
  humming.gemm %a, %w scales(%s : memref<4x256xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>>, input_schema = #humming.input_schema<type = f16>,
       compute = #humming.compute<f16_accumulation = true>,
       layout = #humming.layout<chip = "sm_90a">, tile_configs = [#tile]}
      : memref<?x512xf16>, memref<32x512xi32> -> memref<?x256xf16>
  return
}

// -----

#tile = #humming.tile_config<block = [128, 256, 64], warp = [128, 32, 32], mma = wgmma>

func.func @wgmma_k_split(%a: memref<?x512xf16>, %w: memref<32x512xi32>, %s: memref<4x256xf16>, %c: memref<?x256xf16>) {
  // expected-error @+1 {{tile_configs[0]: expected block_k = warp_k with wgmma (no K split inside the block), got block_k = 64, warp_k = 32}}
  humming.gemm %a, %w scales(%s : memref<4x256xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>>, input_schema = #humming.input_schema<type = f16>,
       layout = #humming.layout<chip = "sm_90a">, tile_configs = [#tile]}
      : memref<?x512xf16>, memref<32x512xi32> -> memref<?x256xf16>
  return
}

// -----

#tile = #humming.tile_config<block = [128, 256, 32], warp = [128, 32, 32], stages = 2, mma = wgmma>

func.func @wgmma_two_stages(%a: memref<?x512xf16>, %w: memref<32x512xi32>, %s: memref<4x256xf16>, %c: memref<?x256xf16>) {
  // expected-error @+1 {{tile_configs[0]: expected stages >= 3 with wgmma (a slot is refilled two iterations after it is read: its wgmmas run on), got 2}}
  humming.gemm %a, %w scales(%s : memref<4x256xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>>, input_schema = #humming.input_schema<type = f16>,
       layout = #humming.layout<chip = "sm_90a">, tile_configs = [#tile]}
      : memref<?x512xf16>, memref<32x512xi32> -> memref<?x256xf16>
  return
}

// -----

// wgmma split_k: the CTAs of one cluster (portable sizes 2, 4, 8).
#tile = #humming.tile_config<m = [1, inf], block = [128, 256, 32], warp = [128, 32, 32], split_k = 3, mma = wgmma>

func.func @wgmma_split_k_not_a_cluster(%a: memref<?x512xf16>, %w: memref<32x512xi32>, %s: memref<4x256xf16>, %c: memref<?x256xf16>) {
  // expected-error @+1 {{tile_configs[0]: expected split_k of 1, 2, 4 or 8 with wgmma (the CTAs of one thread block cluster), got 3}}
  humming.gemm %a, %w scales(%s : memref<4x256xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>>, input_schema = #humming.input_schema<type = f16>,
       layout = #humming.layout<chip = "sm_90a">, tile_configs = [#tile]}
      : memref<?x512xf16>, memref<32x512xi32> -> memref<?x256xf16>
  return
}

// -----

// Each CTA of the cluster stores an equal share of the warp_m / 8 rows of
// eight tokens: 32 tokens are four rows, too few for eight CTAs.
#tile = #humming.tile_config<m = [1, inf], block = [32, 256, 32], warp = [32, 32, 32], split_k = 8, mma = wgmma>

func.func @wgmma_split_k_rows(%a: memref<?x512xf16>, %w: memref<32x512xi32>, %s: memref<4x256xf16>, %c: memref<?x256xf16>) {
  // expected-error @+1 {{tile_configs[0]: expected split_k to divide warp_m / 8 with wgmma (each CTA of the cluster stores a share of the rows of eight tokens), got warp_m = 32, split_k = 8}}
  humming.gemm %a, %w scales(%s : memref<4x256xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>>, input_schema = #humming.input_schema<type = f16>,
       layout = #humming.layout<chip = "sm_90a">, tile_configs = [#tile]}
      : memref<?x512xf16>, memref<32x512xi32> -> memref<?x256xf16>
  return
}

// -----

#tile = #humming.tile_config<block = [256, 256, 32], warp = [256, 32, 32], mma = wgmma>

func.func @wgmma_too_many_sums(%a: memref<?x512xf16>, %w: memref<32x512xi32>, %s: memref<4x256xf16>, %c: memref<?x256xf16>) {
  // expected-error @+1 {{tile_configs[0]: warp_m = 256, warp_n = 32 keep 256 f32 sums per thread; expected at most 128 without warp_specialized (warp_m x warp_n <= 4096)}}
  humming.gemm %a, %w scales(%s : memref<4x256xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>>, input_schema = #humming.input_schema<type = f16>,
       layout = #humming.layout<chip = "sm_90a">, tile_configs = [#tile]}
      : memref<?x512xf16>, memref<32x512xi32> -> memref<?x256xf16>
  return
}

// -----

#tile = #humming.tile_config<m = [1, inf], block = [64, 64, 64], warp = [64, 64, 32], stages = 3, warp_specialized = true, mbarrier = true>

func.func @warp_specialized_mma_sync(%a: memref<?x128xf16>, %w: memref<8x256xi32>, %s: memref<1x128xf16>, %c: memref<?x128xf16>) {
  // expected-error @+1 {{tile_configs[0]: expected mma = wgmma with warp_specialized (the mma_sync kernels do not implement a producer warpgroup)}}
  humming.gemm %a, %w scales(%s : memref<1x128xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16>, input_schema = #humming.input_schema<type = f16>,
       layout = #humming.layout<chip = "sm_90a">, tile_configs = [#tile]}
      : memref<?x128xf16>, memref<8x256xi32> -> memref<?x128xf16>
  return
}

// -----

#tile = #humming.tile_config<m = [1, inf], block = [16, 64, 64], warp = [16, 64, 32], stages = 3, mbarrier = true>

func.func @mbarrier_alone(%a: memref<?x128xf16>, %w: memref<8x256xi32>, %s: memref<1x128xf16>, %c: memref<?x128xf16>) {
  // expected-error @+1 {{tile_configs[0]: expected warp_specialized = true with mbarrier = true (the prepared kernels synchronise through mbarriers only between a producer warpgroup and its consumers)}}
  humming.gemm %a, %w scales(%s : memref<1x128xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16>, input_schema = #humming.input_schema<type = f16>,
       layout = #humming.layout<chip = "sm_90a">, tile_configs = [#tile]}
      : memref<?x128xf16>, memref<8x256xi32> -> memref<?x128xf16>
  return
}

// -----

// Two CTAs per SM leave the consumers of a 128-token warp-specialized block
// 96 registers (the producers down to 40): not enough for 128 f32 sums
// (ptxas would fail).
#tile = #humming.tile_config<m = [1, inf], block = [128, 256, 64], warp = [128, 32, 64], mma = wgmma, warp_specialized = true, mbarrier = true, ctas_per_sm = 2>

func.func @ws_ctas_per_sm(%a: memref<?x512xf16>, %w: memref<32x512xi32>, %s: memref<4x256xf16>, %c: memref<?x256xf16>) {
  // expected-error @+1 {{tile_configs[0]: warp_specialized with ctas_per_sm = 2 leaves the consumer warpgroups 96 registers per thread; expected at least 152 (warp_m x warp_n / 32 f32 sums and 24 for the operands)}}
  humming.gemm %a, %w scales(%s : memref<4x256xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>>,
       input_schema = #humming.input_schema<type = f16>, layout = #humming.layout<chip = "sm_90a">,
       tile_configs = [#tile]}
      : memref<?x512xf16>, memref<32x512xi32> -> memref<?x256xf16>
  return
}

// -----

// TMA fetches only the activations (a) and the weights (b), and only in
// warp-specialized kernels (the copies complete on the producer's full
// mbarriers).
#tile = #humming.tile_config<m = [1, inf], block = [128, 256, 64], warp = [128, 32, 64], mma = wgmma, warp_specialized = true, mbarrier = true, tma = [b, scales]>

func.func @tma_scales(%a: memref<?x512xf16>, %w: memref<32x512xi32>, %s: memref<4x256xf16>, %c: memref<?x256xf16>) {
  // expected-error @+1 {{tile_configs[0]: the prepared kernels fetch only the activations (a) and the weights (b) by TMA, in warp-specialized wgmma kernels; expected tma = [a], [b] or [a, b] with mma = wgmma, warp_specialized = true, or no tma}}
  humming.gemm %a, %w scales(%s : memref<4x256xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>>,
       input_schema = #humming.input_schema<type = f16>, layout = #humming.layout<chip = "sm_90a">,
       tile_configs = [#tile]}
      : memref<?x512xf16>, memref<32x512xi32> -> memref<?x256xf16>
  return
}

// -----

#tile = #humming.tile_config<m = [1, inf], block = [128, 256, 64], warp = [128, 32, 64], mma = wgmma, mbarrier = true, tma = [b]>

func.func @tma_without_producer(%a: memref<?x512xf16>, %w: memref<32x512xi32>, %s: memref<4x256xf16>, %c: memref<?x256xf16>) {
  // expected-error @+1 {{tile_configs[0]: expected warp_specialized = true with mbarrier = true}}
  humming.gemm %a, %w scales(%s : memref<4x256xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>>,
       input_schema = #humming.input_schema<type = f16>, layout = #humming.layout<chip = "sm_90a">,
       tile_configs = [#tile]}
      : memref<?x512xf16>, memref<32x512xi32> -> memref<?x256xf16>
  return
}
