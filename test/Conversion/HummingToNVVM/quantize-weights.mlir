// RUN: humming-opt %S/../../Target/PTX/Inputs/quantize-weights.mlir --humming-lower-to-nvvm="chip=sm_90a" | FileCheck %s

// humming.quantize of weights on the device (WeightQuantizeKernel.cpp):
// kind 10 with block_n the scale groups of one expert (N x G: 256 x 4; 200
// rows of one channel group; 128 x 4 per expert), M the experts; one warp
// per group, so the grid-stride launch counts 32 thread steps per group
// (256-thread blocks: 8 groups each). The codes go to the output slot,
// scales and zero points to theirs. Float codes (MXFP4's e2m1 with e8m0
// scales, fp8 e4m3) take the same kernel with their own code conversion.
// Integer zero points (OR-ed into) are cleared by a kernel of their own
// first; a global scale (NVFP4) takes an amax pass before the quantization
// and a last step after it.

// CHECK: humming.kernels = [{block_m = 1 : i64, block_n = 4 : i64, {{.*}} kind = 10 : i64, {{.*}} name = "w4_g128_zp_quantize_weights_clear0", smem = 0 : i64, split_k = 1 : i64, threads = 256 : i64}
// CHECK-SAME: {block_m = 1 : i64, block_n = 1024 : i64, {{.*}} kind = 10 : i64, {{.*}} name = "w4_g128_zp_quantize_weights1", smem = 0 : i64, split_k = 1 : i64, threads = 256 : i64}
// CHECK-SAME: {block_m = 1 : i64, block_n = 200 : i64, {{.*}} kind = 10 : i64, {{.*}} name = "w3_channel_quantize_weights2"
// CHECK-SAME: {block_m = 1 : i64, block_n = 512 : i64, {{.*}} kind = 10 : i64, {{.*}} name = "w8_moe_fzp_quantize_weights3"
// CHECK-SAME: {block_m = 1 : i64, block_n = 512 : i64, {{.*}} kind = 10 : i64, {{.*}} name = "mxfp4_quantize_weights4"
// CHECK-SAME: {block_m = 1 : i64, block_n = 64 : i64, {{.*}} kind = 10 : i64, {{.*}} name = "e4m3_channel_quantize_weights5"
// CHECK-SAME: {block_m = 1 : i64, block_n = 512 : i64, {{.*}} kind = 10 : i64, {{.*}} name = "e2m1_e4m3_quantize_weights6"
// CHECK-SAME: {block_m = 1 : i64, block_n = 1 : i64, {{.*}} kind = 10 : i64, {{.*}} name = "nvfp4_moe_quantize_weights_clear7"
// CHECK-SAME: {block_m = 1 : i64, block_n = 512 : i64, {{.*}} kind = 10 : i64, {{.*}} name = "nvfp4_moe_quantize_weights_amax8"
// CHECK-SAME: {block_m = 1 : i64, block_n = 512 : i64, {{.*}} kind = 10 : i64, {{.*}} name = "nvfp4_moe_quantize_weights9"
// CHECK-SAME: {block_m = 1 : i64, block_n = 1 : i64, {{.*}} kind = 10 : i64, {{.*}} name = "nvfp4_moe_quantize_weights_finish10"
// CHECK-SAME: {block_m = 1 : i64, block_n = 1 : i64, {{.*}} kind = 10 : i64, {{.*}} name = "fp8_tensor_quantize_weights_clear11"
// CHECK-SAME: {block_m = 1 : i64, block_n = 64 : i64, {{.*}} kind = 10 : i64, {{.*}} name = "fp8_tensor_quantize_weights_amax12"
// CHECK-SAME: {block_m = 1 : i64, block_n = 64 : i64, {{.*}} kind = 10 : i64, {{.*}} name = "fp8_tensor_quantize_weights13"
// CHECK-SAME: {block_m = 1 : i64, block_n = 1 : i64, {{.*}} kind = 10 : i64, {{.*}} name = "fp8_tensor_quantize_weights_finish14"
// Block scales: Clear and Finish take 32 of an expert's 2 x 4 slots per
// item (one item), Amax and the quantization one warp per row and block
// column (256 x 4).
// CHECK-SAME: {block_m = 1 : i64, block_n = 1 : i64, {{.*}} kind = 10 : i64, {{.*}} name = "fp8_block_moe_quantize_weights_clear15"
// CHECK-SAME: {block_m = 1 : i64, block_n = 1024 : i64, {{.*}} kind = 10 : i64, {{.*}} name = "fp8_block_moe_quantize_weights_amax16"
// CHECK-SAME: {block_m = 1 : i64, block_n = 1024 : i64, {{.*}} kind = 10 : i64, {{.*}} name = "fp8_block_moe_quantize_weights17"
// CHECK-SAME: {block_m = 1 : i64, block_n = 1 : i64, {{.*}} kind = 10 : i64, {{.*}} name = "fp8_block_moe_quantize_weights_finish18"
// The integer zero points' clearing pass (128 words: 4 warps), then the
// quantization, with the same arguments.
// CHECK-LABEL: func.func @w4_g128_zp(
// CHECK-SAME:    %[[X:[^:]*]]: memref<256x512xf16>, %[[Q:[^:]*]]: memref<256x64xi32>, %[[S:[^:]*]]: memref<256x4xf16>, %[[Z:[^:]*]]: memref<32x4xi32>
// CHECK:         gpu.launch_func @humming_kernels::@w4_g128_zp_quantize_weights_clear0 {{.*}} args(%[[XP:[^ ]*]] : !llvm.ptr<1>, %[[NULL:[^ ]*]] : !llvm.ptr<1>, %[[SP:[^ ]*]] : !llvm.ptr<1>, %[[ZP:[^ ]*]] : !llvm.ptr<1>, %{{[^ ]*}} : !llvm.ptr<1>, %[[NULL]] : !llvm.ptr<1>, %[[QP:[^ ]*]] : !llvm.ptr<1>, %[[NULL]] : !llvm.ptr<1>, %{{.*}} : i32)
// CHECK:         arith.constant 32768 : index
// CHECK:         arith.ceildivui %{{.*}}, %c256
// CHECK:         gpu.launch_func @humming_kernels::@w4_g128_zp_quantize_weights1 {{.*}} args(%[[XP]] : !llvm.ptr<1>, %[[NULL]] : !llvm.ptr<1>, %[[SP]] : !llvm.ptr<1>, %[[ZP]] : !llvm.ptr<1>, %{{[^ ]*}} : !llvm.ptr<1>, %[[NULL]] : !llvm.ptr<1>, %[[QP]] : !llvm.ptr<1>, %[[NULL]] : !llvm.ptr<1>, %{{.*}} : i32)
// CHECK-LABEL: func.func @w8_moe_fzp(
// CHECK:         %[[E:.*]] = arith.constant 2 : i32
// CHECK:         gpu.launch_func @humming_kernels::@w8_moe_fzp_quantize_weights3 {{.*}}, %[[E]] : i32)
// NVFP4: clear, amax, quantize, finish, in that order, the global scale in
// its slot.
// CHECK-LABEL: func.func @nvfp4_moe(
// CHECK-SAME:    %{{[^:]*}}: memref<2x64x256xbf16>, %{{[^:]*}}: memref<2x64x32xi32>, %{{[^:]*}}: memref<2x64x16xf8E4M3FN>, %[[GS:[^:]*]]: memref<2xf32>
// CHECK:         memref.extract_aligned_pointer_as_index %[[GS]]
// CHECK:         gpu.launch_func @humming_kernels::@nvfp4_moe_quantize_weights_clear7
// CHECK:         gpu.launch_func @humming_kernels::@nvfp4_moe_quantize_weights_amax8
// CHECK:         gpu.launch_func @humming_kernels::@nvfp4_moe_quantize_weights9
// CHECK:         gpu.launch_func @humming_kernels::@nvfp4_moe_quantize_weights_finish10
// CHECK-LABEL: gpu.func @w4_g128_zp_quantize_weights_clear0(
// CHECK:         llvm.store %{{.*}} : i32, !llvm.ptr<1>
// CHECK:         gpu.return
// CHECK-LABEL: gpu.func @w4_g128_zp_quantize_weights1(
// CHECK:         gpu.shuffle xor
// CHECK:         arith.divf %{{.*}} : f64
// CHECK:         llvm.atomicrmw _or
// CHECK:         gpu.shuffle idx
// CHECK-LABEL: gpu.func @w3_channel_quantize_weights2(
// CHECK-NOT:     llvm.atomicrmw
// CHECK:         gpu.return
// MXFP4: e2m1 codes (their sign from the value's bit 63, the magnitude
// rounded by adding 2^52, saturated at 6's code 7), e8m0 scales stored as
// their exponent + 127 in a byte.
// CHECK-LABEL: gpu.func @mxfp4_quantize_weights4(
// CHECK:         arith.trunci %{{.*}} : i64 to i8
// CHECK:         llvm.store %{{.*}} : i8, !llvm.ptr<1>
// CHECK:         arith.constant 0x4330000000000000 : f64
// CHECK:         arith.minui %{{.*}}, %c7_i32
// CHECK:         gpu.return
// CHECK-LABEL: gpu.func @e4m3_channel_quantize_weights5(
// CHECK:         arith.minui %{{.*}}, %c126_i32
// CHECK:         gpu.return
// e4m3 scales: stored as their code (saturated at 448's, 126), a byte.
// CHECK-LABEL: gpu.func @e2m1_e4m3_quantize_weights6(
// CHECK:         arith.minui %{{.*}}, %c126_i32
// CHECK:         arith.trunci %{{.*}} : i32 to i8
// CHECK:         llvm.store %{{.*}} : i8, !llvm.ptr<1>
// CHECK:         gpu.return
// NVFP4: each group's amax maximized into the slot (f32 bits, unsigned);
// pairs of 16-column groups reduce within half-warps (xor 8 .. 1); the
// quantization reads the slot (the global scale, f32) and divides by it; the
// last kernel writes the global scale over the amax.
// CHECK-LABEL: gpu.func @nvfp4_moe_quantize_weights_amax8(
// CHECK-NOT:     gpu.shuffle xor %{{[^,]*}}, %c16_i32
// CHECK:         gpu.shuffle xor %{{[^,]*}}, %c8_i32
// CHECK:         llvm.atomicrmw umax
// CHECK:         gpu.return
// CHECK-LABEL: gpu.func @nvfp4_moe_quantize_weights9(
// CHECK:         llvm.load %{{.*}} : !llvm.ptr<1> -> f32
// CHECK:         arith.truncf %{{.*}} : f64 to f32
// CHECK:         arith.mulf %{{.*}} : f64
// CHECK:         gpu.return
// CHECK-LABEL: gpu.func @nvfp4_moe_quantize_weights_finish10(
// CHECK:         llvm.load %{{.*}} : !llvm.ptr<1> -> f32
// CHECK:         llvm.store %{{.*}} : f32, !llvm.ptr<1>
// CHECK:         gpu.return
// FP8 per tensor: the row's amax maximized into the slot; the quantization
// stores no scale tensor (its slot is null) and divides by gs itself.
// CHECK-LABEL: gpu.func @fp8_tensor_quantize_weights13(
// CHECK-NOT:     llvm.store %{{.*}} : i8, !llvm.ptr<1>
// CHECK:         arith.minui %{{.*}}, %c126_i32
// CHECK:         gpu.return
// Block scales: the row's amax maximized into its block's slot of the
// scale tensor (f32 bits), the quantization reading the slot back as the
// block's amax, Finish storing each slot's f32 scale over it.
// CHECK-LABEL: gpu.func @fp8_block_moe_quantize_weights_amax16(
// CHECK:         llvm.atomicrmw umax
// CHECK:         gpu.return
// CHECK-LABEL: gpu.func @fp8_block_moe_quantize_weights17(
// CHECK:         llvm.load %{{.*}} : !llvm.ptr<1> -> f32
// CHECK-NOT:     llvm.atomicrmw
// CHECK:         gpu.return
// CHECK-LABEL: gpu.func @fp8_block_moe_quantize_weights_finish18(
// CHECK:         llvm.load %{{.*}} : !llvm.ptr<1> -> f32
// CHECK:         llvm.store %{{.*}} : f32, !llvm.ptr<1>
// CHECK:         gpu.return
