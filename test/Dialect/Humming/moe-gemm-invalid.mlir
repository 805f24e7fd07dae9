// RUN: humming-opt %s -split-input-file -verify-diagnostics

func.func @dense_type(%a: memref<?x2048xbf16>, %w: memref<8x1024x256xi32>, %s: memref<8x1024x1xbf16>, %c: memref<?x1024xbf16>) {
  // expected-error @+1 {{expected gemm = indexed, grouped_contiguous or grouped_masked in humming.moe_gemm, got dense}}
  humming.moe_gemm %a, %w scales(%s : memref<8x1024x1xbf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = bf16, experts = 8>, input_schema = #humming.input_schema<type = bf16>,
       compute = #humming.compute<>}
      : memref<?x2048xbf16>, memref<8x1024x256xi32> -> memref<?x1024xbf16>
  return
}

// -----

func.func @no_experts(%a: memref<?x2048xbf16>, %w: memref<1024x256xi32>, %s: memref<1024x1xbf16>, %offs: memref<1xi32>, %c: memref<?x1024xbf16>) {
  // expected-error @+1 {{expected experts >= 1 in the weight schema of humming.moe_gemm, got 0}}
  humming.moe_gemm %a, %w scales(%s : memref<1024x1xbf16>) expert_layout(%offs : memref<1xi32>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = bf16>, input_schema = #humming.input_schema<type = bf16>,
       compute = #humming.compute<gemm = grouped_contiguous>}
      : memref<?x2048xbf16>, memref<1024x256xi32> -> memref<?x1024xbf16>
  return
}

// -----

func.func @indexed_without_ids(%a: memref<?x2048xbf16>, %w: memref<8x1024x256xi32>, %s: memref<8x1024x1xbf16>, %offs: memref<9xi32>, %c: memref<?x1024xbf16>) {
  // expected-error @+1 {{expected operand 'sorted_ids' (gemm = indexed)}}
  humming.moe_gemm %a, %w scales(%s : memref<8x1024x1xbf16>) expert_layout(%offs : memref<9xi32>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = bf16, experts = 8>, input_schema = #humming.input_schema<type = bf16>,
       compute = #humming.compute<gemm = indexed>, top_k = 2, block_size = 16}
      : memref<?x2048xbf16>, memref<8x1024x256xi32> -> memref<?x1024xbf16>
  return
}

// -----

func.func @grouped_with_ids(%a: memref<?x2048xbf16>, %w: memref<8x1024x256xi32>, %s: memref<8x1024x1xbf16>, %ids: memref<?xi32>, %c: memref<?x1024xbf16>) {
  // expected-error @+1 {{unexpected operand 'sorted_ids' (gemm = grouped_contiguous)}}
  humming.moe_gemm %a, %w scales(%s : memref<8x1024x1xbf16>) sorted_ids(%ids : memref<?xi32>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = bf16, experts = 8>, input_schema = #humming.input_schema<type = bf16>,
       compute = #humming.compute<gemm = grouped_contiguous>}
      : memref<?x2048xbf16>, memref<8x1024x256xi32> -> memref<?x1024xbf16>
  return
}

// -----

func.func @missing_top_k(%a: memref<?x2048xbf16>, %w: memref<8x1024x256xi32>, %s: memref<8x1024x1xbf16>, %ids: memref<?xi32>, %eids: memref<?xi32>, %ntp: memref<1xi32>, %c: memref<?x1024xbf16>) {
  // expected-error @+1 {{expected a 'top_k' attribute with gemm = indexed}}
  humming.moe_gemm %a, %w scales(%s : memref<8x1024x1xbf16>) sorted_ids(%ids : memref<?xi32>) expert_ids(%eids : memref<?xi32>)
      num_tokens_padded(%ntp : memref<1xi32>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = bf16, experts = 8>, input_schema = #humming.input_schema<type = bf16>,
       compute = #humming.compute<gemm = indexed>}
      : memref<?x2048xbf16>, memref<8x1024x256xi32> -> memref<?x1024xbf16>
  return
}

// -----

func.func @top_k_grouped(%a: memref<?x2048xbf16>, %w: memref<8x1024x256xi32>, %s: memref<8x1024x1xbf16>, %offs: memref<9xi32>, %c: memref<?x1024xbf16>) {
  // expected-error @+1 {{unexpected 'top_k' attribute with gemm = grouped_contiguous (rows are already per expert)}}
  humming.moe_gemm %a, %w scales(%s : memref<8x1024x1xbf16>) expert_layout(%offs : memref<9xi32>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = bf16, experts = 8>, input_schema = #humming.input_schema<type = bf16>,
       compute = #humming.compute<gemm = grouped_contiguous>, top_k = 2}
      : memref<?x2048xbf16>, memref<8x1024x256xi32> -> memref<?x1024xbf16>
  return
}

// -----

func.func @zero_top_k(%a: memref<?x2048xbf16>, %w: memref<8x1024x256xi32>, %s: memref<8x1024x1xbf16>, %ids: memref<?xi32>, %eids: memref<?xi32>, %ntp: memref<1xi32>, %c: memref<?x1024xbf16>) {
  // expected-error @+3 {{attribute 'top_k' failed to satisfy constraint: 64-bit signless integer attribute whose minimum value is 1}}
  humming.moe_gemm %a, %w scales(%s : memref<8x1024x1xbf16>) sorted_ids(%ids : memref<?xi32>) expert_ids(%eids : memref<?xi32>)
      num_tokens_padded(%ntp : memref<1xi32>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = bf16, experts = 8>, input_schema = #humming.input_schema<type = bf16>,
       compute = #humming.compute<gemm = indexed>, top_k = 0, block_size = 16}
      : memref<?x2048xbf16>, memref<8x1024x256xi32> -> memref<?x1024xbf16>
  return
}

// -----

func.func @sorted_ids_i64(%a: memref<?x2048xbf16>, %w: memref<8x1024x256xi32>, %s: memref<8x1024x1xbf16>, %ids: memref<?xi64>, %eids: memref<?xi32>, %ntp: memref<1xi32>, %c: memref<?x1024xbf16>) {
  // expected-error @+1 {{expected 'sorted_ids' to be a 1-D memref of i32, got 'memref<?xi64>'}}
  humming.moe_gemm %a, %w scales(%s : memref<8x1024x1xbf16>) sorted_ids(%ids : memref<?xi64>) expert_ids(%eids : memref<?xi32>)
      num_tokens_padded(%ntp : memref<1xi32>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = bf16, experts = 8>, input_schema = #humming.input_schema<type = bf16>,
       compute = #humming.compute<gemm = indexed>, top_k = 2, block_size = 16}
      : memref<?x2048xbf16>, memref<8x1024x256xi32> -> memref<?x1024xbf16>
  return
}

// -----

func.func @ntp_shape(%a: memref<?x2048xbf16>, %w: memref<8x1024x256xi32>, %s: memref<8x1024x1xbf16>, %ids: memref<?xi32>, %eids: memref<?xi32>, %ntp: memref<2xi32>, %c: memref<?x1024xbf16>) {
  // expected-error @+1 {{expected 'num_tokens_padded' to be memref<1xi32>, got 'memref<2xi32>'}}
  humming.moe_gemm %a, %w scales(%s : memref<8x1024x1xbf16>) sorted_ids(%ids : memref<?xi32>) expert_ids(%eids : memref<?xi32>)
      num_tokens_padded(%ntp : memref<2xi32>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = bf16, experts = 8>, input_schema = #humming.input_schema<type = bf16>,
       compute = #humming.compute<gemm = indexed>, top_k = 2, block_size = 16}
      : memref<?x2048xbf16>, memref<8x1024x256xi32> -> memref<?x1024xbf16>
  return
}

// -----

func.func @offsets_size(%a: memref<?x2048xbf16>, %w: memref<8x1024x256xi32>, %s: memref<8x1024x1xbf16>, %offs: memref<8xi32>, %c: memref<?x1024xbf16>) {
  // expected-error @+1 {{expected 'expert_layout' to be memref<9xi32 or i64>, got 'memref<8xi32>'}}
  humming.moe_gemm %a, %w scales(%s : memref<8x1024x1xbf16>) expert_layout(%offs : memref<8xi32>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = bf16, experts = 8>, input_schema = #humming.input_schema<type = bf16>,
       compute = #humming.compute<gemm = grouped_contiguous>}
      : memref<?x2048xbf16>, memref<8x1024x256xi32> -> memref<?x1024xbf16>
  return
}

// -----

func.func @counts_size(%a: memref<64x2048xbf16>, %w: memref<8x1024x256xi32>, %s: memref<8x1024x1xbf16>, %counts: memref<9xi32>, %c: memref<64x1024xbf16>) {
  // expected-error @+1 {{expected 'expert_layout' to be memref<8xi32>, got 'memref<9xi32>'}}
  humming.moe_gemm %a, %w scales(%s : memref<8x1024x1xbf16>) expert_layout(%counts : memref<9xi32>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = bf16, experts = 8>, input_schema = #humming.input_schema<type = bf16>,
       compute = #humming.compute<gemm = grouped_masked>}
      : memref<64x2048xbf16>, memref<8x1024x256xi32> -> memref<64x1024xbf16>
  return
}

// -----

func.func @masked_rows(%a: memref<60x2048xbf16>, %w: memref<8x1024x256xi32>, %s: memref<8x1024x1xbf16>, %counts: memref<8xi32>, %c: memref<60x1024xbf16>) {
  // expected-error @+1 {{expected the rows of 'input' to be E * max_tokens with E = 8, got 60}}
  humming.moe_gemm %a, %w scales(%s : memref<8x1024x1xbf16>) expert_layout(%counts : memref<8xi32>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = bf16, experts = 8>, input_schema = #humming.input_schema<type = bf16>,
       compute = #humming.compute<gemm = grouped_masked>}
      : memref<60x2048xbf16>, memref<8x1024x256xi32> -> memref<60x1024xbf16>
  return
}

// -----

func.func @indexed_rows(%a: memref<5x2048xbf16>, %w: memref<8x1024x256xi32>, %s: memref<8x1024x1xbf16>, %ids: memref<?xi32>, %eids: memref<?xi32>, %ntp: memref<1xi32>, %c: memref<5x1024xbf16>) {
  // expected-error @+1 {{expected 'output' to have 10 rows (M * top_k), got 'memref<5x1024xbf16>'}}
  humming.moe_gemm %a, %w scales(%s : memref<8x1024x1xbf16>) sorted_ids(%ids : memref<?xi32>) expert_ids(%eids : memref<?xi32>)
      num_tokens_padded(%ntp : memref<1xi32>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = bf16, experts = 8>, input_schema = #humming.input_schema<type = bf16>,
       compute = #humming.compute<gemm = indexed>, top_k = 2, block_size = 16}
      : memref<5x2048xbf16>, memref<8x1024x256xi32> -> memref<5x1024xbf16>
  return
}

// -----

func.func @expert_dim(%a: memref<?x2048xbf16>, %w: memref<1024x256xi32>, %s: memref<8x1024x1xbf16>, %offs: memref<9xi32>, %c: memref<?x1024xbf16>) {
  // expected-error @+1 {{expected 'weight' of shape [8, 1024, 256], got 'memref<1024x256xi32>'}}
  humming.moe_gemm %a, %w scales(%s : memref<8x1024x1xbf16>) expert_layout(%offs : memref<9xi32>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = bf16, experts = 8>, input_schema = #humming.input_schema<type = bf16>,
       compute = #humming.compute<gemm = grouped_contiguous>}
      : memref<?x2048xbf16>, memref<1024x256xi32> -> memref<?x1024xbf16>
  return
}

// -----

func.func @global_per_expert(%a: memref<?x2048xbf16>, %w: memref<8x1024x256xi32>, %s: memref<8x1024x1xbf16>, %g: memref<1xf32>, %offs: memref<9xi32>, %c: memref<?x1024xbf16>) {
  // expected-error @+1 {{expected 'global_scale' of shape [8], got 'memref<1xf32>'}}
  humming.moe_gemm %a, %w scales(%s : memref<8x1024x1xbf16>) global_scale(%g : memref<1xf32>) expert_layout(%offs : memref<9xi32>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = bf16, global_scale = true, experts = 8>, input_schema = #humming.input_schema<type = bf16>,
       compute = #humming.compute<gemm = grouped_contiguous>}
      : memref<?x2048xbf16>, memref<8x1024x256xi32> -> memref<?x1024xbf16>
  return
}

// -----

func.func @multicast_moe(%a: memref<?x2048xbf16>, %w: memref<8x1024x256xi32>, %s: memref<8x1024x1xbf16>, %offs: memref<9xi32>, %c: memref<?x1024xbf16>) {
  // expected-error @+1 {{tile_configs[0]: expected a dense GEMM with multicast, got grouped_contiguous}}
  humming.moe_gemm %a, %w scales(%s : memref<8x1024x1xbf16>) expert_layout(%offs : memref<9xi32>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = bf16, experts = 8>, input_schema = #humming.input_schema<type = bf16>,
       compute = #humming.compute<gemm = grouped_contiguous>,
       tile_configs = [#humming.tile_config<block = [64, 256, 64], warp = [64, 32, 64], mma = wgmma, mbarrier = true, tma = [a, b], multicast_a = 2>]}
      : memref<?x2048xbf16>, memref<8x1024x256xi32> -> memref<?x1024xbf16>
  return
}

// -----

// The warp-specialized producer's L2 prefetch reads a dense layer's
// weights only.
func.func @l2_prefetch_ws_moe(%a: memref<?x2048xbf16>, %w: memref<8x1024x256xi32>, %s: memref<8x1024x1xbf16>, %offs: memref<9xi32>, %c: memref<?x1024xbf16>) {
  // expected-error @+1 {{tile_configs[0]: expected a dense GEMM with l2_prefetch in a warp-specialized kernel (its producer prefetches the block's weights and activation box), got grouped_contiguous}}
  humming.moe_gemm %a, %w scales(%s : memref<8x1024x1xbf16>) expert_layout(%offs : memref<9xi32>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = bf16, experts = 8>, input_schema = #humming.input_schema<type = bf16>,
       compute = #humming.compute<gemm = grouped_contiguous>,
       tile_configs = [#humming.tile_config<block = [64, 256, 64], warp = [64, 32, 64], mma = wgmma, warp_specialized = true, mbarrier = true, l2_prefetch = 2>]}
      : memref<?x2048xbf16>, memref<8x1024x256xi32> -> memref<?x1024xbf16>
  return
}

// -----

func.func @indexed_without_block_size(%a: memref<?x2048xbf16>, %w: memref<8x1024x256xi32>, %s: memref<8x1024x1xbf16>, %ids: memref<?xi32>, %eids: memref<?xi32>, %ntp: memref<1xi32>, %c: memref<?x1024xbf16>) {
  // expected-error @+1 {{expected a 'block_size' attribute with gemm = indexed (sorted_ids pads each expert to a multiple of it)}}
  humming.moe_gemm %a, %w scales(%s : memref<8x1024x1xbf16>) sorted_ids(%ids : memref<?xi32>) expert_ids(%eids : memref<?xi32>) num_tokens_padded(%ntp : memref<1xi32>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = bf16, experts = 8>, input_schema = #humming.input_schema<type = bf16>,
       compute = #humming.compute<gemm = indexed>, top_k = 2}
      : memref<?x2048xbf16>, memref<8x1024x256xi32> -> memref<?x1024xbf16>
  return
}

// -----

func.func @block_size_not_16(%a: memref<?x2048xbf16>, %w: memref<8x1024x256xi32>, %s: memref<8x1024x1xbf16>, %ids: memref<?xi32>, %eids: memref<?xi32>, %ntp: memref<1xi32>, %c: memref<?x1024xbf16>) {
  // expected-error @+1 {{expected block_size to be a multiple of 16 (the kernels' blocks of 16, 32, 64 or 128 rows divide it), got 24}}
  humming.moe_gemm %a, %w scales(%s : memref<8x1024x1xbf16>) sorted_ids(%ids : memref<?xi32>) expert_ids(%eids : memref<?xi32>) num_tokens_padded(%ntp : memref<1xi32>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = bf16, experts = 8>, input_schema = #humming.input_schema<type = bf16>,
       compute = #humming.compute<gemm = indexed>, top_k = 2, block_size = 24}
      : memref<?x2048xbf16>, memref<8x1024x256xi32> -> memref<?x1024xbf16>
  return
}

// -----

func.func @block_size_grouped(%a: memref<?x2048xbf16>, %w: memref<8x1024x256xi32>, %s: memref<8x1024x1xbf16>, %offs: memref<9xi32>, %c: memref<?x1024xbf16>) {
  // expected-error @+1 {{unexpected 'block_size' attribute with gemm = grouped_contiguous (only sorted_ids are padded per expert)}}
  humming.moe_gemm %a, %w scales(%s : memref<8x1024x1xbf16>) expert_layout(%offs : memref<9xi32>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = bf16, experts = 8>, input_schema = #humming.input_schema<type = bf16>,
       compute = #humming.compute<gemm = grouped_contiguous>, block_size = 16}
      : memref<?x2048xbf16>, memref<8x1024x256xi32> -> memref<?x1024xbf16>
  return
}

// -----

func.func @router_weights_rows(%a: memref<5x2048xbf16>, %w: memref<8x1024x256xi32>, %s: memref<8x1024x1xbf16>, %ids: memref<?xi32>, %eids: memref<?xi32>, %ntp: memref<1xi32>, %rw: memref<5xf32>, %c: memref<10x1024xbf16>) {
  // expected-error @+1 {{expected 'topk_weights' to be a 1-D or 2-D memref of f32 with one weight per output row (10), got 'memref<5xf32>'}}
  humming.moe_gemm %a, %w scales(%s : memref<8x1024x1xbf16>) sorted_ids(%ids : memref<?xi32>) expert_ids(%eids : memref<?xi32>) num_tokens_padded(%ntp : memref<1xi32>) topk_weights(%rw : memref<5xf32>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = bf16, experts = 8>, input_schema = #humming.input_schema<type = bf16>,
       compute = #humming.compute<gemm = indexed>, top_k = 2, block_size = 16}
      : memref<5x2048xbf16>, memref<8x1024x256xi32> -> memref<10x1024xbf16>
  return
}

// -----

func.func @router_weights_type(%a: memref<?x2048xbf16>, %w: memref<8x1024x256xi32>, %s: memref<8x1024x1xbf16>, %offs: memref<9xi32>, %rw: memref<?xbf16>, %c: memref<?x1024xbf16>) {
  // expected-error @+1 {{expected 'topk_weights' to be a 1-D or 2-D memref of f32 with one weight per output row, got 'memref<?xbf16>'}}
  humming.moe_gemm %a, %w scales(%s : memref<8x1024x1xbf16>) expert_layout(%offs : memref<9xi32>) topk_weights(%rw : memref<?xbf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = bf16, experts = 8>, input_schema = #humming.input_schema<type = bf16>,
       compute = #humming.compute<gemm = grouped_contiguous>}
      : memref<?x2048xbf16>, memref<8x1024x256xi32> -> memref<?x1024xbf16>
  return
}

// -----

func.func @contiguous_without_offsets(%a: memref<?x2048xbf16>, %w: memref<8x1024x256xi32>, %s: memref<8x1024x1xbf16>, %c: memref<?x1024xbf16>) {
  // expected-error @+1 {{expected operand 'expert_layout' (gemm = grouped_contiguous)}}
  humming.moe_gemm %a, %w scales(%s : memref<8x1024x1xbf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = bf16, experts = 8>, input_schema = #humming.input_schema<type = bf16>,
       compute = #humming.compute<gemm = grouped_contiguous>}
      : memref<?x2048xbf16>, memref<8x1024x256xi32> -> memref<?x1024xbf16>
  return
}

// -----

func.func @indexed_with_layout(%a: memref<?x2048xbf16>, %w: memref<8x1024x256xi32>, %s: memref<8x1024x1xbf16>,
    %ids: memref<?xi32>, %eids: memref<?xi32>, %pad: memref<1xi32>, %offs: memref<9xi32>, %c: memref<?x1024xbf16>) {
  // expected-error @+1 {{unexpected operand 'expert_layout' (gemm = indexed)}}
  humming.moe_gemm %a, %w scales(%s : memref<8x1024x1xbf16>) sorted_ids(%ids : memref<?xi32>) expert_ids(%eids : memref<?xi32>)
      num_tokens_padded(%pad : memref<1xi32>) expert_layout(%offs : memref<9xi32>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = bf16, experts = 8>, input_schema = #humming.input_schema<type = bf16>,
       compute = #humming.compute<gemm = indexed>, top_k = 2, block_size = 16}
      : memref<?x2048xbf16>, memref<8x1024x256xi32> -> memref<?x1024xbf16>
  return
}

// -----

// Unpacked 8-bit codes per expert: [E, N, K] of the codes' type.
func.func @unpacked_codes_shape(%a: memref<?x2048xf16>, %w: memref<4x1024x1024xi8>, %s: memref<4x1024x1xf16>, %c: memref<?x1024xf16>) {
  // expected-error @+1 {{expected 'weight' of shape [4, 1024, 2048], got 'memref<4x1024x1024xi8>'}}
  humming.moe_gemm %a, %w scales(%s : memref<4x1024x1xf16>) into %c
      {weight_schema = #humming.weight_schema<type = si8, scale = f16, experts = 4>, input_schema = #humming.input_schema<type = f16>,
       compute = #humming.compute<gemm = grouped_masked>}
      : memref<?x2048xf16>, memref<4x1024x1024xi8> -> memref<?x1024xf16>
  return
}
