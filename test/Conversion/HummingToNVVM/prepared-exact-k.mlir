// RUN: humming-opt %s -split-input-file --humming-lower-to-nvvm="chip=sm_90a" | FileCheck %s

// Exact K (every k-tile of every iteration real, every activation column
// inside K): the loop copies without clamping the k-tile or checking
// columns (no arith.minsi / arith.maxsi in it), and the copies of the
// iterations past its end are skipped (scf.if around them; the commit
// stays outside, so the groups still count one per iteration).
// CHECK-LABEL: gpu.func @exact_gemm0_m0
// CHECK:         scf.for
// CHECK:           nvvm.cp.async.wait.group 1
// CHECK-NOT:       arith.minsi
// CHECK-NOT:       arith.maxsi
// CHECK:           %[[INSIDE:.*]] = arith.cmpi slt, %{{.*}}, %c16_i32{{.*}} : i32
// CHECK:           scf.if %[[INSIDE]] {
// CHECK:             nvvm.cp.async.shared.global
// CHECK:           }
// CHECK-NEXT:      nvvm.cp.async.commit.group
// CHECK:           nvvm.mma.sync
// CHECK:         nvvm.cp.async.wait.group 0

#t = #humming.tile_config<m = [1, inf], block = [16, 64, 16], warp = [16, 64, 16], stages = 3>
func.func @exact(%a: memref<?x256xf16>, %w: memref<16x256xi32>, %s: memref<2x128xf16>, %c: memref<?x128xf16>) {
  humming.gemm %a, %w scales(%s : memref<2x128xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>>,
       input_schema = #humming.input_schema<type = f16>, layout = #humming.layout<chip = "sm_90a">,
       tile_configs = [#t]}
      : memref<?x256xf16>, memref<16x256xi32> -> memref<?x128xf16>
  return
}

// -----

// K = 200 padded to 224 (14 k-tiles, the last ones past K; groups of 32): the loop clamps the k-tile
// to the last one and zero-fills the columns past K (the source size
// min(8, 200 - column) x 2 bytes), and copies every iteration.
// CHECK-LABEL: gpu.func @tail_gemm0_m0
// CHECK:         scf.for
// CHECK:           nvvm.cp.async.wait.group 1
// CHECK:           arith.minsi %{{.*}}, %c13_i32{{.*}} : i32
// CHECK:           arith.subi %c200_i32{{.*}}, %{{.*}} : i32
// CHECK:           arith.minsi
// CHECK:           arith.maxsi
// CHECK-NOT:       scf.if
// CHECK:           nvvm.cp.async.commit.group
// CHECK:           nvvm.mma.sync

#t = #humming.tile_config<m = [1, inf], block = [16, 64, 16], warp = [16, 64, 16], stages = 3>
func.func @tail(%a: memref<?x200xf16>, %w: memref<14x256xi32>, %s: memref<7x128xf16>, %c: memref<?x128xf16>) {
  humming.gemm %a, %w scales(%s : memref<7x128xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<32>, pad_k = 24>,
       input_schema = #humming.input_schema<type = f16>, layout = #humming.layout<chip = "sm_90a">,
       tile_configs = [#t]}
      : memref<?x200xf16>, memref<14x256xi32> -> memref<?x128xf16>
  return
}
