// RUN: humming-opt %s --humming-lower-to-nvvm="chip=sm_90a" -split-input-file | FileCheck %s

// f8E4M3FN activations (wgmma k32) over uint4 weights with group scales:
// the loop carries the running f32 sums (64), the last iteration's own
// sums (64) and its two group scales per n-tile. After the wait for the
// previous iteration's wgmmas its sums join the running ones times their
// group scale (fma), the codes are dequantized in f16 and converted to
// e4m3 (cvt per pair, prmt into [p0.e0, p1.e0, p0.e1, p1.e1]), and each of
// the two k32 steps issues one m64n64k32 e4m3 wgmma per n-tile: scale-d 0
// on the first step (this iteration's sums start from zero), 1 on the
// second. After the loop the last fold, then per-token activation scales
// (f32, one per token) in the epilogue.
// CHECK-LABEL: gpu.func @w4a8_gemm0_m0
// CHECK:         scf.for
// CHECK:           "wgmma.wait_group.sync.aligned 0;"
// CHECK-COUNT-64:  llvm.intr.fma
// CHECK:           nvvm.convert.f16x2.to.f8x2 {{.*}} : vector<2xf16> -> i16(f8E4M3FN)
// CHECK:           nvvm.prmt <default> %c20800_i32{{.*}}, {{.*}}, {{.*}} : i32
// CHECK:           "wgmma.fence.sync.aligned;"
// CHECK:           wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3 {{.*}}p, 1, 1;
// CHECK-SAME:      %c0_i32
// CHECK:           wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3
// CHECK-SAME:      %c0_i32
// CHECK:           nvvm.wgmma.commit.group.sync.aligned
// CHECK:           wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3
// CHECK-SAME:      %c1_i32
// CHECK:           nvvm.wgmma.commit.group.sync.aligned
// CHECK:         scf.yield
// CHECK:         "wgmma.wait_group.sync.aligned 0;"
// CHECK-COUNT-64: llvm.intr.fma
// CHECK:         llvm.load {{.*}} : !llvm.ptr<1> -> f32
// CHECK:         llvm.store {{.*}} : i16, !llvm.ptr<1>

#t = #humming.tile_config<m = [1, inf], block = [64, 256, 64], warp = [64, 32, 64], mma = wgmma, stages = 4>
func.func @w4a8(%a: memref<?x512xf8E4M3FN>, %w: memref<16x1024xi32>, %s: memref<4x256xf16>, %as: memref<?x1xf32>, %c: memref<?x256xf16>) {
  humming.gemm %a, %w scales(%s : memref<4x256xf16>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>>,
       input_schema = #humming.input_schema<type = f8E4M3FN, scaling = token>, layout = #humming.layout<chip = "sm_90a">,
       tile_configs = [#t]}
      : memref<?x512xf8E4M3FN>, memref<16x1024xi32> -> memref<?x256xf16>
  return
}

// -----

// f8E4M3FN weights with f8E4M3FN activations (W8A8 as FP8 checkpoints store
// it): on sm_90a their tiles lie K-major (layout::TileOrder::KMajor) and
// each wgmma reads them from the slot by descriptor as its A operand —
// no shared loads into registers, no conversion: one fence ties the
// iteration's weight descriptors (two k32 steps x two n-tiles; the K
// halves 4 KiB apart — the block's four n-tiles of a k-tile slot: leading
// offset 4096 >> 4 = 256 at bit 16, 8-row groups 128 >> 4 = 8 at bit 32:
// 34376515584), its two activation descriptors and the sums, then per
// step one nvvm.wgmma.mma_async per n-tile, scale-d 0 on the first step,
// and one commit. Channel scales and the static activation scale multiply
// in the epilogue; the sums are added without scales.
// CHECK-LABEL: gpu.func @w8a8_gemm0_m0
// CHECK:         scf.for
// CHECK:           "wgmma.wait_group.sync.aligned 0;"
// CHECK-NOT:       llvm.load {{.*}} : !llvm.ptr<3>
// CHECK-NOT:       nvvm.convert.f16x2.to.f8x2
// CHECK:           arith.ori %{{.*}}, %c34376515584_i64 : i64
// CHECK:           "wgmma.fence.sync.aligned;", "=l,=l,=l,=l,=l,=l,=f,
// CHECK-NOT:       wgmma.fence
// CHECK:           nvvm.wgmma.mma_async {{.*}} <m = 64, n = 64, k = 32>, D[<f32>, <zero>], A[<e4m3>, <one>, <row>], B[<e4m3>, <one>, <col>]
// CHECK:           nvvm.wgmma.mma_async {{.*}} <m = 64, n = 64, k = 32>, D[<f32>, <zero>], A[<e4m3>, <one>, <row>], B[<e4m3>, <one>, <col>]
// CHECK-NOT:       nvvm.wgmma.commit.group.sync.aligned
// CHECK:           nvvm.wgmma.mma_async {{.*}} D[<f32>, <one>]
// CHECK:           nvvm.wgmma.mma_async {{.*}} D[<f32>, <one>]
// CHECK-NOT:       nvvm.wgmma.mma_async
// CHECK:           nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT:      scf.yield
// CHECK-NOT:     llvm.intr.fma
// CHECK:         llvm.load {{.*}} : !llvm.ptr<1> -> f32

#t = #humming.tile_config<m = [1, inf], block = [64, 256, 64], warp = [64, 32, 64], mma = wgmma, stages = 4>
func.func @w8a8(%a: memref<?x512xf8E4M3FN>, %w: memref<16x2048xi32>, %s: memref<1x256xf16>, %as: memref<1xf32>, %c: memref<?x256xbf16>) {
  humming.gemm %a, %w scales(%s : memref<1x256xf16>) input_scale(%as : memref<1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = f8E4M3FN, scale = f16, granularity = channel>,
       input_schema = #humming.input_schema<type = f8E4M3FN, scaling = static>, layout = #humming.layout<chip = "sm_90a">,
       tile_configs = [#t]}
      : memref<?x512xf8E4M3FN>, memref<16x2048xi32> -> memref<?x256xbf16>
  return
}

// -----

// f8E5M2 activations: e5m2 wgmmas and conversions.
// CHECK-LABEL: gpu.func @e5m2_gemm0_m0
// CHECK:         nvvm.convert.f16x2.to.f8x2 {{.*}} -> i16(f8E5M2)
// CHECK:         wgmma.mma_async.sync.aligned.m64n64k32.f32.e5m2.e5m2
#t = #humming.tile_config<m = [1, inf], block = [64, 64, 64], warp = [64, 16, 64], mma = wgmma, stages = 3>
func.func @e5m2(%a: memref<?x256xf8E5M2>, %w: memref<8x256xi32>, %s: memref<1x64xf16>, %as: memref<?x1xf32>, %c: memref<?x64xf16>) {
  humming.gemm %a, %w scales(%s : memref<1x64xf16>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = channel>,
       input_schema = #humming.input_schema<type = f8E5M2, scaling = token>, layout = #humming.layout<chip = "sm_90a">,
       tile_configs = [#t]}
      : memref<?x256xf8E5M2>, memref<8x256xi32> -> memref<?x64xf16>
  return
}
