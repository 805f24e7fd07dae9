//===- PreparedKernel.cpp - Prepared-layout GEMM kernels ------------------===//
//
// The kernel function of a prepared-layout GEMM (PreparedEmitter.h): its
// module global (dynamic shared memory), its split-K workspace, launch
// attributes, the thread coordinates every generation shares, and
// programmatic dependent launch. The MMA generation's emitter
// (MmaSyncKernel.cpp, WgmmaKernel.cpp) does the rest.
//
//===----------------------------------------------------------------------===//

#include "PreparedEmitter.h"

#include "Humming/Target/TileHeuristics.h"

using namespace mlir;
using namespace mlir::humming;
namespace hq = ::humming;
namespace L = ::humming::layout;

PreparedEmitter::PreparedEmitter(const PreparedKernelArgs &args)
    : EmitterBase(args.b, args.params), spec(args.spec), tile(args.tile),
      split(args.split), smem(args.smem), partials(args.partials),
      arrivals(args.arrivals), planes(L::planes(spec.weight.type.bits)),
      ptx(args.b) {
  bf16 = spec.input.type == hq::ScalarType::bf16();
  act8 = spec.input.type.bits == 8;
  act4 = spec.input.type.bits == 4;
  act = bf16 ? Type(b.getBF16Type()) : Type(b.getF16Type());
  act2 = VectorType::get({2}, act);
  mt = tile.warpM / 16;
  tiles = spec.kp / L::kTileK;
  tilesPerIter = tile.kSplit * tile.kTilesPerWarp;
  iterations = hq::ceilDiv(tiles, tilesPerIter);
  // Each CTA along K takes the same number of iterations (the last one's
  // tail past K adds zeros).
  ctaIterations = hq::ceilDiv(iterations, split.ctas);
  // Exact K: every k-tile every warp of every CTA reads is a real one and
  // every activation column of it lies inside K. The loop then copies
  // without clamping k-tiles or checking columns, and skips the copies
  // past its end instead of re-reading the last k-tile.
  exactK = spec.kAct == tiles * L::kTileK && tiles % tilesPerIter == 0 &&
           iterations % split.ctas == 0;
  const hq::WeightSchema &w = spec.weight;
  perKScales = w.hasPerKScales(); // group or group_tensor (block is refused)
  // f16 accumulation: channel scales are applied to the weights in the
  // main loop (like group scales) so the f16 partial sums stay in range.
  loopChannelScales =
      spec.f16Accumulation && w.granularity == hq::Granularity::Channel;
  // One scale / zero-point load per iteration when a warp's k-tiles of an
  // iteration share their group.
  groupPerIter = L::groupPerIteration(w, tile);
  // Group scales after the MMAs (preparedTile checked the conditions: group
  // scales of 16 bits, f32 sums, 16-row warps in one warp row, a warp's
  // k-tiles of an iteration in one group). Tiles serving at most 8 tokens leave
  // the C rows g + 8 of their one MMA row zero: those need no scaling.
  postScale = tile.scaleAfterMma;
  // (MoE blocks hold any of their block_m rows, whatever the tokens per
  // expert the tile was chosen for.)
  const bool transposable = !tile.wgmma() && !act8 && !act4 &&
                            !spec.f16Accumulation && !spec.batchInvariant;
  moeTransposed =
      spec.isMoe() && transposable && mt == 1 && tile.warpsM == 1 &&
      hq::moeTransposes(split.maxM, ctaIterations * tilesPerIter * L::kTileK);
  lowRowsOnly = (mt == 1 && split.maxM > 0 && split.maxM <= 8 &&
                 !spec.isMoe()) ||
                moeTransposed;
  weightsAsA = lowRowsOnly && transposable;
}

void PreparedEmitter::waitForPrerequisites() {
  // Inline PTX with a memory clobber: LLVM's griddepcontrol intrinsics are
  // IntrNoMem, which would let loads and copies move across the wait.
  // (Once on each thread's path: the warp-specialized kernels emit it in
  // the producers' and the consumers' branches.)
  waited = true;
  ptx.gridDependencyWait();
}

