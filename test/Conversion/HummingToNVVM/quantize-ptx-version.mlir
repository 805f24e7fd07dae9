// RUN: humming-opt %s --humming-lower-to-nvvm="chip=sm_89" -verify-diagnostics
// RUN: humming-opt %s --humming-lower-to-nvvm="chip=sm_89 ptx-version=81" | FileCheck %s

// sm_89 has the cvt to fp8, but LLVM selects it from PTX ISA 8.1 only (and
// aborts below): said before codegen, and lowered with ptx-version=81.
// CHECK: nvvm.convert.f32x2.to.f8x2
func.func @fp8_on_sm89(%x: memref<?x256xf16>, %q: memref<?x256xf8E4M3FN>, %s: memref<?x1xf32>) {
  // expected-error @+1 {{'humming.quantize' op f8E4M3FN activations on sm_89 need PTX ISA 8.1 or later (LLVM selects the cvt to fp8 there from 8.1), got 7.8; pass ptx-version=81}}
  humming.quantize %x into %q scales(%s : memref<?x1xf32>)
      {schema = #humming.input_schema<type = f8E4M3FN, scaling = token>}
      : memref<?x256xf16> -> memref<?x256xf8E4M3FN>
  return
}
