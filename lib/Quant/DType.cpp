//===- DType.cpp - Scalar element types -----------------------------------===//

#include "Humming/Quant/DType.h"

#include <algorithm>
#include <cctype>

namespace humming {

std::string ScalarType::str() const {
  if (isInt())
    return (isSigned ? "si" : "ui") + std::to_string(bits);
  if (*this == f16())
    return "f16";
  if (*this == bf16())
    return "bf16";
  if (*this == f32())
    return "f32";
  if (*this == e4m3())
    return "f8E4M3FN";
  if (*this == e5m2())
    return "f8E5M2";
  if (*this == e2m1())
    return "f4E2M1FN";
  if (*this == e2m3())
    return "f6E2M3FN";
  if (*this == e3m2())
    return "f6E3M2FN";
  if (*this == ue8m0())
    return "f8E8M0FNU";
  return "!humming.float<e" + std::to_string(exponentBits) + "m" +
         std::to_string(mantissaBits) + ">";
}

static std::optional<unsigned> parseUnsigned(std::string_view s) {
  if (s.empty() || s.size() > 3)
    return std::nullopt;
  unsigned v = 0;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c)))
      return std::nullopt;
    v = v * 10 + unsigned(c - '0');
  }
  return v;
}

/// Parses "eXmY" (generic signed float, Finite flavour unless it names e4m3
/// or e5m2, which always have the OCP FN / IEEE flavours).
static std::optional<ScalarType> parseEM(std::string_view s) {
  if (s.size() < 4 || s[0] != 'e')
    return std::nullopt;
  size_t m = s.find('m');
  if (m == std::string_view::npos)
    return std::nullopt;
  auto e = parseUnsigned(s.substr(1, m - 1));
  auto mm = parseUnsigned(s.substr(m + 1));
  if (!e || !mm || *e < 1 || 1 + *e + *mm > 8)
    return std::nullopt;
  if (*e == 4 && *mm == 3)
    return ScalarType::e4m3();
  if (*e == 5 && *mm == 2)
    return ScalarType::e5m2();
  return ScalarType::floatEM(*e, *mm);
}

std::optional<ScalarType> ScalarType::parse(std::string_view name) {
  std::string s(name);
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  // Exact MLIR spellings first (lower-cased).
  if (s == "f16" || s == "fp16" || s == "float16" || s == "half")
    return f16();
  if (s == "bf16" || s == "bfloat16")
    return bf16();
  if (s == "f32" || s == "fp32" || s == "float32" || s == "float")
    return f32();
  if (s == "f8e4m3fn" || s == "float8_e4m3fn" || s == "fp8_e4m3" ||
      s == "float8e4m3" || s == "e4m3")
    return e4m3();
  if (s == "f8e5m2" || s == "float8_e5m2" || s == "fp8_e5m2" ||
      s == "float8e5m2" || s == "e5m2")
    return e5m2();
  if (s == "f4e2m1fn" || s == "float4_e2m1fn" || s == "float4e2m1" ||
      s == "fp4" || s == "e2m1")
    return e2m1();
  if (s == "f6e2m3fn" || s == "float6e2m3")
    return e2m3();
  if (s == "f6e3m2fn" || s == "float6e3m2")
    return e3m2();
  if (s == "f8e8m0fnu" || s == "float8_e8m0fnu" || s == "e8m0" ||
      s == "ue8m0" || s == "float8e8m0")
    return ue8m0();
  auto intOf = [&](std::string_view prefix, bool isSigned)
      -> std::optional<ScalarType> {
    if (s.rfind(prefix, 0) != 0)
      return std::nullopt;
    auto b = parseUnsigned(std::string_view(s).substr(prefix.size()));
    if (!b || *b < 1 || *b > 8)
      return std::nullopt;
    return isSigned ? sint(*b) : uint(*b);
  };
  for (auto [prefix, isSigned] :
       {std::pair<const char *, bool>{"uint", false}, {"ui", false},
        {"u", false}, {"int", true}, {"si", true}, {"i", true}})
    if (auto t = intOf(prefix, isSigned))
      return t;
  // "!humming.float<e3m3>", "float6e3m2", "e3m3".
  std::string_view v(s);
  if (v.rfind("!humming.float<", 0) == 0 && v.back() == '>')
    return parseEM(v.substr(15, v.size() - 16));
  if (v.rfind("float", 0) == 0) {
    size_t e = v.find('e');
    if (e != std::string_view::npos) {
      auto t = parseEM(v.substr(e));
      auto total = parseUnsigned(v.substr(5, e - 5));
      if (t && total && *total == t->bits)
        return t;
      return std::nullopt;
    }
  }
  return parseEM(v);
}

} // namespace humming
