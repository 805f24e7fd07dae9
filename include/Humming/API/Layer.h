//===- Layer.h - A quantized linear layer, ready to run ---------*- C++ -*-===//
//
// The C++ entry point for inference engines: describe a dense layer (shape
// and schemas), give it weights (canonical tensors, or float weights to
// quantize), transform it for a target (the weights are prepared for the
// chip and every kernel the heuristics choose is compiled or loaded from the
// kernel cache), then call forward() with device pointers. forward() neither
// allocates nor synchronizes, so it can be captured in a CUDA graph.
//
//   auto layer = humming::Layer::create(4096, 4096, weightSchema, inputSchema);
//   layer->quantize(weights);            // or loadQuantized(tensors)
//   layer->transform({"H200"});          // prepare + compile + upload
//   layer->forward(stream, x, y, m);     // y[m, N] = x[m, K] * W^T
//
// No MLIR type appears here: the C API and the Python package sit on top.
//
//===----------------------------------------------------------------------===//

#ifndef HUMMING_API_LAYER_H
#define HUMMING_API_LAYER_H
#include "Humming/API/FirstUseProbe.h"

#include "Humming/Quant/Adapters.h"
#include "Humming/Quant/PreparedLayout.h"
#include "Humming/Quant/Quantize.h"
#include "Humming/Quant/Result.h"
#include "Humming/Quant/Schema.h"
#include "Humming/Target/KernelABI.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace humming {

/// Where a layer runs: a known device ("H200", whose chip and facts choose
/// the tiles) or a bare chip ("sm_90a", with its representative device).
struct LayerTarget {
  std::string device;
  std::string chip;
  /// Compile only: no CUDA device is opened, nothing is uploaded, and
  /// forward() is refused (warming the kernel cache, checking a layer).
  bool compileOnly = false;
  /// A `#humming.tile_config<...>` that replaces the device heuristics for
  /// every M (tuning, as humming-select-tiles' force-tile-config; one that
  /// splits K across CTAs serves its bounded range and the same tile without
  /// the split the rest). Prepared layouts only. Empty: the heuristics.
  std::string tileConfig = {};
  /// The general kernel over canonical weights even where the prepared
  /// layout holds the layer (checking and debugging the fast path).
  bool canonicalLayout = false;
  /// Programmatic dependent launch (sm_90 and later): forward() launches
  /// the kernels that support it (KernelLaunch::gridDependency) so that they
  /// start while the previous kernel on the stream finishes, copying their
  /// first weights and scales before they wait for it. The layer's weights
  /// must then not be written by the kernel just before a forward on the
  /// same stream (they never are by Humming). The environment variable
  /// HUMMING_PDL=0 turns it off for every layer (1 or unset: this field);
  /// drivers before CUDA 12.3 get ordinary launches.
  bool dependentLaunch = true;
  /// Layers of 8-bit activations scaled per token: forward() then takes
  /// 16-bit activations (the layer's output type) of up to this many rows
  /// and quantizes them itself (humming::ActivationQuantizer, compiled with
  /// the layer, into code and scale buffers of that many rows in its
  /// per-stream scratch). 0: forward() refuses 16-bit activations for such
  /// layers.
  int64_t activationRows = 0;
  /// A layer may be called from several streams at once: what one call
  /// writes and reads back (the split-K workspace of decode kernels, the
  /// codes of activationRows) lives in a block of device memory per stream
  /// (rt::StreamScratch), made at the stream's first call. A stream whose
  /// first call is made while it captures a CUDA graph cannot allocate:
  /// it takes one of the `streams` blocks made here, and with none left
  /// the call fails and says so. The default covers one eager stream and
  /// one capture stream. Layers that need no scratch make none.
  int64_t streams = 2;
  /// Layers whose K is permuted (act-order checkpoints,
  /// Layer::setInputPermutation): true says the caller gathers the
  /// activations' columns, x[:, inputPermutation()], before forward().
  /// False (the default): a layer of 16-bit activations gathers them
  /// itself, with a kernel compiled here (humming.gather_columns), into a
  /// scratch buffer forwardGathering() takes; transform() refuses other
  /// act-order layers (8-bit activations, MoE) rather than let them compute
  /// with ungathered activations.
  bool activationsGathered = false;
  /// Whether transform() checks the kernels on this GPU against a simpler
  /// kernel family before it keeps them (FirstUseProbe.h; Auto: on chips
  /// the GPU suite has not run on; HUMMING_PROBE replaces it when set).
  FirstUseProbe probe = FirstUseProbe::Auto;
};

