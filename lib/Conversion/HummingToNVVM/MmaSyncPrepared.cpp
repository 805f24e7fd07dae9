//===- MmaSyncPrepared.cpp - mma.sync GEMM over prepared weights ----------===//
//
// The mma_sync kernel for weights in the prepared layout of
// Humming/Quant/PreparedLayout.h, parametrised by a tile configuration:
//
// * Each warp computes warp_m x 64 outputs (warp_m / 16 MMA rows times eight
//   m16n8k16 sub-tiles) over warp_k of every block_k chunk of K; block_n / 64
//   warps sit side by side along N and block_k / warp_k warp groups split K
//   inside the block, adding their partial sums through shared memory.
// * Every operand goes through a cp.async pipeline of `stages` slots in
//   dynamic shared memory, copies issued `stages - 1` iterations ahead. A
//   lane copies (and mostly reads back) its own 16-byte chunks, so the
//   pipeline needs cp.async.wait_group and one warp barrier (for the
//   activation tiles ldmatrix reads across lanes, and 8-bit weight planes,
//   which the warp copies in global order so every 32-byte sector comes in
//   one copy), no block barrier: its
//   B fragments of a 16 x 64 weight tile (one chunk per bit plane word
//   group: 16 bytes for 4-bit weights), one 16-byte piece of a row-major
//   16 x 16 activation tile per 16 rows (zero-filled past M and K, read
//   back with ldmatrix.x4), and the scales / zero points of its eight
//   columns (one chunk per group).
// * With share_activations (one warp row, no block_copies) the warps along
//   N of each K group split that group's activation tiles among them: warp
//   w copies tiles j = w + warpsN r into its own region (the chunks the
//   other warps keep for those tiles stay empty), every warp ldmatrix-reads
//   each tile from its copier's region, and the group's named barrier
//   (bar.sync 1 + group, 32 x warpsN threads) replaces the warp barrier:
//   A comes from L2 once per K group instead of once per warp, without the
//   whole block's lockstep. Weights and scales stay per warp.
// * Dequantization works on pairs: one shift and mask place both codes of a
//   pair in the two 16-bit lanes of a register; integers become (code -
//   zero) by the magic-number trick (codes OR-ed into the mantissa of 1024
//   or 128, one packed subtraction), floats by moving their exponent and
//   mantissa into place and one packed multiply by 2^(bias difference);
//   then one packed multiply by the group scale (with f16 accumulation also
//   by the channel scale, so the f16 sums stay in range).
// * With several warp rows along M, or block_copies (tile.cooperative():
//   the large-M kernels) the block instead copies each stage's activation
//   tile (block_m rows, the 16-byte halves of a row swapped by bit 2 of the
//   row so ldmatrix is free of bank conflicts), its weight tiles and its
//   scales / zero points verbatim, together — every K group's k-tiles of
//   the iteration — and every warp reads its rows, columns and k-tiles from
//   them: every byte comes from L2 once per block instead of once per warp.
//   One block barrier per iteration orders the copies of a slot after every
//   warp's reads of it.
// * Where K is exact (every k-tile of every iteration real, no column past
//   K: the common case) the loop copies without clamps or column checks and
//   skips the copies of the iterations past its end (empty cp.async
//   groups); otherwise those copies re-read the last k-tile with zero-filled
//   activations, which add nothing.
// * After the loop every warp group leaves its sums in shared memory and
//   adds, in group order, the output units it owns (u % kSplit == g), then
//   stores them: the reduction and the epilogue are spread over the block.
// * split_k CTAs may share a tile's K: each stores its sums to the module's
//   workspace and the last to arrive adds them in split order. The wgmma
//   kernels instead form a thread block cluster of their split_k CTAs and
//   add through distributed shared memory (clusterReduce): no workspace,
//   any M.
// * mma = wgmma (sm_90a) reuses the copies and the dequantization for the
//   transposed product out^T = W X^T: warp w of a warpgroup dequantizes the
//   A fragment of rows 16 w ..+16 of each of its group's 64-column n-tiles
//   (its pairs 4 w ..+4 of the layout), the activations are wgmma's B
//   operand in the slot (no-swizzle K-major core matrices), and the
//   epilogue stores the transposed D fragments (emitWgmmaLoop and below).
//
//===----------------------------------------------------------------------===//

#include "EmitterBase.h"
#include "MmaSync.h"

#include "Humming/Conversion/Passes.h"
#include "Humming/Quant/PreparedLayout.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <cmath>

using namespace mlir;
using namespace mlir::humming;
namespace hq = ::humming;
namespace L = ::humming::layout;

namespace {

class PreparedEmitter : EmitterBase {
public:
  PreparedEmitter(ImplicitLocOpBuilder &b, const GemmKernelSpec &spec,
                  const PreparedTile &tile, ArrayRef<Value> params,
                  Value smem, const CtaSplit &split, Value partials,
                  Value arrivals)
      : EmitterBase(b, params), spec(spec), tile(tile), split(split),
        smem(smem), partials(partials), arrivals(arrivals),
        planes(L::planes(spec.weight.type.bits)) {
    chunks = L::stageChunks(spec.weight, tile);
    bf16 = spec.input.type == hq::ScalarType::bf16();
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
    // k-tiles of an iteration in one group). Tiles serving at most 8 tokens leave the C
    // rows g + 8 of their one MMA row zero: those need no scaling.
    postScale = tile.scaleAfterMma;
    lowRowsOnly = mt == 1 && split.maxM > 0 && split.maxM <= 8;
  }

  void emit();
  /// Whether the emitted kernel waits for its prerequisites
  /// (griddepcontrol.wait): every kernel with spec.gridDependency must.
  bool waitsForPrerequisites() const { return waited; }
  /// The cp.async pipeline, the main loop and the epilogue from this CTA's
  /// first iteration `first`.
  void emitLoop(Value first);
  /// wgmma: the same pipeline with copies S - 2 iterations ahead (below).
  void emitWgmmaLoop(Value first);
  /// wgmma, warp_specialized: the producer warpgroup's copy loop and the
  /// consumer warpgroups' loop, synchronised per slot by full / empty
  /// mbarriers.
  void emitWarpSpecializedLoop(Value first);
  /// The zeroed f32 sums a wgmma thread starts from.
  SmallVector<Value> wgmmaZeroSums();
  /// Inline-PTX mbarrier helpers (shared::cta byte address `bar`).
  void mbarrierWait(Value bar, Value parity);
  void mbarrierArrive(Value bar);
  /// Shared byte address of slot `slot`'s full (0) or empty (1) mbarrier.
  Value mbarrierAt(Value slot, int64_t which);
  /// The address of the activations' tensor map (tma = [a]): a call of the
  /// placeholder kInputMapPlaceholder, which humming-kernel-params turns
  /// into the kernel's by-value parameter after M.
  Value inputMapAddress();
  /// The cp.async pipeline loop over the CTA's iterations: the copies of
  /// iterations 0 .. S - lag - 1 up front, then per iteration the wait for
  /// its group, `publish` (the barrier), and `step(it, accs, issueAhead)`,
  /// which calls issueAhead() where the copies of iteration it + S - lag
  /// (into the slot read `lag` iterations ago) are to be issued. `init`
  /// runs after the prologue and gives the loop's initial values; the
  /// loop's results are returned.
  SmallVector<Value> pipelineLoop(
      Value first, int64_t lag, function_ref<SmallVector<Value>()> init,
      function_ref<void()> publish,
      function_ref<SmallVector<Value>(Value, ArrayRef<Value>,
                                      function_ref<void()>)>
          step);
  /// Inline PTX, by default with side effects (kept in order with the
  /// others); pure arithmetic passes sideEffects = false.
  LLVM::InlineAsmOp inlineAsm(TypeRange results, ValueRange operands,
                              StringRef text, StringRef constraints,
                              bool sideEffects = true);
  /// (x & mask) | orValue as one lop3: with both constants immediate
  /// ptxas emits two LOP3s (one immediate each); with orValue in a
  /// register it is one.
  Value maskOr(Value x, uint32_t mask, Value orValue);
  /// An inline PTX statement without operands.
  void asmStatement(StringRef text);

private:
  /// The words of one iteration read back from its pipeline slot, in copy
  /// order.
  using Stage = SmallVector<Value>;
  /// One global -> shared copy of an iteration: `words` i32 at word `index`
  /// of `base` into words [offset, offset + words) of the lane's 16-byte
  /// `chunk` of the stage. `srcBytes` (when set) copies only that many
  /// bytes and zero-fills the rest. An `ldmatrix` chunk holds a 16 x 16
  /// activation tile, row-major, read back with ldmatrix.x4.
  struct Copy {
    Value base, index;
    int64_t words;
    Value srcBytes;
    int64_t chunk, offset;
    bool ldmatrix = false;
    /// The first of the two chunks of an 8-bit plane, copied warp-wide in
    /// global order (lane i of copy j: bytes 512 j + 16 i of the plane's
    /// kilobyte): lane L reads its 32 bytes back from chunk j = L / 16 at
    /// byte 32 (L % 16), written by lanes 2 (L % 16) and 2 (L % 16) + 1.
    bool wideFirst = false;
    /// Group scales for scale_after_mma: lane L copies the 16 bytes of
    /// prepared columns 8 (L % 8) ..+8 and reads back the 32 bytes of
    /// columns 16 q ..+16 (its C columns 8 j + 2 q, + 1), which lanes 2 q and
    /// 2 q + 1 copied.
    bool columnScales = false;
    /// share_activations: the activation tile j (= k-tile slot u x warp_m /
    /// 16 + row block i) this chunk holds, in the region of warp j %
    /// warpsN of the K group (-1: not an activation chunk). `shapeOnly`
    /// chunks are never copied by this warp: they only reserve the chunk
    /// (and tell readSlot its shape); the copying warp's copy has the
    /// runtime `dstChunk` instead and is no part of the shape.
    int64_t activation = -1;
    bool shapeOnly = false;
    Value dstChunk = Value();
  };

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
  /// The copies of iteration `iter` (k-tiles clamped to K unless K is
  /// exact), in the order
  /// compute() consumes their words.
  SmallVector<Copy> copiesFor(Value iter);
  /// The copy (chunk unset) of this lane's 16 bytes of the 16 x 16
  /// activation tile of k-tile `t`, rows m0 + rowOffset ..+16.
  Copy activationCopy(Value t, Value rowOffset);
  /// The lane's own copies of iteration `iter` into slot `slot` (kernels
  /// whose warps copy their own tiles).
  void issueWarpCopies(Value iter, Value slot);
  /// Cooperative kernels: the block's copies of iteration `iter` into slot
  /// `slot`, and this warp's words of a slot in the order compute()
  /// consumes them.
  void issueCooperativeCopies(Value iter, Value slot);
  Stage readCooperativeSlot(Value slot);
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
            arith::MulIOp::create(b, gi, c32(coop.scaleBytes + coop.zeroBytes))));
  }
  /// wgmma: this warp's words of a slot in the order computeWgmma consumes
  /// them (per k-tile and n-tile: its pairs' words, then its columns' group
  /// data in the shape readGroup expects).
  Stage readWgmmaSlot(Value slot);
  /// `count` 16-byte copies shared out among the block's threads: `copy(c)`
  /// emits chunk c (i32).
  void forEachChunk(int64_t count, function_ref<void(Value)> copy);
  /// One 16-byte cp.async (.cg) of word `index` (i64) of `base` to shared
  /// byte `dstByte` (i32); `srcBytes` (when set) zero-fills the rest.
  void copy16(Value dstByte, Value base, Value index, Value srcBytes = Value());
  /// Shared-memory address (ptr<3>) of byte `byte` (i32).
  Value smemAt(Value byte) {
    return LLVM::GEPOp::create(b, smem.getType(), i8, smem, ValueRange{byte});
  }
  /// Appends to `s` the `n` i32 words at shared address `addr` (one scalar
  /// or vector load aligned to `alignment` bytes).
  void pushWords(Value addr, int64_t n, unsigned alignment, Stage &s);
  /// Appends to `s` the m16n8k16 A fragment a0..a3 that ldmatrix.x4 reads
  /// from the rows this lane's `addr` points at.
  void pushLdmatrix(Value addr, Stage &s);
  /// The row of a 16-row activation tile whose address this lane gives
  /// ldmatrix.x4: lane % 8 + 8 ((lane / 8) % 2) (lanes 16-31 repeat the rows
  /// for the second 8 columns).
  Value ldmatrixRow() {
    return arith::AddIOp::create(
        b, arith::AndIOp::create(b, lane, c32(7)),
        arith::MulIOp::create(
            b, arith::AndIOp::create(b, arith::ShRUIOp::create(b, lane, c32(3)),
                                     c32(1)),
            c32(8)));
  }
  /// Issues the copies of iteration `iter` into pipeline slot `slot` (only
  /// where `when`, an i1, holds, if given) and commits them as one cp.async
  /// group (empty where they were skipped: the group count stays uniform);
  /// with `commit` false they join the next group committed.
  void issueCopies(Value iter, Value slot, Value when = Value(),
                   bool commit = true);
  /// Which of an iteration's copies issueCopies makes: all, only the
  /// layer's constants (weights, scales, zero points: what no kernel before
  /// this one on the stream writes) or only the activations.
  enum class CopyPart { All, Constants, Inputs };
  CopyPart copyPart = CopyPart::All;
  /// Whether the kernel has its griddepcontrol.wait (checked after emit()).
  bool waited = false;
  bool copiesConstants() const { return copyPart != CopyPart::Inputs; }
  bool copiesInputs() const { return copyPart != CopyPart::Constants; }
  /// l2_prefetch: asks L2 for the weights of the CTA's iteration `local`
  /// (i32, from its first iteration `first`; nothing past its last): one
  /// cp.async.bulk.prefetch.L2 per k-tile of the block's n-tiles
  /// (cooperative copies) or of the warp's n-tile, from as many threads.
  void prefetchWeightsL2(Value first, Value local);
  /// Programmatic dependent launch: the cp.async pipelines copy their
  /// prologue's constants before griddepcontrol.wait (the warp-specialized
  /// and TMA kernels wait on entry).
  bool prefetchesBeforeWait() const {
    return spec.gridDependency && !tile.warpSpecialized &&
           !tile.tmaActivations && !tile.tmaWeights;
  }
  /// griddepcontrol.wait (the kernels before this one on the stream have
  /// completed and their writes are visible), then launch_dependents (the
  /// next kernel may start once every CTA of this one got here).
  /// Inline PTX with a memory clobber: LLVM's griddepcontrol intrinsics
  /// are IntrNoMem, which would let loads and copies move across the wait.
  void waitForPrerequisites() {
    assert(!waited && "one griddepcontrol.wait per kernel");
    waited = true;
    inlineAsm(TypeRange(), ValueRange(),
              "griddepcontrol.wait;\n\tgriddepcontrol.launch_dependents;",
              "~{memory}");
  }
  /// Bytes (i32, 0..16) of the 8 activation columns from column `col` that
  /// lie inside K: 16 with exact K.
  Value columnBytes(Value col) {
    if (exactK)
      return c32(16);
    return arith::MulIOp::create(
        b,
        arith::MaxSIOp::create(
            b, c32(0),
            arith::MinSIOp::create(
                b, c32(8), arith::SubIOp::create(b, c32(spec.kAct), col))),
        c32(2));
  }
  /// The words of pipeline slot `slot`, in copy order.
  Stage readSlot(Value slot);
  /// The copies of one iteration (their structure only: chunks and sizes).
  SmallVector<Copy> copyShape;
  /// Shared-memory address (ptr<3>) of word `word` of `chunk` of `slot` for
  /// this lane.
  Value slotAddress(Value slot, int64_t chunk, int64_t word);
  /// The same for a runtime chunk (share_activations' copies).
  Value slotAddress(Value slot, Value chunk, int64_t word);
  SmallVector<Value> compute(ArrayRef<Value> accs, ArrayRef<Value> stage);
  /// The per-column factors of one group copy (a lane's eight columns of an
  /// n-tile), unpacked from the slot's words.
  struct GroupData {
    /// Per column j: magic + zero point and the group scale (both lanes).
    SmallVector<Value> zeroVec, scaleVec;
    /// scale_after_mma: the f32 scales of the lane's C columns 8 j + 2 q + e
    /// (index 2 j + e).
    SmallVector<Value> columnScale;
  };
  /// Constants the dequantization shares over an iteration.
  void beginDequant();
  /// Unpacks a group copy's words (consumed through `next`) into `g`.
  void readGroup(function_ref<Value()> next, GroupData &g);
  /// The dequantized pair q (0..15: b0, b1 of n8 sub-tile q / 2) of a lane's
  /// words of one k-tile and n-tile, in the activation type (f16x2 or, for
  /// bf16, i32).
  Value dequantPair(ArrayRef<SmallVector<Value>> planeWords, const GroupData &g,
                    int q);
  Value constZero;

  // ---- sm_90a wgmma (tile.wgmma): the transposed product ---------------
  /// The iteration's wgmmas: per k-tile, the warp's rows of every n-tile's
  /// A operand dequantized in registers (warp w of the group: pairs 4 w
  /// ..+4 of the lane's words), one m64 n(warp_m) k16 wgmma per n-tile
  /// reading the k-tile's activations from the slot, one commit group per
  /// k-tile.
  SmallVector<Value> computeWgmma(ArrayRef<Value> accs, ArrayRef<Value> stage,
                                  Value slot,
                                  function_ref<void()> afterFirst = nullptr);
  /// The A fragment a0..a3 (i32) of warp w for one n-tile: its pairs
  /// 4 w, 4 w + 2, 4 w + 1, 4 w + 3 (the b0 / b1 of n8 sub-tiles 2 w and
  /// 2 w + 1), which readWgmmaSlot left where pairs 0, 2, 1, 3 are.
  SmallVector<Value> wgmmaFragment(ArrayRef<SmallVector<Value>> planeWords,
                                   const GroupData &g);
  /// Inline PTX `text` whose operands are `vals`, each read and rewritten
  /// (tied "+r" / "+f"): orders the registers' other uses around it.
  SmallVector<Value> tiedAsm(StringRef text, ArrayRef<Value> vals);
  /// The shared-memory matrix descriptor of k-tile `su` of slot `slot` for
  /// this warpgroup's tokens (no swizzle, K-major core matrices).
  Value activationDescriptor(Value slot, int64_t su);
  /// After the loop: per n-tile and element the scales, bias, conversion
  /// and the (transposed) store; with a cluster split (split_k) the sums
  /// of the cluster's CTAs are added first (clusterReduce).
  void finishWgmma(ArrayRef<Value> acc);
  /// The store of finishWgmma for `rows` rows of eight tokens per n-tile
  /// and half: row q is jj = jjOf(q), element e of it valueOf(t, half, q,
  /// jj, e).
  void storeWgmma(
      int64_t rows, function_ref<Value(int64_t)> jjOf,
      function_ref<Value(int64_t, int64_t, int64_t, Value, int64_t)> valueOf);
  /// split_k with wgmma: every consumer thread leaves its sums in its CTA's
  /// shared memory; CTA r of the cluster adds, in rank order, every CTA's
  /// sums of its share of the rows of eight tokens and stores them.
  void clusterReduce(ArrayRef<Value> acc);
  /// barrier.cluster arrive (release) and wait (acquire): every thread of
  /// every CTA of the cluster.
  void clusterBarrier();
  /// Emits `body` under an scf.if on the first copying thread (copyTid ==
  /// 0): the one that issues the TMA copies.
  void onFirstCopier(function_ref<void()> body);
  /// st.shared.f32 of `v` at the 32-bit shared address `addr`.
  void storeSharedF32(Value addr, Value v);
  /// The f32 at this CTA's shared address `local` in the shared memory of
  /// the cluster's CTA `rank` (mapa + ld.shared::cluster).
  Value loadClusterF32(Value local, Value rank);
  /// Byte offset of the mbarriers: after the slots, or after the cluster
  /// workspace where that is larger.
  int64_t mbarrierOffset() const {
    return std::max(tile.stages * coop.total(), tile.workspaceFloats() * 4);
  }
  bool clustered() const { return split.ctas > 1 && split.cluster; }
  /// Every byte of a fill arrives by TMA (layout::ws::bulkFills).
  bool bulkFills() const {
    return L::ws::bulkFills(tile, coop.scaleBytes, coop.zeroBytes);
  }
  /// wgmma: the warp's index in its warpgroup, the warpgroup's index along N.
  Value wIn, groupN;
  /// 32-bit shared address of the dynamic shared memory.
  Value smemAddr;
  /// After the loop: the in-block split-K reduction and the epilogue, both
  /// spread over the warp groups (see `owns`).
  void finish(ArrayRef<Value> acc, Value tid);
  /// Whether this warp's group owns output unit `unit` (two accumulators:
  /// one row, two adjacent columns).
  Value owns(int64_t unit);
  /// `body`'s two values where this warp owns `unit`, zeros elsewhere.
  SmallVector<Value> ifOwned(int64_t unit,
                             function_ref<SmallVector<Value>()> body);
  /// The output column factors: `factor` (the column's channel scale, if
  /// loaded) times the global scale, and the bias of clamped column `cc`.
  void outputFactors(Value &factor, Value &bias, Value cc) {
    if (global)
      factor = factor ? arith::MulFOp::create(b, factor, global) : global;
    if (spec.weight.bias)
      bias = loadAsF32(param(hq::abi::ParamBias), ext64(cc), spec.output);
  }
  /// The 16 output bits (i16) of f32 sum `v`: times `factor`, plus `bias`
  /// (either may be null), converted to `outType`.
  Value outputBits(Value v, Value factor, Value bias, Type outType) {
    if (factor)
      v = arith::MulFOp::create(b, v, factor);
    if (bias)
      v = arith::AddFOp::create(b, v, bias);
    return arith::BitcastOp::create(b, i16,
                                    arith::TruncFOp::create(b, outType, v));
  }
  /// Scales, bias, conversion and the store of output unit `unit`.
  void storeUnit(int64_t unit, Value v0, Value v1);
  /// Split-K across CTAs: every CTA of an output tile stores its sums to
  /// the workspace; the last to arrive adds all of them in split order and
  /// runs the epilogue (so the result does not depend on which CTA
  /// finished last).
  void reduceAcrossCtas(ArrayRef<SmallVector<Value>> sums, Value tid);
  /// Thread 0's arrival on output tile `tileId`'s counter (acq_rel, device
  /// scope): true for the last of the split_k CTAs, which also resets the
  /// counter for the next launch.
  Value arriveOnTileCounter(Value tileId);
  /// This CTA's output tile (block row bidY, column bidX): its arrival
  /// counter and its rows of the workspace.
  Value outputTile();
  /// The workspace's f32 slot of split `z`, sum `index` of thread `thread`
  /// of this CTA's output tile: [tile][split][sum][thread] with `sums` per
  /// thread and `threads` threads, so a warp's accesses are coalesced.
  Value partialAt(Value z, Value index, int64_t sums, int64_t threads,
                  Value thread);
  /// The wgmma kernels' split-K through the workspace (workspace_split):
  /// every consumer thread stores its sums, the last CTA to arrive adds
  /// them in split order and stores every row.
  void wgmmaReduceAcrossCtas(ArrayRef<Value> acc);
  /// This thread's column among the threads of one K-split group (warp
  /// row, warp along N, lane): where the CTA split keeps its sums.
  Value groupColumn();
  /// The same through distributed shared memory (cluster_split): every
  /// CTA leaves its units' sums in its shared memory, CTA r adds and
  /// stores the units u with u % split_k = r.
  void reduceInCluster(ArrayRef<SmallVector<Value>> sums);

  /// The 16-bit bits (i32, low half) of a scale stored with type `t`, given
  /// the i32 word that holds it and its position.
  Value scaleBits(Value word, int64_t slot);
  /// Packs a 16-bit value (low bits of an i32) into both lanes.
  Value splat16(Value bits16) {
    Value lo = arith::AndIOp::create(b, bits16, c32(0xFFFF));
    return arith::OrIOp::create(b, lo, arith::ShLIOp::create(b, lo, c32(16)));
  }
  Value asAct2(Value i32v) { return LLVM::BitcastOp::create(b, act2, i32v); }
  Value asI32(Value v) { return LLVM::BitcastOp::create(b, i32, v); }
  Value splatConst(double v) {
    APFloat f(v);
    bool lost;
    f.convert(bf16 ? APFloat::BFloat() : APFloat::IEEEhalf(),
              APFloat::rmNearestTiesToEven, &lost);
    uint32_t bits = uint32_t(f.bitcastToAPInt().getZExtValue());
    return asAct2(c32(int64_t(bits | (bits << 16))));
  }

  const GemmKernelSpec &spec;
  const PreparedTile &tile;
  const CtaSplit &split;
  /// The dynamic shared memory (ptr<3>): the cp.async pipeline, then the
  /// split-K partial sums.
  Value smem;
  /// Split-K across CTAs: the module's fp32 partial sums and arrival
  /// counters (ptr<1>; null without the split).
  Value partials, arrivals;
  std::vector<L::Plane> planes;
  int64_t chunks;
  /// Byte offset of this lane's first chunk of slot 0.
  Value laneBase;
  bool bf16;
  Type act;
  VectorType act2;
  int64_t mt, tiles, tilesPerIter, iterations, ctaIterations;
  bool exactK = false;
  bool postScale = false, lowRowsOnly = false;
  bool perKScales, groupPerIter, loopChannelScales = false;
  /// With loopChannelScales: this lane's eight column scales (both lanes of
  /// an act2), loaded once before the loop.
  SmallVector<Value> channelScaleVec;
  /// Cooperative kernels: the slot layout.
  L::CooperativeSlot coop;
  // Thread coordinates (warpMi: the warp's row along M in a cooperative
  // block).
  Value tid, lane, quad, grp, warpN, warpK, warpMi, nTile, m0, m;
  /// The threads that share a cooperative slot's copies: this thread's
  /// index among them (the block's thread index, or the producer
  /// warpgroup's with warp_specialized).
  Value copyTid;
  Value bidX, bidY, bidZ;
  Value global;
};

