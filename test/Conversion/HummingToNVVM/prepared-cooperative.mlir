// RUN: humming-opt %s --humming-lower-to-nvvm="chip=sm_90a" | FileCheck %s
// RUN: humming-opt %s --humming-compile-pipeline="chip=sm_90a" -o /dev/null

// Cooperative blocks (block_m = 2 x warp_m): the block copies each stage's
// activation tile, weight tiles and scales together (16-byte cp.async.cg,
// shared out among its threads; the 16 scale chunks of 128 columns are
// copied by the first 16 of 128 threads only) and every warp reads its rows
// and columns; one block barrier per iteration. M <= 128 also splits K
// across two CTAs: the workspace holds 2 n-blocks x 1 m-block x 2 splits x
// 128 sums x 128 threads.

// CHECK: humming.kernels = [{block_m = 128 : i64, block_n = 128 : i64, cluster = 1 : i64, grid_dependency = 1 : i64, input_map = 0 : i64, kind = 0 : i64, m_max = 128 : i64, m_min = 1 : i64, name = "coop_gemm0_m0", smem = 31488 : i64, split_k = 2 : i64, threads = 128 : i64, workspace = 262160 : i64}, {block_m = 128 : i64, block_n = 256 : i64, cluster = 1 : i64, grid_dependency = 1 : i64, input_map = 0 : i64, kind = 0 : i64, m_max = 0 : i64, m_min = 129 : i64, name = "coop_gemm0_m1", smem = 51200 : i64, split_k = 1 : i64, threads = 256 : i64}]
// CHECK-LABEL: func.func @coop
// CHECK:         gpu.launch_func @humming_kernels::@coop_gemm0_m0 blocks in (%c2, %{{.*}}, %c2{{.*}}) threads in (%c128{{.*}}, %c1, %c1)
// CHECK:         gpu.launch_func @humming_kernels::@coop_gemm0_m1 blocks in (%c1, %{{.*}}, %c1{{.*}}) threads in (%c256, %c1{{.*}}, %c1{{.*}})
// CHECK:       gpu.module @humming_kernels
// CHECK-NOT:     llvm.mlir.global {{.*}}partials
// CHECK:         gpu.func @coop_gemm0_m0({{.*}}, %{{.*}}: i32, %{{.*}}: !llvm.ptr<1> {llvm.noalias})
// CHECK-NOT:       nvvm.minctasm
// Prologue (programmatic dependent launch): the weights of the first
// stages - 1 iterations (a last round of copies for the threads with a
// chunk left), no activations, then the wait for the previous kernel, then
// the activations (zero-filled past M by the source size).
// CHECK-NOT:       cache =  cg, %{{.*}} : !llvm.ptr<3>, !llvm.ptr<1>, i32
// CHECK:           arith.cmpi ult, %{{.*}}, %c16
// CHECK-NEXT:      scf.if
// CHECK:             nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 16, cache =  cg : !llvm.ptr<3>, !llvm.ptr<1>
// CHECK-NOT:       cache =  cg, %{{.*}} : !llvm.ptr<3>, !llvm.ptr<1>, i32
// CHECK:           llvm.inline_asm has_side_effects {{.*}}"griddepcontrol.wait;\0A\09griddepcontrol.launch_dependents;", "~{memory}"
// CHECK:           nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 16, cache =  cg, %{{.*}} : !llvm.ptr<3>, !llvm.ptr<1>, i32
// CHECK:           scf.for
// CHECK:             nvvm.cp.async.wait.group 1
// CHECK-NEXT:        gpu.barrier
// CHECK-COUNT-8:     nvvm.ldmatrix
// CHECK:             nvvm.mma.sync
// CHECK:           llvm.fence syncscope("device") release
// ctas_per_sm = 2 asks ptxas to fit two blocks in an SM's registers.
// CHECK:         gpu.func @coop_gemm0_m1({{.*}}) kernel attributes {{{.*}}nvvm.minctasm = 2 : i32
// CHECK:           scf.for
// CHECK:             nvvm.cp.async.wait.group 2
// CHECK-NEXT:        gpu.barrier

#split = #humming.tile_config<m = [1, 128], block = [128, 128, 32], warp = [64, 64, 32], stages = 3, split_k = 2>
#large = #humming.tile_config<m = [129, inf], block = [128, 256, 32], warp = [64, 64, 32], stages = 4, ctas_per_sm = 2>
func.func @coop(%a: memref<?x512xf16>, %w: memref<32x512xi32>, %s: memref<4x256xf16>, %c: memref<?x256xf16>) {
  humming.gemm %a, %w scales(%s : memref<4x256xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>>,
       input_schema = #humming.input_schema<type = f16>, layout = #humming.layout<chip = "sm_90a">,
       tile_configs = [#split, #large]}
      : memref<?x512xf16>, memref<32x512xi32> -> memref<?x256xf16>
  return
}
