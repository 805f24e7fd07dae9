//===- Codec.cpp - Encode and decode every scalar format ------------------===//

#include "Humming/Quant/Codec.h"

#include <cassert>
#include <cmath>
#include <limits>

namespace humming {

namespace {
/// Field layout of a sign/exponent/mantissa float.
struct FloatFields {
  unsigned e, m;
  int bias;
  bool hasSign;
  uint32_t expMask() const { return (1u << e) - 1; }
  uint32_t mantMask() const { return (1u << m) - 1; }
};

FloatFields fieldsOf(const ScalarType &t) {
  return {t.exponentBits, t.mantissaBits, t.bias(), t.isSigned};
}

/// Largest finite code's magnitude bits (exponent field, mantissa field).
void maxFiniteFields(const ScalarType &t, uint32_t &expField,
                     uint32_t &mantField) {
  FloatFields f = fieldsOf(t);
  switch (t.flavor) {
  case FloatFlavor::IEEE:
    expField = f.expMask() - 1;
    mantField = f.mantMask();
    return;
  case FloatFlavor::FN:
    expField = f.expMask();
    mantField = f.mantMask() - 1;
    return;
  case FloatFlavor::Finite:
    expField = f.expMask();
    mantField = f.mantMask();
    return;
  case FloatFlavor::E8M0:
    expField = 0xFE;
    mantField = 0;
    return;
  }
}

double decodeFields(const FloatFields &f, uint32_t expField,
                    uint32_t mantField) {
  if (expField == 0) // subnormal: m * 2^(1 - bias - M)
    return std::ldexp(double(mantField), 1 - f.bias - int(f.m));
  return std::ldexp(double((1u << f.m) | mantField),
                    int(expField) - f.bias - int(f.m));
}

uint32_t nanCode(const ScalarType &t) {
  FloatFields f = fieldsOf(t);
  switch (t.flavor) {
  case FloatFlavor::IEEE: // quiet NaN: all-ones exponent, top mantissa bit
    return (f.expMask() << f.m) | (1u << (f.m - 1));
  case FloatFlavor::FN:
    return (f.expMask() << f.m) | f.mantMask();
  case FloatFlavor::E8M0:
    return 0xFF;
  case FloatFlavor::Finite:
    return 0;
  }
  return 0;
}

int64_t roundHalfEven(double v) { return int64_t(std::nearbyint(v)); }
} // namespace

double maxValue(const ScalarType &t) {
  if (t.isInt())
    return t.isSigned ? double((1 << (t.bits - 1)) - 1)
                      : double((1u << t.bits) - 1);
  if (t.isE8M0())
    return std::ldexp(1.0, 127);
  uint32_t e, m;
  maxFiniteFields(t, e, m);
  return decodeFields(fieldsOf(t), e, m);
}

double symmetricMax(const ScalarType &t) {
  if (t.isFloat())
    return maxValue(t);
  return t.bits == 1 ? 1.0 : double((1u << (t.bits - 1)) - 1);
}

double minValue(const ScalarType &t) {
  if (t.isInt())
    return t.isSigned ? -double(1 << (t.bits - 1)) : 0.0;
  if (t.isE8M0())
    return std::ldexp(1.0, -127);
  return -maxValue(t);
}

bool isNonFinite(const ScalarType &t, uint32_t code) {
  if (t.isInt())
    return false;
  FloatFields f = fieldsOf(t);
  uint32_t expField = (code >> f.m) & f.expMask();
  uint32_t mantField = code & f.mantMask();
  switch (t.flavor) {
  case FloatFlavor::IEEE:
    return expField == f.expMask();
  case FloatFlavor::FN:
    return expField == f.expMask() && mantField == f.mantMask();
  case FloatFlavor::E8M0:
    return code == 0xFF;
  case FloatFlavor::Finite:
    return false;
  }
  return false;
}

double decode(const ScalarType &t, uint32_t code) {
  code &= t.bits >= 32 ? 0xFFFFFFFFu : ((1u << t.bits) - 1);
  if (t.isInt()) {
    if (t.isSigned && (code >> (t.bits - 1)) & 1)
      return double(int64_t(code) - (int64_t(1) << t.bits));
    return double(code);
  }
  if (t.isE8M0())
    return code == 0xFF ? std::numeric_limits<double>::quiet_NaN()
                        : std::ldexp(1.0, int(code) - 127);
  FloatFields f = fieldsOf(t);
  bool negative = f.hasSign && ((code >> (f.e + f.m)) & 1);
  uint32_t expField = (code >> f.m) & f.expMask();
  uint32_t mantField = code & f.mantMask();
  double sign = negative ? -1.0 : 1.0;
  if (t.flavor == FloatFlavor::IEEE && expField == f.expMask())
    return mantField ? std::numeric_limits<double>::quiet_NaN()
                     : sign * std::numeric_limits<double>::infinity();
  if (t.flavor == FloatFlavor::FN && expField == f.expMask() &&
      mantField == f.mantMask())
    return std::numeric_limits<double>::quiet_NaN();
  return sign * decodeFields(f, expField, mantField);
}

uint32_t encode(const ScalarType &t, double v) {
  if (t.isInt()) {
    if (std::isnan(v))
      return 0;
    double lo = minValue(t), hi = maxValue(t);
    double r = v <= lo ? lo : v >= hi ? hi : double(roundHalfEven(v));
    if (r < lo)
      r = lo;
    if (r > hi)
      r = hi;
    return uint32_t(int64_t(r)) & ((1u << t.bits) - 1);
  }
  if (t.isE8M0()) {
    if (!(v > 0))
      return 0xFF;
    if (std::isinf(v))
      return 0xFE;
    int exp;
    double frac = std::frexp(v, &exp); // v = frac * 2^exp, frac in [0.5, 1)
    int e = exp - 1;                   // v = (2 frac) * 2^e, 2 frac in [1, 2)
    double mant = 2 * frac;
    // Nearest of 2^e and 2^(e+1): the midpoint is 1.5 * 2^e.
    if (mant > 1.5 || (mant == 1.5 && ((e + 127) & 1)))
      ++e;
    if (e < -127)
      e = -127;
    if (e > 127)
      e = 127;
    return uint32_t(e + 127);
  }

  FloatFields f = fieldsOf(t);
  uint32_t signBit = 1u << (f.e + f.m);
  if (std::isnan(v))
    return nanCode(t);
  bool negative = std::signbit(v);
  double a = std::fabs(v);
  uint32_t maxExp, maxMant;
  maxFiniteFields(t, maxExp, maxMant);
  uint32_t maxCode = (maxExp << f.m) | maxMant;
  double maxFinite = decodeFields(f, maxExp, maxMant);
  uint32_t magnitude;
  if (a >= maxFinite) {
    magnitude = maxCode; // saturate (also +-inf)
  } else if (a == 0) {
    magnitude = 0;
  } else {
    int exp;
    std::frexp(a, &exp);
    int e = exp - 1;       // a in [2^e, 2^(e+1))
    int eMin = 1 - f.bias; // smallest normal exponent
    if (e < eMin)
      e = eMin;
    // a / 2^(e - M) is exact (power-of-two scaling); round to an integer
    // significand, ties to even.
    double scaled = std::ldexp(a, int(f.m) - e);
    double r = std::nearbyint(scaled);
    // Without mantissa bits every significand is odd: a tie between 2^e and
    // 2^(e+1) goes to the even code, i.e. the even exponent field.
    if (f.m == 0 && scaled >= 1 && scaled - std::floor(scaled) == 0.5)
      r = ((e + f.bias) % 2 == 0) ? 1.0 : 2.0;
    if (r >= std::ldexp(1.0, int(f.m) + 1)) { // carried into the next binade
      r = std::ldexp(r, -1);
      ++e;
    }
    uint32_t sig = uint32_t(r);
    if (sig < (1u << f.m)) {
      magnitude = sig; // subnormal (or zero): exponent field 0
    } else {
      uint32_t expField = uint32_t(e + f.bias);
      magnitude = (expField << f.m) | (sig & f.mantMask());
    }
    if (magnitude > maxCode || decodeFields(f, (magnitude >> f.m) & f.expMask(),
                                            magnitude & f.mantMask()) >
                                   maxFinite)
      magnitude = maxCode;
  }
  if (!f.hasSign)
    return magnitude;
  return negative ? (magnitude | signBit) : magnitude;
}

} // namespace humming
