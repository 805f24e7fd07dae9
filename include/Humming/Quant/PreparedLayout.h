//===- PreparedLayout.h - The mma_sync execution layout ---------*- C++ -*-===//
//
// The one description of the prepared weight layout of the mma_sync kernel
// family (16-bit activations): the host repack (prepareMmaSync) writes it and
// the lowering's loads read it, both through the functions below, so the two
// cannot drift. No MLIR dependency.
//
// Weights. K is cut into k-tiles of 16 and N into n-tiles of 64. One warp
// reads one (k-tile, n-tile) with one vector load per lane per plane, and the
// lane then holds exactly the codes of its B fragments of the eight
// m16n8k16 MMAs of that tile (PTX ISA 9.7.14.5.8): for sub-tile j (0..7) and
// register r (0..1), the pair of codes (n, k) and (n, k + 1) with
//   n = 64 * ntile + 8 * j + lane / 4,  k = 16 * ktile + 8 * r + 2 * (lane % 4).
// The pair index is q = 2 * j + r (0..15).
//
// A b-bit code is split into bit planes, the binary decomposition of b
// (7 = 4 + 2 + 1, 8 = 8): plane p of width w holds bits [shift, shift + w)
// of the code. In a plane, a 32-bit word holds 16 / w pairs: pair q sits in
// word q / (16 / w), its first code at bit w * (q % (16 / w)) and its second
// 16 bits higher, so one shift and one mask put both codes of a pair into the
// two 16-bit lanes of a register (ready for magic-number dequantization).
// Within a tile, planes follow each other, each 32 lanes x w words, lane-major
// (a lane's words of a plane are contiguous and aligned to the vector size).
// The tile (ktile, ntile) starts at word ktile * (N * b / 2) + ntile * 32 * b
// of the [K/16, N*b/2] i32 tensor.
//
// 8-bit activations (k32 steps over two k-tiles): the sm_90a wgmma's A
// register i of lane (g, q) holds four 8-bit weights of k 4 q ..+4
// (registers 0, 1) or 16 + 4 q ..+4 (registers 2, 3) of one k32 step, and
// the mma.sync m16n8k32 B registers b0 / b1 of lane (g, q) the same k rows
// of column g. So that the words of pairs 2 j, 2 j + 1 (one 8-bit plane
// word) are that register as they are, a k-tile's rows are permuted: its
// position r
// holds the weights of row eightBitRow(r) = 4 ((r % 8) / 2) + 2 (r % 2) +
// r / 8 of the same k-tile (a permutation inside each 16 rows of K, so
// scale groups of 16 or more are unchanged). 16-bit activations keep r.
//
// Codes. Unsigned integers as they are; signed integers in offset binary
// (q + 2^(b-1), the top bit flipped), so every integer weight dequantizes as
// (code - zero) * scale with zero = 2^(b-1) when the schema has no zero
// point; float codes keep their bits.
//
// Scales and float zero points: [G, N] (G groups along K; channel: 1), the
// 64 columns of n-tile t permuted so that the 8 columns one lane needs are
// contiguous: column 64 t + 8 j + g is stored at 64 t + 8 g + j.
// Integer zero points: [G, N*zb/32] with zb = 4 (b <= 4) or 8 bits per code;
// lane group g of n-tile t finds its 8 codes (j = 0..7) in the zb consecutive
// bytes starting at byte (64 t + 8 g) * zb / 8, code j at bit j * zb.
//
//===----------------------------------------------------------------------===//

#ifndef HUMMING_QUANT_PREPAREDLAYOUT_H
#define HUMMING_QUANT_PREPAREDLAYOUT_H

#include "Humming/Quant/Quantize.h"
#include "Humming/Quant/Result.h"
#include "Humming/Quant/Schema.h"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace humming::layout {

constexpr int64_t kTileK = 16;
constexpr int64_t kTileN = 64;
/// Pairs of codes per lane and tile (8 sub-tiles x 2 registers).
constexpr int kPairs = 16;

/// Rows of K the prepared row permutation stays within: a k-tile (16) for
/// 16- and 8-bit activations, two k-tiles (32) for 4-bit ones.
inline int64_t preparedRowSpan(unsigned activationBits) {
  return activationBits == 4 ? 32 : kTileK;
}
/// The row (of its preparedRowSpan rows) whose weights position r of the
/// same span holds: r for 16-bit activations, the permutation above for
/// 8-bit ones (the wgmma k32 A fragment, the mma.sync m16n8k32 B one), and
/// for 4-bit ones (mma.sync m16n8k64 s4: B register b0 of lane (g, q)
/// holds k 8 q ..+8 of column g in its nibbles, b1 k 32 + 8 q ..+8) the
/// row 8 ((p % 8) / 2) + 4 u + 2 (p % 2) + p / 8 for position p of k-tile
/// u (r = 16 u + p): bytes j % 2 and j % 2 + 2 of the 4-bit plane words of
/// pairs 2 j, 2 j + 1 in k-tiles 0 and 1 of the span are the register's
/// bytes in order.
inline int64_t preparedRow(int64_t r, unsigned activationBits) {
  if (activationBits == 4) {
    const int64_t u = r / kTileK, p = r % kTileK;
    return 8 * ((p % 8) / 2) + 4 * u + 2 * (p % 2) + p / 8;
  }
  if (activationBits != 8)
    return r;
  return 4 * ((r % 8) / 2) + 2 * (r % 2) + r / 8;
}

