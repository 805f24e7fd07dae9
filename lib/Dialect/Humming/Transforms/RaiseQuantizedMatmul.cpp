//===- RaiseQuantizedMatmul.cpp - dequantize-then-matmul to humming.gemm --===//
//
// Finds the weight dequantization a frontend emits in front of a matmul and
// replaces both with one humming.gemm carrying the matching weight schema:
//
//   linalg.generic  codes [N, K] x scales (- zero points) -> %wd [N, K]
//   linalg.fill     0 -> %y
//   linalg.matmul   %x [M, K], %wd (indexed (n, k)) -> %y [M, N]
//
// on memrefs, or on tensors (raiseTensors hands humming.gemm, a memref op,
// read-only buffers of the tensors and returns its output buffer as a
// tensor); also %wd [K, N] read (k, n) (output = input * W: the generic's
// maps are read through the swap of its loops) and linalg.batch_matmul
// sharing %wd across the batch (collapsed rows), or with one %wd per batch
// element ([B, N, K] / [B, K, N], dequantized by a generic of three loops
// whose inputs are all [B, ...] indexed (b, ...): read without b, it is
// the two-loop case), which becomes humming.moe_gemm with an expert per
// batch element (grouped_masked without counts). The codes are either
// [N, K] of 8 bits or b-bit integer / e2m1 codes packed into i32 words:
// along K as humming and compressed-tensors store them, transposed as
// GPTQ's qweight, or along N in AWQ's nibble order (matchPackedCode checks
// the extraction by evaluating it; GPTQ's and AWQ's tensors become a gemm in
// their source format, which humming-legalize-schema repacks); NVFP4's
// global scale, a last [1] f32 input multiplied in after the group scale,
// becomes the gemm's global_scale. What it does
// not recognise it leaves as it is, with a remark on the matmul that says
// why (a matmul whose B operand no linalg.generic writes is a plain matmul
// and gets none). See the pass description in Passes.td for the forms.
//
//===----------------------------------------------------------------------===//

#include "Humming/Dialect/Humming/IR/HummingOps.h"
#include "Humming/Dialect/Humming/IR/HummingTypes.h"
#include "Humming/Dialect/Humming/Transforms/Passes.h"
#include "Humming/Quant/PreparedLayout.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Matchers.h"

#include <variant>

#define DEBUG_TYPE "humming-raise-quantized-matmul"

namespace mlir::humming {
#define GEN_PASS_DEF_HUMMINGRAISEQUANTIZEDMATMULPASS
#include "Humming/Dialect/Humming/Transforms/Passes.h.inc"
} // namespace mlir::humming

using namespace mlir;
using namespace mlir::humming;
namespace hq = ::humming;

namespace {

/// What the dequantization computes, as found.
struct Dequant {
  linalg::GenericOp op;
  Value codes, scales, zeroPoints;
  /// NVFP4's second scale, one f32 for the tensor ([1]).
  Value globalScale;
  hq::WeightSchema schema;
  /// The layer's N and K.
  int64_t n = 0, k = 0;
  /// Weights per batch element: their count B (the leading dimension of
  /// every weight-side tensor; the global scale is [B]); 0: one matrix.
  int64_t batch = 0;
};

/// Why a matmul is not raised (empty: it is), or that it is no quantized
/// matmul at all (`plain`: no remark).
struct Refusal {
  std::string why;
  bool plain = false;
  explicit operator bool() const { return plain || !why.empty(); }
};

std::string str(Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << t;
  return s;
}
std::string str(AffineMap m) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << m;
  return s;
}

bool isHalf(Type t) { return t.isF16() || t.isBF16(); }

/// "si8 codes, f16 scales per group of 128 (float zero points)".
std::string describe(const hq::WeightSchema &w) {
  std::string s = w.type.str() + " codes, " + w.scaleType.str() + " scales ";
  s += w.granularity == hq::Granularity::Group ||
               w.granularity == hq::Granularity::GroupTensor
           ? "per group of " + std::to_string(w.groupK)
           : std::string("per row");
  if (w.granularity == hq::Granularity::GroupTensor)
    s += " and a global scale";
  if (w.zeroPoint == hq::ZeroPointKind::Float)
    s += ", float zero points";
  return s;
}

/// A static shape and, for a memref, the identity layout.
bool staticIdentity(ShapedType t) {
  auto m = dyn_cast<MemRefType>(t);
  return t.hasStaticShape() && (!m || m.getLayout().isIdentity());
}

/// The K side of a scale's index: `r` of the dimension of size `size`.
/// -1 for one scale per row (size 1 indexed by 0), g for groups of g along
/// K (size K / g indexed by k floordiv g), else 0.
int64_t groupAlongK(AffineExpr r, int64_t size, int64_t k) {
  MLIRContext *ctx = r.getContext();
  if (size == 1 && r == getAffineConstantExpr(0, ctx))
    return -1;
  auto bin = dyn_cast<AffineBinaryOpExpr>(r);
  if (!bin || bin.getKind() != AffineExprKind::FloorDiv ||
      bin.getLHS() != getAffineDimExpr(1, ctx))
    return 0;
  auto g = dyn_cast<AffineConstantExpr>(bin.getRHS());
  if (!g || g.getValue() <= 0 || k % g.getValue() != 0 ||
      size != k / g.getValue())
    return 0;
  return g.getValue();
}

/// The scales' (and zero points') indexing: group g along K (scales
/// [N, K / g], map (n, k) -> (n, k floordiv g)) or one per row (scales [N]
/// or [N, 1], map (n, k) -> (n) or (n, 0)). 0 and a reason when neither.
std::pair<int64_t, std::string> scaleGroup(AffineMap map, ShapedType t,
                                           int64_t n, int64_t k,
                                           StringRef name) {
  AffineExpr d0 = getAffineDimExpr(0, map.getContext());
  auto bad = [&]() -> std::pair<int64_t, std::string> {
    return {0, (name + " of type " + str(t) + " indexed by " + str(map) +
                ": expected [N, K / g] by (n, k floordiv g), or [N] / [N, 1] "
                "by (n) / (n, 0) (N = " + std::to_string(n) + ", K = " +
                std::to_string(k) + ")")
                   .str()};
  };
  if (!staticIdentity(t) || map.getNumDims() != 2)
    return bad();
  if (t.getRank() == 1 && t.getDimSize(0) == n && map.getNumResults() == 1 &&
      map.getResult(0) == d0)
    return {-1, ""};
  if (t.getRank() != 2 || t.getDimSize(0) != n || map.getNumResults() != 2 ||
      map.getResult(0) != d0)
    return bad();
  if (int64_t g = groupAlongK(map.getResult(1), t.getDimSize(1), k))
    return {g, ""};
  return bad();
}

/// GPTQ's scales: [K / g, N] indexed (k floordiv g, n), or [1, N] by (0, n)
/// (one per column). The group and "", or 0 and why.
std::pair<int64_t, std::string> gptqScaleGroup(AffineMap map, ShapedType t,
                                               int64_t n, int64_t k,
                                               const char *source) {
  AffineExpr d0 = getAffineDimExpr(0, map.getContext());
  auto bad = [&]() -> std::pair<int64_t, std::string> {
    return {0, "the scales of type " + str(t) + " indexed by " + str(map) +
                   ": with " + source +
                   " qweight expected its scales [K / g, N] by "
                   "(k floordiv g, n) or [1, N] by (0, n) (N = " +
                   std::to_string(n) + ", K = " + std::to_string(k) + ")"};
  };
  if (!staticIdentity(t) || t.getRank() != 2 || t.getDimSize(1) != n ||
      map.getNumDims() != 2 || map.getNumResults() != 2 ||
      map.getResult(1) != d0)
    return bad();
  if (int64_t g = groupAlongK(map.getResult(0), t.getDimSize(0), k))
    return {g, ""};
  return bad();
}

/// Codes narrower than 8 bits packed into 32-bit words along K (humming's
/// canonical form, and compressed-tensors' pack-quantized one): code k of
/// row n is bits b (k mod 32/b) ..+b of word (n, k floordiv 32/b). Integer
/// zero points are packed the same way along N: zero point n of group g is
/// bits b (n mod 32/b) ..+b of word (n floordiv 32/b, g). The body extracts
/// each from its word and its position (linalg.index 1 for k, 0 for n) with
/// integer arithmetic in any arrangement; what it computes is checked by
/// evaluating that arithmetic for sample words and positions, not by its
/// shape.
struct PackedCode {
  unsigned bits = 0;
  bool isSigned = false;
  /// Codes: the words stored [K b / 32, N] (GPTQ's qweight) instead of
  /// [N, K b / 32].
  bool gptq = false;
  /// Codes: AWQ's qweight, [K, N / 8] words of 4-bit codes packed along N
  /// in AWQ's nibble order (awqSlot).
  bool awq = false;
  /// Zero points: what the body adds to the stored value (GPTQ's qzeros
  /// store z - 1, so a dequantization of that format adds 1).
  int64_t offset = 0;
  /// The operations computing the value from the word and the position.
  SmallPtrSet<Operation *, 16> ops;
};

