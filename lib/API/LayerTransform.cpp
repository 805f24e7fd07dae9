//===- LayerTransform.cpp - Layer::transform() and its phases -------------===//
//
// transform() prepares a layer for a chip in named phases (Layer::Impl):
// planTransform (every check that needs no kernel), hostWeights,
// compileGemmKernels, loadGemmKernels, uploadWeights, activationScratch and
// gatherKernel; only when all of them succeeded does the layer take the new
// kernels and buffers, so a failed transform keeps the previous ones.
//
//===----------------------------------------------------------------------===//

#include "LayerImpl.h"

#include "Humming/Dialect/Humming/IR/HummingAttrs.h"
#include "Humming/Dialect/Humming/IR/HummingDialect.h"
#include "Humming/Pipelines/Pipelines.h"
#include "Humming/Target/TileHeuristics.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/Threading.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace humming {
namespace mh = mlir::humming;
using detail::Clock;
using detail::since;

namespace {
using detail::jit;
using detail::JitState;

/// The block_size of the layer's humming.moe_gemm: the fixed one, or for a
/// routing that follows M a multiple of every MoE tile's block_m (the
/// tiles are free among them and each call passes its own).
int64_t moeOpBlockSize(const MoeOptions &moe) {
  if (moe.routing != GemmType::Indexed)
    return 0;
  return moe.blockSize ? moe.blockSize : kMoeFollowingBlockSize;
}

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
  if (rt::CUresult r =
          driver.cuOccupancyMaxActiveClusters(&clusters, f, &config);
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
  if (Status s =
          driver.check(driver.cuOccupancyMaxActiveBlocksPerMultiprocessor(
                           &perSm, f, int(kl.threads), size_t(kl.smemBytes)),
                       "cuOccupancyMaxActiveBlocksPerMultiprocessor");
      !s)
    return s;
  if (std::string why = abi::cooperativeCannotRun(kl, np, perSm, dev->smCount);
      !why.empty())
    return Error{why};
  return Status::success();
}

/// The activations' own requirements of the target: LayerTarget::
/// activationRows only where forward() quantizes, 8-bit activations' chips
/// and MMAs, and the prepared layout (`unprepared` says why it is not used)
/// under 8- and 4-bit activations.
Status checkActivations(const WeightSchema &w, const InputSchema &in,
                        const LayerTarget &target, const Chip &chip,
                        const Diag &unprepared) {
  if (target.activationRows < 0 ||
      target.activationRows > (int64_t(1) << 31) - 1)
    return Error{
        concat("expected LayerTarget::activationRows in 0 .. 2^31 - 1, "
               "got ",
               target.activationRows)};
  if (target.activationRows > 0 && !detail::quantizesItsInput(in))
    return Error{concat("LayerTarget::activationRows applies to layers of "
                        "8- or 4-bit activations scaled per token, or 8-bit "
                        "ones per group (forward() quantizes them), got ",
                        formatInputSchema(in))};
  // 8-bit activations: the k32 kernels over prepared weights only (wgmma
  // on sm_90a, mma.sync m16n8k32 elsewhere: s8 from sm_80, fp8 from sm_89).
  if (in.type.bits == 8) {
    if (unsigned need = std::max(80u, minSmForActivation(in.type));
        chip.sm < need)
      return Error{concat(in.type.str(), " activations need sm_", need,
                          " or newer (m16n8k32 ", in.type.str(), " MMAs); got ",
                          chip.str())};
    if (!chip.supportsMma(MmaKind::Wgmma))
      if (Diag d = layout::eightBitMmaSyncSupports(w, in))
        return Error{concat(*d, " (on ", chip.str(), ")")};
    if (unprepared)
      return Error{concat(in.type.str(),
                          " activations run over the "
                          "prepared layout only, which is not used: ",
                          *unprepared)};
  }
  // si4 activations: the mma.sync m16n8k64 s4 kernels over prepared
  // weights (sm_80 and later, checked above; sm_90 has no int4 tensor cores
  // and runs them emulated, which chooseActivation avoids but an explicit
  // schema gets).
  if (layout::computesInFourBits(in.type)) {
    if (unprepared)
      return Error{concat("si4 activations run over the prepared layout "
                          "only, which is not used: ",
                          *unprepared)};
  }
  return Status::success();
}

/// The repack module of a layer's weight-side tensors that have a prepared
/// form (the bias and the global scale go up as they are) into `rs`, and
/// its kernel cache description.
std::string describeRepack(const WeightSchema &w, const InputSchema &in,
                           int64_t n, int64_t kAct, const Chip &chip,
                           const QuantizedWeights &canonical,
                           mh::RepackSpec &rs) {
  rs.weight = w;
  rs.input = in;
  rs.n = n;
  rs.k = kAct;
  rs.chip = chip.str();
  rs.operands.push_back(WeightOperand::Weight);
  if (canonical.scales)
    rs.operands.push_back(WeightOperand::Scales);
  if (canonical.zeroPoints) {
    rs.operands.push_back(WeightOperand::ZeroPoints);
    if (std::optional<ScalarType> t = dtypeScalar(canonical.zeroPoints->dtype))
      rs.element = *t;
  }
  std::string operands;
  for (WeightOperand op : rs.operands)
    operands += concat(operands.empty() ? "" : ",", toString(op));
  return concat("repack ", formatWeightSchema(rs.weight), " ",
                formatInputSchema(in), " n=", n, " k=", rs.k,
                " element=", rs.element.str(), " operands=", operands);
}

/// LayerTarget::tileConfig parsed and verified (its errors before any
/// compile), and printed back into `printed` so that equal tiles share
/// cache keys.
Result<TileConfig> parseTileConfig(const std::string &text,
                                   std::string &printed) {
  mlir::MLIRContext ctx;
  ctx.loadDialect<mh::HummingDialect>();
  std::string diagnostics;
  mlir::ScopedDiagnosticHandler handler(&ctx, [&](mlir::Diagnostic &d) {
    diagnostics += (diagnostics.empty() ? "" : "; ") + d.str();
    return mlir::success();
  });
  auto attr = llvm::dyn_cast_or_null<mh::TileConfigAttr>(
      mlir::parseAttribute(text, &ctx));
  if (!attr)
    return Error{concat("expected a #humming.tile_config, got '", text, "'",
                        diagnostics.empty() ? "" : ": ", diagnostics)};
  llvm::raw_string_ostream os(printed);
  mlir::Attribute(attr).print(os);
  return attr.toHost();
}

/// An environment switch of two values: `fallback` where `name` is unset
/// or empty, else whether it is `on` (anything but `on` and `off` refused
/// with `what`, which says what each means).
Result<bool> environmentSwitch(const char *name, const char *on,
                               const char *off, bool fallback,
                               const char *what) {
  const char *v = std::getenv(name);
  if (!v || !*v)
    return fallback;
  if (std::strcmp(v, on) != 0 && std::strcmp(v, off) != 0)
    return Error{concat("expected ", name, " to be ", what, ", got '", v, "'")};
  return std::strcmp(v, on) == 0;
}
} // namespace