/// The order of the codes inside a prepared tile (k-tile, n-tile). Every
/// schema but one keeps the MMA-fragment order above. sm_90a's wgmma reads
/// weights that are 8-bit codes its 8-bit activation MMA takes as they are
/// (e4m3 or e5m2 weights with activations of the same type; 8-bit integer
/// weights without zero points with si8 activations) straight from shared
/// memory as its A operand, by descriptor: their tiles keep their places
/// (tileWord) and sizes, but tile (kt, nt) holds 64 rows of 16 bytes, row c
/// the codes of column 64 nt + c at k 16 kt ..+16 in order (kMajorByte).
/// The tiles of k-tiles 2 s and 2 s + 1 of one n-tile are then the two
/// K halves of wgmma's no-swizzle K-major core matrices of an m64 k32 A
/// operand (8 rows x 16 bytes, 128 contiguous bytes each). Integer codes
/// are stored as the s8 the MMA reads: si8 as it is (not offset binary),
/// ui8 (implicit zero point 128) as code - 128.
enum class TileOrder : uint8_t { Fragments, KMajor };
/// The tile order of a layer's weights for activations `in` on a chip whose
/// kernels read 8-bit weights K-major from shared memory (`kMajorReader`:
/// Chip::readsKMajorEightBit, wgmma on sm_90a) or not.
TileOrder tileOrder(const WeightSchema &w, const InputSchema &in,
                    bool kMajorReader);
/// Whether tile `t` may end the padded N with a partial block of columns
/// (N a multiple of 64, not of block_n): the dense wgmma kernels over
/// K-major weights with every copy by TMA (tma = [a, b], warp-specialized)
/// and no K split or L2 prefetch. Their bulk copies take the last block's
/// n-tiles inside N only (the copies' sizes and the full barrier's bytes
/// are the block's share; with weight_map the weights' tensor copy brings
/// the n-tiles past N as zeros and counts its whole box), its channel
/// scales the last n-tile's, and its stores the columns inside N; the other
/// n-tiles' wgmmas are never stored (DeepSeek-V3's N = 2112 on 128-column
/// blocks).
bool partialColumnBlocks(const TileConfig &t, const WeightSchema &w,
                         const InputSchema &in);
/// KMajor: the xor that turns a canonical code into the byte the MMA reads
/// (ui8's implicit zero point 128; si8 and floats as they are).
inline uint32_t kMajorXor(const WeightSchema &w) {
  return w.type.isInt() && !w.type.isSigned ? 0x80u : 0u;
}
/// KMajor: the byte of tile (k-tile, n-tile) that holds weight (n, k).
inline int64_t kMajorByte(int64_t n, int64_t k) {
  return (n % kTileN) * kTileK + k % kTileK;
}

/// One bit plane of a b-bit code.
struct Plane {
  unsigned width;      ///< 8, 4, 2 or 1
  unsigned shift;      ///< lowest code bit the plane holds
  unsigned wordOffset; ///< first word of the plane in a tile, / 32 lanes
};

/// The planes of a `bits`-bit code, widest first.
std::vector<Plane> planes(unsigned bits);

/// Word of tile (ktile, ntile) (relative to the tile's start) that holds
/// pair q of `lane` in `plane`, and the bit of the pair's first code.
inline int64_t pairWord(const Plane &p, int lane, int q) {
  return int64_t(p.wordOffset) * 32 + int64_t(lane) * p.width +
         q / int(16 / p.width);
}
inline unsigned pairBit(const Plane &p, int q) {
  return p.width * unsigned(q % int(16 / p.width));
}
/// First word of tile (ktile, ntile) for a padded N `n`.
inline int64_t tileWord(int64_t ktile, int64_t ntile, int64_t n,
                        unsigned bits) {
  return ktile * (n * bits / 2) + ntile * 32 * int64_t(bits);
}
/// Prepared column of logical column `n` in scales / float zero points.
inline int64_t permutedColumn(int64_t n) {
  int64_t t = n / kTileN, c = n % kTileN;
  return t * kTileN + (c % 8) * 8 + c / 8;
}
/// Bits per integer zero point in the prepared layout.
inline unsigned zeroPointBits(unsigned bits) { return bits <= 4 ? 4 : 8; }

