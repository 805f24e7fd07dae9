//===- PreparedDequant.cpp - Dequantization in the prepared kernels -------===//
//
// Dequantization works on pairs: one shift and mask place both codes of a
// pair in the two 16-bit lanes of a register; integers become (code - zero)
// by the magic-number trick (codes OR-ed into the mantissa of 1024 or 128,
// one packed subtraction), floats by moving their exponent and mantissa into
// place and one packed multiply by 2^(bias difference); then one packed
// multiply by the group scale (with f16 accumulation also by the channel
// scale, so the f16 sums stay in range). Every MMA generation feeds its
// fragments from dequantPair.
//
//===----------------------------------------------------------------------===//

#include "PreparedEmitter.h"

#include <cmath>

using namespace mlir;
using namespace mlir::humming;
namespace hq = ::humming;
namespace L = ::humming::layout;

Value PreparedEmitter::scaleBits(Value word, int64_t slot) {
  const hq::ScalarType &t = spec.weight.scaleType;
  if (t.bits == 16) {
    Value v = slot % 2 ? arith::ShRUIOp::create(b, word, c32(16)) : word;
    return arith::AndIOp::create(b, v, c32(0xFFFF));
  }
  // 8-bit scales: exact in the activation type (PreparedLayout::supports).
  Value code = arith::AndIOp::create(
      b, arith::ShRUIOp::create(b, word, c32(8 * (slot % 4))), c32(0xFF));
  return actBits(smallFloatToF32(code, t));
}

Value PreparedEmitter::splatConst(double v) {
  APFloat f(v);
  bool lost;
  f.convert(bf16 ? APFloat::BFloat() : APFloat::IEEEhalf(),
            APFloat::rmNearestTiesToEven, &lost);
  uint32_t bits = uint32_t(f.bitcastToAPInt().getZExtValue());
  return asAct2(c32(int64_t(bits | (bits << 16))));
}

void PreparedEmitter::beginDequant() {
  const hq::WeightSchema &w = spec.weight;
  const unsigned bits = w.type.bits;
  constZero = Value();
  if (w.type.isInt() && w.zeroPoint == hq::ZeroPointKind::None)
    constZero = splatConst((bf16 ? 128.0 : 1024.0) + double(1u << (bits - 1)));
}

Value PreparedEmitter::scaleHalfAsF32(Value word, int64_t half) {
  Type scaleElem = spec.weight.scaleType == hq::ScalarType::bf16()
                       ? Type(b.getBF16Type())
                       : Type(b.getF16Type());
  Value bits16 = arith::TruncIOp::create(
      b, i16, half ? Value(arith::ShRUIOp::create(b, word, c32(16))) : word);
  Value h = arith::BitcastOp::create(b, scaleElem, bits16);
  return arith::ExtFOp::create(b, f32, h);
}

void PreparedEmitter::loadColumnScales(GroupData &g) {
  assert(g.columnScaleAt && "readGroup left no scale address");
  Stage v;
  pushWords(g.columnScaleAt, 4, /*alignment=*/16, v);
  for (int64_t j = 0; j < 8; ++j)
    g.columnScale[size_t(j)] = scaleHalfAsF32(v[size_t(j / 2)], j % 2);
}

