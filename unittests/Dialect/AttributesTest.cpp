//===- AttributesTest.cpp - Building humming attributes from C++ ----------===//

#include "Humming/Dialect/Humming/IR/HummingOps.h"
#include "Humming/Quant/Adapters.h"
#include "Humming/Registration.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace mlir::humming;
namespace hq = ::humming;

namespace {
struct Ctx : ::testing::Test {
  Ctx() {
    DialectRegistry registry;
    registerHummingDialects(registry);
    ctx.appendDialectRegistry(registry);
    ctx.loadDialect<HummingDialect>();
  }
  MLIRContext ctx;
};

std::string print(Attribute a) {
  std::string s;
  llvm::raw_string_ostream os(s);
  a.print(os);
  return s;
}
} // namespace

TEST_F(Ctx, EveryKnownDeviceRoundTrips) {
  auto emitError = [&] { return mlir::emitError(UnknownLoc::get(&ctx)); };
  for (const hq::DeviceInfo &d : hq::knownDevices()) {
    TargetAttr t = TargetAttr::getKnown(emitError, &ctx, d.name);
    ASSERT_TRUE(t) << d.name;
    std::string text = print(t);
    EXPECT_EQ(text, "#humming.target<device = \"" + d.name + "\">");
    Attribute parsed = parseAttribute(text, &ctx);
    EXPECT_EQ(parsed, t) << text;
    hq::DeviceInfo back = t.toHost();
    EXPECT_EQ(back.smCount, d.smCount);
    EXPECT_EQ(back.memoryBandwidthGBs, d.memoryBandwidthGBs);
    EXPECT_EQ(back.tflopsFP8, d.tflopsFP8);
  }
}

TEST_F(Ctx, WeightSchemaFromCpp) {
  Builder b(&ctx);
  Type ui4 = IntegerType::get(&ctx, 4, IntegerType::Unsigned);
  WeightSchemaAttr w = WeightSchemaAttr::get(
      &ctx, ui4, Type(b.getF16Type()),
      ScaleGranularity{hq::Granularity::Group, 0, 128},
      hq::ZeroPointKind::Int, false, false, int64_t(0), int64_t(0), int64_t(0),
      hq::SourceFormat::GPTQv2);
  EXPECT_EQ(print(w), "#humming.weight_schema<type = ui4, scale = f16, "
                      "granularity = group<128>, zero_point = int, "
                      "format = gptq_v2>");
  hq::WeightSchema host = w.toHost();
  EXPECT_EQ(host.type, hq::ScalarType::uint(4));
  EXPECT_EQ(host.groupK, 128);
  EXPECT_EQ(host.format, hq::SourceFormat::GPTQv2);
  EXPECT_EQ(parseAttribute(print(w), &ctx), w);
}

TEST_F(Ctx, HostRoundTrips) {
  auto emitError = [&] { return mlir::emitError(UnknownLoc::get(&ctx)); };
  hq::WeightSchema w;
  w.type = hq::ScalarType::e2m1();
  w.scaleType = hq::ScalarType::e4m3();
  w.granularity = hq::Granularity::GroupTensor;
  w.groupK = 16;
  w.experts = 256;
  w.bias = true;
  WeightSchemaAttr wa = WeightSchemaAttr::fromHost(emitError, &ctx, w);
  ASSERT_TRUE(wa);
  hq::WeightSchema back = wa.toHost();
  EXPECT_EQ(back.type, w.type);
  EXPECT_EQ(back.scaleType, w.scaleType);
  EXPECT_EQ(back.granularity, w.granularity);
  EXPECT_EQ(back.groupK, 16);
  EXPECT_EQ(back.experts, 256);
  EXPECT_TRUE(back.bias);

  hq::InputSchema in{hq::ScalarType::e4m3(), hq::ActScaling::Group, 128};
  InputSchemaAttr ia = InputSchemaAttr::fromHost(emitError, &ctx, in);
  ASSERT_TRUE(ia);
  EXPECT_EQ(print(ia),
            "#humming.input_schema<type = f8E4M3FN, scaling = group<128>>");

  hq::TileConfig t;
  t.mMin = 17;
  t.mMax = 0;
  t.mma = hq::MmaKind::Wgmma;
  t.blockM = 128;
  t.blockN = 256;
  t.warpM = 128;
  t.warpN = 32;
  t.tma = hq::TmaA | hq::TmaB;
  t.mbarrier = true;
  TileConfigAttr ta = TileConfigAttr::fromHost(emitError, &ctx, t);
  ASSERT_TRUE(ta);
  EXPECT_EQ(print(ta), "#humming.tile_config<m = [17, inf], block = [128, 256, "
                       "64], warp = [128, 32, 64], mma = wgmma, mbarrier = "
                       "true, tma = [a, b]>");
  EXPECT_EQ(ta.toHost().tma, t.tma);
}

TEST_F(Ctx, CheckedConstructionReportsTheRule) {
  std::string message;
  auto emitError = [&] { return mlir::emitError(UnknownLoc::get(&ctx)); };
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &d) {
    message = d.str();
    return success();
  });
  hq::WeightSchema w;
  w.type = hq::ScalarType::e4m3();
  w.zeroPoint = hq::ZeroPointKind::Int;
  EXPECT_FALSE(WeightSchemaAttr::fromHost(emitError, &ctx, w));
  EXPECT_EQ(message, "expected an unsigned integer weight type with a zero "
                     "point, got f8E4M3FN");
  hq::TileConfig t;
  t.stages = 1;
  EXPECT_FALSE(TileConfigAttr::fromHost(emitError, &ctx, t));
  EXPECT_EQ(message, "expected stages >= 2, got 1");
}

