// RUN: humming-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{expected a weight element type (integer of 1 to 8 bits or signed float of at most 8 bits), got ui16}}
func.func @wide_int() attributes {s = #humming.weight_schema<type = ui16, scale = f16>} { return }

// -----

// expected-error @+1 {{expected a weight element type (integer of 1 to 8 bits or signed float of at most 8 bits), got f16}}
func.func @f16_weight() attributes {s = #humming.weight_schema<type = f16, scale = f16>} { return }

// -----

// e8m0 is a scale format, not a weight format.
// expected-error @+1 {{expected a weight element type (integer of 1 to 8 bits or signed float of at most 8 bits), got f8E8M0FNU}}
func.func @e8m0_weight() attributes {s = #humming.weight_schema<type = f8E8M0FNU, scale = f16>} { return }

// -----

// expected-error @+1 {{expected a supported weight element type, got 'f8E4M3FNUZ'}}
func.func @fnuz_weight() attributes {s = #humming.weight_schema<type = f8E4M3FNUZ, scale = f16>} { return }

// -----

// expected-error @+1 {{expected scale type f16, bf16, f8E4M3FN, f8E5M2 or f8E8M0FNU for group scales (f32 only for channel, block and tensor scales), got f32}}
func.func @f32_group_scale() attributes {s = #humming.weight_schema<type = ui4, scale = f32, granularity = group<128>>} { return }

// -----

// expected-error @+1 {{expected scale type f32 for block scales, got bf16}}
func.func @bf16_block_scale() attributes {s = #humming.weight_schema<type = f8E4M3FN, scale = bf16, granularity = block<128, 128>>} { return }

// -----

// expected-error @+1 {{expected scale type f32 for tensor scales, got f16}}
func.func @f16_tensor_scale() attributes {s = #humming.weight_schema<type = f8E4M3FN, scale = f16, granularity = tensor>} { return }

// -----

// expected-error @+1 {{expected the scale group size to be a power of two, got 96}}
func.func @group_not_pow2() attributes {s = #humming.weight_schema<type = ui4, scale = f16, granularity = group<96>>} { return }

// -----

// expected-error @+1 {{expected the block scale's n size to be a power of two >= 64, got 32}}
func.func @block_n_small() attributes {s = #humming.weight_schema<type = f8E4M3FN, scale = f32, granularity = block<32, 128>>} { return }

// -----

// expected-error @+1 {{expected the block scale's k size to be a power of two, got 100}}
func.func @block_k_not_pow2() attributes {s = #humming.weight_schema<type = f8E4M3FN, scale = f32, granularity = block<128, 100>>} { return }

// -----

// expected-error @+1 {{expected an unsigned integer weight type with a zero point, got f4E2M1FN}}
func.func @zp_on_float() attributes {s = #humming.weight_schema<type = f4E2M1FN, scale = f16, zero_point = int>} { return }

// -----

// Signed weights are symmetric: their zero is 0.
// expected-error @+1 {{expected an unsigned integer weight type with a zero point, got si4}}
func.func @zp_on_signed() attributes {s = #humming.weight_schema<type = si4, scale = f16, zero_point = int>} { return }

// -----

// expected-error @+1 {{expected channel, group or group_tensor scales with a zero point, got block scales}}
func.func @zp_with_block() attributes {s = #humming.weight_schema<type = ui8, scale = f32, granularity = block<128, 128>, zero_point = int>} { return }

// -----

// expected-error @+1 {{expected experts in 0 .. 1099511627776, got -2}}
func.func @negative_experts() attributes {s = #humming.weight_schema<type = ui4, scale = f16, experts = -2>} { return }

// -----

// expected-error @+1 {{expected pad_n to be a multiple of 8, got 12}}
func.func @pad_n_unaligned() attributes {s = #humming.weight_schema<type = ui4, scale = f16, pad_n = 12>} { return }

// -----

// expected-error @+1 {{expected padding in 0 .. 1099511627776, got pad_n = 0, pad_k = -8}}
func.func @negative_pad() attributes {s = #humming.weight_schema<type = ui4, scale = f16, pad_k = -8>} { return }

// -----

// Sizes past 2^40 would overflow the shape arithmetic (K + pad_k read
// -4611686018427387904 once).
// expected-error @+1 {{expected padding in 0 .. 1099511627776, got pad_n = 0, pad_k = 4611686018427387904}}
func.func @huge_pad() attributes {s = #humming.weight_schema<type = ui4, scale = f16, pad_k = 4611686018427387904>} { return }

// -----

// expected-error @+1 {{expected experts in 0 .. 1099511627776, got 4611686018427387904}}
func.func @huge_experts() attributes {s = #humming.weight_schema<type = ui4, scale = f16, experts = 4611686018427387904>} { return }

// -----

// expected-error @+1 {{expected ui2, ui3, ui4 or ui8 weights in the gptq format, got ui5}}
func.func @gptq_5bit() attributes {s = #humming.weight_schema<type = ui5, scale = f16, format = gptq>} { return }

// -----

// expected-error @+1 {{expected channel or group scales in the gptq format, got group_tensor}}
func.func @gptq_group_tensor() attributes {s = #humming.weight_schema<type = ui4, scale = f16, granularity = group_tensor<128>, format = gptq_v2>} { return }

// -----

// expected-error @+1 {{expected ui4 weights in the awq format, got ui8}}
func.func @awq_8bit() attributes {s = #humming.weight_schema<type = ui8, scale = f16, format = awq>} { return }

// -----

// expected-error @+1 {{expected integer zero points (qzeros) in the awq format, got float}}
func.func @awq_float_zp() attributes {s = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>, zero_point = float, format = awq>} { return }
