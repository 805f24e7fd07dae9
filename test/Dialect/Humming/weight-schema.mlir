// RUN: humming-opt %s | humming-opt | FileCheck %s
// RUN: humming-opt %s --mlir-print-op-generic | humming-opt | FileCheck %s

// Every field of #humming.weight_schema, and that defaults are elided.

// CHECK-LABEL: func.func @integers
// CHECK-SAME: w1 = #humming.weight_schema<type = ui1, scale = f16>
// CHECK-SAME: w3 = #humming.weight_schema<type = ui3, scale = bf16, granularity = group<64>>
// CHECK-SAME: w4zp = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>, zero_point = int>
// CHECK-SAME: w5fzp = #humming.weight_schema<type = ui5, scale = f16, granularity = group<32>, zero_point = float>
// CHECK-SAME: w8s = #humming.weight_schema<type = si8, scale = f16>
// CHECK-SAME: w8signless = #humming.weight_schema<type = i8, scale = f16>
func.func @integers() attributes {
  w1 = #humming.weight_schema<type = ui1, scale = f16, granularity = channel, zero_point = none>,
  w3 = #humming.weight_schema<type = ui3, scale = bf16, granularity = group<64>>,
  w4zp = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>, zero_point = int>,
  w5fzp = #humming.weight_schema<zero_point = float, type = ui5, granularity = group<32>, scale = f16>,
  w8s = #humming.weight_schema<type = si8, scale = f16>,
  w8signless = #humming.weight_schema<type = i8, scale = f16>
} { return }

// CHECK-LABEL: func.func @floats
// CHECK-SAME: e2m3 = #humming.weight_schema<type = f6E2M3FN, scale = f8E5M2, granularity = group<64>>
// CHECK-SAME: e3m2 = #humming.weight_schema<type = f6E3M2FN, scale = f16>
// CHECK-SAME: e5m2 = #humming.weight_schema<type = f8E5M2, scale = f32, granularity = tensor>
// CHECK-SAME: f32chan = #humming.weight_schema<type = f8E4M3FN, scale = f32>
// CHECK-SAME: fp8 = #humming.weight_schema<type = f8E4M3FN, scale = f32, granularity = block<128, 128>>
// CHECK-SAME: generic = #humming.weight_schema<type = !humming.float<e2m2>, scale = bf16>
// CHECK-SAME: mxfp4 = #humming.weight_schema<type = f4E2M1FN, scale = f8E8M0FNU, granularity = group<32>>
// CHECK-SAME: nvfp4 = #humming.weight_schema<type = f4E2M1FN, scale = f8E4M3FN, granularity = group_tensor<16>>
func.func @floats() attributes {
  fp8 = #humming.weight_schema<type = f8E4M3FN, scale = f32, granularity = block<128, 128>>,
  mxfp4 = #humming.weight_schema<type = f4E2M1FN, scale = f8E8M0FNU, granularity = group<32>>,
  nvfp4 = #humming.weight_schema<type = f4E2M1FN, scale = f8E4M3FN, granularity = group_tensor<16>>,
  e2m3 = #humming.weight_schema<type = f6E2M3FN, scale = f8E5M2, granularity = group<64>>,
  e3m2 = #humming.weight_schema<type = f6E3M2FN, scale = f16>,
  f32chan = #humming.weight_schema<type = f8E4M3FN, scale = f32>,
  e5m2 = #humming.weight_schema<type = f8E5M2, scale = f32, granularity = tensor>,
  generic = #humming.weight_schema<type = !humming.float<e2m2>, scale = bf16>
} { return }

// CHECK-LABEL: func.func @layer_fields
// CHECK-SAME: all = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>, zero_point = int, global_scale = true, bias = true, experts = 256, pad_n = 64, pad_k = 128, format = gptq_v2>
// CHECK-SAME: awq = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>, zero_point = int, format = awq>
// CHECK-SAME: gptq = #humming.weight_schema<type = ui3, scale = f16, format = gptq>
func.func @layer_fields() attributes {
  all = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>, zero_point = int,
                               global_scale = true, bias = true, experts = 256, pad_n = 64,
                               pad_k = 128, format = gptq_v2>,
  awq = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>, zero_point = int, format = awq>,
  gptq = #humming.weight_schema<type = ui3, scale = f16, format = gptq, bias = false, experts = 0>
} { return }
