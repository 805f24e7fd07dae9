// RUN: humming-opt %s | humming-opt | FileCheck %s
// RUN: humming-opt %s --mlir-print-op-generic | humming-opt | FileCheck %s

// The three routing layouts of humming.moe_gemm (E = 8, N = 1024, K = 2048).

// vLLM moe_align_block_size: gathered rows, output [M * top_k, N].
// CHECK-LABEL: func.func @moe_gemm_indexed_e8_top2_w4a16
// CHECK: humming.moe_gemm {{.*}} sorted_ids({{.*}}) expert_ids({{.*}}) num_tokens_padded({{.*}}) into
// CHECK-SAME: top_k = 2
func.func @moe_gemm_indexed_e8_top2_w4a16(%a: memref<?x2048xbf16>, %w: memref<8x1024x256xi32>,
    %s: memref<8x1024x16xbf16>, %ids: memref<?xi32>, %eids: memref<?xi32>, %ntp: memref<1xi32>,
    %c: memref<?x1024xbf16>) {
  humming.moe_gemm %a, %w scales(%s : memref<8x1024x16xbf16>)
      sorted_ids(%ids : memref<?xi32>) expert_ids(%eids : memref<?xi32>)
      num_tokens_padded(%ntp : memref<1xi32>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = bf16, granularity = group<128>, experts = 8>,
       input_schema = #humming.input_schema<type = bf16>,
       compute = #humming.compute<gemm = indexed>, top_k = 2, block_size = 16}
      : memref<?x2048xbf16>, memref<8x1024x256xi32> -> memref<?x1024xbf16>
  return
}

// Static M: the output has M * top_k rows.
// CHECK-LABEL: func.func @moe_gemm_indexed_static_m
func.func @moe_gemm_indexed_static_m(%a: memref<5x2048xbf16>, %w: memref<8x1024x256xi32>,
    %s: memref<8x1024x16xbf16>, %ids: memref<64xi32>, %eids: memref<4xi32>, %ntp: memref<1xi32>,
    %c: memref<40x1024xbf16>) {
  humming.moe_gemm %a, %w scales(%s : memref<8x1024x16xbf16>)
      sorted_ids(%ids : memref<64xi32>) expert_ids(%eids : memref<4xi32>)
      num_tokens_padded(%ntp : memref<1xi32>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = bf16, granularity = group<128>, experts = 8>,
       input_schema = #humming.input_schema<type = bf16>,
       compute = #humming.compute<gemm = indexed>, top_k = 8, block_size = 16}
      : memref<5x2048xbf16>, memref<8x1024x256xi32> -> memref<40x1024xbf16>
  return
}

// Rows sorted by expert; expert_layout holds E + 1 offsets (i64 allowed).
// CHECK-LABEL: func.func @moe_gemm_grouped_contiguous_fp8
// CHECK: expert_layout(%{{.*}} : memref<9xi64>)
func.func @moe_gemm_grouped_contiguous_fp8(%a: memref<?x2048xf8E4M3FN>, %w: memref<8x1024x512xi32>,
    %s: memref<8x8x16xf32>, %as: memref<?x16xf32>, %offs: memref<9xi64>, %c: memref<?x1024xbf16>) {
  humming.moe_gemm %a, %w scales(%s : memref<8x8x16xf32>) input_scale(%as : memref<?x16xf32>)
      expert_layout(%offs : memref<9xi64>) into %c
      {weight_schema = #humming.weight_schema<type = f8E4M3FN, scale = f32, granularity = block<128, 128>, experts = 8>,
       input_schema = #humming.input_schema<type = f8E4M3FN, scaling = group<128>>,
       compute = #humming.compute<gemm = grouped_contiguous>}
      : memref<?x2048xf8E4M3FN>, memref<8x1024x512xi32> -> memref<?x1024xbf16>
  return
}

// DeepEP low-latency layout: [E * max_tokens, K] with per-expert counts,
// per-expert global scales and biases.
// CHECK-LABEL: func.func @moe_gemm_grouped_masked_nvfp4
// CHECK: global_scale(%{{.*}} : memref<8xf32>) bias(%{{.*}} : memref<8x1024xbf16>)
func.func @moe_gemm_grouped_masked_nvfp4(%a: memref<64x2048xbf16>, %w: memref<8x1024x256xi32>,
    %s: memref<8x1024x128xf8E4M3FN>, %g: memref<8xf32>, %b: memref<8x1024xbf16>,
    %counts: memref<8xi32>, %c: memref<64x1024xbf16>) {
  humming.moe_gemm %a, %w scales(%s : memref<8x1024x128xf8E4M3FN>) global_scale(%g : memref<8xf32>)
      bias(%b : memref<8x1024xbf16>) expert_layout(%counts : memref<8xi32>) into %c
      {weight_schema = #humming.weight_schema<type = f4E2M1FN, scale = f8E4M3FN, granularity = group_tensor<16>,
                                              bias = true, experts = 8>,
       input_schema = #humming.input_schema<type = bf16>,
       compute = #humming.compute<gemm = grouped_masked>}
      : memref<64x2048xbf16>, memref<8x1024x256xi32> -> memref<64x1024xbf16>
  return
}

// grouped_masked without counts: every expert has all of its max_tokens
// rows (a batch of matmuls, one weight matrix each); 8-bit codes unpacked
// [E, N, K] as in humming.gemm.
// CHECK-LABEL: func.func @moe_gemm_grouped_masked_all_rows
// CHECK: humming.moe_gemm %{{.*}}, %{{.*}} scales(%{{.*}} : memref<4x1024x1xf16>) into
func.func @moe_gemm_grouped_masked_all_rows(%a: memref<?x2048xf16>, %w: memref<4x1024x2048xi8>,
    %s: memref<4x1024x1xf16>, %c: memref<?x1024xf16>) {
  humming.moe_gemm %a, %w scales(%s : memref<4x1024x1xf16>) into %c
      {weight_schema = #humming.weight_schema<type = si8, scale = f16, experts = 4>,
       input_schema = #humming.input_schema<type = f16>,
       compute = #humming.compute<gemm = grouped_masked>}
      : memref<?x2048xf16>, memref<4x1024x2048xi8> -> memref<?x1024xf16>
  return
}