TEST_F(Ctx, TargetFactsFromCpp) {
  std::string message;
  auto emitErrorFn = [&] { return mlir::emitError(UnknownLoc::get(&ctx)); };
  llvm::function_ref<InFlightDiagnostic()> emitError = emitErrorFn;
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &d) {
    message = d.str();
    return success();
  });
  auto make = [&](int64_t sms, double fp8) {
    return TargetAttr::getChecked(emitError, &ctx, StringRef("Lab"),
                                  StringRef("sm_90a"), 80u, sms, Real(3000.0),
                                  int64_t(227), int64_t(50), Real(900.0),
                                  Real(900.0), Real(fp8), Real(0.0), Real(0.0),
                                  Real(0.0));
  };
  EXPECT_TRUE(make(100, 1800.0));
  EXPECT_FALSE(make(0, 1800.0));
  EXPECT_EQ(message, "expected positive sms, bandwidth, smem and l2, got 0, "
                     "3000, 227, 50");
  EXPECT_FALSE(make(100, -1.0));
  EXPECT_EQ(message, "expected non-negative throughputs, got -1");
}

TEST_F(Ctx, HostSchemaTextIsTheAttributeText) {
  // humming-inspect prints schemas without MLIR; the text must be what the
  // dialect prints and parses.
  auto emitError = [&] { return mlir::emitError(UnknownLoc::get(&ctx)); };
  std::vector<hq::WeightSchema> schemas;
  for (hq::Granularity g :
       {hq::Granularity::Channel, hq::Granularity::Group, hq::Granularity::Block,
        hq::Granularity::Tensor, hq::Granularity::GroupTensor}) {
    hq::WeightSchema w;
    w.granularity = g;
    w.type = g == hq::Granularity::Block ? hq::ScalarType::e4m3()
                                         : hq::ScalarType::uint(3);
    w.scaleType = g == hq::Granularity::Block || g == hq::Granularity::Tensor
                      ? hq::ScalarType::f32()
                      : hq::ScalarType::e4m3();
    w.groupN = g == hq::Granularity::Block ? 128 : 0;
    w.groupK = g == hq::Granularity::Channel || g == hq::Granularity::Tensor ? 0 : 64;
    schemas.push_back(w);
    w.bias = true;
    w.experts = 4;
    w.padN = 8;
    w.padK = 16;
    w.globalScale = true;
    schemas.push_back(w);
  }
  hq::WeightSchema zp;
  zp.type = hq::ScalarType::uint(4);
  zp.granularity = hq::Granularity::Group;
  zp.groupK = 128;
  zp.zeroPoint = hq::ZeroPointKind::Int;
  zp.format = hq::SourceFormat::GPTQv2;
  schemas.push_back(zp);
  zp.zeroPoint = hq::ZeroPointKind::Float;
  zp.format = hq::SourceFormat::Canonical;
  zp.type = *hq::ScalarType::parse("ui6");
  schemas.push_back(zp);
  for (const hq::WeightSchema &w : schemas) {
    WeightSchemaAttr a = WeightSchemaAttr::fromHost(emitError, &ctx, w);
    ASSERT_TRUE(a) << hq::formatWeightSchema(w);
    EXPECT_EQ(print(a), hq::formatWeightSchema(w));
  }
  for (hq::InputSchema in :
       {hq::InputSchema{hq::ScalarType::f16(), hq::ActScaling::None, 0},
        hq::InputSchema{hq::ScalarType::e4m3(), hq::ActScaling::Token, 0},
        hq::InputSchema{hq::ScalarType::sint(8), hq::ActScaling::Static, 0},
        hq::InputSchema{hq::ScalarType::sint(4), hq::ActScaling::Group, 128}}) {
    InputSchemaAttr a = InputSchemaAttr::fromHost(emitError, &ctx, in);
    ASSERT_TRUE(a);
    EXPECT_EQ(print(a), hq::formatInputSchema(in));
  }
}

TEST_F(Ctx, ScalarTypeConversions) {
  for (const char *name : {"ui1", "si8", "f16", "bf16", "f32", "f8E4M3FN",
                           "f8E5M2", "f4E2M1FN", "f6E2M3FN", "f6E3M2FN",
                           "f8E8M0FNU", "!humming.float<e3m3>"}) {
    Type t = parseType(name, &ctx);
    ASSERT_TRUE(t) << name;
    std::optional<hq::ScalarType> s = toScalarType(t);
    ASSERT_TRUE(s) << name;
    EXPECT_EQ(s->str(), name);
    EXPECT_EQ(toMLIRType(&ctx, *s), t) << name;
  }
  EXPECT_FALSE(toScalarType(Float8E4M3FNUZType::get(&ctx)));
  EXPECT_FALSE(toScalarType(Float64Type::get(&ctx)));
  // Signless integers are signed.
  EXPECT_EQ(toScalarType(IntegerType::get(&ctx, 8)), hq::ScalarType::sint(8));
}