Value PreparedEmitter::scaleBits(Value word, int64_t slot) {
  const hq::ScalarType &t = spec.weight.scaleType;
  if (t.bits == 16) {
    Value v = slot % 2 ? arith::ShRUIOp::create(b, word, c32(16)) : word;
    return arith::AndIOp::create(b, v, c32(0xFFFF));
  }
  // 8-bit scales: exact in the activation type (PreparedLayout::supports).
  Value code = arith::AndIOp::create(
      b, arith::ShRUIOp::create(b, word, c32(8 * (slot % 4))), c32(0xFF));
  Value f = smallFloatToF32(code, t);
  Value h = arith::TruncFOp::create(b, act, f);
  return arith::ExtUIOp::create(b, i32, arith::BitcastOp::create(b, i16, h));
}

SmallVector<PreparedEmitter::Copy>
PreparedEmitter::copiesFor(Value iter) {
  const hq::WeightSchema &w = spec.weight;
  const unsigned bits = w.type.bits;
  SmallVector<Copy> s;
  int64_t chunk = 0;
  // share_activations: the chunk of activation tile j.
  SmallVector<int64_t> activationChunk;
  Value wgt = param(hq::abi::ParamWeight);
  for (int64_t u = 0; u < tile.kTilesPerWarp; ++u) {
    // k-tile of this warp, clamped (clampedTile).
    Value t = warpKTile(iter, c32(u));
    Value tc = clampedTile(t);
    // B: one vector per plane (two for the 8-bit plane).
    Value tileBase = weightWord(tc, nTile, 1);
    for (const L::Plane &p : planes) {
      if (p.width == 8) {
        // A lane's 32 bytes as two copies of its own would read each
        // 32-byte sector of the plane half per copy: the warp copies the
        // plane's kilobyte in order instead (coalesced; see Copy).
        Value base = arith::AddIOp::create(
            b, tileBase,
            arith::AddIOp::create(b, c64(int64_t(p.wordOffset) * 32),
                                  arith::MulIOp::create(b, ext64(lane), c64(4))));
        for (int64_t j = 0; j < 2; ++j) {
          Copy c{wgt, arith::AddIOp::create(b, base, c64(128 * j)), 4,
                 Value(), chunk++, 0};
          c.wideFirst = j == 0;
          s.push_back(c);
        }
        continue;
      }
      Value base = arith::AddIOp::create(
          b, tileBase,
          arith::AddIOp::create(
              b, c64(int64_t(p.wordOffset) * 32),
              arith::MulIOp::create(b, ext64(lane), c64(p.width))));
      for (unsigned off = 0; off < p.width; off += 4)
        s.push_back({wgt, arith::AddIOp::create(b, base, c64(off)),
                     std::min<unsigned>(4, p.width), Value(), chunk++, 0});
    }
    // A: one 16 x 16 tile per 16 rows (activationCopy).
    for (int64_t i = 0; i < mt; ++i) {
      if (tile.shareActivations) {
        // Copied below by warp j % warpsN of the K group (share j / warpsN
        // of its copies); every warp's region keeps the chunk.
        Copy c{param(hq::abi::ParamInput), Value(), 4, Value(), chunk++, 0,
               /*ldmatrix=*/true};
        c.activation = u * mt + i;
        c.shapeOnly = true;
        activationChunk.push_back(c.chunk);
        s.push_back(c);
        continue;
      }
      Copy c = activationCopy(t, c32(16 * i));
      c.chunk = chunk++;
      s.push_back(c);
    }
    // Scales and zero points of the tile's group (once per iteration when
    // the warp's tiles share it).
    if (u == 0 || !groupPerIter) {
      Value g = perKScales ? arith::DivUIOp::create(
                                 b, arith::MulIOp::create(b, tc, c32(16)),
                                 c32(w.groupK))
                           : c32(0);
      Value g64 = ext64(g);
      Value col = arith::AddIOp::create(
          b, arith::MulIOp::create(b, ext64(nTile), c64(64)),
          arith::MulIOp::create(b, ext64(grp), c64(8)));
      if (perKScales) {
        int64_t words = w.scaleType.bits / 4; // 8 scales of 8 or 16 bits
        Value scaleCol =
            postScale ? Value(arith::AddIOp::create(
                            b, arith::MulIOp::create(b, ext64(nTile), c64(64)),
                            arith::MulIOp::create(
                                b, ext64(arith::AndIOp::create(b, lane, c32(7))),
                                c64(8))))
                      : col;
        Value elem = arith::AddIOp::create(
            b, arith::MulIOp::create(b, g64, c64(spec.np)), scaleCol);
        Value index = arith::DivUIOp::create(
            b, arith::MulIOp::create(b, elem, c64(w.scaleType.bits)), c64(32));
        Copy c{param(hq::abi::ParamScales), index, words, Value(), chunk++, 0};
        c.columnScales = postScale;
        s.push_back(c);
      }
      if (w.zeroPoint == hq::ZeroPointKind::Float) {
        Value elem = arith::AddIOp::create(
            b, arith::MulIOp::create(b, g64, c64(spec.np)), col);
        Value index = arith::ShRUIOp::create(b, elem, c64(1));
        s.push_back({param(hq::abi::ParamZeroPoints), index, 4, Value(), chunk++, 0});
      } else if (w.zeroPoint == hq::ZeroPointKind::Int) {
        int64_t zb = L::zeroPointBits(bits);
        Value rowWords = c64(spec.np * zb / 32);
        Value index = arith::AddIOp::create(
            b, arith::MulIOp::create(b, g64, rowWords),
            arith::DivUIOp::create(b, arith::MulIOp::create(b, col, c64(zb)),
                                   c64(32)));
        s.push_back({param(hq::abi::ParamZeroPoints), index, zb / 4, Value(),
                     chunk++, 0});
      }
    }
  }
  if (tile.shareActivations) {
    // This warp's share of the K group's activation tiles: j = warpN +
    // warpsN x r, into its own region's chunk of tile j (the readers of
    // the group find it there).
    const int64_t pieces = tile.kTilesPerWarp * mt;
    for (int64_t r = 0; r * tile.warpsN < pieces; ++r) {
      Value j = arith::AddIOp::create(b, warpN, c32(tile.warpsN * r));
      Value u = mt == 1 ? j : Value(arith::DivUIOp::create(b, j, c32(mt)));
      Value i = mt == 1 ? c32(0) : Value(arith::RemUIOp::create(b, j, c32(mt)));
      Copy c = activationCopy(warpKTile(iter, u),
                              arith::MulIOp::create(b, i, c32(16)));
      // The chunk of tile j: one of warpsN compile-time chunks.
      Value dst = c32(activationChunk[size_t(tile.warpsN * r)]);
      for (int64_t w = 1; w < tile.warpsN; ++w)
        dst = arith::SelectOp::create(
            b,
            arith::CmpIOp::create(b, arith::CmpIPredicate::eq, warpN, c32(w)),
            c32(activationChunk[size_t(tile.warpsN * r + w)]), dst);
      c.dstChunk = dst;
      s.push_back(c);
    }
  }
  return s;
}

PreparedEmitter::Copy PreparedEmitter::activationCopy(Value t,
                                                      Value rowOffset) {
  // Lane L copies 16 bytes of row m0 + rowOffset + L / 2, columns 16 t + 8
  // (L % 2) ..+8; rows past M and columns past K zero-fill.
  Value row = arith::AddIOp::create(
      b, m0,
      arith::AddIOp::create(b, arith::ShRUIOp::create(b, lane, c32(1)),
                            rowOffset));
  Value col = arith::AddIOp::create(
      b, arith::MulIOp::create(b, t, c32(16)),
      arith::MulIOp::create(b, arith::AndIOp::create(b, lane, c32(1)), c32(8)));
  // Bytes of the 8 columns that lie inside K (0..16), none past M.
  Value inRows = arith::CmpIOp::create(b, arith::CmpIPredicate::slt, row, m);
  Value bytes = arith::SelectOp::create(b, inRows, columnBytes(col), c32(0));
  Value ok = arith::CmpIOp::create(b, arith::CmpIPredicate::sgt, bytes, c32(0));
  Value index = arith::AddIOp::create(
      b, arith::MulIOp::create(b, sext64(row), c64(spec.kAct / 2)),
      sext64(arith::ShRUIOp::create(b, col, c32(1))));
  Value safe = arith::SelectOp::create(b, ok, index, c64(0));
  return {param(hq::abi::ParamInput), safe, 4, bytes, -1, 0, /*ldmatrix=*/true};
}

