// RUN: humming-opt %s -split-input-file --humming-lower-to-nvvm="chip=sm_90a" | FileCheck %s
// RUN: humming-opt %s -split-input-file --humming-compile-pipeline="chip=sm_90a" -o /dev/null

// f16 accumulation: the MMAs accumulate in two f16x2 registers, widened to
// f32 after the loop (reduction and epilogue as with f32 accumulation).
// CHECK-LABEL: gpu.func @group_gemm0_m0
// CHECK:         scf.for {{.*}} -> (vector<2xf16>,
// CHECK-COUNT-8:   nvvm.mma.sync {{.*}} shape = #nvvm.shape<m = 16, n = 8, k = 16>} : (vector<2xf16>, vector<2xf16>, vector<2xf16>) -> !llvm.struct<(vector<2xf16>, vector<2xf16>)>
// CHECK:         arith.extf %{{.*}} : f16 to f32
#tile = #humming.tile_config<m = [1, inf], block = [16, 64, 64], warp = [16, 64, 32], stages = 3>
func.func @group(%a: memref<?x256xf16>, %w: memref<16x256xi32>, %s: memref<2x128xf16>, %c: memref<?x128xf16>) {
  humming.gemm %a, %w scales(%s : memref<2x128xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>>,
       input_schema = #humming.input_schema<type = f16>, compute = #humming.compute<f16_accumulation = true>,
       layout = #humming.layout<chip = "sm_90a">, tile_configs = [#tile]}
      : memref<?x256xf16>, memref<16x256xi32> -> memref<?x128xf16>
  return
}

// -----

// Channel scales move into the main loop (the f16 sums of unscaled 8-bit
// codes would overflow): eight scale loads before the loop, one multiply
// per dequantized pair, and none in the epilogue.
// CHECK-LABEL: gpu.func @channel_gemm0_m0
// CHECK-COUNT-8: llvm.load %{{.*}} invariant : !llvm.ptr<1> -> i16
// CHECK:         scf.for
// CHECK:           arith.mulf %{{.*}} : vector<2xf16>
// CHECK:           scf.yield
// CHECK-NOT:     llvm.load %{{.*}} : !llvm.ptr<1> -> i16
// CHECK:         gpu.return
#tile = #humming.tile_config<m = [1, inf], block = [16, 64, 64], warp = [16, 64, 32], stages = 3>
func.func @channel(%a: memref<?x256xf16>, %w: memref<16x512xi32>, %s: memref<1x128xf16>, %c: memref<?x128xf16>) {
  humming.gemm %a, %w scales(%s : memref<1x128xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui8, scale = f16>,
       input_schema = #humming.input_schema<type = f16>, compute = #humming.compute<f16_accumulation = true>,
       layout = #humming.layout<chip = "sm_90a">, tile_configs = [#tile]}
      : memref<?x256xf16>, memref<16x512xi32> -> memref<?x128xf16>
  return
}
