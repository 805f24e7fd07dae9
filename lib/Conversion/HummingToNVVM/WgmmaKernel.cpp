//===- WgmmaKernel.cpp - wgmma over prepared weights ----------------------===//
//
// The sm_90a wgmma generation of the prepared-layout kernels
// (PreparedEmitter.h). It reuses the copies and the dequantization for the
// transposed product out^T = W X^T: warp w of a warpgroup dequantizes the A
// fragment of rows 16 w ..+16 of each of its group's 64-column n-tiles (its
// pairs 4 w ..+4 of the layout) in registers, the activations are wgmma's B
// operand in the slot (no-swizzle K-major core matrices), and the epilogue
// stores the transposed D fragments (with tma = [a] the activations are
// TMA's swizzled rows instead). Optionally a producer warpgroup issues
// every copy (warp_specialized: full / empty mbarriers per slot, TMA or bulk
// copies), and split_k adds the CTAs' sums through a thread block cluster's
// distributed shared memory or the global workspace.
//
//===----------------------------------------------------------------------===//

#include "PreparedEmitter.h"

using namespace mlir;
using namespace mlir::humming;
namespace hq = ::humming;
namespace L = ::humming::layout;

namespace {

/// The most partial sums (f32, loaded singly or four at a time) a consumer
/// thread has in flight in the workspace split's reduction
/// (wgmmaReduceAcrossCtas). Under ptxas on
/// sm_90a (W4A16 g128): 128 leaves the 128-token tile split two ways at 8
/// bytes of spill (644 with all 256 sums at once) and the 64-token tile
/// split four ways at none (up to 88), and keeps the 64-token tile split
/// two ways (128 sums) in one chunk, 12 bytes. On the H200 (2026-12-03,
/// 8192^2, bench/NOTES.md "M = 33-512") 64 (more chunks, no spill at all)
/// cost that tile 2.0 us at M = 128 (41.2 -> 43.2) while the others gained
/// 1.2-4 us.
constexpr int64_t kReduceInFlight = 128;

class WgmmaEmitter : public PreparedEmitter {
public:
  using PreparedEmitter::PreparedEmitter;

protected:
  Value placeWarps(Value warp) override;
  void prepareSlots(Value warp) override;
  /// The cp.async pipeline with copies S - 2 iterations ahead, or with
  /// warp_specialized the producer / consumer loops.
  void emitLoop(Value first) override;
  /// Chunk c is row r = c % block_m of half h = (c / block_m) % 2, stored
  /// at [u][h][r] x 16 bytes (wgmma's no-swizzle K-major core matrices: 8
  /// rows of 16 bytes each 128 contiguous bytes, the halves of K block_m x
  /// 16 bytes apart); consecutive threads write consecutive 16-byte chunks.
  void activationChunkPlace(Value c, Value &h, Value &r) override;
  Value activationChunkAt(Value slotBase, Value u, Value h, Value r) override;

private:
  /// wgmma, warp_specialized: the producer warpgroup's copy loop and the
  /// consumer warpgroups' loop, synchronised per slot by full / empty
  /// mbarriers.
  void emitWarpSpecializedLoop(Value first);
  /// What the producer and consumer loops share: S slots, D fills in
  /// flight (cp.async producers), the CTA's iterations per tile from
  /// iteration `first`, the register split, the kind of fills; the fills
  /// (uses) of the CTA in all (i32: iters, or iters x tilesHere with
  /// persistent, whose tiles are cta + j ctas); the caller's tile.
  struct WsLoop {
    int64_t S = 0, D = 0, iters = 0;
    Value first;
    L::ws::RegisterSplit regs;
    bool bulk = false, tracked = false;
    Value fills, tilesHere, cta, ctas;
    Value outerX, outerY, outerTiles, outerNTile;
  };
  /// Thread 0 initializes each slot's full and empty mbarrier; the block's
  /// (with multicast_a the cluster's) barrier publishes them.
  void initSlotBarriers(const WsLoop &w);
  /// The CTA's fills, and with persistent its tiles.
  void planPersistent(WsLoop &w);
  /// `body(base)` for each of this CTA's output tiles (made current first).
  void forEachWsTile(const WsLoop &w, function_ref<void(Value)> body);
  /// Use `use`'s slot (i32), once its fill landed (the full barrier's phase
  /// of round use / S).
  Value waitSlotFilled(const WsLoop &w, Value use);
  /// Use `use`'s wgmmas are done with its slot: released where a later fill
  /// waits for it (`first`, if given: the condition that there is such a
  /// use, besides a later fill).
  void releaseSlotUse(const WsLoop &w, Value use, Value first);
  /// The producer warpgroup: its register share and every fill.
  void emitWsProducer(const WsLoop &w);
  /// The consumer warpgroups: their register share, each tile's iterations
  /// and epilogue.
  void emitWsConsumers(const WsLoop &w);
  /// staged_weights (KernelShape::stagedWeights): one output tile's
  /// iterations and epilogue. Iteration i issues its wgmmas over stage
  /// buffer i % 2 and its slot's activations, then, while they run, waits
  /// for fill i + 1 and converts its weights into buffer (i + 1) % 2; then
  /// it waits for its wgmmas, releases its slot (the activations were read
  /// there), folds its sums and meets the warpgroup's named barrier, which
  /// publishes the next buffer (each thread fenced its writes into the
  /// async proxy) and orders every warp's wgmma wait before the buffer's
  /// next rewrite. `base`: as forEachWsTile's.
  void consumeStagedTile(const WsLoop &w, Value base);
  /// staged_weights: the converted weights of `stage` (readWgmmaSlot's
  /// words of one slot) written into the stage buffer at shared byte
  /// `buffer` — each thread's A fragment words at the rows and k bytes
  /// they hold in wgmma's K-major core matrices; returns the iteration's
  /// group scales and per-group token scales (as computeWgmma8 carries
  /// them).
  SmallVector<Value> stageIteration(ArrayRef<Value> stage, Value buffer);
  /// The register path's conversion of one iteration: per k32 step `step`
  /// the n-tiles' A registers (a0..a3 of each, four 8-bit codes each), from
  /// the stage words at `next`, given to `use(step, regs)`; the group
  /// scales (two per n-tile) into `scales`.
  void eightBitSteps(StageCursor &next, MutableArrayRef<Value> scales,
                     function_ref<void(int64_t, ArrayRef<Value>)> use);
  /// The zeroed values a wgmma thread's loop carries: its f32 sums and,
  /// with 8-bit activations, the last iteration's own sums and (group
  /// scales) that iteration's two scales per n-tile (foldIteration).
  SmallVector<Value> wgmmaZeroSums();
  /// The f32 sums of one thread (warp_m / 2 per n-tile).
  int64_t sumCount() const { return tile.warpM / 2 * tile.nTilesPerGroup; }
  /// 8-bit activations: each iteration's wgmmas sum into sums of their
  /// own (scale-d = 0 on its first k32 step), which the next iteration
  /// adds to the running sums after its wgmma wait — times the group scale
  /// of the D row, with group scales. fp8 wgmmas keep fewer bits than f32
  /// in their accumulators: over K = 4096 the H200 lost a factor of 2-3 in
  /// accuracy (relative error 1.3e-3 against 5e-4 with K split four ways),
  /// and group scales need the per-group sums anyway. int8 without group
  /// or per-group activation scales does not promote: its s32 sums are
  /// exact over the whole of K (|a w| <= 2^14 per product; layout::supports
  /// bounds K at 65536), so the wgmmas accumulate into one set of sums
  /// across iterations and a tile holds twice the columns.
  bool promotes() const {
    return hq::layout::wgmmaPromotes(spec.weight, spec.input);
  }
  /// Per-group activation scales: the f32 scales of a thread's tokens (two
  /// per row of eight) that the loop carries with an iteration's sums.
  int64_t tokenScaleCount() const {
    return tile.groupInputScales && !lateTokenScales() ? tile.warpM / 4 : 0;
  }
  /// Per-group activation scales on more than 128 tokens per warpgroup
  /// (the warp-specialized K-major tiles, one promotion per slot): the fold
  /// loads each row of eight tokens' pair of scales from the slot as it
  /// reaches that row, after the iteration's wgmma wait, and the slot is
  /// released after the fold. Carried from before the wgmmas, the 192-token
  /// tile's 48 scales beside its 2 x 96 sums spilled 80 bytes under ptxas.
  bool lateTokenScales() const {
    return tile.groupInputScales && tile.weightsByDescriptor &&
           tile.warpSpecialized && tile.warpM > 128 &&
           tile.promotionInterval == 1;
  }
  /// The shared byte of this thread's first token scale (token 2 quad of
  /// its warpgroup) in the slot whose weights begin at `weightsAt`; the
  /// pair of row jj of eight tokens is 32 jj bytes on.
  Value tokenScalesAt(Value weightsAt);
  /// The pair of row jj (two i32 words) from `first` (tokenScalesAt) onto
  /// `s`.
  void pushTokenScalePair(Value first, int64_t jj, Stage &s) {
    pushWords(smemAt(arith::AddIOp::create(b, first, c32(32 * jj))), 2, 8, s);
  }
  /// The per-group token scales a stage ends with (readWgmmaSlot), as the
  /// f32 values the loop carries, onto `scales`.
  void appendTokenScales(StageCursor &next, SmallVector<Value> &scales) {
    for (int64_t i = 0; i < tokenScaleCount(); ++i)
      scales.push_back(LLVM::BitcastOp::create(b, f32, next()));
  }
  /// The running sums with the carried iteration's sums added (as they are
  /// without promotion).
  /// With lateTokenScales the token scales come from slot `slot`'s words.
  SmallVector<Value> foldIteration(ArrayRef<Value> carried,
                                   Value slot = Value());
  /// This warp's words of a slot in the order computeWgmma consumes them
  /// (per k-tile and n-tile: its pairs' words, then its columns' group
  /// data in the shape readGroup expects).
  Stage readWgmmaSlot(Value slot);
  /// The iteration's wgmmas: per k-tile, the warp's rows of every n-tile's
  /// A operand dequantized in registers (warp w of the group: pairs 4 w
  /// ..+4 of the lane's words), one m64 n(warp_m) k16 wgmma per n-tile
  /// reading the k-tile's activations from the slot, one commit group per
  /// k-tile.
  SmallVector<Value> computeWgmma(ArrayRef<Value> accs, ArrayRef<Value> stage,
                                  Value slot,
                                  function_ref<void()> afterFirst = nullptr);
  /// The warp's words of each plane of one k-tile and n-tile, as
  /// readWgmmaSlot loaded them (W / 4 words of a plane of width W, or one).
  SmallVector<SmallVector<Value>> takePlaneWords(StageCursor &next);
  /// One k step's wgmmas: a fence tying the n-tiles' A registers `a` (four
  /// each), the descriptor `desc` and the sums `accs` (rewritten with the
  /// wgmmas' results), one m64 n(warp_m) wgmma of operand type `type` per
  /// n-tile (scale-d `accumulate`), a commit.
  void issueWgmmas(ArrayRef<Value> a, Value desc, SmallVector<Value> &accs,
                   StringRef type, bool accumulate = true);
  /// The A fragment a0..a3 (i32) of warp w for one n-tile: its pairs
  /// 4 w, 4 w + 2, 4 w + 1, 4 w + 3 (the b0 / b1 of n8 sub-tiles 2 w and
  /// 2 w + 1), which readWgmmaSlot left where pairs 0, 2, 1, 3 are.
  SmallVector<Value> wgmmaFragment(ArrayRef<SmallVector<Value>> planeWords,
                                   const GroupData &g);
  /// 8-bit activations: the iteration's k32 steps (k-tiles 2 s and 2 s + 1
  /// each), the A registers of an n-tile four 8-bit weights each
  /// (layout::preparedRow ordered the k-tile rows so that the words of
  /// pairs 0, 1 and 2, 3 are registers a0 / a1 of k-tile 2 s and a2 / a3
  /// of 2 s + 1).
  /// `foldCarried`: first add the carried iteration's sums to the running
  /// ones (foldIteration); false where the caller folded them already (the
  /// warp-specialized loop folds each iteration's sums in that iteration).
  /// `fresh`: the wgmmas start the carried iteration sums from zero; false
  /// within a promotion interval (TileConfig::promotionInterval), where
  /// they add to the interval's earlier iterations.
  SmallVector<Value> computeWgmma8(ArrayRef<Value> accs, ArrayRef<Value> stage,
                                   Value slot, function_ref<void()> afterFirst,
                                   bool foldCarried = true, bool fresh = true);
  /// The warp-specialized loop's carried values after an iteration's
  /// wgmmas completed: the running sums with that iteration's sums folded
  /// in (promoting; else the sums as they are), the rest as carried.
  SmallVector<Value> foldInPlace(ArrayRef<Value> carried, Value slot = Value());
  /// Group scales of 8-bit activations: n-tile t's two of the iteration
  /// (D rows 16 w + g and + 8: the group copy's columns 2 w, 2 w + 1 of the
  /// lane's eight), from the stage's words at `next`, into scales[2 t ..].
  void readIterationScales(function_ref<Value()> next, int64_t t,
                           MutableArrayRef<Value> scales);
  /// Weights in the 8-bit activation type: the shared loads of the slot's
  /// words are the wgmmas' A operands themselves, so the loops load them
  /// only after waiting for the previous iteration's wgmmas (which may
  /// read those registers until then). Measured on the H200: loaded before
  /// the wait, the warp-specialized tile with two n-tiles per warpgroup
  /// computed wrong sums (relative error 0.2) while every PTX register
  /// was written after the wait (a copy after it did not help: ptxas
  /// merges it into the load).
  bool wordsAreOperands() const {
    return eightBitWordsAsStored() && !tile.weightsByDescriptor;
  }
  /// weightsByDescriptor: the descriptor of n-tile `t` of this warpgroup's
  /// weights for k32 step `step` of slot `slot` — the tiles of k-tile slots
  /// 2 step and 2 step + 1 (K-major, layout::TileOrder::KMajor) are the
  /// K halves of an m64 k32 A operand's no-swizzle core matrices: rows 8 r
  /// ..+8 at 128 r (the stride offset), the halves one k-tile slot of the
  /// block's n-tiles apart (the leading offset).
  Value weightDescriptor(Value slot, int64_t step, int64_t t);
  /// staged_weights: the same descriptor over stage buffer `buffer` (its
  /// k-tiles nTilesPerGroup tiles apart).
  Value stagedWeightDescriptor(Value buffer, int64_t step, int64_t t);
  /// The no-swizzle K-major descriptor of the core matrices at shared byte
  /// `byte`, K halves `leading` bytes apart, 8-row groups 128 bytes apart.
  Value kMajorDescriptor(Value byte, int64_t leading);
  /// weightsByDescriptor: the iteration's wgmmas with both operands in
  /// shared memory (nvvm.wgmma.mma_async) into this iteration's sums
  /// `accs`: one fence tying every step's descriptors and the sums, per
  /// k32 step one m64 n(warp_m) k32 wgmma per n-tile (scale-d 0 on the
  /// first step when `fresh`: the sums start from zero), one commit.
  /// (Consecutive wgmmas into the same sums need no fence between them.)
  /// With `stagedBuffer` (staged_weights) the weights are that stage
  /// buffer's, the activations still the slot's.
  void issueSharedWgmmas(Value slot, SmallVector<Value> &accs,
                         bool fresh = true, Value stagedBuffer = Value());
  /// The shared-memory matrix descriptor of k-tile `su` of slot `slot` for
  /// this warpgroup's tokens: K-major, swizzled rows with tma = [a], else
  /// no-swizzle core matrices.
  Value activationDescriptor(Value slot, int64_t su);
  /// After the loop: per n-tile and element the scales, bias, conversion
  /// and the (transposed) store; with a cluster split (split_k) the sums
  /// of the cluster's CTAs are added first (clusterReduce).
  void finishWgmma(ArrayRef<Value> acc);
  /// The store of finishWgmma for `rows` rows of eight tokens per n-tile
  /// and half: row q is jj = jjOf(q), element e of it valueOf(t, half, q,
  /// jj, e) (with KernelShape::stagedRows, jjOf(q) = q: whole tiles).
  void storeWgmma(
      int64_t rows, function_ref<Value(int64_t)> jjOf,
      function_ref<Value(int64_t, int64_t, int64_t, Value, int64_t)> valueOf);
  /// What an n-tile t and half (eight columns per group) share in the
  /// epilogue: the column, whether it is inside N, its channel scale and
  /// bias.
  struct OutColumn {
    Value col, colOk, factor, bias;
  };
  OutColumn outputColumn(int64_t t, int64_t half);
  /// storeWgmma with KernelShape::stagedRows: a block inside M and N into a
  /// 16-byte aligned output through shared memory (storeStaged), the others
  /// by `checked`.
  void storeWholeBlocks(
      int64_t rows, function_ref<Value(int64_t)> jjOf,
      function_ref<Value(int64_t, int64_t, int64_t, Value, int64_t)> valueOf,
      Type outType, function_ref<void()> checked);
  /// storeWgmma's whole blocks through shared memory (KernelShape::
  /// stagedRows): `bitsOf(half, q, e)` is element e of row q of the
  /// warpgroup's n-tile half as output bits (i16), token token0 + 8 q + e.
  void storeStaged(Value token0,
                   function_ref<Value(int64_t, int64_t, int64_t)> bitsOf);
  /// split_k with wgmma: every consumer thread leaves its sums in its CTA's
  /// shared memory; CTA r of the cluster adds, in rank order, every CTA's
  /// sums of its share of the rows of eight tokens and stores them.
  void clusterReduce(ArrayRef<Value> acc);
  /// The wgmma kernels' split-K through the workspace (workspace_split):
  /// every consumer thread stores its sums, the last CTA to arrive adds
  /// them in split order and stores every row.
  void wgmmaReduceAcrossCtas(ArrayRef<Value> acc);
  /// The workspace split launched cooperatively (CtaSplit::cooperative):
  /// CTA z of a tile stores the sums of the other CTAs' shares of rows,
  /// waits until all split_k CTAs of the tile have stored theirs, then adds
  /// its own share — rows z x R ..+R of eight tokens, R = warp_m / 8 /
  /// split_k — in split order (its own sums from registers) and stores it.
  void cooperativeReduce(ArrayRef<Value> acc);
  /// The 16-byte vector of sums acc[4 u] .. acc[4 u + 3] (one row's halves
  /// 0, 1 and elements 0, 1), the unit of the workspace reductions' stores.
  Value sumsVector(ArrayRef<Value> acc, int64_t u);
  /// Named barrier 2 + g over consumer warpgroup g's 128 threads (`group`:
  /// tid >> 7); the staged weights' loop and the staged epilogue meet it,
  /// the warpgroups do not wait for each other.
  void warpgroupBarrier(Value group) {
    NVVM::BarrierOp::create(b, TypeRange(),
                            arith::AddIOp::create(b, group, c32(2)), c32(128),
                            NVVM::BarrierReductionAttr(),
                            /*reductionPredicate=*/Value());
  }
  /// wgmma: the warp's index in its warpgroup, the warpgroup's index along N.
  Value wIn, groupN;
};

} // namespace

