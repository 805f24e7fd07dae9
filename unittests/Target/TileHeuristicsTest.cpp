//===- TileHeuristicsTest.cpp - Tile configurations from device facts -----===//

#include "Humming/Target/TileHeuristics.h"

#include "Humming/Quant/PreparedLayout.h"

#include <gtest/gtest.h>

using namespace humming;

namespace {
const InputSchema kF16{ScalarType::f16(), ActScaling::None, 0};
WeightSchema w4g128() {
  return WeightSchema::make(ScalarType::uint(4), ScalarType::f16(),
                            Granularity::Group, 128);
}
} // namespace

TEST(TileHeuristics, CrossoverFollowsBandwidthAndThroughput) {
  // 0.5 bytes per weight: M* = 0.5 * T / (2 * BW).
  EXPECT_NEAR(computeMemoryCrossover(w4g128(), kF16, *lookupDevice("H200")),
              0.5 * 989e12 / (2 * 4800e9), 1e-9);
  EXPECT_NEAR(computeMemoryCrossover(w4g128(), kF16, *lookupDevice("H20")),
              0.5 * 148e12 / (2 * 4000e9), 1e-9);
  // Eight-bit weights move twice the bytes: twice the crossover.
  WeightSchema w8 = WeightSchema::make(ScalarType::uint(8), ScalarType::f16(),
                                       Granularity::Channel);
  EXPECT_NEAR(computeMemoryCrossover(w8, kF16, *lookupDevice("A100")),
              2 * computeMemoryCrossover(w4g128(), kF16, *lookupDevice("A100")),
              1e-9);
}

TEST(TileHeuristics, RepresentativeDevices) {
  EXPECT_EQ(representativeDevice(*Chip::parse("sm_80"))->name, "A100");
  EXPECT_EQ(representativeDevice(*Chip::parse("sm_86"))->name, "A10");
  EXPECT_EQ(representativeDevice(*Chip::parse("sm_89"))->name, "L40S");
  EXPECT_EQ(representativeDevice(*Chip::parse("sm_90a"))->name, "H100");
}

TEST(TileHeuristics, EveryChoiceIsLegalAndFitsTheDevice) {
  const char *devices[] = {"A100", "A10", "L40S", "RTX 4090", "H20", "H100",
                           "H200"};
  const std::pair<int64_t, int64_t> shapes[] = {
      {4096, 4096}, {8192, 8192}, {4096, 14336}, {14336, 4096}, {128, 256},
      {64, 32}};
  int checked = 0;
  for (const char *name : devices) {
    const DeviceInfo &d = *lookupDevice(name);
    std::optional<Chip> chip = Chip::parse(d.chip);
    ASSERT_TRUE(chip);
    for (const ScalarType &t : allWeightTypes())
      for (ScalarType act : {ScalarType::f16(), ScalarType::bf16()})
        for (auto [n, k] : shapes)
          for (bool invariant : {false, true}) {
            WeightSchema w = WeightSchema::make(t, act, Granularity::Group, 32);
            InputSchema in{act, ActScaling::None, 0};
            if (verifyWeightSchema(w) || verifyCompatibility(w, in, {}, act) ||
                layout::supports(w, in, n, k))
              continue;
            ComputeOptions c;
            c.batchInvariant = invariant;
            Result<std::vector<TileConfig>> tiles =
                selectMmaSyncTiles(w, in, c, n, k, d);
            ASSERT_TRUE(bool(tiles)) << name << " " << t.str() << " " << n
                                     << "x" << k << ": " << tiles.error();
            EXPECT_FALSE(verifyTileRanges(*tiles));
            for (const TileConfig &tc : *tiles) {
              EXPECT_FALSE(verifyTileForProblem(tc, w, in, c, n, k))
                  << *verifyTileForProblem(tc, w, in, c, n, k);
              layout::KernelShape ks = layout::shapeOf(tc);
              EXPECT_LE(layout::sharedBytes(w, ks), chip->maxSharedMemoryPerBlock());
              EXPECT_LE(layout::sharedBytes(w, ks), d.smemPerSmKB * 1024);
              // At most eight math warps, plus the producer warpgroup of the
              // warp-specialized tiles.
              EXPECT_LE(ks.mathThreads(), 256);
              EXPECT_LE(ks.threads(), ks.warpSpecialized ? 384 : 256);
              if (invariant)
                EXPECT_EQ(tc.blockK, 32);
              // Split-K across CTAs: bounded ranges, every CTA keeps at
              // least `stages` iterations of K, and at most two CTAs per
              // SM (the shared-activation tile's aim; the others one).
              if (tc.splitK > 1) {
                EXPECT_FALSE(invariant);
                EXPECT_NE(tc.mMax, 0);
                EXPECT_GE(k / tc.blockK / tc.splitK, tc.stages);
                const int64_t ctas =
                    (n / tc.blockN) * ceilDiv(tc.mMax, tc.blockM) * tc.splitK;
                if (tc.mma == MmaKind::Wgmma) {
                  // A cluster of 2, 4 or 8 CTAs sharing the rows of eight
                  // tokens, two pipelines' worth of K each, at least a
                  // quarter of the SMs busy.
                  EXPECT_TRUE(tc.splitK == 2 || tc.splitK == 4 ||
                              tc.splitK == 8);
                  EXPECT_EQ((tc.warpM / 8) % tc.splitK, 0);
                  EXPECT_GE(k / tc.blockK / tc.splitK, 2 * tc.stages);
                  EXPECT_GE(4 * ctas, d.smCount);
                } else {
                  EXPECT_LE(ctas, (tc.blockCopies ? 2 : 1) * d.smCount);
                }
              }
              ++checked;
            }
          }
  }
  EXPECT_GT(checked, 1000);
}

TEST(TileHeuristics, ForcedSplitsServeTheirRangeUnlessTheyReduceInACluster) {
  // An mma_sync split through the workspace serves M up to its range's top
  // and the same tile without the split the rest; a split in a cluster
  // (cluster_split, or wgmma) serves every M.
  TileConfig t;
  t.mMin = 1;
  t.mMax = 16;
  t.blockM = t.warpM = 16;
  t.blockN = 128;
  t.warpN = 64;
  t.blockK = 128;
  t.warpK = 32;
  t.splitK = 4;
  std::vector<TileConfig> f = forcedTileConfigs(t);
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0].mMax, 16);
  EXPECT_EQ(f[0].splitK, 4);
  EXPECT_EQ(f[1].mMin, 17);
  EXPECT_EQ(f[1].mMax, 0);
  EXPECT_EQ(f[1].splitK, 1);
  t.clusterSplit = true;
  f = forcedTileConfigs(t);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].mMin, 1);
  EXPECT_EQ(f[0].mMax, 0);
  EXPECT_EQ(f[0].splitK, 4);
  EXPECT_FALSE(verifyTileConfig(f[0]));
}

TEST(TileHeuristics, DeviceFactsFromADeviceOrTheChipsRepresentative) {
  Result<DeviceInfo> d = tileDeviceFacts("H200", "");
  ASSERT_TRUE(bool(d)) << d.error();
  EXPECT_EQ(d->name, "H200");
  EXPECT_EQ(d->chip, "sm_90a");
  d = tileDeviceFacts("", "sm_90a");
  ASSERT_TRUE(bool(d)) << d.error();
  EXPECT_EQ(d->name, "H100");
  // Another target of the device's SM: its facts under that chip, so the
  // heuristics choose what the chip has (plain sm_90: no wgmma).
  d = tileDeviceFacts("H200", "sm_90");
  ASSERT_TRUE(bool(d)) << d.error();
  EXPECT_EQ(d->name, "H200");
  EXPECT_EQ(d->chip, "sm_90");
  d = tileDeviceFacts("", "sm_120f");
  ASSERT_TRUE(bool(d)) << d.error();
  EXPECT_EQ(d->name, "RTX 5090");
  EXPECT_EQ(d->chip, "sm_120f");
  // A representative of a sibling SM: B200's facts stand for sm_103a.
  d = tileDeviceFacts("", "sm_103a");
  ASSERT_TRUE(bool(d)) << d.error();
  EXPECT_EQ(d->name, "B200");
  EXPECT_EQ(d->chip, "sm_103a");
  // A named device of another SM lends its facts whole, its chip included
  // (humming-gpu-test --tiles-for=L40S on an H200: the L40S's tiles).
  d = tileDeviceFacts("L40S", "sm_90a");
  ASSERT_TRUE(bool(d)) << d.error();
  EXPECT_EQ(d->name, "L40S");
  EXPECT_EQ(d->chip, "sm_89");
  d = tileDeviceFacts("H201", "");
  ASSERT_FALSE(bool(d));
  EXPECT_EQ(d.error().rfind("expected a device among ", 0), 0u) << d.error();
  EXPECT_NE(d.error().find(", got 'H201'"), std::string::npos);
  d = tileDeviceFacts("", "sm_70");
  ASSERT_FALSE(bool(d));
  EXPECT_EQ(d.error().rfind("expected a chip among sm_75", 0), 0u) << d.error();
  d = tileDeviceFacts("", "sm_88");
  ASSERT_FALSE(bool(d));
  EXPECT_EQ(d.error(), "no representative device is known for sm_88; give "
                       "device=");
}

// The first-use probe's second opinion (FirstUseProbe.h): an H200's facts
// under plain sm_90 choose mma_sync tiles at every M, which that target can
// run; under sm_90a prefill takes wgmma.
TEST(TileHeuristics, APlainTargetOfTheDeviceGetsNoWgmma) {
  Result<DeviceInfo> plain = tileDeviceFacts("H200", "sm_90");
  ASSERT_TRUE(bool(plain)) << plain.error();
  Result<std::vector<TileConfig>> t =
      selectMmaSyncTiles(w4g128(), kF16, {}, 8192, 8192, *plain);
  ASSERT_TRUE(bool(t)) << t.error();
  for (const TileConfig &c : *t)
    EXPECT_EQ(c.mma, MmaKind::MmaSync) << c.mMin;
  Result<std::vector<TileConfig>> a =
      selectMmaSyncTiles(w4g128(), kF16, {}, 8192, 8192, *lookupDevice("H200"));
  ASSERT_TRUE(bool(a)) << a.error();
  EXPECT_EQ(a->back().mma, MmaKind::Wgmma);
}

