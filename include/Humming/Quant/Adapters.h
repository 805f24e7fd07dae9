//===- Adapters.h - Checkpoint formats to the canonical form ----*- C++ -*-===//
//
// The front door for real checkpoints: parse a model directory's
// quantization config (config.json `quantization_config`, ModelOpt's
// hf_quant_config.json), decide per module how it is quantized (honouring
// ignored/excluded modules and per-module overrides), and convert its tensors
// into Humming's canonical format with a #humming.weight_schema. See
// docs/Formats.md for every format, its tensors and the conventions assumed.
//
//===----------------------------------------------------------------------===//

#ifndef HUMMING_QUANT_ADAPTERS_H
#define HUMMING_QUANT_ADAPTERS_H

#include "Humming/Quant/Quantize.h"
#include "Humming/Quant/Safetensors.h"

#include <optional>
#include <string>
#include <vector>

namespace humming {

/// How one module is quantized, as the checkpoint says.
struct ModuleQuantization {
  /// gptq, awq, auto-round, compressed-tensors, fp8, modelopt, mxfp4, quark,
  /// bitnet.
  std::string method;
  /// The tensor layout within the method: gptq | gptq_v2 | awq |
  /// pack-quantized | int-quantized | float-quantized | nvfp4-pack-quantized |
  /// mxfp4-pack-quantized | FP8 | NVFP4 | MXFP8 | fp8_e4m3 | int8 | int4 |
  /// uint4 | fp4 | blocks (gpt-oss) | ...
  std::string variant;
  int bits = 0;
  /// K group of the weight scales; 0 = per channel.
  int64_t groupSize = 0;
  /// compressed-tensors / fp8 block scales.
  int64_t blockN = 0, blockK = 0;
  bool symmetric = true;
  bool actOrder = false;
  /// compressed-tensors strategy or quark qscheme (channel, group, block,
  /// tensor, tensor_group, per_tensor ...).
  std::string strategy;
  /// The activations the checkpoint asks for (before any fallback), and
  /// whether their scale is static (an input_scale tensor).
  InputSchema activation;
  bool staticActivationScale = false;

  /// "gptq_v2 4-bit group 128 asymmetric act-order".
  std::string describe() const;
};

class QuantConfig {
public:
  /// From a checkpoint directory's config.json / hf_quant_config.json.
  static Result<QuantConfig> fromCheckpoint(const Checkpoint &checkpoint);
  /// From parsed files; `where` names them in messages.
  static Result<QuantConfig> fromJson(const Json &config,
                                      const Json *hfQuantConfig,
                                      const std::string &where);

  /// The quantization method ("gptq" ...).
  const std::string &method() const { return method_; }
  /// The model's 16-bit type (torch_dtype), F16 or BF16.
  DType paramDType() const { return paramDType_; }

  /// How `module` ("model.layers.0.mlp.down_proj") is quantized, nullopt when
  /// the config leaves it unquantized, or an error for a config this module
  /// cannot be read with.
  Result<std::optional<ModuleQuantization>>
  forModule(const std::string &module) const;

private:
  /// fromJson's reader of one quant_method (QuantConfig.cpp).
  struct Parser;
  struct Rule {
    uint8_t kind = 0;    ///< how `pattern` matches (exact, substring, glob, regex)
    std::string pattern;
    bool exclude = false;
    ModuleQuantization quant;
  };
  std::string method_;
  std::string where_;
  DType paramDType_ = DType::BF16;
  /// Rules in priority order; the first match decides. A module no rule
  /// matches gets `default_` (if any).
  std::vector<Rule> rules_;
  std::optional<ModuleQuantization> default_;
};

/// A module converted to the canonical form.
struct LoadedLayer {
  std::string module;
  ModuleQuantization source;
  /// Canonical-format schema of `tensors`.
  WeightSchema weight;
  /// The activations the checkpoint asks for.
  InputSchema input;
  /// Logical sizes.
  int64_t n = 0, k = 0;
  QuantizedWeights tensors;
  /// Act-order: canonical column j holds the checkpoint's input column
  /// kPermutation[j]; activations must be gathered the same way. Empty when
  /// the order is the natural one.
  std::vector<int32_t> kPermutation;
  /// Lossy conversions and other facts worth telling.
  std::vector<std::string> notes;

