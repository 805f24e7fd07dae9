// RUN: humming-opt %s -split-input-file -verify-diagnostics

// The weight x activation rules (the original's check_dtype). Shapes are
// right in every case, so only the rule under test can fire.

// Integers decode through the activation mantissa: e4m3 holds b <= 3 + 2.
func.func @w8_e4m3(%a: memref<?x1024xf8E4M3FN>, %w: memref<1024x256xi32>, %s: memref<1024x1xf16>, %as: memref<?x1xf32>, %c: memref<?x1024xf16>) {
  // expected-error @+1 {{expected integer weights of at most 5 bits with f8E4M3FN activations, got ui8}}
  humming.gemm %a, %w scales(%s : memref<1024x1xf16>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = ui8, scale = f16>, input_schema = #humming.input_schema<type = f8E4M3FN, scaling = token>}
      : memref<?x1024xf8E4M3FN>, memref<1024x256xi32> -> memref<?x1024xf16>
  return
}

// -----

// With a zero point one bit less: b <= 3 + 1.
func.func @w5_e4m3_zp(%a: memref<?x1024xf8E4M3FN>, %w: memref<1024x160xi32>, %s: memref<1024x8xf16>, %z: memref<160x8xi32>, %as: memref<?x1xf32>, %c: memref<?x1024xf16>) {
  // expected-error @+1 {{expected integer weights of at most 4 bits with f8E4M3FN activations and a zero point, got ui5}}
  humming.gemm %a, %w scales(%s : memref<1024x8xf16>) zero_points(%z : memref<160x8xi32>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = ui5, scale = f16, granularity = group<128>, zero_point = int>, input_schema = #humming.input_schema<type = f8E4M3FN, scaling = token>}
      : memref<?x1024xf8E4M3FN>, memref<1024x160xi32> -> memref<?x1024xf16>
  return
}

// -----

// fp4 activations have one mantissa bit: b <= 3.
func.func @w4_e2m1(%a: memref<?x1024xf4E2M1FN>, %w: memref<1024x128xi32>, %s: memref<1024x1xf16>, %as: memref<?x16xf32>, %c: memref<?x1024xbf16>) {
  // expected-error @+1 {{expected integer weights of at most 3 bits with f4E2M1FN activations, got ui4}}
  humming.gemm %a, %w scales(%s : memref<1024x1xf16>) input_scale(%as : memref<?x16xf32>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16>, input_schema = #humming.input_schema<type = f4E2M1FN, scaling = group<64>>}
      : memref<?x1024xf4E2M1FN>, memref<1024x128xi32> -> memref<?x1024xbf16>
  return
}

// -----

// Weights are never wider than the activations.
func.func @w8_s4(%a: memref<?x1024xsi4>, %w: memref<1024x256xi32>, %s: memref<1024x1xf16>, %as: memref<?x1xf32>, %c: memref<?x1024xf16>) {
  // expected-error @+1 {{expected weights no wider than the activations: ui8 has 8 bits, si4 activations have 4}}
  humming.gemm %a, %w scales(%s : memref<1024x1xf16>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = ui8, scale = f16>, input_schema = #humming.input_schema<type = si4, scaling = token>}
      : memref<?x1024xsi4>, memref<1024x256xi32> -> memref<?x1024xf16>
  return
}

// -----

// Unsigned integer weights must be narrower than integer activations, or
// as wide without zero points (ui8 without one is si8 offset by 128).
func.func @u8_s8(%a: memref<?x1024xsi8>, %w: memref<1024x256xi32>, %s: memref<1024x1xf16>, %z: memref<32x1xi32>, %as: memref<?x1xf32>, %c: memref<?x1024xf16>) {
  // expected-error @+1 {{expected unsigned integer weights narrower than the si8 activations (at most ui7; ui8 without zero points), got ui8 with zero points}}
  humming.gemm %a, %w scales(%s : memref<1024x1xf16>) zero_points(%z : memref<32x1xi32>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = ui8, scale = f16, zero_point = int>, input_schema = #humming.input_schema<type = si8, scaling = token>}
      : memref<?x1024xsi8>, memref<1024x256xi32> -> memref<?x1024xf16>
  return
}

// -----

// Signed integer weights must be as wide as integer activations.
func.func @s4_s8(%a: memref<?x1024xsi8>, %w: memref<1024x128xi32>, %s: memref<1024x1xf16>, %as: memref<?x1xf32>, %c: memref<?x1024xf16>) {
  // expected-error @+1 {{expected signed integer weights as wide as the si8 activations (si8), got si4}}
  humming.gemm %a, %w scales(%s : memref<1024x1xf16>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = si4, scale = f16>, input_schema = #humming.input_schema<type = si8, scaling = token>}
      : memref<?x1024xsi8>, memref<1024x128xi32> -> memref<?x1024xf16>
  return
}

// -----

// No float weights on integer activations.
func.func @fp8w_int8a(%a: memref<?x1024xsi8>, %w: memref<1024x256xi32>, %s: memref<1024x1xf16>, %as: memref<?x1xf32>, %c: memref<?x1024xf16>) {
  // expected-error @+1 {{float weights (f8E4M3FN) cannot be used with integer activations (si8)}}
  humming.gemm %a, %w scales(%s : memref<1024x1xf16>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = f8E4M3FN, scale = f16>, input_schema = #humming.input_schema<type = si8, scaling = token>}
      : memref<?x1024xsi8>, memref<1024x256xi32> -> memref<?x1024xf16>
  return
}

// -----

// Float weights need no more exponent bits than the activation...
func.func @e5m2_on_e4m3(%a: memref<?x1024xf8E4M3FN>, %w: memref<1024x256xi32>, %s: memref<1024x1xf16>, %as: memref<?x1xf32>, %c: memref<?x1024xf16>) {
  // expected-error @+1 {{expected weight exponent bits <= 4 (the exponent of f8E4M3FN activations), got 5 (f8E5M2)}}
  humming.gemm %a, %w scales(%s : memref<1024x1xf16>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = f8E5M2, scale = f16>, input_schema = #humming.input_schema<type = f8E4M3FN, scaling = token>}
      : memref<?x1024xf8E4M3FN>, memref<1024x256xi32> -> memref<?x1024xf16>
  return
}

// -----

// ... and no more mantissa bits.
func.func @e2m3_on_e5m2(%a: memref<?x1024xf8E5M2>, %w: memref<1024x192xi32>, %s: memref<1024x1xf16>, %as: memref<?x1xf32>, %c: memref<?x1024xf16>) {
  // expected-error @+1 {{expected weight mantissa bits <= 2 (the mantissa of f8E5M2 activations), got 3 (f6E2M3FN)}}
  humming.gemm %a, %w scales(%s : memref<1024x1xf16>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = f6E2M3FN, scale = f16>, input_schema = #humming.input_schema<type = f8E5M2, scaling = token>}
      : memref<?x1024xf8E5M2>, memref<1024x192xi32> -> memref<?x1024xf16>
  return
}

// -----

// The same rule for a generic format: e1m6 has 6 mantissa bits, e4m3 has 3.
func.func @e1m6_on_e4m3(%a: memref<?x1024xf8E4M3FN>, %w: memref<1024x256xi32>, %s: memref<1024x1xf16>, %as: memref<?x1xf32>, %c: memref<?x1024xf16>) {
  // expected-error @+1 {{expected weight mantissa bits <= 3 (the mantissa of f8E4M3FN activations), got 6 (!humming.float<e1m6>)}}
  humming.gemm %a, %w scales(%s : memref<1024x1xf16>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = !humming.float<e1m6>, scale = f16>, input_schema = #humming.input_schema<type = f8E4M3FN, scaling = token>}
      : memref<?x1024xf8E4M3FN>, memref<1024x256xi32> -> memref<?x1024xf16>
  return
}

// -----

// A scale group covers at least one MMA k-step (256 / activation bits).
func.func @group_too_small_a16(%a: memref<?x1024xf16>, %w: memref<1024x128xi32>, %s: memref<1024x128xf16>, %c: memref<?x1024xf16>) {
  // expected-error @+1 {{expected a weight scale group size >= 16 for 16-bit activations, got 8}}
  humming.gemm %a, %w scales(%s : memref<1024x128xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<8>>, input_schema = #humming.input_schema<type = f16>}
      : memref<?x1024xf16>, memref<1024x128xi32> -> memref<?x1024xf16>
  return
}

// -----

func.func @group_too_small_a8(%a: memref<?x1024xf8E4M3FN>, %w: memref<1024x128xi32>, %s: memref<1024x64xf16>, %as: memref<?x1xf32>, %c: memref<?x1024xf16>) {
  // expected-error @+1 {{expected a weight scale group size >= 32 for 8-bit activations, got 16}}
  humming.gemm %a, %w scales(%s : memref<1024x64xf16>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<16>>, input_schema = #humming.input_schema<type = f8E4M3FN, scaling = token>}
      : memref<?x1024xf8E4M3FN>, memref<1024x128xi32> -> memref<?x1024xf16>
  return
}

// -----

// Block scales and grouped activations share the K groups.
func.func @block_k_vs_input_group(%a: memref<?x1024xf8E4M3FN>, %w: memref<1024x256xi32>, %s: memref<8x8xf32>, %as: memref<?x16xf32>, %c: memref<?x1024xbf16>) {
  // expected-error @+1 {{expected the activation group size to equal the block scale's k size (128), got 64}}
  humming.gemm %a, %w scales(%s : memref<8x8xf32>) input_scale(%as : memref<?x16xf32>) into %c
      {weight_schema = #humming.weight_schema<type = f8E4M3FN, scale = f32, granularity = block<128, 128>>, input_schema = #humming.input_schema<type = f8E4M3FN, scaling = group<64>>}
      : memref<?x1024xf8E4M3FN>, memref<1024x256xi32> -> memref<?x1024xbf16>
  return
}

// -----

// Float zero points are applied on 16-bit registers.
func.func @float_zp_a8(%a: memref<?x1024xf8E4M3FN>, %w: memref<1024x128xi32>, %s: memref<1024x8xf16>, %z: memref<1024x8xf16>, %as: memref<?x1xf32>, %c: memref<?x1024xf16>) {
  // expected-error @+1 {{expected 16-bit activations with float zero points, got f8E4M3FN}}
  humming.gemm %a, %w scales(%s : memref<1024x8xf16>) zero_points(%z : memref<1024x8xf16>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>, zero_point = float>, input_schema = #humming.input_schema<type = f8E4M3FN, scaling = token>}
      : memref<?x1024xf8E4M3FN>, memref<1024x128xi32> -> memref<?x1024xf16>
  return
}

// -----

// f16 accumulation needs fp16 (or e4m3) activations.
func.func @f16acc_bf16(%a: memref<?x1024xbf16>, %w: memref<1024x128xi32>, %s: memref<1024x1xf16>, %c: memref<?x1024xbf16>) {
  // expected-error @+1 {{expected f16 activations, or f8E4M3FN activations with integer or at most 4-exponent-bit weights, for f16 accumulation; got bf16 activations and ui4 weights}}
  humming.gemm %a, %w scales(%s : memref<1024x1xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16>, input_schema = #humming.input_schema<type = bf16>, compute = #humming.compute<f16_accumulation = true>}
      : memref<?x1024xbf16>, memref<1024x128xi32> -> memref<?x1024xbf16>
  return
}

// -----

// e5m1 reaches 98304: past f16's largest finite value (its top exponent is
// inf), although the exponent widths are equal.
func.func @e5m1_on_f16(%a: memref<?x1024xf16>, %w: memref<1024x224xi32>, %s: memref<1024x1xf16>, %c: memref<?x1024xf16>) {
  // expected-error @+1 {{expected weight values within the range of f16 activations (max 65504), got !humming.float<e5m1> (max 98304)}}
  humming.gemm %a, %w scales(%s : memref<1024x1xf16>) into %c
      {weight_schema = #humming.weight_schema<type = !humming.float<e5m1>, scale = f16>, input_schema = #humming.input_schema<type = f16>}
      : memref<?x1024xf16>, memref<1024x224xi32> -> memref<?x1024xf16>
  return
}

// -----

// What verifies compiles (tools/humming-contract): 8- and 4-bit activations
// run over prepared weights, so the prepared layout's rules apply to them
// at the op, with or without a target. MXFP4 (groups of 32) on fp8: each
// iteration's sums are scaled by one group of at least 64 of K.
func.func @mxfp4_g32_e4m3(%a: memref<?x2880xf8E4M3FN>, %w: memref<5760x360xi32>, %s: memref<5760x90xf8E8M0FNU>, %as: memref<?x1xf32>, %c: memref<?x5760xbf16>) {
  // expected-error @+1 {{the prepared mma_sync layout applies group scales to each 64-column iteration's f32 sums with f8E4M3FN activations and expects groups of at least 64, got 32; f8E4M3FN activations run over prepared weights (made on the device from canonical ones), or over the 16-bit values a humming.quantize earlier in the block quantized them from}}
  humming.gemm %a, %w scales(%s : memref<5760x90xf8E8M0FNU>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = f4E2M1FN, scale = f8E8M0FNU, granularity = group<32>>,
       input_schema = #humming.input_schema<type = f8E4M3FN, scaling = token>}
      : memref<?x2880xf8E4M3FN>, memref<5760x360xi32> -> memref<?x5760xbf16>
  return
}

// -----

// Per-group activation scales: over weights of the activation type only.
func.func @ui4_si8_group(%a: memref<?x4096xsi8>, %w: memref<4096x512xi32>, %s: memref<4096x32xbf16>, %as: memref<?x32xf32>, %c: memref<?x4096xbf16>) {
  // expected-error @+1 {{the prepared mma_sync layout takes per-group si8 activation scales over weights of that type without zero points (8-bit integers, read by sm_90a's wgmma as they are), got ui4}}
  humming.gemm %a, %w scales(%s : memref<4096x32xbf16>) input_scale(%as : memref<?x32xf32>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = bf16, granularity = group<128>>,
       input_schema = #humming.input_schema<type = si8, scaling = group<128>>}
      : memref<?x4096xsi8>, memref<4096x512xi32> -> memref<?x4096xbf16>
  return
}

// -----

// The same with a humming.quantize of 16-bit values writing the
// activations: legalize-schema falls back to those, so it verifies.
func.func @ui4_si8_group_quantized(%x: memref<?x4096xbf16>, %a: memref<?x4096xsi8>, %w: memref<4096x512xi32>, %s: memref<4096x32xbf16>, %as: memref<?x32xf32>, %c: memref<?x4096xbf16>) {
  humming.quantize %x into %a scales(%as : memref<?x32xf32>) {schema = #humming.input_schema<type = si8, scaling = group<128>>} : memref<?x4096xbf16> -> memref<?x4096xsi8>
  humming.gemm %a, %w scales(%s : memref<4096x32xbf16>) input_scale(%as : memref<?x32xf32>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = bf16, granularity = group<128>>,
       input_schema = #humming.input_schema<type = si8, scaling = group<128>>}
      : memref<?x4096xsi8>, memref<4096x512xi32> -> memref<?x4096xbf16>
  return
}

// -----

// si4 activations are scaled per token or statically.
func.func @si4_group(%a: memref<?x4096xsi4>, %w: memref<4096x512xi32>, %s: memref<4096x1xbf16>, %as: memref<?x64xf32>, %c: memref<?x4096xbf16>) {
  // expected-error @+1 {{the prepared mma_sync layout takes per-token or static scales with si4 activations, got group scaling}}
  humming.gemm %a, %w scales(%s : memref<4096x1xbf16>) input_scale(%as : memref<?x64xf32>) into %c
      {weight_schema = #humming.weight_schema<type = si4, scale = bf16>,
       input_schema = #humming.input_schema<type = si4, scaling = group<64>>}
      : memref<?x4096xsi4>, memref<4096x512xi32> -> memref<?x4096xbf16>
  return
}

// -----

// Prepared weights: the layout's rules, said at the op.
func.func @prepared_fp8_block_on_bf16(%a: memref<?x512xf8E4M3FN>, %w: memref<16x2048xi32>, %s: memref<4x256xf32>, %as: memref<?x4xf32>, %c: memref<?x256xbf16>) {
  // expected-error @+1 {{per-group f8E4M3FN activation scales are applied by sm_90a's wgmma kernels; the mma_sync kernels take per-token or static ones; the weights are prepared for f8E4M3FN activations, which the 16-bit fallback cannot read: prepare them for 16-bit activations or pass canonical weights (on sm_89)}}
  humming.gemm %a, %w scales(%s : memref<4x256xf32>) input_scale(%as : memref<?x4xf32>) into %c
      {weight_schema = #humming.weight_schema<type = f8E4M3FN, scale = f32, granularity = block<128, 128>>,
       input_schema = #humming.input_schema<type = f8E4M3FN, scaling = group<128>>,
       layout = #humming.layout<mma = mma_sync, chip = "sm_89">}
      : memref<?x512xf8E4M3FN>, memref<16x2048xi32> -> memref<?x256xbf16>
  return
}

// -----

// A T4 (sm_75): no kernel family runs there yet.
module attributes {humming.target = #humming.target<device = "T4">} {
func.func @sm75(%a: memref<?x4096xf16>, %w: memref<4096x512xi32>, %s: memref<4096x32xf16>, %c: memref<?x4096xf16>) {
  // expected-error @+1 {{the GEMM kernels need sm_80 or newer (mma.sync m16n8k16 and cp.async), got sm_75}}
  humming.gemm %a, %w scales(%s : memref<4096x32xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>>,
       input_schema = #humming.input_schema<type = f16>}
      : memref<?x4096xf16>, memref<4096x512xi32> -> memref<?x4096xf16>
  return
}
}

// -----

// The kernels of 8-bit activations sum in f32 (s32): f16 accumulation is
// for 16-bit activations.
func.func @fp8_f16acc(%a: memref<?x4096xf8E4M3FN>, %w: memref<4096x512xi32>, %s: memref<4096x1xf16>, %as: memref<?x1xf32>, %c: memref<?x4096xf16>) {
  // expected-error @+1 {{f8E4M3FN activations sum in f32 (s32 for integers); expected f16_accumulation = false; f8E4M3FN activations run over prepared weights}}
  humming.gemm %a, %w scales(%s : memref<4096x1xf16>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16>,
       input_schema = #humming.input_schema<type = f8E4M3FN, scaling = token>,
       compute = #humming.compute<f16_accumulation = true>}
      : memref<?x4096xf8E4M3FN>, memref<4096x512xi32> -> memref<?x4096xf16>
  return
}

// -----

// Batch-invariant si4 kernels take 128 of K per iteration, one group scale
// each.
func.func @si4_batch_invariant_g64(%a: memref<?x512xsi4>, %w: memref<256x64xi32>, %s: memref<256x8xf16>, %as: memref<?x1xf32>, %c: memref<?x256xf16>) {
  // expected-error @+1 {{batch-invariant kernels take 128 of K per iteration with si4 activations, each with one group scale; expected groups of at least 128, got 64}}
  humming.gemm %a, %w scales(%s : memref<256x8xf16>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = si4, scale = f16, granularity = group<64>>,
       input_schema = #humming.input_schema<type = si4, scaling = token>,
       compute = #humming.compute<batch_invariant = true>}
      : memref<?x512xsi4>, memref<256x64xi32> -> memref<?x256xf16>
  return
}

// -----

// f16 accumulation multiplies channel scales into the weights in the
// activation type: bf16 scales on f16 activations are not exact there.
func.func @f16acc_bf16_channel_scales(%a: memref<?x512xf16>, %w: memref<32x512xi32>, %s: memref<1x256xbf16>, %c: memref<?x256xf16>) {
  // expected-error @+1 {{f16 accumulation applies channel scales to the weights in f16 and expects scales it represents exactly, got bf16 (the weights are prepared)}}
  humming.gemm %a, %w scales(%s : memref<1x256xbf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = bf16>,
       input_schema = #humming.input_schema<type = f16>,
       compute = #humming.compute<f16_accumulation = true>,
       layout = #humming.layout<chip = "sm_90a">}
      : memref<?x512xf16>, memref<32x512xi32> -> memref<?x256xf16>
  return
}

// -----

// The canonical-weight kernel sums in f32.
func.func @f16acc_canonical(%a: memref<?x512xf16>, %w: memref<256x64xi32>, %s: memref<256x1xf16>, %c: memref<?x256xf16>) {
  // expected-error @+1 {{f16 accumulation is lowered for prepared weights (the fast mma_sync kernels); the canonical-weight kernel accumulates in f32: prepare the weights ('layout') or drop 'f16_accumulation'}}
  humming.gemm %a, %w scales(%s : memref<256x1xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16>,
       input_schema = #humming.input_schema<type = f16>,
       compute = #humming.compute<f16_accumulation = true>}
      : memref<?x512xf16>, memref<256x64xi32> -> memref<?x256xf16>
  return
}

// -----

// Batch-invariant 8-bit layers take the mma_sync kernels on sm_90a too
// (except over K-major weights), with their rules: 16-bit group scales.
func.func @batch_invariant_fp8_e8m0_groups(%a: memref<?x512xf8E4M3FN>, %w: memref<16x1024xi32>, %s: memref<8x256xf8E8M0FNU>, %as: memref<?x1xf32>, %c: memref<?x256xf16>) {
  // expected-error @+1 {{the mma_sync kernels apply group scales to each iteration's sums per output column (scale_after_mma) and expect f16 or bf16 group scales with f8E4M3FN activations, got f8E8M0FNU; the weights are prepared for f8E4M3FN activations, which the 16-bit fallback cannot read: prepare them for 16-bit activations or pass canonical weights (on sm_90a)}}
  humming.gemm %a, %w scales(%s : memref<8x256xf8E8M0FNU>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = f4E2M1FN, scale = f8E8M0FNU, granularity = group<64>>,
       input_schema = #humming.input_schema<type = f8E4M3FN, scaling = token>,
       compute = #humming.compute<batch_invariant = true>,
       layout = #humming.layout<chip = "sm_90a">}
      : memref<?x512xf8E4M3FN>, memref<16x1024xi32> -> memref<?x256xf16>
  return
}
