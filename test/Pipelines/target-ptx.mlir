// A module's humming.target names the PTX ISA version to emit, and the
// pipeline emits it: humming-translate (the JIT path) takes it from the
// target; a hand-written pipeline must agree with it.

// RUN: humming-translate %s --chip=sm_90a -o - | FileCheck %s --check-prefix=PTX
// PTX: .version 8.5
// PTX: .target sm_90a

// RUN: humming-opt %s --humming-compile-pipeline="chip=sm_90a ptx-version=85" | FileCheck %s --check-prefix=OK
// OK: gpu.binary @humming_kernels

// RUN: not humming-opt %s --humming-compile-pipeline="chip=sm_90a" 2>&1 | FileCheck %s --check-prefix=MIN
// MIN: humming-lower-to-nvvm: the module's humming.target asks for PTX ISA 85; expected ptx-version=85, got ptx-version=80 (the chip's minimum)
// RUN: not humming-opt %s --humming-compile-pipeline="chip=sm_90a ptx-version=87" 2>&1 | FileCheck %s --check-prefix=OTHER
// OTHER: humming-lower-to-nvvm: the module's humming.target asks for PTX ISA 85; expected ptx-version=85, got ptx-version=87{{$}}

module attributes {humming.target = #humming.target<device = "H200", ptx = 85>} {
func.func @layer(%a: memref<?x128xf16>, %w: memref<128x16xi32>, %s: memref<128x1xf16>, %c: memref<?x128xf16>) {
  humming.gemm %a, %w scales(%s : memref<128x1xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16>, input_schema = #humming.input_schema<type = f16>}
      : memref<?x128xf16>, memref<128x16xi32> -> memref<?x128xf16>
  return
}
}