Value PreparedEmitter::slotAddress(Value slot, int64_t chunk, int64_t word) {
  // Lane-major 16-byte chunks: a warp's accesses to one chunk are 512
  // contiguous bytes, free of bank conflicts.
  int64_t offset = chunk * 32 * 16 + word * 4;
  Value byte = arith::AddIOp::create(
      b, arith::AddIOp::create(b, laneBase,
                               arith::MulIOp::create(b, slot, c32(chunks * 512))),
      c32(offset));
  return LLVM::GEPOp::create(b, smem.getType(), i8, smem, ValueRange{byte});
}

Value PreparedEmitter::slotAddress(Value slot, Value chunk, int64_t word) {
  Value byte = arith::AddIOp::create(
      b,
      arith::AddIOp::create(
          b, arith::AddIOp::create(
                 b, laneBase, arith::MulIOp::create(b, slot, c32(chunks * 512))),
          arith::MulIOp::create(b, chunk, c32(512))),
      c32(word * 4));
  return LLVM::GEPOp::create(b, smem.getType(), i8, smem, ValueRange{byte});
}

void PreparedEmitter::issueCopies(Value iter, Value slot, Value when,
                                  bool commit) {
  {
    OpBuilder::InsertionGuard guard(b);
    if (when) {
      auto ifOp = scf::IfOp::create(b, when, /*withElseRegion=*/false);
      b.setInsertionPointToStart(ifOp.thenBlock());
    }
    if (tile.cooperative())
      issueCooperativeCopies(iter, slot);
    else
      issueWarpCopies(iter, slot);
  }
  // Bulk fills have no cp.async copies (nothing waits for a group).
  if (commit && !bulkFills())
    NVVM::CpAsyncCommitGroupOp::create(b);
}