/// The shape of a prepared-layout mma_sync kernel (what a tile_config
/// means for it): warps of warpM x 64 outputs, warpsN of them along N and
/// warpsM along M, kSplit warp groups splitting each block_k chunk of K
/// (kTilesPerWarp k-tiles of 16 each), and a cp.async pipeline of `stages`
/// slots.
///
/// With one warp row (warpsM = 1) every lane copies the bytes it reads
/// itself (no block barrier: the small-M kernels). With several
/// (cooperative(): the large-M kernels) the block copies one activation
/// tile and one weight tile per stage together and every warp reads the
/// rows and columns it needs, so each byte comes from L2 once per block;
/// a block barrier per iteration orders the copies and the reads.
struct KernelShape {
  int64_t warpM = 16;
  int64_t warpsN = 1;
  int64_t kSplit = 1;
  int64_t kTilesPerWarp = 2;
  int64_t stages = 3;
  int64_t warpsM = 1;
  /// Blocks per SM the registers must allow (ptxas .minnctapersm).
  int64_t ctasPerSm = 1;
  /// The block copies its tiles together even with one warp row.
  bool blockCopies = false;
  /// One warp row, warps copying their own tiles: the warps along N of a K
  /// group share the activation copies (TileConfig::shareActivations).
  bool shareActivations = false;
  /// Group scales multiply the f32 sums after the MMAs (TileConfig).
  bool scaleAfterMma = false;
  /// The MMA generation the kernel issues (TileConfig::mma: mma_sync or
  /// wgmma; the Blackwell generations join here).
  MmaKind mma = MmaKind::MmaSync;
  /// sm_90a wgmma (mma = wgmma): the transposed product out^T = W X^T, one
  /// warpgroup of four warps per warpM tokens (the instruction's n) x
  /// nTilesPerGroup n-tiles of 64 weight columns (one m64 instruction
  /// each; warp w of the group supplies rows 16 w ..+16 of every n-tile's A
  /// operand from registers). warpsN then counts the block's n-tiles, not
  /// its warps; the block always copies cooperatively, and the activations
  /// of a k-tile lie in shared memory as wgmma's no-swizzle K-major core
  /// matrices (8 tokens x 16 bytes, 128 contiguous bytes; the two 8-column
  /// halves of K block_m x 16 bytes apart).
  bool wgmma() const { return mma == MmaKind::Wgmma; }
  int64_t nTilesPerGroup = 1;
  /// wgmma with warp_specialized: a producer warpgroup (128 threads after
  /// the consumer warpgroups) issues every copy; the consumers only load
  /// from shared memory, dequantize and run the wgmmas. Full / empty
  /// mbarriers per slot (after the slots in shared memory) replace the
  /// block barrier, so the consumer warpgroups do not run in lockstep.
  bool warpSpecialized = false;
  /// wgmma with split_k (mma_sync with split_k and cluster_split): this
  /// many CTAs of a thread block cluster share a tile's K and add their
  /// sums through distributed shared memory (each leaves its sums in its
  /// shared memory; CTA r of the cluster adds and stores its share: wgmma
  /// tokens 8 jj ..+8 for its share of jj, mma_sync the output units u
  /// with u % clusterSplit = r). No global workspace.
  int64_t clusterSplit = 1;
  /// wgmma with warp_specialized and tma = [b]: the weights of each k-tile
  /// (the block's n-tiles, contiguous in the prepared layout) arrive by one
  /// bulk copy (cp.async.bulk, the TMA unit) issued by one producer thread
  /// and completing on the slot's full mbarrier (expect_tx), instead of
  /// 16-byte cp.async copies from every producer thread.
  bool tmaWeights = false;
  /// wgmma with warp_specialized and tma = [a]: the activations of each
  /// iteration arrive by one 2-D tensor copy (cp.async.bulk.tensor, a box
  /// of the iteration's K x block_m rows, swizzled: activationRowBytes)
  /// issued by one producer thread through a tensor map the runtime encodes
  /// per launch (abi::inputMapArgs) and passes by value after M; rows past
  /// M and columns past K arrive as zeros.
  bool tmaActivations = false;
  /// tma = [a] in a mixture-of-experts kernel: the activations lie in the
  /// slot as the tensor copy would leave them (activationRowBytes rows in
  /// TMA's swizzle), but the producers gather each row's 16-byte chunks
  /// with cp.async (a MoE block's rows are scattered tokens, and sm_90's
  /// TMA has no row gather); no tensor map.
  bool gatheredActivations = false;
  /// multicast_a = 2 (wgmma, warp_specialized, tma = [a, b], dense): the
  /// CTAs of a pair of column blocks (a thread block cluster of two along
  /// x, the same rows) share each iteration's activation tile: each copies
  /// half of its rows by a multicast tensor copy into both CTAs' slot, each
  /// CTA's full barrier counts both halves, and a slot is refilled only
  /// once both CTAs' consumers released it (each consumer warp arrives on
  /// its own CTA's empty barrier and on the peer's). Half the activation
  /// bytes from L2 per CTA.
  int64_t multicastA = 1;
  /// Activations by TMA's tensor copy (tma = [a], not gathered).
  bool tensorActivations() const {
    return tmaActivations && !gatheredActivations;
  }
  /// tma = [a]: the bytes of a token's row of one iteration's activations
  /// in a slot (32 per k-tile of 16-bit activations, 16 of 8-bit ones: 32,
  /// 64 or 128), written by one tensor copy
  /// per iteration in TMA's swizzle of that width and read by wgmma
  /// descriptors in the same swizzle mode; 0 without tma = [a].
  int64_t activationRowBytes() const {
    return tmaActivations ? 2 * activationBits * kTilesPerIteration() : 0;
  }
  /// Warp-specialized wgmma: the previous iteration's wgmmas stay in flight
  /// until this iteration's first k-tile is issued (TileConfig).
  int64_t wgmmaInFlight = 0;
  /// cp.async pipelines: iterations of weights asked of L2 beyond the one
  /// each iteration copies (TileConfig::l2Prefetch).
  int64_t l2Prefetch = 0;
  /// TileConfig::rasterM: blocks of rows per block of columns in the
  /// order the CTAs take their output tiles.
  int64_t rasterM = 1;
  /// TileConfig::persistent: the CTAs loop over output tiles.
  int64_t persistent = 0;
  /// TileConfig::promotionInterval: iterations (slots) whose wgmmas sum
  /// into one set of fresh sums before they join the running ones.
  int64_t promotionInterval = 1;
  /// Bits of an activation (16, or 8: wgmma's k32 instructions over two
  /// k-tiles, whose 16-byte shared-memory rows then hold a whole k-tile).
  int64_t activationBits = 16;
  /// wgmma over weights in TileOrder::KMajor: the slot's weight tiles are
  /// the wgmmas' A operand, read by shared-memory descriptor (no loads into
  /// registers, no conversion).
  bool weightsByDescriptor = false;
  /// TileConfig::weightMap (weightsByDescriptor, tma = [b], dense): an
  /// iteration's weights arrive by one 3-D tensor copy (the block's n-tiles
  /// by the iteration's k-tiles, through a tensor map the runtime encodes
  /// once per layer: abi::weightMapArgs) instead of one bulk copy per
  /// k-tile; the n-tiles past N and the k-tiles past K arrive as zeros, and
  /// the full barrier expects the whole box.
  bool weightMap = false;
  /// TileConfig::stagedWeights (8-bit activations, weights not K-major):
  /// each consumer warpgroup converts an iteration's weights into one of
  /// its two stage buffers after the mbarriers (weightStageOffset), laid
  /// out as a K-major slot's weights are (k-tile u's nTilesPerGroup tiles
  /// of 64 rows x 16 bytes, then u + 1's), and its wgmmas read them there
  /// by descriptor.
  bool stagedWeights = false;
  /// The bytes of one stage buffer (an iteration's weights of one
  /// warpgroup's n-tiles as 8-bit codes) and of all of them (two per
  /// consumer warpgroup).
  int64_t weightStageBufferBytes() const {
    return stagedWeights ? kTilesPerIteration() * nTilesPerGroup * 1024 : 0;
  }
  int64_t weightStageBytes() const {
    return 2 * weightStageBufferBytes() * groupsN() * warpsM;
  }
  /// 8-bit activations scaled per group of K (InputSchema group<g>, with
  /// g >= the iteration's K): each slot also holds the f32 scales of the
  /// block's tokens for its iteration's group (CooperativeSlot), copied by
  /// cp.async, which each iteration's sums take when they are added to the
  /// running ones (DeepSeek-V3's fine-grained FP8: 1 x 128 activation
  /// groups).
  bool groupInputScales = false;
  /// wgmma with 8-bit activations whose sums do not promote (si8 without
  /// group scales: wgmmaPromotes): one set of sums, not two.
  bool singleSumSet = false;
  /// Warp-specialized dense wgmma tiles of one n-tile per warpgroup: the
  /// outputs of a block that lies inside M and N go through shared memory
  /// (stmatrix, then 16-byte row stores), this many tokens at a time per
  /// consumer warpgroup, each warpgroup in its own staging area after the
  /// mbarriers (stagingOffset); 0: every thread stores its own elements.
  /// Chosen by the lowering from the shared memory the pipeline leaves.
  int64_t stagedRows = 0;
  /// The staging areas' bytes (stagedRows tokens x 64 columns x 2 bytes
  /// per consumer warpgroup).
  int64_t stagingBytes() const {
    return stagedRows * kTileN * nTilesPerGroup * 2 * groupsN() * warpsM;
  }
  /// mma_sync with 8-bit float activations on a chip that has no fp8
  /// mma.sync of its own (Chip::emulatesFp8MmaSync: sm_90): each k32 step
  /// is two m16n8k16 f16 MMAs over the operands' exact f16 values (e4m3 and
  /// e5m2 are subsets of f16), the activation registers converted once per
  /// step instead of by ptxas before every MMA, and dequantized weights
  /// taken as f16 pairs without the round trip through fp8.
  bool f16MmaForFp8 = false;
  /// mma_sync with 8-bit float activations on a chip whose plain fp8
  /// mma.sync runs at half rate (Chip::blockScaledFp8MmaSync: the sm_120
  /// family): each m16n8k32 is the block-scaled kind::mxf8f6f4 form with
  /// scale_vec::1X ue8m0 scales of 127 (2^0) for A and B, which computes
  /// the same sums.
  bool blockScaledFp8 = false;

