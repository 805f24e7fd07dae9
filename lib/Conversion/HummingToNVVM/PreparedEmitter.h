//===- PreparedEmitter.h - Shared part of the prepared kernels --*- C++ -*-===//
//
// The GEMM kernels over weights in the prepared layout of
// Humming/Quant/PreparedLayout.h share everything but their MMAs: the
// layout reads, the cp.async / TMA / bulk-copy pipeline and its mbarriers,
// the dequantization, the split-K workspace and the epilogue's output
// conversion. PreparedEmitter holds those; one subclass per MMA generation
// (MmaSyncEmitter.h, WgmmaKernel.cpp) places the warps, reads a pipeline
// slot into its MMAs' fragments and runs the main loop and the reduction.
// A new generation (tcgen05, block-scaled mma) is one more subclass and
// one more case in buildPreparedKernel (PreparedKernel.cpp).
//
// The shared pieces, by file:
// * PreparedKernel.cpp: the kernel function, its dynamic shared memory
//   and split-K workspace parameter, the thread coordinates, programmatic
//   dependent launch.
// * PreparedCopies.cpp: the copies of an iteration (cooperative cp.async,
//   TMA tensor and bulk copies, the L2 prefetch), the pipeline loop, the
//   mbarriers.
// * PreparedDequant.cpp: codes and group data to the activation type.
// * PreparedEpilogue.cpp: output factors, the split-K workspace and arrival
//   counters, distributed shared memory.
//
//===----------------------------------------------------------------------===//

#ifndef HUMMING_LIB_CONVERSION_HUMMINGTONVVM_PREPAREDEMITTER_H
#define HUMMING_LIB_CONVERSION_HUMMINGTONVVM_PREPAREDEMITTER_H

#include "EmitterBase.h"
#include "Kernels.h"
#include "PtxBuilder.h"

#include "Humming/Conversion/Passes.h"
#include "Humming/Quant/PreparedLayout.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <functional>
#include <memory>

namespace mlir::humming {

/// What every generation's emitter is built from: the builder inside the
/// kernel, what the kernel is specialised on, its parameters, the dynamic
/// shared memory (ptr<3>) and, with a K split through the workspace, its
/// partial sums and arrival counters (ptr<1>, the workspace parameter and
/// the counters after the sums; null otherwise).
struct PreparedKernelArgs {
  ImplicitLocOpBuilder &b;
  const GemmKernelSpec &spec;
  const PreparedTile &tile;
  ArrayRef<Value> params;
  Value smem;
  const CtaSplit &split;
  Value partials, arrivals;
};

class PreparedEmitter : protected EmitterBase {
public:
  explicit PreparedEmitter(const PreparedKernelArgs &args);
  virtual ~PreparedEmitter() = default;

  /// The kernel body: thread coordinates, the generation's loop and
  /// epilogue.
  void emit();
  /// raster_m > 1: bidX and bidY renamed so that consecutive CTAs take
  /// raster_m rows of blocks per column of blocks (TileConfig::rasterM).
  void rasterGrid();
  /// bidX and bidY of output tile `pid` (i32) in the order of raster_m
  /// over a grid of `gridX` x `gridY` blocks (i32; rasterGrid's mapping,
  /// any raster_m).
  void rasterTile(Value pid, Value gridX, Value gridY);
  /// persistent: makes output tile `t` (i32, of tilesTotal) this CTA's:
  /// bidX, bidY, blockTiles and, once threadCoordinates placed the warp,
  /// nTile. The values are built where the builder is (in a tile loop's
  /// body, they hold in it only).
  void selectTile(Value t);
  /// partialBlocks: blockTiles of block column bidX.
  void countBlockTiles();
  /// tid and what follows from it (lane, copyTid, the warp's place, grp,
  /// quad, nTile, rowBase) for thread index `threadId`; returns the warp.
  Value threadCoordinates(Value threadId);
  /// Whether the emitted kernel waits for its prerequisites
  /// (griddepcontrol.wait): every kernel with spec.gridDependency must.
  bool waitsForPrerequisites() const { return waited; }

protected:
  using Layout = ::humming::layout::KernelShape;
  /// The words of one iteration read back from its pipeline slot, in the
  /// order the generation's compute consumes them.
  using Stage = SmallVector<Value>;
  /// Takes a stage's words in order (a function_ref<Value()> for
  /// readGroup).
  struct StageCursor {
    ArrayRef<Value> stage;
    size_t at = 0;
    Value operator()() {
      assert(at < stage.size() && "the slot holds fewer words than read");
      return stage[at++];
    }
  };