void PreparedEmitter::prefetchWeightsL2(Value first, Value local) {
  const unsigned bits = spec.weight.type.bits;
  // Chunks of this iteration: k-tile slots of the block (cooperative) or of
  // this warp, one per thread (lane) from 0.
  const int64_t chunks =
      tile.cooperative() ? tile.kTilesPerIteration() : tile.kTilesPerWarp;
  Value who = tile.cooperative() ? copyTid : lane;
  Value mine = arith::AndIOp::create(
      b, arith::CmpIOp::create(b, arith::CmpIPredicate::ult, who, c32(chunks)),
      arith::CmpIOp::create(b, arith::CmpIPredicate::slt, local,
                            c32(ctaIterations)));
  auto ifOp = scf::IfOp::create(b, mine, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  Value iter = arith::AddIOp::create(b, first, local);
  Value word, bytes;
  if (tile.cooperative()) {
    // The block's n-tiles of k-tile slot `who` (contiguous).
    Value t = arith::AddIOp::create(
        b, arith::MulIOp::create(b, iter, c32(tile.kTilesPerIteration())), who);
    word = weightWord(clampedTile(t), bidX, tile.warpsN);
    bytes = c32(tile.warpsN * 128 * bits);
  } else {
    // This warp's n-tile of its k-tile `who` of the iteration.
    word = weightWord(clampedTile(warpKTile(iter, who)), nTile, 1);
    bytes = c32(128 * bits);
  }
  Value src = LLVM::GEPOp::create(b, ptr, i32, param(hq::abi::ParamWeight),
                                  ValueRange{word});
  inlineAsm(TypeRange(), ValueRange{src, bytes},
            "cp.async.bulk.prefetch.L2.global [$0], $1;", "l,n");
}

void PreparedEmitter::issueWarpCopies(Value iter, Value slot) {
  for (const Copy &c : copiesFor(iter)) {
    const bool input = c.base == param(hq::abi::ParamInput);
    if (c.shapeOnly || (input ? !copiesInputs() : !copiesConstants()))
      continue;
    Value src = LLVM::GEPOp::create(b, ptr, i32, c.base, ValueRange{c.index});
    Value dst = c.dstChunk ? slotAddress(slot, c.dstChunk, c.offset)
                           : slotAddress(slot, c.chunk, c.offset);
    int64_t bytes = 4 * c.words;
    // 16-byte copies bypass L1 (.cg); smaller ones must use .ca.
    auto modifier = NVVM::LoadCacheModifierKindAttr::get(
        b.getContext(), bytes == 16 ? NVVM::LoadCacheModifierKind::CG
                                    : NVVM::LoadCacheModifierKind::CA);
    NVVM::CpAsyncOp::create(b, dst, src, b.getI32IntegerAttr(bytes), modifier,
                            c.srcBytes);
  }
}

void PreparedEmitter::copy16(Value dstByte, Value base, Value index,
                             Value srcBytes) {
  Value src = LLVM::GEPOp::create(b, ptr, i32, base, ValueRange{index});
  NVVM::CpAsyncOp::create(
      b, smemAt(dstByte), src, b.getI32IntegerAttr(16),
      NVVM::LoadCacheModifierKindAttr::get(b.getContext(),
                                           NVVM::LoadCacheModifierKind::CG),
      srcBytes);
}

void PreparedEmitter::forEachChunk(int64_t count,
                                   function_ref<void(Value)> copy) {
  const int64_t threads =
      tile.warpSpecialized ? tile.producerThreads() : tile.threads();
  for (int64_t first = 0; first < count; first += threads) {
    Value c = arith::AddIOp::create(b, copyTid, c32(first));
    if (first + threads <= count) {
      copy(c);
      continue;
    }
    // The last round: only the threads with a chunk left copy.
    auto ifOp = scf::IfOp::create(
        b, arith::CmpIOp::create(b, arith::CmpIPredicate::ult, c, c32(count)),
        /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    copy(c);
  }
}

void PreparedEmitter::issueCooperativeCopies(Value iter, Value slot) {
  const hq::WeightSchema &w = spec.weight;
  const unsigned bits = w.type.bits;
  // Every K-split group's k-tiles of the iteration.
  const int64_t kT = tile.kTilesPerIteration(), blockM = tile.blockM();
  Value slotBase = arith::MulIOp::create(b, slot, c32(coop.total()));
  // The k-tile of k-tile slot u of this iteration (clampedTile clamps it
  // to K).
  auto kTileOf = [&](Value u) {
    return arith::AddIOp::create(b, arith::MulIOp::create(b, iter, c32(kT)), u);
  };
  // Activations: chunk c is half h = c % 2 of row r = (c / 2) % block_m of
  // k-tile slot u = c / (2 block_m); rows past M and columns past K
  // zero-fill.
  // With wgmma: chunk c is row r = c % block_m of half h = (c / block_m)
  // % 2, stored at [u][h][r] x 16 bytes (wgmma's no-swizzle K-major core
  // matrices: 8 rows of 16 bytes each 128 contiguous bytes, the halves of
  // K block_m x 16 bytes apart); consecutive threads write consecutive
  // 16-byte chunks. With tma = [a] the tensor copies below fill the same
  // places.
  if (!tile.tmaActivations && copiesInputs())
    forEachChunk(kT * blockM * 2, [&](Value c) {
      Value h = tile.wgmma
                    ? Value(arith::AndIOp::create(
                          b, arith::DivUIOp::create(b, c, c32(blockM)), c32(1)))
                    : Value(arith::AndIOp::create(b, c, c32(1)));
      Value r =
          tile.wgmma
              ? Value(arith::RemUIOp::create(b, c, c32(blockM)))
              : Value(arith::RemUIOp::create(
                    b, arith::ShRUIOp::create(b, c, c32(1)), c32(blockM)));
      Value u = arith::DivUIOp::create(b, c, c32(2 * blockM));
      Value col = arith::AddIOp::create(
          b, arith::MulIOp::create(b, kTileOf(u), c32(16)),
          arith::MulIOp::create(b, h, c32(8)));
      Value colBytes = columnBytes(col);
      Value row = arith::AddIOp::create(
          b, arith::MulIOp::create(b, bidY, c32(blockM)), r);
      Value inRows =
          arith::CmpIOp::create(b, arith::CmpIPredicate::slt, row, m);
      Value bytes = arith::SelectOp::create(b, inRows, colBytes, c32(0));
      Value ok =
          arith::CmpIOp::create(b, arith::CmpIPredicate::sgt, bytes, c32(0));
      Value index = arith::AddIOp::create(
          b, arith::MulIOp::create(b, sext64(row), c64(spec.kAct / 2)),
          sext64(arith::ShRUIOp::create(b, col, c32(1))));
      Value safe = arith::SelectOp::create(b, ok, index, c64(0));
      if (tile.wgmma) {
        Value dst = arith::AddIOp::create(
            b, slotBase,
            arith::AddIOp::create(
                b, arith::MulIOp::create(b, u, c32(blockM * 32)),
                arith::AddIOp::create(
                    b, arith::MulIOp::create(b, h, c32(blockM * 16)),
                    arith::MulIOp::create(b, r, c32(16)))));
        copy16(dst, param(hq::abi::ParamInput), safe, bytes);
        return;
      }
      Value swz = arith::XOrIOp::create(
          b, h,
          arith::AndIOp::create(b, arith::ShRUIOp::create(b, r, c32(2)),
                                c32(1)));
      Value dst = arith::AddIOp::create(
          b, slotBase,
          arith::AddIOp::create(
              b, arith::MulIOp::create(b, u, c32(blockM * 32)),
              arith::AddIOp::create(b, arith::MulIOp::create(b, r, c32(32)),
                                    arith::MulIOp::create(b, swz, c32(16)))));
      copy16(dst, param(hq::abi::ParamInput), safe, bytes);
    });
  // Weights: the block's n-tiles of a k-tile are contiguous (warpsN x 128
  // x bits bytes, 8 x bits chunks per n-tile).
  const int64_t perTile = tile.warpsN * 8 * bits;
  Value weightsAt =
      arith::AddIOp::create(b, slotBase, c32(coop.activationBytes));
  if (!tile.tmaWeights && copiesConstants())
    forEachChunk(kT * perTile, [&](Value c) {
      Value u = arith::DivUIOp::create(b, c, c32(perTile));
      Value off = arith::RemUIOp::create(b, c, c32(perTile));
      Value tc = clampedTile(kTileOf(u));
      Value index =
          arith::AddIOp::create(b, weightWord(tc, bidX, tile.warpsN),
                                arith::MulIOp::create(b, ext64(off), c64(4)));
      Value dst = arith::AddIOp::create(
          b, weightsAt, arith::MulIOp::create(b, c, c32(16)));
      copy16(dst, param(hq::abi::ParamWeight), index);
    });
  if (tile.tmaActivations || tile.tmaWeights) {
    // One producer thread announces the slot's TMA bytes on its full
    // mbarrier and issues the copies; the barrier's phase ends once they
    // landed and every producer arrived (after the copies still made by
    // cp.async). The slot's previous reads ended before its release, which
    // this fill waited for. Destinations are shared-window addresses.
    // With bulk fills (layout::ws::bulkFills) the scales and zero points
    // come by bulk copies too and the announcement is the barrier's one
    // arrival: the phase then ends when the bytes land.
    const int64_t activationBytes = tile.tmaActivations ? kT * blockM * 32 : 0;
    const int64_t weightBytes = tile.tmaWeights ? kT * perTile * 16 : 0;
    const int64_t groupBytes =
        bulkFills() ? coop.groupCopies * (coop.scaleBytes + coop.zeroBytes) : 0;
    onFirstCopier([&] {
      Value full = mbarrierAt(slot, 0);
      Value txBytes = c32(activationBytes + weightBytes + groupBytes);
      if (bulkFills())
        inlineAsm(TypeRange(), ValueRange{full, txBytes},
                  "{\n.reg .b64 state;\n"
                  "mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 "
                  "state, [$0], $1;\n}",
                  "r,r");
      else
        inlineAsm(TypeRange(), ValueRange{full, txBytes},
                  "mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [$0], $1;",
                  "r,r");
      if (tile.tmaActivations) {
        // Boxes of 8 columns x block_m rows: k-tile slot u's half h lands at
        // [u][h] as block_m rows of 16 bytes, the layout the chunk copies
        // make; rows past M and columns past K arrive as zeros.
        Value map = LLVM::PtrToIntOp::create(b, i64, inputMapAddress());
        Value row = arith::MulIOp::create(b, bidY, c32(blockM));
        for (int64_t u = 0; u < kT; ++u)
          for (int64_t h = 0; h < 2; ++h) {
            Value col = arith::AddIOp::create(
                b, arith::MulIOp::create(b, kTileOf(c32(u)), c32(16)),
                c32(8 * h));
            Value dst = arith::AddIOp::create(
                b, smemAddr,
                arith::AddIOp::create(b, slotBase,
                                      c32(u * blockM * 32 + h * blockM * 16)));
            inlineAsm(
                TypeRange(), ValueRange{dst, map, col, row, full},
                "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::"
                "complete_tx::bytes [$0], [$1, {$2, $3}], [$4];",
                "r,l,r,r,r");
          }
      }
      if (tile.tmaWeights)
        for (int64_t u = 0; u < kT; ++u) {
          // One bulk copy per k-tile: the block's n-tiles are contiguous.
          Value src = LLVM::GEPOp::create(
              b, ptr, i32, param(hq::abi::ParamWeight),
              ValueRange{
                  weightWord(clampedTile(kTileOf(c32(u))), bidX, tile.warpsN)});
          Value dst = arith::AddIOp::create(
              b, smemAddr,
              arith::AddIOp::create(b, weightsAt, c32(u * perTile * 16)));
          inlineAsm(
              TypeRange(), ValueRange{dst, src, c32(perTile * 16), full},
              "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::"
              "bytes [$0], [$1], $2, [$3];",
              "r,l,r,r");
        }
    });
  }
  // Scales and zero points of the block's columns, per group copy.
  const int64_t columns = tile.blockN();
  for (int64_t gi = 0; copiesConstants() && gi < coop.groupCopies; ++gi) {
    Value tc = clampedTile(kTileOf(c32(gi)));
    Value g = perKScales ? arith::DivUIOp::create(
                               b, arith::MulIOp::create(b, tc, c32(16)),
                               c32(w.groupK))
                         : c32(0);
    // Element of the block's first column in a [G, N] row-major tensor.
    Value elem = arith::AddIOp::create(
        b, arith::MulIOp::create(b, ext64(g), c64(spec.np)),
        arith::MulIOp::create(b, ext64(bidX), c64(columns)));
    Value at = arith::AddIOp::create(
        b, weightsAt,
        c32(coop.weightBytes + gi * (coop.scaleBytes + coop.zeroBytes)));
    auto region = [&](hq::abi::GemmParam param_, int64_t bytes,
                      int64_t elemBits, Value dstBase) {
      Value firstWord = arith::DivUIOp::create(
          b, arith::MulIOp::create(b, elem, c64(elemBits)), c64(32));
      if (bulkFills()) {
        // One bulk copy from the producer that announced the fill.
        onFirstCopier([&] {
          Value src = LLVM::GEPOp::create(b, ptr, i32, param(param_),
                                          ValueRange{firstWord});
          inlineAsm(TypeRange(),
                    ValueRange{arith::AddIOp::create(b, smemAddr, dstBase), src,
                               c32(bytes), mbarrierAt(slot, 0)},
                    "cp.async.bulk.shared::cluster.global.mbarrier::"
                    "complete_tx::bytes [$0], [$1], $2, [$3];",
                    "r,l,r,r");
        });
        return;
      }
      forEachChunk(bytes / 16, [&](Value c) {
        Value index = arith::AddIOp::create(
            b, firstWord, arith::MulIOp::create(b, ext64(c), c64(4)));
        copy16(arith::AddIOp::create(b, dstBase,
                                     arith::MulIOp::create(b, c, c32(16))),
               param(param_), index);
      });
    };
    if (coop.scaleBytes)
      region(hq::abi::ParamScales, coop.scaleBytes, w.scaleType.bits, at);
    if (coop.zeroBytes)
      region(hq::abi::ParamZeroPoints, coop.zeroBytes,
             w.zeroPoint == hq::ZeroPointKind::Float ? 16
                                                     : L::zeroPointBits(bits),
             arith::AddIOp::create(b, at, c32(coop.scaleBytes)));
  }
}

PreparedEmitter::Stage PreparedEmitter::readCooperativeSlot(Value slot) {
  const hq::WeightSchema &w = spec.weight;
  const unsigned bits = w.type.bits;
  auto [slotBase, weightsAt] = slotRegions(slot);
  auto loadWords = [&](Value byte, int64_t n, Stage &s) {
    pushWords(smemAt(byte), n, unsigned(std::min<int64_t>(16, 4 * n)), s);
  };
  // ldmatrix: lane i points at row ldmatrixRow() of a 16-row group, half
  // i / 16 (swapped by bit 2 of the row, which is bit 2 of i).
  Value rowInGroup = ldmatrixRow();
  Value half = arith::XOrIOp::create(
      b, arith::ShRUIOp::create(b, lane, c32(4)),
      arith::AndIOp::create(b, arith::ShRUIOp::create(b, lane, c32(2)), c32(1)));
  Value laneA = arith::AddIOp::create(
      b,
      arith::MulIOp::create(
          b,
          arith::AddIOp::create(b, arith::MulIOp::create(b, warpMi, c32(tile.warpM)),
                                rowInGroup),
          c32(32)),
      arith::MulIOp::create(b, half, c32(16)));
  Value laneColumns = arith::AddIOp::create(
      b, arith::MulIOp::create(b, warpN, c32(64)),
      arith::MulIOp::create(b, grp, c32(8)));
  Stage s;
  for (int64_t u = 0; u < tile.kTilesPerWarp; ++u) {
    // The slot's k-tile this warp's K-split group reads as its u-th.
    Value su = arith::AddIOp::create(
        b, arith::MulIOp::create(b, warpK, c32(tile.kTilesPerWarp)), c32(u));
    // This warp's n-tile of that k-tile, plane by plane.
    Value tileAt = arith::AddIOp::create(
        b, weightsAt,
        arith::AddIOp::create(
            b, arith::MulIOp::create(b, su, c32(tile.warpsN * 128 * bits)),
            arith::MulIOp::create(b, warpN, c32(128 * bits))));
    for (const L::Plane &p : planes) {
      Value at = arith::AddIOp::create(
          b, tileAt,
          arith::AddIOp::create(
              b, c32(int64_t(p.wordOffset) * 32 * 4),
              arith::MulIOp::create(b, lane, c32(4 * p.width))));
      for (unsigned off = 0; off < p.width; off += 4)
        loadWords(arith::AddIOp::create(b, at, c32(4 * off)),
                  std::min<unsigned>(4, p.width - off), s);
    }
    for (int64_t i = 0; i < mt; ++i) {
      pushLdmatrix(
          smemAt(arith::AddIOp::create(
              b, slotBase,
              arith::AddIOp::create(
                  b, laneA,
                  arith::AddIOp::create(
                      b, arith::MulIOp::create(b, su, c32(tile.blockM() * 32)),
                      c32(16 * i * 32))))),
          s);
    }
    if (u == 0 || !groupPerIter) {
      // The group copy of that k-tile (one per iteration, or one per k-tile).
      Value at = groupCopyAt(weightsAt, coop.groupCopies == 1 ? c32(0) : su);
      // The lane's eight columns of the block's scales / zero points (with
      // scale_after_mma: the 16 scales of its C columns, prepared columns
      // 16 q ..+16 of its n-tile).
      if (perKScales && postScale)
        loadWords(arith::AddIOp::create(
                      b, at,
                      arith::MulIOp::create(
                          b,
                          arith::AddIOp::create(
                              b, arith::MulIOp::create(b, warpN, c32(64)),
                              arith::MulIOp::create(b, quad, c32(16))),
                          c32(2))),
                  8, s);
      else if (perKScales)
        loadWords(arith::AddIOp::create(
                      b, at,
                      arith::MulIOp::create(b, laneColumns,
                                            c32(w.scaleType.bits / 8))),
                  w.scaleType.bits / 4, s);
      Value zeros = arith::AddIOp::create(b, at, c32(coop.scaleBytes));
      if (w.zeroPoint == hq::ZeroPointKind::Float)
        loadWords(arith::AddIOp::create(
                      b, zeros, arith::MulIOp::create(b, laneColumns, c32(2))),
                  4, s);
      else if (w.zeroPoint == hq::ZeroPointKind::Int) {
        int64_t zb = L::zeroPointBits(bits);
        loadWords(arith::AddIOp::create(
                      b, zeros,
                      arith::DivUIOp::create(
                          b, arith::MulIOp::create(b, laneColumns, c32(zb)),
                          c32(8))),
                  zb / 4, s);
      }
    }
  }
  return s;
}

PreparedEmitter::Stage PreparedEmitter::readWgmmaSlot(Value slot) {
  const hq::WeightSchema &w = spec.weight;
  const unsigned bits = w.type.bits;
  Value weightsAt = slotRegions(slot).second;
  // Loads of `n` bytes (2, 4, 8 or 16) at shared byte `byte`, as i32 words
  // (a 2-byte load zero-extended into one).
  auto loadBytes = [&](Value byte, int64_t n, Stage &s) {
    if (n == 2) {
      Value h = LLVM::LoadOp::create(b, i16, smemAt(byte), /*alignment=*/2);
      s.push_back(arith::ExtUIOp::create(b, i32, h));
      return;
    }
    pushWords(smemAt(byte), n / 4, unsigned(n), s);
  };
  // Warp w of the group reads only its pairs 4 w ..+4 of a lane's words:
  // in a plane of width W (16 / W pairs per word) words w W / 4 ..+W / 4
  // for W >= 4, else word w W / 4 shifted right by W (4 w % (16 / W)) bits,
  // so that pair 4 w + q' sits where dequantPair finds pair q' (0..3).
  // Of a group copy, the scales / zero points of its columns j = 2 w,
  // 2 w + 1 (the lane's eight columns' first two where readGroup looks).
  const int64_t nT = tile.nTilesPerGroup;
  Stage s;
  for (int64_t u = 0; u < tile.kTilesPerWarp; ++u)
    for (int64_t t = 0; t < nT; ++t) {
      Value nIdx = arith::AddIOp::create(
          b, arith::MulIOp::create(b, groupN, c32(nT)), c32(t));
      Value tileAt = arith::AddIOp::create(
          b, weightsAt,
          arith::AddIOp::create(
              b, c32(u * tile.warpsN * 128 * bits),
              arith::MulIOp::create(b, nIdx, c32(128 * bits))));
      for (const L::Plane &p : planes) {
        const unsigned W = p.width;
        Value lanePlane = arith::AddIOp::create(
            b, tileAt,
            arith::AddIOp::create(b, c32(int64_t(p.wordOffset) * 32 * 4),
                                  arith::MulIOp::create(b, lane, c32(4 * W))));
        // Byte of word w W / 4 of the lane's plane words.
        Value first = arith::AddIOp::create(
            b, lanePlane,
            arith::MulIOp::create(
                b, arith::DivUIOp::create(b, arith::MulIOp::create(b, wIn, c32(W)),
                                          c32(4)),
                c32(4)));
        if (W >= 4) {
          loadBytes(first, W, s); // W / 4 words
          continue;
        }
        Stage one;
        loadBytes(first, 4, one);
        const unsigned perWord = 16 / W;
        Value shift = arith::MulIOp::create(
            b,
            arith::RemUIOp::create(b, arith::MulIOp::create(b, wIn, c32(4)),
                                   c32(perWord)),
            c32(W));
        s.push_back(arith::ShRUIOp::create(b, one[0], shift));
      }
      if (u != 0 && groupPerIter)
        continue;
      Value at = groupCopyAt(weightsAt, coop.groupCopies == 1 ? c32(0) : c32(u));
      // Columns 2 w, 2 w + 1 of the lane's eight: prepared column
      // 64 nIdx + 8 g + 2 w.
      Value pairColumn = arith::AddIOp::create(
          b,
          arith::AddIOp::create(b, arith::MulIOp::create(b, nIdx, c32(64)),
                                arith::MulIOp::create(b, grp, c32(8))),
          arith::MulIOp::create(b, wIn, c32(2)));
      // `elemBits`-bit values of the two columns, then zero words up to the
      // `words` readGroup takes.
      auto pairOf = [&](Value base, int64_t elemBits, int64_t words) {
        size_t before = s.size();
        loadBytes(arith::AddIOp::create(
                 b, base,
                 arith::DivUIOp::create(
                     b, arith::MulIOp::create(b, pairColumn, c32(elemBits)),
                     c32(8))),
             std::max<int64_t>(2, elemBits / 4), s);
        while (int64_t(s.size() - before) < words)
          s.push_back(c32(0));
      };
      if (perKScales)
        pairOf(at, w.scaleType.bits, w.scaleType.bits / 4);
      Value zeros = arith::AddIOp::create(b, at, c32(coop.scaleBytes));
      if (w.zeroPoint == hq::ZeroPointKind::Float)
        pairOf(zeros, 16, 4);
      else if (w.zeroPoint == hq::ZeroPointKind::Int) {
        int64_t zb = L::zeroPointBits(bits);
        if (zb == 4) {
          // Two 4-bit zero points: one byte, read as the word's low bits.
          Stage one;
          Value byte = arith::AddIOp::create(
              b, zeros, arith::DivUIOp::create(b, pairColumn, c32(2)));
          Value v = LLVM::LoadOp::create(b, b.getI8Type(), smemAt(byte), 1);
          s.push_back(arith::ExtUIOp::create(b, i32, v));
        } else {
          pairOf(zeros, zb, zb / 4);
        }
      }
    }
  return s;
}

PreparedEmitter::Stage PreparedEmitter::readSlot(Value slot) {
  if (tile.wgmma)
    return readWgmmaSlot(slot);
  if (tile.cooperative())
    return readCooperativeSlot(slot);
  // Words per chunk, in copy order (the structure does not depend on the
  // iteration).
  SmallVector<int64_t> words(size_t(chunks), 0);
  SmallVector<bool> matrix(size_t(chunks), false), wide(size_t(chunks), false),
      columnScales(size_t(chunks), false);
  SmallVector<int64_t> activation(size_t(chunks), -1);
  for (const Copy &c : copyShape) {
    if (c.dstChunk)
      continue; // share_activations: the copy into a reserved chunk
    activation[size_t(c.chunk)] = c.activation;
    words[size_t(c.chunk)] = std::max(words[size_t(c.chunk)], c.offset + c.words);
    matrix[size_t(c.chunk)] = c.ldmatrix;
    wide[size_t(c.chunk)] = c.wideFirst;
    columnScales[size_t(c.chunk)] = c.columnScales;
  }
  // Byte `offset` (i32) of chunk c of the slot counted from the warp's
  // first lane (for chunks read across lanes).
  Value warpBase =
      arith::SubIOp::create(b, laneBase, arith::MulIOp::create(b, lane, c32(16)));
  auto inChunk = [&](int64_t c, Value offset) {
    return arith::AddIOp::create(
        b,
        arith::AddIOp::create(
            b, warpBase,
            arith::AddIOp::create(
                b, arith::MulIOp::create(b, slot, c32(chunks * 512)),
                c32(c * 512))),
        offset);
  };
  Stage s;
  for (int64_t c = 0; c < chunks; ++c) {
    int64_t n = words[size_t(c)];
    if (columnScales[size_t(c)]) {
      // The 16 scales of this lane's C columns: byte 32 q of the chunk.
      pushWords(smemAt(inChunk(c, arith::MulIOp::create(b, quad, c32(32)))), 8,
                /*alignment=*/16, s);
      continue;
    }
    if (wide[size_t(c)]) {
      // This lane's 8 words of the plane: chunk c + L / 16, byte 32 (L % 16)
      // (the two chunks hold the plane's kilobyte in order).
      Value byte = inChunk(
          c,
          arith::AddIOp::create(
              b,
              arith::MulIOp::create(b, arith::ShRUIOp::create(b, lane, c32(4)),
                                    c32(512)),
              arith::MulIOp::create(b, arith::AndIOp::create(b, lane, c32(15)),
                                    c32(32))));
      pushWords(smemAt(byte), 8, /*alignment=*/16, s);
      ++c; // the plane's second chunk is read with the first
      continue;
    }
    if (matrix[size_t(c)]) {
      // The 16 x 16 tile (32 bytes per row): lane i points at row
      // ldmatrixRow(), columns 8 (i / 16); the four 8 x 8 matrices come back
      // as the m16n8k16 A fragment a0..a3.
      Value row = ldmatrixRow();
      Value byte = arith::AddIOp::create(
          b, arith::MulIOp::create(b, row, c32(32)),
          arith::MulIOp::create(b, arith::ShRUIOp::create(b, lane, c32(4)),
                                c32(16)));
      if (int64_t j = activation[size_t(c)]; j >= 0) {
        // share_activations: tile j lies in the region of warp j % warpsN
        // of this K group (regions are warp-major, warps of a group
        // adjacent).
        Value owner = arith::SubIOp::create(b, c32(j % tile.warpsN), warpN);
        byte = arith::AddIOp::create(
            b, byte,
            arith::MulIOp::create(b, owner, c32(tile.stages * chunks * 512)));
      }
      pushLdmatrix(smemAt(inChunk(c, byte)), s);
      continue;
    }
    pushWords(slotAddress(slot, c, 0), n, /*alignment=*/16, s);
  }
  return s;
}

void PreparedEmitter::pushWords(Value addr, int64_t n, unsigned alignment,
                                Stage &s) {
  if (n == 1) {
    s.push_back(LLVM::LoadOp::create(b, i32, addr, alignment));
    return;
  }
  Value v = LLVM::LoadOp::create(b, VectorType::get({n}, i32), addr, alignment);
  for (int64_t i = 0; i < n; ++i)
    s.push_back(LLVM::ExtractElementOp::create(b, v, c32(i)));
}

void PreparedEmitter::pushLdmatrix(Value addr, Stage &s) {
  Type four = LLVM::LLVMStructType::getLiteral(b.getContext(),
                                               SmallVector<Type>(4, i32));
  Value frag = NVVM::LdMatrixOp::create(
      b, four, addr, 4u, NVVM::MMALayout::row,
      NVVM::LdStMatrixShapeAttr::get(b.getContext(), 8, 8),
      NVVM::LdStMatrixEltType::B16);
  for (int64_t i = 0; i < 4; ++i)
    s.push_back(LLVM::ExtractValueOp::create(b, frag, i));
}

void PreparedEmitter::beginDequant() {
  const hq::WeightSchema &w = spec.weight;
  const unsigned bits = w.type.bits;
  constZero = Value();
  if (w.type.isInt() && w.zeroPoint == hq::ZeroPointKind::None)
    constZero = splatConst((bf16 ? 128.0 : 1024.0) + double(1u << (bits - 1)));
}

void PreparedEmitter::readGroup(function_ref<Value()> next, GroupData &g) {
  const hq::WeightSchema &w = spec.weight;
  const unsigned bits = w.type.bits;
  uint32_t magicBits = bf16 ? 0x4300u : 0x6400u;
  g.zeroVec.resize(8);
  g.scaleVec.resize(8);
  g.columnScale.resize(16);
  if (perKScales && postScale) {
    // Prepared column 16 q + 8 e + j is the C column 8 j + 2 q + e.
    SmallVector<Value> v;
    for (int64_t i = 0; i < 8; ++i)
      v.push_back(next());
    Type scaleElem = w.scaleType == hq::ScalarType::bf16()
                         ? Type(b.getBF16Type())
                         : Type(b.getF16Type());
    for (int64_t e = 0; e < 2; ++e)
      for (int64_t j = 0; j < 8; ++j) {
        int64_t x = 8 * e + j;
        Value word = v[size_t(x / 2)];
        Value bits16 = arith::TruncIOp::create(
            b, i16,
            x % 2 ? Value(arith::ShRUIOp::create(b, word, c32(16))) : word);
        Value h = arith::BitcastOp::create(b, scaleElem, bits16);
        g.columnScale[size_t(2 * j + e)] = arith::ExtFOp::create(b, f32, h);
      }
  } else if (perKScales) {
    SmallVector<Value> v;
    for (int64_t i = 0; i < int64_t(w.scaleType.bits) / 4; ++i)
      v.push_back(next());
    for (int64_t j = 0; j < 8; ++j) {
      int64_t perWord = 32 / w.scaleType.bits;
      g.scaleVec[j] = asAct2(splat16(scaleBits(v[j / perWord], j % perWord)));
    }
  }
  if (w.zeroPoint == hq::ZeroPointKind::Float) {
    SmallVector<Value> v;
    for (int64_t i = 0; i < 4; ++i)
      v.push_back(next());
    for (int64_t j = 0; j < 8; ++j) {
      Value word = v[j / 2];
      Value h = j % 2 ? arith::ShRUIOp::create(b, word, c32(16)) : word;
      g.zeroVec[j] = asAct2(splat16(h));
    }
  } else if (w.zeroPoint == hq::ZeroPointKind::Int) {
    int64_t zb = L::zeroPointBits(bits);
    SmallVector<Value> v;
    for (int64_t i = 0; i < zb / 4; ++i)
      v.push_back(next());
    for (int64_t j = 0; j < 8; ++j) {
      Value word = v[(j * zb) / 32];
      Value z = arith::AndIOp::create(
          b, arith::ShRUIOp::create(b, word, c32((j * zb) % 32)),
          c32((1 << zb) - 1));
      // magic + z exactly: z fits the mantissa (PreparedLayout::supports).
      g.zeroVec[j] = asAct2(splat16(arith::OrIOp::create(b, z, c32(magicBits))));
    }
  }
}

Value PreparedEmitter::dequantPair(ArrayRef<SmallVector<Value>> planeWords,
                                   const GroupData &g, int q) {
  const hq::WeightSchema &w = spec.weight;
  const unsigned bits = w.type.bits;
  bool isInt = w.type.isInt();
  uint32_t magicBits = bf16 ? 0x4300u : 0x6400u;
  double magic = bf16 ? 128.0 : 1024.0;
  // The pair's code fields from every plane (shifted down to bit 0 of both
  // lanes, masked, moved up to the plane's shift), OR-ed into `into` (the
  // magic number) or alone. With `into`, a field that is not moved up goes
  // in with its mask in one lop3. (Float codes are masked again after:
  // there the opaque lop3 would stop LLVM folding the masks, 8 more PTX
  // instructions in the e3m2 kernel.)
  auto pairBits = [&](int q, Value into) {
    Value pair = into;
    for (size_t pi = 0; pi < planes.size(); ++pi) {
      const L::Plane &p = planes[pi];
      Value word = planeWords[pi][q / int(16 / p.width)];
      if (unsigned at = L::pairBit(p, q))
        word = arith::ShRUIOp::create(b, word, c32(at));
      const uint32_t mask = ((1u << p.width) - 1) * 0x10001u;
      if (into && !p.shift) {
        pair = maskOr(word, mask, pair);
        continue;
      }
      Value v = arith::AndIOp::create(b, word, c32(int64_t(mask)));
      if (p.shift)
        v = arith::ShLIOp::create(b, v, c32(p.shift));
      pair = pair ? arith::OrIOp::create(b, pair, v) : v;
    }
    return pair;
  };
  // Single-plane integer codes without zero points: the pair at bit
  // r = pb % span of the word shifted right by pb - r is masked in place
  // and OR-ed into the magic number's mantissa (magic + code 2^r, exact
  // while r + width fits the mantissa), then one fma by 2^-r subtracts
  // magic 2^-r + zero (exact: every term is an integer below 2^11). One
  // shift per `span` bits of a word instead of one per pair (for 4-bit
  // codes in f16: shifts by 0 and 8 serve all four pairs).
  const unsigned mantissa = bf16 ? 7 : 10;
  const bool inPlace = isInt && w.zeroPoint == hq::ZeroPointKind::None &&
                       planes.size() == 1 && planes[0].shift == 0 &&
                       planes[0].width <= mantissa;
  const unsigned width = planes[0].width;
  const unsigned span = inPlace ? ((mantissa - width) / width + 1) * width : 0;
  auto inPlacePair = [&](int q) -> Value {
    const L::Plane &p = planes[0];
    Value word = planeWords[0][q / int(16 / p.width)];
    unsigned pb = L::pairBit(p, q), r = pb % span;
    if (pb != r)
      word = arith::ShRUIOp::create(b, word, c32(pb - r));
    Value v = asAct2(maskOr(word, (((1u << width) - 1) << r) * 0x10001u,
                            c32(int64_t(magicBits * 0x10001u))));
    if (r == 0)
      return Value(arith::SubFOp::create(b, v, constZero));
    double inv = std::ldexp(1.0, -int(r));
    double offset = -(magic * inv + double(1u << (bits - 1)));
    return Value(LLVM::FMAOp::create(b, v, splatConst(inv),
                                     splatConst(offset)));
  };
  int j = q / 2;
  Value v;
  if (inPlace) {
    v = inPlacePair(q);
  } else if (isInt) {
    v = asAct2(pairBits(q, c32(int64_t(magicBits * 0x10001u))));
    if (w.zeroPoint == hq::ZeroPointKind::Float) {
      v = arith::SubFOp::create(b, v, splatConst(magic));
      v = arith::SubFOp::create(b, v, g.zeroVec[j]);
    } else {
      v = arith::SubFOp::create(
          b, v, w.zeroPoint == hq::ZeroPointKind::Int ? g.zeroVec[j] : constZero);
    }
  } else {
    Value pair = pairBits(q, Value());
    // Float codes: exponent and mantissa moved under the activation's,
    // the sign to bit 15; the value is then off by 2^(bias difference).
    unsigned m = w.type.mantissaBits, e = w.type.exponentBits;
    unsigned actM = bf16 ? 7 : 10;
    uint32_t magMask = ((1u << (e + m)) - 1) * 0x10001u;
    uint32_t signMask = (1u << (e + m)) * 0x10001u;
    Value mag = arith::ShLIOp::create(
        b, arith::AndIOp::create(b, pair, c32(int64_t(magMask))),
        c32(actM - m));
    Value sign = arith::ShLIOp::create(
        b, arith::AndIOp::create(b, pair, c32(int64_t(signMask))),
        c32(15 - (e + m)));
    v = asAct2(arith::OrIOp::create(b, mag, sign));
    int actBias = bf16 ? 127 : 15;
    v = arith::MulFOp::create(
        b, v, splatConst(std::ldexp(1.0, actBias - w.type.bias())));
  }
  if (perKScales && !postScale)
    v = arith::MulFOp::create(b, v, g.scaleVec[j]);
  else if (loopChannelScales)
    v = arith::MulFOp::create(b, v, channelScaleVec[j]);
  return bf16 ? asI32(v) : v;
}

SmallVector<Value> PreparedEmitter::compute(ArrayRef<Value> accIn,
                                            ArrayRef<Value> stage) {
  SmallVector<Value> accs(accIn.begin(), accIn.end());
  size_t cursor = 0;
  auto next = [&] {
    assert(cursor < stage.size() && "the slot holds fewer words than read");
    return stage[cursor++];
  };
  // scale_after_mma: the iteration's unscaled sums (from zero).
  SmallVector<Value> sums;
  if (postScale)
    sums.assign(accs.size(), cf(0.0));
  beginDequant();
  Type accStruct = LLVM::LLVMStructType::getLiteral(b.getContext(),
                                                    SmallVector<Type>(4, f32));
  GroupData group;
  for (int64_t u = 0; u < tile.kTilesPerWarp; ++u) {
    // Words of this tile, plane by plane.
    SmallVector<SmallVector<Value>> planeWords;
    for (const L::Plane &p : planes) {
      SmallVector<Value> words;
      for (unsigned i = 0; i < p.width; ++i)
        words.push_back(next());
      planeWords.push_back(words);
    }
    SmallVector<Value> a;
    for (int64_t i = 0; i < 4 * mt; ++i)
      a.push_back(next()); // zero-filled outside [0, M) x [0, K)
    if (u == 0 || !groupPerIter)
      readGroup(next, group);
    SmallVector<Value> aOps;
    VectorType f16x2 = VectorType::get({2}, b.getF16Type());
    for (Value v : a)
      aOps.push_back(bf16 ? v : Value(LLVM::BitcastOp::create(b, f16x2, v)));
    auto types = bf16 ? std::array<NVVM::MMATypes, 2>{NVVM::MMATypes::bf16,
                                                       NVVM::MMATypes::bf16}
                      : std::array<NVVM::MMATypes, 2>{NVVM::MMATypes::f16,
                                                       NVVM::MMATypes::f16};
    // Accumulators per MMA: four f32, or two f16x2 with f16 accumulation.
    const int64_t perMma = spec.f16Accumulation ? 2 : 4;
    Type resultStruct = accStruct;
    if (spec.f16Accumulation)
      resultStruct = LLVM::LLVMStructType::getLiteral(
          b.getContext(), SmallVector<Type>(2, f16x2));
    // The MMAs add into the accumulators, or with scale_after_mma into the
    // iteration's unscaled sums.
    SmallVector<Value> &into = postScale ? sums : accs;
    for (int j = 0; j < 8; ++j) {
      SmallVector<Value> bOps = {dequantPair(planeWords, group, 2 * j),
                                 dequantPair(planeWords, group, 2 * j + 1)};
      for (int64_t i = 0; i < mt; ++i) {
        size_t base = size_t((i * 8 + j) * perMma);
        SmallVector<Value> acc(into.begin() + base, into.begin() + base + perMma);
        auto mma = NVVM::MmaOp::create(
            b, resultStruct, ArrayRef<Value>(aOps).slice(4 * i, 4), bOps, acc,
            ArrayRef<int64_t>{16, 8, 16}, std::nullopt, std::nullopt, types,
            std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                           NVVM::MMALayout::col});
        for (int64_t e = 0; e < perMma; ++e)
          into[base + e] = LLVM::ExtractValueOp::create(b, mma.getResult(), e);
      }
    }
  }
  if (postScale) {
    // accumulator += sum x scale of its column (f32 fma); C element e of MMA
    // (i, j) is row g + 8 (e / 2), column 8 j + 2 q + e % 2.
    for (size_t k = 0; k < accs.size(); ++k) {
      int64_t e = int64_t(k % 4), j = int64_t(k / 4) % 8;
      if (lowRowsOnly && e >= 2)
        continue; // rows g + 8: padding in a tile of at most 8 tokens
      accs[k] = LLVM::FMAOp::create(b, sums[k], group.columnScale[size_t(2 * j + e % 2)],
                                    accs[k]);
    }
  }
  return accs;
}

SmallVector<Value> PreparedEmitter::wgmmaZeroSums() {
  // warp_m / 2 f32 per n-tile: wgmma's D fragment of m64 n(warp_m).
  return SmallVector<Value>(size_t(tile.warpM / 2 * tile.nTilesPerGroup),
                            cf(0.0));
}

void PreparedEmitter::emitWgmmaLoop(Value first) {
  if (tile.warpSpecialized)
    return emitWarpSpecializedLoop(first);
  // wgmmas read their slot and their A registers asynchronously. An
  // iteration waits for the previous one's wgmmas (wgmma.wait_group 0)
  // before its dequantization rewrites their fragment registers (the
  // loop's registers are the same each iteration; keeping them in flight
  // through the next iteration's dequantization, with the body unrolled
  // twice for registers of its own, made ptxas serialize every wgmma).
  // They run on over the next iteration's barrier, shared loads and
  // copies. A slot is thus refilled two iterations after it was read: every
  // warp's wait in the iteration between has seen its wgmmas complete,
  // and the refill's barrier orders it after all of them. Copies run
  // S - 2 iterations ahead.
  auto init = [&] { return wgmmaZeroSums(); };
  auto publish = [&] {
    // cp.async writes in the generic proxy, wgmma reads shared memory in
    // the async proxy: each thread's landed copies are fenced across, then
    // the barrier publishes them to the block.
    asmStatement("fence.proxy.async.shared::cta;");
    gpu::BarrierOp::create(b);
  };
  SmallVector<Value> acc = pipelineLoop(
      first, /*lag=*/2, init, publish,
      [&](Value it, ArrayRef<Value> accs, function_ref<void()> issueAhead) {
        // The shared loads go ahead of the copies: behind them they wait
        // on the copies' turn in the LSU pipe (H200 8192^2 M = 8192:
        // 2789 -> 2659 us with 32 of K per iteration, 2858 -> 2522 with 64).
        Value slot = arith::RemUIOp::create(b, it, c32(tile.stages));
        Stage data = readSlot(slot);
        issueAhead();
        SmallVector<Value> done =
            tiedAsm("wgmma.wait_group.sync.aligned 0;", accs);
        return computeWgmma(done, data, slot);
      });
  acc = tiedAsm("wgmma.wait_group.sync.aligned 0;", acc);
  NVVM::CpAsyncWaitGroupOp::create(b, b.getI32IntegerAttr(0));
  finishWgmma(acc);
}

Value PreparedEmitter::inputMapAddress() {
  auto module =
      b.getInsertionBlock()->getParentOp()->getParentOfType<gpu::GPUModuleOp>();
  auto decl = module.lookupSymbol<LLVM::LLVMFuncOp>(kInputMapPlaceholder);
  if (!decl) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(module.getBody());
    // A generic pointer: the parameter's address (cvta.param).
    decl = LLVM::LLVMFuncOp::create(
        b, kInputMapPlaceholder,
        LLVM::LLVMFunctionType::get(LLVM::LLVMPointerType::get(b.getContext()),
                                    {}));
  }
  return LLVM::CallOp::create(b, decl, ValueRange{}).getResult();
}

