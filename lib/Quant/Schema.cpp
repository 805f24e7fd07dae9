//===- Schema.cpp - The support matrix and operand shapes -----------------===//
//
// Each rule cites where it comes from: the original Humming's check_dtype,
// LayerConfig and TuningConfig rules (../shared/reference/ORIGINAL.md §1, §3)
// unless stated otherwise. Messages follow "expected X, got Y".
//
//===----------------------------------------------------------------------===//

#include "Humming/Quant/Schema.h"
#include "Humming/Quant/Checked.h"
#include "Humming/Quant/Codec.h"
#include "Humming/Quant/MmaGeneration.h"
#include "Humming/Quant/PreparedLayout.h"
#include "Humming/Quant/Result.h"

#include <algorithm>
#include <sstream>
#include <tuple>

namespace humming {

const char *toString(Granularity g) {
  switch (g) {
  case Granularity::Channel:
    return "channel";
  case Granularity::Group:
    return "group";
  case Granularity::Block:
    return "block";
  case Granularity::Tensor:
    return "tensor";
  case Granularity::GroupTensor:
    return "group_tensor";
  }
  return "?";
}

const char *toString(ZeroPointKind z) {
  switch (z) {
  case ZeroPointKind::None:
    return "none";
  case ZeroPointKind::Int:
    return "int";
  case ZeroPointKind::Float:
    return "float";
  }
  return "?";
}

const char *toString(SourceFormat f) {
  switch (f) {
  case SourceFormat::Canonical:
    return "canonical";
  case SourceFormat::GPTQ:
    return "gptq";
  case SourceFormat::GPTQv2:
    return "gptq_v2";
  case SourceFormat::AWQ:
    return "awq";
  }
  return "?";
}

const char *toString(ActScaling s) {
  switch (s) {
  case ActScaling::None:
    return "none";
  case ActScaling::Token:
    return "token";
  case ActScaling::Group:
    return "group";
  case ActScaling::Static:
    return "static";
  }
  return "?";
}

const char *toString(GemmType g) {
  switch (g) {
  case GemmType::Dense:
    return "dense";
  case GemmType::Indexed:
    return "indexed";
  case GemmType::GroupedContiguous:
    return "grouped_contiguous";
  case GemmType::GroupedMasked:
    return "grouped_masked";
  }
  return "?";
}

const char *toString(MmaKind m) { return mmaGeneration(m).name; }

const char *toString(WeightOperand o) {
  switch (o) {
  case WeightOperand::Weight:
    return "weight";
  case WeightOperand::Scales:
    return "scales";
  case WeightOperand::ZeroPoints:
    return "zero_points";
  case WeightOperand::GlobalScale:
    return "global_scale";
  case WeightOperand::Bias:
    return "bias";
  }
  return "?";
}

namespace {
/// "16-bit", "8-bit", "4-bit" for messages about activation widths.
std::string widthName(const ScalarType &t) {
  return std::to_string(t.bits) + "-bit";
}
} // namespace

std::vector<ScalarType> allWeightTypes() {
  std::vector<ScalarType> out;
  for (unsigned b = 1; b <= 8; ++b) {
    out.push_back(ScalarType::uint(b));
    out.push_back(ScalarType::sint(b));
  }
  for (unsigned e = 1; e <= 7; ++e)
    for (unsigned m = 0; 1 + e + m <= 8; ++m)
      out.push_back(*ScalarType::parse("e" + std::to_string(e) + "m" +
                                       std::to_string(m))); // flavor by name
  return out;
}

int64_t WeightSchema::groupsAlongK(int64_t k) const {
  switch (granularity) {
  case Granularity::Channel:
  case Granularity::Tensor:
    return 1;
  case Granularity::Group:
  case Granularity::GroupTensor:
    return groupK > 0 ? k / groupK : 0;
  case Granularity::Block:
    return groupK > 0 ? ceilDiv(k, groupK) : 0;
  }
  return 0;
}

bool TileConfig::splitsInCluster() const {
  return splitK > 1 &&
         ((mmaGeneration(mma).clusterSplitByDefault && !workspaceSplit) ||
          clusterSplit);
}

int64_t TileConfig::warps() const {
  if (warpM <= 0 || warpN <= 0 || warpK <= 0)
    return 0;
  return (blockM / warpM) * (blockN / warpN) * (blockK / warpK);
}

int64_t TileConfig::threads() const {
  // Warp specialisation adds one producer warpgroup (128 threads).
  return 32 * warps() + (warpSpecialized ? 128 : 0);
}

std::string formatShape(const std::vector<int64_t> &shape) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      os << ", ";
    if (shape[i] < 0)
      os << "?";
    else
      os << shape[i];
  }
  os << "]";
  return os.str();
}

// ---- Element types ---------------------------------------------------------

Diag verifyWeightType(const ScalarType &t) {
  if (t.isInt() && t.bits >= 1 && t.bits <= 8)
    return std::nullopt;
  if (t.isFloat() && t.isSigned && t.bits <= 8 && t.exponentBits >= 1 &&
      !t.isE8M0())
    return std::nullopt;
  return concat("expected a weight element type (integer of 1 to 8 bits or "
             "signed float of at most 8 bits), got ",
             t.str());
}

