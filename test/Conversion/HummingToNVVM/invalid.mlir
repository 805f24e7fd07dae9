// RUN: humming-opt %s --humming-lower-to-nvvm="chip=sm_90a" -split-input-file -verify-diagnostics

// What the mma_sync family does not lower yet is a diagnostic, never a
// miscompile.

func.func @fp8_activations(%a: memref<?x128xf8E4M3FN>, %w: memref<128x16xi32>, %s: memref<128x1xf16>, %as: memref<?x1xf32>, %c: memref<?x128xf16>) {
  // expected-error @+1 {{8- and 4-bit activations run in the kernels over prepared weights ('layout') only; the canonical-weight kernel takes 16-bit activations, got 'f8E4M3FN' on sm_90a}}
  humming.gemm %a, %w scales(%s : memref<128x1xf16>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16>, input_schema = #humming.input_schema<type = f8E4M3FN, scaling = token>}
      : memref<?x128xf8E4M3FN>, memref<128x16xi32> -> memref<?x128xf16>
  return
}

// -----

// Prepared weights: see prepared-invalid.mlir.
func.func @prepared_without_tiles(%a: memref<?x128xf16>, %w: memref<8x256xi32>, %s: memref<1x128xf16>, %c: memref<?x128xf16>) {
  // expected-error @+1 {{prepared weights need tile_configs; run humming-select-tiles (or give them by hand)}}
  humming.gemm %a, %w scales(%s : memref<1x128xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16>, input_schema = #humming.input_schema<type = f16>,
       layout = #humming.layout<chip = "sm_90a">}
      : memref<?x128xf16>, memref<8x256xi32> -> memref<?x128xf16>
  return
}

// -----

func.func @gptq(%a: memref<?x128xf16>, %w: memref<16x128xi32>, %s: memref<1x128xf16>, %c: memref<?x128xf16>) {
  // expected-error @+1 {{expected canonical weights to lower, got format gptq (run humming-legalize-schema first)}}
  humming.gemm %a, %w scales(%s : memref<1x128xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, format = gptq>, input_schema = #humming.input_schema<type = f16>}
      : memref<?x128xf16>, memref<16x128xi32> -> memref<?x128xf16>
  return
}

// -----

func.func @strided(%a: memref<?x128xf16, strided<[256, 1]>>, %w: memref<128x16xi32>, %s: memref<128x1xf16>, %c: memref<?x128xf16>) {
  // expected-error @+1 {{expected identity-layout memrefs, got 'memref<?x128xf16, strided<[256, 1]>>'}}
  humming.gemm %a, %w scales(%s : memref<128x1xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16>, input_schema = #humming.input_schema<type = f16>}
      : memref<?x128xf16, strided<[256, 1]>>, memref<128x16xi32> -> memref<?x128xf16>
  return
}

// -----

// The module's target and the chip the pipeline compiles for must agree:
// the checks would otherwise be made for one chip and the code built for
// another.
// expected-error @+1 {{humming-lower-to-nvvm: the module's humming.target (A100) is sm_80; expected chip=sm_80, got chip=sm_90a}}
module attributes {humming.target = #humming.target<device = "A100">} {
func.func @ampere(%a: memref<?x128xf16>, %w: memref<128x16xi32>, %s: memref<128x1xf16>, %c: memref<?x128xf16>) {
  humming.gemm %a, %w scales(%s : memref<128x1xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16>, input_schema = #humming.input_schema<type = f16>}
      : memref<?x128xf16>, memref<128x16xi32> -> memref<?x128xf16>
  return
}
}

// -----

// A forced tile configuration on canonical weights is refused, not silently
// ignored.
func.func @forced_tiles(%a: memref<?x128xf16>, %w: memref<128x16xi32>, %s: memref<128x1xf16>, %c: memref<?x128xf16>) {
  // expected-error @+1 {{tile_configs apply to prepared weights; the canonical-weight kernel is fixed (16x64 output blocks, 4-way in-block split-K); remove 'tile_configs' or prepare the weights ('layout')}}
  humming.gemm %a, %w scales(%s : memref<128x1xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16>, input_schema = #humming.input_schema<type = f16>,
       tile_configs = [#humming.tile_config<block = [64, 128, 64], warp = [64, 32, 64], stages = 4>]}
      : memref<?x128xf16>, memref<128x16xi32> -> memref<?x128xf16>
  return
}

// -----

func.func @f16_accumulation(%a: memref<?x128xf16>, %w: memref<128x16xi32>, %s: memref<128x1xf16>, %c: memref<?x128xf16>) {
  // expected-error @+1 {{f16 accumulation is lowered for prepared weights (the fast mma_sync kernels); the canonical-weight kernel accumulates in f32: prepare the weights ('layout') or drop 'f16_accumulation'}}
  humming.gemm %a, %w scales(%s : memref<128x1xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16>, input_schema = #humming.input_schema<type = f16>,
       compute = #humming.compute<f16_accumulation = true>}
      : memref<?x128xf16>, memref<128x16xi32> -> memref<?x128xf16>
  return
}

// -----

// Every other humming op is diagnosed rather than left behind for the
// translation to trip over.
func.func @dequantize(%w: memref<256x128xi32>, %s: memref<256x1xf16>, %out: memref<256x512xf32>) {
  // expected-error @+1 {{'humming.dequantize' op is not lowered by humming-lower-to-nvvm yet (only humming.gemm, humming.moe_gemm, humming.moe_align, humming.moe_group, humming.moe_permute, humming.gather_columns, humming.repack, humming.silu_and_mul, humming.moe_sum and humming.quantize are)}}
  humming.dequantize %w scales(%s : memref<256x1xf16>) into %out
      {weight_schema = #humming.weight_schema<type = ui8, scale = f16>}
      : memref<256x128xi32> -> memref<256x512xf32>
  return
}

// -----

// Quantizing weights on the device: integer and float codes with group,
// group_tensor, channel or block scales of f16, bf16, f32, e8m0, e4m3 or
// e5m2, global scales of symmetric codes, tensor scales
// (quantize-weights.mlir); blocks must tile the padded K (a partial last
// block along K is the host's).
func.func @quantize_block_scales_partial(%x: memref<256x480xf16>, %q: memref<256x60xi32>, %s: memref<2x4xf32>) {
  // expected-error @+1 {{'humming.quantize' op the weight quantization kernel takes block scales of a multiple of 32 columns dividing the padded K, got blocks of 128 columns in a padded K of 480}}
  humming.quantize %x into %q scales(%s : memref<2x4xf32>)
      {schema = #humming.weight_schema<type = si4, scale = f32, granularity = block<128, 128>>}
      : memref<256x480xf16> -> memref<256x60xi32>
  return
}

// -----

// A global scale is the maximum of the groups' amax: min-max groups (zero
// points) are not taken.
func.func @quantize_global_scale_zero_points(%x: memref<256x512xf16>, %q: memref<256x64xi32>, %s: memref<256x4xf16>, %z: memref<32x4xi32>, %gs: memref<1xf32>) {
  // expected-error @+1 {{'humming.quantize' op the weight quantization kernel makes a global scale only for symmetric codes (its maximum is taken over the groups' amax), got int zero points}}
  humming.quantize %x into %q scales(%s : memref<256x4xf16>) zero_points(%z : memref<32x4xi32>) global_scale(%gs : memref<1xf32>)
      {schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>, zero_point = int, global_scale = true>}
      : memref<256x512xf16> -> memref<256x64xi32>
  return
}

// -----

// Groups of 16 go two to a warp: the padded K must hold 32-column pairs.
func.func @quantize_group_16_odd_pairs(%x: memref<256x272xf16>, %q: memref<256x34xi32>, %s: memref<256x17xf16>) {
  // expected-error @+1 {{'humming.quantize' op the weight quantization kernel converts 32 columns at a time and expects groups (the padded K for channel scales) of a multiple of 32 columns, or of 16 in a padded K of a multiple of 32, got 16 in a padded K of 272}}
  humming.quantize %x into %q scales(%s : memref<256x17xf16>)
      {schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<16>>}
      : memref<256x272xf16> -> memref<256x34xi32>
  return
}

// -----

// humming.repack lowers what the prepared layout holds, from canonical
// tensors (a GPTQ tensor goes through humming-legalize-schema first).
func.func @repack_gptq(%w: memref<256x2048xi32>, %pw: memref<128x4096xi32>) {
  // expected-error @+1 {{'humming.repack' op cannot repack: the prepared mma_sync layout is made from canonical weights, got format gptq}}
  humming.repack %w into %pw {operand = #humming.operand<weight>, n = 2048, k = 2048,
      weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>, format = gptq>,
      input_schema = #humming.input_schema<type = f16>, layout = #humming.layout<chip = "sm_90a">}
      : memref<256x2048xi32> -> memref<128x4096xi32>
  return
}

// -----

func.func @repack_group_scales_bf16_cannot_hold(%w: memref<256x128xi32>, %pw: memref<32x1024xi32>) {
  // expected-error @+1 {{'humming.repack' op cannot repack: the prepared mma_sync layout applies scales in the activation type and expects scales that bf16 represents exactly, got f16}}
  humming.repack %w into %pw {operand = #humming.operand<weight>, n = 256, k = 512,
      weight_schema = #humming.weight_schema<type = ui8, scale = f16, granularity = group<128>>,
      input_schema = #humming.input_schema<type = bf16>, layout = #humming.layout<chip = "sm_90a">}
      : memref<256x128xi32> -> memref<32x1024xi32>
  return
}
