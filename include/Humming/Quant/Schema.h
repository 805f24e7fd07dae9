//===- Schema.h - Weight/input schemas and the support matrix ---*- C++ -*-===//
//
// The explicit description of quantized weights and activations, and the one
// place where the rules of what Humming can run are written down (the
// "support matrix"). The dialect's verifiers, the runtime's Layer and the
// checkpoint adapters all call these functions, so the rules cannot drift.
//
// Every check returns std::nullopt on success or one diagnostic that says
// what was expected and what was found.
//
// No MLIR or LLVM dependency (host numerics layer).
//
//===----------------------------------------------------------------------===//

#ifndef HUMMING_QUANT_SCHEMA_H
#define HUMMING_QUANT_SCHEMA_H

#include "Humming/Quant/DType.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace humming {

/// A diagnostic: nullopt means "fine".
using Diag = std::optional<std::string>;

/// How weight scales are shared.
enum class Granularity : uint8_t {
  Channel,     ///< one scale per output channel: [N, 1]
  Group,       ///< groups of groupK along K: [N, K/groupK]
  Block,       ///< 2-D blocks groupN x groupK: [ceil(N/gn), ceil(K/gk)] f32
  Tensor,      ///< only a global fp32 scale (per expert)
  GroupTensor, ///< groups along K plus a global fp32 scale (per expert)
};

enum class ZeroPointKind : uint8_t { None, Int, Float };

/// The tensor layout the weight operands arrive in. Checkpoint formats other
/// than these are converted to Canonical on the host (lib/Quant adapters).
enum class SourceFormat : uint8_t {
  Canonical, ///< Humming standard format: [N, K*b/32] int32, bitstream along K
  GPTQ,      ///< qweight [K*b/32, N], qzeros store z-1 (checkpoint_format=gptq)
  GPTQv2,    ///< as GPTQ but qzeros store z (checkpoint_format=gptq_v2)
  AWQ,       ///< qweight [K, N*b/32] packed along N in AWQ nibble order
};

/// How activations are scaled (8- and 4-bit activations only).
enum class ActScaling : uint8_t { None, Token, Group, Static };

enum class GemmType : uint8_t {
  Dense,
  Indexed,           ///< vLLM moe_align_block_size layout (sorted ids)
  GroupedContiguous, ///< expert offsets [E+1]
  GroupedMasked,     ///< per-expert counts [E], A is [E*max_tokens, K]
};

/// The tensor-core instruction family a kernel (and a prepared layout) uses.
enum class MmaKind : uint8_t { MmaSync, Wgmma, Tcgen05, BlockScaled };

/// The operands that belong to the weight side of a layer.
enum class WeightOperand : uint8_t {
  Weight,
  Scales,
  ZeroPoints,
  GlobalScale,
  Bias
};

const char *toString(Granularity g);
const char *toString(ZeroPointKind z);
const char *toString(SourceFormat f);
const char *toString(ActScaling s);
const char *toString(GemmType g);
const char *toString(MmaKind m);
const char *toString(WeightOperand o);

/// Every weight element type the schema admits: integers of 1..8 bits (both
/// signs) and every signed float eXmY of at most 8 bits (28 of them).
std::vector<ScalarType> allWeightTypes();

struct WeightSchema {
  ScalarType type = ScalarType::uint(4);
  ScalarType scaleType = ScalarType::f16();
  Granularity granularity = Granularity::Channel;
  int64_t groupN = 0; ///< block only
  int64_t groupK = 0; ///< group, block, group_tensor
  ZeroPointKind zeroPoint = ZeroPointKind::None;
  bool globalScale = false; ///< explicit secondary scale (implied by tensor/group_tensor)
  bool bias = false;
  int64_t experts = 0; ///< 0 = dense layer
  int64_t padN = 0;    ///< padding rows appended to N (weights are padded, outputs are not)
  int64_t padK = 0;    ///< padding columns appended to K (activations are not padded)
  SourceFormat format = SourceFormat::Canonical;