/// Where a packed value comes from: the body's argument holding its word
/// and the loop dimension of its position.
struct PackedSource {
  unsigned arg;   ///< 0: the codes' word, 2: the zero points'
  unsigned dim;   ///< the generic's loop of the position (linalg.index)
  const char *what; ///< for messages
  const char *name; ///< the position: "k" (codes) or "n" (zero points)
  /// Which field of its word position p is in: p mod 32/b, or slot[p mod 8]
  /// (AWQ's nibble order).
  const int *slot = nullptr;
};
/// AWQ's nibble order: column j of a word's eight sits in nibble
/// awqSlot[j] (humming::Adapters' kAwqSlot; its checkpoints' order
/// 0, 2, 4, 6, 1, 3, 5, 7 inverted).
constexpr int kAwqSlot[8] = {0, 4, 1, 5, 2, 6, 3, 7};
/// The code's source: k is the generic's loop 1 over [N, K] weights, loop 0
/// over [K, N] ones (`kFirst`).
/// With weights per batch element the generic's loop 0 is the batch and
/// the others follow it (`batched`).
PackedSource codeSource(bool kFirst, bool batched) {
  return {0, (kFirst ? 0u : 1u) + unsigned(batched), "the code", "k"};
}
PackedSource zeroSource(bool kFirst, bool batched) {
  return {2, (kFirst ? 1u : 0u) + unsigned(batched), "the zero point", "n"};
}

/// The value of `v` in a packed value's arithmetic for word `word` at
/// position `pos` of `src`, or nullopt (an operation outside it, poison).
std::optional<APInt> evaluate(Value v, const PackedSource &src,
                              const APInt &word, int64_t pos,
                              DenseMap<Value, APInt> &memo) {
  if (auto it = memo.find(v); it != memo.end())
    return it->second;
  auto widthOf = [](Type t) -> unsigned {
    return t.isIndex() ? 64 : t.getIntOrFloatBitWidth();
  };
  std::optional<APInt> r;
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    if (arg.getArgNumber() == src.arg)
      r = word;
  } else if (Operation *op = v.getDefiningOp()) {
    auto in = [&](unsigned i) {
      return evaluate(op->getOperand(i), src, word, pos, memo);
    };
    IntegerAttr c;
    if (matchPattern(v, m_Constant(&c))) {
      r = c.getValue().sextOrTrunc(widthOf(v.getType()));
    } else if (auto idx = dyn_cast<linalg::IndexOp>(op)) {
      if (idx.getDim() == src.dim)
        r = APInt(64, uint64_t(pos));
    } else if (isa<arith::IndexCastOp, arith::ExtSIOp>(op)) {
      if (auto a = in(0))
        r = a->sextOrTrunc(widthOf(v.getType()));
    } else if (isa<arith::IndexCastUIOp, arith::ExtUIOp, arith::TruncIOp>(
                   op)) {
      if (auto a = in(0))
        r = a->zextOrTrunc(widthOf(v.getType()));
    } else if (op->getNumOperands() == 2) {
      std::optional<APInt> a = in(0), b = in(1);
      if (a && b) {
        const unsigned w = a->getBitWidth();
        if (isa<arith::AndIOp>(op))
          r = *a & *b;
        else if (isa<arith::OrIOp>(op))
          r = *a | *b;
        else if (isa<arith::XOrIOp>(op))
          r = *a ^ *b;
        else if (isa<arith::AddIOp>(op))
          r = *a + *b;
        else if (isa<arith::SubIOp>(op))
          r = *a - *b;
        else if (isa<arith::MulIOp>(op))
          r = *a * *b;
        else if (isa<arith::ShRUIOp, arith::ShRSIOp, arith::ShLIOp>(op)) {
          if (b->ult(w)) // a shift by the width or more is poison
            r = isa<arith::ShRUIOp>(op)   ? a->lshr(*b)
                : isa<arith::ShRSIOp>(op) ? a->ashr(*b)
                                          : a->shl(*b);
        } else if (!b->isZero()) {
          if (isa<arith::RemUIOp>(op))
            r = a->urem(*b);
          else if (isa<arith::DivUIOp>(op))
            r = a->udiv(*b);
          else if (isa<arith::RemSIOp>(op))
            r = a->srem(*b);
          else if (isa<arith::DivSIOp>(op))
            r = a->sdiv(*b);
        }
      }
    }
  }
  if (r)
    memo[v] = *r;
  return r;
}

/// The packed value `value` (the integer a conversion reads) of `body`,
/// `bits` wide, from `src` over positions 0 .. extent - 1, or why it is
/// not one.
std::variant<PackedCode, std::string>
matchPackedValue(Block &body, Value value, const PackedSource &src,
                 unsigned bits, int64_t extent, bool signedConversion,
                 int64_t offset = 0, bool wrap = true) {
  PackedCode p;
  p.bits = bits;
  p.offset = offset;
  const std::string what = src.what;
  const std::string word = src.arg == 0 ? "the word (the first input)"
                                        : "its word (the third input)";
  const std::string position = std::string(src.name) + " (linalg.index " +
                               std::to_string(src.dim) + ")";
  // The operations computing it: integer arithmetic of the word, the
  // position and constants.
  SmallVector<Value> work{value};
  while (!work.empty()) {
    Value v = work.pop_back_val();
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      if (arg.getOwner() != &body || arg.getArgNumber() != src.arg)
        return "expected " + what + " computed from " + word + ", " +
               position + " and constants only, got a use of block "
               "argument " +
               std::to_string(arg.getArgNumber());
      continue;
    }
    Operation *op = v.getDefiningOp();
    if (!p.ops.insert(op).second)
      continue;
    if (auto idx = dyn_cast<linalg::IndexOp>(op)) {
      if (idx.getDim() != src.dim)
        return "expected " + what + " computed from " + position +
               ", got linalg.index " + std::to_string(idx.getDim());
      continue;
    }
    if (matchPattern(v, m_Constant()))
      continue;
    if (!isa<arith::AndIOp, arith::OrIOp, arith::XOrIOp, arith::AddIOp,
             arith::SubIOp, arith::MulIOp, arith::ShRUIOp, arith::ShRSIOp,
             arith::ShLIOp, arith::RemUIOp, arith::DivUIOp, arith::RemSIOp,
             arith::DivSIOp, arith::IndexCastOp, arith::IndexCastUIOp,
             arith::ExtUIOp, arith::ExtSIOp, arith::TruncIOp>(op))
      return "expected integer arithmetic (arith shifts, masks, add, "
             "sub, mul, div, rem, casts) extracting " +
             what + ", got " + op->getName().getStringRef().str();
    for (Value operand : op->getOperands())
      work.push_back(operand);
  }
  // A b-bit integer converted as signed holds two's complement values; a
  // wider one holds the value's b bits as a non-negative number, whatever
  // the conversion. (The evaluation compares bits: a signed value's two's
  // complement pattern is what the word holds.)
  p.isSigned =
      signedConversion && value.getType().getIntOrFloatBitWidth() == bits;
  // What the arithmetic computes, for sample words and positions.
  const int64_t per = 32 / bits;
  const uint32_t sampleWords[] = {0x76543210u, 0xFEDCBA98u, 0x9E3779B9u,
                                  0xB7E15162u, 0xFFFFFFFFu, 0u};
  SmallVector<int64_t> positions;
  for (int64_t i = 0; i < 2 * per && i < extent; ++i)
    positions.push_back(i);
  positions.append({extent / 2 + 1 < extent ? extent / 2 + 1 : 0, extent - 1});
  const std::string index = src.name;
  for (uint32_t w : sampleWords)
    for (int64_t at : positions) {
      DenseMap<Value, APInt> memo;
      std::optional<APInt> got = evaluate(value, src, APInt(32, w), at, memo);
      // (With an offset: the field plus it, modulo 2^b where `wrap`.)
      const uint64_t mask = (uint64_t(1) << bits) - 1;
      const uint64_t field =
          src.slot ? uint64_t(src.slot[at % per]) : uint64_t(at % per);
      uint64_t want = ((uint64_t(w) >> (bits * field)) & mask) +
                      uint64_t(offset);
      if (wrap)
        want &= mask;
      if (!got || got->getZExtValue() != want)
        return "expected the body to extract " + what + " at " + index +
               " as bits " + std::to_string(bits) +
               (src.slot ? " (AWQ's nibble of " + index + " mod 8)"
                         : " (" + index + " mod " + std::to_string(per) +
                               ")") +
               " ..+" + std::to_string(bits) +
               " of its word (least significant first), got " +
               (got ? std::to_string(got->getZExtValue()) : "poison") +
               " for word " + llvm::utohexstr(w) + " at " + index + " = " +
               std::to_string(at) + " (want " + std::to_string(want) + ")";
    }
  return p;
}

