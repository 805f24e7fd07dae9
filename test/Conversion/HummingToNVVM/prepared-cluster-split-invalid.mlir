// RUN: humming-opt %s --humming-lower-to-nvvm="chip=sm_89" -split-input-file -verify-diagnostics

// cluster_split needs thread block clusters (sm_90 and later).
#tile = #humming.tile_config<m = [1, inf], block = [16, 128, 128], warp = [16, 64, 32], split_k = 2, block_copies = true, cluster_split = true>

func.func @cluster_split_sm89(%a: memref<?x512xf16>, %w: memref<32x512xi32>, %s: memref<4x256xf16>, %c: memref<?x256xf16>) {
  // expected-error @+1 {{tile_configs[0]: cluster_split needs thread block clusters (sm_90 and later); got sm_89}}
  humming.gemm %a, %w scales(%s : memref<4x256xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>>,
       input_schema = #humming.input_schema<type = f16>, layout = #humming.layout<chip = "sm_89">,
       tile_configs = [#tile]}
      : memref<?x512xf16>, memref<32x512xi32> -> memref<?x256xf16>
  return
}

// -----

// l2_prefetch needs cp.async.bulk.prefetch.L2 (sm_90 and later).
#prefetch = #humming.tile_config<m = [1, inf], block = [16, 128, 128], warp = [16, 64, 32], block_copies = true, l2_prefetch = 4>

func.func @l2_prefetch_sm89(%a: memref<?x512xf16>, %w: memref<32x512xi32>, %s: memref<4x256xf16>, %c: memref<?x256xf16>) {
  // expected-error @+1 {{tile_configs[0]: l2_prefetch needs cp.async.bulk.prefetch.L2 (sm_90 and later); got sm_89}}
  humming.gemm %a, %w scales(%s : memref<4x256xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>>,
       input_schema = #humming.input_schema<type = f16>, layout = #humming.layout<chip = "sm_89">,
       tile_configs = [#prefetch]}
      : memref<?x512xf16>, memref<32x512xi32> -> memref<?x256xf16>
  return
}
