//===- Layer.cpp - A quantized linear layer, ready to run -----------------===//

#include "Humming/API/Layer.h"
#include "Humming/API/ActivationQuantizer.h"
#include "Jit.h"

#include "Humming/Dialect/Humming/IR/HummingDialect.h"
#include "Humming/Pipelines/Pipelines.h"
#include "Humming/Quant/Adapters.h"
#include "Humming/Quant/PreparedLayout.h"
#include "Humming/Registration.h"
#include "Humming/Runtime/Compiler.h"
#include "Humming/Runtime/CudaDriver.h"
#include "Humming/Runtime/KernelCache.h"
#include "Humming/Runtime/StreamScratch.h"
#include "Humming/Target/ArchInfo.h"
#include "Humming/Target/TileHeuristics.h"

#include "Humming/Dialect/Humming/IR/HummingAttrs.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/Threading.h"

#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <mutex>
#include <optional>

namespace humming {
namespace mh = mlir::humming;

namespace {
using Clock = std::chrono::steady_clock;
/// Seconds from `t` to now.
double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}
} // namespace

detail::JitState &detail::jit() {
  static JitState state;
  static std::once_flag once;
  std::call_once(once, [] {
    Result<std::unique_ptr<rt::KernelCompiler>> c = rt::selectCompiler();
    if (c)
      state.compiler = c.take();
    else
      state.compilerError = c.error();
    state.cache = std::make_unique<rt::KernelCache>();
  });
  return state;
}

Result<Chip> detail::targetChip(const LayerTarget &target) {
  std::string chipName = target.chip;
  if (!target.device.empty()) {
    const DeviceInfo *known = lookupDevice(target.device);
    if (!known)
      return Error{concat("expected a device among ", knownDeviceNames(),
                          ", got '", target.device, "'")};
    if (chipName.empty())
      chipName = known->chip;
  }
  if (chipName.empty())
    return Error{"expected a target device or chip"};
  std::optional<Chip> chip = Chip::parse(chipName);
  if (!chip)
    return Error{concat("expected a chip among ", knownChipNames(), ", got '",
                        chipName, "'")};
  return *chip;
}

Result<const rt::CudaDriver *> detail::deviceFor(const Chip &chip,
                                                 const LayerTarget &target,
                                                 const char *what) {
  if (target.compileOnly)
    return static_cast<const rt::CudaDriver *>(nullptr);
  Result<const rt::CudaDriver *> d = rt::CudaDriver::get();
  if (!d)
    return d;
  Result<rt::Device> dev = rt::openDevice(**d);
  if (!dev)
    return Error{dev.error()};
  int sm = dev->major * 10 + dev->minor;
  if (sm != int(chip.sm))
    return Error{concat(what, " is transformed for ", chip.str(),
                        " but the current device is ", dev->name, " (sm_", sm,
                        "); expected a target for that device")};
  return *d;
}

Result<rt::KernelCache::Lookup> detail::cachedImage(
    JitState &j, const Chip &chip, const std::string &description,
    const std::function<Result<mlir::OwningOpRef<mlir::ModuleOp>>(
        mlir::MLIRContext &)> &build,
    const PtxOptions &options) {
  rt::CacheKey key{concat(rt::hummingVersion(), " (", rt::buildIdentity(), ")"),
                   LLVM_VERSION_STRING, j.compiler->name(),
                   j.compiler->version(), chip.str(), description, ""};
  return j.cache->getArtifact(key, [&]() -> Result<rt::CachedArtifact> {
    // HUMMING_LOG=info: where a cold compile's time goes (the cache logs
    // it with the total).
    const auto started = Clock::now();
    mlir::DialectRegistry registry;
    mh::registerHummingDialects(registry);
    mlir::MLIRContext ctx(registry, mlir::MLIRContext::Threading::DISABLED);
    ctx.loadAllAvailableDialects();
    Result<mlir::OwningOpRef<mlir::ModuleOp>> module = build(ctx);
    if (!module)
      return Error{module.error()};
    const double built = since(started);
    const auto lowering = Clock::now();
    Result<std::string> ptx = mh::compileToPtx(
        **module, chip.str(), options.ptxVersion, 3, options.device,
        options.tileConfig, options.onlyKernel);
    if (!ptx)
      return Error{ptx.error()};
    const double lowered = since(lowering);
    const auto backend = Clock::now();
    Result<rt::CompiledKernel> kernel = j.compiler->compile(*ptx, chip.str());
    if (!kernel)
      return Error{kernel.error()};
    const double compiled = since(backend);
    return rt::CachedArtifact{
        kernel.take(), ptx.take(),
        abi::formatKernelTable(mh::kernelTable(**module)),
        concat("module ", built, " s, passes and NVPTX ", lowered, " s, ",
               j.compiler->name(), " ", compiled, " s")};
  });
}

Result<detail::ModuleKernels> detail::compileKernels(
    const LayerTarget &target, const char *what,
    const std::string &description, int64_t kind,
    const std::function<Result<mlir::OwningOpRef<mlir::ModuleOp>>(
        mlir::MLIRContext &)> &build) {
  Result<Chip> chip = targetChip(target);
  if (!chip)
    return Error{chip.error()};
  Result<const rt::CudaDriver *> live = deviceFor(*chip, target, what);
  if (!live)
    return Error{live.error()};
  JitState &j = jit();
  if (!j.compiler)
    return Error{j.compilerError};
  auto started = Clock::now();
  Result<rt::KernelCache::Lookup> image =
      cachedImage(j, *chip, description, build);
  if (!image)
    return Error{image.error()};
  Result<ModuleKernels> out = loadKernels(*image, *chip, *live, kind, what);
  if (out)
    out->stats.kernelSeconds = out->stats.slowestKernelSeconds =
        since(started);
  return out;
}

Result<detail::ModuleKernels>
detail::loadKernels(const rt::KernelCache::Lookup &image, const Chip &chip,
                    const rt::CudaDriver *driver, int64_t kind,
                    const char *what) {
  ModuleKernels out;
  if (!abi::parseKernelTable(image.artifact->metadata, out.kernels) ||
      out.kernels.empty() ||
      std::any_of(out.kernels.begin(), out.kernels.end(),
                  [&](const abi::KernelLaunch &l) { return l.kind != kind; }))
    return Error{concat("the kernel cache entry of ", what,
                        " holds no kernels of kind ", kind, " only (a bug)")};
  (image.source == rt::KernelCache::Source::Compiled ? out.stats.compiled
                                                     : out.stats.cached)++;
  if (driver) {
    Result<rt::Module> m = rt::Module::load(*driver, image.kernel->image);
    if (!m)
      return Error{m.error()};
    for (const abi::KernelLaunch &l : out.kernels) {
      Result<rt::CUfunction> f = m->function(l.name);
      if (!f)
        return Error{f.error()};
      out.functions.push_back(*f);
    }
    out.module = std::make_unique<rt::Module>(m.take());
  }
  out.ptx = image.artifact->ptx;
  out.chip = chip.str();
  out.driver = driver;
  return out;
}

Result<detail::SingleKernel> detail::compileSingleKernel(
    const LayerTarget &target, const char *what,
    const std::string &description, int64_t kind,
    const std::function<Result<mlir::OwningOpRef<mlir::ModuleOp>>(
        mlir::MLIRContext &)> &build) {
  Result<ModuleKernels> k =
      compileKernels(target, what, description, kind, build);
  if (!k)
    return Error{k.error()};
  if (k->kernels.size() != 1)
    return Error{concat("the kernel cache entry of ", what, " holds ",
                        k->kernels.size(), " kernels, expected one (a bug)")};
  SingleKernel out;
  out.kernel = k->kernels[0];
  out.ptx = std::move(k->ptx);
  out.chip = std::move(k->chip);
  out.stats = k->stats;
  out.driver = k->driver;
  out.module = std::move(k->module);
  out.function = k->functions.empty() ? nullptr : k->functions[0];
  return out;
}

namespace {
using detail::jit;
using detail::JitState;

/// Why a MoE layer is not batch-invariant (createMoe, setBatchInvariant).
constexpr const char *kMoeNotBatchInvariant =
    "expected batch_invariant = false in a MoE layer (its tiles follow the "
    "tokens per expert, so a token's K decomposition depends on the batch)";

/// A split_k kernel whose CTAs form a cluster (they read each other's
/// shared memory), or a multicast_a one whose pairs of CTAs along x do
/// (each copies half the activations into both): the loaded function must
/// ask the driver for that cluster shape, and the device must keep at
/// least one such cluster resident — a clear error here rather than a
/// failed launch in forward.
/// The resident count goes to the info log (the heuristics assume a wave
/// of clusters of four or eight holds half the SMs); a driver without the
/// query, or a query that fails, skips that part.
Status checkCluster(const rt::CudaDriver &driver, const abi::KernelLaunch &kl,
                    rt::CUfunction f) {
  int depth = 0, width = 0;
  for (auto [attr, out] : {std::pair{rt::kFuncAttrRequiredClusterDepth, &depth},
                           {rt::kFuncAttrRequiredClusterWidth, &width}})
    if (Status s = driver.check(driver.cuFuncGetAttribute(out, attr, f),
                                "cuFuncGetAttribute");
        !s)
      return s;
  if (std::string why = abi::clusterMismatch(kl, depth, width); !why.empty())
    return Error{why};
  if (!driver.cuOccupancyMaxActiveClusters)
    return Status::success();
  rt::LaunchConfig config;
  config.gridDimZ = unsigned(kl.cluster);
  config.gridDimX = unsigned(std::max<int64_t>(1, kl.clusterX));
  config.blockDimX = unsigned(kl.threads);
  config.sharedMemBytes = unsigned(kl.smemBytes);
  int clusters = -1;
  if (rt::CUresult r = driver.cuOccupancyMaxActiveClusters(&clusters, f, &config);
      r != 0) {
    rt::logInfo(concat("kernel ", kl.name, ": ",
                       driver.describe(r, "cuOccupancyMaxActiveClusters"),
                       "; cluster occupancy not checked"));
    return Status::success();
  }
  if (std::string why = abi::clusterCannotRun(kl, clusters); !why.empty())
    return Error{why};
  rt::logInfo(concat("kernel ", kl.name, ": at most ", clusters,
                     " clusters of ", kl.cluster, " CTAs resident (",
                     clusters * kl.cluster, " CTAs)"));
  return Status::success();
}

/// A cooperative kernel (cooperative_split: the CTAs of an output tile wait
/// for each other): forward() launches it with the cooperative attribute,
/// which needs cuLaunchKernelEx, and the largest grid of its M range must be
/// resident at once — refused here with what it needs, not hung or failed
/// in forward.
Status checkCooperative(const rt::CudaDriver &driver,
                        const abi::KernelLaunch &kl, rt::CUfunction f,
                        int64_t np) {
  if (std::string why = abi::cooperativeNeedsDriver(
          kl, driver.cuLaunchKernelEx != nullptr,
          driver.cuOccupancyMaxActiveBlocksPerMultiprocessor != nullptr);
      !why.empty())
    return Error{why};
  Result<rt::Device> dev = rt::openDevice(driver);
  if (!dev)
    return Error{dev.error()};
  int perSm = 0;
  if (Status s = driver.check(
          driver.cuOccupancyMaxActiveBlocksPerMultiprocessor(
              &perSm, f, int(kl.threads), size_t(kl.smemBytes)),
          "cuOccupancyMaxActiveBlocksPerMultiprocessor");
      !s)
    return s;
  if (std::string why = abi::cooperativeCannotRun(kl, np, perSm, dev->smCount);
      !why.empty())
    return Error{why};
  return Status::success();
}
} // namespace

