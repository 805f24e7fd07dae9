//===- GemmPatterns.cpp - humming.gemm and humming.moe_gemm
//-----------------===//
//
// A GEMM op becomes the launches of its kernels: one per tile configuration
// (M range) over prepared weights, chosen by M at run time, or the
// canonical kernel; each kernel and launch in the kernel table.
//
//===----------------------------------------------------------------------===//

#include "Humming/Conversion/HummingToNVVM.h"
#include "Humming/Dialect/Humming/IR/HummingOps.h"
#include "Kernels.h"
#include "Lowering.h"

#include "Humming/Quant/MmaGeneration.h"
#include "Humming/Quant/PreparedLayout.h"
#include "Humming/Target/TileHeuristics.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::humming;
using namespace mlir::humming::lowering;
namespace hq = ::humming;

namespace {

/// What the lowering reads of a humming.gemm or a humming.moe_gemm.
struct GemmView {
  Operation *op = nullptr;
  Value input, weight, scales, zeroPoints, globalScale, bias, inputScale,
      output;
  /// MoE: the routing tensors in the order of abi::MoeParam.
  Value rowIds, blockExperts, rowsPadded, routerWeights;
  WeightSchemaAttr weightSchema;
  InputSchemaAttr inputSchema;
  ComputeAttr compute;
  LayoutAttr layout;
  ArrayAttr tiles;
  int64_t routing = hq::abi::kRoutingDense;
  int64_t topK = 1, blockSize = 0;

