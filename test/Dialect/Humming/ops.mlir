// RUN: humming-opt %s | humming-opt | FileCheck %s
// RUN: humming-opt %s --mlir-print-op-generic | humming-opt | FileCheck %s
// RUN: humming-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// One of each operation, printed and parsed back in the custom and the
// generic form.

// CHECK-LABEL: func.func @gemm_w4a16_g128
// CHECK: humming.gemm %{{.*}}, %{{.*}} scales(%{{.*}} : memref<4096x32xf16>) into %{{.*}} {input_schema = #humming.input_schema<type = f16>, weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>>} : memref<?x4096xf16>, memref<4096x512xi32> -> memref<?x4096xf16>
// GENERIC-LABEL: sym_name = "gemm_w4a16_g128"
// GENERIC: "humming.gemm"(%{{.*}}) <{input_schema = {{.*}}, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 1>, weight_schema = {{.*}}}>
func.func @gemm_w4a16_g128(%a: memref<?x4096xf16>, %w: memref<4096x512xi32>,
                           %s: memref<4096x32xf16>, %c: memref<?x4096xf16>) {
  humming.gemm %a, %w scales(%s : memref<4096x32xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>>,
       input_schema = #humming.input_schema<type = f16>}
      : memref<?x4096xf16>, memref<4096x512xi32> -> memref<?x4096xf16>
  return
}

// Every optional operand at once.
// CHECK-LABEL: func.func @gemm_all_operands
// CHECK: humming.gemm %{{.*}}, %{{.*}} scales(%{{.*}} : memref<256x4xf16>) zero_points(%{{.*}} : memref<32x4xi32>) global_scale(%{{.*}} : memref<1xf32>) bias(%{{.*}} : memref<256xbf16>) input_scale(%{{.*}} : memref<?x1xf32>) into %{{.*}} {compute = #humming.compute<batch_invariant = true>,
func.func @gemm_all_operands(%a: memref<?x512xsi8>, %w: memref<256x64xi32>,
                             %s: memref<256x4xf16>, %z: memref<32x4xi32>,
                             %g: memref<1xf32>, %b: memref<256xbf16>,
                             %as: memref<?x1xf32>, %c: memref<?x256xbf16>) {
  humming.gemm %a, %w scales(%s : memref<256x4xf16>) zero_points(%z : memref<32x4xi32>)
      global_scale(%g : memref<1xf32>) bias(%b : memref<256xbf16>)
      input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group_tensor<128>,
                                              zero_point = int, bias = true>,
       input_schema = #humming.input_schema<type = si8, scaling = token>,
       compute = #humming.compute<batch_invariant = true>}
      : memref<?x512xsi8>, memref<256x64xi32> -> memref<?x256xbf16>
  return
}

// CHECK-LABEL: func.func @moe_gemm_e8_top2_w4a16
// CHECK: humming.moe_gemm %{{.*}}, %{{.*}} scales(%{{.*}} : memref<8x1024x16xbf16>) sorted_ids(%{{.*}} : memref<?xi32>) expert_ids(%{{.*}} : memref<?xi32>) num_tokens_padded(%{{.*}} : memref<1xi32>) into %{{.*}} {block_size = 16 : i64, compute = #humming.compute<gemm = indexed>, input_schema = #humming.input_schema<type = bf16>, top_k = 2 : i64, weight_schema = #humming.weight_schema<type = ui4, scale = bf16, granularity = group<128>, experts = 8>} : memref<?x2048xbf16>, memref<8x1024x256xi32> -> memref<?x1024xbf16>
func.func @moe_gemm_e8_top2_w4a16(%a: memref<?x2048xbf16>, %w: memref<8x1024x256xi32>,
                                  %s: memref<8x1024x16xbf16>, %ids: memref<?xi32>,
                                  %eids: memref<?xi32>, %ntp: memref<1xi32>,
                                  %c: memref<?x1024xbf16>) {
  humming.moe_gemm %a, %w scales(%s : memref<8x1024x16xbf16>)
      sorted_ids(%ids : memref<?xi32>) expert_ids(%eids : memref<?xi32>)
      num_tokens_padded(%ntp : memref<1xi32>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = bf16, granularity = group<128>, experts = 8>,
       input_schema = #humming.input_schema<type = bf16>,
       compute = #humming.compute<gemm = indexed>, top_k = 2, block_size = 16}
      : memref<?x2048xbf16>, memref<8x1024x256xi32> -> memref<?x1024xbf16>
  return
}

// CHECK-LABEL: func.func @quantize_weight_w4_g128
// CHECK: humming.quantize %{{.*}} into %{{.*}} scales(%{{.*}} : memref<4096x32xf16>) zero_points(%{{.*}} : memref<512x32xi32>) {schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>, zero_point = int>} : memref<4096x4096xf16> -> memref<4096x512xi32>
func.func @quantize_weight_w4_g128(%w: memref<4096x4096xf16>, %q: memref<4096x512xi32>,
                                   %s: memref<4096x32xf16>, %z: memref<512x32xi32>) {
  humming.quantize %w into %q scales(%s : memref<4096x32xf16>) zero_points(%z : memref<512x32xi32>)
      {schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>, zero_point = int>}
      : memref<4096x4096xf16> -> memref<4096x512xi32>
  return
}

// CHECK-LABEL: func.func @quantize_input_e4m3_token
// CHECK: humming.quantize %{{.*}} into %{{.*}} scales(%{{.*}} : memref<?x1xf32>) {schema = #humming.input_schema<type = f8E4M3FN, scaling = token>} : memref<?x4096xbf16> -> memref<?x4096xf8E4M3FN>
func.func @quantize_input_e4m3_token(%x: memref<?x4096xbf16>, %q: memref<?x4096xf8E4M3FN>,
                                     %s: memref<?x1xf32>) {
  humming.quantize %x into %q scales(%s : memref<?x1xf32>)
      {schema = #humming.input_schema<type = f8E4M3FN, scaling = token>}
      : memref<?x4096xbf16> -> memref<?x4096xf8E4M3FN>
  return
}

// CHECK-LABEL: func.func @dequantize_w8_channel
// CHECK: humming.dequantize %{{.*}} scales(%{{.*}} : memref<256x1xf16>) into %{{.*}} {weight_schema = #humming.weight_schema<type = ui8, scale = f16>} : memref<256x128xi32> -> memref<256x512xf32>
func.func @dequantize_w8_channel(%w: memref<256x128xi32>, %s: memref<256x1xf16>,
                                 %out: memref<256x512xf32>) {
  humming.dequantize %w scales(%s : memref<256x1xf16>) into %out
      {weight_schema = #humming.weight_schema<type = ui8, scale = f16>}
      : memref<256x128xi32> -> memref<256x512xf32>
  return
}

// CHECK-LABEL: func.func @repack_weight_wgmma
// CHECK: humming.repack %{{.*}} into %{{.*}} {input_schema = #humming.input_schema<type = f16>, k = 4096 : i64, layout = #humming.layout<mma = wgmma, chip = "sm_90a">, n = 4096 : i64, operand = #humming.operand<weight>, weight_schema = #humming.weight_schema<type = ui4, scale = f16>} : memref<4096x512xi32> -> memref<256x8192xi32>
func.func @repack_weight_wgmma(%w: memref<4096x512xi32>, %p: memref<256x8192xi32>) {
  humming.repack %w into %p {operand = #humming.operand<weight>, n = 4096, k = 4096,
      weight_schema = #humming.weight_schema<type = ui4, scale = f16>,
      input_schema = #humming.input_schema<type = f16>,
      layout = #humming.layout<mma = wgmma, chip = "sm_90a">}
      : memref<4096x512xi32> -> memref<256x8192xi32>
  return
}