Result<detail::TransformPlan>
Layer::Impl::planTransform(const LayerTarget &target) const {
  const Impl &l = *this;
  detail::TransformPlan plan;
  // The chip and the device whose facts choose the tiles.
  const std::string &device = target.device;
  Result<Chip> chip = detail::targetChip(target);
  if (!chip)
    return Error{chip.error()};
  if (chip->sm < 80)
    return Error{
        concat("the mma_sync kernels need sm_80 or newer, got ", chip->str())};
  plan.chip = *chip;
  plan.device = device;
  // Act-order: the layer gathers 16-bit activations itself
  // (forwardGathering) unless the caller says it does.
  plan.selfGather = !l.inputPermutation.empty() && !target.activationsGathered;
  if (plan.selfGather && (l.input.type.bits != 16 || l.moe))
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
  plan.driver = *live;

  // Weights: the prepared layout where it holds the schema.
  const int64_t np = l.paddedN(), kp = l.paddedK();
  // Why the prepared layout is not used (none: it is).
  plan.unprepared = target.canonicalLayout
                        ? Diag("the target asks for the canonical layout")
                        : layout::supports(l.gemmWeight(), l.input, np, kp);
  const Diag &unprepared = plan.unprepared;
  const bool prepared = plan.prepared = !unprepared;
  // sm_90a reads 8-bit weights of the activation type by wgmma descriptor
  // (layout::TileOrder::KMajor); the lowering derives the same order from
  // the schema and the chip.
  plan.order = prepared ? layout::tileOrder(l.gemmWeight(), l.input,
                                            chip->readsKMajorEightBit())
                        : layout::TileOrder::Fragments;
  if (l.moe && !prepared)
    return Error{concat("a MoE layer runs over the prepared layout only, "
                        "which is not used: ",
                        *unprepared)};
  if (Status s =
          checkActivations(l.gemmWeight(), l.input, target, *chip, unprepared);
      !s)
    return Error{s.error()};
  // A forced tile configuration: parsed and verified here, so its errors
  // come before any compile; printed back, so equal tiles share cache keys.
  if (!target.tileConfig.empty()) {
    if (!prepared)
      return Error{concat("a tile configuration applies to the prepared "
                          "layout, which is not used: ",
                          *unprepared)};
    Result<TileConfig> forced =
        parseTileConfig(target.tileConfig, plan.tileConfig);
    if (!forced)
      return Error{forced.error()};
    plan.forced = *forced;
  }
  // HUMMING_PDL=0 turns programmatic dependent launch off.
  Result<bool> pdl = environmentSwitch(
      "HUMMING_PDL", "1", "0", true,
      "0 (ordinary launches) or 1 (programmatic dependent launch)");
  if (!pdl)
    return Error{pdl.error()};
  plan.dependentLaunch = target.dependentLaunch && *pdl;
  // HUMMING_JIT_THREADS bounds the threads (default: one per kernel).
  if (const char *v = std::getenv("HUMMING_JIT_THREADS"); v && *v) {
    char *end = nullptr;
    long n = std::strtol(v, &end, 10);
    if (*end != '\0' || n < 1 || n > 1024)
      return Error{concat("expected HUMMING_JIT_THREADS to be a thread count "
                          "between 1 and 1024, got '",
                          v, "'")};
    plan.workers = size_t(n);
  }
  // The kernels select-tiles will choose: the same heuristics, same facts.
  if (plan.forced) {
    plan.count = forcedTileConfigs(*plan.forced).size();
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
    plan.count = tiles->size();
  }
  // Weights prepared on the device (the humming.repack kernels) where the
  // layer runs on one; HUMMING_PREPARE=host keeps the host repack, the
  // reference the device's must equal bit for bit (the GPU suite checks).
  Result<bool> onDevice = environmentSwitch(
      "HUMMING_PREPARE", "device", "host", true,
      "host (the weights prepared on the host) or device (by the GPU where "
      "the layer runs on one)");
  if (!onDevice)
    return Error{onDevice.error()};
  plan.repackOnDevice = prepared && !target.compileOnly && *onDevice;
  // Canonical tensors a device quantization left there are repacked where
  // they are (same driver and context); anything else reads them on the
  // host (the download finds their device by unified addressing).
  rt::CUcontext current = nullptr;
  if (plan.driver && plan.driver->cuCtxGetCurrent)
    plan.driver->cuCtxGetCurrent(&current);
  const bool sameDevice = !target.compileOnly && l.deviceCanonical &&
                          l.deviceCanonical->driver == plan.driver &&
                          l.deviceCanonical->context == current;
  plan.repackFromDevice = plan.repackOnDevice && sameDevice;
  // A layer over canonical tensors (not prepared: e.g. block scales, which
  // the prepared layout does not hold) copies them on the device instead
  // of sending them down and up again.
  plan.copyFromDevice = !prepared && sameDevice;
  return plan;
}