TEST(TileHeuristics, SmallMSplitsKToCoverTheDevice) {
  // H200, 8192 x 8192: 128 column tiles; M <= 16 wants eight warps per SM,
  // so eight warp groups split K inside each block.
  Result<std::vector<TileConfig>> t = selectMmaSyncTiles(
      w4g128(), kF16, {}, 8192, 8192, *lookupDevice("H200"));
  ASSERT_TRUE(bool(t));
  ASSERT_EQ(t->size(), 6u);
  EXPECT_EQ((*t)[0].blockK / (*t)[0].warpK, 8);
  EXPECT_EQ((*t)[0].warpM, 16);
  // Up to M = 8 the per-warp tile; the 256 x 256 shared-activation tile
  // beats it from M = 9 on (H200, 2026-12-01).
  EXPECT_EQ((*t)[0].mMax, 8);
  // Four k-tiles per warp and iteration at M <= 8: the same split and
  // pipeline depth as two would have.
  EXPECT_EQ((*t)[0].warpK, 64);
  EXPECT_EQ((*t)[0].stages, 4);
  // 128 output tiles already cover 132 SMs: no split across CTAs.
  EXPECT_EQ((*t)[0].splitK, 1);
  // M = 9..16: four warps along N share the activation copies of their K
  // group (named barriers, no block barrier), four K groups of 64 with the
  // group scales after the MMAs, three stages, and four CTAs per block of
  // 256 columns: 128 CTAs of 16 warps, one per SM.
  EXPECT_EQ((*t)[1].mMin, 9);
  EXPECT_EQ((*t)[1].mMax, 16);
  EXPECT_FALSE((*t)[1].blockCopies);
  EXPECT_TRUE((*t)[1].shareActivations);
  EXPECT_TRUE((*t)[1].scaleAfterMma);
  EXPECT_EQ((*t)[1].blockN, 256);
  EXPECT_EQ((*t)[1].blockK, 256);
  EXPECT_EQ((*t)[1].warpK, 64);
  EXPECT_EQ((*t)[1].stages, 3);
  EXPECT_EQ((*t)[1].splitK, 4);
  // From M = 17 on (sm_90a) the warp-specialized wgmma tiles, K split
  // where the blocks alone leave SMs idle (MiddleMSplitsKInAClusterOnSm90a):
  // 17..64 the 64-token tile split four ways through the workspace (M =
  // 17..32 since 2026-12-03: 128 CTAs, M = 32 42.8 -> 23.6 us against the
  // 16-row mma_sync tile) with every copy by TMA and eight stages
  // (deepPipeline), 65..128 the 128-token tile split four ways (2026-12-04:
  // 39.1 -> 37.9 us at M = 128 against the 64-token split of two),
  // 129..256 split two ways, both through the workspace, by TMA too, in
  // four stages, then the 128-token tile alone. The workspace splits are
  // one wave of CTAs, launched cooperatively: each CTA adds its share of
  // the rows (2026-12-04: M = 128 37.9 -> 31.8 us, M = 64 25.8 -> 24.2).
  for (int i = 2; i <= 4; ++i)
    EXPECT_TRUE((*t)[i].cooperativeSplit) << i;
  EXPECT_FALSE((*t)[5].cooperativeSplit);
  EXPECT_EQ((*t)[2].mMin, 17);
  EXPECT_EQ((*t)[2].mMax, 64);
  EXPECT_EQ((*t)[2].mma, MmaKind::Wgmma);
  EXPECT_EQ((*t)[2].blockM, 64);
  EXPECT_EQ((*t)[2].splitK, 4);
  EXPECT_TRUE((*t)[2].workspaceSplit);
  EXPECT_FALSE((*t)[2].splitsInCluster());
  EXPECT_EQ((*t)[3].mMax, 128);
  EXPECT_EQ((*t)[3].blockM, 128);
  EXPECT_EQ((*t)[3].splitK, 4);
  EXPECT_TRUE((*t)[3].workspaceSplit);
  EXPECT_EQ((*t)[4].mMax, 256);
  EXPECT_EQ((*t)[4].blockM, 128);
  EXPECT_EQ((*t)[4].splitK, 2);
  EXPECT_TRUE((*t)[4].workspaceSplit);
  EXPECT_FALSE((*t)[4].splitsInCluster());
  for (int i = 2; i <= 4; ++i)
    EXPECT_EQ((*t)[i].tma, uint32_t(TmaA | TmaB)) << i;
  EXPECT_EQ((*t)[2].stages, 8);
  EXPECT_EQ((*t)[3].stages, 4);
  EXPECT_EQ((*t)[4].stages, 4);
  // From M = 257 on (sm_90a): the warp-specialized wgmma tile, blocks of
  // 128 tokens x 256 columns in two warpgroups of 128 tokens x two n-tiles
  // and a producer warpgroup, four stages.
  EXPECT_EQ((*t)[5].mMin, 257);
  EXPECT_EQ((*t)[5].mMax, 0);
  EXPECT_EQ((*t)[5].splitK, 1);
  EXPECT_EQ((*t)[5].mma, MmaKind::Wgmma);
  EXPECT_EQ((*t)[5].warpM, 128);
  EXPECT_EQ((*t)[5].warpN, 32);
  EXPECT_EQ((*t)[5].blockM, 128);
  EXPECT_EQ((*t)[5].blockN, 256);
  EXPECT_EQ((*t)[5].blockK, (*t)[5].warpK);
  EXPECT_EQ((*t)[5].threads(), 384);
  EXPECT_TRUE((*t)[5].warpSpecialized);
  EXPECT_TRUE((*t)[5].mbarrier);
  EXPECT_EQ((*t)[5].stages, 4);
  EXPECT_FALSE(t->back().blockCopies);
}

TEST(TileHeuristics, EightBitWeightsKeepThePerWarpTileBelowTheSharedTile) {
  // Measured on the H200 (8192 x 8192, W8A16 channel) once 8-bit planes
  // were copied warp-wide in order: M = 1 21.8 us per warp tile against
  // 24.4 for the shared-activation tile, M = 8 23.4 against 25.5; with
  // 8192 columns the per-warp tile goes on to M = 12.
  WeightSchema w8 = WeightSchema::make(ScalarType::uint(8), ScalarType::f16(),
                                       Granularity::Channel, 0);
  Result<std::vector<TileConfig>> t = selectMmaSyncTiles(
      w8, kF16, {}, 8192, 8192, *lookupDevice("H200"));
  ASSERT_TRUE(bool(t));
  ASSERT_EQ(t->size(), 6u);
  EXPECT_EQ((*t)[0].mMax, 12);
  EXPECT_FALSE((*t)[0].blockCopies);
  EXPECT_EQ((*t)[0].warpK, 64);
  EXPECT_TRUE((*t)[1].blockCopies);
}

TEST(TileHeuristics, The128TokenTilesOverlapIterationsForNarrowWeights) {
  // wgmma_in_flight = 1 on the 128-token TMA tiles (M >= 65 on 8192^2):
  // measured on the H200, 5-7 % faster with 4-bit weights, 1-5 % slower
  // with 8-bit ones; never on the 64-token tiles.
  const DeviceInfo h200 = *lookupDevice("H200");
  for (unsigned bits : {4u, 8u}) {
    WeightSchema w = WeightSchema::make(ScalarType::uint(bits),
                                        ScalarType::f16(), Granularity::Group,
                                        128);
    Result<std::vector<TileConfig>> t =
        selectMmaSyncTiles(w, kF16, {}, 8192, 8192, h200);
    ASSERT_TRUE(bool(t)) << t.error();
    int overlapping = 0;
    for (const TileConfig &c : *t) {
      if (c.warpM != 128 || c.mma != MmaKind::Wgmma) {
        EXPECT_EQ(c.wgmmaInFlight, 0) << "m from " << c.mMin;
        continue;
      }
      EXPECT_EQ(c.wgmmaInFlight, bits <= 4 ? 1 : 0)
          << bits << "-bit, m from " << c.mMin;
      ++overlapping;
    }
    EXPECT_EQ(overlapping, 3) << bits << "-bit: M = 65-128, 129-256, 257-";
  }
}

TEST(TileHeuristics, EightBitWeightsTakeThe128TokenSplitOfFourInOneWave) {
  // W8A16 channel at M = 65..128 (the H200, 2026-12-04, against the
  // 64-token split of two): 8192^2 M = 128 39.8 -> 33.3 us, 8192 x 28672
  // 117.0 -> 89.8, cooperative and without wgmma_in_flight. 4096 x 14336
  // keeps the 64-token split of four (128 CTAs; the 128-token split of
  // four is 64 CTAs there: 34.4 against 42.0 us).
  const DeviceInfo h200 = *lookupDevice("H200");
  WeightSchema w8 = WeightSchema::make(ScalarType::uint(8), ScalarType::f16(),
                                       Granularity::Channel, 0);
  auto at128 = [&](int64_t n, int64_t k) -> TileConfig {
    Result<std::vector<TileConfig>> t =
        selectMmaSyncTiles(w8, kF16, {}, n, k, h200);
    EXPECT_TRUE(bool(t));
    for (const TileConfig &c : *t)
      if (c.mMin <= 128 && (c.mMax == 0 || c.mMax >= 128))
        return c;
    ADD_FAILURE() << "no tile for M = 128";
    return {};
  };
  for (auto [n, k] : {std::pair<int64_t, int64_t>{8192, 8192}, {8192, 28672}}) {
    TileConfig c = at128(n, k);
    EXPECT_EQ(c.mma, MmaKind::Wgmma) << n << "x" << k;
    EXPECT_EQ(c.blockM, 128) << n << "x" << k;
    EXPECT_EQ(c.splitK, 4) << n << "x" << k;
    EXPECT_TRUE(c.workspaceSplit) << n << "x" << k;
    EXPECT_TRUE(c.cooperativeSplit) << n << "x" << k;
    EXPECT_EQ(c.wgmmaInFlight, 0) << n << "x" << k;
  }
  TileConfig narrow = at128(4096, 14336);
  EXPECT_EQ(narrow.blockM, 64);
  EXPECT_EQ(narrow.splitK, 4);
  EXPECT_TRUE(narrow.cooperativeSplit);
  // ... and at M = 129-256 there the 128-token split of four is one wave
  // (128 CTAs): 59.7 -> 47.6 us at M = 256 against the 64-token split of
  // two.
  Result<std::vector<TileConfig>> t =
      selectMmaSyncTiles(w8, kF16, {}, 4096, 14336, h200);
  ASSERT_TRUE(bool(t));
  bool seen = false;
  for (const TileConfig &c : *t)
    if (c.mMin <= 256 && c.mMax >= 256) {
      seen = true;
      EXPECT_EQ(c.blockM, 128);
      EXPECT_EQ(c.splitK, 4);
      EXPECT_TRUE(c.cooperativeSplit);
    }
  EXPECT_TRUE(seen);
}

TEST(TileHeuristics, The64TokenWorkspaceSplitsDeepenTheirPipelineForNarrowWeights) {
  // Eight stages on the 64-token tiles split through the workspace
  // (deepPipeline): measured on the H200 2-5 % faster with 4-bit weights
  // at M = 64 and 128, 4 % slower with 8-bit ones at M = 64 (a tie at 128).
  const DeviceInfo h200 = *lookupDevice("H200");
  for (unsigned bits : {4u, 8u}) {
    WeightSchema w = WeightSchema::make(ScalarType::uint(bits),
                                        ScalarType::f16(),
                                        Granularity::Channel, 0);
    Result<std::vector<TileConfig>> t =
        selectMmaSyncTiles(w, kF16, {}, 8192, 8192, h200);
    ASSERT_TRUE(bool(t)) << t.error();
    int deep = 0;
    for (const TileConfig &c : *t) {
      if (c.mma != MmaKind::Wgmma)
        continue;
      const bool split64 = c.warpM == 64 && c.workspaceSplit;
      EXPECT_EQ(c.stages, split64 && bits <= 4 ? 8 : 4)
          << bits << "-bit, m from " << c.mMin;
      deep += split64;
    }
    // (M = 65-128 takes the 128-token split of four.)
    EXPECT_EQ(deep, 1) << bits << "-bit: M = 17-64";
  }
}

