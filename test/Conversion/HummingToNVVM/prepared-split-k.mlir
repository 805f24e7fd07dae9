// RUN: humming-opt %s --humming-lower-to-nvvm="chip=sm_90a" | FileCheck %s
// RUN: humming-opt %s --humming-compile-pipeline="chip=sm_90a" -o /dev/null

// Split-K across CTAs (split_k = 2 for M <= 16): grid z is the split, the
// kernel table says so, and the kernel takes its workspace as its last
// parameter (fp32 partial sums for 2 n-blocks x 1 m-block x 2 splits x 32
// sums x 32 leader threads = 16384 bytes, then one arrival counter per
// output tile: 16400 bytes), so that launches on two streams can each
// have their own. The host side of the IR allocates and zeroes one per
// launch (the runtime keeps one per stream).

// CHECK: humming.kernels = [{block_m = 16 : i64, block_n = 64 : i64, cluster = 1 : i64, grid_dependency = 1 : i64, input_map = 0 : i64, kind = 0 : i64, m_max = 16 : i64, m_min = 1 : i64, name = "split_gemm0_m0", smem = 15360 : i64, split_k = 2 : i64, threads = 64 : i64, workspace = 16400 : i64}, {{.*}}split_k = 1 : i64
// CHECK-NOT:     workspace =
// CHECK-LABEL: func.func @split
// CHECK:         %[[WS:.*]] = gpu.alloc () : memref<4100xi32>
// CHECK:         gpu.memset %[[WS]], %c0_i32 : memref<4100xi32>, i32
// CHECK:         gpu.launch_func @humming_kernels::@split_gemm0_m0 blocks in (%c2, %{{.*}}, %c2{{.*}}) threads in (%c64, %c1, %c1) {{.*}} args({{.*}}, %{{.*}} : i32, %{{.*}} : !llvm.ptr<1>)
// CHECK-NEXT:    gpu.dealloc %[[WS]] : memref<4100xi32>
// CHECK:         gpu.launch_func @humming_kernels::@split_gemm0_m1 {{.*}} args({{.*}}, %{{.*}} : i32)
// CHECK:       gpu.module @humming_kernels
// CHECK-NOT:     llvm.mlir.global {{.*}}partials
// CHECK:         gpu.func @split_gemm0_m0({{.*}}, %{{.*}}: i32, %[[P:.*]]: !llvm.ptr<1> {llvm.noalias})
// The counters follow the partial sums.
// CHECK:           llvm.getelementptr %[[P]][16384] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
// Each CTA starts at its share of the K iterations (4 of 8: K = 512 in
// steps of 64).
// CHECK:           gpu.block_id  z
// CHECK:           scf.for %{{.*}} = %{{.*}} to %c4 step
// After the in-block reduction (each of the two warp groups adds and
// stores half of the output units): store the sums, release, count the
// arrival.
// CHECK:           llvm.store %{{.*}}, %{{.*}} : f32, !llvm.ptr<1>
// CHECK:           llvm.fence syncscope("device") release
// CHECK:           gpu.barrier
// CHECK:           llvm.atomicrmw add %{{.*}}, %{{.*}} syncscope("device") acq_rel : !llvm.ptr<1>, i32
// The last arrival resets the counter and tells the block.
// CHECK:           llvm.store %{{.*}}, %{{.*}} : i32, !llvm.ptr<1>
// CHECK:           llvm.store %{{.*}}, %{{.*}} : i32, !llvm.ptr<3>
// CHECK:           gpu.barrier
// The last CTA acquires and adds the splits in order (volatile loads: other
// CTAs wrote them), every load of the thread's 8 owned units (2 sums x 2
// splits each) issued before the first output store needs one.
// CHECK:           llvm.fence syncscope("device") acquire
// CHECK-COUNT-32:  llvm.load volatile %{{.*}} {alignment = 4 : i64} : !llvm.ptr<1> -> f32
// CHECK-NOT:       llvm.store
// CHECK:           llvm.store %{{.*}}, %{{.*}} : i32, !llvm.ptr<1>
// CHECK:         gpu.func @split_gemm0_m1
// CHECK-NOT:       gpu.block_id  z

#small = #humming.tile_config<m = [1, 16], block = [16, 64, 64], warp = [16, 64, 32], stages = 3, split_k = 2>
#large = #humming.tile_config<m = [17, inf], block = [32, 128, 32], warp = [32, 64, 16], stages = 2>
func.func @split(%a: memref<?x512xf16>, %w: memref<32x256xi32>, %s: memref<4x128xf16>, %c: memref<?x128xf16>) {
  humming.gemm %a, %w scales(%s : memref<4x128xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>>,
       input_schema = #humming.input_schema<type = f16>, layout = #humming.layout<chip = "sm_90a">,
       tile_configs = [#small, #large]}
      : memref<?x512xf16>, memref<32x256xi32> -> memref<?x128xf16>
  return
}
