// RUN: humming-opt %S/../../Target/PTX/Inputs/quantize-weights.mlir --humming-lower-to-nvvm="chip=sm_90a" | FileCheck %s

// humming.quantize of weights on the device (WeightQuantizeKernel.cpp):
// kind 10 with block_n the scale groups of one expert (N x G: 256 x 4; 200
// rows of one channel group; 128 x 4 per expert), M the experts; one warp
// per group, so the grid-stride launch counts 32 thread steps per group
// (256-thread blocks: 8 groups each). The codes go to the output slot,
// scales and zero points to theirs. Float codes (MXFP4's e2m1 with e8m0
// scales, fp8 e4m3) take the same kernel with their own code conversion.

// CHECK: humming.kernels = [{block_m = 1 : i64, block_n = 1024 : i64, {{.*}} kind = 10 : i64, {{.*}} name = "w4_g128_zp_quantize_weights0", smem = 0 : i64, split_k = 1 : i64, threads = 256 : i64}
// CHECK-SAME: {block_m = 1 : i64, block_n = 200 : i64, {{.*}} kind = 10 : i64, {{.*}} name = "w3_channel_quantize_weights1"
// CHECK-SAME: {block_m = 1 : i64, block_n = 512 : i64, {{.*}} kind = 10 : i64, {{.*}} name = "w8_moe_fzp_quantize_weights2"
// CHECK-SAME: {block_m = 1 : i64, block_n = 512 : i64, {{.*}} kind = 10 : i64, {{.*}} name = "mxfp4_quantize_weights3"
// CHECK-SAME: {block_m = 1 : i64, block_n = 64 : i64, {{.*}} kind = 10 : i64, {{.*}} name = "e4m3_channel_quantize_weights4"
// CHECK-SAME: {block_m = 1 : i64, block_n = 512 : i64, {{.*}} kind = 10 : i64, {{.*}} name = "e2m1_e4m3_quantize_weights5"
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
// MXFP4: e2m1 codes (their sign from the value's bit 63, the magnitude
// rounded by adding 2^52, saturated at 6's code 7), e8m0 scales stored as
// their exponent + 127 in a byte.
// CHECK-LABEL: gpu.func @mxfp4_quantize_weights3(
// CHECK:         arith.trunci %{{.*}} : i64 to i8
// CHECK:         llvm.store %{{.*}} : i8, !llvm.ptr<1>
// CHECK:         arith.constant 0x4330000000000000 : f64
// CHECK:         arith.minui %{{.*}}, %c7_i32
// CHECK:         gpu.return
// CHECK-LABEL: gpu.func @e4m3_channel_quantize_weights4(
// CHECK:         arith.minui %{{.*}}, %c126_i32
// CHECK:         gpu.return
// e4m3 scales: stored as their code (saturated at 448's, 126), a byte.
// CHECK-LABEL: gpu.func @e2m1_e4m3_quantize_weights5(
// CHECK:         arith.minui %{{.*}}, %c126_i32
// CHECK:         arith.trunci %{{.*}} : i32 to i8
// CHECK:         llvm.store %{{.*}} : i8, !llvm.ptr<1>
// CHECK:         gpu.return