  int64_t blockM() const { return warpM * warpsM; }
  int64_t blockN() const { return kTileN * warpsN; }
  /// wgmma: warpgroups along N.
  int64_t groupsN() const { return warpsN / nTilesPerGroup; }
  /// Threads that run the MMAs (wgmma: the consumer warpgroups).
  int64_t mathThreads() const {
    return wgmma() ? 128 * groupsN() * warpsM
                 : 32 * warpsN * warpsM * kSplit;
  }
  /// warp_specialized: the producer warpgroup's threads (they issue every
  /// copy), else none.
  int64_t producerThreads() const { return warpSpecialized ? 128 : 0; }
  int64_t threads() const { return mathThreads() + producerThreads(); }
  bool cooperative() const { return warpsM > 1 || blockCopies || wgmma(); }
  /// k-tiles of one pipeline iteration (every K-split group's).
  int64_t kTilesPerIteration() const { return kSplit * kTilesPerWarp; }
  /// warp_specialized: a full and an empty mbarrier (8 bytes each) per
  /// slot, after the slots (and after the cluster workspace where that is
  /// larger).
  int64_t mbarrierBytes() const { return warpSpecialized ? 16 * stages : 0; }
  /// f32 slots for split-K partial sums in shared memory: every warp group
  /// of an in-block split leaves all its sums (each then adds 1/kSplit of
  /// them); with clusterSplit every consumer thread leaves its wgmma sums
  /// (warpM / 2 per n-tile) for the cluster, and an mma_sync block one
  /// group's sums (what the in-block split's space holds already).
  int64_t workspaceFloats() const {
    if (wgmma())
      return clusterSplit > 1
                 ? mathThreads() * (warpM / 2) * nTilesPerGroup
                 : 0;
    const int64_t group = warpsM * warpsN * 32 * (warpM / 16) * 32;
    return kSplit > 1 ? kSplit * group : clusterSplit > 1 ? group : 0;
  }
};

