//===- PreparedLayout.cpp - The mma_sync execution layout -----------------===//

#include "Humming/Quant/PreparedLayout.h"

#include "Humming/Quant/Codec.h"
#include "Humming/Quant/Pack.h"

#include <algorithm>
#include <cstring>
#include <thread>

namespace humming::layout {

std::vector<Plane> planes(unsigned bits) {
  std::vector<Plane> out;
  unsigned offset = 0;
  for (unsigned width : {8u, 4u, 2u, 1u})
    if (bits & width) {
      // Low code bits live in the narrow planes: the plane of width w holds
      // the bits just above the narrower planes that exist.
      unsigned shift = bits & (width - 1);
      out.push_back({width, shift, offset});
      offset += width;
    }
  return out;
}

bool groupPerIteration(const WeightSchema &w, const KernelShape &k) {
  return !w.hasPerKScales() || kTileK * k.kTilesPerWarp <= w.groupK;
}

int64_t stageChunks(const WeightSchema &w, const KernelShape &k) {
  int64_t perTile = 0;
  for (const Plane &p : planes(w.type.bits))
    perTile += (p.width + 3) / 4;
  // Activations: one 16-row tile of 32-byte rows per k-tile (16-bit), per
  // k32 step of two k-tiles (8-bit) or per k64 step of four (4-bit).
  const int64_t activationTiles = k.kTilesPerWarp * k.activationBits / 16;
  int64_t perGroup = (w.hasPerKScales() ? 1 : 0) +
                     (w.zeroPoint != ZeroPointKind::None ? 1 : 0);
  int64_t groupCopies = groupPerIteration(w, k) ? 1 : k.kTilesPerWarp;
  return k.kTilesPerWarp * perTile + activationTiles * (k.warpM / 16) +
         groupCopies * perGroup;
}

KernelShape shapeOf(const TileConfig &t) {
  KernelShape k;
  k.warpM = t.warpM;
  k.warpsM = t.blockM / t.warpM;
  k.warpsN = t.blockN / t.warpN;
  if (t.mma == MmaKind::Wgmma) {
    // warp_n: a warp's rows of each of its group's n-tiles, 16 per n-tile.
    k.mma = MmaKind::Wgmma;
    k.nTilesPerGroup = t.warpN / 16;
    k.warpsN = t.blockN / kTileN;
    k.warpSpecialized = t.warpSpecialized;
    // workspace_split: no cluster, no shared memory for the reduction.
    k.clusterSplit = t.splitsInCluster() ? t.splitK : 1;
    k.tmaWeights = (t.tma & TmaB) != 0;
    k.tmaActivations = (t.tma & TmaA) != 0;
    k.wgmmaInFlight = t.wgmmaInFlight;
    k.multicastA = t.multicastA;
  }
  if (t.mma != MmaKind::Wgmma && t.clusterSplit)
    k.clusterSplit = t.splitK;
  k.kSplit = t.blockK / t.warpK;
  k.kTilesPerWarp = t.warpK / kTileK;
  k.stages = t.stages;
  k.ctasPerSm = t.ctasPerSm;
  k.blockCopies = t.blockCopies;
  k.shareActivations = t.shareActivations;
  k.scaleAfterMma = t.scaleAfterMma;
  k.l2Prefetch = t.l2Prefetch;
  k.rasterM = t.rasterM;
  k.persistent = t.persistent;
  k.promotionInterval = t.promotionInterval;
  k.weightMap = t.weightMap;
  k.stagedWeights = t.stagedWeights;
  return k;
}

TileConfig tileConfigOf(const KernelShape &k) {
  TileConfig t;
  t.mma = MmaKind::MmaSync;
  t.cpAsync = true; // the mma_sync kernels stage every operand with cp.async
  t.warpM = k.warpM;
  t.blockM = k.blockM();
  t.warpN = kTileN;
  if (k.wgmma()) {
    t.mma = MmaKind::Wgmma;
    t.warpN = 16 * k.nTilesPerGroup;
    t.warpSpecialized = t.mbarrier = k.warpSpecialized;
    t.splitK = k.clusterSplit;
    t.tma = (k.tmaWeights ? TmaB : 0u) | (k.tmaActivations ? TmaA : 0u);
    t.wgmmaInFlight = k.wgmmaInFlight;
    t.multicastA = k.multicastA;
  } else if (k.clusterSplit > 1) {
    t.splitK = k.clusterSplit;
    t.clusterSplit = true;
  }
  t.blockN = k.blockN();
  t.warpK = k.kTilesPerWarp * kTileK;
  t.blockK = k.kSplit * t.warpK;
  t.stages = k.stages;
  t.ctasPerSm = k.ctasPerSm;
  t.blockCopies = k.blockCopies;
  t.shareActivations = k.shareActivations;
  t.scaleAfterMma = k.scaleAfterMma;
  t.l2Prefetch = k.l2Prefetch;
  t.rasterM = k.rasterM;
  t.persistent = k.persistent;
  t.promotionInterval = k.promotionInterval;
  t.weightMap = k.weightMap;
  t.stagedWeights = k.stagedWeights;
  return t;
}

CooperativeSlot cooperativeSlot(const WeightSchema &w, const KernelShape &k) {
  CooperativeSlot s;
  const unsigned bits = w.type.bits;
  const int64_t tiles = k.kTilesPerIteration();
  s.activationBytes = tiles * k.blockM() * 2 * k.activationBits;
  s.weightBytes = tiles * k.warpsN * 128 * bits;
  const int64_t columns = k.blockN();
  if (w.hasPerKScales())
    s.scaleBytes = columns * w.scaleType.bits / 8;
  if (w.zeroPoint == ZeroPointKind::Float)
    s.zeroBytes = columns * 2;
  else if (w.zeroPoint == ZeroPointKind::Int)
    s.zeroBytes = columns * zeroPointBits(bits) / 8;
  s.groupCopies =
      !w.hasPerKScales() || tiles * kTileK <= w.groupK ? 1 : tiles;
  if (k.groupInputScales)
    s.inputScaleBytes = 4 * k.blockM();
  if (k.tmaActivations) {
    const int64_t align = slotAlign(k);
    s.padBytes = (align - s.total() % align) % align;
  }
  return s;
}

int64_t slotAlign(const KernelShape &k) {
  if (!k.tmaActivations)
    return 16;
  return std::max<int64_t>(128, 8 * k.activationRowBytes());
}

int64_t weightStageOffset(const WeightSchema &w, const KernelShape &k) {
  const int64_t end = std::max(k.stages * cooperativeSlot(w, k).total(),
                               k.workspaceFloats() * 4) +
                      k.mbarrierBytes();
  return (end + 127) / 128 * 128;
}

int64_t stagingOffset(const WeightSchema &w, const KernelShape &k) {
  return weightStageOffset(w, k) + k.weightStageBytes();
}

int64_t sharedBytes(const WeightSchema &w, const KernelShape &k) {
  if (k.cooperative() && (k.stagedRows > 0 || k.stagedWeights))
    return stagingOffset(w, k) + k.stagingBytes();
  if (k.cooperative())
    return std::max(k.stages * cooperativeSlot(w, k).total(),
                    k.workspaceFloats() * 4) +
           k.mbarrierBytes();
  int64_t warps = k.warpsN * k.kSplit;
  int64_t pipeline = warps * k.stages * stageChunks(w, k) * 512;
  return std::max(pipeline, k.workspaceFloats() * 4);
}

int64_t moeRowTableOffset(const WeightSchema &w, const KernelShape &k) {
  return (sharedBytes(w, k) + 15) / 16 * 16;
}

int64_t moeSharedBytes(const WeightSchema &w, const KernelShape &k) {
  return moeRowTableOffset(w, k) + 4 * k.blockM() + 16;
}

bool representableIn(const ScalarType &from, const ScalarType &to) {
  if (from == to)
    return true;
  if (from.isE8M0())
    return to == ScalarType::bf16();
  if (!from.isFloat() || from.bits > 8)
    return false; // f16 <-> bf16, f32
  // 8-bit floats: enough exponent range and mantissa.
  return from.mantissaBits <= to.mantissaBits &&
         from.exponentBits <= to.exponentBits;
}

double maxDequantizedMagnitude(const WeightSchema &w) {
  double q;
  if (w.type.isFloat())
    q = maxValue(w.type);
  else if (w.type.isSigned || w.zeroPoint == ZeroPointKind::None)
    q = double(1u << (w.type.bits - 1));
  else
    q = double((1u << w.type.bits) - 1); // int or float zero points in range
  // Only per-k scales are applied in the activation type; channel scales
  // multiply the f32 accumulators.
  return w.hasPerKScales() ? q * maxValue(w.scaleType) : q;
}

Diag scaleAfterMmaApplies(const WeightSchema &w, bool f16Accumulation,
                          const TileConfig &t, unsigned activationBits) {
  if (!w.hasPerKScales())
    return concat("scale_after_mma applies group scales; expected group or "
                  "group_tensor granularity, got ",
                  toString(w.granularity));
  if (w.scaleType.bits != 16)
    return concat("scale_after_mma reads 16-bit scales; expected f16 or bf16 "
                  "scales, got ",
                  w.scaleType.str());
  if (f16Accumulation)
    return std::string(
        "scale_after_mma scales f32 sums; expected f32 accumulation");
  // (8- and 4-bit activations keep each iteration's sums anyway.)
  if (activationBits == 16 && (t.warpM != 16 || t.blockM != t.warpM))
    return concat("scale_after_mma keeps a second set of f32 sums per warp; "
                  "expected warp_m = block_m = 16, got warp_m = ",
                  t.warpM, ", block_m = ", t.blockM);
  if (t.warpK > w.groupK)
    return concat("scale_after_mma needs a warp's k-tiles of an iteration in "
                  "one group: expected warp_k (",
                  t.warpK, ") <= the group size (", w.groupK, ")");
  return std::nullopt;
}

bool computesInFourBits(const ScalarType &activation) {
  return activation == ScalarType::sint(4);
}

bool computesInEightBits(const ScalarType &activation) {
  return activation == ScalarType::e4m3() ||
         activation == ScalarType::e5m2() || activation == ScalarType::sint(8);
}

Diag eightBitMmaSyncSupports(const WeightSchema &w, const InputSchema &in) {
  if (!computesInEightBits(in.type))
    return concat("expected 8-bit activations (f8E4M3FN, f8E5M2 or si8), got ",
                  in.type.str());
  if (in.scaling == ActScaling::Group)
    return concat("per-group ", in.type.str(), " activation scales are "
                  "applied by sm_90a's wgmma kernels; the mma_sync kernels "
                  "take per-token or static ones");
  if (w.hasPerKScales() && w.scaleType.bits != 16)
    return concat("the mma_sync kernels apply group scales to each "
                  "iteration's sums per output column (scale_after_mma) and "
                  "expect f16 or bf16 group scales with ",
                  in.type.str(), " activations, got ", w.scaleType.str());
  return std::nullopt;
}

Diag supports(const WeightSchema &w, const InputSchema &in, int64_t n,
              int64_t k) {
  const char *prefix = "the prepared mma_sync layout ";
  const bool eightBit = computesInEightBits(in.type);
  const bool fourBit = computesInFourBits(in.type);
  if (in.type != ScalarType::f16() && in.type != ScalarType::bf16() &&
      !eightBit && !fourBit)
    return concat(prefix, "expects f16, bf16, f8E4M3FN, f8E5M2, si8 or si4 "
                          "activations (e2m1 ones wait for block-scaled "
                          "MMA), got ",
                  in.type.str());
  if (fourBit) {
    // The mma.sync m16n8k64 s4 kernels: 4-bit integer weights are s4
    // codes after one xor, s32 sums per iteration times the group scales
    // of the C columns (scale_after_mma), activation scales per token or
    // static in the epilogue.
    if (!w.type.isInt() || w.type.bits != 4 ||
        w.zeroPoint != ZeroPointKind::None)
      return concat(prefix, "takes 4-bit integer weights without zero points "
                    "with si4 activations (si4, or ui4 with its implicit zero "
                    "point 8: s4 codes after one xor), got ",
                    w.type.str(),
                    w.zeroPoint != ZeroPointKind::None ? " with zero points"
                                                       : "");
    if (in.scaling == ActScaling::Group)
      return concat(prefix, "takes per-token or static scales with si4 "
                    "activations, got group scaling");
    if (w.hasPerKScales() && w.scaleType.bits != 16)
      return concat(prefix, "applies group scales to each iteration's sums "
                    "per output column and expects f16 or bf16 group scales "
                    "with si4 activations, got ",
                    w.scaleType.str());
    if ((k - w.padK) % 32 != 0)
      return concat(prefix, "copies si4 activation rows in 16-byte pieces "
                    "(32 codes) and expects K to be a multiple of 32, got ",
                    k - w.padK);
    if (k % 64 != 0)
      return concat(prefix, "takes K in k64 steps with si4 activations; "
                    "expected the padded K to be a multiple of 64, got ",
                    k);
  }
  if (in.type == ScalarType::sint(8) &&
      (!w.type.isInt() || w.zeroPoint == ZeroPointKind::Float))
    return concat(prefix, "converts weights to si8 for si8 activations and "
                          "expects integer weights without float zero "
                          "points, got ",
                  w.type.str(),
                  w.zeroPoint == ZeroPointKind::Float ? " with float zero points"
                                                      : "");
  if (eightBit) {
    // The k32 kernels (wgmma on sm_90a, mma.sync m16n8k32 elsewhere):
    // weights converted to the activation type in registers, f32 sums (s32
    // with si8; group scales on each iteration's), per-token or static
    // activation scales and channel / tensor weight scales in the epilogue.
    // Per-group activation scales: sm_90a's wgmma kernels over K-major
    // weights (tileOrder) take them on each iteration's sums.
    if (in.scaling == ActScaling::Group &&
        tileOrder(w, in, /*kMajorReader=*/true) != TileOrder::KMajor)
      return concat(prefix, "takes per-group ", in.type.str(),
                    " activation scales over weights of that type without "
                    "zero points (",
                    in.type == ScalarType::sint(8) ? "8-bit integers"
                                                   : in.type.str(),
                    ", read by sm_90a's wgmma as they are), got ",
                    w.type.str(),
                    w.zeroPoint != ZeroPointKind::None ? " with zero points"
                                                       : "");
    if (in.scaling == ActScaling::Group && in.groupK < 64)
      return concat(prefix, "applies per-group activation scales to each "
                    "iteration's sums (64 of K or more) and expects groups of "
                    "at least 64, got ", in.groupK);
    // Group scales multiply each iteration's f32 sums (64 of K, or 128).
    if (w.hasPerKScales() && w.groupK < 64)
      return concat(prefix, "applies group scales to each 64-column "
                    "iteration's f32 sums with ", in.type.str(),
                    " activations and expects groups of at least 64, got ",
                    w.groupK);
    // si8 without group scales sums in s32 over the whole of K on sm_90a
    // (WgmmaKernel.cpp: no promotion); |a w| <= 2^14 per product.
    if (in.type == ScalarType::sint(8) && !w.hasPerKScales() &&
        in.scaling != ActScaling::Group && k > 65536)
      return concat(prefix, "sums si8 products in s32 over the whole of K "
                    "and expects the padded K to be at most 65536, got ", k);
    if ((k - w.padK) % 16 != 0)
      return concat(prefix, "copies ", in.type.str(),
                    " activation rows in 16-byte pieces and expects K to be "
                    "a multiple of 16, got ",
                    k - w.padK);
    if (k % (2 * kTileK) != 0)
      return concat(prefix, "takes K in k32 steps with ", in.type.str(),
                    " activations; expected the padded K to be a multiple "
                    "of 32, got ", k);
  }
  if (w.format != SourceFormat::Canonical)
    return concat(prefix, "is made from canonical weights, got format ",
                  toString(w.format));
  if (n % kTileN != 0)
    return concat(prefix, "expects the padded N to be a multiple of ", kTileN,
                  ", got ", n, " (pad N with pad_n)");
  if (k % kTileK != 0)
    return concat(prefix, "expects the padded K to be a multiple of ", kTileK,
                  ", got ", k);
  if ((k - w.padK) % 8 != 0)
    return concat(prefix, "copies activation rows in 16-byte pieces and "
                          "expects K to be a multiple of 8, got ",
                  k - w.padK);
  // (Block scales: each column holds its block row's scales, [G, N] like
  // group scales; the kernels take them as group scales of the block's k.)
  // (8-bit integers with bf16 activations: bf16 magic numbers hold 7
  // mantissa bits, so bit 7 picks the subtrahend instead;
  // PreparedEmitter::wideIntInBf16.)
  if (w.type.isFloat() && (w.type.exponentBits > in.type.exponentBits ||
                           w.type.mantissaBits > in.type.mantissaBits))
    return concat(prefix, "expects float weights that ", in.type.str(),
                  " holds exactly, got ", w.type.str());
  if (w.hasPerKScales() && !eightBit && !fourBit &&
      !representableIn(w.scaleType, in.type))
    return concat(prefix, "applies scales in the activation type and expects "
                          "scales that ",
                  in.type.str(), " represents exactly, got ",
                  w.scaleType.str());
  // (8- and 4-bit activations: group scales multiply f32 sums, the codes
  // fit.)
  if (!eightBit && !fourBit && w.hasGlobalScale() &&
      maxDequantizedMagnitude(w) > maxValue(in.type))
    return concat(prefix, "applies the global scale to the accumulators and "
                          "expects scaled weights within the ",
                  in.type.str(), " range (", maxValue(in.type), "), got up to ",
                  maxDequantizedMagnitude(w));
  return std::nullopt;
}

namespace {
/// Lane, pair and half of weight (n, k) within its tile.
struct Slot {
  int lane, q, half;
};
Slot slotOf(int64_t n, int64_t k) {
  int64_t c = n % kTileN, r = k % kTileK;
  return {int(4 * (c % 8) + (r % 8) / 2), int(2 * (c / 8) + r / 8), int(r % 2)};
}
} // namespace

bool partialColumnBlocks(const TileConfig &t, const WeightSchema &w,
                         const InputSchema &in) {
  return t.mma == MmaKind::Wgmma && t.warpSpecialized && (t.tma & TmaA) != 0 &&
         (t.tma & TmaB) != 0 && t.splitK == 1 && t.l2Prefetch == 0 &&
         w.experts == 0 &&
         tileOrder(w, in, /*kMajorReader=*/true) == TileOrder::KMajor;
}

TileOrder tileOrder(const WeightSchema &w, const InputSchema &in,
                    bool kMajorReader) {
  if (!kMajorReader || !computesInEightBits(in.type) || w.type.bits != 8 ||
      w.zeroPoint != ZeroPointKind::None)
    return TileOrder::Fragments;
  const bool sameFloat = w.type.isFloat() && w.type == in.type;
  const bool int8 = in.type == ScalarType::sint(8) && w.type.isInt();
  return sameFloat || int8 ? TileOrder::KMajor : TileOrder::Fragments;
}

uint32_t preparedCodeAt(const WeightSchema &w, const uint32_t *words,
                        int64_t n, int64_t padN, int64_t k,
                        unsigned activationBits, TileOrder order) {
  const unsigned bits = w.type.bits;
  if (order == TileOrder::KMajor) {
    const int64_t byte =
        tileWord(k / kTileK, n / kTileN, padN, bits) * 4 + kMajorByte(n, k);
    return ((words[byte / 4] >> (8 * (byte % 4))) & 0xFFu) ^ kMajorXor(w);
  }
  // The position whose row is k's (preparedRow is a permutation of its
  // span's rows).
  const int64_t span = preparedRowSpan(activationBits);
  int64_t pos = 0;
  while (preparedRow(pos, activationBits) != k % span)
    ++pos;
  k = k - k % span + pos;
  Slot s = slotOf(n, k);
  int64_t base = tileWord(k / kTileK, n / kTileN, padN, bits);
  uint32_t code = 0;
  for (const Plane &p : planes(bits)) {
    uint32_t word = words[base + pairWord(p, s.lane, s.q)];
    uint32_t v = (word >> (pairBit(p, s.q) + 16 * s.half)) &
                 ((1u << p.width) - 1);
    code |= v << p.shift;
  }
  if (w.type.isInt() && w.type.isSigned)
    code ^= 1u << (bits - 1);
  return code;
}

namespace {
/// prepareMmaSync of a MoE layer: each expert as a dense layer, the
/// results stacked [E, ...]; the global scales [E] are unchanged.
Result<QuantizedWeights> prepareExperts(const WeightSchema &w,
                                        const InputSchema &in,
                                        const QuantizedWeights &canonical,
                                        int64_t n, int64_t k, unsigned threads,
                                        TileOrder order) {
  WeightSchema dense = w;
  dense.experts = 0;
  const int64_t experts = w.experts;
  auto slice = [&](const Tensor *t, int64_t e) -> std::optional<Tensor> {
    if (!t)
      return std::nullopt;
    Tensor part(t->dtype,
                std::vector<int64_t>(t->shape.begin() + 1, t->shape.end()));
    const size_t bytes = t->data.size() / size_t(experts);
    std::copy_n(t->data.begin() + ptrdiff_t(bytes * size_t(e)), bytes,
                part.data.begin());
    return part;
  };
  auto perExpert = [&](const Tensor &t) -> Status {
    if (!t.shape.empty() && t.shape[0] == experts &&
        t.data.size() % size_t(experts) == 0 &&
        t.data.size() / size_t(experts) ==
            storageBytes(t.dtype, t.numel() / experts))
      return Status::success();
    return Error{concat("prepareMmaSync: expected every weight-side tensor "
                        "of a MoE layer to have ",
                        experts,
                        " experts along its first dimension, got "
                        "shape ",
                        formatShape(t.shape))};
  };
  if (Status st = perExpert(canonical.weight); !st)
    return Error{st.error()};
  for (const std::optional<Tensor> *t :
       {&canonical.scales, &canonical.zeroPoints, &canonical.bias})
    if (*t)
      if (Status st = perExpert(**t); !st)
        return Error{st.error()};
  QuantizedWeights out;
  for (int64_t e = 0; e < experts; ++e) {
    QuantizedWeights one;
    auto opt = [](const std::optional<Tensor> &t) { return t ? &*t : nullptr; };
    one.weight = *slice(&canonical.weight, e);
    one.scales = slice(opt(canonical.scales), e);
    one.zeroPoints = slice(opt(canonical.zeroPoints), e);
    Result<QuantizedWeights> p =
        prepareMmaSync(dense, in, one, n, k, threads, order);
    if (!p)
      return Error{concat("expert ", e, ": ", p.error())};
    auto stack = [&](std::optional<Tensor> &to,
                     const std::optional<Tensor> &from) {
      if (!from)
        return;
      if (!to) {
        std::vector<int64_t> shape = {experts};
        shape.insert(shape.end(), from->shape.begin(), from->shape.end());
        to.emplace(from->dtype, shape);
      }
      std::copy(from->data.begin(), from->data.end(),
                to->data.begin() + ptrdiff_t(from->data.size() * size_t(e)));
    };
    std::optional<Tensor> weight;
    if (e > 0)
      weight = std::move(out.weight);
    stack(weight, p->weight);
    out.weight = std::move(*weight);
    stack(out.scales, p->scales);
    stack(out.zeroPoints, p->zeroPoints);
  }
  out.globalScale = canonical.globalScale;
  out.bias = canonical.bias;
  return out;
}

/// prepareMmaSync's weights: every (k-tile, n-tile, lane, pair) gathers its
/// two codes (TileOrder::Fragments), or each column's 16 codes of a k-tile
/// are its row of the tile (KMajor); the n-tiles shared out among `threads`
/// (0: about a million codes per thread, one per core).
Tensor repackWeightTiles(const WeightSchema &w, const InputSchema &in,
                         const Tensor &canonical, int64_t n, int64_t k,
                         unsigned threads, TileOrder order) {
  const unsigned bits = w.type.bits;
  Tensor prepared(DType::I32, {k / kTileK, n * bits / 2});
  uint32_t *dst = prepared.as<uint32_t>();
  const uint32_t *src = canonical.as<uint32_t>();
  const int64_t rowWords = k * bits / 32;
  const uint32_t flip = w.type.isInt() && w.type.isSigned ? 1u << (bits - 1) : 0;
  const std::vector<Plane> ps = planes(bits);
  // Where code (column c of an n-tile, row r of a k-tile) goes, per plane:
  // the word within the tile and the bit (the same for every tile).
  struct Place {
    uint32_t word, bit;
  };
  std::vector<Place> places(size_t(kTileN * kTileK) * ps.size());
  for (int64_t c = 0; c < kTileN; ++c)
    for (int64_t r = 0; r < kTileK; ++r) {
      Slot s = slotOf(c, r);
      for (size_t pi = 0; pi < ps.size(); ++pi)
        places[size_t((c * kTileK + r)) * ps.size() + pi] = {
            uint32_t(pairWord(ps[pi], s.lane, s.q)),
            pairBit(ps[pi], s.q) + 16 * unsigned(s.half)};
    }
  // Columns of different n-tiles write disjoint words: the n-tiles are
  // shared out among threads (a 70B model has ~1e4 such layers to load).
  const int64_t tileStride = n * bits / 2; // words per k-tile row of tiles
  auto repack = [&](int64_t tileBegin, int64_t tileEnd) {
    std::vector<uint32_t> row;
    for (int64_t nn = tileBegin * kTileN; nn < tileEnd * kTileN; ++nn) {
      row = unpackBits(src + nn * rowWords, k, bits);
      const int64_t c = nn % kTileN;
      uint32_t *tile = dst + tileWord(0, nn / kTileN, n, bits);
      if (order == TileOrder::KMajor) {
        // Column c's 16 codes of each k-tile are its row of the tile.
        auto *bytes = reinterpret_cast<uint8_t *>(tile);
        const uint32_t kFlip = kMajorXor(w);
        for (int64_t kk = 0; kk < k; ++kk)
          bytes[(kk / kTileK) * tileStride * 4 + kMajorByte(nn, kk)] =
              uint8_t(row[size_t(kk)] ^ kFlip);
        continue;
      }
      // The rows of a k-tile come from its span (preparedRowSpan).
      const int64_t span = preparedRowSpan(in.type.bits);
      for (int64_t kt = 0; kt < k / kTileK; ++kt, tile += tileStride) {
        const int64_t at = kt * kTileK % span;
        const uint32_t *codes = row.data() + kt * kTileK - at;
        const Place *place = &places[size_t(c * kTileK) * ps.size()];
        for (int64_t r = 0; r < kTileK; ++r) {
          uint32_t code = codes[preparedRow(at + r, in.type.bits)] ^ flip;
          for (size_t pi = 0; pi < ps.size(); ++pi, ++place)
            tile[place->word] |=
                ((code >> ps[pi].shift) & ((1u << ps[pi].width) - 1))
                << place->bit;
        }
      }
    }
  };
  const int64_t tiles = n / kTileN;
  // By default about a million codes per thread at least, one per core.
  const int64_t workers = std::clamp<int64_t>(
      threads ? int64_t(threads)
              : std::min<int64_t>(std::thread::hardware_concurrency(),
                                  n * k / (int64_t(1) << 20)),
      1, tiles);
  std::vector<std::thread> pool;
  for (int64_t t = 1; t < workers; ++t)
    pool.emplace_back(repack, tiles * t / workers, tiles * (t + 1) / workers);
  repack(0, tiles / workers);
  for (std::thread &t : pool)
    t.join();
  return prepared;
}
} // namespace

Result<QuantizedWeights> prepareMmaSync(const WeightSchema &w,
                                        const InputSchema &in,
                                        const QuantizedWeights &canonical,
                                        int64_t n, int64_t k, unsigned threads,
                                        TileOrder order) {
  if (Diag d = supports(w, in, n, k))
    return Error{*d};
  if (order == TileOrder::KMajor &&
      tileOrder(w, in, /*kMajorReader=*/true) != TileOrder::KMajor)
    return Error{
        concat("prepareMmaSync: the K-major tile order holds 8-bit "
               "weights the ",
               in.type.str(), " MMA takes as they are; expected ",
               in.type == ScalarType::sint(8)
                   ? std::string("8-bit integer weights without zero "
                                 "points")
                   : in.type.str() + " weights without zero points",
               ", got ", w.type.str(),
               w.zeroPoint != ZeroPointKind::None ? " with zero points" : "")};
  if (w.experts > 0)
    return prepareExperts(w, in, canonical, n, k, threads, order);
  const unsigned bits = w.type.bits;
  const int64_t groups = w.groupsAlongK(k);
  auto shapeCheck = [&](const char *what, const Tensor &t,
                        WeightOperand op) -> Status {
    ShapeOrDiag want = expectedShape(op, w, in, n, k, /*prepared=*/false);
    if (want.error)
      return Error{*want.error};
    if (t.shape != want.shape)
      return Error{concat("prepareMmaSync: expected ", what, " of shape ",
                          formatShape(want.shape), ", got ",
                          formatShape(t.shape))};
    return Status::success();
  };
  if (Status s = shapeCheck("weight", canonical.weight, WeightOperand::Weight);
      !s)
    return Error{s.error()};

  QuantizedWeights out;
  out.weight = repackWeightTiles(w, in, canonical.weight, n, k, threads, order);
  // Scales and float zero points: [N, G] -> [G, N] with permuted columns
  // (block scales [N / bn, G]: each column takes its block row's).
  const int64_t rowsPer =
      w.granularity == Granularity::Block ? w.groupN : 1;
  auto transpose = [&](const Tensor &t) {
    Tensor r(t.dtype, {groups, n});
    size_t es = storageBytes(t.dtype, 1);
    for (int64_t nn = 0; nn < n; ++nn)
      for (int64_t g = 0; g < groups; ++g)
        std::memcpy(r.data.data() + size_t(g * n + permutedColumn(nn)) * es,
                    t.data.data() + size_t(nn / rowsPer * groups + g) * es,
                    es);
    return r;
  };
  if (canonical.scales) {
    if (Status s = shapeCheck("scales", *canonical.scales, WeightOperand::Scales);
        !s)
      return Error{s.error()};
    out.scales = transpose(*canonical.scales);
  }
  if (canonical.zeroPoints) {
    if (Status s = shapeCheck("zero points", *canonical.zeroPoints,
                              WeightOperand::ZeroPoints);
        !s)
      return Error{s.error()};
    if (w.zeroPoint == ZeroPointKind::Float) {
      out.zeroPoints = transpose(*canonical.zeroPoints);
    } else {
      // Canonical [N*b/32, G]: each group's column is a bit stream along N.
      unsigned zb = zeroPointBits(bits);
      out.zeroPoints = Tensor(DType::I32, {groups, n * zb / 32});
      const uint32_t *zs = canonical.zeroPoints->as<uint32_t>();
      int64_t zRows = n * bits / 32;
      std::vector<uint32_t> column(static_cast<size_t>(zRows));
      for (int64_t g = 0; g < groups; ++g) {
        for (int64_t r = 0; r < zRows; ++r)
          column[size_t(r)] = zs[r * groups + g];
        uint32_t *row = out.zeroPoints->as<uint32_t>() + g * (n * zb / 32);
        for (int64_t nn = 0; nn < n; ++nn)
          setPackedCode(row, permutedColumn(nn), zb,
                        packedCodeAt(column.data(), nn, bits));
      }
    }
  }
  // The words of kPack / 16 consecutive k-tiles per row, the prepared shape
  // of the schema (expectedShape): [K / 32, N * b] for 8-bit activations,
  // the same memory.
  const int64_t p = kPack(in);
  out.weight.shape = {k / p, n * p * int64_t(bits) / 32};
  out.globalScale = canonical.globalScale;
  out.bias = canonical.bias;
  return out;
}

} // namespace humming::layout