Diag verifyActivationType(const ScalarType &t) {
  if (t == ScalarType::f16() || t == ScalarType::bf16() ||
      t == ScalarType::e4m3() || t == ScalarType::e5m2() ||
      t == ScalarType::sint(8) || t == ScalarType::sint(4) ||
      t == ScalarType::e2m1())
    return std::nullopt;
  return concat("expected activation type f16, bf16, f8E4M3FN, f8E5M2, si8, si4 "
             "or f4E2M1FN, got ",
             t.str());
}

Diag verifyOutputType(const ScalarType &t) {
  if (t == ScalarType::f16() || t == ScalarType::bf16())
    return std::nullopt;
  return concat("expected output type f16 or bf16, got ", t.str());
}

// ---- Schemas ---------------------------------------------------------------

Diag verifyWeightSchema(const WeightSchema &w) {
  if (auto d = verifyWeightType(w.type))
    return d;

  // Scale dtypes: the kernels read fp16/bf16/fp8/e8m0 channel and group
  // scales, and fp32 block and global scales.
  const ScalarType &s = w.scaleType;
  switch (w.granularity) {
  case Granularity::Tensor:
  case Granularity::Block:
    if (s != ScalarType::f32())
      return concat("expected scale type f32 for ", toString(w.granularity),
                 " scales, got ", s.str());
    break;
  case Granularity::Channel:
  case Granularity::Group:
  case Granularity::GroupTensor:
    // Channel scales are applied once, in the fp32 epilogue, so f32 works
    // there too (FP8 per-channel checkpoints store f32 scales).
    if (s != ScalarType::f16() && s != ScalarType::bf16() &&
        s != ScalarType::e4m3() && s != ScalarType::e5m2() &&
        s != ScalarType::ue8m0() &&
        !(w.granularity == Granularity::Channel && s == ScalarType::f32()))
      return concat("expected scale type f16, bf16, f8E4M3FN, f8E5M2 or "
                 "f8E8M0FNU for ",
                 toString(w.granularity),
                 " scales (f32 only for channel, block and tensor scales), "
                 "got ",
                 s.str());
    break;
  }

  // Group sizes. Kernels walk K in power-of-two steps, so groups must be
  // powers of two (the minimum depends on the activation: see
  // verifyCompatibility).
  switch (w.granularity) {
  case Granularity::Group:
  case Granularity::GroupTensor:
    if (!isPowerOf2(w.groupK))
      return concat("expected the scale group size to be a power of two, got ",
                 w.groupK);
    break;
  case Granularity::Block:
    if (!isPowerOf2(w.groupN) || w.groupN < 64)
      return concat("expected the block scale's n size to be a power of two >= "
                 "64, got ",
                 w.groupN);
    if (!isPowerOf2(w.groupK))
      return concat("expected the block scale's k size to be a power of two, "
                 "got ",
                 w.groupK);
    break;
  default:
    break;
  }

  if (w.zeroPoint != ZeroPointKind::None) {
    if (!w.type.isInt() || w.type.isSigned)
      return concat("expected an unsigned integer weight type with a zero point, "
                 "got ",
                 w.type.str());
    if (w.granularity == Granularity::Block ||
        w.granularity == Granularity::Tensor)
      return concat("expected channel, group or group_tensor scales with a zero "
                 "point, got ",
                 toString(w.granularity), " scales");
  }

  if (w.experts < 0 || w.experts > kMaxSize)
    return concat("expected experts in 0 .. ", kMaxSize, ", got ", w.experts);
  if (w.padN < 0 || w.padK < 0 || w.padN > kMaxSize || w.padK > kMaxSize)
    return concat("expected padding in 0 .. ", kMaxSize, ", got pad_n = ",
                  w.padN, ", pad_k = ", w.padK);
  if (w.padN % 8 != 0)
    return concat("expected pad_n to be a multiple of 8, got ", w.padN);

  switch (w.format) {
  case SourceFormat::Canonical:
    break;
  case SourceFormat::GPTQ:
  case SourceFormat::GPTQv2:
    if (!w.type.isInt() || w.type.isSigned ||
        !(w.type.bits == 2 || w.type.bits == 3 || w.type.bits == 4 ||
          w.type.bits == 8))
      return concat("expected ui2, ui3, ui4 or ui8 weights in the gptq format, "
                 "got ",
                 w.type.str());
    if (w.granularity != Granularity::Channel &&
        w.granularity != Granularity::Group)
      return concat("expected channel or group scales in the gptq format, got ",
                 toString(w.granularity));
    if (w.zeroPoint == ZeroPointKind::Float)
      return std::string("expected integer zero points (qzeros) in the gptq "
                         "format, got float");
    break;
  case SourceFormat::AWQ:
    if (w.type != ScalarType::uint(4))
      return concat("expected ui4 weights in the awq format, got ", w.type.str());
    if (w.granularity != Granularity::Channel &&
        w.granularity != Granularity::Group)
      return concat("expected channel or group scales in the awq format, got ",
                 toString(w.granularity));
    if (w.zeroPoint == ZeroPointKind::Float)
      return std::string("expected integer zero points (qzeros) in the awq "
                         "format, got float");
    break;
  }
  return std::nullopt;
}

