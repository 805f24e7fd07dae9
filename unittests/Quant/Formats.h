//===- Formats.h - Every small format, for table-driven tests ---*- C++ -*-===//

#ifndef HUMMING_UNITTESTS_QUANT_FORMATS_H
#define HUMMING_UNITTESTS_QUANT_FORMATS_H

#include "Humming/Quant/Schema.h"

#include <string>
#include <vector>

namespace humming::test {

/// Every weight format (the schema's own list).
inline std::vector<ScalarType> allWeightFormats() { return allWeightTypes(); }

} // namespace humming::test

#endif // HUMMING_UNITTESTS_QUANT_FORMATS_H
