// RUN: humming-opt %s -split-input-file | FileCheck %s

// Layers the original Humming runs, verified against their targets. Each
// function is one (weight, scale, zero point, activation) variant.

module attributes {humming.target = #humming.target<device = "H200">} {
// CHECK-LABEL: func.func @gemm_w1a16_channel
func.func @gemm_w1a16_channel(%a: memref<?x4096xf16>, %w: memref<4096x128xi32>, %s: memref<4096x1xf16>, %c: memref<?x4096xf16>) {
  humming.gemm %a, %w scales(%s : memref<4096x1xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui1, scale = f16>, input_schema = #humming.input_schema<type = f16>}
      : memref<?x4096xf16>, memref<4096x128xi32> -> memref<?x4096xf16>
  return
}
// Bit-stream packing: 3-bit codes straddle words (K*3/32 words per row).
// CHECK-LABEL: func.func @gemm_w3a16_g64_bf16
func.func @gemm_w3a16_g64_bf16(%a: memref<?x4096xbf16>, %w: memref<4096x384xi32>, %s: memref<4096x64xbf16>, %c: memref<?x4096xbf16>) {
  humming.gemm %a, %w scales(%s : memref<4096x64xbf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui3, scale = bf16, granularity = group<64>>, input_schema = #humming.input_schema<type = bf16>}
      : memref<?x4096xbf16>, memref<4096x384xi32> -> memref<?x4096xbf16>
  return
}
// CHECK-LABEL: func.func @gemm_w8a16_channel_fp32_out_bias
func.func @gemm_w8a16_channel_fp32_out_bias(%a: memref<?x8192xf16>, %w: memref<8192x2048xi32>, %s: memref<8192x1xf16>, %b: memref<8192xf16>, %c: memref<?x8192xf16>) {
  humming.gemm %a, %w scales(%s : memref<8192x1xf16>) bias(%b : memref<8192xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui8, scale = f16, bias = true>, input_schema = #humming.input_schema<type = f16>}
      : memref<?x8192xf16>, memref<8192x2048xi32> -> memref<?x8192xf16>
  return
}
// GPTQ v2 tensors as they come from the checkpoint: qweight [K*b/32, N],
// scales [K/g, N], qzeros [K/g, N*b/32].
// CHECK-LABEL: func.func @gemm_w4a16_gptq_v2
func.func @gemm_w4a16_gptq_v2(%a: memref<?x4096xf16>, %w: memref<512x4096xi32>, %s: memref<32x4096xf16>, %z: memref<32x512xi32>, %c: memref<?x4096xf16>) {
  humming.gemm %a, %w scales(%s : memref<32x4096xf16>) zero_points(%z : memref<32x512xi32>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>, zero_point = int, format = gptq_v2>,
       input_schema = #humming.input_schema<type = f16>}
      : memref<?x4096xf16>, memref<512x4096xi32> -> memref<?x4096xf16>
  return
}
// AWQ: qweight [K, N*b/32] packed along N.
// CHECK-LABEL: func.func @gemm_w4a16_awq
func.func @gemm_w4a16_awq(%a: memref<?x4096xf16>, %w: memref<4096x512xi32>, %s: memref<32x4096xf16>, %z: memref<32x512xi32>, %c: memref<?x4096xf16>) {
  humming.gemm %a, %w scales(%s : memref<32x4096xf16>) zero_points(%z : memref<32x512xi32>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>, zero_point = int, format = awq>,
       input_schema = #humming.input_schema<type = f16>}
      : memref<?x4096xf16>, memref<4096x512xi32> -> memref<?x4096xf16>
  return
}
// Float zero points in the output type.
// CHECK-LABEL: func.func @gemm_w5a16_float_zp
func.func @gemm_w5a16_float_zp(%a: memref<?x1024xbf16>, %w: memref<1024x160xi32>, %s: memref<1024x32xbf16>, %z: memref<1024x32xbf16>, %c: memref<?x1024xbf16>) {
  humming.gemm %a, %w scales(%s : memref<1024x32xbf16>) zero_points(%z : memref<1024x32xbf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui5, scale = bf16, granularity = group<32>, zero_point = float>,
       input_schema = #humming.input_schema<type = bf16>}
      : memref<?x1024xbf16>, memref<1024x160xi32> -> memref<?x1024xbf16>
  return
}
// DeepSeek-style FP8 block scales with per-token fp8 activations.
// CHECK-LABEL: func.func @gemm_w8a8_fp8_block128
func.func @gemm_w8a8_fp8_block128(%a: memref<?x7168xf8E4M3FN>, %w: memref<4608x1792xi32>, %s: memref<36x56xf32>, %as: memref<?x1xf32>, %c: memref<?x4608xbf16>) {
  humming.gemm %a, %w scales(%s : memref<36x56xf32>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = f8E4M3FN, scale = f32, granularity = block<128, 128>>,
       input_schema = #humming.input_schema<type = f8E4M3FN, scaling = token>}
      : memref<?x7168xf8E4M3FN>, memref<4608x1792xi32> -> memref<?x4608xbf16>
  return
}
// NVFP4: e2m1 with e4m3 group-16 scales and an fp32 global scale.
// CHECK-LABEL: func.func @gemm_nvfp4_a16
func.func @gemm_nvfp4_a16(%a: memref<?x4096xbf16>, %w: memref<4096x512xi32>, %s: memref<4096x256xf8E4M3FN>, %g: memref<1xf32>, %c: memref<?x4096xbf16>) {
  humming.gemm %a, %w scales(%s : memref<4096x256xf8E4M3FN>) global_scale(%g : memref<1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = f4E2M1FN, scale = f8E4M3FN, granularity = group_tensor<16>>,
       input_schema = #humming.input_schema<type = bf16>}
      : memref<?x4096xbf16>, memref<4096x512xi32> -> memref<?x4096xbf16>
  return
}
// A generic e3m3 weight format on fp16 activations, static M.
// CHECK-LABEL: func.func @gemm_e3m3a16_static_m
func.func @gemm_e3m3a16_static_m(%a: memref<7x1024xf16>, %w: memref<1024x224xi32>, %s: memref<1024x8xf16>, %c: memref<7x1024xf16>) {
  humming.gemm %a, %w scales(%s : memref<1024x8xf16>) into %c
      {weight_schema = #humming.weight_schema<type = !humming.float<e3m3>, scale = f16, granularity = group<128>>,
       input_schema = #humming.input_schema<type = f16>}
      : memref<7x1024xf16>, memref<1024x224xi32> -> memref<7x1024xf16>
  return
}
// Padding: weights are 4096 x 4096, the layer is 4032 x 4064.
// CHECK-LABEL: func.func @gemm_w4a16_padded
func.func @gemm_w4a16_padded(%a: memref<?x4064xf16>, %w: memref<4096x512xi32>, %s: memref<4096x32xf16>, %c: memref<?x4032xf16>) {
  humming.gemm %a, %w scales(%s : memref<4096x32xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>, pad_n = 64, pad_k = 32>,
       input_schema = #humming.input_schema<type = f16>}
      : memref<?x4064xf16>, memref<4096x512xi32> -> memref<?x4032xf16>
  return
}
// Prepared for wgmma on this chip, with the tile configurations it selected.
// CHECK-LABEL: func.func @gemm_w4a16_g128_prepared_wgmma
// CHECK: layout = #humming.layout<mma = wgmma, chip = "sm_90a">
// CHECK-SAME: tile_configs = [#humming.tile_config<m = [1, 16]
func.func @gemm_w4a16_g128_prepared_wgmma(%a: memref<?x4096xf16>, %w: memref<256x8192xi32>, %s: memref<32x4096xf16>, %c: memref<?x4096xf16>) {
  humming.gemm %a, %w scales(%s : memref<32x4096xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>>,
       input_schema = #humming.input_schema<type = f16>,
       layout = #humming.layout<mma = wgmma, chip = "sm_90a">,
       tile_configs = [#humming.tile_config<m = [1, 16], block = [16, 256, 64], warp = [16, 32, 64], mma = wgmma,
                                            warp_specialized = true, mbarrier = true, tma = [a, b], stream_k = true>,
                       #humming.tile_config<m = [17, inf], block = [128, 256, 64], warp = [128, 32, 64], mma = wgmma,
                                            warp_specialized = true, mbarrier = true, tma = [a, b, c], multicast_a = 2>]}
      : memref<?x4096xf16>, memref<256x8192xi32> -> memref<?x4096xf16>
  return
}
}

// -----

// Ampere: bf16 and int4 activations, mma.sync with cp.async.
module attributes {humming.target = #humming.target<device = "A100">} {
// CHECK-LABEL: func.func @gemm_w4a4_int
func.func @gemm_w4a4_int(%a: memref<?x4096xsi4>, %w: memref<4096x512xi32>, %s: memref<4096x1xbf16>, %as: memref<?x1xf32>, %c: memref<?x4096xbf16>) {
  humming.gemm %a, %w scales(%s : memref<4096x1xbf16>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = si4, scale = bf16>,
       input_schema = #humming.input_schema<type = si4, scaling = token>,
       tile_configs = [#humming.tile_config<block = [64, 128, 256], warp = [64, 32, 256], stages = 5>]}
      : memref<?x4096xsi4>, memref<4096x512xi32> -> memref<?x4096xbf16>
  return
}
}

// -----

// 8-bit codes in the canonical format may be given unpacked, [N, K] of
// their own type: the same bytes as the packed [N, K / 4] i32.
// CHECK-LABEL: func.func @unpacked_fp8_codes
// CHECK: humming.gemm {{.*}} : memref<?x128xbf16>, memref<64x128xf8E4M3FN> -> memref<?x64xbf16>
func.func @unpacked_fp8_codes(%x: memref<?x128xbf16>, %w: memref<64x128xf8E4M3FN>, %s: memref<64x1xbf16>, %y: memref<?x64xbf16>) {
  humming.gemm %x, %w scales(%s : memref<64x1xbf16>) into %y
      {weight_schema = #humming.weight_schema<type = f8E4M3FN, scale = bf16>, input_schema = #humming.input_schema<type = bf16>}
      : memref<?x128xbf16>, memref<64x128xf8E4M3FN> -> memref<?x64xbf16>
  return
}
