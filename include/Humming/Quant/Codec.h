//===- Codec.h - Encode and decode every scalar format ----------*- C++ -*-===//
//
// Exact decoding and round-to-nearest-even encoding (with saturation) for
// every ScalarType: integers of 1..8 bits, small floats eXmY in the Finite,
// FN (e4m3fn) and IEEE (e5m2) flavours, ue8m0, f16, bf16 and f32. Codes are
// the raw bit patterns, right-aligned in a uint32_t.
//
//===----------------------------------------------------------------------===//

#ifndef HUMMING_QUANT_CODEC_H
#define HUMMING_QUANT_CODEC_H

#include "Humming/Quant/DType.h"

#include <cstdint>

namespace humming {

/// The value of `code` in format `t`: exact for every format (a double holds
/// them all). NaN codes give NaN; IEEE infinities give +-inf.
double decode(const ScalarType &t, uint32_t code);

/// The code nearest to `v` in format `t`, ties to the even code; values
/// beyond the largest finite magnitude saturate to it (also +-inf). NaN
/// gives the format's NaN code, or 0 for formats without one.
/// Integers round half to even and clamp to their range. ue8m0 rounds to the
/// nearest power of two (ties to the even exponent); zero, negative and NaN
/// inputs give its NaN code (0xFF), as it has neither zero nor sign.
uint32_t encode(const ScalarType &t, double v);

/// Largest finite value of a float format, or the largest code value of an
/// integer format.
double maxValue(const ScalarType &t);
/// Smallest value of an integer format (0 or -2^(b-1)); -maxValue for floats.
double minValue(const ScalarType &t);
/// Largest magnitude a symmetric code of `t` reaches before scaling: the
/// format's largest value for floats, 2^(b-1) - 1 for integers (1 for one
/// bit). Symmetric scales are amax / this (humming::quantizeWeights and the
/// weight-quantization kernel alike).
double symmetricMax(const ScalarType &t);

/// Whether `code` is a NaN or infinity in format `t`.
bool isNonFinite(const ScalarType &t, uint32_t code);

/// Number of codes of a format of at most 16 bits (2^bits).
inline uint32_t codeCount(const ScalarType &t) { return 1u << t.bits; }

} // namespace humming

#endif // HUMMING_QUANT_CODEC_H
