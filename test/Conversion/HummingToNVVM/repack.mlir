// RUN: humming-opt %s --humming-lower-to-nvvm="chip=sm_90a" | FileCheck %s

// humming.repack on the device (RepackKernel.cpp): kind 9 with block_n the
// items of one expert — for the weights one per lane of each (k-tile,
// n-tile): K/16 x N/64 x 32; for scales one per element [G, N]; for
// integer zero points one per prepared word [G, N zb / 32] —, M the experts,
// one thread per item in a grid-stride loop of 256-thread blocks (at most
// 2^20 blocks). The word-for-word comparison with the host repack is the
// GPU suite's (checkDeviceRepack in every prepared case).

// CHECK: humming.kernels = [{block_m = 1 : i64, block_n = 524288 : i64, {{.*}} kind = 9 : i64, {{.*}} name = "w4_repack0", smem = 0 : i64, split_k = 1 : i64, threads = 256 : i64}
// CHECK-SAME: {block_m = 1 : i64, block_n = 131072 : i64, {{.*}} kind = 9 : i64, {{.*}} name = "w4_repack1"
// CHECK-SAME: {block_m = 1 : i64, block_n = 16384 : i64, {{.*}} kind = 9 : i64, {{.*}} name = "w4_repack2"
// CHECK-SAME: {block_m = 1 : i64, block_n = 4096 : i64, {{.*}} kind = 9 : i64, {{.*}} name = "w4_repack3"
// CHECK-SAME: {block_m = 1 : i64, block_n = 1024 : i64, {{.*}} kind = 9 : i64, {{.*}} name = "w6_zero_points_repack4"
// CHECK-SAME: {block_m = 1 : i64, block_n = 512 : i64, {{.*}} kind = 9 : i64, {{.*}} name = "moe_si4_a4_repack5"

