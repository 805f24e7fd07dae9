// RUN: humming-opt %s --humming-lower-to-nvvm="chip=sm_90a" | FileCheck %s
// RUN: humming-opt %s --humming-compile-pipeline="chip=sm_90a" -o /dev/null

// block_copies with one warp row: the block copies each stage's tiles
// together (as cooperative blocks do) and its warps share them: two warps
// along N read one copy of the activations. Four warp groups split K inside
// the block, so a stage holds all 4 x 2 k-tiles of the iteration: 8 x 16
// rows x 32 bytes of activations, 8 x 2 x 512 bytes of weights and the 128
// columns' f16 scales of the one group the iteration's 128 values of K lie
// in; four stages: 4 x 12544 bytes (more than the 32 KiB of split-K sums).
// Each group reads its own k-tiles (slot k-tile 2 group + u), and after the
// loop the groups add their sums through shared memory.

// CHECK: humming.kernels = [{block_m = 16 : i64, block_n = 128 : i64, cluster = 1 : i64, grid_dependency = 1 : i64, input_map = 0 : i64, kind = 0 : i64, m_max = 0 : i64, m_min = 1 : i64, name = "shared_gemm0_m0", smem = 50176 : i64, split_k = 1 : i64, threads = 256 : i64}]
// CHECK:       gpu.func @shared_gemm0_m0
// CHECK:         scf.for
// CHECK:           nvvm.cp.async.wait.group 2
// CHECK-NEXT:      gpu.barrier
// CHECK:           nvvm.ldmatrix
// CHECK:           nvvm.mma.sync
// CHECK:         } {{.*}}
// CHECK:         nvvm.cp.async.wait.group 0
// CHECK-NEXT:    gpu.barrier
// CHECK:         llvm.store %{{.*}}, %{{.*}} : f32, !llvm.ptr<3>
// CHECK:         gpu.barrier

#tile = #humming.tile_config<m = [1, inf], block = [16, 128, 128], warp = [16, 64, 32], block_copies = true>
func.func @shared(%a: memref<?x512xf16>, %w: memref<32x512xi32>, %s: memref<4x256xf16>, %c: memref<?x256xf16>) {
  humming.gemm %a, %w scales(%s : memref<4x256xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>>,
       input_schema = #humming.input_schema<type = f16>, layout = #humming.layout<chip = "sm_90a">,
       tile_configs = [#tile]}
      : memref<?x512xf16>, memref<32x512xi32> -> memref<?x256xf16>
  return
}
