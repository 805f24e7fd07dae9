// RUN: humming-opt %s --humming-lower-to-nvvm="chip=sm_90a" | FileCheck %s

// mma = wgmma (sm_90a) over the prepared mma_sync layout: the transposed
// product out^T = W X^T. Two warpgroups (256 threads) of 128 tokens x two
// n-tiles; per iteration: the copies' wait, the proxy fence that makes
// cp.async's writes visible to wgmma's reads, the barrier, the copies two
// iterations ahead, the wait for the previous iteration's wgmmas (their A
// registers are rewritten), then per k-tile a fence, one m64n128k16 per
// n-tile with the A fragment from registers and the activations from a
// no-swizzle descriptor, and a commit. After the loop the last wait and
// the transposed store of 16-bit outputs.
// CHECK-LABEL: gpu.func @wg_gemm0_m0
// CHECK-SAME:    known_block_size = array<i32: 256, 1, 1>
// CHECK:         scf.for
// CHECK:           nvvm.cp.async.wait.group 1
// CHECK:           nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-NEXT:      gpu.barrier
// CHECK:           nvvm.cp.async.commit.group
// CHECK:           "wgmma.wait_group.sync.aligned 0;"
// CHECK:           "wgmma.fence.sync.aligned;"
// CHECK-COUNT-2:   wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16
// CHECK:           nvvm.wgmma.commit.group.sync.aligned
// CHECK:           "wgmma.fence.sync.aligned;"
// CHECK-COUNT-2:   wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16
// CHECK:           nvvm.wgmma.commit.group.sync.aligned
// CHECK:         scf.yield
// CHECK:         "wgmma.wait_group.sync.aligned 0;"
// CHECK:         nvvm.cp.async.wait.group 0
// CHECK:         llvm.store {{.*}} : i16, !llvm.ptr<1>

#t = #humming.tile_config<m = [1, inf], block = [128, 256, 32], warp = [128, 32, 32], mma = wgmma>
func.func @wg(%a: memref<?x512xf16>, %w: memref<32x512xi32>, %s: memref<4x256xf16>, %c: memref<?x256xf16>) {
  humming.gemm %a, %w scales(%s : memref<4x256xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>>,
       input_schema = #humming.input_schema<type = f16>, layout = #humming.layout<chip = "sm_90a">,
       tile_configs = [#t]}
      : memref<?x512xf16>, memref<32x512xi32> -> memref<?x256xf16>
  return
}
