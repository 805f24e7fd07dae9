// RUN: humming-opt %S/../../Target/PTX/Inputs/quantize-weights.mlir --humming-lower-to-nvvm="chip=sm_90a" | FileCheck %s

// humming.quantize of weights on the device (WeightQuantizeKernel.cpp):
// kind 10 with block_n the scale groups of one expert (N x G: 256 x 4; 200
// rows of one channel group; 128 x 4 per expert), M the experts; one warp
// per group, so the grid-stride launch counts 32 thread steps per group
// (256-thread blocks: 8 groups each). The codes go to the output slot,
// scales and zero points to theirs.

// CHECK: humming.kernels = [{block_m = 1 : i64, block_n = 1024 : i64, {{.*}} kind = 10 : i64, {{.*}} name = "w4_g128_zp_quantize_weights0", smem = 0 : i64, split_k = 1 : i64, threads = 256 : i64}
// CHECK-SAME: {block_m = 1 : i64, block_n = 200 : i64, {{.*}} kind = 10 : i64, {{.*}} name = "w3_channel_quantize_weights1"
// CHECK-SAME: {block_m = 1 : i64, block_n = 512 : i64, {{.*}} kind = 10 : i64, {{.*}} name = "w8_moe_fzp_quantize_weights2"
// CHECK-LABEL: func.func @w4_g128_zp(
// CHECK-SAME:    %[[X:[^:]*]]: memref<256x512xf16>, %[[Q:[^:]*]]: memref<256x64xi32>, %[[S:[^:]*]]: memref<256x4xf16>, %[[Z:[^:]*]]: memref<32x4xi32>
// CHECK:         arith.constant 32768 : index
// CHECK:         arith.ceildivui %{{.*}}, %c256
// CHECK:         gpu.launch_func @humming_kernels::@w4_g128_zp_quantize_weights0 {{.*}} args(%[[XP:[^ ]*]] : !llvm.ptr<1>, %[[NULL:[^ ]*]] : !llvm.ptr<1>, %[[SP:[^ ]*]] : !llvm.ptr<1>, %[[ZP:[^ ]*]] : !llvm.ptr<1>, %[[NULL]] : !llvm.ptr<1>, %[[NULL]] : !llvm.ptr<1>, %[[QP:[^ ]*]] : !llvm.ptr<1>, %[[NULL]] : !llvm.ptr<1>, %{{.*}} : i32)
// CHECK-LABEL: func.func @w8_moe_fzp(
// CHECK:         %[[E:.*]] = arith.constant 2 : i32
// CHECK:         gpu.launch_func @humming_kernels::@w8_moe_fzp_quantize_weights2 {{.*}}, %[[E]] : i32)
// CHECK-LABEL: gpu.func @w4_g128_zp_quantize_weights0(
// CHECK:         gpu.shuffle xor
// CHECK:         arith.divf %{{.*}} : f64
// CHECK:         llvm.atomicrmw _or
// CHECK:         gpu.shuffle idx
// CHECK-LABEL: gpu.func @w3_channel_quantize_weights1(
// CHECK-NOT:     llvm.atomicrmw
// CHECK:         gpu.return
