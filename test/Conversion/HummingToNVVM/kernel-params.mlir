// RUN: humming-opt %s -split-input-file -verify-diagnostics --pass-pipeline="builtin.module(gpu.module(humming-kernel-params))" | FileCheck %s

// A kernel that calls the input-map placeholder gets the tensor map as a
// by-value parameter after its others (128 bytes, 64-byte aligned, grid
// constant); the calls become that argument and the declaration goes.
// Other kernels keep their signatures.
// CHECK-LABEL: gpu.module @kernels
// CHECK-NOT:     __humming_input_map
// CHECK:         llvm.func @tma(%[[P:.*]]: !llvm.ptr<1>, %[[M:.*]]: i32, %[[MAP:.*]]: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>, nvvm.grid_constant})
// CHECK-NEXT:      %[[A:.*]] = llvm.ptrtoint %[[MAP]] : !llvm.ptr to i64
// CHECK-NEXT:      %[[B:.*]] = llvm.ptrtoint %[[MAP]] : !llvm.ptr to i64
// CHECK:         llvm.func @plain(%{{.*}}: !llvm.ptr<1>, %{{.*}}: i32) attributes
module attributes {gpu.container_module} {
  gpu.module @kernels {
    llvm.func @__humming_input_map() -> !llvm.ptr
    llvm.func @tma(%p: !llvm.ptr<1>, %m: i32) attributes {gpu.kernel, nvvm.kernel} {
      %0 = llvm.call @__humming_input_map() : () -> !llvm.ptr
      %1 = llvm.ptrtoint %0 : !llvm.ptr to i64
      %2 = llvm.call @__humming_input_map() : () -> !llvm.ptr
      %3 = llvm.ptrtoint %2 : !llvm.ptr to i64
      llvm.return
    }
    llvm.func @plain(%p: !llvm.ptr<1>, %m: i32) attributes {gpu.kernel, nvvm.kernel} {
      llvm.return
    }
  }
}

// -----

// Outside a kernel there is no parameter to stand for.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    llvm.func @__humming_input_map() -> !llvm.ptr
    llvm.func @helper() {
      // expected-error @+1 {{calls __humming_input_map outside a kernel; expected it only in the prepared kernels with tma = [a] (the activations' map) or K-major weights by TMA (the weights')}}
      %0 = llvm.call @__humming_input_map() : () -> !llvm.ptr
      llvm.return
    }
  }
}

// -----

// The weights' map (KernelLaunch::weightMap) comes after the activations'
// whatever the order of the calls; a kernel with only the weights' map
// takes it after its others.
// CHECK-LABEL: gpu.module @kernels
// CHECK-NOT:     __humming_weight_map
// CHECK:         llvm.func @both(%{{.*}}: !llvm.ptr<1>, %{{.*}}: i32, %[[IN:.*]]: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>, nvvm.grid_constant}, %[[W:.*]]: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>, nvvm.grid_constant})
// CHECK-NEXT:      llvm.ptrtoint %[[W]] : !llvm.ptr to i64
// CHECK-NEXT:      llvm.ptrtoint %[[IN]] : !llvm.ptr to i64
// CHECK:         llvm.func @weights(%{{.*}}: !llvm.ptr<1>, %{{.*}}: i32, %[[W2:.*]]: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>, nvvm.grid_constant})
// CHECK-NEXT:      llvm.ptrtoint %[[W2]] : !llvm.ptr to i64
module attributes {gpu.container_module} {
  gpu.module @kernels {
    llvm.func @__humming_input_map() -> !llvm.ptr
    llvm.func @__humming_weight_map() -> !llvm.ptr
    llvm.func @both(%p: !llvm.ptr<1>, %m: i32) attributes {gpu.kernel, nvvm.kernel} {
      %0 = llvm.call @__humming_weight_map() : () -> !llvm.ptr
      %1 = llvm.ptrtoint %0 : !llvm.ptr to i64
      %2 = llvm.call @__humming_input_map() : () -> !llvm.ptr
      %3 = llvm.ptrtoint %2 : !llvm.ptr to i64
      llvm.return
    }
    llvm.func @weights(%p: !llvm.ptr<1>, %m: i32) attributes {gpu.kernel, nvvm.kernel} {
      %0 = llvm.call @__humming_weight_map() : () -> !llvm.ptr
      %1 = llvm.ptrtoint %0 : !llvm.ptr to i64
      llvm.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @kernels {
    llvm.func @__humming_weight_map() -> !llvm.ptr
    llvm.func @helper() {
      // expected-error @+1 {{calls __humming_weight_map outside a kernel; expected it only in the prepared kernels with tma = [a] (the activations' map) or K-major weights by TMA (the weights')}}
      %0 = llvm.call @__humming_weight_map() : () -> !llvm.ptr
      llvm.return
    }
  }
}
