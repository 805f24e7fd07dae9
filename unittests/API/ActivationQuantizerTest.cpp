//===- ActivationQuantizerTest.cpp - 8-bit activations without a GPU ------===//
//
// humming::ActivationQuantizer up to the launch: creation errors, a
// compile-only transform per chip (through the pipeline and the kernel
// cache), what the chip lacks, and forward()'s refusals. The kernel itself
// runs against the host reference in the GPU suite (quantize_* cases).
//
//===----------------------------------------------------------------------===//

#include "Humming/API/ActivationQuantizer.h"
#include "TestCache.h"

#include <gtest/gtest.h>

using namespace humming;

namespace {
const InputSchema kE4m3Token{ScalarType::e4m3(), ActScaling::Token, 0};

LayerTarget compileOnly(const std::string &chip) {
  LayerTarget t;
  t.chip = chip;
  t.compileOnly = true;
  return t;
}
} // namespace

TEST(ActivationQuantizer, CreateChecksTheDescription) {
  EXPECT_EQ(ActivationQuantizer::create({ScalarType::f16(), ActScaling::None, 0},
                                        ScalarType::f16(), 4096)
                .error(),
            "expected an 8- or 4-bit input schema to quantize to, got f16 (16-bit "
            "activations are used as they are)");
  EXPECT_EQ(ActivationQuantizer::create(kE4m3Token, ScalarType::e4m3(), 4096)
                .error(),
            "expected f16, bf16 or f32 activations to quantize, got f8E4M3FN");
  EXPECT_EQ(
      ActivationQuantizer::create(kE4m3Token, ScalarType::f16(), 0).error(),
      "expected 1 <= K <= 2^24 activations per row, got 0");
  EXPECT_EQ(ActivationQuantizer::create(kE4m3Token, ScalarType::f16(),
                                        int64_t(1) << 40)
                .error(),
            "expected 1 <= K <= 2^24 activations per row, got 1099511627776");
  EXPECT_EQ(ActivationQuantizer::create(
                {ScalarType::sint(8), ActScaling::Group, 128},
                ScalarType::bf16(), 4000)
                .error(),
            "expected K to be a multiple of the activation group 128, got "
            "K = 4000");
  // Rows of more codes than K (the columns past K zero): at least K, per
  // token or static, an even number of 4-bit codes.
  Result<ActivationQuantizer> padded =
      ActivationQuantizer::create(kE4m3Token, ScalarType::f16(), 4104, 4112);
  ASSERT_TRUE(padded.ok()) << padded.error();
  EXPECT_EQ(padded->codesK(), 4112);
  EXPECT_EQ(ActivationQuantizer::create(kE4m3Token, ScalarType::f16(), 4104)
                ->codesK(),
            4104);
  EXPECT_EQ(
      ActivationQuantizer::create(kE4m3Token, ScalarType::f16(), 4104, 4096)
          .error(),
      "expected K (4104) to 2^24 codes per row, got 4096");
  EXPECT_EQ(
      ActivationQuantizer::create({ScalarType::sint(8), ActScaling::Group, 128},
                                  ScalarType::bf16(), 4096, 4112)
          .error(),
      "expected K (4096) codes per row with per-group scales (K is a "
      "multiple of the group: nothing to pad), got 4112");
  EXPECT_EQ(
      ActivationQuantizer::create({ScalarType::sint(4), ActScaling::Token, 0},
                                  ScalarType::f16(), 4104, 4115)
          .error(),
      "expected an even number of 4-bit codes per row (two per byte), "
      "got 4115");
}

TEST(ActivationQuantizer, PaddedRowsCompile) {
  test::useTestCache();
  // K = 4104 f16 into rows of 4112 e4m3 codes: the kernel's stores are
  // bounded by 4112, its loads by 4104.
  Result<ActivationQuantizer> q =
      ActivationQuantizer::create(kE4m3Token, ScalarType::f16(), 4104, 4112);
  ASSERT_TRUE(q.ok()) << q.error();
  Status s = q->transform(compileOnly("sm_90a"));
  ASSERT_TRUE(s.ok()) << s.error();
  EXPECT_NE(q->ptx().find("4112"), std::string::npos);
  EXPECT_NE(q->ptx().find("4104"), std::string::npos);
}

