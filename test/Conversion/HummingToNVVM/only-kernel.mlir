// RUN: humming-opt %s --humming-lower-to-nvvm="chip=sm_90a only-kernel=1" | FileCheck %s
// RUN: humming-opt %s --humming-compile-pipeline="chip=sm_90a only-kernel=1" | FileCheck %s --check-prefix=PTX
// RUN: not humming-opt %s --humming-lower-to-nvvm="chip=sm_90a only-kernel=2" 2>&1 | FileCheck %s --check-prefix=BAD

// only-kernel=1: the host code and the kernel table still name both M-range
// kernels, but only kernel 1 has a body; kernel 0 is an empty stub (the JIT
// compiles one pipeline per kernel in parallel and takes kernel i from run i).
// CHECK: humming.kernels = [{{.*}}name = "layer_gemm0_m0"{{.*}}name = "layer_gemm0_m1"
// CHECK:       gpu.func @layer_gemm0_m0(%{{.*}}: !llvm.ptr<1>, {{.*}}, %{{.*}}: i32) kernel {
// CHECK-NEXT:    gpu.return
// CHECK-NEXT:  }
// CHECK:       gpu.func @layer_gemm0_m1
// CHECK:         nvvm.mma.sync
// PTX: .entry layer_gemm0_m0(
// PTX: .entry layer_gemm0_m1(
// PTX: mma.sync.aligned.m16n8k16
// BAD: error: 'humming.gemm' op only-kernel=2 names no kernel: expected an index below 2 (one kernel per tile configuration)

#small = #humming.tile_config<m = [1, 16], block = [16, 64, 64], warp = [16, 64, 32], stages = 3>
#large = #humming.tile_config<m = [17, inf], block = [32, 128, 32], warp = [32, 64, 16], stages = 2>
func.func @layer(%a: memref<?x256xf16>, %w: memref<16x256xi32>, %s: memref<2x128xf16>, %c: memref<?x128xf16>) {
  humming.gemm %a, %w scales(%s : memref<2x128xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>>,
       input_schema = #humming.input_schema<type = f16>, layout = #humming.layout<chip = "sm_90a">,
       tile_configs = [#small, #large]}
      : memref<?x256xf16>, memref<16x256xi32> -> memref<?x128xf16>
  return
}