Diag verifyInputSchema(const InputSchema &in) {
  if (auto d = verifyActivationType(in.type))
    return d;
  if (in.type.bits == 16) {
    if (in.scaling != ActScaling::None)
      return concat("expected activation scaling none for 16-bit activations, "
                 "got ",
                 toString(in.scaling));
    return std::nullopt;
  }
  if (in.scaling == ActScaling::None)
    return concat("expected activation scaling token, group<k> or static for ",
               widthName(in.type), " activations (", in.type.str(),
               "), got none");
  if (in.scaling == ActScaling::Group) {
    int64_t minGroup = kPack(in);
    if (!isPowerOf2(in.groupK) || in.groupK < minGroup)
      return concat("expected the activation group size to be a power of two >= ",
                 minGroup, " for ", widthName(in.type), " activations, got ",
                 in.groupK);
  }
  return std::nullopt;
}

namespace {
/// verifyTileConfig: the block and warp dimensions.
Diag verifyTileShape(const TileConfig &t) {
  const std::pair<const char *, int64_t> dims[] = {
      {"block_m", t.blockM}, {"block_n", t.blockN}, {"block_k", t.blockK},
      {"warp_m", t.warpM},   {"warp_n", t.warpN},   {"warp_k", t.warpK}};
  for (auto [name, v] : dims)
    if (v <= 0)
      return concat("expected ", name, " > 0, got ", v);
  if (!isPowerOf2(t.warpN) || t.warpN < 16 || t.warpN > 64)
    return concat("expected warp_n to be 16, 32 or 64, got ", t.warpN);
  if (!isPowerOf2(t.warpK))
    return concat("expected warp_k to be a power of two, got ", t.warpK);
  if (t.warpM % 8 != 0)
    return concat("expected warp_m to be a multiple of 8, got ", t.warpM);
  // With power-of-two warp_n and warp_k, power-of-two multiples keep block_n
  // and block_k powers of two.
  const std::tuple<const char *, int64_t, const char *, int64_t> pairs[] = {
      {"block_m", t.blockM, "warp_m", t.warpM},
      {"block_n", t.blockN, "warp_n", t.warpN},
      {"block_k", t.blockK, "warp_k", t.warpK}};
  for (auto [bn, b, wn, w] : pairs)
    if (b % w != 0 || !isPowerOf2(b / w))
      return concat("expected ", bn, " (", b, ") to be a power-of-two multiple "
                 "of ", wn, " (", w, ")");
  return std::nullopt;
}

/// verifyTileConfig: the pipeline and the options of the copies and the
/// MMAs.
Diag verifyTilePipeline(const TileConfig &t, const MmaGeneration &gen) {
  if (t.stages < 2)
    return concat("expected stages >= 2, got ", t.stages);
  if (t.scaleAfterMma && !gen.scaleAfterMma)
    return concat(
        "expected mma = ", mmaNamesWith(&MmaGeneration::scaleAfterMma),
        " with scale_after_mma (the other families do not "
        "implement it)");
  // The generation's own shape rules (e.g. wgmma's tokens on the
  // instruction's N).
  if (Diag d = gen.tileProblem(t))
    return d;
  if ((t.warpSpecialized || t.tma != 0) && !t.mbarrier)
    return std::string("expected mbarrier = true: TMA loads and warp "
                       "specialisation synchronise through mbarriers");
  if (t.ctasPerSm < 1)
    return concat("expected ctas_per_sm >= 1, got ", t.ctasPerSm);
  if (t.gridCap < 0)
    return concat("expected grid_cap >= 0 (0 = every SM), got ", t.gridCap);
  if (t.writeSplits != 1 && t.writeSplits != 2)
    return concat("expected write_splits 1 or 2, got ", t.writeSplits);
  if (t.splitK < 1 || t.splitK > 16)
    return concat("expected split_k between 1 and 16, got ", t.splitK);
  if (t.wgmmaInFlight != 0 &&
      (t.wgmmaInFlight != 1 || !gen.inFlight || !t.warpSpecialized))
    return concat("expected wgmma_in_flight of 0, or 1 with mma = ",
                  mmaNamesWith(&MmaGeneration::inFlight),
                  " and warp_specialized = true, got ", t.wgmmaInFlight);
  if (t.rasterM < 1 || t.rasterM > 64)
    return concat("expected raster_m between 1 and 64 blocks of rows, got ",
                  t.rasterM);
  if (t.l2Prefetch < 0 || t.l2Prefetch > 64)
    return concat("expected l2_prefetch between 0 and 64 iterations, got ",
                  t.l2Prefetch);
  if (t.l2Prefetch > 0 && t.warpSpecialized && !gen.producerWarpgroup)
    return concat("expected l2_prefetch = 0 with warp_specialized ", gen.name,
                  " (the prefetch runs in the cp.async pipelines and the ",
                  mmaNamesWith(&MmaGeneration::producerWarpgroup),
                  " producer), got ", t.l2Prefetch);
  if (t.promotionInterval < 1 || t.promotionInterval > 8)
    return concat("expected promotion_interval between 1 and 8 iterations, "
                  "got ",
                  t.promotionInterval);
  if (t.promotionInterval > 1 &&
      (!t.warpSpecialized || !gen.producerWarpgroup || !t.mbarrier ||
       t.wgmmaInFlight != 0))
    return concat("expected warp_specialized = true, mbarrier = true and "
                  "wgmma_in_flight = 0 with mma = ",
                  mmaNamesWith(&MmaGeneration::producerWarpgroup),
                  " and promotion_interval > 1 (the consumers wait for the "
                  "slots of the interval in turn and release each when its "
                  "wgmmas are done), got promotion_interval = ",
                  t.promotionInterval);
  if (t.weightMap &&
      (!t.warpSpecialized || !gen.producerWarpgroup || !(t.tma & TmaB)))
    return concat("expected warp_specialized = true and tma = [b] with mma = ",
                  mmaNamesWith(&MmaGeneration::producerWarpgroup),
                  " and weight_map = true (the producer's tensor copy of the "
                  "weights)");
  if (t.stagedWeights &&
      (!t.warpSpecialized || !gen.producerWarpgroup || t.wgmmaInFlight != 0))
    return concat("expected warp_specialized = true and wgmma_in_flight = 0 "
                  "with mma = ",
                  mmaNamesWith(&MmaGeneration::producerWarpgroup),
                  " and staged_weights = true (the consumer warpgroups "
                  "convert each iteration's weights one iteration ahead of "
                  "their wgmmas)");
  return std::nullopt;
}

/// verifyTileConfig: persistent CTAs.
Diag verifyTilePersistent(const TileConfig &t, const MmaGeneration &gen) {
  if (t.persistent < 0 || t.persistent > 64)
    return concat("expected persistent between 0 (a CTA per output tile) and "
                  "64 waves of CTAs, got ",
                  t.persistent);
  if (t.persistent > 0) {
    if (!t.warpSpecialized || !gen.producerWarpgroup)
      return concat("expected persistent = 0 without warp_specialized ",
                    mmaNamesWith(&MmaGeneration::producerWarpgroup),
                    " (the producer warpgroup fills the next output tile's "
                    "slots while the consumers store the last one)");
    if ((t.tma & (TmaA | TmaB)) != (TmaA | TmaB))
      return std::string("expected tma = [a, b] with persistent (its fills "
                         "are tensor and bulk copies, counted by their "
                         "barriers)");
    if (t.splitK != 1 || t.multicastA != 1 || t.multicastB != 1 ||
        t.l2Prefetch != 0)
      return concat("expected split_k = 1, multicast_a = multicast_b = 1 and "
                    "l2_prefetch = 0 with persistent, got ",
                    t.splitK, ", ", t.multicastA, ", ", t.multicastB, " and ",
                    t.l2Prefetch);
  }
  return std::nullopt;
}

/// verifyTileConfig: the cluster split and shared activation copies.
Diag verifyTileSharing(const TileConfig &t, const MmaGeneration &gen) {
  if (t.clusterSplit && t.splitK != 2 && t.splitK != 4 && t.splitK != 8)
    return concat("expected split_k of 2, 4 or 8 with cluster_split (the "
                  "CTAs of one thread block cluster), got ", t.splitK);
  if (t.shareActivations) {
    if (!gen.shareActivations)
      return concat(
          "expected mma = ", mmaNamesWith(&MmaGeneration::shareActivations),
          " with share_activations (the other families copy "
          "cooperatively)");
    if (t.blockCopies || t.blockM != t.warpM)
      return concat("expected one warp row (block_m = warp_m) and no "
                    "block_copies with share_activations (those blocks "
                    "copy every tile together), got block_m = ",
                    t.blockM, ", warp_m = ", t.warpM,
                    t.blockCopies ? ", block_copies = true" : "");
    const int64_t warpsN = t.blockN / t.warpN, kSplit = t.blockK / t.warpK;
    if (warpsN < 2)
      return concat("expected block_n >= 2 x warp_n with share_activations "
                    "(the warps along N share the copies), got block_n = ",
                    t.blockN, ", warp_n = ", t.warpN);
    const int64_t pieces = (t.warpK / 16) * (t.warpM / 16);
    if (pieces % warpsN != 0)
      return concat("expected the ", pieces, " activation tiles of a K group "
                    "(warp_k / 16 x warp_m / 16) to divide evenly among its ",
                    warpsN, " warps along N with share_activations");
    if (kSplit > 8)
      return concat("expected block_k / warp_k <= 8 with share_activations "
                    "(one named barrier per K group), got ", kSplit);
  }
  return std::nullopt;
}

/// verifyTileConfig: the K splits through the workspace and stream-K.
Diag verifyTileSplits(const TileConfig &t, const MmaGeneration &gen) {
  if (t.workspaceSplit && !gen.workspaceSplit)
    return concat(
        "expected mma = ", mmaNamesWith(&MmaGeneration::workspaceSplit),
        " with workspace_split (the mma_sync kernels add their "
        "split_k sums through the workspace unless cluster_split), "
        "got ",
        gen.name);
  if (t.workspaceSplit && t.splitK < 2)
    return concat("expected split_k > 1 with workspace_split, got ", t.splitK);
  if (t.workspaceSplit && t.clusterSplit)
    return std::string("expected at most one of cluster_split and "
                       "workspace_split (a cluster or the workspace adds the "
                       "split_k sums)");
  if (t.cooperativeSplit && !t.workspaceSplit)
    return std::string("expected workspace_split = true with "
                       "cooperative_split (it changes how the CTAs of a "
                       "workspace split add their sums)");
  if (t.cooperativeSplit && (t.warpM % 8 != 0 || (t.warpM / 8) % t.splitK != 0))
    return concat("expected split_k to divide the ", t.warpM / 8,
                  " rows of eight tokens of warp_m = ", t.warpM,
                  " with cooperative_split (each CTA adds an equal share), "
                  "got split_k = ", t.splitK);
  if (t.splitK > 1 && t.mMax == 0 && !t.splitsInCluster())
    return concat("expected a bounded M range with split_k = ", t.splitK,
                  " (its partial sums are sized for the range's largest M; "
                  "the cluster splits, wgmma's default and cluster_split, "
                  "need no workspace), got m = [",
                  t.mMin, ", inf]");
  if (t.splitK > 1 && t.streamK)
    return std::string("expected split_k = 1 with stream_k = true (stream-K "
                       "chooses its own K split)");
  if (t.writeSplits == 2 && t.blockM != t.warpM)
    return concat("expected block_m == warp_m with write_splits = 2, got "
               "block_m = ",
               t.blockM, ", warp_m = ", t.warpM);
  return std::nullopt;
}

/// verifyTileConfig: multicast, the block's threads and the M range.
Diag verifyTileLaunch(const TileConfig &t) {
  for (auto [name, v] : {std::pair<const char *, int64_t>{"multicast_a",
                                                          t.multicastA},
                         {"multicast_b", t.multicastB}})
    if (v != 1 && v != 2)
      return concat("expected ", name, " to be 1 or 2, got ", v);
  if (t.multicastA > 1 && t.multicastB > 1)
    return std::string("expected at most one of multicast_a and multicast_b "
                       "to exceed 1, got both");
  if (t.multicastA > 1 && !(t.tma & TmaA))
    return std::string("expected TMA on operand a with multicast_a = 2");
  if (t.multicastB > 1 && !(t.tma & TmaB))
    return std::string("expected TMA on operand b with multicast_b = 2");
  if (t.threads() > 1024)
    return concat("expected at most 1024 threads per block, got ", t.threads(),
               " (", t.warps(), " math warps", t.warpSpecialized ? " + 4" : "",
               ")");
  if (t.mMin < 1)
    return concat("expected the M range to start at >= 1, got ", t.mMin);
  if (t.mMax != 0 && t.mMax < t.mMin)
    return concat("expected the M range [", t.mMin, ", ", t.mMax,
               "] to be non-empty");
  return std::nullopt;
}

} // namespace