Result<std::optional<QuantizedWeights>>
Layer::Impl::hostWeights(const detail::TransformPlan &plan) {
  if (!plan.repackFromDevice && !plan.copyFromDevice)
    if (Status s = canonicalToHost(); !s)
      return Error{concat("bringing the canonical tensors from the device: ",
                          s.error())};
  // The canonical tensors themselves, or their prepared form (no copy).
  if (!plan.prepared || plan.repackOnDevice)
    return std::optional<QuantizedWeights>();
  Result<QuantizedWeights> p =
      layout::prepareMmaSync(gemmWeight(), input, *canonical, paddedN(),
                             paddedK(), /*threads=*/0, plan.order);
  if (!p)
    return Error{p.error()};
  return std::optional<QuantizedWeights>(p.take());
}

Result<detail::LayerKernels>
Layer::Impl::compileGemmKernels(const detail::TransformPlan &plan,
                                TransformStats &stats) const {
  const Impl &l = *this;
  const Chip &chip = plan.chip;
  const size_t count = plan.count;
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
  spec.prepared = plan.prepared;
  spec.chip = chip.str();
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
      " activation_k=", l.kAct, " prepared=", plan.prepared,
      " device=", plan.device, " tiles=", plan.tileConfig, " kernels=", count,
      l.moe ? concat(" moe=", toString(l.moe->routing), " top_k=", l.moe->topK,
                     " block_size=", l.moe->blockSize, " router_weights=",
                     l.moe->routerWeights, " all_rows=", l.moe->allRows)
            : std::string());
  struct Piece {
    Result<rt::KernelCache::Lookup> image = Error{"not compiled"};
    std::vector<abi::KernelLaunch> table;
    double seconds = 0;
  };
  std::vector<Piece> pieces(count);
  auto work = [&](size_t i) {
    auto started = Clock::now();
    const int only = count > 1 ? int(i) : -1;
    Piece &p = pieces[i];
    p.image = detail::cachedImage(
        j, chip, concat(description, " only-kernel=", only),
        [&](mlir::MLIRContext &ctx) { return mh::buildLayerModule(ctx, spec); },
        // PTX ISA: the chip's minimum (every chip with an fp8 mma.sync has
        // 8.4, the one LLVM selects it from; sm_90a's mma_sync kernels take
        // f16 MMAs instead: Chip::emulatesFp8MmaSync).
        {/*ptxVersion=*/0, plan.device, plan.tileConfig, only});
    p.seconds = since(started);
    if (!p.image)
      return;
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
  if (plan.repackOnDevice)
    repackDescription = describeRepack(l.gemmWeight(), l.input, l.n, l.kAct,
                                       chip, *l.canonical, repackSpec);
  const size_t workers = std::min(plan.workers, count);
  {
    // Exactly `workers` threads (not capped at the cores: HUMMING_JIT_THREADS
    // decides), each kernel a task.
    llvm::DefaultThreadPool pool(llvm::hardware_concurrency(unsigned(workers)));
    for (size_t i = 0; i < count; ++i)
      pool.async([&work, i] { work(i); });
    if (plan.repackOnDevice)
      pool.async([&] {
        auto started = Clock::now();
        repackImage = detail::cachedImage(
            j, chip, repackDescription, [&](mlir::MLIRContext &ctx) {
              return mh::buildRepackModule(ctx, repackSpec);
            });
        stats.slowestKernelSeconds =
            std::max(stats.slowestKernelSeconds, since(started));
      });
    pool.wait();
  }
  detail::LayerKernels k;
  if (plan.repackOnDevice) {
    if (!repackImage)
      return Error{repackImage.error()};
    Result<detail::ModuleKernels> r =
        detail::loadKernels(*repackImage, chip, plan.driver, abi::kRepackKernel,
                            "the weight repack");
    if (!r)
      return Error{r.error()};
    stats.compiled += r->stats.compiled;
    stats.cached += r->stats.cached;
    k.repackOperands = repackSpec.operands;
    k.repack.emplace(r.take());
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
  k.kernels = pieces[0].table;
  if (k.kernels.size() != count && count > 1)
    return Error{concat("expected ", count,
                        " kernels from the tile heuristics, "
                        "the pipeline made ",
                        k.kernels.size(), " (a bug)")};
  if (k.kernels.empty())
    return Error{"the compiled layer has no kernels (a bug)"};
  for (Piece &p : pieces) {
    std::string ptx = p.image->artifact->ptx;
    k.allPtx += ptx;
    k.modulePtx.push_back(ptx);
    k.pieces.push_back({p.image.take(), std::move(ptx), p.seconds});
  }
  return k;
}

Result<detail::LoadedKernels>
Layer::Impl::loadGemmKernels(const detail::TransformPlan &plan,
                             detail::LayerKernels &k) const {
  // Kernel i from module i (or the one module of all).
  const rt::CudaDriver &driver = *plan.driver;
  detail::LoadedKernels loaded;
  for (detail::LayerKernels::Piece &p : k.pieces) {
    auto loadStarted = Clock::now();
    Result<rt::Module> m = rt::Module::load(driver, p.image.kernel->image);
    if (!m)
      return Error{m.error()};
    loaded.modules.push_back(m.take());
    p.seconds += since(loadStarted);
  }
  for (size_t i = 0; i < k.kernels.size(); ++i) {
    const abi::KernelLaunch &kl = k.kernels[i];
    Result<rt::CUfunction> f =
        loaded.modules[k.pieces.size() > 1 ? i : 0].function(kl.name);
    if (!f)
      return Error{f.error()};
    if (kl.smemBytes > 48 * 1024)
      if (Status s = driver.check(
              driver.cuFuncSetAttribute(*f, rt::kFuncAttrMaxDynamicSharedBytes,
                                        int(kl.smemBytes)),
              "cuFuncSetAttribute");
          !s)
        return Error{s.error()};
    if (kl.cluster > 1 || kl.clusterX > 1)
      if (Status s = checkCluster(driver, kl, *f); !s)
        return Error{s.error()};
    if (kl.cooperative)
      if (Status s = checkCooperative(driver, kl, *f, paddedN()); !s)
        return Error{s.error()};
    // A kernel that reads its activations by TMA needs the driver's
    // tensor-map encoder in every forward: refuse it here, not there.
    if (std::string why = abi::tensorMapsWithoutEncoder(
            kl, driver.cuTensorMapEncodeTiled != nullptr);
        !why.empty())
      return Error{why};
    loaded.functions.push_back(*f);
  }
  return loaded;
}

namespace {
/// Puts a layer's weight-side tensors on the device (uploadWeights):
/// buffers by kernel parameter, and the pointers the kernels take.
class WeightUploader {
public:
  explicit WeightUploader(const rt::CudaDriver &driver) : driver_(driver) {}

  /// A device copy of a host tensor.
  Result<rt::DeviceBuffer> copyUp(const Tensor &t) const {
    return rt::DeviceBuffer::copyOf(driver_, t.data.data(), t.data.size());
  }
  /// `t` uploaded as the kernels' `param`.
  Status upload(abi::GemmParam param, const Tensor &t) {
    Result<rt::DeviceBuffer> buf = copyUp(t);
    if (!buf)
      return Error{buf.error()};
    keep(param, buf.take());
    return Status::success();
  }
  /// A device copy of `d` as the kernels' `param`.
  Status copy(abi::GemmParam param, const rt::DeviceBuffer &d) {
    Result<rt::DeviceBuffer> buf =
        rt::DeviceBuffer::allocate(driver_, d.size());
    if (!buf)
      return Error{buf.error()};
    if (Status s = buf->copyFrom(d.ptr(), d.size()); !s)
      return s;
    keep(param, buf.take());
    return Status::success();
  }
  /// `buf` as the kernels' `param`.
  void keep(abi::GemmParam param, rt::DeviceBuffer buf) {
    out_.pointers[param] = buf.ptr();
    out_.buffers.emplace_back(param, std::move(buf));
  }
  detail::WeightBuffers take() { return std::move(out_); }

private:
  const rt::CudaDriver &driver_;
  detail::WeightBuffers out_;
};
} // namespace

Result<detail::WeightBuffers>
Layer::Impl::uploadWeights(const detail::TransformPlan &plan,
                           const QuantizedWeights &weights,
                           const detail::LayerKernels &k) const {
  const Impl &l = *this;
  const rt::CudaDriver &driver = *plan.driver;
  WeightUploader up(driver);
  const std::pair<abi::GemmParam, const std::optional<Tensor> *> sides[] = {
      {abi::ParamScales, &weights.scales},
      {abi::ParamZeroPoints, &weights.zeroPoints},
      {abi::ParamGlobalScale, &weights.globalScale},
      {abi::ParamBias, &weights.bias}};
  if (!k.repack) {
    // A canonical tensor from where the device quantization left it (a
    // copy: the layer keeps those for canonicalWeights()), else from the
    // host.
    auto place = [&](abi::GemmParam param, WeightOperand op,
                     const Tensor &t) -> Status {
      const rt::DeviceBuffer *d =
          plan.copyFromDevice ? l.deviceCanonical->find(op) : nullptr;
      return d ? up.copy(param, *d) : up.upload(param, t);
    };
    if (Status s =
            place(abi::ParamWeight, WeightOperand::Weight, weights.weight);
        !s)
      return Error{s.error()};
    const WeightOperand sideOps[] = {
        WeightOperand::Scales, WeightOperand::ZeroPoints,
        WeightOperand::GlobalScale, WeightOperand::Bias};
    for (size_t i = 0; i < std::size(sides); ++i)
      if (*sides[i].second)
        if (Status s = place(sides[i].first, sideOps[i], **sides[i].second); !s)
          return Error{s.error()};
    if (plan.copyFromDevice)
      if (Status s = driver.check(driver.cuCtxSynchronize(),
                                  "cuCtxSynchronize (weight copy)");
          !s)
        return Error{s.error()};
    return up.take();
  }
  // A canonical tensor up to a scratch buffer and its repack kernel into
  // the prepared one (the launches queue on the legacy stream; the scratch
  // buffers live until the synchronization below).
  std::vector<rt::DeviceBuffer> scratch;
  const detail::ModuleKernels &repack = *k.repack;
  auto uploadRepacked = [&](abi::GemmParam param, WeightOperand op,
                            const Tensor &t) -> Status {
    const size_t index =
        size_t(std::find(k.repackOperands.begin(), k.repackOperands.end(), op) -
               k.repackOperands.begin());
    ShapeOrDiag shape = expectedShape(op, l.weight, l.input, l.paddedN(),
                                      l.paddedK(), /*prepared=*/true);
    if (shape.error)
      return Error{*shape.error};
    // The canonical tensor where the device quantization left it, else
    // uploaded to a scratch buffer.
    rt::CUdeviceptr in = 0;
    if (const rt::DeviceBuffer *d =
            plan.repackFromDevice ? l.deviceCanonical->find(op) : nullptr) {
      in = d->ptr();
    } else {
      Result<rt::DeviceBuffer> src = up.copyUp(t);
      if (!src)
        return Error{src.error()};
      in = src->ptr();
      scratch.push_back(src.take());
    }
    Result<rt::DeviceBuffer> dst = rt::DeviceBuffer::allocate(
        driver, storageBytes(t.dtype, numElements(shape.shape)));
    if (!dst)
      return Error{dst.error()};
    const abi::KernelLaunch &kl = repack.kernels[index];
    const int64_t experts = std::max<int64_t>(1, l.weight.experts);
    uint32_t grid[3];
    kl.grid(experts, 0, grid);
    rt::CUdeviceptr null = 0, out = dst->ptr();
    int32_t e32 = int32_t(experts), zero = 0;
    void *args[abi::NumMoeParams] = {&in,   &null, &null, &null, &null,
                                     &null, &out,  &null, &e32,  &null,
                                     &null, &null, &null, &zero};
    if (Status s = driver.check(
            driver.cuLaunchKernel(repack.functions[index], grid[0], grid[1],
                                  grid[2], unsigned(kl.threads), 1, 1, 0,
                                  nullptr, args, nullptr),
            "cuLaunchKernel (weight repack)");
        !s)
      return s;
    up.keep(param, dst.take());
    return Status::success();
  };
  const QuantizedWeights &c = *l.canonical;
  if (Status s =
          uploadRepacked(abi::ParamWeight, WeightOperand::Weight, c.weight);
      !s)
    return Error{s.error()};
  if (c.scales)
    if (Status s =
            uploadRepacked(abi::ParamScales, WeightOperand::Scales, *c.scales);
        !s)
      return Error{s.error()};
  if (c.zeroPoints)
    if (Status s = uploadRepacked(abi::ParamZeroPoints,
                                  WeightOperand::ZeroPoints, *c.zeroPoints);
        !s)
      return Error{s.error()};
  for (auto [param, tensor] : sides)
    if (*tensor && (param == abi::ParamGlobalScale || param == abi::ParamBias))
      if (Status s = up.upload(param, **tensor); !s)
        return Error{s.error()};
  if (Status s = driver.check(driver.cuCtxSynchronize(),
                              "cuCtxSynchronize (weight repack)");
      !s)
    return Error{s.error()};
  return up.take();
}

Result<detail::ActivationScratch> Layer::Impl::activationScratch(
    const LayerTarget &target, const detail::TransformPlan &plan,
    const std::vector<abi::KernelLaunch> &kernels) const {
  const Impl &l = *this;
  detail::ActivationScratch a;
  // The per-stream scratch: the largest split-K workspace of the kernels,
  // then (16-bit inputs of an 8-bit layer: forward() quantizes them) codes
  // and scales of activationRows rows (codes: rows of activationK() bytes,
  // 16-byte aligned, the codes past K zero; one f32 scale per row, or per
  // group of the row).
  auto align = rt::StreamScratch::aligned;
  size_t scratchBytes = 0;
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
      return Error{s.error()};
    a.quantizer.emplace(q.take());
    const int64_t scalesPerRow =
        l.input.scaling == ActScaling::Group ? ceilDiv(l.k, l.input.groupK) : 1;
    a.codesOffset = align(scratchBytes);
    a.scalesOffset =
        align(a.codesOffset + size_t(target.activationRows) * size_t(l.kAct));
    scratchBytes = a.scalesOffset + size_t(target.activationRows) *
                                        size_t(scalesPerRow) * sizeof(float);
  }
  if (!target.compileOnly && scratchBytes) {
    a.scratch = std::make_unique<rt::StreamScratch>();
    if (Status s = a.scratch->init(*plan.driver, scratchBytes, target.streams);
        !s)
      return Error{s.error()};
  }
  return a;
}

