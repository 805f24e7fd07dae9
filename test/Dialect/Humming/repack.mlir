// RUN: humming-opt %s | humming-opt | FileCheck %s

// Each weight-side tensor into the execution layout (P = 256 / activation bits).

// CHECK-LABEL: func.func @repack_w4a16_all
// CHECK-COUNT-4: humming.repack
func.func @repack_w4a16_all(%w: memref<4096x512xi32>, %pw: memref<256x8192xi32>,
                            %s: memref<4096x32xf16>, %ps: memref<32x4096xf16>,
                            %z: memref<512x32xi32>, %pz: memref<32x512xi32>,
                            %b: memref<4096xf16>, %pb: memref<4096xf16>) {
  humming.repack %w into %pw {operand = #humming.operand<weight>, n = 4096, k = 4096,
      weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>, zero_point = int, bias = true>,
      input_schema = #humming.input_schema<type = f16>, layout = #humming.layout<chip = "sm_80">}
      : memref<4096x512xi32> -> memref<256x8192xi32>
  humming.repack %s into %ps {operand = #humming.operand<scales>, n = 4096, k = 4096,
      weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>, zero_point = int, bias = true>,
      input_schema = #humming.input_schema<type = f16>, layout = #humming.layout<chip = "sm_80">}
      : memref<4096x32xf16> -> memref<32x4096xf16>
  humming.repack %z into %pz {operand = #humming.operand<zero_points>, n = 4096, k = 4096,
      weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>, zero_point = int, bias = true>,
      input_schema = #humming.input_schema<type = f16>, layout = #humming.layout<chip = "sm_80">}
      : memref<512x32xi32> -> memref<32x512xi32>
  humming.repack %b into %pb {operand = #humming.operand<bias>, n = 4096, k = 4096,
      weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>, zero_point = int, bias = true>,
      input_schema = #humming.input_schema<type = f16>, layout = #humming.layout<chip = "sm_80">}
      : memref<4096xf16> -> memref<4096xf16>
  return
}

// 8-bit activations pack 32 k values per row; 6-bit zero points widen to 8-bit lanes.
// CHECK-LABEL: func.func @repack_w6a8_zp
func.func @repack_w6a8_zp(%z: memref<48x16xi32>, %pz: memref<16x64xi32>) {
  humming.repack %z into %pz {operand = #humming.operand<zero_points>, n = 256, k = 2048,
      weight_schema = #humming.weight_schema<type = ui6, scale = f16, granularity = group<128>, zero_point = int>,
      input_schema = #humming.input_schema<type = si8, scaling = token>, layout = #humming.layout<mma = wgmma, chip = "sm_90a">}
      : memref<48x16xi32> -> memref<16x64xi32>
  return
}

// Straight from GPTQ tensors (qweight [K*b/32, N]) to the prepared layout.
// CHECK-LABEL: func.func @repack_gptq_weight
func.func @repack_gptq_weight(%w: memref<256x2048xi32>, %pw: memref<128x4096xi32>) {
  humming.repack %w into %pw {operand = #humming.operand<weight>, n = 2048, k = 2048,
      weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>, format = gptq>,
      input_schema = #humming.input_schema<type = f16>, layout = #humming.layout<chip = "sm_89">}
      : memref<256x2048xi32> -> memref<128x4096xi32>
  return
}

// Unpacked 8-bit codes per expert ([E, N, K] i8, the bytes of the packed
// words) into the prepared i32 words.
// CHECK-LABEL: func.func @repack_unpacked_si8_experts
// CHECK: humming.repack %{{.*}} into %{{.*}} {{.*}} : memref<4x256x512xi8> -> memref<4x32x1024xi32>
func.func @repack_unpacked_si8_experts(%w: memref<4x256x512xi8>, %pw: memref<4x32x1024xi32>) {
  humming.repack %w into %pw {operand = #humming.operand<weight>, n = 256, k = 512,
      weight_schema = #humming.weight_schema<type = si8, scale = f16, experts = 4>,
      input_schema = #humming.input_schema<type = f16>, layout = #humming.layout<chip = "sm_80">}
      : memref<4x256x512xi8> -> memref<4x32x1024xi32>
  return
}
