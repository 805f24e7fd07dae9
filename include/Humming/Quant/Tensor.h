//===- Tensor.h - Host tensors with safetensors dtypes ----------*- C++ -*-===//
//
// A minimal owned tensor (dtype, shape, bytes) and a non-owning view, with the
// storage dtypes of safetensors. Quantized data moves between the adapters,
// the quantizer, the repacker and the runtime in these.
//
//===----------------------------------------------------------------------===//

#ifndef HUMMING_QUANT_TENSOR_H
#define HUMMING_QUANT_TENSOR_H

#include "Humming/Quant/DType.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace humming {

/// Storage dtypes (safetensors' names).
enum class DType : uint8_t {
  BOOL, U8, I8, U16, I16, U32, I32, U64, I64,
  F16, BF16, F32, F64,
  F8_E4M3, F8_E5M2, F8_E8M0, F8_E4M3FNUZ, F8_E5M2FNUZ,
  F4, F6_E2M3, F6_E3M2,
};

/// "F8_E4M3" ...
const char *dtypeName(DType d);
std::optional<DType> parseDType(std::string_view name);
/// Bits per element (F4 = 4, F6_* = 6).
unsigned dtypeBits(DType d);
/// The value format of a float/integer dtype (F8_E4M3 -> e4m3, I32 ->
/// nullopt as it is wider than any scalar format Humming codes ...).
std::optional<ScalarType> dtypeScalar(DType d);
/// The storage dtype that holds codes of `t` one per element (f16 -> F16,
/// e4m3 -> F8_E4M3, ue8m0 -> F8_E8M0, f32 -> F32); nullopt for sub-byte and
/// integer formats, which are packed.
std::optional<DType> storageFor(const ScalarType &t);

int64_t numElements(const std::vector<int64_t> &shape);
/// Bytes of `numel` elements of `d`, rounded up to whole bytes.
size_t storageBytes(DType d, int64_t numel);

/// A non-owning view of tensor data.
struct TensorView {
  DType dtype = DType::U8;
  std::vector<int64_t> shape;
  const uint8_t *data = nullptr;
  size_t nbytes = 0;

  int64_t numel() const { return numElements(shape); }
  /// Element `i` as a double (integers and every float dtype; sub-byte
  /// dtypes are unpacked low bits first).
  double at(int64_t i) const;
  /// Element `i` of an integer dtype as int64.
  int64_t intAt(int64_t i) const;
};

/// An owned tensor.
struct Tensor {
  DType dtype = DType::U8;
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;

  Tensor() = default;
  Tensor(DType d, std::vector<int64_t> s)
      : dtype(d), shape(std::move(s)), data(storageBytes(d, numElements(shape))) {}
  int64_t numel() const { return numElements(shape); }
  TensorView view() const { return {dtype, shape, data.data(), data.size()}; }

  template <typename T> T *as() { return reinterpret_cast<T *>(data.data()); }
  template <typename T> const T *as() const {
    return reinterpret_cast<const T *>(data.data());
  }
  /// Stores the code of `v` (encoded for float dtypes, rounded and clamped
  /// for integers) at element `i`. Not for sub-byte dtypes.
  void set(int64_t i, double v);
  double at(int64_t i) const { return view().at(i); }
  int64_t intAt(int64_t i) const { return view().intAt(i); }
};


} // namespace humming

#endif // HUMMING_QUANT_TENSOR_H
