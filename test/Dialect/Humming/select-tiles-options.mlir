// humming-select-tiles: forced configurations, batch invariance, what is
// left alone, and its diagnostics.

// RUN: humming-opt %s -split-input-file --humming-select-tiles="device=H200 force-tile-config='#humming.tile_config<m = [1, 8], block = [32, 128, 32], warp = [32, 64, 32], stages = 3>'" | FileCheck %s --check-prefix=FORCE
// RUN: humming-opt %s -split-input-file --humming-select-tiles="device=H200" | FileCheck %s --check-prefix=AUTO

// A forced configuration serves every M (its range is widened) and
// replaces configurations given by hand.
// FORCE-LABEL: func.func @prepared
// FORCE: tile_configs = [#humming.tile_config<block = [32, 128, 32], warp = [32, 64, 32], stages = 3>]
// FORCE-LABEL: func.func @by_hand
// FORCE: tile_configs = [#humming.tile_config<block = [32, 128, 32], warp = [32, 64, 32], stages = 3>]
// Configurations given by hand are kept unless forced.
// AUTO-LABEL: func.func @by_hand
// AUTO: tile_configs = [#humming.tile_config<block = [16, 64, 64], warp = [16, 64, 32], stages = 2>]
// Batch-invariant layers: one K decomposition for every M (no in-block
// split, warp_k = block_k = 32, warp_m <= 32); neighbouring ranges with the
// same tile merge into one kernel.
// AUTO-LABEL: func.func @batch_invariant
// AUTO: tile_configs = [#humming.tile_config<m = [1, 64], block = [16, 64, 32], warp = [16, 64, 32]>, #humming.tile_config<m = [65, 128], block = [32, 64, 32], warp = [32, 64, 32]>, #humming.tile_config<m = [129, inf], block = [32, 128, 32], warp = [32, 64, 32]>]
// Canonical weights run one fixed kernel: nothing to choose.
// AUTO-LABEL: func.func @canonical
// AUTO-NOT: tile_configs

func.func @prepared(%a: memref<?x4096xf16>, %w: memref<256x8192xi32>, %s: memref<32x4096xf16>, %c: memref<?x4096xf16>) {
  humming.gemm %a, %w scales(%s : memref<32x4096xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>>,
       input_schema = #humming.input_schema<type = f16>, layout = #humming.layout<chip = "sm_90a">}
      : memref<?x4096xf16>, memref<256x8192xi32> -> memref<?x4096xf16>
  return
}

// -----

func.func @by_hand(%a: memref<?x4096xf16>, %w: memref<256x8192xi32>, %s: memref<32x4096xf16>, %c: memref<?x4096xf16>) {
  humming.gemm %a, %w scales(%s : memref<32x4096xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>>,
       input_schema = #humming.input_schema<type = f16>, layout = #humming.layout<chip = "sm_90a">,
       tile_configs = [#humming.tile_config<block = [16, 64, 64], warp = [16, 64, 32], stages = 2>]}
      : memref<?x4096xf16>, memref<256x8192xi32> -> memref<?x4096xf16>
  return
}

// -----

func.func @batch_invariant(%a: memref<?x4096xf16>, %w: memref<256x8192xi32>, %s: memref<32x4096xf16>, %c: memref<?x4096xf16>) {
  humming.gemm %a, %w scales(%s : memref<32x4096xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>>,
       input_schema = #humming.input_schema<type = f16>, layout = #humming.layout<chip = "sm_90a">,
       compute = #humming.compute<batch_invariant = true>}
      : memref<?x4096xf16>, memref<256x8192xi32> -> memref<?x4096xf16>
  return
}

// -----

func.func @canonical(%a: memref<?x4096xf16>, %w: memref<4096x512xi32>, %s: memref<4096x32xf16>, %c: memref<?x4096xf16>) {
  humming.gemm %a, %w scales(%s : memref<4096x32xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>>,
       input_schema = #humming.input_schema<type = f16>}
      : memref<?x4096xf16>, memref<4096x512xi32> -> memref<?x4096xf16>
  return
}
