//===- SchemaTest.cpp - The support matrix and operand shapes -------------===//

#include "Humming/Quant/Codec.h"
#include "Humming/Quant/Schema.h"
#include "Formats.h"

#include <gtest/gtest.h>

#include <vector>

using namespace humming;

namespace {
std::vector<InputSchema> allInputs() {
  std::vector<InputSchema> out;
  for (ScalarType t : {ScalarType::f16(), ScalarType::bf16()})
    out.push_back({t, ActScaling::None, 0});
  for (ScalarType t : {ScalarType::e4m3(), ScalarType::e5m2(),
                       ScalarType::sint(8), ScalarType::sint(4),
                       ScalarType::e2m1()})
    out.push_back({t, ActScaling::Token, 0});
  return out;
}

/// The original Humming's check_dtype, restated from its documentation
/// (ORIGINAL.md §1), independently of lib/Quant.
bool originalAccepts(const ScalarType &w, const ScalarType &a, bool zp) {
  if (w.bits > a.bits)
    return false;
  if (w.isInt() && a.isFloat())
    return w.bits <= a.mantissaBits + (zp ? 1 : 2);
  // Humming's first addition: unsigned weights as wide as the integer
  // activations without zero points (the implicit midpoint makes them the
  // signed type offset by it: int8 checkpoints' canonical ui8).
  if (w.isInt() && a.isInt())
    return w.isSigned ? w.bits == a.bits
                      : w.bits < a.bits || (w.bits == a.bits && !zp);
  if (w.isFloat() && a.isInt())
    return false;
  // Humming's second addition: the weight's values must fit the activation
  // type.
  // A finite-only weight format with as many exponent bits as an IEEE
  // activation type uses the exponent the activation keeps for inf (the
  // original decodes e5m0/e5m1 into f16's inf).
  bool fits = !(w.flavor == FloatFlavor::Finite && a.flavor == FloatFlavor::IEEE &&
                w.exponentBits == a.exponentBits);
  return w.exponentBits <= a.exponentBits &&
         w.mantissaBits <= a.mantissaBits && fits;
}
} // namespace

TEST(Schema, WeightTimesActivationMatrixMatchesTheOriginal) {
  int accepted = 0, checked = 0;
  for (const ScalarType &w : test::allWeightFormats()) {
    for (const InputSchema &in : allInputs()) {
      for (bool zp : {false, true}) {
        if (zp && !(w.isInt() && !w.isSigned))
          continue; // zero points need unsigned codes (schema rule)
        WeightSchema ws;
        ws.type = w;
        ws.zeroPoint = zp ? ZeroPointKind::Int : ZeroPointKind::None;
        ASSERT_FALSE(verifyWeightSchema(ws)) << w.str();
        Diag d = verifyCompatibility(ws, in, {}, std::nullopt);
        bool expect = originalAccepts(w, in.type, zp);
        EXPECT_EQ(!d.has_value(), expect)
            << w.str() << " x " << in.type.str() << (zp ? " +zp" : "")
            << ": " << d.value_or("accepted");
        accepted += !d;
        ++checked;
      }
    }
  }
  // A sanity bound so that a rule that accepts or rejects everything fails.
  EXPECT_GT(accepted, checked / 4);
  EXPECT_LT(accepted, checked);
}

TEST(Schema, KnownLegalAndIllegalLayers) {
  auto compat = [](ScalarType w, ScalarType a, ZeroPointKind zp) {
    WeightSchema ws;
    ws.type = w;
    ws.zeroPoint = zp;
    ws.granularity = Granularity::Group;
    ws.groupK = 128;
    InputSchema in{a, a.bits == 16 ? ActScaling::None : ActScaling::Token, 0};
    return !verifyCompatibility(ws, in, {}, std::nullopt);
  };
  EXPECT_TRUE(compat(ScalarType::uint(4), ScalarType::f16(), ZeroPointKind::Int));
  EXPECT_TRUE(compat(ScalarType::uint(8), ScalarType::bf16(), ZeroPointKind::Int));
  EXPECT_TRUE(compat(ScalarType::uint(4), ScalarType::e4m3(), ZeroPointKind::Int));
  EXPECT_FALSE(compat(ScalarType::uint(5), ScalarType::e4m3(), ZeroPointKind::Int));
  EXPECT_TRUE(compat(ScalarType::uint(5), ScalarType::e4m3(), ZeroPointKind::None));
  EXPECT_TRUE(compat(ScalarType::e2m1(), ScalarType::e4m3(), ZeroPointKind::None));
  // Float zero points only on 16-bit activations.
  EXPECT_TRUE(compat(ScalarType::uint(4), ScalarType::f16(), ZeroPointKind::Float));
  EXPECT_FALSE(compat(ScalarType::uint(4), ScalarType::sint(8), ZeroPointKind::Float));
}