/// The packed code `code` of `body` in a dequantization of N x K codes
/// stored as `codesType` and indexed by `map`, or why it is not one: words
/// [N, K b / 32] indexed (n, k floordiv 32 / b) (humming's canonical form)
/// or [K b / 32, N] indexed (k floordiv 32 / b, n) (GPTQ's qweight).
std::variant<PackedCode, std::string>
matchPackedCode(Block &body, Value code, ShapedType codesType, AffineMap map,
                int64_t n, int64_t k, bool signedConversion, bool kFirst,
                bool batched) {
  MLIRContext *ctx = map.getContext();
  AffineExpr dn = getAffineDimExpr(0, ctx), dk = getAffineDimExpr(1, ctx);
  const bool two = codesType.getRank() == 2;
  // AWQ's qweight: [K, N / 8] indexed (k, n floordiv 8), the code taken
  // at n in AWQ's nibble order.
  if (two && map.getNumResults() == 2 && map.getResult(0) == dk &&
      staticIdentity(codesType) && codesType.getDimSize(0) == k &&
      n % 8 == 0 && codesType.getDimSize(1) == n / 8 &&
      map.getResult(1) == dn.floorDiv(8)) {
    PackedSource awq = zeroSource(kFirst, batched);
    awq.arg = 0;
    awq.what = "the code";
    awq.slot = kAwqSlot;
    std::variant<PackedCode, std::string> p =
        matchPackedValue(body, code, awq, 4, n, signedConversion);
    if (auto *c = std::get_if<PackedCode>(&p))
      c->awq = true;
    else
      return "AWQ's qweight ([K, N / 8] words indexed by (k, n floordiv "
             "8)): " +
             std::get<std::string>(p);
    return p;
  }
  const bool gptq = map.getNumResults() == 2 && map.getResult(1) == dn;
  // b from the words per row: K codes of b bits in K b / 32 words.
  const int64_t words = two ? codesType.getDimSize(gptq ? 0 : 1) : 0;
  const int64_t rows = two ? codesType.getDimSize(gptq ? 1 : 0) : 0;
  unsigned bits = 0;
  if (rows == n && k > 0 && words > 0 && (32 * words) % k == 0)
    bits = unsigned(32 * words / k);
  const int64_t per = bits ? 32 / bits : 0;
  AffineExpr packedK = per ? dk.floorDiv(per) : dk;
  if (!llvm::is_contained({1u, 2u, 4u, 8u}, bits) ||
      !staticIdentity(codesType) ||
      map != AffineMap::get(2, 0,
                            gptq ? ArrayRef<AffineExpr>{packedK, dn}
                                 : ArrayRef<AffineExpr>{dn, packedK},
                            ctx))
    return "expected packed codes as [N, K b / 32] 32-bit words indexed "
           "by (n, k floordiv 32 / b) (humming's canonical form) or "
           "[K b / 32, N] indexed by (k floordiv 32 / b, n) (GPTQ's "
           "qweight) for b = 1, 2, 4 or 8, or [K, N / 8] indexed by (k, n "
           "floordiv 8) (AWQ's qweight) (N = " +
           std::to_string(n) + ", K = " + std::to_string(k) + "), got " +
           str(codesType) + " indexed by " + str(map);
  std::variant<PackedCode, std::string> p =
      matchPackedValue(body, code, codeSource(kFirst, batched), bits, k,
                       signedConversion);
  if (auto *c = std::get_if<PackedCode>(&p))
    c->gptq = gptq;
  return p;
}

/// Whether `v` is computed (within its block) from block argument `arg`.
bool reads(Value v, BlockArgument arg) {
  SmallVector<Value> work{v};
  SmallPtrSet<Operation *, 16> seen;
  while (!work.empty()) {
    Value x = work.pop_back_val();
    if (x == arg)
      return true;
    Operation *op = x.getDefiningOp();
    if (!op || op->getBlock() != arg.getOwner() || !seen.insert(op).second)
      continue;
    for (Value operand : op->getOperands())
      work.push_back(operand);
  }
  return false;
}

/// Whether `mul` (null: no arith.mulf) is x times y, in either order.
bool multiplies(arith::MulFOp mul, Value x, Value y) {
  return mul && ((mul.getLhs() == x && mul.getRhs() == y) ||
                 (mul.getLhs() == y && mul.getRhs() == x));
}

/// The dequantization writing `wd` [N, K] (`kFirst`: [K, N]) of `half`, or
/// why it is not one. Over [K, N] the generic's loops are (k, n): its input
/// maps are read through the swap, so that every check below speaks of
/// (n, k) as over [N, K]. Its phases, in the order their refusals take
/// precedence, each refuse with the reason or leave what it matched.
class DequantMatcher {
public:
  DequantMatcher(linalg::GenericOp g, int64_t n, int64_t k, Type half,
                 bool kFirst, int64_t batch)
      : g(g), n(n), k(k), half(half), kFirst(kFirst), batch(batch),
        batched(batch > 0) {}

  std::variant<Dequant, Refusal> run() {
    using Phase = Why (DequantMatcher::*)();
    for (Phase phase :
         {&DequantMatcher::matchOperands, &DequantMatcher::matchGlobalScale,
          &DequantMatcher::matchCodes, &DequantMatcher::matchPackedZeroPoints,
          &DequantMatcher::checkCodeConversion,
          &DequantMatcher::matchScaleConversion,
          &DequantMatcher::matchArithmetic})
      if (Why why = (this->*phase)())
        return no(std::move(*why));
    Dequant d;
    if (Why why = describe(d))
      return no(std::move(*why));
    return d;
  }

private:
  using Why = std::optional<std::string>;

  Refusal no(std::string why) const {
    // (The maps quoted are read as of (n, k) = (d0, d1): without the batch
    // and, over [K, N], through the swap of the loops.)
    return Refusal{
        std::string("the dequantization (linalg.generic writing the "
                    "weights") +
        (batched ? std::string(" per batch element [B, ") +
                       (kFirst ? "K, N]" : "N, K]") +
                       ": its maps read without the batch, as of (n, k) = "
                       "(d0, d1)"
         : kFirst ? std::string(" [K, N]: its maps read as of (n, k) = "
                                "(d0, d1)")
                  : std::string()) +
        "): " + std::move(why)};
  }

