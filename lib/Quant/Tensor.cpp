//===- Tensor.cpp - Host tensors with safetensors dtypes ------------------===//

#include "Humming/Quant/Tensor.h"
#include "Humming/Quant/Codec.h"

#include <cmath>

namespace humming {

namespace {
struct DTypeRow {
  DType dtype;
  const char *name;
  unsigned bits;
};
constexpr DTypeRow kDTypes[] = {
    {DType::BOOL, "BOOL", 8},       {DType::U8, "U8", 8},
    {DType::I8, "I8", 8},           {DType::U16, "U16", 16},
    {DType::I16, "I16", 16},        {DType::U32, "U32", 32},
    {DType::I32, "I32", 32},        {DType::U64, "U64", 64},
    {DType::I64, "I64", 64},        {DType::F16, "F16", 16},
    {DType::BF16, "BF16", 16},      {DType::F32, "F32", 32},
    {DType::F64, "F64", 64},        {DType::F8_E4M3, "F8_E4M3", 8},
    {DType::F8_E5M2, "F8_E5M2", 8}, {DType::F8_E8M0, "F8_E8M0", 8},
    {DType::F8_E4M3FNUZ, "F8_E4M3FNUZ", 8},
    {DType::F8_E5M2FNUZ, "F8_E5M2FNUZ", 8},
    {DType::F4, "F4", 4},           {DType::F6_E2M3, "F6_E2M3", 6},
    {DType::F6_E3M2, "F6_E3M2", 6},
};

uint64_t readLE(const uint8_t *p, unsigned bytes) {
  uint64_t v = 0;
  for (unsigned i = 0; i < bytes; ++i)
    v |= uint64_t(p[i]) << (8 * i);
  return v;
}

/// Bits [bit, bit + width) of a little-endian bit stream.
uint32_t readBits(const uint8_t *p, uint64_t bit, unsigned width) {
  uint32_t v = 0;
  for (unsigned i = 0; i < width; ++i) {
    uint64_t b = bit + i;
    v |= uint32_t((p[b / 8] >> (b % 8)) & 1) << i;
  }
  return v;
}
} // namespace

const char *dtypeName(DType d) {
  for (const DTypeRow &r : kDTypes)
    if (r.dtype == d)
      return r.name;
  return "?";
}

std::optional<DType> parseDType(std::string_view name) {
  for (const DTypeRow &r : kDTypes)
    if (name == r.name)
      return r.dtype;
  return std::nullopt;
}

unsigned dtypeBits(DType d) {
  for (const DTypeRow &r : kDTypes)
    if (r.dtype == d)
      return r.bits;
  return 0;
}

std::optional<ScalarType> dtypeScalar(DType d) {
  switch (d) {
  case DType::BOOL:
  case DType::U8:
    return ScalarType::uint(8);
  case DType::I8:
    return ScalarType::sint(8);
  case DType::F16:
    return ScalarType::f16();
  case DType::BF16:
    return ScalarType::bf16();
  case DType::F32:
    return ScalarType::f32();
  case DType::F8_E4M3:
    return ScalarType::e4m3();
  case DType::F8_E5M2:
    return ScalarType::e5m2();
  case DType::F8_E8M0:
    return ScalarType::ue8m0();
  case DType::F4:
    return ScalarType::e2m1();
  case DType::F6_E2M3:
    return ScalarType::e2m3();
  case DType::F6_E3M2:
    return ScalarType::e3m2();
  default:
    return std::nullopt;
  }
}

std::optional<DType> storageFor(const ScalarType &t) {
  if (t == ScalarType::f16())
    return DType::F16;
  if (t == ScalarType::bf16())
    return DType::BF16;
  if (t == ScalarType::f32())
    return DType::F32;
  if (t == ScalarType::e4m3())
    return DType::F8_E4M3;
  if (t == ScalarType::e5m2())
    return DType::F8_E5M2;
  if (t == ScalarType::ue8m0())
    return DType::F8_E8M0;
  return std::nullopt;
}

int64_t numElements(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

size_t storageBytes(DType d, int64_t numel) {
  return size_t((uint64_t(numel) * dtypeBits(d) + 7) / 8);
}

double TensorView::at(int64_t i) const {
  unsigned bits = dtypeBits(dtype);
  switch (dtype) {
  case DType::F32: {
    uint32_t u = uint32_t(readLE(data + 4 * i, 4));
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  }
  case DType::F64: {
    uint64_t u = readLE(data + 8 * i, 8);
    double f;
    std::memcpy(&f, &u, 8);
    return f;
  }
  case DType::F16:
  case DType::BF16:
  case DType::F8_E4M3:
  case DType::F8_E5M2:
  case DType::F8_E8M0:
  case DType::F4:
  case DType::F6_E2M3:
  case DType::F6_E3M2: {
    uint32_t code = bits % 8 ? readBits(data, uint64_t(i) * bits, bits)
                             : uint32_t(readLE(data + i * (bits / 8), bits / 8));
    return decode(*dtypeScalar(dtype), code);
  }
  default:
    return double(intAt(i));
  }
}

int64_t TensorView::intAt(int64_t i) const {
  switch (dtype) {
  case DType::BOOL:
  case DType::U8:
    return data[i];
  case DType::I8:
    return int8_t(data[i]);
  case DType::U16:
    return int64_t(readLE(data + 2 * i, 2));
  case DType::I16:
    return int16_t(readLE(data + 2 * i, 2));
  case DType::U32:
    return int64_t(readLE(data + 4 * i, 4));
  case DType::I32:
    return int32_t(readLE(data + 4 * i, 4));
  case DType::U64:
  case DType::I64:
    return int64_t(readLE(data + 8 * i, 8));
  default:
    return int64_t(at(i));
  }
}

void Tensor::set(int64_t i, double v) {
  auto writeLE = [&](uint64_t u, unsigned bytes) {
    for (unsigned b = 0; b < bytes; ++b)
      data[size_t(i) * bytes + b] = uint8_t(u >> (8 * b));
  };
  switch (dtype) {
  case DType::F32: {
    float f = float(v);
    uint32_t u;
    std::memcpy(&u, &f, 4);
    writeLE(u, 4);
    return;
  }
  case DType::F64: {
    uint64_t u;
    std::memcpy(&u, &v, 8);
    writeLE(u, 8);
    return;
  }
  case DType::F16:
  case DType::BF16:
    writeLE(encode(*dtypeScalar(dtype), v), 2);
    return;
  case DType::F8_E4M3:
  case DType::F8_E5M2:
  case DType::F8_E8M0:
    writeLE(encode(*dtypeScalar(dtype), v), 1);
    return;
  case DType::BOOL:
  case DType::U8:
  case DType::I8:
    writeLE(uint64_t(int64_t(std::nearbyint(v))), 1);
    return;
  case DType::U16:
  case DType::I16:
    writeLE(uint64_t(int64_t(std::nearbyint(v))), 2);
    return;
  case DType::U32:
  case DType::I32:
    writeLE(uint64_t(int64_t(std::nearbyint(v))), 4);
    return;
  case DType::U64:
  case DType::I64:
    writeLE(uint64_t(int64_t(std::nearbyint(v))), 8);
    return;
  default:
    return; // sub-byte dtypes are written through Pack.h
  }
}

} // namespace humming