void PreparedEmitter::emit() {
  // Programmatic dependent launch without a prefetch: nothing before the
  // wait.
  if (spec.gridDependency && !prefetchesBeforeWait())
    waitForPrerequisites();
  m = param(hq::abi::ParamM);
  if (tile.persistent > 0) {
    // Output tiles in turn (TileConfig::persistent): the CTA's first here,
    // the others in the warp-specialized loops (selectTile).
    tilesX = c32(hq::ceilDiv(spec.np, tile.blockN()));
    tilesY = arith::DivUIOp::create(
        b, arith::AddIOp::create(b, m, c32(tile.blockM() - 1)),
        c32(tile.blockM()));
    tilesTotal = arith::MulIOp::create(b, tilesX, tilesY);
    selectTile(index32(gpu::BlockIdOp::create(b, gpu::Dimension::x)));
  } else {
    bidX = index32(gpu::BlockIdOp::create(b, gpu::Dimension::x));
    bidY = index32(gpu::BlockIdOp::create(b, gpu::Dimension::y));
    if (tile.rasterM > 1)
      rasterGrid();
    countBlockTiles();
  }
  bidZ = split.ctas > 1 ? index32(gpu::BlockIdOp::create(b, gpu::Dimension::z))
                        : c32(0);
  // This CTA's first iteration (split-K across CTAs).
  Value first = arith::MulIOp::create(b, bidZ, c32(ctaIterations));
  Value warp =
      threadCoordinates(index32(gpu::ThreadIdOp::create(b, gpu::Dimension::x)));
  // MoE: the rest only for a block with rows, on its expert's weights.
  scf::IfOp routed = routeBlock();
  if (spec.weight.hasGlobalScale())
    global = load(f32, param(hq::abi::ParamGlobalScale), c64(0));
  if (moeTransposed) {
    // One pass over K per eight block rows that hold a token: rows 0-7,
    // then 8-15 where any does (block-uniform: routeBlock reduced it).
    Value passes = arith::SelectOp::create(b, highRows, c32(2), c32(1));
    auto loop = scf::ForOp::create(b, c32(0), passes, c32(1));
    b.setInsertionPointToStart(loop.getBody());
    rowShift = arith::MulIOp::create(b, loop.getInductionVar(), c32(8));
    // Every thread is done with the previous pass's shared memory (the
    // pipeline's slots, the in-block reduction's sums).
    gpu::BarrierOp::create(b);
    // Each pass computes its addresses from the thread's coordinates
    // anew (ptx.opaque): hoisted out of the loop, they stayed live across
    // the whole kernel.
    warp = threadCoordinates(ptx.opaque(tid));
    prepareSlots(warp);
    emitLoop(first);
    b.setInsertionPointAfter(loop);
    rowShift = Value();
  } else {
    prepareSlots(warp);
    emitLoop(first);
  }
  if (routed)
    b.setInsertionPointAfter(routed);
}

void PreparedEmitter::countBlockTiles() {
  if (partialBlocks())
    blockTiles = arith::MinSIOp::create(
        b, c32(tile.warpsN),
        arith::SubIOp::create(
            b, c32(spec.np / L::kTileN),
            arith::MulIOp::create(b, bidX, c32(tile.warpsN))));
}

void PreparedEmitter::selectTile(Value t) {
  rasterTile(t, tilesX, tilesY);
  countBlockTiles();
  if (nTileInBlock)
    nTile = arith::AddIOp::create(
        b, arith::MulIOp::create(b, bidX, c32(tile.warpsN)), nTileInBlock);
}

void PreparedEmitter::rasterTile(Value pid, Value gridX, Value gridY) {
  // As rasterGrid, over a linear tile index (persistent kernels; no
  // clusters): raster_m 1 is the launch's row-by-row order.
  const int64_t g = tile.rasterM;
  if (g == 1) {
    bidY = arith::DivUIOp::create(b, pid, gridX);
    bidX = arith::RemUIOp::create(b, pid, gridX);
    return;
  }
  Value perGroup = arith::MulIOp::create(b, gridX, c32(g));
  Value group = arith::DivUIOp::create(b, pid, perGroup);
  Value first = arith::MulIOp::create(b, group, c32(g));
  Value rows =
      arith::MinUIOp::create(b, arith::SubIOp::create(b, gridY, first), c32(g));
  Value local = arith::RemUIOp::create(b, pid, perGroup);
  bidY =
      arith::AddIOp::create(b, first, arith::RemUIOp::create(b, local, rows));
  bidX = arith::DivUIOp::create(b, local, rows);
}

