//===- CodecTest.cpp - Every code of every format -------------------------===//
//
// Decoding is checked against an independent definition of each format, and
// encoding against a brute-force nearest search over all of its values
// (ties to the even code), for every format of at most 16 bits.
//
//===----------------------------------------------------------------------===//

#include "Humming/Quant/Codec.h"
#include "Formats.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

using namespace humming;

namespace {
/// The value of `code` from the format's definition, written independently:
/// (-1)^s * 2^(e - bias) * (1 + m / 2^M), subnormals 2^(1 - bias) * m / 2^M.
double reference(const ScalarType &t, uint32_t code) {
  if (t.isInt()) {
    if (!t.isSigned)
      return code;
    int64_t half = int64_t(1) << (t.bits - 1);
    return int64_t(code) >= half ? int64_t(code) - 2 * half : int64_t(code);
  }
  if (t.flavor == FloatFlavor::E8M0)
    return code == 255 ? NAN : std::pow(2.0, int(code) - 127);
  unsigned E = t.exponentBits, M = t.mantissaBits;
  int bias = (1 << (E - 1)) - 1;
  unsigned s = (code >> (E + M)) & 1, e = (code >> M) & ((1u << E) - 1),
           m = code & ((1u << M) - 1);
  bool topExp = e == (1u << E) - 1;
  if (t.flavor == FloatFlavor::IEEE && topExp)
    return m ? NAN : (s ? -INFINITY : INFINITY);
  if (t.flavor == FloatFlavor::FN && topExp && m == (1u << M) - 1)
    return NAN;
  double frac = e ? 1.0 + m / std::pow(2.0, M) : m / std::pow(2.0, M);
  double mag = frac * std::pow(2.0, (e ? int(e) : 1) - bias);
  return s ? -mag : mag;
}

std::vector<ScalarType> allSmallFormats() {
  std::vector<ScalarType> out = test::allWeightFormats();
  out.push_back(ScalarType::ue8m0());
  out.push_back(ScalarType::f16());
  out.push_back(ScalarType::bf16());
  return out;
}

/// Every finite (code, value), sorted by value; -0 is dropped in favour of +0.
std::vector<std::pair<double, uint32_t>> finiteValues(const ScalarType &t) {
  std::vector<std::pair<double, uint32_t>> v;
  for (uint32_t c = 0; c < codeCount(t); ++c) {
    double x = reference(t, c);
    if (!std::isfinite(x) || (x == 0 && std::signbit(x)))
      continue;
    v.push_back({x, c});
  }
  std::sort(v.begin(), v.end());
  return v;
}

/// Brute-force nearest code, ties to the even code, saturating.
uint32_t nearest(const std::vector<std::pair<double, uint32_t>> &values,
                 double x) {
  auto it = std::lower_bound(values.begin(), values.end(),
                             std::make_pair(x, 0u));
  if (it == values.begin())
    return it->second;
  if (it == values.end())
    return values.back().second;
  auto lo = *(it - 1), hi = *it;
  if (hi.first == x)
    return hi.second;
  double dlo = x - lo.first, dhi = hi.first - x;
  if (dlo < dhi)
    return lo.second;
  if (dhi < dlo)
    return hi.second;
  return (lo.second & 1) == 0 ? lo.second : hi.second;
}
} // namespace

TEST(Codec, DecodeEveryCodeOfEveryFormat) {
  int formats = 0;
  for (const ScalarType &t : allSmallFormats()) {
    for (uint32_t c = 0; c < codeCount(t); ++c) {
      double got = decode(t, c), want = reference(t, c);
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(got)) << t.str() << " code " << c;
        EXPECT_TRUE(isNonFinite(t, c)) << t.str() << " code " << c;
      } else {
        EXPECT_EQ(got, want) << t.str() << " code " << c;
      }
    }
    ++formats;
  }
  EXPECT_EQ(formats, 16 + 28 + 3);
}

TEST(Codec, EncodeRoundTripsEveryFiniteCode) {
  for (const ScalarType &t : allSmallFormats())
    for (uint32_t c = 0; c < codeCount(t); ++c) {
      double v = reference(t, c);
      if (!std::isfinite(v))
        continue;
      EXPECT_EQ(encode(t, v), c) << t.str() << " value " << v;
    }
}

