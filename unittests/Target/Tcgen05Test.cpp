//===- Tcgen05Test.cpp - tcgen05 descriptors, bit for bit -----------------===//
//
// Every field of the instruction and shared-memory descriptors at the bits
// the PTX ISA's tables give it (Tcgen05.h lists them), whole descriptors of
// the MMAs a kernel would issue written out by hand from those tables, and
// the diagnostic of every value a field cannot hold. No Blackwell GPU runs
// here or on the device machine: this is what stands between a wrong bit
// and a user's B200.
//
//===----------------------------------------------------------------------===//

#include "Humming/Target/Tcgen05.h"

#include <gtest/gtest.h>

#include <string>

using namespace humming;
using namespace humming::tcgen05;

namespace {

uint32_t encode(const Mma &m) {
  Result<uint32_t> d = instructionDescriptor(m);
  EXPECT_TRUE(bool(d)) << d.error();
  return d ? *d : 0;
}

std::string refusal(const Mma &m) {
  Result<uint32_t> d = instructionDescriptor(m);
  EXPECT_FALSE(bool(d)) << "accepted: 0x" << std::hex << *d;
  return d ? "" : d.error();
}

Mma bf16(int64_t m, int64_t n) {
  Mma x;
  x.a = x.b = ScalarType::bf16();
  x.m = m;
  x.n = n;
  return x;
}

TEST(Tcgen05Test, WholeInstructionDescriptors) {
  // bf16 x bf16 -> f32, 128 x 256, both K-major: D f32 (1 << 4), A and B
  // bf16 (1 << 7, 1 << 10), N / 8 = 32 at bit 17, M / 16 = 8 at bit 24.
  EXPECT_EQ(encode(bf16(128, 256)), 0x08400490u);
  // The same with f16 (type 0), A negated (bit 13), and tf32 (type 2).
  Mma h = bf16(128, 256);
  h.a = h.b = ScalarType::f16();
  EXPECT_EQ(encode(h), 0x08400010u);
  h.negateA = true;
  EXPECT_EQ(encode(h), 0x08402010u);
  Mma t = bf16(128, 256);
  t.kind = Kind::Tf32;
  t.a = t.b = ScalarType::f32();
  EXPECT_EQ(encode(t), 0x08400910u);
  // f16 -> f16, 64 x 8: only N / 8 = 1 and M / 16 = 4.
  Mma f16;
  f16.d = ScalarType::f16();
  f16.m = 64;
  f16.n = 8;
  EXPECT_EQ(encode(f16), 0x04020000u);
  // e4m3 x e5m2 -> f32, 128 x 16, both MN-major.
  Mma f8;
  f8.kind = Kind::F8F6F4;
  f8.a = ScalarType::e4m3();
  f8.b = ScalarType::e5m2();
  f8.n = 16;
  f8.aMnMajor = f8.bMnMajor = true;
  EXPECT_EQ(encode(f8), 0x08058410u);
  // s8 x u8 -> s32 saturated, 128 x 32.
  Mma i8;
  i8.kind = Kind::I8;
  i8.a = ScalarType::sint(8);
  i8.b = ScalarType::uint(8);
  i8.d = ScalarType::sint(32);
  i8.n = 32;
  i8.saturate = true;
  EXPECT_EQ(encode(i8), 0x080800A8u);
  // NVFP4: e2m1 x e2m1 with ue4m3 scales (type 0 at bit 23), scale ids A 2
  // (bits 29-30) and B 3 (bits 4-5), 128 x 256.
  Mma nv;
  nv.kind = Kind::MxF4NvF4;
  nv.a = nv.b = ScalarType::e2m1();
  nv.scale = ScalarType::e4m3();
  nv.n = 256;
  nv.scaleIdA = 2;
  nv.scaleIdB = 3;
  EXPECT_EQ(encode(nv), 0x484004B0u);
  // MXFP8 on two CTAs: e4m3 x e4m3, ue8m0 (bit 23), 256 x 256.
  Mma mx;
  mx.kind = Kind::MxF8F6F4;
  mx.a = mx.b = ScalarType::e4m3();
  mx.ctaGroup = 2;
  mx.m = 256;
  mx.n = 256;
  EXPECT_EQ(encode(mx), 0x10C00000u);
}

TEST(Tcgen05Test, EachFieldAtItsBits) {
  // Against f16 x f16 -> f16, 64 x 8 (0x04020000), one field at a time.
  Mma base;
  base.d = ScalarType::f16();
  base.m = 64;
  base.n = 8;
  const uint32_t b = encode(base);
  auto delta = [&](Mma m) { return encode(m) ^ b; };
  Mma x = base;
  x.d = ScalarType::f32();
  EXPECT_EQ(delta(x), 1u << 4);
  x = base;
  x.a = ScalarType::bf16();
  EXPECT_EQ(delta(x), 1u << 7);
  x = base;
  x.b = ScalarType::bf16();
  EXPECT_EQ(delta(x), 1u << 10);
  x = base;
  x.negateA = true;
  EXPECT_EQ(delta(x), 1u << 13);
  x = base;
  x.negateB = true;
  EXPECT_EQ(delta(x), 1u << 14);
  x = base;
  x.aMnMajor = true;
  EXPECT_EQ(delta(x), 1u << 15);
  x = base;
  x.bMnMajor = true;
  EXPECT_EQ(delta(x), 1u << 16);
  x = base;
  x.n = 256; // 32 instead of 1 in bits 17-22
  EXPECT_EQ(delta(x), (32u ^ 1u) << 17);
  x = base;
  x.m = 128; // 8 instead of 4 in bits 24-28 (N = 16 there: 2 for 1)
  x.n = 16;
  EXPECT_EQ(delta(x), ((8u ^ 4u) << 24) | ((2u ^ 1u) << 17));
  // f8f6f4 type codes in bits 7-9 (A) and 10-12 (B).
  Mma f8;
  f8.kind = Kind::F8F6F4;
  f8.a = f8.b = ScalarType::e4m3();
  const uint32_t f8base = encode(f8);
  const std::pair<ScalarType, uint32_t> codes[] = {
      {ScalarType::e5m2(), 1}, {ScalarType::e2m3(), 3},
      {ScalarType::e3m2(), 4}, {ScalarType::e2m1(), 5}};
  for (const auto &[t, code] : codes) {
    Mma y = f8;
    y.a = t;
    EXPECT_EQ(encode(y) ^ f8base, code << 7) << t.str();
    y = f8;
    y.b = t;
    EXPECT_EQ(encode(y) ^ f8base, code << 10) << t.str();
  }
  // Block-scaled: B's scale id in bits 4-5, A's in 29-30, the type at 23.
  Mma mx;
  mx.kind = Kind::MxF4;
  mx.a = mx.b = ScalarType::e2m1();
  const uint32_t mxbase = encode(mx);
  EXPECT_EQ(mxbase & (1u << 23), 1u << 23); // ue8m0
  EXPECT_EQ(mxbase & 0x380u, 1u << 7);      // e2m1 is 1 with mxf4
  Mma y = mx;
  y.scaleIdB = 3;
  EXPECT_EQ(encode(y) ^ mxbase, 3u << 4);
  y = mx;
  y.scaleIdA = 3;
  EXPECT_EQ(encode(y) ^ mxbase, 3u << 29);
}

TEST(Tcgen05Test, InstructionDescriptorRefusals) {
  Mma m = bf16(128, 128);
  m.a = ScalarType::e4m3();
  EXPECT_EQ(refusal(m), "expected A and B of f16 or bf16 with kind::f16, got "
                        "f8E4M3FN and bf16");
  m = bf16(96, 128);
  EXPECT_EQ(refusal(m), "expected M = 64 or 128 for a cta_group::1 kind::f16 "
                        "MMA, got M = 96");
  m = bf16(64, 128);
  m.ctaGroup = 2;
  EXPECT_EQ(refusal(m), "expected M = 128 or 256 for a cta_group::2 "
                        "kind::f16 MMA, got M = 64");
  m = bf16(128, 24);
  EXPECT_EQ(refusal(m), "expected N to be a multiple of 16 from 16 to 256 "
                        "with M = 128, got N = 24");
  m = bf16(64, 264);
  EXPECT_EQ(refusal(m), "expected N to be a multiple of 8 from 8 to 256 with "
                        "M = 64, got N = 264");
  m = bf16(128, 128);
  m.ctaGroup = 3;
  EXPECT_EQ(refusal(m), "expected cta_group 1 or 2, got 3");
  m = bf16(128, 128);
  m.saturate = true;
  EXPECT_EQ(refusal(m), "expected no saturation with kind::f16 (only "
                        "kind::i8 saturates)");
  m = bf16(128, 128);
  m.d = ScalarType::bf16();
  EXPECT_EQ(refusal(m), "expected D of f16 or f32 with kind::f16, got bf16");
  Mma tf;
  tf.kind = Kind::Tf32;
  tf.a = tf.b = ScalarType::f32();
  tf.d = ScalarType::f16();
  EXPECT_EQ(refusal(tf), "expected D of f32 with kind::tf32, got f16");
  Mma i8;
  i8.kind = Kind::I8;
  i8.a = i8.b = ScalarType::sint(8);
  EXPECT_EQ(refusal(i8), "expected D of si32 with kind::i8, got f32");
  i8.d = ScalarType::sint(32);
  i8.negateA = true;
  EXPECT_EQ(refusal(i8), "expected no negation with kind::i8");
  Mma f4;
  f4.kind = Kind::F8F6F4;
  f4.a = ScalarType::e2m1();
  f4.b = ScalarType::e4m3();
  f4.aMnMajor = true;
  EXPECT_EQ(refusal(f4), "expected K-major A and B of 4- and 6-bit types, "
                         "got an MN-major f4E2M1FN");
  Mma mx;
  mx.kind = Kind::MxF8F6F4;
  mx.a = mx.b = ScalarType::e4m3();
  mx.m = 64;
  EXPECT_EQ(refusal(mx), "expected M = 128 for a cta_group::1 kind::mxf8f6f4 "
                         "MMA, got M = 64");
  mx.m = 128;
  mx.scale = ScalarType::e4m3();
  EXPECT_EQ(refusal(mx), "expected ue8m0 scale factors with kind::mxf8f6f4, "
                         "got f8E4M3FN");
  mx.scale = ScalarType::ue8m0();
  mx.scaleIdA = 4;
  EXPECT_EQ(refusal(mx), "expected scale-factor ids 0 .. 3 (a byte of the "
                         "tensor-memory word), got 4 and 0");
  Mma nv;
  nv.kind = Kind::MxF4NvF4;
  nv.a = nv.b = ScalarType::e2m1();
  nv.scale = ScalarType::e5m2();
  EXPECT_EQ(refusal(nv), "expected ue8m0 or e4m3 (ue4m3) scale factors with "
                         "kind::mxf4nvf4, got f8E5M2");
  nv.scale = ScalarType::e4m3();
  nv.d = ScalarType::f16();
  EXPECT_EQ(refusal(nv), "expected D of f32 with kind::mxf4nvf4, got f16");
}

TEST(Tcgen05Test, SmemDescriptorFields) {
  SmemMatrix m;
  m.address = 0x400;     // 64 units
  m.leadingBytes = 16;   // 1 unit
  m.strideBytes = 1024;  // 64 units
  m.swizzle = Swizzle::B128;
  Result<uint64_t> d = smemDescriptor(m);
  ASSERT_TRUE(bool(d)) << d.error();
  EXPECT_EQ(*d, 0x40ull | (1ull << 16) | (0x40ull << 32) | (1ull << 46) |
                    (2ull << 61));
  // The largest of each field, the base offset and the absolute mode.
  m.address = m.leadingBytes = m.strideBytes = (1u << 18) - 16;
  m.baseOffset = 7;
  m.absoluteLeading = true;
  m.swizzle = Swizzle::B32;
  d = smemDescriptor(m);
  ASSERT_TRUE(bool(d)) << d.error();
  EXPECT_EQ(*d, 0x3fffull | (0x3fffull << 16) | (0x3fffull << 32) |
                    (1ull << 46) | (7ull << 49) | (1ull << 52) | (6ull << 61));
  SmemMatrix back = decodeSmemDescriptor(*d);
  EXPECT_EQ(back.address, m.address);
  EXPECT_EQ(back.leadingBytes, m.leadingBytes);
  EXPECT_EQ(back.strideBytes, m.strideBytes);
  EXPECT_EQ(back.baseOffset, 7u);
  EXPECT_TRUE(back.absoluteLeading);
  EXPECT_EQ(back.swizzle, Swizzle::B32);
  for (Swizzle s : {Swizzle::None, Swizzle::B128Atom32, Swizzle::B64}) {
    SmemMatrix x;
    x.swizzle = s;
    Result<uint64_t> e = smemDescriptor(x);
    ASSERT_TRUE(bool(e));
    EXPECT_EQ(*e >> 61, uint64_t(s));
    EXPECT_EQ(decodeSmemDescriptor(*e).swizzle, s);
  }
}

TEST(Tcgen05Test, SmemDescriptorRefusals) {
  SmemMatrix m;
  m.address = 8;
  Result<uint64_t> d = smemDescriptor(m);
  ASSERT_FALSE(bool(d));
  EXPECT_EQ(d.error(), "expected the start address to be a multiple of 16 "
                       "bytes below 256 KiB (14 bits of 16-byte units), got 8");
  m = SmemMatrix{};
  m.strideBytes = 1u << 18;
  d = smemDescriptor(m);
  ASSERT_FALSE(bool(d));
  EXPECT_NE(d.error().find("stride-dimension byte offset"), std::string::npos);
  m = SmemMatrix{};
  m.leadingBytes = 24;
  d = smemDescriptor(m);
  ASSERT_FALSE(bool(d));
  EXPECT_NE(d.error().find("leading-dimension byte offset"), std::string::npos);
  m = SmemMatrix{};
  m.baseOffset = 8;
  d = smemDescriptor(m);
  ASSERT_FALSE(bool(d));
  EXPECT_EQ(d.error(), "expected a matrix base offset of 0 .. 7, got 8");
  m = SmemMatrix{};
  m.swizzle = Swizzle(3);
  d = smemDescriptor(m);
  ASSERT_FALSE(bool(d));
  EXPECT_EQ(d.error(), "expected swizzle 0 (none), 1 (128-byte, 32-byte "
                       "atoms), 2 (128-byte), 4 (64-byte) or 6 (32-byte), "
                       "got 3");
}

} // namespace
