// RUN: humming-opt %s -split-input-file -verify-diagnostics

func.func @dynamic_top_k(%t: memref<?x?xi32>, %ids: memref<?xi32>, %eids: memref<?xi32>, %ntp: memref<1xi32>) {
  // expected-error @+1 {{expected 'topk_ids' to be a memref<?x{top_k}xi32> with a static top_k, got 'memref<?x?xi32>'}}
  humming.moe_align %t into %ids, %eids, %ntp {experts = 8, block_size = 16}
      : memref<?x?xi32> -> memref<?xi32>, memref<?xi32>, memref<1xi32>
  return
}

// -----

func.func @too_many_experts(%t: memref<?x2xi32>, %ids: memref<?xi32>, %eids: memref<?xi32>, %ntp: memref<1xi32>) {
  // expected-error @+1 {{expected at most 1024 experts (one thread of the routing block each), got 2048}}
  humming.moe_align %t into %ids, %eids, %ntp {experts = 2048, block_size = 16}
      : memref<?x2xi32> -> memref<?xi32>, memref<?xi32>, memref<1xi32>
  return
}

// -----

func.func @block_size(%t: memref<?x2xi32>, %ids: memref<?xi32>, %eids: memref<?xi32>, %ntp: memref<1xi32>) {
  // expected-error @+1 {{expected block_size to be a multiple of 16 in 16 .. 1024, got 40}}
  humming.moe_align %t into %ids, %eids, %ntp {experts = 8, block_size = 40}
      : memref<?x2xi32> -> memref<?xi32>, memref<?xi32>, memref<1xi32>
  return
}

// -----

func.func @top_k_above_experts(%t: memref<?x16xi32>, %ids: memref<?xi32>, %eids: memref<?xi32>, %ntp: memref<1xi32>) {
  // expected-error @+1 {{expected top_k (the second dimension of 'topk_ids') in 1 .. 8, got 16}}
  humming.moe_align %t into %ids, %eids, %ntp {experts = 8, block_size = 16}
      : memref<?x16xi32> -> memref<?xi32>, memref<?xi32>, memref<1xi32>
  return
}

// -----

func.func @sorted_too_short(%t: memref<4x2xi32>, %ids: memref<100xi32>, %eids: memref<?xi32>, %ntp: memref<1xi32>) {
  // expected-error @+1 {{expected 'sorted_ids' to hold at least M * top_k + experts * (block_size - 1) = 128 ids, got 'memref<100xi32>'}}
  humming.moe_align %t into %ids, %eids, %ntp {experts = 8, block_size = 16}
      : memref<4x2xi32> -> memref<100xi32>, memref<?xi32>, memref<1xi32>
  return
}

// -----

func.func @blocks_too_short(%t: memref<4x2xi32>, %ids: memref<128xi32>, %eids: memref<7xi32>, %ntp: memref<1xi32>) {
  // expected-error @+1 {{expected 'expert_ids' to hold at least 8 blocks (the sorted ids / block_size, rounded up), got 'memref<7xi32>'}}
  humming.moe_align %t into %ids, %eids, %ntp {experts = 8, block_size = 16}
      : memref<4x2xi32> -> memref<128xi32>, memref<7xi32>, memref<1xi32>
  return
}

// -----

func.func @padded_shape(%t: memref<?x2xi32>, %ids: memref<?xi32>, %eids: memref<?xi32>, %ntp: memref<2xi32>) {
  // expected-error @+1 {{expected 'num_tokens_padded' to be memref<1xi32>, got 'memref<2xi32>'}}
  humming.moe_align %t into %ids, %eids, %ntp {experts = 8, block_size = 16}
      : memref<?x2xi32> -> memref<?xi32>, memref<?xi32>, memref<2xi32>
  return
}