/// The mbarrier protocol of the warp-specialized wgmma kernels (S slots, n
/// pipeline iterations of a CTA); the emitter builds these formulas in IR
/// with the iteration a runtime value, and PreparedLayoutTest checks them
/// under random interleavings of producers, consumers and landing copies.
/// Slot s has a full barrier (one arrival per producer thread and fill) and
/// an empty one (one per consumer thread and release).
namespace ws {
/// Fills a producer keeps in flight before it waits for the oldest to land
/// (cp.async.wait_group), fences it and arrives on its full barrier. More
/// would deadlock: a consumer releases use u only after waiting for fill
/// u + 1, which is announced once fill u + 1 + D is issued, which waits
/// for the release of use u + 1 + D - S.
inline int64_t fillsInFlight(int64_t stages) { return stages - 2; }
/// Whether every byte of a fill arrives by TMA (tma = [a, b]: activations
/// by tensor copies, weights, scales and zero points by bulk copies; the
/// per-group regions must be whole 16-byte units, which the prepared
/// layout's 256-column blocks give). Then the fill's full barrier expects
/// one arrival, producer 0's `mbarrier.arrive.expect_tx` before it issues
/// the copies, and its phase ends when the bytes land: no cp.async group,
/// no wait for the oldest fill, no lag of fillsInFlight fills between a
/// fill's issue and its announcement.
inline bool bulkFills(const KernelShape &k, int64_t scaleBytes,
                      int64_t zeroBytes) {
  // (Per-group activation scales are gathered token by token: cp.async.)
  return k.warpSpecialized && k.tensorActivations() && k.tmaWeights &&
         scaleBytes % 16 == 0 && zeroBytes % 16 == 0 && !k.groupInputScales;
}
/// Whether a fill's cp.async copies are tracked by its full barrier: where
/// the activations and weights arrive by TMA and only per-group constants
/// (scales, zero points, per-group token scales, which the consumers read
/// with ld.shared, not wgmma) come by cp.async. Each producer then ends its
/// part of fill f with `cp.async.mbarrier.arrive.noinc` on the fill's full
/// barrier, which arrives once its copies landed: no cp.async group, no
/// wait for the oldest fill, no proxy fence (generic writes read by generic
/// loads), so a producer is held back by the empty barriers only. (Data
/// wgmma reads must be fenced into the async proxy after it landed, which
/// only a waiting producer can do: not tracked where any comes by
/// cp.async.)
inline bool trackedFills(const KernelShape &k, int64_t scaleBytes,
                         int64_t zeroBytes) {
  return k.warpSpecialized && k.tensorActivations() && k.tmaWeights &&
         !bulkFills(k, scaleBytes, zeroBytes);
}
/// Arrivals that end a phase of a slot's full barrier: every producer
/// (each after its cp.async copies landed, or its tracked arrival), or the
/// one announcing all the bytes where the fills are bulk.
inline int64_t fullArrivals(int64_t producers, bool bulk) {
  return bulk ? 1 : producers;
}
/// Fill f (into slot f % S) first waits for the release of use f / S - 1
/// of its slot: the empty barrier's phase of this parity.
inline bool fillWaitsForRelease(int64_t f, int64_t stages) {
  return f >= stages;
}
inline int64_t fillReleaseParity(int64_t f, int64_t stages) {
  return (f / stages - 1) & 1;
}
/// Iteration i reads fill i: the full barrier's phase of this parity.
inline int64_t useFillParity(int64_t i, int64_t stages) {
  return (i / stages) & 1;
}
/// Iteration i, after its wgmma wait (the previous iteration's wgmmas are
/// done with their slot), releases use i - 1 where a later fill waits for
/// it.
inline bool releasesPrevious(int64_t i, int64_t stages, int64_t iterations) {
  return i >= 1 && i - 1 + stages < iterations;
}
/// 8-bit activations: iteration i waits for its own wgmmas (nothing of an
/// 8-bit slot is left to run under them) and releases use i where a later
/// fill waits for it, so that a late fill i + 1 holds no slot.
inline bool releasesOwn(int64_t i, int64_t stages, int64_t iterations) {
  return i + stages < iterations;
}
/// Arrivals that end a phase of a slot's empty barrier: every consumer
/// thread's, or with multicast_a = 2 (KernelShape::multicastA) one per
/// consumer warp of each CTA of the pair (a warp's lanes sync, then one
/// arrives here and one on the peer's barrier: its next fill writes both
/// CTAs' slots).
inline int64_t emptyArrivals(int64_t consumers, int64_t multicast) {
  return multicast > 1 ? multicast * (consumers / 32) : consumers;
}
/// The register split of a warp-specialized block (setmaxnreg): every
/// thread starts with `launch` registers (the kernel's .maxnreg: the SM's
/// 64 Ki over `ctasPerSm` blocks of `threads`, in steps of 8, at most 248),
/// the producers give theirs down to `producer` and the consumers take what
/// the block's pool then holds, in steps of 8, at most 248. setmaxnreg.inc
/// blocks until the block's own pool has the registers, so asking for more
/// than launch x threads holds would hang: the split must come from the
/// launch count the kernel really has, hence the explicit .maxnreg (ptxas
/// otherwise launches with fewer: 130 for the 64-token tile).
/// The producers keep 56 (their copy addresses; at 40 ptxas spills 8-24
/// bytes in most of the 128-token kernels) unless the consumers would then
/// get fewer than `consumerNeed` + 8: then they drop to 40. Measured with
/// ptxas 13.0 on the 64-token tile at two CTAs per SM (2026-12-02): 56 / 88
/// spills ~1 KiB in the consumers (a 632-byte stack frame), 40 / 96 16-80
/// bytes. `rebalance` is false where the consumers would gain nothing.
struct RegisterSplit {
  int64_t launch = 0, producer = 0, consumer = 0;
  bool rebalance = false;
};
inline RegisterSplit registerSplit(int64_t producers, int64_t consumers,
                                   int64_t ctasPerSm,
                                   int64_t consumerNeed = 0) {
  RegisterSplit r;
  r.launch = std::min<int64_t>(
      248, 65536 / (ctasPerSm * (producers + consumers)) / 8 * 8);
  const int64_t pool = r.launch * (producers + consumers);
  auto consumerGets = [&](int64_t producer) {
    return std::min<int64_t>(
        248, (pool - producers * producer) / consumers / 8 * 8);
  };
  r.producer = consumerGets(56) < consumerNeed + 8 ? 40 : 56;
  r.consumer = consumerGets(r.producer);
  r.rebalance = r.producer < r.launch && r.consumer > r.launch;
  return r;
}
/// What a consumer thread of warp-specialized kernel `k` needs at least
/// (ptxas fails below it: "Insufficient registers ... to compile
/// instruction"): its f32 sums and 24 for a wgmma's operands, and 8 more
/// for the conversion of staged weights (the 192-token staged tile spilled
/// 40 bytes with the consumers' 224; with the producers at 40 and the
/// consumers at 232, none).
inline int64_t consumerRegisters(const KernelShape &k) {
  // 8-bit activations keep a second set of sums (each iteration's, added
  // to the first in f32: WgmmaKernel.cpp), unless they do not promote.
  const int64_t sets = k.activationBits == 8 && !k.singleSumSet ? 2 : 1;
  return sets * k.blockM() * k.blockN() / k.mathThreads() + 24 +
         (k.stagedWeights ? 8 : 0);
}
/// The split of kernel `k` (warp-specialized).
inline RegisterSplit registerSplit(const KernelShape &k) {
  return registerSplit(k.producerThreads(), k.mathThreads(), k.ctasPerSm,
                       consumerRegisters(k));
}
} // namespace ws