  /// The operands and attributes humming.gemm and humming.moe_gemm share.
  template <typename Op> static GemmView common(Op op) {
    GemmView v;
    v.op = op;
    v.input = op.getInput();
    v.weight = op.getWeight();
    v.scales = op.getScales();
    v.zeroPoints = op.getZeroPoints();
    v.globalScale = op.getGlobalScale();
    v.bias = op.getBias();
    v.inputScale = op.getInputScale();
    v.output = op.getOutput();
    v.weightSchema = op.getWeightSchema();
    v.inputSchema = op.getInputSchema();
    v.compute = op.getComputeAttr();
    v.layout = op.getLayoutAttr();
    v.tiles = op.getTileConfigsAttr();
    return v;
  }
  static GemmView of(GemmOp op) { return common(op); }
  static GemmView of(MoeGemmOp op) {
    GemmView v = common(op);
    switch (op.getCompute().getGemm()) {
    case hq::GemmType::Indexed:
      v.routing = hq::abi::kRoutingIndexed;
      v.rowIds = op.getSortedIds();
      v.blockExperts = op.getExpertIds();
      v.rowsPadded = op.getNumTokensPadded();
      v.topK = op.getTopK().value_or(1);
      v.blockSize = op.getBlockSize().value_or(0);
      break;
    case hq::GemmType::GroupedContiguous:
      v.routing = hq::abi::kRoutingContiguous;
      v.rowIds = op.getExpertLayout();
      break;
    default:
      v.routing = hq::abi::kRoutingMasked;
      v.rowIds = op.getExpertLayout();
      break;
    }
    v.routerWeights = op.getTopkWeights();
    return v;
  }
  bool isMoe() const { return routing != hq::abi::kRoutingDense; }
  hq::MoeShape moeShape() const {
    hq::MoeShape s;
    s.gemm = compute ? compute.getGemm() : hq::GemmType::Dense;
    s.experts = weightSchema.getExperts();
    s.topK = topK;
    s.blockSize = blockSize;
    s.routerWeights = bool(routerWeights);
    return s;
  }
  InFlightDiagnostic emitOpError(const Twine &message = {}) const {
    return op->emitOpError(message);
  }
};

/// The staged epilogue (KernelShape::stagedRows) of the dense warp-
/// specialized 8-bit wgmma tiles of one n-tile per warpgroup, in the shared
/// memory the pipeline leaves (`smem`, updated): the most tokens per round
/// (a multiple of 16 dividing warp_m: stmatrix.x4 stores 16 tokens x 16
/// columns) whose staging areas fit. 16-byte row stores need N a multiple
/// of 8 (every row 16-byte aligned). A kernel whose pipeline lets two CTAs
/// share an SM (each CTA also holds 1 KiB of the SM's: an SM has the
/// block's maximum and 1 KiB) keeps that.
void stageEpilogue(const GemmKernelSpec &spec, const hq::TileConfig &t,
                   const hq::Chip &chip, PreparedTile &tile, int64_t &smem) {
  const int64_t maxBlock = chip.maxSharedMemoryPerBlock();
  const int64_t twoPerSm = (maxBlock + 1024) / 2 - 1024;
  const int64_t stagingCap = smem <= twoPerSm ? twoPerSm : maxBlock;
  if (spec.input.type.bits != 8 || !tile.wgmma() || !tile.warpSpecialized ||
      spec.isMoe() || tile.nTilesPerGroup != 1 || t.splitK != 1 ||
      spec.nOut % 8 != 0 || tile.warpM % 16 != 0 || smem > maxBlock)
    return;
  for (int64_t rows = tile.warpM; rows >= 16; rows -= 16) {
    if (tile.warpM % rows != 0)
      continue;
    hq::layout::KernelShape staged = tile;
    staged.stagedRows = rows;
    if (hq::layout::sharedBytes(spec.weight, staged) <= stagingCap) {
      tile = staged;
      smem = hq::layout::sharedBytes(spec.weight, tile);
      return;
    }
  }
}

/// preparedTile's checks of the tile against the operands: the
/// activations' MMA family and the generation's own kernel limits.
hq::Diag tileOperandsProblem(const hq::TileConfig &t,
                             const GemmKernelSpec &spec) {
  const bool act8 = spec.input.type.bits == 8;
  const hq::MmaGeneration &gen = hq::mmaGeneration(t.mma);
  auto why = [](const Twine &text) { return hq::Diag(text.str()); };
  // 4-bit activations: the mma_sync m16n8k64 s4 kernels with per-warp
  // copies (MmaGeneration::kernelProblem).
  if (spec.input.type.bits == 4 && !gen.s4Activations)
    return why("expected mma = " +
               Twine(hq::mmaNamesWith(&hq::MmaGeneration::s4Activations)) +
               " with si4 activations (m16n8k64 s4; no other MMA takes "
               "them)");
  if (act8 && t.wgmmaInFlight != 0)
    return why("expected wgmma_in_flight = 0 with " +
               Twine(spec.input.type.str()) +
               " activations (each iteration's sums are added to the "
               "running ones after its wgmmas are waited for, and the next "
               "iteration's first wgmma rewrites them)");
  if (act8 && spec.weight.hasPerKScales() && t.warpK > spec.weight.groupK)
    return why("expected warp_k <= the group size (" +
               Twine(spec.weight.groupK) + ") with " +
               Twine(spec.input.type.str()) +
               " activations (each iteration's f32 sums take one group "
               "scale), got " +
               Twine(t.warpK));
  // The generation's kernels: their instruction's K step, accumulation and
  // the sums a thread holds.
  return gen.kernelProblem(t, spec.weight, spec.input, spec.f16Accumulation);
}

/// preparedTile's checks of the tile's pipeline: warps, stages, copies,
/// TMA, what the prepared kernels do not implement, multicast_a, the
/// registers a block leaves a thread, promotion_interval.
hq::Diag tilePipelineProblem(const hq::TileConfig &t,
                             const GemmKernelSpec &spec, const hq::Chip &chip,
                             bool kMajor) {
  const hq::MmaGeneration &gen = hq::mmaGeneration(t.mma);
  auto why = [](const Twine &text) { return hq::Diag(text.str()); };
  const int64_t warpsM = t.blockM / t.warpM;
  if (t.blockM % t.warpM != 0 || warpsM > 8)
    return why("expected block_m = warp_m x 1, 2, 4 or 8 (warp rows along M), "
               "got block_m = " +
               Twine(t.blockM) + ", warp_m = " + Twine(t.warpM));
  // cp.async pipelines unroll their prologue and name their groups by
  // immediates: 8 slots. The mbarrier pipelines index slots at run time; 16
  // covers the smallest slots that fit the 227 KiB (the 8-bit tiles' 64-of-K
  // slots, 20 KiB each, bench/NOTES.md "8-bit activations").
  const int64_t maxStages = t.mbarrier ? 16 : 8;
  if (t.stages > maxStages)
    return why("expected at most " + Twine(maxStages) +
               " stages (pipeline slots" +
               (t.mbarrier ? ", with mbarrier" : ", without mbarrier") +
               "), got " + Twine(t.stages));
  if (!t.cpAsync)
    return why("the mma_sync kernels stage their operands with cp.async; "
               "expected cp_async = true");
  if (t.warpSpecialized && !gen.producerWarpgroup)
    return why("expected mma = " +
               Twine(hq::mmaNamesWith(&hq::MmaGeneration::producerWarpgroup)) +
               " with warp_specialized (the " + gen.name +
               " kernels do not implement a producer warpgroup)");
  if (t.mbarrier && !t.warpSpecialized)
    return why("expected warp_specialized = true with mbarrier = true (the "
               "prepared kernels synchronise through mbarriers only between "
               "a producer warpgroup and its consumers)");
  // TMA: the activations (a) and the weights (b) of the warp-specialized
  // wgmma kernels only, by copies completing on the producer's full
  // mbarriers.
  if (t.tma != 0 &&
      ((t.tma & ~(hq::TmaA | hq::TmaB)) != 0 || !t.warpSpecialized))
    return why("the prepared kernels fetch only the activations (a) and "
               "the weights (b) by TMA, in warp-specialized wgmma kernels; "
               "expected tma = [a], [b] or [a, b] with mma = wgmma, "
               "warp_specialized = true, or no tma");
  // (The activations' tensor map needs rows of a multiple of 16 bytes: K
  // and pad_k are multiples of 8 for 16-bit activations and of 16 for
  // 8-bit ones, verified above.)
  // (One tensor copy brings an iteration's K of block_m tokens as rows TMA
  // swizzles by their width, at most 128 bytes: 16-bit wgmma tiles have
  // block_k = warp_k = 32 or 64, verified above.)
  if (t.streamK || t.multicastB != 1 || t.gridCap != 0 || t.writeSplits != 1)
    return why("the prepared kernels do not implement stream-K, "
               "multicast of the weights (multicast_b), grid_cap or "
               "write_splits yet; expected their defaults");
  // multicast_a = 2: pairs of column blocks share the activation tile
  // (KernelShape::multicastA), each CTA copying half its rows by TMA.
  if (t.multicastA > 1) {
    if (!gen.producerWarpgroup || !t.warpSpecialized ||
        (t.tma & (hq::TmaA | hq::TmaB)) != (hq::TmaA | hq::TmaB))
      return why("multicast_a = 2 shares the activations' tensor copies of "
                 "the warp-specialized wgmma kernels; expected mma = wgmma, "
                 "warp_specialized = true, tma = [a, b]");
    // (A dense GEMM: verifyTileForProblem.)
    if (t.splitK != 1)
      return why("expected split_k = 1 with multicast_a = 2 (the cluster "
                 "is the pair of column blocks), got " +
                 Twine(t.splitK));
    if (t.blockM % 16 != 0)
      return why("expected block_m to be a multiple of 16 with "
                 "multicast_a = 2 (each CTA's half of the rows starts at "
                 "a multiple of the swizzle's eight rows), got " +
                 Twine(t.blockM));
    if (int64_t blocks = hq::ceilDiv(spec.np, t.blockN); blocks % 2 != 0)
      return why("expected an even number of column blocks with "
                 "multicast_a = 2 (pairs of them form the clusters), got " +
                 Twine(blocks) + " (padded N = " + Twine(spec.np) +
                 ", block_n = " + Twine(t.blockN) + ")");
  }
  // ctas_per_sm asks ptxas (.minnctapersm) to fit that many blocks in an
  // SM's 64 Ki registers.
  if (int64_t perThread = 65536 / (t.ctasPerSm * t.threads()); perThread < 64)
    return why("ctas_per_sm = " + Twine(t.ctasPerSm) + " blocks of " +
               Twine(t.threads()) + " threads leave " + Twine(perThread) +
               " registers per thread; expected at least 64");
  if (t.promotionInterval > 1) {
    if (!kMajor)
      return why("expected weights the wgmmas read by descriptor (8-bit "
                 "weights of the activations' MMA type, K-major on " +
                 Twine(chip.str()) + ") with promotion_interval > 1, got " +
                 Twine(spec.weight.type.str()) + " weights");
    // Every CTA's loop runs whole intervals (split_k 1: no other CTA
    // along K).
    const int64_t iters = hq::ceilDiv(spec.kp, t.blockK);
    if (t.splitK != 1 || iters % t.promotionInterval != 0)
      return why("expected split_k = 1 and the K iterations (padded K " +
                 Twine(spec.kp) + " / block_k " + Twine(t.blockK) + " = " +
                 Twine(iters) + ") a multiple of promotion_interval (" +
                 Twine(t.promotionInterval) +
                 "), got split_k = " + Twine(t.splitK));
  }
  return std::nullopt;
}

/// The prepared-layout kernel shape of `t`, or why the mma_sync family
/// cannot run it. The op verifier has already checked what holds for every
/// tile (the MMA family matches the layout, warp_k is 16, 32 or 64, block_n
/// divides N, at most 1024 threads); these are the mma_sync kernels' own
/// limits.
FailureOr<PreparedTile> preparedTile(const GemmView &op, unsigned index,
                                     const hq::TileConfig &t,
                                     const GemmKernelSpec &spec,
                                     const hq::Chip &chip) {
  auto fail = [&](const Twine &why) {
    return op.emitOpError() << "tile_configs[" << index << "]: " << why;
  };
  const bool act8 = spec.input.type.bits == 8;
  const hq::MmaGeneration &gen = hq::mmaGeneration(t.mma);
  // sm_90a's K-major tiles (8-bit weights the activation MMA takes as they
  // are) are read by wgmma descriptors (the op verifier refuses other
  // tiles over them).
  const bool kMajor = hq::layout::tileOrder(spec.weight, spec.input,
                                            chip.readsKMajorEightBit()) ==
                      hq::layout::TileOrder::KMajor;
  if (hq::Diag d = tileOperandsProblem(t, spec))
    return fail(*d);
  if (hq::Diag d = tilePipelineProblem(t, spec, chip, kMajor))
    return fail(*d);
  PreparedTile tile = hq::layout::shapeOf(t);
  tile.activationBits = spec.input.type.bits;
  tile.weightsByDescriptor = kMajor;
  // (weight_map: verifyTileForProblem refused it but over K-major weights
  // of a dense GEMM, and wgmma runs only where those are read K-major.)
  assert((!tile.weightMap || (kMajor && !spec.isMoe())) &&
         "weight_map over K-major weights of a dense GEMM");
  // (staged_weights: verifyTileForProblem refused it but with 8-bit
  // activations over weights that are not K-major.)
  assert((!tile.stagedWeights || (act8 && !kMajor)) &&
         "staged_weights converts weights the MMA does not read as stored");
  // (verifyTileForProblem: wgmma, one activation group per iteration.)
  tile.groupInputScales = act8 && spec.input.scaling == hq::ActScaling::Group;
  tile.singleSumSet =
      act8 && !hq::layout::wgmmaPromotes(spec.weight, spec.input);
  tile.f16MmaForFp8 = act8 && !spec.input.type.isInt() &&
                      t.mma == hq::MmaKind::MmaSync &&
                      chip.emulatesFp8MmaSync();
  tile.blockScaledFp8 = act8 && !spec.input.type.isInt() &&
                        t.mma == hq::MmaKind::MmaSync &&
                        chip.blockScaledFp8MmaSync();
  // A MoE block's activation rows are scattered tokens: with tma = [a] its
  // producers gather them into the tensor copy's swizzled rows.
  tile.gatheredActivations = spec.isMoe() && tile.tmaActivations;
  // The consumer warpgroups of a warp-specialized block hold the f32 sums
  // and a wgmma's operands in what the register split leaves them (ptxas
  // fails below that: "Insufficient registers ... to compile instruction").
  if (tile.warpSpecialized) {
    hq::layout::ws::RegisterSplit regs = hq::layout::ws::registerSplit(tile);
    const int64_t have = regs.rebalance ? regs.consumer : regs.launch;
    const int64_t need = hq::layout::ws::consumerRegisters(tile);
    if (have < need)
      return fail("warp_specialized with ctas_per_sm = " + Twine(t.ctasPerSm) +
                  " leaves the consumer warpgroups " + Twine(have) +
                  " registers per thread; expected at least " + Twine(need) +
                  " (warp_m x warp_n / 32 f32 sums and 24 for the operands)");
  }
  if (t.scaleAfterMma)
    if (hq::Diag d =
            hq::layout::scaleAfterMmaApplies(spec.weight, spec.f16Accumulation,
                                             t, unsigned(tile.activationBits)))
      return fail(*d);
  // cluster_split (mma_sync; wgmma splits always reduce in a cluster):
  // thread block clusters exist from sm_90 on.
  if (t.clusterSplit && !gen.clusterSplitByDefault && chip.sm < 90)
    return fail("cluster_split needs thread block clusters (sm_90 and "
                "later); got " +
                chip.str());
  // l2_prefetch: cp.async.bulk.prefetch.L2 exists from sm_90 on.
  if (t.l2Prefetch > 0 && chip.sm < 90)
    return fail("l2_prefetch needs cp.async.bulk.prefetch.L2 (sm_90 and "
                "later); got " +
                chip.str());
  if (t.splitK > 1) {
    int64_t iterations =
        hq::ceilDiv(spec.kp / 16, tile.kSplit * tile.kTilesPerWarp);
    if (t.splitK > iterations)
      return fail("expected split_k <= " + Twine(iterations) +
                  " (the K iterations of " + Twine(t.blockK) +
                  " to share among the CTAs), got " + Twine(t.splitK));
  }
  int64_t smem = spec.isMoe() ? hq::layout::moeSharedBytes(spec.weight, tile)
                              : hq::layout::sharedBytes(spec.weight, tile);
  stageEpilogue(spec, t, chip, tile, smem);
  if (smem > chip.maxSharedMemoryPerBlock())
    return fail("the kernel needs " + Twine(smem) +
                " bytes of shared memory (pipeline stages and split-K sums); "
                "expected at most " +
                Twine(chip.maxSharedMemoryPerBlock()) + " on " + chip.str() +
                " (reduce stages, block_k / warp_k, block_n or warp_m)");
  return tile;
}

/// Checks that the mma_sync family can lower `op`; reports why not.
LogicalResult checkSupported(const GemmView &op, const hq::Chip &chip) {
  hq::InputSchema in = op.inputSchema.toHost();
  hq::WeightSchema w = op.weightSchema.toHost();
  if (op.isMoe() && !op.layout)
    return op.emitOpError()
           << "humming.moe_gemm lowers over prepared weights ('layout') "
              "only; prepare the experts' weights for "
           << chip.str()
           << " (humming-legalize-schema with a chip prepares canonical ones "
              "on the device)";
  if (in.type.bits != 16 && !(in.type.bits <= 8 && op.layout))
    return op.emitOpError()
           << "8- and 4-bit activations run in the kernels over prepared "
              "weights ('layout') only; the canonical-weight kernel takes "
              "16-bit activations, got "
           << op.inputSchema.getType() << " on " << chip.str();

  if (w.format != hq::SourceFormat::Canonical)
    return op.emitOpError()
           << "expected canonical weights to lower, got format "
           << hq::toString(w.format) << " (run humming-legalize-schema first)";
  ArrayAttr tiles = op.tiles;
  if (LayoutAttr layout = op.layout) {
    if (layout.getMma() != hq::MmaKind::MmaSync)
      return op.emitOpError() << "expected a layout for mma = mma_sync, got "
                              << hq::toString(layout.getMma());
    if (!(layout.getHostChip() == chip))
      return op.emitOpError()
             << "the weights are prepared for " << layout.getChip()
             << "; expected chip=" << layout.getChip()
             << ", got chip=" << chip.str();
    auto outType = cast<MemRefType>(op.output.getType());
    auto inType = cast<MemRefType>(op.input.getType());
    int64_t np = outType.getDimSize(1) + w.padN;
    int64_t kp = inType.getDimSize(1) + w.padK;
    if (hq::Diag d = hq::layout::supports(w, in, np, kp))
      return op.emitOpError() << *d;
    // f16 accumulation multiplies channel scales into the weights in f16.
    if (ComputeAttr compute = op.compute;
        compute && compute.getF16Accumulation() &&
        w.granularity == hq::Granularity::Channel &&
        !hq::layout::representableIn(w.scaleType, in.type))
      return op.emitOpError()
             << "f16 accumulation applies channel scales to the weights in "
             << in.type.str() << " and expects scales it represents exactly, "
             << "got " << w.scaleType.str();
    if (!tiles || tiles.empty())
      return op.emitOpError("prepared weights need tile_configs; run "
                            "humming-select-tiles (or give them by hand)");
  } else if (tiles && !tiles.empty()) {
    return op.emitOpError()
           << "tile_configs apply to prepared weights; the canonical-weight "
              "kernel is fixed ("
           << hq::abi::MmaSyncTile::kBlockM << "x"
           << hq::abi::MmaSyncTile::kBlockN << " output blocks, "
           << hq::abi::MmaSyncTile::kKSplit
           << "-way in-block split-K); remove 'tile_configs' or prepare the "
              "weights ('layout')";
  }
  if (ComputeAttr compute = op.compute) {
    if (compute.getF16Accumulation() && !op.layout)
      return op.emitOpError("f16 accumulation is lowered for prepared weights "
                            "(the fast mma_sync kernels); the canonical-weight "
                            "kernel accumulates in f32: prepare the weights "
                            "('layout') or drop 'f16_accumulation'");
    // Batch invariance holds: the K decomposition of each kernel is fixed
    // and each token's row depends on nothing else.
  }
  if (chip.sm < 80)
    return op.emitOpError() << "the mma_sync lowering needs sm_80 or newer "
                               "(m16n8k16), got "
                            << chip.str();
  for (Value v : op.op->getOperands()) {
    auto t = cast<MemRefType>(v.getType());
    if (!t.getLayout().isIdentity())
      return op.emitOpError() << "expected identity-layout memrefs, got " << t;
  }
  return success();
}

/// What the kernels of `op` are specialised on.
GemmKernelSpec gemmSpec(const GemmView &op, const hq::Chip &chip) {
  hq::WeightSchema w = op.weightSchema.toHost();
  auto inputType = cast<MemRefType>(op.input.getType());
  auto outputType = cast<MemRefType>(op.output.getType());
  GemmKernelSpec spec;
  spec.weight = w;
  spec.input = op.inputSchema.toHost();
  if (ComputeAttr compute = op.compute) {
    spec.f16Accumulation = compute.getF16Accumulation();
    spec.batchInvariant = compute.getBatchInvariant();
  }
  spec.output = *toScalarType(outputType.getElementType());
  spec.kAct = inputType.getDimSize(1);
  spec.nOut = outputType.getDimSize(1);
  spec.np = spec.nOut + w.padN;
  spec.kp = spec.kAct + w.padK;
  // griddepcontrol exists from sm_90 on; the canonical (unprepared)
  // kernel keeps ordinary launches.
  spec.gridDependency = op.layout && chip.sm >= 90;
  if (op.isMoe()) {
    // Per-expert strides: each weight-side tensor is [E, ...].
    auto perExpert = [&](Value v) -> int64_t {
      if (!v)
        return 0;
      auto t = cast<MemRefType>(v.getType());
      return t.getNumElements() / t.getDimSize(0) *
             int64_t(t.getElementTypeBitWidth()) / 8;
    };
    spec.moe.routing = op.routing;
    spec.moe.experts = w.experts;
    spec.moe.topK = op.topK;
    spec.moe.blockSize = op.blockSize;
    spec.moe.layout64 =
        op.routing == hq::abi::kRoutingContiguous &&
        cast<MemRefType>(op.rowIds.getType()).getElementType().isInteger(64);
    spec.moe.routerWeights = bool(op.routerWeights);
    spec.moe.uniform = op.routing == hq::abi::kRoutingMasked && !op.rowIds;
    spec.moe.weightBytes = perExpert(op.weight);
    spec.moe.scaleBytes = perExpert(op.scales);
    spec.moe.zeroBytes = perExpert(op.zeroPoints);
    spec.moe.biasBytes = perExpert(op.bias);
  }
  return spec;
}

/// The prepared kernel shape of each of the op's tiles (what its MMA
/// generation's kernels and, for MoE, the routing take), or the first
/// tile's reason why not, emitted at the op.
FailureOr<SmallVector<PreparedTile>> preparedTiles(const GemmView &op,
                                                   const GemmKernelSpec &spec,
                                                   const hq::Chip &chip) {
  SmallVector<PreparedTile> out;
  for (auto [i, attr] : llvm::enumerate(op.tiles)) {
    hq::TileConfig t = cast<TileConfigAttr>(attr).toHost();
    FailureOr<PreparedTile> tile = preparedTile(op, unsigned(i), t, spec, chip);
    if (failed(tile))
      return failure();
    if (op.isMoe())
      if (hq::Diag d = hq::moeTileProblem(t, op.moeShape(), chip.sm))
        return op.emitOpError() << "tile_configs[" << i << "]: " << *d;
    out.push_back(*tile);
  }
  return out;
}

/// What checkGemm found out about an op it accepts: what its kernels are
/// specialised on and, over prepared weights, each tile's kernel shape.
struct GemmPlan {
  GemmKernelSpec spec;
  SmallVector<PreparedTile> tiles;
};

/// One kernel per M range (per range of tokens per expert for MoE), built
/// into the kernel module: (kernel, its launch facts).
using GemmVariants =
    SmallVector<std::pair<gpu::GPUFuncOp, hq::abi::KernelLaunch>>;
GemmVariants buildGemmKernels(const GemmView &op, const GemmPlan &plan,
                              KernelLoweringState &state) {
  const GemmKernelSpec &spec = plan.spec;
  std::string name = state.kernelName(op.op, op.isMoe() ? "moe_gemm" : "gemm");

  GemmVariants variants;
  if (op.layout) {
    for (auto [i, attr] : llvm::enumerate(op.tiles)) {
      hq::TileConfig t = cast<TileConfigAttr>(attr).toHost();
      const PreparedTile *tile = &plan.tiles[i];
      std::string kname = name + "_m" + std::to_string(i);
      const CtaSplit split{t.splitK, t.mMax, t.splitsInCluster(),
                           t.cooperativeSplit};
      const SplitWorkspace workspace = splitWorkspace(spec, *tile, split);
      gpu::GPUFuncOp kernel =
          state.onlyKernel() >= 0 && int64_t(i) != state.onlyKernel()
              ? buildStubKernel(state.kernelBuilder(), op.op->getLoc(),
                                state.kernelModule(), kname, op.isMoe(),
                                bool(workspace))
              : buildPreparedKernel(state.kernelBuilder(), op.op->getLoc(),
                                    state.kernelModule(), kname, spec, *tile,
                                    split);
      state.addKernel(kernel);
      hq::abi::KernelLaunch launch;
      launch.name = kernel.getName().str();
      launch.mMin = t.mMin;
      launch.mMax = t.mMax;
      launch.blockM = tile->blockM();
      launch.blockN = tile->blockN();
      launch.threads = tile->threads();
      launch.smemBytes = op.isMoe()
                             ? hq::layout::moeSharedBytes(spec.weight, *tile)
                             : hq::layout::sharedBytes(spec.weight, *tile);
      launch.splitK = t.splitK;
      launch.cluster = t.splitsInCluster() ? t.splitK : 1;
      launch.clusterX = t.multicastA > 1 ? t.multicastA : 0;
      launch.persistent = t.persistent * t.ctasPerSm;
      launch.workspace = workspace.bytes();
      launch.inputMap =
          tile->tensorActivations() ? tile->activationRowBytes() / 2 : 0;
      launch.weightMap = tile->weightMap ? tile->kTilesPerIteration() : 0;
      launch.gridDependency = spec.gridDependency;
      launch.cooperative = t.cooperativeSplit;
      launch.routing = spec.moe.routing;
      launch.experts = spec.moe.experts;
      launch.topK = spec.moe.topK;
      launch.blockSize = spec.moe.blockSize;
      launch.layout64 = spec.moe.layout64;
      variants.push_back({kernel, launch});
    }
  } else {
    gpu::GPUFuncOp kernel =
        buildCanonicalKernel(state.kernelBuilder(), op.op->getLoc(),
                             state.kernelModule(), name, spec);
    state.addKernel(kernel);
    variants.push_back(
        {kernel, hq::abi::KernelLaunch{kernel.getName().str(), 1, 0,
                                       hq::abi::MmaSyncTile::kBlockM,
                                       hq::abi::MmaSyncTile::kBlockN,
                                       hq::abi::MmaSyncTile::kThreads,
                                       /*smemBytes=*/0}});
  }
  return variants;
}

/// checkSupported, every tile's kernel shape (over prepared weights), and
/// only-kernel= naming one of the op's kernels; what lowerGemm builds from.
FailureOr<GemmPlan> checkGemm(const GemmView &op,
                              const KernelLoweringState &state) {
  if (failed(checkSupported(op, state.chip())))
    return failure();
  GemmPlan plan;
  plan.spec = gemmSpec(op, state.chip());
  if (op.layout) {
    FailureOr<SmallVector<PreparedTile>> tiles =
        preparedTiles(op, plan.spec, state.chip());
    if (failed(tiles))
      return failure();
    plan.tiles = std::move(*tiles);
  }
  if (state.onlyKernel() >= 0) {
    ArrayAttr tiles = op.tiles;
    int64_t count = op.layout && tiles ? int64_t(tiles.size()) : 1;
    if (state.onlyKernel() >= count)
      return op.emitOpError()
             << "only-kernel=" << int(state.onlyKernel())
             << " names no kernel: expected an index below " << count
             << " (one kernel per tile configuration)";
  }
  return plan;
}

/// The launches of `op`'s kernels: the kernel of M's range, grid from M
/// at run time, pointers from the memrefs; `op` is replaced by them.
LogicalResult lowerGemm(const GemmView &op, const GemmPlan &plan,
                        KernelLoweringState &state, PatternRewriter &rewriter) {
  const GemmKernelSpec &spec = plan.spec;
  const GemmVariants variants = buildGemmKernels(op, plan, state);
  const hq::WeightSchema &w = spec.weight;
  rewriter.setInsertionPoint(op.op);
  ImplicitLocOpBuilder b(op.op->getLoc(), rewriter);
  Value m = memref::DimOp::create(b, op.input, 0);
  SmallVector<Value> args = {devicePointer(b, op.input),
                             devicePointer(b, op.weight),
                             devicePointer(b, op.scales),
                             devicePointer(b, op.zeroPoints),
                             devicePointer(b, op.globalScale),
                             devicePointer(b, op.bias),
                             devicePointer(b, op.output),
                             devicePointer(b, op.inputScale),
                             arith::IndexCastOp::create(b, b.getI32Type(), m)};
  if (op.isMoe()) {
    for (Value v :
         {op.rowIds, op.blockExperts, op.rowsPadded, op.routerWeights})
      args.push_back(devicePointer(b, v));
    // The routing's block_size (the op's; grouped kernels ignore it).
    args.push_back(
        arith::ConstantIntOp::create(b, b.getI32Type(), op.blockSize));
  }
  auto cst = [&](int64_t v) { return arith::ConstantIndexOp::create(b, v); };
  // MoE: the grid of abi::moeGrid, and no launch where it is empty.
  auto moeGridY = [&](const hq::abi::KernelLaunch &l) -> Value {
    Value bm = cst(l.blockM);
    if (l.routing == hq::abi::kRoutingIndexed)
      return arith::DivUIOp::create(b, memref::DimOp::create(b, op.rowIds, 0),
                                    bm);
    if (l.routing == hq::abi::kRoutingContiguous)
      return arith::AddIOp::create(
          b, arith::CeilDivUIOp::create(b, m, bm),
          arith::MinUIOp::create(b, m, cst(l.experts)));
    Value maxTokens = arith::DivUIOp::create(b, m, cst(l.experts));
    return arith::MulIOp::create(b, cst(l.experts),
                                 arith::CeilDivUIOp::create(b, maxTokens, bm));
  };
  auto launch = [&](gpu::GPUFuncOp kernel, const hq::abi::KernelLaunch &l) {
    Value gridX = cst(hq::ceilDiv(spec.np, l.blockN));
    Value gridY = op.isMoe()
                      ? moeGridY(l)
                      : Value(arith::CeilDivUIOp::create(b, m, cst(l.blockM)));
    OpBuilder::InsertionGuard guard(b);
    if (op.isMoe()) {
      auto ifBlocks = scf::IfOp::create(
          b, arith::CmpIOp::create(b, arith::CmpIPredicate::ne, gridY, cst(0)),
          /*withElseRegion=*/false);
      b.setInsertionPointToStart(ifBlocks.thenBlock());
    }
    Value one = cst(1);
    Value gridZ = l.splitK == 1 ? one : cst(l.splitK);
    Value threads = cst(l.threads);
    Value smem;
    if (l.smemBytes)
      smem = arith::ConstantIntOp::create(b, b.getI32Type(), l.smemBytes);
    // The split-K workspace (KernelLaunch::workspace): the runtime
    // keeps one per stream; here, one zeroed allocation per launch.
    SmallVector<Value> launchArgs(args);
    Value ws;
    if (l.workspace) {
      auto type = MemRefType::get({l.workspace / 4}, b.getI32Type());
      ws = gpu::AllocOp::create(b, type, /*asyncToken=*/Type(), ValueRange(),
                                ValueRange(), ValueRange())
               .getMemref();
      gpu::MemsetOp::create(b, /*asyncToken=*/Type(), ValueRange(), ws,
                            arith::ConstantIntOp::create(b, b.getI32Type(), 0));
      launchArgs.push_back(devicePointer(b, ws));
    }
    gpu::LaunchFuncOp::create(b, kernel, gpu::KernelDim3{gridX, gridY, gridZ},
                              gpu::KernelDim3{threads, one, one}, smem,
                              launchArgs);
    if (ws)
      gpu::DeallocOp::create(b, /*asyncToken=*/Type(), ValueRange(), ws);
  };
  // No tokens, no launch (a grid of zero blocks is a launch error).
  Value any = arith::CmpIOp::create(b, arith::CmpIPredicate::ne, m, cst(0));
  auto ifAny = scf::IfOp::create(b, any, /*withElseRegion=*/false);
  b.setInsertionPointToStart(ifAny.thenBlock());
  // The value the M ranges bound: M, or the tokens per expert
  // (abi::moeRowsPerExpert, at least 1).
  Value chooser = m;
  if (op.isMoe()) {
    const int64_t experts = w.experts;
    if (op.routing == hq::abi::kRoutingIndexed)
      chooser = arith::CeilDivUIOp::create(
          b, arith::MulIOp::create(b, m, cst(op.topK)), cst(experts));
    else if (op.routing == hq::abi::kRoutingContiguous)
      chooser = arith::CeilDivUIOp::create(b, m, cst(experts));
    else
      chooser = arith::DivUIOp::create(b, m, cst(experts));
    chooser = arith::MaxUIOp::create(b, chooser, cst(1));
  }
  // if (m <= mMax_0) launch_0 else if (m <= mMax_1) ... else launch_last.
  for (auto [i, v] : llvm::enumerate(variants)) {
    state.addLaunch(v.second);
    if (i + 1 == variants.size()) {
      launch(v.first, v.second);
      break;
    }
    Value bound = cst(v.second.mMax);
    Value inRange =
        arith::CmpIOp::create(b, arith::CmpIPredicate::ule, chooser, bound);
    auto ifOp = scf::IfOp::create(b, inRange, /*withElseRegion=*/true);
    b.setInsertionPointToStart(ifOp.thenBlock());
    launch(v.first, v.second);
    b.setInsertionPointToStart(ifOp.elseBlock());
  }
  rewriter.eraseOp(op.op);
  return success();
}

/// humming.gemm and humming.moe_gemm: one pattern over GemmView.
template <typename OpT> struct GemmLowering : LoweringPattern<OpT> {
  using LoweringPattern<OpT>::LoweringPattern;
  LogicalResult matchAndRewrite(OpT op,
                                PatternRewriter &rewriter) const override {
    GemmView view = GemmView::of(op);
    FailureOr<GemmPlan> plan = checkGemm(view, this->state);
    if (failed(plan))
      return failure();
    return lowerGemm(view, *plan, this->state, rewriter);
  }
};
} // namespace

LogicalResult
mlir::humming::lowering::checkGemmLowering(Operation *op,
                                           const KernelLoweringState &state) {
  if (auto gemm = dyn_cast<GemmOp>(op))
    return success(succeeded(checkGemm(GemmView::of(gemm), state)));
  return success(
      succeeded(checkGemm(GemmView::of(cast<MoeGemmOp>(op)), state)));
}

void mlir::humming::lowering::populateGemmPatterns(RewritePatternSet &patterns,
                                                   KernelLoweringState &state) {
  patterns.add<GemmLowering<GemmOp>, GemmLowering<MoeGemmOp>>(
      patterns.getContext(), state);
}