void PreparedEmitter::rasterGrid() {
  // The launch runs the CTAs in the order of their linear index pid = y X
  // + x (X, Y: the grid): CTA pid takes output block (column x', row y')
  // of the group of G = raster_m rows of blocks it falls in, those G rows
  // (fewer in the last group) taken for one column before the next:
  // y' = first + (pid mod G X) mod rows, x' = (pid mod G X) / rows. A
  // bijection of the grid onto itself (as in Triton's grouped ordering).
  // With multicast_a the pairs of CTAs along x (clusters) are the units
  // ordered: a pair keeps its row of blocks and its two columns.
  const int64_t pair = tile.multicastA;
  Value rank = pair > 1 ? Value(arith::RemUIOp::create(b, bidX, c32(pair)))
                        : Value();
  if (pair > 1)
    bidX = arith::DivUIOp::create(b, bidX, c32(pair));
  Value gridX = index32(gpu::GridDimOp::create(b, gpu::Dimension::x));
  if (pair > 1)
    gridX = arith::DivUIOp::create(b, gridX, c32(pair));
  Value gridY = index32(gpu::GridDimOp::create(b, gpu::Dimension::y));
  Value pid = arith::AddIOp::create(b, arith::MulIOp::create(b, bidY, gridX),
                                    bidX);
  rasterTile(pid, gridX, gridY);
  if (pair > 1)
    bidX = arith::AddIOp::create(b, arith::MulIOp::create(b, bidX, c32(pair)),
                                 rank);
}

Value PreparedEmitter::threadCoordinates(Value threadId) {
  tid = threadId;
  lane = arith::AndIOp::create(b, tid, c32(31));
  copyTid = tile.warpSpecialized
                ? Value(arith::SubIOp::create(b, tid, c32(tile.mathThreads())))
                : tid;
  Value warp = arith::ShRUIOp::create(b, tid, c32(5));
  // This warp's n-tile in the block (wgmma: its warpgroup's first).
  nTileInBlock = placeWarps(warp);
  grp = arith::ShRUIOp::create(b, lane, c32(2));
  quad = arith::AndIOp::create(b, lane, c32(3));
  nTile = arith::AddIOp::create(
      b, arith::MulIOp::create(b, bidX, c32(tile.warpsN)), nTileInBlock);
  rowBase = arith::MulIOp::create(b, warpMi, c32(tile.warpM));
  return warp;
}

void PreparedEmitter::issueWarpCopies(Value, Value) {
  llvm::report_fatal_error("humming: per-warp copies in a generation whose "
                           "kernels copy cooperatively (a bug in the "
                           "emitter)");
}

SplitWorkspace mlir::humming::splitWorkspace(const GemmKernelSpec &spec,
                                             const PreparedTile &tile,
                                             const CtaSplit &split) {
  if (split.ctas <= 1 || split.cluster)
    return {};
  const int64_t tilesMax =
      (spec.np / tile.blockN()) * hq::ceilDiv(split.maxM, tile.blockM());
  // A CTA's sums: wgmma, (warp_m / 2) x n-tiles per consumer thread;
  // mma_sync, the accumulators of one K-split group's threads.
  const int64_t perCta =
      tile.wgmma() ? tile.warpM / 2 * tile.nTilesPerGroup * tile.mathThreads()
                   : (tile.warpM / 16) * 32 * tile.warpsM * tile.warpsN * 32;
  return {tilesMax * split.ctas * perCta, tilesMax};
}

