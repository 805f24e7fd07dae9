//===- DType.h - Scalar element types of quantized data ---------*- C++ -*-===//
//
// A plain description of every scalar type Humming deals with: integers of
// 1..8 bits, small floats eXmY (with the FN / IEEE / E8M0 flavours), the
// 16/32-bit floats. Part of the host numerics layer: no MLIR or LLVM
// dependency, so the runtime, the Python bindings and the dialect share it.
//
//===----------------------------------------------------------------------===//

#ifndef HUMMING_QUANT_DTYPE_H
#define HUMMING_QUANT_DTYPE_H

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace humming {

enum class ScalarKind : uint8_t { Int, Float };

/// How a float format spends its top codes.
enum class FloatFlavor : uint8_t {
  /// IEEE-like bias 2^(E-1)-1, subnormals, no inf and no NaN (e2m1, e3m3...).
  Finite,
  /// OCP e4m3fn: like Finite but the all-ones code (S.1111.111) is NaN.
  FN,
  /// IEEE 754: top exponent reserved for inf/NaN (e5m2, f16, bf16, f32).
  IEEE,
  /// OCP e8m0 (ue8m0): unsigned power of two 2^(code-127), 0xFF is NaN.
  E8M0,
};

/// A scalar element type. Integers are signed (two's complement) or unsigned
/// codes; floats are signed except e8m0.
struct ScalarType {
  ScalarKind kind = ScalarKind::Int;
  unsigned bits = 0;
  bool isSigned = false;
  unsigned exponentBits = 0; ///< floats only
  unsigned mantissaBits = 0; ///< floats only (explicit mantissa bits)
  FloatFlavor flavor = FloatFlavor::Finite;

  static ScalarType uint(unsigned bits) {
    return {ScalarKind::Int, bits, false, 0, 0, FloatFlavor::Finite};
  }
  static ScalarType sint(unsigned bits) {
    return {ScalarKind::Int, bits, true, 0, 0, FloatFlavor::Finite};
  }
  /// A signed float with 1 sign, `e` exponent and `m` mantissa bits.
  static ScalarType floatEM(unsigned e, unsigned m,
                            FloatFlavor flavor = FloatFlavor::Finite) {
    return {ScalarKind::Float, 1 + e + m, true, e, m, flavor};
  }
  static ScalarType f16() { return floatEM(5, 10, FloatFlavor::IEEE); }
  static ScalarType bf16() { return floatEM(8, 7, FloatFlavor::IEEE); }
  static ScalarType f32() { return floatEM(8, 23, FloatFlavor::IEEE); }
  static ScalarType e4m3() { return floatEM(4, 3, FloatFlavor::FN); }
  static ScalarType e5m2() { return floatEM(5, 2, FloatFlavor::IEEE); }
  static ScalarType e2m1() { return floatEM(2, 1); }
  static ScalarType e2m3() { return floatEM(2, 3); }
  static ScalarType e3m2() { return floatEM(3, 2); }
  static ScalarType ue8m0() {
    return {ScalarKind::Float, 8, false, 8, 0, FloatFlavor::E8M0};
  }

  bool isInt() const { return kind == ScalarKind::Int; }
  bool isFloat() const { return kind == ScalarKind::Float; }
  bool isE8M0() const { return isFloat() && flavor == FloatFlavor::E8M0; }
  bool is16BitFloat() const {
    return *this == f16() || *this == bf16();
  }
  /// Exponent bias (floats only).
  int bias() const {
    return flavor == FloatFlavor::E8M0 ? 127 : (1 << (exponentBits - 1)) - 1;
  }

  /// The MLIR spelling of this type: "ui4", "si8", "f16", "bf16",
  /// "f8E4M3FN", "f4E2M1FN", "f8E8M0FNU", or "!humming.float<e3m3>".
  std::string str() const;

  /// Parses the spellings produced by str() plus the short names used in
  /// checkpoint configs ("uint4", "int8", "float8_e4m3fn", "e2m1", "fp16",
  /// "float16", "bfloat16", "e3m3"...). Returns nullopt for anything else.
  static std::optional<ScalarType> parse(std::string_view name);

  friend bool operator==(const ScalarType &a, const ScalarType &b) {
    return a.kind == b.kind && a.bits == b.bits && a.isSigned == b.isSigned &&
           a.exponentBits == b.exponentBits &&
           a.mantissaBits == b.mantissaBits && a.flavor == b.flavor;
  }
  friend bool operator!=(const ScalarType &a, const ScalarType &b) {
    return !(a == b);
  }
};

} // namespace humming

#endif // HUMMING_QUANT_DTYPE_H
