// RUN: humming-opt %s | humming-opt | FileCheck %s

// humming.gather_columns round-trips: 16-bit activations with a static
// index vector, 8-bit codes with a dynamic one.
// CHECK-LABEL: func.func @act_order(
// CHECK: humming.gather_columns %{{.*}} columns(%{{.*}} : memref<4096xi32>) into %{{.*}} : memref<?x4096xf16> -> memref<?x4096xf16>
// CHECK: humming.gather_columns %{{.*}} columns(%{{.*}} : memref<?xi32>) into %{{.*}} : memref<8x512xf8E4M3FN> -> memref<8x512xf8E4M3FN>
func.func @act_order(%x: memref<?x4096xf16>, %perm: memref<4096xi32>,
                     %xg: memref<?x4096xf16>, %c: memref<8x512xf8E4M3FN>,
                     %p: memref<?xi32>, %cg: memref<8x512xf8E4M3FN>) {
  humming.gather_columns %x columns(%perm : memref<4096xi32>) into %xg
      : memref<?x4096xf16> -> memref<?x4096xf16>
  humming.gather_columns %c columns(%p : memref<?xi32>) into %cg
      : memref<8x512xf8E4M3FN> -> memref<8x512xf8E4M3FN>
  return
}