  /// Bytes of the canonical tensors.
  size_t bytes() const;
};

/// The modules of `checkpoint` whose quantized weights are present and which
/// the config quantizes, sorted.
std::vector<std::string> quantizedModules(const Checkpoint &checkpoint,
                                          const QuantConfig &config);

/// Converts one module. Errors name the module, the tensor and the field.
Result<LoadedLayer> loadLayer(const Checkpoint &checkpoint,
                              const QuantConfig &config,
                              const std::string &module);

/// Concatenates shards of a fused layer (QKV, gate/up) along N. Schemas must
/// agree except for scalar scales: unequal per-tensor scales become f32
/// channel scales (exact); unequal NVFP4 global scales are folded into group
/// scales of the model's 16-bit type (noted as lossy).
Result<LoadedLayer> fuseShards(const std::vector<LoadedLayer> &shards,
                               DType paramDType);

/// A checkpoint directory and its quantization config, opened together;
/// `activation` is the model's 16-bit type (the config's param dtype).
struct OpenedCheckpoint {
  Checkpoint checkpoint;
  QuantConfig config;
  ScalarType activation() const {
    return config.paramDType() == DType::BF16 ? ScalarType::bf16()
                                              : ScalarType::f16();
  }
};
Result<OpenedCheckpoint> openCheckpoint(const std::string &dir);
/// The same for a checkpoint already read (Checkpoint::fromParts).
Result<OpenedCheckpoint> openCheckpoint(Checkpoint checkpoint);

/// Stacks the experts of a MoE projection — each a dense layer from
/// loadLayer (or fuseShards, for gate and up) — into one layer with
/// weight.experts = E: weight, scales and zero points [E, ...], global
/// scales [E], bias [E, N]. The experts' schemas, sizes and activations
/// must agree; act-order permutations are refused (a MoE kernel gathers
/// whole rows, not each expert's columns). Errors name the expert.
Result<LoadedLayer> stackExperts(const std::vector<LoadedLayer> &experts);

/// A MoE block's experts from a checkpoint: `pattern` names expert e's
/// module with "{e}" for its index ("model.layers.0.mlp.experts.{e}"),
/// `gate`, `up` and `down` its projections ("gate_proj", "up_proj",
/// "down_proj"; Mixtral: "w1", "w3", "w2"). gate_up is each expert's gate
/// rows then its up rows (fuseShards), stacked; down is stacked as it is.
struct LoadedMoe {
  LoadedLayer gateUp, down;
};
Result<LoadedMoe> loadMoeExperts(const Checkpoint &checkpoint,
                                 const QuantConfig &config,
                                 const std::string &pattern, int64_t experts,
                                 const std::string &gate = "gate_proj",
                                 const std::string &up = "up_proj",
                                 const std::string &down = "down_proj");

/// A MoE block whose checkpoint stores every expert in one tensor per
/// projection (gpt-oss: `module`.gate_up_proj_blocks [E, 2I, H / 32, 16],
/// _scales, _bias, and down_proj_*; `module` e.g. "model.layers.0.mlp.
/// experts"). `interleaved`: gate_up's rows alternate gate and up (gpt-oss:
/// gate = rows 0, 2, ..., up = rows 1, 3, ...); they are reordered into
/// each expert's gate rows then its up rows, as the MoE layer takes them.
/// `experts` must match the tensors' leading dimension.
Result<LoadedMoe> loadStackedMoeExperts(const Checkpoint &checkpoint,
                                        const QuantConfig &config,
                                        const std::string &module,
                                        int64_t experts,
                                        const std::string &gateUp =
                                            "gate_up_proj",
                                        const std::string &down = "down_proj",
                                        bool interleaved = true);

/// Converts a dense layer's weight-side tensors from a source format
/// (`source.format`: gptq, gptq_v2 or awq; the shapes
/// `expectedShape(..., prepared = false)` gives for padded sizes n x k) to the
/// canonical format of the same schema with `format = canonical`, which is
/// returned with them. This is the host step `humming-legalize-schema`
/// leaves to the caller for weights handed to a function in a source format
/// (see its `humming.source_schema` argument attributes). Errors name the
/// tensor, what was expected and what was found.
struct CanonicalLayer {
  WeightSchema weight;
  QuantizedWeights tensors;
};
Result<CanonicalLayer> sourceToCanonical(const WeightSchema &source,
                                         const QuantizedWeights &tensors,
                                         int64_t n, int64_t k);

/// The "#humming.weight_schema<...>" text of a schema, identical to the
/// attribute's printed form (tests compare the two).
std::string formatWeightSchema(const WeightSchema &w);
std::string formatInputSchema(const InputSchema &in);

} // namespace humming

#endif // HUMMING_QUANT_ADAPTERS_H
