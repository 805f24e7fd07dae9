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
  // fp8 mma.sync: emulated by ptxas on sm_90 (the kernels take f16 MMAs),
  // through the block-scaled form on the sm_120 family's a / f targets
  // (the block-scaled instruction exists there only), plain elsewhere.
  EXPECT_TRUE(Chip::parse("sm_90a")->emulatesFp8MmaSync());
  EXPECT_FALSE(Chip::parse("sm_89")->emulatesFp8MmaSync());
  for (const char *name : {"sm_120a", "sm_121a", "sm_120f", "sm_121f"})
    EXPECT_TRUE(Chip::parse(name)->blockScaledFp8MmaSync()) << name;
  for (const char *name : {"sm_120", "sm_121", "sm_89", "sm_90a", "sm_100a"})
    EXPECT_FALSE(Chip::parse(name)->blockScaledFp8MmaSync()) << name;
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

TEST(ArchInfo, ActivationChoiceFollowsTheKernels) {
  // The requested activations where a kernel runs them; else the fallback,
  // with each rejected candidate's reason.
  const Chip h200 = *Chip::parse("sm_90a"), l40s = *Chip::parse("sm_89");
  WeightSchema fp8 = WeightSchema::make(ScalarType::e4m3(), ScalarType::f16(),
                                        Granularity::Channel);
  InputSchema token{ScalarType::e4m3(), ActScaling::Token, 0};
  ActivationChoice c = chooseActivation(fp8, token, h200, true, 8192, 8192);
  EXPECT_EQ(c.input.type, ScalarType::e4m3());
  EXPECT_EQ(c.fallbackReason, "");
  // sm_89: the mma_sync m16n8k32 kernels; sm_80 has no fp8 MMA.
  c = chooseActivation(fp8, token, l40s, true, 8192, 8192);
  EXPECT_EQ(c.input.type, ScalarType::e4m3());
  EXPECT_EQ(c.fallbackReason, "");
  const Chip a100 = *Chip::parse("sm_80"), t4 = *Chip::parse("sm_75");
  c = chooseActivation(fp8, token, a100, true, 8192, 8192);
  EXPECT_EQ(c.input.type, ScalarType::f16());
  EXPECT_EQ(c.fallbackReason,
            "f8E4M3FN activations: expected sm_89 or newer, got sm_80");
  // The mma_sync kernels take 16-bit group scales only.
  WeightSchema f32g = WeightSchema::make(ScalarType::uint(4), ScalarType::f32(),
                                         Granularity::Group, 128);
  c = chooseActivation(f32g, token, l40s, true, 4096, 4096);
  EXPECT_EQ(c.input.type, ScalarType::f16());
  EXPECT_EQ(c.fallbackReason,
            "f8E4M3FN activations: the mma_sync kernels apply group scales to "
            "each iteration's sums per output column (scale_after_mma) and "
            "expect f16 or bf16 group scales with f8E4M3FN activations, got "
            "f32");
  EXPECT_EQ(chooseActivation(f32g, token, h200, true, 4096, 4096).input.type,
            ScalarType::e4m3());
  // What the prepared layout does not hold with them (groups of 32).
  WeightSchema g32 = WeightSchema::make(ScalarType::uint(4), ScalarType::f16(),
                                        Granularity::Group, 32);
  c = chooseActivation(g32, token, h200, false, 4096, 4096);
  EXPECT_EQ(c.input.type, ScalarType::bf16());
  EXPECT_NE(c.fallbackReason.find("expects groups of at least 64, got 32"),
            std::string::npos)
      << c.fallbackReason;
  // Without sizes the layout is not asked.
  EXPECT_EQ(chooseActivation(g32, token, h200, false).input.type,
            ScalarType::e4m3());
  // si8 activations run in the s8 wgmma kernels on sm_90a and the s8
  // m16n8k32 ones from sm_80; si4 ones only where int4 tensor cores are
  // (sm_80-sm_89), else they fall to the next candidate.
  WeightSchema u4 = WeightSchema::make(ScalarType::uint(4), ScalarType::f16(),
                                       Granularity::Channel);
  const InputSchema i8{ScalarType::sint(8), ActScaling::Token, 0};
  c = chooseActivation(u4, i8, h200, true, 4096, 4096);
  EXPECT_EQ(c.input.type, ScalarType::sint(8));
  EXPECT_TRUE(c.fallbackReason.empty()) << c.fallbackReason;
  c = chooseActivation(u4, i8, l40s, true, 4096, 4096);
  EXPECT_EQ(c.input.type, ScalarType::sint(8));
  EXPECT_TRUE(c.fallbackReason.empty()) << c.fallbackReason;
  c = chooseActivation(u4, i8, a100, true, 4096, 4096);
  EXPECT_EQ(c.input.type, ScalarType::sint(8));
  c = chooseActivation(u4, i8, t4, true, 4096, 4096);
  EXPECT_EQ(c.input.type, ScalarType::f16());
  EXPECT_EQ(c.fallbackReason, "si8 activations: the kernels of 8-bit "
                              "activations need sm_80 or newer (m16n8k32), "
                              "got sm_75");
  c = chooseActivation(WeightSchema::make(ScalarType::uint(3),
                                          ScalarType::f16(),
                                          Granularity::Channel),
                       {ScalarType::sint(4), ActScaling::Token, 0}, h200, true,
                       4096, 4096);
  EXPECT_EQ(c.input.type, ScalarType::e4m3());
  EXPECT_EQ(c.fallbackReason, "si4 activations: int4 tensor cores are "
                              "sm_80-sm_89 only, got sm_90a");
  // si4 (W4A4 int) where the chip has int4 MMAs and the layout holds it:
  // 4-bit integer weights without zero points.
  const InputSchema i4{ScalarType::sint(4), ActScaling::Token, 0};
  c = chooseActivation(u4, i4, l40s, true, 4096, 4096);
  EXPECT_EQ(c.input.type, ScalarType::sint(4));
  EXPECT_TRUE(c.fallbackReason.empty()) << c.fallbackReason;
  EXPECT_EQ(chooseActivation(u4, i4, a100, true, 4096, 4096).input.type,
            ScalarType::sint(4));
  c = chooseActivation(WeightSchema::make(ScalarType::uint(3),
                                          ScalarType::f16(),
                                          Granularity::Channel),
                       i4, a100, true, 4096, 4096);
  EXPECT_EQ(c.input.type, ScalarType::sint(8)); // no fp8 MMA on sm_80
  EXPECT_NE(c.fallbackReason.find("si4 activations: the prepared mma_sync "
                                  "layout takes 4-bit integer weights without "
                                  "zero points"),
            std::string::npos)
      << c.fallbackReason;
}