std::unique_ptr<PreparedEmitter>
mlir::humming::createWgmmaEmitter(const PreparedKernelArgs &args) {
  return std::make_unique<WgmmaEmitter>(args);
}

Value WgmmaEmitter::placeWarps(Value warp) {
  // Warpgroups along N, then rows along M; four warps each.
  Value group = arith::ShRUIOp::create(b, warp, c32(2));
  wIn = arith::AndIOp::create(b, warp, c32(3));
  groupN = arith::RemUIOp::create(b, group, c32(tile.groupsN()));
  warpMi = arith::DivUIOp::create(b, group, c32(tile.groupsN()));
  warpK = c32(0);
  warpN = groupN;
  return arith::MulIOp::create(b, groupN, c32(tile.nTilesPerGroup));
}

void WgmmaEmitter::prepareSlots(Value) {
  smemAddr = LLVM::PtrToIntOp::create(b, i32, smem);
  coop = L::cooperativeSlot(spec.weight, tile);
}

void WgmmaEmitter::activationChunkPlace(Value c, Value &h, Value &r) {
  const int64_t blockM = tile.blockM();
  h = arith::AndIOp::create(b, arith::DivUIOp::create(b, c, c32(blockM)),
                            c32(1));
  r = arith::RemUIOp::create(b, c, c32(blockM));
}

Value WgmmaEmitter::activationChunkAt(Value slotBase, Value u, Value h,
                                      Value r) {
  const int64_t blockM = tile.blockM();
  return arith::AddIOp::create(
      b, slotBase,
      arith::AddIOp::create(
          b, arith::MulIOp::create(b, u, c32(blockM * 32)),
          arith::AddIOp::create(b,
                                arith::MulIOp::create(b, h, c32(blockM * 16)),
                                arith::MulIOp::create(b, r, c32(16)))));
}