Diag verifyTileConfig(const TileConfig &t) {
  // In order, each part after the ones before it held (later checks
  // divide by what earlier ones bound); the first failure is reported.
  if (Diag d = verifyTileShape(t))
    return d;
  const MmaGeneration &gen = mmaGeneration(t.mma);
  if (Diag d = verifyTilePipeline(t, gen))
    return d;
  if (Diag d = verifyTilePersistent(t, gen))
    return d;
  if (Diag d = verifyTileSharing(t, gen))
    return d;
  if (Diag d = verifyTileSplits(t, gen))
    return d;
  return verifyTileLaunch(t);
}

Diag verifyTileRanges(const std::vector<TileConfig> &tiles) {
  for (size_t i = 0; i < tiles.size(); ++i) {
    if (auto d = verifyTileConfig(tiles[i]))
      return concat("tile_configs[", i, "]: ", *d);
    int64_t expectedMin = i == 0 ? 1 : tiles[i - 1].mMax + 1;
    if (i > 0 && tiles[i - 1].mMax == 0)
      return concat("tile_configs[", i - 1, "] is open-ended (m = [",
                 tiles[i - 1].mMin, ", inf]) but is not the last");
    if (tiles[i].mMin != expectedMin)
      return concat("tile_configs[", i, "]: expected the M range to start at ",
                 expectedMin, ", got ", tiles[i].mMin);
  }
  if (!tiles.empty() && tiles.back().mMax != 0)
    return concat("tile_configs[", tiles.size() - 1,
               "]: expected the last M range to be open-ended (inf), got ",
               tiles.back().mMax);
  return std::nullopt;
}

