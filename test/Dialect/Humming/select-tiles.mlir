// humming-select-tiles: per device, the tile configurations of a prepared
// W4A16 g128 4096 x 4096 layer (no GPU needed). The heuristics are pure
// functions of the schema, N, K and the device's facts: SM count, bandwidth,
// tensor throughput and shared memory (Humming/Target/TileHeuristics.h).

// RUN: humming-opt %s --humming-select-tiles="device=H200" | FileCheck %s --check-prefix=H200
// RUN: humming-opt %s --humming-select-tiles="target=H200" | FileCheck %s --check-prefix=H200
// RUN: humming-opt %s --humming-select-tiles="device=H100" | FileCheck %s --check-prefix=H100
// RUN: humming-opt %s --humming-select-tiles="device=H20" | FileCheck %s --check-prefix=H20
// RUN: humming-opt %s --humming-select-tiles="device=A100" | FileCheck %s --check-prefix=A100
// RUN: humming-opt %s --humming-select-tiles="device=A10" | FileCheck %s --check-prefix=SM86
// RUN: humming-opt %s --humming-select-tiles="device=L40S" | FileCheck %s --check-prefix=SM89
// RUN: humming-opt %s --humming-select-tiles="chip=sm_89" | FileCheck %s --check-prefix=SM89

// The H200 (132 SMs, 227 KiB, crossover ~52 tokens): 16-row tiles with an
// eight-way in-block K split up to M = 32. Up to M = 8 the warps take four
// k-tiles per iteration, all in one group, so the group scales multiply the
// f32 sums after the MMAs (scale_after_mma), and the 64 output tiles leave
// half the SMs idle: two CTAs split K (split_k); no split once the grid
// alone fills the device (the A100's 108 SMs and A10's 72 take one CTA per
// tile: 108 / 64 rounds down to 1). At M = 9..16 two warps along N share
// the block's copy of A (block_copies) and the 32 blocks of 128 columns
// split K over CTAs, two per SM where two fit the SM's shared memory: eight
// (six on the A100, four on the A10 and the H20). From M = 33 on, on
// sm_90a, the warp-specialized wgmma tiles (256 columns, a producer
// warpgroup) with K split across CTAs, per range the fewest estimated
// iteration-waves (16 blocks of 256 columns here), through the workspace
// where the CTAs are one wave (every copy by TMA), else in a cluster (a
// cluster costs 1.7 times an iteration by TMA): 64 tokens split four ways
// up to M = 128 (one kernel for 33..64 and 65..128), 64 tokens in twos up
// to 256, 128 tokens in twos up to 512, then 128 tokens alone (the
// 128-token tiles keep an iteration's wgmmas in flight into the next one).
// Elsewhere
// blocks of two warp rows copy their tiles together
// from M = 513 on: 128 x 256 where N / 256 x 8 blocks fill the device, else
// 128 x 128.
// H200: tile_configs = [#humming.tile_config<m = [1, 8], block = [16, 64, 512], warp = [16, 64, 64], split_k = 2, scale_after_mma = true>,
// H200-SAME: #humming.tile_config<m = [9, 16], block = [16, 128, 128], warp = [16, 64, 32], split_k = 8, block_copies = true>,
// H200-SAME: #humming.tile_config<m = [17, 32], block = [16, 64, 256], warp = [16, 64, 32]>,
// H200-SAME: #humming.tile_config<m = [33, 128], block = [64, 256, 64], warp = [64, 32, 64], stages = 8, mma = wgmma, warp_specialized = true, mbarrier = true, tma = [a, b], split_k = 4, workspace_split = true, cooperative_split = true>,
// H200-SAME: #humming.tile_config<m = [129, 256], block = [64, 256, 64], warp = [64, 32, 64], stages = 8, mma = wgmma, warp_specialized = true, mbarrier = true, tma = [a, b], split_k = 2, workspace_split = true, cooperative_split = true>,
// H200-SAME: #humming.tile_config<m = [257, 512], block = [128, 256, 64], warp = [128, 32, 64], mma = wgmma, warp_specialized = true, mbarrier = true, tma = [a, b], split_k = 2, workspace_split = true, cooperative_split = true, wgmma_in_flight = 1>,
// H200-SAME: #humming.tile_config<m = [513, inf], block = [128, 256, 64], warp = [128, 32, 64], mma = wgmma, warp_specialized = true, mbarrier = true, tma = [a, b], wgmma_in_flight = 1>]

// The H100 has the H200's SMs: the same tiles.
// H100: tile_configs = [#humming.tile_config<m = [1, 8], block = [16, 64, 512], warp = [16, 64, 64], split_k = 2, scale_after_mma = true>,
// H100-SAME: #humming.tile_config<m = [9, 16], block = [16, 128, 128], warp = [16, 64, 32], split_k = 8, block_copies = true>,
// H100-SAME: #humming.tile_config<m = [17, 32], block = [16, 64, 256], warp = [16, 64, 32]>,
// H100-SAME: #humming.tile_config<m = [33, 128], block = [64, 256, 64], warp = [64, 32, 64], stages = 8, mma = wgmma, warp_specialized = true, mbarrier = true, tma = [a, b], split_k = 4, workspace_split = true, cooperative_split = true>,
// H100-SAME: #humming.tile_config<m = [129, 256], block = [64, 256, 64], warp = [64, 32, 64], stages = 8, mma = wgmma, warp_specialized = true, mbarrier = true, tma = [a, b], split_k = 2, workspace_split = true, cooperative_split = true>,
// H100-SAME: #humming.tile_config<m = [257, 512], block = [128, 256, 64], warp = [128, 32, 64], mma = wgmma, warp_specialized = true, mbarrier = true, tma = [a, b], split_k = 2, workspace_split = true, cooperative_split = true, wgmma_in_flight = 1>,
// H100-SAME: #humming.tile_config<m = [513, inf], block = [128, 256, 64], warp = [128, 32, 64], mma = wgmma, warp_specialized = true, mbarrier = true, tma = [a, b], wgmma_in_flight = 1>]

