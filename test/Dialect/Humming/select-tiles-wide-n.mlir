// humming-select-tiles for a W4A16 g128 8192 x 8192 layer: 128 column tiles
// of 64 for 132 SMs, so the 16-row per-warp tile takes no K split across
// CTAs (132 / 128 rounds to one). On the H200 (sm_90a) that tile serves
// M = 1..8 and the 256 x 256 shared-activation tile (four warps along N
// sharing their K group's activation copies, the group scales after the
// MMAs, K split four ways: 128 CTAs) 9..16 (2026-12-01: M = 12 17.3 ->
// 15.6 us, 16 17.0 -> 15.7; the 2026-12-01 per-warp tile took M = 9 in 16.2,
// M = 8 stays with it: 14.4 vs 15.5). Elsewhere (not measured) the ranges
// stay 1..8 and 9..16 with the 128-column shared tile. From M = 17 the
// 64-token wgmma tile split four ways through the workspace (128 CTAs;
// 2026-12-03, M = 17 / 32: 35.5 / 42.8 -> 23.5 / 23.6 us against the 16-row
// mma_sync tile).

// RUN: humming-opt %s --humming-select-tiles="device=H200" | FileCheck %s --check-prefix=H200
// RUN: humming-opt %s --humming-select-tiles="device=A100" | FileCheck %s --check-prefix=A100

// H200: tile_configs = [#humming.tile_config<m = [1, 8], block = [16, 64, 512], warp = [16, 64, 64], scale_after_mma = true>,
// H200-SAME: #humming.tile_config<m = [9, 16], block = [16, 256, 256], warp = [16, 64, 64], stages = 3, split_k = 4, scale_after_mma = true, share_activations = true>,
// H200-SAME: #humming.tile_config<m = [17, 64], block = [64, 256, 64], warp = [64, 32, 64], stages = 8, mma = wgmma, warp_specialized = true, mbarrier = true, tma = [a, b], split_k = 4, workspace_split = true, cooperative_split = true>,

// A100: tile_configs = [#humming.tile_config<m = [1, 8], block = [16, 64, 256], warp = [16, 64, 64], scale_after_mma = true>,
// A100-SAME: #humming.tile_config<m = [9, 16],
func.func @layer(%a: memref<?x8192xf16>, %w: memref<512x16384xi32>, %s: memref<64x8192xf16>, %c: memref<?x8192xf16>) {
  humming.gemm %a, %w scales(%s : memref<64x8192xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>>,
       input_schema = #humming.input_schema<type = f16>,
       layout = #humming.layout<chip = "sm_90a">}
      : memref<?x8192xf16>, memref<512x16384xi32> -> memref<?x8192xf16>
  return
}

// 28672 x 8192 (224 blocks of 128 columns, more than half the 132 SMs): on
// the H200 one shared-activation tile without a split serves M = 1..16
// (2026-12-01: the 128-column block_copies tile, M = 1 57.5 -> 47.2 us, M =
// 16 84.8 -> 52.5 against the per-warp tiles; 2026-12-01: the 256 x 256
// share_activations tile, 112 CTAs, M = 1 / 9 / 16 47.2 / 47.6 / 51.6 ->
// 46.5 / 45.0 / 43.3), as two kernels: M = 1..8 (the transposed product,
// half the MMAs) and 9..16 — the ranges of a 16-row mma_sync tile are not
// merged across 8 / 9. From M = 17 the 64-token wgmma tile without a split
// (112 CTAs; 2026-12-03, M = 17 / 32: 117.6 / 143.1 -> 65.4 / 65.9 us
// against the mma_sync tile). The A100 keeps its ranges.
// RUN: humming-opt %s --humming-select-tiles="device=H200" | FileCheck %s --check-prefix=WIDE
// RUN: humming-opt %s --humming-select-tiles="device=A100" | FileCheck %s --check-prefix=WIDE-A100
// WIDE-LABEL: func.func @wide
// WIDE: tile_configs = [#humming.tile_config<m = [1, 8], block = [16, 256, 256], warp = [16, 64, 64], stages = 3, scale_after_mma = true, share_activations = true>,
// WIDE-SAME: #humming.tile_config<m = [9, 16], block = [16, 256, 256], warp = [16, 64, 64], stages = 3, scale_after_mma = true, share_activations = true>,
// WIDE-SAME: #humming.tile_config<m = [17, 64], block = [64, 256, 64], warp = [64, 32, 64], mma = wgmma, warp_specialized = true, mbarrier = true, tma = [a, b]>,
// WIDE-A100-LABEL: func.func @wide
// WIDE-A100: tile_configs = [#humming.tile_config<m = [1, 8],
func.func @wide(%a: memref<?x8192xf16>, %w: memref<512x57344xi32>, %s: memref<64x28672xf16>, %c: memref<?x28672xf16>) {
  humming.gemm %a, %w scales(%s : memref<64x28672xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>>,
       input_schema = #humming.input_schema<type = f16>,
       layout = #humming.layout<chip = "sm_90a">}
      : memref<?x8192xf16>, memref<512x57344xi32> -> memref<?x28672xf16>
  return
}
