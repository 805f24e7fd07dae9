//===- Formats.h - Every small format, for table-driven tests ---*- C++ -*-===//

#ifndef HUMMING_UNITTESTS_QUANT_FORMATS_H
#define HUMMING_UNITTESTS_QUANT_FORMATS_H

#include "Humming/Quant/DType.h"

#include <string>
#include <vector>

namespace humming::test {

/// Every weight format: integers of 1..8 bits (both signs) and every signed
/// float eXmY of at most 8 bits (28 of them).
inline std::vector<ScalarType> allWeightFormats() {
  std::vector<ScalarType> out;
  for (unsigned b = 1; b <= 8; ++b) {
    out.push_back(ScalarType::uint(b));
    out.push_back(ScalarType::sint(b));
  }
  for (unsigned e = 1; e <= 7; ++e)
    for (unsigned m = 0; 1 + e + m <= 8; ++m)
      out.push_back(*ScalarType::parse("e" + std::to_string(e) + "m" +
                                       std::to_string(m)));
  return out;
}

} // namespace humming::test

#endif // HUMMING_UNITTESTS_QUANT_FORMATS_H