TEST(TileHeuristics, GroupScalesFollowTheMmasOnlyWhereTheyApply) {
  // Measured on the H200 (8192 x 8192, W4A16 g128): M = 1 16.4 -> 15.2 us
  // with the scales after the MMAs; at M = 16 it lost on the 128-column
  // shared tile (two k-tiles per warp) but won on the 256 x 256 one (four:
  // 16.7 -> 15.7 us, 2026-12-01).
  const DeviceInfo &h200 = *lookupDevice("H200");
  Result<std::vector<TileConfig>> t =
      selectMmaSyncTiles(w4g128(), kF16, {}, 8192, 8192, h200);
  ASSERT_TRUE(bool(t));
  EXPECT_EQ((*t)[0].mMax, 8);
  EXPECT_EQ((*t)[0].warpK, 64);
  EXPECT_TRUE((*t)[0].scaleAfterMma);
  EXPECT_TRUE((*t)[1].scaleAfterMma);
  for (size_t i = 2; i < t->size(); ++i)
    EXPECT_FALSE((*t)[i].scaleAfterMma) << i;
  auto firstScaled = [&](const WeightSchema &w, const ComputeOptions &c,
                         const DeviceInfo &d) {
    Result<std::vector<TileConfig>> r =
        selectMmaSyncTiles(w, kF16, c, 8192, 8192, d);
    EXPECT_TRUE(bool(r)) << r.error();
    return r && (*r)[0].scaleAfterMma;
  };
  // Channel scales (nothing per group), groups of 32 (a warp's 64 rows of
  // K span two), f16 accumulation, batch-invariant kernels and two k-tiles
  // per warp (the L40S) keep the scales on the dequantized pairs.
  EXPECT_FALSE(firstScaled(WeightSchema::make(ScalarType::uint(4),
                                              ScalarType::f16(),
                                              Granularity::Channel, 0),
                           {}, h200));
  EXPECT_FALSE(firstScaled(WeightSchema::make(ScalarType::uint(4),
                                              ScalarType::f16(),
                                              Granularity::Group, 32),
                           {}, h200));
  ComputeOptions f16acc;
  f16acc.f16Accumulation = true;
  EXPECT_FALSE(firstScaled(w4g128(), f16acc, h200));
  ComputeOptions invariant;
  invariant.batchInvariant = true;
  EXPECT_FALSE(firstScaled(w4g128(), invariant, h200));
  EXPECT_FALSE(firstScaled(w4g128(), {}, *lookupDevice("L40S")));
  // The rule the lowering enforces, with its reason.
  TileConfig wide = (*t)[0];
  wide.warpM = wide.blockM = 32;
  EXPECT_EQ(layout::scaleAfterMmaApplies(w4g128(), false, wide),
            "scale_after_mma keeps a second set of f32 sums per warp; "
            "expected warp_m = block_m = 16, got warp_m = 32, block_m = 32");
}

TEST(TileHeuristics, SmallMTilesFallBackWhereTheirConditionsFail) {
  const DeviceInfo &h200 = *lookupDevice("H200");
  // N = 28672: 224 blocks of 128 columns are more than a wave: M = 9..16
  // keeps the per-warp tiles (the shared-activation tile is measured only
  // where a CTA split fills the SMs).
  Result<std::vector<TileConfig>> t =
      selectMmaSyncTiles(w4g128(), kF16, {}, 28672, 8192, h200);
  ASSERT_TRUE(bool(t));
  EXPECT_FALSE((*t)[1].blockCopies);
  EXPECT_EQ((*t)[1].blockM, 16);
  // K = 96 is no multiple of 64: two k-tiles per warp; of 128 (the
  // shared-activation tile's step) neither.
  t = selectMmaSyncTiles(w4g128(), kF16, {}, 4096, 96, h200);
  ASSERT_TRUE(bool(t));
  EXPECT_EQ((*t)[0].warpK, 32);
  EXPECT_FALSE((*t)[1].blockCopies);
  // Where shared memory forces a shallower pipeline or a smaller split with
  // four k-tiles, two stay: the L40S's 99 KiB per block hold eight warps'
  // four stages of two k-tiles, not of four.
  t = selectMmaSyncTiles(w4g128(), kF16, {}, 8192, 8192,
                         *lookupDevice("L40S"));
  ASSERT_TRUE(bool(t));
  EXPECT_EQ((*t)[0].warpK, 32);
  EXPECT_EQ((*t)[0].blockK / (*t)[0].warpK, 8);
  // The A100's 108 SMs take 64 blocks of 128 columns only once: no split
  // across CTAs to fill them, so M = 9..16 keeps the per-warp tiles.
  t = selectMmaSyncTiles(w4g128(), kF16, {}, 8192, 8192,
                         *lookupDevice("A100"));
  ASSERT_TRUE(bool(t));
  EXPECT_FALSE((*t)[1].blockCopies);
  // N = 4096, K = 2048: with four k-tiles the 64 output tiles could no
  // longer be split across CTAs (four iterations for four stages), so two
  // stay and the split does.
  t = selectMmaSyncTiles(w4g128(), kF16, {}, 4096, 2048, h200);
  ASSERT_TRUE(bool(t));
  EXPECT_EQ((*t)[0].warpK, 32);
  EXPECT_EQ((*t)[0].splitK, 2);
  // Batch-invariant kernels: neither.
  ComputeOptions invariant;
  invariant.batchInvariant = true;
  t = selectMmaSyncTiles(w4g128(), kF16, invariant, 8192, 8192, h200);
  ASSERT_TRUE(bool(t));
  for (const TileConfig &tc : *t) {
    EXPECT_LE(tc.warpK, 32);
    EXPECT_FALSE(tc.blockCopies);
  }
}

TEST(TileHeuristics, WgmmaOnlyOnSm90aWhereItApplies) {
  const DeviceInfo &h200 = *lookupDevice("H200");
  auto last = [&](const ComputeOptions &c, int64_t n, const DeviceInfo &d) {
    Result<std::vector<TileConfig>> t =
        selectMmaSyncTiles(w4g128(), kF16, c, n, 8192, d);
    EXPECT_TRUE(bool(t)) << t.error();
    return t ? t->back() : TileConfig{};
  };
  EXPECT_EQ(last({}, 8192, h200).mma, MmaKind::Wgmma);
  // M >= 513: 128 tokens x 256 columns, 64 of K per iteration where K
  // allows it, else 32 (and then the tiles below, 64 of K per iteration,
  // do not run: mma_sync up to M = 512).
  EXPECT_EQ(last({}, 8192, h200).blockM, 128);
  EXPECT_EQ(last({}, 8192, h200).warpK, 64);
  Result<std::vector<TileConfig>> k32 =
      selectMmaSyncTiles(w4g128(), kF16, {}, 8192, 8192 + 32, h200);
  ASSERT_TRUE(bool(k32)) << k32.error();
  EXPECT_EQ(k32->back().mma, MmaKind::Wgmma);
  EXPECT_EQ(k32->back().warpK, 32);
  for (const TileConfig &tc : *k32)
    if (tc.mMax != 0)
      EXPECT_EQ(tc.mma, MmaKind::MmaSync) << tc.mMin << ".." << tc.mMax;
  // Off sm_90a, with f16 accumulation, for batch-invariant layers and
  // where 256 does not divide N: the mma_sync tiles.
  EXPECT_EQ(last({}, 8192, *lookupDevice("A100")).mma, MmaKind::MmaSync);
  EXPECT_EQ(last({}, 8192, *lookupDevice("L40S")).mma, MmaKind::MmaSync);
  ComputeOptions f16acc;
  f16acc.f16Accumulation = true;
  EXPECT_EQ(last(f16acc, 8192, h200).mma, MmaKind::MmaSync);
  ComputeOptions invariant;
  invariant.batchInvariant = true;
  EXPECT_EQ(last(invariant, 8192, h200).mma, MmaKind::MmaSync);
  EXPECT_EQ(last({}, 8192 + 128, h200).mma, MmaKind::MmaSync);
}

