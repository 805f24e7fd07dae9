//===- TileHeuristics.cpp - Tile configurations from device facts ---------===//

#include "Humming/Target/TileHeuristics.h"

#include "Humming/Quant/PreparedLayout.h"

#include <algorithm>
#include <cmath>
#include <tuple>

namespace humming {

double computeMemoryCrossover(const WeightSchema &w, const InputSchema &in,
                              const DeviceInfo &device) {
  double bytesPerWeight = w.type.bits / 8.0;
  double flops = device.tflopsFor(in.type) * 1e12;
  double bandwidth = device.memoryBandwidthGBs * 1e9;
  if (flops <= 0 || bandwidth <= 0)
    return 0;
  return bytesPerWeight * flops / (2.0 * bandwidth);
}

const DeviceInfo *representativeDevice(const Chip &chip) {
  const char *name = nullptr;
  switch (chip.sm) {
  case 75: name = "T4"; break;
  case 80: name = "A100"; break;
  case 86: name = "A10"; break;
  case 87: name = "Orin"; break;
  case 89: name = "L40S"; break;
  case 90: name = "H100"; break;
  case 100: case 103: name = "B200"; break;
  case 110:
    name = "Thor";
    break;
  case 120: name = "RTX 5090"; break;
  case 121: name = "DGX Spark"; break;
  default: break;
  }
  return name ? lookupDevice(name) : nullptr;
}

std::vector<TileConfig> forcedTileConfigs(TileConfig t) {
  // (Kernels that split K in a cluster serve every M.)
  if (t.splitK > 1 && !t.splitsInCluster()) {
    TileConfig rest = t;
    t.mMin = 1;
    rest.mMin = t.mMax + 1;
    rest.mMax = 0;
    rest.splitK = 1;
    rest.workspaceSplit = false;
    rest.cooperativeSplit = false;
    return {t, rest};
  }
  t.mMin = 1;
  t.mMax = 0;
  return {t};
}

Result<DeviceInfo> tileDeviceFacts(std::string_view device,
                                   std::string_view chip) {
  std::optional<Chip> parsed;
  if (!chip.empty() || device.empty()) {
    parsed = Chip::parse(chip);
    if (!parsed)
      return Error{concat("expected a chip among ", knownChipNames(), ", got '",
                          chip, "'")};
  }
  DeviceInfo facts;
  if (!device.empty()) {
    const DeviceInfo *known = lookupDevice(std::string(device));
    if (!known)
      return Error{concat("expected a device among ", knownDeviceNames(),
                          ", got '", device, "'")};
    facts = *known;
  } else {
    const DeviceInfo *rep = representativeDevice(*parsed);
    if (!rep)
      return Error{concat("no representative device is known for ",
                          parsed->str(), "; give device=")};
    facts = *rep;
  }
  // The chip's variant of the device's SM (sm_90 of an sm_90a device): the
  // device's facts under that target. A representative stands for its
  // chip (B200's facts for sm_103a). A named device of another SM lends its
  // facts whole, its chip included: its tiles compiled for this chip
  // (humming-gpu-test --tiles-for=L40S on an H200).
  if (parsed) {
    std::optional<Chip> own = Chip::parse(facts.chip);
    if (device.empty() || (own && own->sm == parsed->sm))
      facts.chip = parsed->str();
  }
  return facts;
}

namespace {
/// Shared memory one block may use on the device: its per-SM amount,
/// bounded by the chip's per-block maximum.
int64_t sharedMemoryBudget(const DeviceInfo &device) {
  int64_t budget = device.smemPerSmKB * 1024;
  if (std::optional<Chip> chip = Chip::parse(device.chip))
    budget = std::min(budget, chip->maxSharedMemoryPerBlock());
  return budget;
}

/// Largest power of two <= v (v >= 1).
int64_t floorPow2(int64_t v) {
  int64_t p = 1;
  while (p * 2 <= v)
    p *= 2;
  return p;
}

/// Whether the prepared kernel of shape `ks` can run an N x K layer on the
/// device: its blocks divide N, its iterations divide K, and its pipeline
/// fits the device's shared memory — ks.ctasPerSm times over, with the 1
/// KiB the SM keeps for each block, where it asks for more than one.
bool runs(const WeightSchema &w, int64_t n, int64_t k,
          const layout::KernelShape &ks, const DeviceInfo &device) {
  const int64_t bytes = layout::sharedBytes(w, ks);
  return n % ks.blockN() == 0 &&
         k % (ks.kTilesPerIteration() * layout::kTileK) == 0 &&
         bytes <= sharedMemoryBudget(device) &&
         (ks.ctasPerSm <= 1 ||
          ks.ctasPerSm * (bytes + 1024) <= device.smemPerSmKB * 1024);
}

/// Whether the sm_90a wgmma tiles serve the device and options: wgmma on
/// the chip, f32 sums (no f16 accumulation), and not batch-invariant.
bool wgmmaApplies(const ComputeOptions &c, const DeviceInfo &device) {
  std::optional<Chip> chip = Chip::parse(device.chip);
  return chip && chip->supportsMma(MmaKind::Wgmma) && !c.f16Accumulation &&
         !c.batchInvariant;
}

/// The sm_90a block shape: 256 columns in two warpgroups of two 64-column
/// n-tiles, `tokens` tokens, `kTiles` k-tiles per iteration, four stages,
/// with or without a producer warpgroup.
layout::KernelShape wgmmaShape(int64_t tokens, int64_t kTiles,
                               bool warpSpecialized,
                               int64_t activationBits = 16) {
  layout::KernelShape ks;
  ks.activationBits = activationBits;
  ks.mma = MmaKind::Wgmma;
  ks.warpM = tokens;
  ks.nTilesPerGroup = 2;
  ks.warpsN = 4;
  // 8-bit activations keep two sets of sums (WgmmaKernel.cpp): beyond 64
  // tokens one n-tile per warpgroup and two warpgroups (128 columns).
  if (activationBits == 8 && tokens > 64) {
    ks.nTilesPerGroup = 1;
    ks.warpsN = 2;
  }
  ks.kTilesPerWarp = kTiles;
  ks.stages = 4;
  ks.warpSpecialized = warpSpecialized;
  return ks;
}

/// Every copy by TMA (tma = [a, b]: the weights, scales and zero points by
/// bulk copies, the activations by tensor copies, one arrival per fill:
/// layout::ws::bulkFills) where the H200 measured it faster: the
/// warp-specialized 128-token tile without a K split (with ptxas, 8192^2:
/// M = 8192 2365 -> 2277 us with the weights by bulk copies, 2026-12-01;
/// 2273 -> 2163 with bulk fills against that, 2026-12-01; the suite
/// across schemas with it forced and chosen), and the K splits through
/// the workspace and the 64-token tile without a split once the
/// activations came as swizzled rows (below). With 16-byte activation
/// boxes the 64-token tile had lost with either (M = 64 44.6 -> 46.8 /
/// 51.2 us).
void useBulkCopies(TileConfig &t, int64_t activationBits = 16) {
  if (t.mma != MmaKind::Wgmma || !t.warpSpecialized)
    return;
  if (activationBits == 16 && (t.splitK == 1 || t.workspaceSplit))
    // Since the activations come as swizzled 128-byte rows: the tiles that
    // split K through the workspace (H200 8192^2 W4A16 g128, 2026-12-02:
    // the 64-token tile split 4 at M = 64 33.2 -> 29.2 us; bench/NOTES.md
    // "M = 33-512") and the 64-token tile without a split (2026-12-03,
    // W4A16 g128: 28672 x 8192 M = 64 118.1 -> 67.6 us; 14336 x 4096 M =
    // 128, against the 128-token cluster split it replaces there, 51.3 ->
    // 37.8). The cluster splits with TMA ran faster too but were not
    // checked for correctness on the GPU: they keep cp.async.
    t.tma = TmaA | TmaB;
  else if (t.warpM == 128 && t.splitK == 1)
    // (The activations' tensor map holds 16-bit activations only.)
    t.tma = TmaB;
}

/// The 128-token warp-specialized tiles with every copy by TMA keep the
/// previous iteration's wgmmas in flight while the next one's first k-tile
/// is dequantized (wgmma_in_flight = 1): measured on the H200 (2026-12-03,
/// W4A16 g128 8192^2, interleaved in one process, bench/NOTES.md
/// "Prefill"), unsplit M = 512 99.1 / 99.6 -> 92.9 / 93.3 us, 1024 194.4 /
/// 195.0 -> 181.7 / 182.2, 8192 1708 / 1636 -> 1614 / 1588; split two ways
/// through the workspace at M = 256 62.3 / 61.1 -> 58.0. (It lost in 2026-11
/// before the activations came by TMA, and ties on the 64-token tiles:
/// M = 64 26.6 -> 26.6, 128 42.3 -> 41.9.) Weights of at most 4 bits: 8-bit
/// ones lost with it (W8A16 channel, 8192^2, interleaved: M = 512 94.3 /
/// 92.6 -> 95.8 / 96.4 us, 1024 184.9 / 184.8 -> 193.5 / 191.5, 8192 1705 /
/// 1705 -> 1759 / 1751); 5-7 bits are not measured. 16-bit activations only
/// (the lowering refuses it with 8-bit ones).
void overlapIterations(TileConfig &t, const WeightSchema &w,
                       int64_t activationBits = 16) {
  if (activationBits == 16 && w.type.bits <= 4 && t.mma == MmaKind::Wgmma &&
      t.warpSpecialized && t.warpM == 128 && t.tma == (TmaA | TmaB))
    t.wgmmaInFlight = 1;
}

/// The 64-token tile split through the workspace with 16-bit activations
/// keeps eight stages where they fit and every CTA has at least two
/// pipelines' worth of iterations: its consumers waited on the fills with
/// four (ncu at 8192^2 M = 128: 13 % of the stalls on the full barrier).
/// Measured on the H200 (2026-12-03, W4A16 g128, forced tiles interleaved
/// in one process, bench/NOTES.md "M = 33-512"): split 2 at M = 128 8192^2
/// 42.5 / 41.8 -> 40.3 / 40.2 us, 8192 x 28672 121.5 / 120.1 -> 116.3 /
/// 116.1; split 4 at M = 64 8192^2 25.8 -> 24.7, 4096 x 14336 36.5 / 35.7 ->
/// 34.2; split 2 at 14336 x 4096 M = 64 26.1 -> 25.6. Six stages lost
/// (46.4 at 8192^2 M = 128), eight with wgmma_in_flight = 1 too (41.8), and
/// the unsplit tile keeps four (28672 x 8192 M = 64 66.3 -> 67.4). Weights
/// of at most 4 bits: W8A16 channel lost at M = 64 (8192^2, split 4,
/// interleaved: 29.4 / 29.1 -> 30.4 / 30.8 us) and tied at 128 (41.1 / 40.1
/// -> 39.5 / 40.7); 5-7 bits and 8-bit activations are not measured.
layout::KernelShape deepPipeline(const WeightSchema &w, int64_t n, int64_t k,
                                 layout::KernelShape ks,
                                 const DeviceInfo &device, int64_t split,
                                 bool workspace, int64_t activationBits) {
  if (ks.warpM != 64 || !workspace || activationBits != 16 ||
      w.type.bits > 4)
    return ks;
  layout::KernelShape deep = ks;
  deep.stages = 8;
  const int64_t iterations =
      k / (deep.kTilesPerIteration() * layout::kTileK);
  if (iterations < 2 * deep.stages * split || !runs(w, n, k, deep, device))
    return ks;
  return deep;
}

/// The sm_90a tile for M = 17..512: the warp-specialized wgmma tile of 64 or
/// 128 tokens (64 of K per iteration, four stages) with K split across the
/// CTAs of a thread block cluster (1, 2, 4 or 8), whichever takes the fewest
/// estimated iteration-times at the range's top `mTop`:
///   waves x ceil(iterations / split) x (1.5 for 128 tokens, else 1)
///         x (1.7 for a split in a cluster, else 1),
/// where a wave holds as many CTAs as SMs for clusters of one or two CTAs
/// and half as many for four or eight (clusters must fit in one GPC; the
/// H200 ran 128 CTAs in clusters of four in two waves' time: 4096 x 14336,
/// M = 128 -> 256, 59 -> 122 us). A split through the global workspace
/// (workspace_split: no cluster) has SMs per wave at any split; it is
/// taken only where it costs less than every cluster split (8192^2 at
/// M = 64: 32 blocks, a split of 4 in clusters is 128 CTAs in two waves,
/// through the workspace one; measured on the H200 on 2026-12-01: 44.6 ->
/// 32.3 us; 7680 x 8192, where 120 CTAs in clusters of four fit one wave,
/// 47 -> 27 with the cluster). The 1.5 is the measured time of a
/// 128-token block over a 64-token block for the same K at 128 CTAs (8192^2:
/// 83 against 55 us; with TMA 0.8 against 0.55 us per iteration at 112-448
/// CTAs, 2026-12-03). The 1.7 is what a cluster split (cp.async copies)
/// costs per iteration over the TMA tiles: measured on the H200 on
/// 2026-12-03 (W4A16 g128, bench/NOTES.md "M = 33-512"), 128 tokens split
/// 2 in clusters 1.4-1.6 us per iteration against 0.8 unsplit and 0.8-0.9
/// split 2 through the workspace, 64 tokens 0.85 against 0.55-0.59; without
/// it the model chose the cluster at 14336 x 4096 M = 128 (51.3 us against
/// 37.8 unsplit) and 28672 x 8192 M = 512 (611 against 422). Ties go to the
/// smaller split, then to the workspace
/// (with the activations by TMA it beat the cluster at equal waves: 8192^2
/// M = 128, split 2, 54.4 -> 42.5 us; 2026-12-02), then to 64 tokens. None
/// where neither tile runs (chip, N, K, shared memory) or fewer CTAs than a
/// quarter of the SMs would work (untested: the lowest count measured to win
/// is 64 for 132 SMs). Measured on the H200, W4A16 g128 (bench/NOTES.md,
/// 2026-12-01), against the tiles before: 8192^2 M = 64 79 -> 53 us, 128
/// 110 -> 55, 256 103 -> 87, 512 203 -> 145; 4096 x 14336 M = 64 61 -> 45,
/// 128 139 -> 59, 512 310 -> 125.
std::optional<TileConfig> clusterSplitTile(const WeightSchema &w, int64_t n,
                                           int64_t k, const ComputeOptions &c,
                                           const DeviceInfo &device,
                                           int64_t mTop,
                                           int64_t activationBits = 16) {
  if (!wgmmaApplies(c, device) || mTop <= 0)
    return std::nullopt;
  std::optional<TileConfig> best;
  double bestCost = 0;
  for (int64_t tokens : {64, 128}) {
    layout::KernelShape ks =
        wgmmaShape(tokens, 4, /*warpSpecialized=*/true, activationBits);
    if (!runs(w, n, k, ks, device))
      continue;
    const int64_t iterations = k / (ks.kTilesPerIteration() * layout::kTileK);
    const int64_t blocks = (n / ks.blockN()) * ceilDiv(mTop, ks.blockM());
    for (int64_t split : {1, 2, 4, 8})
      for (bool workspace : {true, false}) {
        // Every CTA keeps at least two pipelines' worth of iterations, and
        // the CTAs of a cluster share the rows of eight tokens they store.
        // Through the workspace: the 64-token tile with a split of 2 or 4
        // (the last CTA reads every partial sum: a split of 8 at 4096 x
        // 14336 M = 64 took 44 us against 40 for the cluster split of 4;
        // 2026-12-01), the 128-token tile (twice the sums) with a split of
        // 2 and 16-bit activations by TMA (it lost with cp.async copies, 75
        // us at 8192^2 M = 128 against 55 in a cluster, 2026-12-01; with
        // TMA, 2026-12-02 and -03: 8192^2 M = 256 65.8 against 84.0 in a
        // cluster, 8192 x 28672 M = 256 182 against 239 for the 64-token
        // split, 4096 x 14336 M = 512 99.6 against 126 in a cluster), or
        // a split of 4 under the conditions of wide4 below.
        // (8-bit activations through the workspace: their two sets of sums
        // spill 212 bytes under ptxas, and still won on the H200, 4096^2
        // M = 128: 21.1 us against 27.7 in a cluster; 2026-12-02.)
        // The 128-token tile split four ways through the workspace (and so
        // cooperative, below) with at least 32 iterations per CTA, the
        // range measured. On the H200 against the 64-token split of two in
        // one process (bench/NOTES.md "M = 33-512"): W4A16 g128 with
        // wgmma_in_flight = 1 (2026-12-04, before the cooperative launch):
        // 8192^2 M = 128 39.1 -> 37.9 us, 8192 x 28672 113.3 -> 90.7, 4096
        // x 14336 M = 256 61.5 -> 53.2; W8A16 channel, cooperative, without
        // wgmma_in_flight (2026-12-04; with it 1-5 % slower): 8192^2 M =
        // 96 / 128 38.8 / 39.8 -> 32.2 / 33.3, 8192 x 28672 113.2 / 117.0
        // -> 86.1 / 89.8, 4096 x 14336 M = 256 59.7 -> 47.6 (against the
        // 64-token split of two). Where the 64-token split of four fills
        // the SMs the cost below keeps it (W8A16 4096 x 14336 M = 128:
        // 34.4 us against 42.0 for this tile at 64 CTAs). 5-7-bit weights
        // are not measured (between the two: no wgmma_in_flight, like 8
        // bits).
        const bool wide4 =
            tokens == 128 && split == 4 && iterations / split >= 32;
        if (iterations < 2 * ks.stages * split ||
            (workspace ? split == 1 || split > 4 ||
                             (tokens == 128 &&
                              ((split != 2 && !wide4) || activationBits != 16))
                       : (tokens / 8) % split != 0))
          continue;
        const int64_t ctas = blocks * split;
        if (4 * ctas < device.smCount)
          continue;
        // Through the workspace only where the CTAs are one wave: every
        // measured win was (128 CTAs on 132 SMs), and the workspace, a
        // module global of every CTA's sums, stays small (at most 132 CTAs'
        // sums: 8.3 MB).
        if (workspace && ctas > device.smCount)
          continue;
        const int64_t wave =
            split <= 2 || workspace ? device.smCount : device.smCount / 2;
        const double cost = double(ceilDiv(ctas, wave)) *
                            double(ceilDiv(iterations, split)) *
                            (tokens == 128 ? 1.5 : 1.0) *
                            (split > 1 && !workspace ? 1.7 : 1.0);
        if (best && cost >= bestCost)
          continue;
        TileConfig t = layout::tileConfigOf(
            deepPipeline(w, n, k, ks, device, split, workspace,
                         activationBits));
        t.splitK = split;
        t.workspaceSplit = workspace;
        // Through the workspace the CTAs are one wave (above), so a
        // cooperative launch holds them all: each CTA of a tile adds its
        // share of the rows instead of the last to arrive adding every
        // row. On the H200 (2026-12-04, W4A16 g128, forced in one process;
        // bench/NOTES.md "M = 33-512"): the 128-token split of four at M =
        // 128 37.9 -> 31.8 us at 8192^2 and 94.6 -> 84.1 at 8192 x 28672,
        // 4096 x 14336 M = 256 53.8 -> 47.3; the 64-token split of four at
        // 8192^2 M = 64 25.8 -> 24.2; the 64-token split of two tied
        // (39.4 at 8192^2 M = 128, 40.3 before).
        t.cooperativeSplit = workspace && (tokens / 8) % split == 0;
        useBulkCopies(t, activationBits);
        overlapIterations(t, w, activationBits);
        best = t;
        bestCost = cost;
      }
  }
  return best;
}

/// The large-M tile: 2 warp rows of 64 x 64 and 4 (or, where N has fewer
/// than a wave of 128 x 256 blocks at M = 1024, 2) warps along N, two
/// k-tiles per iteration, four stages. (Four k-tiles and three stages were
/// 4% faster on the H200 but reach 255 registers and spill on sm_89 for
/// 3-bit and fp4 weights: every k-tile's fragments are read up front.)
/// None where N or K do not divide or the pipeline does not fit the
/// device's shared memory.
std::optional<TileConfig> cooperativeTile(const WeightSchema &w, int64_t n,
                                          int64_t k, const DeviceInfo &device) {
  layout::KernelShape ks;
  ks.warpM = 64;
  ks.warpsM = 2;
  ks.warpsN = 4;
  ks.kSplit = 1;
  ks.kTilesPerWarp = 2;
  ks.stages = 4;
  if ((n / ks.blockN()) * (1024 / ks.blockM()) < device.smCount)
    ks.warpsN = 2;
  if (!runs(w, n, k, ks, device))
    return std::nullopt;
  return layout::tileConfigOf(ks);
}
/// The sm_90a tiles (mma = wgmma) for M = 129..512 and from 513 on: blocks
/// of 256 columns in two warpgroups of two n-tiles each, `tokens` tokens
/// per block (the instruction's n), `kTiles` k-tiles per iteration, four
/// stages. Measured on the H200 for 8192 x 8192 W4A16 g128 (bench/NOTES.md,
/// 2026-11-30) against the mma.sync tiles: 128 tokens x 32 of K at M =
/// 1024 448 -> 342 us, 4096 1788 -> 1371, 8192 3564 -> 2761 (six stages,
/// 256-token or 128-column blocks were slower; 64 of K too until the shared
/// loads went ahead of the copies, then 2522 us); 64 tokens x 64 of K
/// at M = 256 203 -> 112 us, M = 512 339 -> 220 (M = 128: 110 against 110,
/// so 65..128 keeps mma.sync). None off sm_90a, with f16 accumulation (the
/// wgmma kernels sum in f32), for batch-invariant layers, where N or K do
/// not divide, where the blocks at M = `mTop` are fewer than the SMs (the
/// non-specialized tiles at N = 4096 on the H200; not measured) or the
/// pipeline does not fit. `warpSpecialized` adds a producer warpgroup
/// (KernelShape) and asks for half as many blocks (measured below).
std::optional<TileConfig> wgmmaTile(const WeightSchema &w, int64_t n,
                                    int64_t k, const ComputeOptions &c,
                                    const DeviceInfo &device, int64_t tokens,
                                    int64_t kTiles, int64_t mTop,
                                    bool warpSpecialized = false,
                                    int64_t activationBits = 16) {
  if (!wgmmaApplies(c, device))
    return std::nullopt;
  layout::KernelShape ks =
      wgmmaShape(tokens, kTiles, warpSpecialized, activationBits);
  // The warp-specialized tile wins with half as many blocks as SMs too
  // (4096 x 4096 at M = 1024: 128 blocks for 132 SMs, 69 us against 111
  // for the mma_sync tile; 2026-12-01).
  const int64_t minBlocks =
      warpSpecialized ? ceilDiv(device.smCount, 2) : device.smCount;
  if (!runs(w, n, k, ks, device) ||
      (n / ks.blockN()) * (mTop / ks.blockM()) < minBlocks)
    return std::nullopt;
  return layout::tileConfigOf(ks);
}

/// Whether two tiles make the same kernel (everything but the M range).
bool sameKernel(const TileConfig &a, const TileConfig &b) {
  auto key = [](const TileConfig &t) {
    return std::make_tuple(
        t.blockM, t.blockN, t.blockK, t.warpM, t.warpN, t.warpK, t.stages,
        t.mma, t.warpSpecialized, t.streamK, t.mbarrier, t.cpAsync, t.tma,
        t.multicastA, t.multicastB, t.ctasPerSm, t.gridCap, t.writeSplits,
        t.splitK, t.blockCopies, t.scaleAfterMma, t.clusterSplit,
        t.workspaceSplit, t.cooperativeSplit, t.wgmmaInFlight, t.l2Prefetch,
        t.shareActivations, t.rasterM, t.persistent, t.promotionInterval,
        t.weightMap, t.stagedWeights);
  };
  return key(a) == key(b);
}

/// Whether an mma_sync tile of one 16-row warp row compiles to a faster
/// kernel for at most 8 tokens than for more: up to 8 it leaves the C rows
/// g + 8 unscaled and (16-bit activations, f32 sums, not batch-invariant)
/// takes the transposed product, the weights as the m16n8k16 A operand —
/// half the MMAs (MmaSyncEmitter::compute, weightsAsA).
bool splitsAtEightTokens(const TileConfig &t) {
  return t.mma == MmaKind::MmaSync && t.blockM == 16 && t.warpM == 16;
}

/// Appends `t` to `out`, or widens the last range where both are one
/// kernel (batch-invariant tiles, and devices where a range's special tile
/// does not apply: one kernel less to compile and load) — except across
/// 8 / 9 for a tile that splitsAtEightTokens, unless the layer is
/// `batchInvariant` (its kernels keep the MMAs' operand roles).
void appendRange(std::vector<TileConfig> &out, const TileConfig &t,
                 bool batchInvariant) {
  if (!out.empty() && out.back().mMax + 1 == t.mMin &&
      sameKernel(out.back(), t) &&
      (batchInvariant || out.back().mMax != 8 || !splitsAtEightTokens(t))) {
    out.back().mMax = t.mMax;
    return;
  }
  out.push_back(t);
}

/// A block of one row of 16-token warps: warpsN along N, kSplit K groups of
/// kTiles k-tiles each, `stages` slots.
layout::KernelShape sixteenRowShape(int64_t warpsN, int64_t kSplit,
                                    int64_t kTiles, int64_t stages) {
  layout::KernelShape ks;
  ks.warpM = 16;
  ks.warpsN = warpsN;
  ks.kSplit = kSplit;
  ks.kTilesPerWarp = kTiles;
  ks.stages = stages;
  return ks;
}

/// The tile for M = 9..16 where the per-warp tiles leave SMs idle: two
/// warps along N share one block copy of the 16-row activation tile
/// (block_copies: each column block otherwise reads all of A from L2, as
/// many bytes as its weights at M = 16), four warp groups split K inside
/// the block, and split-K across CTAs fills the SMs. Measured on the H200
/// for 8192 x 8192 (bench/NOTES.md, 2026-11-30): 21.0 us at M = 16 against
/// 23.6 for the best per-warp tile (at M = 8 it loses, 20.3 vs 18.0, hence
/// its own range; without the CTA split, 64 blocks for 132 SMs, it took
/// 33.3 us). The split across CTAs aims at two CTAs per SM (2026-12-01:
/// 8192 x 8192 M = 16 split 2 20.3 us, 3 23.2, 4 18.8, 6 23.0, 8 22.5;
/// 4096 x 14336 split 4 18.3, 8 17.7). None where the 128-column blocks
/// cannot be split at least in two across the SMs (by their number or by
/// K; not measured there), where N or K do not divide, or where the
/// pipeline does not fit. With `unsplit`: the same tile without a split,
/// only where the 128-column blocks alone are more than half the SMs (the
/// wide-N rule in selectMmaSyncTiles).
std::optional<TileConfig> sharedActivationTile(const WeightSchema &w, int64_t n,
                                               int64_t k,
                                               const DeviceInfo &device,
                                               bool unsplit = false) {
  layout::KernelShape ks = sixteenRowShape(2, 4, 2, 4);
  ks.blockCopies = true;
  if (!runs(w, n, k, ks, device))
    return std::nullopt;
  const int64_t chunk = ks.kTilesPerIteration() * layout::kTileK;
  const int64_t outputTiles = n / ks.blockN();
  if (unsplit) {
    if (2 * outputTiles <= device.smCount)
      return std::nullopt;
    return layout::tileConfigOf(ks);
  }
  if (2 * outputTiles > device.smCount)
    return std::nullopt;
  // Two CTAs per SM where two fit the SM's shared memory.
  const int64_t perSm =
      2 * layout::sharedBytes(w, ks) <= device.smemPerSmKB * 1024 ? 2 : 1;
  int64_t ctaSplit =
      std::min<int64_t>(8, perSm * device.smCount / outputTiles);
  while (ctaSplit > 1 && (k / chunk) / ctaSplit < ks.stages)
    --ctaSplit;
  if (ctaSplit < 2) // K too short to split: the SMs would stay idle
    return std::nullopt;
  TileConfig t = layout::tileConfigOf(ks);
  t.splitK = ctaSplit;
  return t;
}

/// The 256 x 256 tile for M <= 16 on sm_90a-class devices: sixteen 16 x 64
/// warps, four along N sharing the activation copies of their K group
/// (share_activations: one named barrier per group, no block lockstep)
/// and four K groups of 64 (four k-tiles, one group: the group scales
/// multiply the f32 sums after the MMAs where they may), three stages (216
/// KiB), K split across CTAs up to one CTA per SM. Measured on the H200,
/// W4A16 g128 (bench/NOTES.md, 2026-12-01), against the tiles of before:
/// 8192^2 M = 12 / 16 17.3 / 17.0 -> 15.6 / 15.7 us (at M = 8 it loses,
/// 15.5 vs 14.4); 4096 x 14336 M = 9 / 16 15.0 / 15.4 -> 14.7 / 14.8;
/// 8192 x 28672 M = 16 44.9 -> 40.0 (M = 9 40.6 -> 41.0); wide N (no
/// split), 14336 x 4096 M = 1 / 9 / 16 15.5 / 15.9 / 16.3 -> 15.2 / 15.1 /
/// 15.2, 28672 x 8192 47.2 / 47.6 / 51.6 -> 46.5 / 45.0 / 43.3. Its
/// neighbours lost at 8192^2 M = 16: without scale_after_mma 16.7,
/// block_copies instead of sharing 19.2-19.4, l2_prefetch = 2 18.2, split
/// 2 (64 CTAs) 24.7; 8 warps of 128 columns 19.6. None where fewer CTAs
/// than half the SMs would run or a CTA would take fewer than four
/// iterations (4096^2: 64 CTAs of 4 iterations, 9.0-9.5 us vs 8.5).
std::optional<TileConfig> wideShareTile(const WeightSchema &w, int64_t n,
                                        int64_t k, const ComputeOptions &c,
                                        const DeviceInfo &device) {
  layout::KernelShape ks = sixteenRowShape(4, 4, 4, 3);
  ks.shareActivations = true;
  if (!runs(w, n, k, ks, device))
    return std::nullopt;
  const int64_t blocks = n / ks.blockN();
  const int64_t iterations = k / (ks.kTilesPerIteration() * layout::kTileK);
  int64_t ctaSplit = std::max<int64_t>(
      1, std::min<int64_t>(8, device.smCount / blocks));
  while (ctaSplit > 1 && iterations / ctaSplit < 4)
    --ctaSplit;
  if (iterations / ctaSplit < 4 || 2 * blocks * ctaSplit <= device.smCount)
    return std::nullopt;
  TileConfig t = layout::tileConfigOf(ks);
  t.splitK = ctaSplit;
  if (!layout::scaleAfterMmaApplies(w, c.f16Accumulation, t))
    t.scaleAfterMma = true;
  return t;
}

/// 8-bit activations at M <= 16: the warp-specialized tile of `tokens` (8
/// or 16) tokens (the wgmma's n) over 256 columns, K split through the
/// workspace into the most CTAs up to 4 that keep one wave (blocks x split
/// <= SMs) and two pipelines' worth of iterations each; the 8-token tile
/// asks for two CTAs per SM. Measured on the H200 (2026-12-02, 8192^2,
/// end to end with the quantization; bench/NOTES.md "8-bit activations")
/// against the 64-token cluster-split tile: W8A8 M = 1 34.3 -> 25.7 us
/// (8 tokens) / 26.4 (16), M = 16 34.9 -> 27.2; W4A8 g128 M = 1 23.7, M = 16
/// 24.7; a split of 8 lost (29.3 / 30.4). None where N has no 256-column
/// blocks, K too few iterations, or the pipeline does not fit (twice, for
/// two CTAs per SM).
std::optional<TileConfig> fewTokenTile(const WeightSchema &w, int64_t n,
                                       int64_t k, const DeviceInfo &device,
                                       int64_t tokens) {
  layout::KernelShape ks = wgmmaShape(tokens, 4, /*warpSpecialized=*/true, 8);
  ks.ctasPerSm = tokens <= 8 ? 2 : 1;
  if (!runs(w, n, k, ks, device))
    return std::nullopt;
  const int64_t iterations = k / (ks.kTilesPerIteration() * layout::kTileK);
  const int64_t blocks = n / ks.blockN();
  int64_t split = 4;
  while (split > 1 && (blocks * split > device.smCount ||
                       iterations < 2 * ks.stages * split))
    split /= 2;
  TileConfig t = layout::tileConfigOf(ks);
  t.splitK = split;
  t.workspaceSplit = split > 1;
  return t;
}

/// K-major weights (layout::TileOrder::KMajor: wgmma reads them from
/// shared memory by descriptor, no registers, no conversion) from M = 513
/// on: the warp-specialized 128-token tile of two warpgroups of one n-tile
/// each (128 columns: the two sets of sums of 64 each), 128 of K per
/// iteration (four k32 steps per fold of the sums), every copy by TMA (the
/// activations as 128-byte rows in TMA's 128-byte swizzle, the weights by
/// one bulk copy per k-tile), as many stages as fit up to six; int8
/// without promotion on 256 columns, and with `deep` (M > 2048) fp8 on 192
/// tokens (below). A dense layer's last block of columns may be partial
/// (layout::partialColumnBlocks). None where K does not divide, N is not
/// a multiple of 64 (of the block for MoE GEMMs: `forExperts`) or no
/// three stages fit. `registerWeights`: the same tile over 4-bit weights
/// that wgmma takes from registers (converted there each iteration; the
/// activations by TMA), which W4A8 takes from M = 129 (selectEightBitTiles).
std::optional<TileConfig> kMajorPrefillTile(const WeightSchema &w,
                                            const InputSchema &in, int64_t n,
                                            int64_t k, const DeviceInfo &device,
                                            bool forExperts, bool deep,
                                            bool registerWeights = false) {
  // (Per-group activation or weight scales: one group per iteration.)
  int64_t kTiles = 8;
  if (in.scaling == ActScaling::Group)
    kTiles = std::min(kTiles, in.groupK / layout::kTileK);
  if (w.hasPerKScales())
    kTiles = std::min(kTiles, w.groupK / layout::kTileK);
  layout::KernelShape ks =
      wgmmaShape(128, kTiles, /*warpSpecialized=*/true, 8);
  ks.weightsByDescriptor = !registerWeights;
  ks.tmaActivations = ks.tmaWeights = true;
  ks.rasterM = 8;
  // A dense layer's N need not divide into blocks: the last may be partial
  // (layout::partialColumnBlocks; N = 2112 ran the 64-column tile without a
  // producer at 615 us for M = 4096, bench/NOTES.md).
  auto fits = [&](const layout::KernelShape &shape) {
    if (forExperts || n % shape.blockN() == 0)
      return runs(w, n, k, shape, device);
    return n % layout::kTileN == 0 &&
           layout::partialColumnBlocks(layout::tileConfigOf(shape), w, in) &&
           runs(w, n + shape.blockN() - n % shape.blockN(), k, shape, device);
  };
  // int8 without group scales keeps one set of s32 sums (exact, no
  // promotion: WgmmaKernel.cpp): two n-tiles per warpgroup, 256 columns,
  // half the activation bytes per MMA.
  if (!registerWeights && in.type == ScalarType::sint(8) &&
      !w.hasPerKScales() && in.scaling != ActScaling::Group) {
    layout::KernelShape wide = ks;
    wide.nTilesPerGroup = 2;
    wide.warpsN = 4; // n-tiles: two warpgroups of two
    wide.singleSumSet = true;
    for (wide.stages = 5; wide.stages >= 3; --wide.stages)
      if (fits(wide))
        return layout::tileConfigOf(wide);
  }
  // Promoted sums (fp8; int8 with group scales) keep two sets: with `deep`
  // (M > 2048) 192 tokens per warpgroup (one m64n192 wgmma per k32 step, 2
  // x 96 sums in the 224 registers the producer leaves), 17 % fewer bytes
  // from L2 per MAC than 128 tokens (bench/NOTES.md, "8-bit activations":
  // L2's bandwidth limits this tile). Measured on an H100, 8192^2 fp8 on
  // codes: M = 4096 / 8192 654.6 / 1269.9 -> 593.5 / 1105.6 us, but M =
  // 1024 146.2 -> 159.8 (5.3 blocks of rows for 8: a wave more per CTA's
  // work), hence 128 tokens up to 2048 (the crossover between is
  // unmeasured). Per-group activation scales and per-K weight scales
  // carried beside the sums spilled at 192; the fold reads them late
  // instead (WgmmaKernel.cpp, lateTokenScales), with which fp8 under
  // per-group activation scales (fine-grained: 128 x 128 weight blocks) and
  // 4-bit weights converted in registers take 192 too: H100, 8192^2,
  // fine-grained M = 4096 / 8192 685.1 / 1401.0 -> 654.0 / 1280.0 us, W4A8
  // in selectEightBitTiles (2026-12-07). int8 with per-group activation
  // scales and 8-bit weights with per-K scales under per-token activations
  // keep 128 (unmeasured at 192), and so do MoE GEMMs (unmeasured there; an
  // indexed routing's block_size would have to be a multiple of 192).
  const bool lateScales =
      (in.scaling != ActScaling::Group && !w.hasPerKScales()) ||
      registerWeights ||
      (in.type.isFloat() && in.scaling == ActScaling::Group);
  if (deep && lateScales && !forExperts) {
    layout::KernelShape tall = ks;
    tall.warpM = 192;
    for (tall.stages = 5; tall.stages >= 3; --tall.stages)
      if (fits(tall))
        return layout::tileConfigOf(tall);
  }
  for (ks.stages = 6; ks.stages >= 3; --ks.stages)
    if (fits(ks))
      return layout::tileConfigOf(ks);
  return std::nullopt;
}

/// 8-bit activations: the wgmma tiles at every M (the mma_sync kernels take
/// 16-bit activations only). M = 1..8 and 9..16 the 8- and 16-token tiles
/// above (fewTokenTile); up to M = 512 the warp-specialized 64- or
/// 128-token tile with K split in a cluster or through the workspace
/// (clusterSplitTile, for each range's top; M = 17..64 as one range: the
/// weights' bytes dominate there and the 64-token tile's unused token rows
/// are zero-filled, not read), from 513 on the warp-specialized 128-token
/// tile (one n-tile per warpgroup for the two sets of sums; weights by
/// bulk copy; K-major weights: kMajorPrefillTile, fp8 on 192 tokens from
/// 2049), else the same without a producer warpgroup, else a 64-column
/// block. Measured for 8192^2 (H200; the K-major tiles on an H100) and
/// DeepSeek-V3's shapes (bench/NOTES.md, "8-bit activations").
Result<std::vector<TileConfig>>
selectEightBitTiles(const WeightSchema &w, const InputSchema &in,
                    const ComputeOptions &c, int64_t n, int64_t k,
                    const DeviceInfo &device, bool forExperts) {
  const int64_t bits = int64_t(in.type.bits);
  std::vector<TileConfig> out;
  struct Range {
    int64_t lo, hi;
  };
  std::optional<Chip> chip = Chip::parse(device.chip);
  const bool kMajor =
      chip && layout::tileOrder(w, in, chip->readsKMajorEightBit()) ==
                  layout::TileOrder::KMajor;
  // 4-bit weights (W4A8) over groups of 128 of K (or per channel) in a
  // dense layer: the K-major tile's structure with the weights converted in
  // registers from M = 129, 192 tokens from 257. H100, 8192^2 uint4 g128 x
  // e4m3, graph replay (us; bench/NOTES.md "8-bit activations",
  // 2026-12-07), the earlier tiles against 128 / 192 tokens: M = 200 88.6
  // -> 45.8 / 53.2, 300 168.0 -> 87.8 / 54.0, 513 233.6 -> 130.7 / 104.7,
  // 1024 326.5 -> 175.2 / 161.5, 2048 647.2 -> 351.6 / 332.5, 8192 2626.5
  // -> 1449.1 / 1174.9; at M = 64 the cluster-split tile keeps it (29.4
  // against 45.0). Weights with zero points or a global scale keep the
  // earlier tiles until the GPU suite has run them on this one.
  const bool fourBitRegisters =
      !kMajor && w.type.bits == 4 && !forExperts &&
      w.zeroPoint == ZeroPointKind::None && !w.hasGlobalScale() &&
      (!w.hasPerKScales() || w.groupK % 128 == 0);
  for (Range r : {Range{1, 8}, {9, 16}, {17, 64}, {65, 128}, {129, 256},
                  {257, 512}, {513, 2048}, {2049, 0}}) {
    std::optional<TileConfig> t;
    // From 513 on (two ranges, the same tile but for fp8's token depth
    // beyond 2048; appendRange merges equal neighbours).
    const bool prefill = r.lo > 512;
    if (prefill && kMajor)
      t = kMajorPrefillTile(w, in, n, k, device, forExperts,
                            /*deep=*/r.hi == 0);
    if (fourBitRegisters && r.lo > 128)
      t = kMajorPrefillTile(w, in, n, k, device, forExperts,
                            /*deep=*/r.lo > 256, /*registerWeights=*/true);
    if (!t && !prefill && r.hi <= 16)
      t = fewTokenTile(w, n, k, device, r.hi);
    if (!t && !prefill)
      t = clusterSplitTile(w, n, k, c, device, r.hi, bits);
    // (Any M: no bound on the block count.)
    const int64_t anyM = int64_t(1) << 30;
    if (!t) {
      t = wgmmaTile(w, n, k, c, device, 128, 4, anyM,
                    /*warpSpecialized=*/true, bits);
      if (t)
        useBulkCopies(*t, bits);
    }
    if (!t)
      t = wgmmaTile(w, n, k, c, device, 64, 4, anyM,
                    /*warpSpecialized=*/false, bits);
    if (!t) {
      // N not a multiple of 256: one warpgroup of one 64-column n-tile.
      layout::KernelShape ks =
          wgmmaShape(64, 4, /*warpSpecialized=*/false, bits);
      ks.warpsN = 1;
      ks.nTilesPerGroup = 1;
      if (runs(w, n, k, ks, device))
        t = layout::tileConfigOf(ks);
    }
    if (!t)
      return Error{concat("no wgmma tile runs a ", n, " x ", k, " layer with ",
                          in.type.str(), " activations on ",
                          device.name.empty() ? device.chip : device.name,
                          " (the padded K must be a multiple of 64)")};
    t->mMin = r.lo;
    t->mMax = r.hi;
    appendRange(out, *t, c.batchInvariant);
  }
  return out;
}

/// 8-bit activations without wgmma (sm_80-sm_89: s8 m16n8k32, and e4m3 /
/// e5m2 m16n8k32 from sm_89), and si4 ones (m16n8k64 s4, k64 steps, per-warp
/// tiles at every M): the mma_sync kernels with k32 steps, each
/// iteration's sums folded into f32 ones (group scales per C column:
/// scale_after_mma), so warp rows of at most 32 tokens. M = 1..16: 16-row
/// warps; up to M = 512 32-row warps (ranges up to 64, 128, 256 and 512:
/// below the fp8 / int8 compute-memory crossover of these chips, ~400
/// tokens for 8-bit weights on the L40S, the weights' bytes dominate);
/// each over 64 of K per iteration where K allows it (32 else), two warps
/// along N once the output tiles are four per SM, with the 16-bit kernels'
/// K splits (eight resident warps per SM from an in-block split of up to
/// eight warps, a split across CTAs while the output tiles leave SMs idle,
/// at least `stages` iterations per CTA and warp group). From M = 513:
/// blocks of 2 x 4 (or 2) warps of 32 x 64 copying their tiles together,
/// 32 of K per iteration. Batch-invariant: the per-warp tiles at every M,
/// 64 of K per iteration and no K split (the same sums in the same order
/// for every token). si4: per-warp tiles at every M (the cooperative slots
/// hold 8- and 16-bit rows only), 128 of K per iteration where K and the
/// groups allow it, else 64. The 16-bit rules carried over, not measured:
/// no sm_80-sm_89 device has run these kernels (the H200 runs them with
/// those devices' tiles: humming-gpu-test --tiles-for=L40S / A100).
Result<std::vector<TileConfig>>
selectNarrowMmaSyncTiles(const WeightSchema &w, const InputSchema &in,
                         const ComputeOptions &c, int64_t n, int64_t k,
                         const DeviceInfo &device) {
  if (c.f16Accumulation)
    return Error{concat(in.type.str(), " activations sum in f32 (s32 for "
                        "int8); expected f16_accumulation = false")};
  // (4-bit activations: supports() holds the kernels' rules.)
  const int64_t bits = in.type.bits;
  if (bits == 8)
    if (Diag d = layout::eightBitMmaSyncSupports(w, in))
      return Error{*d};
  const int64_t budget = sharedMemoryBudget(device);
  const int64_t columnTiles = n / layout::kTileN;
  struct Range {
    int64_t lo, hi, warpM;
  };
  std::vector<TileConfig> out;
  for (Range r : {Range{1, 16, 16}, {17, 64, 32}, {65, 128, 32},
                  {129, 256, 32}, {257, 512, 32}, {513, 0, 32}}) {
    layout::KernelShape ks;
    ks.activationBits = bits;
    ks.warpM = r.warpM;
    int64_t ctaSplit = 1;
    if (r.hi == 0 && !c.batchInvariant && bits == 8) {
      // The cooperative block.
      ks.warpsM = 2;
      ks.warpsN = n % (4 * layout::kTileN) == 0   ? 4
                  : n % (2 * layout::kTileN) == 0 ? 2
                                                  : 1;
      ks.kTilesPerWarp = 2;
      ks.stages = 4;
      ks.blockCopies = true;
      while (ks.stages > 2 && layout::sharedBytes(w, ks) > budget)
        --ks.stages;
    } else {
      // (Batch-invariant: 64 of K, the one decomposition
      // verifyTileForProblem allows for 8-bit activations; 128 for 4-bit.)
      // 4-bit activations: k64 steps, 128 of K where K and the groups
      // allow it.
      if (bits == 4)
        ks.kTilesPerWarp = c.batchInvariant ||
                                   (k % (8 * layout::kTileK) == 0 &&
                                    (!w.hasPerKScales() || w.groupK >= 128))
                               ? 8
                               : 4;
      else
        ks.kTilesPerWarp =
            k % (4 * layout::kTileK) == 0 || c.batchInvariant ? 4 : 2;
      ks.stages = 4;
      const int64_t mTiles = ceilDiv(r.hi ? r.hi : 512, r.warpM);
      if (n % (2 * layout::kTileN) == 0 &&
          columnTiles * mTiles >= 4 * device.smCount)
        ks.warpsN = 2;
      const int64_t outputTiles = (columnTiles / ks.warpsN) * mTiles;
      if (outputTiles < device.smCount && !c.batchInvariant)
        ctaSplit = std::min<int64_t>(8, device.smCount / outputTiles);
      // Eight resident warps per SM, at most eight per block.
      ks.kSplit = c.batchInvariant
                      ? 1
                      : std::min<int64_t>(
                            8, floorPow2(std::max<int64_t>(
                                   1, device.smCount * 8 /
                                          (outputTiles * ctaSplit))));
      auto iterations = [&] {
        return k / (ks.kTilesPerIteration() * layout::kTileK);
      };
      while (ks.kSplit > 1 &&
             (k % (ks.kTilesPerIteration() * layout::kTileK) != 0 ||
              iterations() < ks.stages))
        ks.kSplit /= 2;
      while (layout::sharedBytes(w, ks) > budget) {
        if (ks.stages > 3)
          --ks.stages;
        else if (ks.kSplit > 1)
          ks.kSplit /= 2;
        else if (ks.stages > 2)
          --ks.stages;
        else
          break;
      }
      while (ctaSplit > 1 && iterations() / ctaSplit < ks.stages)
        --ctaSplit;
    }
    if (!runs(w, n, k, ks, device))
      return Error{concat("no mma_sync tile runs a ", n, " x ", k,
                          " layer with ", in.type.str(), " activations on ",
                          device.name.empty() ? device.chip : device.name,
                          " (", budget, " bytes of shared memory)")};
    TileConfig t = layout::tileConfigOf(ks);
    t.mMin = r.lo;
    t.mMax = r.hi;
    t.splitK = ctaSplit;
    if (w.hasPerKScales())
      t.scaleAfterMma = true;
    if (Diag d = verifyTileConfig(t))
      return Error{concat("the tile heuristics chose an invalid tile (a bug): ",
                          *d)};
    appendRange(out, t, c.batchInvariant);
  }
  return out;
}
} // namespace

namespace {
/// An M range of selectTilesFor's kernels (hi = 0: open).
struct MRange {
  int64_t lo, hi;
};
/// What selectTilesFor settles before it chooses each range's tile.
struct RangePlan {
  double crossover;
  bool clusterTiles;
  int64_t clusterFrom, sharedFrom;
  std::optional<TileConfig> wideShared, wideShare;
};
} // namespace

/// selectTilesFor with 8-bit activations: the wgmma tiles where they run
/// (K a multiple of 64), else the mma_sync k32 ones (sm_80-sm_89,
/// batch-invariant layers, K = 32 mod 64 on sm_90a), and the mma_sync tile
/// at small M where the wgmma decode tiles leave SMs idle.
static Result<std::vector<TileConfig>>
selectEightBitActivationTiles(const WeightSchema &w, const InputSchema &in,
                              const ComputeOptions &c, int64_t n, int64_t k,
                              const DeviceInfo &device, bool forExperts) {
  // The wgmma tiles where they run (K a multiple of 64), else the
  // mma_sync k32 ones (sm_80-sm_89, batch-invariant layers, K = 32 mod
  // 64 on sm_90a). (Every chip with an fp8 mma.sync has PTX ISA 8.4, the
  // one LLVM selects it from, as its minimum; sm_90a's kernels take f16
  // MMAs instead: Chip::emulatesFp8MmaSync.)
  std::optional<Chip> chip = Chip::parse(device.chip);
  // K-major weights (layout::TileOrder::KMajor) are wgmma's alone; a
  // batch-invariant layer gets one K decomposition for every M: the
  // warp-specialized 64-token tile without a K split.
  if (c.batchInvariant && chip &&
      layout::tileOrder(w, in, chip->readsKMajorEightBit()) ==
          layout::TileOrder::KMajor) {
    layout::KernelShape ks =
        wgmmaShape(64, 4, /*warpSpecialized=*/true, in.type.bits);
    if (!runs(w, n, k, ks, device))
      return Error{concat("no batch-invariant wgmma tile runs a ", n, " x ", k,
                          " layer with ", in.type.str(), " activations on ",
                          device.name.empty() ? device.chip : device.name,
                          " (the padded N must be a multiple of 256, K of "
                          "64)")};
    TileConfig t = layout::tileConfigOf(ks);
    t.mMin = 1;
    t.mMax = 0;
    return std::vector<TileConfig>{t};
  }
  if (!wgmmaApplies(c, device)) {
    if (chip && chip->sm < minSmForActivation(in.type))
      return Error{concat(in.type.str(), " activations need sm_",
                          minSmForActivation(in.type), " or newer, got ",
                          chip->str())};
    return selectNarrowMmaSyncTiles(w, in, c, n, k, device);
  }
  Result<std::vector<TileConfig>> tiles =
      selectEightBitTiles(w, in, c, n, k, device, forExperts);
  Result<std::vector<TileConfig>> other =
      selectNarrowMmaSyncTiles(w, in, c, n, k, device);
  // K-major weights (layout::TileOrder::KMajor) are wgmma's alone (the
  // padded K of 8-bit activations is a multiple of 64: verifyPadding).
  const bool kMajor =
      chip && layout::tileOrder(w, in, chip->readsKMajorEightBit()) ==
                  layout::TileOrder::KMajor;
  if (kMajor || !tiles || !other)
    return tiles || !other || kMajor ? tiles : other;
  // M <= 16 where the wgmma decode tiles fill fewer than half the SMs
  // (N of 4096: 16 blocks of 256 columns, K split 4): the 16-row mma.sync
  // tile, which splits K in the block and across CTAs up to eight
  // resident warps per SM. Measured on the H200 (2026-12-02, 4096^2, GEMM
  // on codes): W8A8 fp8 M = 1 / 16 10.4 / 11.4 -> 9.2 / 9.4 us, W4A8
  // uint4 10.3 / 11.5 -> 8.8 / 9.1; at 8192^2 (32 blocks x 4) the wgmma
  // tiles won (W4A8 g128 18.5 / 19.7 against 21.8 / 22.0; bench/NOTES.md
  // "8-bit activations").
  bool underfilled = true;
  for (const TileConfig &t : *tiles)
    if (t.mMax != 0 && t.mMax <= 16)
      underfilled &=
          2 * (n / t.blockN) * std::max<int64_t>(1, t.splitK) <= device.smCount;
  if (other->front().mMax != 16)
    return tiles;
  if (!underfilled) {
    // fp8 on sm_90a, whose mma.sync kernels take f16 MMAs of their own
    // (Chip::emulatesFp8MmaSync): M <= 8 in the 16-row mma.sync tile
    // without a split across CTAs. Measured on an H100 (2026-12-05, W4A8
    // uint4 g128 x e4m3, end to end, bench/NOTES.md "8-bit
    // activations"): M = 1 8192^2 22.4 -> 18.7 us, 28672 x 8192 59.1 ->
    // 52.2 (with a split of 2: 20.7 / 56.8); 8192^2 M = 4 / 8 twice in
    // one call 18.2 / 32.7 and 18.4 / 33.0 with the wgmma tiles of M >= 5
    // against 18.3 / 25.8 and 18.7 / 25.7 in this tile. M = 16 stays with
    // wgmma (24.3 against 27.9).
    // (Weights of at most 4 bits: W8A8 not measured.)
    if (!chip || !chip->emulatesFp8MmaSync() || in.type.isInt() ||
        w.type.bits > 4)
      return tiles;
    TileConfig few = other->front();
    few.mMax = 8;
    few.splitK = 1;
    few.clusterSplit = false;
    std::vector<TileConfig> mixed = {few};
    for (TileConfig t : *tiles)
      if (t.mMax == 0 || t.mMax > 8) {
        t.mMin = std::max<int64_t>(t.mMin, 9);
        mixed.push_back(t);
      }
    return mixed;
  }
  std::vector<TileConfig> mixed = {other->front()};
  for (const TileConfig &t : *tiles)
    if (t.mMax == 0 || t.mMax > 16)
      mixed.push_back(t);
  mixed[1].mMin = 17;
  return mixed;
}

/// selectTilesFor's tile for the M range `r` where one of the special
/// tiles takes it (the cluster split, shared activation copies, the wgmma
/// tiles from M = 129), in that order; none for the mma_sync tile.
static std::optional<TileConfig>
specialTileForRange(const WeightSchema &w, int64_t n, int64_t k,
                    const ComputeOptions &c, const DeviceInfo &device, MRange r,
                    const RangePlan &plan) {
  const double crossover = plan.crossover;
  const int64_t sharedFrom = plan.sharedFrom;
  const std::optional<TileConfig> &wideShared = plan.wideShared,
                                  &wideShare = plan.wideShare;
  if (plan.clusterTiles && r.lo >= plan.clusterFrom && r.hi != 0) {
    std::optional<TileConfig> t = clusterSplitTile(w, n, k, c, device, r.hi);
    if (t && r.lo < 33 &&
        4 * (n / t->blockN) * ceilDiv(r.hi, t->blockM) * t->splitK <
            3 * device.smCount)
      t.reset();
    if (t) {
      return t;
    }
  }
  if (r.lo >= sharedFrom && r.hi != 0 && r.hi <= 16 && !c.batchInvariant &&
      double(r.lo) <= crossover) {
    if (std::optional<TileConfig> t =
            wideShared  ? wideShared
            : wideShare ? wideShare
                        : sharedActivationTile(w, n, k, device)) {
      return t;
    }
  }
  if (r.lo >= 129 && r.hi != 0 && !c.batchInvariant) {
    if (std::optional<TileConfig> t =
            wgmmaTile(w, n, k, c, device, 64, 4, 512)) {
      return t;
    }
  }
  if (r.lo == 513 && !c.batchInvariant) {
    // Warp-specialized with 64 of K per iteration where K allows it: a
    // producer warpgroup copies, mbarriers instead of the block barrier
    // (H200, W4A16 g128, 2026-12-01: 8192^2 M = 8192 2487 -> 2302 us,
    // 1024 310 -> 292; 4096^2 M = 4096 448 -> 297, 1024 111 -> 69; three
    // or five stages lost: 3365 / 3356 us). Else the same tile with the
    // copies in the math warps (64 of K: M = 8192 2659 -> 2522 us, M =
    // 1024 332 -> 318 against 32), else 32 of K.
    std::optional<TileConfig> t =
        wgmmaTile(w, n, k, c, device, 128, 4, 1024, /*warpSpecialized=*/true);
    if (t) {
      useBulkCopies(*t);
      overlapIterations(*t, w);
    }
    if (!t)
      t = wgmmaTile(w, n, k, c, device, 128, 4, 1024);
    if (!t)
      t = wgmmaTile(w, n, k, c, device, 128, 2, 1024);
    if (!t)
      t = cooperativeTile(w, n, k, device);
    if (t) {
      return t;
    }
  }
  return std::nullopt;
}

/// selectTilesFor's mma_sync tile for the M range `r`: warp rows by the
/// memory/compute crossover, warps along N, k-tiles per warp, pipeline
/// depth, and K split inside the block and across CTAs.
/// The mma_sync shapes of one warp tile (warp_m x warps_n) over K that the
/// heuristics try: their kernel shape, and whether one fits.
struct MmaSyncFit {
  const WeightSchema &w;
  int64_t warpM, warpsN, k, maxThreads, smemBudget;

