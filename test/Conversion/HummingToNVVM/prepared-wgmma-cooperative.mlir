// RUN: humming-opt %s --humming-lower-to-nvvm="chip=sm_90a" | FileCheck %s
// RUN: humming-translate %s --chip=sm_90a -o - | FileCheck %s --check-prefix=PTX

// workspace_split with cooperative_split: the kernel table asks for a
// cooperative launch (every CTA resident at once). CTA z of the tile's four
// owns rows 2 z ..+2 of the eight rows of eight tokens: each consumer
// thread stores the other CTAs' shares (four branches on z of two n-tiles
// x two rows = four 16-byte vectors; three run), a device-scope release
// fence, the consumers meet at named barrier 1 (256 threads), and thread 0
// arrives on the tile's counter, spins until all four have (a volatile
// load through L2), departs (a second increment) and the last to depart
// (7 before it) resets the counter. After a second barrier and an acquire
// fence each thread loads the other CTAs' sums of its share (four
// branches of four vectors, its own split's from registers), adds them in
// split order and stores its two rows per n-tile and half: 16 halves.
// CHECK: humming.kernels = [{block_m = 64 : i64, block_n = 256 : i64, cluster = 1 : i64, cooperative = 1 : i64, {{.*}}name = "coop_gemm0_m0", {{.*}}split_k = 4 : i64, threads = 384 : i64, workspace = 262160 : i64},
// The unsplit kernel (M >= 65) writes no cooperative field.
// CHECK-SAME: {block_m = 64 : i64, block_n = 256 : i64, cluster = 1 : i64, grid_dependency = 1 : i64, {{.*}}name = "coop_gemm0_m1", {{.*}}split_k = 1 : i64
// CHECK-NOT: llvm.mlir.global {{.*}}partials
// CHECK-LABEL: gpu.func @coop_gemm0_m0
// CHECK-NOT:     nvvm.cluster_dim
// CHECK:         "wgmma.wait_group.sync.aligned 0;"
// CHECK-COUNT-16: llvm.store {{.*}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<1>
// CHECK:         llvm.fence syncscope("device") release
// CHECK:         nvvm.barrier id = %{{.*}} number_of_threads = %{{.*}}
// CHECK:         llvm.atomicrmw add %[[COUNTER:.*]], %{{.*}} syncscope("device") release
// CHECK:         scf.while
// CHECK:           llvm.load volatile %[[COUNTER]] {alignment = 4 : i64} : !llvm.ptr<1> -> i32
// CHECK:           arith.cmpi slt, %{{.*}}, %c4_i32
// CHECK:         %[[BEFORE:.*]] = llvm.atomicrmw add %[[COUNTER]], %{{.*}} syncscope("device") monotonic
// CHECK:         arith.cmpi eq, %[[BEFORE]], %c7_i32
// CHECK:         llvm.store %c0_i32{{.*}}, %[[COUNTER]] : i32, !llvm.ptr<1>
// CHECK:         nvvm.barrier id
// CHECK:         llvm.fence syncscope("device") acquire
// CHECK-COUNT-16: llvm.load volatile {{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
// CHECK-NOT:     llvm.load volatile
// CHECK:         llvm.store {{.*}} : i16, !llvm.ptr<1>
// CHECK:         gpu.return

// PTX-NOT: .reqnctapercluster
// PTX-COUNT-16: st.global.v4.b32
// PTX: fence.acq_rel.gpu;
// PTX: bar.sync 1, 256;
// PTX: atom.global.add.u32 [[OLD:%r[0-9]+]], [[[C:%rd[0-9]+\+262144]]], 1;
// PTX: [[SPIN:\$L__BB[0-9_]+]]:
// PTX: ld.volatile.global.b32 [[SEEN:%r[0-9]+]], [[[C]]];
// PTX: setp.lt.s32 [[P:%p[0-9]+]], [[SEEN]], 4;
// PTX: @[[P]] bra [[SPIN]];
// PTX: atom.global.add.u32 {{%r[0-9]+}}, [[[C]]], 1;
// PTX: st.global.b32 [[[C]]], 0;
// PTX: bar.sync 1, 256;
// PTX: fence.acq_rel.gpu;
// PTX-COUNT-16: ld.volatile.global.v4.b32
// PTX: add.rn.f32
#t = #humming.tile_config<m = [1, 64], block = [64, 256, 64], warp = [64, 32, 64], mma = wgmma, warp_specialized = true, mbarrier = true, split_k = 4, workspace_split = true, cooperative_split = true>
#u = #humming.tile_config<m = [65, inf], block = [64, 256, 64], warp = [64, 32, 64], mma = wgmma, warp_specialized = true, mbarrier = true>
func.func @coop(%a: memref<?x1024xf16>, %w: memref<64x512xi32>, %s: memref<8x256xf16>, %c: memref<?x256xf16>) {
  humming.gemm %a, %w scales(%s : memref<8x256xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>>,
       input_schema = #humming.input_schema<type = f16>, layout = #humming.layout<chip = "sm_90a">,
       tile_configs = [#t, #u]}
      : memref<?x1024xf16>, memref<64x512xi32> -> memref<?x256xf16>
  return
}
