//===- RepackKernel.cpp - Weight preparation on the device ----------------===//
//
// humming.repack: the canonical weight-side tensors of a layer rewritten into
// the prepared layout of include/Humming/Quant/PreparedLayout.h on the GPU,
// the same bits layout::prepareMmaSync writes on the host (the GPU suite
// compares them word for word). The host repack costs ~0.5 s per 8192^2
// layer on one core; here it is one pass over the tensor.
//
// Weights: one thread per (k-tile, n-tile, lane) and grid-stride step,
// consecutive threads consecutive lanes of a tile (their words are
// consecutive in every plane: coalesced stores). The lane holds 16 pairs of
// codes: pair q = 2 j + r8 of half h is column 8 j + lane / 4 of the n-tile
// and position 8 r8 + 2 (lane % 4) + h of the k-tile, whose row is
// layout::preparedRow of that position (of its span). The thread reads those
// 32 codes from the canonical rows (bit streams of K codes; a code of 3, 5,
// 6 or 7 bits may straddle two words), flips signed codes into offset
// binary, and writes each plane's words. K-major tiles (layout::TileOrder,
// 8-bit codes): lane l's eight words are rows 2 l and 2 l + 1 of the tile,
// each the four canonical words of its column's 16 codes of the k-tile,
// xor-ed with layout::kMajorXor.
//
// Scales and float zero points: [N, G] -> [G, N] with the columns of each
// 64-column n-tile permuted (layout::permutedColumn), one element per
// thread and step, the output in order; block scales [N / bn, G] give each
// column its block row's. Integer zero points: canonical
// [N b / 32, G] (per group a bit stream along N) -> [G, N zb / 32], one
// output word (32 / zb permuted codes) per thread and step. Bias: copied.
//
//===----------------------------------------------------------------------===//

#include "EmitterBase.h"
#include "Kernels.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::humming;
namespace hq = ::humming;
namespace L = ::humming::layout;

int64_t mlir::humming::repackItems(const RepackKernelSpec &s) {
  switch (s.operand) {
  case hq::WeightOperand::Weight:
    return s.k / L::kTileK * (s.n / L::kTileN) * 32;
  case hq::WeightOperand::Scales:
    return s.groups * s.n;
  case hq::WeightOperand::ZeroPoints:
    return s.intZeroPoints
               ? s.groups * s.n * L::zeroPointBits(s.bits) / 32
               : s.groups * s.n;
  case hq::WeightOperand::Bias:
  case hq::WeightOperand::GlobalScale:
    return s.n;
  }
  return 0;
}

int64_t mlir::humming::repackSourceElements(const RepackKernelSpec &s) {
  switch (s.operand) {
  case hq::WeightOperand::Weight:
    return s.n * s.k * s.bits / 32;
  case hq::WeightOperand::ZeroPoints:
    if (s.intZeroPoints)
      return s.n * s.bits / 32 * s.groups;
    return s.n * s.groups;
  case hq::WeightOperand::Scales:
    return ::humming::ceilDiv(s.n, s.scaleRowColumns) * s.groups;
  default:
    return repackItems(s);
  }
}

int64_t mlir::humming::repackDestElements(const RepackKernelSpec &s) {
  if (s.operand == hq::WeightOperand::Weight)
    return s.n * s.k * s.bits / 32;
  return repackItems(s);
}

namespace {

class RepackEmitter : EmitterBase {
public:
  RepackEmitter(ImplicitLocOpBuilder &b, const RepackKernelSpec &spec,
                ArrayRef<Value> params)
      : EmitterBase(b, params), spec(spec) {}

