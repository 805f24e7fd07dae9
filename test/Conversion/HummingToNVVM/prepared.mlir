// RUN: humming-opt %s --humming-lower-to-nvvm="chip=sm_90a" | FileCheck %s

// Prepared W4A16 g128 weights with two tile configurations: one kernel per
// M range, the host code picks by M, and the module records the kernel
// table a runtime launches from.

// CHECK: module attributes {gpu.container_module, humming.kernels = [{block_m = 16 : i64, block_n = 64 : i64, cluster = 1 : i64, grid_dependency = 1 : i64, input_map = 0 : i64, kind = 0 : i64, m_max = 16 : i64, m_min = 1 : i64, name = "prepared_gemm0_m0", smem = 15360 : i64, split_k = 1 : i64, threads = 64 : i64}, {block_m = 32 : i64, block_n = 128 : i64, cluster = 1 : i64, grid_dependency = 1 : i64, input_map = 0 : i64, kind = 0 : i64, m_max = 0 : i64, m_min = 17 : i64, name = "prepared_gemm0_m1", smem = 32768 : i64, split_k = 1 : i64, threads = 128 : i64}]}
// CHECK-LABEL: func.func @prepared
// CHECK:         %[[M:.*]] = memref.dim %{{.*}}, %c0
// No tokens, no launch.
// CHECK:         %[[ANY:.*]] = arith.cmpi ne, %[[M]], %c0
// CHECK:         scf.if %[[ANY]] {
// CHECK:         %[[SMALL:.*]] = arith.cmpi ule, %[[M]], %c16
// CHECK:         scf.if %[[SMALL]] {
// CHECK:           gpu.launch_func @humming_kernels::@prepared_gemm0_m0 blocks in (%c2, %{{.*}}, %c1) threads in (%c64, %c1, %c1) dynamic_shared_memory_size %c15360_i32
// CHECK:         } else {
// CHECK:           gpu.launch_func @humming_kernels::@prepared_gemm0_m1 blocks in (%c1, %{{.*}}, %c1{{.*}}) threads in (%c128, %c1{{.*}}, %c1{{.*}}) dynamic_shared_memory_size %c32768_i32
// The kernels share one external dynamic shared-memory array.
// CHECK:       gpu.module @humming_kernels
// CHECK:         llvm.mlir.global external @humming_dynamic_smem() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<0 x i8>
// CHECK:         gpu.func @prepared_gemm0_m0(%{{.*}}: !llvm.ptr<1> {llvm.noalias, llvm.readonly}
// Prologue: the copies of the first stages - 1 iterations, one group each:
// weights (16 bytes, L2 only), activations (zero-filled past M and K by the
// source size), scales.
// CHECK:           nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 16, cache = cg : !llvm.ptr<3>, !llvm.ptr<1>
// CHECK:           nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 16, cache = cg, %{{.*}} : !llvm.ptr<3>, !llvm.ptr<1>, i32
// CHECK:           nvvm.cp.async.commit.group
// The loop waits for its group, makes the other lanes' activation copies
// visible (warp barrier), reads A with ldmatrix, refills a slot and runs
// eight m16n8k16 MMAs per k-tile.
// CHECK:           scf.for
// CHECK:             nvvm.cp.async.wait.group 1
// CHECK:             nvvm.bar.warp.sync %{{.*}} : i32
// CHECK:             nvvm.ldmatrix %{{.*}} {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<row>, num = 4 : i32, shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>}
// CHECK:             nvvm.cp.async.commit.group
// CHECK-COUNT-8:     nvvm.mma.sync {{.*}} shape = #nvvm.shape<m = 16, n = 8, k = 16>
// CHECK:           nvvm.cp.async.wait.group 0
// CHECK:           gpu.barrier
// CHECK:         gpu.func @prepared_gemm0_m1

#small = #humming.tile_config<m = [1, 16], block = [16, 64, 64], warp = [16, 64, 32], stages = 3>
#large = #humming.tile_config<m = [17, inf], block = [32, 128, 32], warp = [32, 64, 16], stages = 2>
func.func @prepared(%a: memref<?x256xf16>, %w: memref<16x256xi32>, %s: memref<2x128xf16>, %c: memref<?x128xf16>) {
  humming.gemm %a, %w scales(%s : memref<2x128xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>>,
       input_schema = #humming.input_schema<type = f16>, layout = #humming.layout<chip = "sm_90a">,
       tile_configs = [#small, #large]}
      : memref<?x256xf16>, memref<16x256xi32> -> memref<?x128xf16>
  return
}