/// What tile configuration `t` means for a prepared-layout kernel (the
/// lowering checks first that it is one such kernels can run).
KernelShape shapeOf(const TileConfig &t);
/// The tile configuration (mma_sync, cp.async, every M) of a kernel shape:
/// the inverse of shapeOf.
TileConfig tileConfigOf(const KernelShape &k);

/// Whether a warp's k-tiles of one iteration share their scale group (then
/// scales and zero points are copied once per iteration).
bool groupPerIteration(const WeightSchema &w, const KernelShape &k);
/// 16-byte chunks per lane in one pipeline stage: per k-tile one per bit
/// plane word group of up to 4 words and one per 16 rows of A; per group
/// one for scales and one for zero points.
int64_t stageChunks(const WeightSchema &w, const KernelShape &k);
/// One pipeline slot of a cooperative kernel (bytes, all multiples of 16):
/// per k-tile of the iteration (every K-split group's) the activation tile
/// (block_m rows of 32 bytes, the two 16-byte halves of row r swapped when
/// bit 2 of r is set, so ldmatrix reads are free of bank conflicts), per
/// k-tile the block's weight tiles verbatim (warpsN x 128 x bits bytes,
/// contiguous in global memory too), then per group copy (one when the
/// iteration's K lies in one group, else one per k-tile) the block's scales
/// and zero points, verbatim. With tma = [a] the activations are
/// block_m rows of KernelShape::activationRowBytes() (the iteration's K of
/// a token) in TMA's swizzle of that width, and slots start at multiples
/// of slotAlign(): the swizzle pattern repeats every eight rows, and the
/// wgmma descriptors assume it starts at the slot.
struct CooperativeSlot {
  int64_t activationBytes = 0; ///< all k-tiles
  int64_t weightBytes = 0;     ///< all k-tiles
  int64_t scaleBytes = 0;      ///< per group copy
  int64_t zeroBytes = 0;       ///< per group copy
  int64_t groupCopies = 0;
  /// KernelShape::groupInputScales: block_m f32 scales of the tokens, after
  /// the group copies.
  int64_t inputScaleBytes = 0;
  int64_t padBytes = 0; ///< up to the slot alignment
  int64_t total() const {
    return activationBytes + weightBytes +
           groupCopies * (scaleBytes + zeroBytes) + inputScaleBytes + padBytes;
  }
};
/// Alignment of the slots (and the dynamic shared memory) of kernels with
/// tma = [a]: eight swizzled rows (1024 bytes for 128-byte rows), at least
/// the 128 bytes TMA tensor copies need; 16 for other kernels.
int64_t slotAlign(const KernelShape &k);
CooperativeSlot cooperativeSlot(const WeightSchema &w, const KernelShape &k);
/// Dynamic shared memory of the kernel: the pipeline (warps x stages x
/// chunks x 512 bytes, or stages cooperative slots), reused afterwards for
/// the split-K partial sums; the mbarriers, the weight stage buffers and
/// the output staging areas after them.
int64_t sharedBytes(const WeightSchema &w, const KernelShape &k);
/// KernelShape::stagedWeights: the first byte of the weight stage buffers
/// (after the slots and mbarriers, 128-byte aligned).
int64_t weightStageOffset(const WeightSchema &w, const KernelShape &k);
/// KernelShape::stagedRows: the first byte of the staging areas (after
/// the mbarriers and the weight stage buffers, 128-byte aligned).
int64_t stagingOffset(const WeightSchema &w, const KernelShape &k);
/// Mixture-of-experts kernels keep their block's row table (block_m i32
/// row ids, then the expert and row range a grouped_contiguous block
/// found: four i32) after everything sharedBytes counts, from this byte.
int64_t moeRowTableOffset(const WeightSchema &w, const KernelShape &k);
/// The dynamic shared memory of a MoE kernel: sharedBytes and the table.
int64_t moeSharedBytes(const WeightSchema &w, const KernelShape &k);

