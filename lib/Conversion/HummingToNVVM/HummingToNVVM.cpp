//===- HummingToNVVM.cpp - humming-lower-to-nvvm --------------------------===//
//
// Replaces each humming.gemm by a gpu.launch_func of a generated kernel. What
// is not lowered yet is diagnosed at the op, never miscompiled.
//
//===----------------------------------------------------------------------===//

#include "Humming/Conversion/Passes.h"
#include "Humming/Dialect/Humming/IR/HummingOps.h"
#include "Humming/Target/KernelABI.h"
#include "Humming/Target/TileHeuristics.h"
#include "Kernels.h"

#include "Humming/Quant/MmaGeneration.h"
#include "Humming/Quant/PreparedLayout.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/SymbolTable.h"

#include <limits>

#define DEBUG_TYPE "humming-lower-to-nvvm"

namespace mlir::humming {
#define GEN_PASS_DEF_HUMMINGLOWERTONVVMPASS
#include "Humming/Conversion/Passes.h.inc"
} // namespace mlir::humming

using namespace mlir;
using namespace mlir::humming;
namespace hq = ::humming;

namespace {

constexpr StringLiteral kKernelModule = "humming_kernels";

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
  // 4-bit activations: the mma_sync m16n8k64 s4 kernels with per-warp
  // copies (MmaGeneration::kernelProblem).
  if (spec.input.type.bits == 4 && !gen.s4Activations)
    return fail("expected mma = " +
                Twine(hq::mmaNamesWith(&hq::MmaGeneration::s4Activations)) +
                " with si4 activations (m16n8k64 s4; no other MMA takes "
                "them)");
  // sm_90a's K-major tiles (8-bit weights the activation MMA takes as they
  // are) are read by wgmma descriptors (the op verifier refuses other
  // tiles over them).
  const bool kMajor = hq::layout::tileOrder(spec.weight, spec.input,
                                            chip.readsKMajorEightBit()) ==
                      hq::layout::TileOrder::KMajor;
  if (act8 && t.wgmmaInFlight != 0)
    return fail("expected wgmma_in_flight = 0 with " +
                Twine(spec.input.type.str()) +
                " activations (each iteration's sums are added to the "
                "running ones after its wgmmas are waited for, and the next "
                "iteration's first wgmma rewrites them)");
  if (act8 && spec.weight.hasPerKScales() && t.warpK > spec.weight.groupK)
    return fail("expected warp_k <= the group size (" +
                Twine(spec.weight.groupK) + ") with " +
                Twine(spec.input.type.str()) +
                " activations (each iteration's f32 sums take one group "
                "scale), got " + Twine(t.warpK));
  // The generation's kernels: their instruction's K step, accumulation and
  // the sums a thread holds.
  if (hq::Diag d =
          gen.kernelProblem(t, spec.weight, spec.input, spec.f16Accumulation))
    return fail(*d);
  const int64_t warpsM = t.blockM / t.warpM;
  if (t.blockM % t.warpM != 0 || warpsM > 8)
    return fail("expected block_m = warp_m x 1, 2, 4 or 8 (warp rows along M), "
                "got block_m = " + Twine(t.blockM) + ", warp_m = " + Twine(t.warpM));
  if (t.stages > 8)
    return fail("expected at most 8 stages (pipeline slots), got " +
                Twine(t.stages));
  if (!t.cpAsync)
    return fail("the mma_sync kernels stage their operands with cp.async; "
                "expected cp_async = true");
  if (t.warpSpecialized && !gen.producerWarpgroup)
    return fail("expected mma = " +
                Twine(hq::mmaNamesWith(&hq::MmaGeneration::producerWarpgroup)) +
                " with warp_specialized (the " + gen.name +
                " kernels do not implement a producer warpgroup)");
  if (t.mbarrier && !t.warpSpecialized)
    return fail("expected warp_specialized = true with mbarrier = true (the "
                "prepared kernels synchronise through mbarriers only between "
                "a producer warpgroup and its consumers)");
  // TMA: the activations (a) and the weights (b) of the warp-specialized
  // wgmma kernels only, by copies completing on the producer's full
  // mbarriers.
  if (t.tma != 0 &&
      ((t.tma & ~(hq::TmaA | hq::TmaB)) != 0 || !t.warpSpecialized))
    return fail("the prepared kernels fetch only the activations (a) and "
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
    return fail("the prepared kernels do not implement stream-K, "
                "multicast of the weights (multicast_b), grid_cap or "
                "write_splits yet; expected their defaults");
  // multicast_a = 2: pairs of column blocks share the activation tile
  // (KernelShape::multicastA), each CTA copying half its rows by TMA.
  if (t.multicastA > 1) {
    if (!gen.producerWarpgroup || !t.warpSpecialized ||
        (t.tma & (hq::TmaA | hq::TmaB)) != (hq::TmaA | hq::TmaB))
      return fail("multicast_a = 2 shares the activations' tensor copies of "
                  "the warp-specialized wgmma kernels; expected mma = wgmma, "
                  "warp_specialized = true, tma = [a, b]");
    // (A dense GEMM: verifyTileForProblem.)
    if (t.splitK != 1)
      return fail("expected split_k = 1 with multicast_a = 2 (the cluster "
                  "is the pair of column blocks), got " + Twine(t.splitK));
    if (t.blockM % 16 != 0)
      return fail("expected block_m to be a multiple of 16 with "
                  "multicast_a = 2 (each CTA's half of the rows starts at "
                  "a multiple of the swizzle's eight rows), got " +
                  Twine(t.blockM));
    if (int64_t blocks = hq::ceilDiv(spec.np, t.blockN); blocks % 2 != 0)
      return fail("expected an even number of column blocks with "
                  "multicast_a = 2 (pairs of them form the clusters), got " +
                  Twine(blocks) + " (padded N = " + Twine(spec.np) +
                  ", block_n = " + Twine(t.blockN) + ")");
  }
  // ctas_per_sm asks ptxas (.minnctapersm) to fit that many blocks in an
  // SM's 64 Ki registers.
  if (int64_t perThread = 65536 / (t.ctasPerSm * t.threads()); perThread < 64)
    return fail("ctas_per_sm = " + Twine(t.ctasPerSm) + " blocks of " +
                Twine(t.threads()) + " threads leave " + Twine(perThread) +
                " registers per thread; expected at least 64");
  PreparedTile tile = hq::layout::shapeOf(t);
  tile.activationBits = spec.input.type.bits;
  tile.weightsByDescriptor = kMajor;
  // (verifyTileForProblem: wgmma, one activation group per iteration.)
  tile.groupInputScales = act8 && spec.input.scaling == hq::ActScaling::Group;
  tile.singleSumSet =
      act8 && !hq::layout::wgmmaPromotes(spec.weight, spec.input);
  tile.f16MmaForFp8 = act8 && !spec.input.type.isInt() &&
                     t.mma == hq::MmaKind::MmaSync && chip.emulatesFp8MmaSync();
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
    if (hq::Diag d = hq::layout::scaleAfterMmaApplies(
            spec.weight, spec.f16Accumulation, t,
            unsigned(tile.activationBits)))
      return fail(*d);
  // cluster_split (mma_sync; wgmma splits always reduce in a cluster):
  // thread block clusters exist from sm_90 on.
  if (t.clusterSplit && !gen.clusterSplitByDefault && chip.sm < 90)
    return fail("cluster_split needs thread block clusters (sm_90 and "
                "later); got " + chip.str());
  // l2_prefetch: cp.async.bulk.prefetch.L2 exists from sm_90 on.
  if (t.l2Prefetch > 0 && chip.sm < 90)
    return fail("l2_prefetch needs cp.async.bulk.prefetch.L2 (sm_90 and "
                "later); got " +
                chip.str());
  if (t.splitK > 1) {
    int64_t iterations = hq::ceilDiv(spec.kp / 16, tile.kSplit * tile.kTilesPerWarp);
    if (t.splitK > iterations)
      return fail("expected split_k <= " + Twine(iterations) +
                  " (the K iterations of " + Twine(t.blockK) +
                  " to share among the CTAs), got " + Twine(t.splitK));
  }
  int64_t smem = spec.isMoe() ? hq::layout::moeSharedBytes(spec.weight, tile)
                              : hq::layout::sharedBytes(spec.weight, tile);
  if (smem > chip.maxSharedMemoryPerBlock())
    return fail("the kernel needs " + Twine(smem) +
                " bytes of shared memory (pipeline stages and split-K sums); "
                "expected at most " + Twine(chip.maxSharedMemoryPerBlock()) +
                " on " + chip.str() +
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
    return op.emitOpError() << "expected canonical weights to lower, got format "
                            << hq::toString(w.format)
                            << " (run humming-legalize-schema first)";
  ArrayAttr tiles = op.tiles;
  if (LayoutAttr layout = op.layout) {
    if (layout.getMma() != hq::MmaKind::MmaSync)
      return op.emitOpError() << "expected a layout for mma = mma_sync, got "
                              << hq::toString(layout.getMma());
    if (!(layout.getHostChip() == chip))
      return op.emitOpError() << "the weights are prepared for "
                              << layout.getChip() << "; expected chip="
                              << layout.getChip() << ", got chip="
                              << chip.str();
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

/// Checks that the activation quantization kernel can lower `op`.
LogicalResult checkQuantizeSupported(QuantizeOp op, const hq::Chip &chip) {
  auto srcType = cast<MemRefType>(op.getSource().getType());
  QuantizeKernelSpec qs;
  qs.input = cast<InputSchemaAttr>(op.getSchema()).toHost();
  qs.source = *toScalarType(srcType.getElementType());
  qs.k = srcType.getDimSize(1);
  qs.codesK = cast<MemRefType>(op.getDest().getType()).getDimSize(1);
  if (std::string why = quantizeKernelProblem(qs, chip);
      !why.empty())
    return op.emitOpError() << why;
  if (srcType.getDimSize(1) > (int64_t(1) << 24))
    return op.emitOpError() << "expected K <= 2^24 activations per row, got "
                            << srcType.getDimSize(1);
  for (Value v : op->getOperands()) {
    auto t = cast<MemRefType>(v.getType());
    if (!t.getLayout().isIdentity())
      return op.emitOpError() << "expected identity-layout memrefs, got " << t;
  }
  return success();
}

/// What the repack kernel of `op` is specialised on (padded sizes).
RepackKernelSpec repackSpec(RepackOp op) {
  hq::WeightSchema w = op.getWeightSchema().toHost();
  hq::InputSchema in = op.getInputSchema().toHost();
  RepackKernelSpec rs;
  rs.operand = op.getOperand().getValue();
  rs.n = int64_t(op.getN()) + w.padN;
  rs.k = int64_t(op.getK()) + w.padK;
  rs.groups = w.groupsAlongK(rs.k);
  rs.bits = w.type.bits;
  rs.flip = w.type.isInt() && w.type.isSigned;
  rs.activationBits = in.type.bits;
  rs.elementBits =
      cast<MemRefType>(op.getSource().getType()).getElementTypeBitWidth();
  rs.intZeroPoints = w.zeroPoint == hq::ZeroPointKind::Int;
  if (w.granularity == hq::Granularity::Block)
    rs.scaleRowColumns = w.groupN;
  rs.order = hq::layout::tileOrder(
      w, in, op.getLayout().getHostChip().readsKMajorEightBit());
  rs.kMajorXor = hq::layout::kMajorXor(w);
  return rs;
}

/// What the weight quantization kernel of `op` is specialised on.
WeightQuantizeKernelSpec weightQuantizeSpec(QuantizeOp op) {
  WeightQuantizeKernelSpec qs;
  qs.weight = cast<WeightSchemaAttr>(op.getSchema()).toHost();
  auto src = cast<MemRefType>(op.getSource().getType());
  qs.source = *toScalarType(src.getElementType());
  qs.n = src.getDimSize(src.getRank() - 2);
  qs.k = src.getDimSize(src.getRank() - 1);
  if (Value z = op.getZeroPoints();
      z && qs.weight.zeroPoint == hq::ZeroPointKind::Float)
    qs.zeroPointType =
        *toScalarType(cast<MemRefType>(z.getType()).getElementType());
  return qs;
}

/// Checks that the repack kernel can lower `op`: the prepared layout holds
/// the schema (the verifier checked the shapes).
LogicalResult checkRepackSupported(RepackOp op) {
  hq::WeightSchema w = op.getWeightSchema().toHost();
  hq::InputSchema in = op.getInputSchema().toHost();
  const int64_t n = int64_t(op.getN()) + w.padN,
                k = int64_t(op.getK()) + w.padK;
  if (hq::Diag d = hq::layout::supports(w, in, n, k))
    return op.emitOpError() << "cannot repack: " << *d;
  return success();
}

/// One entry of the module's kernel table.
DictionaryAttr launchAttr(OpBuilder &b, const hq::abi::KernelLaunch &l) {
  SmallVector<NamedAttribute> fields = {
      b.getNamedAttr("name", b.getStringAttr(l.name))};
  for (const hq::abi::KernelField &f : hq::abi::kKernelFields)
    if ((!f.moeOnly || l.routing != hq::abi::kRoutingDense) &&
        (!f.onlyIfSet || l.*f.member != 0))
      fields.push_back(b.getNamedAttr(f.key, b.getI64IntegerAttr(l.*f.member)));
  return b.getDictionaryAttr(fields);
}

/// A device pointer (!llvm.ptr<1>) to the data of `memref`, or null.
Value devicePointer(ImplicitLocOpBuilder &b, Value memref) {
  auto ptrType = LLVM::LLVMPointerType::get(b.getContext(), 1);
  if (!memref)
    return LLVM::ZeroOp::create(b, ptrType);
  Value index = memref::ExtractAlignedPointerAsIndexOp::create(b, memref);
  Value i64 = arith::IndexCastOp::create(b, b.getI64Type(), index);
  return LLVM::IntToPtrOp::create(b, ptrType, i64);
}

/// Launches a grid-stride kernel of kElementwiseThreads-thread blocks over
/// `count` items of `perItem` steps each (at most kPermuteMaxBlocks
/// blocks), only where `count` is nonzero.
void launchGridStride(ImplicitLocOpBuilder &b, gpu::GPUFuncOp kernel,
                      Value count, int64_t perItem, ValueRange args) {
  Value threads = arith::ConstantIndexOp::create(b, kElementwiseThreads);
  Value blocks = arith::MinUIOp::create(
      b,
      arith::CeilDivUIOp::create(
          b,
          arith::MulIOp::create(b, count,
                                arith::ConstantIndexOp::create(b, perItem)),
          threads),
      arith::ConstantIndexOp::create(b, kPermuteMaxBlocks));
  Value any = arith::CmpIOp::create(b, arith::CmpIPredicate::ne, count,
                                    arith::ConstantIndexOp::create(b, 0));
  auto ifAny = scf::IfOp::create(b, any, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifAny.thenBlock());
  Value one = arith::ConstantIndexOp::create(b, 1);
  gpu::LaunchFuncOp::create(b, kernel, gpu::KernelDim3{blocks, one, one},
                            gpu::KernelDim3{threads, one, one}, Value(), args);
}

/// A kernel with the ABI's parameters and an empty body (only-kernel=).
gpu::GPUFuncOp buildStubKernel(OpBuilder &builder, Location loc,
                               gpu::GPUModuleOp module, StringRef name,
                               bool moe = false, bool workspace = false) {
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToEnd(module.getBody());
  auto func = gpu::GPUFuncOp::create(
      builder, loc, name, kernelFunctionType(builder, moe, workspace));
  func->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), builder.getUnitAttr());
  builder.setInsertionPointToStart(&func.getBody().front());
  gpu::ReturnOp::create(builder, loc);
  return func;
}

struct LowerToNVVMPass
    : public mlir::humming::impl::HummingLowerToNVVMPassBase<LowerToNVVMPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::optional<hq::Chip> parsed = hq::Chip::parse(chip);
    if (!parsed) {
      module.emitError() << "humming-lower-to-nvvm: expected a chip among "
                         << hq::knownChipNames() << ", got '" << chip << "'";
      return signalPassFailure();
    }
    // The chip is the one the pipeline attaches to the gpu.module and emits
    // PTX for; a module that names its device must agree with it, or the
    // checks below would be made for one chip and the code built for another.
    if (TargetAttr target = lookupTarget(module);
        target && !(target.getHostChip() == *parsed)) {
      module.emitError() << "humming-lower-to-nvvm: the module's "
                            "humming.target ("
                         << target.getDevice() << ") is "
                         << target.getHostChip().str()
                         << "; expected chip=" << target.getHostChip().str()
                         << ", got chip=" << parsed->str();
      return signalPassFailure();
    }
    // The module's target also names the PTX ISA version to emit; the
    // pipeline must emit that one (0 means the chip's minimum).
    if (TargetAttr target = lookupTarget(module)) {
      unsigned effective = ptxVersion ? unsigned(ptxVersion)
                                      : parsed->minPtxVersion();
      if (target.getPtx() != effective) {
        module.emitError() << "humming-lower-to-nvvm: the module's "
                              "humming.target asks for PTX ISA "
                           << target.getPtx() << "; expected ptx-version="
                           << target.getPtx() << ", got ptx-version="
                           << effective
                           << (ptxVersion ? "" : " (the chip's minimum)");
        return signalPassFailure();
      }
    }
    // LLVM aborts on intrinsics a PTX version cannot express: check first.
    if (ptxVersion && (ptxVersion < parsed->minPtxVersion() ||
                       ptxVersion > hq::kMaxPtxVersion)) {
      module.emitError() << "humming-lower-to-nvvm: expected a PTX ISA version "
                            "between "
                         << parsed->minPtxVersion() << " and "
                         << hq::kMaxPtxVersion << " for " << parsed->str()
                         << ", got " << static_cast<unsigned>(ptxVersion);
      return signalPassFailure();
    }

    SmallVector<GemmView> gemms;
    SmallVector<QuantizeOp> quantizes;
    SmallVector<MoeAlignOp> aligns;
    SmallVector<MoeGroupOp> groups;
    SmallVector<MoePermuteOp> permutes;
    SmallVector<GatherColumnsOp> gathers;
    SmallVector<RepackOp> repacks;
    SmallVector<QuantizeOp> weightQuantizes;
    SmallVector<Operation *> elementwise; // silu_and_mul, moe_sum
    bool failedAny = false;
    module.walk([&](Operation *op) {
      if (auto gemm = dyn_cast<GemmOp>(op))
        gemms.push_back(GemmView::of(gemm));
      else if (auto moe = dyn_cast<MoeGemmOp>(op))
        gemms.push_back(GemmView::of(moe));
      else if (auto q = dyn_cast<QuantizeOp>(op);
               q && isa<InputSchemaAttr>(q.getSchema()))
        quantizes.push_back(q);
      else if (auto q = dyn_cast<QuantizeOp>(op))
        weightQuantizes.push_back(q);
      else if (auto align = dyn_cast<MoeAlignOp>(op))
        aligns.push_back(align);
      else if (auto group = dyn_cast<MoeGroupOp>(op))
        groups.push_back(group);
      else if (auto permute = dyn_cast<MoePermuteOp>(op))
        permutes.push_back(permute);
      else if (auto gather = dyn_cast<GatherColumnsOp>(op))
        gathers.push_back(gather);
      else if (auto repack = dyn_cast<RepackOp>(op))
        repacks.push_back(repack);
      else if (isa<SiluAndMulOp, MoeSumOp>(op))
        elementwise.push_back(op);
      else if (isa_and_nonnull<HummingDialect>(op->getDialect())) {
        op->emitOpError("is not lowered by humming-lower-to-nvvm yet (only "
                        "humming.gemm, humming.moe_gemm, humming.moe_align, "
                        "humming.moe_group, humming.moe_permute, "
                        "humming.gather_columns, humming.repack, "
                        "humming.silu_and_mul, humming.moe_sum and "
                        "humming.quantize are)");
        failedAny = true;
      }
    });
    if (failedAny)
      return signalPassFailure();
    if (gemms.empty() && quantizes.empty() && aligns.empty() &&
        groups.empty() && permutes.empty() && gathers.empty() &&
        repacks.empty() && weightQuantizes.empty() && elementwise.empty())
      return;
    SmallVector<Operation *> small(aligns.begin(), aligns.end());
    small.append(groups.begin(), groups.end());
    small.append(permutes.begin(), permutes.end());
    small.append(gathers.begin(), gathers.end());
    small.append(repacks.begin(), repacks.end());
    small.append(weightQuantizes.begin(), weightQuantizes.end());
    small.append(elementwise.begin(), elementwise.end());
    for (Operation *op : small)
      for (Value v : op->getOperands())
        if (auto t = cast<MemRefType>(v.getType()); !t.getLayout().isIdentity()) {
          op->emitOpError() << "expected identity-layout memrefs, got " << t;
          failedAny = true;
        }
    for (const GemmView &op : gemms)
      failedAny |= failed(checkSupported(op, *parsed));
    for (QuantizeOp op : quantizes)
      failedAny |= failed(checkQuantizeSupported(op, *parsed));
    for (RepackOp op : repacks)
      failedAny |= failed(checkRepackSupported(op));
    for (QuantizeOp op : weightQuantizes)
      if (std::string why = weightQuantizeKernelProblem(weightQuantizeSpec(op));
          !why.empty()) {
        op.emitOpError() << why;
        failedAny = true;
      }
    if (onlyKernel >= 0)
      for (const GemmView &op : gemms) {
        ArrayAttr tiles = op.tiles;
        int64_t count = op.layout && tiles ? int64_t(tiles.size()) : 1;
        if (onlyKernel >= count) {
          op.emitOpError() << "only-kernel=" << int(onlyKernel)
                           << " names no kernel: expected an index below "
                           << count << " (one kernel per tile configuration)";
          failedAny = true;
        }
      }
    if (failedAny)
      return signalPassFailure();

    OpBuilder builder(module.getContext());
    module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                    builder.getUnitAttr());
    auto kernels = module.lookupSymbol<gpu::GPUModuleOp>(kKernelModule);
    if (!kernels) {
      builder.setInsertionPointToEnd(module.getBody());
      kernels = gpu::GPUModuleOp::create(builder, module.getLoc(), kKernelModule);
    }
    SymbolTable kernelSymbols(kernels);

