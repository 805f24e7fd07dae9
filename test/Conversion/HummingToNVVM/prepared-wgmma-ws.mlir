// RUN: humming-opt %s -split-input-file --humming-lower-to-nvvm="chip=sm_90a" | FileCheck %s

// mma = wgmma with warp_specialized: two consumer warpgroups and a producer
// warpgroup (384 threads). Thread 0 initializes a full mbarrier (128
// arrivals: the producers) and an empty one (256: the consumers) per slot,
// one block barrier publishes them, then the roles split and never meet at
// a block barrier again. The producers hand registers to the consumers
// (setmaxnreg), wait for a slot's release before refilling it, copy, and
// keep S - 2 = 2 fills in flight before they wait for the oldest, fence it
// into the async proxy and arrive on its full barrier; the last two fills
// after the loop. The consumers wait for a slot's fill, load their words,
// wait for the previous iteration's wgmmas, release that iteration's slot,
// and run the wgmmas.
// The kernel launches with the registers the split assumes (.maxnreg
// 168: 64 Ki over 384 threads; the producers' 112 x 128 freed registers
// give the consumers 224), else setmaxnreg.inc would wait forever.
// CHECK-LABEL: gpu.func @ws_gemm0_m0
// CHECK-SAME:    known_block_size = array<i32: 384, 1, 1>, nvvm.maxnreg = 168 : i32
// CHECK:         scf.if
// CHECK-COUNT-8:   nvvm.mbarrier.init %{{.*}}, %{{.*}} : !llvm.ptr<3>, i32
// CHECK:           nvvm.fence.mbarrier.init
// CHECK:         gpu.barrier
// CHECK-NOT:     gpu.barrier
// CHECK:         scf.if
// CHECK:           nvvm.setmaxregister decrease 56
// CHECK:           scf.for
// CHECK:             scf.if
// CHECK:               "{\0A.reg .pred done;\0Await:\0Ambarrier.try_wait.parity.shared::cta.b64 done, [$0], $1;\0A@!done bra wait;\0A}"
// CHECK:             nvvm.cp.async.shared.global
// CHECK:             nvvm.cp.async.commit.group
// CHECK:             scf.if
// CHECK:               nvvm.cp.async.wait.group 2
// CHECK-NEXT:          nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK:               nvvm.mbarrier.arrive %{{.*}} : !llvm.ptr<3>
// CHECK:           nvvm.cp.async.wait.group 1
// CHECK-NEXT:      nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK:           nvvm.mbarrier.arrive %{{.*}} : !llvm.ptr<3>
// CHECK:           nvvm.cp.async.wait.group 0
// CHECK-NEXT:      nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK:           nvvm.mbarrier.arrive %{{.*}} : !llvm.ptr<3>
// CHECK:         } else {
// CHECK:           nvvm.setmaxregister increase 224
// CHECK:           scf.for
// CHECK:             "{\0A.reg .pred done;\0Await:\0Ambarrier.try_wait.parity.shared::cta.b64 done, [$0], $1;\0A@!done bra wait;\0A}"
// CHECK:             "wgmma.wait_group.sync.aligned 0;"
// CHECK:             scf.if
// CHECK:               nvvm.mbarrier.arrive %{{.*}} : !llvm.ptr<3>
// CHECK:             "wgmma.fence.sync.aligned;"
// CHECK-COUNT-2:     wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16
// CHECK:             nvvm.wgmma.commit.group.sync.aligned
// CHECK:           "wgmma.wait_group.sync.aligned 0;"
// CHECK:           llvm.store {{.*}} : i16, !llvm.ptr<1>
// CHECK-NOT:     gpu.barrier
// CHECK:         gpu.return

