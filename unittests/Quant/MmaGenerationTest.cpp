//===- MmaGenerationTest.cpp - The MMA generation table -------------------===//

#include "Humming/Quant/MmaGeneration.h"
#include "Humming/Target/ArchInfo.h"

#include <gtest/gtest.h>

using namespace humming;

namespace {
const MmaKind kAll[] = {MmaKind::MmaSync, MmaKind::Wgmma, MmaKind::Tcgen05,
                        MmaKind::BlockScaled};

TileConfig wgmmaTile() {
  TileConfig t;
  t.mma = MmaKind::Wgmma;
  t.blockM = t.warpM = 64;
  t.blockN = 256;
  t.warpN = 64;
  t.blockK = t.warpK = 64;
  return t;
}
} // namespace

TEST(MmaGeneration, EveryKindHasItsOwnEntryAndName) {
  for (MmaKind k : kAll) {
    const MmaGeneration &g = mmaGeneration(k);
    EXPECT_EQ(g.kind, k);
    EXPECT_STREQ(toString(k), g.name);
  }
  EXPECT_STREQ(mmaGeneration(MmaKind::MmaSync).name, "mma_sync");
  EXPECT_STREQ(mmaGeneration(MmaKind::Wgmma).name, "wgmma");
  EXPECT_STREQ(mmaGeneration(MmaKind::Tcgen05).name, "tcgen05");
  EXPECT_STREQ(mmaGeneration(MmaKind::BlockScaled).name, "block_scaled");
}

TEST(MmaGeneration, ChipsThatHaveEachGeneration) {
  struct Row {
    const char *chip;
    bool mmaSync, wgmma, tcgen05, blockScaled;
  };
  const Row rows[] = {
      {"sm_75", true, false, false, false},
      {"sm_80", true, false, false, false},
      {"sm_89", true, false, false, false},
      {"sm_90", true, false, false, false},
      {"sm_90a", true, true, false, false},
      {"sm_100", true, false, false, false},
      {"sm_100a", true, false, true, false},
      {"sm_100f", true, false, true, false},
      {"sm_103a", true, false, true, false},
      {"sm_110a", true, false, true, false},
      {"sm_120", true, false, false, false},
      {"sm_120a", true, false, false, true},
      {"sm_121a", true, false, false, true},
  };
  for (const Row &r : rows) {
    std::optional<Chip> chip = Chip::parse(r.chip);
    ASSERT_TRUE(chip) << r.chip;
    EXPECT_EQ(chip->supportsMma(MmaKind::MmaSync), r.mmaSync) << r.chip;
    EXPECT_EQ(chip->supportsMma(MmaKind::Wgmma), r.wgmma) << r.chip;
    EXPECT_EQ(chip->supportsMma(MmaKind::Tcgen05), r.tcgen05) << r.chip;
    EXPECT_EQ(chip->supportsMma(MmaKind::BlockScaled), r.blockScaled) << r.chip;
    // Only wgmma's kernels read 8-bit weights K-major; the prepared tile
    // order follows the chip.
    EXPECT_EQ(chip->readsKMajorEightBit(), r.wgmma) << r.chip;
  }
}

TEST(MmaGeneration, NamesOfTheGenerationsWithACapability) {
  EXPECT_EQ(mmaNamesWith(&MmaGeneration::kernels), "mma_sync or wgmma");
  EXPECT_EQ(mmaNamesWith(&MmaGeneration::scaleAfterMma), "mma_sync");
  EXPECT_EQ(mmaNamesWith(&MmaGeneration::producerWarpgroup), "wgmma");
  EXPECT_EQ(mmaNamesWith(&MmaGeneration::tokensOnN), "wgmma or tcgen05");
  EXPECT_EQ(mmaNamesWith(&MmaGeneration::readsMmaSyncLayout),
            "mma_sync or wgmma");
}

TEST(MmaGeneration, GenerationsWithoutKernelsSayWhichHaveThem) {
  TileConfig t = wgmmaTile();
  InputSchema in;
  WeightSchema w;
  for (MmaKind k : {MmaKind::Tcgen05, MmaKind::BlockScaled}) {
    t.mma = k;
    Diag d = mmaGeneration(k).kernelProblem(t, w, in, false);
    ASSERT_TRUE(d);
    EXPECT_EQ(*d, std::string("expected mma = mma_sync or wgmma: Humming's "
                              "kernels do not implement ") +
                      toString(k) + " yet, got mma = " + toString(k));
  }
}

TEST(MmaGeneration, ShapeRulesBelongToTheirGeneration) {
  TileConfig t = wgmmaTile();
  const MmaGeneration &wgmma = mmaGeneration(MmaKind::Wgmma);
  EXPECT_FALSE(wgmma.tileProblem(t));
  t.warpM = 512;
  ASSERT_TRUE(wgmma.tileProblem(t));
  EXPECT_NE(wgmma.tileProblem(t)->find("warp_m <= 256 with wgmma"),
            std::string::npos);
  // The same shape is no concern of mma_sync's tile rules; its kernels
  // take one 16x64 weight tile per warp.
  t.mma = MmaKind::MmaSync;
  EXPECT_FALSE(mmaGeneration(MmaKind::MmaSync).tileProblem(t));
  t.warpM = 64;
  t.warpN = 32;
  Diag d = mmaGeneration(MmaKind::MmaSync)
               .kernelProblem(t, WeightSchema{}, InputSchema{}, false);
  ASSERT_TRUE(d);
  EXPECT_EQ(*d,
            "expected warp_n = 64 (one 16x64 weight tile per warp), got 32");
  // f16 accumulation: wgmma's kernels sum in f32.
  t = wgmmaTile();
  d = wgmma.kernelProblem(t, WeightSchema{}, InputSchema{}, true);
  ASSERT_TRUE(d);
  EXPECT_NE(d->find("accumulate in f32"), std::string::npos);
  EXPECT_FALSE(wgmma.kernelProblem(t, WeightSchema{}, InputSchema{}, false));
}

TEST(MmaGeneration, BlockScaledTakesFp8AndFp4ActivationsOnly) {
  const MmaGeneration &bs = mmaGeneration(MmaKind::BlockScaled);
  InputSchema in;
  in.type = ScalarType::f16();
  ASSERT_TRUE(bs.activationProblem(in));
  EXPECT_EQ(*bs.activationProblem(in),
            "expected fp8 or fp4 activations with block_scaled MMA, got f16");
  for (ScalarType t :
       {ScalarType::e4m3(), ScalarType::e5m2(), ScalarType::e2m1()}) {
    in.type = t;
    EXPECT_FALSE(bs.activationProblem(in)) << t.str();
  }
  in.type = ScalarType::f16();
  for (MmaKind k : {MmaKind::MmaSync, MmaKind::Wgmma, MmaKind::Tcgen05})
    EXPECT_FALSE(mmaGeneration(k).activationProblem(in));
}

TEST(MmaGeneration, SplitKReducesInAClusterWhereTheGenerationDoes) {
  TileConfig t = wgmmaTile();
  t.splitK = 4;
  EXPECT_TRUE(t.splitsInCluster());
  t.workspaceSplit = true;
  EXPECT_FALSE(t.splitsInCluster());
  t.workspaceSplit = false;
  t.mma = MmaKind::MmaSync;
  EXPECT_FALSE(t.splitsInCluster());
  t.clusterSplit = true;
  EXPECT_TRUE(t.splitsInCluster());
}
