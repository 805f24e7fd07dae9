//===- Quantize.h - Reference quantization and GEMM -------------*- C++ -*-===//
//
// The ground truth for every number Humming produces: round-to-nearest
// quantization of fp weights to a schema (absmax for symmetric schemas,
// min-max with a zero point), exact dequantization, activation quantization,
// and float64 reference GEMM and MoE GEMM over dequantized data — the oracle
// the GPU tests compare with.
//
//===----------------------------------------------------------------------===//

#ifndef HUMMING_QUANT_QUANTIZE_H
#define HUMMING_QUANT_QUANTIZE_H

#include "Humming/Quant/Result.h"
#include "Humming/Quant/Schema.h"
#include "Humming/Quant/Tensor.h"

#include <optional>
#include <vector>

namespace humming {

/// A layer's weight-side tensors in the canonical format (padded sizes):
///   weight        I32 [E?, N, K*b/32]       bit stream along K
///   scales        scale dtype [E?, N, K/g]  (channel [E?, N, 1],
///                 block F32 [E?, ceil(N/gn), ceil(K/gk)])
///   zeroPoints    I32 [E?, N*b/32, groups] packed along N (int), or
///                 F16/BF16 [E?, N, groups] (float)
///   globalScale   F32 [max(E, 1)]
///   bias          F16/BF16 [E?, N]
struct QuantizedWeights {
  Tensor weight;
  std::optional<Tensor> scales;
  std::optional<Tensor> zeroPoints;
  std::optional<Tensor> globalScale;
  std::optional<Tensor> bias;
};

/// A layer's canonical data before packing (sizes as the tensors have them,
/// i.e. padded). Scales, zero points, global scales and bias are values; they
/// are stored in their dtypes exactly when representable.
struct CanonicalValues {
  std::vector<uint32_t> codes;       ///< [E, N, K] weight codes
  std::vector<double> scales;        ///< scale tensor order: [E, N, groups]
                                     ///< (block: [E, rows, cols])
  std::vector<double> zeroPoints;    ///< [E, N, groups]: codes or values
  std::vector<double> globalScales;  ///< [E]
  std::vector<double> bias;          ///< [E, N], or empty
};

/// Packs canonical values into the canonical tensors of `schema` (sizes n x k
/// are those of the tensors, padding included).
Result<QuantizedWeights> packCanonical(const WeightSchema &schema,
                                       const CanonicalValues &values,
                                       int64_t n, int64_t k,
                                       DType paramDType);

/// The model's 16-bit float type for float zero points and bias.
struct QuantizeOptions {
  DType paramDType = DType::F16;
};

/// Quantizes `w` ([E, N, K] with E = max(experts, 1), logical sizes) to a
/// canonical-format schema. Padding rows/columns quantize to zero. `bias`
/// ([E, N], optional) is stored in paramDType when the schema has one.
Result<QuantizedWeights> quantizeWeights(const WeightSchema &schema,
                                         const double *w, int64_t n,
                                         int64_t k,
                                         const double *bias = nullptr,
                                         const QuantizeOptions &opts = {});

/// Checks canonical tensors against the schema for logical sizes n x k:
/// every tensor the schema needs is there with its padded shape and dtype
/// (the bias too, in `paramDType`, when the schema has one); a mismatch
/// names the tensor, what was expected and what was found.
Status checkQuantizedTensors(const WeightSchema &schema,
                             const QuantizedWeights &q, int64_t n, int64_t k,
                             DType paramDType);

/// The padding a dense layer of logical sizes n x k needs for the kernels
/// (`Layer::create` applies it where the schema asks for none): N to a
/// multiple of 64, K to a multiple of the k-tiles' (32 for 16-bit
/// activations, 64 for 8-bit) and of the weight and activation group
/// sizes. A K that activation rows cannot be copied with (16-byte pieces:
/// a multiple of 8 for 16-bit activations, of 16 for 8-bit) is an error.
struct Padding {
  int64_t n = 0, k = 0;
};
Result<Padding> kernelPadding(const WeightSchema &schema,
                              const InputSchema &input, int64_t n, int64_t k);

/// Canonical tensors of `padded` (a dense, canonical-format schema with
/// padN / padK) made from tensors of the same schema without padding
/// (logical sizes n x k): codes, zero points and bias pad with zeros,
/// scales with ones (padded rows and groups; the kernels zero-fill the
/// activations past K, so the padding never reaches an output). Each
/// tensor must have the unpadded shape; a mismatch names it.
Result<QuantizedWeights> padCanonicalTensors(const WeightSchema &padded,
                                             QuantizedWeights tensors,
                                             int64_t n, int64_t k);

/// One rank's share of a layer under tensor parallelism: column-parallel
/// splits N (the outputs), row-parallel splits K (the inputs; the bias
/// stays with rank 0, zero elsewhere, so the sum over ranks adds it once).
enum class TensorParallel { Column, Row };
struct ShardedWeights {
  WeightSchema schema; ///< the shard's (the full layer's, unpadded)
  int64_t n = 0, k = 0;
  QuantizedWeights tensors;
};
/// Slices the canonical tensors of a dense, unpadded layer (logical sizes
/// n x k) for rank `rank` of `size`. Where a shard boundary would cut a
/// packed word, a scale group, a block or a zero-point word the error says
/// which and where.
Result<ShardedWeights> shardCanonical(const WeightSchema &schema,
                                      const QuantizedWeights &tensors,
                                      int64_t n, int64_t k,
                                      TensorParallel parallel, int64_t rank,
                                      int64_t size);

/// Dequantizes canonical tensors to float64 [E, N, K] (logical sizes; the
/// padding is dropped). Shapes and dtypes are checked first (as
/// checkQuantizedTensors, except the bias); a mismatch names the tensor,
/// what was expected and what was found.
Result<std::vector<double>> dequantizeWeights(const WeightSchema &schema,
                                              const QuantizedWeights &q,
                                              int64_t n, int64_t k);

/// The bias of a layer as float64 [E, N] (logical N), or empty without one.
std::vector<double> biasValues(const WeightSchema &schema,
                               const QuantizedWeights &q, int64_t n);

/// Quantized activations: codes [M, K] and fp32 scales ([M, 1] per token,
/// [M, ceil(K/g)] per group, [1] static).
struct QuantizedActivations {
  std::vector<uint32_t> codes;
  std::vector<float> scales;
};

/// Quantizes activations `x` [M, K] (8- and 4-bit input schemas): dynamic
/// absmax per token or per group, or the given static scale. The rules, which
/// humming.quantize's GPU kernel follows bit for bit: the scale is
/// float(absmax / max code) (NaNs do not count towards the absmax), 1 where
/// that is not positive (an all-zero row or group); each code is the value
/// divided by the scale in f32 (x as f32), encoded with round-to-nearest-even
/// and saturation (NaN: the format's NaN, 0 for integers).
Result<QuantizedActivations>
quantizeActivations(const InputSchema &in, const double *x, int64_t m,
                    int64_t k, std::optional<float> staticScale = {});
std::vector<double> dequantizeActivations(const InputSchema &in,
                                          const QuantizedActivations &q,
                                          int64_t m, int64_t k);

/// out[m, n] = sum_k a[m, k] * w[n, k] + bias[n], in float64.
std::vector<double> referenceGemm(const double *a, const double *w,
                                  const double *bias, int64_t m, int64_t n,
                                  int64_t k);

/// Token routing of a MoE layer, in the layout of each GEMM type.
struct Routing {
  GemmType type = GemmType::Indexed;
  int64_t topK = 1;
  int64_t blockM = 16;
  /// indexed: flat token*top_k+k ids grouped per expert, each expert padded
  /// to blockM with the sentinel M*top_k.
  std::vector<int32_t> sortedIds;
  /// indexed: expert of each m-block.
  std::vector<int32_t> expertIds;
  int32_t numTokensPadded = 0;
  /// grouped_contiguous: offsets [E+1]; grouped_masked: counts [E].
  std::vector<int64_t> expertLayout;
  /// grouped_masked: rows per expert in the activations.
  int64_t maxTokens = 0;
};

/// vLLM's moe_align_block_size: from top-k expert choices [M, topK].
Result<Routing> alignBlockSize(const std::vector<int32_t> &topkIds, int64_t m,
                               int64_t topK, int64_t experts, int64_t blockM);

/// Reference MoE GEMM over dequantized weights w [E, N, K] (and bias [E, N]
/// or null). Activations: indexed and grouped_contiguous [M, K], masked
/// [E*maxTokens, K]. Output rows: indexed M*topK, else as the activations;
/// rows no expert writes are 0.
Result<std::vector<double>> referenceMoeGemm(const Routing &routing,
                                             const double *a, int64_t rows,
                                             const double *w,
                                             const double *bias,
                                             int64_t experts, int64_t n,
                                             int64_t k);

} // namespace humming

#endif // HUMMING_QUANT_QUANTIZE_H