  layout::KernelShape shape(int64_t tilesPerWarp, int64_t split,
                            int64_t st) const {
    layout::KernelShape ks;
    ks.warpM = warpM;
    ks.warpsN = warpsN;
    ks.kSplit = split;
    ks.kTilesPerWarp = tilesPerWarp;
    ks.stages = st;
    return ks;
  }
  /// Threads and K bound the in-block split; shared memory then takes
  /// pipeline depth first (down to three slots), then split. False where
  /// nothing fits.
  bool fit(int64_t tilesPerWarp, int64_t &split, int64_t &st) const {
    auto legalSplit = [&](int64_t sp) {
      layout::KernelShape ks = shape(tilesPerWarp, sp, st);
      int64_t chunk = sp * tilesPerWarp * layout::kTileK;
      return ks.threads() <= maxThreads && k % chunk == 0 &&
             (sp == 1 || k / chunk >= st);
    };
    auto fitsSmem = [&] {
      return layout::sharedBytes(w, shape(tilesPerWarp, split, st)) <=
             smemBudget;
    };
    while (split > 1 && !legalSplit(split))
      split /= 2;
    while (!fitsSmem()) {
      if (st > 3)
        --st;
      else if (split > 1)
        split /= 2;
      else if (st > 2)
        --st;
      else
        return false;
    }
    return true;
  }
};

static Result<TileConfig> mmaSyncTileForRange(const WeightSchema &w,
                                              const ComputeOptions &c,
                                              int64_t n, int64_t k,
                                              const DeviceInfo &device,
                                              MRange r, const RangePlan &plan) {
  const double crossover = plan.crossover;
  const int64_t sharedFrom = plan.sharedFrom;
  const int64_t columnTiles = n / layout::kTileN;
  const bool memoryBound = double(r.lo) <= crossover;
  int64_t warpM = memoryBound ? 16 : (r.hi && r.hi <= 32 ? 32 : 64);
  if (c.batchInvariant)
    warpM = std::min<int64_t>(warpM, 32);
  const int64_t mt = warpM / 16;
  // Tokens the range stands for: its top, or 512 for the open range.
  const int64_t mRep = r.hi ? r.hi : 512;
  const int64_t mTiles = ceilDiv(mRep, warpM);
  // Eight resident warps per SM: measured on the H200, sixteen lose to
  // eight at M = 1 (the split-K reduction grows, the instruction work per
  // SM does not shrink) and four lose to eight (fewer bytes in flight).
  const int64_t wantWarps = device.smCount * 8;
  // Warps along N: one while the grid alone cannot fill the device, two
  // once there are several blocks per SM (fewer, larger blocks reuse A).
  int64_t warpsN = 1;
  if (n % (2 * layout::kTileN) == 0 &&
      (mt == 4 || columnTiles * mTiles >= 4 * device.smCount))
    warpsN = 2;
  // k-tiles per warp and iteration: two when K allows it, one for the
  // 64-row tiles (their A fragments and 128 accumulators leave no room);
  // four for 16-row tiles at M <= 16 where that costs neither pipeline
  // depth nor K split (below). Measured on the H200, 8192 x 8192: M = 1
  // 16.3 -> 16.1 us, M = 4 17.4 -> 16.5, M = 8 19.6 -> 18.0 (half the
  // per-iteration copy issue, address and barrier work per k-tile).
  int64_t kTiles = mt < 4 && k % (2 * layout::kTileK) == 0 ? 2 : 1;
  const bool tryFourTiles = memoryBound && mt == 1 && r.hi != 0 && r.hi <= 16 &&
                            !c.batchInvariant && k % (4 * layout::kTileK) == 0;
  if (c.batchInvariant) {
    if (k % (2 * layout::kTileK) != 0)
      return Error{concat("batch-invariant kernels "
                          "take K in steps of 32; expected the padded K to "
                          "be a multiple of 32, got ",
                          k)};
    kTiles = 2;
  }
  // Pipeline depth: four slots hide HBM latency at small M; the 64-row
  // tiles keep 128 accumulators per thread and take three.
  const int64_t firstStages = mt == 4 ? 3 : 4;
  int64_t stages = firstStages;
  // Split-K across CTAs while the output tiles alone leave SMs idle
  // (N = 4096 at M <= 16 is 64 tiles for 132 SMs on the H200): every SM
  // then streams its share of the weights. Below the crossover only (above
  // it the 64-row tiles' partial sums would cost more than the idle SMs),
  // bounded ranges only (the workspace is sized for the range's top), and
  // never batch-invariant.
  const int64_t outputTiles = (columnTiles / warpsN) * mTiles;
  int64_t ctaSplit = 1;
  if (memoryBound && !c.batchInvariant && r.hi != 0 &&
      outputTiles < device.smCount)
    ctaSplit = std::min<int64_t>(8, device.smCount / outputTiles);
  // In-block K split: as many warp groups as the device needs, bounded
  // by eight warps per block, the shared memory of the pipeline and the
  // partial sums, and at least `stages` iterations per warp group.
  const int64_t blocks = outputTiles * ctaSplit;
  const int64_t wantSplit =
      c.batchInvariant
          ? 1
          : floorPow2(std::max<int64_t>(1, wantWarps / (blocks * warpsN)));
  // At most eight warps per block: sixteen lost on the H200 even where
  // only half the SMs get a block (4096 x 4096, M = 1: 18.7 vs 14.5 us).
  const MmaSyncFit fits{
      w, warpM, warpsN, k, /*maxThreads=*/256, sharedMemoryBudget(device)};
  int64_t kSplit = wantSplit;
  if (!fits.fit(kTiles, kSplit, stages))
    return Error{concat("no mma_sync tile fits ",
                        device.name.empty() ? device.chip : device.name, " (",
                        fits.smemBudget,
                        " bytes of shared memory) for warp_m = ", warpM)};
  // Every CTA along K keeps at least `stages` iterations (fewer would
  // leave its pipeline unfilled).
  auto ctasFor = [&](int64_t tilesPerWarp) {
    const int64_t iterations = k / (kSplit * tilesPerWarp * layout::kTileK);
    int64_t ctas = ctaSplit;
    while (ctas > 1 && iterations / ctas < stages)
      --ctas;
    return ctas;
  };
  if (tryFourTiles) {
    // Four k-tiles only where they keep the split inside the block, the
    // pipeline depth and the split across CTAs of two.
    int64_t split4 = wantSplit, stages4 = firstStages;
    if (fits.fit(4, split4, stages4) && split4 == kSplit && stages4 == stages &&
        ctasFor(4) == ctasFor(kTiles))
      kTiles = 4;
  }
  ctaSplit = ctasFor(kTiles);
  TileConfig t = layout::tileConfigOf(fits.shape(kTiles, kSplit, stages));
  t.mMin = r.lo;
  t.mMax = r.hi;
  t.splitK = ctaSplit;
  // M <= 8 with four k-tiles per warp: group scales multiply each
  // iteration's f32 MMA sums per C column (16 conversions + 16 FFMA per
  // warp and iteration) instead of every dequantized pair (64 HMUL2 for
  // four k-tiles of 4-bit codes; with two k-tiles the counts are even).
  // Measured on the H200, 8192 x 8192 (bench/NOTES.md, 2026-11-30): M = 1
  // 16.4 -> 15.2 us, M = 4 16.6 -> 15.6, M = 8 18.5 -> 16.6; at M = 16 it
  // lost (22.0 / 22.2 vs 21.2: the rows g + 8 are real there, 32 FFMA).
  // M = 9..12 where the per-warp tile takes them (sharedFrom = 13): the
  // same, measured with it (2026-12-01).
  if (kTiles == 4 && r.hi < sharedFrom &&
      !layout::scaleAfterMmaApplies(w, c.f16Accumulation, t))
    t.scaleAfterMma = true;
  if (Diag d = verifyTileConfig(t))
    return Error{
        concat("the tile heuristics chose an invalid tile (a bug): ", *d)};
  return t;
}

/// selectMmaSyncTiles, or with `forExperts` the dense tiles a MoE GEMM's
/// selectMoeTiles starts from (the grid of `n` columns being its experts'
/// side by side).
static Result<std::vector<TileConfig>>
selectTilesFor(const WeightSchema &w, const InputSchema &in,
               const ComputeOptions &c, int64_t n, int64_t k,
               const DeviceInfo &device, bool forExperts) {
  if (Diag d = layout::supports(w, in, n, k))
    return Error{*d};
  if (device.smCount <= 0)
    return Error{concat("expected the device's SM count, "
                        "got ", device.smCount)};
  if (in.type.bits == 4)
    return selectNarrowMmaSyncTiles(w, in, c, n, k, device);
  if (in.type.bits == 8)
    return selectEightBitActivationTiles(w, in, c, n, k, device, forExperts);
  const double crossover = computeMemoryCrossover(w, in, device);
  const int64_t columnTiles = n / layout::kTileN;
  // M ranges. Below the compute/memory crossover the weights dominate:
  // 16-row warp tiles (every block streams its weights once per 16 tokens,
  // from L2 after the first) with the in-block K split keep the most SMs
  // busy. Above it, 64-row tiles dequantize each weight once per 64 tokens.
  // (Measured on the H200, bench/NOTES.md: for 8192 x 8192 at M = 33,
  // warp_m = 16 beats 32 and 64 by 8-30%; from M = 65 on, 64 wins.)
  // From M = 513 on, blocks of 2 x 4 warps of 64 x 64 copy their tiles
  // together (layout::KernelShape::cooperative): measured on the H200 for
  // 8192 x 8192, 128 x 256 x 32 blocks take 3.49 ms at M = 8192 and 434 us
  // at M = 1024 against 4.92 ms and 660 us for the per-warp copies; at
  // M = 128 they lose (122-216 vs 111 us: too few blocks), hence the range.
  // On sm_90a the middle ranges are halved where the cluster split tiles
  // run (clusterSplitTile): from M = 33 each range gets its own split and
  // tile, and so does 17..32 where M = 32 is still memory-bound (the
  // 64-token tile's unused token rows cost tensor work, which only such a
  // layer has to spare; TMA fills them with zeros without reading them)
  // and the tile keeps three quarters of the SMs busy. M = 17..32 took the
  // 16-row mma.sync tile until 2026-12-03, never measured against the
  // 64-token tile; on the H200 (W4A16 g128, bench/NOTES.md "M = 17-32",
  // M = 17 / 24 / 32, us): 8192^2 35.5 / 37.8 / 42.8 -> 23.5 / 23.5 /
  // 23.6 (128 CTAs), 28672 x 8192 117.6 / 130.7 / 143.1 -> 65.4 / 65.8 /
  // 65.9 (112), 8192 x 28672 103 / 109 / 119 -> 60 (128), 14336 x 4096
  // 33.8 / 35.5 / 41.4 -> 22.9 / 23.0 / 23.3 (112); with 64 CTAs it lost:
  // 4096^2 13.0 / 12.6 / 13.6 -> 15.2 / 15.4 / 15.6, 4096 x 14336 31.7 /
  // 32.6 / 35.3 -> 33.0 / 33.0 / 33.2. Compute-bound chips there (the H20)
  // keep the mma.sync tile.
  const bool clusterTiles =
      clusterSplitTile(w, n, k, c, device, 512).has_value();
  // (Dense layers only: a MoE GEMM's M = 17..32 tokens are spread over
  // its experts, a few each, where the 64-token blocks would be mostly
  // padding; not measured there.)
  const int64_t clusterFrom =
      clusterTiles && crossover >= 32 && !forExperts ? 17 : 33;
  std::vector<MRange> ranges = {{1, 8},    {9, 16},    {17, 64},
                                {65, 128}, {129, 512}, {513, 0}};
  if (clusterTiles)
    ranges = {{1, 8},    {9, 16},    {17, 32},   {33, 64},
              {65, 128}, {129, 256}, {257, 512}, {513, 0}};
  // Where the 16-row per-warp tile takes no K split across CTAs (N's column
  // tiles are more than half the SMs: the split, SMs / tiles, rounds to
  // one), that tile serves M up to 12 and the shared-activation tile only
  // 13..16. Measured on the H200 (2026-12-01), 8192 x 8192: M = 9 18.3 ->
  // 16.2 us, 10 18.3 -> 16.8, 12 18.4 -> 17.7, but 14 18.6 -> 19.1; with
  // N = 4096 (a K split needed) the per-warp tile lost at M = 9-16. Only
  // on sm_90a where M = 16 is memory-bound (the H200 and H100; the H20
  // turns compute-bound near M = 9), the only chip measured.
  int64_t sharedFrom = 9;
  if (wgmmaApplies(c, device) && crossover >= 16 &&
      2 * columnTiles > device.smCount) {
    sharedFrom = 13;
    ranges[0].hi = 12;
    ranges[1].lo = 13;
  }
  // Wide N (the 128-column blocks alone are more than half the SMs): the
  // shared-activation tile without a split serves M = 1..16. Measured on
  // the H200 with programmatic dependent launch (2026-12-01), against the
  // per-warp tiles the ranges below chose: 28672 x 8192 M = 1 57.5 -> 47.2
  // us, M = 16 84.8 -> 52.5; 14336 x 4096 M = 1 16.0 -> 15.4, M = 16 30.1
  // -> 16.4 (split 2 lost: 53.1 / 56.2, 16.4 / 17.8). sm_90a where M = 16
  // is memory-bound, as the rule above.
  std::optional<TileConfig> wideShared;
  if (wgmmaApplies(c, device) && crossover >= 16 && !c.batchInvariant)
    wideShared = sharedActivationTile(w, n, k, device, /*unsplit=*/true);
  // The 256 x 256 shared-activation tile (wideShareTile) where it runs:
  // M = 9..16 (1..16 with wide N, where it beat the unsplit tile above at
  // every M).
  std::optional<TileConfig> wideShare;
  if (wgmmaApplies(c, device) && crossover >= 16)
    wideShare = wideShareTile(w, n, k, c, device);
  if (wideShare) {
    if (wideShared)
      wideShared = wideShare;
    else
      sharedFrom = 9, ranges[0].hi = 8, ranges[1].lo = 9;
  }
  if (wideShared) {
    // (Two kernels of the one tile: M = 1..8 and 9..16, appendRange.)
    sharedFrom = 1;
    ranges[0] = {1, 8};
    ranges[1] = {9, 16};
  }
  std::vector<TileConfig> out;
  const RangePlan plan{crossover,  clusterTiles, clusterFrom,
                       sharedFrom, wideShared,   wideShare};
  for (MRange r : ranges) {
    std::optional<TileConfig> t =
        specialTileForRange(w, n, k, c, device, r, plan);
    if (!t) {
      Result<TileConfig> m = mmaSyncTileForRange(w, c, n, k, device, r, plan);
      if (!m)
        return Error{m.error()};
      t = *m;
    }
    t->mMin = r.lo;
    t->mMax = r.hi;
    appendRange(out, *t, c.batchInvariant);
  }
  return out;
}

Diag moeTileProblem(const TileConfig &t, const MoeShape &moe,
                    unsigned chipSm) {
  if (t.splitK > 1 && !t.splitsInCluster())
    return Diag(concat("expected split_k = 1 or a split in a thread block "
                       "cluster in a MoE kernel (the workspace holds a dense "
                       "grid's output tiles), got split_k = ",
                       t.splitK,
                       t.mma == MmaKind::Wgmma ? " with workspace_split"
                                               : " without cluster_split"));
  if (t.clusterSplit && chipSm < 90)
    return Diag(concat("cluster_split needs sm_90 or later, got sm_", chipSm));
  if (moe.gemm == GemmType::Indexed &&
      (moe.blockSize <= 0 || moe.blockSize % t.blockM != 0))
    return Diag(concat("expected block_m to divide block_size (", moe.blockSize,
                       ": a block of rows never straddles two experts), got "
                       "block_m = ",
                       t.blockM));
  return Diag();
}

Result<std::vector<TileConfig>> selectMmaSyncTiles(const WeightSchema &w,
                                                   const InputSchema &in,
                                                   const ComputeOptions &c,
                                                   int64_t n, int64_t k,
                                                   const DeviceInfo &device) {
  return selectTilesFor(w, in, c, n, k, device, /*forExperts=*/false);
}

/// The indexed routing's tiles from 9 tokens per expert on (sm_90a, 16-bit
/// activations, weights of at most 4 bits): the warp-specialized wgmma
/// tile whose block holds an expert's rows with room for the routing's
/// spread — t tokens per expert on average, each expert's count about t
/// +- sqrt(t) under random routing, and every row past a block's
/// block_m costs a second block that re-reads the expert's weights:
///   t =  9..16: 32 rows, two CTAs per SM;   t = 17..32: 48, two per SM;
///   t = 33..64: 96;   from 65: 128 (wgmma_in_flight = 1), or 96 with
///   router weights (the 128-row epilogue spills with them).
/// Where a range's block_m does not divide a fixed block_size (or the
/// tile does not fit), the next of its list: 32 / 64 for 48, 64 / 128 for
/// 96, 96 / 64 for 128. Measured on the H200 (2026-12-05, W4A16 indexed,
/// random routing, every tile forced over one routing draw; bench/NOTES.md
/// "Mixture of experts"), us at t = 16 / 32 / 64 / 128 / 256: Mixtral-8x7B
/// gate_up with the tiles before 236.2 / 507.0 / 383.6 / 597.6 / 935.9,
/// with these 188.4 / 207.3 / 317.6 / 598.9 / 935.0 (80 rows, which no
/// block_size of a layer routed per M can hold beside 48 and 128, 292.4
/// at t = 64); Mixtral down 157.5 / 282.1 / 259.3 / 369.2 / 552.4 ->
/// 111.6 / - / 152.9 / 303.4 / 454.9; Qwen3-30B-A3B gate_up t = 16 / 32 /
/// 64 117.8 / 199.1 / 190.2 -> 86.1 / 95.5 / 153.3. At t <= 8 the 16-row
/// mma_sync tiles stay (Mixtral gate_up t = 8 169.4 against 187.5 for 32
/// rows). Empty when the rules do not apply (the tiles before serve).
static std::vector<TileConfig>
expertBlockTiles(const WeightSchema &w, const InputSchema &in,
                 const ComputeOptions &c, int64_t n, int64_t k,
                 const DeviceInfo &device, const MoeShape &moe,
                 unsigned chipSm) {
  if (moe.gemm != GemmType::Indexed || in.type.bits != 16 || w.type.bits > 4 ||
      !wgmmaApplies(c, device))
    return {};
  auto tile = [&](int64_t tokens) -> std::optional<TileConfig> {
    layout::KernelShape ks =
        wgmmaShape(tokens, 4, /*warpSpecialized=*/true, /*activationBits=*/16);
    if (!runs(w, n, k, ks, device))
      return std::nullopt;
    // Two CTAs per SM for the 32- and 48-row tiles where their pipelines
    // fit twice (the 32-row tile at one per SM: Mixtral gate_up t = 16
    // 237.2 us against 188.4).
    if (tokens <= 48) {
      layout::KernelShape two = ks;
      two.ctasPerSm = 2;
      if (runs(w, n, k, two, device))
        ks = two;
    }
    TileConfig t = layout::tileConfigOf(ks);
    t.tma = TmaA | TmaB;
    overlapIterations(t, w);
    if (moeTileProblem(t, moe, chipSm))
      return std::nullopt;
    return t;
  };
  struct Range {
    int64_t lo, hi;
    std::vector<int64_t> tokens;
  };
  const std::vector<int64_t> wide = moe.routerWeights
                                        ? std::vector<int64_t>{96, 64}
                                        : std::vector<int64_t>{128, 96, 64};
  const Range ranges[] = {{9, 16, {32}},
                          {17, 32, {48, 32, 64}},
                          {33, 64, {96, 64, 128}},
                          {65, 0, wide}};
  std::vector<TileConfig> out;
  for (const Range &r : ranges) {
    std::optional<TileConfig> chosen;
    for (int64_t tokens : r.tokens)
      if (tokens != 128 || !moe.routerWeights)
        if ((chosen = tile(tokens)))
          break;
    if (!chosen) {
      // The first range decides whether the rules apply at all; a later
      // one without a tile is served by the range before it.
      if (out.empty())
        return {};
      out.back().mMax = r.hi;
      continue;
    }
    chosen->mMin = r.lo;
    chosen->mMax = r.hi;
    out.push_back(*chosen);
  }
  return out;
}

/// The indexed routing's tile for 2-16 tokens per expert with 8-bit float
/// activations and weights of at most 4 bits on a chip without an fp8
/// mma.sync (sm_90a, whose mma_sync kernels take f16 MMAs over the fp8
/// codes: KernelShape::f16MmaForFp8): the 16-row mma_sync tile, [16, 128,
/// 128] with warp_k 64 where the experts' 128-column blocks fill every SM
/// twice (E x N / 128 >= 2 x SMs), else [16, 64, 256] with warp_k 32 (an
/// expert's short K in twice the iterations), no K split, group scales
/// after the MMAs. Measured on an H100 (2026-12-05, W4A8 uint4 g128 x e4m3,
/// us, the wgmma tiles the dense rules gave -> this tile; t = tokens per
/// expert): Qwen3-30B-A3B gate_up t = 4 86.9 -> 80.4, down 50.5 -> 47.1;
/// Mixtral-8x7B gate_up t = 4 / 16 187.4 / 326.2 -> 175.5 / 229.8, down
/// (256 blocks of 128 columns: the narrow tile) 191.1 / 219.3 -> 88.4 /
/// 115.7. The 32-row tile lost everywhere (Mixtral down t = 16 127.8).
/// Null where the rule does not apply.
static std::optional<TileConfig>
fp8ExpertMmaSyncTile(const WeightSchema &w, const InputSchema &in,
                     const ComputeOptions &c, int64_t n, int64_t k,
                     const DeviceInfo &device, const MoeShape &moe,
                     const std::optional<Chip> &chip) {
  if (moe.gemm != GemmType::Indexed || in.type.bits != 8 || in.type.isInt() ||
      w.type.bits > 4 || c.batchInvariant || !chip ||
      !chip->emulatesFp8MmaSync() || layout::eightBitMmaSyncSupports(w, in))
    return std::nullopt;
  const bool wide = n % (2 * layout::kTileN) == 0 &&
                    moe.experts * (n / (2 * layout::kTileN)) >=
                        2 * device.smCount;
  TileConfig t;
  t.mma = MmaKind::MmaSync;
  t.blockM = t.warpM = 16;
  t.warpN = layout::kTileN;
  t.blockN = wide ? 2 * layout::kTileN : layout::kTileN;
  t.warpK = wide ? 64 : 32;
  t.blockK = wide ? 128 : 256;
  t.scaleAfterMma = w.hasPerKScales();
  if (w.hasPerKScales() && t.warpK > w.groupK)
    return std::nullopt;
  if (verifyTileForProblem(t, w, in, c, n, k) ||
      moeTileProblem(t, moe, chip->sm))
    return std::nullopt;
  return t;
}

/// selectMoeTiles: a dense tile `t` made a MoE GEMM's (its K split and
/// copies); `low` is the width (in experts) of the dense grid whose tiles
/// serve one token per expert (every expert with grouped_masked, else 1).
static TileConfig adaptToExperts(TileConfig t, const InputSchema &in,
                                 const MoeShape &moe, int64_t n, int64_t low,
                                 unsigned sm, const DeviceInfo &device) {
  // From two tokens per expert (every expert of grouped_masked) nearly
  // all experts run: E x N / block_n x ceil(t / block_m) blocks. Where
  // those fill every SM twice a K split only adds the reduction (the
  // dense heuristics split for their own grid's reasons): measured on
  // the H200, 2026-12-02, W4A8 Qwen3 gate_up M = 4096 942 us with split
  // 2 and Mixtral M = 1024 2056 us with split 4, against W4A16's unsplit
  // 605 / 1265 us.
  if (t.mMin >= 2 || low == moe.experts) {
    const int64_t blocks =
        moe.experts * (n / t.blockN) * ceilDiv(t.mMin, t.blockM);
    if (blocks >= 2 * device.smCount)
      t.splitK = 1;
  }
  if (t.splitK > 1 && !t.splitsInCluster()) {
    if (t.mma == MmaKind::Wgmma) {
      // A cluster's CTAs each store a share of the rows of eight tokens.
      t.workspaceSplit = t.cooperativeSplit = false;
      while (t.splitK > 1 && (t.warpM / 8) % t.splitK != 0)
        t.splitK /= 2;
    } else if (sm >= 90) {
      t.clusterSplit = true;
    } else {
      t.splitK = 1;
    }
  }
  if (t.splitK == 1) {
    t.clusterSplit = false;
    t.workspaceSplit = t.cooperativeSplit = false;
  }
  // TMA as the dense tile has it with 16-bit activations (tma = [a]: the
  // producers gather the block's rows into the tensor copy's swizzled
  // layout; [b]: the expert's weights by bulk copies). Measured on the
  // H200 (2026-12-04, bench/NOTES.md "Mixture of experts"): Mixtral-8x7B
  // gate_up M = 256 / 1024 / 4096 500.9 / 1360 / 4802 -> 419.4 / 939.3 /
  // 3275 us, Qwen3-30B-A3B gate_up M = 4096 643.1 -> 464.8. Not with
  // 8-bit activations, whose 128-token tile has the weights alone by bulk
  // copies: W4A8 Mixtral M = 4096 lost 11 % (gate_up 5386 -> 5977), nor in
  // a cluster split, which the dense tiles never ran with TMA.
  if (t.splitsInCluster() || in.type.bits != 16)
    t.tma = 0;
  return t;
}

/// selectMoeTiles: the dense heuristics' tiles for the experts' blocks
/// together, as the grid of a dense GEMM that many times as wide (the
/// block shape and K split), for `low` experts at one token per expert and
/// all of them from two.
static Result<std::vector<TileConfig>>
moeDenseTiles(const WeightSchema &w, const InputSchema &in,
              const ComputeOptions &c, int64_t n, int64_t k,
              const DeviceInfo &device, const MoeShape &moe, int64_t low) {
  WeightSchema dense = w;
  dense.experts = 0;
  // The blocks of the experts that run at once together are the grid of a
  // dense GEMM `together` times as wide: the dense heuristics for that
  // width choose the block shape and K split.
  // (Measured on the H200, 2026-12-02: at one token per expert a single
  // expert's tiles beat those for top_k experts side by side — Qwen3
  // gate_up M = 16: 76 against 97 us — and from two on the E-wide ones win
  // where it matters — M = 1024: 221 against 440 us.)
  auto denseTiles = [&](int64_t together) {
    return selectTilesFor(dense, in, c, n * together, k, device,
                          /*forExperts=*/true);
  };
  Result<std::vector<TileConfig>> wide = denseTiles(moe.experts);
  if (!wide)
    return wide;
  std::vector<TileConfig> chosen;
  if (low < moe.experts) {
    Result<std::vector<TileConfig>> narrow = denseTiles(low);
    if (!narrow)
      return narrow;
    // One token per expert from the narrow grid, more from the wide one.
    // At least top_k experts run at once: their blocks share out the K
    // split one expert's tile asks for (measured so, the 11.4 us above).
    TileConfig first = narrow->front();
    first.mMin = 1;
    first.mMax = 1;
    while (first.splitK > 1 &&
           first.splitK > ceilDiv(narrow->front().splitK, moe.topK))
      first.splitK /= 2;
    // 4-bit weights x 8-bit activations: the 16-bit tile's K depth
    // (block_k 256, warp_k 32: twice the iterations for an expert's short
    // K). Measured on the H200, 2026-12-02, W4A8 Qwen3 gate_up: [16, 64,
    // 512] / warp_k 64 14.5 / 101.5 us at M = 1 / 16 against 13.0 / 86.5
    // (W8A8 not measured: left as the dense heuristics choose).
    if (in.type.bits == 8 && w.type.bits == 4 &&
        first.mma == MmaKind::MmaSync && first.blockK > 256 &&
        first.warpK >= 64) {
      first.blockK /= 2;
      first.warpK /= 2;
    }
    chosen.push_back(first);
    for (TileConfig t : *wide) {
      if (t.mMax != 0 && t.mMax < 2)
        continue;
      t.mMin = std::max<int64_t>(t.mMin, 2);
      chosen.push_back(t);
    }
  } else {
    chosen = *wide;
  }
  // Each expert's N is n: a block shape chosen for the wide grid must
  // still divide it (else the expert's own dense tiles).
  if (std::any_of(chosen.begin(), chosen.end(),
                  [&](const TileConfig &t) { return n % t.blockN != 0; })) {
    Result<std::vector<TileConfig>> own = denseTiles(1);
    if (!own)
      return own;
    chosen = *own;
  }
  return chosen;
}

/// selectMoeTiles: each tile made an expert GEMM's (adaptToExperts), up to
/// the first one the routing refuses (moeTileProblem) or that spills with
/// router weights; the last one serves every M from there.
static Result<std::vector<TileConfig>>
fitToRouting(const std::vector<TileConfig> &chosen, const InputSchema &in,
             const MoeShape &moe, int64_t n, int64_t low, unsigned sm,
             const DeviceInfo &device) {
  std::vector<TileConfig> out;
  for (TileConfig t : chosen) {
    t = adaptToExperts(t, in, moe, n, low, sm, device);
    // The warp-specialized 128-token tiles spill (136-152 bytes under
    // ptxas) once the router weights join their epilogue's registers: the
    // 64-token tiles serve those ranges there. Without router weights
    // (gate_up) they do not spill and won on the H200 from 256 tokens per
    // expert (bench/NOTES.md "Mixture of experts", 2026-12-02).
    Diag problem = moeTileProblem(t, moe, sm);
    if (!problem && t.warpSpecialized && t.blockM > 64 && moe.routerWeights)
      problem = Diag(concat("the warp-specialized ", t.blockM,
                            "-token tile spills with router weights"));
    if (problem) {
      // Indexed blocks larger than block_size (and the spilling tiles):
      // the previous tile serves the rest.
      if (out.empty())
        return Error{concat("no tile of the heuristics fits the MoE routing: ",
                            *problem)};
      break;
    }
    out.push_back(t);
  }
  out.back().mMax = 0;
  return out;
}

/// selectMoeTiles: the tiles of few tokens per expert spliced in — the
/// mma_sync tile of f16 MMAs at 2-16 tokens with fp8 activations on sm_90a,
/// blocks sized for an expert's rows from 9 tokens (indexed, sm_90a).
static void spliceExpertTiles(std::vector<TileConfig> &out,
                              const WeightSchema &w, const InputSchema &in,
                              const ComputeOptions &c, int64_t n, int64_t k,
                              const DeviceInfo &device, const MoeShape &moe,
                              const std::optional<Chip> &chip) {
  const unsigned sm = chip ? chip->sm : 0;
  // 2-16 tokens per expert with fp8 activations on sm_90a: the mma_sync
  // tile of f16 MMAs instead of the wgmma tiles of that many tokens.
  if (std::optional<TileConfig> few =
          fp8ExpertMmaSyncTile(w, in, c, n, k, device, moe, chip)) {
    std::vector<TileConfig> spliced;
    for (TileConfig t : out)
      if (t.mMin <= 1) {
        t.mMax = 1;
        spliced.push_back(t);
      }
    few->mMin = 2;
    few->mMax = 16;
    spliced.push_back(*few);
    for (TileConfig t : out) {
      if (t.mMax != 0 && t.mMax <= 16)
        continue;
      t.mMin = std::max<int64_t>(t.mMin, 17);
      spliced.push_back(t);
    }
    out = std::move(spliced);
  }
  // From 9 tokens per expert (indexed, sm_90a): blocks sized for an
  // expert's rows instead of the dense tiles of that many tokens.
  if (std::vector<TileConfig> blocks =
          expertBlockTiles(w, in, c, n, k, device, moe, sm);
      !blocks.empty()) {
    std::vector<TileConfig> upToEight;
    for (TileConfig t : out) {
      if (t.mMin > 8)
        break;
      if (t.mMax == 0 || t.mMax > 8)
        t.mMax = 8;
      upToEight.push_back(t);
    }
    upToEight.insert(upToEight.end(), blocks.begin(), blocks.end());
    out = std::move(upToEight);
  }
}

/// selectMoeTiles: neighbours that became equal serve one range.
static std::vector<TileConfig>
mergeNeighbours(const std::vector<TileConfig> &out, const InputSchema &in,
                const ComputeOptions &c, int64_t k) {
  // Neighbours that became equal serve one range — except one token per
  // expert in a tile that splitsAtEightTokens and leaves each CTA
  // kMoeTransposedMinDepth of K or more: that kernel takes
  // the transposed product over eight rows at a time (the weights as the
  // MMA's A operand: half the MMAs; PreparedEmitter::moeTransposed decides
  // by the same rules), unless the layer is batch-invariant or its
  // activations are not 16-bit.
  auto transposes = [&](const TileConfig &t) {
    return !c.batchInvariant && in.type.bits == 16 && splitsAtEightTokens(t) &&
           moeTransposes(t.mMax, ceilDiv(k, t.splitK));
  };
  std::vector<TileConfig> merged;
  for (const TileConfig &t : out) {
    if (!merged.empty()) {
      if (sameKernel(merged.back(), t) && !transposes(merged.back())) {
        merged.back().mMax = t.mMax;
        continue;
      }
    }
    merged.push_back(t);
  }
  return merged;
}

Result<std::vector<TileConfig>>
selectMoeTiles(const WeightSchema &w, const InputSchema &in,
               const ComputeOptions &c, int64_t n, int64_t k,
               const DeviceInfo &device, const MoeShape &moe) {
  if (moe.experts <= 0 || moe.topK <= 0)
    return Error{concat("expected experts and top_k >= 1, got ", moe.experts,
                        " and ", moe.topK)};
  // The experts that run at once: with one token per expert (M * top_k <=
  // E, indexed) top_k of them at least; with more, nearly all (random
  // routing); grouped_masked always all.
  const int64_t low = moe.gemm == GemmType::GroupedMasked ? moe.experts : 1;
  Result<std::vector<TileConfig>> chosen =
      moeDenseTiles(w, in, c, n, k, device, moe, low);
  if (!chosen)
    return chosen;
  std::optional<Chip> chip = Chip::parse(device.chip);
  const unsigned sm = chip ? chip->sm : 0;
  Result<std::vector<TileConfig>> out =
      fitToRouting(*chosen, in, moe, n, low, sm, device);
  if (!out)
    return out;
  spliceExpertTiles(*out, w, in, c, n, k, device, moe, chip);
  return mergeNeighbours(*out, in, c, k);
}

} // namespace humming