/// How Layer::fromCheckpoint loads a layer: rank `rank` of `size` along
/// `parallel` (column: N, row: K) and whose activations.
struct CheckpointLoad {
  TensorParallel parallel = TensorParallel::Column;
  int64_t rank = 0, size = 1;
  /// The checkpoint's own 8- or 4-bit activations (FP8 / W8A8 / W4A8
  /// checkpoints with per-token scales) instead of the model's 16-bit type.
  bool checkpointActivations = false;
};

/// How the last transform() got its kernels.
struct TransformStats {
  int compiled = 0; ///< kernels made by the pipeline and the compiler
  int cached = 0;   ///< kernels read from the kernel cache (memory or disk)
  /// Wall seconds to get every kernel's image (pipeline and compiler, or
  /// the cache) and load it into the device's context.
  double kernelSeconds = 0;
  /// Wall seconds of the slowest kernel alone (each kernel is made on its
  /// own thread: the cold JIT cost of one kernel on one core).
  double slowestKernelSeconds = 0;
  /// Wall seconds to prepare the weights for the chip and upload them.
  double weightSeconds = 0;
  /// The compiler's reports of lost performance for this layer's kernels,
  /// "kernel <i>: <line>" per kernel and line (ptxas' "Potential
  /// Performance Loss", e.g. nvJitLink ignoring the warp-specialized
  /// kernels' setmaxnreg); kept with cached kernels too.
  std::vector<std::string> compilerReports;
  /// What the first-use probe (FirstUseProbe.h) found: the kernels it
  /// compared, at which M, how far apart, and what the layer kept; or why
  /// it did not run. Empty for a compile-only transform.
  std::string probe;
};

/// A mixture-of-experts GEMM (Layer::createMoe): how its rows reach the
/// experts. Each expert's weights are a dense layer's; the tiles are chosen
/// for the tokens per expert (abi::moeRowsPerExpert).
struct MoeOptions {
  /// indexed (vLLM's moe_align_block_size layout: rows gathered from the
  /// tokens, outputs [M * top_k, N]), grouped_contiguous (rows sorted by
  /// expert, offsets [E + 1]) or grouped_masked ([E * max_tokens, K] rows,
  /// counts [E]).
  GemmType routing = GemmType::Indexed;
  /// indexed: experts per token.
  int64_t topK = 1;
  /// indexed: sorted_ids pad each expert's ids to a multiple of the
  /// routing's block_size (vLLM's moe_align_block_size, MoeRouter). Fixed
  /// (a multiple of 16 up to 1024): the kernels' block_m divides it and
  /// every call may route with it. 0: chosen per M, as vLLM's fused-MoE
  /// configurations do — the tiles are free up to 128 rows and each call
  /// routes with moeBlockSize(M) (the block_m of M's kernel, at least 16),
  /// so decode pads each expert to 16 rows and prefill uses 64- and
  /// 128-row tiles.
  int64_t blockSize = 0;
  /// forwardMoe multiplies each output row by its f32 router weight (the
  /// down projection of a MoE block).
  bool routerWeights = false;
  /// grouped_masked without counts: every expert has all of its max_tokens
  /// rows (a batch of E matmuls, one weight matrix per batch element, as
  /// humming-raise-quantized-matmul raises a batch matmul);
  /// MoeRouting::expertLayout stays 0.
  bool allRows = false;
};

/// The routing of one forwardMoe call: device pointers, 4-byte aligned.
struct MoeRouting {
  /// indexed: sorted_ids [sortedLength] i32, expert_ids
  /// [ceil(sortedLength / blockSize)] i32, num_tokens_padded [1] i32.
  uint64_t sortedIds = 0, expertIds = 0, numTokensPadded = 0;
  int64_t sortedLength = 0;
  /// indexed: the block_size sorted_ids were aligned with, a multiple of
  /// the block_m of M's kernel (Layer::moeBlockSize(M) is the smallest);
  /// 0: MoeOptions::blockSize.
  int64_t blockSize = 0;
  /// grouped_contiguous: offsets [E + 1] i32; grouped_masked: counts [E]
  /// i32 (none with MoeOptions::allRows).
  uint64_t expertLayout = 0;
  /// MoeOptions::routerWeights: f32 per output row.
  uint64_t routerWeights = 0;
};

