//===- Kernels.h - The GEMM kernel builders ---------------------*- C++ -*-===//
//
// What humming-lower-to-nvvm calls: the canonical-weight kernel
// (CanonicalKernel.cpp) and the prepared-layout kernels, one emitter per MMA
// generation (PreparedEmitter.h).
//
//===----------------------------------------------------------------------===//

#ifndef HUMMING_LIB_CONVERSION_HUMMINGTONVVM_KERNELS_H
#define HUMMING_LIB_CONVERSION_HUMMINGTONVVM_KERNELS_H

#include "Humming/Quant/PreparedLayout.h"
#include "Humming/Quant/Schema.h"
#include "Humming/Target/ArchInfo.h"
#include "Humming/Target/KernelABI.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "llvm/ADT/STLFunctionalExtras.h"

namespace mlir::humming {

/// Everything the kernel is specialised on (the JIT bakes every constant in).
struct GemmKernelSpec {
  ::humming::WeightSchema weight;
  ::humming::InputSchema input;
  ::humming::ScalarType output = ::humming::ScalarType::f16();
  int64_t nOut = 0; ///< logical N (columns written)
  int64_t kAct = 0; ///< logical K (columns of the activations)
  int64_t np = 0;   ///< padded N of the weights
  int64_t kp = 0;   ///< padded K of the weights
  /// Accumulate in f16 (prepared kernels, f16 activations): channel scales
  /// then move into the main loop so the f16 sums stay in range.
  bool f16Accumulation = false;
  /// Batch-invariant layers (#humming.compute): a row's result may not
  /// depend on M, so every M-range kernel keeps the MMAs' operand roles
  /// (no transposed product at M <= 8: PreparedEmitter::weightsAsA).
  bool batchInvariant = false;
  /// Programmatic dependent launch (sm_90 and later; KernelABI.h
  /// KernelLaunch::gridDependency): the kernel runs griddepcontrol.wait
  /// before its first read of the activations and launch_dependents after
  /// it; cp.async kernels copy their first stages' weights, scales and zero
  /// points before the wait.
  bool gridDependency = false;
  /// Mixture of experts (humming.moe_gemm; routing kRoutingDense for
  /// humming.gemm): each block reads its expert and rows from the routing
  /// tensors (KernelABI.h MoeParam) into a row table in shared memory,
  /// offsets the weight-side pointers to its expert (the strides below, in
  /// bytes) and gathers / scatters its rows through the table.
  struct Moe {
    int64_t routing = ::humming::abi::kRoutingDense;
    int64_t experts = 0, topK = 1, blockSize = 0;
    bool layout64 = false;    ///< grouped_contiguous offsets are i64
    bool routerWeights = false; ///< multiply each output row by its f32 weight
    /// grouped_masked without counts: every expert has M / E rows.
    bool uniform = false;
    int64_t weightBytes = 0, scaleBytes = 0, zeroBytes = 0, biasBytes = 0;
  } moe;
  bool isMoe() const { return moe.routing != ::humming::abi::kRoutingDense; }
};

/// The kernels' function type (Humming/Target/KernelABI.h): one global
/// pointer per tensor parameter, then M as i32 (MoE kernels: then the four
/// routing pointers of MoeParam and the routing's block_size; kernels with
/// a split-K workspace: then its pointer, KernelLaunch::workspace).
FunctionType kernelFunctionType(Builder &builder, bool moe = false,
                                bool workspace = false);

/// Appends the kernel `name` for `spec` to `module`. Its parameters follow
/// Humming/Target/KernelABI.h.
gpu::GPUFuncOp buildCanonicalKernel(OpBuilder &builder, Location loc,
                                    gpu::GPUModuleOp module, StringRef name,
                                    const GemmKernelSpec &spec);

/// The shape of a prepared-layout kernel (Humming/Quant/PreparedLayout.h).
using PreparedTile = ::humming::layout::KernelShape;

/// Split-K across CTAs: `ctas` CTAs along K (grid z) per output tile, for
/// at most `maxM` tokens (the workspace of partial sums is sized for them;
/// a cluster split needs none).
struct CtaSplit {
  int64_t ctas = 1;
  int64_t maxM = 0;
  /// The CTAs form a thread block cluster and add their sums through
  /// distributed shared memory (wgmma always; mma_sync with cluster_split):
  /// no workspace.
  bool cluster = false;
  /// Through the workspace, launched cooperatively (every CTA of the grid
  /// resident at once; TileConfig::cooperativeSplit): each CTA of an output
  /// tile waits for the others and adds its share of the tile's rows,
  /// instead of the last to arrive adding every row.
  bool cooperative = false;
};

/// The split-K workspace of a prepared kernel (KernelLaunch::workspace):
/// with `split.ctas` > 1 and no cluster, fp32 partial sums for every CTA of
/// the output tiles of at most split.maxM tokens, then one i32 arrival
/// counter per output tile; none (0 bytes) otherwise. The caller gives it
/// per launch (the kernel's last parameter before a tensor map), zeroed
/// before its first launch; every launch leaves the counters at zero.
struct SplitWorkspace {
  int64_t partialFloats = 0, counters = 0;
  /// Bytes of partial sums, then of the counters: a multiple of 16.
  int64_t bytes() const {
    const int64_t raw = partialFloats * 4 + counters * 4;
    return (raw + 15) / 16 * 16;
  }
  explicit operator bool() const { return counters > 0; }
};
SplitWorkspace splitWorkspace(const GemmKernelSpec &spec,
                              const PreparedTile &tile, const CtaSplit &split);

/// Appends the prepared-layout kernel `name` for `spec` and `tile`. With a
/// split-K workspace (splitWorkspace) the kernel takes its pointer after M:
/// the fp32 partial sums, then the arrival counters.
gpu::GPUFuncOp buildPreparedKernel(OpBuilder &builder, Location loc,
                                   gpu::GPUModuleOp module, StringRef name,
                                   const GemmKernelSpec &spec,
                                   const PreparedTile &tile,
                                   const CtaSplit &split = {});

/// humming.quantize with an input schema: activations [M, K] of `source`
/// type to codes of `input.type` and f32 scales (QuantizeKernel.cpp).
/// Parameters as the GEMM kernels' (kernelFunctionType): the activations in
/// the input slot, the codes in the output slot, the scales in the scales
/// slot, M last; one block of kQuantizeThreads threads per row.
struct QuantizeKernelSpec {
  ::humming::InputSchema input;
  ::humming::ScalarType source = ::humming::ScalarType::f16();
  int64_t k = 0;
  /// The codes per row written (>= k; 0: k): columns k .. codesK - 1 get
  /// the code of zero, so that rows of K bytes that are not a multiple of
  /// 16 can be padded for the GEMM's 16-byte copies (per token and static
  /// scaling; per group K is a multiple of the group already).
  int64_t codesK = 0;
  int64_t codes() const { return codesK ? codesK : k; }
  /// griddepcontrol.launch_dependents on entry (sm_90+): the kernel after
  /// it on the stream, launched with programmatic dependent launch (the
  /// GEMM reading the codes), starts and copies its weights while this one
  /// runs; it reads the codes only after its griddepcontrol.wait.
  bool launchDependents = false;
};
constexpr int64_t kQuantizeThreads = 128;
/// Why the kernel cannot quantize to `spec` on `chip`, or "".
std::string quantizeKernelProblem(const QuantizeKernelSpec &spec,
                                  const ::humming::Chip &chip);
gpu::GPUFuncOp buildQuantizeKernel(OpBuilder &builder, Location loc,
                                   gpu::GPUModuleOp module, StringRef name,
                                   const QuantizeKernelSpec &spec);

/// humming.moe_align and humming.moe_group (MoeAlignKernel.cpp): top-k
/// expert ids [M, top_k] (input slot, M in the M slot) to sorted_ids,
/// expert_ids and num_tokens_padded (the routing slots of abi::MoeParam);
/// one block of kMoeAlignThreads threads, ordinary launches.
struct MoeAlignKernelSpec {
  int64_t experts = 0, topK = 1, blockSize = 64;
  /// humming.moe_group: abi::kRoutingContiguous (offsets [E + 1] in the
  /// first routing slot) or abi::kRoutingMasked (counts [E], max_tokens
  /// rows per expert); positions [M * top_k] in the output slot.
  int64_t routing = ::humming::abi::kRoutingIndexed;
  int64_t maxTokens = 0;
};
constexpr int64_t kMoeAlignThreads = 1024;
/// Why the kernel cannot route for `spec`, or "".
std::string moeAlignKernelProblem(const MoeAlignKernelSpec &spec);
gpu::GPUFuncOp buildMoeAlignKernel(OpBuilder &builder, Location loc,
                                   gpu::GPUModuleOp module, StringRef name,
                                   const MoeAlignKernelSpec &spec);

/// humming.silu_and_mul (kind abi::kSiluAndMulKernel) and humming.moe_sum
/// (abi::kMoeSumKernel), ElementwiseKernels.cpp: input slot -> output slot,
/// M the output rows, `columns` the output columns (even), one thread per
/// pair of outputs in blocks of kElementwiseThreads.
struct ElementwiseKernelSpec {
  int64_t kind = ::humming::abi::kSiluAndMulKernel;
  int64_t columns = 0;
  int64_t topK = 1; ///< moe_sum
  bool bf16 = false;
  /// silu_and_mul: g / (1 + e^(-alpha g)) * (u + upOffset), g <= limit and
  /// |u| <= limit where limit > 0.
  double alpha = 1.0, upOffset = 0.0, limit = 0.0;
};
constexpr int64_t kElementwiseThreads = 256;
gpu::GPUFuncOp buildElementwiseKernel(OpBuilder &builder, Location loc,
                                      gpu::GPUModuleOp module, StringRef name,
                                      const ElementwiseKernelSpec &spec);

/// humming.moe_permute (ElementwiseKernels.cpp): rows of `words` 4-byte
/// words from the input slot to the output slot by the positions in the
/// first routing slot (M of them), the grouped side's rows in the i32 slot
/// after the routing pointers; a grid-stride loop of kElementwiseThreads
/// threads per block, one word per thread, at most kPermuteMaxBlocks
/// blocks.
struct MoePermuteKernelSpec {
  int64_t words = 1;
  int64_t topK = 1; ///< scatter: the input row of id i is i / topK
  bool gather = false;
};
constexpr int64_t kPermuteMaxBlocks = ::humming::abi::kPermuteMaxBlocks;

/// humming.gather_columns: rows of `columns` elements of `elementBits`.
struct GatherColumnsKernelSpec {
  int64_t columns = 1;
  unsigned elementBits = 16;
};
/// The elements one thread writes per step: 16 bytes' worth where a row
/// holds whole 16-byte pieces, else 1.
inline int64_t gatherVector(const GatherColumnsKernelSpec &spec) {
  const int64_t v = 128 / int64_t(spec.elementBits);
  return spec.columns % v == 0 ? v : 1;
}
gpu::GPUFuncOp buildGatherColumnsKernel(OpBuilder &builder, Location loc,
                                        gpu::GPUModuleOp module, StringRef name,
                                        const GatherColumnsKernelSpec &spec,
                                        bool launchDependents);
gpu::GPUFuncOp buildMoePermuteKernel(OpBuilder &builder, Location loc,
                                     gpu::GPUModuleOp module, StringRef name,
                                     const MoePermuteKernelSpec &spec);

/// A kernel of kElementwiseThreads threads in `module` with the GEMM
/// kernels' parameters (the MoE ones with `moe`), whose body
/// `emit(builder, params)` writes (before the return).
gpu::GPUFuncOp buildSmallKernel(
    OpBuilder &builder, Location loc, gpu::GPUModuleOp module, StringRef name,
    bool moe,
    function_ref<void(ImplicitLocOpBuilder &, ArrayRef<Value>)> emit);

/// humming.quantize with a weight schema (WeightQuantizeKernel.cpp):
/// round-to-nearest of fp weights [E?, N, K] (input slot, logical sizes;
/// zeros for the padding) into the canonical codes (output slot), scales
/// (scales slot), zero points (zero-point slot; integer ones OR-ed into
/// the buffer a Clear kernel zeroed) and global scales, the host's humming::quantizeWeights bit for bit (its
/// arithmetic in f64). One warp per scale group (a row's group, or its whole
/// row for channel scales) and grid-stride step, kElementwiseThreads
/// threads per block; M the experts.
/// A schema's quantization is up to four kernels, run in this order:
enum class WeightQuantizePhase {
  /// Zeroes the integer zero points (OR-ed into) and the global scale
  /// (a maximum is taken into it): one warp per expert.
  Clear,
  /// With a global scale: each group's amax, maximized into the expert's
  /// global-scale slot (its f32 bits, non-negative: ordered as unsigned).
  Amax,
  /// The scales, zero points and codes (the global scale from the amax).
  Quantize,
  /// With a global scale: the slot's amax becomes the global scale.
  Finish,
};
struct WeightQuantizeKernelSpec {
  ::humming::WeightSchema weight;
  ::humming::ScalarType source = ::humming::ScalarType::f16();
  /// Logical sizes of one expert.
  int64_t n = 0, k = 0;
  /// The storage type of float zero points (f16 or bf16).
  ::humming::ScalarType zeroPointType = ::humming::ScalarType::f16();
  WeightQuantizePhase phase = WeightQuantizePhase::Quantize;
};
/// Why the kernel cannot quantize into `spec`'s schema, or "".
std::string weightQuantizeKernelProblem(const WeightQuantizeKernelSpec &spec);
/// The phases `spec`'s schema needs, in order (Quantize alone for most).
SmallVector<WeightQuantizePhase>
weightQuantizePhases(const WeightQuantizeKernelSpec &spec);
/// Warps' items of one expert in `spec.phase`: scale groups (pairs of them
/// for groups of 16 columns), or one for Clear and Finish.
int64_t weightQuantizeItems(const WeightQuantizeKernelSpec &spec);
gpu::GPUFuncOp buildWeightQuantizeKernel(OpBuilder &builder, Location loc,
                                         gpu::GPUModuleOp module,
                                         StringRef name,
                                         const WeightQuantizeKernelSpec &spec);

/// humming.repack (RepackKernel.cpp): one weight-side tensor of every
/// expert from the canonical layout (input slot) into the prepared one
/// (output slot) that layout::prepareMmaSync writes on the host, bit for
/// bit; M the experts (1 for a dense layer). A grid-stride loop over the
/// items of every expert (repackItems each), one item per thread and
/// step: for the weights one lane of one (k-tile, n-tile) — its `bits`
/// words, every plane's, from the 32 codes it holds —, for scales, float
/// zero points and bias one element, for integer zero points one word.
struct RepackKernelSpec {
  ::humming::WeightOperand operand = ::humming::WeightOperand::Weight;
  /// Padded sizes of one expert and the groups along K.
  int64_t n = 0, k = 0, groups = 1;
  /// Bits of a weight code (and of a canonical integer zero point).
  unsigned bits = 4;
  /// Signed integer codes: stored in offset binary (top bit flipped).
  bool flip = false;
  /// The activations' bits (16, 8 or 4: layout::preparedRow).
  unsigned activationBits = 16;
  /// Bits of one element of scales, float zero points and bias.
  unsigned elementBits = 16;
  /// Zero points: integer codes (else floats).
  bool intZeroPoints = false;
  /// Columns that share a row of the source scales: block scales' n size
  /// (each prepared column takes its block row's scales), else 1.
  int64_t scaleRowColumns = 1;
  /// The weights' tile order (layout::tileOrder) and, K-major, the xor of
  /// each code byte (layout::kMajorXor).
  ::humming::layout::TileOrder order = ::humming::layout::TileOrder::Fragments;
  uint32_t kMajorXor = 0;
};
/// Items of one expert (block_n of the kernel table).
int64_t repackItems(const RepackKernelSpec &spec);
/// Elements of the source and of the dest tensor per expert.
int64_t repackSourceElements(const RepackKernelSpec &spec);
int64_t repackDestElements(const RepackKernelSpec &spec);
gpu::GPUFuncOp buildRepackKernel(OpBuilder &builder, Location loc,
                                 gpu::GPUModuleOp module, StringRef name,
                                 const RepackKernelSpec &spec);

} // namespace mlir::humming

#endif // HUMMING_LIB_CONVERSION_HUMMINGTONVVM_KERNELS_H
