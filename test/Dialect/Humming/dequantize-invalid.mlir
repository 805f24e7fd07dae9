// RUN: humming-opt %s -split-input-file -verify-diagnostics

func.func @dest_type(%w: memref<256x128xi32>, %s: memref<256x1xf16>, %out: memref<256x512xi8>) {
  // expected-error @+1 {{expected 'dest' to be a static rank-2 memref [N, K] of f16, bf16 or f32, got 'memref<256x512xi8>'}}
  humming.dequantize %w scales(%s : memref<256x1xf16>) into %out {weight_schema = #humming.weight_schema<type = ui8, scale = f16>} : memref<256x128xi32> -> memref<256x512xi8>
  return
}

// -----

func.func @prepared_needs_input(%w: memref<64x2048xi32>, %s: memref<1x512xf16>, %out: memref<512x1024xf32>) {
  // expected-error @+1 {{expected an 'input_schema' with a prepared layout (the activation width fixes the packing)}}
  humming.dequantize %w scales(%s : memref<1x512xf16>) into %out
      {weight_schema = #humming.weight_schema<type = ui8, scale = f16>, layout = #humming.layout<mma = wgmma, chip = "sm_90a">}
      : memref<64x2048xi32> -> memref<512x1024xf32>
  return
}

// -----

func.func @weight_shape(%w: memref<256x64xi32>, %s: memref<256x1xf16>, %out: memref<256x512xf32>) {
  // expected-error @+1 {{expected 'weight' of shape [256, 128], got 'memref<256x64xi32>'}}
  humming.dequantize %w scales(%s : memref<256x1xf16>) into %out {weight_schema = #humming.weight_schema<type = ui8, scale = f16>} : memref<256x64xi32> -> memref<256x512xf32>
  return
}

// -----

func.func @incompatible_input(%w: memref<256x128xi32>, %s: memref<256x1xf16>, %out: memref<256x512xf32>) {
  // expected-error @+1 {{expected integer weights of at most 5 bits with f8E4M3FN activations, got ui8}}
  humming.dequantize %w scales(%s : memref<256x1xf16>) into %out
      {weight_schema = #humming.weight_schema<type = ui8, scale = f16>, input_schema = #humming.input_schema<type = f8E4M3FN, scaling = token>}
      : memref<256x128xi32> -> memref<256x512xf32>
  return
}

// -----

// AWQ packs along N.
func.func @awq_partial_word(%w: memref<64x4xi32>, %s: memref<1x36xf16>, %out: memref<36x64xf32>) {
  // expected-error @+1 {{operand 'weight': expected N*bits (36*4) to be a multiple of 32 for awq qweight}}
  humming.dequantize %w scales(%s : memref<1x36xf16>) into %out
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, format = awq>}
      : memref<64x4xi32> -> memref<36x64xf32>
  return
}
