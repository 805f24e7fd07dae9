//===- WeightQuantizeKernel.cpp - Weight quantization on the device -------===//
//
// humming.quantize with a weight schema: round-to-nearest of fp weights into
// canonical integer (or float) codes with group or channel scales, the host's
// humming::quantizeWeights (Quantize.cpp) bit for bit, so that a layer
// quantized on the GPU holds exactly the tensors the host would have made
// (the GPU suite compares them). The host quantizes in f64 from the values
// given; the kernel reads f16, bf16 or f32 weights, whose values f64 holds
// exactly, and repeats the host's f64 operations one for one (IEEE division,
// round-half-even by adding and subtracting 2^52, no contraction):
//
//   lo, hi, amax over the group (NaN ignored; starting from 0: padding
//     counts), exact in f32;
//   raw = (hi - lo) / (2^b - 1) with zero points, else amax / qmax
//     (qmax = 2^(b-1) - 1, 1 for one bit);
//   s = raw rounded to the scale type (nearest even, saturated, the
//     smallest positive value for an underflow; 1 where raw is not positive
//     and finite);
//   zero point: 2^(b-1) for unsigned codes without one, round(-lo / s)
//     clamped to the codes (integer), or -lo / s rounded to the parameter
//     type (float);
//   code = round(w / s) + zp (integer zero points, implicit ones), round(w /
//     s + zp) (float zero points), clamped to the codes; signed codes
//     clamped to [-2^(b-1), 2^(b-1) - 1] in two's complement; a NaN weight
//     gives code 0.
//
// One warp per scale group (row r of expert e, group g: groupK columns, or
// the padded row for channel scales, a multiple of 32; groups of 16 go two
// to a warp, each half-warp reducing its own) and grid-stride step.
// Pass 1 reads the group 32 columns at a time (lane l column c0 + 32 j + l)
// and reduces lo / hi / amax over the warp by shuffles; pass 2 reads it
// again (from L1 / L2) and converts: the 32 codes of a step are exactly b
// words of the row's bit stream (32 b bits), which lanes 0 .. b-1 assemble
// by shuffles and store. The group's first lane stores the scale and the
// zero point (integer zero points are bits of a stream along N shared by
// rows: one or two atomic ORs into a buffer the module's Clear kernel
// zeroed first).
//
// Float codes (e4m3, e5m2, e2m1: symmetric, raw = amax / the format's
// largest value, the code the host's encode makes of w / s), e8m0 scales
// (2^ceil(log2 raw), clamped to 2^-127 .. 2^127: MXFP4) and e4m3 / e5m2
// scales (raw rounded as to f16, in the format's own range) are lowered too.
// A global scale (NVFP4: group_tensor, e4m3 scales) takes two more kernels:
// Amax maximizes each group's amax into the expert's global-scale slot
// (its f32 bits), the quantization derives gs = max amax / qmax / the
// scale type's max (rounded to f32) from it and quantizes raw / gs, and
// Finish writes gs over the amax. A tensor scale (FP8 per tensor) is gs
// itself, max amax / qmax, without a scale tensor. Block scales (f32, one
// per groupN x groupK block, DeepSeek-style FP8) take the same four
// kernels with the block's slot of the scale tensor in place of the global
// scale's: Clear zeroes the slots, Amax maximizes each row segment's amax
// into its block's slot, the quantization derives the block's scale from
// it (raw = amax / qmax, rounded to f32) and converts, and Finish writes
// each slot's scale over its amax.
//
//===----------------------------------------------------------------------===//

#include "EmitterBase.h"
#include "Kernels.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include "Humming/Quant/Codec.h"

#include <cassert>
#include <cmath>

using namespace mlir;
using namespace mlir::humming;
namespace hq = ::humming;

namespace {
/// Words of one expert's integer zero points ([N b / 32, G]).
int64_t zeroPointWords(const hq::WeightSchema &w, int64_t np, int64_t groups) {
  return np * w.type.bits / 32 * groups;
}
/// Block scales of one expert: [ceil(np / groupN), kp / groupK].
int64_t blockSlots(const hq::WeightSchema &w, int64_t np, int64_t kp) {
  return hq::ceilDiv(np, w.groupN) * w.groupsAlongK(kp);
}
/// Columns of a scale group (padded K for channel scales).
int64_t groupColumns(const WeightQuantizeKernelSpec &s) {
  const int64_t kp = s.k + s.weight.padK;
  return s.weight.granularity == hq::Granularity::Channel ||
                 s.weight.granularity == hq::Granularity::Tensor
             ? kp
             : s.weight.groupK;
}
bool isSixteenOrF32(const hq::ScalarType &t) {
  return t == hq::ScalarType::f16() || t == hq::ScalarType::bf16() ||
         t == hq::ScalarType::f32();
}
} // namespace