  void emit() {
    const int64_t items = repackItems(spec);
    Value experts = ext64(param(hq::abi::ParamM));
    auto loop = gridStrideLoop(arith::MulIOp::create(b, experts, c64(items)),
                               kElementwiseThreads);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value i = loop.getInductionVar();
    Value e = arith::DivUIOp::create(b, i, c64(items));
    Value o = arith::RemUIOp::create(b, i, c64(items));
    src = arith::MulIOp::create(b, e, c64(repackSourceElements(spec)));
    dst = arith::MulIOp::create(b, e, c64(repackDestElements(spec)));
    switch (spec.operand) {
    case hq::WeightOperand::Weight:
      return weightLane(o);
    case hq::WeightOperand::ZeroPoints:
      if (spec.intZeroPoints)
        return zeroPointWord(o);
      [[fallthrough]];
    case hq::WeightOperand::Scales:
      return permutedElement(o);
    case hq::WeightOperand::Bias:
    case hq::WeightOperand::GlobalScale:
      return copyElement(o);
    }
  }

private:
  /// Code `index` (i64) of the bit stream of `bits`-bit codes whose word w
  /// is source element `wordAt(w)`, as i32.
  Value codeAt(Value index, unsigned bits,
               function_ref<Value(Value)> wordAt) {
    Value bit = mul(index, int64_t(bits));
    Value word = arith::ShRUIOp::create(b, bit, c64(5));
    Value offset = arith::AndIOp::create(b, bit, c64(31));
    const uint64_t mask = (uint64_t(1) << bits) - 1;
    Value lo = ext64(load(i32, param(hq::abi::ParamInput), wordAt(word)));
    Value window = lo;
    if (32 % bits != 0) {
      // A code that straddles two words reads the next one, which then
      // exists (a row's codes end at a word boundary); others read their
      // own word again.
      Value straddles = arith::CmpIOp::create(
          b, arith::CmpIPredicate::ugt, add(offset, c64(bits)), c64(32));
      Value next = arith::SelectOp::create(b, straddles, add(word, c64(1)),
                                           word);
      Value hi = ext64(load(i32, param(hq::abi::ParamInput), wordAt(next)));
      window = arith::OrIOp::create(b, lo,
                                    arith::ShLIOp::create(b, hi, c64(32)));
    }
    Value code = arith::AndIOp::create(
        b, arith::ShRUIOp::create(b, window, offset), c64(int64_t(mask)));
    return arith::TruncIOp::create(b, i32, code);
  }

  /// The row of K (within the tile's k-tile `kt`) that position `r` (an
  /// i64 of 0 .. 15) of the k-tile holds: layout::preparedRow over its
  /// span, built in IR.
  Value preparedRow(Value kt, Value r) {
    switch (spec.activationBits) {
    case 8:
      // 4 ((r % 8) / 2) + 2 (r % 2) + r / 8, within the k-tile.
      return add(mul(kt, L::kTileK),
                 add(mul(div(rem(r, 8), 2), 4),
                     add(mul(rem(r, 2), 2), div(r, 8))));
    case 4: {
      // Spans of two k-tiles: position 16 u + r holds row 8 ((r % 8) / 2)
      // + 4 u + 2 (r % 2) + r / 8 of the span.
      Value u = rem(kt, 2);
      Value spanStart = mul(arith::SubIOp::create(b, kt, u), L::kTileK);
      return add(spanStart,
                 add(add(mul(div(rem(r, 8), 2), 8), mul(u, 4)),
                     add(mul(rem(r, 2), 2), div(r, 8))));
    }
    default:
      return add(mul(kt, L::kTileK), r);
    }
  }

