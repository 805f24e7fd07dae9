//===- Tcgen05.cpp - Host model of the tcgen05 (UMMA) descriptors ---------===//

#include "Humming/Target/Tcgen05.h"


namespace humming::tcgen05 {

const char *toString(Kind k) {
  switch (k) {
  case Kind::F16:
    return "f16";
  case Kind::Tf32:
    return "tf32";
  case Kind::F8F6F4:
    return "f8f6f4";
  case Kind::I8:
    return "i8";
  case Kind::MxF8F6F4:
    return "mxf8f6f4";
  case Kind::MxF4:
    return "mxf4";
  case Kind::MxF4NvF4:
    return "mxf4nvf4";
  }
  return "?";
}

namespace {

/// The A/B type code of `t` for `kind`, or -1 where the kind has none.
int typeCode(Kind kind, const ScalarType &t) {
  switch (kind) {
  case Kind::F16:
    return t == ScalarType::f16() ? 0 : t == ScalarType::bf16() ? 1 : -1;
  case Kind::Tf32:
    return t == ScalarType::f32() ? 2 : -1;
  case Kind::F8F6F4:
  case Kind::MxF8F6F4:
    return t == ScalarType::e4m3()   ? 0
           : t == ScalarType::e5m2() ? 1
           : t == ScalarType::e2m3() ? 3
           : t == ScalarType::e3m2() ? 4
           : t == ScalarType::e2m1() ? 5
                                     : -1;
  case Kind::I8:
    return t == ScalarType::uint(8) ? 0 : t == ScalarType::sint(8) ? 1 : -1;
  case Kind::MxF4:
  case Kind::MxF4NvF4:
    return t == ScalarType::e2m1() ? 1 : -1;
  }
  return -1;
}

const char *typesOf(Kind kind) {
  switch (kind) {
  case Kind::F16:
    return "f16 or bf16";
  case Kind::Tf32:
    return "tf32 (written f32)";
  case Kind::F8F6F4:
  case Kind::MxF8F6F4:
    return "f8E4M3FN, f8E5M2, f6E2M3FN, f6E3M2FN or f4E2M1FN";
  case Kind::I8:
    return "ui8 or si8";
  case Kind::MxF4:
  case Kind::MxF4NvF4:
    return "f4E2M1FN";
  }
  return "?";
}

} // namespace

Result<uint32_t> instructionDescriptor(const Mma &mma) {
  const char *kind = toString(mma.kind);
  const int a = typeCode(mma.kind, mma.a), b = typeCode(mma.kind, mma.b);
  if (a < 0 || b < 0)
    return Error{concat("expected A and B of ", typesOf(mma.kind),
                        " with kind::", kind, ", got ", mma.a.str(), " and ",
                        mma.b.str())};
  // D: f16 or f32 for the float kinds without block scaling (f32 only for
  // tf32), f32 with block scaling, s32 for i8.
  int d = -1;
  if (mma.kind == Kind::I8)
    d = mma.d == ScalarType::sint(32) ? 2 : -1;
  else if (mma.d == ScalarType::f32())
    d = 1;
  else if (mma.d == ScalarType::f16() &&
           (mma.kind == Kind::F16 || mma.kind == Kind::F8F6F4))
    d = 0;
  if (d < 0)
    return Error{concat("expected D of ",
                        mma.kind == Kind::I8 ? "si32"
                        : mma.kind == Kind::F16 || mma.kind == Kind::F8F6F4
                            ? "f16 or f32"
                            : "f32",
                        " with kind::", kind, ", got ", mma.d.str())};
  if (mma.ctaGroup != 1 && mma.ctaGroup != 2)
    return Error{concat("expected cta_group 1 or 2, got ", mma.ctaGroup)};
  // The shapes Humming issues (a subset of the ISA's): one CTA M = 64
  // (dense kinds) or 128, two CTAs M = 128 or 256; N a multiple of 8 up to
  // 256 for M = 64, of 16 otherwise.
  const bool m64 = mma.m == 64 && mma.ctaGroup == 1 && !blockScaled(mma.kind);
  const bool mOk = m64 || (mma.ctaGroup == 1 && mma.m == 128) ||
                   (mma.ctaGroup == 2 && (mma.m == 128 || mma.m == 256));
  if (!mOk)
    return Error{concat(
        "expected M = ",
        mma.ctaGroup == 2 ? "128 or 256"
        : blockScaled(mma.kind) ? "128"
                                : "64 or 128",
        " for a cta_group::", mma.ctaGroup, " kind::", kind, " MMA, got M = ",
        mma.m)};
  const int64_t nStep = m64 ? 8 : 16;
  if (mma.n < nStep || mma.n > 256 || mma.n % nStep != 0)
    return Error{concat("expected N to be a multiple of ", nStep, " from ",
                        nStep, " to 256 with M = ", mma.m, ", got N = ",
                        mma.n)};
  if (mma.saturate && mma.kind != Kind::I8)
    return Error{concat("expected no saturation with kind::", kind,
                        " (only kind::i8 saturates)")};
  // MN-major operands: only 8- and 16-bit (and tf32) ones.
  auto mnMajorOk = [&](const ScalarType &t) {
    return t.bits == 8 || t.bits == 16 || t == ScalarType::f32();
  };
  if ((mma.aMnMajor && !mnMajorOk(mma.a)) ||
      (mma.bMnMajor && !mnMajorOk(mma.b)))
    return Error{concat("expected K-major A and B of 4- and 6-bit types, got "
                        "an MN-major ",
                        mma.aMnMajor && !mnMajorOk(mma.a) ? mma.a.str()
                                                          : mma.b.str())};
  if ((mma.negateA || mma.negateB) &&
      (mma.kind == Kind::I8 || mma.kind == Kind::MxF4 ||
       mma.kind == Kind::MxF4NvF4))
    return Error{concat("expected no negation with kind::", kind)};
  uint32_t desc = 0;
  desc |= uint32_t(a) << 7;
  desc |= uint32_t(b) << 10;
  desc |= uint32_t(mma.negateA) << 13;
  desc |= uint32_t(mma.negateB) << 14;
  desc |= uint32_t(mma.aMnMajor) << 15;
  desc |= uint32_t(mma.bMnMajor) << 16;
  desc |= uint32_t(mma.n >> 3) << 17;
  desc |= uint32_t(mma.m >> 4) << 24;
  if (!blockScaled(mma.kind)) {
    desc |= uint32_t(mma.saturate) << 3;
    desc |= uint32_t(d) << 4;
    return desc;
  }
  // Block-scaled: the scale type and the scale factors' byte ids.
  int scale = -1;
  if (mma.scale.isE8M0())
    scale = 1;
  else if (mma.scale == ScalarType::e4m3() && mma.kind == Kind::MxF4NvF4)
    scale = 0;
  if (scale < 0)
    return Error{concat("expected ",
                        mma.kind == Kind::MxF4NvF4 ? "ue8m0 or e4m3 (ue4m3)"
                                                   : "ue8m0",
                        " scale factors with kind::", kind, ", got ",
                        mma.scale.str())};
  if (mma.scaleIdA < 0 || mma.scaleIdA > 3 || mma.scaleIdB < 0 ||
      mma.scaleIdB > 3)
    return Error{concat("expected scale-factor ids 0 .. 3 (a byte of the "
                        "tensor-memory word), got ",
                        mma.scaleIdA, " and ", mma.scaleIdB)};
  desc |= uint32_t(mma.scaleIdB) << 4;
  desc |= uint32_t(scale) << 23;
  desc |= uint32_t(mma.scaleIdA) << 29;
  return desc;
}

Result<uint64_t> smemDescriptor(const SmemMatrix &m) {
  // 14 bits of 16-byte units.
  auto field = [](const char *what, uint32_t bytes) -> Result<uint64_t> {
    if (bytes % 16 != 0 || bytes >= (uint32_t(1) << 18))
      return Error{concat("expected the ", what,
                          " to be a multiple of 16 bytes below 256 KiB (14 "
                          "bits of 16-byte units), got ",
                          bytes)};
    return uint64_t(bytes >> 4);
  };
  Result<uint64_t> start = field("start address", m.address);
  if (!start)
    return start;
  Result<uint64_t> lead = field("leading-dimension byte offset", m.leadingBytes);
  if (!lead)
    return lead;
  Result<uint64_t> stride =
      field("stride-dimension byte offset", m.strideBytes);
  if (!stride)
    return stride;
  if (m.baseOffset > 7)
    return Error{concat("expected a matrix base offset of 0 .. 7, got ",
                        m.baseOffset)};
  switch (m.swizzle) {
  case Swizzle::None:
  case Swizzle::B128Atom32:
  case Swizzle::B128:
  case Swizzle::B64:
  case Swizzle::B32:
    break;
  default:
    return Error{concat("expected swizzle 0 (none), 1 (128-byte, 32-byte "
                        "atoms), 2 (128-byte), 4 (64-byte) or 6 (32-byte), "
                        "got ",
                        unsigned(m.swizzle))};
  }
  uint64_t desc = *start;
  desc |= *lead << 16;
  desc |= *stride << 32;
  desc |= uint64_t(1) << 46; // bits 46-48: the fixed constant 0b001
  desc |= uint64_t(m.baseOffset) << 49;
  desc |= uint64_t(m.absoluteLeading) << 52;
  desc |= uint64_t(m.swizzle) << 61;
  return desc;
}

SmemMatrix decodeSmemDescriptor(uint64_t desc) {
  SmemMatrix m;
  m.address = uint32_t(desc & 0x3fff) << 4;
  m.leadingBytes = uint32_t((desc >> 16) & 0x3fff) << 4;
  m.strideBytes = uint32_t((desc >> 32) & 0x3fff) << 4;
  m.baseOffset = unsigned((desc >> 49) & 7);
  m.absoluteLeading = (desc >> 52) & 1;
  m.swizzle = Swizzle(uint8_t((desc >> 61) & 7));
  return m;
}

} // namespace humming::tcgen05