struct Layer::Impl {
  int64_t n = 0, k = 0;
  /// The activation rows the GEMM reads (Layer::activationK): k, or for 8-
  /// and 4-bit activations k rounded up to 16 bytes of codes.
  int64_t kAct = 0;
  WeightSchema weight;
  /// The weight schema as the GEMM sees it: over rows of kAct activations,
  /// pad_k the rest of the padded K.
  WeightSchema gemmWeight() const {
    WeightSchema w = weight;
    w.padK -= kAct - k;
    return w;
  }
  InputSchema input;
  ComputeOptions compute;
  ScalarType output = ScalarType::f16();
  std::optional<QuantizedWeights> canonical;
  /// quantizeOnDevice(): the canonical weight, scales and zero points as
  /// its kernel wrote them, left on the device for transform()'s repack
  /// (no round trip through the host). `canonical` holds their shapes and
  /// dtypes with no data until canonicalToHost() brings them down and
  /// frees these.
  struct DeviceCanonical {
    const rt::CudaDriver *driver = nullptr;
    /// The context current when they were made (null where the driver
    /// cannot say): another device's transform reads them on the host.
    rt::CUcontext context = nullptr;
    std::vector<std::pair<WeightOperand, rt::DeviceBuffer>> buffers;
    const rt::DeviceBuffer *find(WeightOperand op) const {
      for (const auto &[o, b] : buffers)
        if (o == op)
          return &b;
      return nullptr;
    }
  };
  std::optional<DeviceCanonical> deviceCanonical;
  /// setInputPermutation (act-order): empty for the natural order.
  std::vector<int32_t> inputPermutation;
  /// createMoe: the routing of a MoE GEMM (weight.experts > 0).
  std::optional<MoeOptions> moe;

  // After transform.
  bool transformed = false, compileOnly = false, prepared = false;
  layout::TileOrder order = layout::TileOrder::Fragments;
  /// forward() launches kernels with gridDependency by
  /// cuLaunchKernelEx with programmatic stream serialization.
  bool dependentLaunch = false;
  /// The SMs of the device transform() found (0 without one): the grid of
  /// a persistent kernel (abi::KernelLaunch::persistent).
  int64_t smCount = 0;
  std::string chip, ptx;
  std::vector<std::string> modulePtx;
  std::vector<abi::KernelLaunch> kernels;
  TransformStats stats;
  const rt::CudaDriver *driver = nullptr;
  /// One loaded module per M-range kernel (or one for all).
  std::vector<rt::Module> modules;
  std::vector<rt::CUfunction> functions;
  /// Device copies of the weight-side tensors, by kernel parameter.
  std::vector<std::pair<abi::GemmParam, rt::DeviceBuffer>> buffers;
  std::array<rt::CUdeviceptr, abi::NumGemmParams> pointers{};
  /// LayerTarget::activationRows: the quantizer of 16-bit inputs (8-bit
  /// activations per token or group).
  std::optional<ActivationQuantizer> quantizer;
  int64_t activationRows = 0;
  /// What a call writes and reads back, one block per stream (so that
  /// calls on several streams at once never share it): the split-K
  /// workspace of the kernels that have one (KernelLaunch::workspace, at
  /// offset 0), then the quantizer's codes (rows of K bytes) and f32
  /// scales at these offsets. Null when compile-only.
  std::unique_ptr<rt::StreamScratch> scratch;
  size_t codesOffset = 0, scalesOffset = 0;
  /// The block of `stream` (0 where the layer needs none).
  Result<rt::CUdeviceptr> scratchFor(void *stream) const {
    if (!scratch)
      return rt::CUdeviceptr(0);
    return scratch->blockFor(static_cast<rt::CUstream>(stream), "the layer");
  }
  /// An act-order layer that gathers its activations itself
  /// (LayerTarget::activationsGathered false): the humming.gather_columns
  /// kernel, and the permutation on the device (not compile-only).
  std::optional<detail::SingleKernel> gather;
  std::optional<rt::DeviceBuffer> permutation;

  int64_t paddedN() const { return n + weight.padN; }
  int64_t paddedK() const { return k + weight.padK; }

  /// The canonical tensor of `op` (null where the layer has none).
  static Tensor *canonicalTensor(QuantizedWeights &w, WeightOperand op) {
    switch (op) {
    case WeightOperand::Weight:
      return &w.weight;
    case WeightOperand::Scales:
      return w.scales ? &*w.scales : nullptr;
    case WeightOperand::ZeroPoints:
      return w.zeroPoints ? &*w.zeroPoints : nullptr;
    case WeightOperand::GlobalScale:
      return w.globalScale ? &*w.globalScale : nullptr;
    case WeightOperand::Bias:
      return w.bias ? &*w.bias : nullptr;
    }
    return nullptr;
  }
  /// Brings the canonical tensors a device quantization left there to the
  /// host (and frees the device's copies); nothing when they are there.
  Status canonicalToHost() {
    if (!deviceCanonical)
      return Status::success();
    for (const auto &[op, buffer] : deviceCanonical->buffers) {
      Tensor *t = canonicalTensor(*canonical, op);
      if (!t)
        return Error{concat("the device holds a canonical ", toString(op),
                            " the layer has no tensor for (a bug)")};
      t->data.resize(storageBytes(t->dtype, t->numel()));
      if (t->data.size() != buffer.size())
        return Error{concat("the device's canonical ", toString(op),
                            " holds ", buffer.size(), " bytes, expected ",
                            t->data.size(), " (a bug)")};
      if (Status s = buffer.download(t->data.data(), t->data.size()); !s)
        return s;
    }
    deviceCanonical.reset();
    return Status::success();
  }
};

Layer::Layer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Layer::Layer(Layer &&) noexcept = default;
Layer &Layer::operator=(Layer &&) noexcept = default;
Layer::~Layer() = default;

int64_t Layer::n() const { return impl_->n; }
const WeightSchema &Layer::weightSchema() const { return impl_->weight; }
const InputSchema &Layer::inputSchema() const { return impl_->input; }
ScalarType Layer::outputType() const { return impl_->output; }
int64_t Layer::k() const { return impl_->k; }
int64_t Layer::activationK() const { return impl_->kAct; }
bool Layer::prepared() const { return impl_->prepared; }
layout::TileOrder Layer::tileOrder() const { return impl_->order; }
bool Layer::dependentLaunch() const { return impl_->dependentLaunch; }
const std::vector<abi::KernelLaunch> &Layer::kernels() const {
  return impl_->kernels;
}
const std::string &Layer::ptx() const { return impl_->ptx; }
const std::vector<std::string> &Layer::modulePtx() const {
  return impl_->modulePtx;
}
const TransformStats &Layer::transformStats() const { return impl_->stats; }
const MoeOptions *Layer::moe() const {
  return impl_->moe ? &*impl_->moe : nullptr;
}

namespace {
/// The block_size of the layer's humming.moe_gemm: the fixed one, or for a
/// routing that follows M a multiple of every MoE tile's block_m (the
/// tiles are free among them and each call passes its own).
int64_t moeOpBlockSize(const MoeOptions &moe) {
  if (moe.routing != GemmType::Indexed)
    return 0;
  return moe.blockSize ? moe.blockSize : kMoeFollowingBlockSize;
}
} // namespace

int64_t Layer::moeBlockSize(int64_t m) const {
  const Impl &l = *impl_;
  if (!l.moe || l.moe->routing != GemmType::Indexed)
    return 0;
  if (l.moe->blockSize)
    return l.moe->blockSize;
  const abi::KernelLaunch *kl =
      abi::moeKernelFor(l.kernels, std::max<int64_t>(m, 1));
  return kl ? 16 * ceilDiv(kl->blockM, 16) : 0;
}

Result<Layer> Layer::create(int64_t n, int64_t k, const WeightSchema &weight,
                            const InputSchema &input,
                            const ComputeOptions &compute, ScalarType output) {
  if (n <= 0 || k <= 0)
    return Error{concat("expected positive layer sizes, got N = ", n,
                        ", K = ", k)};
  if (weight.format != SourceFormat::Canonical)
    return Error{concat("expected a canonical weight schema, got format ",
                        toString(weight.format),
                        " (convert with humming::sourceToCanonical or the "
                        "checkpoint adapters)")};
  if (weight.experts > 0)
    return Error{concat("expected a dense layer (experts = 0), got ",
                        weight.experts,
                        " experts: create a mixture-of-experts GEMM with "
                        "Layer::createMoe")};
  if (!(output == ScalarType::f16() || output == ScalarType::bf16()))
    return Error{concat("expected an f16 or bf16 output, got ", output.str())};
  if (Diag d = verifyWeightSchema(weight))
    return Error{*d};
  if (Diag d = verifyInputSchema(input))
    return Error{*d};
  if (input.type.bits != 16 && !layout::computesInEightBits(input.type) &&
      !layout::computesInFourBits(input.type))
    return Error{concat("expected f16, bf16, f8E4M3FN, f8E5M2, si8 or si4 "
                        "activations, got ",
                        input.type.str(),
                        ": e2m1 activations wait for block-scaled MMA")};
  if (Diag d = verifyCompatibility(weight, input, compute, output))
    return Error{*d};
  // Sizes the kernels cannot take as they are: the layer pads N and K
  // itself where no padding was asked for, each independently
  // (kernelPadding; loadQuantized() then takes tensors of either shape);
  // padding asked for is kept as given (and checked below).
  // 8- and 4-bit activations whose rows of K codes are not a multiple of
  // 16 bytes: the GEMM reads rows of K rounded up to that (activationK), the
  // codes past K zero — the layer's quantizer writes them so and
  // forwardQuantized takes them so — over the weights padded past K with
  // zeros as any padded K is.
  int64_t kAct = k;
  if (input.type.bits < 16 && k > 0) {
    const int64_t piece = 128 / int64_t(input.type.bits);
    kAct = ceilDiv(k, piece) * piece;
    if (kAct != k && input.scaling == ActScaling::Group)
      return Error{concat("expected K to be a multiple of the activation "
                          "group size ",
                          input.groupK,
                          " with per-group activation scales, got ", k)};
  }
  // The padding as the GEMM sees it: rows of kAct activations, pad_k the
  // rest of the padded K (the weight schema's pad_k counts from K).
  auto gemmPadding = [&](const WeightSchema &s) -> Diag {
    if (s.padK < kAct - k)
      return concat("expected pad_k >= ", kAct - k, " (K = ", k,
                    " rounded up to 16 bytes of ", input.type.str(),
                    " codes is ", kAct, "), got ", s.padK);
    WeightSchema g = s;
    g.padK = s.padK - (kAct - k);
    return verifyPadding(g, input, n + s.padN, kAct + g.padK);
  };
  WeightSchema w = weight;
  if (gemmPadding(w) && (w.padN == 0 || w.padK == 0)) {
    Result<Padding> p = kernelPadding(w, input, n, kAct);
    if (!p)
      return Error{p.error()};
    if (w.padN == 0)
      w.padN = p->n;
    if (w.padK == 0)
      w.padK = p->k + (kAct - k);
  }
  if (Diag d = gemmPadding(w))
    return Error{*d};
  auto impl = std::make_unique<Impl>();
  impl->n = n;
  impl->k = k;
  impl->kAct = kAct;
  impl->weight = w;
  impl->input = input;
  impl->compute = compute;
  impl->output = output;
  return Layer(std::move(impl));
}