  /// The common dense-layer schema: `type` weights with `scaleType` scales of
  /// `granularity` (group/group_tensor/block along K: `groupK`).
  static WeightSchema make(ScalarType type, ScalarType scaleType,
                           Granularity granularity, int64_t groupK = 0,
                           ZeroPointKind zeroPoint = ZeroPointKind::None) {
    WeightSchema w;
    w.type = type;
    w.scaleType = scaleType;
    w.granularity = granularity;
    w.groupK = groupK;
    w.zeroPoint = zeroPoint;
    return w;
  }

  bool hasGlobalScale() const {
    return globalScale || granularity == Granularity::Tensor ||
           granularity == Granularity::GroupTensor;
  }
  /// Whether the scales vary along K (group, group_tensor, block): they are
  /// applied to the weights, not to the accumulators.
  bool hasPerKScales() const {
    return granularity == Granularity::Group ||
           granularity == Granularity::GroupTensor ||
           granularity == Granularity::Block;
  }
  /// Whether a per-channel/group/block scale tensor exists.
  bool hasScaleTensor() const { return granularity != Granularity::Tensor; }
  /// Number of scale groups along K for a padded K (channel/tensor: 1).
  int64_t groupsAlongK(int64_t k) const;
};

struct InputSchema {
  ScalarType type = ScalarType::f16();
  ActScaling scaling = ActScaling::None;
  int64_t groupK = 0; ///< ActScaling::Group only
};

struct ComputeOptions {
  GemmType gemm = GemmType::Dense;
  bool f16Accumulation = false;
  bool batchInvariant = false;
};

/// Operands of a kernel that may be fetched with TMA (bit mask).
enum TmaOperand : uint32_t {
  TmaA = 1u << 0,
  TmaB = 1u << 1,
  TmaC = 1u << 2,
  TmaScales = 1u << 3,
  TmaZeroPoints = 1u << 4,
  TmaBias = 1u << 5,
};

