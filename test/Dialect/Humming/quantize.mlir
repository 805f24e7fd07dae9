// RUN: humming-opt %s | humming-opt | FileCheck %s

// Weights: fp [E?, N, K] (logical sizes) -> canonical packed tensors (padded).

// CHECK-LABEL: func.func @quantize_w3_channel_padded
// CHECK: humming.quantize %{{.*}} into %{{.*}} scales(%{{.*}} : memref<4096x1xbf16>)
func.func @quantize_w3_channel_padded(%w: memref<4032x4064xf32>, %q: memref<4096x384xi32>, %s: memref<4096x1xbf16>) {
  humming.quantize %w into %q scales(%s : memref<4096x1xbf16>)
      {schema = #humming.weight_schema<type = ui3, scale = bf16, pad_n = 64, pad_k = 32>}
      : memref<4032x4064xf32> -> memref<4096x384xi32>
  return
}

// CHECK-LABEL: func.func @quantize_nvfp4_experts
// CHECK: global_scale(%{{.*}} : memref<4xf32>)
func.func @quantize_nvfp4_experts(%w: memref<4x256x512xbf16>, %q: memref<4x256x64xi32>, %s: memref<4x256x32xf8E4M3FN>, %g: memref<4xf32>) {
  humming.quantize %w into %q scales(%s : memref<4x256x32xf8E4M3FN>) global_scale(%g : memref<4xf32>)
      {schema = #humming.weight_schema<type = f4E2M1FN, scale = f8E4M3FN, granularity = group_tensor<16>, experts = 4>}
      : memref<4x256x512xbf16> -> memref<4x256x64xi32>
  return
}

// CHECK-LABEL: func.func @quantize_fp8_tensor
func.func @quantize_fp8_tensor(%w: memref<256x512xbf16>, %q: memref<256x128xi32>, %g: memref<1xf32>) {
  humming.quantize %w into %q global_scale(%g : memref<1xf32>)
      {schema = #humming.weight_schema<type = f8E4M3FN, scale = f32, granularity = tensor>}
      : memref<256x512xbf16> -> memref<256x128xi32>
  return
}

// Activations: per group and static scales.
// CHECK-LABEL: func.func @quantize_input_int8_group
// CHECK: scales(%{{.*}} : memref<?x32xf32>)
func.func @quantize_input_int8_group(%x: memref<?x4096xf16>, %q: memref<?x4096xsi8>, %s: memref<?x32xf32>) {
  humming.quantize %x into %q scales(%s : memref<?x32xf32>)
      {schema = #humming.input_schema<type = si8, scaling = group<128>>}
      : memref<?x4096xf16> -> memref<?x4096xsi8>
  return
}

// CHECK-LABEL: func.func @quantize_input_fp4_static
func.func @quantize_input_fp4_static(%x: memref<16x4096xbf16>, %q: memref<16x4096xf4E2M1FN>, %s: memref<1xf32>) {
  humming.quantize %x into %q scales(%s : memref<1xf32>)
      {schema = #humming.input_schema<type = f4E2M1FN, scaling = static>}
      : memref<16x4096xbf16> -> memref<16x4096xf4E2M1FN>
  return
}