Value PreparedEmitter::mbarrierAt(Value slot, int64_t which) {
  // After the slots: [slot][full, empty] x 8 bytes.
  return arith::AddIOp::create(
      b, smemAddr,
      arith::AddIOp::create(
          b, c32(mbarrierOffset() + which * 8),
          arith::MulIOp::create(b, slot, c32(16))));
}

void PreparedEmitter::mbarrierWait(Value bar, Value parity) {
  // Spins on try_wait (which itself suspends a while) until the phase of
  // `parity` has completed; acquire semantics order the reads after it.
  inlineAsm(TypeRange(), ValueRange{bar, parity},
            "{\n.reg .pred done;\nwait:\n"
            "mbarrier.try_wait.parity.shared::cta.b64 done, [$0], $1;\n"
            "@!done bra wait;\n}",
            "r,r");
}

void PreparedEmitter::mbarrierArrive(Value bar) {
  // Release semantics: this thread's earlier writes (and, after its
  // fence.proxy.async, its landed copies) happen before the phase ends.
  inlineAsm(TypeRange(), ValueRange{bar},
            "{\n.reg .b64 state;\n"
            "mbarrier.arrive.shared::cta.b64 state, [$0];\n}",
            "r");
}

void PreparedEmitter::emitWarpSpecializedLoop(Value first) {
  // The producer warpgroup (threads mathThreads() ..+128) issues every
  // copy; the consumer warpgroups load, dequantize and run the wgmmas.
  // Slot s has a full mbarrier (128 arrivals: the producers, each after
  // its copies of the fill landed and were fenced into the async proxy)
  // and an empty one (one arrival per consumer thread, once the wgmmas
  // that read the slot completed). Fill f of slot f % S waits for the
  // release of use f - S; a producer keeps D = S - 2 fills in flight
  // before it waits for the oldest (cp.async.wait_group D) and arrives on
  // its full barrier. A consumer releases use u after the wgmma wait of
  // iteration u + 1, which follows its wait for fill u + 1: that fill
  // needs the release of use u + 1 + D - S < u + 1 only, so D <= S - 2
  // cannot deadlock. With bulk fills (layout::ws::bulkFills) producer 0
  // announces every byte of fill f as the full barrier's one arrival when
  // it issues it; the phase ends when the bytes land, and nothing waits
  // for older fills.
  // The formulas of layout::ws, built in IR (the iteration is a runtime
  // value); PreparedLayoutTest checks the protocol itself.
  const int64_t S = tile.stages, D = L::ws::fillsInFlight(S),
                iters = ctaIterations;
  const int64_t producers = tile.producerThreads(),
                consumers = tile.mathThreads();
  // Registers (layout::ws::registerSplit): the block starts with the
  // kernel's .maxnreg each (168 for two consumer warpgroups and one CTA
  // per SM); the producers give theirs down to 56 and the consumers take
  // the rest (224 for two warpgroups: the loop of the 128-token tile
  // assembles without spills).
  const L::ws::RegisterSplit regs =
      L::ws::registerSplit(producers, consumers, tile.ctasPerSm);
  const int64_t producerRegs = regs.producer, consumerRegs = regs.consumer;
  const bool rebalance = regs.rebalance;
  const bool bulk = bulkFills();
  {
    // Thread 0 initializes the barriers; the block barrier publishes them.
    auto ifOp = scf::IfOp::create(
        b, arith::CmpIOp::create(b, arith::CmpIPredicate::eq, tid, c32(0)),
        /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    for (int64_t st = 0; st < S; ++st)
      for (auto [which, count] :
           {std::pair<int64_t, int64_t>{0, L::ws::fullArrivals(producers, bulk)},
            {1, consumers}})
        inlineAsm(TypeRange(), ValueRange{mbarrierAt(c32(st), which),
                                          c32(count)},
                  "mbarrier.init.shared::cta.b64 [$0], $1;", "r,r");
    asmStatement("fence.mbarrier_init.release.cluster;");
  }
  gpu::BarrierOp::create(b);
  Value lb = arith::ConstantIndexOp::create(b, 0);
  Value ub = arith::ConstantIndexOp::create(b, iters);
  Value one = arith::ConstantIndexOp::create(b, 1);
  auto isProducer = arith::CmpIOp::create(b, arith::CmpIPredicate::uge, tid,
                                          c32(consumers));
  auto role = scf::IfOp::create(b, isProducer, /*withElseRegion=*/true);
  auto landed = [&](Value fill, int64_t pending) {
    NVVM::CpAsyncWaitGroupOp::create(b, b.getI32IntegerAttr(int32_t(pending)));
    asmStatement("fence.proxy.async.shared::cta;");
    mbarrierArrive(mbarrierAt(arith::RemUIOp::create(b, fill, c32(S)), 0));
  };
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(role.thenBlock());
    if (rebalance)
      asmStatement(("setmaxnreg.dec.sync.aligned.u32 " +
                    Twine(producerRegs) + ";").str());
    if (tile.tmaActivations)
      // The thread that issues the tensor copies fetches their map first.
      onFirstCopier([&] {
        inlineAsm(
            TypeRange(),
            ValueRange{LLVM::PtrToIntOp::create(b, i64, inputMapAddress())},
            "prefetch.tensormap [$0];", "l");
      });
    auto fillLoop = [&] {
      auto loop = scf::ForOp::create(b, lb, ub, one);
      {
        OpBuilder::InsertionGuard inner(b);
        b.setInsertionPointToStart(loop.getBody());
        Value f = index32(loop.getInductionVar());
        Value slot = arith::RemUIOp::create(b, f, c32(S));
        auto refill = scf::IfOp::create(
            b, arith::CmpIOp::create(b, arith::CmpIPredicate::uge, f, c32(S)),
            /*withElseRegion=*/false);
        {
          OpBuilder::InsertionGuard g(b);
          b.setInsertionPointToStart(refill.thenBlock());
          Value use = arith::SubIOp::create(
              b, arith::DivUIOp::create(b, f, c32(S)), c32(1));
          mbarrierWait(mbarrierAt(slot, 1),
                       arith::AndIOp::create(b, use, c32(1)));
        }
        issueCopies(arith::AddIOp::create(b, first, f), slot);
        if (!bulk) {
          auto old = scf::IfOp::create(
              b, arith::CmpIOp::create(b, arith::CmpIPredicate::uge, f, c32(D)),
              /*withElseRegion=*/false);
          OpBuilder::InsertionGuard g(b);
          b.setInsertionPointToStart(old.thenBlock());
          landed(arith::SubIOp::create(b, f, c32(D)), D);
        }
      }
      // The last D fills (fewer when the CTA has fewer iterations).
      if (!bulk)
        for (int64_t f = std::max<int64_t>(0, iters - D); f < iters; ++f)
          landed(c32(f), iters - 1 - f);
    };
    // Bulk fills: producer 0 alone runs the loop. Another producer would
    // only wait on the empty barriers, arriving nowhere, and could fall
    // two phases behind one, where its parity wait no longer returns
    // (PreparedLayoutTest's model finds that).
    if (bulk)
      onFirstCopier(fillLoop);
    else
      fillLoop();
    // The consumers' cluster reduction waits for every thread of the
    // cluster three times (clusterReduce).
    if (clustered())
      for (int i = 0; i < 3; ++i)
        clusterBarrier();
  }
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(role.elseBlock());
    if (rebalance)
      asmStatement(("setmaxnreg.inc.sync.aligned.u32 " +
                    Twine(consumerRegs) + ";").str());
    auto loop = scf::ForOp::create(b, lb, ub, one, wgmmaZeroSums());
    {
      OpBuilder::InsertionGuard inner(b);
      b.setInsertionPointToStart(loop.getBody());
      Value it = index32(loop.getInductionVar());
      SmallVector<Value> accs(loop.getRegionIterArgs().begin(),
                              loop.getRegionIterArgs().end());
      Value slot = arith::RemUIOp::create(b, it, c32(S));
      mbarrierWait(mbarrierAt(slot, 0),
                   arith::AndIOp::create(
                       b, arith::DivUIOp::create(b, it, c32(S)), c32(1)));
      Stage data = readSlot(slot);
      // The previous iteration's wgmmas are done with its slot: release
      // it where a later fill waits for it.
      auto releasePrevious = [&] {
        Value prev = arith::SubIOp::create(b, it, c32(1));
        auto release = scf::IfOp::create(
            b,
            arith::AndIOp::create(
                b,
                arith::CmpIOp::create(b, arith::CmpIPredicate::uge, it, c32(1)),
                arith::CmpIOp::create(b, arith::CmpIPredicate::slt,
                                      arith::AddIOp::create(b, prev, c32(S)),
                                      c32(iters))),
            /*withElseRegion=*/false);
        OpBuilder::InsertionGuard g(b);
        b.setInsertionPointToStart(release.thenBlock());
        mbarrierArrive(mbarrierAt(arith::RemUIOp::create(b, prev, c32(S)), 1));
      };
      if (tile.wgmmaInFlight == 0) {
        SmallVector<Value> done =
            tiedAsm("wgmma.wait_group.sync.aligned 0;", accs);
        releasePrevious();
        scf::YieldOp::create(b, computeWgmma(done, data, slot));
      } else {
        // wgmma_in_flight = 1: the previous iteration's wgmmas run on
        // while this one's first k-tile is dequantized and issued; then
        // every group but that newest one is complete (wait_group 1: not
        // tied to the sums, which the newest group still writes) and the
        // previous slot is released.
        scf::YieldOp::create(b, computeWgmma(accs, data, slot, [&] {
                               asmStatement("wgmma.wait_group.sync.aligned 1;");
                               releasePrevious();
                             }));
      }
    }
    SmallVector<Value> acc(loop.getResults().begin(), loop.getResults().end());
    acc = tiedAsm("wgmma.wait_group.sync.aligned 0;", acc);
    finishWgmma(acc);
  }
}

