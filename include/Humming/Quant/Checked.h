//===- Checked.h - Overflow-checked size arithmetic -------------*- C++ -*-===//
//
// Sizes computed from untrusted input (checkpoint shapes and values, config
// fields, memref types in IR) go through these: each returns std::nullopt
// instead of overflowing int64 (undefined behaviour), so the caller can say
// which size is too large. kMaxSize bounds a logical dimension (N, K, a
// group count, an expert count): 2^40, past any layer, and small enough that
// a product of such a size with a bit width and a pack factor stays far
// inside int64.
//
//===----------------------------------------------------------------------===//

#ifndef HUMMING_QUANT_CHECKED_H
#define HUMMING_QUANT_CHECKED_H

#include <cstdint>
#include <optional>

namespace humming {

inline constexpr int64_t kMaxSize = int64_t(1) << 40;

/// a * b, or nullopt when it does not fit int64.
inline std::optional<int64_t> checkedMul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r))
    return std::nullopt;
  return r;
}
/// The product of every factor, or nullopt when a partial product overflows.
template <typename... Ts>
std::optional<int64_t> checkedMul(int64_t a, int64_t b, int64_t c, Ts... rest) {
  std::optional<int64_t> ab = checkedMul(a, b);
  if (!ab)
    return std::nullopt;
  return checkedMul(*ab, c, rest...);
}
/// a + b, or nullopt when it does not fit int64.
inline std::optional<int64_t> checkedAdd(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r))
    return std::nullopt;
  return r;
}
/// ceil(a / b) for a >= 0 and b > 0 (nullopt otherwise), without forming
/// a + b - 1.
inline std::optional<int64_t> checkedCeilDiv(int64_t a, int64_t b) {
  if (a < 0 || b <= 0)
    return std::nullopt;
  return a / b + (a % b != 0);
}
/// Whether `v` is a size a layer can have: 1 .. kMaxSize.
inline bool isLayerSize(int64_t v) { return v >= 1 && v <= kMaxSize; }

} // namespace humming

#endif // HUMMING_QUANT_CHECKED_H