class Layer {
public:
  /// A layer of logical sizes n x k; the schemas are checked (each rule's
  /// message says what was expected and what was found). Activations are
  /// f16 / bf16 (forward()) or f8E4M3FN / f8E5M2 / si8 codes with per-token
  /// or static f32 scales (forwardQuantized(); prepared weights: wgmma on
  /// sm_90a, mma.sync m16n8k32 from sm_80 for si8 and sm_89 for fp8).
  /// `output` is the output's type (and the bias's, and for 16-bit
  /// activations their type too). Sizes the kernels cannot take as they
  /// are (N not a multiple of 64, K not one of the k-tiles' or the groups')
  /// are padded by the layer itself where the schema asks for no padding
  /// (humming::kernelPadding; weightSchema() then has pad_n / pad_k).
  static Result<Layer> create(int64_t n, int64_t k, const WeightSchema &weight,
                              const InputSchema &input,
                              const ComputeOptions &compute = {},
                              ScalarType output = ScalarType::f16());
  /// A mixture-of-experts GEMM of E = weight.experts experts, each n x k:
  /// weights [E, N, K] (quantize(), loadQuantized() with [E, ...] tensors),
  /// run by forwardMoe() over prepared weights (transform() refuses the
  /// canonical layout).
  static Result<Layer> createMoe(int64_t n, int64_t k,
                                 const WeightSchema &weight,
                                 const InputSchema &input,
                                 const MoeOptions &moe,
                                 const ComputeOptions &compute = {},
                                 ScalarType output = ScalarType::f16());
  /// A checkpoint's layer `module` ("model.layers.0.mlp.down_proj"): its
  /// tensors converted to the canonical form (any format the adapters
  /// read; act-order keeps its permutation), rank `load.rank`'s shard of
  /// `load.size` under tensor parallelism, with the model's 16-bit
  /// activations or the checkpoint's own 8-/4-bit ones. Errors name the
  /// module and what does not fit (a shard that cuts a group, a row shard
  /// of an act-order layer, activations without a kernel).
  static Result<Layer> fromCheckpoint(const std::string &dir,
                                      const std::string &module,
                                      const CheckpointLoad &load = {});
  /// The same from a checkpoint already opened (a directory, or tensors a
  /// host holds: Checkpoint::fromParts).
  static Result<Layer> fromCheckpoint(const OpenedCheckpoint &opened,
                                      const std::string &module,
                                      const CheckpointLoad &load = {});
  /// The same from a module already converted (humming::loadLayer), the
  /// model's 16-bit type `model`.
  static Result<Layer> fromLoaded(LoadedLayer loaded, ScalarType model,
                                  const std::string &module,
                                  const CheckpointLoad &load = {});
  Layer(Layer &&) noexcept;
  Layer &operator=(Layer &&) noexcept;
  ~Layer();

  /// Act-order: the weights' column j is the checkpoint's input column
  /// perm[j] (LoadedLayer::kPermutation); forward() then needs x[:, perm]
  /// (LayerTarget::activationsGathered). A permutation of 0 .. K - 1, or
  /// empty (the natural order).
  Status setInputPermutation(std::vector<int32_t> perm);
  const std::vector<int32_t> &inputPermutation() const;
  /// Batch invariance (ComputeOptions::batchInvariant; the original's
  /// use_batch_invariant): one K decomposition for every M, so that a
  /// token's output row is bitwise the same whatever the batch holds
  /// besides it. Before transform() (a transformed layer must be
  /// transformed again); a MoE layer refuses it (its tiles follow the
  /// tokens per expert).
  Status setBatchInvariant(bool on);
  bool batchInvariant() const;
  /// Canonical-format tensors with the schema's padded shapes and dtypes
  /// (weightSchema()), or with the unpadded shapes of the layer's sizes,
  /// which it pads (padCanonicalTensors).
  Status loadQuantized(QuantizedWeights tensors);
  /// Quantizes float weights [N, K] (logical sizes) and, if the schema has
  /// one, a bias [N].
  Status quantize(const double *weights, const double *bias = nullptr);
  /// quantize() on the GPU: fp weights [E?, N, K] (logical sizes, row
  /// major) of `dtype` (F16, BF16 or F32) at device address `weights`,
  /// rounded by the weight quantization kernel (humming.quantize of
  /// weights) into exactly the tensors quantize() makes from those values.
  /// They stay on the device, where transform() repacks them without a
  /// round trip through the host, until canonicalWeights() brings them
  /// down (and frees the device's copy: until then the layer holds them
  /// on the device beside the prepared weights). `bias` (host, [E?, N]) as
  /// quantize() takes it. `target` names the device (the
  /// current one's chip). The kernel takes integer codes or float codes
  /// (e4m3, e5m2, e2m1) with f16, bf16, f32, e8m0, e4m3 or e5m2 group,
  /// group_tensor or channel scales (groups of 16 or a multiple of 32
  /// columns), with or without a global scale, one scale for the tensor,
  /// or f32 block scales whose blocks tile the padded K (MXFP4, NVFP4, FP8
  /// per tensor and per 128 x 128 block included): other schemas (zero
  /// points with a global scale, groups of 16 in a padded K not a multiple
  /// of 32, blocks not tiling it) are an error that says to quantize on the
  /// host.
  Status quantizeOnDevice(const LayerTarget &target, uint64_t weights,
                          DType dtype, const double *bias = nullptr);
  /// The canonical tensors the layer holds (padded shapes; what
  /// loadQuantized took or quantize made), null before either. They stay
  /// on the host after transform(), for a later transform to another
  /// device and for callers that save them (a torch state_dict). Those a
  /// device quantization left on the device are downloaded here (null if
  /// that fails: canonicalTensors() says why) — a change of the layer,
  /// like any other call: not concurrently with other calls on it.
  const QuantizedWeights *canonicalWeights() const;
  /// canonicalWeights() with the download's error.
  Result<const QuantizedWeights *> canonicalTensors() const;
  /// The weight-side tensors as the kernels read them, downloaded from the
  /// device (a transformed layer, not compile-only): the prepared layout's
  /// shapes where the layer uses it (what layout::prepareMmaSync makes on
  /// the host; the device makes them by default, HUMMING_PREPARE), else
  /// the canonical ones. For tests and for saving a prepared layer.
  Result<QuantizedWeights> deviceWeights() const;

