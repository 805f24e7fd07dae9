// RUN: humming-opt %s -split-input-file -verify-diagnostics

// Tile configurations against the problem they serve.

module attributes {humming.target = #humming.target<device = "H200">} {
func.func @ranges_start(%a: memref<?x4096xf16>, %w: memref<4096x512xi32>, %s: memref<4096x1xf16>, %c: memref<?x4096xf16>) {
  // expected-error @+1 {{tile_configs[0]: expected the M range to start at 1, got 2}}
  humming.gemm %a, %w scales(%s : memref<4096x1xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16>, input_schema = #humming.input_schema<type = f16>,
       tile_configs = [#humming.tile_config<m = [2, inf], block = [64, 256, 64], warp = [64, 32, 64]>]}
      : memref<?x4096xf16>, memref<4096x512xi32> -> memref<?x4096xf16>
  return
}
}

// -----

module attributes {humming.target = #humming.target<device = "H200">} {
func.func @ranges_hole(%a: memref<?x4096xf16>, %w: memref<4096x512xi32>, %s: memref<4096x1xf16>, %c: memref<?x4096xf16>) {
  // expected-error @+1 {{tile_configs[1]: expected the M range to start at 17, got 32}}
  humming.gemm %a, %w scales(%s : memref<4096x1xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16>, input_schema = #humming.input_schema<type = f16>,
       tile_configs = [#humming.tile_config<m = [1, 16], block = [64, 256, 64], warp = [64, 32, 64]>,
                       #humming.tile_config<m = [32, inf], block = [64, 256, 64], warp = [64, 32, 64]>]}
      : memref<?x4096xf16>, memref<4096x512xi32> -> memref<?x4096xf16>
  return
}
}

// -----

module attributes {humming.target = #humming.target<device = "H200">} {
func.func @ranges_open_middle(%a: memref<?x4096xf16>, %w: memref<4096x512xi32>, %s: memref<4096x1xf16>, %c: memref<?x4096xf16>) {
  // expected-error @+1 {{tile_configs[0] is open-ended (m = [1, inf]) but is not the last}}
  humming.gemm %a, %w scales(%s : memref<4096x1xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16>, input_schema = #humming.input_schema<type = f16>,
       tile_configs = [#humming.tile_config<m = [1, inf], block = [64, 256, 64], warp = [64, 32, 64]>,
                       #humming.tile_config<m = [17, inf], block = [64, 256, 64], warp = [64, 32, 64]>]}
      : memref<?x4096xf16>, memref<4096x512xi32> -> memref<?x4096xf16>
  return
}
}

// -----

module attributes {humming.target = #humming.target<device = "H200">} {
func.func @ranges_closed_end(%a: memref<?x4096xf16>, %w: memref<4096x512xi32>, %s: memref<4096x1xf16>, %c: memref<?x4096xf16>) {
  // expected-error @+1 {{tile_configs[0]: expected the last M range to be open-ended (inf), got 16}}
  humming.gemm %a, %w scales(%s : memref<4096x1xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16>, input_schema = #humming.input_schema<type = f16>,
       tile_configs = [#humming.tile_config<m = [1, 16], block = [64, 256, 64], warp = [64, 32, 64]>]}
      : memref<?x4096xf16>, memref<4096x512xi32> -> memref<?x4096xf16>
  return
}
}

// -----

module attributes {humming.target = #humming.target<device = "H200">} {
func.func @empty_tiles(%a: memref<?x4096xf16>, %w: memref<4096x512xi32>, %s: memref<4096x1xf16>, %c: memref<?x4096xf16>) {
  // expected-error @+1 {{expected at least one tile configuration}}
  humming.gemm %a, %w scales(%s : memref<4096x1xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16>, input_schema = #humming.input_schema<type = f16>,
       tile_configs = []}
      : memref<?x4096xf16>, memref<4096x512xi32> -> memref<?x4096xf16>
  return
}
}

// -----

module attributes {humming.target = #humming.target<device = "H200">} {
func.func @block_n_divides(%a: memref<?x4096xf16>, %w: memref<4160x512xi32>, %s: memref<4160x1xf16>, %c: memref<?x4160xf16>) {
  // expected-error @+1 {{tile_configs[0]: expected block_n (256) to divide the padded N (4160)}}
  humming.gemm %a, %w scales(%s : memref<4160x1xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16>, input_schema = #humming.input_schema<type = f16>,
       tile_configs = [#humming.tile_config<block = [64, 256, 64], warp = [64, 32, 64]>]}
      : memref<?x4096xf16>, memref<4160x512xi32> -> memref<?x4160xf16>
  return
}
}

// -----

module attributes {humming.target = #humming.target<device = "H200">} {
func.func @warp_k_a16(%a: memref<?x4096xf16>, %w: memref<4096x512xi32>, %s: memref<4096x1xf16>, %c: memref<?x4096xf16>) {
  // expected-error @+1 {{tile_configs[0]: expected warp_k 16, 32 or 64 for 16-bit activations with mma_sync, got 128}}
  humming.gemm %a, %w scales(%s : memref<4096x1xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16>, input_schema = #humming.input_schema<type = f16>,
       tile_configs = [#humming.tile_config<block = [64, 256, 128], warp = [64, 32, 128]>]}
      : memref<?x4096xf16>, memref<4096x512xi32> -> memref<?x4096xf16>
  return
}
}

// -----

// Only the mma_sync kernels take warp_k = 16.
module attributes {humming.target = #humming.target<device = "H200">} {
func.func @warp_k_16_wgmma(%a: memref<?x4096xf16>, %w: memref<4096x512xi32>, %s: memref<4096x1xf16>, %c: memref<?x4096xf16>) {
  // expected-error @+1 {{tile_configs[0]: expected warp_k 32 or 64 for 16-bit activations, got 16}}
  humming.gemm %a, %w scales(%s : memref<4096x1xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16>, input_schema = #humming.input_schema<type = f16>,
       tile_configs = [#humming.tile_config<block = [64, 256, 16], warp = [64, 32, 16], mma = wgmma>]}
      : memref<?x4096xf16>, memref<4096x512xi32> -> memref<?x4096xf16>
  return
}
}

// -----

module attributes {humming.target = #humming.target<device = "H200">} {
func.func @warp_n_a16(%a: memref<?x4096xf16>, %w: memref<4096x512xi32>, %s: memref<4096x1xf16>, %c: memref<?x4096xf16>) {
  // expected-error @+1 {{tile_configs[0]: expected warp_n >= 32 for 16-bit activations, got 16}}
  humming.gemm %a, %w scales(%s : memref<4096x1xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16>, input_schema = #humming.input_schema<type = f16>,
       tile_configs = [#humming.tile_config<block = [64, 256, 64], warp = [64, 16, 64]>]}
      : memref<?x4096xf16>, memref<4096x512xi32> -> memref<?x4096xf16>
  return
}
}

// -----

module attributes {humming.target = #humming.target<device = "H200">} {
func.func @batch_invariant_stream_k(%a: memref<?x4096xf16>, %w: memref<4096x512xi32>, %s: memref<4096x1xf16>, %c: memref<?x4096xf16>) {
  // expected-error @+1 {{tile_configs[0]: expected stream_k = false for batch-invariant kernels (the K decomposition must not depend on M)}}
  humming.gemm %a, %w scales(%s : memref<4096x1xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16>, input_schema = #humming.input_schema<type = f16>,
       compute = #humming.compute<batch_invariant = true>,
       tile_configs = [#humming.tile_config<block = [64, 256, 32], warp = [64, 32, 32], stream_k = true>]}
      : memref<?x4096xf16>, memref<4096x512xi32> -> memref<?x4096xf16>
  return
}
}

// -----

module attributes {humming.target = #humming.target<device = "H200">} {
func.func @batch_invariant_split_k(%a: memref<?x4096xf16>, %w: memref<4096x512xi32>, %s: memref<4096x1xf16>, %c: memref<?x4096xf16>) {
  // expected-error @+1 {{tile_configs[0]: expected split_k = 1 for batch-invariant kernels (the K decomposition must not depend on M), got 2}}
  humming.gemm %a, %w scales(%s : memref<4096x1xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16>, input_schema = #humming.input_schema<type = f16>,
       compute = #humming.compute<batch_invariant = true>,
       tile_configs = [#humming.tile_config<m = [1, 16], block = [64, 256, 32], warp = [64, 32, 32], split_k = 2>,
                       #humming.tile_config<m = [17, inf], block = [64, 256, 32], warp = [64, 32, 32]>]}
      : memref<?x4096xf16>, memref<4096x512xi32> -> memref<?x4096xf16>
  return
}
}

// -----

module attributes {humming.target = #humming.target<device = "H200">} {
func.func @batch_invariant_k(%a: memref<?x4096xf16>, %w: memref<4096x512xi32>, %s: memref<4096x1xf16>, %c: memref<?x4096xf16>) {
  // expected-error @+1 {{tile_configs[0]: expected block_k = warp_k = 32 for batch-invariant kernels, got block_k = 64, warp_k = 64}}
  humming.gemm %a, %w scales(%s : memref<4096x1xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16>, input_schema = #humming.input_schema<type = f16>,
       compute = #humming.compute<batch_invariant = true>,
       tile_configs = [#humming.tile_config<block = [64, 256, 64], warp = [64, 32, 64]>]}
      : memref<?x4096xf16>, memref<4096x512xi32> -> memref<?x4096xf16>
  return
}
}

// -----

module attributes {humming.target = #humming.target<device = "H200">} {
func.func @batch_invariant_warp_m(%a: memref<?x4096xf16>, %w: memref<4096x512xi32>, %s: memref<4096x1xf16>, %c: memref<?x4096xf16>) {
  // expected-error @+1 {{tile_configs[0]: expected warp_m to be a multiple of 16 for batch-invariant kernels, got 8}}
  humming.gemm %a, %w scales(%s : memref<4096x1xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16>, input_schema = #humming.input_schema<type = f16>,
       compute = #humming.compute<batch_invariant = true>,
       tile_configs = [#humming.tile_config<block = [8, 256, 32], warp = [8, 32, 32]>]}
      : memref<?x4096xf16>, memref<4096x512xi32> -> memref<?x4096xf16>
  return
}
}

// -----

module attributes {humming.target = #humming.target<device = "RTX 5090">} {
func.func @block_scaled_a16(%a: memref<?x4096xf16>, %w: memref<4096x512xi32>, %s: memref<4096x1xf16>, %c: memref<?x4096xf16>) {
  // expected-error @+1 {{tile_configs[0]: expected fp8 or fp4 activations with block_scaled MMA, got f16}}
  humming.gemm %a, %w scales(%s : memref<4096x1xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16>, input_schema = #humming.input_schema<type = f16>,
       tile_configs = [#humming.tile_config<block = [64, 256, 64], warp = [64, 32, 64], mma = block_scaled>]}
      : memref<?x4096xf16>, memref<4096x512xi32> -> memref<?x4096xf16>
  return
}
}

// -----

module attributes {humming.target = #humming.target<device = "H200">} {
func.func @tma_zero_points(%a: memref<?x4096xf16>, %w: memref<4096x512xi32>, %s: memref<4096x1xf16>, %c: memref<?x4096xf16>) {
  // expected-error @+1 {{tile_configs[0]: expected a zero point in the schema with TMA on zero points}}
  humming.gemm %a, %w scales(%s : memref<4096x1xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16>, input_schema = #humming.input_schema<type = f16>,
       tile_configs = [#humming.tile_config<block = [64, 256, 64], warp = [64, 32, 64], mma = wgmma, mbarrier = true, tma = [zero_points]>]}
      : memref<?x4096xf16>, memref<4096x512xi32> -> memref<?x4096xf16>
  return
}
}

// -----

module attributes {humming.target = #humming.target<device = "H200">} {
func.func @tma_bias(%a: memref<?x4096xf16>, %w: memref<4096x512xi32>, %s: memref<4096x1xf16>, %c: memref<?x4096xf16>) {
  // expected-error @+1 {{tile_configs[0]: expected a bias in the schema with TMA on bias}}
  humming.gemm %a, %w scales(%s : memref<4096x1xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16>, input_schema = #humming.input_schema<type = f16>,
       tile_configs = [#humming.tile_config<block = [64, 256, 64], warp = [64, 32, 64], mma = wgmma, mbarrier = true, tma = [bias]>]}
      : memref<?x4096xf16>, memref<4096x512xi32> -> memref<?x4096xf16>
  return
}
}

// -----

module attributes {humming.target = #humming.target<device = "H200">} {
func.func @block_k_divides(%a: memref<?x4160xf16>, %w: memref<4096x520xi32>, %s: memref<4096x1xf16>, %c: memref<?x4096xf16>) {
  // expected-error @+1 {{tile_configs[0]: expected block_k (128) to divide the padded K (4160)}}
  humming.gemm %a, %w scales(%s : memref<4096x1xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16>, input_schema = #humming.input_schema<type = f16>,
       tile_configs = [#humming.tile_config<block = [64, 256, 128], warp = [64, 32, 64]>]}
      : memref<?x4160xf16>, memref<4096x520xi32> -> memref<?x4096xf16>
  return
}
}

// -----

// persistent: the consumers' loop of 8-bit activations only.
module attributes {humming.target = #humming.target<device = "H100">} {
func.func @persistent_16bit(%a: memref<?x4096xf16>, %w: memref<4096x512xi32>, %s: memref<4096x1xf16>, %c: memref<?x4096xf16>) {
  // expected-error @+1 {{tile_configs[0]: expected a dense GEMM with 8-bit activations with persistent (its consumers' loop releases each slot in the iteration that read it), got dense with f16 activations}}
  humming.gemm %a, %w scales(%s : memref<4096x1xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16>, input_schema = #humming.input_schema<type = f16>,
       tile_configs = [#humming.tile_config<block = [128, 128, 64], warp = [128, 16, 64], mma = wgmma, warp_specialized = true, mbarrier = true, tma = [a, b], persistent = 1>]}
      : memref<?x4096xf16>, memref<4096x512xi32> -> memref<?x4096xf16>
  return
}
}

// -----

// promotion_interval: the sums of 8-bit activations that promote only.
module attributes {humming.target = #humming.target<device = "H100">} {
func.func @promotion_16bit(%a: memref<?x4096xf16>, %w: memref<4096x512xi32>, %s: memref<4096x1xf16>, %c: memref<?x4096xf16>) {
  // expected-error @+1 {{tile_configs[0]: expected a dense GEMM with 8-bit activations whose sums promote (fp8, or int8 with per-K scales) with promotion_interval > 1, got dense with ui4 weights and f16 activations}}
  humming.gemm %a, %w scales(%s : memref<4096x1xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16>, input_schema = #humming.input_schema<type = f16>,
       tile_configs = [#humming.tile_config<block = [128, 128, 64], warp = [128, 16, 64], mma = wgmma, warp_specialized = true, mbarrier = true, tma = [a, b], promotion_interval = 2>]}
      : memref<?x4096xf16>, memref<4096x512xi32> -> memref<?x4096xf16>
  return
}
}

// -----

// Each promotion takes one group's scales: 2 x 128 of K spans two of
// DeepSeek-V3's 128 x 128 weight blocks.
module attributes {humming.target = #humming.target<device = "H100">} {
func.func @promotion_groups(%a: memref<?x512xf8E4M3FN>, %w: memref<256x128xi32>, %s: memref<2x4xf32>, %as: memref<?x4xf32>, %c: memref<?x256xbf16>) {
  // expected-error @+1 {{tile_configs[0]: expected promotion_interval x block_k (256) to divide the weight scale group (128): each promotion takes one group's scales}}
  humming.gemm %a, %w scales(%s : memref<2x4xf32>) input_scale(%as : memref<?x4xf32>) into %c
      {weight_schema = #humming.weight_schema<type = f8E4M3FN, scale = f32, granularity = block<128, 128>>,
       input_schema = #humming.input_schema<type = f8E4M3FN, scaling = group<128>>,
       tile_configs = [#humming.tile_config<block = [128, 128, 128], warp = [128, 16, 128], mma = wgmma, warp_specialized = true, mbarrier = true, tma = [a, b], promotion_interval = 2>]}
      : memref<?x512xf8E4M3FN>, memref<256x128xi32> -> memref<?x256xbf16>
  return
}
}

// -----

// weight_map: the weights' tensor copy reads K-major 8-bit tiles; uint4
// weights under f16 activations are MMA fragments.
module attributes {humming.target = #humming.target<device = "H100">} {
func.func @weight_map_fragments(%a: memref<?x4096xf16>, %w: memref<4096x512xi32>, %s: memref<4096x1xf16>, %c: memref<?x4096xf16>) {
  // expected-error @+1 {{tile_configs[0]: expected a dense GEMM over 8-bit weights the activations' MMA reads as they are (K-major: f16 weights without zero points) with weight_map = true, got dense over ui4 weights}}
  humming.gemm %a, %w scales(%s : memref<4096x1xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16>, input_schema = #humming.input_schema<type = f16>,
       tile_configs = [#humming.tile_config<block = [128, 128, 64], warp = [128, 16, 64], mma = wgmma, warp_specialized = true, mbarrier = true, tma = [a, b], weight_map = true>]}
      : memref<?x4096xf16>, memref<4096x512xi32> -> memref<?x4096xf16>
  return
}
}

// -----

// staged_weights: the stage holds what the 8-bit MMA would otherwise read
// from the slot; e4m3 weights under e4m3 activations are read K-major from
// the slot already.
module attributes {humming.target = #humming.target<device = "H100">} {
func.func @staged_kmajor(%a: memref<?x512xf8E4M3FN>, %w: memref<256x128xi32>, %s: memref<256x1xf16>, %as: memref<?x1xf32>, %c: memref<?x256xf16>) {
  // expected-error @+1 {{tile_configs[0]: expected weights the f8E4M3FN MMA does not take as stored (narrower codes, or zero points) with staged_weights = true, got f8E4M3FN weights, which the wgmmas read K-major from the slot already}}
  humming.gemm %a, %w scales(%s : memref<256x1xf16>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = f8E4M3FN, scale = f16>,
       input_schema = #humming.input_schema<type = f8E4M3FN, scaling = token>,
       tile_configs = [#humming.tile_config<block = [128, 128, 128], warp = [128, 16, 128], mma = wgmma, warp_specialized = true, mbarrier = true, tma = [a, b], staged_weights = true>]}
      : memref<?x512xf8E4M3FN>, memref<256x128xi32> -> memref<?x256xf16>
  return
}
}

// -----

// staged_weights converts into the 8-bit MMA's codes: 16-bit activations
// take their weights from registers.
module attributes {humming.target = #humming.target<device = "H100">} {
func.func @staged_16bit(%a: memref<?x4096xf16>, %w: memref<4096x512xi32>, %s: memref<4096x1xf16>, %c: memref<?x4096xf16>) {
  // expected-error @+1 {{tile_configs[0]: expected 8-bit activations with staged_weights = true (the stage holds the 8-bit MMA's codes), got f16}}
  humming.gemm %a, %w scales(%s : memref<4096x1xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16>, input_schema = #humming.input_schema<type = f16>,
       tile_configs = [#humming.tile_config<block = [128, 128, 64], warp = [128, 16, 64], mma = wgmma, warp_specialized = true, mbarrier = true, tma = [a, b], staged_weights = true>]}
      : memref<?x4096xf16>, memref<4096x512xi32> -> memref<?x4096xf16>
  return
}
}
