// humming-translate reports errors as humming-opt does: file:line:col:
// error: with the source line and a caret, from the parser's verifier and
// from the compile pipeline's passes alike, without a dump of the module.
// RUN: not humming-translate %s --chip=sm_75 -o /dev/null 2>&1 | FileCheck %s
// RUN: echo 'module {}' > %t.empty.mlir
// RUN: not humming-translate %t.empty.mlir -o /dev/null 2>&1 | FileCheck %s --check-prefix=EMPTY

func.func @w4a16_g128(%a: memref<?x4096xf16>, %w: memref<256x8192xi32>, %s: memref<32x4096xf16>, %c: memref<?x4096xf16>) {
// CHECK: translate-diagnostics.mlir:[[@LINE+3]]:3: error: 'humming.gemm' op the weights are prepared for sm_80; expected chip=sm_80, got chip=sm_75
// CHECK-NEXT: {{^}}  humming.gemm %a, %w scales
// CHECK-NEXT: {{^}}  ^
  humming.gemm %a, %w scales(%s : memref<32x4096xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>>,
       input_schema = #humming.input_schema<type = f16>, layout = #humming.layout<chip = "sm_80">}
      : memref<?x4096xf16>, memref<256x8192xi32> -> memref<?x4096xf16>
  return
}
// CHECK-NOT: see current operation
// CHECK-NOT: loc(

// EMPTY: empty.mlir:1:1: error: the module has no kernels to compile (expected a humming op: gemm, moe_gemm, quantize ...; a frontend's dequantize-then-matmul is raised to one by humming-opt --humming-raise-quantized-matmul first)
// EMPTY-NEXT: module {}
