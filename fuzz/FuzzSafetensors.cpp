//===- FuzzSafetensors.cpp - libFuzzer target: safetensors files ----------===//
//
// Any input as the bytes of a safetensors file. What parses must be readable
// in full: every element of every tensor, within the buffer (ASan checks).
//
//===----------------------------------------------------------------------===//

#include "Humming/Quant/Safetensors.h"

using namespace humming;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  Result<SafetensorsFile> f =
      SafetensorsFile::fromBytes(std::vector<uint8_t>(data, data + size), "f");
  if (!f)
    return 0;
  volatile double sink = 0;
  for (const SafetensorsEntry &e : f->entries()) {
    Result<TensorView> v = f->tensor(e.name);
    if (!v)
      __builtin_trap(); // an entry the file lists must be found
    for (int64_t k = 0; k < v->numel(); ++k)
      sink = sink + v->at(k);
  }
  (void)sink;
  return 0;
}
