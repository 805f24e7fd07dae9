//===- FuzzJson.cpp - libFuzzer target: the JSON reader -------------------===//
//
// Any input: parse. A document that parses must dump to text that parses
// again to the same dump (the writer and the reader agree, and the writer
// only writes valid UTF-8 JSON).
//
//===----------------------------------------------------------------------===//

#include "Humming/Quant/Json.h"

#include <cstdio>
#include <cstdlib>

using namespace humming;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view text(reinterpret_cast<const char *>(data), size);
  Result<Json> j = parseJson(text);
  if (!j)
    return 0;
  std::string compact = j->dump(), pretty = j->dump(2);
  for (const std::string *s : {&compact, &pretty}) {
    Result<Json> again = parseJson(*s);
    if (!again || again->dump() != compact) {
      std::fprintf(stderr, "round trip failed: %s\n",
                   again ? again->dump().c_str() : again.error().c_str());
      std::abort();
    }
  }
  return 0;
}
