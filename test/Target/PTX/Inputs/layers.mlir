// Layers for the ptxas checks: integer with a zero point, small float with
// e8m0 scales, signed integer with bias and a global scale (bf16).
func.func @w4_zp_f16(%a: memref<?x512xf16>, %w: memref<256x64xi32>, %s: memref<256x4xf16>, %z: memref<32x4xi32>, %c: memref<?x256xf16>) {
  humming.gemm %a, %w scales(%s : memref<256x4xf16>) zero_points(%z : memref<32x4xi32>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>, zero_point = int>,
       input_schema = #humming.input_schema<type = f16>}
      : memref<?x512xf16>, memref<256x64xi32> -> memref<?x256xf16>
  return
}
func.func @mxfp4_bf16(%a: memref<?x512xbf16>, %w: memref<256x64xi32>, %s: memref<256x16xf8E8M0FNU>, %c: memref<?x256xbf16>) {
  humming.gemm %a, %w scales(%s : memref<256x16xf8E8M0FNU>) into %c
      {weight_schema = #humming.weight_schema<type = f4E2M1FN, scale = f8E8M0FNU, granularity = group<32>>,
       input_schema = #humming.input_schema<type = bf16>}
      : memref<?x512xbf16>, memref<256x64xi32> -> memref<?x256xbf16>
  return
}
func.func @s8_bias_bf16(%a: memref<?x512xbf16>, %w: memref<256x128xi32>, %s: memref<256x1xbf16>, %g: memref<1xf32>, %b: memref<256xbf16>, %c: memref<?x256xbf16>) {
  humming.gemm %a, %w scales(%s : memref<256x1xbf16>) global_scale(%g : memref<1xf32>) bias(%b : memref<256xbf16>) into %c
      {weight_schema = #humming.weight_schema<type = si8, scale = bf16, global_scale = true, bias = true>,
       input_schema = #humming.input_schema<type = bf16>}
      : memref<?x512xbf16>, memref<256x128xi32> -> memref<?x256xbf16>
  return
}