Result<Layer> Layer::createMoe(int64_t n, int64_t k, const WeightSchema &weight,
                               const InputSchema &input, const MoeOptions &moe,
                               const ComputeOptions &compute,
                               ScalarType output) {
  if (weight.experts < 1 || weight.experts > (int64_t(1) << 20))
    return Error{concat("expected 1 .. 2^20 experts in the weight schema of a "
                        "MoE layer, got ",
                        weight.experts)};
  if (moe.routing == GemmType::Dense)
    return Error{"expected a MoE routing (indexed, grouped_contiguous or "
                 "grouped_masked), got dense (use Layer::create)"};
  if (moe.routing == GemmType::Indexed) {
    if (moe.topK < 1 || moe.topK > weight.experts)
      return Error{concat("expected top_k in 1 .. ", weight.experts,
                          " (the experts), got ", moe.topK)};
    if (moe.blockSize != 0 && (moe.blockSize < 16 || moe.blockSize > 1024 ||
                               moe.blockSize % 16 != 0))
      return Error{concat("expected block_size to be 0 (chosen per M) or a "
                          "multiple of 16 in 16 .. 1024 (the kernels' block_m "
                          "divides it), got ",
                          moe.blockSize)};
  } else if (moe.topK != 1) {
    return Error{concat("expected top_k = 1 with ", toString(moe.routing),
                        " routing (rows are already per expert), got ",
                        moe.topK)};
  }
  if (moe.allRows && moe.routing != GemmType::GroupedMasked)
    return Error{concat("expected MoeOptions::allRows only with "
                        "grouped_masked routing (every expert all of its "
                        "max_tokens rows), got ",
                        toString(moe.routing))};
  if (compute.gemm != GemmType::Dense && compute.gemm != moe.routing)
    return Error{concat("expected ComputeOptions::gemm to be dense or the "
                        "routing (", toString(moe.routing), "), got ",
                        toString(compute.gemm))};
  if (compute.batchInvariant)
    return Error{kMoeNotBatchInvariant};
  WeightSchema dense = weight;
  dense.experts = 0;
  ComputeOptions c = compute;
  c.gemm = GemmType::Dense;
  Result<Layer> layer = create(n, k, dense, input, c, output);
  if (!layer)
    return layer;
  // (A MoE layer's activation rows are K wide: its routing gathers them.)
  if (layer->impl_->kAct != k)
    return Error{concat("expected K to be a multiple of ",
                        128 / int64_t(input.type.bits), " with ",
                        input.type.str(),
                        " activations in a MoE layer (their "
                        "rows are copied in 16-byte pieces), got ",
                        k)};
  layer->impl_->weight.experts = weight.experts;
  layer->impl_->moe = moe;
  if (moe.routing != GemmType::Indexed)
    layer->impl_->moe->blockSize = 0;
  return layer;
}

Status Layer::setInputPermutation(std::vector<int32_t> perm) {
  Impl &l = *impl_;
  if (!perm.empty() && l.kAct != l.k)
    return Error{concat("expected K to be a multiple of ",
                        128 / int64_t(l.input.type.bits), " with ",
                        l.input.type.str(),
                        " activations in an act-order "
                        "layer (the gathered rows are K wide), got ",
                        l.k)};
  if (!perm.empty()) {
    if (int64_t(perm.size()) != l.k)
      return Error{concat("expected a permutation of K = ", l.k,
                          " input columns, got ", perm.size(), " entries")};
    std::vector<bool> seen(perm.size(), false);
    for (size_t j = 0; j < perm.size(); ++j) {
      const int32_t c = perm[j];
      if (c < 0 || c >= int32_t(l.k) || seen[size_t(c)])
        return Error{concat("expected a permutation of 0 .. ", l.k - 1,
                            ", got ", c, " at ", j,
                            c < 0 || c >= int32_t(l.k) ? " (out of range)"
                                                       : " (a repeat)")};
      seen[size_t(c)] = true;
    }
  }
  l.inputPermutation = std::move(perm);
  l.transformed = false;
  return Status::success();
}

const std::vector<int32_t> &Layer::inputPermutation() const {
  return impl_->inputPermutation;
}

Status Layer::setBatchInvariant(bool on) {
  Impl &l = *impl_;
  if (on && l.moe)
    return Error{kMoeNotBatchInvariant};
  if (l.compute.batchInvariant != on)
    l.transformed = false;
  l.compute.batchInvariant = on;
  return Status::success();
}

bool Layer::batchInvariant() const { return impl_->compute.batchInvariant; }

Result<Layer> Layer::fromLoaded(LoadedLayer loadedLayer, ScalarType model,
                                const std::string &module,
                                const CheckpointLoad &load) {
  LoadedLayer *loaded = &loadedLayer;
  const int64_t rank = load.rank, size = load.size;
  InputSchema in{model, ActScaling::None, 0};
  if (load.checkpointActivations) {
    in = loaded->input;
    const std::string have = formatInputSchema(in);
    if (in.type.bits == 16)
      return Error{concat(module, ": the checkpoint's activations are ", have,
                         " (not quantized): use "
                         "humming_layer_create_from_checkpoint")};
    // (Per-group scales: 8-bit codes over weights of their type, sm_90a —
    // layout::supports and transform() say where not.)
    if ((!layout::computesInEightBits(in.type) &&
         !layout::computesInFourBits(in.type)) ||
        (in.scaling == ActScaling::Group &&
         !layout::computesInEightBits(in.type)))
      return Error{concat(module, ": the checkpoint's ", have,
                         " activations have no kernel yet (the kernels take "
                         "f8E4M3FN, f8E5M2, si8 and si4 codes with per-token "
                         "or static scales, and 8-bit ones per group): use "
                         "humming_layer_create_from_checkpoint (16-bit "
                         "activations)")};
    if (in.scaling == ActScaling::Static)
      return Error{concat(module, ": the checkpoint's ", have,
                         " activations have a static scale, which is not "
                         "read from checkpoints yet: use "
                         "humming_layer_create_quantized with that scale at "
                         "forward, or humming_layer_create_from_checkpoint")};
  }
  int64_t n = loaded->n, k = loaded->k;
  WeightSchema weight = loaded->weight;
  QuantizedWeights tensors = std::move(loaded->tensors);
  std::vector<int32_t> perm = std::move(loaded->kPermutation);
  if (!perm.empty() && load.parallel == TensorParallel::Row && size > 1)
    return Error{concat(module, ": act-order (desc_act) permutes K, so a row "
                               "shard's columns are scattered over the whole "
                               "input: split it by columns, or load it whole")};
  if (size != 1 || rank != 0) {
    Result<ShardedWeights> shard = shardCanonical(
        weight, tensors, n, k,
        load.parallel, rank, size);
    if (!shard)
      return Error{concat(module, ": ", shard.error())};
    n = shard->n;
    k = shard->k;
    weight = shard->schema;
    tensors = std::move(shard->tensors);
  }
  Result<Layer> layer = Layer::create(n, k, weight, in, {}, model);
  if (!layer)
    return Error{concat(module, ": ", layer.error())};
  if (Status s = layer->loadQuantized(std::move(tensors)); !s)
    return Error{concat(module, ": ", s.error())};
  if (Status s = layer->setInputPermutation(std::move(perm)); !s)
    return Error{concat(module, ": ", s.error())};
  return layer;
}

Result<Layer> Layer::fromCheckpoint(const OpenedCheckpoint &opened,
                                    const std::string &module,
                                    const CheckpointLoad &load) {
  if (load.size < 1 || load.rank < 0 || load.rank >= load.size)
    return Error{concat("expected 0 <= rank < size (tensor parallelism), got "
                        "rank ",
                        load.rank, " of ", load.size)};
  Result<LoadedLayer> loaded =
      loadLayer(opened.checkpoint, opened.config, module);
  if (!loaded)
    return Error{loaded.error()};
  return fromLoaded(loaded.take(), opened.activation(), module, load);
}

Result<Layer> Layer::fromCheckpoint(const std::string &dir,
                                    const std::string &module,
                                    const CheckpointLoad &load) {
  Result<OpenedCheckpoint> opened = openCheckpoint(dir);
  if (!opened)
    return Error{opened.error()};
  return fromCheckpoint(*opened, module, load);
}


const QuantizedWeights *Layer::canonicalWeights() const {
  Result<const QuantizedWeights *> w = canonicalTensors();
  if (!w) {
    rt::logInfo(concat("canonicalWeights(): ", w.error()));
    return nullptr;
  }
  return *w;
}

Result<const QuantizedWeights *> Layer::canonicalTensors() const {
  Impl &l = *impl_;
  if (!l.canonical)
    return static_cast<const QuantizedWeights *>(nullptr);
  if (Status s = l.canonicalToHost(); !s)
    return Error{concat("bringing the canonical tensors from the device: ",
                        s.error())};
  return static_cast<const QuantizedWeights *>(&*l.canonical);
}

Result<QuantizedWeights> Layer::deviceWeights() const {
  const Impl &l = *impl_;
  if (!l.transformed)
    return Error{"call transform() before deviceWeights()"};
  if (l.compileOnly)
    return Error{concat("the layer was transformed compile-only for ", l.chip,
                        "; its weights are on no device")};
  const QuantizedWeights &c = *l.canonical;
  auto fetch = [&](abi::GemmParam param, WeightOperand op,
                   const Tensor &canonical) -> Result<Tensor> {
    std::vector<int64_t> shape = canonical.shape;
    if (l.prepared && (op == WeightOperand::Weight ||
                       op == WeightOperand::Scales ||
                       op == WeightOperand::ZeroPoints)) {
      ShapeOrDiag s = expectedShape(op, l.weight, l.input, l.paddedN(),
                                    l.paddedK(), /*prepared=*/true);
      if (s.error)
        return Error{*s.error};
      shape = s.shape;
    }
    Tensor t(canonical.dtype, shape);
    for (const auto &[p, buffer] : l.buffers)
      if (p == param) {
        if (buffer.size() != t.data.size())
          return Error{concat("the device's ", toString(op), " holds ",
                              buffer.size(), " bytes, expected ",
                              t.data.size(), " (a bug)")};
        if (Status s = buffer.download(t.data.data(), t.data.size()); !s)
          return Error{s.error()};
        return t;
      }
    return Error{concat("the layer holds no ", toString(op),
                        " on the device (a bug)")};
  };
  QuantizedWeights out;
  Result<Tensor> weight = fetch(abi::ParamWeight, WeightOperand::Weight,
                                c.weight);
  if (!weight)
    return Error{weight.error()};
  out.weight = weight.take();
  const std::tuple<abi::GemmParam, WeightOperand,
                   const std::optional<Tensor> *, std::optional<Tensor> *>
      sides[] = {
          {abi::ParamScales, WeightOperand::Scales, &c.scales, &out.scales},
          {abi::ParamZeroPoints, WeightOperand::ZeroPoints, &c.zeroPoints,
           &out.zeroPoints},
          {abi::ParamGlobalScale, WeightOperand::GlobalScale, &c.globalScale,
           &out.globalScale},
          {abi::ParamBias, WeightOperand::Bias, &c.bias, &out.bias}};
  for (auto [param, op, from, to] : sides)
    if (*from) {
      Result<Tensor> t = fetch(param, op, **from);
      if (!t)
        return Error{t.error()};
      to->emplace(t.take());
    }
  return out;
}

