// RUN: humming-opt %s --humming-lower-to-nvvm="chip=sm_89" | FileCheck %s
// RUN: not humming-opt %s --humming-lower-to-nvvm="chip=sm_89 ptx-version=81" 2>&1 | FileCheck %s --check-prefix=OLD

// sm_89 has the cvt to fp8 (and the fp8 mma.sync), which LLVM selects from
// PTX ISA 8.1 (8.4) only and aborts below: sm_89's minimum is 8.4, so the
// default lowers and an older version is refused before codegen.
// CHECK: nvvm.convert.f32x2.to.f8x2
// OLD: humming-lower-to-nvvm: expected a PTX ISA version between 84 and {{[0-9]+}} for sm_89, got 81
func.func @fp8_on_sm89(%x: memref<?x256xf16>, %q: memref<?x256xf8E4M3FN>, %s: memref<?x1xf32>) {
  humming.quantize %x into %q scales(%s : memref<?x1xf32>)
      {schema = #humming.input_schema<type = f8E4M3FN, scaling = token>}
      : memref<?x256xf16> -> memref<?x256xf8E4M3FN>
  return
}