  // ---- What each MMA generation provides ------------------------------
  /// Sets warpN, warpK and warpMi (and the generation's own coordinates)
  /// for warp `warp` of the block; returns the warp's first n-tile in the
  /// block.
  virtual Value placeWarps(Value warp) = 0;
  /// After the common coordinates: the generation's slot layout (coop,
  /// smemAddr, per-warp regions).
  virtual void prepareSlots(Value warp) = 0;
  /// The pipeline, the main loop and the epilogue from this CTA's first
  /// iteration `first`.
  virtual void emitLoop(Value first) = 0;
  /// Cooperative copies: where activation chunk `c` (i32) of an iteration
  /// goes: its k-tile slot's half h (8 columns) and row r (of block_m),
  /// set in that order; then the byte offset in the slot of (u, h, r).
  virtual void activationChunkPlace(Value c, Value &h, Value &r) = 0;
  virtual Value activationChunkAt(Value slotBase, Value u, Value h,
                                  Value r) = 0;
  /// The lane's own copies of iteration `iter` into slot `slot` (kernels
  /// whose warps copy their own tiles; only mma.sync has them).
  virtual void issueWarpCopies(Value iter, Value slot);

  // ---- The copy pipeline (PreparedCopies.cpp) --------------------------
  /// The cp.async pipeline loop over the CTA's iterations: the copies of
  /// iterations 0 .. S - lag - 1 up front, then per iteration the wait for
  /// its group, `publish` (the barrier), and `step(it, slot, accs,
  /// issueAhead)` (slot: it % S), which calls issueAhead() where the copies
  /// of iteration it + S - lag (into the slot read `lag` iterations ago)
  /// are to be issued. `init` runs after the prologue and gives the loop's
  /// initial values; the loop's results are returned.
  SmallVector<Value>
  pipelineLoop(Value first, int64_t lag,
               function_ref<SmallVector<Value>()> init,
               function_ref<void()> publish,
               function_ref<SmallVector<Value>(Value, Value, ArrayRef<Value>,
                                               function_ref<void()>)>
                   step);
  /// Issues the copies of iteration `iter` into pipeline slot `slot` (only
  /// where `when`, an i1, holds, if given) and commits them as one cp.async
  /// group (empty where they were skipped: the group count stays uniform);
  /// with `commit` false they join the next group committed.
  void issueCopies(Value iter, Value slot, Value when = Value(),
                   bool commit = true);
  /// Cooperative kernels: the block's copies of iteration `iter` into slot
  /// `slot`, each part that the tile copies this way (the copier's share of
  /// the part, copiesInputs / copiesConstants).
  void issueCooperativeCopies(Value iter, Value slot);
  /// Where a cooperative fill goes: iteration `iter` (i32) into pipeline
  /// slot `slot`, which starts at shared byte `slotBase`; its weights at
  /// `weightsAt`, after its activations (then its per-group constants and
  /// per-group activation scales).
  struct FillPlace {
    Value iter, slot, slotBase, weightsAt;
  };
  /// The k-tile of k-tile slot `u` (i32) of the fill's iteration (every
  /// K-split group's), unclamped (clampedTile clamps it to K).
  Value fillKTile(const FillPlace &fill, Value u);
  /// MoE gathered activations (tma = [a]): each token's row of the
  /// iteration's K by 16-byte cp.async into TMA's swizzled layout.
  void copyGatheredActivations(const FillPlace &fill);
  /// Activations by cp.async in the generation's fragment layout.
  void copyActivationChunks(const FillPlace &fill);
  /// Weights by cp.async (the block's n-tiles of a k-tile contiguous).
  void copyWeightChunks(const FillPlace &fill);
  /// The fill's TMA part, from one producer thread: its expected bytes on
  /// the full mbarrier, the activation box (tma = [a]), the weights' bulk
  /// copies (tma = [b]); with bulk fills the announcement is its arrival.
  void issueBulkFill(const FillPlace &fill);
  /// Scales and zero points of the block's columns, per group copy.
  void copyGroupConstants(const FillPlace &fill);
  /// Per-group activation scales (KernelShape::groupInputScales).
  void copyGroupInputScales(const FillPlace &fill);
  /// `count` 16-byte copies shared out among the block's threads: `copy(c)`
  /// emits chunk c (i32); with `round`, the thread's r-th chunk is c =
  /// copyTid + r x copyThreads().
  void forEachChunk(int64_t count, function_ref<void(Value)> copy);
  void forEachChunk(int64_t count, function_ref<void(Value, int64_t)> copy);
  /// The threads that issue the cp.async copies: the producers of a
  /// warp-specialized block, else every thread.
  int64_t copyThreads() const {
    return tile.warpSpecialized ? tile.producerThreads() : tile.threads();
  }
  /// Gathered activations: the source row (i32, -1 without a token) of this
  /// producer's chunk in each round of an iteration's copies, read from the
  /// row table once before the fill loop (the loop's cp.async copies would
  /// keep LLVM from hoisting those shared loads; ncu on a MoE prefill
  /// kernel showed the loads and their dependents among the producers'
  /// most stalled instructions).
  void cacheGatheredRows();
  /// The source of a 16-byte activation copy of element (`row`, `col`)
  /// (i32; `row` a valid one even where `inRows`, i1, is false): its word
  /// index (i64; 0 where nothing is read) and its bytes (`colBytes`, the
  /// columns inside K, where the row holds a token, else 0: zero-filled).
  std::pair<Value, Value> activationSource(Value row, Value inRows, Value col,
                                           Value colBytes);
  SmallVector<Value> gatheredRows;
  /// One 16-byte cp.async (.cg) of word `index` (i64) of `base` to shared
  /// byte `dstByte` (i32); `srcBytes` (when set) zero-fills the rest.
  void copy16(Value dstByte, Value base, Value index, Value srcBytes = Value()) {
    copyAsync(16, dstByte, base, index, srcBytes);
  }
  /// One cp.async of `bytes` (4, 8 or 16: .ca below 16, .cg at 16) of word
  /// `index` (i64) of `base` to shared byte `dstByte`; `srcBytes` (when
  /// set) zero-fills the rest.
  void copyAsync(int64_t bytes, Value dstByte, Value base, Value index,
                 Value srcBytes = Value());
  /// KernelShape::groupInputScales: the byte offset of the block's token
  /// scales in a slot whose weight region starts at `weightsAt`.
  Value inputScalesAt(Value weightsAt) {
    return arith::AddIOp::create(
        b, weightsAt,
        c32(coop.weightBytes +
            coop.groupCopies * (coop.scaleBytes + coop.zeroBytes)));
  }
  /// l2_prefetch: asks L2 for the weights of the CTA's iteration `local`
  /// (i32, from its first iteration `first`; nothing past its last): one
  /// cp.async.bulk.prefetch.L2 per k-tile of the block's n-tiles
  /// (cooperative copies) or of the warp's n-tile, from as many threads —
  /// or, `oneThread` (the warp-specialized producer's one copying thread),
  /// every one from this thread.
  void prefetchWeightsL2(Value first, Value local, bool oneThread = false);
  /// The prefetch of chunk `who` (i32) of iteration `local`: nothing where
  /// `who` is not a chunk or `local` past the CTA's last iteration.
  void prefetchWeightChunkL2(Value first, Value local, Value who);
  /// l2_prefetch with the activations by tensor copy (tma = [a], not
  /// gathered): asks L2 for this CTA's box of iteration `local`'s
  /// activations (cp.async.bulk.prefetch.tensor through the input map;
  /// nothing past the CTA's last iteration). From the thread that issues
  /// the tensor copies.
  void prefetchActivationsL2(Value first, Value local);
  /// tma = [a]: the coordinates of iteration `iter`'s activation box, as
  /// its tensor copy and its L2 prefetch read it (the first k-tile in the
  /// map's 2-byte elements, this CTA's first row), and with multicast_a
  /// this CTA's first row within the block (else null).
  struct ActivationBox {
    Value col, row, shareRow;
  };
  ActivationBox activationBox(Value iter);
  /// Appends to `s` the `n` i32 words at shared address `addr` (one scalar
  /// or vector load aligned to `alignment` bytes).
  void pushWords(Value addr, int64_t n, unsigned alignment, Stage &s);
  /// Shared-memory address (ptr<3>) of byte `byte` (i32).
  Value smemAt(Value byte) {
    return LLVM::GEPOp::create(b, smem.getType(), i8, smem, ValueRange{byte});
  }
  /// The 32-bit shared address `addr` (i32: smemAddr + offset) as a
  /// pointer of address space `space`: 3 (shared::cta) or 7 (shared::cluster,
  /// where TMA and bulk copies write; a shared::cta address of this CTA is
  /// one). An int-to-pointer of the 32-bit address keeps the loops' live
  /// values 32-bit, as the kernels' addresses were before they used NVVM
  /// ops: a GEP off the 64-bit shared base (or an addrspacecast, two cvta)
  /// made the 128-token warp-specialized consumer spill under ptxas.
  Value sharedPtr(Value addr, unsigned space) {
    return LLVM::IntToPtrOp::create(
        b, LLVM::LLVMPointerType::get(b.getContext(), space), addr);
  }
  /// Byte `byte` (i32) of the dynamic shared memory as this CTA's
  /// shared::cluster address (ptr<7>).
  Value clusterSmemAt(Value byte) {
    return sharedPtr(arith::AddIOp::create(b, smemAddr, byte), 7);
  }
  /// Cooperative slots: the byte offsets (i32) of slot `slot` and of its
  /// weight region.
  std::pair<Value, Value> slotRegions(Value slot) {
    Value slotBase = arith::MulIOp::create(b, slot, c32(coop.total()));
    return {slotBase,
            arith::AddIOp::create(b, slotBase, c32(coop.activationBytes))};
  }
  /// The byte offset of group copy `gi` (i32) in a slot whose weight region
  /// starts at `weightsAt`.
  Value groupCopyAt(Value weightsAt, Value gi) {
    return arith::AddIOp::create(
        b, weightsAt,
        arith::AddIOp::create(
            b, c32(coop.weightBytes),
            arith::MulIOp::create(b, gi,
                                  c32(coop.scaleBytes + coop.zeroBytes))));
  }
  /// k-tile `t` (i32) clamped to the last one unless K is exact: past the
  /// end the weights are real (finite) ones and the activations zero, so
  /// the MMAs add nothing.
  Value clampedTile(Value t) {
    return exactK ? t : Value(arith::MinSIOp::create(b, t, c32(tiles - 1)));
  }
  /// The k-tile of this warp's k-tile slot `u` (i32) of iteration `iter`
  /// (kernels whose warps copy their own tiles), unclamped.
  Value warpKTile(Value iter, Value u) {
    return arith::AddIOp::create(
        b, arith::MulIOp::create(b, iter, c32(tilesPerIter)),
        arith::AddIOp::create(
            b, arith::MulIOp::create(b, warpK, c32(tile.kTilesPerWarp)), u));
  }
  /// The word (i64) of the prepared weights where k-tile `tc` of `nTiles`
  /// n-tiles from n-tile `nTiles x group` (i32) begins: they are contiguous.
  Value weightWord(Value tc, Value group, int64_t nTiles) {
    const unsigned bits = spec.weight.type.bits;
    return arith::AddIOp::create(
        b, arith::MulIOp::create(b, ext64(tc), c64(spec.np * bits / 2)),
        arith::MulIOp::create(b, ext64(group), c64(nTiles * 32 * bits)));
  }
  /// Bytes (i32, 0..16) of the 8 activation columns from column `col` that
  /// lie inside K: 16 with exact K.
  /// (8-bit activations: of the 16 columns from `col`; 4-bit: of the 32,
  /// K being a multiple of 32 there.)
  Value columnBytes(Value col) {
    if (exactK)
      return c32(16);
    const int64_t perChunk = act4 ? 32 : act8 ? 16 : 8;
    Value cols = arith::MaxSIOp::create(
        b, c32(0),
        arith::MinSIOp::create(b, c32(perChunk),
                               arith::SubIOp::create(b, c32(spec.kAct), col)));
    if (act4)
      return arith::ShRUIOp::create(b, cols, c32(1));
    return act8 ? cols : Value(arith::MulIOp::create(b, cols, c32(2)));
  }
  /// Which of an iteration's copies issueCopies makes: all, only the
  /// layer's constants (weights, scales, zero points: what no kernel before
  /// this one on the stream writes) or only the activations.
  enum class CopyPart { All, Constants, Inputs };
  CopyPart copyPart = CopyPart::All;
  bool copiesConstants() const { return copyPart != CopyPart::Inputs; }
  bool copiesInputs() const { return copyPart != CopyPart::Constants; }
  /// Programmatic dependent launch: the cp.async pipelines copy their
  /// prologue's constants before griddepcontrol.wait (the warp-specialized
  /// ones: the producers their first S fills' constants, the consumers wait
  /// on entry to their loop; the TMA kernels wait on entry).
  /// (Not MoE kernels: their weights depend on the routing, written by
  /// the kernel before them.)
  bool prefetchesBeforeWait() const {
    return spec.gridDependency && !tile.tmaActivations && !tile.tmaWeights &&
           !spec.isMoe();
  }
  /// griddepcontrol.wait (the kernels before this one on the stream have
  /// completed and their writes are visible), then launch_dependents (the
  /// next kernel may start once every CTA of this one got here).
  void waitForPrerequisites();
  /// The address of a tensor map: a call of `placeholder`, which
  /// humming-kernel-params turns into the kernel's by-value parameter.
  Value tensorMapAddress(StringRef placeholder);
  /// The activations' tensor map (tma = [a]): the parameter after M.
  Value inputMapAddress() { return tensorMapAddress(kInputMapPlaceholder); }
  /// The weights' tensor map (KernelShape::weightMap): the parameter after
  /// the activations'.
  Value weightMapAddress() { return tensorMapAddress(kWeightMapPlaceholder); }
  /// Shared address (ptr<3>) of slot `slot`'s full (0) or empty (1)
  /// mbarrier.
  Value mbarrierAt(Value slot, int64_t which);
  /// Waits for the phase of parity `parity` (i32) of mbarrier `bar` to
  /// complete (a loop of mbarrier.try_wait.parity).
  void mbarrierWait(Value bar, Value parity);
  /// One arrival on mbarrier `bar`.
  void mbarrierArrive(Value bar);
  /// fence.proxy.async.shared::cta: this thread's generic-proxy writes to
  /// shared memory (its landed cp.async copies) are ordered before later
  /// async-proxy accesses (wgmma operand reads, TMA).
  void fenceProxyAsyncShared() {
    NVVM::FenceProxyOp::create(
        b, NVVM::ProxyKind::async_shared,
        NVVM::SharedSpaceAttr::get(b.getContext(),
                                   NVVM::SharedSpace::shared_cta));
  }
  /// A bulk copy of `bytes` from global `src` (ptr<1>) to shared::cluster
  /// `dst` (ptr<7>) whose completion counts on mbarrier `bar`.
  void bulkCopy(Value dst, Value src, int64_t bytes, Value bar);
  void bulkCopy(Value dst, Value src, Value bytes, Value bar);
  /// Whether the last block of columns is partial: the padded N is a
  /// multiple of 64 but not of block_n (the K-major tiles with every copy
  /// by TMA: layout::partialColumnBlocks). Its n-tiles past N are never
  /// stored; their weights and per-group constants are not copied (their
  /// wgmmas run on whatever the slot held), or with weight_map the weights
  /// arrive as zeros.
  bool partialBlocks() const { return spec.np % tile.blockN() != 0; }
  /// `bytes` of the block's `warps_n` n-tiles scaled to those inside the
  /// padded N (blockTiles; `bytes` itself where every block is whole).
  Value blockShare(int64_t bytes) {
    if (!partialBlocks())
      return c32(bytes);
    return arith::DivUIOp::create(
        b, arith::MulIOp::create(b, blockTiles, c32(bytes)),
        c32(tile.warpsN));
  }
  /// Byte offset of the mbarriers: after the slots, or after the cluster
  /// workspace where that is larger.
  int64_t mbarrierOffset() const {
    return std::max(tile.stages * coop.total(), tile.workspaceFloats() * 4);
  }
  /// Every byte of a fill arrives by TMA (layout::ws::bulkFills).
  bool bulkFills() const {
    return ::humming::layout::ws::bulkFills(tile, coop.scaleBytes,
                                            coop.zeroBytes);
  }
  /// The cp.async copies of a fill arrive on its full barrier themselves
  /// (layout::ws::trackedFills).
  bool trackedFills() const {
    return ::humming::layout::ws::trackedFills(tile, coop.scaleBytes,
                                               coop.zeroBytes);
  }
  /// Emits `body` under an scf.if on the first copying thread (copyTid ==
  /// 0): the one that issues the TMA copies.
  void onFirstCopier(function_ref<void()> body);