/// One kernel configuration, valid for tokens M in [mMin, mMax]
/// (mMax == 0: unbounded).
struct TileConfig {
  int64_t mMin = 1, mMax = 0;
  int64_t blockM = 64, blockN = 128, blockK = 64;
  int64_t warpM = 64, warpN = 32, warpK = 64;
  int64_t stages = 4;
  MmaKind mma = MmaKind::MmaSync;
  bool warpSpecialized = false;
  bool streamK = false;
  bool mbarrier = false;
  bool cpAsync = true;
  uint32_t tma = 0; ///< TmaOperand mask
  int64_t multicastA = 1, multicastB = 1;
  int64_t ctasPerSm = 1;
  int64_t gridCap = 0; ///< 0 = every SM
  int64_t writeSplits = 1;
  /// CTAs that each take a contiguous share of K and add their fp32 partial
  /// sums in a fixed order (split-K across CTAs, for M ranges whose grid
  /// alone cannot fill the device). Needs a bounded M range: the partial
  /// sums live in a workspace sized for mMax tokens.
  int64_t splitK = 1;
  /// The block copies its tiles together and its warps share them (always
  /// so with several warp rows, block_m > warp_m).
  bool blockCopies = false;
  /// mma_sync blocks of one warp row whose warps otherwise copy their own
  /// tiles: the warps side by side along N (one K group) share the
  /// activation copies, each copying an equal share of the group's 16 x 16
  /// activation tiles, and synchronise per iteration with a named barrier
  /// of the group instead of a block barrier. Each warp still copies its
  /// own weights and scales. Half (or less) of the per-warp activation
  /// traffic from L2, without block_copies' lockstep of the whole block.
  bool shareActivations = false;
  /// Group scales multiply the f32 sums of a warp's k-tiles of an iteration
  /// (one group) after the MMAs instead of every dequantized weight pair
  /// (mma_sync prepared kernels with 16-row warps).
  bool scaleAfterMma = false;
  /// mma_sync with split_k (2, 4 or 8; sm_90 and later): the CTAs form a
  /// thread block cluster and add their sums through distributed shared
  /// memory instead of the global workspace (no bounded range needed).
  /// wgmma kernels split K so unless workspaceSplit.
  bool clusterSplit = false;
  /// wgmma with split_k: the CTAs add their sums through the global
  /// workspace (the last to arrive adds all of them in split order), as
  /// the mma_sync kernels do, instead of a thread block cluster. No
  /// cluster co-scheduling: clusters of four or eight CTAs keep only ~120
  /// CTAs resident on the H200's 132 SMs. Needs a bounded M range.
  bool workspaceSplit = false;
  /// workspace_split launched cooperatively (every CTA of the grid resident
  /// at once, or the launch fails): each of the split_k CTAs of an output
  /// tile stores the sums of the others' shares of its rows, waits for
  /// them, and adds its own share (split_k divides the tile's rows of eight
  /// tokens), instead of the last CTA to arrive loading and adding all of
  /// them. Dense layers only (a MoE grid's size is known only at run time).
  bool cooperativeSplit = false;
  /// Warp-specialized wgmma kernels: 1 keeps the previous iteration's
  /// wgmmas in flight until the next iteration's first k-tile is issued
  /// (its consumers then wait with wgmma.wait_group 1 and release the
  /// previous slot), 0 drains them when an iteration starts.
  int64_t wgmmaInFlight = 0;
  /// cp.async pipelines and the warp-specialized wgmma producer (dense
  /// layers; sm_90 and later): each iteration (fill) also asks L2 for the
  /// weights of the iteration this many beyond the one it copies into
  /// shared memory (cp.async.bulk.prefetch.L2; the producer also for the
  /// activation box of a tensor copy), so that more of the operands are on
  /// their way from DRAM than the pipeline's slots hold; 0: no prefetch.
  int64_t l2Prefetch = 0;
  /// The order of the grid (prepared kernels): consecutive CTAs take
  /// rasterM blocks of rows (tokens) for each block of columns before the
  /// next block of columns, so that a wave of CTAs covers a compact region
  /// of the output whose activations and weights stay in L2 (1: every block
  /// of columns of one row of blocks first, the launch's own order).
  int64_t rasterM = 1;
  /// Warp-specialized wgmma kernels of dense layers with 8-bit activations
  /// and every operand by TMA: each CTA takes output tiles in turn (tile
  /// blockIdx.x, then + gridDim.x, ... in the order of rasterM), the
  /// producer filling the next tile's slots while the consumers store the
  /// last one's outputs; the runtime launches at most `persistent` waves of
  /// CTAs (persistent x ctasPerSm per SM: abi::KernelLaunch::persistent),
  /// 1 the classic persistent grid, more a grid the hardware still
  /// balances across SMs. 0: one CTA per output tile.
  int64_t persistent = 0;
  /// Warp-specialized wgmma kernels whose 8-bit activation sums promote
  /// (fp8, or int8 with per-K scales): the wgmmas of this many consecutive
  /// iterations sum into one set of fresh sums, which then join the running
  /// f32 sums (times the group's scales) at once. An iteration is then one
  /// slot of the pipeline, the promotion interval is this many of them:
  /// block_k = 64 with 2 keeps 128 of K between promotions (the accuracy of
  /// DeepGEMM's and of block_k = 128) over twice as many, half-sized slots,
  /// so more of the shared memory is in flight (bench/NOTES.md "8-bit
  /// activations"). Each slot is still released as soon as its own wgmmas
  /// are complete (wgmma.wait_group). 1: every iteration promotes.
  int64_t promotionInterval = 1;
  /// Warp-specialized wgmma over K-major 8-bit weights (fp8 or int8
  /// activations) with tma = [b], dense: an iteration's weights arrive by
  /// one 3-D tensor copy through a tensor map the runtime encodes once per
  /// layer (KernelLaunch::weightMap) instead of one bulk copy per k-tile.
  bool weightMap = false;
  /// Warp-specialized wgmma with 8-bit activations over weights the MMA
  /// does not take as stored (narrower codes: W4A8, fp4 x fp8; or 8-bit
  /// ones with zero points): each consumer warpgroup converts an
  /// iteration's weights into the MMA type in a shared-memory stage of its
  /// own (two buffers, wgmma's no-swizzle K-major core matrices), one
  /// iteration ahead of its wgmmas, which read them by descriptor instead
  /// of from registers (the slot, whose activations they read, is released
  /// after their wait, as without the stage).
  bool stagedWeights = false;

