// RUN: humming-opt %s | humming-opt | FileCheck %s
// RUN: humming-opt %s --mlir-print-op-generic | humming-opt | FileCheck %s

// CHECK-LABEL: func.func @inputs
// CHECK-SAME: a_f16 = #humming.input_schema<type = f16>
// CHECK-SAME: b_bf16 = #humming.input_schema<type = bf16>
// CHECK-SAME: c_e4m3 = #humming.input_schema<type = f8E4M3FN, scaling = token>
// CHECK-SAME: d_e5m2 = #humming.input_schema<type = f8E5M2, scaling = group<128>>
// CHECK-SAME: e_s8 = #humming.input_schema<type = si8, scaling = static>
// CHECK-SAME: f_i8 = #humming.input_schema<type = i8, scaling = token>
// CHECK-SAME: g_s4 = #humming.input_schema<type = si4, scaling = group<64>>
// CHECK-SAME: h_fp4 = #humming.input_schema<type = f4E2M1FN, scaling = group<64>>
func.func @inputs() attributes {
  a_f16 = #humming.input_schema<type = f16, scaling = none>,
  b_bf16 = #humming.input_schema<type = bf16>,
  c_e4m3 = #humming.input_schema<type = f8E4M3FN, scaling = token>,
  d_e5m2 = #humming.input_schema<type = f8E5M2, scaling = group<128>>,
  e_s8 = #humming.input_schema<type = si8, scaling = static>,
  f_i8 = #humming.input_schema<type = i8, scaling = token>,
  g_s4 = #humming.input_schema<scaling = group<64>, type = si4>,
  h_fp4 = #humming.input_schema<type = f4E2M1FN, scaling = group<64>>
} { return }
