// Pass options are checked before anything is generated.
// RUN: not humming-opt %s --humming-lower-to-nvvm="chip=sm_95" 2>&1 | FileCheck %s --check-prefix=CHIP
// RUN: not humming-opt %s --humming-lower-to-nvvm="chip=sm_90a ptx-version=70" 2>&1 | FileCheck %s --check-prefix=PTX
// RUN: not humming-opt %s --humming-compile-pipeline="chip=sm_89 ptx-version=95" 2>&1 | FileCheck %s --check-prefix=PIPE
// CHIP: error: humming-lower-to-nvvm: expected a chip among sm_75,
// CHIP-SAME: got 'sm_95'
// PTX: error: humming-lower-to-nvvm: expected a PTX ISA version between 80 and 90 for sm_90a, got 70
// PIPE: error: humming-lower-to-nvvm: expected a PTX ISA version between 84 and 90 for sm_89, got 95
func.func @gemm(%a: memref<?x128xf16>, %w: memref<128x16xi32>, %s: memref<128x1xf16>, %c: memref<?x128xf16>) {
  humming.gemm %a, %w scales(%s : memref<128x1xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16>, input_schema = #humming.input_schema<type = f16>}
      : memref<?x128xf16>, memref<128x16xi32> -> memref<?x128xf16>
  return
}
