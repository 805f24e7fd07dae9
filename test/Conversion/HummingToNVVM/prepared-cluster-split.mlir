// RUN: humming-opt %s --humming-lower-to-nvvm="chip=sm_90a" | FileCheck %s

// split_k with cluster_split on an mma_sync tile (the M = 9-16 shape): the
// CTAs along z form a cluster of four, no workspace globals or arrival
// counters; after the in-block split's reduction every CTA leaves its
// units' sums in its own shared memory (cluster barrier before and after),
// then CTA r adds the units u with u % 4 = r from all four CTAs in rank
// order (mapa + ld.shared::cluster) and stores them; a last cluster
// barrier keeps every CTA's shared memory alive until the others read it.
// CHECK-NOT:   _partials
// CHECK-NOT:   _arrivals
// CHECK-LABEL: gpu.func @cs_gemm0_m0
// CHECK-SAME:    nvvm.cluster_dim = array<i32: 1, 1, 4>
// CHECK-NOT:     llvm.atomicrmw
// CHECK:         nvvm.cluster.arrive
// CHECK-NEXT:    nvvm.cluster.wait
// CHECK:         llvm.store %{{.*}}, %{{.*}} {alignment = 4 : i64} : f32, !llvm.ptr<3>
// CHECK:         nvvm.cluster.arrive
// CHECK-NEXT:    nvvm.cluster.wait
// CHECK-COUNT-4: nvvm.mapa %{{.*}}, %{{.*}} : !llvm.ptr<3> -> !llvm.ptr<7>
// CHECK-NOT:     llvm.atomicrmw
// CHECK:         nvvm.cluster.arrive
// CHECK-NEXT:    nvvm.cluster.wait
// CHECK-NEXT:    gpu.return

#t = #humming.tile_config<m = [1, inf], block = [16, 128, 128], warp = [16, 64, 32], split_k = 4, block_copies = true, cluster_split = true>
func.func @cs(%a: memref<?x1024xf16>, %w: memref<64x512xi32>, %s: memref<8x256xf16>, %c: memref<?x256xf16>) {
  humming.gemm %a, %w scales(%s : memref<8x256xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>>,
       input_schema = #humming.input_schema<type = f16>, layout = #humming.layout<chip = "sm_90a">,
       tile_configs = [#t]}
      : memref<?x1024xf16>, memref<64x512xi32> -> memref<?x256xf16>
  return
}