  // ---- Mixture of experts (PreparedRouting.cpp) ------------------------
  /// MoE kernels (spec.isMoe()): reads this block's expert and rows from
  /// the routing tensors into the row table (shared memory from
  /// layout::moeRowTableOffset), writes zeros to the rows of an indexed
  /// block whose expert is not on this rank (outside 0 .. E - 1, vLLM's
  /// -1), offsets the weight-side parameters to the expert and returns the
  /// scf.if under which the block computes (it has rows and its expert);
  /// the builder is left inside it. Null for dense kernels.
  scf::IfOp routeBlock();
  /// What a block's routing found: its expert (i32, uniform; outside 0 ..
  /// E - 1: none here) and, for block row `local` (i32 < block_m), that
  /// row's id (the output row) and whether it holds a token (i1).
  struct BlockRouting {
    Value expert;
    std::function<std::pair<Value, Value>(Value)> rowOf;
  };
  /// indexed (vLLM's sorted_token_ids / expert_ids, block_size a launch
  /// parameter), contiguous (per-expert row offsets: warp 0 scans them for
  /// the expert whose blocks hold this one) and grouped_masked (E x
  /// max_tokens rows, per-expert counts).
  BlockRouting routeIndexed();
  BlockRouting routeContiguous();
  BlockRouting routeGroupedMasked();
  /// The row table (each row's id, -1 where it holds no token), published
  /// by a barrier that also reduces whether the block has a row (returned,
  /// i1) and, moeTransposed, whether rows 8-15 do (highRows).
  Value writeRowTable(const BlockRouting &routing);
  /// Indexed routing: zeros into the rows of a block that has some but
  /// whose expert is not on this rank (one CTA along K writes them).
  void zeroRowsOffRank(Value any, Value expertOk);
  /// The expert's weights, scales, zero points, global scale and bias.
  void shiftToExpert(Value expert);
  /// The activation row (i32) of block row `local` (i32, 0 .. block_m - 1)
  /// and whether that row holds a token (i1). MoE rows that hold none read
  /// as row 0; dense ones are bidY x block_m + local, which M bounds.
  std::pair<Value, Value> sourceRow(Value local);
  /// The output row (i32) of block row `local` and whether it is written.
  /// (moeTransposed, inside a pass: block row local + rowShift, rows 8-15
  /// of the tile never.)
  std::pair<Value, Value> destRow(Value local);
  /// The activation row of output row `row` (a destRow): the row itself,
  /// or for indexed MoE the token, row / top_k.
  Value sourceOf(Value row);
  /// The router weight (f32) that multiplies output row `row` (a valid
  /// destRow), or null where the kernel has none.
  Value routerWeight(Value row);

