//===- ArchInfoTest.cpp - Chips and known devices -------------------------===//

#include "Humming/Target/ArchInfo.h"

#include <gtest/gtest.h>

using namespace humming;

TEST(ArchInfo, ParsesEveryChipPtxasKnows) {
  for (const char *name :
       {"sm_75", "sm_80", "sm_86", "sm_87", "sm_88", "sm_89", "sm_90",
        "sm_90a", "sm_100", "sm_100a", "sm_100f", "sm_103a", "sm_103f",
        "sm_110a", "sm_120", "sm_120a", "sm_120f", "sm_121a"}) {
    auto chip = Chip::parse(name);
    ASSERT_TRUE(chip) << name;
    EXPECT_EQ(chip->str(), name);
    EXPECT_GE(chip->minPtxVersion(), 63u) << name;
    EXPECT_LE(chip->minPtxVersion(), kMaxPtxVersion) << name;
  }
}

TEST(ArchInfo, RejectsUnknownChips) {
  for (const char *name : {"sm_70", "sm_80a", "sm_90f", "sm_101", "sm_90ab",
                           "sm90", "sm_", "compute_90", "", "sm_1000"})
    EXPECT_FALSE(Chip::parse(name)) << name;
}

TEST(ArchInfo, MmaFamilies) {
  EXPECT_TRUE(Chip::parse("sm_80")->supportsMma(MmaKind::MmaSync));
  EXPECT_FALSE(Chip::parse("sm_90")->supportsMma(MmaKind::Wgmma));
  EXPECT_TRUE(Chip::parse("sm_90a")->supportsMma(MmaKind::Wgmma));
  EXPECT_TRUE(Chip::parse("sm_100a")->supportsMma(MmaKind::Tcgen05));
  EXPECT_TRUE(Chip::parse("sm_103f")->supportsMma(MmaKind::Tcgen05));
  EXPECT_FALSE(Chip::parse("sm_100")->supportsMma(MmaKind::Tcgen05));
  EXPECT_TRUE(Chip::parse("sm_120a")->supportsMma(MmaKind::BlockScaled));
  EXPECT_FALSE(Chip::parse("sm_120a")->supportsMma(MmaKind::Tcgen05));
  EXPECT_EQ(Chip::parse("sm_90a")->minPtxVersion(), 80u);
  EXPECT_EQ(Chip::parse("sm_100f")->minPtxVersion(), 88u);
}

TEST(ArchInfo, DeviceTableIsConsistent) {
  ASSERT_GE(knownDevices().size(), 10u);
  for (const DeviceInfo &d : knownDevices()) {
    auto chip = Chip::parse(d.chip);
    ASSERT_TRUE(chip) << d.name;
    EXPECT_GT(d.smCount, 0) << d.name;
    EXPECT_GT(d.memoryBandwidthGBs, 0) << d.name;
    EXPECT_GT(d.l2MB, 0) << d.name;
    EXPECT_GT(d.tflopsF16, 0) << d.name;
    EXPECT_LE(d.smemPerSmKB * 1024, chip->maxSharedMemoryPerBlock()) << d.name;
    // fp8 tensor cores arrived with sm_89, fp4 with sm_100.
    if (chip->sm < 89)
      EXPECT_EQ(d.tflopsFP8, 0) << d.name;
    if (chip->sm < 100)
      EXPECT_EQ(d.tflopsFP4, 0) << d.name;
    EXPECT_EQ(lookupDevice(d.name), &d);
  }
}

TEST(ArchInfo, LookupIgnoresCaseSpacesAndDashes) {
  ASSERT_TRUE(lookupDevice("h200"));
  EXPECT_EQ(lookupDevice("h200")->name, "H200");
  EXPECT_EQ(lookupDevice("RTX-5090")->name, "RTX 5090");
  EXPECT_EQ(lookupDevice("rtx5090")->name, "RTX 5090");
  EXPECT_EQ(lookupDevice("H20")->name, "H20"); // not H200
  EXPECT_FALSE(lookupDevice("H300"));
  EXPECT_EQ(lookupDevice("H200")->smCount, 132);
}

TEST(ArchInfo, ActivationMinimumSm) {
  EXPECT_EQ(minSmForActivation(ScalarType::f16()), 75u);
  EXPECT_EQ(minSmForActivation(ScalarType::sint(8)), 75u);
  EXPECT_EQ(minSmForActivation(ScalarType::bf16()), 80u);
  EXPECT_EQ(minSmForActivation(ScalarType::sint(4)), 80u);
  EXPECT_EQ(minSmForActivation(ScalarType::e4m3()), 89u);
  EXPECT_EQ(minSmForActivation(ScalarType::e2m1()), 120u);
  InputSchema fp8{ScalarType::e4m3(), ActScaling::Token, 0};
  EXPECT_TRUE(verifyOnChip(*Chip::parse("sm_86"), fp8, {}, std::nullopt,
                           std::nullopt));
  EXPECT_FALSE(verifyOnChip(*Chip::parse("sm_89"), fp8, {}, std::nullopt,
                            std::nullopt));
}
