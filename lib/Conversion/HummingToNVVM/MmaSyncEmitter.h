//===- MmaSyncEmitter.h - mma.sync over prepared weights --------*- C++ -*-===//
//
// The mma.sync generation (sm_80 and later) of the prepared-layout kernels
// (PreparedEmitter.h):
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
//   one copy), no block barrier: its B fragments of a 16 x 64 weight tile
//   (one chunk per bit plane word group: 16 bytes for 4-bit weights), one
//   16-byte piece of a row-major 16 x 16 activation tile per 16 rows
//   (zero-filled past M and K, read back with ldmatrix.x4), and the scales /
//   zero points of its eight columns (one chunk per group).
// * With share_activations (one warp row, no block_copies) the warps along
//   N of each K group split that group's activation tiles among them: warp
//   w copies tiles j = w + warpsN r into its own region (the chunks the
//   other warps keep for those tiles stay empty), every warp ldmatrix-reads
//   each tile from its copier's region, and the group's named barrier
//   (bar.sync 1 + group, 32 x warpsN threads) replaces the warp barrier:
//   A comes from L2 once per K group instead of once per warp, without the
//   whole block's lockstep. Weights and scales stay per warp.
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
//   stores them: the reduction and the epilogue are spread over the block
//   (MmaSyncEpilogue.cpp).
// * Kernels for at most 8 tokens (16-bit activations, f32 sums, not
//   batch-invariant: weightsAsA) take the transposed product: the
//   dequantized weights are the m16n8k16 A operand (the b0 / b1 of two n8
//   sub-tiles are its four registers), tokens 0..7 the B operand
//   (ldmatrix.x2): one MMA per 16 columns instead of one per 8, and 32
//   shuffles after the loop put the sums back in the C layout.
// * 8- and 4-bit activations (computeNarrow): m16n8k32 (e4m3 / e5m2 / s8)
//   or m16n8k64 (s4) steps over two or four k-tiles, whose 16-row
//   activation tiles of 32-byte rows are read with the same ldmatrix.x4;
//   each iteration's sums start from zero and are folded into the f32
//   ones (times the C column's group scale: scale_after_mma). 4-bit ones
//   take per-warp copies only. Where the chip has no fp8 mma.sync of its
//   own (sm_90: f16MmaForFp8) each fp8 k32 step is two m16n8k16 f16 MMAs
//   over the codes' exact f16 values, in a k order both operands share.
// * split_k CTAs may share a tile's K: each stores its sums to the module's
//   workspace and the last to arrive adds them in split order, or (with
//   cluster_split) the CTAs form a thread block cluster and add through
//   distributed shared memory.
//
//===----------------------------------------------------------------------===//

#ifndef HUMMING_LIB_CONVERSION_HUMMINGTONVVM_MMASYNCEMITTER_H
#define HUMMING_LIB_CONVERSION_HUMMINGTONVVM_MMASYNCEMITTER_H

#include "PreparedEmitter.h"

namespace mlir::humming {

class MmaSyncEmitter : public PreparedEmitter {
public:
  explicit MmaSyncEmitter(const PreparedKernelArgs &args);

protected:
  Value placeWarps(Value warp) override;
  void prepareSlots(Value warp) override;
  /// The cp.async pipeline. cp.async.wait_group orders a lane's own copies;
  /// the warp barrier in the loop makes the others' visible (activation
  /// tiles, 8-bit weight planes) — cooperative kernels take a block
  /// barrier. Iteration it reads slot it % S into registers, issues
  /// iteration it + S - 1 into the slot read one iteration ago and
  /// computes.
  void emitLoop(Value first) override;
  /// Chunk c is half h = c % 2 of row r = (c / 2) % block_m, stored with
  /// the halves of a row swapped by bit 2 of the row (ldmatrix reads free
  /// of bank conflicts).
  void activationChunkPlace(Value c, Value &h, Value &r) override;
  Value activationChunkAt(Value slotBase, Value u, Value h, Value r) override;
  void issueWarpCopies(Value iter, Value slot) override;

private:
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
    /// 2 q + 1 copied (weightsAsA: the 16 bytes lane g copied, its B
    /// columns 8 j + g, after the MMAs).
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