  // ---- Dequantization (PreparedDequant.cpp) ----------------------------
  /// The per-column factors of one group copy (a lane's eight columns of an
  /// n-tile), unpacked from the slot's words.
  struct GroupData {
    /// Per column j: magic + zero point and the group scale (both lanes).
    /// (8-bit integer codes with bf16 activations, wideIntInBf16: integer
    /// zero points as z - 128, float ones as they are.)
    SmallVector<Value> zeroVec, scaleVec;
    /// scale_after_mma: the f32 scales of the lane's C columns 8 j + 2 q + e
    /// (index 2 j + e); with weightsAsA those of its B columns 8 j + g
    /// (index j: the rows of its D fragments), which loadColumnScales
    /// reads from `columnScaleAt` (ptr<3>) after the MMAs.
    SmallVector<Value> columnScale;
    Value columnScaleAt;
  };
  /// Half `half` of a word of 16-bit scales (the weight schema's scale
  /// type) as f32.
  Value scaleHalfAsF32(Value word, int64_t half);
  /// weightsAsA: loads the lane's 8 column scales from g.columnScaleAt
  /// into g.columnScale. Loaded where the FMAs use them instead of with
  /// the rest of the slot: held across the iteration's MMAs, 8 more live
  /// registers made ptxas spill 12 bytes in the 4096^2 W4A16 g128 M <= 8
  /// kernel (the slot is not refilled before the next iteration).
  void loadColumnScales(GroupData &g);
  /// Constants the dequantization shares over an iteration.
  void beginDequant();
  /// Unpacks a group copy's words (consumed through `next`) into `g`; with
  /// `scales` false only its zero points (the caller took the scales).
  void readGroup(function_ref<Value()> next, GroupData &g, bool scales = true);
  /// The dequantized pair q (0..15: b0, b1 of n8 sub-tile q / 2) of a lane's
  /// words of one k-tile and n-tile, in the activation type (f16x2 or, for
  /// bf16, i32).
  /// `plus` (integer weights without group scales only; exact where the
  /// sum is an integer below 2048) is added in the same instruction where
  /// the zero point is subtracted.
  Value dequantPair(ArrayRef<SmallVector<Value>> planeWords, const GroupData &g,
                    int q, double plus = 0);
  /// 8-bit activations: the register of four 8-bit weights in the
  /// activation type made of pairs q and q + 1 (q even) of a lane's words
  /// of one k-tile and n-tile: bytes [q.e0, q+1.e0, q.e1, q+1.e1], which
  /// the 8-bit prepared rows (layout::preparedRow) make k rows 4 quad ..+4
  /// of one k-tile in order — the wgmma k32 A register and the mma.sync
  /// m16n8k32 B register alike. The 8-bit plane word as it is where the
  /// weights have that type (eightBitWordsAsStored; with si8 activations
  /// and 8-bit integer codes without zero points their sign bits flipped),
  /// else the pairs dequantized in f16 (exact: PreparedLayout::supports)
  /// and converted.
  Value eightBitWord(ArrayRef<SmallVector<Value>> planeWords,
                     const GroupData &g, int q);
  /// si8 and si4 activations: s8 / s4 MMAs with s32 sums (exact),
  /// converted to f32 when each iteration's sums are folded into the
  /// running ones.
  bool integerSums() const {
    return spec.input.type == ::humming::ScalarType::sint(8) ||
           spec.input.type == ::humming::ScalarType::sint(4);
  }
  /// si8 activations over 8-bit integer weights without zero points (si8,
  /// or ui8 with its implicit zero point 128): the prepared codes are
  /// value + 128 either way, an xor away from the s8 registers.
  bool eightBitIntCodes() const {
    return integerSums() && spec.weight.type.isInt() &&
           spec.weight.type.bits == 8 &&
           spec.weight.zeroPoint == ::humming::ZeroPointKind::None;
  }
  /// The 8-bit plane words are the MMA operands themselves (at most an xor
  /// away).
  bool eightBitWordsAsStored() const {
    return act8 &&
           (spec.weight.type == spec.input.type || eightBitIntCodes());
  }
  /// The 16-bit bits (i32, low half) of a scale stored with type `t`, given
  /// the i32 word that holds it and its position.
  Value scaleBits(Value word, int64_t slot);
  /// Packs a 16-bit value (low bits of an i32) into both lanes.
  Value splat16(Value bits16) {
    Value lo = arith::AndIOp::create(b, bits16, c32(0xFFFF));
    return arith::OrIOp::create(b, lo, arith::ShLIOp::create(b, lo, c32(16)));
  }
  Value asAct2(Value i32v) { return LLVM::BitcastOp::create(b, act2, i32v); }
  /// The f32 `v` rounded to the activation type, its 16 bits in the low
  /// half of an i32 (for splat16).
  Value actBits(Value v) {
    Value h = arith::TruncFOp::create(b, act, v);
    return arith::ExtUIOp::create(b, i32, arith::BitcastOp::create(b, i16, h));
  }
  /// 8-bit integer codes with bf16 activations: bf16's 7 mantissa bits
  /// hold the code's low seven bits with the magic number 128; its bit 7
  /// picks what one packed subtraction takes off (256 where clear, 128
  /// where set: code - 128 exactly), two lop3 and a subtraction per pair.
  bool wideIntInBf16() const {
    return bf16 && spec.weight.type.isInt() && spec.weight.type.bits == 8;
  }
  Value asI32(Value v) { return LLVM::BitcastOp::create(b, i32, v); }
  /// `v` in both lanes of the activation type.
  Value splatConst(double v);