    unsigned counter = 0;
    // <enclosing function>_<what><n>: each kernel's symbol.
    auto kernelName = [&](Operation *op, StringRef what) {
      auto parent = op->getParentOfType<FunctionOpInterface>();
      return (parent ? parent.getName().str() : std::string("layer")) + "_" +
             what.str() + std::to_string(counter++);
    };
    SmallVector<Attribute> launchTable;
    // The table entry of a grid-stride kernel of kElementwiseThreads
    // threads (registered in the kernel module): block_n items of `kind`.
    auto smallLaunch = [&](gpu::GPUFuncOp kernel, int64_t blockN,
                           int64_t kind) {
      kernelSymbols.insert(kernel);
      hq::abi::KernelLaunch l;
      l.name = kernel.getName().str();
      l.blockM = 1;
      l.blockN = blockN;
      l.threads = kElementwiseThreads;
      l.kind = kind;
      return l;
    };
    for (const GemmView &op : gemms) {
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
      spec.gridDependency = op.layout && parsed->sm >= 90;
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
        spec.moe.uniform =
            op.routing == hq::abi::kRoutingMasked && !op.rowIds;
        spec.moe.weightBytes = perExpert(op.weight);
        spec.moe.scaleBytes = perExpert(op.scales);
        spec.moe.zeroBytes = perExpert(op.zeroPoints);
        spec.moe.biasBytes = perExpert(op.bias);
      }