void PreparedEmitter::readGroup(function_ref<Value()> next, GroupData &g,
                                bool scales) {
  const hq::WeightSchema &w = spec.weight;
  const unsigned bits = w.type.bits;
  uint32_t magicBits = bf16 ? 0x4300u : 0x6400u;
  g.zeroVec.resize(8);
  g.scaleVec.resize(8);
  g.columnScale.resize(16);
  if (!scales) {
    // The caller read the scale words.
  } else if (perKScales && postScale && weightsAsA) {
    // The slot address of the lane's 8 scales (prepared columns 8 g ..+8:
    // its B columns 8 j + g), loaded where they are used
    // (loadColumnScales).
    g.columnScaleAt = next();
  } else if (perKScales && postScale) {
    // Prepared column 16 q + 8 e + j is the C column 8 j + 2 q + e.
    SmallVector<Value> v;
    for (int64_t i = 0; i < 8; ++i)
      v.push_back(next());
    for (int64_t e = 0; e < 2; ++e)
      for (int64_t j = 0; j < 8; ++j) {
        int64_t x = 8 * e + j;
        g.columnScale[size_t(2 * j + e)] = scaleHalfAsF32(v[size_t(x / 2)], x % 2);
      }
  } else if (perKScales) {
    SmallVector<Value> v;
    for (int64_t i = 0; i < int64_t(w.scaleType.bits) / 4; ++i)
      v.push_back(next());
    for (int64_t j = 0; j < 8; ++j) {
      int64_t perWord = 32 / w.scaleType.bits;
      g.scaleVec[j] = asAct2(splat16(scaleBits(v[j / perWord], j % perWord)));
    }
  }
  if (w.zeroPoint == hq::ZeroPointKind::Float) {
    SmallVector<Value> v;
    for (int64_t i = 0; i < 4; ++i)
      v.push_back(next());
    for (int64_t j = 0; j < 8; ++j) {
      Value word = v[j / 2];
      Value h = j % 2 ? arith::ShRUIOp::create(b, word, c32(16)) : word;
      g.zeroVec[j] = asAct2(splat16(h));
    }
  } else if (w.zeroPoint == hq::ZeroPointKind::Int) {
    int64_t zb = L::zeroPointBits(bits);
    SmallVector<Value> v;
    for (int64_t i = 0; i < zb / 4; ++i)
      v.push_back(next());
    for (int64_t j = 0; j < 8; ++j) {
      Value word = v[(j * zb) / 32];
      Value z = arith::AndIOp::create(
          b, arith::ShRUIOp::create(b, word, c32((j * zb) % 32)),
          c32((1 << zb) - 1));
      // magic + z exactly: z fits the mantissa (PreparedLayout::supports).
      // (8-bit codes with bf16: z - 128, exact in bf16, through f32's
      // 2^23 + z once per group.)
      if (wideIntInBf16()) {
        Value zf = arith::SubFOp::create(
            b,
            arith::BitcastOp::create(
                b, f32, arith::OrIOp::create(b, z, c32(0x4B000000))),
            cf(8388608.0 + 128.0));
        g.zeroVec[j] = asAct2(splat16(actBits(zf)));
      } else {
        g.zeroVec[j] =
            asAct2(splat16(arith::OrIOp::create(b, z, c32(magicBits))));
      }
    }
  }
}