Result<detail::GatherKernel>
Layer::Impl::gatherKernel(const LayerTarget &target,
                          const detail::TransformPlan &plan,
                          TransformStats &stats) const {
  const Impl &l = *this;
  detail::GatherKernel g;
  if (!plan.selfGather)
    return g;
  LayerTarget gt = target;
  gt.tileConfig.clear();
  gt.canonicalLayout = false;
  const ScalarType type = l.input.type;
  Result<detail::SingleKernel> kernel = detail::compileSingleKernel(
      gt, "the act-order gather",
      concat("gather_columns columns=", l.k, " type=", type.str()),
      abi::kGatherColumnsKernel, [&](mlir::MLIRContext &ctx) {
        return mlir::humming::buildGatherColumnsModule(ctx, {l.k, type});
      });
  if (!kernel)
    return Error{kernel.error()};
  stats.compiled += kernel->stats.compiled;
  stats.cached += kernel->stats.cached;
  if (!target.compileOnly) {
    Result<rt::DeviceBuffer> p =
        rt::DeviceBuffer::copyOf(*plan.driver, l.inputPermutation.data(),
                                 l.inputPermutation.size() * sizeof(int32_t));
    if (!p)
      return Error{p.error()};
    g.permutation.emplace(p.take());
  }
  g.kernel.emplace(kernel.take());
  return g;
}

