// RUN: humming-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{expected activation type f16, bf16, f8E4M3FN, f8E5M2, si8, si4 or f4E2M1FN, got f32}}
func.func @f32_act() attributes {s = #humming.input_schema<type = f32>} { return }

// -----

// expected-error @+1 {{expected activation type f16, bf16, f8E4M3FN, f8E5M2, si8, si4 or f4E2M1FN, got ui8}}
func.func @u8_act() attributes {s = #humming.input_schema<type = ui8, scaling = token>} { return }

// -----

// expected-error @+1 {{expected activation scaling none for 16-bit activations, got token}}
func.func @scaled_f16() attributes {s = #humming.input_schema<type = f16, scaling = token>} { return }

// -----

// expected-error @+1 {{expected activation scaling token, group<k> or static for 8-bit activations (f8E4M3FN), got none}}
func.func @unscaled_fp8() attributes {s = #humming.input_schema<type = f8E4M3FN>} { return }

// -----

// expected-error @+1 {{expected the activation group size to be a power of two >= 32 for 8-bit activations, got 16}}
func.func @small_group() attributes {s = #humming.input_schema<type = si8, scaling = group<16>>} { return }

// -----

// expected-error @+1 {{expected the activation group size to be a power of two >= 64 for 4-bit activations, got 96}}
func.func @odd_group() attributes {s = #humming.input_schema<type = si4, scaling = group<96>>} { return }

// -----

// expected-error @+2 {{expected one of 'none', 'token', 'group', 'static', got 'channel'}}
// expected-error @+1 {{failed to parse Humming_InputSchemaAttr parameter 'scaling'}}
func.func @unknown_scaling() attributes {s = #humming.input_schema<type = si8, scaling = channel>} { return }