Value PreparedEmitter::dequantPair(ArrayRef<SmallVector<Value>> planeWords,
                                   const GroupData &g, int q, double plus) {
  const hq::WeightSchema &w = spec.weight;
  const unsigned bits = w.type.bits;
  bool isInt = w.type.isInt();
  assert((plus == 0 || (isInt && w.zeroPoint != hq::ZeroPointKind::Float &&
                        (act8 || !perKScales))) &&
         "dequantPair adds `plus` to unscaled integer codes only");
  uint32_t magicBits = bf16 ? 0x4300u : 0x6400u;
  double magic = bf16 ? 128.0 : 1024.0;
  // The pair's code fields from every plane (shifted down to bit 0 of both
  // lanes, masked, moved up to the plane's shift), OR-ed into `into` (the
  // magic number) or alone. With `into`, a field that is not moved up goes
  // in with its mask in one lop3. (Float codes are masked again after:
  // there the opaque lop3 would stop LLVM folding the masks, 8 more PTX
  // instructions in the e3m2 kernel.)
  auto pairBits = [&](int q, Value into) {
    Value pair = into;
    for (size_t pi = 0; pi < planes.size(); ++pi) {
      const L::Plane &p = planes[pi];
      Value word = planeWords[pi][q / int(16 / p.width)];
      if (unsigned at = L::pairBit(p, q))
        word = arith::ShRUIOp::create(b, word, c32(at));
      const uint32_t mask = ((1u << p.width) - 1) * 0x10001u;
      if (into && !p.shift) {
        pair = ptx.maskOr(word, mask, pair);
        continue;
      }
      Value v = arith::AndIOp::create(b, word, c32(int64_t(mask)));
      if (p.shift)
        v = arith::ShLIOp::create(b, v, c32(p.shift));
      pair = pair ? arith::OrIOp::create(b, pair, v) : v;
    }
    return pair;
  };
  // Single-plane integer codes without zero points: the pair at bit
  // r = pb % span of the word shifted right by pb - r is masked in place
  // and OR-ed into the magic number's mantissa (magic + code 2^r, exact
  // while r + width fits the mantissa), then one fma by 2^-r subtracts
  // magic 2^-r + zero (exact: every term is an integer below 2^11). One
  // shift per `span` bits of a word instead of one per pair (for 4-bit
  // codes in f16: shifts by 0 and 8 serve all four pairs).
  const unsigned mantissa = bf16 ? 7 : 10;
  const bool inPlace = isInt && w.zeroPoint == hq::ZeroPointKind::None &&
                       planes.size() == 1 && planes[0].shift == 0 &&
                       planes[0].width <= mantissa;
  const unsigned width = planes[0].width;
  const unsigned span = inPlace ? ((mantissa - width) / width + 1) * width : 0;
  auto inPlacePair = [&](int q) -> Value {
    const L::Plane &p = planes[0];
    Value word = planeWords[0][q / int(16 / p.width)];
    unsigned pb = L::pairBit(p, q), r = pb % span;
    if (pb != r)
      word = arith::ShRUIOp::create(b, word, c32(pb - r));
    Value v = asAct2(ptx.maskOr(word, (((1u << width) - 1) << r) * 0x10001u,
                                c32(int64_t(magicBits * 0x10001u))));
    if (r == 0)
      return Value(arith::SubFOp::create(
          b, v,
          plus != 0 ? splatConst(magic + double(1u << (bits - 1)) - plus)
                    : constZero));
    double inv = std::ldexp(1.0, -int(r));
    double offset = plus - (magic * inv + double(1u << (bits - 1)));
    return Value(
        LLVM::FMAOp::create(b, v, splatConst(inv), splatConst(offset)));
  };
  int j = q / 2;
  Value v;
  if (wideIntInBf16()) {
    assert(plus == 0 && planes.size() == 1 && planes[0].width == 8 &&
           "8-bit codes are one plane; `plus` serves 8-bit activations");
    // Each lane's code c = 128 h + l (h its bit 7): l in 128's mantissa
    // (one lop3), and 0x4380 (256) with bit 7 flipped by h — 128 where h
    // is set — as what to subtract (and + xor: one lop3 for ptxas); their
    // difference is l - 128 + 128 h = c - 128, exact (|c - 128| <= 128).
    Value word = planeWords[0][size_t(q / 2)];
    if (unsigned at = L::pairBit(planes[0], q))
      word = arith::ShRUIOp::create(b, word, c32(at));
    Value low = asAct2(ptx.maskOr(word, 0x007F007Fu, c32(0x43004300)));
    Value less = asAct2(arith::XOrIOp::create(
        b, arith::AndIOp::create(b, word, c32(0x00800080)),
        c32(0x43804380)));
    v = arith::SubFOp::create(b, low, less);
    if (w.zeroPoint == hq::ZeroPointKind::Int)
      // c - 128 - (z - 128): exact (|c - z| <= 255, 8 significant bits).
      v = arith::SubFOp::create(b, v, g.zeroVec[j]);
    else if (w.zeroPoint == hq::ZeroPointKind::Float)
      v = arith::SubFOp::create(
          b, arith::AddFOp::create(b, v, splatConst(128.0)), g.zeroVec[j]);
  } else if (inPlace) {
    v = inPlacePair(q);
  } else if (isInt) {
    v = asAct2(pairBits(q, c32(int64_t(magicBits * 0x10001u))));
    if (w.zeroPoint == hq::ZeroPointKind::Float) {
      v = arith::SubFOp::create(b, v, splatConst(magic));
      v = arith::SubFOp::create(b, v, g.zeroVec[j]);
    } else if (w.zeroPoint == hq::ZeroPointKind::Int) {
      v = arith::SubFOp::create(b, v, g.zeroVec[j]);
      if (plus != 0)
        v = arith::AddFOp::create(b, v, splatConst(plus));
    } else {
      v = arith::SubFOp::create(
          b, v,
          plus != 0 ? splatConst(magic + double(1u << (bits - 1)) - plus)
                    : constZero);
    }
  } else {
    Value pair = pairBits(q, Value());
    // Float codes: exponent and mantissa moved under the activation's,
    // the sign to bit 15; the value is then off by 2^(bias difference).
    unsigned m = w.type.mantissaBits, e = w.type.exponentBits;
    unsigned actM = bf16 ? 7 : 10;
    uint32_t magMask = ((1u << (e + m)) - 1) * 0x10001u;
    uint32_t signMask = (1u << (e + m)) * 0x10001u;
    Value mag = arith::ShLIOp::create(
        b, arith::AndIOp::create(b, pair, c32(int64_t(magMask))),
        c32(actM - m));
    Value sign = arith::ShLIOp::create(
        b, arith::AndIOp::create(b, pair, c32(int64_t(signMask))),
        c32(15 - (e + m)));
    v = asAct2(arith::OrIOp::create(b, mag, sign));
    int actBias = bf16 ? 127 : 15;
    v = arith::MulFOp::create(
        b, v, splatConst(std::ldexp(1.0, actBias - w.type.bias())));
  }
  // (8-bit activations: group scales multiply the f32 sums.)
  if (perKScales && !postScale && !act8)
    v = arith::MulFOp::create(b, v, g.scaleVec[j]);
  else if (loopChannelScales)
    v = arith::MulFOp::create(b, v, channelScaleVec[j]);
  return bf16 ? asI32(v) : v;
}

