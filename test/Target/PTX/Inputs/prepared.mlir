// Prepared-weight layers for the ptxas checks; CHIP is replaced by the chip
// under test. humming-compile-pipeline chooses their tiles (four M ranges
// each) from the chip's representative device.
func.func @w4a16_g128(%a: memref<?x4096xf16>, %w: memref<256x8192xi32>, %s: memref<32x4096xf16>, %c: memref<?x4096xf16>) {
  humming.gemm %a, %w scales(%s : memref<32x4096xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>>,
       input_schema = #humming.input_schema<type = f16>, layout = #humming.layout<chip = "CHIP">}
      : memref<?x4096xf16>, memref<256x8192xi32> -> memref<?x4096xf16>
  return
}
func.func @mxfp4_bf16(%a: memref<?x4096xbf16>, %w: memref<256x8192xi32>, %s: memref<128x4096xf8E8M0FNU>, %c: memref<?x4096xbf16>) {
  humming.gemm %a, %w scales(%s : memref<128x4096xf8E8M0FNU>) into %c
      {weight_schema = #humming.weight_schema<type = f4E2M1FN, scale = f8E8M0FNU, granularity = group<32>>,
       input_schema = #humming.input_schema<type = bf16>, layout = #humming.layout<chip = "CHIP">}
      : memref<?x4096xbf16>, memref<256x8192xi32> -> memref<?x4096xbf16>
  return
}
func.func @ui3_zp_g64(%a: memref<?x4096xf16>, %w: memref<256x6144xi32>, %s: memref<64x4096xf16>, %z: memref<64x512xi32>, %c: memref<?x4096xf16>) {
  humming.gemm %a, %w scales(%s : memref<64x4096xf16>) zero_points(%z : memref<64x512xi32>) into %c
      {weight_schema = #humming.weight_schema<type = ui3, scale = f16, granularity = group<64>, zero_point = int>,
       input_schema = #humming.input_schema<type = f16>, layout = #humming.layout<chip = "CHIP">}
      : memref<?x4096xf16>, memref<256x6144xi32> -> memref<?x4096xf16>
  return
}