Result<std::vector<rt::TensorMap>>
Layer::Impl::encodeWeightMaps(const detail::TransformPlan &plan,
                              const std::vector<abi::KernelLaunch> &kernels,
                              rt::CUdeviceptr weights) const {
  std::vector<rt::TensorMap> maps(kernels.size());
  for (size_t i = 0; i < kernels.size(); ++i) {
    const abi::KernelLaunch &kl = kernels[i];
    if (!kl.weightMap)
      continue;
    abi::WeightMapArgs a;
    if (std::string why =
            abi::weightMapArgs(kl, paddedN(), paddedK(), weight.type.bits, a);
        !why.empty())
      return Error{why};
    // loadGemmKernels refused such a kernel on a driver without the
    // encoder.
    const rt::CudaDriver &driver = *plan.driver;
    if (Status s = driver.check(
            driver.cuTensorMapEncodeTiled(
                &maps[i], rt::kTensorMapUint64, 3,
                reinterpret_cast<void *>(uintptr_t(weights)), a.dims, a.strides,
                a.box, a.elementStrides, rt::kTensorMapNoInterleave,
                rt::kTensorMapNoSwizzle, rt::kTensorMapL2Promote256,
                rt::kTensorMapOobZero),
            "cuTensorMapEncodeTiled");
        !s)
      return Error{s.error()};
  }
  return maps;
}