TEST(Codec, EncodeMatchesBruteForceNearestAtMidpointsAndBetween) {
  for (const ScalarType &t : allSmallFormats()) {
    if (t.isE8M0())
      continue; // nearest in the log domain is not its rule; see below
    auto values = finiteValues(t);
    for (size_t i = 0; i + 1 < values.size(); ++i) {
      double lo = values[i].first, hi = values[i + 1].first;
      for (double x : {lo + (hi - lo) / 2, lo + (hi - lo) / 4,
                       hi - (hi - lo) / 4}) {
        uint32_t got = encode(t, x), want = nearest(values, x);
        if (x == 0)
          continue;
        // +-0 both encode zero; compare values for zero results.
        if (reference(t, want) == 0) {
          EXPECT_EQ(decode(t, got), 0.0) << t.str() << " x " << x;
          continue;
        }
        EXPECT_EQ(got, want) << t.str() << " x " << x;
      }
    }
  }
}

TEST(Codec, RandomValuesEncodeToTheNearestCode) {
  std::mt19937_64 rng(7);
  for (const ScalarType &t : allSmallFormats()) {
    if (t.isE8M0())
      continue;
    auto values = finiteValues(t);
    double span = values.back().first * 1.25;
    std::uniform_real_distribution<double> dist(-span, span);
    for (int i = 0; i < 2000; ++i) {
      double x = dist(rng);
      uint32_t got = encode(t, x), want = nearest(values, x);
      if (reference(t, want) == 0)
        EXPECT_EQ(decode(t, got), 0.0) << t.str() << " x " << x;
      else
        EXPECT_EQ(got, want) << t.str() << " x " << x;
    }
  }
}

TEST(Codec, Saturation) {
  ScalarType e4m3 = ScalarType::e4m3();
  EXPECT_EQ(maxValue(e4m3), 448.0);
  EXPECT_EQ(decode(e4m3, encode(e4m3, 1e9)), 448.0);
  EXPECT_EQ(decode(e4m3, encode(e4m3, -INFINITY)), -448.0);
  EXPECT_EQ(decode(e4m3, encode(e4m3, 464.0)), 448.0); // tie, even code
  EXPECT_EQ(maxValue(ScalarType::e5m2()), 57344.0);
  EXPECT_EQ(maxValue(ScalarType::e2m1()), 6.0);
  EXPECT_EQ(maxValue(ScalarType::e2m3()), 7.5);
  EXPECT_EQ(maxValue(ScalarType::e3m2()), 28.0);
  EXPECT_EQ(maxValue(ScalarType::f16()), 65504.0);
  EXPECT_EQ(decode(ScalarType::f16(), encode(ScalarType::f16(), 1e6)), 65504.0);
  EXPECT_TRUE(std::isnan(decode(e4m3, encode(e4m3, NAN))));
  EXPECT_EQ(encode(ScalarType::e2m1(), NAN), 0u); // no NaN code
}

TEST(Codec, Integers) {
  ScalarType u4 = ScalarType::uint(4), s4 = ScalarType::sint(4);
  EXPECT_EQ(encode(u4, 2.5), 2u);  // half to even
  EXPECT_EQ(encode(u4, 3.5), 4u);
  EXPECT_EQ(encode(u4, -3.0), 0u); // clamp
  EXPECT_EQ(encode(u4, 99.0), 15u);
  EXPECT_EQ(encode(s4, -9.0), 8u); // -8 is code 0b1000
  EXPECT_EQ(decode(s4, 8), -8.0);
  EXPECT_EQ(encode(s4, 7.6), 7u);
}

TEST(Codec, E8M0RoundsToTheNearestPowerOfTwo) {
  ScalarType e8 = ScalarType::ue8m0();
  EXPECT_EQ(decode(e8, encode(e8, 1.0)), 1.0);
  EXPECT_EQ(decode(e8, encode(e8, 3.0)), 2.0);   // tie: even exponent code
  EXPECT_EQ(decode(e8, encode(e8, 6.0)), 8.0);   // tie: 2^3 has code 130
  EXPECT_EQ(decode(e8, encode(e8, 3.1)), 4.0);
  EXPECT_EQ(decode(e8, encode(e8, 0.7)), 0.5);
  EXPECT_EQ(encode(e8, 0.0), 0xFFu);
  EXPECT_EQ(encode(e8, -1.0), 0xFFu);
  EXPECT_EQ(encode(e8, 1e300), 0xFEu);
  EXPECT_EQ(encode(e8, 1e-300), 0u);
}