SmallVector<Value> PreparedEmitter::pipelineLoop(
    Value first, int64_t lag, function_ref<SmallVector<Value>()> init,
    function_ref<void()> publish,
    function_ref<SmallVector<Value>(Value, ArrayRef<Value>,
                                    function_ref<void()>)>
        step) {
  const int64_t S = tile.stages;
  // Prologue: iterations 0 .. S - lag - 1, one commit group each. With
  // exact K the iterations past the CTA's end copy nothing (their groups
  // are empty). With programmatic dependent launch the prologue's constants
  // go first, uncommitted (they join group 0), while the previous kernel on
  // the stream may still run; its outputs — this kernel's activations — are
  // read only after griddepcontrol.wait.
  if (prefetchesBeforeWait()) {
    copyPart = CopyPart::Constants;
    for (int64_t st = 0; st < S - lag && !(exactK && st >= ctaIterations); ++st)
      issueCopies(arith::AddIOp::create(b, first, c32(st)), c32(st), Value(),
                  /*commit=*/false);
  }
  // l2_prefetch: the iterations after the prologue's, up to the distance
  // (weights: before the wait too).
  for (int64_t d = 0; d < tile.l2Prefetch; ++d)
    prefetchWeightsL2(first, c32(S - lag + d));
  if (prefetchesBeforeWait()) {
    waitForPrerequisites();
    copyPart = CopyPart::Inputs;
  }
  for (int64_t st = 0; st < S - lag; ++st) {
    if (exactK && st >= ctaIterations)
      NVVM::CpAsyncCommitGroupOp::create(b);
    else
      issueCopies(arith::AddIOp::create(b, first, c32(st)), c32(st));
  }
  copyPart = CopyPart::All;
  SmallVector<Value> initial = init();
  Value lb = arith::ConstantIndexOp::create(b, 0);
  Value ub = arith::ConstantIndexOp::create(b, ctaIterations);
  Value one = arith::ConstantIndexOp::create(b, 1);
  auto loop = scf::ForOp::create(b, lb, ub, one, initial);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value it = index32(loop.getInductionVar());
    SmallVector<Value> accs(loop.getRegionIterArgs().begin(),
                            loop.getRegionIterArgs().end());
    // l2_prefetch: the weights l2_prefetch iterations beyond those this
    // iteration copies (it + S - lag).
    if (tile.l2Prefetch > 0)
      prefetchWeightsL2(
          first, arith::AddIOp::create(b, it, c32(S - lag + tile.l2Prefetch)));
    // Groups committed so far: S - lag + it; iteration it's group is
    // complete when at most S - lag - 1 are pending.
    NVVM::CpAsyncWaitGroupOp::create(
        b, b.getI32IntegerAttr(int32_t(S - lag - 1)));
    publish();
    auto issueAhead = [&] {
      Value ahead = arith::AddIOp::create(b, it, c32(S - lag));
      Value inside = exactK ? Value(arith::CmpIOp::create(
                                  b, arith::CmpIPredicate::slt, ahead,
                                  c32(ctaIterations)))
                            : Value();
      issueCopies(arith::AddIOp::create(b, first, ahead),
                  arith::RemUIOp::create(b, ahead, c32(S)), inside);
    };
    accs = step(it, accs, issueAhead);
    scf::YieldOp::create(b, accs);
  }
  return SmallVector<Value>(loop.getResults().begin(), loop.getResults().end());
}

LLVM::InlineAsmOp PreparedEmitter::inlineAsm(TypeRange results,
                                             ValueRange operands,
                                             StringRef text,
                                             StringRef constraints,
                                             bool sideEffects) {
  return LLVM::InlineAsmOp::create(
      b, results, operands, text, constraints, sideEffects,
      /*is_align_stack=*/false, LLVM::tailcallkind::TailCallKind::None,
      LLVM::AsmDialectAttr::get(b.getContext(), LLVM::AsmDialect::AD_ATT),
      ArrayAttr());
}

Value PreparedEmitter::maskOr(Value x, uint32_t mask, Value orValue) {
  // LUT 0xEA = (a & b) | c; pure, so LLVM may move and merge it.
  return inlineAsm(TypeRange{i32}, ValueRange{x, c32(int64_t(mask)), orValue},
                   "lop3.b32 $0, $1, $2, $3, 0xEA;", "=r,r,n,r",
                   /*sideEffects=*/false)
      .getResult(0);
}

void PreparedEmitter::asmStatement(StringRef text) {
  inlineAsm(TypeRange(), ValueRange(), text, "");
}

SmallVector<Value> PreparedEmitter::tiedAsm(StringRef text,
                                            ArrayRef<Value> vals) {
  std::string constraints;
  SmallVector<Type> types;
  for (Value v : vals) {
    constraints += constraints.empty() ? "" : ",";
    constraints += v.getType() == f32   ? "=f"
                   : v.getType() == i64 ? "=l"
                                        : "=r";
    types.push_back(v.getType());
  }
  for (size_t i = 0; i < vals.size(); ++i)
    constraints += "," + std::to_string(i);
  Type result = types.size() == 1
                    ? types[0]
                    : LLVM::LLVMStructType::getLiteral(b.getContext(), types);
  auto op = inlineAsm(result, vals, text, constraints);
  if (types.size() == 1)
    return {op.getResult(0)};
  SmallVector<Value> out;
  for (size_t i = 0; i < vals.size(); ++i)
    out.push_back(LLVM::ExtractValueOp::create(b, op.getResult(0), int64_t(i)));
  return out;
}

Value PreparedEmitter::activationDescriptor(Value slot, int64_t su) {
  // Bits 0-13: address >> 4; 16-29: the leading byte offset >> 4 (between
  // the core matrices of the two 8-column halves of K: block_m x 16);
  // 32-45: the stride byte offset >> 4 (between 8-token groups: 128);
  // 62-63: no swizzle.
  Value byte = arith::AddIOp::create(
      b, arith::MulIOp::create(b, slot, c32(coop.total())),
      arith::AddIOp::create(
          b, c32(su * tile.blockM() * 32),
          arith::MulIOp::create(b, warpMi, c32(tile.warpM * 16))));
  Value addr = arith::AddIOp::create(b, smemAddr, byte);
  Value lo = arith::AndIOp::create(
      b, arith::ShRUIOp::create(b, addr, c32(4)), c32(0x3FFF));
  const uint64_t fixed = (uint64_t(tile.blockM() * 16 / 16) << 16) |
                         (uint64_t(128 / 16) << 32);
  return arith::OrIOp::create(b, ext64(lo), c64(int64_t(fixed)));
}

SmallVector<Value> PreparedEmitter::wgmmaFragment(
    ArrayRef<SmallVector<Value>> planeWords, const GroupData &g) {
  SmallVector<Value> a;
  for (int q : {0, 2, 1, 3}) {
    Value v = dequantPair(planeWords, g, q);
    a.push_back(v.getType() == i32 ? v : asI32(v));
  }
  return a;
}

SmallVector<Value> PreparedEmitter::computeWgmma(ArrayRef<Value> accIn,
                                                 ArrayRef<Value> stage,
                                                 Value slot,
                                                 function_ref<void()> afterFirst) {
  SmallVector<Value> accs(accIn.begin(), accIn.end());
  size_t cursor = 0;
  auto next = [&] {
    assert(cursor < stage.size() && "the slot holds fewer words than read");
    return stage[cursor++];
  };
  beginDequant();
  const int64_t nT = tile.nTilesPerGroup, n = tile.warpM, perTile = n / 2;
  const char *type = bf16 ? "bf16" : "f16";
  // d (perTile f32), a (4 x b32), the descriptor; scale-d = 1 (accumulate),
  // scale-a = scale-b = 1, B not transposed (K-major).
  // scale-d is a predicate: set from operand $(perTile + 5) (1).
  std::string text = "{\n.reg .pred p;\nsetp.ne.b32 p, $" +
                     std::to_string(perTile + 5) +
                     ", 0;\nwgmma.mma_async.sync.aligned.m64n" +
                     std::to_string(n) + "k16.f32." + type + "." + type + " {";
  for (int64_t i = 0; i < perTile; ++i)
    text += (i ? ", $" : "$") + std::to_string(i);
  text += "}, {$" + std::to_string(perTile) + ", $" +
          std::to_string(perTile + 1) + ", $" + std::to_string(perTile + 2) +
          ", $" + std::to_string(perTile + 3) + "}, $" +
          std::to_string(perTile + 4) + ", p, 1, 1, 0;\n}";
  std::string constraints;
  for (int64_t i = 0; i < perTile; ++i)
    constraints += (i ? ",=f" : "=f");
  constraints += ",r,r,r,r,l,n";
  for (int64_t i = 0; i < perTile; ++i)
    constraints += "," + std::to_string(i);
  Type result = LLVM::LLVMStructType::getLiteral(
      b.getContext(), SmallVector<Type>(size_t(perTile), f32));
  SmallVector<GroupData> groups(static_cast<size_t>(nT));
  const int64_t kT = tile.kTilesPerWarp;
  // Per k-tile: every n-tile's A fragment and the descriptor, a fence, the
  // wgmmas, a commit. The fragments of k-tile u + 1 are dequantized while
  // k-tile u's wgmmas run (each k-tile's fragments are registers of their
  // own). Tying the fragments, the descriptor and the accumulators to the
  // fence keeps their definitions above it.
  for (int64_t u = 0; u < kT; ++u) {
    SmallVector<Value> regs;
    for (int64_t t = 0; t < nT; ++t) {
      // The warp's words of each plane (readWgmmaSlot): W / 4, or one.
      SmallVector<SmallVector<Value>> planeWords;
      for (const L::Plane &p : planes) {
        SmallVector<Value> words;
        for (unsigned i = 0; i < std::max(1u, p.width / 4); ++i)
          words.push_back(next());
        planeWords.push_back(words);
      }
      if (u == 0 || !groupPerIter)
        readGroup(next, groups[size_t(t)]);
      SmallVector<Value> a = wgmmaFragment(planeWords, groups[size_t(t)]);
      regs.append(a.begin(), a.end());
    }
    regs.push_back(activationDescriptor(slot, u));
    regs.append(accs.begin(), accs.end());
    regs = tiedAsm("wgmma.fence.sync.aligned;", regs);
    const size_t accAt = size_t(nT * 4 + 1);
    for (size_t i = 0; i < accs.size(); ++i)
      accs[i] = regs[accAt + i];
    for (int64_t t = 0; t < nT; ++t) {
      SmallVector<Value> operands(regs.begin() + 4 * t,
                                  regs.begin() + 4 * t + 4);
      operands.push_back(regs[size_t(nT * 4)]);
      operands.push_back(c32(1));
      operands.append(accs.begin() + t * perTile,
                      accs.begin() + (t + 1) * perTile);
      auto op = inlineAsm(result, operands, text, constraints);
      for (int64_t i = 0; i < perTile; ++i)
        accs[size_t(t * perTile + i)] =
            LLVM::ExtractValueOp::create(b, op.getResult(0), i);
    }
    asmStatement("wgmma.commit_group.sync.aligned;");
    if (u == 0 && afterFirst)
      afterFirst();
  }
  return accs;
}

void PreparedEmitter::finishWgmma(ArrayRef<Value> acc) {
  if (clustered())
    return clusterReduce(acc);
  if (split.ctas > 1)
    return wgmmaReduceAcrossCtas(acc);
  // Rows jj = q of every n-tile and half: D element 4 jj + 2 half + e.
  const int64_t perTile = tile.warpM / 2;
  storeWgmma(
      tile.warpM / 8, [&](int64_t q) { return c32(q); },
      [&](int64_t t, int64_t half, int64_t q, Value, int64_t e) {
        return acc[size_t(t * perTile + 4 * q + 2 * half + e)];
      });
}

