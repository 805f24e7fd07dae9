// RUN: humming-opt %s | humming-opt | FileCheck %s

// humming-opt knows every dialect the pipeline lowers through, so IR mixing
// them (as a partially lowered kernel does) parses and prints.

// CHECK-LABEL: gpu.module @kernels
// CHECK: nvvm.read.ptx.sreg.tid.x
// CHECK: nvvm.cp.async.wait.group 0
// CHECK: vector.broadcast
// CHECK: scf.for
// CHECK: memref.load
// CHECK: nvgpu.device_async_create_group
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k(%buf: memref<128xf16, 3>, %src: memref<128xf16>) kernel {
      %tid = nvvm.read.ptx.sreg.tid.x : i32
      nvvm.cp.async.wait.group 0
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      %h = arith.constant 1.0 : f16
      %v = vector.broadcast %h : f16 to vector<8xf16>
      scf.for %i = %c0 to %c4 step %c1 {
        %x = memref.load %src[%i] : memref<128xf16>
        memref.store %x, %buf[%i] : memref<128xf16, 3>
      }
      %t = nvgpu.device_async_copy %src[%c0], %buf[%c0], 8 : memref<128xf16> to memref<128xf16, 3>
      %g = nvgpu.device_async_create_group %t
      %p = llvm.mlir.zero : !llvm.ptr
      gpu.return
    }
  }
}