  // ---- Epilogue pieces (PreparedEpilogue.cpp) --------------------------
  /// The output column factors: `factor` (the column's channel scale, if
  /// loaded) times the global scale, and the bias of clamped column `cc`.
  void outputFactors(Value &factor, Value &bias, Value cc);
  /// The 16 output bits (i16) of f32 sum `v`: times `factor`, plus `bias`
  /// (either may be null), converted to `outType`.
  /// `post` (MoE router weights) multiplies the result after the bias.
  Value outputBits(Value v, Value factor, Value bias, Type outType,
                   Value post = Value());
  /// 8-bit activations: the f32 scale of token `token` (i32; clamped to the
  /// last row, so rows past M read a real one): per token its own, static
  /// the one (loaded once); null for 16-bit activations.
  Value activationScale(Value token);
  /// This CTA's output tile (block row bidY, column bidX): its arrival
  /// counter and its rows of the workspace.
  Value outputTile();
  /// The workspace's f32 slot of split `z`, sum `index` of thread `thread`
  /// of this CTA's output tile: [tile][split][sum][thread] with `sums` per
  /// thread and `threads` threads, so a warp's accesses are coalesced. With
  /// `unit` (e.g. vector<4xf32>) the slots are units of that type: `sums`
  /// and `index` count units.
  Value partialAt(Value z, Value index, int64_t sums, int64_t threads,
                  Value thread, Type unit = {});
  /// Thread 0's arrival on output tile `tileId`'s counter (acq_rel, device
  /// scope): true for the last of the split_k CTAs, which also resets the
  /// counter for the next launch.
  Value arriveOnTileCounter(Value tileId);
  bool clustered() const { return split.ctas > 1 && split.cluster; }
  /// barrier.cluster arrive (release) and wait (acquire): every thread of
  /// every CTA of the cluster.
  void clusterBarrier();
  /// Stores 4-byte `v` (f32 or i32) at byte `byte` (i32) of this CTA's
  /// shared memory.
  void storeSharedWord(Value byte, Value v);
  /// The f32 at byte `byte` (i32) of the shared memory of the cluster's
  /// CTA `rank` (mapa, then a shared::cluster load).
  Value loadClusterF32(Value byte, Value rank);

