// Weight repacks for ptxas-repack.test (a weight of every plane split, every
// operand, experts, 8- and 4-bit activations).
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
func.func @w6_zero_points(%z: memref<48x16xi32>, %pz: memref<16x64xi32>) {
  humming.repack %z into %pz {operand = #humming.operand<zero_points>, n = 256, k = 2048,
      weight_schema = #humming.weight_schema<type = ui6, scale = f16, granularity = group<128>, zero_point = int>,
      input_schema = #humming.input_schema<type = si8, scaling = token>, layout = #humming.layout<mma = wgmma, chip = "sm_90a">}
      : memref<48x16xi32> -> memref<16x64xi32>
  return
}
func.func @moe_si4_a4(%w: memref<2x128x16xi32>, %pw: memref<2x2x1024xi32>) {
  humming.repack %w into %pw {operand = #humming.operand<weight>, n = 128, k = 128,
      weight_schema = #humming.weight_schema<type = si4, scale = f16, experts = 2>,
      input_schema = #humming.input_schema<type = si4, scaling = token>, layout = #humming.layout<chip = "sm_90a">}
      : memref<2x128x16xi32> -> memref<2x2x1024xi32>
  return
}
// Codes that straddle words (3 and 7 bits: planes 2 + 1 and 4 + 2 + 1),
// 8-bit codes for 8-bit activations, e2m1 codes with e8m0 scales (1 byte).
func.func @w3(%w: memref<128x24xi32>, %pw: memref<16x192xi32>) {
  humming.repack %w into %pw {operand = #humming.operand<weight>, n = 128, k = 256,
      weight_schema = #humming.weight_schema<type = ui3, scale = f16>,
      input_schema = #humming.input_schema<type = f16>, layout = #humming.layout<chip = "sm_90a">}
      : memref<128x24xi32> -> memref<16x192xi32>
  return
}
func.func @w7(%w: memref<128x56xi32>, %pw: memref<16x448xi32>) {
  humming.repack %w into %pw {operand = #humming.operand<weight>, n = 128, k = 256,
      weight_schema = #humming.weight_schema<type = si7, scale = f16>,
      input_schema = #humming.input_schema<type = f16>, layout = #humming.layout<chip = "sm_90a">}
      : memref<128x56xi32> -> memref<16x448xi32>
  return
}
func.func @w8a8(%w: memref<128x64xi32>, %pw: memref<8x1024xi32>) {
  humming.repack %w into %pw {operand = #humming.operand<weight>, n = 128, k = 256,
      weight_schema = #humming.weight_schema<type = si8, scale = f32>,
      input_schema = #humming.input_schema<type = si8, scaling = token>, layout = #humming.layout<chip = "sm_90a">}
      : memref<128x64xi32> -> memref<8x1024xi32>
  return
}
func.func @mxfp4(%w: memref<128x32xi32>, %pw: memref<16x256xi32>,
                 %s: memref<128x8xf8E8M0FNU>, %ps: memref<8x128xf8E8M0FNU>) {
  humming.repack %w into %pw {operand = #humming.operand<weight>, n = 128, k = 256,
      weight_schema = #humming.weight_schema<type = f4E2M1FN, scale = f8E8M0FNU, granularity = group<32>>,
      input_schema = #humming.input_schema<type = bf16>, layout = #humming.layout<chip = "sm_90a">}
      : memref<128x32xi32> -> memref<16x256xi32>
  humming.repack %s into %ps {operand = #humming.operand<scales>, n = 128, k = 256,
      weight_schema = #humming.weight_schema<type = f4E2M1FN, scale = f8E8M0FNU, granularity = group<32>>,
      input_schema = #humming.input_schema<type = bf16>, layout = #humming.layout<chip = "sm_90a">}
      : memref<128x8xf8E8M0FNU> -> memref<8x128xf8E8M0FNU>
  return
}