      std::string name = kernelName(op.op, op.isMoe() ? "moe_gemm" : "gemm");

      // One kernel per M range (per range of tokens per expert for MoE):
      // (kernel, its launch facts).
      SmallVector<std::pair<gpu::GPUFuncOp, hq::abi::KernelLaunch>> variants;
      if (op.layout) {
        ArrayAttr tiles = op.tiles;
        for (auto [i, attr] : llvm::enumerate(tiles)) {
          hq::TileConfig t = cast<TileConfigAttr>(attr).toHost();
          FailureOr<PreparedTile> tile =
              preparedTile(op, unsigned(i), t, spec, *parsed);
          if (failed(tile))
            return signalPassFailure();
          if (op.isMoe())
            if (hq::Diag d = hq::moeTileProblem(t, op.moeShape(), parsed->sm)) {
              op.emitOpError() << "tile_configs[" << i << "]: " << *d;
              return signalPassFailure();
            }
          std::string kname = name + "_m" + std::to_string(i);
          const CtaSplit split{t.splitK, t.mMax, t.splitsInCluster(),
                               t.cooperativeSplit};
          const SplitWorkspace workspace = splitWorkspace(spec, *tile, split);
          gpu::GPUFuncOp kernel =
              onlyKernel >= 0 && int64_t(i) != onlyKernel
                  ? buildStubKernel(builder, op.op->getLoc(), kernels, kname,
                                    op.isMoe(), bool(workspace))
                  : buildPreparedKernel(builder, op.op->getLoc(), kernels,
                                        kname, spec, *tile, split);
          kernelSymbols.insert(kernel);
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
          launch.workspace = workspace.bytes();
          launch.inputMap =
              tile->tensorActivations() ? tile->activationRowBytes() / 2 : 0;
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
            buildCanonicalKernel(builder, op.op->getLoc(), kernels, name, spec);
        kernelSymbols.insert(kernel);
        variants.push_back(
            {kernel, hq::abi::KernelLaunch{kernel.getName().str(), 1, 0,
                                           hq::abi::MmaSyncTile::kBlockM,
                                           hq::abi::MmaSyncTile::kBlockN,
                                           hq::abi::MmaSyncTile::kThreads,
                                           /*smemBytes=*/0}});
      }

      // The launch: the kernel of M's range, grid from M at run time,
      // pointers from the memrefs.
      ImplicitLocOpBuilder b(op.op->getLoc(), op.op);
      Value m = memref::DimOp::create(b, op.input, 0);
      SmallVector<Value> args = {
          devicePointer(b, op.input),       devicePointer(b, op.weight),
          devicePointer(b, op.scales),      devicePointer(b, op.zeroPoints),
          devicePointer(b, op.globalScale), devicePointer(b, op.bias),
          devicePointer(b, op.output),      devicePointer(b, op.inputScale),
          arith::IndexCastOp::create(b, b.getI32Type(), m)};
      if (op.isMoe()) {
        for (Value v : {op.rowIds, op.blockExperts, op.rowsPadded,
                        op.routerWeights})
          args.push_back(devicePointer(b, v));
        // The routing's block_size (the op's; grouped kernels ignore it).
        args.push_back(arith::ConstantIntOp::create(b, b.getI32Type(),
                                                    op.blockSize));
      }
      auto cst = [&](int64_t v) { return arith::ConstantIndexOp::create(b, v); };
      // MoE: the grid of abi::moeGrid, and no launch where it is empty.
      auto moeGridY = [&](const hq::abi::KernelLaunch &l) -> Value {
        Value bm = cst(l.blockM);
        if (l.routing == hq::abi::kRoutingIndexed)
          return arith::DivUIOp::create(
              b, memref::DimOp::create(b, op.rowIds, 0), bm);
        if (l.routing == hq::abi::kRoutingContiguous)
          return arith::AddIOp::create(
              b, arith::CeilDivUIOp::create(b, m, bm),
              arith::MinUIOp::create(b, m, cst(l.experts)));
        Value maxTokens = arith::DivUIOp::create(b, m, cst(l.experts));
        return arith::MulIOp::create(
            b, cst(l.experts), arith::CeilDivUIOp::create(b, maxTokens, bm));
      };
      auto launch = [&](gpu::GPUFuncOp kernel, const hq::abi::KernelLaunch &l) {
        Value gridX = cst(hq::ceilDiv(spec.np, l.blockN));
        Value gridY = op.isMoe() ? moeGridY(l)
                                 : Value(arith::CeilDivUIOp::create(
                                       b, m, cst(l.blockM)));
        OpBuilder::InsertionGuard guard(b);
        if (op.isMoe()) {
          auto ifBlocks = scf::IfOp::create(
              b, arith::CmpIOp::create(b, arith::CmpIPredicate::ne, gridY,
                                       cst(0)),
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
          ws = gpu::AllocOp::create(b, type, /*asyncToken=*/Type(),
                                    ValueRange(), ValueRange(), ValueRange())
                   .getMemref();
          gpu::MemsetOp::create(b, /*asyncToken=*/Type(), ValueRange(), ws,
                                arith::ConstantIntOp::create(
                                    b, b.getI32Type(), 0));
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
        launchTable.push_back(launchAttr(builder, v.second));
        if (i + 1 == variants.size()) {
          launch(v.first, v.second);
          break;
        }
        Value bound = cst(v.second.mMax);
        Value inRange = arith::CmpIOp::create(b, arith::CmpIPredicate::ule,
                                              chooser, bound);
        auto ifOp = scf::IfOp::create(b, inRange, /*withElseRegion=*/true);
        b.setInsertionPointToStart(ifOp.thenBlock());
        launch(v.first, v.second);
        b.setInsertionPointToStart(ifOp.elseBlock());
      }
      op.op->erase();
    }
    for (QuantizeOp op : quantizes) {
      auto srcType = cast<MemRefType>(op.getSource().getType());
      QuantizeKernelSpec qs;
      qs.input = cast<InputSchemaAttr>(op.getSchema()).toHost();
      qs.source = *toScalarType(srcType.getElementType());
      qs.k = srcType.getDimSize(1);
      qs.codesK = cast<MemRefType>(op.getDest().getType()).getDimSize(1);
      qs.launchDependents = parsed->sm >= 90;
      std::string name = kernelName(op, "quantize");
      gpu::GPUFuncOp kernel =
          buildQuantizeKernel(builder, op.getLoc(), kernels, name, qs);
      kernelSymbols.insert(kernel);
      hq::abi::KernelLaunch l;
      l.name = kernel.getName().str();
      l.blockM = 1;
      l.blockN = qs.k;
      l.threads = kQuantizeThreads;
      l.kind = hq::abi::kQuantizeKernel;
      launchTable.push_back(launchAttr(builder, l));
      // One block per row (grid x); the activations, codes and scales in
      // the slots of the kernel ABI (KernelABI.h: KernelLaunch::kind).
      ImplicitLocOpBuilder b(op.getLoc(), op);
      Value m = memref::DimOp::create(b, op.getSource(), 0);
      Value null = devicePointer(b, Value());
      SmallVector<Value> args = {devicePointer(b, op.getSource()), null,
                                 devicePointer(b, op.getScales()), null,
                                 null, null, devicePointer(b, op.getDest()),
                                 null,
                                 arith::IndexCastOp::create(b, b.getI32Type(), m)};
      Value any = arith::CmpIOp::create(b, arith::CmpIPredicate::ne, m,
                                        arith::ConstantIndexOp::create(b, 0));
      auto ifAny = scf::IfOp::create(b, any, /*withElseRegion=*/false);
      b.setInsertionPointToStart(ifAny.thenBlock());
      Value one = arith::ConstantIndexOp::create(b, 1);
      gpu::LaunchFuncOp::create(
          b, kernel, gpu::KernelDim3{m, one, one},
          gpu::KernelDim3{arith::ConstantIndexOp::create(b, kQuantizeThreads),
                          one, one},
          Value(), args);
      op.erase();
    }
    // humming.moe_align and humming.moe_group: one block of
    // kMoeAlignThreads threads (KernelABI.h: KernelLaunch::kind); `args`
    // gives the launch's parameters (null: devicePointer of none).
    auto lowerRoutingBlock =
        [&](Operation *op, const MoeAlignKernelSpec &spec, StringRef what,
            int64_t kind, int64_t blockSizeField,
            function_ref<SmallVector<Value>(ImplicitLocOpBuilder &, Value)>
                args) -> LogicalResult {
      if (std::string why = moeAlignKernelProblem(spec); !why.empty())
        return op->emitOpError() << why;
      gpu::GPUFuncOp kernel = buildMoeAlignKernel(
          builder, op->getLoc(), kernels, kernelName(op, what), spec);
      kernelSymbols.insert(kernel);
      hq::abi::KernelLaunch l;
      l.name = kernel.getName().str();
      l.blockM = 1;
      l.blockN = spec.topK;
      l.threads = kMoeAlignThreads;
      l.kind = kind;
      l.routing = spec.routing;
      l.experts = spec.experts;
      l.topK = spec.topK;
      l.blockSize = blockSizeField;
      launchTable.push_back(launchAttr(builder, l));
      ImplicitLocOpBuilder b(op->getLoc(), op);
      Value one = arith::ConstantIndexOp::create(b, 1);
      SmallVector<Value> params = args(b, devicePointer(b, Value()));
      gpu::LaunchFuncOp::create(
          b, kernel, gpu::KernelDim3{one, one, one},
          gpu::KernelDim3{arith::ConstantIndexOp::create(b, kMoeAlignThreads),
                          one, one},
          Value(), params);
      op->erase();
      return success();
    };
    for (MoeAlignOp op : aligns) {
      auto idsType = cast<MemRefType>(op.getTopkIds().getType());
      MoeAlignKernelSpec as{int64_t(op.getExperts()), idsType.getDimSize(1),
                            int64_t(op.getBlockSize())};
      // The ids in the input slot, M in the M slot, the routing in its
      // slots, the block size in the i32 after them.
      if (failed(lowerRoutingBlock(
              op, as, "moe_align", hq::abi::kMoeAlignKernel, as.blockSize,
              [&](ImplicitLocOpBuilder &b, Value null) -> SmallVector<Value> {
                Value m = memref::DimOp::create(b, op.getTopkIds(), 0);
                return {devicePointer(b, op.getTopkIds()),
                        null, null, null, null, null, null, null,
                        arith::IndexCastOp::create(b, b.getI32Type(), m),
                        devicePointer(b, op.getSortedIds()),
                        devicePointer(b, op.getExpertIds()),
                        devicePointer(b, op.getNumTokensPadded()),
                        null,
                        arith::ConstantIntOp::create(b, b.getI32Type(),
                                                     as.blockSize)};
              })))
        return signalPassFailure();
    }
    for (MoeGroupOp op : groups) {
      auto idsType = cast<MemRefType>(op.getTopkIds().getType());
      MoeAlignKernelSpec gs;
      gs.experts = int64_t(op.getExperts());
      gs.topK = idsType.getDimSize(1);
      gs.blockSize = 1;
      gs.routing = op.getMaxTokens() ? hq::abi::kRoutingMasked
                                     : hq::abi::kRoutingContiguous;
      gs.maxTokens = int64_t(op.getMaxTokens().value_or(0));
      // The ids in the input slot, the positions in the output slot, the
      // offsets or counts in the first routing slot. M is capped at the
      // tokens whose ids fit in a dynamic 'positions'.
      if (failed(lowerRoutingBlock(
              op, gs, "moe_group", hq::abi::kMoeGroupKernel, gs.maxTokens,
              [&](ImplicitLocOpBuilder &b, Value null) -> SmallVector<Value> {
                Value m = arith::MinUIOp::create(
                    b, memref::DimOp::create(b, op.getTopkIds(), 0),
                    arith::DivUIOp::create(
                        b, memref::DimOp::create(b, op.getPositions(), 0),
                        arith::ConstantIndexOp::create(b, gs.topK)));
                return {devicePointer(b, op.getTopkIds()),
                        null, null, null, null, null,
                        devicePointer(b, op.getPositions()), null,
                        arith::IndexCastOp::create(b, b.getI32Type(), m),
                        devicePointer(b, op.getExpertLayout()),
                        null, null, null,
                        arith::ConstantIntOp::create(b, b.getI32Type(), 0)};
              })))
        return signalPassFailure();
    }
    for (MoePermuteOp op : permutes) {
      auto inType = cast<MemRefType>(op.getInput().getType());
      MoePermuteKernelSpec ps;
      ps.words = inType.getDimSize(1) * inType.getElementTypeBitWidth() / 32;
      ps.gather = op.getGather();
      ps.topK = int64_t(op.getTopK().value_or(1));
      std::string name =
          kernelName(op, ps.gather ? "moe_gather" : "moe_scatter");
      gpu::GPUFuncOp kernel =
          buildMoePermuteKernel(builder, op.getLoc(), kernels, name, ps);
      hq::abi::KernelLaunch l = smallLaunch(
          kernel, ps.words,
          ps.gather ? hq::abi::kMoeGatherKernel : hq::abi::kMoeScatterKernel);
      launchTable.push_back(launchAttr(builder, l));
      // The positions in use: at most one per output row (gather) or per
      // input row times top_k (scatter), so that a dynamic size that
      // disagrees reads and writes nothing outside the memrefs; the grouped
      // side's rows bound the positions (in the kernel).
      ImplicitLocOpBuilder b(op.getLoc(), op);
      auto dim0 = [&](Value v) { return memref::DimOp::create(b, v, 0); };
      Value p = arith::MinUIOp::create(
          b, dim0(op.getPositions()),
          ps.gather ? Value(dim0(op.getOutput()))
                    : Value(arith::MulIOp::create(
                          b, dim0(op.getInput()),
                          arith::ConstantIndexOp::create(b, ps.topK))));
      Value grouped = arith::MinUIOp::create(
          b, dim0(ps.gather ? op.getInput() : op.getOutput()),
          arith::ConstantIndexOp::create(
              b, std::numeric_limits<int32_t>::max()));
      Value null = devicePointer(b, Value());
      SmallVector<Value> args = {
          devicePointer(b, op.getInput()), null, null, null, null, null,
          devicePointer(b, op.getOutput()), null,
          arith::IndexCastOp::create(b, b.getI32Type(), p),
          devicePointer(b, op.getPositions()), null, null, null,
          arith::IndexCastOp::create(b, b.getI32Type(), grouped)};
      launchGridStride(b, kernel, p, ps.words, args);
      op.erase();
    }
    for (GatherColumnsOp op : gathers) {
      auto inType = cast<MemRefType>(op.getInput().getType());
      GatherColumnsKernelSpec gs;
      gs.columns = inType.getDimSize(1);
      gs.elementBits = inType.getElementTypeBitWidth();
      std::string name = kernelName(op, "gather_columns");
      gpu::GPUFuncOp kernel = buildGatherColumnsKernel(
          builder, op.getLoc(), kernels, name, gs,
          /*launchDependents=*/parsed->sm >= 90);
      const int64_t steps = gs.columns / gatherVector(gs);
      hq::abi::KernelLaunch l =
          smallLaunch(kernel, steps, hq::abi::kGatherColumnsKernel);
      launchTable.push_back(launchAttr(builder, l));
      // The rows both sides hold (a dynamic size that disagrees reads and
      // writes nothing outside them), at most 2^31 - 1; the columns' length
      // is K (the verifier checks a static one; a dynamic one must be K).
      ImplicitLocOpBuilder b(op.getLoc(), op);
      auto dim0 = [&](Value v) { return memref::DimOp::create(b, v, 0); };
      Value rows = arith::MinUIOp::create(
          b,
          arith::MinUIOp::create(b, dim0(op.getInput()), dim0(op.getOutput())),
          arith::ConstantIndexOp::create(
              b, std::numeric_limits<int32_t>::max() / gs.columns));
      Value null = devicePointer(b, Value());
      SmallVector<Value> args = {
          devicePointer(b, op.getInput()), null, null, null, null, null,
          devicePointer(b, op.getOutput()), null,
          arith::IndexCastOp::create(b, b.getI32Type(), rows),
          devicePointer(b, op.getColumns()), null, null, null,
          arith::ConstantIntOp::create(b, b.getI32Type(), 0)};
      launchGridStride(b, kernel, rows, steps, args);
      op.erase();
    }
    for (RepackOp op : repacks) {
      RepackKernelSpec rs = repackSpec(op);
      std::string name = kernelName(op, "repack");
      gpu::GPUFuncOp kernel =
          buildRepackKernel(builder, op.getLoc(), kernels, name, rs);
      hq::abi::KernelLaunch l =
          smallLaunch(kernel, repackItems(rs), hq::abi::kRepackKernel);
      launchTable.push_back(launchAttr(builder, l));
      ImplicitLocOpBuilder b(op.getLoc(), op);
      const int64_t experts = std::max<int64_t>(
          1, op.getWeightSchema().toHost().experts);
      Value null = devicePointer(b, Value());
      SmallVector<Value> args = {
          devicePointer(b, op.getSource()), null, null, null, null, null,
          devicePointer(b, op.getDest()), null,
          arith::ConstantIntOp::create(b, b.getI32Type(), experts),
          null, null, null, null,
          arith::ConstantIntOp::create(b, b.getI32Type(), 0)};
      launchGridStride(b, kernel, arith::ConstantIndexOp::create(b, experts),
                       l.blockN, args);
      op.erase();
    }
    for (QuantizeOp op : weightQuantizes) {
      // One kernel per phase (most schemas: one), launched in order; the
      // table lists them in that order.
      ImplicitLocOpBuilder b(op.getLoc(), op);
      WeightQuantizeKernelSpec qs = weightQuantizeSpec(op);
      const int64_t experts = std::max<int64_t>(1, qs.weight.experts);
      Value null = devicePointer(b, Value());
      SmallVector<Value> args = {
          devicePointer(b, op.getSource()), null,
          devicePointer(b, op.getScales()),
          devicePointer(b, op.getZeroPoints()),
          devicePointer(b, op.getGlobalScale()), null,
          devicePointer(b, op.getDest()), null,
          arith::ConstantIntOp::create(b, b.getI32Type(), experts)};
      for (WeightQuantizePhase phase : weightQuantizePhases(qs)) {
        qs.phase = phase;
        std::string name = kernelName(
            op, phase == WeightQuantizePhase::Clear   ? "quantize_weights_clear"
                : phase == WeightQuantizePhase::Amax  ? "quantize_weights_amax"
                : phase == WeightQuantizePhase::Finish
                    ? "quantize_weights_finish"
                    : "quantize_weights");
        gpu::GPUFuncOp kernel =
            buildWeightQuantizeKernel(builder, op.getLoc(), kernels, name, qs);
        hq::abi::KernelLaunch l = smallLaunch(kernel, weightQuantizeItems(qs),
                                              hq::abi::kWeightQuantizeKernel);
        launchTable.push_back(launchAttr(builder, l));
        // One warp per item: 32 thread steps each.
        launchGridStride(b, kernel, arith::ConstantIndexOp::create(b, experts),
                         32 * l.blockN, args);
      }
      op.erase();
    }
    for (Operation *op : elementwise) {
      Value input = op->getOperand(0), output = op->getOperand(1);
      auto outType = cast<MemRefType>(output.getType());
      ElementwiseKernelSpec es;
      es.kind = isa<SiluAndMulOp>(op) ? hq::abi::kSiluAndMulKernel
                                      : hq::abi::kMoeSumKernel;
      es.columns = outType.getDimSize(1);
      if (auto sum = dyn_cast<MoeSumOp>(op))
        es.topK = int64_t(sum.getTopK());
      if (auto act = dyn_cast<SiluAndMulOp>(op)) {
        if (FloatAttr a = act.getAlphaAttr())
          es.alpha = a.getValueAsDouble();
        if (FloatAttr a = act.getUpOffsetAttr())
          es.upOffset = a.getValueAsDouble();
        if (FloatAttr a = act.getLimitAttr())
          es.limit = a.getValueAsDouble();
      }
      es.bf16 = outType.getElementType().isBF16();
      std::string name =
          kernelName(op, isa<SiluAndMulOp>(op) ? "silu_and_mul" : "moe_sum");
      gpu::GPUFuncOp kernel =
          buildElementwiseKernel(builder, op->getLoc(), kernels, name, es);
      hq::abi::KernelLaunch l = smallLaunch(kernel, es.columns, es.kind);
      if (es.kind == hq::abi::kMoeSumKernel) {
        l.routing = hq::abi::kRoutingIndexed;
        l.topK = es.topK;
      }
      launchTable.push_back(launchAttr(builder, l));
      ImplicitLocOpBuilder b(op->getLoc(), op);
      Value m = memref::DimOp::create(b, output, 0);
      Value null = devicePointer(b, Value());
      SmallVector<Value> args = {devicePointer(b, input), null, null, null,
                                 null, null, devicePointer(b, output), null,
                                 arith::IndexCastOp::create(b, b.getI32Type(), m)};
      Value pairs = arith::MulIOp::create(
          b, m, arith::ConstantIndexOp::create(b, es.columns / 2));
      Value any = arith::CmpIOp::create(b, arith::CmpIPredicate::ne, m,
                                        arith::ConstantIndexOp::create(b, 0));
      auto ifAny = scf::IfOp::create(b, any, /*withElseRegion=*/false);
      b.setInsertionPointToStart(ifAny.thenBlock());
      Value one = arith::ConstantIndexOp::create(b, 1);
      Value threads = arith::ConstantIndexOp::create(b, kElementwiseThreads);
      gpu::LaunchFuncOp::create(
          b, kernel,
          gpu::KernelDim3{arith::CeilDivUIOp::create(b, pairs, threads), one,
                          one},
          gpu::KernelDim3{threads, one, one}, Value(), args);
      op->erase();
    }
    // What a runtime needs to launch the kernels without running the host
    // code: names, M ranges and launch shapes (Humming/Target/KernelABI.h).
    module->setAttr(hq::abi::kKernelTableAttr,
                    builder.getArrayAttr(launchTable));
  }
};
} // namespace