  /// Whether the split_k CTAs reduce in a cluster (by the MMA generation's
  /// default, MmaGeneration::clusterSplitByDefault, without workspaceSplit;
  /// or clusterSplit).
  bool splitsInCluster() const;
  int64_t warps() const;
  int64_t threads() const;
};

/// Number of bits of an activation element (16, 8 or 4).
inline unsigned activationBits(const InputSchema &in) { return in.type.bits; }

/// Values of K consumed by one MMA k-step (256 / activation bits): 16 for
/// 16-bit, 32 for 8-bit, 64 for 4-bit activations.
inline int64_t kPack(const InputSchema &in) { return 256 / in.type.bits; }

// ---- Individual checks -----------------------------------------------------

/// Legal weight element types: integers of 1..8 bits, signed floats of at
/// most 8 bits (not e8m0).
Diag verifyWeightType(const ScalarType &t);
/// Legal activation types: f16, bf16, f8E4M3FN, f8E5M2, si8, si4, f4E2M1FN.
Diag verifyActivationType(const ScalarType &t);
/// Output types: f16, bf16.
Diag verifyOutputType(const ScalarType &t);

/// Intrinsic consistency of a weight schema (no activation known).
Diag verifyWeightSchema(const WeightSchema &w);
/// Intrinsic consistency of an input schema.
Diag verifyInputSchema(const InputSchema &in);
/// Intrinsic legality of a tile configuration (no problem known).
Diag verifyTileConfig(const TileConfig &t);

/// Weight x activation x compute rules (the original's check_dtype and
/// LayerConfig rules): int/float weight vs activation mantissa and width,
/// zero-point rules, group minimums, block vs input groups, f16 accumulation.
Diag verifyCompatibility(const WeightSchema &w, const InputSchema &in,
                         const ComputeOptions &c,
                         const std::optional<ScalarType> &outputType);

/// Padding rules for a problem with padded sizes n x k.
Diag verifyPadding(const WeightSchema &w, const InputSchema &in, int64_t n,
                   int64_t k);

/// A tile configuration against a concrete problem (padded n x k).
Diag verifyTileForProblem(const TileConfig &t, const WeightSchema &w,
                          const InputSchema &in, const ComputeOptions &c,
                          int64_t n, int64_t k);

/// Tile configurations of one op: each legal, their M ranges ascending,
/// disjoint and without holes, starting at 1 and open-ended at the last.
Diag verifyTileRanges(const std::vector<TileConfig> &tiles);

// ---- Shapes ----------------------------------------------------------------

/// Expected shape of a weight-side operand, or a diagnostic when the sizes
/// cannot be represented (e.g. K*b not a multiple of 32). `n`, `k` are the
/// padded sizes. `prepared` selects the execution layout produced by
/// humming.repack for activations `in`; otherwise the schema's source format.
struct ShapeOrDiag {
  std::vector<int64_t> shape;
  Diag error;
};
ShapeOrDiag expectedShape(WeightOperand op, const WeightSchema &w,
                          const InputSchema &in, int64_t n, int64_t k,
                          bool prepared);

/// Expected shape of the activation scale operand for `m` tokens (m < 0:
/// dynamic) and unpadded activation width `k`.
ShapeOrDiag expectedInputScaleShape(const InputSchema &in, int64_t m,
                                    int64_t k);

/// Bits of one zero-point lane in the prepared layout (4 or 8).
inline unsigned preparedZeroPointBits(const WeightSchema &w) {
  return w.type.bits <= 4 ? 4 : 8;
}

/// "[2, 3, 4]".
std::string formatShape(const std::vector<int64_t> &shape);

inline bool isPowerOf2(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }
inline int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

} // namespace humming

#endif // HUMMING_QUANT_SCHEMA_H
