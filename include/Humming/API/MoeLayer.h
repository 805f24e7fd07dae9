//===- MoeLayer.h - A whole mixture-of-experts block, ready to run -*- C++ -*-===//
//
// The MoE block of a Qwen3-MoE / Mixtral / DeepSeek-style model from the
// router's choices to the block's output:
//
//   sorted ids  = moe_align(topk_ids)                      (MoeRouter)
//   gu          = gate_up_e(x)      [M * top_k, 2I]        (indexed MoE GEMM)
//   h           = silu(gu[:, :I]) * gu[:, I:]              (silu_and_mul)
//   o           = topk_weights * down_e(h)  [M * top_k, H] (MoE GEMM, router
//                                                           weights in its
//                                                           epilogue)
//   y[t]        = sum_k o[t * top_k + k]    [M, H]         (moe_sum)
//
// Every kernel comes from the same pipeline and kernel cache as the dense
// layers; forward() allocates nothing (the workspace for up to maxTokens
// tokens is made by transform) and can be captured in a CUDA graph.
//
//   auto moe = humming::MoeLayer::create({2048, 768, 128, 8}, w4, w4, f16);
//   moe->quantize(gateUp, down);        // [E, 2I, H] and [E, H, I]
//   moe->transform({"H200"}, 4096);
//   moe->forward(stream, x, topkIds, topkWeights, y, m);
//
//===----------------------------------------------------------------------===//

#ifndef HUMMING_API_MOELAYER_H
#define HUMMING_API_MOELAYER_H

#include "Humming/API/Layer.h"
#include "Humming/Quant/Adapters.h"
#include "Humming/API/MoeRouter.h"

#include <memory>

namespace humming {

/// The activation between the two GEMMs (humming.silu_and_mul): with gate
/// g and up u, g / (1 + e^(-alpha g)) * (u + upOffset), g clamped to at most
/// `limit` and u to [-limit, limit] where limit > 0. The default is
/// SiLU-and-mul (Qwen, Mixtral, DeepSeek).
struct GatedActivation {
  double alpha = 1.0, upOffset = 0.0, limit = 0.0;
  /// gpt-oss's clamped SwiGLU (its config's swiglu_limit, 7).
  static GatedActivation gptOss(double limit = 7.0) {
    return {1.702, 1.0, limit};
  }
};

struct MoeLayerShape {
  int64_t hidden = 0;       ///< H: the block's input and output columns
  int64_t intermediate = 0; ///< I: each expert's (gate_up has 2I rows)
  int64_t experts = 0;      ///< E (1 .. 1024)
  int64_t topK = 1;
  /// sorted_ids pad each expert to a multiple of this (MoeOptions); 0:
  /// chosen per call from the tokens per expert (blockSizeFor).
  int64_t blockSize = 0;
  GatedActivation activation = {};
};

class MoeLayer {
public:
  /// The weight schemas are a dense layer's (experts is set here); both
  /// GEMMs take `input` activations (8-bit ones, scaled per token or per
  /// group of K, are quantized on the GPU from x and from the gated
  /// intermediate, LayerTarget::activationRows being set by transform) and
  /// write `output` (f16 or bf16: x, y and the intermediate tensors; 16-bit
  /// activations must be of this type).
  static Result<MoeLayer> create(const MoeLayerShape &shape,
                                 const WeightSchema &gateUp,
                                 const WeightSchema &down,
                                 const InputSchema &input,
                                 ScalarType output = ScalarType::f16());
  /// A MoE block whose experts come from a checkpoint directory
  /// (config.json + safetensors: GPTQ, AWQ, compressed-tensors, FP8 ...):
  /// expert e's projections are the modules `pattern` (with "{e}" for e:
  /// "model.layers.0.mlp.experts.{e}") + "." + gate / up / down
  /// (humming::loadMoeExperts). A pattern without "{e}" names one module
  /// holding every expert (gpt-oss's MXFP4 "model.layers.0.mlp.experts":
  /// gate_up_proj with gate and up rows interleaved, and `down`;
  /// humming::loadStackedMoeExperts), whose activation is gpt-oss's clamped
  /// SwiGLU where config.json has a swiglu_limit. H, I and E come from the
  /// tensors; the activations and outputs are the model's 16-bit type.
  static Result<MoeLayer> fromCheckpoint(const std::string &dir,
                                         const std::string &pattern,
                                         int64_t experts, int64_t topK,
                                         int64_t blockSize = 0,
                                         const std::string &gate = "gate_proj",
                                         const std::string &up = "up_proj",
                                         const std::string &down = "down_proj");
  /// The same from a checkpoint already opened (a directory, or tensors a
  /// host holds: Checkpoint::fromParts).
  static Result<MoeLayer> fromCheckpoint(const OpenedCheckpoint &opened,
                                         const std::string &pattern,
                                         int64_t experts, int64_t topK,
                                         int64_t blockSize = 0,
                                         const std::string &gate = "gate_proj",
                                         const std::string &up = "up_proj",
                                         const std::string &down = "down_proj");
  MoeLayer(MoeLayer &&) noexcept;
  MoeLayer &operator=(MoeLayer &&) noexcept;
  ~MoeLayer();

  /// Float weights: gate_up [E, 2I, H] (each expert's gate rows, then its
  /// up rows: checkpoints with separate gate and up projections stack
  /// them), down [E, H, I].
  Status quantize(const double *gateUp, const double *down);
  /// The activation between the GEMMs (the shape's; call transform()
  /// again after changing it).
  Status setActivation(const GatedActivation &activation);
  /// Canonical tensors with the leading E dimension (Layer::loadQuantized).
  Status loadQuantized(QuantizedWeights gateUp, QuantizedWeights down);
  /// Prepares and compiles every kernel for `target` (the GEMMs, the router,
  /// silu_and_mul, moe_sum) and, unless compileOnly, allocates the
  /// workspace for up to `maxTokens` tokens. A tile configuration applies to
  /// both GEMMs.
  Status transform(const LayerTarget &target, int64_t maxTokens);
  /// y [m, H] for x [m, H], the router's topk_ids [m, top_k] i32 and
  /// topk_weights [m, top_k] f32 (device pointers; x and y 16-byte
  /// aligned, the others 4). Ids outside 0 .. E - 1 contribute nothing.
  Status forward(void *stream, uint64_t x, uint64_t topkIds,
                 uint64_t topkWeights, uint64_t y, int64_t m) const;

  const MoeLayerShape &shape() const;
  /// The two GEMMs (their kernels, PTX, transform statistics).
  const Layer &gateUp() const;
  const Layer &down() const;
  /// The 16-bit type of x, y and the intermediates (the activations' own
  /// with 16-bit ones; 8-bit ones are quantized from it by each GEMM).
  ScalarType outputType() const;
  /// The routing block_size forward() uses for m tokens: the fixed one, or
  /// the least common multiple of the two GEMMs' kernels' block_m for m
  /// (each at least 16; 0 before transform()).
  int64_t blockSizeFor(int64_t m) const;

private:
  struct Impl;
  explicit MoeLayer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

} // namespace humming

#endif // HUMMING_API_MOELAYER_H
