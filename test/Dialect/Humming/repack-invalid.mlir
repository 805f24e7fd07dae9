// RUN: humming-opt %s -split-input-file -verify-diagnostics

func.func @global_scale(%g: memref<1xf32>, %pg: memref<1xf32>) {
  // expected-error @+1 {{expected operand weight, scales, zero_points or bias (a global scale is not repacked), got global_scale}}
  humming.repack %g into %pg {operand = #humming.operand<global_scale>, n = 4096, k = 4096,
      weight_schema = #humming.weight_schema<type = ui4, scale = f16, global_scale = true>,
      input_schema = #humming.input_schema<type = f16>, layout = #humming.layout<chip = "sm_80">}
      : memref<1xf32> -> memref<1xf32>
  return
}

// -----

func.func @dest_shape(%w: memref<4096x512xi32>, %pw: memref<4096x512xi32>) {
  // expected-error @+1 {{expected 'dest weight' of shape [256, 8192], got 'memref<4096x512xi32>'}}
  humming.repack %w into %pw {operand = #humming.operand<weight>, n = 4096, k = 4096,
      weight_schema = #humming.weight_schema<type = ui4, scale = f16>,
      input_schema = #humming.input_schema<type = f16>, layout = #humming.layout<chip = "sm_80">}
      : memref<4096x512xi32> -> memref<4096x512xi32>
  return
}

// -----

func.func @source_shape(%s: memref<32x4096xf16>, %ps: memref<32x4096xf16>) {
  // expected-error @+1 {{expected 'source scales' of shape [4096, 32], got 'memref<32x4096xf16>'}}
  humming.repack %s into %ps {operand = #humming.operand<scales>, n = 4096, k = 4096,
      weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>>,
      input_schema = #humming.input_schema<type = f16>, layout = #humming.layout<chip = "sm_80">}
      : memref<32x4096xf16> -> memref<32x4096xf16>
  return
}

// -----

func.func @no_zero_point(%z: memref<512x32xi32>, %pz: memref<32x512xi32>) {
  // expected-error @+1 {{operand 'source zero_points': the schema has no zero point}}
  humming.repack %z into %pz {operand = #humming.operand<zero_points>, n = 4096, k = 4096,
      weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>>,
      input_schema = #humming.input_schema<type = f16>, layout = #humming.layout<chip = "sm_80">}
      : memref<512x32xi32> -> memref<32x512xi32>
  return
}

// -----

func.func @elem_change(%b: memref<4096xf16>, %pb: memref<4096xbf16>) {
  // expected-error @+1 {{expected 'dest' element type 'f16' (as 'source'), got 'bf16'}}
  humming.repack %b into %pb {operand = #humming.operand<bias>, n = 4096, k = 4096,
      weight_schema = #humming.weight_schema<type = ui4, scale = f16, bias = true>,
      input_schema = #humming.input_schema<type = f16>, layout = #humming.layout<chip = "sm_80">}
      : memref<4096xf16> -> memref<4096xbf16>
  return
}

// -----

func.func @layout_chip_vs_activation(%w: memref<4096x1024xi32>, %pw: memref<128x32768xi32>) {
  // expected-error @+1 {{expected sm_89 or newer for f8E4M3FN activations, got sm_80}}
  humming.repack %w into %pw {operand = #humming.operand<weight>, n = 4096, k = 4096,
      weight_schema = #humming.weight_schema<type = f8E4M3FN, scale = f16>,
      input_schema = #humming.input_schema<type = f8E4M3FN, scaling = token>, layout = #humming.layout<chip = "sm_80">}
      : memref<4096x1024xi32> -> memref<128x32768xi32>
  return
}

// -----

module attributes {humming.target = #humming.target<device = "H200">} {
func.func @layout_vs_target(%w: memref<4096x512xi32>, %pw: memref<256x8192xi32>) {
  // expected-error @+1 {{expected a layout for the target sm_90a, got one for sm_80}}
  humming.repack %w into %pw {operand = #humming.operand<weight>, n = 4096, k = 4096,
      weight_schema = #humming.weight_schema<type = ui4, scale = f16>,
      input_schema = #humming.input_schema<type = f16>, layout = #humming.layout<chip = "sm_80">}
      : memref<4096x512xi32> -> memref<256x8192xi32>
  return
}
}

// -----

func.func @n_attr(%w: memref<4096x512xi32>, %pw: memref<256x8192xi32>) {
  // expected-error @+1 {{attribute 'n' failed to satisfy constraint: 64-bit signless integer attribute whose minimum value is 1}}
  humming.repack %w into %pw {operand = #humming.operand<weight>, n = 0, k = 4096,
      weight_schema = #humming.weight_schema<type = ui4, scale = f16>,
      input_schema = #humming.input_schema<type = f16>, layout = #humming.layout<chip = "sm_80">}
      : memref<4096x512xi32> -> memref<256x8192xi32>
  return
}

// -----

func.func @tensor_scales(%s: memref<4096x1xf32>, %ps: memref<1x4096xf32>) {
  // expected-error @+1 {{operand 'source scales': tensor granularity has no scale tensor: its scale is the global_scale operand}}
  humming.repack %s into %ps {operand = #humming.operand<scales>, n = 4096, k = 4096,
      weight_schema = #humming.weight_schema<type = f8E4M3FN, scale = f32, granularity = tensor>,
      input_schema = #humming.input_schema<type = f16>, layout = #humming.layout<chip = "sm_80">}
      : memref<4096x1xf32> -> memref<1x4096xf32>
  return
}

// -----

func.func @no_bias(%b: memref<4096xf16>, %pb: memref<4096xf16>) {
  // expected-error @+1 {{operand 'source bias': the schema has no bias}}
  humming.repack %b into %pb {operand = #humming.operand<bias>, n = 4096, k = 4096,
      weight_schema = #humming.weight_schema<type = ui4, scale = f16>,
      input_schema = #humming.input_schema<type = f16>, layout = #humming.layout<chip = "sm_80">}
      : memref<4096xf16> -> memref<4096xf16>
  return
}

// -----

func.func @unpacked_source_shape(%w: memref<4x256x256xi8>, %pw: memref<4x32x1024xi32>) {
  // expected-error @+1 {{expected 'source weight' of shape [4, 256, 512], got 'memref<4x256x256xi8>'}}
  humming.repack %w into %pw {operand = #humming.operand<weight>, n = 256, k = 512,
      weight_schema = #humming.weight_schema<type = si8, scale = f16, experts = 4>,
      input_schema = #humming.input_schema<type = f16>, layout = #humming.layout<chip = "sm_80">}
      : memref<4x256x256xi8> -> memref<4x32x1024xi32>
  return
}

// -----

func.func @unpacked_source_type(%w: memref<256x512xf8E5M2>, %pw: memref<32x1024xi32>) {
  // expected-error @+1 {{expected 'source weight' element type i8 (unpacked 8-bit codes), got 'f8E5M2'}}
  humming.repack %w into %pw {operand = #humming.operand<weight>, n = 256, k = 512,
      weight_schema = #humming.weight_schema<type = si8, scale = f16>,
      input_schema = #humming.input_schema<type = f16>, layout = #humming.layout<chip = "sm_80">}
      : memref<256x512xf8E5M2> -> memref<32x1024xi32>
  return
}