TEST(TileHeuristics, MiddleMSplitsKInAClusterOnSm90a) {
  // The choices measured best on the H200 (bench/NOTES.md, 2026-12-01):
  // tokens per block and split_k per range, for W4A16 g128.
  const DeviceInfo &h200 = *lookupDevice("H200");
  struct Want {
    int64_t mMin, mMax, tokens, split;
    bool workspace = false; ///< split through the workspace, not a cluster
  };
  auto check = [&](int64_t n, int64_t k, std::vector<Want> want) {
    Result<std::vector<TileConfig>> t =
        selectMmaSyncTiles(w4g128(), kF16, {}, n, k, h200);
    ASSERT_TRUE(bool(t)) << t.error();
    std::vector<Want> got;
    for (const TileConfig &tc : *t)
      if (tc.mma == MmaKind::Wgmma) {
        EXPECT_TRUE(tc.warpSpecialized) << n << "x" << k;
        EXPECT_EQ(tc.blockN, 256);
        // Every copy by TMA but in the cluster splits (cp.async: their TMA
        // form was never checked on the GPU).
        EXPECT_EQ(tc.tma, tc.splitsInCluster() ? 0u : uint32_t(TmaA | TmaB))
            << n << "x" << k << " M = " << tc.mMin;
        // Eight stages exactly for the 64-token workspace splits
        // (deepPipeline; their K is long enough at these shapes).
        EXPECT_EQ(tc.stages, tc.blockM == 64 && tc.workspaceSplit ? 8 : 4)
            << n << "x" << k << " M = " << tc.mMin;
        // Every workspace split here is one wave, launched cooperatively.
        EXPECT_EQ(tc.cooperativeSplit, tc.workspaceSplit)
            << n << "x" << k << " M = " << tc.mMin;
        got.push_back(
            {tc.mMin, tc.mMax, tc.blockM, tc.splitK, tc.workspaceSplit});
      }
    ASSERT_EQ(got.size(), want.size()) << n << "x" << k;
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_EQ(got[i].mMin, want[i].mMin) << n << "x" << k << " #" << i;
      EXPECT_EQ(got[i].mMax, want[i].mMax) << n << "x" << k << " #" << i;
      EXPECT_EQ(got[i].tokens, want[i].tokens) << n << "x" << k << " #" << i;
      EXPECT_EQ(got[i].split, want[i].split) << n << "x" << k << " #" << i;
      EXPECT_EQ(got[i].workspace, want[i].workspace)
          << n << "x" << k << " #" << i;
    }
  };
  // 8192^2, 32 blocks of 256 columns: 64 tokens split four ways through
  // the workspace up to M = 64 (128 CTAs, one wave: in clusters of four
  // they took two; 2026-12-01: 44.6 -> 32.3 us at M = 64), 128 tokens
  // split four ways up to M = 128 (128 CTAs; 2026-12-04, since the partial
  // sums go as vectors: 39.1 -> 37.9 us at M = 128 against 64 tokens split
  // two ways, 8192 x 28672 113.3 -> 90.7), two ways up to M = 256 (128
  // CTAs: 65.8 us against 84.0 in clusters of two; 2026-12-02), then 128
  // tokens alone (128 blocks at M = 512).
  // M = 17..32 joins 17..64 where the tile keeps three quarters of the SMs
  // busy (here 128 CTAs; 2026-12-03, M = 32: 42.8 -> 23.6 us).
  check(8192, 8192,
        {{17, 64, 64, 4, true},
         {65, 128, 128, 4, true},
         {129, 256, 128, 2, true},
         {257, 0, 128, 1}});
  // 4096 x 14336, 16 blocks: 64 tokens split four ways through the
  // workspace up to M = 128 (64 and 128 CTAs: one wave; one kernel for
  // both ranges; M = 17..32 keeps the mma_sync tile: 64 CTAs lost there,
  // 31.7 -> 33.0 us at M = 17, 2026-12-03), 128 tokens split four ways at
  // M <= 256 (128 CTAs; 2026-12-04: 53.2 us at M = 256 against 61.5 for
  // 64 tokens split two ways), two ways through the workspace at M <= 512
  // (128 CTAs; 2026-12-03: 99.6 us at M = 512 against 126 in clusters of
  // two, 111 for 64 tokens unsplit).
  check(4096, 14336,
        {{33, 128, 64, 4, true},
         {129, 256, 128, 4, true},
         {257, 512, 128, 2, true},
         {513, 0, 128, 1}});
  // 28672 x 8192, 112 blocks: no split at any M; 64 tokens up to M = 64,
  // then 128 (2026-12-03, M = 64: 67.6 us against 92.6 for 128 tokens).
  // At M = 257..512 the 448 blocks of 128 tokens in four waves beat 896
  // CTAs in clusters of two (M = 512: 422 against 611 us; 2026-12-03).
  check(28672, 8192, {{17, 64, 64, 1}, {65, 0, 128, 1}});
  // 14336 x 4096, 56 blocks: 64 tokens split two ways through the
  // workspace up to M = 64, then 128 tokens split two ways (112 CTAs of
  // 32 iterations; the cluster split of two it replaces took 51.3 us at M
  // = 128 against 37.8 for 64 tokens unsplit, 2026-12-03), then unsplit.
  check(14336, 4096, {{17, 64, 64, 2, true},
                      {65, 128, 128, 2, true},
                      {129, 0, 128, 1}});
  // K = 1024: 16 iterations, so at most a split of two (two pipelines'
  // worth, 8 iterations, per CTA).
  Result<std::vector<TileConfig>> t =
      selectMmaSyncTiles(w4g128(), kF16, {}, 4096, 1024, h200);
  ASSERT_TRUE(bool(t));
  for (const TileConfig &tc : *t)
    if (tc.mma == MmaKind::Wgmma)
      EXPECT_LE(tc.splitK, 2);
  // N = 512, two blocks of 256 columns: at M <= 128 even eight-way splits
  // make fewer CTAs than a quarter of the SMs (32 for 132), so those ranges
  // keep the mma_sync tiles; M = 129..256 has 64 CTAs of 64 tokens split
  // eight ways.
  t = selectMmaSyncTiles(w4g128(), kF16, {}, 512, 8192, h200);
  ASSERT_TRUE(bool(t));
  for (const TileConfig &tc : *t) {
    if (tc.mMax != 0 && tc.mMax <= 128)
      EXPECT_EQ(tc.mma, MmaKind::MmaSync) << tc.mMin << ".." << tc.mMax;
    if (tc.mMin == 129) {
      EXPECT_EQ(tc.mma, MmaKind::Wgmma);
      EXPECT_EQ(tc.mMax, 256);
      EXPECT_EQ(tc.blockM, 64);
      EXPECT_EQ(tc.splitK, 8);
    }
  }
  // Off sm_90a, with f16 accumulation or batch invariance: the ranges and
  // tiles from before (17..64 one range, no wgmma below 129).
  for (const char *name : {"A100", "L40S"}) {
    t = selectMmaSyncTiles(w4g128(), kF16, {}, 8192, 8192,
                           *lookupDevice(name));
    ASSERT_TRUE(bool(t));
    EXPECT_EQ((*t)[2].mMin, 17);
    EXPECT_EQ((*t)[2].mMax, 64);
    for (const TileConfig &tc : *t)
      EXPECT_EQ(tc.mma, MmaKind::MmaSync);
  }
  ComputeOptions f16acc;
  f16acc.f16Accumulation = true;
  t = selectMmaSyncTiles(w4g128(), kF16, f16acc, 8192, 8192, h200);
  ASSERT_TRUE(bool(t));
  for (const TileConfig &tc : *t)
    EXPECT_EQ(tc.mma, MmaKind::MmaSync);
}

TEST(TileHeuristics, LargeMBlocksNarrowWhereNIsShortOrTheyCannotRun) {
  // N = 4096: 16 x 8 blocks of 128 x 256 at M = 1024 are less than a wave
  // of 132 SMs, but more than half: the warp-specialized wgmma tile (it
  // won there, 69 against 111 us). N = 2048, 64 such blocks: 128 x 128
  // mma_sync blocks (2 x 2 warps), on the H200 as on the A100.
  const DeviceInfo &h200 = *lookupDevice("H200");
  Result<std::vector<TileConfig>> t =
      selectMmaSyncTiles(w4g128(), kF16, {}, 4096, 4096, h200);
  ASSERT_TRUE(bool(t));
  // (M = 33..128 one kernel: the 64-token tile split four ways.)
  ASSERT_EQ(t->size(), 7u);
  EXPECT_EQ(t->back().mma, MmaKind::Wgmma);
  EXPECT_EQ(t->back().mMin, 513);
  EXPECT_TRUE(t->back().warpSpecialized);
  t = selectMmaSyncTiles(w4g128(), kF16, {}, 2048, 4096, h200);
  ASSERT_TRUE(bool(t));
  EXPECT_EQ(t->back().mma, MmaKind::MmaSync);
  EXPECT_EQ(t->back().blockM, 128);
  EXPECT_EQ(t->back().blockN, 128);
  t = selectMmaSyncTiles(w4g128(), kF16, {}, 2048, 4096,
                         *lookupDevice("A100"));
  ASSERT_TRUE(bool(t));
  EXPECT_EQ(t->back().blockM, 128);
  EXPECT_EQ(t->back().blockN, 128);
  // N = 192 is not a multiple of 128: the per-warp tiles serve every M.
  t = selectMmaSyncTiles(w4g128(), kF16, {}, 192, 4096, h200);
  ASSERT_TRUE(bool(t));
  EXPECT_EQ(t->back().blockM, t->back().warpM);
  // Batch-invariant kernels keep one warp row (and K order) for every M.
  ComputeOptions invariant;
  invariant.batchInvariant = true;
  t = selectMmaSyncTiles(w4g128(), kF16, invariant, 8192, 8192, h200);
  ASSERT_TRUE(bool(t));
  for (const TileConfig &tc : *t)
    EXPECT_EQ(tc.blockM, tc.warpM);
}

TEST(TileHeuristics, SmallMSplitsKAcrossCtasWhenTilesLeaveSmsIdle) {
  // H200, N = 4096: 64 output tiles at M <= 8 for 132 SMs, so two CTAs
  // share each tile's K; at M = 9..16 32 blocks of 128 columns, eight
  // (two CTAs per SM); M = 17..32 (256 output tiles) and the open range do
  // not split (the wgmma cluster splits in between: next test).
  Result<std::vector<TileConfig>> t = selectMmaSyncTiles(
      w4g128(), kF16, {}, 4096, 14336, *lookupDevice("H200"));
  ASSERT_TRUE(bool(t));
  EXPECT_EQ((*t)[0].splitK, 2);
  EXPECT_EQ((*t)[0].blockK / (*t)[0].warpK, 8);
  // M = 9..16: the 256 x 256 shared-activation tile, 16 blocks split
  // eight ways (7 iterations of 256 each).
  EXPECT_EQ((*t)[1].splitK, 8);
  EXPECT_TRUE((*t)[1].shareActivations);
  EXPECT_EQ((*t)[1].blockN, 256);
  EXPECT_EQ((*t)[2].splitK, 1); // M 17..32: 256 output tiles
  EXPECT_EQ(t->back().splitK, 1);
  // Batch invariance keeps one K decomposition for every M.
  ComputeOptions c;
  c.batchInvariant = true;
  t = selectMmaSyncTiles(w4g128(), kF16, c, 4096, 14336, *lookupDevice("H200"));
  ASSERT_TRUE(bool(t));
  for (const TileConfig &tc : *t)
    EXPECT_EQ(tc.splitK, 1);
}

TEST(TileHeuristics, WideNTakesTheSharedTileWithoutASplitOnSm90a) {
  // H200, N = 14336: 112 blocks of 128 columns, more than half the SMs:
  // one shared-activation tile serves M = 1..16 — the 256 x 256 one with
  // K split in two (56 blocks, 112 CTAs; 2026-12-01), which beat the
  // unsplit 128-column block_copies tile (2026-12-01) at M = 1, 9 and 16 —
  // as two kernels, 1..8 (the transposed product) and 9..16.
  // N = 8192 (64 blocks) keeps the per-warp tile to M = 8 and the 256 x
  // 256 tile for 9..16; the A100 keeps 1..8 and 9..16.
  Result<std::vector<TileConfig>> t = selectMmaSyncTiles(
      w4g128(), kF16, {}, 14336, 4096, *lookupDevice("H200"));
  ASSERT_TRUE(bool(t));
  EXPECT_EQ((*t)[0].mMin, 1);
  EXPECT_EQ((*t)[0].mMax, 8);
  EXPECT_TRUE((*t)[0].shareActivations);
  EXPECT_EQ((*t)[0].blockN, 256);
  EXPECT_EQ((*t)[0].splitK, 2);
  EXPECT_EQ((*t)[1].mMin, 9);
  EXPECT_EQ((*t)[1].mMax, 16);
  EXPECT_TRUE((*t)[1].shareActivations);
  EXPECT_EQ((*t)[1].splitK, 2);
  EXPECT_EQ((*t)[2].mMin, 17);
  // 4096 x 4096: 16 blocks of 256 columns, and K = 4096 in 16 iterations
  // of 256: a split of 8 leaves 2 per CTA, of 4 only 64 CTAs (it lost:
  // 9.0-9.5 us vs 8.5), so not this tile.
  t = selectMmaSyncTiles(w4g128(), kF16, {}, 4096, 4096, *lookupDevice("H200"));
  ASSERT_TRUE(bool(t));
  for (const TileConfig &tc : *t)
    EXPECT_FALSE(tc.shareActivations);
  // 28672 x 8192: 112 blocks of 256 columns, no split.
  t = selectMmaSyncTiles(w4g128(), kF16, {}, 28672, 8192, *lookupDevice("H200"));
  ASSERT_TRUE(bool(t));
  EXPECT_TRUE((*t)[0].shareActivations);
  EXPECT_EQ((*t)[0].mMax, 8);
  EXPECT_EQ((*t)[0].splitK, 1);
  EXPECT_EQ((*t)[1].mMax, 16);
  EXPECT_EQ((*t)[1].splitK, 1);
  t = selectMmaSyncTiles(w4g128(), kF16, {}, 8192, 8192, *lookupDevice("H200"));
  ASSERT_TRUE(bool(t));
  EXPECT_EQ((*t)[0].mMax, 8);
  EXPECT_FALSE((*t)[0].blockCopies);
  EXPECT_EQ((*t)[1].splitK, 4);
  t = selectMmaSyncTiles(w4g128(), kF16, {}, 14336, 4096,
                         *lookupDevice("A100"));
  ASSERT_TRUE(bool(t));
  EXPECT_EQ((*t)[0].mMax, 8);
  // Batch invariance keeps one K decomposition for every M: not this tile.
  ComputeOptions c;
  c.batchInvariant = true;
  t = selectMmaSyncTiles(w4g128(), kF16, c, 14336, 4096, *lookupDevice("H200"));
  ASSERT_TRUE(bool(t));
  EXPECT_FALSE((*t)[0].blockCopies);
}