/// Whether every value of the scale type `from` is exactly a value of the
/// 16-bit activation type `to` (the kernels multiply such scales there).
bool representableIn(const ScalarType &from, const ScalarType &to);

/// Whether tile `t` may apply the group scales after the MMAs
/// (`scale_after_mma`: the MMAs sum unscaled codes in f32, scaled per C
/// column once per iteration): group scales of 16 bits, f32 accumulation,
/// one 16-row warp per block along M (any warps with 8- or 4-bit activations,
/// whose kernels keep each iteration's sums anyway), and a warp's k-tiles
/// of an iteration inside one group. The diagnostic says which condition
/// fails. Shared by the lowering (which rejects such tiles) and the tile
/// heuristics (which choose the flag only where it holds).
Diag scaleAfterMmaApplies(const WeightSchema &w, bool f16Accumulation,
                          const TileConfig &t, unsigned activationBits = 16);

/// The 8-bit activation types the prepared kernels compute in (k32 steps:
/// sm_90a wgmma, mma.sync m16n8k32 on sm_80-sm_89 — e4m3 / e5m2 from
/// sm_89): f8E4M3FN, f8E5M2 (f32 sums) and si8 (s32 sums).
bool computesInEightBits(const ScalarType &activation);

/// Whether the sm_90a wgmma kernels of 8-bit activations fold each
/// iteration's sums into a second, running set (promotion: fp8 sums keep
/// fewer bits than f32 in the wgmma accumulators, and group scales or
/// per-group activation scales multiply each iteration's sums). si8
/// without either sums exactly in s32 over the whole of K: one set.
inline bool wgmmaPromotes(const WeightSchema &w, const InputSchema &in) {
  return computesInEightBits(in.type) &&
         !(in.type == ScalarType::sint(8) && !w.hasPerKScales() &&
           in.scaling != ActScaling::Group);
}
/// What the mma_sync kernels need beyond supports() to take 8-bit
/// activations `in` (the wgmma kernels take every layer supports() holds):
/// group scales of 16 bits (they multiply each iteration's sums per output
/// column, scale_after_mma).
Diag eightBitMmaSyncSupports(const WeightSchema &w, const InputSchema &in);

