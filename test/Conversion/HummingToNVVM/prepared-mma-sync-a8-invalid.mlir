// RUN: humming-opt %s --humming-lower-to-nvvm="chip=sm_89" -split-input-file -verify-diagnostics

// 8- and 4-bit activations in the mma_sync kernels (m16n8k32, sm_80 for
// si8 and sm_89 for fp8; m16n8k64 for si4): the tiles they honour,
// everything else a diagnostic naming what was expected.

#t = #humming.tile_config<m = [1, inf], block = [16, 64, 16], warp = [16, 64, 16], stages = 3>
func.func @warp_k_16(%a: memref<?x512xf8E4M3FN>, %w: memref<16x1024xi32>, %s: memref<1x256xf16>, %as: memref<?x1xf32>, %c: memref<?x256xf16>) {
  // expected-error @+1 {{tile_configs[0]: expected warp_k 32, 64 or 128 for 8-bit activations with mma_sync, got 16}}
  humming.gemm %a, %w scales(%s : memref<1x256xf16>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = channel>,
       input_schema = #humming.input_schema<type = f8E4M3FN, scaling = token>, layout = #humming.layout<chip = "sm_89">,
       tile_configs = [#t]}
      : memref<?x512xf8E4M3FN>, memref<16x1024xi32> -> memref<?x256xf16>
  return
}

// -----

#t = #humming.tile_config<m = [1, inf], block = [64, 64, 32], warp = [64, 64, 32], stages = 3>
func.func @warp_m_64(%a: memref<?x512xi8>, %w: memref<16x1024xi32>, %s: memref<1x256xf16>, %as: memref<?x1xf32>, %c: memref<?x256xf16>) {
  // expected-error @+1 {{tile_configs[0]: expected warp_m of 16 or 32 with si8 activations (each iteration's sums are a second set of accumulators), got 64}}
  humming.gemm %a, %w scales(%s : memref<1x256xf16>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = channel>,
       input_schema = #humming.input_schema<type = si8, scaling = token>, layout = #humming.layout<chip = "sm_89">,
       tile_configs = [#t]}
      : memref<?x512xi8>, memref<16x1024xi32> -> memref<?x256xf16>
  return
}

// -----

#t = #humming.tile_config<m = [1, inf], block = [16, 64, 64], warp = [16, 64, 64], stages = 3>
func.func @group_scales_in_the_loop(%a: memref<?x512xf8E4M3FN>, %w: memref<16x1024xi32>, %s: memref<4x256xf16>, %as: memref<?x1xf32>, %c: memref<?x256xf16>) {
  // expected-error @+1 {{tile_configs[0]: expected scale_after_mma = true with f8E4M3FN activations and group scales (the group scales multiply each iteration's sums per output column)}}
  humming.gemm %a, %w scales(%s : memref<4x256xf16>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>>,
       input_schema = #humming.input_schema<type = f8E4M3FN, scaling = token>, layout = #humming.layout<chip = "sm_89">,
       tile_configs = [#t]}
      : memref<?x512xf8E4M3FN>, memref<16x1024xi32> -> memref<?x256xf16>
  return
}

// -----

#t = #humming.tile_config<m = [1, inf], block = [16, 64, 64], warp = [16, 64, 64], stages = 3, scale_after_mma = true>
func.func @mxfp4_scales(%a: memref<?x512xf8E4M3FN>, %w: memref<16x1024xi32>, %s: memref<8x256xf8E8M0FNU>, %as: memref<?x1xf32>, %c: memref<?x256xf16>) {
  // expected-error @+1 {{the mma_sync kernels apply group scales to each iteration's sums per output column (scale_after_mma) and expect f16 or bf16 group scales with f8E4M3FN activations, got f8E8M0FNU; the weights are prepared for f8E4M3FN activations, which the 16-bit fallback cannot read: prepare them for 16-bit activations or pass canonical weights (on sm_89)}}
  humming.gemm %a, %w scales(%s : memref<8x256xf8E8M0FNU>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = f4E2M1FN, scale = f8E8M0FNU, granularity = group<64>>,
       input_schema = #humming.input_schema<type = f8E4M3FN, scaling = token>, layout = #humming.layout<chip = "sm_89">,
       tile_configs = [#t]}
      : memref<?x512xf8E4M3FN>, memref<16x1024xi32> -> memref<?x256xf16>
  return
}

// -----

#t = #humming.tile_config<m = [1, inf], block = [16, 64, 64], warp = [16, 64, 64], stages = 3>
func.func @f16_sums(%a: memref<?x512xf8E4M3FN>, %w: memref<16x1024xi32>, %g: memref<1xf32>, %as: memref<?x1xf32>, %c: memref<?x256xf16>) {
  // expected-error @+1 {{f8E4M3FN activations sum in f32 (s32 for integers); expected f16_accumulation = false; the weights are prepared for f8E4M3FN activations, which the 16-bit fallback cannot read: prepare them for 16-bit activations or pass canonical weights}}
  humming.gemm %a, %w global_scale(%g : memref<1xf32>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f32, granularity = tensor>,
       input_schema = #humming.input_schema<type = f8E4M3FN, scaling = token>, layout = #humming.layout<chip = "sm_89">,
       compute = #humming.compute<f16_accumulation = true>,
       tile_configs = [#t]}
      : memref<?x512xf8E4M3FN>, memref<16x1024xi32> -> memref<?x256xf16>
  return
}

// -----

#t = #humming.tile_config<m = [1, inf], block = [32, 64, 64], warp = [16, 64, 64], stages = 3>
func.func @si4_block_rows(%a: memref<?x512xi4>, %w: memref<8x2048xi32>, %s: memref<1x256xf16>, %as: memref<?x1xf32>, %c: memref<?x256xf16>) {
  // expected-error @+1 {{tile_configs[0]: expected per-warp copies with si4 activations (block_m = warp_m, no block_copies, no share_activations)}}
  humming.gemm %a, %w scales(%s : memref<1x256xf16>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = si4, scale = f16, granularity = channel>,
       input_schema = #humming.input_schema<type = si4, scaling = token>, layout = #humming.layout<chip = "sm_89">,
       tile_configs = [#t]}
      : memref<?x512xi4>, memref<8x2048xi32> -> memref<?x256xf16>
  return
}

// -----

#t = #humming.tile_config<m = [1, inf], block = [16, 64, 128], warp = [16, 64, 128], stages = 3, scale_after_mma = true>
func.func @si4_warp_k_over_group(%a: memref<?x512xi4>, %w: memref<8x2048xi32>, %s: memref<8x256xf16>, %as: memref<?x1xf32>, %c: memref<?x256xf16>) {
  // expected-error @+1 {{tile_configs[0]: expected warp_k <= the group size (64) with si4 activations (each iteration's sums take one group scale), got 128}}
  humming.gemm %a, %w scales(%s : memref<8x256xf16>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = si4, scale = f16, granularity = group<64>>,
       input_schema = #humming.input_schema<type = si4, scaling = token>, layout = #humming.layout<chip = "sm_89">,
       tile_configs = [#t]}
      : memref<?x512xi4>, memref<8x2048xi32> -> memref<?x256xf16>
  return
}

// -----

#t = #humming.tile_config<m = [1, inf], block = [16, 64, 64], warp = [16, 64, 64], stages = 3>
func.func @si4_three_bit(%a: memref<?x512xi4>, %w: memref<8x1536xi32>, %s: memref<1x256xf16>, %as: memref<?x1xf32>, %c: memref<?x256xf16>) {
  // expected-error @+1 {{the prepared mma_sync layout takes 4-bit integer weights without zero points with si4 activations (si4, or ui4 with its implicit zero point 8: s4 codes after one xor), got ui3}}
  humming.gemm %a, %w scales(%s : memref<1x256xf16>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = ui3, scale = f16, granularity = channel>,
       input_schema = #humming.input_schema<type = si4, scaling = token>, layout = #humming.layout<chip = "sm_89">,
       tile_configs = [#t]}
      : memref<?x512xi4>, memref<8x1536xi32> -> memref<?x256xf16>
  return
}

// -----

#t = #humming.tile_config<m = [1, inf], block = [64, 64, 64], warp = [64, 64, 64], stages = 3>
func.func @si4_warp_m_64(%a: memref<?x512xi4>, %w: memref<8x2048xi32>, %s: memref<1x256xf16>, %as: memref<?x1xf32>, %c: memref<?x256xf16>) {
  // expected-error @+1 {{tile_configs[0]: expected warp_m of 16 or 32 with si4 activations (each iteration's sums are a second set of accumulators), got 64}}
  humming.gemm %a, %w scales(%s : memref<1x256xf16>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = si4, scale = f16, granularity = channel>,
       input_schema = #humming.input_schema<type = si4, scaling = token>, layout = #humming.layout<chip = "sm_89">,
       tile_configs = [#t]}
      : memref<?x512xi4>, memref<8x2048xi32> -> memref<?x256xf16>
  return
}

// -----

#t = #humming.tile_config<m = [1, inf], block = [16, 64, 64], warp = [16, 64, 64], stages = 3>
func.func @si4_group_scales_in_the_loop(%a: memref<?x512xi4>, %w: memref<8x2048xi32>, %s: memref<8x256xf16>, %as: memref<?x1xf32>, %c: memref<?x256xf16>) {
  // expected-error @+1 {{tile_configs[0]: expected scale_after_mma = true with si4 activations and group scales (the group scales multiply each iteration's sums per output column)}}
  humming.gemm %a, %w scales(%s : memref<8x256xf16>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = si4, scale = f16, granularity = group<64>>,
       input_schema = #humming.input_schema<type = si4, scaling = token>, layout = #humming.layout<chip = "sm_89">,
       tile_configs = [#t]}
      : memref<?x512xi4>, memref<8x2048xi32> -> memref<?x256xf16>
  return
}

// -----

// The warps of a K group sharing their activation copies: 16-bit rows
// only (with fp8 rows the kernel faulted on the H200).
#t = #humming.tile_config<m = [1, inf], block = [16, 256, 256], warp = [16, 64, 64], stages = 3, scale_after_mma = true, share_activations = true>
func.func @shared_fp8_copies(%a: memref<?x512xf8E4M3FN>, %w: memref<16x1024xi32>, %s: memref<4x256xf16>, %as: memref<?x1xf32>, %c: memref<?x256xf16>) {
  // expected-error @+1 {{tile_configs[0]: expected share_activations = false with f8E4M3FN activations (the shared activation copies hold 16-bit rows; with 8-bit ones the kernel faults)}}
  humming.gemm %a, %w scales(%s : memref<4x256xf16>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>>,
       input_schema = #humming.input_schema<type = f8E4M3FN, scaling = token>, layout = #humming.layout<chip = "sm_89">,
       tile_configs = [#t]}
      : memref<?x512xf8E4M3FN>, memref<16x1024xi32> -> memref<?x256xf16>
  return
}