  void weightLane(Value o) {
    const int64_t n = spec.n, k = spec.k;
    const unsigned bits = spec.bits;
    Value lane = rem(o, 32);
    Value tile = div(o, 32);
    Value nt = rem(tile, n / L::kTileN);
    Value kt = div(tile, n / L::kTileN);
    const int64_t rowWords = k * bits / 32;
    if (spec.order == L::TileOrder::KMajor) {
      const uint32_t x = spec.kMajorXor * 0x01010101u;
      Value tileBase = add(dst, add(mul(kt, n * 4), mul(nt, 256)));
      for (int64_t r = 0; r < 2; ++r) {
        Value column = add(mul(nt, L::kTileN), add(mul(lane, 2), c64(r)));
        Value from = add(src, add(mul(column, rowWords), mul(kt, 4)));
        for (int64_t w = 0; w < 4; ++w) {
          Value word = load(i32, param(hq::abi::ParamInput), add(from, c64(w)));
          if (x)
            word = arith::XOrIOp::create(b, word, c32(int64_t(int32_t(x))));
          store(word, param(hq::abi::ParamOutput),
                add(tileBase, add(mul(lane, 8), c64(4 * r + w))));
        }
      }
      return;
    }
    // The 32 codes: code[q][h].
    Value codes[L::kPairs][2];
    Value laneRow = div(lane, 4), laneCol = mul(rem(lane, 4), 2);
    for (int q = 0; q < L::kPairs; ++q) {
      Value column = add(mul(nt, L::kTileN), add(c64(8 * (q / 2)), laneRow));
      Value rowBase = add(src, mul(column, rowWords));
      for (int h = 0; h < 2; ++h) {
        Value r = add(laneCol, c64(8 * (q % 2) + h));
        Value c = codeAt(preparedRow(kt, r), bits,
                         [&](Value w) { return add(rowBase, w); });
        if (spec.flip)
          c = arith::XOrIOp::create(b, c, c32(int64_t(1) << (bits - 1)));
        codes[q][h] = c;
      }
    }
    Value tileBase = add(dst, add(mul(kt, n * bits / 2), mul(nt, 32 * bits)));
    for (const L::Plane &p : L::planes(bits)) {
      const int perWord = int(16 / p.width);
      const uint32_t pmask = (1u << p.width) - 1;
      for (unsigned wi = 0; wi < p.width; ++wi) {
        Value word = c32(0);
        for (int jj = 0; jj < perWord; ++jj) {
          const int q = int(wi) * perWord + jj;
          for (int h = 0; h < 2; ++h) {
            Value v = arith::AndIOp::create(
                b, arith::ShRUIOp::create(b, codes[q][h], c32(p.shift)),
                c32(pmask));
            const unsigned at = L::pairBit(p, q) + 16 * unsigned(h);
            if (at)
              v = arith::ShLIOp::create(b, v, c32(at));
            word = arith::OrIOp::create(b, word, v);
          }
        }
        Value index = add(tileBase, add(c64(int64_t(p.wordOffset) * 32 + wi),
                                        mul(lane, p.width)));
        store(word, param(hq::abi::ParamOutput), index);
      }
    }
  }

  /// The logical column whose data prepared column `pn` holds (the inverse
  /// of layout::permutedColumn).
  Value logicalColumn(Value pn) {
    Value c = rem(pn, L::kTileN);
    return add(sub(pn, c), add(mul(rem(c, 8), 8), div(c, 8)));
  }
  Value sub(Value a, Value c) { return arith::SubIOp::create(b, a, c); }

  void permutedElement(Value o) {
    Value g = div(o, spec.n), pn = rem(o, spec.n);
    Type t = b.getIntegerType(spec.elementBits);
    // (Block scales: the column's block row.)
    Value row = logicalColumn(pn);
    if (spec.operand == hq::WeightOperand::Scales && spec.scaleRowColumns > 1)
      row = div(row, spec.scaleRowColumns);
    Value v = load(t, param(hq::abi::ParamInput),
                   add(src, add(mul(row, spec.groups), g)));
    store(v, param(hq::abi::ParamOutput), add(dst, o));
  }

  void zeroPointWord(Value o) {
    const int64_t zb = L::zeroPointBits(spec.bits), perWord = 32 / zb;
    const int64_t perRow = spec.n * zb / 32;
    Value g = div(o, perRow), ow = rem(o, perRow);
    Value word = c32(0);
    for (int64_t j = 0; j < perWord; ++j) {
      Value column = logicalColumn(add(mul(ow, perWord), c64(j)));
      // Group g's codes: word w of its stream is element [w, g].
      Value c = codeAt(column, spec.bits, [&](Value w) {
        return add(src, add(mul(w, spec.groups), g));
      });
      if (j)
        c = arith::ShLIOp::create(b, c, c32(j * zb));
      word = arith::OrIOp::create(b, word, c);
    }
    store(word, param(hq::abi::ParamOutput), add(dst, o));
  }

  void copyElement(Value o) {
    Type t = b.getIntegerType(spec.elementBits);
    store(load(t, param(hq::abi::ParamInput), add(src, o)),
          param(hq::abi::ParamOutput), add(dst, o));
  }

  const RepackKernelSpec &spec;
  Value src, dst; ///< this expert's first source / dest element
};

} // namespace

gpu::GPUFuncOp mlir::humming::buildRepackKernel(OpBuilder &builder,
                                                Location loc,
                                                gpu::GPUModuleOp module,
                                                StringRef name,
                                                const RepackKernelSpec &spec) {
  return buildSmallKernel(builder, loc, module, name, /*moe=*/true,
                          [&](ImplicitLocOpBuilder &b, ArrayRef<Value> params) {
                            RepackEmitter(b, spec, params).emit();
                          });
}