Status Layer::loadQuantized(QuantizedWeights tensors) {
  Impl &l = *impl_;
  // A padded layer takes tensors of the unpadded shapes too.
  if (l.weight.padN != 0 || l.weight.padK != 0) {
    WeightSchema bare = l.weight;
    bare.padN = bare.padK = 0;
    ShapeOrDiag unpadded =
        expectedShape(WeightOperand::Weight, bare, InputSchema{}, l.n, l.k,
                      /*prepared=*/false);
    if (!unpadded.error && tensors.weight.shape == unpadded.shape) {
      Result<QuantizedWeights> padded =
          padCanonicalTensors(l.weight, std::move(tensors), l.n, l.k);
      if (!padded)
        return Error{padded.error()};
      tensors = padded.take();
    }
  }
  // Every tensor's shape and dtype against the schema (the bias in the
  // output type): a mismatch names the tensor. The kernels read exactly
  // those sizes.
  if (Status s = checkQuantizedTensors(
          l.weight, tensors, l.n, l.k,
          l.output == ScalarType::bf16() ? DType::BF16 : DType::F16);
      !s)
    return s;
  l.canonical = std::move(tensors);
  l.deviceCanonical.reset();
  l.transformed = false;
  return Status::success();
}

Status Layer::quantize(const double *weights, const double *bias) {
  Impl &l = *impl_;
  if (!weights)
    return Error{"expected weights to quantize, got a null pointer"};
  if (l.weight.bias && !bias)
    return Error{"expected a bias: the schema has bias = true"};
  QuantizeOptions options;
  options.paramDType = l.output == ScalarType::bf16() ? DType::BF16 : DType::F16;
  Result<QuantizedWeights> q =
      quantizeWeights(l.weight, weights, l.n, l.k, bias, options);
  if (!q)
    return Error{q.error()};
  l.canonical = q.take();
  l.deviceCanonical.reset();
  l.transformed = false;
  return Status::success();
}

Status Layer::quantizeOnDevice(const LayerTarget &target, uint64_t weights,
                               DType dtype, const double *bias) {
  Impl &l = *impl_;
  if (!weights)
    return Error{"expected device weights to quantize, got a null pointer"};
  if (dtype != DType::F16 && dtype != DType::BF16 && dtype != DType::F32)
    return Error{concat("expected F16, BF16 or F32 weights to quantize, got ",
                        dtypeName(dtype))};
  if (l.weight.bias && !bias)
    return Error{"expected a bias: the schema has bias = true"};
  if (target.compileOnly)
    return Error{"quantizeOnDevice() runs on a device; the target is "
                 "compile-only (quantize() runs on the host)"};
  const auto started = Clock::now();
  const ScalarType param =
      l.output == ScalarType::bf16() ? ScalarType::bf16() : ScalarType::f16();
  mh::WeightQuantizeSpec spec;
  spec.weight = l.weight;
  spec.source = *dtypeScalar(dtype);
  spec.n = l.n;
  spec.k = l.k;
  spec.zeroPointType = param;
  LayerTarget qt = target;
  qt.tileConfig.clear();
  qt.canonicalLayout = false;
  Result<detail::ModuleKernels> k = detail::compileKernels(
      qt, "the weight quantization",
      concat("quantize_weights ", formatWeightSchema(l.weight), " source=",
             spec.source.str(), " n=", l.n, " k=", l.k,
             " zero_point_type=", param.str()),
      abi::kWeightQuantizeKernel, [&](mlir::MLIRContext &ctx) {
        return mh::buildWeightQuantizeModule(ctx, spec);
      });
  if (!k)
    return Error{concat(k.error(), " (quantize() runs on the host)")};
  const double moduleMs = 1e3 * since(started);
  const rt::CudaDriver &driver = *k->driver;
  const int64_t np = l.paddedN(), kp = l.paddedK();
  const int64_t experts = std::max<int64_t>(1, l.weight.experts);
  InputSchema anyInput;
  auto tensorOf = [&](WeightOperand op, DType d) -> Result<Tensor> {
    ShapeOrDiag shape = expectedShape(op, l.weight, anyInput, np, kp, false);
    if (shape.error)
      return Error{*shape.error};
    return Tensor(d, shape.shape);
  };
  // Each output: its canonical tensor's shape and dtype (no data: the
  // codes stay on the device for transform()'s repack until the host asks
  // for them) and a device buffer of its size.
  QuantizedWeights q;
  Impl::DeviceCanonical onDevice;
  onDevice.driver = &driver;
  if (driver.cuCtxGetCurrent)
    driver.cuCtxGetCurrent(&onDevice.context);
  auto output = [&](WeightOperand op, DType d, Tensor &t,
                    rt::CUdeviceptr &ptr) -> Status {
    // The shape alone: a Tensor would zero a host copy of the codes (a
    // page fault per 4 KiB: 21 of the 24 ms this took for 8192^2 uint4).
    ShapeOrDiag shape = expectedShape(op, l.weight, anyInput, np, kp, false);
    if (shape.error)
      return Error{*shape.error};
    t.dtype = d;
    t.shape = shape.shape;
    Result<rt::DeviceBuffer> buf = rt::DeviceBuffer::allocate(
        driver, storageBytes(d, numElements(t.shape)));
    if (!buf)
      return Error{buf.error()};
    ptr = buf->ptr();
    onDevice.buffers.emplace_back(op, buf.take());
    return Status::success();
  };
  rt::CUdeviceptr null = 0, in = weights, codesPtr = 0, scalesPtr = 0,
                  zpPtr = 0, globalPtr = 0;
  if (Status s = output(WeightOperand::Weight, DType::I32, q.weight, codesPtr);
      !s)
    return s;
  if (l.weight.hasScaleTensor())
    if (Status s = output(WeightOperand::Scales,
                          *storageFor(l.weight.scaleType), q.scales.emplace(),
                          scalesPtr);
        !s)
      return s;
  if (l.weight.zeroPoint != ZeroPointKind::None) {
    // (Integer zero points are OR-ed into the stream: the module's first
    // kernel zeroes them.)
    const bool intZp = l.weight.zeroPoint == ZeroPointKind::Int;
    if (Status s = output(WeightOperand::ZeroPoints,
                          intZp ? DType::I32 : *storageFor(param),
                          q.zeroPoints.emplace(), zpPtr);
        !s)
      return s;
  }
  // The global scales ([E] f32): made on the device, brought to the host
  // at once (E floats; the transform uploads them as they are).
  std::optional<rt::DeviceBuffer> globalScale;
  if (l.weight.hasGlobalScale()) {
    Result<Tensor> t = tensorOf(WeightOperand::GlobalScale, DType::F32);
    if (!t)
      return Error{t.error()};
    q.globalScale.emplace(t.take());
    Result<rt::DeviceBuffer> buf =
        rt::DeviceBuffer::allocate(driver, q.globalScale->data.size());
    if (!buf)
      return Error{buf.error()};
    globalPtr = buf->ptr();
    globalScale.emplace(buf.take());
  }
  int32_t e32 = int32_t(experts);
  void *args[abi::NumGemmParams] = {&in,       &null,      &scalesPtr,
                                    &zpPtr,    &globalPtr, &null,
                                    &codesPtr, &null,      &e32};
  const double allocMs = 1e3 * since(started) - moduleMs;
  auto launched = Clock::now();
  // The module's kernels in order (a clearing pass first where zero points
  // are OR-ed or a global maximum is taken; a global scale's amax pass and
  // its last step around the quantization).
  for (size_t i = 0; i < k->kernels.size(); ++i) {
    const abi::KernelLaunch &kl = k->kernels[i];
    uint32_t grid[3];
    kl.grid(experts, 0, grid);
    if (Status s = driver.check(
            driver.cuLaunchKernel(k->functions[i], grid[0], grid[1], grid[2],
                                  unsigned(kl.threads), 1, 1, 0, nullptr,
                                  args, nullptr),
            "cuLaunchKernel (weight quantization)");
        !s)
      return s;
  }
  // The caller may free `weights` once this returns; the kernel's faults
  // surface here.
  if (Status s = driver.check(driver.cuCtxSynchronize(),
                              "cuCtxSynchronize (weight quantization)");
      !s)
    return s;
  if (globalScale)
    if (Status s = globalScale->download(q.globalScale->data.data(),
                                         q.globalScale->data.size());
        !s)
      return s;
  const double kernelMs = 1e3 * since(launched);
  if (l.weight.bias) {
    Result<Tensor> t = tensorOf(WeightOperand::Bias, *storageFor(param));
    if (!t)
      return Error{t.error()};
    q.bias.emplace(t.take());
    for (int64_t e = 0; e < experts; ++e)
      for (int64_t r = 0; r < np; ++r)
        q.bias->set(e * np + r, r < l.n ? bias[e * l.n + r] : 0.0);
  }
  // The shapes and dtypes are the schema's by construction (tensorOf):
  // loadQuantized's checks would read the data the host does not have.
  l.canonical = std::move(q);
  l.deviceCanonical.emplace(std::move(onDevice));
  l.transformed = false;
  rt::logInfo(concat("quantizeOnDevice: ", formatWeightSchema(l.weight),
                     " n=", l.n, " k=", l.k, ": ", 1e3 * since(started),
                     " ms (module ", moduleMs, " ms, ",
                     k->stats.compiled ? "compiled" : "from the cache",
                     "; buffers ", allocMs, " ms; kernel ", kernelMs,
                     " ms)"));
  return Status::success();
}

