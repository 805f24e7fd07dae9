// RUN: humming-opt %s --humming-lower-to-nvvm="chip=sm_90a" | FileCheck %s

// humming.silu_and_mul: SiLU(gate) * up in f32, e^-x by ex2.approx; the
// gated variant (gpt-oss: alpha 1.702, up + 1, both halves clamped at 7)
// clamps gate above and up on both sides before the same arithmetic.

// CHECK-LABEL: gpu.func @plain_silu_and_mul
// CHECK-NOT:     arith.minimumf
// CHECK:         arith.constant -1.44269
// CHECK:         llvm.nvvm.ex2.approx.f32
// CHECK:         arith.divf
// CHECK:         gpu.return
// CHECK-LABEL: gpu.func @gpt_oss_silu_and_mul
// CHECK:         %[[LIMIT:.*]] = arith.constant 7.000000e+00 : f32
// CHECK:         arith.minimumf %{{.*}}, %[[LIMIT]]
// CHECK:         %[[NEG:.*]] = arith.constant -7.000000e+00 : f32
// CHECK:         arith.maximumf %{{.*}}, %[[NEG]]
// CHECK:         %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK:         arith.addf %{{.*}}, %[[ONE]]
// CHECK:         arith.constant -2.45546
// CHECK:         llvm.nvvm.ex2.approx.f32

func.func @plain(%gu: memref<?x1536xbf16>, %h: memref<?x768xbf16>) {
  humming.silu_and_mul %gu into %h : memref<?x1536xbf16> -> memref<?x768xbf16>
  return
}

func.func @gpt_oss(%gu: memref<?x5760xbf16>, %h: memref<?x2880xbf16>) {
  humming.silu_and_mul %gu into %h {alpha = 1.702, up_offset = 1.0, limit = 7.0}
      : memref<?x5760xbf16> -> memref<?x2880xbf16>
  return
}
