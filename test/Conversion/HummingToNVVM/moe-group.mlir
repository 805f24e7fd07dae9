// RUN: humming-opt %s --humming-lower-to-nvvm="chip=sm_90a" | FileCheck %s

// humming.moe_group: one block of 1024 threads (kind 5) whose routing says
// the layout (2 contiguous, 3 masked with max_tokens in block_size); M is
// capped at the tokens whose ids fit in 'positions'; the positions go to
// the output slot, the offsets or counts to the first routing slot.
// humming.moe_permute: a scatter (kind 6, top_k) or gather (kind 7) of
// 4-byte words (block_n: 2048 bf16 = 1024 words), a grid-stride loop over
// at most 2^20 blocks, launched only for a nonzero number of positions,
// which is capped at the rows the memrefs hold.

// CHECK: humming.kernels = [{block_m = 1 : i64, block_n = 8 : i64, block_size = 0 : i64, {{.*}} kind = 5 : i64, {{.*}} name = "grouped_moe_group0", routing = 2 : i64
// CHECK-SAME: {block_m = 1 : i64, block_n = 8 : i64, block_size = 64 : i64, {{.*}} kind = 5 : i64, {{.*}} name = "grouped_moe_group1", routing = 3 : i64
// CHECK-SAME: {block_m = 1 : i64, block_n = 1024 : i64, {{.*}} kind = 6 : i64, {{.*}} name = "grouped_moe_scatter2", smem = 0 : i64, split_k = 1 : i64, threads = 256 : i64}
// CHECK-SAME: {block_m = 1 : i64, block_n = 768 : i64, {{.*}} kind = 7 : i64, {{.*}} name = "grouped_moe_gather3", smem = 0 : i64, split_k = 1 : i64, threads = 256 : i64}
// CHECK-LABEL: func.func @grouped(
// CHECK-SAME:    %[[TOPK:[^:]*]]: memref<?x8xi32>, %[[POS:[^:]*]]: memref<?xi32>, %[[OFFS:[^:]*]]: memref<129xi32>
// CHECK:         %[[M:.*]] = memref.dim %[[TOPK]]
// CHECK:         %[[P:.*]] = memref.dim %[[POS]]
// CHECK:         %[[FIT:.*]] = arith.divui %[[P]], %c8
// CHECK:         arith.minui %[[M]], %[[FIT]]
// CHECK:         gpu.launch_func @humming_kernels::@grouped_moe_group0 blocks in (%c1{{.*}}, %c1{{.*}}, %c1{{.*}}) threads in (%c1024
// CHECK:         gpu.launch_func @humming_kernels::@grouped_moe_group1
// CHECK:         arith.ceildivui %{{.*}}, %c256
// CHECK:         %[[BLOCKS:.*]] = arith.minui %{{.*}}, %c1048576
// CHECK:         scf.if
// CHECK:           gpu.launch_func @humming_kernels::@grouped_moe_scatter2 blocks in (%[[BLOCKS]],
// CHECK:           gpu.launch_func @humming_kernels::@grouped_moe_gather3
// The contiguous grouping: positions are the atomic cursors.
// CHECK:       gpu.func @grouped_moe_group0(
// CHECK:         memref.atomic_rmw addi
// CHECK:         gpu.shuffle up
// CHECK:         memref.atomic_rmw addi
// The masked one: counts capped at max_tokens, no scan.
// CHECK:       gpu.func @grouped_moe_group1(
// CHECK-NOT:     gpu.shuffle
// CHECK:         arith.minui %{{.*}}, %c64_i32
// CHECK-NOT:     gpu.shuffle
// CHECK:       gpu.func @grouped_moe_scatter2(
// CHECK:         scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} : i64
// CHECK:           arith.cmpi sge
// CHECK:           arith.cmpi slt
// CHECK:           scf.if
// CHECK:             arith.divui %{{.*}}, %c8_i64
// CHECK:       gpu.func @grouped_moe_gather3(
// CHECK:         scf.if %{{.*}} -> (i32)

func.func @grouped(%topk: memref<?x8xi32>, %pos: memref<?xi32>, %offs: memref<129xi32>, %counts: memref<128xi32>,
    %x: memref<?x2048xbf16>, %xs: memref<?x2048xbf16>, %ys: memref<?x1536xbf16>, %y: memref<?x1536xbf16>) {
  humming.moe_group %topk into %pos, %offs {experts = 128}
      : memref<?x8xi32> -> memref<?xi32>, memref<129xi32>
  humming.moe_group %topk into %pos, %counts {experts = 128, max_tokens = 64}
      : memref<?x8xi32> -> memref<?xi32>, memref<128xi32>
  humming.moe_permute %x positions(%pos : memref<?xi32>) into %xs {top_k = 8}
      : memref<?x2048xbf16> -> memref<?x2048xbf16>
  humming.moe_permute %ys positions(%pos : memref<?xi32>) into %y {gather}
      : memref<?x1536xbf16> -> memref<?x1536xbf16>
  return
}
