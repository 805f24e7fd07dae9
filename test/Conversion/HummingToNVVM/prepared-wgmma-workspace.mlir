// RUN: humming-opt %s --humming-lower-to-nvvm="chip=sm_90a" | FileCheck %s
// RUN: humming-translate %s --chip=sm_90a -o - | FileCheck %s --check-prefix=PTX

// mma = wgmma with split_k = 4 and workspace_split: the four CTAs along z
// each run a quarter of K's iterations, but form no cluster (no
// nvvm.cluster_dim: a wave holds as many of them as SMs, where clusters of
// four keep ~120 of the H200's 132 resident). The kernel's workspace is
// two module globals sized for the range's top (M = 64: one tile of 256
// columns; 4 CTAs x 64 sums x 256 consumer threads of f32 = 262144 bytes,
// one counter). After the loop every consumer thread stores its 64 sums
// as 16 vectors of four (vector ((tile x 4 + z) x 16 + j) x 256 + tid: a
// warp's 16-byte stores 512 contiguous bytes), a device-scope release
// fence, and thread 0's arrival on the tile's counter; the consumers alone
// meet at named barrier 1 (256 threads; the producers have left), which
// ORs thread 0's verdict into all of them. The last CTA resets the
// counter, acquires, and in two chunks of four rows of eight tokens loads
// the other three CTAs' sums (8 vectors per CTA and chunk, behind a branch
// on its own z, whose sums come from registers) before it adds any (split
// order) and stores the chunk's rows.
// CHECK: humming.kernels = [{block_m = 64 : i64, block_n = 256 : i64, cluster = 1 : i64, {{.*}}name = "ws_gemm0_m0", {{.*}}split_k = 4 : i64, threads = 384 : i64, workspace = 262160 : i64},
// The kernel without a split (M >= 65) launches one CTA along z.
// CHECK: gpu.launch_func  @humming_kernels::@ws_gemm0_m0 blocks in ({{.*}}, {{.*}}, %c4)
// CHECK: gpu.launch_func  @humming_kernels::@ws_gemm0_m1 blocks in ({{.*}}, {{.*}}, %c1{{.*}})
// CHECK-NOT: llvm.mlir.global {{.*}}partials
// CHECK-LABEL: gpu.func @ws_gemm0_m0
// CHECK-NOT:     nvvm.cluster_dim
// CHECK:         gpu.block_id  z
// CHECK:         wgmma.mma_async
// CHECK:         "wgmma.wait_group.sync.aligned 0;"
// CHECK-COUNT-16: llvm.store {{.*}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<1>
// CHECK:         llvm.fence syncscope("device") release
// CHECK:         llvm.atomicrmw add
// CHECK:         bar.red.or.pred p, 1, 256, q;
// CHECK:         llvm.fence syncscope("device") acquire
// CHECK-COUNT-64: llvm.load volatile {{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
// CHECK-NOT:     barrier.cluster
// CHECK:         llvm.store {{.*}} : i16, !llvm.ptr<1>
// CHECK:         gpu.return

// PTX-NOT: .reqnctapercluster
// PTX-NOT: .global .align 16 .b8 ws_gemm0_m0_partials
// PTX: .entry ws_gemm0_m0(
// PTX: .param .u32 ws_gemm0_m0_param_8,
// PTX-NEXT: .param .u64 .ptr .global .align 1 ws_gemm0_m0_param_9
// PTX-COUNT-16: st.global.v4.b32
// PTX: atom.global.add.u32
// PTX: bar.red.or.pred p, 1, 256, q;
// PTX-COUNT-64: ld.volatile.global.v4.b32
// PTX-NOT: ld.volatile.global.b32
// PTX: add.rn.f32
#t = #humming.tile_config<m = [1, 64], block = [64, 256, 64], warp = [64, 32, 64], mma = wgmma, warp_specialized = true, mbarrier = true, split_k = 4, workspace_split = true>
#u = #humming.tile_config<m = [65, inf], block = [64, 256, 64], warp = [64, 32, 64], mma = wgmma, warp_specialized = true, mbarrier = true>
func.func @ws(%a: memref<?x1024xf16>, %w: memref<64x512xi32>, %s: memref<8x256xf16>, %c: memref<?x256xf16>) {
  humming.gemm %a, %w scales(%s : memref<8x256xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>>,
       input_schema = #humming.input_schema<type = f16>, layout = #humming.layout<chip = "sm_90a">,
       tile_configs = [#t, #u]}
      : memref<?x1024xf16>, memref<64x512xi32> -> memref<?x256xf16>
  return
}
