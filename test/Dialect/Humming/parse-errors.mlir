// RUN: humming-opt %s -split-input-file -verify-diagnostics

// Malformed input is a diagnostic, never a crash.

// expected-error @+1 {{expected one of 'channel', 'group', 'block', 'tensor', 'group_tensor', got 'rows'}}
func.func @unknown_granularity() attributes {s = #humming.weight_schema<type = ui4, scale = f16, granularity = rows>} { return }
// expected-error @-1 {{failed to parse Humming_WeightSchemaAttr parameter 'granularity'}}

// -----

// expected-error @+2 {{expected one of 'none', 'int', 'float', got 'fp'}}
// expected-error @+1 {{failed to parse Humming_WeightSchemaAttr parameter 'zero_point'}}
func.func @unknown_zero_point() attributes {s = #humming.weight_schema<type = ui4, scale = f16, zero_point = fp>} { return }

// -----

// expected-error @+2 {{expected one of 'canonical', 'gptq', 'gptq_v2', 'awq', got 'exl2'}}
// expected-error @+1 {{failed to parse Humming_WeightSchemaAttr parameter 'format'}}
func.func @unknown_format() attributes {s = #humming.weight_schema<type = ui4, scale = f16, format = exl2>} { return }

// -----

// expected-error @+2 {{expected one of 'dense', 'indexed', 'grouped_contiguous', 'grouped_masked', got 'sparse'}}
// expected-error @+1 {{failed to parse Humming_ComputeAttr parameter 'gemm'}}
func.func @unknown_gemm() attributes {c = #humming.compute<gemm = sparse>} { return }

// -----

// expected-error @+2 {{expected one of 'weight', 'scales', 'zero_points', 'global_scale', 'bias', got 'qweight'}}
// expected-error @+1 {{failed to parse Humming_WeightOperandAttr parameter 'value'}}
func.func @unknown_operand() attributes {o = #humming.operand<qweight>} { return }

// -----

// expected-error @+1 {{struct is missing required parameter: scale}}
func.func @missing_scale() attributes {s = #humming.weight_schema<type = ui4>} { return }

// -----

// expected-error @+1 {{duplicate or unknown struct parameter name: bits}}
func.func @unknown_field() attributes {s = #humming.weight_schema<type = ui4, scale = f16, bits = 4>} { return }

// -----

// expected-error @+1 {{duplicate or unknown struct parameter name: type}}
func.func @duplicate_field() attributes {s = #humming.weight_schema<type = ui4, type = ui8, scale = f16>} { return }

// -----

// expected-error @+2 {{expected a positive group size, got 0}}
// expected-error @+1 {{failed to parse Humming_WeightSchemaAttr parameter 'granularity'}}
func.func @zero_group() attributes {s = #humming.weight_schema<type = ui4, scale = f16, granularity = group<0>>} { return }

// -----

// expected-error @+2 {{expected ','}}
// expected-error @+1 {{failed to parse Humming_WeightSchemaAttr parameter 'granularity'}}
func.func @block_one_size() attributes {s = #humming.weight_schema<type = f8E4M3FN, scale = f32, granularity = block<128>>} { return }

// -----

// expected-error @+2 {{expected 'true' or 'false'}}
// expected-error @+1 {{failed to parse Humming_WeightSchemaAttr parameter 'bias'}}
func.func @bias_number() attributes {s = #humming.weight_schema<type = ui4, scale = f16, bias = 1>} { return }

// -----

// expected-error @+2 {{expected non-function type}}
// expected-error @+1 {{failed to parse Humming_WeightSchemaAttr parameter 'type'}}
func.func @not_a_type() attributes {s = #humming.weight_schema<type = 4, scale = f16>} { return }

// -----

// expected-error @+2 {{expected an integer, got 'many'}}
// expected-error @+1 {{failed to parse Humming_WeightSchemaAttr parameter 'experts'}}
func.func @experts_word() attributes {s = #humming.weight_schema<type = ui4, scale = f16, experts = many>} { return }

// -----

// expected-error @+1 {{unknown attribute `weight_scheme` in dialect `humming`}}
func.func @unknown_attr() attributes {s = #humming.weight_scheme<type = ui4>} { return }

// -----

// expected-error @+1 {{type `int4` in dialect `humming`}}
func.func @unknown_type(%a: memref<4x!humming.int4>) { return }

// -----

// Truncated attribute at the end of the input.
// expected-error @+1 {{unbalanced '<' character in pretty dialect name}}
func.func @truncated() attributes {s = #humming.input_schema<type = f16
