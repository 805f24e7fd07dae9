// Weight quantizations for ptxas-quantize-weights.test and
// quantize-weights.mlir: unsigned 4-bit codes with f16 group scales and
// integer zero points from f16 weights, signed 3-bit codes (words shared by
// lanes, zero points straddling words are not used by signed codes) with
// f32 channel scales from f32 weights, unsigned 8-bit codes with float
// zero points and bf16 group scales from bf16 weights for two experts,
// MXFP4 (e2m1 codes, e8m0 scales per 32) from bf16 weights, fp8 e4m3
// codes with f32 channel scales from f16 weights and e2m1 codes with e4m3
// scales per 32 (NVFP4's codes and scales without its global scale), NVFP4
// itself (groups of 16 — two per warp —, e4m3 scales under an f32 global
// scale: four kernels) for two experts, fp8 e4m3 with one f32 scale
// for the tensor (its global scale: four kernels, no scale tensor), and
// fp8 e4m3 with f32 scales per 128 x 128 block (DeepSeek's), 200 rows
// padded to 256 (a last block of 128 rows, 72 of them padding) for two
// experts: four kernels, the blocks' slots in the scale tensor.
func.func @w4_g128_zp(%x: memref<256x512xf16>, %q: memref<256x64xi32>, %s: memref<256x4xf16>, %z: memref<32x4xi32>) {
  humming.quantize %x into %q scales(%s : memref<256x4xf16>) zero_points(%z : memref<32x4xi32>)
      {schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>, zero_point = int>}
      : memref<256x512xf16> -> memref<256x64xi32>
  return
}
func.func @w3_channel(%x: memref<200x480xf32>, %q: memref<200x45xi32>, %s: memref<200x1xf32>) {
  humming.quantize %x into %q scales(%s : memref<200x1xf32>)
      {schema = #humming.weight_schema<type = si3, scale = f32>}
      : memref<200x480xf32> -> memref<200x45xi32>
  return
}
func.func @w8_moe_fzp(%x: memref<2x128x256xbf16>, %q: memref<2x128x64xi32>, %s: memref<2x128x4xbf16>, %z: memref<2x128x4xbf16>) {
  humming.quantize %x into %q scales(%s : memref<2x128x4xbf16>) zero_points(%z : memref<2x128x4xbf16>)
      {schema = #humming.weight_schema<type = ui8, scale = bf16, granularity = group<64>, zero_point = float, experts = 2>}
      : memref<2x128x256xbf16> -> memref<2x128x64xi32>
  return
}
func.func @mxfp4(%x: memref<64x256xbf16>, %q: memref<64x32xi32>, %s: memref<64x8xf8E8M0FNU>) {
  humming.quantize %x into %q scales(%s : memref<64x8xf8E8M0FNU>)
      {schema = #humming.weight_schema<type = f4E2M1FN, scale = f8E8M0FNU, granularity = group<32>>}
      : memref<64x256xbf16> -> memref<64x32xi32>
  return
}
func.func @e4m3_channel(%x: memref<64x256xf16>, %q: memref<64x64xi32>, %s: memref<64x1xf32>) {
  humming.quantize %x into %q scales(%s : memref<64x1xf32>)
      {schema = #humming.weight_schema<type = f8E4M3FN, scale = f32>}
      : memref<64x256xf16> -> memref<64x64xi32>
  return
}
func.func @e2m1_e4m3(%x: memref<64x256xf16>, %q: memref<64x32xi32>, %s: memref<64x8xf8E4M3FN>) {
  humming.quantize %x into %q scales(%s : memref<64x8xf8E4M3FN>)
      {schema = #humming.weight_schema<type = f4E2M1FN, scale = f8E4M3FN, granularity = group<32>>}
      : memref<64x256xf16> -> memref<64x32xi32>
  return
}
func.func @nvfp4_moe(%x: memref<2x64x256xbf16>, %q: memref<2x64x32xi32>, %s: memref<2x64x16xf8E4M3FN>, %gs: memref<2xf32>) {
  humming.quantize %x into %q scales(%s : memref<2x64x16xf8E4M3FN>) global_scale(%gs : memref<2xf32>)
      {schema = #humming.weight_schema<type = f4E2M1FN, scale = f8E4M3FN, granularity = group_tensor<16>, experts = 2>}
      : memref<2x64x256xbf16> -> memref<2x64x32xi32>
  return
}
func.func @fp8_tensor(%x: memref<64x256xbf16>, %q: memref<64x64xi32>, %gs: memref<1xf32>) {
  humming.quantize %x into %q global_scale(%gs : memref<1xf32>)
      {schema = #humming.weight_schema<type = f8E4M3FN, scale = f32, granularity = tensor>}
      : memref<64x256xbf16> -> memref<64x64xi32>
  return
}
func.func @fp8_block_moe(%x: memref<2x200x512xbf16>, %q: memref<2x256x128xi32>, %s: memref<2x2x4xf32>) {
  humming.quantize %x into %q scales(%s : memref<2x2x4xf32>)
      {schema = #humming.weight_schema<type = f8E4M3FN, scale = f32, granularity = block<128, 128>, experts = 2, pad_n = 56>}
      : memref<2x200x512xbf16> -> memref<2x256x128xi32>
  return
}
