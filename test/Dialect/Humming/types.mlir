// RUN: humming-opt %s | humming-opt | FileCheck %s
// RUN: humming-opt %s --mlir-print-op-generic | humming-opt | FileCheck %s

// Generic small floats are first-class weight types.

// CHECK-LABEL: func.func @small_floats
// CHECK-SAME: memref<4x!humming.float<e3m3>>
// CHECK-SAME: memref<4x!humming.float<e1m2>>
// CHECK-SAME: memref<4x!humming.float<e6m1>>
// CHECK-SAME: memref<4x!humming.float<e1m0>>
func.func @small_floats(%a: memref<4x!humming.float<e3m3>>,
                        %b: memref<4x!humming.float<e1m2>>,
                        %c: memref<4x!humming.float<e6m1>>,
                        %d: memref<4x!humming.float<e1m0>>) {
  return
}

// CHECK-LABEL: func.func @in_schema
// CHECK: #humming.weight_schema<type = !humming.float<e3m3>, scale = f16>
func.func @in_schema() attributes {s = #humming.weight_schema<type = !humming.float<e3m3>, scale = f16>} {
  return
}