  /// Loops, output and the inputs' types and maps as one matrix over
  /// (n, k) sees them (`types`, `maps`, `ins`, the body's operations).
  Why matchOperands() {
    const unsigned loops = batched ? 3 : 2;
    if (!(g.hasPureBufferSemantics() || g.hasPureTensorSemantics()) ||
        g.getNumDpsInits() != 1 || g.getNumLoops() != loops ||
        g.getNumParallelLoops() != loops)
      return Why(std::string("expected ") + (batched ? "three" : "two") +
                 " parallel loops over " + (batched ? "[B, N, K]" : "[N, K]") +
                 " on memrefs or on tensors, one output");
    maps = g.getIndexingMapsArray();
    if (!maps.back().isIdentity())
      return Why(std::string("expected the output indexed by ") +
                 (batched ? "(b, " : "(") + (kFirst ? "k, n)" : "n, k)") +
                 ", got " + str(maps.back()));
    // The inputs' types as one batch element sees them: with weights per
    // batch element every input is [B, ...] indexed (b, ...) and is read as
    // its [...] by the maps without b; the global scale, [B] indexed (b), as
    // the [1] indexed (0) of one matrix.
    for (OpOperand *in : g.getDpsInputOperands())
      types.push_back(cast<ShapedType>(in->get().getType()));
    if (batched) {
      MLIRContext *ctx = g.getContext();
      AffineExpr d0 = getAffineDimExpr(0, ctx);
      SmallVector<AffineExpr> shift = {getAffineConstantExpr(0, ctx),
                                       getAffineDimExpr(0, ctx),
                                       getAffineDimExpr(1, ctx)};
      for (auto [i, t] : llvm::enumerate(types)) {
        AffineMap m = maps[i];
        const bool last = i + 1 == types.size();
        if (last && t.getRank() == 1 && t.getDimSize(0) == batch &&
            m.getNumResults() == 1 && m.getResult(0) == d0) {
          types[i] = t.clone(ArrayRef<int64_t>{1});
          maps[i] = AffineMap::get(2, 0, getAffineConstantExpr(0, ctx));
          continue;
        }
        if (!staticIdentity(t) || t.getRank() < 2 || t.getDimSize(0) != batch ||
            m.getNumResults() != unsigned(t.getRank()) ||
            m.getResult(0) != d0 ||
            llvm::any_of(m.getResults().drop_front(),
                         [](AffineExpr e) { return e.isFunctionOfDim(0); }))
          return Why("expected input #" + std::to_string(i) +
                     " [B, ...] (B = " + std::to_string(batch) +
                     ") indexed (b, ...) with b only "
                     "first, one matrix's tensor per batch element (or a "
                     "global scale [B] indexed (b)), got " +
                     str(t) + " indexed by " + str(m));
        types[i] = t.clone(t.getShape().drop_front());
        maps[i] = m.dropResult(0).replaceDimsAndSymbols(shift, {}, 2, 0);
      }
      maps.back() = AffineMap::getMultiDimIdentityMap(2, ctx);
    }
    if (kFirst) {
      AffineMap swap = AffineMap::getPermutationMap(ArrayRef<unsigned>{1, 0},
                                                    g.getContext());
      for (AffineMap &m : maps)
        m = m.compose(swap);
    }
    ins = g.getNumDpsInputs();
    if (ins != 2 && ins != 3 && ins != 4)
      return Why("expected codes and scales (and zero points, and a global "
                 "scale) as inputs, got " +
                 std::to_string(ins) + " inputs");
    body = &g.getRegion().front();
    for (Operation &op : *body)
      ops.push_back(&op);
    codeArg = body->getArgument(0);
    scaleArg = body->getArgument(1);
    return std::nullopt;
  }

  /// NVFP4's global scale, if the last input is one (`globalArg`,
  /// `globalConv`; `ins` then counts the others).
  Why matchGlobalScale() {
    // A global scale (NVFP4: one f32 for the whole tensor, after the group
    // scales): the last input, [1] of f32 read at 0, truncated to the
    // weights' type and multiplied into the dequantized weight last.
    if (ins >= 3) {
      ShapedType lt = types[ins - 1];
      AffineMap lm = maps[ins - 1];
      const bool one =
          lt.getRank() == 1 && lt.getDimSize(0) == 1 &&
          lm.getNumResults() == 1 &&
          lm.getResult(0) == getAffineConstantExpr(0, g.getContext());
      if (one) {
        if (!lt.getElementType().isF32())
          return Why("expected the global scale ([1], the last input) in f32, "
                     "as humming.gemm takes it, got " +
                     str(lt));
        globalArg = body->getArgument(ins - 1);
        for (Operation &op : *body)
          if (auto tr = dyn_cast<arith::TruncFOp>(&op);
              tr && tr.getIn() == globalArg && tr.getType() == half)
            globalConv = tr;
        if (!globalConv)
          return Why("expected the f32 global scale converted to " + str(half) +
                     " with arith.truncf before its product");
        --ins;
      } else if (ins == 4) {
        return Why("expected a global scale [1] read at 0 as the fourth input, "
                   "got " +
                   str(lt) + " indexed by " + str(lm));
      }
    }
    return std::nullopt;
  }

  /// The code's conversion to the weights' type (`conv`) and what it says
  /// of the codes' storage (`type`, `packed`).
  Why matchCodes() {
    // The conversion to the weights' type says how codes are stored: of the
    // code itself (8-bit codes), or of an integer extracted from the code's
    // 32-bit word (packed codes). Of several conversions (packed integer zero
    // points have their own), the first that reads the code's word.
    auto conversion = [&](Operation *op) {
      return isa<arith::SIToFPOp, arith::UIToFPOp, arith::ExtFOp>(op) &&
             op->getResult(0).getType() == half;
    };
    for (Operation *op : ops)
      if (conversion(op) && reads(op->getOperand(0), codeArg)) {
        conv = op;
        break;
      }
    for (Operation *op : ops)
      if (!conv && conversion(op))
        conv = op;
    if (!conv)
      for (Operation *op : ops)
        if (llvm::is_contained(op->getOperands(), codeArg)) {
          conv = op;
          break;
        }
    if (!conv)
      conv = ops[0];
    Type codeType = codeArg.getType();
    ShapedType codesType = types[0];
    if (conv->getNumOperands() == 1 && conv->getOperand(0) == codeArg) {
      if (isa<arith::SIToFPOp>(conv) && codeType.isSignlessInteger(8))
        type = hq::ScalarType::sint(8);
      else if (isa<arith::UIToFPOp>(conv) && codeType.isSignlessInteger(8))
        type = hq::ScalarType::uint(8);
      else if (isa<arith::ExtFOp>(conv) && (isa<Float8E4M3FNType>(codeType) ||
                                            isa<Float8E5M2Type>(codeType)))
        type = toScalarType(codeType);
    } else if (isa<arith::SIToFPOp, arith::UIToFPOp>(conv) &&
               codeType.isSignlessInteger(32) &&
               conv->getResult(0).getType() == half) {
      std::variant<PackedCode, std::string> pc =
          matchPackedCode(*body, conv->getOperand(0), codesType, maps[0], n, k,
                          isa<arith::SIToFPOp>(conv), kFirst, batched);
      if (auto *why = std::get_if<std::string>(&pc))
        return Why("packed codes: " + *why);
      packed = std::get<PackedCode>(pc);
      type = packed->isSigned ? hq::ScalarType::sint(packed->bits)
                              : hq::ScalarType::uint(packed->bits);
    } else if (auto fp4 = conv->getOperand(0).getDefiningOp<arith::BitcastOp>();
               fp4 && isa<arith::ExtFOp>(conv) &&
               codeType.isSignlessInteger(32) &&
               isa<Float4E2M1FNType>(fp4.getType()) &&
               fp4.getIn().getType().isSignlessInteger(4)) {
      // fp4 (e2m1) codes packed like the integer ones: the 4-bit field
      // extracted as an i4, arith.bitcast to f4E2M1FN, arith.extf.
      std::variant<PackedCode, std::string> pc =
          matchPackedCode(*body, fp4.getIn(), codesType, maps[0], n, k,
                          /*signedConversion=*/false, kFirst, batched);
      if (auto *why = std::get_if<std::string>(&pc))
        return Why("packed e2m1 codes: " + *why);
      packed = std::get<PackedCode>(pc);
      if (packed->bits != 4 || packed->awq)
        return Why("packed e2m1 codes: expected 4-bit fields packed along K, "
                   "eight to an i32 word, got " +
                   std::to_string(packed->bits) + "-bit fields" +
                   (packed->awq ? " in AWQ's order" : ""));
      // The bitcast is part of the conversion, not a step.
      packed->ops.insert(fp4);
      type = hq::ScalarType::e2m1();
    }
    return std::nullopt;
  }