WgmmaEmitter::Stage WgmmaEmitter::readWgmmaSlot(Value slot) {
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
      // (K-major weights stay in the slot: wgmma reads them there.)
      for (const L::Plane &p : tile.weightsByDescriptor
                                   ? ArrayRef<L::Plane>()
                                   : ArrayRef<L::Plane>(planes)) {
        const unsigned W = p.width;
        Value lanePlane = arith::AddIOp::create(
            b, tileAt,
            arith::AddIOp::create(b, c32(int64_t(p.wordOffset) * 32 * 4),
                                  arith::MulIOp::create(b, lane, c32(4 * W))));
        // Byte of word w W / 4 of the lane's plane words.
        Value first = arith::AddIOp::create(
            b, lanePlane,
            arith::MulIOp::create(
                b,
                arith::DivUIOp::create(b, arith::MulIOp::create(b, wIn, c32(W)),
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
      Value at =
          groupCopyAt(weightsAt, coop.groupCopies == 1 ? c32(0) : c32(u));
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
        loadBytes(
            arith::AddIOp::create(
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
  // Per-group activation scales: this thread's tokens' (the D columns 8 jj
  // + 2 quad + e of its warpgroup's warp_m), a pair per row of eight.
  if (tile.groupInputScales && !lateTokenScales()) {
    Value first = tokenScalesAt(weightsAt);
    for (int64_t jj = 0; jj < tile.warpM / 8; ++jj)
      pushTokenScalePair(first, jj, s);
  }
  return s;
}

Value WgmmaEmitter::tokenScalesAt(Value weightsAt) {
  return arith::AddIOp::create(
      b, inputScalesAt(weightsAt),
      arith::MulIOp::create(
          b,
          arith::AddIOp::create(
              b, arith::MulIOp::create(b, warpMi, c32(tile.warpM)),
              arith::MulIOp::create(b, quad, c32(2))),
          c32(4)));
}

SmallVector<Value> WgmmaEmitter::wgmmaZeroSums() {
  // warp_m / 2 f32 per n-tile: wgmma's D fragment of m64 n(warp_m).
  // (s32 sums of int8 that does not promote.)
  SmallVector<Value> zeros(size_t(sumCount()),
                           integerSums() && !promotes() ? c32(0) : cf(0.0));
  if (promotes()) {
    zeros.append(size_t(sumCount()), integerSums() ? c32(0) : cf(0.0));
    zeros.append(size_t(perKScales ? 2 * tile.nTilesPerGroup : 0), cf(0.0));
    zeros.append(size_t(tokenScaleCount()), cf(0.0));
  }
  return zeros;
}

SmallVector<Value> WgmmaEmitter::foldIteration(ArrayRef<Value> carried,
                                               Value slot) {
  const int64_t n = sumCount(), perTile = tile.warpM / 2;
  if (!promotes()) {
    SmallVector<Value> acc(carried.take_front(size_t(n)));
    // int8 without promotion: the exact s32 sums, as f32 for the epilogue.
    if (integerSums())
      for (Value &v : acc)
        v = arith::SIToFPOp::create(b, f32, v);
    return acc;
  }
  SmallVector<Value> acc;
  // Per-group activation scales after the per-k ones.
  const size_t tokenAt = size_t(2 * n + (perKScales ? 2 * tile.nTilesPerGroup : 0));
  // Block scales of whole n-tiles (DeepSeek-V3's 128 x 128: the n-tile's
  // 64 columns, permuted only within it, lie in one block row): rows g and
  // g + 8 have the same scale, so its product with a token's scale is one
  // multiply per token, not one per sum (fine-grained FP8: 32 instead of
  // 64 per thread and iteration at 128 tokens).
  const hq::WeightSchema &w = spec.weight;
  const bool blockRowScale = perKScales &&
                             w.granularity == hq::Granularity::Block &&
                             w.groupN % L::kTileN == 0;
  llvm::DenseMap<int64_t, Value> products;
  // lateTokenScales: each row of eight tokens' pair loaded from the slot
  // where the fold first needs it.
  assert((!lateTokenScales() || slot) && "late token scales need the slot");
  Value lateAt = lateTokenScales() && slot
                     ? tokenScalesAt(slotRegions(slot).second)
                     : Value();
  llvm::DenseMap<int64_t, Value> late;
  auto tokenScale = [&](int64_t jj, int64_t e) -> Value {
    if (!lateAt)
      return carried[tokenAt + size_t(2 * jj + e)];
    if (!late.count(2 * jj)) {
      Stage pair;
      pushTokenScalePair(lateAt, jj, pair);
      late[2 * jj] = LLVM::BitcastOp::create(b, f32, pair[0]);
      late[2 * jj + 1] = LLVM::BitcastOp::create(b, f32, pair[1]);
    }
    return late[2 * jj + e];
  };
  for (int64_t i = 0; i < n; ++i) {
    Value sum = carried[size_t(i)], part = carried[size_t(n + i)];
    if (integerSums())
      part = arith::SIToFPOp::create(b, f32, part);
    // D element 4 jj + 2 half + e of n-tile t is row 16 w + g + 8 half,
    // column (token) 8 jj + 2 quad + e.
    const int64_t t = i / perTile, jj = i % perTile / 4,
                  half = (i % perTile / 2) % 2, e = i % 2;
    const int64_t row = blockRowScale ? 0 : half;
    Value scale;
    if (perKScales)
      scale = carried[size_t(2 * n + 2 * t + row)];
    if (tile.groupInputScales) {
      Value token = tokenScale(jj, e);
      if (!scale) {
        scale = token;
      } else {
        Value &product = products[(2 * t + row) * perTile + 2 * jj + e];
        if (!product)
          product = arith::MulFOp::create(b, scale, token);
        scale = product;
      }
    }
    acc.push_back(scale ? Value(LLVM::FMAOp::create(b, part, scale, sum))
                        : Value(arith::AddFOp::create(b, sum, part)));
  }
  return acc;
}

void WgmmaEmitter::emitLoop(Value first) {
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
    fenceProxyAsyncShared();
    gpu::BarrierOp::create(b);
  };
  SmallVector<Value> acc = pipelineLoop(
      first, /*lag=*/2, init, publish,
      [&](Value, Value slot, ArrayRef<Value> accs,
          function_ref<void()> issueAhead) {
        // The shared loads go ahead of the copies: behind them they wait
        // on the copies' turn in the LSU pipe (H200 8192^2 M = 8192:
        // 2789 -> 2659 us with 32 of K per iteration, 2858 -> 2522 with 64).
        Stage data;
        if (!wordsAreOperands())
          data = readWgmmaSlot(slot);
        issueAhead();
        SmallVector<Value> done = ptx.wgmmaWait(0, accs);
        if (wordsAreOperands())
          data = readWgmmaSlot(slot);
        return computeWgmma(done, data, slot);
      });
  acc = ptx.wgmmaWait(0, acc);
  NVVM::CpAsyncWaitGroupOp::create(b, b.getI32IntegerAttr(0));
  finishWgmma(foldIteration(acc));
}

void WgmmaEmitter::emitWarpSpecializedLoop(Value first) {
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
  // cannot deadlock. (8-bit activations release use u after iteration u's
  // own wgmma wait, before waiting for fill u + 1: layout::ws::
  // releasesOwn.) With bulk fills (layout::ws::bulkFills) producer 0
  // announces every byte of fill f as the full barrier's one arrival when
  // it issues it; the phase ends when the bytes land, and nothing waits
  // for older fills. With tracked fills (layout::ws::trackedFills: TMA for
  // the operands, cp.async for per-group constants) every producer ends
  // its part of fill f with cp.async.mbarrier.arrive.noinc, its arrival
  // once its copies landed, and waits for nothing but the releases.
  // The formulas of layout::ws, built in IR (the iteration is a runtime
  // value); PreparedLayoutTest checks the protocol itself.
  WsLoop w;
  w.S = tile.stages;
  w.D = L::ws::fillsInFlight(w.S);
  w.iters = ctaIterations;
  w.first = first;
  // Registers (layout::ws::registerSplit): the block starts with the
  // kernel's .maxnreg each (168 for two consumer warpgroups and one CTA
  // per SM); the producers give theirs down to 56 (40 where the consumers
  // would otherwise spill) and the consumers take the rest (224 for two
  // warpgroups: the loop of the 128-token tile assembles without spills).
  w.regs = L::ws::registerSplit(tile);
  w.bulk = bulkFills();
  w.tracked = trackedFills();
  initSlotBarriers(w);
  // The caller's tile (emit's selectTile of blockIdx.x), put back after the
  // loops, whose tiles hold inside them only.
  w.outerX = bidX, w.outerY = bidY, w.outerTiles = blockTiles,
  w.outerNTile = nTile;
  planPersistent(w);
  auto isProducer = arith::CmpIOp::create(b, arith::CmpIPredicate::uge, tid,
                                          c32(tile.mathThreads()));
  auto role = scf::IfOp::create(b, isProducer, /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(role.thenBlock());
    emitWsProducer(w);
  }
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(role.elseBlock());
    emitWsConsumers(w);
  }
  bidX = w.outerX, bidY = w.outerY, blockTiles = w.outerTiles,
  nTile = w.outerNTile;
  // multicast_a: no CTA of the pair leaves while the other may still
  // arrive on its barriers or copy into its slots.
  if (tile.multicastA > 1) {
    b.setInsertionPointAfter(role);
    clusterBarrier();
  }
}

void WgmmaEmitter::initSlotBarriers(const WsLoop &w) {
  const int64_t producers = tile.producerThreads(),
                consumers = tile.mathThreads();
  {
    // Thread 0 initializes the barriers; the block barrier publishes them.
    auto ifOp = scf::IfOp::create(
        b, arith::CmpIOp::create(b, arith::CmpIPredicate::eq, tid, c32(0)),
        /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    for (int64_t st = 0; st < w.S; ++st)
      for (auto [which, count] :
           {std::pair<int64_t, int64_t>{0,
                                        L::ws::fullArrivals(producers, w.bulk)},
            {1, L::ws::emptyArrivals(consumers, tile.multicastA)}})
        NVVM::MBarrierInitOp::create(b, mbarrierAt(c32(st), which), c32(count),
                                     /*predicate=*/Value());
    NVVM::FenceMbarrierInitOp::create(b);
  }
  // multicast_a: the peer's copies and arrivals reach these barriers, so
  // both CTAs' initializations are published across the cluster (its
  // barrier: release / acquire at cluster scope) before anything else.
  if (tile.multicastA > 1)
    clusterBarrier();
  else
    gpu::BarrierOp::create(b);
}

void WgmmaEmitter::planPersistent(WsLoop &w) {
  const int64_t iters = w.iters;
  // persistent (TileConfig::persistent): this CTA's output tiles are
  // blockIdx.x + j gridDim.x for j < tilesHere, and its fills and uses are
  // counted across them (fill g: iteration g mod iters of its j = g /
  // iters), so that the producer runs on into the next tile's fills while
  // the consumers store the last tile's outputs; the barriers' protocol is
  // that of one loop of tilesHere x iters iterations.
  w.fills = c32(iters);
  if (tile.persistent > 0) {
    assert((w.bulk || w.tracked) && !prefetchesBeforeWait() &&
           split.ctas == 1 && tile.multicastA == 1 &&
           "persistent tiles: the verifier's conditions");
    w.cta = index32(gpu::BlockIdOp::create(b, gpu::Dimension::x));
    w.ctas = index32(gpu::GridDimOp::create(b, gpu::Dimension::x));
    // ceil((tilesTotal - cta) / ctas), 0 where cta >= tilesTotal.
    Value left = arith::SubIOp::create(b, tilesTotal, w.cta);
    w.tilesHere = arith::SelectOp::create(
        b, arith::CmpIOp::create(b, arith::CmpIPredicate::sgt, left, c32(0)),
        arith::DivUIOp::create(b, arith::AddIOp::create(b, left, c32(-1)),
                               w.ctas),
        c32(-1));
    w.tilesHere = arith::AddIOp::create(b, w.tilesHere, c32(1));
    w.fills = arith::MulIOp::create(b, w.tilesHere, c32(iters));
  }
}

void WgmmaEmitter::forEachWsTile(const WsLoop &w,
                                 function_ref<void(Value)> body) {
  // `body(base)` for each of this CTA's output tiles, `base` the CTA's
  // fills (uses) before the tile's: once with a null base without
  // persistent, else in a loop over its tiles, each made current first
  // (its place computed once per tile, not on the way from a slot's
  // release to the next fill's copies).
  if (tile.persistent == 0)
    return body(Value());
  auto tiles = scf::ForOp::create(
      b, arith::ConstantIndexOp::create(b, 0),
      arith::IndexCastOp::create(b, b.getIndexType(), w.tilesHere),
      arith::ConstantIndexOp::create(b, 1));
  OpBuilder::InsertionGuard inner(b);
  b.setInsertionPointToStart(tiles.getBody());
  Value j = index32(tiles.getInductionVar());
  selectTile(
      arith::AddIOp::create(b, w.cta, arith::MulIOp::create(b, j, w.ctas)));
  body(arith::MulIOp::create(b, j, c32(w.iters)));
}

void WgmmaEmitter::emitWsProducer(const WsLoop &w) {
  const int64_t S = w.S, D = w.D, iters = w.iters;
  const bool bulk = w.bulk, tracked = w.tracked;
  Value ub = arith::ConstantIndexOp::create(b, iters);
  Value one = arith::ConstantIndexOp::create(b, 1);
  Value first = w.first;
  auto landed = [&](Value fill, int64_t pending) {
    NVVM::CpAsyncWaitGroupOp::create(b, b.getI32IntegerAttr(int32_t(pending)));
    fenceProxyAsyncShared();
    mbarrierArrive(mbarrierAt(arith::RemUIOp::create(b, fill, c32(S)), 0));
  };
  // Tracked fills: this producer's arrival on fill f's full barrier once
  // every cp.async it issued so far landed (noinc: the arrival is one of
  // the barrier's expected count).
  auto arriveWhenLanded = [&](Value slot) {
    NVVM::CpAsyncMBarrierArriveOp::create(b, mbarrierAt(slot, 0),
                                          /*noinc=*/true);
  };
  if (w.regs.rebalance)
    NVVM::SetMaxRegisterOp::create(b, int32_t(w.regs.producer),
                                   NVVM::SetMaxRegisterAction::decrease);
  // The thread that issues the tensor copies fetches their maps first.
  auto prefetchMap = [&](Value map) {
    NVVM::PrefetchOp::create(
        b, /*cacheLevel=*/NVVM::PrefetchCacheLevelAttr(),
        /*evictPriority=*/NVVM::CacheEvictionPriorityAttr(), map,
        /*predicate=*/Value(),
        /*tensormap=*/true, /*uniform=*/false,
        /*in_param_space=*/false);
  };
  if (tile.tensorActivations() || tile.weightMap)
    onFirstCopier([&] {
      if (tile.tensorActivations())
        prefetchMap(inputMapAddress());
      if (tile.weightMap)
        prefetchMap(weightMapAddress());
    });
  if (tile.gatheredActivations)
    cacheGatheredRows();
  auto fillLoop = [&] {
    // Programmatic dependent launch: the constants (weights, scales, zero
    // points) of the first P fills are copied before griddepcontrol.wait,
    // uncommitted (they join fill 0's group), while the kernel before
    // this one on the stream (the activations' quantization, the previous
    // layer) may still run; those fills' activations after it. The loop
    // then starts at fill P.
    const int64_t P = prefetchesBeforeWait() ? std::min(S, iters) : 0;
    if (P > 0) {
      copyPart = CopyPart::Constants;
      for (int64_t f = 0; f < P; ++f)
        issueCopies(arith::AddIOp::create(b, first, c32(f)), c32(f), Value(),
                    /*commit=*/false);
      waitForPrerequisites();
      copyPart = CopyPart::Inputs;
      for (int64_t f = 0; f < P; ++f) {
        issueCopies(arith::AddIOp::create(b, first, c32(f)), c32(f));
        if (tracked)
          arriveWhenLanded(c32(f));
        else if (f >= D)
          landed(c32(f - D), D);
      }
      copyPart = CopyPart::All;
    }
    // One output tile's fills: `base` (i32) the CTA's fills before them
    // (persistent; null: none).
    auto fillTile = [&](Value base) {
      auto loop =
          scf::ForOp::create(b, arith::ConstantIndexOp::create(b, P), ub, one);
      {
        OpBuilder::InsertionGuard inner(b);
        b.setInsertionPointToStart(loop.getBody());
        // `iter` the tile's iteration it copies, f the CTA's fill (across
        // its tiles when persistent).
        Value iter = index32(loop.getInductionVar());
        Value f = base ? Value(arith::AddIOp::create(b, base, iter)) : iter;
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
        issueCopies(arith::AddIOp::create(b, first, iter), slot);
        // l2_prefetch: the weights (and the activation box) of fill f + d
        // into L2 (from DRAM, when the wave's earlier reads have not
        // brought them), so that the fill's copies find them there.
        if (tile.l2Prefetch > 0) {
          Value ahead = arith::AddIOp::create(b, f, c32(tile.l2Prefetch));
          prefetchWeightsL2(first, ahead, /*oneThread=*/bulk);
          if (tile.tensorActivations())
            onFirstCopier([&] { prefetchActivationsL2(first, ahead); });
        }
        if (tracked)
          arriveWhenLanded(slot);
        if (!bulk && !tracked) {
          auto old = scf::IfOp::create(
              b, arith::CmpIOp::create(b, arith::CmpIPredicate::uge, f, c32(D)),
              /*withElseRegion=*/false);
          OpBuilder::InsertionGuard g(b);
          b.setInsertionPointToStart(old.thenBlock());
          landed(arith::SubIOp::create(b, f, c32(D)), D);
        }
      }
    };
    forEachWsTile(w, fillTile);
    // The last D fills (fewer when the CTA has fewer iterations).
    if (!bulk && !tracked)
      for (int64_t f = std::max<int64_t>(0, iters - D); f < iters; ++f)
        landed(c32(f), iters - 1 - f);
    // (Tracked: no copy of this thread's outlives its loop.)
    if (tracked) {
      NVVM::CpAsyncCommitGroupOp::create(b);
      NVVM::CpAsyncWaitGroupOp::create(b, b.getI32IntegerAttr(0));
    }
  };
  // Bulk fills: producer 0 alone runs the loop. Another producer would
  // only wait on the empty barriers, arriving nowhere, and could fall
  // two phases behind one, where its parity wait no longer returns
  // (PreparedLayoutTest's model finds that).
  if (bulk)
    onFirstCopier(fillLoop);
  else
    fillLoop();
  gatheredRows.clear();
  // The consumers' cluster reduction waits for every thread of the
  // cluster three times (clusterReduce).
  if (clustered())
    for (int i = 0; i < 3; ++i)
      clusterBarrier();
}

Value WgmmaEmitter::waitSlotFilled(const WsLoop &w, Value use) {
  Value slot = arith::RemUIOp::create(b, use, c32(w.S));
  mbarrierWait(mbarrierAt(slot, 0),
               arith::AndIOp::create(
                   b, arith::DivUIOp::create(b, use, c32(w.S)), c32(1)));
  return slot;
}

void WgmmaEmitter::releaseSlotUse(const WsLoop &w, Value use, Value first) {
  Value later =
      arith::CmpIOp::create(b, arith::CmpIPredicate::slt,
                            arith::AddIOp::create(b, use, c32(w.S)), w.fills);
  auto release = scf::IfOp::create(
      b, first ? Value(arith::AndIOp::create(b, first, later)) : later,
      /*withElseRegion=*/false);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(release.thenBlock());
  Value empty = mbarrierAt(arith::RemUIOp::create(b, use, c32(w.S)), 1);
  if (tile.multicastA == 1)
    return mbarrierArrive(empty);
  // multicast_a: the next fill of the slot writes both CTAs' copies,
  // so each consumer warp releases it in both (layout::ws::
  // emptyArrivals): its lanes' reads end at the warp sync, then lane
  // 0 arrives here and lane 1 on the peer's barrier. (Release at CTA
  // scope, as CUTLASS's and DeepGEMM's cluster barriers arrive: the
  // reads it orders are this CTA's own, complete once their values
  // are in registers; cluster scope costs a fence per release.)
  NVVM::SyncWarpOp::create(b, c32(-1));
  auto local = scf::IfOp::create(
      b, arith::CmpIOp::create(b, arith::CmpIPredicate::eq, lane, c32(0)),
      /*withElseRegion=*/true);
  b.setInsertionPointToStart(local.thenBlock());
  mbarrierArrive(empty);
  b.setInsertionPointToStart(local.elseBlock());
  auto remote = scf::IfOp::create(
      b, arith::CmpIOp::create(b, arith::CmpIPredicate::eq, lane, c32(1)),
      /*withElseRegion=*/false);
  b.setInsertionPointToStart(remote.thenBlock());
  Value peer = arith::XOrIOp::create(
      b, arith::RemUIOp::create(b, bidX, c32(tile.multicastA)), c32(1));
  Value remoteBar = NVVM::MapaOp::create(
      b, LLVM::LLVMPointerType::get(b.getContext(), 7), empty, peer);
  NVVM::MBarrierArriveOp::create(b, /*res=*/Type(), remoteBar,
                                 /*count=*/Value(), NVVM::MemScopeKind::CTA,
                                 /*relaxed=*/false);
}

void WgmmaEmitter::emitWsConsumers(const WsLoop &w) {
  const int64_t iters = w.iters;
  Value lb = arith::ConstantIndexOp::create(b, 0);
  Value one = arith::ConstantIndexOp::create(b, 1);
  if (w.regs.rebalance)
    NVVM::SetMaxRegisterOp::create(b, int32_t(w.regs.consumer),
                                   NVVM::SetMaxRegisterAction::increase);
  // (The producers' wait would do: it makes the earlier grids' writes
  // visible to this grid. The consumers wait too, idle until the first
  // fill lands anyway, so that no thread of the kernel relies on another
  // thread's wait.)
  if (prefetchesBeforeWait())
    waitForPrerequisites();
  bidX = w.outerX, bidY = w.outerY, blockTiles = w.outerTiles,
  nTile = w.outerNTile;
  // One output tile: its iterations, then its epilogue. `base` (i32):
  // the CTA's uses before this tile's (persistent; null: none).
  // promotion_interval (8-bit activations): a loop step runs that many
  // iterations, each waiting for its own fill and issuing its wgmmas into
  // the same fresh sums; the lowering checked that they divide iters.
  const int64_t interval = act8 ? tile.promotionInterval : 1;
  assert(iters % interval == 0 && "whole promotion intervals");
  auto waitFilled = [&](Value use) { return waitSlotFilled(w, use); };
  auto releaseUse = [&](Value use, Value first) {
    releaseSlotUse(w, use, first);
  };
  auto consumeTile = [&](Value base) {
    if (tile.stagedWeights)
      return consumeStagedTile(w, base);
    auto loop = scf::ForOp::create(
        b, lb, arith::ConstantIndexOp::create(b, iters / interval), one,
        wgmmaZeroSums());
    {
      OpBuilder::InsertionGuard inner(b);
      b.setInsertionPointToStart(loop.getBody());
      // The CTA's use `it` (across its tiles when persistent): the
      // interval's first.
      Value it = index32(loop.getInductionVar());
      if (interval > 1)
        it = arith::MulIOp::create(b, it, c32(interval));
      if (base)
        it = arith::AddIOp::create(b, base, it);
      SmallVector<Value> accs(loop.getRegionIterArgs().begin(),
                              loop.getRegionIterArgs().end());
      Value slot = waitFilled(it);
      Stage data;
      if (!wordsAreOperands())
        data = readWgmmaSlot(slot);
      // The previous iteration's slot, released in this one.
      auto releasePrevious = [&] {
        releaseUse(
            arith::SubIOp::create(b, it, c32(1)),
            arith::CmpIOp::create(b, arith::CmpIPredicate::uge, it, c32(1)));
      };
      if (act8) {
        // 8-bit activations: this iteration's wgmmas are waited for in
        // this iteration, which then releases its own slot and folds its
        // sums; the next one issues from the running sums. A late fill
        // thus delays no release: waiting for the previous wgmmas only
        // after the next fill's barrier (as the 16-bit loop does, where
        // the next fill's shared loads and dequantization run under them)
        // held each slot as long as the fill after it was late. Nothing of
        // an 8-bit slot is left to overlap the wgmmas with: the weights are
        // descriptors or registers loaded before the issue, the fold is
        // after the wait either way.
        // With promotion_interval p the p iterations of a step each wait
        // for their fill and issue their wgmmas (one commit group each)
        // into the same fresh sums; a slot is released once its own group
        // is done (wait_group p - 1 - h), and the sums are folded once.
        if (wordsAreOperands())
          data = readWgmmaSlot(slot);
        SmallVector<Value> issued = computeWgmma8(accs, data, slot,
                                                  /*afterFirst=*/nullptr,
                                                  /*foldCarried=*/false);
        for (int64_t h = 1; h < interval; ++h) {
          Value hs = waitFilled(arith::AddIOp::create(b, it, c32(h)));
          issued = computeWgmma8(issued, readWgmmaSlot(hs), hs,
                                 /*afterFirst=*/nullptr,
                                 /*foldCarried=*/false, /*fresh=*/false);
        }
        for (int64_t h = 0; h + 1 < interval; ++h) {
          NVVM::WgmmaWaitGroupSyncOp::create(b, int32_t(interval - 1 - h));
          releaseUse(arith::AddIOp::create(b, it, c32(h)), Value());
        }
        // Only the sums the wgmmas write are tied to their wait.
        const size_t at = promotes() ? size_t(sumCount()) : 0;
        SmallVector<Value> sums = ptx.wgmmaWait(
            0, ArrayRef<Value>(issued).slice(at, size_t(sumCount())));
        std::copy(sums.begin(), sums.end(), issued.begin() + at);
        // (lateTokenScales: the fold reads the slot, then releases it.)
        SmallVector<Value> folded;
        if (lateTokenScales())
          folded = foldInPlace(issued, slot);
        releaseUse(interval > 1
                       ? Value(arith::AddIOp::create(b, it, c32(interval - 1)))
                       : it,
                   Value());
        if (!lateTokenScales())
          folded = foldInPlace(issued);
        scf::YieldOp::create(b, folded);
      } else if (tile.wgmmaInFlight == 0) {
        SmallVector<Value> done = ptx.wgmmaWait(0, accs);
        releasePrevious();
        if (wordsAreOperands())
          data = readWgmmaSlot(slot);
        scf::YieldOp::create(b, computeWgmma(done, data, slot));
      } else {
        // wgmma_in_flight = 1: the previous iteration's wgmmas run on
        // while this one's first k-tile is dequantized and issued; then
        // every group but that newest one is complete (wait_group 1: not
        // tied to the sums, which the newest group still writes) and the
        // previous slot is released.
        scf::YieldOp::create(b, computeWgmma(accs, data, slot, [&] {
                               NVVM::WgmmaWaitGroupSyncOp::create(b, 1);
                               releasePrevious();
                             }));
      }
    }
    SmallVector<Value> acc(loop.getResults().begin(), loop.getResults().end());
    if (act8) {
      // Every iteration's wgmmas were waited for and folded in the loop.
      finishWgmma(
          promotes() ? SmallVector<Value>(acc.begin(), acc.begin() + sumCount())
                     : foldIteration(acc));
    } else {
      acc = ptx.wgmmaWait(0, acc);
      finishWgmma(foldIteration(acc));
    }
  };
  forEachWsTile(w, consumeTile);
}

Value WgmmaEmitter::activationDescriptor(Value slot, int64_t su) {
  // Bits 0-13: address >> 4; 16-29: the leading byte offset >> 4; 32-45:
  // the stride byte offset >> 4 (between 8-token groups); 49-51: base
  // offset 0; 62-63: the swizzle mode.
  // tma = [a]: token r's row of R = activationRowBytes bytes at r x R,
  // swizzled by TMA's R-byte mode (1: 128, 2: 64, 3: 32 bytes), whose
  // pattern repeats every eight rows (the slots start at multiples of
  // that: layout::slotAlign). K-tile su is the 32 bytes at 32 su of the
  // rows: the start address moves by that much, the swizzle applies to the
  // address bits above it; 8-token groups are 8 R apart and the leading
  // offset is unused (a k-tile never crosses a swizzled row). Else the
  // no-swizzle K-major core matrices of the cp.async copies: the two
  // 8-column halves of K block_m x 16 bytes apart, 8-token groups 128.
  const int64_t rowBytes = tile.activationRowBytes();
  const int64_t tokenBytes = rowBytes ? rowBytes : 16;
  Value byte = arith::AddIOp::create(
      b, arith::MulIOp::create(b, slot, c32(coop.total())),
      arith::AddIOp::create(
          b, c32(rowBytes ? su * 32 : su * tile.blockM() * 32),
          arith::MulIOp::create(b, warpMi, c32(tile.warpM * tokenBytes))));
  Value addr = arith::AddIOp::create(b, smemAddr, byte);
  Value lo = arith::AndIOp::create(b, arith::ShRUIOp::create(b, addr, c32(4)),
                                   c32(0x3FFF));
  uint64_t fixed;
  if (rowBytes) {
    const uint64_t mode = rowBytes == 128 ? 1 : rowBytes == 64 ? 2 : 3;
    fixed = (uint64_t(1) << 16) | (uint64_t(8 * rowBytes / 16) << 32) |
            (mode << 62);
  } else {
    fixed =
        (uint64_t(tile.blockM() * 16 / 16) << 16) | (uint64_t(128 / 16) << 32);
  }
  return arith::OrIOp::create(b, ext64(lo), c64(int64_t(fixed)));
}

SmallVector<Value>
WgmmaEmitter::wgmmaFragment(ArrayRef<SmallVector<Value>> planeWords,
                            const GroupData &g) {
  SmallVector<Value> a;
  for (int q : {0, 2, 1, 3}) {
    Value v = dequantPair(planeWords, g, q);
    a.push_back(v.getType() == i32 ? v : asI32(v));
  }
  return a;
}

SmallVector<SmallVector<Value>>
WgmmaEmitter::takePlaneWords(StageCursor &next) {
  SmallVector<SmallVector<Value>> planeWords;
  for (const L::Plane &p : planes) {
    SmallVector<Value> words;
    for (unsigned i = 0; i < std::max(1u, p.width / 4); ++i)
      words.push_back(next());
    planeWords.push_back(words);
  }
  return planeWords;
}

void WgmmaEmitter::issueWgmmas(ArrayRef<Value> a, Value desc,
                               SmallVector<Value> &accs, StringRef type,
                               bool accumulate) {
  const int64_t nT = tile.nTilesPerGroup, n = tile.warpM, perTile = n / 2;
  SmallVector<Value> regs(a.begin(), a.end());
  regs.push_back(desc);
  regs.append(accs.begin(), accs.end());
  regs = ptx.wgmmaFence(regs);
  const size_t accAt = size_t(nT * 4 + 1);
  for (size_t i = 0; i < accs.size(); ++i)
    accs[i] = regs[accAt + i];
  for (int64_t t = 0; t < nT; ++t) {
    SmallVector<Value> sums = ptx.wgmmaRegisterA(
        n, type, ArrayRef<Value>(regs).slice(size_t(4 * t), 4),
        regs[size_t(nT * 4)],
        ArrayRef<Value>(accs).slice(size_t(t * perTile), size_t(perTile)),
        accumulate);
    std::copy(sums.begin(), sums.end(), accs.begin() + t * perTile);
  }
  NVVM::WgmmaGroupSyncAlignedOp::create(b);
}

void WgmmaEmitter::consumeStagedTile(const WsLoop &w, Value base) {
  assert(act8 && !tile.weightsByDescriptor && tile.wgmmaInFlight == 0 &&
         tile.promotionInterval == 1 && "staged_weights: the verifier's");
  const int64_t count = sumCount();
  const bool promoting = promotes();
  // The loop carries the running sums, with promotion the last
  // iteration's sums (the registers the next wgmmas write: scale-d 0) and
  // the scales of the iteration about to run (stageIteration's).
  const size_t sumsAt = promoting ? size_t(count) : 0;
  auto useOf = [&](Value i) -> Value {
    return base ? Value(arith::AddIOp::create(b, base, i)) : i;
  };
  // This consumer warpgroup's two buffers.
  Value group = arith::ShRUIOp::create(b, tid, c32(7));
  const int64_t bufferBytes = tile.weightStageBufferBytes();
  Value buffers = arith::AddIOp::create(
      b, c32(hq::layout::weightStageOffset(spec.weight, tile)),
      arith::MulIOp::create(b, group, c32(2 * bufferBytes)));
  auto bufferOf = [&](Value i) -> Value {
    return arith::AddIOp::create(
        b, buffers,
        arith::MulIOp::create(b, arith::AndIOp::create(b, i, c32(1)),
                              c32(bufferBytes)));
  };
  // Iteration i's weights into its buffer, once its fill landed; each
  // thread's writes fenced into the async proxy (the wgmmas' reads).
  auto convert = [&](Value i) {
    Value slot = waitSlotFilled(w, useOf(i));
    SmallVector<Value> scales =
        stageIteration(readWgmmaSlot(slot), bufferOf(i));
    fenceProxyAsyncShared();
    return scales;
  };
  SmallVector<Value> init = wgmmaZeroSums();
  init.resize(sumsAt + size_t(count));
  SmallVector<Value> firstScales = convert(c32(0));
  init.append(firstScales.begin(), firstScales.end());
  warpgroupBarrier(group);
  Value lb = arith::ConstantIndexOp::create(b, 0);
  Value one = arith::ConstantIndexOp::create(b, 1);
  auto loop = scf::ForOp::create(
      b, lb, arith::ConstantIndexOp::create(b, w.iters), one, init);
  {
    OpBuilder::InsertionGuard inner(b);
    b.setInsertionPointToStart(loop.getBody());
    Value i = index32(loop.getInductionVar());
    Value use = useOf(i);
    SmallVector<Value> carried(loop.getRegionIterArgs().begin(),
                               loop.getRegionIterArgs().end());
    const size_t scalesAt = promoting ? 2 * size_t(count) : size_t(count);
    // Without promotion (int8, no per-K scales) the wgmmas add into the
    // running s32 sums themselves.
    SmallVector<Value> accs(
        ArrayRef<Value>(carried).slice(sumsAt, size_t(count)));
    issueSharedWgmmas(arith::RemUIOp::create(b, use, c32(w.S)), accs,
                      /*fresh=*/true, bufferOf(i));
    // The next iteration's weights while this one's wgmmas run.
    SmallVector<Value> nextScales;
    const size_t nScales = carried.size() - scalesAt;
    Value more = arith::CmpIOp::create(b, arith::CmpIPredicate::slt,
                                       arith::AddIOp::create(b, i, c32(1)),
                                       c32(w.iters));
    auto ahead = scf::IfOp::create(b, SmallVector<Type>(nScales, f32), more,
                                   /*withElseRegion=*/true);
    {
      // (Without results the regions come with their terminators.)
      OpBuilder::InsertionGuard g(b);
      if (nScales == 0) {
        b.setInsertionPoint(ahead.thenBlock()->getTerminator());
        convert(arith::AddIOp::create(b, i, c32(1)));
      } else {
        b.setInsertionPointToStart(ahead.thenBlock());
        scf::YieldOp::create(b, convert(arith::AddIOp::create(b, i, c32(1))));
        b.setInsertionPointToStart(ahead.elseBlock());
        scf::YieldOp::create(b, SmallVector<Value>(nScales, cf(0.0)));
      }
    }
    nextScales.assign(ahead.getResults().begin(), ahead.getResults().end());
    SmallVector<Value> sums = ptx.wgmmaWait(0, accs);
    releaseSlotUse(w, use, Value());
    SmallVector<Value> next;
    if (promoting) {
      SmallVector<Value> fold(carried.begin(), carried.begin() + count);
      fold.append(sums.begin(), sums.end());
      fold.append(carried.begin() + scalesAt, carried.end());
      next = foldIteration(fold);
      next.append(sums.begin(), sums.end());
    } else {
      next = sums;
    }
    next.append(nextScales.begin(), nextScales.end());
    warpgroupBarrier(group);
    scf::YieldOp::create(b, next);
  }
  SmallVector<Value> acc(loop.getResults().begin(),
                         loop.getResults().begin() + count);
  finishWgmma(promoting ? acc : foldIteration(acc));
}

SmallVector<Value> WgmmaEmitter::stageIteration(ArrayRef<Value> stage,
                                                Value buffer) {
  StageCursor next{stage};
  beginDequant();
  const int64_t nT = tile.nTilesPerGroup;
  SmallVector<Value> scales(size_t(perKScales ? 2 * nT : 0));
  // The thread's A words: rows 16 w + g (a0, a2) and + 8 (a1, a3), k bytes
  // 4 quad ..+4 of k-tiles 2 step (a0, a1) and 2 step + 1 (a2, a3): in the
  // buffer's tile (k-tile u, n-tile t) at (u nT + t) x 1 KiB, row r's 16
  // bytes at 16 r. A warp's 32 four-byte stores of one register are one
  // 128-byte core matrix: no bank conflicts.
  Value rowAt = arith::AddIOp::create(
      b, buffer,
      arith::AddIOp::create(
          b,
          arith::MulIOp::create(
              b,
              arith::AddIOp::create(b, arith::MulIOp::create(b, wIn, c32(16)),
                                    grp),
              c32(16)),
          arith::MulIOp::create(b, quad, c32(4))));
  eightBitSteps(next, scales, [&](int64_t step, ArrayRef<Value> regs) {
    for (int64_t t = 0; t < nT; ++t)
      for (int64_t j = 0; j < 4; ++j) {
        const int64_t u = 2 * step + j / 2;
        Value at = arith::AddIOp::create(
            b, rowAt, c32((u * nT + t) * 1024 + (j % 2) * 128));
        LLVM::StoreOp::create(b, regs[size_t(4 * t + j)], smemAt(at),
                              /*alignment=*/4);
      }
  });
  // Per-group activation scales: the stage's last words (readWgmmaSlot).
  appendTokenScales(next, scales);
  return scales;
}

SmallVector<Value> WgmmaEmitter::foldInPlace(ArrayRef<Value> carried,
                                             Value slot) {
  SmallVector<Value> out(carried.begin(), carried.end());
  if (!promotes())
    return out;
  SmallVector<Value> running = foldIteration(carried, slot);
  std::copy(running.begin(), running.end(), out.begin());
  return out;
}

SmallVector<Value> WgmmaEmitter::computeWgmma8(ArrayRef<Value> accIn,
                                               ArrayRef<Value> stage,
                                               Value slot,
                                               function_ref<void()> afterFirst,
                                               bool foldCarried, bool fresh) {
  // The previous iteration's sums join the running ones (its wgmmas are
  // complete: the caller waited); this iteration's start from zero.
  // Without promotion (int8 without group scales) the wgmmas sum into the
  // carried s32 sums themselves.
  const int64_t count = sumCount();
  const bool promoting = promotes();
  SmallVector<Value> running;
  if (promoting)
    running = foldCarried ? foldIteration(accIn)
                          : SmallVector<Value>(accIn.take_front(size_t(count)));
  SmallVector<Value> accs(accIn.begin() + (promoting ? count : 0),
                          accIn.begin() + (promoting ? 2 * count : count));
  StageCursor next{stage};
  beginDequant();
  const int64_t nT = tile.nTilesPerGroup;
  // Group scales: this iteration's two per n-tile (D rows 16 w + g and
  // + 8: the group copy's columns 2 w, 2 w + 1 of the lane's eight).
  SmallVector<Value> scales(size_t(perKScales ? 2 * nT : 0));
  const StringRef type = integerSums()                              ? "s8"
                         : spec.input.type == hq::ScalarType::e4m3() ? "e4m3"
                                                                     : "e5m2";
  if (tile.weightsByDescriptor) {
    // The weights are the A operand in the slot: only the group data comes
    // from the stage (readWgmmaSlot's order: k-tile 0's, per n-tile).
    // (wgmma_in_flight is 0 with 8-bit activations: no afterFirst.)
    assert(!afterFirst && "8-bit activations keep no wgmmas in flight");
    if (perKScales)
      for (int64_t t = 0; t < nT; ++t)
        readIterationScales(next, t, scales);
    issueSharedWgmmas(slot, accs, fresh);
  }
  if (!tile.weightsByDescriptor)
    eightBitSteps(next, scales, [&](int64_t step, ArrayRef<Value> regs) {
      // k32 step `step`: k-tiles 2 step and 2 step + 1, one 32-byte row
      // per token as a 16-bit k-tile's (activationDescriptor's k-tile
      // slot).
      issueWgmmas(regs, activationDescriptor(slot, step), accs, type,
                  /*accumulate=*/step != 0 || !promoting || !fresh);
      if (step == 0 && afterFirst)
        afterFirst();
    });
  // Per-group activation scales: the stage's last words (readWgmmaSlot).
  appendTokenScales(next, scales);
  SmallVector<Value> carried = running;
  carried.append(accs.begin(), accs.end());
  carried.append(scales.begin(), scales.end());
  return carried;
}

void WgmmaEmitter::eightBitSteps(
    StageCursor &next, MutableArrayRef<Value> scales,
    function_ref<void(int64_t, ArrayRef<Value>)> use) {
  const int64_t nT = tile.nTilesPerGroup;
  SmallVector<GroupData> groups(static_cast<size_t>(nT));
  for (int64_t step = 0; step < tile.kTilesPerWarp / 2; ++step) {
    SmallVector<Value> regs(size_t(nT * 4));
    // readWgmmaSlot's order: per k-tile, every n-tile's words.
    for (int64_t h = 0; h < 2; ++h) {
      const int64_t u = 2 * step + h;
      for (int64_t t = 0; t < nT; ++t) {
        SmallVector<SmallVector<Value>> planeWords = takePlaneWords(next);
        // (One group per iteration: PreparedLayout::supports, preparedTile.)
        if (u == 0) {
          if (perKScales)
            readIterationScales(next, t, scales);
          readGroup(next, groups[size_t(t)], /*scales=*/false);
        }
        // Pairs 0, 1 (rows g) and 2, 3 (rows g + 8).
        regs[size_t(4 * t + 2 * h)] =
            eightBitWord(planeWords, groups[size_t(t)], 0);
        regs[size_t(4 * t + 2 * h + 1)] =
            eightBitWord(planeWords, groups[size_t(t)], 2);
      }
    }
    use(step, regs);
  }
}

void WgmmaEmitter::readIterationScales(function_ref<Value()> next, int64_t t,
                                       MutableArrayRef<Value> scales) {
  const hq::ScalarType &st = spec.weight.scaleType;
  SmallVector<Value> words;
  for (unsigned i = 0; i < st.bits / 4; ++i)
    words.push_back(next());
  for (int64_t j = 0; j < 2; ++j) {
    Value f;
    if (st.bits == 32) {
      f = LLVM::BitcastOp::create(b, f32, words[size_t(j)]);
    } else if (st.bits == 16) {
      Value bits16 =
          j ? Value(arith::ShRUIOp::create(b, words[0], c32(16))) : words[0];
      f = half16ToF32(arith::TruncIOp::create(b, i16, bits16),
                      st == hq::ScalarType::bf16());
    } else {
      f = smallFloatToF32(
          arith::AndIOp::create(
              b, arith::ShRUIOp::create(b, words[0], c32(8 * j)), c32(0xFF)),
          st);
    }
    scales[size_t(2 * t + j)] = f;
  }
}

Value WgmmaEmitter::weightDescriptor(Value slot, int64_t step, int64_t t) {
  // Bits 0-13: address >> 4; 16-29: the leading byte offset >> 4 (between
  // the K halves); 32-45: the stride byte offset >> 4 (between 8-row
  // groups); 62-63: swizzle mode 0 (none).
  const int64_t tileBytes = 128 * spec.weight.type.bits; // 1 KiB
  Value nIdx = arith::AddIOp::create(
      b, arith::MulIOp::create(b, groupN, c32(tile.nTilesPerGroup)), c32(t));
  Value byte = arith::AddIOp::create(
      b, slotRegions(slot).second,
      arith::AddIOp::create(b, c32(2 * step * tile.warpsN * tileBytes),
                            arith::MulIOp::create(b, nIdx, c32(tileBytes))));
  return kMajorDescriptor(byte, tile.warpsN * tileBytes);
}

Value WgmmaEmitter::stagedWeightDescriptor(Value buffer, int64_t step,
                                           int64_t t) {
  const int64_t nT = tile.nTilesPerGroup;
  return kMajorDescriptor(
      arith::AddIOp::create(b, buffer, c32((2 * step * nT + t) * 1024)),
      nT * 1024);
}

Value WgmmaEmitter::kMajorDescriptor(Value byte, int64_t leading) {
  Value addr = arith::AddIOp::create(b, smemAddr, byte);
  Value lo = arith::AndIOp::create(b, arith::ShRUIOp::create(b, addr, c32(4)),
                                   c32(0x3FFF));
  const uint64_t fixed =
      (uint64_t(leading / 16) << 16) | (uint64_t(128 / 16) << 32);
  return arith::OrIOp::create(b, ext64(lo), c64(int64_t(fixed)));
}

void WgmmaEmitter::issueSharedWgmmas(Value slot, SmallVector<Value> &accs,
                                     bool fresh, Value stagedBuffer) {
  const int64_t nT = tile.nTilesPerGroup, n = tile.warpM, perTile = n / 2;
  const int64_t steps = tile.kTilesPerWarp / 2;
  // [step][n-tile] weight descriptors, then one activation descriptor per
  // step, then the sums.
  SmallVector<Value> regs;
  for (int64_t step = 0; step < steps; ++step)
    for (int64_t t = 0; t < nT; ++t)
      regs.push_back(stagedBuffer
                         ? stagedWeightDescriptor(stagedBuffer, step, t)
                         : weightDescriptor(slot, step, t));
  for (int64_t step = 0; step < steps; ++step)
    regs.push_back(activationDescriptor(slot, step));
  const size_t accAt = regs.size();
  regs.append(accs.begin(), accs.end());
  regs = ptx.wgmmaFence(regs);
  const bool ints = integerSums();
  const NVVM::WGMMATypes type = ints ? NVVM::WGMMATypes::s8
                                : spec.input.type == hq::ScalarType::e4m3()
                                    ? NVVM::WGMMATypes::e4m3
                                    : NVVM::WGMMATypes::e5m2;
  Type elem = ints ? Type(i32) : Type(f32);
  auto structType = LLVM::LLVMStructType::getLiteral(
      b.getContext(), SmallVector<Type>(size_t(perTile), elem));
  SmallVector<Value> sums(regs.begin() + accAt, regs.end());
  for (int64_t step = 0; step < steps; ++step)
    for (int64_t t = 0; t < nT; ++t) {
      Value in = LLVM::UndefOp::create(b, structType);
      for (int64_t i = 0; i < perTile; ++i)
        in = LLVM::InsertValueOp::create(b, in, sums[size_t(t * perTile + i)],
                                         ArrayRef<int64_t>{i});
      Value out = NVVM::WgmmaMmaAsyncOp::create(
          b, structType, in, regs[size_t(step * nT + t)],
          regs[size_t(steps * nT + step)],
          NVVM::MMAShapeAttr::get(b.getContext(), 64, int(n), 32), type, type,
          ints ? NVVM::WGMMATypes::s32 : NVVM::WGMMATypes::f32,
          step != 0 || !promotes() || !fresh ? NVVM::WGMMAScaleOut::one
                                             : NVVM::WGMMAScaleOut::zero,
          NVVM::WGMMAScaleIn::one, NVVM::WGMMAScaleIn::one,
          NVVM::MMALayout::row, NVVM::MMALayout::col,
          /*satfinite=*/NVVM::MMAIntOverflowAttr());
      for (int64_t i = 0; i < perTile; ++i)
        sums[size_t(t * perTile + i)] =
            LLVM::ExtractValueOp::create(b, out, ArrayRef<int64_t>{i});
    }
  NVVM::WgmmaGroupSyncAlignedOp::create(b);
  accs.assign(sums.begin(), sums.end());
}

SmallVector<Value> WgmmaEmitter::computeWgmma(ArrayRef<Value> accIn,
                                              ArrayRef<Value> stage, Value slot,
                                              function_ref<void()> afterFirst) {
  if (act8)
    return computeWgmma8(accIn, stage, slot, afterFirst);
  SmallVector<Value> accs(accIn.begin(), accIn.end());
  StageCursor next{stage};
  beginDequant();
  const int64_t nT = tile.nTilesPerGroup;
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
      SmallVector<SmallVector<Value>> planeWords = takePlaneWords(next);
      if (u == 0 || !groupPerIter)
        readGroup(next, groups[size_t(t)]);
      SmallVector<Value> a = wgmmaFragment(planeWords, groups[size_t(t)]);
      regs.append(a.begin(), a.end());
    }
    issueWgmmas(regs, activationDescriptor(slot, u), accs,
                bf16 ? "bf16" : "f16");
    if (u == 0 && afterFirst)
      afterFirst();
  }
  return accs;
}

void WgmmaEmitter::finishWgmma(ArrayRef<Value> acc) {
  if (clustered())
    return clusterReduce(acc);
  if (split.ctas > 1 && split.cooperative)
    return cooperativeReduce(acc);
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

void WgmmaEmitter::clusterReduce(ArrayRef<Value> acc) {
  const int64_t C = split.ctas, T = tile.mathThreads();
  const int64_t perTile = tile.warpM / 2;
  // Every thread of the CTA is done with the pipeline's shared memory.
  clusterBarrier();
  // Sum i of consumer thread `tid` at word i * T + tid (a byte offset):
  // the stores of a warp are consecutive words.
  auto wordOf = [&](Value i) {
    return arith::MulIOp::create(
        b, arith::AddIOp::create(b, arith::MulIOp::create(b, i, c32(T)), tid),
        c32(4));
  };
  for (size_t i = 0; i < acc.size(); ++i)
    storeSharedWord(wordOf(c32(int64_t(i))), acc[i]);
  // Every CTA's sums are visible to the cluster.
  clusterBarrier();
  // CTA r (= its index along z: the cluster spans the grid's z) adds rows
  // jj = r x rows ..+rows (rows = warp_m / 8 / C) of every n-tile and
  // half.
  const int64_t rows = tile.warpM / 8 / C;
  Value firstRow = arith::MulIOp::create(b, bidZ, c32(rows));
  storeWgmma(
      rows,
      [&](int64_t q) { return arith::AddIOp::create(b, firstRow, c32(q)); },
      [&](int64_t t, int64_t half, int64_t, Value jj, int64_t e) {
        Value i = arith::AddIOp::create(b, arith::MulIOp::create(b, jj, c32(4)),
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

void WgmmaEmitter::storeWgmma(
    int64_t rows, function_ref<Value(int64_t)> jjOf,
    function_ref<Value(int64_t, int64_t, int64_t, Value, int64_t)> valueOf) {
  bool outBF16 = spec.output == hq::ScalarType::bf16();
  Type outType = outBF16 ? Type(b.getBF16Type()) : Type(b.getF16Type());
  // Element e of row q of n-tile t's half, stored to its token's row.
  auto storeElement = [&](const OutColumn &c, int64_t t, int64_t half,
                          int64_t q, int64_t e) {
    // D element 4 jj + 2 half + e: token 8 jj + 2 quad + e.
    Value jj = jjOf(q);
    Value v = valueOf(t, half, q, jj, e);
    Value local = arith::AddIOp::create(
        b, rowBase,
        arith::AddIOp::create(
            b, arith::MulIOp::create(b, quad, c32(2)),
            arith::AddIOp::create(b, arith::MulIOp::create(b, jj, c32(8)),
                                  c32(e))));
    auto [token, rowOk] = destRow(local);
    Value ok = arith::AndIOp::create(b, c.colOk, rowOk);
    if (Value s = activationScale(sourceOf(token)))
      v = arith::MulFOp::create(b, v, s);
    // MoE: the router weight multiplies the row after its bias.
    Value bits = outputBits(v, c.factor, c.bias, outType, routerWeight(token));
    auto ifOp = scf::IfOp::create(b, ok, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    Value index = arith::AddIOp::create(
        b, arith::MulIOp::create(b, sext64(token), c64(spec.nOut)),
        ext64(c.col));
    store(bits, param(hq::abi::ParamOutput), index);
  };
  // Dense, every element checked, column by column: a dense row's token
  // is the row itself.
  auto denseColumns = [&] {
    for (int64_t t = 0; t < tile.nTilesPerGroup; ++t)
      for (int64_t half = 0; half < 2; ++half) {
        OutColumn c = outputColumn(t, half);
        for (int64_t q = 0; q < rows; ++q)
          for (int64_t e = 0; e < 2; ++e)
            storeElement(c, t, half, q, e);
      }
  };
  if (!spec.isMoe() && tile.stagedRows > 0)
    return storeWholeBlocks(rows, jjOf, valueOf, outType, denseColumns);
  if (!spec.isMoe())
    return denseColumns();
  // A MoE row's token (the row table's entry) and router weight are loads
  // LLVM keeps for every column that reuses them: column by column, every
  // row's stayed live across the whole store (ptxas: 240 bytes of spill in
  // the 64-token tile with router weights at two CTAs per SM). Row by row
  // each is used by the row's stores and dies; the columns' few values
  // stay live instead.
  SmallVector<OutColumn> columns;
  for (int64_t t = 0; t < tile.nTilesPerGroup; ++t)
    for (int64_t half = 0; half < 2; ++half)
      columns.push_back(outputColumn(t, half));
  for (int64_t q = 0; q < rows; ++q)
    for (int64_t e = 0; e < 2; ++e)
      for (int64_t t = 0; t < tile.nTilesPerGroup; ++t)
        for (int64_t half = 0; half < 2; ++half)
          storeElement(columns[size_t(2 * t + half)], t, half, q, e);
}

WgmmaEmitter::OutColumn WgmmaEmitter::outputColumn(int64_t t, int64_t half) {
  Value nt = arith::AddIOp::create(b, nTile, c32(t));
  // D rows 16 w + g + 8 half are the n-tile's columns of that offset.
  Value inTile =
      arith::AddIOp::create(b, arith::MulIOp::create(b, wIn, c32(16)),
                            arith::AddIOp::create(b, grp, c32(8 * half)));
  OutColumn c;
  c.col =
      arith::AddIOp::create(b, arith::MulIOp::create(b, nt, c32(64)), inTile);
  c.colOk = arith::CmpIOp::create(b, arith::CmpIPredicate::slt, c.col,
                                  c32(spec.nOut));
  Value cc = arith::MinSIOp::create(b, c.col, c32(spec.nOut - 1));
  if (spec.weight.granularity == hq::Granularity::Channel) {
    // Prepared [1, N] scales: column c of an n-tile at 8 (c % 8) + c / 8.
    // (The n-tiles of a partial last block past N read the last one's.)
    Value st = partialBlocks()
                   ? Value(arith::MinSIOp::create(
                         b, nt, c32(spec.np / hq::layout::kTileN - 1)))
                   : nt;
    Value stored = arith::AddIOp::create(
        b, arith::MulIOp::create(b, st, c32(64)),
        arith::AddIOp::create(
            b, arith::MulIOp::create(b, grp, c32(8)),
            arith::AddIOp::create(b, arith::MulIOp::create(b, wIn, c32(2)),
                                  c32(half))));
    c.factor = loadAsF32(param(hq::abi::ParamScales), ext64(stored),
                         spec.weight.scaleType);
  }
  outputFactors(c.factor, c.bias, cc);
  return c;
}

void WgmmaEmitter::storeWholeBlocks(
    int64_t rows, function_ref<Value(int64_t)> jjOf,
    function_ref<Value(int64_t, int64_t, int64_t, Value, int64_t)> valueOf,
    Type outType, function_ref<void()> checked) {
  // A block whose rows and columns all lie inside M and N (every block
  // but the last row and column of blocks), into a 16-byte aligned output
  // (the ABI asks 4; a view may be less aligned than its allocation),
  // goes through shared memory (storeStaged); the others take the
  // checked stores. (The checked stores compute each element's address
  // from its token at run time, and under the 192 sums' register
  // pressure ptxas reloaded the output pointer from the constant bank for
  // each of the 96: the epilogue was 11 % of the consumers' stall samples
  // at 8192^2 M = 8192 against cuBLASLt's 6 %; those stores without the
  // checks, from one base plus constants, measured no faster: bench/
  // NOTES.md "8-bit activations".)
  assert(rows == tile.warpM / 8 && "the staged epilogue stores whole tiles");
  Value rowEnd = arith::AddIOp::create(
      b, arith::MulIOp::create(b, bidY, c32(tile.blockM())),
      c32(tile.blockM()));
  Value colEnd = arith::MulIOp::create(
      b, arith::AddIOp::create(b, nTile, c32(tile.nTilesPerGroup)),
      c32(hq::layout::kTileN));
  Value whole = arith::AndIOp::create(
      b, arith::CmpIOp::create(b, arith::CmpIPredicate::sle, rowEnd, m),
      arith::CmpIOp::create(b, arith::CmpIPredicate::sle, colEnd,
                            c32(spec.nOut)));
  whole = arith::AndIOp::create(
      b, whole,
      arith::CmpIOp::create(
          b, arith::CmpIPredicate::eq,
          arith::AndIOp::create(
              b, LLVM::PtrToIntOp::create(b, i64, param(hq::abi::ParamOutput)),
              c64(15)),
          c64(0)));
  // (A static activation scale is loaded once, here, for both paths.)
  if (spec.input.scaling == hq::ActScaling::Static)
    activationScale(c32(0));
  auto ifWhole = scf::IfOp::create(b, whole, /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifWhole.thenBlock());
    OutColumn c0 = outputColumn(0, 0);
    OutColumn c1 = outputColumn(0, 1);
    // The thread's first token: element 0 of row jj = jjOf(0).
    Value token0 = destRow(arith::AddIOp::create(
                               b, rowBase,
                               arith::AddIOp::create(
                                   b, arith::MulIOp::create(b, quad, c32(2)),
                                   arith::MulIOp::create(b, jjOf(0), c32(8)))))
                       .first;
    const bool perToken = spec.input.scaling == hq::ActScaling::Token;
    Value scales0 = perToken ? Value(LLVM::GEPOp::create(
                                   b, ptr, f32, param(hq::abi::ParamInputScale),
                                   ValueRange{sext64(token0)}))
                             : Value();
    // Element e of row q of the half as output bits (i16), its token's
    // (token0 + 8 q + e) scale applied.
    storeStaged(token0, [&](int64_t half, int64_t q, int64_t e) {
      const OutColumn &c = half ? c1 : c0;
      Value s = perToken ? Value(LLVM::LoadOp::create(
                               b, f32,
                               LLVM::GEPOp::create(b, ptr, f32, scales0,
                                                   ValueRange{c64(8 * q + e)}),
                               /*alignment=*/4))
                         : activationScale(token0);
      Value v = valueOf(0, half, q, jjOf(q), e);
      if (s)
        v = arith::MulFOp::create(b, v, s);
      return outputBits(v, c.factor, c.bias, outType, Value());
    });
  }
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifWhole.elseBlock());
    checked();
  }
}

void WgmmaEmitter::storeStaged(
    Value token0, function_ref<Value(int64_t, int64_t, int64_t)> bitsOf) {
  // Each consumer warpgroup stages its 64 columns of stagedRows tokens at a
  // time in its own area (tokens x 128 bytes, the 16-byte chunks of a row
  // swizzled by the row's index mod 8: chunk c of row r at c ^ (r & 7), so
  // that the eight rows of an stmatrix and the eight chunks of a row are
  // in different banks), then stores whole rows of it with 16-byte
  // stores: eight threads write a token's 128 contiguous bytes. Named
  // barrier 2 + g orders warpgroup g's stmatrix and its loads (the
  // warpgroups do not wait for each other).
  const int64_t R = tile.stagedRows, rowBytes = 2 * hq::layout::kTileN;
  Value group = arith::ShRUIOp::create(b, tid, c32(7));
  Value inGroup = arith::AndIOp::create(b, tid, c32(127));
  Value area = arith::AddIOp::create(
      b, smemAddr,
      arith::AddIOp::create(
          b, c32(hq::layout::stagingOffset(spec.weight, tile)),
          arith::MulIOp::create(b, group, c32(R * rowBytes))));
  // stmatrix: lane l gives row l & 7 of matrix l >> 3, matrix mm of a
  // step being (half mm & 1, rows jj + (mm >> 1)); that row is token
  // 8 (jj + (mm >> 1)) + (l & 7) of the warpgroup, and its 16 bytes are
  // columns 16 w + 8 half ..+8 (chunk 2 w + half).
  Value mm = arith::ShRUIOp::create(b, lane, c32(3));
  Value r8 = arith::AndIOp::create(b, lane, c32(7));
  Value chunkOf = arith::XOrIOp::create(
      b,
      arith::AddIOp::create(b, arith::MulIOp::create(b, wIn, c32(2)),
                            arith::AndIOp::create(b, mm, c32(1))),
      r8);
  Value laneRow = arith::AddIOp::create(
      b,
      arith::MulIOp::create(b, arith::ShRUIOp::create(b, mm, c32(1)), c32(8)),
      r8);
  Value laneAddr = arith::AddIOp::create(
      b, area,
      arith::AddIOp::create(b, arith::MulIOp::create(b, laneRow, c32(rowBytes)),
                            arith::ShLIOp::create(b, chunkOf, c32(4))));
  // The row stores: thread i of the warpgroup takes chunk i & 7 of rows
  // 16 j + (i >> 3) (the chunk's place in the row is the same for every j).
  Value storeRow = arith::ShRUIOp::create(b, inGroup, c32(3));
  Value storeChunk = arith::AndIOp::create(b, inGroup, c32(7));
  Value readAddr = arith::AddIOp::create(
      b, area,
      arith::AddIOp::create(
          b, arith::MulIOp::create(b, storeRow, c32(rowBytes)),
          arith::ShLIOp::create(
              b,
              arith::XOrIOp::create(b, storeChunk,
                                    arith::AndIOp::create(b, storeRow, c32(7))),
              c32(4))));
  // The warpgroup's first token (token0 less 2 quad) and the thread's
  // first output element.
  Value firstToken =
      arith::SubIOp::create(b, token0, arith::MulIOp::create(b, quad, c32(2)));
  Value out = LLVM::GEPOp::create(
      b, ptr, i16, param(hq::abi::ParamOutput),
      ValueRange{arith::AddIOp::create(
          b,
          arith::MulIOp::create(
              b, sext64(arith::AddIOp::create(b, firstToken, storeRow)),
              c64(spec.nOut)),
          ext64(arith::AddIOp::create(
              b, arith::MulIOp::create(b, nTile, c32(hq::layout::kTileN)),
              arith::MulIOp::create(b, storeChunk, c32(8)))))});
  Type v4 = VectorType::get({4}, i32);
  auto pack = [&](Value lo, Value hi) {
    return arith::OrIOp::create(
        b, arith::ExtUIOp::create(b, i32, lo),
        arith::ShLIOp::create(b, arith::ExtUIOp::create(b, i32, hi), c32(16)));
  };
  for (int64_t r0 = 0; r0 < tile.warpM; r0 += R) {
    // The area is free: the previous round's (or tile's) loads are done.
    if (r0 > 0 || tile.persistent)
      warpgroupBarrier(group);
    for (int64_t jj = r0 / 8; jj < (r0 + R) / 8; jj += 2) {
      SmallVector<Value, 4> regs;
      for (int64_t m4 = 0; m4 < 4; ++m4) {
        const int64_t half = m4 & 1, q = jj + (m4 >> 1);
        regs.push_back(pack(bitsOf(half, q, 0), bitsOf(half, q, 1)));
      }
      NVVM::StMatrixOp::create(
          b,
          sharedPtr(
              arith::AddIOp::create(b, laneAddr, c32((8 * jj - r0) * rowBytes)),
              3),
          regs, NVVM::MMALayout::col,
          NVVM::LdStMatrixShapeAttr::get(b.getContext(), 8, 8),
          NVVM::LdStMatrixEltType::B16);
    }
    warpgroupBarrier(group);
    for (int64_t j = 0; j < R / 16; ++j) {
      Value chunk = LLVM::LoadOp::create(
          b, v4,
          sharedPtr(arith::AddIOp::create(b, readAddr, c32(16 * j * rowBytes)),
                    3),
          /*alignment=*/16);
      LLVM::StoreOp::create(
          b, chunk,
          LLVM::GEPOp::create(b, ptr, i16, out,
                              ValueRange{c64((r0 + 16 * j) * spec.nOut)}),
          /*alignment=*/16);
    }
  }
}

void WgmmaEmitter::wgmmaReduceAcrossCtas(ArrayRef<Value> acc) {
  const int64_t S = split.ctas, T = tile.mathThreads();
  const int64_t n = int64_t(acc.size()), perTile = tile.warpM / 2;
  // The 64-token tiles (64 sums per thread) keep their partial sums as
  // vectors of four (the four sums of one row of eight tokens: element()
  // below) and add their own sums from registers: a quarter of the stores
  // and loads, a warp's 16-byte accesses 512 contiguous bytes. The
  // 128-token tiles (128 sums) split four ways keep vectors too but load
  // their own sums back (under ptxas on sm_90a, W4A16 g128: no spill;
  // their own sums held across the loads spilled 112 bytes); on the H200
  // (2026-12-04, two machines of the pool, so as ratios to torch fp16)
  // 1.02 -> 0.99 at 8192^2 M = 128, 0.68 -> 0.66 at 8192 x 28672. Split
  // two ways they keep one sum per access: vectors made that split spill
  // 84-112 bytes against 8.
  const int64_t W = n <= 64 || S >= 4 ? 4 : 1;
  const bool ownInRegisters = n <= 64;
  // [tile][split][access][thread], n / W accesses of W sums per thread.
  const Type unit = W == 4 ? Type(VectorType::get({4}, f32)) : Type(f32);
  Value tileId = outputTile();
  auto unitAt = [&](Value z, int64_t j) {
    return partialAt(z, c32(j), n / W, T, tid, unit);
  };
  auto element = [&](int64_t t, int64_t half, int64_t q, int64_t e) {
    return t * perTile + 4 * q + 2 * half + e;
  };
  // Access j: sums W j ..+W (W = 4: halves 0, 1 and elements 0, 1 of one
  // row, in that order).
  auto pack = [&](int64_t j) -> Value {
    return W == 1 ? acc[size_t(j)] : sumsVector(acc, j);
  };
  for (int64_t j = 0; j < n / W; ++j)
    LLVM::StoreOp::create(b, pack(j), unitAt(bidZ, j), /*alignment=*/4 * W);
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
      ptx.barrierReduceOr(1, T, arith::ExtUIOp::create(b, i32, last));
  auto ifSum = scf::IfOp::create(
      b, arith::CmpIOp::create(b, arith::CmpIPredicate::ne, isLast, c32(0)),
      /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifSum.thenBlock());
  // Acquire: the other CTAs' partial sums are visible from here on.
  LLVM::FenceOp::create(b, LLVM::AtomicOrdering::acquire, "device");
  // The sums are added and stored in chunks of rows of eight tokens, and
  // in a chunk every load of a CTA's sums is issued before the first of
  // them is needed, one CTA after another: loads inside the epilogue's
  // per-column branches waited out one L2 round trip per sum (2026-12-01:
  // 44 us at M = 64 against 27 for the cluster), and all of a thread's
  // sums of every CTA at once (2 x 128 for 128 tokens split 2) spilled 644
  // bytes under ptxas. A chunk keeps at most kReduceInFlight sums. With
  // ownInRegisters this CTA's sums come from its registers (a branch per
  // split, uniform in the CTA: the loads of the others' sums in one
  // block). The sums are added in split order whichever CTA arrives last
  // (the same bits every launch).
  const int64_t rows = tile.warpM / 8, perRow = 4 * tile.nTilesPerGroup;
  int64_t chunk = rows;
  while (chunk > 1 && S * perRow * chunk > kReduceInFlight)
    chunk /= 2;
  SmallVector<Value> total(acc.size());
  for (int64_t q0 = 0; q0 < rows; q0 += chunk) {
    // The chunk's accesses (n-tile t, row q, its W-sum pieces) in the
    // order of the loads.
    SmallVector<int64_t> units;
    for (int64_t t = 0; t < tile.nTilesPerGroup; ++t)
      for (int64_t q = q0; q < q0 + chunk; ++q)
        for (int64_t j = 0; j < 4 / W; ++j)
          units.push_back(element(t, 0, q, 0) / W + j);
    auto loadSplit = [&](int64_t z) {
      SmallVector<Value> loaded;
      for (int64_t j : units)
        // Written by other CTAs during this launch: through L2.
        loaded.push_back(LLVM::LoadOp::create(b, unit, unitAt(c32(z), j),
                                              /*alignment=*/4 * W,
                                              /*isVolatile=*/true));
      return loaded;
    };
    for (int64_t z = 0; z < S; ++z) {
      SmallVector<Value> vals;
      if (ownInRegisters) {
        auto ifOther = scf::IfOp::create(
            b, SmallVector<Type>(units.size(), unit),
            arith::CmpIOp::create(b, arith::CmpIPredicate::ne, bidZ, c32(z)),
            /*withElseRegion=*/true);
        OpBuilder::InsertionGuard g(b);
        b.setInsertionPointToStart(ifOther.thenBlock());
        scf::YieldOp::create(b, loadSplit(z));
        b.setInsertionPointToStart(ifOther.elseBlock());
        SmallVector<Value> own;
        for (int64_t j : units)
          own.push_back(pack(j));
        scf::YieldOp::create(b, own);
        vals.assign(ifOther.getResults().begin(), ifOther.getResults().end());
      } else {
        vals = loadSplit(z);
      }
      for (auto [r, j] : llvm::enumerate(units))
        for (int64_t e = 0; e < W; ++e) {
          Value x = W == 1 ? vals[r]
                           : Value(LLVM::ExtractElementOp::create(
                                 b, vals[r], c32(e)));
          Value &sum = total[size_t(W * j + e)];
          sum = z ? Value(arith::AddFOp::create(b, sum, x)) : x;
        }
    }
    storeWgmma(
        chunk, [&](int64_t q) { return c32(q0 + q); },
        [&](int64_t t, int64_t half, int64_t q, Value, int64_t e) {
          return total[size_t(element(t, half, q0 + q, e))];
        });
  }
}

Value WgmmaEmitter::sumsVector(ArrayRef<Value> acc, int64_t u) {
  Value v = LLVM::UndefOp::create(b, VectorType::get({4}, b.getF32Type()));
  for (int64_t e = 0; e < 4; ++e)
    v = LLVM::InsertElementOp::create(b, v, acc[size_t(4 * u + e)], c32(e));
  return v;
}

void WgmmaEmitter::cooperativeReduce(ArrayRef<Value> acc) {
  const int64_t S = split.ctas, T = tile.mathThreads();
  const int64_t n = int64_t(acc.size()), perTile = tile.warpM / 2;
  const int64_t rows = tile.warpM / 8, R = rows / S;
  assert(R * S == rows && "the lowering verified that split_k divides the "
                          "rows of eight tokens");
  // [tile][split][row unit][thread]: unit t x perTile / 4 + q holds the four
  // sums of row q of n-tile t (halves 0, 1 and elements 0, 1 of each), as a
  // 16-byte vector; a warp's accesses are 512 contiguous bytes.
  const Type unit = VectorType::get({4}, f32);
  auto unitOf = [&](int64_t t, int64_t q) { return t * perTile / 4 + q; };
  // The other CTAs' shares of rows, one branch per share (uniform in the
  // CTA): this CTA's own share stays in its registers.
  for (int64_t z = 0; z < S; ++z) {
    auto ifOther = scf::IfOp::create(
        b, arith::CmpIOp::create(b, arith::CmpIPredicate::ne, bidZ, c32(z)),
        /*withElseRegion=*/false);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(ifOther.thenBlock());
    for (int64_t t = 0; t < tile.nTilesPerGroup; ++t)
      for (int64_t q = z * R; q < z * R + R; ++q)
        LLVM::StoreOp::create(
            b, sumsVector(acc, unitOf(t, q)),
            partialAt(bidZ, c32(unitOf(t, q)), n / 4, T, tid, unit),
            /*alignment=*/16);
  }
  // Release: this CTA's partial sums are visible device-wide before its
  // arrival; the consumers meet at named barrier 1 (the producers of a
  // warp-specialized kernel have left; the mbarriers hold the shared
  // memory, so no block barrier).
  LLVM::FenceOp::create(b, LLVM::AtomicOrdering::release, "device");
  Value consumers = c32(T);
  NVVM::BarrierOp::create(b, TypeRange(), c32(1), consumers,
                          NVVM::BarrierReductionAttr(),
                          /*reductionPredicate=*/Value());
  {
    // Thread 0 arrives on the tile's counter and waits until every CTA of
    // the tile has: the cooperative launch keeps them all resident, so the
    // wait ends. Then it departs (a second increment); the last to depart
    // (counter 2 S) resets the counter for the next launch — no CTA still
    // waits then, as each departs only after its wait.
    auto ifFirst = scf::IfOp::create(
        b, arith::CmpIOp::create(b, arith::CmpIPredicate::eq, tid, c32(0)),
        /*withElseRegion=*/false);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(ifFirst.thenBlock());
    Value counter = LLVM::GEPOp::create(b, ptr, i32, arrivals,
                                        ValueRange{ext64(outputTile())});
    Value one = c32(1), all = c32(S);
    LLVM::AtomicRMWOp::create(b, LLVM::AtomicBinOp::add, counter, one,
                              LLVM::AtomicOrdering::release, "device");
    scf::WhileOp::create(
        b, TypeRange(), ValueRange(),
        [&](OpBuilder &ob, Location loc, ValueRange) {
          // Written by the other CTAs during this launch: through L2.
          Value seen = LLVM::LoadOp::create(ob, loc, i32, counter,
                                            /*alignment=*/4,
                                            /*isVolatile=*/true);
          Value waiting = arith::CmpIOp::create(
              ob, loc, arith::CmpIPredicate::slt, seen, all);
          scf::ConditionOp::create(ob, loc, waiting, ValueRange());
        },
        [&](OpBuilder &ob, Location loc, ValueRange) {
          scf::YieldOp::create(ob, loc);
        });
    Value before =
        LLVM::AtomicRMWOp::create(b, LLVM::AtomicBinOp::add, counter, one,
                                  LLVM::AtomicOrdering::monotonic, "device");
    auto ifLast = scf::IfOp::create(
        b, arith::CmpIOp::create(b, arith::CmpIPredicate::eq, before,
                                 c32(2 * S - 1)),
        /*withElseRegion=*/false);
    b.setInsertionPointToStart(ifLast.thenBlock());
    LLVM::StoreOp::create(b, c32(0), counter);
  }
  NVVM::BarrierOp::create(b, TypeRange(), c32(1), consumers,
                          NVVM::BarrierReductionAttr(),
                          /*reductionPredicate=*/Value());
  // Acquire: the other CTAs' partial sums are visible from here on.
  LLVM::FenceOp::create(b, LLVM::AtomicOrdering::acquire, "device");
  // This CTA's share: rows z R + q (q < R), every load of the other CTAs'
  // sums issued before the first add (S x R x 4 x n-tiles sums: 128 for
  // 128 tokens split four ways), added in split order whichever CTA this
  // is (the same bits as the last-arrival reduction).
  Value firstRow = arith::MulIOp::create(b, bidZ, c32(R));
  SmallVector<Value> total(size_t(4 * R * tile.nTilesPerGroup));
  auto local = [&](int64_t t, int64_t half, int64_t q, int64_t e) {
    return size_t((t * R + q) * 4 + 2 * half + e);
  };
  for (int64_t z = 0; z < S; ++z) {
    // Split z's sums of this share: loaded where z is another CTA (rows
    // z' R + q of this CTA z'), else (z is this CTA: rows z R + q) from
    // this CTA's registers. One branch per split, uniform in the CTA.
    const size_t units = size_t(R * tile.nTilesPerGroup);
    auto ifOther = scf::IfOp::create(
        b, SmallVector<Type>(units, unit),
        arith::CmpIOp::create(b, arith::CmpIPredicate::ne, bidZ, c32(z)),
        /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(ifOther.thenBlock());
      SmallVector<Value> loaded;
      for (int64_t t = 0; t < tile.nTilesPerGroup; ++t)
        for (int64_t q = 0; q < R; ++q) {
          Value at = arith::AddIOp::create(b, firstRow, c32(unitOf(t, q)));
          // Written by other CTAs during this launch: through L2.
          loaded.push_back(LLVM::LoadOp::create(
              b, unit, partialAt(c32(z), at, n / 4, T, tid, unit),
              /*alignment=*/16, /*isVolatile=*/true));
        }
      scf::YieldOp::create(b, loaded);
      b.setInsertionPointToStart(ifOther.elseBlock());
      SmallVector<Value> own;
      for (int64_t t = 0; t < tile.nTilesPerGroup; ++t)
        for (int64_t q = 0; q < R; ++q)
          own.push_back(sumsVector(acc, unitOf(t, z * R + q)));
      scf::YieldOp::create(b, own);
    }
    for (int64_t t = 0; t < tile.nTilesPerGroup; ++t)
      for (int64_t q = 0; q < R; ++q)
        for (int64_t half = 0; half < 2; ++half)
          for (int64_t e = 0; e < 2; ++e) {
            Value x = LLVM::ExtractElementOp::create(
                b, ifOther.getResult(unsigned(t * R + q)), c32(2 * half + e));
            Value &sum = total[local(t, half, q, e)];
            sum = z ? Value(arith::AddFOp::create(b, sum, x)) : x;
          }
  }
  storeWgmma(
      R, [&](int64_t q) { return arith::AddIOp::create(b, firstRow, c32(q)); },
      [&](int64_t t, int64_t half, int64_t q, Value, int64_t e) {
        return total[local(t, half, q, e)];
      });
}