Value PreparedEmitter::eightBitWord(ArrayRef<SmallVector<Value>> planeWords,
                                    const GroupData &g, int q) {
  assert(q % 2 == 0 && "an 8-bit register holds pairs q and q + 1");
  const int64_t flip = int64_t(0x80808080u);
  if (integerSums()) {
    // 8-bit codes (value + 128: eightBitIntCodes) -> two's complement.
    if (eightBitIntCodes())
      return arith::XOrIOp::create(b, planeWords[0][size_t(q / 2)], c32(flip));
    // Narrower integers: the pair's exact f16 values v (|v| < 128) plus
    // 1152 = 1024 + 128 (added with the zero point's subtraction) have
    // v + 128 in their low bytes (f16's unit is 1 on [1024, 2048)); bytes
    // 0 and 2 of the two pairs, sign bits flipped.
    auto biased = [&](int p) -> Value {
      return asI32(dequantPair(planeWords, g, p, /*plus=*/1152.0));
    };
    Value w = NVVM::PermuteOp::create(b, i32, biased(q), biased(q + 1),
                                      c32(0x6240), NVVM::PermuteMode::DEFAULT);
    return arith::XOrIOp::create(b, w, c32(flip));
  }
  if (eightBitWordsAsStored())
    return planeWords[0][size_t(q / 2)];
  Type f8 = spec.input.type == ::humming::ScalarType::e4m3()
                ? Type(b.getType<Float8E4M3FNType>())
                : Type(b.getType<Float8E5M2Type>());
  auto converted = [&](int p) -> Value {
    Value pair = dequantPair(planeWords, g, p);
    Value bits = NVVM::ConvertF16x2ToF8x2Op::create(
        b, b.getI16Type(), pair, /*relu=*/false, f8);
    return arith::ExtUIOp::create(b, i32, bits);
  };
  // cvt puts element e of the f16x2 in byte e; the permute interleaves
  // the two pairs as an 8-bit plane word holds them.
  return NVVM::PermuteOp::create(b, i32, converted(q), converted(q + 1),
                                 c32(0x5140), NVVM::PermuteMode::DEFAULT);
}