  /// Integer zero points packed along N (`zeroConv`, `packedZero`).
  Why matchPackedZeroPoints() {
    // Integer zero points of packed codes: packed along N into i32 words as
    // the codes are along K, converted to the weights' type on their own.
    if (packed && ins == 3 &&
        body->getArgument(2).getType().isSignlessInteger(32)) {
      for (Operation *op : ops)
        if (op != conv && isa<arith::SIToFPOp, arith::UIToFPOp>(op) &&
            op->getResult(0).getType() == half &&
            reads(op->getOperand(0), body->getArgument(2))) {
          zeroConv = op;
          break;
        }
      if (!zeroConv)
        return Why("expected integer zero points (i32 words, the third input) "
                   "converted to " +
                   str(half) + " with arith.uitofp");
      // (AWQ's qzeros are packed in its nibble order, as its qweight.)
      PackedSource zs = zeroSource(kFirst, batched);
      if (packed->awq)
        zs.slot = kAwqSlot;
      std::variant<PackedCode, std::string> pz =
          matchPackedValue(*body, zeroConv->getOperand(0), zs, packed->bits, n,
                           isa<arith::SIToFPOp>(zeroConv));
      // GPTQ's qzeros store z - 1 (checkpoint_format gptq): its
      // dequantization adds 1 to the stored value, modulo 2^b as humming's
      // gptq format reads it (a stored 2^b - 1 is z = 0). Without the modulo
      // a stored 2^b - 1 means 2^b, which no b-bit zero point holds.
      if (packed->gptq && std::holds_alternative<std::string>(pz)) {
        std::variant<PackedCode, std::string> plusOne =
            matchPackedValue(*body, zeroConv->getOperand(0), zs, packed->bits,
                             n, isa<arith::SIToFPOp>(zeroConv), /*offset=*/1);
        if (std::holds_alternative<PackedCode>(plusOne))
          pz = plusOne;
        else if (std::holds_alternative<PackedCode>(matchPackedValue(
                     *body, zeroConv->getOperand(0), zs, packed->bits, n,
                     isa<arith::SIToFPOp>(zeroConv), /*offset=*/1,
                     /*wrap=*/false)))
          return Why("packed zero points: GPTQ's qzeros plus 1 without "
                     "wrapping: a stored " +
                     std::to_string((1u << packed->bits) - 1) + " gives " +
                     std::to_string(1u << packed->bits) + ", which no " +
                     std::to_string(packed->bits) +
                     "-bit zero point holds (humming's gptq format reads it "
                     "as 0, the z the quantizer stored); expected (stored + 1) "
                     "mod " +
                     std::to_string(1u << packed->bits) +
                     " (arith.andi of the sum with " +
                     std::to_string((1u << packed->bits) - 1) + ")");
      }
      if (auto *why = std::get_if<std::string>(&pz))
        return Why("packed zero points: " + *why);
      packedZero = std::get<PackedCode>(pz);
      if (packedZero->isSigned)
        return Why("expected unsigned zero points (humming's integer zero "
                   "points are unsigned b-bit values), got a signed conversion "
                   "of an i" +
                   std::to_string(packed->bits));
    }
    return std::nullopt;
  }

  Why checkCodeConversion() {
    if (!type || conv->getResult(0).getType() != half)
      return Why("expected the body to start by converting the code (the first "
                 "input) to " +
                 str(half) +
                 " with arith.sitofp / arith.uitofp (i8, or an integer "
                 "extracted from packed i32 words) or arith.extf (f8E4M3FN, "
                 "f8E5M2, or f4E2M1FN bitcast from an i4 extracted from packed "
                 "i32 words), got " +
                 conv->getName().getStringRef().str() + " of " +
                 str(codeArg.getType()));
    return std::nullopt;
  }

  /// The scale as the product reads it (`scaleValue`, `scaleConv`).
  Why matchScaleConversion() {
    Type scaleElem = types[1].getElementType();
    // The scale as the product reads it: the second input itself, or, for
    // e8m0 / e4m3 scales (MXFP4 / NVFP4 checkpoints), its arith.extf to the
    // weights' type.
    scaleValue = scaleArg;
    if (scaleElem != half) {
      if (isa<Float8E8M0FNUType, Float8E4M3FNType>(scaleElem))
        for (Operation *op : ops)
          if (auto ext = dyn_cast<arith::ExtFOp>(op);
              ext && ext.getIn() == scaleArg && ext.getType() == half) {
            scaleConv = op;
            scaleValue = ext.getResult();
            break;
          }
      if (!scaleConv)
        return Why("expected scales of the weights' type " + str(half) +
                   ", or f8E8M0FNU / f8E4M3FN ones converted to it with "
                   "arith.extf, got " +
                   str(scaleElem));
    }
    return std::nullopt;
  }

  /// The body's steps after the conversions: the zero point's (or the
  /// implicit zero's) subtraction, the scale's and the global scale's
  /// products, the yield.
  Why matchArithmetic() {
    // Unsigned codes: humming's unsigned codes without a zero point stand
    // for code - 2^(b-1); the dequantization must subtract that (as a
    // constant) or a zero point.
    const bool unsignedCodes = !type->isSigned && !type->isFloat();
    const double implicitZeroValue = double(1u << (type->bits - 1));
    // Constants in the body are operands, not steps; with packed codes the
    // extraction's steps come before the conversion.
    SmallVector<Operation *> steps;
    for (Operation *op : ops)
      if (!isa<arith::ConstantOp>(op) &&
          !(packed && packed->ops.contains(op)) &&
          !(packedZero && (op == zeroConv || packedZero->ops.contains(op))) &&
          op != scaleConv && op != globalConv)
        steps.push_back(op);
    // (The global scale's product is one more step.)
    const size_t extra = globalArg ? 1 : 0;
    const bool implicitZero = unsignedCodes && ins == 2 &&
                              steps.size() == 4 + extra &&
                              isa<arith::SubFOp>(steps[1]);
    if (steps.size() != ins + 1 + extra && !implicitZero)
      return Why(
          "expected a body of a conversion of the code" +
          std::string(ins == 3 ? ", a subtraction of the zero point" : "") +
          ", a multiplication by the scale" +
          std::string(globalArg ? " and one by the global scale" : "") +
          " and the yield, got " + std::to_string(steps.size()) +
          " operations" + (packed ? " besides the code's extraction" : "") +
          (unsignedCodes && ins == 2
               ? " (unsigned codes: also a subtraction of " +
                     std::to_string(int(implicitZeroValue)) + ")"
               : ""));
    if (steps[0] != conv)
      return Why("expected the conversion of the code as the body's first "
                 "step" +
                 std::string(packed ? " after the code's extraction" : "") +
                 ", got " + steps[0]->getName().getStringRef().str());
    ops = steps;
    Value v = conv->getResult(0);
    size_t next = 1;
    if (ins == 3) {
      auto sub = dyn_cast<arith::SubFOp>(ops[next++]);
      Value zero = zeroConv ? Value(zeroConv->getResult(0))
                            : Value(body->getArgument(2));
      if (!sub || sub.getLhs() != v || sub.getRhs() != zero)
        return Why(
            "expected the converted code minus the zero point (the third "
            "input" +
            std::string(zeroConv ? ", converted" : "") + "), arith.subf");
      v = sub.getResult();
    } else if (implicitZero) {
      auto sub = cast<arith::SubFOp>(ops[next++]);
      APFloat zero(0.0);
      if (sub.getLhs() != v ||
          !matchPattern(sub.getRhs(), m_ConstantFloat(&zero)) ||
          zero.convertToDouble() != implicitZeroValue)
        return Why("expected unsigned codes minus " +
                   std::to_string(int(implicitZeroValue)) +
                   " (their implicit zero without a zero point tensor), "
                   "arith.subf of a constant");
      v = sub.getResult();
    } else if (unsignedCodes) {
      return Why(
          "expected unsigned codes minus a zero point (a third input) or "
          "minus " +
          std::to_string(int(implicitZeroValue)) +
          " (humming's implicit zero for unsigned codes without "
          "zero points), got codes used as they are");
    }
    auto mul = dyn_cast<arith::MulFOp>(ops[next++]);
    if (!multiplies(mul, v, scaleValue))
      return Why("expected the code times the scale (the second input), "
                 "arith.mulf in " +
                 str(half));
    Value product = mul.getResult();
    if (globalArg) {
      Value global = globalConv->getResult(0);
      auto mul2 = dyn_cast<arith::MulFOp>(ops[next++]);
      if (!multiplies(mul2, product, global))
        return Why("expected the scaled code times the global scale (the last "
                   "input, truncated), arith.mulf in " +
                   str(half));
      product = mul2.getResult();
    }
    auto yield = dyn_cast<linalg::YieldOp>(ops[next]);
    if (!yield || yield.getNumOperands() != 1 || yield.getOperand(0) != product)
      return Why("expected the product to be yielded");

    return std::nullopt;
  }

