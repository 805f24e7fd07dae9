// RUN: humming-opt %s --humming-compile-pipeline="chip=sm_90a" | FileCheck %s
// RUN: humming-translate %s --chip=sm_90a | FileCheck %s --check-prefix=PTX

// The named pipeline ends in a gpu.binary holding PTX for the chip; the host
// function keeps the launch.

// CHECK-LABEL: func.func @gemm_w3a16_g64
// CHECK:      gpu.launch_func @humming_kernels::@gemm_w3a16_g64_gemm0
// CHECK:      gpu.binary @humming_kernels  [#gpu.object<#nvvm.target<O = 3, chip = "sm_90a", features = "+ptx80">, {{.*}}assembly = "
// CHECK-SAME: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32

// PTX: .version 8.0
// PTX: .target sm_90a
// PTX: .visible .entry gemm_w3a16_g64_gemm0(
// PTX-COUNT-2: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
func.func @gemm_w3a16_g64(%a: memref<?x256xf16>, %w: memref<128x24xi32>, %s: memref<128x4xf16>, %c: memref<?x128xf16>) {
  humming.gemm %a, %w scales(%s : memref<128x4xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui3, scale = f16, granularity = group<64>>,
       input_schema = #humming.input_schema<type = f16>}
      : memref<?x256xf16>, memref<128x24xi32> -> memref<?x128xf16>
  return
}
