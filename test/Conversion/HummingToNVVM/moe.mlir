// RUN: humming-opt %s --humming-select-tiles="device=H200" --humming-lower-to-nvvm="chip=sm_90a" | FileCheck %s

// humming.moe_gemm (indexed): the kernels of each range of tokens per
// expert take the four routing pointers after M; the host code chooses by
// ceil(M * top_k / E), launches floor(P / block_m) blocks along y and none
// when that is zero. The kernel table records the routing. humming.moe_align
// is one block of 1024 threads. (One token per expert is a range of its
// own: test/Target/PTX/moe-transposed.mlir.)

// CHECK: humming.kernels = [{block_m = 16 : i64, block_n = 64 : i64, block_size = 64 : i64, cluster = 1 : i64, experts = 8 : i64, grid_dependency = 1 : i64, input_map = 0 : i64, kind = 0 : i64, layout64 = 0 : i64, m_max = 1 : i64, m_min = 1 : i64, name = "moe_moe_gemm0_m0", routing = 1 : i64
// CHECK-SAME: top_k = 2 : i64
// CHECK: {block_m = 1 : i64, block_n = 2 : i64, block_size = 64 : i64, cluster = 1 : i64, experts = 8 : i64, grid_dependency = 0 : i64, input_map = 0 : i64, kind = 2 : i64, layout64 = 0 : i64, m_max = 0 : i64, m_min = 1 : i64, name = "moe_moe_align1", routing = 1 : i64, smem = 0 : i64, split_k = 1 : i64, threads = 1024 : i64, top_k = 2 : i64}
// CHECK-LABEL: func.func @moe
// CHECK:         %[[M:.*]] = memref.dim %{{.*}}, %c0
// CHECK:         scf.if
// CHECK:           %[[ROWS:.*]] = arith.muli %[[M]], %c2
// CHECK:           %[[PER:.*]] = arith.ceildivui %[[ROWS]], %c8
// CHECK:           %[[SEL:.*]] = arith.maxui %[[PER]], %c1
// CHECK:           arith.cmpi ule, %[[SEL]], %c1
// CHECK:           %[[P:.*]] = memref.dim %{{.*}}, %c0
// CHECK:           %[[GY:.*]] = arith.divui %[[P]], %c16
// CHECK:           %[[ANY:.*]] = arith.cmpi ne, %[[GY]], %c0
// CHECK:           scf.if %[[ANY]]
// The routing's block_size, the op's, after the four routing pointers.
// CHECK:             gpu.launch_func @humming_kernels::@moe_moe_gemm0_m0 blocks in (%{{[^,]*}}, %[[GY]], %{{[^)]*}})
// CHECK-SAME:          : !llvm.ptr<1>, %{{[0-9]+}} : !llvm.ptr<1>, %c64_i32{{.*}} : i32)
// CHECK:       gpu.launch_func @humming_kernels::@moe_moe_align1 blocks in (%c1{{.*}}, %c1{{.*}}, %c1{{.*}}) threads in (%c1024
// The kernel: the block's expert from expert_ids (the block's first row
// over the block_size parameter, which must be a positive multiple of
// block_m), its rows from sorted_ids into the row table, a barrier that
// also says whether any row is there.
// CHECK:         gpu.func @moe_moe_gemm0_m0(
// CHECK-SAME:      %{{.*}}: i32, %{{.*}}: !llvm.ptr<1> {llvm.noalias, llvm.readonly}, %{{.*}}: !llvm.ptr<1> {llvm.noalias, llvm.readonly}, %{{.*}}: !llvm.ptr<1> {llvm.noalias, llvm.readonly}, %{{.*}}: !llvm.ptr<1> {llvm.noalias, llvm.readonly}, %{{.*}}: i32)
// CHECK:           gpu.grid_dim y
// CHECK:           arith.remui %[[BS:.*]], %c16
// CHECK:           arith.select %{{.*}}, %[[BS]], %c16
// CHECK:           bar.red.or.pred
// CHECK:         gpu.func @moe_moe_align1(
// CHECK:           memref.atomic_rmw addi

func.func @moe(%a: memref<?x512xf16>, %w: memref<8x32x512xi32>, %s: memref<8x4x256xf16>,
               %ids: memref<?xi32>, %eids: memref<?xi32>, %np: memref<1xi32>, %rw: memref<?xf32>,
               %c: memref<?x256xf16>, %topk: memref<?x2xi32>) {
  humming.moe_gemm %a, %w scales(%s : memref<8x4x256xf16>)
      sorted_ids(%ids : memref<?xi32>) expert_ids(%eids : memref<?xi32>)
      num_tokens_padded(%np : memref<1xi32>) topk_weights(%rw : memref<?xf32>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>, experts = 8>,
       input_schema = #humming.input_schema<type = f16>, layout = #humming.layout<chip = "sm_90a">,
       compute = #humming.compute<gemm = indexed>, top_k = 2, block_size = 64}
      : memref<?x512xf16>, memref<8x32x512xi32> -> memref<?x256xf16>
  humming.moe_align %topk into %ids, %eids, %np {experts = 8, block_size = 64}
      : memref<?x2xi32> -> memref<?xi32>, memref<?xi32>, memref<1xi32>
  return
}
