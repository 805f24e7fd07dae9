//===- Pipelines.h - The named humming compile pipeline ---------*- C++ -*-===//
//
// `humming-compile-pipeline` is the one pipeline lit, humming-opt,
// humming-translate and the runtime's JIT run: humming-legalize-schema,
// humming-select-tiles, humming-lower-to-nvvm, the GPU-to-NVVM conversion,
// humming-kernel-params, then NVVM -> PTX (in process, through LLVM's NVPTX
// backend) inside a gpu.binary.
//
//===----------------------------------------------------------------------===//

#ifndef HUMMING_PIPELINES_PIPELINES_H
#define HUMMING_PIPELINES_PIPELINES_H

#include "Humming/Quant/Result.h"
#include "Humming/Quant/Schema.h"
#include "Humming/Target/KernelABI.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

#include <string>

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace mlir::humming {

struct CompilePipelineOptions
    : public PassPipelineOptions<CompilePipelineOptions> {
  PassOptions::Option<std::string> chip{
      *this, "chip", llvm::cl::desc("Target chip, e.g. sm_90a"),
      llvm::cl::init("sm_80")};
  PassOptions::Option<unsigned> ptxVersion{
      *this, "ptx-version",
      llvm::cl::desc("PTX ISA version x10 (0: the chip's minimum)"),
      llvm::cl::init(0)};
  PassOptions::Option<std::string> device{
      *this, "device",
      llvm::cl::desc("Known device whose facts choose the tiles (default: "
                     "the module's humming.target, else the chip's "
                     "representative device)"),
      llvm::cl::init("")};
  PassOptions::Option<std::string> forceTileConfig{
      *this, "force-tile-config",
      llvm::cl::desc("A #humming.tile_config every prepared GEMM uses for "
                     "every M instead of the heuristics"),
      llvm::cl::init("")};
  PassOptions::Option<unsigned> optLevel{
      *this, "opt-level", llvm::cl::desc("LLVM optimisation level (0-3)"),
      llvm::cl::init(3)};
  PassOptions::Option<int> onlyKernel{
      *this, "only-kernel",
      llvm::cl::desc("Generate only prepared kernel #i (the others are empty "
                     "stubs): one pipeline run per kernel, in parallel"),
      llvm::cl::init(-1)};
};

/// Appends the pipeline to `pm` (anchored on builtin.module).
void buildHummingCompilePipeline(OpPassManager &pm,
                                 const CompilePipelineOptions &options);

/// Appends the pipeline's humming passes alone (legalize-schema,
/// select-tiles, lower-to-nvvm) with the options the pipeline gives them:
/// its first part, which tools/humming-contract runs without NVPTX.
void buildHummingLoweringPasses(OpPassManager &pm,
                                const CompilePipelineOptions &options);

/// Registers `humming-compile-pipeline` (idempotent).
void registerHummingPipelines();

/// Adds what the pipeline needs besides the dialects: LLVM IR translations
/// and the NVVM target serializer.
void registerHummingCodegenExtensions(DialectRegistry &registry);

/// Runs the pipeline on `module`; its diagnostics go to the context's
/// handlers (a tool's SourceMgrDiagnosticHandler prints them as
/// `file:line:col: error: ...` with the source line). A module that names
/// its target (humming.target) also names the PTX version when
/// `ptxVersion` is 0.
LogicalResult runCompilePipeline(ModuleOp module, const std::string &chip,
                                 unsigned ptxVersion = 0, unsigned optLevel = 3,
                                 const std::string &device = "",
                                 const std::string &forceTileConfig = "",
                                 int onlyKernel = -1);

/// The PTX of the kernels a compiled module holds ("" when none).
std::string collectPtx(ModuleOp module);
/// The error where it holds none (compileToPtx, humming-translate).
inline constexpr const char *kNoKernelsToCompile =
    "the module has no kernels to compile (expected a humming op: gemm, "
    "moe_gemm, quantize ...; a frontend's dequantize-then-matmul is raised "
    "to one by humming-opt --humming-raise-quantized-matmul first)";

/// runCompilePipeline, then collectPtx, for callers without a diagnostic
/// handler of their own (the JIT): errors are the pipeline's diagnostics,
/// one line each, as "<location>: <message>".
::humming::Result<std::string> compileToPtx(ModuleOp module,
                                            const std::string &chip,
                                            unsigned ptxVersion = 0,
                                            unsigned optLevel = 3,
                                            const std::string &device = "",
                                            const std::string &forceTileConfig = "",
                                            int onlyKernel = -1);

/// A dense layer as the JIT compiles it.
struct LayerSpec {
  ::humming::WeightSchema weight; ///< canonical format
  ::humming::InputSchema input;
  ::humming::ComputeOptions compute;
  ::humming::ScalarType output = ::humming::ScalarType::f16();
  int64_t n = 0, k = 0; ///< logical sizes
  /// Weights in the prepared mma_sync layout for `chip` (else canonical).
  bool prepared = false;
  std::string chip;
  /// A MoE GEMM (weight.experts > 0): humming.moe_gemm with this routing,
  /// top_k, block_size and router weights (Layer.h MoeOptions).
  ::humming::GemmType moeRouting = ::humming::GemmType::Dense;
  int64_t topK = 1, blockSize = 0;
  bool routerWeights = false;
  /// grouped_masked without counts (MoeOptions::allRows): no expert_layout.
  bool allRows = false;
};

/// The layer as humming IR: func @layer(input, weight, scales?,
/// zero_points?, global_scale?, bias?, output) { humming.gemm }, operands in
/// that order (the kernel ABI's). Errors say why it does not verify.
::humming::Result<OwningOpRef<ModuleOp>> buildLayerModule(MLIRContext &ctx,
                                                          const LayerSpec &spec);

/// Activation quantization as the JIT compiles it: func @quantize(source
/// [?, k], codes [?, k], scales) { humming.quantize } (the scales' shape
/// from the schema: [?, 1], [?, k / g] or [1]). Errors say why it does not
/// verify.
/// MoE routing as the JIT compiles it: func @route(topk_ids [?, top_k],
/// sorted_ids [?], expert_ids [?], num_tokens_padded [1]) {
/// humming.moe_align }.
struct MoeAlignSpec {
  int64_t experts = 0, topK = 1, blockSize = 64;
};
::humming::Result<OwningOpRef<ModuleOp>>
buildMoeAlignModule(MLIRContext &ctx, const MoeAlignSpec &spec);

/// Grouped MoE routing as the JIT compiles it: func @group(topk_ids [?,
/// top_k], positions [?], expert_layout [E + 1] (maxTokens 0:
/// grouped_contiguous) or [E] (grouped_masked)) { humming.moe_group }.
struct MoeGroupSpec {
  int64_t experts = 0, topK = 1, maxTokens = 0;
};
::humming::Result<OwningOpRef<ModuleOp>>
buildMoeGroupModule(MLIRContext &ctx, const MoeGroupSpec &spec);

/// Row moves by a grouped routing's positions as the JIT compiles them:
/// func @permute(input [?, words] i32, positions [?], output [?, words]
/// i32) { humming.moe_permute } (a scatter with top_k, or a gather).
struct MoePermuteSpec {
  int64_t words = 1, topK = 1;
  bool gather = false;
};
::humming::Result<OwningOpRef<ModuleOp>>
buildMoePermuteModule(MLIRContext &ctx, const MoePermuteSpec &spec);

/// An act-order layer's activation gather as the JIT compiles it: func
/// @gather(input [?, columns], columns [columns] i32, output [?, columns])
/// { humming.gather_columns } over `type` (f16, bf16 or an 8-bit code).
struct GatherColumnsSpec {
  int64_t columns = 0;
  ::humming::ScalarType type = ::humming::ScalarType::f16();
};
::humming::Result<OwningOpRef<ModuleOp>>
buildGatherColumnsModule(MLIRContext &ctx, const GatherColumnsSpec &spec);

/// Weight preparation on the device as the JIT compiles it: func
/// @repack(source_0, dest_0, source_1, dest_1, ...) with one humming.repack
/// per operand (canonical -> prepared layout for activations `input` on
/// `chip`; `n` and `k` the logical sizes). Float zero points and bias are
/// in `element` (the layer's output type).
struct RepackSpec {
  ::humming::WeightSchema weight;
  ::humming::InputSchema input;
  int64_t n = 0, k = 0;
  std::string chip;
  ::humming::ScalarType element = ::humming::ScalarType::f16();
  std::vector<::humming::WeightOperand> operands;
};
::humming::Result<OwningOpRef<ModuleOp>>
buildRepackModule(MLIRContext &ctx, const RepackSpec &spec);

/// Weight quantization on the device as the JIT compiles it: func
/// @quantize(source [E?, n, k] of `source`, codes, scales, zero points?)
/// { humming.quantize } into `weight`'s canonical tensors (float zero
/// points in `zeroPointType`).
struct WeightQuantizeSpec {
  ::humming::WeightSchema weight;
  ::humming::ScalarType source = ::humming::ScalarType::f32();
  int64_t n = 0, k = 0;
  ::humming::ScalarType zeroPointType = ::humming::ScalarType::f16();
};
::humming::Result<OwningOpRef<ModuleOp>>
buildWeightQuantizeModule(MLIRContext &ctx, const WeightQuantizeSpec &spec);

/// humming.silu_and_mul (kind abi::kSiluAndMulKernel) or humming.moe_sum
/// (abi::kMoeSumKernel) as the JIT compiles it: func @elementwise(input,
/// output) over `type` (f16 or bf16) with `columns` output columns.
struct ElementwiseSpec {
  int64_t kind = 0;
  int64_t columns = 0, topK = 1;
  ::humming::ScalarType type = ::humming::ScalarType::f16();
  /// silu_and_mul's gated variant (the op's alpha, up_offset, limit; 1, 0,
  /// 0: plain SiLU, no clamp).
  double alpha = 1.0, upOffset = 0.0, limit = 0.0;
};
::humming::Result<OwningOpRef<ModuleOp>>
buildElementwiseModule(MLIRContext &ctx, const ElementwiseSpec &spec);

struct QuantizeSpec {
  ::humming::InputSchema input;
  ::humming::ScalarType source = ::humming::ScalarType::f16();
  int64_t k = 0;
  /// Codes per row (>= k; 0: k): those past k are the code of zero.
  int64_t codesK = 0;
};
::humming::Result<OwningOpRef<ModuleOp>>
buildQuantizeModule(MLIRContext &ctx, const QuantizeSpec &spec);

/// The kernel table humming-lower-to-nvvm recorded on `module` (empty when
/// it holds no lowered layer).
std::vector<::humming::abi::KernelLaunch> kernelTable(ModuleOp module);

} // namespace mlir::humming

#endif // HUMMING_PIPELINES_PIPELINES_H