// CHECK-LABEL: func.func @w4(
// CHECK:         arith.constant 524288 : index
// CHECK:         arith.ceildivui %{{.*}}, %c256
// CHECK:         arith.minui %{{.*}}, %c1048576
// CHECK:         gpu.launch_func @humming_kernels::@w4_repack0
// CHECK:         gpu.launch_func @humming_kernels::@w4_repack1
// CHECK:         gpu.launch_func @humming_kernels::@w4_repack2
// CHECK:         gpu.launch_func @humming_kernels::@w4_repack3
func.func @w4(%w: memref<4096x512xi32>, %pw: memref<256x8192xi32>,
              %s: memref<4096x32xf16>, %ps: memref<32x4096xf16>,
              %z: memref<512x32xi32>, %pz: memref<32x512xi32>,
              %b: memref<4096xf16>, %pb: memref<4096xf16>) {
  humming.repack %w into %pw {operand = #humming.operand<weight>, n = 4096, k = 4096,
      weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>, zero_point = int, bias = true>,
      input_schema = #humming.input_schema<type = f16>, layout = #humming.layout<chip = "sm_90a">}
      : memref<4096x512xi32> -> memref<256x8192xi32>
  humming.repack %s into %ps {operand = #humming.operand<scales>, n = 4096, k = 4096,
      weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>, zero_point = int, bias = true>,
      input_schema = #humming.input_schema<type = f16>, layout = #humming.layout<chip = "sm_90a">}
      : memref<4096x32xf16> -> memref<32x4096xf16>
  humming.repack %z into %pz {operand = #humming.operand<zero_points>, n = 4096, k = 4096,
      weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>, zero_point = int, bias = true>,
      input_schema = #humming.input_schema<type = f16>, layout = #humming.layout<chip = "sm_90a">}
      : memref<512x32xi32> -> memref<32x512xi32>
  humming.repack %b into %pb {operand = #humming.operand<bias>, n = 4096, k = 4096,
      weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>, zero_point = int, bias = true>,
      input_schema = #humming.input_schema<type = f16>, layout = #humming.layout<chip = "sm_90a">}
      : memref<4096xf16> -> memref<4096xf16>
  return
}

// 6-bit zero points (8-bit lanes, 4 per word): a code may straddle two
// words of its group's stream, so each reads the next word where it does.
// CHECK-LABEL: func.func @w6_zero_points(
// CHECK:         gpu.launch_func @humming_kernels::@w6_zero_points_repack4
func.func @w6_zero_points(%z: memref<48x16xi32>, %pz: memref<16x64xi32>) {
  humming.repack %z into %pz {operand = #humming.operand<zero_points>, n = 256, k = 2048,
      weight_schema = #humming.weight_schema<type = ui6, scale = f16, granularity = group<128>, zero_point = int>,
      input_schema = #humming.input_schema<type = si8, scaling = token>, layout = #humming.layout<mma = wgmma, chip = "sm_90a">}
      : memref<48x16xi32> -> memref<16x64xi32>
  return
}
// Two experts of signed 4-bit weights for 4-bit activations: M = 2 (the
// launch covers both), each code flipped into offset binary, rows from
// spans of two k-tiles (the k-tile's parity picks its half).
// CHECK-LABEL: func.func @moe_si4_a4(
// CHECK:         %[[E:.*]] = arith.constant 2 : i32
// CHECK:         gpu.launch_func @humming_kernels::@moe_si4_a4_repack5 {{.*}} args({{.*}}, %[[E]] : i32,
func.func @moe_si4_a4(%w: memref<2x128x16xi32>, %pw: memref<2x2x1024xi32>) {
  humming.repack %w into %pw {operand = #humming.operand<weight>, n = 128, k = 128,
      weight_schema = #humming.weight_schema<type = si4, scale = f16, experts = 2>,
      input_schema = #humming.input_schema<type = si4, scaling = token>, layout = #humming.layout<chip = "sm_90a">}
      : memref<2x128x16xi32> -> memref<2x2x1024xi32>
  return
}

// The kernels, after the functions. The weights: per lane, 32 codes (one
// load each here; LLVM merges the loads of codes that share a word) from
// 8 columns, 4 stores of 4-bit plane words.
// CHECK-LABEL: gpu.func @w4_repack0(
// CHECK:         scf.for
// CHECK:           arith.divui %{{.*}}, %c524288
// CHECK-COUNT-32:  llvm.load %{{.*}} invariant : !llvm.ptr<1> -> i32
// CHECK-NOT:       llvm.load
// CHECK-COUNT-4:   llvm.store %{{.*}} : i32, !llvm.ptr<1>
// CHECK-NOT:       llvm.store
// CHECK:         gpu.return
// Scales: an element of 16 bits read from the permuted column's row.
// CHECK-LABEL: gpu.func @w4_repack1(
// CHECK:           llvm.load %{{.*}} invariant : !llvm.ptr<1> -> i16
// CHECK:           llvm.store %{{.*}} : i16, !llvm.ptr<1>
// CHECK-LABEL: gpu.func @w4_repack2(
// CHECK-COUNT-8:   llvm.load %{{.*}} invariant : !llvm.ptr<1> -> i32
// CHECK:           llvm.store %{{.*}} : i32, !llvm.ptr<1>
// CHECK-LABEL: gpu.func @w4_repack3(
// CHECK:           llvm.load %{{.*}} invariant : !llvm.ptr<1> -> i16
// CHECK:           llvm.store %{{.*}} : i16, !llvm.ptr<1>
// CHECK-LABEL: gpu.func @w6_zero_points_repack4(
// CHECK:           arith.cmpi ugt, %{{.*}}, %c32_i64
// CHECK:           arith.select
// CHECK-COUNT-3:   arith.select
// CHECK:           llvm.store %{{.*}} : i32, !llvm.ptr<1>
// CHECK-LABEL: gpu.func @moe_si4_a4_repack5(
// CHECK:           arith.divui %{{.*}}, %c512
// CHECK:           arith.remui %{{.*}}, %c2_i64
// CHECK:           arith.xori %{{.*}}, %c8_i32