TEST(TileHeuristics, SixteenRowTilesKeepAKernelForAtMostEightTokens) {
  // A 16-row mma_sync tile compiles to a faster kernel up to 8 tokens (the
  // transposed product): equal neighbours are merged, but not across 8 / 9
  // — except for batch-invariant layers, whose kernels keep the MMAs'
  // operand roles at every M.
  Result<std::vector<TileConfig>> t =
      selectMmaSyncTiles(w4g128(), kF16, {}, 256, 512, *lookupDevice("H200"));
  ASSERT_TRUE(bool(t));
  ASSERT_GE(t->size(), 2u);
  EXPECT_EQ((*t)[0].mMin, 1);
  EXPECT_EQ((*t)[0].mMax, 8);
  EXPECT_EQ((*t)[1].mMin, 9);
  EXPECT_EQ((*t)[0].blockN, (*t)[1].blockN);
  EXPECT_EQ((*t)[0].warpM, 16);
  ComputeOptions invariant;
  invariant.batchInvariant = true;
  t = selectMmaSyncTiles(w4g128(), kF16, invariant, 256, 512,
                         *lookupDevice("H200"));
  ASSERT_TRUE(bool(t));
  EXPECT_EQ((*t)[0].mMin, 1);
  EXPECT_GT((*t)[0].mMax, 8);
}

TEST(TileHeuristics, RefusesLayersTheLayoutCannotHold) {
  Result<std::vector<TileConfig>> t = selectMmaSyncTiles(
      w4g128(), kF16, {}, 4000, 4096, *lookupDevice("H200"));
  ASSERT_FALSE(bool(t));
  EXPECT_NE(t.error().find("multiple of 64, got 4000"), std::string::npos);
  // Batch-invariant kernels step K by 32: K = 48 (a multiple of 16) is not.
  ComputeOptions invariant;
  invariant.batchInvariant = true;
  t = selectMmaSyncTiles(w4g128(), kF16, invariant, 4096, 48,
                         *lookupDevice("H200"));
  ASSERT_FALSE(bool(t));
  EXPECT_EQ(t.error(), "batch-invariant kernels take K in steps of 32; "
                       "expected the padded K to be a multiple of 32, got 48");
  DeviceInfo broken = *lookupDevice("H200");
  broken.smCount = 0;
  t = selectMmaSyncTiles(w4g128(), kF16, {}, 4096, 4096, broken);
  ASSERT_FALSE(bool(t));
  EXPECT_NE(t.error().find("SM count"), std::string::npos);
}

// Fine-grained FP8 (DeepSeek-V3: 1 x 128 activation groups, 128 x 128
// weight blocks): 128 tokens from M = 513, 192 from 2049 (the fold reads
// the token scales late; H100 2026-12-07: M = 8192 1401 -> 1280 us); MoE
// GEMMs keep 128.
TEST(TileHeuristics, FineGrainedFp8TakesTheTallTileBeyond2048) {
  WeightSchema w = WeightSchema::make(ScalarType::e4m3(), ScalarType::f32(),
                                      Granularity::Block, 128);
  w.groupN = 128;
  const InputSchema in{ScalarType::e4m3(), ActScaling::Group, 128};
  Result<std::vector<TileConfig>> t =
      selectMmaSyncTiles(w, in, {}, 8192, 8192, *lookupDevice("H100"));
  ASSERT_TRUE(bool(t)) << t.error();
  const TileConfig &deep = t->back();
  EXPECT_EQ(deep.mMin, 2049);
  EXPECT_EQ(deep.warpM, 192);
  EXPECT_EQ(deep.warpK, 128);
  EXPECT_EQ(deep.stages, 5);
  const TileConfig &mid = (*t)[t->size() - 2];
  EXPECT_EQ(mid.mMin, 513);
  EXPECT_EQ(mid.warpM, 128);
}

TEST(TileHeuristics, EightBitActivationsGetWgmmaTilesAtEveryM) {
  // fp8 activations: the sm_90a wgmma k32 kernels at every M (but decode:
  // the 16-row mma_sync tile of f16 MMAs, at M <= 16 of layers whose
  // decode tiles leave SMs idle and M <= 8 elsewhere,
  // EightBitDecodeOfNarrowLayersTakesTheMmaSyncTile), two sets of f32 sums
  // within the 128-sum budget, no activation tensor map, the pipeline in
  // shared memory.
  const InputSchema e4{ScalarType::e4m3(), ActScaling::Token, 0};
  const WeightSchema schemas[] = {
      WeightSchema::make(ScalarType::e4m3(), ScalarType::f16(),
                         Granularity::Channel),
      WeightSchema::make(ScalarType::uint(4), ScalarType::f16(),
                         Granularity::Group, 128),
      WeightSchema::make(ScalarType::e2m1(), ScalarType::ue8m0(),
                         Granularity::Group, 64)};
  const std::pair<int64_t, int64_t> shapes[] = {
      {8192, 8192}, {4096, 14336}, {28672, 8192}, {256, 512}, {320, 1024}};
  int checked = 0;
  for (const char *name : {"H100", "H200", "H20"}) {
    const DeviceInfo &d = *lookupDevice(name);
    for (const WeightSchema &w : schemas)
      for (auto [n, k] : shapes) {
        ASSERT_FALSE(layout::supports(w, e4, n, k));
        Result<std::vector<TileConfig>> tiles =
            selectMmaSyncTiles(w, e4, {}, n, k, d);
        ASSERT_TRUE(bool(tiles)) << name << " " << n << "x" << k << ": "
                                 << tiles.error();
        EXPECT_FALSE(verifyTileRanges(*tiles));
        EXPECT_EQ(tiles->front().mMin, 1);
        EXPECT_EQ(tiles->back().mMax, 0);
        for (const TileConfig &tc : *tiles) {
          EXPECT_FALSE(verifyTileForProblem(tc, w, e4, {}, n, k))
              << *verifyTileForProblem(tc, w, e4, {}, n, k);
          if (tc.mma == MmaKind::MmaSync) {
            EXPECT_EQ(&tc, &tiles->front());
            EXPECT_TRUE(tc.mMax == 8 || tc.mMax == 16) << tc.mMax;
            EXPECT_EQ(tc.warpM, 16);
            continue;
          }
          EXPECT_EQ(tc.mma, MmaKind::Wgmma);
          // K-major weights (fp8 as stored, sm_90a): from M = 513 the
          // 128-token tile over 128 of K per iteration with every copy by
          // TMA, as many stages as fit up to six, and from 2049 the
          // 192-token one (five stages) without per-K weight scales; the
          // last block of columns partial where N = 320; the rest as for
          // the others.
          // 4-bit weights over groups of 128 (W4A8): the same tile's
          // structure, the weights converted in registers, from M = 129,
          // 192 tokens from 257, where N divides into its blocks.
          const bool kMajor =
              layout::tileOrder(w, e4, true) == layout::TileOrder::KMajor;
          const bool fourBit = !kMajor && w.type.bits == 4 &&
                               w.zeroPoint == ZeroPointKind::None &&
                               w.groupK % 128 == 0 && n % 128 == 0;
          if ((kMajor && tc.mMin > 512) || (fourBit && tc.mMin > 128)) {
            const bool deep =
                kMajor ? !w.hasPerKScales() && tc.mMax == 0 : tc.mMin > 256;
            EXPECT_EQ(tc.mMin,
                      kMajor ? (deep ? 2049 : 513) : (deep ? 257 : 129));
            EXPECT_EQ(tc.tma, TmaA | TmaB);
            EXPECT_EQ(tc.warpM, deep ? 192 : 128);
            EXPECT_EQ(tc.warpK, 128);
            EXPECT_EQ(tc.blockN, 128);
            EXPECT_EQ(tc.stages, deep ? 5 : 6);
            EXPECT_EQ(tc.rasterM, 8);
            EXPECT_EQ(n % tc.blockN != 0,
                      n % 128 != 0 && layout::partialColumnBlocks(tc, w, e4));
          } else {
            EXPECT_EQ(tc.tma & TmaA, 0);
            EXPECT_EQ(n % tc.blockN, 0);
          }
          EXPECT_EQ(tc.wgmmaInFlight, 0);
          EXPECT_LE(tc.warpK, w.hasPerKScales() ? w.groupK : tc.warpK);
          EXPECT_LE(2 * tc.warpM / 2 * (tc.warpN / 16),
                    tc.warpSpecialized ? 192 : 128);
          layout::KernelShape ks = layout::shapeOf(tc);
          ks.activationBits = 8;
          EXPECT_LE(layout::sharedBytes(w, ks), d.smemPerSmKB * 1024);
          if (ks.warpSpecialized) {
            layout::ws::RegisterSplit regs = layout::ws::registerSplit(ks);
            EXPECT_GE(regs.rebalance ? regs.consumer : regs.launch,
                      layout::ws::consumerRegisters(ks));
          }
          ++checked;
        }
      }
  }
  EXPECT_GT(checked, 40);
  // Decode: 8 tokens with two CTAs per SM, then 16, each with K split four
  // ways through the workspace at 8192^2 on the H200 (32 blocks x 4 = 128
  // CTAs of 132 SMs; the tiles measured there); a split that fits the SMs
  // for 28672 columns (112 blocks: none).
  auto decodeTiles = [&](int64_t n) {
    return *selectMmaSyncTiles(schemas[0], e4, {}, n, 8192,
                               *lookupDevice("H200"));
  };
  std::vector<TileConfig> square = decodeTiles(8192);
  ASSERT_GE(square.size(), 3u);
  for (int i : {0, 1}) {
    const TileConfig &tc = square[i];
    EXPECT_EQ(tc.mMin, i == 0 ? 1 : 9);
    EXPECT_EQ(tc.mMax, i == 0 ? 8 : 16);
    EXPECT_EQ(tc.warpM, i == 0 ? 8 : 16);
    EXPECT_EQ(tc.blockN, 256);
    EXPECT_TRUE(tc.warpSpecialized);
    EXPECT_EQ(tc.splitK, 4);
    EXPECT_TRUE(tc.workspaceSplit);
    // One or two rows of eight tokens do not share out among four CTAs.
    EXPECT_FALSE(tc.cooperativeSplit);
    EXPECT_EQ(tc.ctasPerSm, i == 0 ? 2 : 1);
  }
  EXPECT_EQ(square[2].mMin, 17);
  std::vector<TileConfig> wide = decodeTiles(28672);
  EXPECT_EQ(wide[0].warpM, 8);
  EXPECT_EQ(wide[0].splitK, 1);
  EXPECT_FALSE(wide[0].workspaceSplit);
  // K = 96 has no 64-column wgmma iteration: the mma_sync k32 tiles (f16
  // MMAs over the fp8 codes on sm_90a, at its own PTX ISA); weights that lie
  // K-major there (fp8 as stored), which only wgmma reads, have none (a
  // layer pads K of 8-bit activations to a multiple of 64: verifyPadding).
  Result<std::vector<TileConfig>> shortK =
      selectMmaSyncTiles(schemas[1], e4, {}, 256, 96, *lookupDevice("H200"));
  ASSERT_TRUE(bool(shortK)) << shortK.error();
  for (const TileConfig &tc : *shortK) {
    EXPECT_EQ(tc.mma, MmaKind::MmaSync);
    EXPECT_EQ(tc.warpK, 32);
  }
  Result<std::vector<TileConfig>> shortKMajor =
      selectMmaSyncTiles(schemas[0], e4, {}, 256, 96, *lookupDevice("H200"));
  ASSERT_FALSE(bool(shortKMajor));
  EXPECT_EQ(shortKMajor.error(),
            "no wgmma tile runs a 256 x 96 layer with f8E4M3FN activations on "
            "H200 (the padded K must be a multiple of 64)");
  ComputeOptions f16Sums;
  f16Sums.f16Accumulation = true;
  Result<std::vector<TileConfig>> f16acc = selectMmaSyncTiles(
      schemas[1], e4, f16Sums, 8192, 8192, *lookupDevice("H200"));
  ASSERT_FALSE(bool(f16acc));
  EXPECT_EQ(f16acc.error(), "f8E4M3FN activations sum in f32 (s32 for "
                            "int8); expected f16_accumulation = false");
  // Batch-invariant: the mma_sync tiles, one K decomposition at every M;
  // K-major weights (fp8 as stored on sm_90a) one wgmma tile for every M,
  // the warp-specialized 64-token one without a K split.
  ComputeOptions invariant;
  invariant.batchInvariant = true;
  for (const WeightSchema &w : {schemas[1], schemas[0]}) {
    Result<std::vector<TileConfig>> inv =
        selectMmaSyncTiles(w, e4, invariant, 8192, 8192, *lookupDevice("H200"));
    ASSERT_TRUE(bool(inv)) << inv.error();
    if (w.type.bits == 8) {
      ASSERT_EQ(inv->size(), 1u);
      EXPECT_EQ(inv->front().mma, MmaKind::Wgmma);
      EXPECT_EQ(inv->front().warpM, 64);
      EXPECT_EQ(inv->front().mMax, 0);
    }
    for (const TileConfig &tc : *inv) {
      EXPECT_EQ(tc.mma, w.type.bits == 8 ? MmaKind::Wgmma : MmaKind::MmaSync);
      EXPECT_EQ(tc.warpK, 64);
      EXPECT_EQ(tc.blockK, 64);
      EXPECT_EQ(tc.splitK, 1);
      EXPECT_FALSE(tc.blockCopies);
      EXPECT_FALSE(verifyTileForProblem(tc, w, e4, invariant, 8192, 8192))
          << *verifyTileForProblem(tc, w, e4, invariant, 8192, 8192);
    }
  }
}