Status Layer::transform(const LayerTarget &target) {
  Impl &l = *impl_;
  if (!l.canonical)
    return Error{"expected weights before transform(): call loadQuantized() "
                 "or quantize() first"};
  // The chip and the device whose facts choose the tiles.
  const std::string &device = target.device;
  Result<Chip> chip = detail::targetChip(target);
  if (!chip)
    return Error{chip.error()};
  if (chip->sm < 80)
    return Error{concat("the mma_sync kernels need sm_80 or newer, got ",
                        chip->str())};
  // Act-order: the layer gathers 16-bit activations itself
  // (forwardGathering) unless the caller says it does.
  const bool selfGather =
      !l.inputPermutation.empty() && !target.activationsGathered;
  if (selfGather && (l.input.type.bits != 16 || l.moe))
    return Error{concat(
        "the layer's K is permuted (act-order) and it takes ",
        l.moe ? "routed MoE rows" : concat(l.input.type.str(), " activations"),
        ", which it does not gather itself: forward() needs the activations' "
        "columns gathered by inputPermutation() (x[:, perm]); set "
        "LayerTarget::activationsGathered to say the caller does")};

  // The live device must be the target's chip.
  Result<const rt::CudaDriver *> live =
      detail::deviceFor(*chip, target, "the layer");
  if (!live)
    return Error{live.error()};
  const rt::CudaDriver *driver = *live;

  TransformStats stats;

  // Weights: the prepared layout where it holds the schema.
  const int64_t np = l.paddedN(), kp = l.paddedK();
  // Why the prepared layout is not used (none: it is).
  Diag unprepared = target.canonicalLayout
                        ? Diag("the target asks for the canonical layout")
                        : layout::supports(l.gemmWeight(), l.input, np, kp);
  bool prepared = !unprepared;
  // sm_90a reads 8-bit weights of the activation type by wgmma descriptor
  // (layout::TileOrder::KMajor); the lowering derives the same order from
  // the schema and the chip.
  const layout::TileOrder order =
      prepared ? layout::tileOrder(l.gemmWeight(), l.input,
                                   chip->readsKMajorEightBit())
               : layout::TileOrder::Fragments;
  if (l.moe && !prepared)
    return Error{concat("a MoE layer runs over the prepared layout only, "
                        "which is not used: ",
                        *unprepared)};
  if (target.activationRows < 0 || target.activationRows > (int64_t(1) << 31) - 1)
    return Error{concat("expected LayerTarget::activationRows in 0 .. 2^31 - 1, "
                        "got ", target.activationRows)};
  if (target.activationRows > 0 &&
      !(l.input.type.bits <= 8 &&
        (l.input.scaling == ActScaling::Token ||
         (l.input.scaling == ActScaling::Group && l.input.type.bits == 8))))
    return Error{concat("LayerTarget::activationRows applies to layers of "
                        "8- or 4-bit activations scaled per token, or 8-bit "
                        "ones per group (forward() quantizes them), got ",
                        formatInputSchema(l.input))};
  // 8-bit activations: the k32 kernels over prepared weights only (wgmma
  // on sm_90a, mma.sync m16n8k32 elsewhere: s8 from sm_80, fp8 from sm_89).
  if (l.input.type.bits == 8) {
    if (unsigned need = std::max(80u, minSmForActivation(l.input.type));
        chip->sm < need)
      return Error{concat(l.input.type.str(), " activations need sm_", need,
                          " or newer (m16n8k32 ", l.input.type.str(),
                          " MMAs); got ", chip->str())};
    if (!chip->supportsMma(MmaKind::Wgmma))
      if (Diag d = layout::eightBitMmaSyncSupports(l.gemmWeight(), l.input))
        return Error{concat(*d, " (on ", chip->str(), ")")};
    if (!prepared)
      return Error{concat(l.input.type.str(), " activations run over the "
                          "prepared layout only, which is not used: ",
                          *unprepared)};
  }
  // si4 activations: the mma.sync m16n8k64 s4 kernels over prepared
  // weights (sm_80 and later, checked above; sm_90 has no int4 tensor cores
  // and runs them emulated, which chooseActivation avoids but an explicit
  // schema gets).
  if (layout::computesInFourBits(l.input.type)) {
    if (!prepared)
      return Error{concat("si4 activations run over the prepared layout "
                          "only, which is not used: ",
                          *unprepared)};
  }
  // A forced tile configuration: parsed and verified here, so its errors
  // come before any compile; printed back, so equal tiles share cache keys.
  std::string tileConfig;
  std::optional<TileConfig> forced;
  if (!target.tileConfig.empty()) {
    if (!prepared)
      return Error{concat("a tile configuration applies to the prepared "
                          "layout, which is not used: ",
                          *unprepared)};
    mlir::MLIRContext ctx;
    ctx.loadDialect<mh::HummingDialect>();
    std::string diagnostics;
    mlir::ScopedDiagnosticHandler handler(&ctx, [&](mlir::Diagnostic &d) {
      diagnostics += (diagnostics.empty() ? "" : "; ") + d.str();
      return mlir::success();
    });
    auto attr = llvm::dyn_cast_or_null<mh::TileConfigAttr>(
        mlir::parseAttribute(target.tileConfig, &ctx));
    if (!attr)
      return Error{concat("expected a #humming.tile_config, got '",
                          target.tileConfig, "'",
                          diagnostics.empty() ? "" : ": ", diagnostics)};
    llvm::raw_string_ostream os(tileConfig);
    mlir::Attribute(attr).print(os);
    forced = attr.toHost();
  }
  // HUMMING_PDL=0 turns programmatic dependent launch off.
  bool dependentLaunch = target.dependentLaunch;
  if (const char *v = std::getenv("HUMMING_PDL"); v && *v) {
    if (std::strcmp(v, "0") != 0 && std::strcmp(v, "1") != 0)
      return Error{concat("expected HUMMING_PDL to be 0 (ordinary launches) or "
                          "1 (programmatic dependent launch), got '",
                          v, "'")};
    dependentLaunch = dependentLaunch && std::strcmp(v, "1") == 0;
  }
  // HUMMING_JIT_THREADS bounds the threads (default: one per kernel).
  size_t workers = SIZE_MAX;
  if (const char *v = std::getenv("HUMMING_JIT_THREADS"); v && *v) {
    char *end = nullptr;
    long n = std::strtol(v, &end, 10);
    if (*end != '\0' || n < 1 || n > 1024)
      return Error{concat("expected HUMMING_JIT_THREADS to be a thread count "
                          "between 1 and 1024, got '", v, "'")};
    workers = size_t(n);
  }
  // The kernels select-tiles will choose: the same heuristics, same facts.
  size_t count = 1;
  if (forced) {
    count = forcedTileConfigs(*forced).size();
  } else if (prepared) {
    Result<DeviceInfo> facts = tileDeviceFacts(device, chip->str());
    if (!facts)
      return Error{facts.error()};
    Result<std::vector<TileConfig>> tiles =
        l.moe ? selectMoeTiles(
                    l.gemmWeight(), l.input, l.compute, np, kp, *facts,
                    MoeShape{l.moe->routing, l.weight.experts, l.moe->topK,
                             moeOpBlockSize(*l.moe), l.moe->routerWeights})
              : selectMmaSyncTiles(l.gemmWeight(), l.input, l.compute, np, kp,
                                   *facts);
    if (!tiles)
      return Error{tiles.error()};
    count = tiles->size();
  }
  // Weights prepared on the device (the humming.repack kernels) where the
  // layer runs on one; HUMMING_PREPARE=host keeps the host repack, the
  // reference the device's must equal bit for bit (the GPU suite checks).
  bool repackOnDevice = prepared && !target.compileOnly;
  if (const char *v = std::getenv("HUMMING_PREPARE"); v && *v) {
    if (std::strcmp(v, "host") != 0 && std::strcmp(v, "device") != 0)
      return Error{concat("expected HUMMING_PREPARE to be host (the weights "
                          "prepared on the host) or device (by the GPU where "
                          "the layer runs on one), got '",
                          v, "'")};
    repackOnDevice = repackOnDevice && std::strcmp(v, "device") == 0;
  }
  // Canonical tensors a device quantization left there are repacked where
  // they are (same driver and context); anything else reads them on the
  // host (the download finds their device by unified addressing).
  auto weightsStarted = Clock::now();
  rt::CUcontext current = nullptr;
  if (driver && driver->cuCtxGetCurrent)
    driver->cuCtxGetCurrent(&current);
  const bool sameDevice = !target.compileOnly && l.deviceCanonical &&
                          l.deviceCanonical->driver == driver &&
                          l.deviceCanonical->context == current;
  const bool repackFromDevice = repackOnDevice && sameDevice;
  // A layer over canonical tensors (not prepared: e.g. block scales, which
  // the prepared layout does not hold) copies them on the device instead
  // of sending them down and up again.
  const bool copyFromDevice = !prepared && sameDevice;
  if (!repackFromDevice && !copyFromDevice)
    if (Status s = l.canonicalToHost(); !s)
      return Error{concat("bringing the canonical tensors from the device: ",
                          s.error())};
  // The canonical tensors themselves, or their prepared form (no copy).
  std::optional<QuantizedWeights> preparedWeights;
  if (prepared && !repackOnDevice) {
    Result<QuantizedWeights> p = layout::prepareMmaSync(
        l.gemmWeight(), l.input, *l.canonical, np, kp, /*threads=*/0, order);
    if (!p)
      return Error{p.error()};
    preparedWeights = p.take();
  }
  const QuantizedWeights &weights =
      preparedWeights ? *preparedWeights : *l.canonical;
  stats.weightSeconds = since(weightsStarted);

  // Kernels: one pipeline run per M-range kernel, in parallel, each in its
  // own MLIRContext (run i generates kernel i; the others are stubs there):
  // humming IR -> PTX in process -> the compiler through the kernel cache.
  JitState &j = jit();
  if (!j.compiler)
    return Error{j.compilerError};
  mh::LayerSpec spec;
  // The GEMM over rows of activationK() (the codes past K zero): the
  // padding after them.
  spec.weight = l.gemmWeight();
  spec.input = l.input;
  spec.compute = l.compute;
  spec.output = l.output;
  spec.n = l.n;
  spec.k = l.kAct;
  spec.prepared = prepared;
  spec.chip = chip->str();
  if (l.moe) {
    spec.moeRouting = l.moe->routing;
    spec.topK = l.moe->topK;
    spec.blockSize = moeOpBlockSize(*l.moe);
    spec.routerWeights = l.moe->routerWeights;
    spec.allRows = l.moe->allRows;
  }
  // Each kernel is cached under a description of the layer (everything the
  // PTX depends on, and this build of humming): a cached transform reads
  // its image and kernel table without running the pipeline or a compiler.
  std::string description = concat(
      "layer ", formatWeightSchema(l.weight), " ", formatInputSchema(l.input),
      " output=", l.output.str(),
      " f16_accumulation=", l.compute.f16Accumulation,
      " batch_invariant=", l.compute.batchInvariant, " n=", l.n, " k=", l.k,
      " activation_k=", l.kAct, " prepared=", prepared, " device=", device,
      " tiles=", tileConfig, " kernels=", count,
      l.moe ? concat(" moe=", toString(l.moe->routing), " top_k=", l.moe->topK,
                     " block_size=", l.moe->blockSize, " router_weights=",
                     l.moe->routerWeights, " all_rows=", l.moe->allRows)
            : std::string());
  struct Piece {
    Result<rt::KernelCache::Lookup> image = Error{"not compiled"};
    std::vector<abi::KernelLaunch> table;
    std::string ptx;
    double seconds = 0;
  };
  std::vector<Piece> pieces(count);
  auto work = [&](size_t i) {
    auto started = Clock::now();
    const int only = count > 1 ? int(i) : -1;
    Piece &p = pieces[i];
    p.image = detail::cachedImage(
        j, *chip, concat(description, " only-kernel=", only),
        [&](mlir::MLIRContext &ctx) { return mh::buildLayerModule(ctx, spec); },
        // PTX ISA: the chip's minimum (every chip with an fp8 mma.sync has
        // 8.4, the one LLVM selects it from; sm_90a's mma_sync kernels take
        // f16 MMAs instead: Chip::emulatesFp8MmaSync).
        {/*ptxVersion=*/0, device, tileConfig, only});
    p.seconds = since(started);
    if (!p.image)
      return;
    p.ptx = p.image->artifact->ptx;
    if (!abi::parseKernelTable(p.image->artifact->metadata, p.table))
      p.image = Error{"the kernel cache entry's kernel table does not parse "
                      "(a bug)"};
  };
  // The repack kernels of the weight-side tensors that have a prepared
  // form (one module, compiled beside the GEMM kernels; the bias and the
  // global scale go up as they are).
  mh::RepackSpec repackSpec;
  std::string repackDescription;
  Result<rt::KernelCache::Lookup> repackImage = Error{"not compiled"};
  if (repackOnDevice) {
    mh::RepackSpec &rs = repackSpec;
    rs.weight = l.gemmWeight();
    rs.input = l.input;
    rs.n = l.n;
    rs.k = l.kAct;
    rs.chip = chip->str();
    rs.operands.push_back(WeightOperand::Weight);
    if (l.canonical->scales)
      rs.operands.push_back(WeightOperand::Scales);
    if (l.canonical->zeroPoints) {
      rs.operands.push_back(WeightOperand::ZeroPoints);
      if (std::optional<ScalarType> t =
              dtypeScalar(l.canonical->zeroPoints->dtype))
        rs.element = *t;
    }
    std::string operands;
    for (WeightOperand op : rs.operands)
      operands += concat(operands.empty() ? "" : ",", toString(op));
    repackDescription =
        concat("repack ", formatWeightSchema(rs.weight), " ",
               formatInputSchema(l.input), " n=", l.n, " k=", rs.k,
               " element=", rs.element.str(), " operands=", operands);
  }
  workers = std::min(workers, count);
  auto kernelsStarted = Clock::now();
  {
    // Exactly `workers` threads (not capped at the cores: HUMMING_JIT_THREADS
    // decides), each kernel a task.
    llvm::DefaultThreadPool pool(llvm::hardware_concurrency(unsigned(workers)));
    for (size_t i = 0; i < count; ++i)
      pool.async([&work, i] { work(i); });
    if (repackOnDevice)
      pool.async([&] {
        auto started = Clock::now();
        repackImage = detail::cachedImage(
            j, *chip, repackDescription, [&](mlir::MLIRContext &ctx) {
              return mh::buildRepackModule(ctx, repackSpec);
            });
        stats.slowestKernelSeconds =
            std::max(stats.slowestKernelSeconds, since(started));
      });
    pool.wait();
  }
  std::optional<detail::ModuleKernels> repack;
  std::vector<WeightOperand> repackOperands;
  if (repackOnDevice) {
    if (!repackImage)
      return Error{repackImage.error()};
    Result<detail::ModuleKernels> k = detail::loadKernels(
        *repackImage, *chip, driver, abi::kRepackKernel, "the weight repack");
    if (!k)
      return Error{k.error()};
    stats.compiled += k->stats.compiled;
    stats.cached += k->stats.cached;
    repackOperands = repackSpec.operands;
    repack.emplace(k.take());
  }
  for (size_t i = 0; i < pieces.size(); ++i) {
    Piece &p = pieces[i];
    if (!p.image)
      return Error{p.image.error()};
    (p.image->source == rt::KernelCache::Source::Compiled ? stats.compiled
                                                          : stats.cached)++;
    for (const std::string &line : rt::performanceReports(p.image->kernel->log))
      stats.compilerReports.push_back(concat("kernel ", i, ": ", line));
  }
  std::vector<abi::KernelLaunch> kernels = pieces[0].table;
  if (kernels.size() != count && count > 1)
    return Error{concat("expected ", count, " kernels from the tile heuristics, "
                        "the pipeline made ", kernels.size(), " (a bug)")};
  if (kernels.empty())
    return Error{"the compiled layer has no kernels (a bug)"};
  std::string allPtx;
  std::vector<std::string> modulePtx;
  for (const Piece &p : pieces) {
    allPtx += p.ptx;
    modulePtx.push_back(p.ptx);
  }

  // Upload and load (not for compile-only targets): kernel i from run i.
  std::vector<rt::Module> loaded;
  std::vector<rt::CUfunction> functions;
  std::vector<std::pair<abi::GemmParam, rt::DeviceBuffer>> buffers;
  std::array<rt::CUdeviceptr, abi::NumGemmParams> pointers{};
  if (!target.compileOnly) {
    for (Piece &p : pieces) {
      auto loadStarted = Clock::now();
      Result<rt::Module> m = rt::Module::load(*driver, p.image->kernel->image);
      if (!m)
        return Error{m.error()};
      loaded.push_back(m.take());
      p.seconds += since(loadStarted);
    }
    for (size_t i = 0; i < kernels.size(); ++i) {
      const abi::KernelLaunch &kl = kernels[i];
      Result<rt::CUfunction> f =
          loaded[count > 1 ? i : 0].function(kl.name);
      if (!f)
        return Error{f.error()};
      if (kl.smemBytes > 48 * 1024)
        if (Status s = driver->check(
                driver->cuFuncSetAttribute(
                    *f, rt::kFuncAttrMaxDynamicSharedBytes, int(kl.smemBytes)),
                "cuFuncSetAttribute");
            !s)
          return s;
      if (kl.cluster > 1 || kl.clusterX > 1)
        if (Status s = checkCluster(*driver, kl, *f); !s)
          return s;
      if (kl.cooperative)
        if (Status s = checkCooperative(*driver, kl, *f, np); !s)
          return s;
      // A kernel that reads its activations by TMA needs the driver's
      // tensor-map encoder in every forward: refuse it here, not there.
      if (std::string why = abi::inputMapWithoutEncoder(
              kl, driver->cuTensorMapEncodeTiled != nullptr);
          !why.empty())
        return Error{why};
      functions.push_back(*f);
    }
  }
  stats.kernelSeconds = since(kernelsStarted);
  for (const Piece &p : pieces)
    stats.slowestKernelSeconds = std::max(stats.slowestKernelSeconds, p.seconds);
  if (!target.compileOnly) {
    auto uploadStarted = Clock::now();
    const std::pair<abi::GemmParam, const std::optional<Tensor> *> sides[] = {
        {abi::ParamScales, &weights.scales},
        {abi::ParamZeroPoints, &weights.zeroPoints},
        {abi::ParamGlobalScale, &weights.globalScale},
        {abi::ParamBias, &weights.bias}};
    // A device copy of a host tensor.
    auto copyUp = [&](const Tensor &t) -> Result<rt::DeviceBuffer> {
      Result<rt::DeviceBuffer> buf =
          rt::DeviceBuffer::allocate(*driver, t.data.size());
      if (!buf)
        return Error{buf.error()};
      if (Status s = buf->upload(t.data.data(), t.data.size()); !s)
        return Error{s.error()};
      return buf;
    };
    auto upload = [&](abi::GemmParam param, const Tensor &t) -> Status {
      Result<rt::DeviceBuffer> buf = copyUp(t);
      if (!buf)
        return Error{buf.error()};
      pointers[param] = buf->ptr();
      buffers.emplace_back(param, buf.take());
      return Status::success();
    };
    // A canonical tensor up to a scratch buffer and its repack kernel into
    // the prepared one (the launches queue on the legacy stream; the scratch
    // buffers live until the synchronization below).
    std::vector<rt::DeviceBuffer> scratch;
    auto uploadRepacked = [&](abi::GemmParam param, WeightOperand op,
                              const Tensor &t) -> Status {
      const size_t index = size_t(
          std::find(repackOperands.begin(), repackOperands.end(), op) -
          repackOperands.begin());
      ShapeOrDiag shape = expectedShape(op, l.weight, l.input, np, kp,
                                        /*prepared=*/true);
      if (shape.error)
        return Error{*shape.error};
      // The canonical tensor where the device quantization left it, else
      // uploaded to a scratch buffer.
      rt::CUdeviceptr in = 0;
      if (const rt::DeviceBuffer *d =
              repackFromDevice ? l.deviceCanonical->find(op) : nullptr) {
        in = d->ptr();
      } else {
        Result<rt::DeviceBuffer> src = copyUp(t);
        if (!src)
          return Error{src.error()};
        in = src->ptr();
        scratch.push_back(src.take());
      }
      Result<rt::DeviceBuffer> dst = rt::DeviceBuffer::allocate(
          *driver, storageBytes(t.dtype, numElements(shape.shape)));
      if (!dst)
        return Error{dst.error()};
      const abi::KernelLaunch &kl = repack->kernels[index];
      const int64_t experts = std::max<int64_t>(1, l.weight.experts);
      uint32_t grid[3];
      kl.grid(experts, 0, grid);
      rt::CUdeviceptr null = 0, out = dst->ptr();
      int32_t e32 = int32_t(experts), zero = 0;
      void *args[abi::NumMoeParams] = {&in,   &null, &null, &null, &null,
                                       &null, &out,  &null, &e32,  &null,
                                       &null, &null, &null, &zero};
      if (Status s = driver->check(
              driver->cuLaunchKernel(repack->functions[index], grid[0],
                                     grid[1], grid[2], unsigned(kl.threads),
                                     1, 1, 0, nullptr, args, nullptr),
              "cuLaunchKernel (weight repack)");
          !s)
        return s;
      pointers[param] = dst->ptr();
      buffers.emplace_back(param, dst.take());
      return Status::success();
    };
    if (repack) {
      const QuantizedWeights &c = *l.canonical;
      if (Status s = uploadRepacked(abi::ParamWeight, WeightOperand::Weight,
                                    c.weight);
          !s)
        return s;
      if (c.scales)
        if (Status s = uploadRepacked(abi::ParamScales, WeightOperand::Scales,
                                      *c.scales);
            !s)
          return s;
      if (c.zeroPoints)
        if (Status s = uploadRepacked(abi::ParamZeroPoints,
                                      WeightOperand::ZeroPoints,
                                      *c.zeroPoints);
            !s)
          return s;
      for (auto [param, tensor] : sides)
        if (*tensor && (param == abi::ParamGlobalScale || param == abi::ParamBias))
          if (Status s = upload(param, **tensor); !s)
            return s;
      if (Status s = driver->check(driver->cuCtxSynchronize(),
                                   "cuCtxSynchronize (weight repack)");
          !s)
        return s;
    } else {
      // A canonical tensor from where the device quantization left it (a
      // copy: the layer keeps those for canonicalWeights()), else from the
      // host.
      auto place = [&](abi::GemmParam param, WeightOperand op,
                       const Tensor &t) -> Status {
        const rt::DeviceBuffer *d =
            copyFromDevice ? l.deviceCanonical->find(op) : nullptr;
        if (!d)
          return upload(param, t);
        Result<rt::DeviceBuffer> buf =
            rt::DeviceBuffer::allocate(*driver, d->size());
        if (!buf)
          return Error{buf.error()};
        if (Status s = buf->copyFrom(d->ptr(), d->size()); !s)
          return s;
        pointers[param] = buf->ptr();
        buffers.emplace_back(param, buf.take());
        return Status::success();
      };
      if (Status s = place(abi::ParamWeight, WeightOperand::Weight,
                           weights.weight);
          !s)
        return s;
      const WeightOperand sideOps[] = {
          WeightOperand::Scales, WeightOperand::ZeroPoints,
          WeightOperand::GlobalScale, WeightOperand::Bias};
      for (size_t i = 0; i < std::size(sides); ++i)
        if (*sides[i].second)
          if (Status s = place(sides[i].first, sideOps[i], **sides[i].second);
              !s)
            return s;
      if (copyFromDevice)
        if (Status s = driver->check(driver->cuCtxSynchronize(),
                                     "cuCtxSynchronize (weight copy)");
            !s)
          return s;
    }
    stats.weightSeconds += since(uploadStarted);
  }
  // forward() of 16-bit activations for an 8-bit layer: its quantizer and
  // buffers of activationRows rows (codes: rows of activationK() bytes,
  // 16-byte aligned, the codes past K zero; one f32 scale per row, or per
  // group of the row).
  std::optional<ActivationQuantizer> quantizer;
  // The per-stream scratch: the largest split-K workspace of the kernels,
  // then (16-bit inputs of an 8-bit layer) codes and scales of
  // activationRows rows (codes: rows of activationK() bytes; one f32 scale
  // per row, or per group of the row).
  auto align = rt::StreamScratch::aligned;
  size_t scratchBytes = 0, codesOffset = 0, scalesOffset = 0;
  for (const abi::KernelLaunch &kl : kernels)
    scratchBytes = std::max(scratchBytes, size_t(kl.workspace));
  if (target.activationRows > 0) {
    Result<ActivationQuantizer> q =
        ActivationQuantizer::create(l.input, l.output, l.k, l.kAct);
    if (!q)
      return Error{q.error()};
    LayerTarget qt = target;
    qt.tileConfig.clear();
    qt.canonicalLayout = false;
    if (Status s = q->transform(qt); !s)
      return s;
    quantizer.emplace(q.take());
    const int64_t scalesPerRow = l.input.scaling == ActScaling::Group
                                     ? ceilDiv(l.k, l.input.groupK)
                                     : 1;
    codesOffset = align(scratchBytes);
    scalesOffset =
        align(codesOffset + size_t(target.activationRows) * size_t(l.kAct));
    scratchBytes = scalesOffset + size_t(target.activationRows) *
                                      size_t(scalesPerRow) * sizeof(float);
  }
  std::unique_ptr<rt::StreamScratch> scratch;
  if (!target.compileOnly && scratchBytes) {
    scratch = std::make_unique<rt::StreamScratch>();
    if (Status s = scratch->init(*driver, scratchBytes, target.streams);
        !s)
      return s;
  }
  // Act-order layers that gather their activations: the gather kernel and
  // the permutation on the device.
  std::optional<detail::SingleKernel> gather;
  std::optional<rt::DeviceBuffer> permutation;
  if (selfGather) {
    LayerTarget gt = target;
    gt.tileConfig.clear();
    gt.canonicalLayout = false;
    const ScalarType type = l.input.type;
    Result<detail::SingleKernel> g = detail::compileSingleKernel(
        gt, "the act-order gather",
        concat("gather_columns columns=", l.k, " type=", type.str()),
        abi::kGatherColumnsKernel, [&](mlir::MLIRContext &ctx) {
          return mlir::humming::buildGatherColumnsModule(ctx, {l.k, type});
        });
    if (!g)
      return Error{g.error()};
    stats.compiled += g->stats.compiled;
    stats.cached += g->stats.cached;
    if (!target.compileOnly) {
      Result<rt::DeviceBuffer> p = rt::DeviceBuffer::allocate(
          *driver, l.inputPermutation.size() * sizeof(int32_t));
      if (!p)
        return Error{p.error()};
      if (Status s = p->upload(l.inputPermutation.data(),
                               l.inputPermutation.size() * sizeof(int32_t));
          !s)
        return s;
      permutation.emplace(p.take());
    }
    gather.emplace(g.take());
  }
  l.transformed = true;
  l.compileOnly = target.compileOnly;
  l.prepared = prepared;
  l.order = order;
  l.chip = chip->str();
  l.ptx = std::move(allPtx);
  l.modulePtx = std::move(modulePtx);
  l.stats = stats;
  l.kernels = std::move(kernels);
  l.driver = driver;
  // Programmatic dependent launch needs cuLaunchKernelEx and, for CUDA
  // graphs, a driver whose stream capture keeps it (12.3).
  int driverVersion = 0;
  if (driver && driver->cuDriverGetVersion)
    driver->cuDriverGetVersion(&driverVersion);
  l.dependentLaunch = dependentLaunch && driver &&
                      driver->cuLaunchKernelEx != nullptr &&
                      driverVersion >= rt::kDependentLaunchDriverVersion;
  l.smCount = 0;
  if (driver)
    if (Result<rt::Device> dev = rt::openDevice(*driver))
      l.smCount = dev->smCount;
  l.functions = std::move(functions);
  l.buffers = std::move(buffers);
  l.modules = std::move(loaded); // unloads the previous kernels
  l.pointers = pointers;
  l.quantizer = std::move(quantizer);
  l.activationRows = target.activationRows;
  l.scratch = std::move(scratch);
  l.codesOffset = codesOffset;
  l.scalesOffset = scalesOffset;
  l.gather = std::move(gather);
  l.permutation.reset();
  if (permutation)
    l.permutation.emplace(std::move(*permutation));
  return Status::success();
}

