// RUN: humming-opt %s | humming-opt | FileCheck %s
// RUN: humming-opt %s --mlir-print-op-generic | humming-opt | FileCheck %s

// The default M range [1, inf] is elided.
// CHECK-LABEL: func.func @tiles
// CHECK-SAME: a = #humming.tile_config<m = [1, 16], block = [16, 256, 64], warp = [16, 64, 64]>
// CHECK-SAME: b = #humming.tile_config<m = [17, inf], block = [128, 256, 128], warp = [64, 64, 64], stages = 5, ctas_per_sm = 2>
// CHECK-SAME: c = #humming.tile_config<block = [64, 256, 64], warp = [64, 32, 64], stages = 3, mma = wgmma, warp_specialized = true, stream_k = true, mbarrier = true, cp_async = false, tma = [a, b, c, scales, zero_points, bias], multicast_a = 2, grid_cap = 132>
// CHECK-SAME: d = #humming.tile_config<block = [64, 256, 32], warp = [64, 64, 32], stages = 2, cp_async = false, write_splits = 2>
// CHECK-SAME: e = #humming.tile_config<m = [1, 8], block = [8, 128, 128], warp = [8, 16, 128], mma = wgmma, mbarrier = true, tma = [b], multicast_b = 2>
// CHECK-SAME: f = #humming.tile_config<m = [1, 8], block = [16, 64, 512], warp = [16, 64, 64], block_copies = true, scale_after_mma = true>
// CHECK-SAME: g = #humming.tile_config<block = [16, 128, 128], warp = [16, 64, 32], split_k = 4, block_copies = true, cluster_split = true>
// CHECK-SAME: h = #humming.tile_config<block = [128, 256, 64], warp = [128, 32, 64], mma = wgmma, warp_specialized = true, mbarrier = true, wgmma_in_flight = 1>
// CHECK-SAME: i = #humming.tile_config<m = [33, 64], block = [64, 256, 64], warp = [64, 32, 64], mma = wgmma, warp_specialized = true, mbarrier = true, split_k = 4, workspace_split = true>
// CHECK-SAME: j = #humming.tile_config<m = [9, 16], block = [16, 128, 256], warp = [16, 64, 64], stages = 3, split_k = 4, scale_after_mma = true, share_activations = true>
// CHECK-SAME: k = #humming.tile_config<m = [65, 128], block = [128, 256, 64], warp = [128, 32, 64], mma = wgmma, warp_specialized = true, mbarrier = true, tma = [a, b], split_k = 4, workspace_split = true, cooperative_split = true, wgmma_in_flight = 1>
func.func @tiles() attributes {
  a = #humming.tile_config<m = [1, 16], block = [16, 256, 64], warp = [16, 64, 64], stages = 4, mma = mma_sync>,
  b = #humming.tile_config<block = [128, 256, 128], warp = [64, 64, 64], m = [17, inf], stages = 5, ctas_per_sm = 2>,
  c = #humming.tile_config<m = [1, inf], block = [64, 256, 64], warp = [64, 32, 64], stages = 3, mma = wgmma,
                           warp_specialized = true, stream_k = true, mbarrier = true, cp_async = false,
                           tma = [bias, a, b, c, scales, zero_points], multicast_a = 2, grid_cap = 132>,
  d = #humming.tile_config<m = [1, inf], block = [64, 256, 32], warp = [64, 64, 32], stages = 2, cp_async = false, write_splits = 2>,
  e = #humming.tile_config<m = [1, 8], block = [8, 128, 128], warp = [8, 16, 128], mma = wgmma, tma = [b], multicast_b = 2, mbarrier = true>,
  f = #humming.tile_config<m = [1, 8], block = [16, 64, 512], warp = [16, 64, 64], scale_after_mma = true, block_copies = true>,
  g = #humming.tile_config<block = [16, 128, 128], warp = [16, 64, 32], cluster_split = true, split_k = 4, block_copies = true>,
  h = #humming.tile_config<block = [128, 256, 64], warp = [128, 32, 64], wgmma_in_flight = 1, mma = wgmma, warp_specialized = true, mbarrier = true>,
  i = #humming.tile_config<m = [33, 64], workspace_split = true, block = [64, 256, 64], warp = [64, 32, 64], mma = wgmma, warp_specialized = true, mbarrier = true, split_k = 4>,
  j = #humming.tile_config<share_activations = true, m = [9, 16], block = [16, 128, 256], warp = [16, 64, 64], stages = 3, split_k = 4, scale_after_mma = true>,
  k = #humming.tile_config<cooperative_split = true, m = [65, 128], block = [128, 256, 64], warp = [128, 32, 64], mma = wgmma, warp_specialized = true, mbarrier = true, tma = [a, b], split_k = 4, workspace_split = true, wgmma_in_flight = 1>
} { return }