TEST(TileHeuristics, EightBitDecodeOfNarrowLayersTakesTheMmaSyncTile) {
  // On the H200, M <= 16 where the wgmma decode tiles fill fewer than half
  // the SMs (N = 4096: 16 blocks x split 4): the 16-row mma.sync tile (f16
  // MMAs over fp8 codes: no fp8 mma.sync on sm_90a).
  const DeviceInfo &h200 = *lookupDevice("H200");
  const InputSchema e4{ScalarType::e4m3(), ActScaling::Token, 0};
  const InputSchema i8{ScalarType::sint(8), ActScaling::Token, 0};
  const WeightSchema u4 = WeightSchema::make(
      ScalarType::uint(4), ScalarType::f16(), Granularity::Group, 128);
  const WeightSchema mx = WeightSchema::make(
      ScalarType::e2m1(), ScalarType::ue8m0(), Granularity::Group, 64);
  auto first = [&](const WeightSchema &w, const InputSchema &in, int64_t n,
                   int64_t k) {
    return selectMmaSyncTiles(w, in, {}, n, k, h200)->front();
  };
  for (int64_t k : {4096, 14336}) {
    TileConfig t = first(u4, e4, 4096, k);
    EXPECT_EQ(t.mma, MmaKind::MmaSync);
    EXPECT_EQ(t.mMin, 1);
    EXPECT_EQ(t.mMax, 16);
    EXPECT_EQ(t.warpM, 16);
    EXPECT_TRUE(t.scaleAfterMma);
    EXPECT_EQ(first(u4, i8, 4096, k).mma, MmaKind::MmaSync);
    // MXFP4 group scales: not in the mma.sync kernels.
    EXPECT_EQ(first(mx, e4, 4096, k).mma, MmaKind::Wgmma);
  }
  std::vector<TileConfig> narrow =
      *selectMmaSyncTiles(u4, e4, {}, 4096, 4096, h200);
  EXPECT_FALSE(verifyTileRanges(narrow));
  EXPECT_EQ(narrow[1].mMin, 17);
  EXPECT_EQ(narrow[1].mma, MmaKind::Wgmma);
  // 8192 columns: 32 blocks x 4 fill the SMs; the wgmma tiles from M = 9
  // and, with fp8 activations (f16 MMAs on sm_90a), the 16-row mma.sync
  // tile without a split across CTAs at M <= 8; int8 and 8-bit weights
  // keep the wgmma tiles there.
  std::vector<TileConfig> square =
      *selectMmaSyncTiles(u4, e4, {}, 8192, 8192, h200);
  EXPECT_FALSE(verifyTileRanges(square));
  EXPECT_EQ(square[0].mma, MmaKind::MmaSync);
  EXPECT_EQ(square[0].mMax, 8);
  EXPECT_EQ(square[0].warpM, 16);
  EXPECT_EQ(square[0].splitK, 1);
  EXPECT_TRUE(square[0].scaleAfterMma);
  EXPECT_EQ(square[1].mMin, 9);
  EXPECT_EQ(square[1].mma, MmaKind::Wgmma);
  EXPECT_EQ(first(u4, i8, 8192, 8192).mma, MmaKind::Wgmma);
  const WeightSchema f8 = WeightSchema::make(
      ScalarType::e4m3(), ScalarType::f16(), Granularity::Channel);
  EXPECT_EQ(first(f8, e4, 8192, 8192).mma, MmaKind::Wgmma);
  // fp8 weights as stored lie K-major on sm_90a, which only wgmma reads:
  // the wgmma tiles at every M of a narrow layer too.
  Result<std::vector<TileConfig>> kMajor =
      selectMmaSyncTiles(f8, e4, {}, 4096, 4096, h200);
  ASSERT_TRUE(bool(kMajor)) << kMajor.error();
  for (const TileConfig &t : *kMajor)
    EXPECT_EQ(t.mma, MmaKind::Wgmma);
}

TEST(TileHeuristics, Int8PrefillKeepsOneSetOfSumsOverTwoNTiles) {
  // si8 x si8 without group scales sums exactly in s32 (no promotion:
  // WgmmaKernel.cpp), so from M = 513 the K-major tile holds two n-tiles
  // per warpgroup: 128 tokens x 256 columns, as many stages as fit (four
  // of 48 KiB). With group scales (or per-group activation scales) the
  // two sets of sums keep 128 columns.
  const DeviceInfo &h100 = *lookupDevice("H100");
  const InputSchema i8{ScalarType::sint(8), ActScaling::Token, 0};
  const WeightSchema i8w = WeightSchema::make(
      ScalarType::sint(8), ScalarType::f16(), Granularity::Channel);
  Result<std::vector<TileConfig>> tiles =
      selectMmaSyncTiles(i8w, i8, {}, 8192, 8192, h100);
  ASSERT_TRUE(bool(tiles)) << tiles.error();
  const TileConfig &prefill = tiles->back();
  EXPECT_EQ(prefill.mMax, 0);
  EXPECT_EQ(prefill.warpM, 128);
  EXPECT_EQ(prefill.blockN, 256);
  EXPECT_EQ(prefill.warpK, 128);
  EXPECT_EQ(prefill.stages, 4);
  EXPECT_EQ(prefill.tma, TmaA | TmaB);
  layout::KernelShape ks = layout::shapeOf(prefill);
  ks.activationBits = 8;
  EXPECT_EQ(ks.nTilesPerGroup, 2);
  EXPECT_LE(layout::sharedBytes(i8w, ks), h100.smemPerSmKB * 1024);
  // N not a multiple of 256: the same tile, its last block of columns
  // partial (layout::partialColumnBlocks).
  const TileConfig partial =
      selectMmaSyncTiles(i8w, i8, {}, 8320, 8192, h100)->back();
  EXPECT_EQ(partial.blockN, 256);
  EXPECT_FALSE(verifyTileForProblem(partial, i8w, i8, {}, 8320, 8192));
  const WeightSchema i8g = WeightSchema::make(
      ScalarType::sint(8), ScalarType::f16(), Granularity::Group, 128);
  EXPECT_EQ(selectMmaSyncTiles(i8g, i8, {}, 8192, 8192, h100)->back().blockN,
            128);
  // si8 sums over a K beyond 65536 could overflow s32: refused.
  EXPECT_EQ(*layout::supports(i8w, i8, 8192, 65536 + 128),
            "the prepared mma_sync layout sums si8 products in s32 over the "
            "whole of K and expects the padded K to be at most 65536, got "
            "65664");
}

