//===- DTypeTest.cpp - Scalar type names and properties -------------------===//

#include "Humming/Quant/DType.h"

#include <gtest/gtest.h>

using humming::FloatFlavor;
using humming::ScalarType;

TEST(DType, IntegersRoundTripThroughTheirNames) {
  for (unsigned bits = 1; bits <= 8; ++bits) {
    for (bool isSigned : {false, true}) {
      ScalarType t = isSigned ? ScalarType::sint(bits) : ScalarType::uint(bits);
      std::string name = t.str();
      EXPECT_EQ(name, (isSigned ? "si" : "ui") + std::to_string(bits));
      auto parsed = ScalarType::parse(name);
      ASSERT_TRUE(parsed.has_value()) << name;
      EXPECT_EQ(*parsed, t) << name;
    }
  }
}

TEST(DType, EveryGenericFloatRoundTrips) {
  int count = 0;
  for (unsigned e = 1; e <= 7; ++e) {
    for (unsigned m = 0; 1 + e + m <= 8; ++m) {
      auto t = ScalarType::parse("e" + std::to_string(e) + "m" +
                                 std::to_string(m));
      ASSERT_TRUE(t.has_value()) << e << " " << m;
      EXPECT_EQ(t->bits, 1 + e + m);
      EXPECT_EQ(t->exponentBits, e);
      EXPECT_EQ(t->mantissaBits, m);
      EXPECT_TRUE(t->isSigned);
      auto again = ScalarType::parse(t->str());
      ASSERT_TRUE(again.has_value()) << t->str();
      EXPECT_EQ(*again, *t) << t->str();
      ++count;
    }
  }
  // Sum over e = 1..7 of (8 - e) formats.
  EXPECT_EQ(count, 28);
}

TEST(DType, OcpFormatsUseTheirFlavours) {
  EXPECT_EQ(ScalarType::parse("e4m3")->flavor, FloatFlavor::FN);
  EXPECT_EQ(ScalarType::parse("e5m2")->flavor, FloatFlavor::IEEE);
  EXPECT_EQ(ScalarType::parse("e2m1")->flavor, FloatFlavor::Finite);
  EXPECT_EQ(ScalarType::parse("e3m3")->flavor, FloatFlavor::Finite);
  EXPECT_EQ(ScalarType::e4m3().str(), "f8E4M3FN");
  EXPECT_EQ(ScalarType::e5m2().str(), "f8E5M2");
  EXPECT_EQ(ScalarType::e2m1().str(), "f4E2M1FN");
  EXPECT_EQ(ScalarType::e2m3().str(), "f6E2M3FN");
  EXPECT_EQ(ScalarType::e3m2().str(), "f6E3M2FN");
  EXPECT_EQ(ScalarType::ue8m0().str(), "f8E8M0FNU");
  EXPECT_EQ(ScalarType::parse("e3m3")->str(), "!humming.float<e3m3>");
}

TEST(DType, CheckpointSpellings) {
  EXPECT_EQ(ScalarType::parse("float16"), ScalarType::f16());
  EXPECT_EQ(ScalarType::parse("bfloat16"), ScalarType::bf16());
  EXPECT_EQ(ScalarType::parse("float8_e4m3fn"), ScalarType::e4m3());
  EXPECT_EQ(ScalarType::parse("float8_e8m0fnu"), ScalarType::ue8m0());
  EXPECT_EQ(ScalarType::parse("F8E4M3FN"), ScalarType::e4m3());
  EXPECT_EQ(ScalarType::parse("uint4"), ScalarType::uint(4));
  EXPECT_EQ(ScalarType::parse("int8"), ScalarType::sint(8));
  EXPECT_EQ(ScalarType::parse("float6e3m2"), ScalarType::e3m2());
  EXPECT_EQ(ScalarType::parse("float5e3m1"), ScalarType::floatEM(3, 1));
  EXPECT_EQ(ScalarType::parse("!humming.float<e1m2>"), ScalarType::floatEM(1, 2));
}

TEST(DType, RejectsWhatItDoesNotKnow) {
  for (const char *name :
       {"", "ui0", "ui9", "si16", "e0m3", "e4m4", "e9m0", "float7e3m2", "fp64",
        "f8E4M3FNUZ", "!humming.float<e3m3", "int", "e3", "m3"})
    EXPECT_FALSE(ScalarType::parse(name).has_value()) << name;
}

TEST(DType, Bias) {
  EXPECT_EQ(ScalarType::e4m3().bias(), 7);
  EXPECT_EQ(ScalarType::e5m2().bias(), 15);
  EXPECT_EQ(ScalarType::e2m1().bias(), 1);
  EXPECT_EQ(ScalarType::floatEM(1, 6).bias(), 0);
  EXPECT_EQ(ScalarType::ue8m0().bias(), 127);
}