// ---- Cross-schema rules ----------------------------------------------------

Diag verifyCompatibility(const WeightSchema &w, const InputSchema &in,
                         const ComputeOptions &c,
                         const std::optional<ScalarType> &outputType) {
  const ScalarType &a = in.type;
  const ScalarType &b = w.type;
  bool hasZp = w.zeroPoint != ZeroPointKind::None;

  if (outputType)
    if (auto d = verifyOutputType(*outputType))
      return d;

  if (b.bits > a.bits)
    return concat("expected weights no wider than the activations: ", b.str(),
               " has ", b.bits, " bits, ", a.str(), " activations have ",
               a.bits);

  if (b.isInt() && a.isFloat()) {
    // Integers are decoded into the activation float through its mantissa:
    // b <= M_a + 2 (sign/magnitude trick), one bit less with a zero point.
    unsigned maxBits = a.mantissaBits + (hasZp ? 1 : 2);
    if (b.bits > maxBits)
      return concat("expected integer weights of at most ", maxBits, " bits with ",
                 a.str(), " activations", hasZp ? " and a zero point" : "",
                 ", got ", b.str());
  } else if (b.isInt() && a.isInt()) {
    if (b.isSigned && b.bits != a.bits)
      return concat("expected signed integer weights as wide as the ", a.str(),
                 " activations (si", a.bits, "), got ", b.str());
    // Unsigned weights as wide as the activations only without zero
    // points: their implicit zero point 2^(b-1) makes them the signed type
    // offset by it (code - zero fits); an arbitrary zero point would not.
    if (!b.isSigned && (b.bits > a.bits || (b.bits == a.bits && hasZp)))
      return concat("expected unsigned integer weights narrower than the ",
                    a.str(), " activations (at most ui", a.bits - 1, "; ui",
                    a.bits, " without zero points), got ", b.str(),
                    hasZp ? " with zero points" : "");
  } else if (b.isFloat() && a.isInt()) {
    return concat("float weights (", b.str(),
               ") cannot be used with integer activations (", a.str(), ")");
  } else {
    if (b.exponentBits > a.exponentBits)
      return concat("expected weight exponent bits <= ", a.exponentBits,
                 " (the exponent of ", a.str(), " activations), got ",
                 b.exponentBits, " (", b.str(), ")");
    if (b.mantissaBits > a.mantissaBits)
      return concat("expected weight mantissa bits <= ", a.mantissaBits,
                    " (the mantissa of ", a.str(), " activations), got ",
                    b.mantissaBits, " (", b.str(), ")");
    // Equal exponent widths are not enough: e5m0/e5m1 reach 2^16 and beyond,
    // where f16 keeps its top exponent for inf. The weights are decoded into
    // the activation type, so every value must fit it.
    if (maxValue(b) > maxValue(a))
      return concat("expected weight values within the range of ", a.str(),
                    " activations (max ", maxValue(a), "), got ", b.str(),
                    " (max ", maxValue(b), ")");
  }

  // One group must cover at least one MMA k-step.
  int64_t minGroup = kPack(in);
  if ((w.granularity == Granularity::Group ||
       w.granularity == Granularity::GroupTensor ||
       w.granularity == Granularity::Block) &&
      w.groupK < minGroup)
    return concat("expected a weight scale group size >= ", minGroup, " for ",
               widthName(a), " activations, got ", w.groupK);
  if (w.granularity == Granularity::Block && in.scaling == ActScaling::Group &&
      in.groupK != w.groupK)
    return concat("expected the activation group size to equal the block "
               "scale's k size (",
               w.groupK, "), got ", in.groupK);

  if (w.zeroPoint == ZeroPointKind::Float && a.bits != 16)
    return concat("expected 16-bit activations with float zero points, got ",
               a.str());

  if (c.f16Accumulation) {
    bool ok = a == ScalarType::f16() ||
              (a == ScalarType::e4m3() &&
               (b.isInt() || b.exponentBits <= 4));
    if (!ok)
      return concat("expected f16 activations, or f8E4M3FN activations with "
                 "integer or at most 4-exponent-bit weights, for f16 "
                 "accumulation; got ",
                 a.str(), " activations and ", b.str(), " weights");
  }
  return std::nullopt;
}

