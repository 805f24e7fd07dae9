// RUN: humming-opt %s --humming-lower-to-nvvm="chip=sm_90a" -split-input-file | FileCheck %s

// si8 activations over uint4 weights with group scales: s8 wgmmas (k32,
// s32 sums, no scale-a / scale-b) into the iteration's own i32 sums, which
// the next iteration converts and adds to the running f32 sums times their
// group scale. The codes are dequantized in f16 with 1152 added where the
// zero point is subtracted (their low bytes are then v + 128), a prmt
// (0x6240) gathers the low bytes of two pairs and an xor flips their sign
// bits.
// CHECK-LABEL: gpu.func @w4a8_gemm0_m0
// CHECK:         scf.for
// CHECK:           "wgmma.wait_group.sync.aligned 0;", "=f,{{.*}}=f,=r,{{.*}}=r,=f
// CHECK:           arith.sitofp {{.*}} : i32 to f32
// CHECK-NEXT:      llvm.intr.fma
// CHECK:           nvvm.prmt <default> %c25152_i32{{.*}}, {{.*}}, {{.*}} : i32
// CHECK:           arith.xori {{.*}}, %c-2139062144_i32
// CHECK:           wgmma.mma_async.sync.aligned.m64n64k32.s32.s8.s8 {{.*}}, p;
// CHECK-SAME:      "=r,{{.*}},r,r,r,r,l,n,
// CHECK:         scf.yield
// CHECK:         "wgmma.wait_group.sync.aligned 0;"
// CHECK-COUNT-64: arith.sitofp
#t = #humming.tile_config<m = [1, inf], block = [64, 256, 64], warp = [64, 32, 64], mma = wgmma, stages = 4>
func.func @w4a8(%a: memref<?x512xi8>, %w: memref<16x1024xi32>, %s: memref<4x256xf16>, %as: memref<?x1xf32>, %c: memref<?x256xf16>) {
  humming.gemm %a, %w scales(%s : memref<4x256xf16>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>>,
       input_schema = #humming.input_schema<type = si8, scaling = token>, layout = #humming.layout<chip = "sm_90a">,
       tile_configs = [#t]}
      : memref<?x512xi8>, memref<16x1024xi32> -> memref<?x256xf16>
  return
}

// -----

// si8 weights with si8 activations (W8A8 int8): on sm_90a their tiles lie
// K-major as s8 (layout::TileOrder::KMajor) and the s8 wgmmas read them
// from the slot by descriptor; no shared loads, no xor, no dequantization.
// Channel scales in the epilogue, and no promotion: the s32 sums are exact
// over the whole of K (layout::wgmmaPromotes), so every wgmma accumulates
// into the loop's one set of sums (scale-d one, also on an iteration's
// first k32 step) and only the epilogue converts them to f32.
// CHECK-LABEL: gpu.func @w8a8_gemm0_m0
// CHECK:         scf.for
// CHECK:           "wgmma.wait_group.sync.aligned 0;"
// CHECK-NOT:       arith.sitofp
// CHECK-NOT:       llvm.load {{.*}} : !llvm.ptr<3>
// CHECK-NOT:       arith.xori {{.*}}, %c-2139062144_i32
// CHECK:           nvvm.wgmma.mma_async {{.*}} D[<s32>, <one>], A[<s8>, <one>, <row>], B[<s8>, <one>, <col>]
// CHECK-NOT:       D[<s32>, <zero>]
// CHECK:         scf.yield
// CHECK:         "wgmma.wait_group.sync.aligned 0;"
// CHECK-COUNT-32: arith.sitofp
#t = #humming.tile_config<m = [1, inf], block = [64, 256, 64], warp = [64, 32, 64], mma = wgmma, stages = 4>
func.func @w8a8(%a: memref<?x512xi8>, %w: memref<16x2048xi32>, %s: memref<1x256xf16>, %as: memref<?x1xf32>, %c: memref<?x256xbf16>) {
  humming.gemm %a, %w scales(%s : memref<1x256xf16>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = si8, scale = f16, granularity = channel>,
       input_schema = #humming.input_schema<type = si8, scaling = token>, layout = #humming.layout<chip = "sm_90a">,
       tile_configs = [#t]}
      : memref<?x512xi8>, memref<16x2048xi32> -> memref<?x256xbf16>
  return
}

// -----

// ui8 weights without zero points (what checkpoints' int8 becomes in the
// canonical form: value = code - 128) are si8 offset by 128: the K-major
// tiles hold them as s8 (the repack subtracts the 128), read by descriptor
// as si8's are.
// CHECK-LABEL: gpu.func @u8a8_gemm0_m0
// CHECK:         scf.for
// CHECK-NOT:       llvm.load {{.*}} : !llvm.ptr<3>
// CHECK-NOT:       arith.xori {{.*}}, %c-2139062144_i32
// CHECK:           nvvm.wgmma.mma_async {{.*}} A[<s8>, <one>, <row>], B[<s8>, <one>, <col>]
// CHECK:         scf.yield
#t = #humming.tile_config<m = [1, inf], block = [64, 256, 64], warp = [64, 32, 64], mma = wgmma, stages = 4>
func.func @u8a8(%a: memref<?x512xi8>, %w: memref<16x2048xi32>, %s: memref<1x256xf16>, %as: memref<?x1xf32>, %c: memref<?x256xf16>) {
  humming.gemm %a, %w scales(%s : memref<1x256xf16>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = ui8, scale = f16, granularity = channel>,
       input_schema = #humming.input_schema<type = si8, scaling = token>, layout = #humming.layout<chip = "sm_90a">,
       tile_configs = [#t]}
      : memref<?x512xi8>, memref<16x2048xi32> -> memref<?x256xf16>
  return
}