TEST(ActivationQuantizer, CompileOnlyTransformPerChip) {
  test::useTestCache();
  Result<ActivationQuantizer> q =
      ActivationQuantizer::create(kE4m3Token, ScalarType::bf16(), 4096);
  ASSERT_TRUE(q.ok()) << q.error();
  EXPECT_EQ(q->forward(nullptr, 0, 0, 0, 1).error(),
            "call transform() before forward()");
  for (const char *chip : {"sm_89", "sm_90a"}) {
    for (int pass = 0; pass < 2; ++pass) { // compiled, then from the cache
      Status s = q->transform(compileOnly(chip));
      ASSERT_TRUE(s.ok()) << chip << ": " << s.error();
      EXPECT_EQ(q->kernel().kind, humming::abi::kQuantizeKernel);
      EXPECT_EQ(q->kernel().threads, 128);
      EXPECT_NE(q->ptx().find("cvt.rn.satfinite.e4m3x2.f32"), std::string::npos);
      EXPECT_EQ(q->transformStats().compiled + q->transformStats().cached, 1);
      if (pass == 1)
        EXPECT_EQ(q->transformStats().cached, 1) << chip;
    }
  }
  // The kernel's grid: one block per row along x.
  uint32_t g[3];
  q->kernel().grid(70000, 4096, g);
  EXPECT_EQ(g[0], 70000u);
  EXPECT_EQ(g[1], 1u);
  EXPECT_EQ(g[2], 1u);
  // forward() checks its arguments, then refuses a compile-only transform.
  EXPECT_EQ(q->forward(nullptr, 0x1000, 0x2000, 0x3000, -1).error(),
            "expected 0 <= M <= 2^31 - 1 rows, got -1");
  EXPECT_EQ(q->forward(nullptr, 0, 0x2000, 0x3000, 4).error(),
            "expected device pointers for the activations, the codes and the "
            "scales, got a null pointer");
  EXPECT_EQ(q->forward(nullptr, 0x1008, 0x2000, 0x3000, 4).error(),
            "expected 16-byte aligned activations, 8-byte aligned codes and "
            "4-byte aligned scales, got 0x1008, 0x2000 and 0x3000");
  EXPECT_EQ(q->forward(nullptr, 0x1000, 0x2000, 0x3000, 4).error(),
            "the quantizer was transformed compile-only for sm_90a; transform "
            "it for a device to run it");
}

TEST(ActivationQuantizer, WhatTheChipLacksIsSaidAtTransform) {
  test::useTestCache();
  Result<ActivationQuantizer> q =
      ActivationQuantizer::create(kE4m3Token, ScalarType::f16(), 1024);
  ASSERT_TRUE(q.ok()) << q.error();
  Status s = q->transform(compileOnly("sm_80"));
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().find("f8E4M3FN activations need cvt to fp8 (sm_89 and "
                           "later), got sm_80"),
            std::string::npos)
      << s.error();
  EXPECT_EQ(q->transform(compileOnly("sm_99")).error().rfind(
                "expected a chip among ", 0),
            0u);
  LayerTarget tuned = compileOnly("sm_90a");
  tuned.tileConfig = "#humming.tile_config<block = [16, 64, 64], warp = [16, "
                     "64, 32]>";
  EXPECT_EQ(q->transform(tuned).error(),
            "a tile configuration or the canonical layout applies to a "
            "layer's GEMM kernels; expected neither for the activation "
            "quantizer");
  // int8, int4 and e2m1 codes run everywhere (e2m1 without the sm_100a
  // cvt), the 4-bit ones two per byte.
  for (ScalarType t : {ScalarType::sint(4), ScalarType::e2m1()}) {
    Result<ActivationQuantizer> q4 = ActivationQuantizer::create(
        {t, ActScaling::Token, 0}, ScalarType::bf16(), 1024);
    ASSERT_TRUE(q4.ok()) << q4.error();
    Status s4 = q4->transform(compileOnly("sm_80"));
    EXPECT_TRUE(s4.ok()) << t.str() << ": " << s4.error();
  }
  Result<ActivationQuantizer> s8 = ActivationQuantizer::create(
      {ScalarType::sint(8), ActScaling::Group, 64}, ScalarType::f16(), 1024);
  ASSERT_TRUE(s8.ok()) << s8.error();
  Status ok = s8->transform(compileOnly("sm_80"));
  EXPECT_TRUE(ok.ok()) << ok.error();
}