Diag verifyPadding(const WeightSchema &w, const InputSchema &in, int64_t n,
                   int64_t k) {
  unsigned aBits = in.type.bits;
  if (w.padN >= n)
    return concat("expected pad_n < N (", n, "), got ", w.padN);
  if (w.padK >= k)
    return concat("expected pad_k < K (", k, "), got ", w.padK);
  if (w.padK % (128 / aBits) != 0)
    return concat("expected pad_k to be a multiple of ", 128 / aBits, " for ",
               widthName(in.type), " activations, got ", w.padK);
  if (n % 64 != 0)
    return concat("expected the padded N to be a multiple of 64, got ", n,
               " (pad N with pad_n)");
  if (k % (512 / aBits) != 0)
    return concat("expected the padded K to be a multiple of ", 512 / aBits,
               " for ", widthName(in.type), " activations, got ", k,
               " (pad K with pad_k)");
  if ((w.granularity == Granularity::Group ||
       w.granularity == Granularity::GroupTensor) &&
      w.groupK > 0 && k % w.groupK != 0)
    return concat("expected the padded K to be a multiple of the scale group "
               "size ",
               w.groupK, ", got ", k);
  if (in.scaling == ActScaling::Group && in.groupK > 0 && k % in.groupK != 0)
    return concat("expected the padded K to be a multiple of the activation "
               "group size ",
               in.groupK, ", got ", k);
  return std::nullopt;
}