#t = #humming.tile_config<m = [1, inf], block = [128, 256, 32], warp = [128, 32, 32], stages = 4, mma = wgmma, warp_specialized = true, mbarrier = true>
func.func @ws(%a: memref<?x512xf16>, %w: memref<32x512xi32>, %s: memref<4x256xf16>, %c: memref<?x256xf16>) {
  humming.gemm %a, %w scales(%s : memref<4x256xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>>,
       input_schema = #humming.input_schema<type = f16>, layout = #humming.layout<chip = "sm_90a">,
       tile_configs = [#t]}
      : memref<?x512xf16>, memref<32x512xi32> -> memref<?x256xf16>
  return
}

// -----

// Two CTAs per SM: 80 registers at launch (64 Ki / 768, in steps of 8).
// With the producers at 56 the consumers of the 64-token tile would get
// 88, exactly their 64 sums and 24 operand registers (ptxas then spills
// ~1 KiB), so the producers drop to 40 and the consumers get 96.
// CHECK-LABEL: gpu.func @ws2_gemm0_m0
// CHECK-SAME:    nvvm.maxnreg = 80 : i32, nvvm.minctasm = 2 : i32
// CHECK:         nvvm.setmaxregister decrease 40
// CHECK:         nvvm.setmaxregister increase 96

#t = #humming.tile_config<m = [1, inf], block = [64, 256, 32], warp = [64, 32, 32], stages = 4, mma = wgmma, warp_specialized = true, mbarrier = true, ctas_per_sm = 2>
func.func @ws2(%a: memref<?x512xf16>, %w: memref<32x512xi32>, %s: memref<4x256xf16>, %c: memref<?x256xf16>) {
  humming.gemm %a, %w scales(%s : memref<4x256xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>>,
       input_schema = #humming.input_schema<type = f16>, layout = #humming.layout<chip = "sm_90a">,
       tile_configs = [#t]}
      : memref<?x512xf16>, memref<32x512xi32> -> memref<?x256xf16>
  return
}

// -----

// tma = [b]: producer thread 0 announces the slot's weight bytes on its
// full mbarrier (4 k-tiles x 2 KiB of 4-bit weights for 256 columns) and
// issues one bulk copy per k-tile completing on it; the activations and
// scales keep their cp.async copies and every producer's arrival.
// The destinations are shared-window addresses: the dynamic shared
// memory's address plus the slot's weight offset (an offset alone lands
// below the buffer: wrong results and a hang on the H200, 2026-12-01).
// CHECK-LABEL: gpu.func @wstma_gemm0_m0
// CHECK:         nvvm.setmaxregister decrease 56
// CHECK:         scf.for
// CHECK:           nvvm.cp.async.shared.global
// CHECK:           scf.if
// CHECK:             %[[BYTES:.*]] = arith.constant 8192 : i32
// CHECK-NEXT:        nvvm.mbarrier.expect_tx %[[FULL:.*]], %[[BYTES]] : !llvm.ptr<3>, i32
// CHECK:             %[[DST:.*]] = llvm.inttoptr %{{.*}} : i32 to !llvm.ptr<7>
// CHECK-NEXT:        %[[SIZE:.*]] = arith.constant 2048 : i32
// CHECK-NEXT:        nvvm.cp.async.bulk.shared.cluster.global %[[DST]], %{{.*}}, %[[FULL]], %[[SIZE]] : !llvm.ptr<7>, <1>
// CHECK-COUNT-3:     nvvm.cp.async.bulk.shared.cluster.global %{{.*}}, %{{.*}}, %[[FULL]], %{{.*}} : !llvm.ptr<7>, <1>
// CHECK-NOT:       cp.async.bulk
// CHECK:           nvvm.cp.async.commit.group
// CHECK:         nvvm.setmaxregister increase 224

#t = #humming.tile_config<m = [1, inf], block = [128, 256, 64], warp = [128, 32, 64], stages = 4, mma = wgmma, warp_specialized = true, mbarrier = true, tma = [b]>
func.func @wstma(%a: memref<?x512xf16>, %w: memref<32x512xi32>, %s: memref<4x256xf16>, %c: memref<?x256xf16>) {
  humming.gemm %a, %w scales(%s : memref<4x256xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>>,
       input_schema = #humming.input_schema<type = f16>, layout = #humming.layout<chip = "sm_90a">,
       tile_configs = [#t]}
      : memref<?x512xf16>, memref<32x512xi32> -> memref<?x256xf16>
  return
}

// -----

// tma = [a, b]: the activations arrive by one 2-D tensor copy per
// iteration (a box of the iteration's 64 columns x 128 rows at column
// 64 i, row block_y x 128, into the slot's start: a row of 128 bytes per
// token in TMA's 128-byte swizzle), through the tensor map whose address a
// placeholder call stands for until humming-kernel-params; the kernel
// table says the kernel takes the map and its box's columns (input_map =
// 64). Every byte of a fill comes by TMA (bulk fills): the scales by one
// more bulk copy, so each full barrier expects one arrival, thread 0's
// arrive.expect_tx of the fill's bytes (16 KiB + 4 x 2 KiB + 512) before
// it issues the copies; no producer waits for a cp.async group or arrives
// after one.
// CHECK: humming.kernels = [{{{.*}}input_map = 64 : i64{{.*}}name = "wstmaab_gemm0_m0"
// The swizzle pattern repeats every eight rows (1024 bytes) and the wgmma
// descriptors assume it starts at each slot: the buffer is aligned so and
// the slots (25088 bytes) are padded to 25600.
// CHECK: llvm.func @__humming_input_map() -> !llvm.ptr
// CHECK-NEXT: llvm.mlir.global external @humming_dynamic_smem() {addr_space = 3 : i32, alignment = 1024 : i64}
// CHECK-LABEL: gpu.func @wstmaab_gemm0_m0
// CHECK:         %[[BYI:.*]] = gpu.block_id  y
// CHECK-NEXT:    %[[BY:.*]] = arith.index_cast %[[BYI]] : index to i32
// CHECK:         %[[ONE:.*]] = arith.constant 1 : i32
// CHECK-NEXT:    nvvm.mbarrier.init %{{.*}}, %[[ONE]] : !llvm.ptr<3>, i32
// CHECK-COUNT-3: nvvm.mbarrier.init %{{.*}}, %c1_i32_{{[0-9]+}} : !llvm.ptr<3>, i32
// CHECK:         nvvm.setmaxregister decrease 56
// CHECK:         scf.if
// CHECK-NEXT:      %[[PCALL:.*]] = llvm.call @__humming_input_map() : () -> !llvm.ptr
// CHECK-NEXT:      nvvm.prefetch tensormap, %[[PCALL]] : !llvm.ptr
// Producer 0 alone runs the fill loop (the others would wait on the empty
// barriers without arriving anywhere).
// CHECK:         %[[IS0:.*]] = arith.cmpi eq, %{{.*}}, %c0_i32{{.*}} : i32
// CHECK-NEXT:    scf.if %[[IS0]] {
// CHECK:           scf.for
// CHECK-NOT:         nvvm.cp.async
// CHECK:             scf.if
// CHECK:             nvvm.mbarrier.arrive.expect_tx %[[FULL:.*]], %c25088_i32{{.*}} : !llvm.ptr<3>, i32
// CHECK-NEXT:        %[[MAP:.*]] = llvm.call @__humming_input_map() : () -> !llvm.ptr
// CHECK-NEXT:        %[[C128:.*]] = arith.constant 128 : i32
// CHECK-NEXT:        %[[ROW:.*]] = arith.muli %[[BY]], %[[C128]] : i32
// CHECK:             %[[COL:.*]] = arith.muli %{{.*}}, %c16_i32{{.*}} : i32
// CHECK-NEXT:        %[[SLOT:.*]] = arith.addi %{{.*}}, %{{.*}} : i32
// CHECK-NEXT:        %[[DST:.*]] = llvm.inttoptr %[[SLOT]] : i32 to !llvm.ptr<7>
// CHECK-NEXT:        nvvm.cp.async.bulk.tensor.shared.cluster.global %[[DST]], %[[MAP]], %[[FULL]], box[%[[COL]], %[[ROW]]] : !llvm.ptr<7>, !llvm.ptr
// CHECK-NOT:         nvvm.cp.async.bulk.tensor
// CHECK-COUNT-4:     nvvm.cp.async.bulk.shared.cluster.global %{{.*}}, %{{.*}}, %[[FULL]], %{{.*}} : !llvm.ptr<7>, <1>
// CHECK-NOT:       nvvm.cp.async
// CHECK:             nvvm.cp.async.bulk.shared.cluster.global %{{.*}}, %{{.*}}, %{{.*}}, %c512_i32 : !llvm.ptr<7>, <1>
// CHECK-NOT:     nvvm.cp.async
// CHECK-NOT:     nvvm.mbarrier.arrive %
// CHECK:         nvvm.setmaxregister increase 224
// The consumers' descriptors of k-tile u: slot x 25600 + 32 u + the
// warpgroup's rows x 128 bytes, the tokens' 8-row groups 1024 bytes apart
// (stride offset 64 << 32), the leading offset unused (1 << 16), 128-byte
// swizzle (1 << 62).
// CHECK:         scf.for
// CHECK:           %[[W0:.*]] = arith.muli %{{.*}}, %c16384_i32{{.*}} : i32
// CHECK-NEXT:      arith.addi %c0_i32{{.*}}, %[[W0]] : i32
// CHECK:           arith.ori %{{.*}}, %c4611686293305360384_i64{{.*}} : i64
// CHECK:           %[[W1:.*]] = arith.muli %{{.*}}, %c16384_i32{{.*}} : i32
// CHECK-NEXT:      arith.addi %c32_i32{{.*}}, %[[W1]] : i32
// CHECK:           arith.ori %{{.*}}, %c4611686293305360384_i64{{.*}} : i64
// CHECK:           %[[W2:.*]] = arith.muli %{{.*}}, %c16384_i32{{.*}} : i32
// CHECK-NEXT:      arith.addi %c64_i32{{.*}}, %[[W2]] : i32
// CHECK:           arith.ori %{{.*}}, %c4611686293305360384_i64{{.*}} : i64
// CHECK:           %[[W3:.*]] = arith.muli %{{.*}}, %c16384_i32{{.*}} : i32
// CHECK-NEXT:      arith.addi %c96_i32{{.*}}, %[[W3]] : i32
// CHECK:           arith.ori %{{.*}}, %c4611686293305360384_i64{{.*}} : i64

#t = #humming.tile_config<m = [1, inf], block = [128, 256, 64], warp = [128, 32, 64], stages = 4, mma = wgmma, warp_specialized = true, mbarrier = true, tma = [a, b]>
func.func @wstmaab(%a: memref<?x512xf16>, %w: memref<32x512xi32>, %s: memref<4x256xf16>, %c: memref<?x256xf16>) {
  humming.gemm %a, %w scales(%s : memref<4x256xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>>,
       input_schema = #humming.input_schema<type = f16>, layout = #humming.layout<chip = "sm_90a">,
       tile_configs = [#t]}
      : memref<?x512xf16>, memref<32x512xi32> -> memref<?x256xf16>
  return
}

// -----

// tma = [a, b] with 32 of K per iteration: 64-byte rows in TMA's 64-byte
// swizzle (input_map = 32 columns), its pattern 512 bytes (the buffer
// aligned so), one tensor copy per iteration; the descriptors of the two
// k-tiles at +0 and +32 bytes of the rows, 8-token groups 512 bytes apart
// (32 << 32), the leading offset unused (1 << 16), mode 2 (2 << 62):
// -9223371899415756800 as a signed i64.
// CHECK: humming.kernels = [{{{.*}}input_map = 32 : i64{{.*}}name = "wstma32_gemm0_m0"
// CHECK: llvm.mlir.global external @humming_dynamic_smem() {addr_space = 3 : i32, alignment = 512 : i64}
// CHECK-LABEL: gpu.func @wstma32_gemm0_m0
// CHECK:         nvvm.cp.async.bulk.tensor.shared.cluster.global
// CHECK-NOT:     nvvm.cp.async.bulk.tensor
// CHECK:         nvvm.setmaxregister increase
// CHECK:         %[[V0:.*]] = arith.muli %{{.*}}, %c8192_i32{{.*}} : i32
// CHECK-NEXT:    arith.addi %c0_i32{{.*}}, %[[V0]] : i32
// CHECK:         arith.ori %{{.*}}, %c-9223371899415756800_i64{{.*}} : i64
// CHECK:         %[[V1:.*]] = arith.muli %{{.*}}, %c8192_i32{{.*}} : i32
// CHECK-NEXT:    arith.addi %c32_i32{{.*}}, %[[V1]] : i32
// CHECK:         arith.ori %{{.*}}, %c-9223371899415756800_i64{{.*}} : i64

#t = #humming.tile_config<m = [1, inf], block = [128, 256, 32], warp = [128, 32, 32], mma = wgmma, warp_specialized = true, mbarrier = true, tma = [a, b]>
func.func @wstma32(%a: memref<?x512xf16>, %w: memref<32x512xi32>, %s: memref<4x256xf16>, %c: memref<?x256xf16>) {
  humming.gemm %a, %w scales(%s : memref<4x256xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>>,
       input_schema = #humming.input_schema<type = f16>, layout = #humming.layout<chip = "sm_90a">,
       tile_configs = [#t]}
      : memref<?x512xf16>, memref<32x512xi32> -> memref<?x256xf16>
  return
}

// -----

// wgmma_in_flight = 1: no drain when an iteration starts; after the first
// k-tile's wgmmas are committed every older group is complete
// (wait_group 1) and the previous slot is released; the drain comes once,
// after the loop.
// CHECK-LABEL: gpu.func @wsflight_gemm0_m0
// CHECK:         nvvm.setmaxregister increase 224
// CHECK:         scf.for
// CHECK:           "{\0A.reg .pred done;\0Await:\0Ambarrier.try_wait.parity.shared::cta.b64 done, [$0], $1;\0A@!done bra wait;\0A}"
// CHECK-NOT:       wgmma.wait_group.sync.aligned 0;
// CHECK:           nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT:      nvvm.wgmma.wait.group.sync.aligned 1
// CHECK:           scf.if
// CHECK:             nvvm.mbarrier.arrive %{{.*}} : !llvm.ptr<3>
// CHECK-COUNT-3:   nvvm.wgmma.commit.group.sync.aligned
// CHECK-NOT:       wgmma.wait_group
// CHECK:           scf.yield
// CHECK:         "wgmma.wait_group.sync.aligned 0;"

#t = #humming.tile_config<m = [1, inf], block = [128, 256, 64], warp = [128, 32, 64], stages = 4, mma = wgmma, warp_specialized = true, mbarrier = true, wgmma_in_flight = 1>
func.func @wsflight(%a: memref<?x512xf16>, %w: memref<32x512xi32>, %s: memref<4x256xf16>, %c: memref<?x256xf16>) {
  humming.gemm %a, %w scales(%s : memref<4x256xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>>,
       input_schema = #humming.input_schema<type = f16>, layout = #humming.layout<chip = "sm_90a">,
       tile_configs = [#t]}
      : memref<?x512xf16>, memref<32x512xi32> -> memref<?x256xf16>
  return
}