  /// Prepares the weights for `target` (the prepared mma_sync layout where
  /// it holds the schema, else the canonical one; 8-bit activations need
  /// the prepared layout and a chip with their k32 MMA: sm_80 for si8,
  /// sm_89 for fp8), compiles every kernel
  /// (one pipeline run per M-range kernel on its own thread: PTX in process,
  /// then $HUMMING_COMPILER through the kernel cache) and,
  /// unless compileOnly, uploads the weights and loads the kernels on the
  /// current CUDA device, which must be the target's chip. On a chip the
  /// GPU suite has not run on, the kernels are then checked on the GPU
  /// against a simpler family and replaced by it where they disagree
  /// (LayerTarget::probe, FirstUseProbe.h; transformStats().probe says
  /// what was found); an error, and no kernels, where no two families
  /// agree.
  Status transform(const LayerTarget &target);

  /// Runs y[m, N] = x[m, K] * W^T (+ bias) on `stream` (a CUstream; null is
  /// the legacy default stream). `input` and `output` are device pointers
  /// (16- and 4-byte aligned). Nothing is allocated or synchronized; launch
  /// errors are returned. Refused before transform() and after a
  /// compile-only one. m = 0 launches nothing. Calls on one layer must not
  /// run concurrently (use one stream, or order the streams): the small-M
  /// kernels that split K across CTAs share a workspace per loaded layer.
  Status forward(void *stream, uint64_t input, uint64_t output,
                 int64_t m) const;
  /// forward() of an act-order layer that gathers its activations
  /// (LayerTarget::activationsGathered false): x's columns into `scratch`
  /// (m x K 16-bit elements of device memory the caller owns, 16-byte
  /// aligned, apart from `input`) by one kernel, then the GEMM on them,
  /// launched as its programmatic dependent where the layer uses those
  /// (it copies its weights while the gather runs). Nothing is allocated.
  Status forwardGathering(void *stream, uint64_t input, uint64_t scratch,
                          uint64_t output, int64_t m) const;
  /// (A layer of 8-bit activations transformed with
  /// LayerTarget::activationRows takes 16-bit `input` here too: it
  /// quantizes the m <= activationRows rows, then multiplies.)
  /// The same for a layer of 8-bit activations (f8E4M3FN, f8E5M2, si8):
  /// `codes` [m, activationK()] one byte each (16-byte aligned; where K is
  /// not a multiple of 16 the codes past K must be zero, as the layer's own
  /// quantizer and ActivationQuantizer::create(..., k, activationK())
  /// write them), `scales` their f32 scales
  /// ([m] per token, [1] static; 4-byte aligned; unused without scaling),
  /// as humming::ActivationQuantizer writes them.
  Status forwardQuantized(void *stream, uint64_t codes, uint64_t scales,
                          uint64_t output, int64_t m) const;

