// RUN: humming-opt %s | humming-opt | FileCheck %s
// RUN: humming-opt %s --mlir-print-op-generic | humming-opt | FileCheck %s

// Known devices print compactly; overrides and unknown devices print their
// fields.

// CHECK-LABEL: func.func @known
// CHECK-SAME: a = #humming.target<device = "H200">
// CHECK-SAME: b = #humming.target<device = "H20", ptx = 85>
// CHECK-SAME: c = #humming.target<device = "A100">
// CHECK-SAME: d = #humming.target<device = "RTX 5090">
// CHECK-SAME: e = #humming.target<device = "H100", chip = "sm_90">
// CHECK-SAME: f = #humming.target<device = "B200", sms = 140>
// CHECK-SAME: g = #humming.target<device = "T4">
// CHECK-SAME: h = #humming.target<device = "L40S", bandwidth = 9.000000e+02>
func.func @known() attributes {
  a = #humming.target<device = "H200">,
  b = #humming.target<device = "h20", ptx = 85>,
  c = #humming.target<device = "a100", chip = "sm_80", ptx = 70>,
  d = #humming.target<device = "rtx5090">,
  e = #humming.target<device = "H100", chip = "sm_90">,
  f = #humming.target<device = "B200", sms = 140>,
  g = #humming.target<device = "T4">,
  h = #humming.target<device = "L40S", bandwidth = 900.0>
} { return }

// CHECK-LABEL: func.func @unknown
// CHECK-SAME: a = #humming.target<chip = "sm_89", sms = 84, bandwidth = 9.600000e+02, smem = 99, l2 = 64, f16 = 1.500000e+02, bf16 = 1.500000e+02, fp8 = 3.000000e+02, int8 = 3.000000e+02, int4 = 0.000000e+00, fp4 = 0.000000e+00>
// CHECK-SAME: b = #humming.target<device = "Lab GPU", chip = "sm_120a", ptx = 88, sms = 10, bandwidth = 1.000000e+02, smem = 99, l2 = 8, f16 = 1.000000e+01, bf16 = 0.000000e+00, fp8 = 0.000000e+00, int8 = 0.000000e+00, int4 = 0.000000e+00, fp4 = 0.000000e+00>
func.func @unknown() attributes {
  a = #humming.target<chip = "sm_89", sms = 84, bandwidth = 960.0, smem = 99, l2 = 64,
                      f16 = 150.0, bf16 = 150.0, fp8 = 300.0, int8 = 300.0>,
  b = #humming.target<device = "Lab GPU", chip = "sm_120a", ptx = 88, sms = 10,
                      bandwidth = 100.0, smem = 99, l2 = 8, f16 = 10.0>
} { return }

// The module-level attribute that scopes verification.
// CHECK-LABEL: module @scoped
// CHECK-SAME: humming.target = #humming.target<device = "H200">
module @scoped attributes {humming.target = #humming.target<device = "H200">} {}
