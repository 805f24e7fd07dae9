// RUN: humming-opt %s -split-input-file -verify-diagnostics

// Operand structure, shapes and element types of humming.gemm.

func.func @input_rank(%a: memref<4096xf16>, %w: memref<4096x512xi32>, %s: memref<4096x1xf16>, %c: memref<?x4096xf16>) {
  // expected-error @+1 {{expected 'input' to be a rank-2 memref [M, K], got 'memref<4096xf16>'}}
  humming.gemm %a, %w scales(%s : memref<4096x1xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16>, input_schema = #humming.input_schema<type = f16>}
      : memref<4096xf16>, memref<4096x512xi32> -> memref<?x4096xf16>
  return
}

// -----

func.func @dynamic_k(%a: memref<?x?xf16>, %w: memref<4096x512xi32>, %s: memref<4096x1xf16>, %c: memref<?x4096xf16>) {
  // expected-error @+1 {{expected a static K in 'input', got 'memref<?x?xf16>'}}
  humming.gemm %a, %w scales(%s : memref<4096x1xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16>, input_schema = #humming.input_schema<type = f16>}
      : memref<?x?xf16>, memref<4096x512xi32> -> memref<?x4096xf16>
  return
}

// -----

func.func @dynamic_n(%a: memref<?x4096xf16>, %w: memref<4096x512xi32>, %s: memref<4096x1xf16>, %c: memref<?x?xf16>) {
  // expected-error @+1 {{expected a static N in 'output', got 'memref<?x?xf16>'}}
  humming.gemm %a, %w scales(%s : memref<4096x1xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16>, input_schema = #humming.input_schema<type = f16>}
      : memref<?x4096xf16>, memref<4096x512xi32> -> memref<?x?xf16>
  return
}

// -----

func.func @input_type(%a: memref<?x4096xbf16>, %w: memref<4096x512xi32>, %s: memref<4096x1xf16>, %c: memref<?x4096xf16>) {
  // expected-error @+1 {{expected 'input' element type 'f16' (the input schema's type), got 'bf16'}}
  humming.gemm %a, %w scales(%s : memref<4096x1xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16>, input_schema = #humming.input_schema<type = f16>}
      : memref<?x4096xbf16>, memref<4096x512xi32> -> memref<?x4096xf16>
  return
}

// -----

func.func @output_f32(%a: memref<?x4096xf16>, %w: memref<4096x512xi32>, %s: memref<4096x1xf16>, %c: memref<?x4096xf32>) {
  // expected-error @+1 {{expected output type f16 or bf16, got f32}}
  humming.gemm %a, %w scales(%s : memref<4096x1xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16>, input_schema = #humming.input_schema<type = f16>}
      : memref<?x4096xf16>, memref<4096x512xi32> -> memref<?x4096xf32>
  return
}

// -----

func.func @moe_type_in_gemm(%a: memref<?x4096xf16>, %w: memref<4096x512xi32>, %s: memref<4096x1xf16>, %c: memref<?x4096xf16>) {
  // expected-error @+1 {{expected gemm = dense in humming.gemm (use humming.moe_gemm for MoE), got indexed}}
  humming.gemm %a, %w scales(%s : memref<4096x1xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16>, input_schema = #humming.input_schema<type = f16>,
       compute = #humming.compute<gemm = indexed>}
      : memref<?x4096xf16>, memref<4096x512xi32> -> memref<?x4096xf16>
  return
}

// -----

func.func @experts_in_gemm(%a: memref<?x4096xf16>, %w: memref<8x4096x512xi32>, %s: memref<8x4096x1xf16>, %c: memref<?x4096xf16>) {
  // expected-error @+1 {{expected experts = 0 in humming.gemm (use humming.moe_gemm for MoE), got 8}}
  humming.gemm %a, %w scales(%s : memref<8x4096x1xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, experts = 8>, input_schema = #humming.input_schema<type = f16>}
      : memref<?x4096xf16>, memref<8x4096x512xi32> -> memref<?x4096xf16>
  return
}

// -----

func.func @weight_shape(%a: memref<?x4096xf16>, %w: memref<4096x1024xi32>, %s: memref<4096x1xf16>, %c: memref<?x4096xf16>) {
  // expected-error @+1 {{expected 'weight' of shape [4096, 512], got 'memref<4096x1024xi32>'}}
  humming.gemm %a, %w scales(%s : memref<4096x1xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16>, input_schema = #humming.input_schema<type = f16>}
      : memref<?x4096xf16>, memref<4096x1024xi32> -> memref<?x4096xf16>
  return
}

// -----

func.func @weight_bytes_not_words(%a: memref<?x4096xf16>, %w: memref<4096x2048xi8>, %s: memref<4096x1xf16>, %c: memref<?x4096xf16>) {
  // expected-error @+1 {{expected 'weight' of shape [4096, 512], got 'memref<4096x2048xi8>'}}
  humming.gemm %a, %w scales(%s : memref<4096x1xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16>, input_schema = #humming.input_schema<type = f16>}
      : memref<?x4096xf16>, memref<4096x2048xi8> -> memref<?x4096xf16>
  return
}

// -----

func.func @weight_i64(%a: memref<?x4096xf16>, %w: memref<4096x512xi64>, %s: memref<4096x1xf16>, %c: memref<?x4096xf16>) {
  // expected-error @+1 {{expected 'weight' element type i32 (packed codes), got 'i64'}}
  humming.gemm %a, %w scales(%s : memref<4096x1xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16>, input_schema = #humming.input_schema<type = f16>}
      : memref<?x4096xf16>, memref<4096x512xi64> -> memref<?x4096xf16>
  return
}

// -----

func.func @missing_scales(%a: memref<?x4096xf16>, %w: memref<4096x512xi32>, %c: memref<?x4096xf16>) {
  // expected-error @+1 {{expected operand 'scales' (the schema has group scales)}}
  humming.gemm %a, %w into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>>, input_schema = #humming.input_schema<type = f16>}
      : memref<?x4096xf16>, memref<4096x512xi32> -> memref<?x4096xf16>
  return
}

// -----

func.func @scales_shape(%a: memref<?x4096xf16>, %w: memref<4096x512xi32>, %s: memref<32x4096xf16>, %c: memref<?x4096xf16>) {
  // expected-error @+1 {{expected 'scales' of shape [4096, 32], got 'memref<32x4096xf16>'}}
  humming.gemm %a, %w scales(%s : memref<32x4096xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>>, input_schema = #humming.input_schema<type = f16>}
      : memref<?x4096xf16>, memref<4096x512xi32> -> memref<?x4096xf16>
  return
}

// -----

func.func @scales_type(%a: memref<?x4096xf16>, %w: memref<4096x512xi32>, %s: memref<4096x32xbf16>, %c: memref<?x4096xf16>) {
  // expected-error @+1 {{expected 'scales' element type f16 (the schema's scale type), got 'bf16'}}
  humming.gemm %a, %w scales(%s : memref<4096x32xbf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>>, input_schema = #humming.input_schema<type = f16>}
      : memref<?x4096xf16>, memref<4096x512xi32> -> memref<?x4096xf16>
  return
}

// -----

func.func @tensor_scale_operand(%a: memref<?x4096xf16>, %w: memref<4096x1024xi32>, %s: memref<4096x1xf32>, %g: memref<1xf32>, %c: memref<?x4096xf16>) {
  // expected-error @+1 {{unexpected operand 'scales' (the schema has tensor scales)}}
  humming.gemm %a, %w scales(%s : memref<4096x1xf32>) global_scale(%g : memref<1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = f8E4M3FN, scale = f32, granularity = tensor>, input_schema = #humming.input_schema<type = f16>}
      : memref<?x4096xf16>, memref<4096x1024xi32> -> memref<?x4096xf16>
  return
}

// -----

func.func @missing_global(%a: memref<?x4096xf16>, %w: memref<4096x1024xi32>, %c: memref<?x4096xf16>) {
  // expected-error @+1 {{expected operand 'global_scale' (the schema has a global scale)}}
  humming.gemm %a, %w into %c
      {weight_schema = #humming.weight_schema<type = f8E4M3FN, scale = f32, granularity = tensor>, input_schema = #humming.input_schema<type = f16>}
      : memref<?x4096xf16>, memref<4096x1024xi32> -> memref<?x4096xf16>
  return
}

// -----

func.func @global_type(%a: memref<?x4096xf16>, %w: memref<4096x1024xi32>, %g: memref<1xf16>, %c: memref<?x4096xf16>) {
  // expected-error @+1 {{expected 'global_scale' element type f32, got 'f16'}}
  humming.gemm %a, %w global_scale(%g : memref<1xf16>) into %c
      {weight_schema = #humming.weight_schema<type = f8E4M3FN, scale = f32, granularity = tensor>, input_schema = #humming.input_schema<type = f16>}
      : memref<?x4096xf16>, memref<4096x1024xi32> -> memref<?x4096xf16>
  return
}

// -----

func.func @unexpected_zp(%a: memref<?x4096xf16>, %w: memref<4096x512xi32>, %s: memref<4096x1xf16>, %z: memref<512x1xi32>, %c: memref<?x4096xf16>) {
  // expected-error @+1 {{unexpected operand 'zero_points' (the schema has zero_point = none)}}
  humming.gemm %a, %w scales(%s : memref<4096x1xf16>) zero_points(%z : memref<512x1xi32>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16>, input_schema = #humming.input_schema<type = f16>}
      : memref<?x4096xf16>, memref<4096x512xi32> -> memref<?x4096xf16>
  return
}

// -----

// Integer zero points are packed along N: [N*b/32, groups].
func.func @zp_shape(%a: memref<?x4096xf16>, %w: memref<4096x512xi32>, %s: memref<4096x32xf16>, %z: memref<4096x32xi32>, %c: memref<?x4096xf16>) {
  // expected-error @+1 {{expected 'zero_points' of shape [512, 32], got 'memref<4096x32xi32>'}}
  humming.gemm %a, %w scales(%s : memref<4096x32xf16>) zero_points(%z : memref<4096x32xi32>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>, zero_point = int>, input_schema = #humming.input_schema<type = f16>}
      : memref<?x4096xf16>, memref<4096x512xi32> -> memref<?x4096xf16>
  return
}

// -----

func.func @float_zp_type(%a: memref<?x4096xf16>, %w: memref<4096x512xi32>, %s: memref<4096x32xf16>, %z: memref<4096x32xbf16>, %c: memref<?x4096xf16>) {
  // expected-error @+1 {{expected 'zero_points' element type equal to the output type, got 'bf16'}}
  humming.gemm %a, %w scales(%s : memref<4096x32xf16>) zero_points(%z : memref<4096x32xbf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>, zero_point = float>, input_schema = #humming.input_schema<type = f16>}
      : memref<?x4096xf16>, memref<4096x512xi32> -> memref<?x4096xf16>
  return
}

// -----

func.func @missing_bias(%a: memref<?x4096xf16>, %w: memref<4096x512xi32>, %s: memref<4096x1xf16>, %c: memref<?x4096xf16>) {
  // expected-error @+1 {{expected operand 'bias' (the schema has bias = true)}}
  humming.gemm %a, %w scales(%s : memref<4096x1xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, bias = true>, input_schema = #humming.input_schema<type = f16>}
      : memref<?x4096xf16>, memref<4096x512xi32> -> memref<?x4096xf16>
  return
}

// -----

// Bias has the padded N, like every weight-side tensor.
func.func @bias_shape(%a: memref<?x4096xf16>, %w: memref<4096x512xi32>, %s: memref<4096x1xf16>, %b: memref<4032xf16>, %c: memref<?x4032xf16>) {
  // expected-error @+1 {{expected 'bias' of shape [4096], got 'memref<4032xf16>'}}
  humming.gemm %a, %w scales(%s : memref<4096x1xf16>) bias(%b : memref<4032xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, bias = true, pad_n = 64>, input_schema = #humming.input_schema<type = f16>}
      : memref<?x4096xf16>, memref<4096x512xi32> -> memref<?x4032xf16>
  return
}

// -----

func.func @missing_input_scale(%a: memref<?x4096xf8E4M3FN>, %w: memref<4096x512xi32>, %s: memref<4096x1xf16>, %c: memref<?x4096xf16>) {
  // expected-error @+1 {{expected operand 'input_scale' (the input schema has scaling = token)}}
  humming.gemm %a, %w scales(%s : memref<4096x1xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16>, input_schema = #humming.input_schema<type = f8E4M3FN, scaling = token>}
      : memref<?x4096xf8E4M3FN>, memref<4096x512xi32> -> memref<?x4096xf16>
  return
}

// -----

func.func @input_scale_on_f16(%a: memref<?x4096xf16>, %w: memref<4096x512xi32>, %s: memref<4096x1xf16>, %as: memref<?x1xf32>, %c: memref<?x4096xf16>) {
  // expected-error @+1 {{unexpected operand 'input_scale' (the input schema has scaling = none)}}
  humming.gemm %a, %w scales(%s : memref<4096x1xf16>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16>, input_schema = #humming.input_schema<type = f16>}
      : memref<?x4096xf16>, memref<4096x512xi32> -> memref<?x4096xf16>
  return
}

// -----

func.func @input_scale_groups(%a: memref<?x4096xsi8>, %w: memref<4096x512xi32>, %s: memref<4096x1xf16>, %as: memref<?x1xf32>, %c: memref<?x4096xf16>) {
  // expected-error @+1 {{expected 'input_scale' of shape [?, 32], got 'memref<?x1xf32>'}}
  humming.gemm %a, %w scales(%s : memref<4096x1xf16>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16>, input_schema = #humming.input_schema<type = si8, scaling = group<128>>}
      : memref<?x4096xsi8>, memref<4096x512xi32> -> memref<?x4096xf16>
  return
}

// -----

func.func @output_rows(%a: memref<16x4096xf16>, %w: memref<4096x512xi32>, %s: memref<4096x1xf16>, %c: memref<32x4096xf16>) {
  // expected-error @+1 {{expected 'output' to have 16 rows (one per input row), got 'memref<32x4096xf16>'}}
  humming.gemm %a, %w scales(%s : memref<4096x1xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16>, input_schema = #humming.input_schema<type = f16>}
      : memref<16x4096xf16>, memref<4096x512xi32> -> memref<32x4096xf16>
  return
}

// -----

func.func @prepared_gptq(%a: memref<?x4096xf16>, %w: memref<256x8192xi32>, %s: memref<32x4096xf16>, %c: memref<?x4096xf16>) {
  // expected-error @+1 {{expected format = canonical with a prepared layout, got gptq}}
  humming.gemm %a, %w scales(%s : memref<32x4096xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>, format = gptq>, input_schema = #humming.input_schema<type = f16>,
       layout = #humming.layout<mma = wgmma, chip = "sm_90a">}
      : memref<?x4096xf16>, memref<256x8192xi32> -> memref<?x4096xf16>
  return
}

// -----

// The prepared weight is [K/P, N*P*b/32] with P = 256/16: a canonical one is rejected.
func.func @prepared_shape(%a: memref<?x4096xf16>, %w: memref<4096x512xi32>, %s: memref<32x4096xf16>, %c: memref<?x4096xf16>) {
  // expected-error @+1 {{expected 'weight' of shape [256, 8192], got 'memref<4096x512xi32>'}}
  humming.gemm %a, %w scales(%s : memref<32x4096xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>>, input_schema = #humming.input_schema<type = f16>,
       layout = #humming.layout<mma = wgmma, chip = "sm_90a">}
      : memref<?x4096xf16>, memref<4096x512xi32> -> memref<?x4096xf16>
  return
}

// -----

func.func @output_rank(%a: memref<?x4096xf16>, %w: memref<4096x512xi32>, %s: memref<4096x1xf16>, %c: memref<4096xf16>) {
  // expected-error @+1 {{expected 'output' to be a rank-2 memref [M, N], got 'memref<4096xf16>'}}
  humming.gemm %a, %w scales(%s : memref<4096x1xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16>, input_schema = #humming.input_schema<type = f16>}
      : memref<?x4096xf16>, memref<4096x512xi32> -> memref<4096xf16>
  return
}

// -----

// A K past 2^40 would overflow the expected shapes (K * bits).
func.func @huge_k(%a: memref<?x4611686018427387904xf16>, %w: memref<4611686018427387904x512xi32>, %s: memref<4096x1xf16>, %c: memref<?x4096xf16>) {
  // expected-error @+1 {{operand 'weight': expected N and K in 1 .. 1099511627776, got N = 4096, K = 4611686018427387904}}
  humming.gemm %a, %w scales(%s : memref<4096x1xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16>,
       input_schema = #humming.input_schema<type = f16>}
      : memref<?x4611686018427387904xf16>, memref<4611686018427387904x512xi32> -> memref<?x4096xf16>
  return
}

// -----

// 8-bit codes given unpacked ([N, K]) must be of the schema's 8-bit type.
func.func @unpacked_codes_of_another_type(%x: memref<?x128xf16>, %w: memref<64x128xi8>, %s: memref<64x1xf16>, %y: memref<?x64xf16>) {
  // expected-error @+1 {{expected 'weight' element type f8E4M3FN (unpacked 8-bit codes), got 'i8'}}
  humming.gemm %x, %w scales(%s : memref<64x1xf16>) into %y
      {weight_schema = #humming.weight_schema<type = f8E4M3FN, scale = f16>, input_schema = #humming.input_schema<type = f16>}
      : memref<?x128xf16>, memref<64x128xi8> -> memref<?x64xf16>
  return
}

// -----

func.func @unpacked_codes_of_another_shape(%x: memref<?x128xf16>, %w: memref<64x64xi8>, %s: memref<64x1xf16>, %y: memref<?x64xf16>) {
  // expected-error @+1 {{expected 'weight' of shape [64, 128], got 'memref<64x64xi8>'}}
  humming.gemm %x, %w scales(%s : memref<64x1xf16>) into %y
      {weight_schema = #humming.weight_schema<type = si8, scale = f16>, input_schema = #humming.input_schema<type = f16>}
      : memref<?x128xf16>, memref<64x64xi8> -> memref<?x64xf16>
  return
}

// -----

// Unpacked codes are for 8-bit schemas only: 4-bit codes stay packed.
func.func @unpacked_narrow_codes(%x: memref<?x128xf16>, %w: memref<64x128xi4>, %s: memref<64x1xf16>, %y: memref<?x64xf16>) {
  // expected-error @+1 {{expected 'weight' of shape [64, 16], got 'memref<64x128xi4>'}}
  humming.gemm %x, %w scales(%s : memref<64x1xf16>) into %y
      {weight_schema = #humming.weight_schema<type = si4, scale = f16>, input_schema = #humming.input_schema<type = f16>}
      : memref<?x128xf16>, memref<64x128xi4> -> memref<?x64xf16>
  return
}
