//===- FuzzQuantConfig.cpp - libFuzzer target: quantization configs -----===//
//
// Any input as a config.json, or, when it has a "quantization" member, as an
// hf_quant_config.json beside an empty config.json. A config that reads is
// asked about modules of every kind a model has.
//
//===----------------------------------------------------------------------===//

#include "Humming/Quant/Adapters.h"

using namespace humming;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  Result<Json> j =
      parseJson(std::string_view(reinterpret_cast<const char *>(data), size));
  if (!j)
    return 0;
  bool hf = j->get("quantization") != nullptr;
  Json empty = Json::object();
  Result<QuantConfig> q = hf ? QuantConfig::fromJson(empty, &*j, "F")
                             : QuantConfig::fromJson(*j, nullptr, "F");
  if (!q)
    return 0;
  for (const char *module :
       {"model.layers.0.mlp.down_proj", "model.layers.1.self_attn.q_proj",
        "model.layers.0.mlp.experts.3.up_proj", "lm_head",
        "model.layers.10.mlp.gate_up_proj", "visual.blocks.0.attn.qkv", ""}) {
    Result<std::optional<ModuleQuantization>> m = q->forModule(module);
    if (m && *m)
      (void)(*m)->describe();
  }
  return 0;
}
