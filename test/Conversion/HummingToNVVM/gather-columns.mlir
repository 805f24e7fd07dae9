// RUN: humming-opt %s --humming-lower-to-nvvm="chip=sm_90a" | FileCheck %s
// RUN: humming-opt %s --humming-lower-to-nvvm="chip=sm_80" | FileCheck %s --check-prefix=SM80

// humming.gather_columns (an act-order layer's activations into its
// weights' column order): kind 8 with block_n the steps of a row (4096
// f16: 512 pieces of 16 bytes, one vector store each; 100 f16, not whole
// pieces: 100 elements), one thread per step in a grid-stride loop over at
// most 2^20 blocks of 256, launched only for a nonzero number of rows (the
// fewer of the two sides, capped so that rows * K fits in i32); the
// indices go to the first routing slot. Each element's index is checked
// against K (outside it the element is zero: nothing is read outside the
// row). From sm_90 on the kernel first lets the next kernel launch
// (griddepcontrol.launch_dependents).

// CHECK: humming.kernels = [{block_m = 1 : i64, block_n = 512 : i64, {{.*}} kind = 8 : i64, {{.*}} name = "act_order_gather_columns0", smem = 0 : i64, split_k = 1 : i64, threads = 256 : i64}
// CHECK-SAME: {block_m = 1 : i64, block_n = 100 : i64, {{.*}} kind = 8 : i64, {{.*}} name = "act_order_gather_columns1", {{.*}} threads = 256 : i64}]
// CHECK-LABEL: func.func @act_order(
// CHECK-SAME:    %[[X:[^:]*]]: memref<?x4096xf16>, %[[P:[^:]*]]: memref<4096xi32>, %[[Y:[^:]*]]: memref<?x4096xf16>
// CHECK:         %[[MX:.*]] = memref.dim %[[X]], %c0
// CHECK:         %[[MY:.*]] = memref.dim %[[Y]], %c0
// CHECK:         %[[M:.*]] = arith.minui %[[MX]], %[[MY]]
// CHECK:         %[[ROWS:.*]] = arith.minui %[[M]], %c524287
// CHECK:         arith.muli %[[ROWS]], %c512
// CHECK:         arith.ceildivui %{{.*}}, %c256
// CHECK:         %[[BLOCKS:.*]] = arith.minui %{{.*}}, %c1048576
// CHECK:         scf.if
// CHECK:           gpu.launch_func @humming_kernels::@act_order_gather_columns0 blocks in (%[[BLOCKS]],
// CHECK:       gpu.func @act_order_gather_columns0(
// CHECK:         nvvm.griddepcontrol launch_dependents
// CHECK:         scf.for
// CHECK:           arith.remui %{{.*}}, %c512
// CHECK:           arith.cmpi sge
// CHECK:           arith.cmpi slt, %{{.*}}, %c4096
// CHECK:           scf.if %{{.*}} -> (i16)
// CHECK-COUNT-7:   scf.if %{{.*}} -> (i16)
// CHECK:           llvm.store %{{.*}} : vector<4xi32>
// CHECK:       gpu.func @act_order_gather_columns1(
// CHECK:           arith.remui %{{.*}}, %c100
// CHECK:           scf.if %{{.*}} -> (i16)
// CHECK-NOT:       scf.if
// CHECK:           llvm.store %{{.*}} : i16
// SM80-LABEL: gpu.func @act_order_gather_columns0(
// SM80-NOT:     griddepcontrol
// SM80:         scf.for
func.func @act_order(%x: memref<?x4096xf16>, %perm: memref<4096xi32>,
                     %xg: memref<?x4096xf16>, %x2: memref<?x100xf16>,
                     %p2: memref<100xi32>, %xg2: memref<?x100xf16>) {
  humming.gather_columns %x columns(%perm : memref<4096xi32>) into %xg
      : memref<?x4096xf16> -> memref<?x4096xf16>
  humming.gather_columns %x2 columns(%p2 : memref<100xi32>) into %xg2
      : memref<?x100xf16> -> memref<?x100xf16>
  return
}