  /// The copies of iteration `iter` (k-tiles clamped to K unless K is
  /// exact), in the order compute() consumes their words.
  SmallVector<Copy> copiesFor(Value iter);
  /// The copy (chunk unset) of this lane's 16 bytes of the 16 x 16
  /// activation tile of k-tile `t`, block rows rowBase + rowOffset ..+16.
  Copy activationCopy(Value t, Value rowOffset);
  /// The words of pipeline slot `slot`, in copy order.
  Stage readSlot(Value slot);
  /// Cooperative kernels: this warp's words of a slot in the order
  /// compute() consumes them.
  Stage readCooperativeSlot(Value slot);
  /// Appends to `s` the m16n8k16 A fragment a0..a3 that ldmatrix.x4 reads
  /// from the rows this lane's `addr` points at (weightsAsA: the B
  /// fragment b0, b1 of tokens 0..7, ldmatrix.x2).
  void pushLdmatrix(Value addr, Stage &s);
  /// The row of a 16-row activation tile whose address this lane gives
  /// ldmatrix.x4: lane % 8 + 8 ((lane / 8) % 2) (lanes 16-31 repeat the rows
  /// for the second 8 columns); ldmatrix.x2 of rows 0..7 (weightsAsA):
  /// lane % 8.
  Value ldmatrixRow() {
    Value low = arith::AndIOp::create(b, lane, c32(7));
    if (weightsAsA)
      return low;
    return arith::AddIOp::create(
        b, low,
        arith::MulIOp::create(
            b,
            arith::AndIOp::create(b, arith::ShRUIOp::create(b, lane, c32(3)),
                                  c32(1)),
            c32(8)));
  }
  /// The 8-column half of the row this lane's ldmatrix address points at
  /// (before any swizzle): lane / 16 for x4, (lane / 8) % 2 for x2.
  Value ldmatrixHalf() {
    if (weightsAsA)
      return arith::AndIOp::create(b, arith::ShRUIOp::create(b, lane, c32(3)),
                                   c32(1));
    return arith::ShRUIOp::create(b, lane, c32(4));
  }
  /// Shared-memory address (ptr<3>) of word `word` of `chunk` of `slot` for
  /// this lane.
  Value slotAddress(Value slot, int64_t chunk, int64_t word);
  /// The same for a runtime chunk (share_activations' copies).
  Value slotAddress(Value slot, Value chunk, int64_t word);
  /// One iteration's MMAs over the words of its slot.
  SmallVector<Value> compute(ArrayRef<Value> accs, ArrayRef<Value> stage);
  /// weightsAsA: the loop's transposed sums (D element e of m16 tile J:
  /// column 16 J + g + 8 (e / 2), token 2 q + e % 2) in the C layout the
  /// epilogue takes (element e of sub-tile j: token g + 8 (e / 2), column
  /// 8 j + 2 q + e % 2), by 32 shuffles once after the loop.
  SmallVector<Value> untransposeSums(ArrayRef<Value> t);
  /// The same with 8- or 4-bit activations: per k32 step (k-tiles 2 s,
  /// 2 s + 1; k64 over four k-tiles with 4-bit ones) the eight n8
  /// sub-tiles' B registers (eightBitWord, fourBitWord) and one m16n8k32
  /// (m16n8k64) MMA per 16 rows into the iteration's own sums, which are
  /// then added to the running f32 sums (times the group scale of the C
  /// column).
  SmallVector<Value> computeNarrow(ArrayRef<Value> accs,
                                   ArrayRef<Value> stage);
  /// f16MmaForFp8: the k32 step of `a` (the step's 4 x mt A registers of
  /// fp8 codes) and `stepWords` (its two k-tiles' plane words) as two
  /// m16n8k16 f16 MMAs per 16 rows and n8 sub-tile into `sums`.
  void f16StepOfFp8(ArrayRef<Value> a,
                    ArrayRef<SmallVector<SmallVector<Value>>> stepWords,
                    const GroupData &group, SmallVector<Value> &sums);
  /// Four fp8 codes (bytes x0..x3, k in order) as the f16 pairs (x0, x2)
  /// and (x1, x3), exact.
  std::pair<Value, Value> fp8WordAsF16(Value word);
  /// One MMA of the activation type (m16n8k32 s8 with s32 sums, e4m3 /
  /// e5m2 with f32 sums; m16n8k64 s4 with s32 sums): A a0..a3, B b0, b1, C
  /// c0..c3; the result struct.
  Value mmaNarrow(ArrayRef<Value> a, ArrayRef<Value> bOps, ArrayRef<Value> c);
  /// 4-bit activations: B register b0 (`half` 0) or b1 (1) of n8 sub-tile
  /// j for the k64 step of `stepWords` (the four k-tiles' plane words):
  /// bytes j % 2 and j % 2 + 2 of the words of pairs 2 j, 2 j + 1 in
  /// k-tiles 2 half and 2 half + 1 (layout::preparedRow), offset binary to
  /// s4 by one xor.
  Value fourBitWord(ArrayRef<SmallVector<SmallVector<Value>>> stepWords,
                    int j, int half);
  /// k-tiles per MMA k step: 1 (16-bit activations), 2 (8-bit), 4 (4-bit).
  int64_t kTilesPerStep() const { return act4 ? 4 : act8 ? 2 : 1; }

  // ---- MmaSyncEpilogue.cpp ---------------------------------------------
  /// After the loop: the in-block split-K reduction and the epilogue, both
  /// spread over the warp groups (see `owns`).
  void finish(ArrayRef<Value> acc, Value tid);
  /// Whether this warp's group owns output unit `unit` (two accumulators:
  /// one row, two adjacent columns).
  Value owns(int64_t unit);
  /// `body`'s two values where this warp owns `unit`, zeros elsewhere.
  SmallVector<Value> ifOwned(int64_t unit,
                             function_ref<SmallVector<Value>()> body);
  /// Scales, bias, conversion and the store of output unit `unit`.
  void storeUnit(int64_t unit, Value v0, Value v1);
  /// Split-K across CTAs: every CTA of an output tile stores its sums to
  /// the workspace; the last to arrive adds all of them in split order and
  /// runs the epilogue (so the result does not depend on which CTA
  /// finished last).
  void reduceAcrossCtas(ArrayRef<SmallVector<Value>> sums, Value tid);
  /// This thread's column among the threads of one K-split group (warp
  /// row, warp along N, lane): where the CTA split keeps its sums.
  Value groupColumn();
  /// The same through distributed shared memory (cluster_split): every
  /// CTA leaves its units' sums in its shared memory, CTA r adds and
  /// stores the units u with u % split_k = r.
  void reduceInCluster(ArrayRef<SmallVector<Value>> sums);

  /// 16-byte chunks per lane and slot.
  int64_t chunks;
  /// The copies of one iteration (their structure only: chunks and sizes).
  SmallVector<Copy> copyShape;
  /// Byte offset of this lane's first chunk of slot 0.
  Value laneBase;
};

} // namespace mlir::humming

#endif // HUMMING_LIB_CONVERSION_HUMMINGTONVVM_MMASYNCEMITTER_H