/// The 4-bit activation type the prepared mma_sync kernels compute in
/// (m16n8k64 s4, s32 sums): si4.
bool computesInFourBits(const ScalarType &activation);

/// Whether the prepared mma_sync layout can hold this layer (padded sizes
/// n x k) for activations `in`; the diagnostic says what is missing.
Diag supports(const WeightSchema &w, const InputSchema &in, int64_t n,
              int64_t k);

/// The largest magnitude a dequantized weight reaches in the activation type
/// (the prepared kernels form it there): max |code - zero|, times the
/// largest per-k (group) scale; channel and global scales multiply the f32
/// accumulators instead.
double maxDequantizedMagnitude(const WeightSchema &w);

/// Rewrites canonical tensors (padded sizes n x k, as quantizeWeights makes
/// them) into the prepared layout, its tiles in `order` (tileOrder). The
/// global scale and bias are unchanged. The weights' n-tiles are shared
/// among `threads` threads (0: one per core, for layers of a million codes
/// or more).
Result<QuantizedWeights> prepareMmaSync(const WeightSchema &w,
                                        const InputSchema &in,
                                        const QuantizedWeights &canonical,
                                        int64_t n, int64_t k,
                                        unsigned threads = 0,
                                        TileOrder order = TileOrder::Fragments);

/// The code (as the canonical layout stores it) of weight (n, k) read back
/// from prepared weights for activations of `activationBits` bits in tile
/// order `order`: the inverse used by the tests.
uint32_t preparedCodeAt(const WeightSchema &w, const uint32_t *words,
                        int64_t n, int64_t padN, int64_t k,
                        unsigned activationBits = 16,
                        TileOrder order = TileOrder::Fragments);

} // namespace humming::layout

#endif // HUMMING_QUANT_PREPAREDLAYOUT_H
