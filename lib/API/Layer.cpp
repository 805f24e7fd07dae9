//===- Layer.cpp - A quantized linear layer, ready to run -----------------===//

#include "Humming/API/Layer.h"
#include "Humming/API/ActivationQuantizer.h"
#include "Jit.h"
#include "LayerImpl.h"

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

using detail::Clock;
using detail::since;

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
} // namespace

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

Result<detail::ModuleKernels>
Layer::Impl::weightQuantizeKernels(const LayerTarget &target, DType dtype,
                                   const ScalarType &param) const {
  mh::WeightQuantizeSpec spec;
  spec.weight = weight;
  spec.source = *dtypeScalar(dtype);
  spec.n = n;
  spec.k = k;
  spec.zeroPointType = param;
  LayerTarget qt = target;
  qt.tileConfig.clear();
  qt.canonicalLayout = false;
  return detail::compileKernels(
      qt, "the weight quantization",
      concat("quantize_weights ", formatWeightSchema(weight),
             " source=", spec.source.str(), " n=", n, " k=", k,
             " zero_point_type=", param.str()),
      abi::kWeightQuantizeKernel, [&](mlir::MLIRContext &ctx) {
        return mh::buildWeightQuantizeModule(ctx, spec);
      });
}

Result<Layer::Impl::QuantizeOutputs>
Layer::Impl::quantizeOutputs(const rt::CudaDriver &driver,
                             const ScalarType &param,
                             const double *bias) const {
  const int64_t np = paddedN(), kp = paddedK();
  const int64_t experts = std::max<int64_t>(1, weight.experts);
  InputSchema anyInput;
  auto tensorOf = [&](WeightOperand op, DType d) -> Result<Tensor> {
    ShapeOrDiag shape = expectedShape(op, weight, anyInput, np, kp, false);
    if (shape.error)
      return Error{*shape.error};
    return Tensor(d, shape.shape);
  };
  // Each output: its canonical tensor's shape and dtype (no data: the
  // codes stay on the device for transform()'s repack until the host asks
  // for them) and a device buffer of its size.
  QuantizeOutputs o;
  QuantizedWeights &q = o.q;
  DeviceCanonical &onDevice = o.onDevice;
  onDevice.driver = &driver;
  if (driver.cuCtxGetCurrent)
    driver.cuCtxGetCurrent(&onDevice.context);
  auto output = [&](WeightOperand op, DType d, Tensor &t,
                    rt::CUdeviceptr &ptr) -> Status {
    // The shape alone: a Tensor would zero a host copy of the codes (a
    // page fault per 4 KiB: 21 of the 24 ms this took for 8192^2 uint4).
    ShapeOrDiag shape = expectedShape(op, weight, anyInput, np, kp, false);
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
  if (Status s = output(WeightOperand::Weight, DType::I32, q.weight, o.codes);
      !s)
    return Error{s.error()};
  if (weight.hasScaleTensor())
    if (Status s = output(WeightOperand::Scales, *storageFor(weight.scaleType),
                          q.scales.emplace(), o.scales);
        !s)
      return Error{s.error()};
  if (weight.zeroPoint != ZeroPointKind::None) {
    // (Integer zero points are OR-ed into the stream: the module's first
    // kernel zeroes them.)
    const bool intZp = weight.zeroPoint == ZeroPointKind::Int;
    if (Status s = output(WeightOperand::ZeroPoints,
                          intZp ? DType::I32 : *storageFor(param),
                          q.zeroPoints.emplace(), o.zeroPoints);
        !s)
      return Error{s.error()};
  }
  // The global scales ([E] f32): made on the device, brought to the host
  // at once (E floats; the transform uploads them as they are).
  if (weight.hasGlobalScale()) {
    Result<Tensor> t = tensorOf(WeightOperand::GlobalScale, DType::F32);
    if (!t)
      return Error{t.error()};
    q.globalScale.emplace(t.take());
    Result<rt::DeviceBuffer> buf =
        rt::DeviceBuffer::allocate(driver, q.globalScale->data.size());
    if (!buf)
      return Error{buf.error()};
    o.global = buf->ptr();
    o.globalScale.emplace(buf.take());
  }
  // The bias as the host has it, padded to N with zeros.
  if (weight.bias) {
    Result<Tensor> t = tensorOf(WeightOperand::Bias, *storageFor(param));
    if (!t)
      return Error{t.error()};
    q.bias.emplace(t.take());
    for (int64_t e = 0; e < experts; ++e)
      for (int64_t r = 0; r < np; ++r)
        q.bias->set(e * np + r, r < n ? bias[e * n + r] : 0.0);
  }
  return o;
}

Status Layer::Impl::runWeightQuantize(const detail::ModuleKernels &k,
                                      uint64_t weights,
                                      QuantizeOutputs &o) const {
  const rt::CudaDriver &driver = *k.driver;
  const int64_t experts = std::max<int64_t>(1, weight.experts);
  rt::CUdeviceptr null = 0, in = weights;
  int32_t e32 = int32_t(experts);
  void *args[abi::NumGemmParams] = {&in,           &null,     &o.scales,
                                    &o.zeroPoints, &o.global, &null,
                                    &o.codes,      &null,     &e32};
  // The module's kernels in order (a clearing pass first where zero points
  // are OR-ed or a global maximum is taken; a global scale's amax pass and
  // its last step around the quantization).
  for (size_t i = 0; i < k.kernels.size(); ++i) {
    const abi::KernelLaunch &kl = k.kernels[i];
    uint32_t grid[3];
    kl.grid(experts, 0, grid);
    if (Status s =
            driver.check(driver.cuLaunchKernel(k.functions[i], grid[0], grid[1],
                                               grid[2], unsigned(kl.threads), 1,
                                               1, 0, nullptr, args, nullptr),
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
  if (o.globalScale)
    return o.globalScale->download(o.q.globalScale->data.data(),
                                   o.q.globalScale->data.size());
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
  Result<detail::ModuleKernels> k =
      l.weightQuantizeKernels(target, dtype, param);
  if (!k)
    return Error{concat(k.error(), " (quantize() runs on the host)")};
  const double moduleMs = 1e3 * since(started);
  Result<Impl::QuantizeOutputs> out =
      l.quantizeOutputs(*k->driver, param, bias);
  if (!out)
    return Error{out.error()};
  const double allocMs = 1e3 * since(started) - moduleMs;
  auto launched = Clock::now();
  if (Status s = l.runWeightQuantize(*k, weights, *out); !s)
    return s;
  const double kernelMs = 1e3 * since(launched);
  // The shapes and dtypes are the schema's by construction (tensorOf):
  // loadQuantized's checks would read the data the host does not have.
  l.canonical = std::move(out->q);
  l.deviceCanonical.emplace(std::move(out->onDevice));
  l.transformed = false;
  rt::logInfo(concat("quantizeOnDevice: ", formatWeightSchema(l.weight),
                     " n=", l.n, " k=", l.k, ": ", 1e3 * since(started),
                     " ms (module ", moduleMs, " ms, ",
                     k->stats.compiled ? "compiled" : "from the cache",
                     "; buffers ", allocMs, " ms; kernel ", kernelMs,
                     " ms)"));
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
  if (Status s = l.checkLaunch(input, output, m, routing); !s)
    return s;
  // M's kernel (none for M = 0).
  const abi::KernelLaunch *kl = m == 0    ? nullptr
                                : routing ? abi::moeKernelFor(l.kernels, m)
                                          : abi::kernelFor(l.kernels, m);
  Result<int32_t> routingBlock = l.routingBlock(kl, m, routing);
  if (!routingBlock)
    return Error{routingBlock.error()};
  if (l.compileOnly)
    return Error{concat("the layer was transformed compile-only for ", l.chip,
                        "; transform it for a device to run it")};
  if (m == 0)
    return Status::success();
  if (!kl)
    return Error{concat("no kernel serves M = ", m, " (a bug)")};
  Impl::LaunchArgs args;
  args.routingBlock = *routingBlock;
  if (Status s =
          l.fillArgs(args, *kl, stream, input, inputScale, output, m, routing);
      !s)
    return s;
  return l.launchKernel(*kl, stream, m, routing, args.args.data());
}

Status Layer::Impl::checkLaunch(uint64_t inputPtr, uint64_t output, int64_t m,
                                const MoeRouting *routing) const {
  if (m < 0 || m > std::numeric_limits<int32_t>::max())
    return Error{concat("expected 0 <= M <= 2^31 - 1 tokens, got ", m)};
  if (routing && m > 0) {
    const MoeOptions &opts = *moe;
    auto need = [&](uint64_t p, const char *what) -> Status {
      if (!p)
        return Error{concat("expected ", what, " (", toString(opts.routing),
                            " routing), got a null pointer")};
      if (p % 4 != 0)
        return Error{concat("expected a 4-byte aligned ", what, ", got 0x",
                            llvm::utohexstr(p))};
      return Status::success();
    };
    if (opts.routing == GemmType::Indexed) {
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
      if (m > std::numeric_limits<int32_t>::max() / opts.topK)
        return Error{concat("expected M * top_k <= 2^31 - 1, got M = ", m,
                            ", top_k = ", opts.topK)};
    } else if (opts.allRows) {
      if (routing->expertLayout)
        return Error{"expected no expert token counts with "
                     "MoeOptions::allRows (every expert has all of its "
                     "max_tokens rows), got a pointer"};
    } else if (Status s = need(routing->expertLayout,
                               opts.routing == GemmType::GroupedContiguous
                                   ? "expert offsets [E + 1]"
                                   : "expert token counts [E]");
               !s) {
      return s;
    }
    if (opts.routing == GemmType::GroupedMasked && m % weight.experts != 0)
      return Error{concat("expected E x max_tokens rows with grouped_masked "
                          "routing (E = ",
                          weight.experts, "), got M = ", m)};
    if (opts.routerWeights) {
      if (Status s = need(routing->routerWeights, "router weights"); !s)
        return s;
    } else if (routing->routerWeights) {
      return Error{"expected no router weights: the layer was created "
                   "without MoeOptions::routerWeights"};
    }
  }
  if (m > 0 && (!inputPtr || !output))
    return Error{"expected device pointers for the input and the output, got "
                 "a null pointer"};
  if (m > 0 && (inputPtr % 16 != 0 || output % 4 != 0)) {
    char text[96];
    std::snprintf(text, sizeof text, "0x%llx and 0x%llx",
                  (unsigned long long)inputPtr, (unsigned long long)output);
    return Error{concat("expected a 16-byte aligned input and a 4-byte "
                        "aligned output, got ",
                        text)};
  }
  return Status::success();
}

Result<int32_t> Layer::Impl::routingBlock(const abi::KernelLaunch *kl,
                                          int64_t m,
                                          const MoeRouting *routing) const {
  if (!routing || moe->routing != GemmType::Indexed || !kl)
    return 0;
  // The routing's block_size: each of M's kernel's blocks of block_m rows
  // must lie in one expert's padded ids.
  const int64_t bs = routing->blockSize ? routing->blockSize : moe->blockSize;
  if (bs < 16 || bs > 1024 || bs % 16 != 0 || bs % kl->blockM != 0)
    return Error{
        concat("expected the routing's block_size to be a multiple of ",
               16 * ceilDiv(kl->blockM, 16),
               " up to 1024 (the block_m of the kernel for M = ", m,
               ": route with Layer::moeBlockSize(M)), got ", bs,
               routing->blockSize ? "" : " (MoeRouting::blockSize unset)")};
  return int32_t(bs);
}

Status Layer::Impl::fillArgs(LaunchArgs &a, const abi::KernelLaunch &kl,
                             void *stream, uint64_t inputPtr,
                             uint64_t inputScale, uint64_t output, int64_t m,
                             const MoeRouting *routing) const {
  const size_t index = size_t(&kl - kernels.data());
  std::copy(pointers.begin(), pointers.end(), a.ptrs.begin());
  a.ptrs[abi::ParamInput] = inputPtr;
  a.ptrs[abi::ParamOutput] = output;
  a.ptrs[abi::ParamInputScale] = inputScale;
  a.m = int32_t(m);
  // After M: a MoE kernel's routing pointers; the split-K workspace of a
  // kernel with one (this stream's: KernelLaunch::workspace); the tensor
  // map of a kernel that reads its activations by TMA, then the weights'
  // of one that reads its weights so, by value (the launch copies them;
  // CUDA graphs capture them).
  unsigned next = abi::ParamM + 1;
  for (unsigned p = 0; p < abi::ParamM; ++p)
    a.args[p] = &a.ptrs[p];
  a.args[abi::ParamM] = &a.m;
  if (routing) {
    const bool indexed = moe->routing == GemmType::Indexed;
    a.ptrs[abi::ParamRowIds] =
        indexed ? routing->sortedIds : routing->expertLayout;
    a.ptrs[abi::ParamBlockExperts] = indexed ? routing->expertIds : 0;
    a.ptrs[abi::ParamRowsPadded] = indexed ? routing->numTokensPadded : 0;
    a.ptrs[abi::ParamRouterWeights] = routing->routerWeights;
    for (unsigned p = abi::ParamRowIds; p < abi::ParamRoutingBlock; ++p)
      a.args[p] = &a.ptrs[p];
    a.args[abi::ParamRoutingBlock] = &a.routingBlock;
    next = abi::NumMoeParams;
  }
  if (kl.workspace) {
    Result<rt::CUdeviceptr> block = scratchFor(stream);
    if (!block)
      return Error{block.error()};
    a.workspace = *block;
    if (!a.workspace)
      return Error{concat("kernel ", kl.name, " needs a split-K workspace of ",
                          kl.workspace,
                          " bytes and the layer has none (a bug)")};
    a.args[next++] = &a.workspace;
  }
  if (kl.inputMap) {
    abi::InputMapArgs e;
    if (std::string why = abi::inputMapArgs(kl, kAct, m, e, input.type.bits);
        !why.empty())
      return Error{why};
    // transform() refused such a kernel on a driver without the encoder.
    if (Status s = driver->check(
            driver->cuTensorMapEncodeTiled(
                &a.inputMap, rt::kTensorMapUint16, 2,
                reinterpret_cast<void *>(uintptr_t(inputPtr)), e.dims,
                e.strides, e.box, e.elementStrides, rt::kTensorMapNoInterleave,
                e.swizzle, rt::kTensorMapL2Promote256, rt::kTensorMapOobZero),
            "cuTensorMapEncodeTiled");
        !s)
      return s;
    a.args[next++] = &a.inputMap;
  }
  // The weights' tensor map (encoded by transform()), after it.
  if (kl.weightMap) {
    if (index >= weightMaps.size())
      return Error{concat("kernel ", kl.name,
                          " reads its weights through a tensor map and the "
                          "layer has none (a bug)")};
    a.weightMap = weightMaps[index];
    a.args[next++] = &a.weightMap;
  }
  return Status::success();
}

Status Layer::Impl::launchKernel(const abi::KernelLaunch &kl, void *stream,
                                 int64_t m, const MoeRouting *routing,
                                 void **args) const {
  const size_t index = size_t(&kl - kernels.data());
  uint32_t grid[3];
  if (routing) {
    abi::moeGrid(kl, m, paddedN(), routing->sortedLength, grid);
    if (grid[1] == 0)
      return Status::success(); // no block of rows (sorted_ids too short)
  } else {
    kl.grid(m, paddedN(), grid, smCount);
  }
  // Programmatic dependent launch and the cooperative launch
  // (transform() checked the driver and the residency of the latter).
  rt::LaunchAttribute attrs[2];
  unsigned numAttrs = 0;
  if (kl.gridDependency && dependentLaunch) {
    attrs[numAttrs].id = rt::kLaunchAttrProgrammaticSerialization;
    attrs[numAttrs++].value.i = 1;
  }
  if (kl.cooperative) {
    attrs[numAttrs].id = rt::kLaunchAttrCooperative;
    attrs[numAttrs++].value.i = 1;
  }
  if (numAttrs) {
    rt::LaunchConfig cfg;
    cfg.gridDimX = grid[0];
    cfg.gridDimY = grid[1];
    cfg.gridDimZ = grid[2];
    cfg.blockDimX = unsigned(kl.threads);
    cfg.sharedMemBytes = unsigned(kl.smemBytes);
    cfg.hStream = static_cast<rt::CUstream>(stream);
    cfg.attrs = attrs;
    cfg.numAttrs = numAttrs;
    return driver->check(
        driver->cuLaunchKernelEx(&cfg, functions[index], args, nullptr),
        "cuLaunchKernelEx");
  }
  return driver->check(
      driver->cuLaunchKernel(functions[index], grid[0], grid[1], grid[2],
                             unsigned(kl.threads), 1, 1, unsigned(kl.smemBytes),
                             static_cast<rt::CUstream>(stream), args, nullptr),
      "cuLaunchKernel");
}

Result<std::string> jitCompiler() {
  JitState &j = jit();
  if (!j.compiler)
    return Error{j.compilerError};
  return concat(j.compiler->name(), " (", j.compiler->version(), ")");
}

} // namespace humming