Status Layer::transform(const LayerTarget &target) {
  if (Status s = probe::checkEnvironment(std::getenv("HUMMING_PROBE")); !s)
    return s;
  if (Status s = transformKernels(target); !s)
    return s;
  if (target.compileOnly)
    return Status::success();
  if (Status s = probeKernels(target); !s) {
    // Kernels the probe found wrong are never run.
    impl_->transformed = false;
    return s;
  }
  return Status::success();
}

Status Layer::transformKernels(const LayerTarget &target) {
  Impl &l = *impl_;
  if (!l.canonical)
    return Error{"expected weights before transform(): call loadQuantized() "
                 "or quantize() first"};
  Result<detail::TransformPlan> planned = l.planTransform(target);
  if (!planned)
    return Error{planned.error()};
  const detail::TransformPlan &plan = *planned;
  TransformStats stats;

  auto weightsStarted = Clock::now();
  Result<std::optional<QuantizedWeights>> preparedWeights = l.hostWeights(plan);
  if (!preparedWeights)
    return Error{preparedWeights.error()};
  const QuantizedWeights &weights =
      *preparedWeights ? **preparedWeights : *l.canonical;
  stats.weightSeconds = since(weightsStarted);

  auto kernelsStarted = Clock::now();
  Result<detail::LayerKernels> kernels = l.compileGemmKernels(plan, stats);
  if (!kernels)
    return Error{kernels.error()};
  detail::LoadedKernels loaded;
  if (!target.compileOnly) {
    Result<detail::LoadedKernels> k = l.loadGemmKernels(plan, *kernels);
    if (!k)
      return Error{k.error()};
    loaded = k.take();
  }
  stats.kernelSeconds = since(kernelsStarted);
  for (const detail::LayerKernels::Piece &p : kernels->pieces)
    stats.slowestKernelSeconds =
        std::max(stats.slowestKernelSeconds, p.seconds);

  detail::WeightBuffers buffers;
  if (!target.compileOnly) {
    auto uploadStarted = Clock::now();
    Result<detail::WeightBuffers> b = l.uploadWeights(plan, weights, *kernels);
    if (!b)
      return Error{b.error()};
    buffers = b.take();
    stats.weightSeconds += since(uploadStarted);
  }
  std::vector<rt::TensorMap> weightMaps;
  if (!target.compileOnly) {
    Result<std::vector<rt::TensorMap>> maps = l.encodeWeightMaps(
        plan, kernels->kernels, buffers.pointers[abi::ParamWeight]);
    if (!maps)
      return Error{maps.error()};
    weightMaps = maps.take();
  }
  Result<detail::ActivationScratch> scratch =
      l.activationScratch(target, plan, kernels->kernels);
  if (!scratch)
    return Error{scratch.error()};
  Result<detail::GatherKernel> gather = l.gatherKernel(target, plan, stats);
  if (!gather)
    return Error{gather.error()};

  // Every phase succeeded: the layer takes the new kernels (the previous
  // ones are unloaded as their modules are replaced).
  const rt::CudaDriver *driver = plan.driver;
  l.transformed = true;
  l.compileOnly = target.compileOnly;
  l.prepared = plan.prepared;
  l.order = plan.order;
  l.chip = plan.chip.str();
  l.ptx = std::move(kernels->allPtx);
  l.modulePtx = std::move(kernels->modulePtx);
  l.stats = stats;
  l.kernels = std::move(kernels->kernels);
  l.driver = driver;
  // Programmatic dependent launch needs cuLaunchKernelEx and, for CUDA
  // graphs, a driver whose stream capture keeps it (12.3).
  int driverVersion = 0;
  if (driver && driver->cuDriverGetVersion)
    driver->cuDriverGetVersion(&driverVersion);
  l.dependentLaunch = plan.dependentLaunch && driver &&
                      driver->cuLaunchKernelEx != nullptr &&
                      driverVersion >= rt::kDependentLaunchDriverVersion;
  l.smCount = 0;
  if (driver)
    if (Result<rt::Device> dev = rt::openDevice(*driver))
      l.smCount = dev->smCount;
  l.functions = std::move(loaded.functions);
  l.buffers = std::move(buffers.buffers);
  l.modules = std::move(loaded.modules); // unloads the previous kernels
  l.pointers = buffers.pointers;
  l.weightMaps = std::move(weightMaps);
  l.quantizer = std::move(scratch->quantizer);
  l.activationRows = target.activationRows;
  l.scratch = std::move(scratch->scratch);
  l.codesOffset = scratch->codesOffset;
  l.scalesOffset = scratch->scalesOffset;
  l.gather = std::move(gather->kernel);
  l.permutation.reset();
  if (gather->permutation)
    l.permutation.emplace(std::move(*gather->permutation));
  return Status::success();
}

} // namespace humming