void PreparedEmitter::onFirstCopier(function_ref<void()> body) {
  auto ifOp = scf::IfOp::create(
      b, arith::CmpIOp::create(b, arith::CmpIPredicate::eq, copyTid, c32(0)),
      /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  body();
}

void PreparedEmitter::clusterBarrier() {
  asmStatement("barrier.cluster.arrive.release;");
  asmStatement("barrier.cluster.wait.acquire;");
}

void PreparedEmitter::storeSharedF32(Value addr, Value v) {
  inlineAsm(TypeRange(), ValueRange{addr, v}, "st.shared.f32 [$0], $1;",
            "r,f");
}

Value PreparedEmitter::loadClusterF32(Value local, Value rank) {
  return inlineAsm(f32, ValueRange{local, rank},
                   "{\n.reg .b32 remote;\n"
                   "mapa.shared::cluster.u32 remote, $1, $2;\n"
                   "ld.shared::cluster.f32 $0, [remote];\n}",
                   "=f,r,r")
      .getResult(0);
}

void PreparedEmitter::clusterReduce(ArrayRef<Value> acc) {
  const int64_t C = split.ctas, T = tile.mathThreads();
  const int64_t perTile = tile.warpM / 2;
  // Every thread of the CTA is done with the pipeline's shared memory.
  clusterBarrier();
  // Sum i of consumer thread `tid` at word i * T + tid: the stores of a
  // warp are consecutive words.
  auto wordOf = [&](Value i) {
    return arith::AddIOp::create(
        b, smemAddr,
        arith::MulIOp::create(
            b, arith::AddIOp::create(b, arith::MulIOp::create(b, i, c32(T)),
                                     tid),
            c32(4)));
  };
  for (size_t i = 0; i < acc.size(); ++i)
    storeSharedF32(wordOf(c32(int64_t(i))), acc[i]);
  // Every CTA's sums are visible to the cluster.
  clusterBarrier();
  // CTA r (= its index along z: the cluster spans the grid's z) adds rows
  // jj = r x rows ..+rows (rows = warp_m / 8 / C) of every n-tile and
  // half.
  const int64_t rows = tile.warpM / 8 / C;
  Value firstRow = arith::MulIOp::create(b, bidZ, c32(rows));
  storeWgmma(
      rows, [&](int64_t q) { return arith::AddIOp::create(b, firstRow, c32(q)); },
      [&](int64_t t, int64_t half, int64_t, Value jj, int64_t e) {
        Value i = arith::AddIOp::create(
            b,
            arith::MulIOp::create(b, jj, c32(4)),
            c32(t * perTile + 2 * half + e));
        Value local = wordOf(i), sum;
        for (int64_t z = 0; z < C; ++z) {
          Value x = loadClusterF32(local, c32(z));
          sum = sum ? arith::AddFOp::create(b, sum, x) : x;
        }
        return sum;
      });
  // No CTA leaves while another still reads its shared memory.
  clusterBarrier();
}

void PreparedEmitter::storeWgmma(
    int64_t rows, function_ref<Value(int64_t)> jjOf,
    function_ref<Value(int64_t, int64_t, int64_t, Value, int64_t)> valueOf) {
  const hq::WeightSchema &w = spec.weight;
  bool outBF16 = spec.output == hq::ScalarType::bf16();
  Type outType = outBF16 ? Type(b.getBF16Type()) : Type(b.getF16Type());
  for (int64_t t = 0; t < tile.nTilesPerGroup; ++t) {
    Value nt = arith::AddIOp::create(b, nTile, c32(t));
    for (int64_t half = 0; half < 2; ++half) {
      // D rows 16 w + g + 8 half are the n-tile's columns of that offset.
      Value inTile = arith::AddIOp::create(
          b, arith::MulIOp::create(b, wIn, c32(16)),
          arith::AddIOp::create(b, grp, c32(8 * half)));
      Value col = arith::AddIOp::create(
          b, arith::MulIOp::create(b, nt, c32(64)), inTile);
      Value colOk =
          arith::CmpIOp::create(b, arith::CmpIPredicate::slt, col, c32(spec.nOut));
      Value cc = arith::MinSIOp::create(b, col, c32(spec.nOut - 1));
      Value factor, bias;
      if (w.granularity == hq::Granularity::Channel) {
        // Prepared [1, N] scales: column c of an n-tile at 8 (c % 8) + c / 8.
        Value stored = arith::AddIOp::create(
            b, arith::MulIOp::create(b, nt, c32(64)),
            arith::AddIOp::create(
                b, arith::MulIOp::create(b, grp, c32(8)),
                arith::AddIOp::create(b, arith::MulIOp::create(b, wIn, c32(2)),
                                      c32(half))));
        factor = loadAsF32(param(hq::abi::ParamScales), ext64(stored),
                           w.scaleType);
      }
      outputFactors(factor, bias, cc);
      for (int64_t q = 0; q < rows; ++q)
        for (int64_t e = 0; e < 2; ++e) {
          // D element 4 jj + 2 half + e: token 8 jj + 2 quad + e.
          Value jj = jjOf(q);
          Value v = valueOf(t, half, q, jj, e);
          Value token = arith::AddIOp::create(
              b, m0,
              arith::AddIOp::create(
                  b, arith::MulIOp::create(b, quad, c32(2)),
                  arith::AddIOp::create(b, arith::MulIOp::create(b, jj, c32(8)),
                                        c32(e))));
          Value ok = arith::AndIOp::create(
              b, colOk,
              arith::CmpIOp::create(b, arith::CmpIPredicate::slt, token, m));
          Value bits = outputBits(v, factor, bias, outType);
          auto ifOp = scf::IfOp::create(b, ok, /*withElseRegion=*/false);
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToStart(ifOp.thenBlock());
          Value index = arith::AddIOp::create(
              b, arith::MulIOp::create(b, sext64(token), c64(spec.nOut)),
              ext64(col));
          store(bits, param(hq::abi::ParamOutput), index);
        }
    }
  }
}

void PreparedEmitter::storeUnit(int64_t unit, Value v0, Value v1) {
  const hq::WeightSchema &w = spec.weight;
  const int64_t i = unit / 16, j = (unit / 2) % 8, half = unit % 2;
  bool outBF16 = spec.output == hq::ScalarType::bf16();
  Type outType = outBF16 ? Type(b.getBF16Type()) : Type(b.getF16Type());
  bool pairedStores = spec.nOut % 2 == 0;
  Value nBase = arith::MulIOp::create(b, nTile, c32(64));
  // Columns 64 nTile + 8 j + 2 quad + {0, 1}: their per-column factors.
  Value col = arith::AddIOp::create(
      b, nBase,
      arith::AddIOp::create(b, c32(8 * j),
                            arith::MulIOp::create(b, quad, c32(2))));
  Value colOk = arith::CmpIOp::create(b, arith::CmpIPredicate::slt, col,
                                      c32(spec.nOut));
  Value row = arith::AddIOp::create(
      b, m0, arith::AddIOp::create(b, grp, c32(16 * i + 8 * half)));
  Value rowOk = arith::CmpIOp::create(b, arith::CmpIPredicate::slt, row, m);
  Value vals[2] = {v0, v1};
  SmallVector<Value> outs;
  for (int64_t e = 0; e < 2; ++e) {
    Value c = arith::AddIOp::create(b, col, c32(e));
    Value cc = arith::MinSIOp::create(b, c, c32(spec.nOut - 1));
    Value factor, bias;
    if (w.granularity == hq::Granularity::Channel && !loopChannelScales) {
      // Prepared [1, N] scales, permuted: column 8 j + 2 quad + e of the
      // n-tile is stored at 8 (2 quad + e) + j.
      Value stored = arith::AddIOp::create(
          b, nBase,
          arith::AddIOp::create(
              b,
              arith::MulIOp::create(
                  b, arith::AddIOp::create(
                         b, arith::MulIOp::create(b, quad, c32(2)), c32(e)),
                  c32(8)),
              c32(j)));
      factor = loadAsF32(param(hq::abi::ParamScales), ext64(stored),
                         w.scaleType);
    }
    outputFactors(factor, bias, cc);
    outs.push_back(arith::ExtUIOp::create(
        b, i32, outputBits(vals[e], factor, bias, outType)));
  }
  Value index = arith::AddIOp::create(
      b, arith::MulIOp::create(b, sext64(row), c64(spec.nOut)), ext64(col));
  if (pairedStores) {
    // Both columns in range together (col even, N even): one 32-bit store.
    auto ifOp = scf::IfOp::create(b, arith::AndIOp::create(b, rowOk, colOk),
                                  /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    Value packed = arith::OrIOp::create(
        b, outs[0], arith::ShLIOp::create(b, outs[1], c32(16)));
    store(packed, param(hq::abi::ParamOutput),
          arith::ShRUIOp::create(b, index, c64(1)));
    return;
  }
  for (int64_t e = 0; e < 2; ++e) {
    Value c = arith::AddIOp::create(b, col, c32(e));
    Value ok = arith::AndIOp::create(
        b, rowOk,
        arith::CmpIOp::create(b, arith::CmpIPredicate::slt, c,
                              c32(spec.nOut)));
    auto ifOp = scf::IfOp::create(b, ok, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    store(arith::TruncIOp::create(b, i16, outs[e]), param(hq::abi::ParamOutput),
          arith::AddIOp::create(b, index, c64(e)));
  }
}

void PreparedEmitter::emit() {
  // Programmatic dependent launch without a prefetch: nothing before the
  // wait.
  if (spec.gridDependency && !prefetchesBeforeWait())
    waitForPrerequisites();
  tid = index32(gpu::ThreadIdOp::create(b, gpu::Dimension::x));
  bidX = index32(gpu::BlockIdOp::create(b, gpu::Dimension::x));
  bidY = index32(gpu::BlockIdOp::create(b, gpu::Dimension::y));
  bidZ = split.ctas > 1 ? index32(gpu::BlockIdOp::create(b, gpu::Dimension::z))
                        : c32(0);
  // This CTA's first iteration (split-K across CTAs).
  Value first = arith::MulIOp::create(b, bidZ, c32(ctaIterations));
  lane = arith::AndIOp::create(b, tid, c32(31));
  copyTid = tile.warpSpecialized
                ? Value(arith::SubIOp::create(b, tid, c32(tile.mathThreads())))
                : tid;
  Value warp = arith::ShRUIOp::create(b, tid, c32(5));
  // This warp's n-tile in the block (wgmma: its warpgroup's first).
  Value nTileInBlock;
  if (tile.wgmma) {
    // Warpgroups along N, then rows along M; four warps each.
    Value group = arith::ShRUIOp::create(b, warp, c32(2));
    wIn = arith::AndIOp::create(b, warp, c32(3));
    groupN = arith::RemUIOp::create(b, group, c32(tile.groupsN()));
    warpMi = arith::DivUIOp::create(b, group, c32(tile.groupsN()));
    warpK = c32(0);
    warpN = groupN;
    nTileInBlock = arith::MulIOp::create(b, groupN, c32(tile.nTilesPerGroup));
  } else {
    warpN = arith::RemUIOp::create(b, warp, c32(tile.warpsN));
    // Warps beyond a row along N: rows along M (cooperative blocks), then
    // K-split groups.
    Value row = arith::DivUIOp::create(b, warp, c32(tile.warpsN));
    if (tile.warpsM > 1) {
      warpMi = arith::RemUIOp::create(b, row, c32(tile.warpsM));
      warpK = arith::DivUIOp::create(b, row, c32(tile.warpsM));
    } else {
      warpMi = c32(0);
      warpK = row;
    }
    nTileInBlock = warpN;
  }
  grp = arith::ShRUIOp::create(b, lane, c32(2));
  quad = arith::AndIOp::create(b, lane, c32(3));
  nTile = arith::AddIOp::create(b, arith::MulIOp::create(b, bidX, c32(tile.warpsN)),
                                nTileInBlock);
  m0 = arith::AddIOp::create(
      b, arith::MulIOp::create(b, bidY, c32(tile.blockM())),
      arith::MulIOp::create(b, warpMi, c32(tile.warpM)));
  m = param(hq::abi::ParamM);
  if (spec.weight.hasGlobalScale())
    global = load(f32, param(hq::abi::ParamGlobalScale), c64(0));
  if (tile.wgmma) {
    smemAddr = LLVM::PtrToIntOp::create(b, i32, smem);
    coop = L::cooperativeSlot(spec.weight, tile);
    return emitLoop(first);
  }

  // This lane's region of the pipeline: warp-major, then slot, chunk, lane.
  laneBase = arith::AddIOp::create(
      b, arith::MulIOp::create(b, warp, c32(tile.stages * chunks * 512)),
      arith::MulIOp::create(b, lane, c32(16)));
  if (tile.cooperative())
    coop = L::cooperativeSlot(spec.weight, tile);
  else
    copyShape = copiesFor(c32(0));
  emitLoop(first);
}

void PreparedEmitter::emitLoop(Value first) {
  if (tile.wgmma)
    return emitWgmmaLoop(first);
  // The cp.async pipeline. cp.async.wait_group orders a lane's own copies;
  // the warp barrier in the loop makes the others' visible (activation
  // tiles, 8-bit weight planes) — cooperative kernels take a block barrier.
  // Iteration it reads slot it % S into registers, issues iteration
  // it + S - 1 into the slot read one iteration ago and computes.
  // Iterations past the end copy nothing (exact K) or clamped, finite
  // weights and zero-filled activations, which add nothing.
  auto init = [&] {
    // f32 accumulators (four per MMA), or f16x2 pairs (two per MMA).
    SmallVector<Value> init;
    if (spec.f16Accumulation) {
      VectorType h2 = VectorType::get({2}, b.getF16Type());
      Value zero = arith::ConstantOp::create(
          b, h2,
          DenseElementsAttr::get(h2, APFloat::getZero(APFloat::IEEEhalf())));
      init.assign(size_t(mt * 16), zero);
    } else {
      init.assign(size_t(mt * 32), cf(0.0));
    }
    if (loopChannelScales) {
      // Prepared [1, N] channel scales: the lane's columns 64 nTile + 8 j +
      // grp are stored at 64 nTile + 8 grp + j, eight contiguous values.
      Value first = arith::AddIOp::create(
          b, arith::MulIOp::create(b, ext64(nTile), c64(64)),
          arith::MulIOp::create(b, ext64(grp), c64(8)));
      for (int64_t j = 0; j < 8; ++j) {
        Value f = loadAsF32(param(hq::abi::ParamScales),
                            arith::AddIOp::create(b, first, c64(j)),
                            spec.weight.scaleType);
        Value h = arith::TruncFOp::create(b, act, f);
        channelScaleVec.push_back(asAct2(splat16(arith::ExtUIOp::create(
            b, i32, arith::BitcastOp::create(b, i16, h)))));
      }
    }
    return init;
  };
  auto publish = [&] {
    if (tile.cooperative()) {
      // Every thread's copies of this slot are visible to the block, and
      // every warp is done reading the slot refilled below (read one
      // iteration ago).
      gpu::BarrierOp::create(b);
    } else if (tile.shareActivations) {
      // The warps of this K group read each other's activation copies:
      // its named barrier (1 + warpK; 0 is the block's) makes every
      // member's landed copies visible to the others, and orders the
      // refill below after every member's reads of that slot (one
      // iteration ago).
      inlineAsm(TypeRange(),
                ValueRange{arith::AddIOp::create(b, warpK, c32(1))},
                "bar.sync $0, " + std::to_string(32 * tile.warpsN) + ";", "r");
    } else {
      // wait_group covers a lane's own copies; ldmatrix reads activation
      // rows other lanes copied, which the warp barrier makes visible.
      NVVM::SyncWarpOp::create(b, c32(-1));
    }
  };
  SmallVector<Value> acc = pipelineLoop(
      first, /*lag=*/1, init, publish,
      [&](Value it, ArrayRef<Value> accs, function_ref<void()> issueAhead) {
        Stage data = readSlot(arith::RemUIOp::create(b, it, c32(tile.stages)));
        issueAhead();
        return compute(accs, data);
      });
  if (spec.f16Accumulation) {
    // Pair r of MMA (i, j) holds row half r: c0,c1 or c2,c3 of the f32 layout.
    SmallVector<Value> wide;
    for (Value pair : acc)
      for (int64_t e = 0; e < 2; ++e)
        wide.push_back(arith::ExtFOp::create(
            b, f32,
            LLVM::ExtractElementOp::create(b, pair, c32(e)).getResult()));
    acc = wide;
  }
  // Drain the copies still in flight (past the end) before the shared
  // memory is reused for the partial sums.
  NVVM::CpAsyncWaitGroupOp::create(b, b.getI32IntegerAttr(0));

  finish(acc, tid);
}

Value PreparedEmitter::owns(int64_t unit) {
  if (tile.kSplit == 1)
    return arith::ConstantIntOp::create(b, i1, 1);
  return arith::CmpIOp::create(b, arith::CmpIPredicate::eq, warpK,
                               c32(unit % tile.kSplit));
}

SmallVector<Value> PreparedEmitter::ifOwned(
    int64_t unit, function_ref<SmallVector<Value>()> body) {
  auto ifOp = scf::IfOp::create(b, TypeRange{f32, f32}, owns(unit),
                                /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  scf::YieldOp::create(b, body());
  b.setInsertionPointToStart(ifOp.elseBlock());
  Value zero = cf(0.0);
  scf::YieldOp::create(b, ValueRange{zero, zero});
  return SmallVector<Value>(ifOp.getResults().begin(), ifOp.getResults().end());
}

void PreparedEmitter::finish(ArrayRef<Value> acc, Value tid) {
  const int64_t perThread = mt * 32;
  const int64_t units = perThread / 2;
  // The output is cut into units of two accumulators (one row, two
  // adjacent columns: one 32-bit store); warp group g of the in-block K
  // split owns the units u with u % kSplit == g, adds that unit's partial
  // sums of every group (in group order, so the result does not depend on
  // timing) and stores it. Every warp does 1/kSplit of the reduction and
  // of the epilogue instead of one warp doing all of it.
  SmallVector<SmallVector<Value>> sums(static_cast<size_t>(units));
  if (tile.kSplit == 1) {
    for (int64_t u = 0; u < units; ++u)
      sums[size_t(u)] = {acc[size_t(2 * u)], acc[size_t(2 * u + 1)]};
  } else {
    gpu::BarrierOp::create(b); // every warp is done with its pipeline
    // [group][warpMi][warpN][accumulator][lane]: a warp's accesses are
    // 128 contiguous bytes, free of bank conflicts.
    auto at = [&](Value group, int64_t index) {
      Value warpOfGroup = arith::AddIOp::create(
          b,
          arith::MulIOp::create(
              b,
              arith::AddIOp::create(
                  b, arith::MulIOp::create(b, group, c32(tile.warpsM)), warpMi),
              c32(tile.warpsN)),
          warpN);
      Value slot = arith::AddIOp::create(
          b,
          arith::MulIOp::create(
              b,
              arith::AddIOp::create(
                  b, arith::MulIOp::create(b, warpOfGroup, c32(perThread)),
                  c32(index)),
              c32(32)),
          lane);
      return LLVM::GEPOp::create(b, smem.getType(), f32, smem, ValueRange{slot});
    };
    for (int64_t i = 0; i < perThread; ++i)
      LLVM::StoreOp::create(b, acc[size_t(i)], at(warpK, i));
    gpu::BarrierOp::create(b);
    for (int64_t u = 0; u < units; ++u)
      sums[size_t(u)] = ifOwned(u, [&] {
        SmallVector<Value> v(2);
        for (int64_t g = 0; g < tile.kSplit; ++g)
          for (int64_t e = 0; e < 2; ++e) {
            Value x = LLVM::LoadOp::create(b, f32, at(c32(g), 2 * u + e));
            v[size_t(e)] = v[size_t(e)] ? arith::AddFOp::create(b, v[size_t(e)], x)
                                        : x;
          }
        return v;
      });
  }
  if (clustered())
    return reduceInCluster(sums);
  if (split.ctas > 1)
    return reduceAcrossCtas(sums, tid);
  for (int64_t u = 0; u < units; ++u) {
    auto ifOp = scf::IfOp::create(b, owns(u), /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    storeUnit(u, sums[size_t(u)][0], sums[size_t(u)][1]);
  }
}

Value PreparedEmitter::groupColumn() {
  return arith::AddIOp::create(
      b,
      arith::MulIOp::create(
          b,
          arith::AddIOp::create(
              b, arith::MulIOp::create(b, warpMi, c32(tile.warpsN)), warpN),
          c32(32)),
      lane);
}

void PreparedEmitter::reduceAcrossCtas(ArrayRef<SmallVector<Value>> sums,
                                       Value tid) {
  const int64_t S = split.ctas;
  const int64_t perThread = mt * 32;
  // One column per thread of a warp group (the groups of an in-block K
  // split own different units and share the columns).
  const int64_t threads = tile.warpsM * tile.warpsN * 32;
  const int64_t units = perThread / 2;
  // Partial sums: the thread of a warp group is [warpMi][warpN][lane].
  Value tileId = outputTile();
  Value column = groupColumn();
  auto slotAt = [&](Value s, Value index) {
    return partialAt(s, index, perThread, threads, column);
  };
  auto slot = [&](Value s, int64_t index) { return slotAt(s, c32(index)); };
  for (int64_t u = 0; u < units; ++u) {
    auto ifOp = scf::IfOp::create(b, owns(u), /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    for (int64_t e = 0; e < 2; ++e)
      LLVM::StoreOp::create(b, sums[size_t(u)][size_t(e)], slot(bidZ, 2 * u + e));
  }
  // Release: the partial sums are visible device-wide before the arrival.
  LLVM::FenceOp::create(b, LLVM::AtomicOrdering::release, "device");
  gpu::BarrierOp::create(b);
  Value flag = LLVM::GEPOp::create(b, smem.getType(), i32, smem,
                                   ValueRange{c32(0)});
  {
    auto ifFirst = scf::IfOp::create(
        b, arith::CmpIOp::create(b, arith::CmpIPredicate::eq, tid, c32(0)),
        /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifFirst.thenBlock());
    Value last = arriveOnTileCounter(tileId);
    LLVM::StoreOp::create(b, arith::ExtUIOp::create(b, i32, last), flag);
  }
  gpu::BarrierOp::create(b);
  Value isLast = arith::CmpIOp::create(
      b, arith::CmpIPredicate::ne, LLVM::LoadOp::create(b, i32, flag), c32(0));
  auto ifSum = scf::IfOp::create(b, isLast, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifSum.thenBlock());
  // Acquire: the other CTAs' partial sums are visible from here on.
  LLVM::FenceOp::create(b, LLVM::AtomicOrdering::acquire, "device");
  // The thread's owned units are u = j x kSplit + warpK: every load of
  // them is issued before the first sum is needed (loads inside each
  // unit's branch waited out one L2 round trip per unit), one CTA after
  // another, summed in split order as before.
  assert(units % tile.kSplit == 0 && "every K-split group owns as many units");
  const int64_t owned = units / tile.kSplit;
  SmallVector<std::array<Value, 2>> total(static_cast<size_t>(owned));
  for (int64_t z = 0; z < S; ++z)
    for (int64_t j = 0; j < owned; ++j)
      for (int64_t e = 0; e < 2; ++e) {
        Value index = arith::AddIOp::create(
            b,
            arith::MulIOp::create(
                b, arith::AddIOp::create(b, c32(j * tile.kSplit), warpK),
                c32(2)),
            c32(e));
        // Written by other CTAs during this launch: through L2 (.cg).
        Value x = LLVM::LoadOp::create(b, f32, slotAt(c32(z), index),
                                       /*alignment=*/4, /*isVolatile=*/true);
        Value &v = total[size_t(j)][size_t(e)];
        v = z ? Value(arith::AddFOp::create(b, v, x)) : x;
      }
  for (int64_t u = 0; u < units; ++u) {
    auto ifOp = scf::IfOp::create(b, owns(u), /*withElseRegion=*/false);
    OpBuilder::InsertionGuard inner(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    const std::array<Value, 2> &v = total[size_t(u / tile.kSplit)];
    storeUnit(u, v[0], v[1]);
  }
}

Value PreparedEmitter::outputTile() {
  return arith::AddIOp::create(
      b, arith::MulIOp::create(b, bidY, c32(spec.np / tile.blockN())), bidX);
}

Value PreparedEmitter::partialAt(Value z, Value index, int64_t sums,
                                 int64_t threads, Value thread) {
  Value row = arith::AddIOp::create(
      b, arith::MulIOp::create(b, ext64(outputTile()), c64(split.ctas)),
      ext64(z));
  Value idx = arith::AddIOp::create(
      b, arith::MulIOp::create(b, row, c64(sums)), ext64(index));
  idx = arith::AddIOp::create(b, arith::MulIOp::create(b, idx, c64(threads)),
                              ext64(thread));
  return LLVM::GEPOp::create(b, ptr, f32, partials, ValueRange{idx});
}

Value PreparedEmitter::arriveOnTileCounter(Value tileId) {
  Value counter =
      LLVM::GEPOp::create(b, ptr, i32, arrivals, ValueRange{ext64(tileId)});
  Value before =
      LLVM::AtomicRMWOp::create(b, LLVM::AtomicBinOp::add, counter, c32(1),
                                LLVM::AtomicOrdering::acq_rel, "device");
  Value last = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, before,
                                     c32(split.ctas - 1));
  // The last arrival resets the counter for the next launch.
  auto ifLast = scf::IfOp::create(b, last, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifLast.thenBlock());
  LLVM::StoreOp::create(b, c32(0), counter);
  return last;
}

void PreparedEmitter::wgmmaReduceAcrossCtas(ArrayRef<Value> acc) {
  const int64_t S = split.ctas, T = tile.mathThreads();
  const int64_t n = int64_t(acc.size()), perTile = tile.warpM / 2;
  // Partial sums: every consumer thread's n sums.
  Value tileId = outputTile();
  auto slot = [&](Value z, int64_t i) {
    return partialAt(z, c32(i), n, T, tid);
  };
  for (int64_t i = 0; i < n; ++i)
    LLVM::StoreOp::create(b, acc[size_t(i)], slot(bidZ, i));
  // Release: the partial sums are visible device-wide before the arrival.
  LLVM::FenceOp::create(b, LLVM::AtomicOrdering::release, "device");
  // The consumers alone (warp-specialized kernels: the producers have
  // left) meet at named barrier 1, which also ORs thread 0's verdict into
  // every consumer: no shared memory (the mbarriers live there).
  Value last;
  {
    auto ifFirst = scf::IfOp::create(
        b, TypeRange{b.getI1Type()},
        arith::CmpIOp::create(b, arith::CmpIPredicate::eq, tid, c32(0)),
        /*withElseRegion=*/true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifFirst.thenBlock());
    scf::YieldOp::create(b, arriveOnTileCounter(tileId));
    b.setInsertionPointToStart(ifFirst.elseBlock());
    scf::YieldOp::create(b, Value(arith::ConstantIntOp::create(b, i1, 0)));
    last = ifFirst.getResult(0);
  }
  Value isLast =
      inlineAsm(i32, ValueRange{arith::ExtUIOp::create(b, i32, last)},
                ("{\n.reg .pred p, q;\nsetp.ne.u32 q, $1, 0;\n"
                 "bar.red.or.pred p, 1, " +
                 Twine(T) + ", q;\nselp.u32 $0, 1, 0, p;\n}")
                    .str(),
                "=r,r")
          .getResult(0);
  auto ifSum = scf::IfOp::create(
      b, arith::CmpIOp::create(b, arith::CmpIPredicate::ne, isLast, c32(0)),
      /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifSum.thenBlock());
  // Acquire: the other CTAs' partial sums are visible from here on.
  LLVM::FenceOp::create(b, LLVM::AtomicOrdering::acquire, "device");
  // Every load of a CTA's sums is issued before the first of them is
  // needed, one CTA after another: loads inside the epilogue's per-column
  // branches waited out one L2 round trip per sum (session 14: 44 us at
  // M = 64 against 27 for the cluster).
  SmallVector<Value> total(acc.size());
  for (int64_t z = 0; z < S; ++z)
    for (int64_t i = 0; i < n; ++i) {
      // Written by other CTAs during this launch: through L2.
      Value x = LLVM::LoadOp::create(b, f32, slot(c32(z), i),
                                     /*alignment=*/4, /*isVolatile=*/true);
      total[size_t(i)] =
          z ? Value(arith::AddFOp::create(b, total[size_t(i)], x)) : x;
    }
  storeWgmma(
      tile.warpM / 8, [&](int64_t q) { return c32(q); },
      [&](int64_t t, int64_t half, int64_t q, Value, int64_t e) {
        return total[size_t(t * perTile + 4 * q + 2 * half + e)];
      });
}

void PreparedEmitter::reduceInCluster(ArrayRef<SmallVector<Value>> sums) {
  const int64_t S = split.ctas;
  const int64_t units = mt * 16;
  // One column per thread of a warp group, as in the workspace: unit u's
  // sum e of column c at word (2u + e) x threads + c.
  const int64_t threads = tile.warpsM * tile.warpsN * 32;
  Value column = groupColumn();
  Value base = LLVM::PtrToIntOp::create(b, i32, smem);
  auto wordOf = [&](int64_t index) {
    return arith::AddIOp::create(
        b, base,
        arith::MulIOp::create(
            b, arith::AddIOp::create(b, c32(index * threads), column),
            c32(4)));
  };
  // Every thread of the CTA is done with the pipeline's (and the in-block
  // split's) shared memory.
  clusterBarrier();
  for (int64_t u = 0; u < units; ++u) {
    auto ifOp = scf::IfOp::create(b, owns(u), /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    for (int64_t e = 0; e < 2; ++e)
      storeSharedF32(wordOf(2 * u + e), sums[size_t(u)][size_t(e)]);
  }
  // Every CTA's sums are visible to the cluster.
  clusterBarrier();
  for (int64_t u = 0; u < units; ++u) {
    // CTA r (its index along z) adds unit u where u % S = r, over the
    // CTAs in rank order (the workspace path's order: the same sums).
    Value mine = arith::AndIOp::create(
        b, owns(u),
        arith::CmpIOp::create(b, arith::CmpIPredicate::eq, bidZ, c32(u % S)));
    auto ifOp = scf::IfOp::create(b, mine, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    Value v[2];
    for (int64_t e = 0; e < 2; ++e)
      for (int64_t z = 0; z < S; ++z) {
        Value x = loadClusterF32(wordOf(2 * u + e), c32(z));
        v[e] = v[e] ? arith::AddFOp::create(b, v[e], x) : x;
      }
    storeUnit(u, v[0], v[1]);
  }
  // No CTA leaves while another still reads its shared memory.
  clusterBarrier();
}

} // namespace

gpu::GPUFuncOp mlir::humming::buildMmaSyncPreparedKernel(
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
  // TMA tensor copies write 128-byte aligned shared memory (the slots are
  // padded to it: CooperativeSlot::padBytes).
  if (tile.tmaActivations && smemGlobal.getAlignment().value_or(0) <
                                 uint64_t(hq::layout::kTensorCopyAlign))
    smemGlobal.setAlignment(hq::layout::kTensorCopyAlign);
  // Split-K across CTAs: the kernel's workspace, module globals (PTX zeroes
  // .global variables at load; every launch leaves the counters at zero).
  LLVM::GlobalOp partialsGlobal, arrivalsGlobal;
  if (split.ctas > 1 && !split.cluster) {
    const int64_t tilesMax = (spec.np / tile.blockN()) *
                             hq::ceilDiv(split.maxM, tile.blockM());
    // A CTA's sums: wgmma, (warp_m / 2) x n-tiles per consumer thread;
    // mma_sync, the accumulators of one K-split group's threads.
    const int64_t perCta =
        tile.wgmma ? tile.warpM / 2 * tile.nTilesPerGroup * tile.mathThreads()
                   : (tile.warpM / 16) * 32 * tile.warpsM * tile.warpsN * 32;
    const int64_t floats = tilesMax * split.ctas * perCta;
    builder.setInsertionPointToEnd(module.getBody());
    auto global = [&](StringRef suffix, Type elem, int64_t count) {
      auto type = LLVM::LLVMArrayType::get(elem, uint64_t(count));
      auto g = LLVM::GlobalOp::create(
          builder, loc, type, /*isConstant=*/false, LLVM::Linkage::Internal,
          (name + suffix).str(), Attribute(), /*alignment=*/16,
          /*addrSpace=*/1);
      OpBuilder::InsertionGuard inner(builder);
      builder.createBlock(&g.getInitializerRegion());
      LLVM::ReturnOp::create(builder, loc,
                             LLVM::ZeroOp::create(builder, loc, type).getResult());
      return g;
    };
    partialsGlobal = global("_partials", builder.getF32Type(), floats);
    arrivalsGlobal = global("_arrivals", builder.getI32Type(), tilesMax);
  }
  builder.setInsertionPointToEnd(module.getBody());
  auto func =
      gpu::GPUFuncOp::create(builder, loc, name, kernelFunctionType(builder));
  func->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), builder.getUnitAttr());
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
    L::ws::RegisterSplit regs = L::ws::registerSplit(
        tile.producerThreads(), tile.mathThreads(), tile.ctasPerSm);
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
  // Inputs are read-only and never alias the output: loads through them
  // may use the read-only data path (ld.global.nc).
  for (unsigned i = 0; i < hq::abi::ParamM; ++i) {
    func.setArgAttr(i, LLVM::LLVMDialect::getNoAliasAttrName(),
                    builder.getUnitAttr());
    if (i != hq::abi::ParamOutput)
      func.setArgAttr(i, LLVM::LLVMDialect::getReadonlyAttrName(),
                      builder.getUnitAttr());
  }
  ImplicitLocOpBuilder b(loc, builder);
  b.setInsertionPointToStart(&func.getBody().front());
  SmallVector<Value> params(func.getArguments().begin(),
                            func.getArguments().end());
  Value smem = LLVM::AddressOfOp::create(b, smemGlobal);
  Value partials, arrivals;
  if (split.ctas > 1 && !split.cluster) {
    partials = LLVM::AddressOfOp::create(b, partialsGlobal);
    arrivals = LLVM::AddressOfOp::create(b, arrivalsGlobal);
  }
  PreparedEmitter emitter(b, spec, tile, params, smem, split, partials,
                          arrivals);
  emitter.emit();
  // The runtime launches it early on the strength of grid_dependency: a
  // kernel without the wait would read the previous kernel's output
  // before it is written.
  if (spec.gridDependency && !emitter.waitsForPrerequisites())
    llvm::report_fatal_error("humming: a grid_dependency kernel without "
                             "griddepcontrol.wait (a bug in the emitter)");
  gpu::ReturnOp::create(b);
  return func;
}