Diag verifyTileForProblem(const TileConfig &t, const WeightSchema &w,
                          const InputSchema &in, const ComputeOptions &c,
                          int64_t n, int64_t k) {
  unsigned aBits = in.type.bits;
  // (The K-major TMA tiles may end N with a partial block of whole n-tiles:
  // layout::partialColumnBlocks.)
  if (n % t.blockN != 0 &&
      !(n % layout::kTileN == 0 && layout::partialColumnBlocks(t, w, in)))
    return concat("expected block_n (", t.blockN, ") to divide the padded N (", n,
               ")");
  if (k % t.blockK != 0)
    return concat("expected block_k (", t.blockK, ") to divide the padded K (", k,
               ")");
  int64_t kLo = 512 / aBits, kHi = 1024 / aBits;
  // The mma_sync kernels also take one MMA k-step per warp and stage (their
  // register pipeline needs it with warp_m = 64).
  const MmaGeneration &gen = mmaGeneration(t.mma);
  int64_t kMin = gen.oneStepWarpK ? 256 / aBits : kLo;
  if (t.warpK != kLo && t.warpK != kHi && t.warpK != kMin)
    return kMin != kLo
               ? concat("expected warp_k ", kMin, ", ", kLo, " or ", kHi,
                        " for ", widthName(in.type), " activations with ",
                        gen.name, ", got ", t.warpK)
               : concat("expected warp_k ", kLo, " or ", kHi, " for ",
                        widthName(in.type), " activations, got ", t.warpK);
  int64_t minWarpN = std::max<int64_t>(16, 2 * aBits);
  if (!gen.tokensOnN && t.warpN < minWarpN)
    return concat("expected warp_n >= ", minWarpN, " for ", widthName(in.type),
               " activations, got ", t.warpN);
  if (Diag d = gen.activationProblem(in))
    return d;
  if (c.batchInvariant) {
    if (t.streamK)
      return std::string("expected stream_k = false for batch-invariant "
                         "kernels (the K decomposition must not depend on M)");
    if (t.splitK != 1)
      return concat("expected split_k = 1 for batch-invariant kernels (the K "
                    "decomposition must not depend on M), got ", t.splitK);
    if (t.blockK != kLo || t.warpK != kLo)
      return concat("expected block_k = warp_k = ", kLo,
                 " for batch-invariant kernels, got block_k = ", t.blockK,
                 ", warp_k = ", t.warpK);
    if (t.warpM % 16 != 0)
      return concat("expected warp_m to be a multiple of 16 for batch-invariant "
                 "kernels, got ",
                 t.warpM);
  }
  if ((t.multicastA > 1 || t.multicastB > 1) && c.gemm != GemmType::Dense)
    return concat("expected a dense GEMM with multicast, got ", toString(c.gemm));
  if (t.weightMap && (c.gemm != GemmType::Dense ||
                      layout::tileOrder(w, in, /*kMajorReader=*/true) !=
                          layout::TileOrder::KMajor))
    return concat("expected a dense GEMM over 8-bit weights the activations' "
                  "MMA reads as they are (K-major: ",
                  in.type.str(),
                  " weights without zero points) with "
                  "weight_map = true, got ",
                  toString(c.gemm), " over ", w.type.str(), " weights",
                  w.zeroPoint != ZeroPointKind::None ? " with zero points"
                                                     : "");
  if (t.stagedWeights &&
      (aBits != 8 || layout::tileOrder(w, in, /*kMajorReader=*/true) ==
                         layout::TileOrder::KMajor))
    return aBits != 8
               ? concat("expected 8-bit activations with staged_weights = "
                        "true (the stage holds the 8-bit MMA's codes), got ",
                        in.type.str())
               : concat("expected weights the ", in.type.str(),
                        " MMA does not take as stored (narrower codes, or "
                        "zero points) with staged_weights = true, got ",
                        w.type.str(),
                        " weights, which the wgmmas read K-major from the "
                        "slot already");
  if (t.persistent > 0 && (c.gemm != GemmType::Dense || in.type.bits != 8))
    return concat("expected a dense GEMM with 8-bit activations with "
                  "persistent (its consumers' loop releases each slot in "
                  "the iteration that read it), got ",
                  toString(c.gemm), " with ", in.type.str(), " activations");
  if (t.promotionInterval > 1) {
    if (c.gemm != GemmType::Dense || aBits != 8 ||
        !layout::wgmmaPromotes(w, in))
      return concat("expected a dense GEMM with 8-bit activations whose "
                    "sums promote (fp8, or int8 with per-K scales) with "
                    "promotion_interval > 1, got ",
                    toString(c.gemm), " with ", w.type.str(), " weights and ",
                    in.type.str(), " activations");
    // Each promotion takes one group's scales: the interval's K lies in
    // one group of the weights' and of the activations' scales.
    const int64_t span = t.promotionInterval * t.blockK;
    for (auto [group, what] :
         {std::pair<int64_t, const char *>{w.hasPerKScales() ? w.groupK : 0,
                                           "weight scale group"},
          {in.scaling == ActScaling::Group ? in.groupK : 0,
           "activation scale group"}})
      if (group > 0 && group % span != 0)
        return concat("expected promotion_interval x block_k (", span,
                      ") to divide the ", what, " (", group,
                      "): each promotion takes one group's scales");
  }
  if (t.l2Prefetch > 0 && t.warpSpecialized && c.gemm != GemmType::Dense)
    return concat("expected a dense GEMM with l2_prefetch in a "
                  "warp-specialized kernel (its producer prefetches the "
                  "block's weights and activation box), got ",
                  toString(c.gemm));
  if ((t.tma & TmaZeroPoints) && w.zeroPoint == ZeroPointKind::None)
    return std::string("expected a zero point in the schema with TMA on "
                       "zero points");
  if ((t.tma & TmaBias) && !w.bias)
    return std::string("expected a bias in the schema with TMA on bias");
  // Per-group activation scales multiply each iteration's sums in the wgmma
  // kernels (KernelShape::groupInputScales): one group per iteration.
  if (in.scaling == ActScaling::Group && aBits == 8) {
    if (!gen.groupInputScales)
      return concat("per-group activation scales are applied by the ",
                    mmaNamesWith(&MmaGeneration::groupInputScales),
                    " kernels; expected mma = ",
                    mmaNamesWith(&MmaGeneration::groupInputScales), " with ",
                    in.type.str(),
                    " activations scaled per group, got mma = ", gen.name);
    if (t.warpK > in.groupK)
      return concat("expected warp_k <= the activation group size (",
                    in.groupK, ") with per-group activation scales (each "
                    "iteration's sums take one group's scale), got ",
                    t.warpK);
  }
  return std::nullopt;
}