Status Layer::forward(void *stream, uint64_t input, uint64_t output,
                      int64_t m) const {
  const Impl &l = *impl_;
  if (l.moe)
    return Error{"a MoE layer (Layer::createMoe) runs by forwardMoe(), with "
                 "its routing"};
  if (!l.transformed)
    return Error{"call transform() before forward()"};
  if (l.gather)
    return Error{"the layer's K is permuted (act-order) and it gathers its "
                 "activations itself, into a scratch buffer the caller "
                 "gives: call forwardGathering()"};
  if (l.input.type.bits != 16) {
    if (!l.quantizer)
      return Error{concat("the layer takes ", l.input.type.str(),
                          " activations: call forwardQuantized() with their "
                          "codes and scales (humming::ActivationQuantizer "
                          "makes them from 16-bit activations), or transform "
                          "it with LayerTarget::activationRows")};
    return quantizeAndLaunch(stream, input, output, m, nullptr);
  }
  return launch(stream, input, 0, output, m);
}

Status Layer::forwardGathering(void *stream, uint64_t input, uint64_t scratch,
                               uint64_t output, int64_t m) const {
  const Impl &l = *impl_;
  if (!l.transformed)
    return Error{"call transform() before forwardGathering()"};
  if (!l.gather)
    return Error{"forwardGathering() runs act-order layers that gather their "
                 "activations (a permutation, transformed without "
                 "LayerTarget::activationsGathered); call forward()"};
  if (m < 0 || m > std::numeric_limits<int32_t>::max())
    return Error{concat("expected 0 <= M <= 2^31 - 1 tokens, got ", m)};
  if (m > 0 && (!input || !scratch))
    return Error{"expected device pointers for the input and the scratch "
                 "buffer, got a null pointer"};
  // The scratch buffer holds m x K activations; it must not overlap the
  // input (the gather reads every column of a row while writing it).
  const uint64_t bytes = uint64_t(m) * uint64_t(l.k) * 2;
  if (m > 0 && input < scratch + bytes && scratch < input + bytes)
    return Error{"expected a scratch buffer apart from the input (the "
                 "gather would overwrite columns it has yet to read)"};
  if (m > 0 && (input % 2 != 0 || scratch % 16 != 0))
    return Error{concat("expected a 2-byte aligned input and a 16-byte "
                        "aligned scratch buffer, got 0x",
                        llvm::utohexstr(input), " and 0x",
                        llvm::utohexstr(scratch))};
  if (l.compileOnly)
    return Error{concat("the layer was transformed compile-only for ", l.chip,
                        "; transform it for a device to run it")};
  if (m > 0) {
    const detail::SingleKernel &g = *l.gather;
    uint32_t grid[3];
    g.kernel.grid(m, 0, grid);
    rt::CUdeviceptr null = 0, in = input, out = scratch,
                    perm = l.permutation->ptr();
    int32_t m32 = int32_t(m), zero = 0;
    void *args[abi::NumMoeParams] = {&in,   &null, &null, &null, &null,
                                     &null, &out,  &null, &m32,  &perm,
                                     &null, &null, &null, &zero};
    if (Status s = g.driver->check(
            g.driver->cuLaunchKernel(g.function, grid[0], grid[1], grid[2],
                                     unsigned(g.kernel.threads), 1, 1, 0,
                                     static_cast<rt::CUstream>(stream), args,
                                     nullptr),
            "cuLaunchKernel");
        !s)
      return s;
  }
  return launch(stream, scratch, 0, output, m);
}