  /// The operands, their layouts and the schema they make.
  Why describe(Dequant &d) {
    const ShapedType codesType = types[0], scalesType = types[1];
    d.op = g;
    d.n = n;
    d.k = k;
    d.batch = batch;
    d.codes = g.getDpsInputOperand(0)->get();
    d.scales = g.getDpsInputOperand(1)->get();
    if (ins == 3)
      d.zeroPoints = g.getDpsInputOperand(2)->get();
    if (globalArg)
      d.globalScale = g.getDpsInputOperand(globalArg.getArgNumber())->get();
    if (!packed && (!maps[0].isIdentity() || !staticIdentity(codesType) ||
                    codesType.getShape() != ArrayRef<int64_t>{n, k}))
      return Why("expected the codes [" + std::to_string(n) + ", " +
                 std::to_string(k) +
                 "] indexed by (n, k) with an identity "
                 "layout, got " +
                 str(codesType) + " indexed by " + str(maps[0]));
    // GPTQ's and AWQ's scales and qzeros are [G, N] and [G, N b / 32].
    const bool awq = packed && packed->awq;
    const bool gptq = packed && (packed->gptq || awq);
    const char *source = awq ? "AWQ's" : "GPTQ's";
    auto [group, why] =
        gptq ? gptqScaleGroup(maps[1], scalesType, n, k, source)
             : scaleGroup(maps[1], scalesType, n, k, "the scales");
    if (!group)
      return Why(why);
    if (d.zeroPoints && packedZero) {
      // Words of the zero points along N, per group of the scales: [N b / 32,
      // G] indexed (n floordiv 32 / b, group), or transposed, [G, N b / 32],
      // as GPTQ's and AWQ's qzeros.
      MLIRContext *ctx = g.getContext();
      const int64_t per = 32 / packed->bits;
      const int64_t groups = group > 0 ? k / group : 1;
      AffineExpr byGroup = group > 0 ? getAffineDimExpr(1, ctx).floorDiv(group)
                                     : getAffineConstantExpr(0, ctx);
      AffineExpr byN = getAffineDimExpr(0, ctx).floorDiv(per);
      ShapedType zt = types[2];
      const SmallVector<int64_t> shape =
          gptq ? SmallVector<int64_t>{groups, n / per}
               : SmallVector<int64_t>{n / per, groups};
      const AffineMap want =
          AffineMap::get(2, 0,
                         gptq ? ArrayRef<AffineExpr>{byGroup, byN}
                              : ArrayRef<AffineExpr>{byN, byGroup},
                         ctx);
      if (!staticIdentity(zt) || n % per != 0 ||
          zt.getShape() != ArrayRef<int64_t>(shape) || maps[2] != want) {
        const std::string byK = group > 0 ? "k floordiv g" : "0";
        const std::string sizes = "(N = " + std::to_string(n) +
                                  ", b = " + std::to_string(packed->bits) +
                                  ", G = " + std::to_string(groups) +
                                  "), got " + str(zt) + " indexed by " +
                                  str(maps[2]);
        return Why(gptq ? "packed zero points with " + std::string(source) +
                              " qweight: expected its qzeros [G, N b / 32] "
                              "32-bit words indexed by (" +
                              byK + ", n floordiv 32 / b) " + sizes
                        : "packed zero points: expected [N b / 32, G] 32-bit "
                          "words indexed by (n floordiv 32 / b, " +
                              byK + ") " + sizes);
      }
    } else if (d.zeroPoints) {
      if (gptq)
        return Why("expected " + std::string(source) +
                   " qzeros (integer zero points packed into i32 words) with "
                   "its qweight, got float zero points");
      if (maps[2] != maps[1] || types[2] != types[1])
        return Why("expected zero points of the scales' type and indexing, "
                   "got " +
                   str(types[2]) + " indexed by " + str(maps[2]));
    }
    std::optional<hq::ScalarType> scaleType =
        toScalarType(types[1].getElementType());
    if (globalArg && group <= 0)
      return Why("expected group scales with a global scale (NVFP4's two "
                 "levels), got one scale per row");
    d.schema = hq::WeightSchema::make(*type, *scaleType,
                                      globalArg   ? hq::Granularity::GroupTensor
                                      : group > 0 ? hq::Granularity::Group
                                                  : hq::Granularity::Channel,
                                      group > 0 ? group : 0,
                                      packedZero     ? hq::ZeroPointKind::Int
                                      : d.zeroPoints ? hq::ZeroPointKind::Float
                                                     : hq::ZeroPointKind::None);
    // GPTQ's tensors as they are: humming-legalize-schema repacks them
    // (format gptq: qzeros store z - 1; gptq_v2: z).
    if (awq)
      d.schema.format = hq::SourceFormat::AWQ;
    else if (gptq)
      d.schema.format = packedZero && packedZero->offset == 0
                            ? hq::SourceFormat::GPTQv2
                            : hq::SourceFormat::GPTQ;
    if (batched && (awq || gptq))
      return Why(std::string("expected weights per batch element in humming's "
                             "canonical form: humming.moe_gemm takes no ") +
                 source +
                 " tensors (convert them per expert on the host, "
                 "humming::sourceToCanonical)");
    // One expert of humming.moe_gemm per batch element.
    d.schema.experts = batch;
    return std::nullopt;
  }

  linalg::GenericOp g;
  const int64_t n, k;
  const Type half;
  const bool kFirst;
  const int64_t batch;
  const bool batched;
  SmallVector<ShapedType> types;
  SmallVector<AffineMap> maps;
  unsigned ins = 0;
  Block *body = nullptr;
  SmallVector<Operation *> ops;
  BlockArgument codeArg, scaleArg, globalArg;
  Operation *globalConv = nullptr, *conv = nullptr, *zeroConv = nullptr,
            *scaleConv = nullptr;
  std::optional<hq::ScalarType> type;
  std::optional<PackedCode> packed, packedZero;
  Value scaleValue;
};

std::variant<Dequant, Refusal> matchDequant(linalg::GenericOp g, int64_t n,
                                            int64_t k, Type half,
                                            bool kFirst = false,
                                            int64_t batch = 0) {
  return DequantMatcher(g, n, k, half, kFirst, batch).run();
}

/// Whether an operation strictly between `from` and `to` (same block),
/// or nested in one, uses `v`.
bool usedBetween(Value v, Operation *from, Operation *to) {
  for (Operation *user : v.getUsers()) {
    Operation *top = from->getBlock()->findAncestorOpInBlock(*user);
    if (top && top != from && top != to && from->isBeforeInBlock(top) &&
        top->isBeforeInBlock(to))
      return true;
  }
  return false;
}