gpu::GPUFuncOp mlir::humming::buildPreparedKernel(
    OpBuilder &builder, Location loc, gpu::GPUModuleOp module, StringRef name,
    const GemmKernelSpec &spec, const PreparedTile &tile,
    const CtaSplit &split) {
  OpBuilder::InsertionGuard guard(builder);
  // The kernels' dynamic shared memory: one external, zero-sized
  // addrspace(3) array per module (its size is given at launch).
  constexpr StringLiteral kSmem = "humming_dynamic_smem";
  auto smemGlobal = module.lookupSymbol<LLVM::GlobalOp>(kSmem);
  if (!smemGlobal) {
    builder.setInsertionPointToStart(module.getBody());
    smemGlobal = LLVM::GlobalOp::create(
        builder, loc, LLVM::LLVMArrayType::get(builder.getI8Type(), 0),
        /*isConstant=*/false, LLVM::Linkage::External, kSmem, Attribute(),
        /*alignment=*/16, /*addrSpace=*/3);
  }
  // The activations' swizzled rows start at multiples of eight rows (the
  // slots are padded to it: CooperativeSlot::padBytes, layout::slotAlign).
  const int64_t align = hq::layout::slotAlign(tile);
  if (tile.tmaActivations &&
      smemGlobal.getAlignment().value_or(0) < uint64_t(align))
    smemGlobal.setAlignment(align);
  // Split-K across CTAs: the workspace the caller gives (a parameter, so
  // that launches on several streams each have their own).
  const SplitWorkspace workspace = splitWorkspace(spec, tile, split);
  builder.setInsertionPointToEnd(module.getBody());
  auto func = gpu::GPUFuncOp::create(
      builder, loc, name,
      kernelFunctionType(builder, spec.isMoe(), bool(workspace)));
  func->setAttr(gpu::GPUDialect::getKernelFuncAttrName(),
                builder.getUnitAttr());
  func.setKnownBlockSizeAttr(
      builder.getDenseI32ArrayAttr({int32_t(tile.threads()), 1, 1}));
  if (tile.ctasPerSm > 1)
    func->setAttr(NVVM::NVVMDialect::getMinctasmAttrName(),
                  builder.getI32IntegerAttr(int32_t(tile.ctasPerSm)));
  // Warp-specialized kernels that move registers between warpgroups launch
  // with exactly the count their setmaxnreg split assumes (.maxnreg):
  // ptxas would otherwise pick fewer and the consumers' setmaxnreg.inc
  // wait forever for registers the block never had (seen with the
  // 64-token tile: 130 at launch, 224 asked for).
  if (tile.warpSpecialized) {
    L::ws::RegisterSplit regs = L::ws::registerSplit(tile);
    if (regs.rebalance)
      func->setAttr(NVVM::NVVMDialect::getMaxnregAttrName(),
                    builder.getI32IntegerAttr(int32_t(regs.launch)));
  }
  // split_k in a cluster (wgmma, or mma_sync with cluster_split): the CTAs
  // along z form a cluster (.reqnctapercluster; an ordinary launch then
  // groups them).
  if (split.ctas > 1 && split.cluster)
    func->setAttr(NVVM::NVVMDialect::getClusterDimAttrName(),
                  builder.getDenseI32ArrayAttr({1, 1, int32_t(split.ctas)}));
  // multicast_a: pairs of CTAs along x share the activation tile.
  if (tile.multicastA > 1)
    func->setAttr(NVVM::NVVMDialect::getClusterDimAttrName(),
                  builder.getDenseI32ArrayAttr(
                      {int32_t(tile.multicastA), 1, 1}));
  // Inputs are read-only and never alias the output: loads through them
  // may use the read-only data path (ld.global.nc).
  // (So are the routing tensors of MoE kernels; the workspace is written.)
  const unsigned workspaceArg =
      workspace ? func.getNumArguments() - 1 : func.getNumArguments();
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    if (!isa<LLVM::LLVMPointerType>(func.getArgument(i).getType()))
      continue; // M, the routing's block_size
    func.setArgAttr(i, LLVM::LLVMDialect::getNoAliasAttrName(),
                    builder.getUnitAttr());
    if (i != hq::abi::ParamOutput && i != workspaceArg)
      func.setArgAttr(i, LLVM::LLVMDialect::getReadonlyAttrName(),
                      builder.getUnitAttr());
  }
  ImplicitLocOpBuilder b(loc, builder);
  b.setInsertionPointToStart(&func.getBody().front());
  SmallVector<Value> params(func.getArguments().begin(),
                            func.getArguments().end());
  Value smem = LLVM::AddressOfOp::create(b, smemGlobal);
  Value partials, arrivals;
  if (workspace) {
    partials = func.getArguments().back();
    arrivals = LLVM::GEPOp::create(
        b, partials.getType(), b.getI8Type(), partials,
        ArrayRef<LLVM::GEPArg>{workspace.partialFloats * 4});
  }
  const PreparedKernelArgs args{b,    spec,  tile,     params,
                                smem, split, partials, arrivals};
  // The MMA generation's emitter.
  std::unique_ptr<PreparedEmitter> emitter =
      tile.wgmma() ? createWgmmaEmitter(args) : createMmaSyncEmitter(args);
  emitter->emit();
  // The runtime launches it early on the strength of grid_dependency: a
  // kernel without the wait would read the previous kernel's output
  // before it is written.
  if (spec.gridDependency && !emitter->waitsForPrerequisites())
    llvm::report_fatal_error("humming: a grid_dependency kernel without "
                             "griddepcontrol.wait (a bug in the emitter)");
  gpu::ReturnOp::create(b);
  return func;
}