TEST(Schema, F16Accumulation) {
  WeightSchema w;
  ComputeOptions c;
  c.f16Accumulation = true;
  InputSchema f16{ScalarType::f16(), ActScaling::None, 0};
  InputSchema bf16{ScalarType::bf16(), ActScaling::None, 0};
  InputSchema e4m3{ScalarType::e4m3(), ActScaling::Token, 0};
  w.type = ScalarType::uint(4);
  EXPECT_FALSE(verifyCompatibility(w, f16, c, std::nullopt));
  EXPECT_TRUE(verifyCompatibility(w, bf16, c, std::nullopt));
  EXPECT_FALSE(verifyCompatibility(w, e4m3, c, std::nullopt));
  w.type = ScalarType::e2m1();
  EXPECT_FALSE(verifyCompatibility(w, e4m3, c, std::nullopt));
  w.type = ScalarType::e3m2();
  EXPECT_FALSE(verifyCompatibility(w, e4m3, c, std::nullopt));
}

TEST(Schema, GroupMinimumFollowsTheActivationWidth) {
  WeightSchema w;
  w.type = ScalarType::uint(2);
  w.granularity = Granularity::Group;
  struct Case {
    InputSchema in;
    int64_t minGroup;
  } cases[] = {{{ScalarType::f16(), ActScaling::None, 0}, 16},
               {{ScalarType::e4m3(), ActScaling::Token, 0}, 32},
               {{ScalarType::sint(4), ActScaling::Token, 0}, 64}};
  for (const Case &c : cases) {
    w.groupK = c.minGroup;
    EXPECT_FALSE(verifyCompatibility(w, c.in, {}, std::nullopt))
        << c.in.type.str();
    w.groupK = c.minGroup / 2;
    Diag d = verifyCompatibility(w, c.in, {}, std::nullopt);
    ASSERT_TRUE(d) << c.in.type.str();
    EXPECT_NE(d->find(">= " + std::to_string(c.minGroup)), std::string::npos)
        << *d;
  }
}

TEST(Schema, CanonicalShapes) {
  WeightSchema w;
  w.type = ScalarType::uint(3);
  w.granularity = Granularity::Group;
  w.groupK = 64;
  w.zeroPoint = ZeroPointKind::Int;
  w.bias = true;
  InputSchema in;
  auto shape = [&](WeightOperand op, bool prepared = false) {
    ShapeOrDiag s = expectedShape(op, w, in, 4096, 2048, prepared);
    EXPECT_FALSE(s.error) << *s.error;
    return s.shape;
  };
  EXPECT_EQ(shape(WeightOperand::Weight), (std::vector<int64_t>{4096, 192}));
  EXPECT_EQ(shape(WeightOperand::Scales), (std::vector<int64_t>{4096, 32}));
  EXPECT_EQ(shape(WeightOperand::ZeroPoints), (std::vector<int64_t>{384, 32}));
  EXPECT_EQ(shape(WeightOperand::Bias), (std::vector<int64_t>{4096}));
  EXPECT_TRUE(expectedShape(WeightOperand::GlobalScale, w, in, 4096, 2048, false).error);
  // Prepared for fp16 activations: 16 k values per row.
  EXPECT_EQ(shape(WeightOperand::Weight, true),
            (std::vector<int64_t>{128, 4096 * 16 * 3 / 32}));
  EXPECT_EQ(shape(WeightOperand::Scales, true), (std::vector<int64_t>{32, 4096}));
  // 3-bit zero points widen to 4-bit lanes.
  EXPECT_EQ(shape(WeightOperand::ZeroPoints, true), (std::vector<int64_t>{32, 512}));

  w.experts = 8;
  EXPECT_EQ(shape(WeightOperand::Weight), (std::vector<int64_t>{8, 4096, 192}));
  w.globalScale = true;
  EXPECT_EQ(shape(WeightOperand::GlobalScale), (std::vector<int64_t>{8}));
}

TEST(Schema, SourceFormatShapes) {
  WeightSchema w;
  w.type = ScalarType::uint(4);
  w.granularity = Granularity::Group;
  w.groupK = 128;
  w.zeroPoint = ZeroPointKind::Int;
  InputSchema in;
  w.format = SourceFormat::GPTQ;
  EXPECT_EQ(expectedShape(WeightOperand::Weight, w, in, 1024, 2048, false).shape,
            (std::vector<int64_t>{256, 1024}));
  EXPECT_EQ(expectedShape(WeightOperand::Scales, w, in, 1024, 2048, false).shape,
            (std::vector<int64_t>{16, 1024}));
  EXPECT_EQ(expectedShape(WeightOperand::ZeroPoints, w, in, 1024, 2048, false).shape,
            (std::vector<int64_t>{16, 128}));
  w.format = SourceFormat::AWQ;
  EXPECT_EQ(expectedShape(WeightOperand::Weight, w, in, 1024, 2048, false).shape,
            (std::vector<int64_t>{2048, 128}));
}

