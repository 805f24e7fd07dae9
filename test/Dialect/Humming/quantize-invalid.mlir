// RUN: humming-opt %s -split-input-file -verify-diagnostics

func.func @f16_input(%x: memref<?x4096xbf16>, %q: memref<?x4096xf16>) {
  // expected-error @+1 {{expected an 8- or 4-bit activation schema, got 'f16' (16-bit activations are used as they are)}}
  humming.quantize %x into %q {schema = #humming.input_schema<type = f16>} : memref<?x4096xbf16> -> memref<?x4096xf16>
  return
}

// -----

func.func @int_source(%x: memref<?x4096xi32>, %q: memref<?x4096xsi8>, %s: memref<?x1xf32>) {
  // expected-error @+1 {{expected 'source' element type f16, bf16 or f32, got 'i32'}}
  humming.quantize %x into %q scales(%s : memref<?x1xf32>) {schema = #humming.input_schema<type = si8, scaling = token>} : memref<?x4096xi32> -> memref<?x4096xsi8>
  return
}

// -----

func.func @dest_type(%x: memref<?x4096xbf16>, %q: memref<?x4096xf8E5M2>, %s: memref<?x1xf32>) {
  // expected-error @+1 {{expected 'dest' element type f8E4M3FN (the input schema's type), got 'f8E5M2'}}
  humming.quantize %x into %q scales(%s : memref<?x1xf32>) {schema = #humming.input_schema<type = f8E4M3FN, scaling = token>} : memref<?x4096xbf16> -> memref<?x4096xf8E5M2>
  return
}

// -----

func.func @dest_shape(%x: memref<?x4096xbf16>, %q: memref<?x2048xf8E4M3FN>, %s: memref<?x1xf32>) {
  // expected-error @+1 {{expected 'dest' of shape [?, 4096], got 'memref<?x2048xf8E4M3FN>'}}
  humming.quantize %x into %q scales(%s : memref<?x1xf32>) {schema = #humming.input_schema<type = f8E4M3FN, scaling = token>} : memref<?x4096xbf16> -> memref<?x2048xf8E4M3FN>
  return
}

// -----

func.func @activation_scales(%x: memref<?x4096xbf16>, %q: memref<?x4096xf8E4M3FN>) {
  // expected-error @+1 {{expected operand 'scales' (activations are scaled)}}
  humming.quantize %x into %q {schema = #humming.input_schema<type = f8E4M3FN, scaling = token>} : memref<?x4096xbf16> -> memref<?x4096xf8E4M3FN>
  return
}

// -----

func.func @activation_zero_points(%x: memref<?x4096xbf16>, %q: memref<?x4096xf8E4M3FN>, %s: memref<?x1xf32>, %z: memref<?x1xf32>) {
  // expected-error @+1 {{unexpected operand 'zero_points' (activations have no zero point)}}
  humming.quantize %x into %q scales(%s : memref<?x1xf32>) zero_points(%z : memref<?x1xf32>) {schema = #humming.input_schema<type = f8E4M3FN, scaling = token>} : memref<?x4096xbf16> -> memref<?x4096xf8E4M3FN>
  return
}

// -----

func.func @static_scale_shape(%x: memref<?x4096xbf16>, %q: memref<?x4096xf8E4M3FN>, %s: memref<?x1xf32>) {
  // expected-error @+1 {{expected 'scales' of shape [1], got 'memref<?x1xf32>'}}
  humming.quantize %x into %q scales(%s : memref<?x1xf32>) {schema = #humming.input_schema<type = f8E4M3FN, scaling = static>} : memref<?x4096xbf16> -> memref<?x4096xf8E4M3FN>
  return
}

// -----

func.func @gptq_output(%w: memref<4096x4096xf16>, %q: memref<512x4096xi32>, %s: memref<32x4096xf16>) {
  // expected-error @+1 {{expected format = canonical for quantized weights, got gptq}}
  humming.quantize %w into %q scales(%s : memref<32x4096xf16>) {schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>, format = gptq>} : memref<4096x4096xf16> -> memref<512x4096xi32>
  return
}

// -----

func.func @dynamic_weight(%w: memref<?x4096xf16>, %q: memref<4096x512xi32>, %s: memref<4096x1xf16>) {
  // expected-error @+1 {{expected 'source' to be a static rank-2 memref [N, K], got 'memref<?x4096xf16>'}}
  humming.quantize %w into %q scales(%s : memref<4096x1xf16>) {schema = #humming.weight_schema<type = ui4, scale = f16>} : memref<?x4096xf16> -> memref<4096x512xi32>
  return
}

// -----

func.func @experts_rank(%w: memref<4096x4096xf16>, %q: memref<4x4096x512xi32>, %s: memref<4x4096x1xf16>) {
  // expected-error @+1 {{expected 'source' to be a static rank-3 memref [E, N, K], got 'memref<4096x4096xf16>'}}
  humming.quantize %w into %q scales(%s : memref<4x4096x1xf16>) {schema = #humming.weight_schema<type = ui4, scale = f16, experts = 4>} : memref<4096x4096xf16> -> memref<4x4096x512xi32>
  return
}

// -----

func.func @experts_count(%w: memref<2x256x512xf16>, %q: memref<4x256x64xi32>, %s: memref<4x256x1xf16>) {
  // expected-error @+1 {{expected 4 experts in 'source', got 'memref<2x256x512xf16>'}}
  humming.quantize %w into %q scales(%s : memref<4x256x1xf16>) {schema = #humming.weight_schema<type = ui4, scale = f16, experts = 4>} : memref<2x256x512xf16> -> memref<4x256x64xi32>
  return
}

// -----

// Bit-stream packing fills whole 32-bit words: K * bits must be a multiple of 32.
func.func @partial_word(%w: memref<64x100xf16>, %q: memref<64x10xi32>, %s: memref<64x1xf16>) {
  // expected-error @+1 {{operand 'dest': expected K*bits (100*3) to be a multiple of 32 to pack the weight}}
  humming.quantize %w into %q scales(%s : memref<64x1xf16>) {schema = #humming.weight_schema<type = ui3, scale = f16>} : memref<64x100xf16> -> memref<64x10xi32>
  return
}

// -----

func.func @missing_zp(%w: memref<256x512xf16>, %q: memref<256x64xi32>, %s: memref<256x4xf16>) {
  // expected-error @+1 {{expected operand 'zero_points' (the schema has zero_point = int)}}
  humming.quantize %w into %q scales(%s : memref<256x4xf16>) {schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>, zero_point = int>} : memref<256x512xf16> -> memref<256x64xi32>
  return
}

// -----

func.func @schema_kind(%w: memref<256x512xf16>, %q: memref<256x64xi32>) {
  // expected-error @+1 {{attribute 'schema' failed to satisfy constraint}}
  humming.quantize %w into %q {schema = #humming.layout<chip = "sm_80">} : memref<256x512xf16> -> memref<256x64xi32>
  return
}

// -----

// Integer zero points are packed along N: N * bits must fill whole words.
func.func @zp_partial_word(%w: memref<36x64xf16>, %q: memref<36x8xi32>, %s: memref<36x2xf16>, %z: memref<5x2xi32>) {
  // expected-error @+1 {{operand 'zero_points': expected N*bits (36*4) to be a multiple of 32 to pack zero points}}
  humming.quantize %w into %q scales(%s : memref<36x2xf16>) zero_points(%z : memref<5x2xi32>)
      {schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<32>, zero_point = int>}
      : memref<36x64xf16> -> memref<36x8xi32>
  return
}

// -----

func.func @activation_rank(%x: memref<4096xbf16>, %q: memref<4096xf8E4M3FN>, %s: memref<1xf32>) {
  // expected-error @+1 {{expected 'source' to be a rank-2 memref [M, K] with a static K, got 'memref<4096xbf16>'}}
  humming.quantize %x into %q scales(%s : memref<1xf32>) {schema = #humming.input_schema<type = f8E4M3FN, scaling = static>} : memref<4096xbf16> -> memref<4096xf8E4M3FN>
  return
}

// -----

// Codes past K pad per-token and static rows; per group K is a multiple of
// the group and there is nothing to pad.
func.func @group_padded(%x: memref<?x4096xbf16>, %q: memref<?x4112xf8E4M3FN>, %s: memref<?x32xf32>) {
  // expected-error @+1 {{expected 'dest' of K = 4096 columns with per-group scales (K is a multiple of the group: nothing to pad), got 'memref<?x4112xf8E4M3FN>'}}
  humming.quantize %x into %q scales(%s : memref<?x32xf32>)
      {schema = #humming.input_schema<type = f8E4M3FN, scaling = group<128>>}
      : memref<?x4096xbf16> -> memref<?x4112xf8E4M3FN>
  return
}