  const GemmKernelSpec &spec;
  const PreparedTile &tile;
  const CtaSplit &split;
  /// The dynamic shared memory (ptr<3>): the pipeline, then the split-K
  /// partial sums.
  Value smem;
  /// Split-K across CTAs: the workspace parameter's fp32 partial sums and
  /// arrival counters (ptr<1>; null without the split).
  Value partials, arrivals;
  std::vector<::humming::layout::Plane> planes;
  /// The few instructions NVVM has no op for.
  PtxBuilder ptx;
  bool bf16;
  /// 8-bit activations (e4m3, e5m2, si8): k32 steps over two k-tiles
  /// (wgmma, or mma.sync m16n8k32), weights taken as they are or
  /// dequantized to f16 and converted (eightBitWord).
  bool act8 = false;
  /// si4 activations (mma.sync m16n8k64 s4 over four k-tiles, 4-bit
  /// integer weights taken as s4 codes).
  bool act4 = false;
  Type act;
  VectorType act2;
  int64_t mt, tiles, tilesPerIter, iterations, ctaIterations;
  bool exactK = false;
  bool postScale = false, lowRowsOnly = false;
  /// mma.sync tiles of at most 8 tokens with 16-bit activations and f32
  /// sums: the transposed product out^T = W X^T, the dequantized weights
  /// the m16n8k16 A operand (four registers: the b0 / b1 of two n8
  /// sub-tiles), the tokens its n8 B operand (a0 / a2 of the activation
  /// fragment) — one MMA per 16 columns instead of one per 8, and the
  /// scale_after_mma factors per B column (MmaSyncEmitter::compute).
  bool weightsAsA = false;
  /// MoE mma.sync kernels for one token per expert (the range t <= 1, 16-bit
  /// activations, f32 sums, not batch-invariant, at least
  /// kMoeTransposedMinDepth of K per CTA): the transposed product of
  /// weightsAsA over tokens 0..7 of the 16-row block, in passes of eight
  /// rows — a second pass over K for rows 8-15 only where the block has a
  /// token there (an expert may get more rows than the tile was chosen for:
  /// a routing block holds any of its rows).
  bool moeTransposed = false;
  /// moeTransposed: the block rows of this pass (0 or 8; null outside the
  /// passes), and whether any of rows 8-15 holds a token (writeRowTable).
  Value rowShift, highRows;
  bool perKScales, groupPerIter, loopChannelScales = false;
  /// With loopChannelScales: this lane's eight column scales (both lanes of
  /// an act2), loaded once before the loop.
  SmallVector<Value> channelScaleVec;
  Value constZero;
  /// Cooperative kernels: the slot layout.
  ::humming::layout::CooperativeSlot coop;
  /// 32-bit shared address of the dynamic shared memory (set by the
  /// generations that use it: wgmma's matrix descriptors, the mbarriers,
  /// TMA and bulk-copy destinations).
  Value smemAddr;
  // Thread coordinates (warpMi: the warp's row along M in a cooperative
  // block).
  Value tid, lane, quad, grp, warpN, warpK, warpMi, nTile, m;
  /// The warp's first row in the block (warpMi x warp_m): block row
  /// rowBase + r is token bidY x block_m + rowBase + r of a dense kernel,
  /// the row table's entry of a MoE one (sourceRow / destRow).
  Value rowBase;
  /// The threads that share a cooperative slot's copies: this thread's
  /// index among them (the block's thread index, or the producer
  /// warpgroup's with warp_specialized).
  Value copyTid;
  Value bidX, bidY, bidZ;
  /// persistent: the output tiles of the launch (blocks of columns x
  /// blocks of rows of M; i32).
  Value tilesX, tilesY, tilesTotal;
  /// The warp's first n-tile in its block (placeWarps).
  Value nTileInBlock;
  /// partialBlocks: this block's n-tiles inside the padded N (warps_n but
  /// in the last block of columns).
  Value blockTiles;
  Value global;
  /// Static activation scaling: the one scale (set on first use).
  Value staticInputScale;
  /// Whether the kernel has its griddepcontrol.wait (checked after emit()).
  bool waited = false;
};

/// The emitters of the MMA generations (MmaSyncKernel.cpp,
/// WgmmaKernel.cpp).
std::unique_ptr<PreparedEmitter>
createMmaSyncEmitter(const PreparedKernelArgs &args);
std::unique_ptr<PreparedEmitter>
createWgmmaEmitter(const PreparedKernelArgs &args);

} // namespace mlir::humming

#endif // HUMMING_LIB_CONVERSION_HUMMINGTONVVM_PREPAREDEMITTER_H
