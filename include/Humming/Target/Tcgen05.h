//===- Tcgen05.h - Host model of the tcgen05 (UMMA) descriptors -*- C++ -*-===//
//
// The sm_100 family's tcgen05.mma takes two operands the NVVM dialect does
// not build for us in full: the 32-bit instruction descriptor (no op makes
// it) and the 64-bit shared-memory matrix descriptor (nvvm.tcgen05.
// mma_smem_desc packs one from values, but nothing checks the values). No
// Blackwell GPU can be lent to us, so a wrong bit would only show on a
// user's machine: these are the one place that encodes them, field by
// field after the PTX ISA's tables ("Instruction descriptor" for .kind::
// f16/tf32/f8f6f4/i8 and for the block-scaled kinds; "Shared memory
// descriptor" of tcgen05), checked bit for bit in
// unittests/Target/Tcgen05Test.cpp, with diagnostics for every value a
// field cannot hold. No MLIR dependency: the lowering emits the encoded
// constants.
//
// Instruction descriptor, dense kinds (bit: field):
//   0-1 sparsity selector, 2 sparse, 3 saturate (i8), 4-5 D type (f16 0,
//   f32 1, s32 2), 7-9 A type, 10-12 B type, 13 negate A, 14 negate B,
//   15 A MN-major (0: K-major), 16 B MN-major, 17-22 N >> 3, 24-28 M >> 4,
//   30-31 max shift (.ws only).
// Block-scaled kinds (mxf8f6f4, mxf4, mxf4nvf4): 4-5 B scale-factor id,
//   7-16 as above, 17-22 N >> 3, 23 scale type (ue4m3 0, ue8m0 1), 24-28
//   M >> 4, 29-30 A scale-factor id.
// Type codes: kind::f16 f16 0, bf16 1; kind::tf32 tf32 2; kind::f8f6f4 and
//   mxf8f6f4 e4m3 0, e5m2 1, e2m3 3, e3m2 4, e2m1 5; kind::i8 u8 0, s8 1;
//   mxf4 / mxf4nvf4 e2m1 1.
// Shared-memory descriptor: 0-13 start address >> 4, 16-29 leading-
//   dimension byte offset >> 4, 32-45 stride-dimension byte offset >> 4,
//   46-48 fixed constant 0b001, 49-51 matrix base offset, 52 leading-
//   dimension stride mode (0 relative, 1 absolute), 61-63 swizzle (none 0,
//   128-byte with 32-byte atoms 1, 128-byte 2, 64-byte 4, 32-byte 6).
//
//===----------------------------------------------------------------------===//

#ifndef HUMMING_TARGET_TCGEN05_H
#define HUMMING_TARGET_TCGEN05_H

#include "Humming/Quant/DType.h"
#include "Humming/Quant/Result.h"

#include <cstdint>

namespace humming::tcgen05 {

/// tcgen05.mma's .kind.
enum class Kind { F16, Tf32, F8F6F4, I8, MxF8F6F4, MxF4, MxF4NvF4 };
const char *toString(Kind k);
inline bool blockScaled(Kind k) {
  return k == Kind::MxF8F6F4 || k == Kind::MxF4 || k == Kind::MxF4NvF4;
}

/// What one tcgen05.mma computes: D[M, N] (+)= A[M, K] B[K, N] with A and B
/// of `a` / `b` (tf32 is written f32), D of `d`, on `ctaGroup` CTAs (2: the
/// pair of a cluster shares the MMA, M counts both), and, block-scaled,
/// scale factors of `scale` (ue8m0; or e4m3 for NVFP4's ue4m3) at byte
/// `scaleIdA` / `scaleIdB` of their tensor-memory words.
struct Mma {
  Kind kind = Kind::F16;
  ScalarType a = ScalarType::f16(), b = ScalarType::f16();
  ScalarType d = ScalarType::f32();
  int64_t m = 128, n = 128;
  int ctaGroup = 1;
  bool aMnMajor = false, bMnMajor = false;
  bool negateA = false, negateB = false;
  bool saturate = false;
  ScalarType scale = ScalarType::ue8m0();
  int scaleIdA = 0, scaleIdB = 0;
};

/// The 32-bit instruction descriptor of `mma`, or what a field cannot
/// hold (the type a kind does not take, an M or N outside the shapes
/// Humming issues, a flag the kind has no bit for).
Result<uint32_t> instructionDescriptor(const Mma &mma);

/// CUtensorMap-independent swizzle of a shared-memory matrix descriptor.
enum class Swizzle : uint8_t {
  None = 0,
  B128Atom32 = 1, ///< 128-byte swizzle with 32-byte atomicity
  B128 = 2,
  B64 = 4,
  B32 = 6,
};

/// A shared-memory matrix operand: its address and the byte offsets
/// between core matrices along the leading (K for K-major) and stride
/// dimensions, the base offset of a swizzled pattern that does not start
/// on its repeat boundary, and the swizzle.
struct SmemMatrix {
  uint32_t address = 0;
  uint32_t leadingBytes = 0, strideBytes = 0;
  unsigned baseOffset = 0;
  bool absoluteLeading = false;
  Swizzle swizzle = Swizzle::B128;
};

/// The 64-bit shared-memory descriptor of `m`, or what a field cannot hold
/// (addresses and offsets are 16-byte units of 14 bits: below 256 KiB).
Result<uint64_t> smemDescriptor(const SmemMatrix &m);

/// The fields of an encoded shared-memory descriptor (the inverse of
/// smemDescriptor for every value it accepts).
SmemMatrix decodeSmemDescriptor(uint64_t desc);

} // namespace humming::tcgen05

#endif // HUMMING_TARGET_TCGEN05_H