std::string
mlir::humming::weightQuantizeKernelProblem(const WeightQuantizeKernelSpec &s) {
  const hq::WeightSchema &w = s.weight;
  const char *prefix = "the weight quantization kernel ";
  // (Every weight type the schema admits is an integer or a signed float
  // with a mantissa, without zero points for floats: verifyWeightSchema.)
  assert((w.type.isInt() || (w.type.mantissaBits >= 1 &&
                             w.zeroPoint == hq::ZeroPointKind::None)) &&
         "a weight type verifyWeightSchema refuses");
  if (w.hasGlobalScale() && w.zeroPoint != hq::ZeroPointKind::None)
    return hq::concat(prefix, "makes a global scale only for symmetric "
                              "codes (its maximum is taken over the groups' "
                              "amax), got ",
                      hq::toString(w.zeroPoint), " zero points");
  // (Every scale type the schema admits for group and channel scales is
  // one the kernel rounds to: verifyWeightSchema.)
  assert((!w.hasScaleTensor() || isSixteenOrF32(w.scaleType) ||
          w.scaleType.isE8M0() || w.scaleType == hq::ScalarType::e4m3() ||
          w.scaleType == hq::ScalarType::e5m2()) &&
         "a scale type verifyWeightSchema refuses");
  if (!isSixteenOrF32(s.source))
    return hq::concat(prefix, "reads f16, bf16 or f32 weights, got ",
                      s.source.str());
  if (w.zeroPoint == hq::ZeroPointKind::Float &&
      s.zeroPointType != hq::ScalarType::f16() &&
      s.zeroPointType != hq::ScalarType::bf16())
    return hq::concat(prefix, "stores float zero points as f16 or bf16, got ",
                      s.zeroPointType.str());
  const int64_t kp = s.k + w.padK;
  if (w.granularity == hq::Granularity::Block &&
      (w.groupK % 32 != 0 || kp % w.groupK != 0))
    return hq::concat(prefix, "takes block scales of a multiple of 32 "
                              "columns dividing the padded K, got blocks of ",
                      w.groupK, " columns in a padded K of ", kp);
  if (groupColumns(s) % 32 != 0 && !(groupColumns(s) == 16 && kp % 32 == 0))
    return hq::concat(prefix, "converts 32 columns at a time and expects "
                              "groups (the padded K for channel scales) of "
                              "a multiple of 32 columns, or of 16 in a padded "
                              "K of a multiple of 32, got ",
                      groupColumns(s), " in a padded K of ", kp);
  return "";
}

int64_t mlir::humming::weightQuantizeItems(const WeightQuantizeKernelSpec &s) {
  const int64_t np = s.n + s.weight.padN, kp = s.k + s.weight.padK;
  const bool block = s.weight.granularity == hq::Granularity::Block;
  // (Block scales: Clear and Finish take 32 slots per item, a lane each.)
  if (block && (s.phase == WeightQuantizePhase::Finish ||
                s.phase == WeightQuantizePhase::Clear))
    return (blockSlots(s.weight, np, kp) + 31) / 32;
  if (s.phase == WeightQuantizePhase::Finish)
    return 1;
  if (s.phase == WeightQuantizePhase::Clear)
    return s.weight.zeroPoint == hq::ZeroPointKind::Int
               ? std::max<int64_t>(
                     1, (zeroPointWords(s.weight, np, s.weight.groupsAlongK(kp)) +
                         31) /
                            32)
               : 1;
  return np * s.weight.groupsAlongK(kp) / (groupColumns(s) == 16 ? 2 : 1);
}

SmallVector<WeightQuantizePhase>
mlir::humming::weightQuantizePhases(const WeightQuantizeKernelSpec &s) {
  SmallVector<WeightQuantizePhase> out;
  // (A block's scale, like a global one, needs every row's amax first.)
  const bool global = s.weight.hasGlobalScale() ||
                      s.weight.granularity == hq::Granularity::Block;
  if (global || s.weight.zeroPoint == hq::ZeroPointKind::Int)
    out.push_back(WeightQuantizePhase::Clear);
  if (global)
    out.push_back(WeightQuantizePhase::Amax);
  out.push_back(WeightQuantizePhase::Quantize);
  if (global)
    out.push_back(WeightQuantizePhase::Finish);
  return out;
}

namespace {

class WeightQuantizeEmitter : EmitterBase {
public:
  WeightQuantizeEmitter(ImplicitLocOpBuilder &b,
                        const WeightQuantizeKernelSpec &spec,
                        ArrayRef<Value> params)
      : EmitterBase(b, params), spec(spec), w(spec.weight) {
    f64 = b.getF64Type();
  }