Status Layer::forwardQuantized(void *stream, uint64_t codes, uint64_t scales,
                               uint64_t output, int64_t m) const {
  const Impl &l = *impl_;
  if (l.moe)
    return Error{"a MoE layer (Layer::createMoe) runs by forwardMoe(), with "
                 "its routing and the codes' scales"};
  if (!l.transformed)
    return Error{"call transform() before forwardQuantized()"};
  if (l.input.type.bits == 16)
    return Error{concat("the layer takes ", l.input.type.str(),
                        " activations: call forward()")};
  const bool scaled = l.input.scaling != ActScaling::None;
  if (m > 0 && scaled && !scales)
    return Error{concat("expected the activations' f32 scales (",
                        toString(l.input.scaling), " scaling), got a null "
                        "pointer")};
  if (m > 0 && scaled && scales % 4 != 0)
    return Error{concat("expected 4-byte aligned activation scales, got 0x",
                        llvm::utohexstr(scales))};
  return launch(stream, codes, scaled ? scales : 0, output, m);
}

Status Layer::forwardMoe(void *stream, uint64_t input, uint64_t output,
                         int64_t m, const MoeRouting &routing,
                         uint64_t inputScale) const {
  const Impl &l = *impl_;
  if (!l.moe)
    return Error{"forwardMoe() runs MoE layers (Layer::createMoe); this one "
                 "is dense: call forward()"};
  if (!l.transformed)
    return Error{"call transform() before forwardMoe()"};
  if (l.input.type.bits == 16) {
    if (inputScale)
      return Error{concat("expected no activation scales with ",
                          l.input.type.str(), " activations, got a pointer")};
    return launch(stream, input, 0, output, m, &routing);
  }
  const bool scaled = l.input.scaling != ActScaling::None;
  if (inputScale || !scaled) {
    if (inputScale % 4 != 0)
      return Error{concat("expected 4-byte aligned activation scales, got 0x",
                          llvm::utohexstr(inputScale))};
    return launch(stream, input, inputScale, output, m, &routing);
  }
  // 16-bit activations for a layer of 8-bit ones: its own quantizer.
  if (!l.quantizer)
    return Error{concat("the layer takes ", l.input.type.str(),
                        " activations: pass their f32 scales (inputScale), "
                        "or transform it with LayerTarget::activationRows to "
                        "give 16-bit ones")};
  return quantizeAndLaunch(stream, input, output, m, &routing);
}