// ---- Shapes ----------------------------------------------------------------

ShapeOrDiag expectedShape(WeightOperand op, const WeightSchema &w,
                          const InputSchema &in, int64_t n, int64_t k,
                          bool prepared) {
  ShapeOrDiag r;
  std::vector<int64_t> &s = r.shape;
  if (w.experts > 0 && op != WeightOperand::GlobalScale)
    s.push_back(w.experts);
  const int64_t b = w.type.bits;
  auto fail = [&](std::string m) {
    r.shape.clear();
    r.error = std::move(m);
    return r;
  };
  // N and K come from memref types and checkpoint shapes: bounded first,
  // so that the products below (a size, a pack factor, a bit width) fit.
  if (!isLayerSize(n) || !isLayerSize(k))
    return fail(concat("expected N and K in 1 .. ", kMaxSize, ", got N = ", n,
                       ", K = ", k));
  if (w.experts < 0 || w.experts > kMaxSize)
    return fail(concat("expected experts in 0 .. ", kMaxSize, ", got ",
                       w.experts));
  bool gptq = w.format == SourceFormat::GPTQ || w.format == SourceFormat::GPTQv2;
  bool awq = w.format == SourceFormat::AWQ;
  int64_t groups = w.groupsAlongK(k);

  switch (op) {
  case WeightOperand::Weight:
    if (prepared) {
      int64_t p = kPack(in);
      if (k % p != 0)
        return fail(concat("expected K (", k, ") to be a multiple of ", p,
                        " for the prepared layout"));
      if ((n * p * b) % 32 != 0)
        return fail(concat("expected N*", p, "*bits (", n, "*", p, "*", b,
                        ") to be a multiple of 32 for the prepared layout"));
      s.push_back(k / p);
      s.push_back(n * p * b / 32);
    } else if (awq) {
      if ((n * b) % 32 != 0)
        return fail(concat("expected N*bits (", n, "*", b,
                        ") to be a multiple of 32 for awq qweight"));
      s.push_back(k);
      s.push_back(n * b / 32);
    } else {
      if ((k * b) % 32 != 0)
        return fail(concat("expected K*bits (", k, "*", b,
                        ") to be a multiple of 32 to pack the weight"));
      if (gptq) {
        s.push_back(k * b / 32);
        s.push_back(n);
      } else {
        s.push_back(n);
        s.push_back(k * b / 32);
      }
    }
    return r;

  case WeightOperand::Scales: {
    if (!w.hasScaleTensor())
      return fail("tensor granularity has no scale tensor: its scale is the "
                  "global_scale operand");
    // Block scales: a row per block of groupN columns, but in the prepared
    // layout a column each (its block row's scales).
    int64_t rows = w.granularity == Granularity::Block && !prepared
                       ? ceilDiv(n, w.groupN)
                       : n;
    if (prepared || gptq || awq) {
      s.push_back(groups);
      s.push_back(rows);
    } else {
      s.push_back(rows);
      s.push_back(groups);
    }
    return r;
  }

  case WeightOperand::ZeroPoints:
    if (w.zeroPoint == ZeroPointKind::None)
      return fail("the schema has no zero point");
    if (w.zeroPoint == ZeroPointKind::Float) {
      if (prepared || gptq || awq) {
        s.push_back(groups);
        s.push_back(n);
      } else {
        s.push_back(n);
        s.push_back(groups);
      }
      return r;
    }
    if (prepared) {
      int64_t zb = preparedZeroPointBits(w);
      if ((n * zb) % 32 != 0)
        return fail(concat("expected N*", zb, " (", n, "*", zb,
                        ") to be a multiple of 32 for prepared zero points"));
      s.push_back(groups);
      s.push_back(n * zb / 32);
      return r;
    }
    if ((n * b) % 32 != 0)
      return fail(concat("expected N*bits (", n, "*", b,
                      ") to be a multiple of 32 to pack zero points"));
    if (gptq || awq) {
      s.push_back(groups);
      s.push_back(n * b / 32);
    } else {
      s.push_back(n * b / 32);
      s.push_back(groups);
    }
    return r;

  case WeightOperand::GlobalScale:
    if (!w.hasGlobalScale())
      return fail("the schema has no global scale");
    s.push_back(std::max<int64_t>(w.experts, 1));
    return r;

  case WeightOperand::Bias:
    if (!w.bias)
      return fail("the schema has no bias");
    s.push_back(n);
    return r;
  }
  return r;
}

ShapeOrDiag expectedInputScaleShape(const InputSchema &in, int64_t m,
                                    int64_t k) {
  ShapeOrDiag r;
  switch (in.scaling) {
  case ActScaling::None:
    r.error = "16-bit activations have no activation scale";
    break;
  case ActScaling::Token:
    r.shape = {m, 1};
    break;
  case ActScaling::Group:
    r.shape = {m, in.groupK > 0 ? ceilDiv(k, in.groupK) : 0};
    break;
  case ActScaling::Static:
    r.shape = {1};
    break;
  }
  return r;
}

} // namespace humming