  /// A MoE layer's GEMM over `m` activation rows (indexed: tokens;
  /// grouped: rows of `input`) routed by `routing`: output rows as
  /// MoeOptions::routing says (indexed [m * top_k, N]); rows no expert
  /// takes are not written. 16-bit activations, or 8-bit codes with
  /// `inputScale` (their f32 scales; a layer transformed with
  /// LayerTarget::activationRows quantizes 16-bit ones itself, as
  /// forward() does). Nothing is allocated or synchronized.
  Status forwardMoe(void *stream, uint64_t input, uint64_t output, int64_t m,
                    const MoeRouting &routing, uint64_t inputScale = 0) const;
  /// The MoE options (null for a dense layer).
  const MoeOptions *moe() const;
  /// An indexed MoE layer's block_size to route `m` tokens with: the fixed
  /// MoeOptions::blockSize, else the block_m of m's kernel (at least 16);
  /// 0 before transform() or for other layers.
  int64_t moeBlockSize(int64_t m) const;

  int64_t n() const;
  int64_t k() const;
  /// The width of the activation rows the GEMM reads: K, or for 8- and
  /// 4-bit activations K rounded up to 16 bytes of codes (dense layers
  /// without a permutation; MoE and act-order layers refuse such a K),
  /// the codes past K zero. forwardQuantized() takes codes of this width.
  int64_t activationK() const;
  const WeightSchema &weightSchema() const;
  const InputSchema &inputSchema() const;
  ScalarType outputType() const;
  /// After transform: whether the weights use the prepared (fast) layout.
  bool prepared() const;
  /// After transform: the order of the prepared weights' tiles
  /// (layout::tileOrder of the schema on the chip; Fragments when not
  /// prepared).
  layout::TileOrder tileOrder() const;
  /// Whether forward() launches the kernels that support it as programmatic
  /// dependent launches (LayerTarget::dependentLaunch, HUMMING_PDL, a CUDA
  /// 12.3 driver); false before transform() and when compile-only.
  bool dependentLaunch() const;
  /// After transform: the kernels, one per M range.
  const std::vector<abi::KernelLaunch> &kernels() const;
  const TransformStats &transformStats() const;
  /// After transform: the PTX of the kernels (one module per M-range kernel,
  /// each compiled by its own pipeline run, in parallel; concatenated).
  const std::string &ptx() const;
  /// The same modules one by one (module i holds kernel i; the other
  /// kernels are empty stubs there), each a complete PTX file for ptxas.
  const std::vector<std::string> &modulePtx() const;

private:
  struct Impl;
  explicit Layer(std::unique_ptr<Impl> impl);
  /// transform() before its first-use probe.
  Status transformKernels(const LayerTarget &target);
  /// transform()'s first-use probe (LayerProbe.cpp): runs the kernels just
  /// transformed beside a reference family and keeps them, transforms the
  /// layer again for the fallback, or fails; a decision made before (in
  /// this process, or recorded in the kernel cache) is applied as it is.
  Status probeKernels(const LayerTarget &target);
  /// The probe against `ref` on the GPU and the vote after a disagreement
  /// (a decision not `probed` where no comparison could be made).
  Result<probe::Decision> probeDecision(const LayerTarget &target,
                                        const probe::Reference &ref,
                                        bool forceMismatch);
  /// Keeps the kernels, or transforms the layer again for the family `d`
  /// names, and records `d` in transformStats().probe.
  Status applyProbeDecision(const LayerTarget &target,
                            const probe::Reference &ref,
                            const probe::Decision &d);
  /// A layer of the same shape, schemas and canonical weights, not
  /// transformed (the probe's reference).
  Result<Layer> sameWeights() const;
  /// forward / forwardQuantized after their own checks.
  Status launch(void *stream, uint64_t input, uint64_t inputScale,
                uint64_t output, int64_t m,
                const MoeRouting *routing = nullptr) const;
  /// 16-bit activations for a layer of 8-bit ones (LayerTarget::
  /// activationRows): its quantizer, then launch.
  Status quantizeAndLaunch(void *stream, uint64_t input, uint64_t output,
                           int64_t m, const MoeRouting *routing) const;
  std::unique_ptr<Impl> impl_;
};

/// The process's kernel compiler (every layer's transform uses it), as
/// "<name> (<version>)": e.g. "nvjitlink+ptxas (nvJitLink 13.0 / ptxas
/// 13.0.88)" for the default that sends the setmaxnreg kernels to ptxas.
/// Kernel speed depends on it, so benchmarks record it. An error where
/// none could be chosen (HUMMING_COMPILER names one that is absent).
Result<std::string> jitCompiler();

} // namespace humming

#endif // HUMMING_API_LAYER_H