TEST(TileHeuristics, EightBitActivationsGetMmaSyncTilesWithoutWgmma) {
  // sm_80-sm_89 (and sm_90a where no wgmma tile runs): the mma_sync
  // m16n8k32 kernels at every M: k32 steps (warp_k 32 or 64), at most
  // 32-row warps (two sets of sums), group scales after the MMAs, f32 sums,
  // the pipeline in shared memory; fp8 from sm_89, si8 from sm_80.
  const InputSchema e4{ScalarType::e4m3(), ActScaling::Token, 0};
  const InputSchema i8{ScalarType::sint(8), ActScaling::Token, 0};
  const WeightSchema e4w = WeightSchema::make(
      ScalarType::e4m3(), ScalarType::f16(), Granularity::Channel);
  const WeightSchema u4g = WeightSchema::make(
      ScalarType::uint(4), ScalarType::bf16(), Granularity::Group, 128);
  const WeightSchema i8w = WeightSchema::make(
      ScalarType::sint(8), ScalarType::f16(), Granularity::Channel);
  const std::pair<int64_t, int64_t> shapes[] = {
      {8192, 8192}, {4096, 14336}, {28672, 8192}, {256, 512}, {320, 1024},
      {256, 96}};
  struct Combo {
    const char *device;
    WeightSchema w;
    InputSchema in;
  };
  int checked = 0;
  for (const Combo &c : {Combo{"L40S", e4w, e4}, Combo{"L40S", u4g, e4},
                         Combo{"RTX 4090", u4g, i8}, Combo{"A100", i8w, i8},
                         Combo{"A100", u4g, i8}, Combo{"A10", i8w, i8}}) {
    const DeviceInfo &d = *lookupDevice(c.device);
    for (auto [n, k] : shapes) {
      if (layout::supports(c.w, c.in, n, k))
        continue; // K = 96 with groups of 128
      Result<std::vector<TileConfig>> tiles =
          selectMmaSyncTiles(c.w, c.in, {}, n, k, d);
      ASSERT_TRUE(bool(tiles))
          << c.device << " " << n << "x" << k << ": " << tiles.error();
      EXPECT_FALSE(verifyTileRanges(*tiles));
      EXPECT_EQ(tiles->front().mMin, 1);
      EXPECT_EQ(tiles->back().mMax, 0);
      for (const TileConfig &tc : *tiles) {
        EXPECT_EQ(tc.mma, MmaKind::MmaSync);
        EXPECT_FALSE(verifyTileForProblem(tc, c.w, c.in, {}, n, k))
            << *verifyTileForProblem(tc, c.w, c.in, {}, n, k);
        EXPECT_EQ(tc.warpK % 32, 0);
        EXPECT_LE(tc.warpM, 32);
        EXPECT_EQ(tc.scaleAfterMma, c.w.hasPerKScales());
        EXPECT_FALSE(layout::scaleAfterMmaApplies(c.w, false, tc, 8) &&
                     tc.scaleAfterMma);
        layout::KernelShape ks = layout::shapeOf(tc);
        ks.activationBits = 8;
        EXPECT_LE(layout::sharedBytes(c.w, ks), d.smemPerSmKB * 1024);
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 60);
  // Decode at 8192^2 on the L40S: 16-row warps over 64 of K, K split in
  // the block and across CTAs (128 column tiles, 142 SMs: none across).
  std::vector<TileConfig> decode =
      *selectMmaSyncTiles(u4g, e4, {}, 8192, 8192, *lookupDevice("L40S"));
  ASSERT_EQ(decode.size(), 6u);
  EXPECT_EQ(decode[0].mMax, 16);
  EXPECT_EQ(decode[0].warpM, 16);
  EXPECT_EQ(decode[0].warpK, 64);
  for (int i : {1, 2, 3, 4}) {
    EXPECT_EQ(decode[i].warpM, 32);
    EXPECT_EQ(decode[i].blockM, 32);
  }
  EXPECT_EQ(decode[4].mMax, 512);
  EXPECT_EQ(decode[4].blockN, 128); // 128 x 16 output tiles: 2 warps along N
  EXPECT_EQ(decode[5].blockM, 64);
  EXPECT_TRUE(decode[5].blockCopies);
  // si4 activations (W4A4 int, m16n8k64 s4): per-warp tiles at every M
  // (the A100's and the H200's: no other kernel takes them), k64 steps, 128
  // of K where the groups allow it.
  const InputSchema i4{ScalarType::sint(4), ActScaling::Token, 0};
  const WeightSchema s4c = WeightSchema::make(
      ScalarType::sint(4), ScalarType::f16(), Granularity::Channel);
  const WeightSchema u4g64 = WeightSchema::make(
      ScalarType::uint(4), ScalarType::bf16(), Granularity::Group, 64);
  for (const char *name : {"A100", "H200"})
    for (const WeightSchema &w : {s4c, u4g64, u4g})
      for (auto [n, k] : {std::pair<int64_t, int64_t>{4096, 4096},
                          {256, 512}, {320, 1024}, {28672, 8192}}) {
        Result<std::vector<TileConfig>> tiles =
            selectMmaSyncTiles(w, i4, {}, n, k, *lookupDevice(name));
        ASSERT_TRUE(bool(tiles)) << name << " " << n << "x" << k << ": "
                                 << tiles.error();
        EXPECT_FALSE(verifyTileRanges(*tiles));
        for (const TileConfig &tc : *tiles) {
          EXPECT_EQ(tc.mma, MmaKind::MmaSync);
          EXPECT_EQ(tc.blockM, tc.warpM);
          EXPECT_FALSE(tc.blockCopies || tc.shareActivations);
          EXPECT_EQ(tc.warpK, w.hasPerKScales() && w.groupK < 128 ? 64 : 128);
          EXPECT_EQ(tc.scaleAfterMma, w.hasPerKScales());
          EXPECT_FALSE(verifyTileForProblem(tc, w, i4, {}, n, k))
              << *verifyTileForProblem(tc, w, i4, {}, n, k);
          layout::KernelShape ks = layout::shapeOf(tc);
          ks.activationBits = 4;
          EXPECT_LE(layout::sharedBytes(w, ks),
                    lookupDevice(name)->smemPerSmKB * 1024);
        }
      }
  // fp8 activations where the chip has no fp8 MMA.
  Result<std::vector<TileConfig>> a100fp8 =
      selectMmaSyncTiles(u4g, e4, {}, 8192, 8192, *lookupDevice("A100"));
  ASSERT_FALSE(bool(a100fp8));
  EXPECT_EQ(a100fp8.error(),
            "f8E4M3FN activations need sm_89 or newer, got sm_80");
  // What the mma_sync kernels do not take: group scales of other widths.
  const WeightSchema f32g = WeightSchema::make(
      ScalarType::uint(4), ScalarType::f32(), Granularity::Group, 128);
  Result<std::vector<TileConfig>> wide =
      selectMmaSyncTiles(f32g, e4, {}, 8192, 8192, *lookupDevice("L40S"));
  ASSERT_FALSE(bool(wide));
  EXPECT_EQ(wide.error(),
            "the mma_sync kernels apply group scales to each iteration's sums "
            "per output column (scale_after_mma) and expect f16 or bf16 group "
            "scales with f8E4M3FN activations, got f32");
}

// From 9 tokens per expert (indexed, 16-bit activations, sm_90a) a block
// holds an expert's rows with room for the routing's spread: 32 / 48 / 96
// rows at 9-16 / 17-32 / 33-64 tokens per expert, the 32- and 48-row tiles
// at two CTAs per SM, then 128 rows, or 96 with router weights (their
// 128-row epilogue spills). A fixed block_size keeps the block_m that
// divide it; up to 8 tokens per expert the 16-row mma_sync tiles stay.
TEST(TileHeuristics, MoeBlocksHoldAnExpertsRows) {
  const DeviceInfo &h200 = *lookupDevice("H200");
  WeightSchema w = w4g128();
  w.experts = 128;
  struct Want {
    int64_t mMin, mMax, blockM, ctasPerSm;
  };
  auto check = [&](const MoeShape &moe, std::vector<Want> want) {
    Result<std::vector<TileConfig>> tiles =
        selectMoeTiles(w, kF16, {}, 1536, 2048, h200, moe);
    ASSERT_TRUE(tiles.ok()) << tiles.error();
    std::vector<const TileConfig *> blocks;
    for (const TileConfig &t : *tiles) {
      if (t.mMax != 0 && t.mMax <= 8) {
        EXPECT_EQ(t.mma, MmaKind::MmaSync) << t.mMin;
        EXPECT_EQ(t.blockM, 16) << t.mMin;
        continue;
      }
      blocks.push_back(&t);
    }
    ASSERT_EQ(blocks.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) {
      const TileConfig &t = *blocks[i];
      EXPECT_EQ(t.mMin, want[i].mMin) << i;
      EXPECT_EQ(t.mMax, want[i].mMax) << i;
      EXPECT_EQ(t.blockM, want[i].blockM) << i;
      EXPECT_EQ(t.warpM, want[i].blockM) << i;
      EXPECT_EQ(t.blockN, 256) << i;
      EXPECT_EQ(t.ctasPerSm, want[i].ctasPerSm) << i;
      EXPECT_EQ(t.mma, MmaKind::Wgmma) << i;
      EXPECT_TRUE(t.warpSpecialized) << i;
      EXPECT_EQ(t.tma, uint32_t(TmaA | TmaB)) << i;
      EXPECT_EQ(t.splitK, 1) << i;
      EXPECT_EQ(t.wgmmaInFlight, t.blockM == 128 ? 1 : 0) << i;
      EXPECT_FALSE(moeTileProblem(t, moe, 90));
      EXPECT_EQ(kMoeFollowingBlockSize % t.blockM, 0) << t.blockM;
    }
  };
  // Routed per M (the layer's op block_size is kMoeFollowingBlockSize).
  check({GemmType::Indexed, 128, 8, kMoeFollowingBlockSize, false},
        {{9, 16, 32, 2}, {17, 32, 48, 2}, {33, 64, 96, 1}, {65, 0, 128, 1}});
  check({GemmType::Indexed, 128, 8, kMoeFollowingBlockSize, true},
        {{9, 16, 32, 2}, {17, 32, 48, 2}, {33, 0, 96, 1}});
  // A fixed block_size: the next block_m of each range's list dividing it.
  check({GemmType::Indexed, 128, 8, 64, false},
        {{9, 32, 32, 2}, {33, 0, 64, 1}});
  check({GemmType::Indexed, 128, 8, 128, false},
        {{9, 32, 32, 2}, {33, 64, 64, 1}, {65, 0, 128, 1}});
  // block_size 16: no such block; the 16-row tiles serve every range.
  Result<std::vector<TileConfig>> sixteen = selectMoeTiles(
      w, kF16, {}, 1536, 2048, h200, {GemmType::Indexed, 128, 8, 16});
  ASSERT_TRUE(sixteen.ok()) << sixteen.error();
  for (const TileConfig &t : *sixteen)
    EXPECT_EQ(t.blockM, 16) << t.mMin;
  // Not for the grouped routings, 8-bit activations or 8-bit weights (not
  // measured), nor off sm_90a.
  auto noBlocks = [&](const Result<std::vector<TileConfig>> &tiles) {
    ASSERT_TRUE(tiles.ok()) << tiles.error();
    for (const TileConfig &t : *tiles)
      EXPECT_TRUE(t.blockM != 32 && t.blockM != 48 && t.blockM != 96)
          << t.mMin << ": block_m " << t.blockM;
  };
  noBlocks(selectMoeTiles(w, kF16, {}, 1536, 2048, h200,
                          {GemmType::GroupedContiguous, 128, 1, 0}));
  noBlocks(selectMoeTiles(
      w, InputSchema{ScalarType::e4m3(), ActScaling::Token, 0}, {}, 1536,
      2048, h200, {GemmType::Indexed, 128, 8, kMoeFollowingBlockSize}));
  WeightSchema w8 = WeightSchema::make(ScalarType::uint(8), ScalarType::f16(),
                                       Granularity::Channel, 0);
  w8.experts = 128;
  noBlocks(selectMoeTiles(w8, kF16, {}, 1536, 2048, h200,
                          {GemmType::Indexed, 128, 8, kMoeFollowingBlockSize}));
  noBlocks(selectMoeTiles(w, kF16, {}, 1536, 2048, *lookupDevice("L40S"),
                          {GemmType::Indexed, 128, 8, kMoeFollowingBlockSize}));
}

// One token per expert in a 16-row mma_sync tile is a kernel of its own
// (the transposed product, eight rows per pass), even where the tile is the
// next range's too (Mixtral-8x7B gate_up: the 256 x 256 shared tile for 1
// and for 2-16 tokens per expert) — where each CTA sums enough of K
// (kMoeTransposedMinDepth; the kernel decides by the same bound:
// test/Target/PTX/moe-transposed.mlir).
TEST(TileHeuristics, MoeOneTokenPerExpertIsItsOwnKernel) {
  const DeviceInfo &h200 = *lookupDevice("H200");
  WeightSchema w = w4g128();
  w.experts = 8;
  MoeShape mixtral{GemmType::Indexed, 8, 2, kMoeFollowingBlockSize};
  Result<std::vector<TileConfig>> tiles =
      selectMoeTiles(w, kF16, {}, 28672, 4096, h200, mixtral);
  ASSERT_TRUE(tiles.ok()) << tiles.error();
  ASSERT_GE(tiles->size(), 2u);
  const TileConfig &one = (*tiles)[0], &next = (*tiles)[1];
  EXPECT_EQ(one.mMin, 1);
  EXPECT_EQ(one.mMax, 1);
  EXPECT_EQ(one.mma, MmaKind::MmaSync);
  EXPECT_EQ(one.blockM, 16);
  EXPECT_EQ(one.warpM, 16);
  // The same tile as the next range's (the H200's heuristics of 2026-12-04).
  EXPECT_EQ(next.mMin, 2);
  EXPECT_EQ(next.mma, one.mma);
  EXPECT_EQ(next.blockM, one.blockM);
  EXPECT_EQ(next.blockN, one.blockN);
  EXPECT_EQ(next.blockK, one.blockK);
  EXPECT_EQ(next.warpN, one.warpN);
  EXPECT_EQ(next.shareActivations, one.shareActivations);
  // Too little of K per CTA to pay for it: the ranges merge (a layer of
  // Mixtral's N with K = 384).
  Result<std::vector<TileConfig>> shallow =
      selectMoeTiles(w, kF16, {}, 28672, 384, h200, mixtral);
  ASSERT_TRUE(shallow.ok()) << shallow.error();
  EXPECT_EQ(shallow->front().mma, MmaKind::MmaSync);
  EXPECT_EQ(shallow->front().blockM, 16);
  EXPECT_NE(shallow->front().mMax, 1);
}

TEST(TileHeuristics, MoeFp8DecodeTakesTheF16MmaSyncTileOnSm90) {
  // 2-16 tokens per expert, e4m3 activations over 4-bit weights, indexed,
  // sm_90a: the 16-row mma_sync tile (f16 MMAs over the fp8 codes), 128
  // columns where the experts' blocks fill every SM twice, else 64; no
  // split; the wgmma tiles from 17 on. Not for int8 activations, 8-bit
  // weights, the grouped routings or batch-invariant layers, nor on sm_89
  // (a native fp8 mma.sync: the dense rules' tiles).
  const DeviceInfo &h200 = *lookupDevice("H200");
  const InputSchema e4{ScalarType::e4m3(), ActScaling::Token, 0};
  const InputSchema i8{ScalarType::sint(8), ActScaling::Token, 0};
  WeightSchema qwen = w4g128(), mixtral = w4g128();
  qwen.experts = 128;
  mixtral.experts = 8;
  const MoeShape qwenShape{GemmType::Indexed, 128, 8, kMoeFollowingBlockSize};
  const MoeShape mixtralDown{GemmType::Indexed, 8, 2, kMoeFollowingBlockSize,
                             /*routerWeights=*/true};
  auto range = [](const std::vector<TileConfig> &tiles, int64_t t) {
    for (const TileConfig &tc : tiles)
      if (tc.mMin <= t && (tc.mMax == 0 || t <= tc.mMax))
        return tc;
    ADD_FAILURE() << "no tile for " << t << " tokens per expert";
    return TileConfig{};
  };
  Result<std::vector<TileConfig>> q =
      selectMoeTiles(qwen, e4, {}, 1536, 2048, h200, qwenShape);
  ASSERT_TRUE(q.ok()) << q.error();
  EXPECT_FALSE(verifyTileRanges(*q));
  for (int64_t t : {2, 4, 16}) {
    TileConfig tc = range(*q, t);
    EXPECT_EQ(tc.mma, MmaKind::MmaSync) << t;
    EXPECT_EQ(tc.mMin, 2);
    EXPECT_EQ(tc.mMax, 16);
    EXPECT_EQ(tc.blockM, 16);
    EXPECT_EQ(tc.blockN, 128);
    EXPECT_EQ(tc.warpK, 64);
    EXPECT_EQ(tc.splitK, 1);
    EXPECT_TRUE(tc.scaleAfterMma);
  }
  EXPECT_EQ(range(*q, 17).mma, MmaKind::Wgmma);
  // Mixtral down: 8 experts x 32 blocks of 128 columns < 2 x 132 SMs.
  Result<std::vector<TileConfig>> m =
      selectMoeTiles(mixtral, e4, {}, 4096, 14336, h200, mixtralDown);
  ASSERT_TRUE(m.ok()) << m.error();
  TileConfig down = range(*m, 8);
  EXPECT_EQ(down.mma, MmaKind::MmaSync);
  EXPECT_EQ(down.blockN, 64);
  EXPECT_EQ(down.blockK, 256);
  EXPECT_EQ(down.warpK, 32);
  EXPECT_EQ(range(*m, 17).mma, MmaKind::Wgmma);
  // Where the rule does not apply, 2-16 tokens per expert keep the dense
  // rules' wgmma tiles (H200) or their mma_sync ones (L40S).
  auto notTheRule = [&](const Result<std::vector<TileConfig>> &tiles) {
    ASSERT_TRUE(tiles.ok()) << tiles.error();
    TileConfig tc = range(*tiles, 4);
    EXPECT_FALSE(tc.mma == MmaKind::MmaSync && tc.mMin == 2 &&
                 tc.mMax == 16 && tc.blockN == 128 && tc.blockK == 128);
  };
  notTheRule(selectMoeTiles(qwen, i8, {}, 1536, 2048, h200, qwenShape));
  notTheRule(selectMoeTiles(qwen, e4, {}, 1536, 2048, *lookupDevice("L40S"),
                            qwenShape));
  ComputeOptions invariant;
  invariant.batchInvariant = true;
  notTheRule(selectMoeTiles(qwen, e4, invariant, 1536, 2048, h200, qwenShape));
  WeightSchema w8 = WeightSchema::make(ScalarType::e4m3(), ScalarType::f16(),
                                       Granularity::Channel);
  w8.experts = 128;
  notTheRule(selectMoeTiles(w8, e4, {}, 1536, 2048, h200, qwenShape));
  notTheRule(selectMoeTiles(qwen, e4, {}, 1536, 2048, h200,
                            {GemmType::GroupedContiguous, 128, 8, 0}));
}

// MoE tiles: the dense tiles of the tokens per expert, TMA only with 16-bit
// activations outside a cluster split, no workspace split, block_m dividing the indexed
// block_size; K splits shrink with the experts that run at once.
TEST(TileHeuristics, MoeTilesKeepTheRoutingsRules) {
  const DeviceInfo &h200 = *lookupDevice("H200");
  WeightSchema w = w4g128();
  w.experts = 128;
  for (int64_t blockSize : {16, 64}) {
    MoeShape moe{GemmType::Indexed, 128, 8, blockSize};
    Result<std::vector<TileConfig>> tiles =
        selectMoeTiles(w, kF16, {}, 1536, 2048, h200, moe);
    ASSERT_TRUE(tiles.ok()) << tiles.error();
    EXPECT_EQ(tiles->front().mMin, 1);
    EXPECT_EQ(tiles->back().mMax, 0);
    for (const TileConfig &t : *tiles) {
      EXPECT_FALSE(moeTileProblem(t, moe, 90)) << *moeTileProblem(t, moe, 90);
      EXPECT_EQ(blockSize % t.blockM, 0);
      if (t.tma != 0)
        EXPECT_TRUE(t.warpSpecialized && !t.splitsInCluster());
    }
  }
  // Prefill with 16-bit activations: the warp-specialized tiles gather the
  // activations into TMA's layout and take the weights by bulk copies.
  {
    MoeShape moe{GemmType::Indexed, 128, 8, kMoeFollowingBlockSize};
    Result<std::vector<TileConfig>> tiles =
        selectMoeTiles(w, kF16, {}, 1536, 2048, h200, moe);
    ASSERT_TRUE(tiles.ok()) << tiles.error();
    int warpSpecialized = 0;
    for (const TileConfig &t : *tiles)
      if (t.warpSpecialized && !t.splitsInCluster()) {
        ++warpSpecialized;
        EXPECT_EQ(t.tma, uint32_t(TmaA | TmaB)) << t.mMin;
      }
    EXPECT_GE(warpSpecialized, 1);
  }
  // Every expert of grouped_masked runs at once: no K split at all.
  WeightSchema w8 = w4g128();
  w8.experts = 32;
  MoeShape masked{GemmType::GroupedMasked, 32, 1, 0};
  Result<std::vector<TileConfig>> tiles =
      selectMoeTiles(w8, kF16, {}, 4096, 7168, h200, masked);
  ASSERT_TRUE(tiles.ok()) << tiles.error();
  for (const TileConfig &t : *tiles)
    EXPECT_EQ(t.splitK, 1);
  // From two tokens per expert, no K split where the experts' blocks fill
  // every SM twice (W4A8 Qwen3-30B-A3B gate_up), and the 128-row
  // warp-specialized tile only without router weights.
  const InputSchema e4m3{ScalarType::e4m3(), ActScaling::Token, 0};
  for (bool routerWeights : {false, true}) {
    MoeShape qwen{GemmType::Indexed, 128, 8, kMoeFollowingBlockSize,
                  routerWeights};
    Result<std::vector<TileConfig>> a8 =
        selectMoeTiles(w, e4m3, {}, 1536, 2048, h200, qwen);
    ASSERT_TRUE(a8.ok()) << a8.error();
    // One token per expert: the mma_sync tile at the 16-bit one's K depth.
    EXPECT_EQ(a8->front().mMax, 1);
    EXPECT_EQ(a8->front().mma, MmaKind::MmaSync);
    EXPECT_EQ(a8->front().blockK, 256);
    EXPECT_EQ(a8->front().warpK, 32);
    for (const TileConfig &t : *a8) {
      if (t.mMin >= 2 && 128 * (1536 / t.blockN) *
                                 ((t.mMin + t.blockM - 1) / t.blockM) >=
                             2 * h200.smCount)
        EXPECT_EQ(t.splitK, 1) << t.mMin;
      if (routerWeights && t.warpSpecialized)
        EXPECT_LE(t.blockM, 64);
      // No TMA with 8-bit activations (the bulk weights lost there).
      EXPECT_EQ(t.tma, 0u) << t.mMin;
    }
  }
  // The rules, one by one.
  TileConfig t;
  t.blockM = 64;
  MoeShape indexed{GemmType::Indexed, 8, 2, 32};
  EXPECT_EQ(*moeTileProblem(t, indexed, 90),
            "expected block_m to divide block_size (32: a block of rows never "
            "straddles two experts), got block_m = 64");
  t.blockM = 16;
  t.splitK = 4;
  EXPECT_EQ(*moeTileProblem(t, indexed, 90),
            "expected split_k = 1 or a split in a thread block cluster in a "
            "MoE kernel (the workspace holds a dense grid's output tiles), got "
            "split_k = 4 without cluster_split");
  t.clusterSplit = true;
  EXPECT_FALSE(moeTileProblem(t, indexed, 90));
  EXPECT_EQ(*moeTileProblem(t, indexed, 89),
            "cluster_split needs sm_90 or later, got sm_89");
  EXPECT_EQ(selectMoeTiles(w, kF16, {}, 1536, 2048, h200,
                           MoeShape{GemmType::Indexed, 0, 8, 64})
                .error(),
            "expected experts and top_k >= 1, got 0 and 8");
}
