// RUN: humming-opt %s --split-input-file --humming-lower-to-nvvm="chip=sm_90a" | FileCheck %s

// mma = wgmma with split_k = 4: the four CTAs along z form a thread block
// cluster (nvvm.cluster_dim, PTX .reqnctapercluster) and each runs a
// quarter of K's iterations. After the loop no global workspace: every CTA
// waits at the cluster barrier (its shared memory is free), every consumer
// thread stores its 64 sums to its CTA's shared memory (word i * 256 + tid),
// a second cluster barrier publishes them, and CTA r adds, in rank order,
// the four CTAs' sums of its two rows of eight tokens (mapa +
// ld.shared::cluster) and stores them; a third barrier keeps every CTA's
// shared memory alive until the others have read it.
// The kernel table says so: split_k = 4 CTAs along z, one cluster of 4
// (the runtime checks the loaded function's required cluster depth).
// CHECK: humming.kernels = [{block_m = 64 : i64, block_n = 256 : i64, cluster = 4 : i64, grid_dependency = 1 : i64, input_map = 0 : i64, kind = 0 : i64, m_max = 0 : i64, m_min = 1 : i64, name = "cluster_gemm0_m0", smem = 65536 : i64, split_k = 4 : i64, threads = 256 : i64}]
// CHECK-LABEL: gpu.func @cluster_gemm0_m0
// CHECK-SAME:    known_block_size = array<i32: 256, 1, 1>
// CHECK-SAME:    nvvm.cluster_dim = array<i32: 1, 1, 4>
// CHECK-NOT:     llvm.mlir.global
// CHECK:         gpu.block_id  z
// CHECK:         scf.for
// CHECK:           wgmma.mma_async
// CHECK:         "wgmma.wait_group.sync.aligned 0;"
// CHECK:         nvvm.cluster.arrive
// CHECK-NEXT:    nvvm.cluster.wait
// CHECK-COUNT-64: llvm.store %{{.*}}, %{{.*}} {alignment = 4 : i64} : f32, !llvm.ptr<3>
// CHECK:         nvvm.cluster.arrive
// CHECK-NEXT:    nvvm.cluster.wait
// CHECK:         nvvm.mapa %{{.*}}, %{{.*}} : !llvm.ptr<3> -> !llvm.ptr<7>
// CHECK-NEXT:    llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr<7> -> f32
// CHECK:         llvm.store {{.*}} : i16, !llvm.ptr<1>
// CHECK:         nvvm.cluster.arrive
// CHECK-NEXT:    nvvm.cluster.wait
// CHECK:         gpu.return
#t = #humming.tile_config<m = [1, inf], block = [64, 256, 32], warp = [64, 32, 32], stages = 4, mma = wgmma, split_k = 4>
func.func @cluster(%a: memref<?x512xf16>, %w: memref<32x512xi32>, %s: memref<4x256xf16>, %c: memref<?x256xf16>) {
  humming.gemm %a, %w scales(%s : memref<4x256xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>>,
       input_schema = #humming.input_schema<type = f16>, layout = #humming.layout<chip = "sm_90a">,
       tile_configs = [#t]}
      : memref<?x512xf16>, memref<32x512xi32> -> memref<?x256xf16>
  return
}

// -----

// With a producer warpgroup the producers join the three cluster barriers
// after their copies; the consumers' sums (128 each for 128 tokens: 128 KiB)
// outgrow the four slots, so the mbarriers move behind them.
// CHECK-LABEL: gpu.func @ws_cluster_gemm0_m0
// CHECK-SAME:    known_block_size = array<i32: 384, 1, 1>
// CHECK-SAME:    nvvm.cluster_dim = array<i32: 1, 1, 2>
// CHECK:         arith.constant 131072 : i32
// CHECK:         nvvm.mbarrier.init
// CHECK:         nvvm.setmaxregister decrease 56
// CHECK:         nvvm.cluster.arrive
// CHECK:         nvvm.cluster.arrive
// CHECK:         nvvm.cluster.arrive
// CHECK:       } else {
// CHECK:         nvvm.setmaxregister increase 224
// CHECK-COUNT-128: llvm.store %{{.*}}, %{{.*}} {alignment = 4 : i64} : f32, !llvm.ptr<3>
// CHECK:         llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr<7> -> f32
#ws = #humming.tile_config<m = [1, inf], block = [128, 256, 32], warp = [128, 32, 32], stages = 4, mma = wgmma, warp_specialized = true, mbarrier = true, split_k = 2>
func.func @ws_cluster(%a: memref<?x512xf16>, %w: memref<32x512xi32>, %s: memref<4x256xf16>, %c: memref<?x256xf16>) {
  humming.gemm %a, %w scales(%s : memref<4x256xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>>,
       input_schema = #humming.input_schema<type = f16>, layout = #humming.layout<chip = "sm_90a">,
       tile_configs = [#ws]}
      : memref<?x512xf16>, memref<32x512xi32> -> memref<?x256xf16>
  return
}