// The H20 (78 SMs, 148 TFLOP/s) turns compute-bound near M = 9: 32-row
// tiles at M = 17..32; from M = 33 the split tiles for 78 SMs: 64 tokens
// split four ways through the workspace up to M = 64 (64 CTAs, one wave;
// clusters of four would take two), two ways through the workspace up to
// 128 (every copy by TMA), 128 tokens split two ways through the
// workspace up to 256, then 128 tokens alone.
// H20: tile_configs = [#humming.tile_config<m = [1, 8], block = [16, 64, 512], warp = [16, 64, 64], scale_after_mma = true>,
// H20-SAME: #humming.tile_config<m = [9, 16], block = [16, 128, 128], warp = [16, 64, 32], split_k = 4, block_copies = true>,
// H20-SAME: #humming.tile_config<m = [17, 32], block = [32, 64, 256], warp = [32, 64, 32]>,
// H20-SAME: #humming.tile_config<m = [33, 64], block = [64, 256, 64], warp = [64, 32, 64], stages = 8, mma = wgmma, warp_specialized = true, mbarrier = true, tma = [a, b], split_k = 4, workspace_split = true, cooperative_split = true>,
// H20-SAME: #humming.tile_config<m = [65, 128], block = [64, 256, 64], warp = [64, 32, 64], stages = 8, mma = wgmma, warp_specialized = true, mbarrier = true, tma = [a, b], split_k = 2, workspace_split = true, cooperative_split = true>,
// H20-SAME: #humming.tile_config<m = [129, 256], block = [128, 256, 64], warp = [128, 32, 64], mma = wgmma, warp_specialized = true, mbarrier = true, tma = [a, b], split_k = 2, workspace_split = true, cooperative_split = true, wgmma_in_flight = 1>,
// H20-SAME: #humming.tile_config<m = [257, inf], block = [128, 256, 64], warp = [128, 32, 64], mma = wgmma, warp_specialized = true, mbarrier = true, tma = [a, b], wgmma_in_flight = 1>]

// The A100 (108 SMs, crossover ~38 tokens).
// A100: tile_configs = [#humming.tile_config<m = [1, 8], block = [16, 64, 512], warp = [16, 64, 64], scale_after_mma = true>,
// A100-SAME: #humming.tile_config<m = [9, 16], block = [16, 128, 128], warp = [16, 64, 32], split_k = 6, block_copies = true>,
// A100-SAME: #humming.tile_config<m = [17, 64], block = [16, 64, 64], warp = [16, 64, 32]>,
// A100-SAME: #humming.tile_config<m = [65, 128], block = [64, 128, 64], warp = [64, 64, 16], stages = 3>,
// A100-SAME: #humming.tile_config<m = [129, 512], block = [64, 128, 16], warp = [64, 64, 16], stages = 3>,
// A100-SAME: #humming.tile_config<m = [513, inf], block = [128, 256, 32], warp = [64, 64, 32]>]

// sm_86 (A10: 72 SMs, 99 KiB of shared memory, crossover ~52 tokens): four
// k-tiles per warp at M <= 8 would cost pipeline depth, so two stay; at
// M = 65..128 the partial sums of four 64-row warp groups (128 KiB) do not
// fit, so two split K.
// SM86: tile_configs = [#humming.tile_config<m = [1, 8], block = [16, 64, 256], warp = [16, 64, 32]>,
// SM86-SAME: #humming.tile_config<m = [9, 16], block = [16, 128, 128], warp = [16, 64, 32], split_k = 4, block_copies = true>,
// SM86-SAME: #humming.tile_config<m = [17, 64], block = [16, 64, 64], warp = [16, 64, 32]>,
// SM86-SAME: #humming.tile_config<m = [65, 128], block = [64, 128, 32], warp = [64, 64, 16], stages = 3>,
// SM86-SAME: #humming.tile_config<m = [129, 512], block = [64, 128, 16], warp = [64, 64, 16], stages = 3>,
// SM86-SAME: #humming.tile_config<m = [513, inf], block = [128, 256, 32], warp = [64, 64, 32]>]

// sm_89 (L40S, also the chip's representative): little bandwidth for its
// tensor throughput, crossover ~105 tokens.
// SM89: tile_configs = [#humming.tile_config<m = [1, 8], block = [16, 64, 256], warp = [16, 64, 32], split_k = 2>,
// SM89-SAME: #humming.tile_config<m = [9, 16], block = [16, 128, 128], warp = [16, 64, 32], split_k = 8, block_copies = true>,
// SM89-SAME: #humming.tile_config<m = [17, 64], block = [16, 64, 128], warp = [16, 64, 32]>,
// SM89-SAME: #humming.tile_config<m = [65, 128], block = [16, 64, 64], warp = [16, 64, 32]>,
// SM89-SAME: #humming.tile_config<m = [129, 512], block = [64, 128, 32], warp = [64, 64, 16], stages = 3>,
// SM89-SAME: #humming.tile_config<m = [513, inf], block = [128, 128, 32], warp = [64, 64, 32]>]
func.func @layer(%a: memref<?x4096xf16>, %w: memref<256x8192xi32>, %s: memref<32x4096xf16>, %c: memref<?x4096xf16>) {
  humming.gemm %a, %w scales(%s : memref<32x4096xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>>,
       input_schema = #humming.input_schema<type = f16>,
       layout = #humming.layout<chip = "sm_90a">}
      : memref<?x4096xf16>, memref<256x8192xi32> -> memref<?x4096xf16>
  return
}
