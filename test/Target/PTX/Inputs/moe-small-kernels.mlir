func.func @small(%topk: memref<?x8xi32>, %ids: memref<?xi32>, %eids: memref<?xi32>, %ntp: memref<1xi32>,
                 %gu: memref<?x1536xbf16>, %h: memref<?x768xbf16>, %r: memref<?x2048xf16>, %y: memref<?x2048xf16>,
                 %pos: memref<?xi32>, %offs: memref<129xi32>, %counts: memref<128xi32>,
                 %x: memref<?x2048xf16>, %xs: memref<?x2048xf16>) {
  humming.moe_align %topk into %ids, %eids, %ntp {experts = 128, block_size = 64}
      : memref<?x8xi32> -> memref<?xi32>, memref<?xi32>, memref<1xi32>
  humming.silu_and_mul %gu into %h : memref<?x1536xbf16> -> memref<?x768xbf16>
  humming.silu_and_mul %gu into %h {alpha = 1.702, up_offset = 1.0, limit = 7.0}
      : memref<?x1536xbf16> -> memref<?x768xbf16>
  humming.moe_sum %r into %y {top_k = 8} : memref<?x2048xf16> -> memref<?x2048xf16>
  humming.moe_group %topk into %pos, %offs {experts = 128}
      : memref<?x8xi32> -> memref<?xi32>, memref<129xi32>
  humming.moe_group %topk into %pos, %counts {experts = 128, max_tokens = 256}
      : memref<?x8xi32> -> memref<?xi32>, memref<128xi32>
  humming.moe_permute %x positions(%pos : memref<?xi32>) into %xs {top_k = 8}
      : memref<?x2048xf16> -> memref<?x2048xf16>
  humming.moe_permute %xs positions(%pos : memref<?xi32>) into %x {gather}
      : memref<?x2048xf16> -> memref<?x2048xf16>
  return
}
