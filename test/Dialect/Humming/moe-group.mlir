// RUN: humming-opt %s | humming-opt | FileCheck %s
// RUN: humming-opt %s --mlir-print-op-generic | humming-opt | FileCheck %s

// Top-k ids into the grouped routings and the rows moved around a grouped
// GEMM: contiguous (offsets [E + 1]), masked (counts [E], max_tokens per
// expert), the activations scattered by top_k, the router weights as
// one-word rows, the output gathered back.

// CHECK-LABEL: func.func @grouped_contiguous
// CHECK: humming.moe_group %{{.*}} into %{{.*}}, %{{.*}} {experts = 128 : i64} : memref<?x8xi32> -> memref<?xi32>, memref<129xi32>
// CHECK: humming.moe_permute %{{.*}} positions(%{{.*}} : memref<?xi32>) into %{{.*}} {top_k = 8 : i64} : memref<?x2048xbf16> -> memref<?x2048xbf16>
// CHECK: humming.moe_permute %{{.*}} positions(%{{.*}} : memref<?xi32>) into %{{.*}} {top_k = 1 : i64} : memref<?x1xf32> -> memref<?x1xf32>
// CHECK: humming.moe_permute %{{.*}} positions(%{{.*}} : memref<?xi32>) into %{{.*}} {gather} : memref<?x1536xbf16> -> memref<?x1536xbf16>
func.func @grouped_contiguous(%topk: memref<?x8xi32>, %pos: memref<?xi32>, %offs: memref<129xi32>,
    %x: memref<?x2048xbf16>, %xs: memref<?x2048xbf16>, %w: memref<?x1xf32>, %ws: memref<?x1xf32>,
    %ys: memref<?x1536xbf16>, %y: memref<?x1536xbf16>) {
  humming.moe_group %topk into %pos, %offs {experts = 128}
      : memref<?x8xi32> -> memref<?xi32>, memref<129xi32>
  humming.moe_permute %x positions(%pos : memref<?xi32>) into %xs {top_k = 8}
      : memref<?x2048xbf16> -> memref<?x2048xbf16>
  humming.moe_permute %w positions(%pos : memref<?xi32>) into %ws {top_k = 1}
      : memref<?x1xf32> -> memref<?x1xf32>
  humming.moe_permute %ys positions(%pos : memref<?xi32>) into %y {gather}
      : memref<?x1536xbf16> -> memref<?x1536xbf16>
  return
}

// CHECK-LABEL: func.func @grouped_masked
// CHECK: humming.moe_group %{{.*}} into %{{.*}}, %{{.*}} {experts = 8 : i64, max_tokens = 64 : i64} : memref<16x2xi32> -> memref<32xi32>, memref<8xi32>
// CHECK: humming.moe_permute {{.*}} : memref<16x4096xf8E4M3FN> -> memref<512x4096xf8E4M3FN>
func.func @grouped_masked(%topk: memref<16x2xi32>, %pos: memref<32xi32>, %counts: memref<8xi32>,
    %x: memref<16x4096xf8E4M3FN>, %xs: memref<512x4096xf8E4M3FN>) {
  humming.moe_group %topk into %pos, %counts {experts = 8, max_tokens = 64}
      : memref<16x2xi32> -> memref<32xi32>, memref<8xi32>
  humming.moe_permute %x positions(%pos : memref<32xi32>) into %xs {top_k = 2}
      : memref<16x4096xf8E4M3FN> -> memref<512x4096xf8E4M3FN>
  return
}