  void emit() {
    const int64_t np = spec.n + w.padN, kp = spec.k + w.padK;
    const int64_t groups = w.groupsAlongK(kp), len = groupColumns(spec);
    // Groups of 16 columns: a warp takes two neighbours (half a warp each).
    const bool half = len == 16;
    const int64_t perItem = half ? 2 : 1;
    const bool block = w.granularity == hq::Granularity::Block;
    const int64_t items = weightQuantizeItems(spec);
    const int64_t warps = kElementwiseThreads / 32;
    Value tid = ext64(index32(gpu::ThreadIdOp::create(b, gpu::Dimension::x)));
    Value bid = ext64(index32(gpu::BlockIdOp::create(b, gpu::Dimension::x)));
    Value grid = ext64(index32(gpu::GridDimOp::create(b, gpu::Dimension::x)));
    lane = arith::RemUIOp::create(b, tid, c64(32));
    Value first = add(mul(bid, warps), div(tid, 32));
    Value total = mul(ext64(param(hq::abi::ParamM)), items);
    auto loop = scf::ForOp::create(b, first, total, mul(grid, warps));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value item = loop.getInductionVar();
    Value e = div(item, items), rest = rem(item, items);
    Value isLane0 =
        arith::CmpIOp::create(b, arith::CmpIPredicate::eq, lane, c64(0));
    if (spec.phase == WeightQuantizePhase::Clear) {
      emitClear(e, rest, isLane0, np, groups);
      return;
    }
    if (spec.phase == WeightQuantizePhase::Finish && block) {
      // Each slot's amax becomes the block's scale.
      atBlockSlot(e, rest, [&](Value at) {
        store(narrow(blockScaleAt(at), w.scaleType),
              param(hq::abi::ParamScales), at);
      });
      return;
    }
    if (spec.phase == WeightQuantizePhase::Finish) {
      auto ifLead = scf::IfOp::create(b, isLane0, /*withElseRegion=*/false);
      OpBuilder::InsertionGuard g0(b);
      b.setInsertionPointToStart(ifLead.thenBlock());
      store(arith::TruncFOp::create(b, f32, globalScaleOf(e)),
            param(hq::abi::ParamGlobalScale), e);
      return;
    }
    Value r = div(rest, groups / perItem);
    // The item's first column, and this lane's group.
    Value colBase = mul(rem(rest, groups / perItem), perItem * len);
    Value g = half ? add(mul(rem(rest, groups / perItem), 2), div(lane, 16))
                   : rem(rest, groups);
    Value isLead =
        half ? arith::CmpIOp::create(b, arith::CmpIPredicate::eq,
                                     rem(lane, 16), c64(0))
             : isLane0;
    rowValid = arith::CmpIOp::create(b, arith::CmpIPredicate::ult, r,
                                     c64(spec.n));
    rowBase = mul(add(mul(e, spec.n), r), spec.k);
    const int64_t chunks = half ? 1 : len / 32;

    // Pass 1: lo, hi and amax of the group.
    Value zero = cf(0.0);
    auto stats = scf::ForOp::create(b, c64(0), c64(chunks), c64(1),
                                    ValueRange{zero, zero, zero});
    {
      OpBuilder::InsertionGuard g1(b);
      b.setInsertionPointToStart(stats.getBody());
      Value v =
          valueAt(add(colBase, add(mul(stats.getInductionVar(), 32), lane)));
      Value lo = minOf(stats.getRegionIterArgs()[0], v);
      Value hi = maxOf(stats.getRegionIterArgs()[1], v);
      Value amax = maxOf(stats.getRegionIterArgs()[2], absOf(v));
      scf::YieldOp::create(b, ValueRange{lo, hi, amax});
    }
    Value lo = stats.getResult(0), hi = stats.getResult(1),
          amax = stats.getResult(2);
    // (Within each half-warp for pairs of 16-column groups.)
    for (int64_t offset = half ? 8 : 16; offset >= 1; offset /= 2) {
      auto other = [&](Value v) {
        return gpu::ShuffleOp::create(b, v, c32(offset), c32(32),
                                      gpu::ShuffleMode::XOR)
            .getShuffleResult();
      };
      lo = minOf(lo, other(lo));
      hi = maxOf(hi, other(hi));
      amax = maxOf(amax, other(amax));
    }

    // Block scales: the slot of row r's block in group g.
    Value slotAt = block ? add(mul(add(mul(e, hq::ceilDiv(np, w.groupN)),
                                       div(r, w.groupN)),
                                   groups),
                               g)
                         : Value();
    if (spec.phase == WeightQuantizePhase::Amax) {
      // The expert's (the block's) largest amax (f32 bits of non-negative
      // values order as unsigned integers).
      auto ifLead = scf::IfOp::create(b, isLead, /*withElseRegion=*/false);
      OpBuilder::InsertionGuard g2(b);
      b.setInsertionPointToStart(ifLead.thenBlock());
      Value addr =
          block ? LLVM::GEPOp::create(b, ptr, i32, param(hq::abi::ParamScales),
                                      ValueRange{slotAt})
                : LLVM::GEPOp::create(b, ptr, i32,
                                      param(hq::abi::ParamGlobalScale),
                                      ValueRange{e});
      LLVM::AtomicRMWOp::create(b, LLVM::AtomicBinOp::umax, addr,
                                arith::BitcastOp::create(b, i32, amax),
                                LLVM::AtomicOrdering::monotonic, "device");
      return;
    }

    // The scale and zero point (f64, as the host).
    const unsigned bits = w.type.bits;
    const double codeRange = double((1u << bits) - 1);
    const bool useZp = w.zeroPoint != hq::ZeroPointKind::None;
    const double codeMax = hq::symmetricMax(w.type);
    Value raw =
        useZp ? arith::DivFOp::create(
                    b, arith::SubFOp::create(b, to64(hi), to64(lo)),
                    cd(codeRange))
              : arith::DivFOp::create(b, to64(amax), cd(codeMax));
    // With a global scale: s = round(raw / gs), scale = s gs; a tensor
    // scale is gs alone (s = 1, no scale tensor).
    const bool tensor = w.granularity == hq::Granularity::Tensor;
    Value gs = w.hasGlobalScale() ? globalScaleOf(e) : Value();
    // (A block's scale from the largest amax of its rows, which the Amax
    // phase left in its slot.)
    Value stored =
        block    ? blockScaleAt(slotAt)
        : tensor ? cd(1.0)
                 : roundScale(gs ? arith::DivFOp::create(b, raw, gs) : raw);
    Value scale = gs ? arith::MulFOp::create(b, stored, gs) : stored;
    Value negLoOverScale =
        arith::DivFOp::create(b, arith::NegFOp::create(b, to64(lo)), scale);
    Value zp = cd(w.type.isSigned ? 0.0 : double(1u << (bits - 1)));
    if (w.zeroPoint == hq::ZeroPointKind::Int)
      zp = clamp(roundEven(negLoOverScale), 0.0, codeRange);
    else if (w.zeroPoint == hq::ZeroPointKind::Float)
      zp = roundTo(negLoOverScale, spec.zeroPointType);

    // The group's lead lane: the scale and the zero point.
    {
      auto ifLead = scf::IfOp::create(b, isLead, /*withElseRegion=*/false);
      OpBuilder::InsertionGuard g2(b);
      b.setInsertionPointToStart(ifLead.thenBlock());
      Value at = add(mul(add(mul(e, np), r), groups), g);
      // (Block scales: Finish writes them over the amax others still read.)
      if (w.hasScaleTensor() && !block)
        store(narrow(stored, w.scaleType), param(hq::abi::ParamScales), at);
      if (w.zeroPoint == hq::ZeroPointKind::Float)
        store(narrow(zp, spec.zeroPointType), param(hq::abi::ParamZeroPoints),
              at);
      if (w.zeroPoint == hq::ZeroPointKind::Int) {
        // Code r of group g's stream: bits r b .. r b + b - 1; word x of the
        // stream is element [x, g] of the expert's [N b / 32, G].
        Value code = arith::FPToUIOp::create(b, i32, zp);
        Value bit = mul(r, bits);
        Value word = div(bit, 32);
        Value off = index32trunc(rem(bit, 32));
        Value base = mul(e, np * bits / 32 * groups);
        orInto(add(base, add(mul(word, groups), g)),
               arith::ShLIOp::create(b, code, off));
        if (32 % bits != 0) {
          auto ifStraddles = scf::IfOp::create(
              b,
              arith::CmpIOp::create(b, arith::CmpIPredicate::ugt,
                                    arith::AddIOp::create(b, off, c32(bits)),
                                    c32(32)),
              /*withElseRegion=*/false);
          OpBuilder::InsertionGuard g3(b);
          b.setInsertionPointToStart(ifStraddles.thenBlock());
          orInto(add(base, add(mul(add(word, c64(1)), groups), g)),
                 arith::ShRUIOp::create(
                     b, code, arith::SubIOp::create(b, c32(32), off)));
        }
      }
    }

    // Pass 2: the codes, b words per 32 columns.
    const int64_t rowWords = kp * bits / 32;
    Value rowOut = mul(add(mul(e, np), r), rowWords);
    auto convert = scf::ForOp::create(b, c64(0), c64(chunks), c64(1));
    {
      OpBuilder::InsertionGuard g4(b);
      b.setInsertionPointToStart(convert.getBody());
      Value j = convert.getInductionVar();
      Value v = valueAt(add(colBase, add(mul(j, 32), lane)));
      Value code = codeOf(arith::DivFOp::create(b, to64(v), scale), zp);
      Value word = assembleWord(code);
      auto ifWriter = scf::IfOp::create(
          b, arith::CmpIOp::create(b, arith::CmpIPredicate::ult, lane,
                                   c64(bits)),
          /*withElseRegion=*/false);
      OpBuilder::InsertionGuard g5(b);
      b.setInsertionPointToStart(ifWriter.thenBlock());
      Value at =
          add(rowOut, add(div(mul(add(colBase, mul(j, 32)), bits), 32), lane));
      store(word, param(hq::abi::ParamOutput), at);
    }
  }

private:
  /// Clear: item i of expert e zeroes words 32 i .. 32 i + 31 of its
  /// integer zero points (one per lane), item 0's lane 0 its global scale.
  void emitClear(Value e, Value item, Value isLane0, int64_t np,
                 int64_t groups) {
    if (w.granularity == hq::Granularity::Block) {
      atBlockSlot(e, item, [&](Value at) {
        store(c32(0), param(hq::abi::ParamScales), at);
      });
      return;
    }
    if (w.hasGlobalScale()) {
      auto ifFirst = scf::IfOp::create(
          b,
          arith::AndIOp::create(
              b, isLane0,
              arith::CmpIOp::create(b, arith::CmpIPredicate::eq, item,
                                    c64(0))),
          /*withElseRegion=*/false);
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(ifFirst.thenBlock());
      store(c32(0), param(hq::abi::ParamGlobalScale), e);
    }
    if (w.zeroPoint != hq::ZeroPointKind::Int)
      return;
    // The expert's [N b / 32, G] words.
    const int64_t words = zeroPointWords(w, np, groups);
    Value word = add(mul(item, 32), lane);
    auto ifInside = scf::IfOp::create(
        b, arith::CmpIOp::create(b, arith::CmpIPredicate::ult, word,
                                 c64(words)),
        /*withElseRegion=*/false);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(ifInside.thenBlock());
    store(c32(0), param(hq::abi::ParamZeroPoints),
          add(mul(e, words), word));
  }
  /// The host's global scale of expert e from the largest amax the Amax
  /// phase left in its slot: max raw = max amax / qmax (division by a
  /// positive constant keeps the order, so the largest quotient is the
  /// quotient of the largest), gs = max raw / the scale type's largest
  /// value for fp8 scales (else 1), 1 where not positive and finite, then
  /// rounded to f32.
  Value globalScaleOf(Value e) {
    Value addr = LLVM::GEPOp::create(b, ptr, f32,
                                     param(hq::abi::ParamGlobalScale),
                                     ValueRange{e});
    Value amax = LLVM::LoadOp::create(b, f32, addr);
    Value gs = cd(1.0);
    Value maxRaw =
        arith::DivFOp::create(b, to64(amax), cd(hq::symmetricMax(w.type)));
    if (w.granularity == hq::Granularity::Tensor)
      gs = maxRaw; // the whole scale
    else if (w.scaleType == hq::ScalarType::e4m3() ||
             w.scaleType == hq::ScalarType::e5m2())
      gs = arith::DivFOp::create(b, maxRaw, cd(hq::maxValue(w.scaleType)));
    Value usable = arith::AndIOp::create(
        b, cmp(arith::CmpFPredicate::OGT, gs, cd(0.0)),
        cmp(arith::CmpFPredicate::OLT, gs, cd(INFINITY)));
    gs = select(usable, gs, cd(1.0));
    return to64(arith::TruncFOp::create(b, f32, gs));
  }
  /// Block scales, Clear and Finish: `body` with the index of slot
  /// item * 32 + lane of expert e's block scales, where there is one.
  void atBlockSlot(Value e, Value item, function_ref<void(Value)> body) {
    const int64_t slots =
        blockSlots(w, spec.n + w.padN, spec.k + w.padK);
    Value slot = add(mul(item, 32), lane);
    auto ifInside = scf::IfOp::create(
        b,
        arith::CmpIOp::create(b, arith::CmpIPredicate::ult, slot, c64(slots)),
        /*withElseRegion=*/false);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(ifInside.thenBlock());
    body(add(mul(e, slots), slot));
  }
  /// The host's scale of the block whose slot `at` holds its largest amax
  /// (f32 bits, the Amax phase's): raw = amax / qmax rounded to the scale
  /// type (f32), as f64.
  Value blockScaleAt(Value at) {
    Value addr = LLVM::GEPOp::create(b, ptr, f32, param(hq::abi::ParamScales),
                                     ValueRange{at});
    Value amax = LLVM::LoadOp::create(b, f32, addr);
    return roundScale(
        arith::DivFOp::create(b, to64(amax), cd(hq::symmetricMax(w.type))));
  }
  Value cd(double v) {
    return arith::ConstantFloatOp::create(b, cast<FloatType>(f64), APFloat(v));
  }
  Value to64(Value v) { return arith::ExtFOp::create(b, f64, v); }
  Value index32trunc(Value v) { return arith::TruncIOp::create(b, i32, v); }
  /// v (f64) rounded to an integer, ties to even: below 2^52 in magnitude
  /// the addition of 2^52 rounds (IEEE, to nearest even) and the
  /// subtraction is exact; the sign (of a zero too) is v's. (The GPU
  /// lowering turns llvm.roundeven into a libdevice call.)
  Value roundEven(Value v) {
    Value bits = arith::BitcastOp::create(b, i64, v);
    Value sign = arith::AndIOp::create(b, bits, c64(INT64_MIN));
    Value mag = arith::BitcastOp::create(
        b, f64, arith::AndIOp::create(b, bits, c64(INT64_MAX)));
    const double big = 4503599627370496.0; // 2^52
    Value r = arith::SubFOp::create(b, arith::AddFOp::create(b, mag, cd(big)),
                                    cd(big));
    Value signed_ = arith::BitcastOp::create(
        b, f64,
        arith::OrIOp::create(b, arith::BitcastOp::create(b, i64, r), sign));
    return select(cmp(arith::CmpFPredicate::OGE, mag, cd(big)), v, signed_);
  }
  Value select(Value c, Value t, Value f) {
    return arith::SelectOp::create(b, c, t, f);
  }
  Value cmp(arith::CmpFPredicate p, Value a, Value c) {
    return arith::CmpFOp::create(b, p, a, c);
  }
  /// The host's std::min(a, v) and std::max(a, v): a NaN v leaves a (a
  /// compare and a select: arith.minnumf / maxnumf become libdevice calls
  /// in the GPU lowering).
  Value minOf(Value a, Value v) {
    return select(cmp(arith::CmpFPredicate::OLT, v, a), v, a);
  }
  Value maxOf(Value a, Value v) {
    return select(cmp(arith::CmpFPredicate::OLT, a, v), v, a);
  }
  /// |v| (f32) by clearing the sign bit (llvm.fabs would become a libdevice
  /// call).
  Value absOf(Value v) {
    Value bits = arith::BitcastOp::create(b, i32, v);
    return arith::BitcastOp::create(
        b, f32, arith::AndIOp::create(b, bits, c32(0x7fffffff)));
  }
  /// Weight column `c` of this row as f32: zero past N or K (padding).
  Value valueAt(Value c) {
    Value valid = arith::AndIOp::create(
        b, rowValid,
        arith::CmpIOp::create(b, arith::CmpIPredicate::ult, c, c64(spec.k)));
    Value index = select(valid, add(rowBase, c), c64(0));
    Value v = loadAsF32(param(hq::abi::ParamInput), index, spec.source);
    return select(valid, v, cf(0.0));
  }
  /// 2^x (f64) for an integer x (i64) of the normal exponents.
  Value pow2(Value x) {
    return arith::BitcastOp::create(
        b, f64,
        arith::ShLIOp::create(b, arith::AddIOp::create(b, x, c64(1023)),
                              c64(52)));
  }
  /// a >= 0 (f64) rounded to format `t` (nearest, ties to even,
  /// subnormals, saturated at its largest finite value), as the host's
  /// encode / decode: e = max(floor(log2 a), 1 - bias); round(a 2^(M - e))
  /// 2^(e - M). A zero keeps its sign.
  Value roundTo(Value a, const hq::ScalarType &t) {
    const int64_t m = t.mantissaBits, eMin = 1 - t.bias();
    Value e = arith::MaxSIOp::create(b, exponentOf(a), c64(eMin));
    Value scaled =
        arith::MulFOp::create(b, a, pow2(arith::SubIOp::create(b, c64(m), e)));
    Value rounded = arith::MulFOp::create(
        b, roundEven(scaled), pow2(arith::SubIOp::create(b, e, c64(m))));
    const double top = hq::maxValue(t);
    return select(cmp(arith::CmpFPredicate::OGE, a, cd(top)), cd(top), rounded);
  }
  /// The unbiased exponent of a non-negative f64 (i64): floor(log2 a) for
  /// normal values, -1023 for zero and subnormals.
  Value exponentOf(Value a) {
    Value bits = arith::BitcastOp::create(b, i64, a);
    return arith::SubIOp::create(
        b,
        arith::AndIOp::create(b, arith::ShRUIOp::create(b, bits, c64(52)),
                              c64(0x7ff)),
        c64(1023));
  }
  /// The host's roundScale for f16, bf16, f32, e8m0, e4m3 and e5m2 scales.
  Value roundScale(Value raw) {
    const hq::ScalarType &t = w.scaleType;
    Value usable = arith::AndIOp::create(
        b, cmp(arith::CmpFPredicate::OGT, raw, cd(0.0)),
        cmp(arith::CmpFPredicate::OLT, raw, cd(INFINITY)));
    if (t.isE8M0()) {
      // 2^ceil(log2 s) clamped to e8m0's 2^-127 .. 2^127: the exponent,
      // plus one where any mantissa bit is set. (The host takes
      // std::ceil(std::log2(s)); they differ only where s is within a few
      // ulps above a power of two, which s = amax / max of f32-exact
      // weights never is: amax has 24 significant bits.)
      Value sv = select(usable, raw, cd(1.0));
      Value mantissa = arith::AndIOp::create(
          b, arith::BitcastOp::create(b, i64, sv),
          c64((int64_t(1) << 52) - 1));
      Value up = arith::ExtUIOp::create(
          b, i64,
          arith::CmpIOp::create(b, arith::CmpIPredicate::ne, mantissa,
                                c64(0)));
      Value e = arith::AddIOp::create(b, exponentOf(sv), up);
      e = arith::MaxSIOp::create(b, e, c64(-127));
      e = arith::MinSIOp::create(b, e, c64(127));
      return pow2(e);
    }
    Value s = roundTo(select(usable, raw, cd(1.0)), t);
    const double smallest =
        std::ldexp(1.0, 1 - t.bias() - int(t.mantissaBits));
    return select(cmp(arith::CmpFPredicate::OGT, s, cd(0.0)), s,
                  cd(smallest));
  }
  Value clamp(Value v, double lo, double hi) {
    v = select(cmp(arith::CmpFPredicate::OLT, v, cd(lo)), cd(lo), v);
    return select(cmp(arith::CmpFPredicate::OGT, v, cd(hi)), cd(hi), v);
  }
  /// The code (i32) of x in float format `t` (the weights' codes of x = w /
  /// s, an fp8 scale), the host's encode: NaN to the
  /// format's NaN code (e2m1 has none: its encode's choice), a magnitude
  /// at or above the largest finite value to that value's code
  /// (saturated), else the nearest value, ties to even, subnormals
  /// included: e = max(floor(log2 |x|), 1 - bias), r = round(|x| 2^(M - e))
  /// (one binade up where r reaches 2^(M + 1)), the code r below 2^M
  /// (subnormal), else (e + bias) << M | (r mod 2^M); the sign bit is x's
  /// (a negative zero keeps it).
  Value floatCode(Value x, const hq::ScalarType &t) {
    const int64_t m = t.mantissaBits, bias = t.bias(), eMin = 1 - bias;
    const uint32_t maxCode = hq::encode(t, INFINITY);
    const uint32_t nanCode = hq::encode(t, NAN);
    const uint32_t signBit = 1u << (t.bits - 1);
    Value xbits = arith::BitcastOp::create(b, i64, x);
    Value negative =
        arith::CmpIOp::create(b, arith::CmpIPredicate::slt, xbits, c64(0));
    Value a = arith::BitcastOp::create(
        b, f64, arith::AndIOp::create(b, xbits, c64(INT64_MAX)));
    Value e = arith::MaxSIOp::create(b, exponentOf(a), c64(eMin));
    Value scaled =
        arith::MulFOp::create(b, a, pow2(arith::SubIOp::create(b, c64(m), e)));
    Value r = roundEven(scaled);
    Value carried =
        cmp(arith::CmpFPredicate::OGE, r, cd(std::ldexp(1.0, int(m) + 1)));
    r = select(carried, arith::MulFOp::create(b, r, cd(0.5)), r);
    e = select(carried, arith::AddIOp::create(b, e, c64(1)), e);
    Value sig = arith::FPToUIOp::create(b, i32, r);
    Value normal = arith::OrIOp::create(
        b,
        arith::ShLIOp::create(
            b,
            arith::TruncIOp::create(b, i32,
                                    arith::AddIOp::create(b, e, c64(bias))),
            c32(m)),
        arith::AndIOp::create(b, sig, c32((1u << m) - 1)));
    Value magnitude = select(
        arith::CmpIOp::create(b, arith::CmpIPredicate::ult, sig,
                              c32(1u << m)),
        sig, normal);
    // Codes are ordered as their values: past the largest finite one is
    // past its code.
    magnitude = arith::MinUIOp::create(b, magnitude, c32(maxCode));
    const double maxFinite = hq::maxValue(t);
    magnitude = select(cmp(arith::CmpFPredicate::OGE, a, cd(maxFinite)),
                       c32(maxCode), magnitude);
    magnitude =
        select(cmp(arith::CmpFPredicate::OEQ, a, cd(0.0)), c32(0), magnitude);
    Value code = select(negative, arith::OrIOp::create(b, magnitude,
                                                       c32(signBit)),
                        magnitude);
    return select(cmp(arith::CmpFPredicate::UNO, x, x), c32(nanCode), code);
  }
  /// The b-bit code (i32) of x = w / s.
  Value codeOf(Value x, Value zp) {
    if (w.type.isFloat())
      return floatCode(x, w.type);
    const unsigned bits = w.type.bits;
    const uint32_t mask = (1u << bits) - 1;
    Value isNan = cmp(arith::CmpFPredicate::UNO, x, x);
    if (w.type.isSigned) {
      const double lo = hq::minValue(w.type), hi = hq::maxValue(w.type);
      Value q = select(cmp(arith::CmpFPredicate::OLE, x, cd(lo)), cd(lo),
                       select(cmp(arith::CmpFPredicate::OGE, x, cd(hi)),
                              cd(hi), roundEven(x)));
      q = select(isNan, cd(0.0), q);
      return arith::AndIOp::create(b, arith::FPToSIOp::create(b, i32, q),
                                   c32(mask));
    }
    Value q = w.zeroPoint == hq::ZeroPointKind::Float
                  ? roundEven(arith::AddFOp::create(b, x, zp))
                  : arith::AddFOp::create(b, roundEven(x), zp);
    q = select(cmp(arith::CmpFPredicate::UNO, q, q), cd(0.0),
               clamp(q, 0.0, double(mask)));
    return arith::FPToUIOp::create(b, i32, q);
  }
  /// Word `lane` (lanes 0 .. b - 1) of the 32 lanes' codes as a bit stream:
  /// bits 32 lane .. 32 lane + 31, from codes i0 = 32 lane / b on.
  Value assembleWord(Value code) {
    const int64_t bits = w.type.bits;
    Value l32 = index32trunc(lane);
    Value i0 = arith::DivUIOp::create(
        b, arith::MulIOp::create(b, l32, c32(32)), c32(bits));
    Value word = c32(0);
    // Codes i0 .. (32 lane + 31) / b: at most ceil(32 / b) + 1 of them
    // (b = 3, lane 1: codes 10 .. 21).
    for (int64_t j = 0; j <= (32 + bits - 1) / bits; ++j) {
      Value i = arith::AddIOp::create(b, i0, c32(j));
      Value src = arith::MinUIOp::create(b, i, c32(31));
      Value v = gpu::ShuffleOp::create(b, code, src, c32(32),
                                       gpu::ShuffleMode::IDX)
                    .getShuffleResult();
      // Bit position of code i in the word (may start before it).
      Value pos = arith::SubIOp::create(
          b, arith::MulIOp::create(b, i, c32(bits)),
          arith::MulIOp::create(b, l32, c32(32)));
      Value left = arith::ShLIOp::create(
          b, v, arith::MaxSIOp::create(b, pos, c32(0)));
      Value right = arith::ShRUIOp::create(
          b, v, arith::SubIOp::create(b, c32(0), pos));
      Value negative =
          arith::CmpIOp::create(b, arith::CmpIPredicate::slt, pos, c32(0));
      Value part = select(negative, right, left);
      Value inWord = arith::AndIOp::create(
          b, arith::CmpIOp::create(b, arith::CmpIPredicate::ule, i, c32(31)),
          arith::CmpIOp::create(b, arith::CmpIPredicate::slt, pos, c32(32)));
      word = arith::OrIOp::create(b, word, select(inWord, part, c32(0)));
    }
    return word;
  }
  /// A value of f64 exactly representable in `t`, as `t` (e8m0: a power
  /// of two 2^-127 .. 2^127, its exponent + 127 as a byte; fp8: its code).
  Value narrow(Value v, const hq::ScalarType &t) {
    if (t.isE8M0())
      return arith::TruncIOp::create(
          b, i8, arith::AddIOp::create(b, exponentOf(v), c64(127)));
    if (t == hq::ScalarType::e4m3() || t == hq::ScalarType::e5m2())
      return arith::TruncIOp::create(b, i8, floatCode(v, t));
    Value f = arith::TruncFOp::create(b, f32, v);
    if (t == hq::ScalarType::f32())
      return f;
    Type ft = t == hq::ScalarType::bf16() ? Type(b.getBF16Type())
                                          : Type(b.getF16Type());
    return arith::BitcastOp::create(b, i16,
                                    arith::TruncFOp::create(b, ft, f));
  }
  void orInto(Value index, Value bits) {
    Value addr = LLVM::GEPOp::create(b, ptr, i32,
                                     param(hq::abi::ParamZeroPoints),
                                     ValueRange{index});
    LLVM::AtomicRMWOp::create(b, LLVM::AtomicBinOp::_or, addr, bits,
                              LLVM::AtomicOrdering::monotonic, "device");
  }

  const WeightQuantizeKernelSpec &spec;
  const hq::WeightSchema &w;
  Type f64;
  Value lane, rowValid, rowBase;
};

} // namespace

gpu::GPUFuncOp mlir::humming::buildWeightQuantizeKernel(
    OpBuilder &builder, Location loc, gpu::GPUModuleOp module, StringRef name,
    const WeightQuantizeKernelSpec &spec) {
  return buildSmallKernel(builder, loc, module, name, /*moe=*/false,
                          [&](ImplicitLocOpBuilder &b, ArrayRef<Value> params) {
                            WeightQuantizeEmitter(b, spec, params).emit();
                          });
}