Status Layer::quantizeAndLaunch(void *stream, uint64_t input, uint64_t output,
                                int64_t m, const MoeRouting *routing) const {
  const Impl &l = *impl_;
  if (m > l.activationRows)
    return Error{concat("expected at most ", l.activationRows,
                        " rows (LayerTarget::activationRows), got M = ", m)};
  if (m > 0 && (!input || !output))
    return Error{"expected device pointers for the input and the output, "
                 "got a null pointer"};
  if (l.compileOnly) // launch says compile-only
    return launch(stream, input, 0, output, m, routing);
  Result<rt::CUdeviceptr> block = l.scratchFor(stream);
  if (!block)
    return Error{block.error()};
  const uint64_t codes = *block + l.codesOffset,
                 scales = *block + l.scalesOffset;
  if (Status s = l.quantizer->forward(stream, input, codes, scales, m); !s)
    return s;
  return launch(stream, codes, scales, output, m, routing);
}

Status Layer::launch(void *stream, uint64_t input, uint64_t inputScale,
                     uint64_t output, int64_t m,
                     const MoeRouting *routing) const {
  const Impl &l = *impl_;
  // The arguments first, so their errors are the same with or without a
  // device.
  if (m < 0 || m > std::numeric_limits<int32_t>::max())
    return Error{concat("expected 0 <= M <= 2^31 - 1 tokens, got ", m)};
  if (routing && m > 0) {
    const MoeOptions &moe = *l.moe;
    auto need = [&](uint64_t p, const char *what) -> Status {
      if (!p)
        return Error{concat("expected ", what, " (", toString(moe.routing),
                            " routing), got a null pointer")};
      if (p % 4 != 0)
        return Error{concat("expected a 4-byte aligned ", what, ", got 0x",
                            llvm::utohexstr(p))};
      return Status::success();
    };
    if (moe.routing == GemmType::Indexed) {
      for (auto [p, what] :
           {std::pair{routing->sortedIds, "sorted_ids"},
            std::pair{routing->expertIds, "expert_ids"},
            std::pair{routing->numTokensPadded, "num_tokens_padded"}})
        if (Status s = need(p, what); !s)
          return s;
      if (routing->sortedLength < 0 ||
          routing->sortedLength > std::numeric_limits<int32_t>::max())
        return Error{concat("expected the length of sorted_ids in 0 .. 2^31 "
                            "- 1, got ",
                            routing->sortedLength)};
      if (m > std::numeric_limits<int32_t>::max() / moe.topK)
        return Error{concat("expected M * top_k <= 2^31 - 1, got M = ", m,
                            ", top_k = ", moe.topK)};
    } else if (moe.allRows) {
      if (routing->expertLayout)
        return Error{"expected no expert token counts with "
                     "MoeOptions::allRows (every expert has all of its "
                     "max_tokens rows), got a pointer"};
    } else if (Status s = need(routing->expertLayout,
                               moe.routing == GemmType::GroupedContiguous
                                   ? "expert offsets [E + 1]"
                                   : "expert token counts [E]");
               !s) {
      return s;
    }
    if (moe.routing == GemmType::GroupedMasked && m % l.weight.experts != 0)
      return Error{concat("expected E x max_tokens rows with grouped_masked "
                          "routing (E = ",
                          l.weight.experts, "), got M = ", m)};
    if (moe.routerWeights) {
      if (Status s = need(routing->routerWeights, "router weights"); !s)
        return s;
    } else if (routing->routerWeights) {
      return Error{"expected no router weights: the layer was created "
                   "without MoeOptions::routerWeights"};
    }
  }
  if (m > 0 && (!input || !output))
    return Error{"expected device pointers for the input and the output, got "
                 "a null pointer"};
  if (m > 0 && (input % 16 != 0 || output % 4 != 0)) {
    char text[96];
    std::snprintf(text, sizeof text,
                  "0x%llx and 0x%llx", (unsigned long long)input,
                  (unsigned long long)output);
    return Error{concat("expected a 16-byte aligned input and a 4-byte "
                        "aligned output, got ",
                        text)};
  }
  // M's kernel (none for M = 0).
  const abi::KernelLaunch *kl = m == 0    ? nullptr
                                : routing ? abi::moeKernelFor(l.kernels, m)
                                          : abi::kernelFor(l.kernels, m);
  int32_t routingBlock = 0;
  if (routing && l.moe->routing == GemmType::Indexed && kl) {
    // The routing's block_size: each of M's kernel's blocks of block_m rows
    // must lie in one expert's padded ids.
    const int64_t bs =
        routing->blockSize ? routing->blockSize : l.moe->blockSize;
    if (bs < 16 || bs > 1024 || bs % 16 != 0 || bs % kl->blockM != 0)
      return Error{concat(
          "expected the routing's block_size to be a multiple of ",
          16 * ceilDiv(kl->blockM, 16),
          " up to 1024 (the block_m of the kernel for M = ", m,
          ": route with Layer::moeBlockSize(M)), got ", bs,
          routing->blockSize ? "" : " (MoeRouting::blockSize unset)")};
    routingBlock = int32_t(bs);
  }
  if (l.compileOnly)
    return Error{concat("the layer was transformed compile-only for ", l.chip,
                        "; transform it for a device to run it")};
  if (m == 0)
    return Status::success();
  if (!kl)
    return Error{concat("no kernel serves M = ", m, " (a bug)")};
  size_t index = size_t(kl - l.kernels.data());
  std::array<rt::CUdeviceptr, abi::NumMoeParams> ptrs{};
  std::copy(l.pointers.begin(), l.pointers.end(), ptrs.begin());
  ptrs[abi::ParamInput] = input;
  ptrs[abi::ParamOutput] = output;
  ptrs[abi::ParamInputScale] = inputScale;
  int32_t m32 = int32_t(m);
  // After M: a MoE kernel's routing pointers; the split-K workspace of a
  // kernel with one (this stream's: KernelLaunch::workspace); the tensor
  // map of a kernel that reads its activations by TMA, by value (the
  // launch copies it; CUDA graphs capture it).
  std::array<void *, abi::NumMoeParams + 2> args;
  unsigned next = abi::ParamM + 1;
  for (unsigned p = 0; p < abi::ParamM; ++p)
    args[p] = &ptrs[p];
  args[abi::ParamM] = &m32;
  if (routing) {
    const bool indexed = l.moe->routing == GemmType::Indexed;
    ptrs[abi::ParamRowIds] = indexed ? routing->sortedIds : routing->expertLayout;
    ptrs[abi::ParamBlockExperts] = indexed ? routing->expertIds : 0;
    ptrs[abi::ParamRowsPadded] = indexed ? routing->numTokensPadded : 0;
    ptrs[abi::ParamRouterWeights] = routing->routerWeights;
    for (unsigned p = abi::ParamRowIds; p < abi::ParamRoutingBlock; ++p)
      args[p] = &ptrs[p];
    args[abi::ParamRoutingBlock] = &routingBlock;
    next = abi::NumMoeParams;
  }
  rt::CUdeviceptr workspace = 0;
  if (kl->workspace) {
    Result<rt::CUdeviceptr> block = l.scratchFor(stream);
    if (!block)
      return Error{block.error()};
    workspace = *block;
    if (!workspace)
      return Error{concat("kernel ", kl->name, " needs a split-K workspace "
                          "of ", kl->workspace, " bytes and the layer has "
                          "none (a bug)")};
    args[next++] = &workspace;
  }
  rt::TensorMap map;
  if (kl->inputMap) {
    abi::InputMapArgs a;
    if (std::string why =
            abi::inputMapArgs(*kl, l.kAct, m, a, l.input.type.bits);
        !why.empty())
      return Error{why};
    // transform() refused such a kernel on a driver without the encoder.
    if (Status s = l.driver->check(
            l.driver->cuTensorMapEncodeTiled(
                &map, rt::kTensorMapUint16, 2,
                reinterpret_cast<void *>(uintptr_t(input)), a.dims, a.strides,
                a.box, a.elementStrides, rt::kTensorMapNoInterleave,
                a.swizzle, rt::kTensorMapL2Promote256,
                rt::kTensorMapOobZero),
            "cuTensorMapEncodeTiled");
        !s)
      return s;
    args[next++] = &map;
  }
  uint32_t grid[3];
  if (routing) {
    abi::moeGrid(*kl, m, l.paddedN(), routing->sortedLength, grid);
    if (grid[1] == 0)
      return Status::success(); // no block of rows (sorted_ids too short)
  } else {
    kl->grid(m, l.paddedN(), grid, l.smCount);
  }
  // Programmatic dependent launch and the cooperative launch
  // (transform() checked the driver and the residency of the latter).
  rt::LaunchAttribute attrs[2];
  unsigned numAttrs = 0;
  if (kl->gridDependency && l.dependentLaunch) {
    attrs[numAttrs].id = rt::kLaunchAttrProgrammaticSerialization;
    attrs[numAttrs++].value.i = 1;
  }
  if (kl->cooperative) {
    attrs[numAttrs].id = rt::kLaunchAttrCooperative;
    attrs[numAttrs++].value.i = 1;
  }
  if (numAttrs) {
    rt::LaunchConfig cfg;
    cfg.gridDimX = grid[0];
    cfg.gridDimY = grid[1];
    cfg.gridDimZ = grid[2];
    cfg.blockDimX = unsigned(kl->threads);
    cfg.sharedMemBytes = unsigned(kl->smemBytes);
    cfg.hStream = static_cast<rt::CUstream>(stream);
    cfg.attrs = attrs;
    cfg.numAttrs = numAttrs;
    return l.driver->check(l.driver->cuLaunchKernelEx(&cfg, l.functions[index],
                                                      args.data(), nullptr),
                           "cuLaunchKernelEx");
  }
  return l.driver->check(
      l.driver->cuLaunchKernel(l.functions[index], grid[0], grid[1], grid[2],
                               unsigned(kl->threads), 1, 1,
                               unsigned(kl->smemBytes),
                               static_cast<rt::CUstream>(stream), args.data(),
                               nullptr),
      "cuLaunchKernel");
}

Result<std::string> jitCompiler() {
  JitState &j = jit();
  if (!j.compiler)
    return Error{j.compilerError};
  return concat(j.compiler->name(), " (", j.compiler->version(), ")");
}

} // namespace humming
