//===- FuzzCheckpoint.cpp - libFuzzer target: checkpoints through the adapters
//
// An input is a checkpoint in memory: config.json, "\n---\n",
// hf_quant_config.json (empty: none), "\n---\n", the bytes of one
// safetensors file (fuzz/make-seeds.py writes such inputs from real
// checkpoints). Every quantized module is loaded through its adapter; a
// layer that loads is checked against its schema, dequantized and, where the
// prepared layout holds it, prepared, as humming::Layer would.
//
//===----------------------------------------------------------------------===//

#include "Humming/Quant/Adapters.h"
#include "Humming/Quant/Checked.h"
#include "Humming/Quant/PreparedLayout.h"
#include "Humming/Quant/Quantize.h"

#include <cstdio>

using namespace humming;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view all(reinterpret_cast<const char *>(data), size);
  const std::string_view sep = "\n---\n";
  size_t a = all.find(sep);
  if (a == std::string_view::npos)
    return 0;
  size_t b = all.find(sep, a + sep.size());
  if (b == std::string_view::npos)
    return 0;
  Result<Json> config = parseJson(all.substr(0, a));
  if (!config)
    return 0;
  std::string_view hfText = all.substr(a + sep.size(), b - a - sep.size());
  std::optional<Json> hf;
  if (!hfText.empty()) {
    Result<Json> h = parseJson(hfText);
    if (!h)
      return 0;
    hf = h.take();
  }
  const uint8_t *st = data + b + sep.size();
  Result<SafetensorsFile> file = SafetensorsFile::fromBytes(
      std::vector<uint8_t>(st, data + size), "model.safetensors");
  if (!file)
    return 0;
  Result<Checkpoint> ckpt = Checkpoint::fromParts(
      "ckpt", config.take(), hf ? &*hf : nullptr, {file.take()});
  if (!ckpt)
    return 0;
  Result<QuantConfig> q = QuantConfig::fromCheckpoint(*ckpt);
  if (!q)
    return 0;
  std::vector<std::string> modules = quantizedModules(*ckpt, *q);
  for (size_t i = 0; i < modules.size() && i < 4; ++i) {
    Result<LoadedLayer> l = loadLayer(*ckpt, *q, modules[i]);
    if (!l)
      continue;
    (void)l->bytes();
    const WeightSchema &w = l->weight;
    // The adapter's output must satisfy the schema it claims.
    if (Status s =
            checkQuantizedTensors(w, l->tensors, l->n, l->k, q->paramDType());
        !s) {
      std::fprintf(stderr, "%s: %s\n", modules[i].c_str(), s.error().c_str());
      __builtin_trap();
    }
    int64_t n = l->n + w.padN, k = l->k + w.padK;
    std::optional<int64_t> size = checkedMul(n, k, w.experts ? w.experts : 1);
    if (!size || *size > (int64_t(1) << 20))
      continue; // the fuzzer's inputs are small; keep its time on parsing
    (void)dequantizeWeights(w, l->tensors, l->n, l->k);
    InputSchema in{ScalarType::f16(), ActScaling::None, 0};
    if (!layout::supports(w, in, n, k))
      (void)layout::prepareMmaSync(w, in, l->tensors, n, k, /*threads=*/1);
  }
  return 0;
}