struct RaiseQuantizedMatmulPass
    : public mlir::humming::impl::HummingRaiseQuantizedMatmulPassBase<
          RaiseQuantizedMatmulPass> {
  using Base::Base;

  void runOnOperation() override {
    // linalg.matmul, and linalg.batch_matmul whose weights are shared by
    // the batch (B broadcast: a [B, M, K] input is [B M, K] rows).
    SmallVector<linalg::LinalgOp> matmuls;
    getOperation()->walk([&](Operation *op) {
      if (isa<linalg::MatmulOp, linalg::BatchMatmulOp>(op))
        matmuls.push_back(cast<linalg::LinalgOp>(op));
    });
    for (linalg::LinalgOp mm : matmuls)
      if (Refusal r = raise(mm); !r.plain && !r.why.empty())
        mm->emitRemark() << "humming-raise-quantized-matmul: not raised: "
                         << r.why;
  }

  static bool isBatch(linalg::LinalgOp mm) {
    return isa<linalg::BatchMatmulOp>(mm.getOperation());
  }

  /// A [B, M, X] memref as [B M, X] (the batch form), else `v`.
  static Value rows(OpBuilder &b, linalg::LinalgOp mm, Value v,
                    SmallVectorImpl<Operation *> &built) {
    if (!isBatch(mm))
      return v;
    auto view = memref::CollapseShapeOp::create(
        b, mm.getLoc(), v, ArrayRef<ReassociationIndices>{{0, 1}, {2}});
    built.push_back(view);
    return view;
  }

  Refusal raise(linalg::LinalgOp mm) {
    if (mm.hasPureBufferSemantics())
      return raiseBuffers(mm);
    if (mm.hasPureTensorSemantics())
      return raiseTensors(mm);
    return {"", true};
  }

  /// What both forms check of the matmul: B = the dequantized weights
  /// indexed (n, k), f16 or bf16 throughout, static N and K (identity
  /// layouts on memrefs); then the dequantization `g` itself.
  std::variant<Dequant, Refusal> matchMatmul(linalg::LinalgOp mm,
                                              linalg::GenericOp g) {
    Value x = mm.getDpsInputOperand(0)->get();
    Value wd = mm.getDpsInputOperand(1)->get();
    Value y = mm.getDpsInitOperand(0)->get();
    MLIRContext *ctx = mm->getContext();
    // The batch form's loops are (b, m, n, k).
    const unsigned first = isBatch(mm) ? 1 : 0;
    AffineExpr bb = getAffineDimExpr(0, ctx),
               m = getAffineDimExpr(first, ctx),
               nn = getAffineDimExpr(first + 1, ctx),
               kk = getAffineDimExpr(first + 2, ctx);
    SmallVector<AffineMap> maps = mm.getIndexingMapsArray();
    auto mapOf = [&](ArrayRef<AffineExpr> e) {
      return AffineMap::get(first + 3, 0, e, ctx);
    };
    if (isBatch(mm)) {
      if (maps.size() != 3 || maps[0] != mapOf({bb, m, kk}) ||
          maps[2] != mapOf({bb, m, nn}))
        return Refusal{"expected a batch matmul of A indexed (b, m, k) into C "
                       "(b, m, n) with the weights as B"};
    } else if (maps.size() != 3 || maps[0] != mapOf({m, kk}) ||
               maps[2] != mapOf({m, nn})) {
      return Refusal{"expected a plain matmul (A indexed (m, k), C (m, n)) "
                     "with the weights as B"};
    }
    // B [N, K] indexed (n, k) (output = input * W^T), or [K, N] indexed
    // (k, n) (output = input * W, as GPTQ-style layers dequantize); in the
    // batch form shared by the batch, or one per batch element ([B, N, K]
    // indexed (b, n, k) or [B, K, N] by (b, k, n): humming.moe_gemm's
    // experts).
    const bool perBatch =
        isBatch(mm) && (maps[1] == mapOf({bb, nn, kk}) ||
                        maps[1] == mapOf({bb, kk, nn}));
    const bool kFirst = maps[1] == mapOf({kk, nn}) ||
                        (perBatch && maps[1] == mapOf({bb, kk, nn}));
    if (maps[1] != mapOf({nn, kk}) && !kFirst && !perBatch)
      return Refusal{
          std::string("expected the weights as B [N, K] indexed (n, k) (a "
                      "transposed-B matmul: output = input * W^T) or [K, N] "
                      "indexed (k, n) (output = input * W)") +
          (isBatch(mm) ? ", shared by the batch, or one matrix per batch "
                         "element ([B, N, K] indexed (b, n, k) or [B, K, N] "
                         "indexed (b, k, n))"
                       : "") +
          ", got B indexed " + str(maps[1])};
    auto xt = cast<ShapedType>(x.getType());
    auto wt = cast<ShapedType>(wd.getType());
    auto yt = cast<ShapedType>(y.getType());
    Type half = xt.getElementType();
    if (!isHalf(half) || wt.getElementType() != half ||
        yt.getElementType() != half)
      return Refusal{"expected f16 or bf16 input, weights and output of one "
                     "type (accumulation in f32 happens inside humming.gemm), "
                     "got " +
                     str(xt) + ", " + str(wt) + ", " + str(yt)};
    auto identity = [](ShapedType t) {
      auto mt = dyn_cast<MemRefType>(t);
      return !mt || mt.getLayout().isIdentity();
    };
    // K and N are the last dimensions of A and C (the batch and M may be
    // dynamic).
    const int64_t last = first + 1;
    if (!staticIdentity(wt) || xt.isDynamicDim(last) ||
        yt.isDynamicDim(last) || !identity(xt) || !identity(yt))
      return Refusal{
          std::string(isa<MemRefType>(xt) ? "expected identity-layout memrefs"
                                          : "expected tensors") +
          " with static N and K (" + (isBatch(mm) ? "the batch and " : "") +
          "M may be dynamic), got " + str(xt) + ", " + str(wt) + ", " +
          str(yt)};
    // (Per batch element the weights' dimensions follow B.)
    const unsigned w0 = perBatch ? 1 : 0;
    if (perBatch && !xt.isDynamicDim(0) &&
        xt.getDimSize(0) != wt.getDimSize(0))
      return Refusal{"expected the batch of the input to be the weights' "
                     "(one matrix per batch element), got " +
                     str(xt) + " and " + str(wt)};
    return matchDequant(g, wt.getDimSize(w0 + (kFirst ? 1 : 0)),
                        wt.getDimSize(w0 + (kFirst ? 0 : 1)), half, kFirst,
                        perBatch ? wt.getDimSize(0) : 0);
  }

  /// The schema of `d` as attributes for an f16 / bf16 gemm of N x K, or
  /// why humming.gemm does not take it.
  Refusal schemaAttrs(linalg::LinalgOp mm, const Dequant &d,
                      WeightSchemaAttr &ws, InputSchemaAttr &is) {
    MLIRContext *ctx = mm.getContext();
    const int64_t n = d.n, k = d.k;
    Type half =
        cast<ShapedType>(mm.getDpsInputOperand(1)->get().getType())
            .getElementType();
    hq::InputSchema in{*toScalarType(half), hq::ActScaling::None, 0};
    std::optional<hq::ScalarType> out = toScalarType(half);
    hq::ComputeOptions compute;
    if (d.batch)
      compute.gemm = hq::GemmType::GroupedMasked;
    if (hq::Diag why = hq::verifyCompatibility(d.schema, in, compute, out))
      return {"the schema found (" + describe(d.schema) + ") is not one " +
              (d.batch ? "humming.moe_gemm" : "humming.gemm") +
              " runs: " + *why};
    if (hq::Diag why = hq::verifyPadding(d.schema, in, n, k))
      return {"the sizes N = " + std::to_string(n) + ", K = " +
              std::to_string(k) + " need padding: " + *why};
    // humming.moe_gemm runs over prepared weights only (humming-legalize-
    // schema prepares canonical ones on the device): the layout must hold
    // them.
    if (d.batch)
      if (hq::Diag why = hq::layout::supports(d.schema, in, n, k))
        return {"the schema found (" + describe(d.schema) + ") per batch "
                "element runs as humming.moe_gemm over prepared weights, "
                "which do not hold it: " + *why};
    std::string quietError;
    {
      ScopedDiagnosticHandler quiet(ctx, [&](Diagnostic &diag) {
        quietError = diag.str();
        return success();
      });
      auto emitError = [&] { return mm.emitError(); };
      ws = WeightSchemaAttr::fromHost(emitError, ctx, d.schema);
      is = InputSchemaAttr::fromHost(emitError, ctx, in);
    }
    if (!ws || !is)
      return {"the schema found (" + describe(d.schema) + ") is not valid: " +
              quietError};
    return {};
  }

  /// Builds humming.gemm of memrefs x, codes, scales (zero points) into y
  /// at `b`'s point — humming.moe_gemm with one expert per batch element
  /// (`batch`: grouped_masked, every expert all of its rows) where the
  /// weights are per batch element; per-row scales given as [B?, N] become
  /// [B?, N, 1] views. Everything built goes to `built` (in order); null
  /// and why when the op does not verify (and nothing stays built).
  Operation *buildGemm(OpBuilder &b, linalg::LinalgOp mm, Value x,
                       Value codes, Value scales, Value zeroPoints,
                       Value globalScale, Value y, int64_t batch,
                       WeightSchemaAttr ws, InputSchemaAttr is,
                       SmallVectorImpl<Operation *> &built,
                       std::string &why) {
    MLIRContext *ctx = mm.getContext();
    const int64_t lead = batch > 0 ? 1 : 0;
    auto asColumn = [&](Value v) -> Value {
      auto t = cast<MemRefType>(v.getType());
      if (t.getRank() != 1 + lead)
        return v;
      SmallVector<int64_t> shape(t.getShape());
      shape.push_back(1);
      SmallVector<ReassociationIndices> groups;
      if (lead)
        groups.push_back({0});
      groups.push_back({lead, lead + 1});
      auto view =
          memref::ExpandShapeOp::create(b, mm.getLoc(), shape, v, groups);
      built.push_back(view);
      return view;
    };
    scales = asColumn(scales);
    if (zeroPoints)
      zeroPoints = asColumn(zeroPoints);
    Operation *op;
    if (batch > 0) {
      hq::ComputeOptions grouped;
      grouped.gemm = hq::GemmType::GroupedMasked;
      op = MoeGemmOp::create(
          b, mm.getLoc(), x, codes, scales, zeroPoints, globalScale, Value(),
          Value(), Value(), Value(), Value(), /*expert_layout=*/Value(),
          Value(), y, ws, is, ComputeAttr::fromHost(ctx, grouped),
          IntegerAttr(), IntegerAttr(), LayoutAttr(), ArrayAttr());
    } else {
      op = GemmOp::create(b, mm.getLoc(), x, codes, scales, zeroPoints,
                          globalScale, Value(), Value(), y, ws, is,
                          ComputeAttr(), LayoutAttr(), ArrayAttr());
    }
    built.push_back(op);
    LogicalResult verified = success();
    {
      ScopedDiagnosticHandler quiet(ctx, [&](Diagnostic &diag) {
        why = diag.str();
        return success();
      });
      verified = batch > 0 ? cast<MoeGemmOp>(op).verify()
                           : cast<GemmOp>(op).verify();
    }
    if (succeeded(verified))
      return op;
    for (Operation *op : llvm::reverse(built))
      op->erase();
    built.clear();
    return {};
  }

  Refusal raiseBuffers(linalg::LinalgOp mm) {
    Value x = mm.getDpsInputOperand(0)->get();
    Value wd = mm.getDpsInputOperand(1)->get();
    Value y = mm.getDpsInitOperand(0)->get();
    // A plain matmul (B written by no linalg.generic in this block) is not
    // a quantized one: no remark.
    linalg::GenericOp g;
    for (Operation *user : wd.getUsers())
      if (auto gen = dyn_cast<linalg::GenericOp>(user);
          gen && gen->getBlock() == mm->getBlock() &&
          gen->isBeforeInBlock(mm) && gen.getNumDpsInits() == 1 &&
          gen.getDpsInitOperand(0)->get() == wd)
        g = gen;
    if (!g)
      return {"", true};
    std::variant<Dequant, Refusal> found = matchMatmul(mm, g);
    if (auto *r = std::get_if<Refusal>(&found))
      return *r;
    Dequant &d = std::get<Dequant>(found);

    // The dequantized weights exist only for this matmul.
    SmallVector<Operation *> deallocs;
    auto alloc = wd.getDefiningOp<memref::AllocOp>();
    if (!alloc)
      return {"expected the dequantized weights in a memref.alloc of their "
              "own"};
    for (Operation *user : wd.getUsers()) {
      if (user == g || user == mm)
        continue;
      if (isa<memref::DeallocOp>(user)) {
        deallocs.push_back(user);
        continue;
      }
      return {"the dequantized weights are also used by " +
              user->getName().getStringRef().str() +
              ": only the matmul may read them"};
    }
    // linalg.matmul adds to C: it must be zeroed right before.
    linalg::FillOp fill;
    for (Operation *op = mm->getPrevNode(); op; op = op->getPrevNode())
      if (auto f = dyn_cast<linalg::FillOp>(op);
          f && f.hasPureBufferSemantics() &&
          f.getDpsInitOperand(0)->get() == y) {
        fill = f;
        break;
      }
    if (!fill || usedBetween(y, fill, mm) ||
        !matchPattern(fill.getDpsInputOperand(0)->get(), m_AnyZeroFloat()))
      return {"expected 'output' zeroed by a linalg.fill of 0 before the "
              "matmul with nothing else touching it in between (linalg.matmul "
              "adds to its output, humming.gemm overwrites it)"};
    for (Value v : {x, d.codes, d.scales, d.zeroPoints, d.globalScale})
      if (v && v == y)
        return {"expected the output to be none of the inputs"};
    // The gemm reads the codes, scales and zero points where the matmul
    // ran: nothing may touch them after the dequantization read them.
    for (Value v : {d.codes, d.scales, d.zeroPoints, d.globalScale})
      if (v && usedBetween(v, g, mm))
        return {"the codes, scales or zero points are used between the "
                "dequantization and the matmul: expected them unchanged "
                "there"};
    WeightSchemaAttr ws;
    InputSchemaAttr is;
    if (Refusal r = schemaAttrs(mm, d, ws, is))
      return r;
    OpBuilder b(mm);
    SmallVector<Operation *> built;
    std::string why;
    Value xr = rows(b, mm, x, built), yr = rows(b, mm, y, built);
    if (!buildGemm(b, mm, xr, d.codes, d.scales, d.zeroPoints, d.globalScale,
                   yr, d.batch, ws, is, built, why))
      return {std::string("the ") +
              (d.batch ? "humming.moe_gemm" : "humming.gemm") +
              " it would become does not verify: " + why};
    mm->erase();
    Operation *zero = fill.getDpsInputOperand(0)->get().getDefiningOp();
    fill.erase();
    if (zero && zero->use_empty())
      zero->erase();
    d.op.erase();
    for (Operation *op : deallocs)
      op->erase();
    alloc.erase();
    return {};
  }

  /// Tensor-level IR: the dequantization's result feeds the matmul, whose
  /// init is a zero linalg.fill. The gemm runs on buffers of the tensors
  /// (bufferization.to_buffer, read-only) into a new buffer of the output's
  /// shape, returned as the matmul's result by bufferization.to_tensor
  /// (restrict: nothing else aliases it); one-shot bufferization then
  /// removes the conversions.
  Refusal raiseTensors(linalg::LinalgOp mm) {
    Value x = mm.getDpsInputOperand(0)->get();
    Value wd = mm.getDpsInputOperand(1)->get();
    Value y = mm.getDpsInitOperand(0)->get();
    auto g = wd.getDefiningOp<linalg::GenericOp>();
    if (!g)
      return {"", true};
    std::variant<Dequant, Refusal> found = matchMatmul(mm, g);
    if (auto *r = std::get_if<Refusal>(&found))
      return *r;
    Dequant &d = std::get<Dequant>(found);
    for (Operation *user : wd.getUsers())
      if (user != mm.getOperation())
        return {"the dequantized weights are also used by " +
                user->getName().getStringRef().str() +
                ": only the matmul may read them"};
    auto fill = y.getDefiningOp<linalg::FillOp>();
    if (!fill ||
        !matchPattern(fill.getDpsInputOperand(0)->get(), m_AnyZeroFloat()))
      return {"expected 'output' a linalg.fill of 0 (linalg.matmul adds to "
              "its output, humming.gemm overwrites it)"};
    WeightSchemaAttr ws;
    InputSchemaAttr is;
    if (Refusal r = schemaAttrs(mm, d, ws, is))
      return r;
    OpBuilder b(mm);
    Location loc = mm.getLoc();
    SmallVector<Operation *> built;
    auto toBuffer = [&](Value t) -> Value {
      if (!t)
        return t;
      auto tt = cast<RankedTensorType>(t.getType());
      auto op = bufferization::ToBufferOp::create(
          b, loc, MemRefType::get(tt.getShape(), tt.getElementType()), t,
          /*read_only=*/true);
      built.push_back(op);
      return op;
    };
    Value xb = toBuffer(x), codes = toBuffer(d.codes),
          scales = toBuffer(d.scales), zeroPoints = toBuffer(d.zeroPoints),
          globalScale = toBuffer(d.globalScale);
    // The output's rows (and batch) are the input's (its N is static):
    // sized from x, so that the zeroed init tensor has no use left.
    auto yt = cast<RankedTensorType>(y.getType());
    SmallVector<Value> sizes;
    for (int64_t i = 0; i + 1 < yt.getRank(); ++i)
      if (yt.isDynamicDim(i)) {
        auto dim = tensor::DimOp::create(b, loc, x, i);
        built.push_back(dim);
        sizes.push_back(dim);
      }
    auto out = memref::AllocOp::create(
        b, loc, MemRefType::get(yt.getShape(), yt.getElementType()), sizes);
    built.push_back(out);
    std::string why;
    SmallVector<Operation *> gemmOps;
    Value xr = rows(b, mm, xb, gemmOps), outr = rows(b, mm, out, gemmOps);
    if (!buildGemm(b, mm, xr, codes, scales, zeroPoints, globalScale, outr,
                   d.batch, ws, is, gemmOps, why)) {
      for (Operation *op : llvm::reverse(built))
        op->erase();
      return {std::string("the ") +
              (d.batch ? "humming.moe_gemm" : "humming.gemm") +
              " it would become does not verify: " + why};
    }
    auto result = bufferization::ToTensorOp::create(
        b, loc, yt, out, /*restrict=*/true, /*writable=*/true);
    mm->getResult(0).replaceAllUsesWith(result.getResult());
    mm->erase();
    // The zeroed output, the dequantization and their empty tensors go
    // where nothing else reads them.
    auto eraseDead = [](Operation *op) {
      SmallVector<Operation *> work{op};
      while (!work.empty()) {
        Operation *o = work.pop_back_val();
        if (!o || !o->use_empty() ||
            !(isa<linalg::FillOp, linalg::GenericOp, tensor::EmptyOp,
                  tensor::DimOp>(o) ||
              (o->hasTrait<OpTrait::ConstantLike>())))
          continue;
        SmallVector<Operation *> defs;
        for (Value v : o->getOperands())
          defs.push_back(v.getDefiningOp());
        o->erase();
        work.append(defs.begin(), defs.end());
      }
    };
    eraseDead(fill);
    eraseDead(g);
    return {};
  }
};

} // namespace
