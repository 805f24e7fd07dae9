// RUN: humming-opt %s -split-input-file -verify-diagnostics

func.func @dynamic_top_k(%t: memref<?x?xi32>, %p: memref<?xi32>, %l: memref<9xi32>) {
  // expected-error @+1 {{expected 'topk_ids' to be a memref<?x{top_k}xi32> with a static top_k, got 'memref<?x?xi32>'}}
  humming.moe_group %t into %p, %l {experts = 8} : memref<?x?xi32> -> memref<?xi32>, memref<9xi32>
  return
}

// -----

func.func @too_many_experts(%t: memref<?x2xi32>, %p: memref<?xi32>, %l: memref<2049xi32>) {
  // expected-error @+1 {{expected at most 1024 experts (one thread of the routing block each), got 2048}}
  humming.moe_group %t into %p, %l {experts = 2048} : memref<?x2xi32> -> memref<?xi32>, memref<2049xi32>
  return
}

// -----

func.func @top_k_above_experts(%t: memref<?x16xi32>, %p: memref<?xi32>, %l: memref<9xi32>) {
  // expected-error @+1 {{expected top_k (the second dimension of 'topk_ids') in 1 .. 8, got 16}}
  humming.moe_group %t into %p, %l {experts = 8} : memref<?x16xi32> -> memref<?xi32>, memref<9xi32>
  return
}

// -----

func.func @max_tokens_overflow(%t: memref<?x2xi32>, %p: memref<?xi32>, %l: memref<1024xi32>) {
  // expected-error @+1 {{expected experts * max_tokens to fit in i32 (at most 2^31 - 1 grouped rows), got 1024 * 4000000}}
  humming.moe_group %t into %p, %l {experts = 1024, max_tokens = 4000000} : memref<?x2xi32> -> memref<?xi32>, memref<1024xi32>
  return
}

// -----

func.func @positions_i64(%t: memref<?x2xi32>, %p: memref<?xi64>, %l: memref<9xi32>) {
  // expected-error @+1 {{expected 'positions' to be a 1-D memref of i32, got 'memref<?xi64>'}}
  humming.moe_group %t into %p, %l {experts = 8} : memref<?x2xi32> -> memref<?xi64>, memref<9xi32>
  return
}

// -----

func.func @contiguous_layout_size(%t: memref<?x2xi32>, %p: memref<?xi32>, %l: memref<8xi32>) {
  // expected-error @+1 {{expected 'expert_layout' to be memref<9xi32>, got 'memref<8xi32>'}}
  humming.moe_group %t into %p, %l {experts = 8} : memref<?x2xi32> -> memref<?xi32>, memref<8xi32>
  return
}

// -----

func.func @masked_layout_size(%t: memref<?x2xi32>, %p: memref<?xi32>, %l: memref<9xi32>) {
  // expected-error @+1 {{expected 'expert_layout' to be memref<8xi32>, got 'memref<9xi32>'}}
  humming.moe_group %t into %p, %l {experts = 8, max_tokens = 16} : memref<?x2xi32> -> memref<?xi32>, memref<9xi32>
  return
}

// -----

func.func @positions_too_short(%t: memref<4x2xi32>, %p: memref<7xi32>, %l: memref<9xi32>) {
  // expected-error @+1 {{expected 'positions' to hold at least M * top_k = 8 ids, got 'memref<7xi32>'}}
  humming.moe_group %t into %p, %l {experts = 8} : memref<4x2xi32> -> memref<7xi32>, memref<9xi32>
  return
}

// -----

func.func @odd_row_bytes(%x: memref<?x3xf16>, %p: memref<?xi32>, %y: memref<?x3xf16>) {
  // expected-error @+1 {{expected 'input' to be a memref<?x{N}x{type}> with a static N, rows a whole number of 4-byte words, got 'memref<?x3xf16>'}}
  humming.moe_permute %x positions(%p : memref<?xi32>) into %y {top_k = 2} : memref<?x3xf16> -> memref<?x3xf16>
  return
}

// -----

func.func @dynamic_row(%x: memref<?x?xf16>, %p: memref<?xi32>, %y: memref<?x?xf16>) {
  // expected-error @+1 {{expected 'input' to be a memref<?x{N}x{type}> with a static N, rows a whole number of 4-byte words, got 'memref<?x?xf16>'}}
  humming.moe_permute %x positions(%p : memref<?xi32>) into %y {gather} : memref<?x?xf16> -> memref<?x?xf16>
  return
}

// -----

func.func @other_type(%x: memref<?x64xf16>, %p: memref<?xi32>, %y: memref<?x64xbf16>) {
  // expected-error @+1 {{expected 'output' to have the rows of 'input' (64 x 'f16'), got 'memref<?x64xbf16>'}}
  humming.moe_permute %x positions(%p : memref<?xi32>) into %y {top_k = 2} : memref<?x64xf16> -> memref<?x64xbf16>
  return
}

// -----

func.func @other_width(%x: memref<?x64xf16>, %p: memref<?xi32>, %y: memref<?x32xf16>) {
  // expected-error @+1 {{expected 'output' to have the rows of 'input' (64 x 'f16'), got 'memref<?x32xf16>'}}
  humming.moe_permute %x positions(%p : memref<?xi32>) into %y {top_k = 2} : memref<?x64xf16> -> memref<?x32xf16>
  return
}

// -----

func.func @positions_2d(%x: memref<?x64xf16>, %p: memref<?x2xi32>, %y: memref<?x64xf16>) {
  // expected-error @+1 {{expected 'positions' to be a 1-D memref of i32, got 'memref<?x2xi32>'}}
  humming.moe_permute %x positions(%p : memref<?x2xi32>) into %y {top_k = 2} : memref<?x64xf16> -> memref<?x64xf16>
  return
}

// -----

func.func @gather_top_k(%x: memref<?x64xf16>, %p: memref<?xi32>, %y: memref<?x64xf16>) {
  // expected-error @+1 {{expected no top_k with gather (each output row takes one input row)}}
  humming.moe_permute %x positions(%p : memref<?xi32>) into %y {gather, top_k = 2} : memref<?x64xf16> -> memref<?x64xf16>
  return
}

// -----

func.func @gather_rows(%x: memref<?x64xf16>, %p: memref<16xi32>, %y: memref<8x64xf16>) {
  // expected-error @+1 {{expected 'output' to have one row per position (16), got 'memref<8x64xf16>'}}
  humming.moe_permute %x positions(%p : memref<16xi32>) into %y {gather} : memref<?x64xf16> -> memref<8x64xf16>
  return
}

// -----

func.func @scatter_positions(%x: memref<8x64xf16>, %p: memref<8xi32>, %y: memref<?x64xf16>) {
  // expected-error @+1 {{expected 'positions' to hold rows of 'input' * top_k = 16 ids, got 'memref<8xi32>'}}
  humming.moe_permute %x positions(%p : memref<8xi32>) into %y {top_k = 2} : memref<8x64xf16> -> memref<?x64xf16>
  return
}
