// RUN: humming-opt %s -split-input-file -verify-diagnostics

// Padding rules: weights are padded so the kernels see N % 64 == 0 and
// K % (512 / activation bits) == 0; the messages say to pad.

func.func @n_unaligned(%a: memref<?x4096xf16>, %w: memref<4000x512xi32>, %s: memref<4000x1xf16>, %c: memref<?x4000xf16>) {
  // expected-error @+1 {{expected the padded N to be a multiple of 64, got 4000 (pad N with pad_n)}}
  humming.gemm %a, %w scales(%s : memref<4000x1xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16>, input_schema = #humming.input_schema<type = f16>}
      : memref<?x4096xf16>, memref<4000x512xi32> -> memref<?x4000xf16>
  return
}

// -----

// 7392 = 231 * 32: fine for fp16 activations (K % 32), not for fp8 (K % 64).
func.func @k_unaligned_a8(%a: memref<?x7392xf8E4M3FN>, %w: memref<4096x924xi32>, %s: memref<4096x1xf16>, %as: memref<?x1xf32>, %c: memref<?x4096xf16>) {
  // expected-error @+1 {{expected the padded K to be a multiple of 64 for 8-bit activations, got 7392 (pad K with pad_k)}}
  humming.gemm %a, %w scales(%s : memref<4096x1xf16>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16>, input_schema = #humming.input_schema<type = f8E4M3FN, scaling = token>}
      : memref<?x7392xf8E4M3FN>, memref<4096x924xi32> -> memref<?x4096xf16>
  return
}

// -----

func.func @pad_k_granule(%a: memref<?x4088xf8E4M3FN>, %w: memref<4096x512xi32>, %s: memref<4096x1xf16>, %as: memref<?x1xf32>, %c: memref<?x4096xf16>) {
  // expected-error @+1 {{expected pad_k to be a multiple of 16 for 8-bit activations, got 8}}
  humming.gemm %a, %w scales(%s : memref<4096x1xf16>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, pad_k = 8>, input_schema = #humming.input_schema<type = f8E4M3FN, scaling = token>}
      : memref<?x4088xf8E4M3FN>, memref<4096x512xi32> -> memref<?x4096xf16>
  return
}

// -----

func.func @group_divides_k(%a: memref<?x4160xf16>, %w: memref<4096x520xi32>, %s: memref<4096x33xf16>, %c: memref<?x4096xf16>) {
  // expected-error @+1 {{expected the padded K to be a multiple of the scale group size 128, got 4160}}
  humming.gemm %a, %w scales(%s : memref<4096x33xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>>, input_schema = #humming.input_schema<type = f16>}
      : memref<?x4160xf16>, memref<4096x520xi32> -> memref<?x4096xf16>
  return
}

// -----

func.func @input_group_divides_k(%a: memref<?x4160xsi8>, %w: memref<4096x520xi32>, %s: memref<4096x1xf16>, %as: memref<?x33xf32>, %c: memref<?x4096xf16>) {
  // expected-error @+1 {{expected the padded K to be a multiple of the activation group size 128, got 4160}}
  humming.gemm %a, %w scales(%s : memref<4096x1xf16>) input_scale(%as : memref<?x33xf32>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16>, input_schema = #humming.input_schema<type = si8, scaling = group<128>>}
      : memref<?x4160xsi8>, memref<4096x520xi32> -> memref<?x4096xf16>
  return
}

// -----

func.func @pad_exceeds(%a: memref<?x4096xf16>, %w: memref<64x512xi32>, %s: memref<64x1xf16>, %c: memref<?x0xf16>) {
  // expected-error @+1 {{expected pad_n < N (64), got 64}}
  humming.gemm %a, %w scales(%s : memref<64x1xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, pad_n = 64>, input_schema = #humming.input_schema<type = f16>}
      : memref<?x4096xf16>, memref<64x512xi32> -> memref<?x0xf16>
  return
}

// -----

func.func @pad_k_exceeds(%a: memref<?x0xf16>, %w: memref<64x8xi32>, %s: memref<64x1xf16>, %c: memref<?x64xf16>) {
  // expected-error @+1 {{expected pad_k < K (64), got 64}}
  humming.gemm %a, %w scales(%s : memref<64x1xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, pad_k = 64>, input_schema = #humming.input_schema<type = f16>}
      : memref<?x0xf16>, memref<64x8xi32> -> memref<?x64xf16>
  return
}
