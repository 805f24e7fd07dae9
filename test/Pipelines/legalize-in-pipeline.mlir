// RUN: humming-opt %s --humming-compile-pipeline="chip=sm_80" | FileCheck %s

// The compile pipeline legalizes first: GPTQ weights become canonical
// arguments (marked for the host conversion) and the canonical kernel is
// built for them.
// CHECK:      func.func @gptq(%{{.*}}: memref<?x1024xf16>, %{{.*}}: memref<1024x128xi32> {humming.operand = #humming.operand<weight>, humming.source_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>, format = gptq>}
// CHECK:        gpu.launch_func @humming_kernels::@gptq_gemm0
// CHECK:      gpu.binary @humming_kernels
func.func @gptq(%a: memref<?x1024xf16>, %w: memref<128x1024xi32>, %s: memref<8x1024xf16>, %c: memref<?x1024xf16>) {
  humming.gemm %a, %w scales(%s : memref<8x1024xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>, format = gptq>,
       input_schema = #humming.input_schema<type = f16>}
      : memref<?x1024xf16>, memref<128x1024xi32> -> memref<?x1024xf16>
  return
}