TEST(Schema, BlockScalesRoundUp) {
  WeightSchema w;
  w.type = ScalarType::e4m3();
  w.scaleType = ScalarType::f32();
  w.granularity = Granularity::Block;
  w.groupN = 128;
  w.groupK = 128;
  InputSchema in{ScalarType::e4m3(), ActScaling::Token, 0};
  // Partial blocks count: ceil(2112 / 128) = 17 rows, ceil(7168 / 128) = 56.
  EXPECT_EQ(expectedShape(WeightOperand::Scales, w, in, 2112, 7168, false).shape,
            (std::vector<int64_t>{17, 56}));
}

TEST(Schema, UnrepresentableSizesAreDiagnosed) {
  WeightSchema w;
  w.type = ScalarType::uint(3);
  InputSchema in;
  ShapeOrDiag s = expectedShape(WeightOperand::Weight, w, in, 64, 100, false);
  ASSERT_TRUE(s.error);
  EXPECT_EQ(*s.error,
            "expected K*bits (100*3) to be a multiple of 32 to pack the weight");
  // Sizes past 2^40 (memref types, checkpoints) are refused before the
  // products of sizes, pack factors and widths are formed.
  s = expectedShape(WeightOperand::Weight, w, in, 64, int64_t(1) << 62, false);
  ASSERT_TRUE(s.error);
  EXPECT_EQ(*s.error, "expected N and K in 1 .. 1099511627776, got N = 64, "
                      "K = 4611686018427387904");
  w.experts = int64_t(1) << 50;
  s = expectedShape(WeightOperand::Weight, w, in, 64, 128, false);
  ASSERT_TRUE(s.error);
  EXPECT_EQ(*s.error, "expected experts in 0 .. 1099511627776, got "
                      "1125899906842624");
}

TEST(Schema, AbsentOperandsHaveNoShape) {
  WeightSchema w;
  InputSchema in;
  ShapeOrDiag g = expectedShape(WeightOperand::GlobalScale, w, in, 64, 64, false);
  ASSERT_TRUE(g.error);
  EXPECT_EQ(*g.error, "the schema has no global scale");
  ShapeOrDiag b = expectedShape(WeightOperand::Bias, w, in, 64, 64, false);
  ASSERT_TRUE(b.error);
  EXPECT_EQ(*b.error, "the schema has no bias");
  ShapeOrDiag s = expectedInputScaleShape(in, -1, 64);
  ASSERT_TRUE(s.error);
  EXPECT_EQ(*s.error, "16-bit activations have no activation scale");
  InputSchema grouped{ScalarType::e4m3(), ActScaling::Group, 128};
  EXPECT_EQ(expectedInputScaleShape(grouped, -1, 4000).shape,
            (std::vector<int64_t>{-1, 32}));
}

TEST(Schema, TileConfigMRange) {
  TileConfig t;
  t.mMin = 17;
  t.mMax = 16;
  Diag d = verifyTileConfig(t);
  ASSERT_TRUE(d);
  EXPECT_EQ(*d, "expected the M range [17, 16] to be non-empty");
  t.mMin = 0;
  t.mMax = 0;
  d = verifyTileConfig(t);
  ASSERT_TRUE(d);
  EXPECT_EQ(*d, "expected the M range to start at >= 1, got 0");
}

TEST(Schema, TileRanges) {
  TileConfig a, b;
  a.mMin = 1;
  a.mMax = 16;
  b.mMin = 17;
  b.mMax = 0;
  EXPECT_FALSE(verifyTileRanges({a, b}));
  b.mMin = 18;
  EXPECT_TRUE(verifyTileRanges({a, b}));
  EXPECT_FALSE(verifyTileRanges({}));
}

TEST(Schema, ThreadCountIncludesTheProducerWarpgroup) {
  TileConfig t;
  t.blockM = 128;
  t.blockN = 256;
  t.blockK = 64;
  t.warpM = 64;
  t.warpN = 64;
  t.warpK = 64;
  EXPECT_EQ(t.warps(), 8);
  EXPECT_EQ(t.threads(), 256);
  t.warpSpecialized = true;
  EXPECT_EQ(t.threads(), 384);
}
