// RUN: humming-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{expected block_n (96) to be a power-of-two multiple of warp_n (32)}}
func.func @block_not_multiple() attributes {t = #humming.tile_config<block = [64, 96, 64], warp = [64, 32, 64]>} { return }

// -----

// expected-error @+1 {{expected block_m (48) to be a power-of-two multiple of warp_m (16)}}
func.func @three_m_warps() attributes {t = #humming.tile_config<block = [48, 128, 64], warp = [16, 32, 64]>} { return }

// -----

// expected-error @+1 {{expected warp_n to be 16, 32 or 64, got 128}}
func.func @warp_n_wide() attributes {t = #humming.tile_config<block = [64, 256, 64], warp = [64, 128, 64]>} { return }

// -----

// expected-error @+1 {{expected warp_m to be a multiple of 8, got 12}}
func.func @warp_m_odd() attributes {t = #humming.tile_config<block = [12, 128, 64], warp = [12, 32, 64]>} { return }

// -----

// expected-error @+1 {{expected block_m > 0, got 0}}
func.func @zero_block() attributes {t = #humming.tile_config<block = [0, 128, 64], warp = [16, 32, 64]>} { return }

// -----

// expected-error @+1 {{expected warp_m <= 256 with wgmma (it is the instruction's n), got 264}}
func.func @wgmma_wide_m() attributes {t = #humming.tile_config<block = [264, 256, 64], warp = [264, 64, 64], mma = wgmma>} { return }

// -----

// expected-error @+1 {{expected block_n >= 4 * warp_n with wgmma (a warpgroup spans four warps), got block_n = 128, warp_n = 64}}
func.func @wgmma_narrow() attributes {t = #humming.tile_config<block = [64, 128, 64], warp = [64, 64, 64], mma = wgmma>} { return }

// -----

// expected-error @+1 {{expected stages >= 2, got 1}}
func.func @one_stage() attributes {t = #humming.tile_config<block = [64, 128, 64], warp = [64, 32, 64], stages = 1>} { return }

// -----

// expected-error @+1 {{expected stages >= 3 with warp specialisation and wgmma, got 2}}
func.func @ws_two_stages() attributes {t = #humming.tile_config<block = [64, 256, 64], warp = [64, 32, 64], stages = 2, mma = wgmma, warp_specialized = true, mbarrier = true>} { return }

// -----

// expected-error @+1 {{expected mbarrier = true: TMA loads and warp specialisation synchronise through mbarriers}}
func.func @tma_without_mbarrier() attributes {t = #humming.tile_config<block = [64, 256, 64], warp = [64, 32, 64], tma = [a]>} { return }

// -----

// expected-error @+1 {{expected ctas_per_sm >= 1, got 0}}
func.func @no_ctas() attributes {t = #humming.tile_config<block = [64, 128, 64], warp = [64, 32, 64], ctas_per_sm = 0>} { return }

// -----

// expected-error @+1 {{expected write_splits 1 or 2, got 4}}
func.func @write_splits_4() attributes {t = #humming.tile_config<block = [64, 128, 64], warp = [64, 32, 64], write_splits = 4>} { return }

// -----

// expected-error @+1 {{expected block_m == warp_m with write_splits = 2, got block_m = 128, warp_m = 64}}
func.func @write_splits_two_m_warps() attributes {t = #humming.tile_config<block = [128, 128, 64], warp = [64, 32, 64], write_splits = 2>} { return }

// -----

// expected-error @+1 {{expected at most one of multicast_a and multicast_b to exceed 1, got both}}
func.func @multicast_both() attributes {t = #humming.tile_config<block = [64, 256, 64], warp = [64, 32, 64], mbarrier = true, tma = [a, b], multicast_a = 2, multicast_b = 2>} { return }

// -----

// expected-error @+1 {{expected multicast_a to be 1 or 2, got 4}}
func.func @multicast_4() attributes {t = #humming.tile_config<block = [64, 256, 64], warp = [64, 32, 64], mbarrier = true, tma = [a], multicast_a = 4>} { return }

// -----

// expected-error @+1 {{expected TMA on operand a with multicast_a = 2}}
func.func @multicast_without_tma() attributes {t = #humming.tile_config<block = [64, 256, 64], warp = [64, 32, 64], mbarrier = true, tma = [b], multicast_a = 2>} { return }

// -----

// 2 x 8 x 2 warps = 32 warps + a producer warpgroup.
// expected-error @+1 {{expected at most 1024 threads per block, got 1152 (32 math warps + 4)}}
func.func @too_many_threads() attributes {t = #humming.tile_config<block = [128, 256, 128], warp = [64, 32, 64], warp_specialized = true, mbarrier = true>} { return }

// -----

// expected-error @+2 {{expected the M range end >= 17 (or 'inf'), got 16}}
// expected-error @+1 {{failed to parse Humming_TileConfigAttr parameter 'm'}}
func.func @empty_range() attributes {t = #humming.tile_config<m = [17, 16], block = [64, 128, 64], warp = [64, 32, 64]>} { return }

// -----

// expected-error @+2 {{expected the M range to start at >= 1, got 0}}
// expected-error @+1 {{failed to parse Humming_TileConfigAttr parameter 'm'}}
func.func @zero_start() attributes {t = #humming.tile_config<m = [0, 16], block = [64, 128, 64], warp = [64, 32, 64]>} { return }

// -----

// expected-error @+2 {{expected a TMA operand 'a', 'b', 'c', 'scales', 'zero_points' or 'bias', got 'd'}}
// expected-error @+1 {{failed to parse Humming_TileConfigAttr parameter 'tma'}}
func.func @bad_tma_operand() attributes {t = #humming.tile_config<block = [64, 128, 64], warp = [64, 32, 64], mbarrier = true, tma = [a, d]>} { return }

// -----

// expected-error @+2 {{operand 'a' is listed twice}}
// expected-error @+1 {{failed to parse Humming_TileConfigAttr parameter 'tma'}}
func.func @tma_twice() attributes {t = #humming.tile_config<block = [64, 128, 64], warp = [64, 32, 64], mbarrier = true, tma = [a, a]>} { return }

// -----

// expected-error @+2 {{expected 'true' or 'false'}}
// expected-error @+1 {{failed to parse Humming_TileConfigAttr parameter 'stream_k'}}
func.func @bad_bool() attributes {t = #humming.tile_config<block = [64, 128, 64], warp = [64, 32, 64], stream_k = 1>} { return }

// -----

// expected-error @+1 {{struct is missing required parameter: warp}}
func.func @missing_warp() attributes {t = #humming.tile_config<block = [64, 128, 64]>} { return }

// -----

// expected-error @+1 {{expected warp_k to be a power of two, got 48}}
func.func @warp_k_odd() attributes {t = #humming.tile_config<block = [64, 128, 96], warp = [64, 32, 48]>} { return }

// -----

// expected-error @+1 {{expected grid_cap >= 0 (0 = every SM), got -1}}
func.func @negative_grid_cap() attributes {t = #humming.tile_config<block = [64, 128, 64], warp = [64, 32, 64], grid_cap = -1>} { return }

// -----

// expected-error @+1 {{expected TMA on operand b with multicast_b = 2}}
func.func @multicast_b_without_tma() attributes {t = #humming.tile_config<block = [64, 256, 64], warp = [64, 32, 64], mbarrier = true, tma = [a], multicast_b = 2>} { return }

// -----

// expected-error @+1 {{expected split_k between 1 and 16, got 0}}
func.func @split_k_zero() attributes {t = #humming.tile_config<m = [1, 16], block = [16, 64, 64], warp = [16, 64, 32], split_k = 0>} { return }

// -----

// expected-error @+1 {{expected split_k between 1 and 16, got 17}}
func.func @split_k_large() attributes {t = #humming.tile_config<m = [1, 16], block = [16, 64, 64], warp = [16, 64, 32], split_k = 17>} { return }

// -----

// An mma_sync split keeps its partial sums in globals sized for the range's
// top; wgmma kernels and cluster_split (a cluster) take any range.
// expected-error @+1 {{expected a bounded M range with split_k = 2 (its partial sums are sized for the range's largest M; the cluster splits, wgmma's default and cluster_split, need no workspace), got m = [1, inf]}}
func.func @split_k_unbounded() attributes {t = #humming.tile_config<block = [16, 64, 64], warp = [16, 64, 32], split_k = 2>} { return }

// -----

// workspace_split: the wgmma kernels' K split through the global workspace.
// expected-error @+1 {{expected mma = wgmma with workspace_split (the mma_sync kernels add their split_k sums through the workspace unless cluster_split), got mma_sync}}
func.func @workspace_split_mma_sync() attributes {t = #humming.tile_config<m = [1, 16], block = [16, 64, 64], warp = [16, 64, 32], split_k = 2, workspace_split = true>} { return }

// -----

// expected-error @+1 {{expected split_k > 1 with workspace_split, got 1}}
func.func @workspace_split_unsplit() attributes {t = #humming.tile_config<m = [1, 64], block = [64, 256, 64], warp = [64, 32, 64], mma = wgmma, workspace_split = true>} { return }

// -----

// expected-error @+1 {{expected at most one of cluster_split and workspace_split (a cluster or the workspace adds the split_k sums)}}
func.func @workspace_and_cluster_split() attributes {t = #humming.tile_config<m = [1, 64], block = [64, 256, 64], warp = [64, 32, 64], mma = wgmma, split_k = 4, cluster_split = true, workspace_split = true>} { return }

// -----

// Through the workspace a wgmma split needs a bounded range too.
// expected-error @+1 {{expected a bounded M range with split_k = 4 (its partial sums are sized for the range's largest M; the cluster splits, wgmma's default and cluster_split, need no workspace), got m = [33, inf]}}
func.func @workspace_split_unbounded() attributes {t = #humming.tile_config<m = [33, inf], block = [64, 256, 64], warp = [64, 32, 64], mma = wgmma, split_k = 4, workspace_split = true>} { return }

// -----

// cooperative_split: each CTA of a workspace split adds a share of the rows.
// expected-error @+1 {{expected workspace_split = true with cooperative_split (it changes how the CTAs of a workspace split add their sums)}}
func.func @cooperative_without_workspace() attributes {t = #humming.tile_config<m = [65, 128], block = [128, 256, 64], warp = [128, 32, 64], mma = wgmma, split_k = 4, cooperative_split = true>} { return }

// -----

// expected-error @+1 {{expected split_k to divide the 8 rows of eight tokens of warp_m = 64 with cooperative_split (each CTA adds an equal share), got split_k = 16}}
func.func @cooperative_uneven_share() attributes {t = #humming.tile_config<m = [1, 64], block = [64, 256, 64], warp = [64, 32, 64], mma = wgmma, split_k = 16, workspace_split = true, cooperative_split = true>} { return }

// -----

// share_activations: the warps along N of one warp row's K groups share
// the activation copies.
// expected-error @+1 {{expected mma = mma_sync with share_activations (the other families copy cooperatively)}}
func.func @share_activations_wgmma() attributes {t = #humming.tile_config<m = [1, 64], block = [64, 256, 64], warp = [64, 32, 64], mma = wgmma, share_activations = true>} { return }

// -----

// expected-error @+1 {{expected one warp row (block_m = warp_m) and no block_copies with share_activations (those blocks copy every tile together), got block_m = 16, warp_m = 16, block_copies = true}}
func.func @share_activations_block_copies() attributes {t = #humming.tile_config<m = [1, 16], block = [16, 128, 128], warp = [16, 64, 32], block_copies = true, share_activations = true>} { return }

// -----

// expected-error @+1 {{expected one warp row (block_m = warp_m) and no block_copies with share_activations (those blocks copy every tile together), got block_m = 32, warp_m = 16}}
func.func @share_activations_rows() attributes {t = #humming.tile_config<m = [1, 32], block = [32, 128, 128], warp = [16, 64, 32], share_activations = true>} { return }

// -----

// expected-error @+1 {{expected block_n >= 2 x warp_n with share_activations (the warps along N share the copies), got block_n = 64, warp_n = 64}}
func.func @share_activations_one_warp() attributes {t = #humming.tile_config<m = [1, 16], block = [16, 64, 512], warp = [16, 64, 64], share_activations = true>} { return }

// -----

// expected-error @+1 {{expected the 2 activation tiles of a K group (warp_k / 16 x warp_m / 16) to divide evenly among its 4 warps along N with share_activations}}
func.func @share_activations_uneven() attributes {t = #humming.tile_config<m = [1, 16], block = [16, 256, 128], warp = [16, 64, 32], share_activations = true>} { return }

// -----

// expected-error @+1 {{expected block_k / warp_k <= 8 with share_activations (one named barrier per K group), got 16}}
func.func @share_activations_barriers() attributes {t = #humming.tile_config<m = [1, 32], block = [32, 128, 256], warp = [32, 64, 16], share_activations = true>} { return }

// -----

// expected-error @+1 {{expected split_k = 1 with stream_k = true (stream-K chooses its own K split)}}
func.func @split_k_and_stream_k() attributes {t = #humming.tile_config<m = [1, 16], block = [16, 64, 64], warp = [16, 64, 32], split_k = 2, stream_k = true>} { return }

// -----

// expected-error @+1 {{expected mma = mma_sync with scale_after_mma (the other families do not implement it)}}
func.func @scale_after_mma_wgmma() attributes {t = #humming.tile_config<block = [64, 256, 64], warp = [64, 64, 64], mma = wgmma, scale_after_mma = true>} { return }

// -----

// cluster_split: the split_k CTAs form one thread block cluster (at most
// eight, a power of two).
// expected-error @+1 {{expected split_k of 2, 4 or 8 with cluster_split (the CTAs of one thread block cluster), got 3}}
func.func @cluster_split_3() attributes {t = #humming.tile_config<block = [16, 128, 128], warp = [16, 64, 32], split_k = 3, cluster_split = true>} { return }

// -----

// expected-error @+1 {{expected split_k of 2, 4 or 8 with cluster_split (the CTAs of one thread block cluster), got 1}}
func.func @cluster_split_1() attributes {t = #humming.tile_config<block = [16, 128, 128], warp = [16, 64, 32], cluster_split = true>} { return }

// -----

// wgmma_in_flight: only the warp-specialized wgmma kernels keep wgmmas in
// flight across iterations, and only one iteration's.
// expected-error @+1 {{expected wgmma_in_flight of 0, or 1 with mma = wgmma and warp_specialized = true, got 1}}
func.func @in_flight_mma_sync() attributes {t = #humming.tile_config<block = [64, 128, 64], warp = [64, 32, 64], wgmma_in_flight = 1>} { return }

// -----

// expected-error @+1 {{expected wgmma_in_flight of 0, or 1 with mma = wgmma and warp_specialized = true, got 2}}
func.func @in_flight_2() attributes {t = #humming.tile_config<block = [128, 256, 64], warp = [128, 32, 64], mma = wgmma, warp_specialized = true, mbarrier = true, wgmma_in_flight = 2>} { return }

// -----

// l2_prefetch: a distance in iterations, at most 64.
// expected-error @+1 {{expected l2_prefetch between 0 and 64 iterations, got 65}}
func.func @l2_prefetch_far() attributes {t = #humming.tile_config<block = [16, 128, 128], warp = [16, 64, 32], l2_prefetch = 65>} { return }

// -----

// expected-error @+1 {{expected l2_prefetch between 0 and 64 iterations, got -1}}
func.func @l2_prefetch_negative() attributes {t = #humming.tile_config<block = [16, 128, 128], warp = [16, 64, 32], l2_prefetch = -1>} { return }

// -----

// The warp-specialized wgmma producer prefetches too; no other
// warp-specialized loop exists.
// expected-error @+1 {{expected l2_prefetch = 0 with warp_specialized mma_sync (the prefetch runs in the cp.async pipelines and the wgmma producer), got 4}}
func.func @l2_prefetch_ws() attributes {t = #humming.tile_config<block = [128, 256, 64], warp = [64, 32, 64], warp_specialized = true, mbarrier = true, l2_prefetch = 4>} { return }

// -----

// persistent: waves of CTAs, at most 64.
// expected-error @+1 {{expected persistent between 0 (a CTA per output tile) and 64 waves of CTAs, got 65}}
func.func @persistent_far() attributes {t = #humming.tile_config<block = [128, 128, 128], warp = [128, 16, 128], mma = wgmma, warp_specialized = true, mbarrier = true, tma = [a, b], persistent = 65>} { return }

// -----

// An integer parameter is an integer: MLIR's integer parser would read
// `true` as -1.
// expected-error @+2 {{expected an integer, got 'true'}}
// expected-error @+1 {{failed to parse Humming_TileConfigAttr parameter 'persistent' which is to be a `int64_t`}}
func.func @persistent_bool() attributes {t = #humming.tile_config<block = [128, 128, 128], warp = [128, 16, 128], persistent = true>} { return }

// -----

// Only the warp-specialized wgmma kernels have a producer to run ahead.
// expected-error @+1 {{expected persistent = 0 without warp_specialized wgmma (the producer warpgroup fills the next output tile's slots while the consumers store the last one)}}
func.func @persistent_mma_sync() attributes {t = #humming.tile_config<block = [128, 128, 128], warp = [128, 16, 128], mma = mma_sync, persistent = 1>} { return }

// -----

// expected-error @+1 {{expected tma = [a, b] with persistent (its fills are tensor and bulk copies, counted by their barriers)}}
func.func @persistent_cp_async() attributes {t = #humming.tile_config<block = [128, 128, 128], warp = [128, 16, 128], mma = wgmma, warp_specialized = true, mbarrier = true, tma = [b], persistent = 1>} { return }

// -----

// expected-error @+1 {{expected split_k = 1, multicast_a = multicast_b = 1 and l2_prefetch = 0 with persistent, got 2, 1, 1 and 0}}
func.func @persistent_split() attributes {t = #humming.tile_config<block = [128, 128, 128], warp = [128, 16, 128], mma = wgmma, warp_specialized = true, mbarrier = true, tma = [a, b], split_k = 2, persistent = 1>} { return }

// -----

// promotion_interval: iterations per promotion, 1 to 8.
// expected-error @+1 {{expected promotion_interval between 1 and 8 iterations, got 9}}
func.func @promotion_far() attributes {t = #humming.tile_config<block = [128, 128, 64], warp = [128, 16, 64], mma = wgmma, warp_specialized = true, mbarrier = true, tma = [a, b], promotion_interval = 9>} { return }

// -----

// The consumers of a producer warpgroup wait for the interval's fills in
// turn; the cp.async pipelines have no such loop.
// expected-error @+1 {{expected warp_specialized = true, mbarrier = true and wgmma_in_flight = 0 with mma = wgmma and promotion_interval > 1 (the consumers wait for the slots of the interval in turn and release each when its wgmmas are done), got promotion_interval = 2}}
func.func @promotion_cp_async() attributes {t = #humming.tile_config<block = [128, 128, 64], warp = [128, 16, 64], mma = wgmma, promotion_interval = 2>} { return }

// -----

// weight_map: the producer warpgroup's tensor copy of the weights.
// expected-error @+1 {{expected warp_specialized = true and tma = [b] with mma = wgmma and weight_map = true (the producer's tensor copy of the weights)}}
func.func @weight_map_no_tma() attributes {t = #humming.tile_config<block = [128, 128, 128], warp = [128, 16, 128], mma = wgmma, warp_specialized = true, mbarrier = true, tma = [a], weight_map = true>} { return }

// -----

// staged_weights: the consumer warpgroups of a producer / consumer kernel
// convert one iteration ahead of their wgmmas.
// expected-error @+1 {{expected warp_specialized = true and wgmma_in_flight = 0 with mma = wgmma and staged_weights = true (the consumer warpgroups convert each iteration's weights one iteration ahead of their wgmmas)}}
func.func @staged_not_ws() attributes {t = #humming.tile_config<block = [128, 128, 128], warp = [128, 16, 128], mma = wgmma, staged_weights = true>} { return }

// -----

// expected-error @+1 {{expected warp_specialized = true and wgmma_in_flight = 0 with mma = wgmma and staged_weights = true}}
func.func @staged_in_flight() attributes {t = #humming.tile_config<block = [128, 128, 128], warp = [128, 16, 128], mma = wgmma, warp_specialized = true, mbarrier = true, wgmma_in_flight = 1, staged_weights = true>} { return }
