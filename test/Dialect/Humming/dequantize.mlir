// RUN: humming-opt %s | humming-opt | FileCheck %s

// CHECK-LABEL: func.func @dequantize_awq
// CHECK: humming.dequantize %{{.*}} scales(%{{.*}} : memref<32x4096xf16>) zero_points(%{{.*}} : memref<32x512xi32>) into
func.func @dequantize_awq(%w: memref<4096x512xi32>, %s: memref<32x4096xf16>, %z: memref<32x512xi32>, %out: memref<4096x4096xf16>) {
  humming.dequantize %w scales(%s : memref<32x4096xf16>) zero_points(%z : memref<32x512xi32>) into %out
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>, zero_point = int, format = awq>}
      : memref<4096x512xi32> -> memref<4096x4096xf16>
  return
}

// A prepared weight, read back through its layout (for checking repacks).
// CHECK-LABEL: func.func @dequantize_prepared
// CHECK: layout = #humming.layout<mma = wgmma, chip = "sm_90a">
func.func @dequantize_prepared(%w: memref<64x2048xi32>, %s: memref<1x512xf16>, %out: memref<512x1024xf32>) {
  humming.dequantize %w scales(%s : memref<1x512xf16>) into %out
      {weight_schema = #humming.weight_schema<type = ui8, scale = f16>,
       input_schema = #humming.input_schema<type = f16>,
       layout = #humming.layout<mma = wgmma, chip = "sm_90a">}
      : memref<64x2048xi32> -> memref<512x1024xf32>
  return
}

// CHECK-LABEL: func.func @dequantize_mxfp4_experts
func.func @dequantize_mxfp4_experts(%w: memref<2x128x32xi32>, %s: memref<2x128x8xf8E8M0FNU>, %out: memref<2x128x256xbf16>) {
  humming.dequantize %w scales(%s : memref<2x128x8xf8E8M0FNU>) into %out
      {weight_schema = #humming.weight_schema<type = f4E2M1FN, scale = f8E8M0FNU, granularity = group<32>, experts = 2>}
      : memref<2x128x32xi32> -> memref<2x128x256xbf16>
  return
}
