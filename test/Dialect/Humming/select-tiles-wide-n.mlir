// humming-select-tiles for a W4A16 g128 8192 x 8192 layer: 128 column tiles
// of 64 for 132 SMs, so the 16-row per-warp tile takes no K split across
// CTAs (132 / 128 rounds to one). On the H200 (sm_90a, measured in session 12: M = 9 18.3 ->
// 16.2 us, 12 18.4 -> 17.7, 14 18.6 -> 19.1) that tile serves M = 1..12 and
// the shared-activation tile only 13..16; elsewhere (not measured) the
// ranges stay 1..8 and 9..16.

// RUN: humming-opt %s --humming-select-tiles="device=H200" | FileCheck %s --check-prefix=H200
// RUN: humming-opt %s --humming-select-tiles="device=A100" | FileCheck %s --check-prefix=A100

// H200: tile_configs = [#humming.tile_config<m = [1, 12], block = [16, 64, 512], warp = [16, 64, 64], scale_after_mma = true>,
// H200-SAME: #humming.tile_config<m = [13, 16], block = [16, 128, 128], warp = [16, 64, 32], split_k = 4, block_copies = true>,
// H200-SAME: #humming.tile_config<m = [17, 32],

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
// the H200 the shared-activation tile without a split serves M = 1..16
// (session 13: M = 1 57.5 -> 47.2 us, M = 16 84.8 -> 52.5 against the
// per-warp tiles); the A100 keeps its ranges.
// RUN: humming-opt %s --humming-select-tiles="device=H200" | FileCheck %s --check-prefix=WIDE
// RUN: humming-opt %s --humming-select-tiles="device=A100" | FileCheck %s --check-prefix=WIDE-A100
// WIDE-LABEL: func.func @wide
// WIDE: tile_configs = [#humming.tile_config<m = [1, 16], block = [16, 128, 128], warp = [16, 64, 32], block_copies = true>,
// WIDE-SAME: #humming.tile_config<m = [17, 32],
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
