//===- QuantizeKernel.cpp - Activation quantization kernel ----------------===//
//
// The kernel of humming.quantize with an input schema: activations [M, K]
// (f16, bf16 or f32) to 8-bit codes [M, K] (e4m3, e5m2, int8) or 4-bit
// codes packed two per byte [M, K / 2] (int4, e2m1; the lower k in the low
// nibble) and f32 scales, per token, per group or with a static scale. It
// follows the host reference (humming::quantizeActivations) bit for bit:
// scale = absmax / max code in f32 (NaN ignored; 1 where not positive),
// code = the value / scale in f32, rounded to nearest even and saturated.
//
// One block of kQuantizeThreads threads per row (grid x = M: up to 2^31 - 1
// rows, where grid y would stop at 65535). Thread t owns
// the eight consecutive elements 8 t .. 8 t + 7 of every chunk of
// 8 x kQuantizeThreads; with K % 8 == 0 it reads them with one 16-byte load
// (two for f32) and writes their codes with one 8-byte store, else element
// by element. Per token a block-wide maximum (warp shuffles, then one value
// per warp through shared memory) precedes the conversion; rows of up to
// kHeldChunks chunks stay in registers meanwhile, longer ones are read
// again. Per group (a power of two from 8 to 256 elements: g / 8
// neighbouring lanes) the lanes of a group exchange their maxima by
// shuffles and convert in the same pass. Rows of codes may be longer than
// K (QuantizeKernelSpec::codesK, per token and static scaling): the
// columns past K get the code of zero, padding rows of K bytes to the
// 16-byte multiple the GEMM's copies need.
//
//===----------------------------------------------------------------------===//

#include "EmitterBase.h"
#include "Kernels.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

#include "Humming/Quant/Codec.h"

using namespace mlir;
using namespace mlir::humming;
namespace hq = ::humming;

namespace {

constexpr int64_t kPerThread = 8;
constexpr int64_t kWarps = kQuantizeThreads / 32;
/// Rows of up to this many chunks (8 x kQuantizeThreads elements each: K <=
/// 8192) stay in registers between the absmax and the conversion.
constexpr int64_t kHeldChunks = 8;

class QuantizeEmitter : EmitterBase {
public:
  QuantizeEmitter(ImplicitLocOpBuilder &b, const QuantizeKernelSpec &spec,
                  ArrayRef<Value> params, Value warpMax)
      : EmitterBase(b, params), spec(spec), warpMax(warpMax) {}

  void emit();

private:
  /// One of the thread's eight elements of a chunk: its column (i64),
  /// whether it lies in the source row (column < K), whether its code is
  /// written (column < the codes per row), and its value as f32 (0 outside
  /// the source row: the load reads a clamped column).
  struct Element {
    Value column, inRow, stored, value;
  };
  /// The thread's eight elements of chunk `chunk` (i32).
  SmallVector<Element> chunkElements(Value rowBase, Value chunk);
  /// Whole 16-byte loads and 8-byte stores: K and the codes per row are
  /// multiples of 8, so a thread's eight lie in the row or wholly past it,
  /// and the rows start aligned (the kernel ABI's 16-byte aligned
  /// pointers).
  bool vectorized() const {
    return spec.k % kPerThread == 0 && spec.codes() % kPerThread == 0;
  }
  /// y > x ? y : x: the maximum with a NaN `y` ignored. (arith.maxnumf
  /// would become a libdevice call, __nv_fmaxf, in the GPU lowering.)
  Value maxOf(Value x, Value y) {
    Value greater = arith::CmpFOp::create(b, arith::CmpFPredicate::OGT, y, x);
    return arith::SelectOp::create(b, greater, y, x);
  }
  /// max(a, |v|), NaN ignored.
  Value maxAbs(Value a, Value v) {
    // |v| by clearing the sign bit (the GPU lowering turns llvm.fabs into
    // a libdevice call).
    Value bits = arith::BitcastOp::create(b, i32, v);
    Value abs = arith::BitcastOp::create(
        b, f32, arith::AndIOp::create(b, bits, c32(0x7fffffff)));
    return maxOf(a, abs);
  }
  /// The maximum over the lanes `lane ^ 1 .. lane ^ (width / 2)`.
  Value laneMax(Value v, int64_t width) {
    for (int64_t offset = width / 2; offset >= 1; offset /= 2) {
      auto shfl = gpu::ShuffleOp::create(b, v, c32(offset), c32(32),
                                         gpu::ShuffleMode::XOR);
      v = maxOf(v, shfl.getShuffleResult());
    }
    return v;
  }
  /// absmax / max code, or 1 where that is not positive.
  Value scaleOf(Value amax) {
    Value s = arith::DivFOp::create(b, amax, cf(hq::maxValue(spec.input.type)));
    Value positive =
        arith::CmpFOp::create(b, arith::CmpFPredicate::OGT, s, cf(0));
    return arith::SelectOp::create(b, positive, s, cf(1));
  }
  /// The e2m1 code (i8, low 4 bits) of q: round to nearest even among
  /// 0, 0.5, 1, 1.5, 2, 3, 4, 6, saturated, with q's sign bit (also for
  /// -0); NaN gives 0 (e2m1 has no NaN). The cvt to e2m1 needs sm_100a:
  /// here the magnitude is the number of midpoints between neighbouring
  /// values that |q| passes: strictly where a tie rounds down to the even
  /// code below, at or past where it rounds up to the even code above.
  Value e2m1Code(Value q) {
    Value bits = arith::BitcastOp::create(b, i32, q);
    Value a = arith::BitcastOp::create(
        b, f32, arith::AndIOp::create(b, bits, c32(0x7fffffff)));
    const std::pair<double, bool> steps[] = {
        {0.25, false}, {0.75, true}, {1.25, false}, {1.75, true},
        {2.5, false},  {3.5, true},  {5.0, false}};
    Value mag = c32(0);
    for (auto [threshold, inclusive] : steps) {
      Value past = arith::CmpFOp::create(
          b, inclusive ? arith::CmpFPredicate::OGE : arith::CmpFPredicate::OGT,
          a, cf(threshold));
      mag = arith::AddIOp::create(b, mag, arith::ExtUIOp::create(b, i32, past));
    }
    Value sign = arith::ShRUIOp::create(
        b, arith::AndIOp::create(b, bits, c32(int32_t(0x80000000u))), c32(28));
    Value isNan = arith::CmpFOp::create(b, arith::CmpFPredicate::UNO, q, q);
    Value code = arith::SelectOp::create(b, isNan, c32(0),
                                         arith::OrIOp::create(b, sign, mag));
    return arith::TruncIOp::create(b, i8, code);
  }
  /// The codes of v / scale for the thread's eight elements, stored (at
  /// codeBase, the row's first code) where
  /// they lie in the row.
  void convertAndStore(Value codeBase, ArrayRef<Element> elems, Value scale);

  const QuantizeKernelSpec &spec;
  Value warpMax; ///< shared memory, one f32 per warp
};

SmallVector<QuantizeEmitter::Element>
QuantizeEmitter::chunkElements(Value rowBase, Value chunk) {
  Value tid = index32(gpu::ThreadIdOp::create(b, gpu::Dimension::x));
  Value first = arith::AddIOp::create(
      b,
      arith::MulIOp::create(b, sext64(chunk),
                            c64(kPerThread * kQuantizeThreads)),
      arith::MulIOp::create(b, sext64(tid), c64(kPerThread)));
  Type srcType = spec.source == hq::ScalarType::f32()   ? f32
                 : spec.source == hq::ScalarType::bf16() ? Type(b.getBF16Type())
                                                         : Type(b.getF16Type());
  SmallVector<Element> out;
  if (vectorized()) {
    // K % 8 == 0: the thread's eight lie in the row or wholly past it; one
    // 16-byte load (two for f32) at a clamped column.
    Value inRow = arith::CmpIOp::create(b, arith::CmpIPredicate::slt, first,
                                        c64(spec.k));
    Value clamped = arith::MinSIOp::create(b, first, c64(spec.k - kPerThread));
    auto vecType = VectorType::get({kPerThread}, srcType);
    Value addr = LLVM::GEPOp::create(
        b, ptr, srcType, param(hq::abi::ParamInput),
        ValueRange{arith::AddIOp::create(b, rowBase, clamped)});
    Value vec = LLVM::LoadOp::create(b, vecType, addr, /*alignment=*/16,
                                     /*isVolatile=*/false,
                                     /*isNonTemporal=*/false,
                                     /*isInvariant=*/true);
    Value stored = arith::CmpIOp::create(b, arith::CmpIPredicate::slt, first,
                                         c64(spec.codes()));
    for (int64_t j = 0; j < kPerThread; ++j) {
      Value v = LLVM::ExtractElementOp::create(b, vec, c32(j));
      if (srcType != f32)
        v = arith::ExtFOp::create(b, f32, v);
      out.push_back({arith::AddIOp::create(b, first, c64(j)), inRow, stored,
                     arith::SelectOp::create(b, inRow, v, cf(0))});
    }
    return out;
  }
  for (int64_t j = 0; j < kPerThread; ++j) {
    Value col = arith::AddIOp::create(b, first, c64(j));
    Value inRow = arith::CmpIOp::create(b, arith::CmpIPredicate::slt, col,
                                        c64(spec.k));
    Value clamped = arith::MinSIOp::create(b, col, c64(spec.k - 1));
    Value v = load(srcType, param(hq::abi::ParamInput),
                   arith::AddIOp::create(b, rowBase, clamped));
    if (srcType != f32)
      v = arith::ExtFOp::create(b, f32, v);
    Value stored = arith::CmpIOp::create(b, arith::CmpIPredicate::slt, col,
                                         c64(spec.codes()));
    out.push_back(
        {col, inRow, stored, arith::SelectOp::create(b, inRow, v, cf(0))});
  }
  return out;
}

void QuantizeEmitter::convertAndStore(Value codeBase, ArrayRef<Element> elems,
                                      Value scale) {
  const hq::ScalarType &t = spec.input.type;
  SmallVector<Value> codes;
  for (size_t j = 0; j < elems.size(); ++j) {
    Value q = arith::DivFOp::create(b, elems[j].value, scale);
    if (t == hq::ScalarType::e2m1()) {
      codes.push_back(e2m1Code(q));
      continue;
    }
    if (t.isInt()) {
      // Clamp to the type's range (NaN gives 0), then round half to even
      // by adding and subtracting 1.5 x 2^23: the f32 sum keeps no
      // fraction bits and rounds to nearest even, exact for |r| < 2^22.
      Value isNan =
          arith::CmpFOp::create(b, arith::CmpFPredicate::UNO, q, q);
      Value lo = cf(hq::minValue(t)), hi = cf(hq::maxValue(t));
      Value r = arith::SelectOp::create(
          b, arith::CmpFOp::create(b, arith::CmpFPredicate::OLT, q, lo), lo, q);
      r = arith::SelectOp::create(
          b, arith::CmpFOp::create(b, arith::CmpFPredicate::OGT, r, hi), hi, r);
      r = arith::SelectOp::create(b, isNan, cf(0), r);
      r = arith::SubFOp::create(b, arith::AddFOp::create(b, r, cf(12582912.0)),
                                cf(12582912.0));
      codes.push_back(arith::TruncIOp::create(
          b, i8, arith::FPToSIOp::create(b, i32, r)));
    } else {
      codes.push_back(q);
    }
  }
  if (t.bits == 4) {
    // Two codes per byte, the lower k in the low nibble; a row's codes
    // start at byte (row x codes per row) / 2 (an even number).
    SmallVector<Value> bytes;
    for (size_t j = 0; j < codes.size(); j += 2) {
      Value lo = arith::AndIOp::create(b, codes[j],
                                       arith::ConstantIntOp::create(b, i8, 15));
      Value hi = arith::ShLIOp::create(b, codes[j + 1],
                                       arith::ConstantIntOp::create(b, i8, 4));
      bytes.push_back(arith::OrIOp::create(b, lo, hi));
    }
    Value byteBase = arith::DivUIOp::create(b, codeBase, c64(2));
    if (vectorized()) {
      // The eight codes in one 4-byte store.
      auto vecType = VectorType::get({kPerThread / 2}, i8);
      Value vec = LLVM::UndefOp::create(b, vecType);
      for (int64_t j = 0; j < kPerThread / 2; ++j)
        vec = LLVM::InsertElementOp::create(b, vec, bytes[j], c32(j));
      auto ifIn =
          scf::IfOp::create(b, elems[0].stored, /*withElseRegion=*/false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(ifIn.thenBlock());
      Value addr = LLVM::GEPOp::create(
          b, ptr, i8, param(hq::abi::ParamOutput),
          ValueRange{arith::AddIOp::create(
              b, byteBase, arith::DivUIOp::create(b, elems[0].column, c64(2)))});
      LLVM::StoreOp::create(b, vec, addr, /*alignment=*/4);
      return;
    }
    // K and the codes per row even: a pair lies in the row or wholly past
    // it.
    for (size_t j = 0; j < bytes.size(); ++j) {
      auto ifIn =
          scf::IfOp::create(b, elems[2 * j].stored, /*withElseRegion=*/false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(ifIn.thenBlock());
      store(bytes[j], param(hq::abi::ParamOutput),
            arith::AddIOp::create(
                b, byteBase,
                arith::DivUIOp::create(b, elems[2 * j].column, c64(2))));
    }
    return;
  }
  if (!t.isInt()) {
    // cvt.rn.satfinite.{e4m3,e5m2}x2.f32 converts pairs: the first operand
    // lands in the upper byte.
    Type fp8 = t == hq::ScalarType::e5m2() ? Type(b.getType<Float8E5M2Type>())
                                           : Type(b.getType<Float8E4M3FNType>());
    SmallVector<Value> bytes;
    for (size_t j = 0; j < codes.size(); j += 2) {
      Value pair = NVVM::ConvertF32x2ToF8x2Op::create(
          b, i16, codes[j + 1], codes[j], NVVM::FPRoundingMode::RN,
          NVVM::SaturationMode::SATFINITE, /*relu=*/false, fp8);
      bytes.push_back(arith::TruncIOp::create(b, i8, pair));
      bytes.push_back(arith::TruncIOp::create(
          b, i8, arith::ShRUIOp::create(b, pair, arith::ConstantIntOp::create(
                                                    b, i16, 8))));
    }
    codes = bytes;
  }
  if (vectorized()) {
    // The eight codes in one 8-byte store (the row's codes start at a
    // multiple of 8 bytes: the codes per row are a multiple of 8).
    auto vecType = VectorType::get({kPerThread}, i8);
    Value vec = LLVM::UndefOp::create(b, vecType);
    for (int64_t j = 0; j < kPerThread; ++j)
      vec = LLVM::InsertElementOp::create(b, vec, codes[j], c32(j));
    auto ifIn = scf::IfOp::create(b, elems[0].stored, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifIn.thenBlock());
    Value addr = LLVM::GEPOp::create(
        b, ptr, i8, param(hq::abi::ParamOutput),
        ValueRange{arith::AddIOp::create(b, codeBase, elems[0].column)});
    LLVM::StoreOp::create(b, vec, addr, /*alignment=*/8);
    return;
  }
  for (size_t j = 0; j < elems.size(); ++j) {
    auto ifIn = scf::IfOp::create(b, elems[j].stored, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifIn.thenBlock());
    store(codes[j], param(hq::abi::ParamOutput),
          arith::AddIOp::create(b, codeBase, elems[j].column));
  }
}

void QuantizeEmitter::emit() {
  const hq::InputSchema &in = spec.input;
  Value row = index32(gpu::BlockIdOp::create(b, gpu::Dimension::x));
  Value tid = index32(gpu::ThreadIdOp::create(b, gpu::Dimension::x));
  Value rowBase = arith::MulIOp::create(b, sext64(row), c64(spec.k));
  Value codeBase = arith::MulIOp::create(b, sext64(row), c64(spec.codes()));
  // Every code of the row: past K those of zero.
  const int64_t chunks =
      hq::ceilDiv(spec.codes(), kPerThread * kQuantizeThreads);
  auto forChunks = [&](function_ref<void(Value)> body) {
    auto loop = scf::ForOp::create(b, c32(0), c32(chunks), c32(1));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    body(loop.getInductionVar());
  };
  auto elementsOf = [&](Value chunk) { return chunkElements(rowBase, chunk); };

  if (in.scaling == hq::ActScaling::Static) {
    Value scale = load(f32, param(hq::abi::ParamScales), c64(0));
    forChunks([&](Value chunk) {
      convertAndStore(codeBase, elementsOf(chunk), scale);
    });
    return;
  }

  if (in.scaling == hq::ActScaling::Group) {
    // A group is g / 8 neighbouring lanes; K is a multiple of g (the
    // verifier), so a group lies in the row or wholly past its end.
    const int64_t lanes = in.groupK / kPerThread;
    const int64_t groups = spec.k / in.groupK;
    forChunks([&](Value chunk) {
      SmallVector<Element> e = elementsOf(chunk);
      Value amax = cf(0);
      for (const Element &x : e)
        amax = maxAbs(amax, x.value);
      Value scale = scaleOf(laneMax(amax, lanes));
      convertAndStore(codeBase, e, scale);
      // The group's first lane writes its scale.
      Value first = arith::CmpIOp::create(
          b, arith::CmpIPredicate::eq,
          arith::RemUIOp::create(b, tid, c32(lanes)), c32(0));
      Value write = arith::AndIOp::create(b, first, e[0].inRow);
      auto ifWrite = scf::IfOp::create(b, write, /*withElseRegion=*/false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(ifWrite.thenBlock());
      Value group = arith::DivUIOp::create(b, e[0].column, c64(in.groupK));
      store(scale, param(hq::abi::ParamScales),
            arith::AddIOp::create(
                b, arith::MulIOp::create(b, sext64(row), c64(groups)), group));
    });
    return;
  }

  // Per token: the row's absmax over the block, then the conversion. Rows
  // of up to kHeldChunks chunks stay in registers (unrolled); longer ones
  // are read twice (the second time mostly from L2).
  const bool held = chunks <= kHeldChunks;
  SmallVector<SmallVector<Element>> rowElems;
  Value threadMax;
  if (held) {
    threadMax = cf(0);
    for (int64_t c = 0; c < chunks; ++c) {
      rowElems.push_back(elementsOf(c32(c)));
      for (const Element &x : rowElems.back())
        threadMax = maxAbs(threadMax, x.value);
    }
  } else {
    auto amaxLoop = scf::ForOp::create(b, c32(0), c32(chunks), c32(1),
                                       ValueRange{cf(0)});
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(amaxLoop.getBody());
    Value amax = amaxLoop.getRegionIterArgs()[0];
    for (const Element &x : elementsOf(amaxLoop.getInductionVar()))
      amax = maxAbs(amax, x.value);
    scf::YieldOp::create(b, amax);
    threadMax = amaxLoop.getResult(0);
  }
  Value amax = laneMax(threadMax, 32);
  Value lane = arith::RemUIOp::create(b, tid, c32(32));
  Value warp = arith::DivUIOp::create(b, tid, c32(32));
  {
    auto ifLead = scf::IfOp::create(
        b, arith::CmpIOp::create(b, arith::CmpIPredicate::eq, lane, c32(0)),
        /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifLead.thenBlock());
    memref::StoreOp::create(
        b, amax, warpMax,
        ValueRange{arith::IndexCastOp::create(b, b.getIndexType(), warp)});
  }
  gpu::BarrierOp::create(b);
  Value rowMax = cf(0);
  for (int64_t w = 0; w < kWarps; ++w)
    rowMax = maxOf(rowMax, memref::LoadOp::create(
                               b, warpMax,
                               ValueRange{arith::ConstantIndexOp::create(b, w)}));
  Value scale = scaleOf(rowMax);
  {
    auto ifFirst = scf::IfOp::create(
        b, arith::CmpIOp::create(b, arith::CmpIPredicate::eq, tid, c32(0)),
        /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifFirst.thenBlock());
    store(scale, param(hq::abi::ParamScales), sext64(row));
  }
  if (held) {
    for (const SmallVector<Element> &e : rowElems)
      convertAndStore(codeBase, e, scale);
    return;
  }
  forChunks([&](Value chunk) {
    convertAndStore(codeBase, elementsOf(chunk), scale);
  });
}

} // namespace

std::string mlir::humming::quantizeKernelProblem(const QuantizeKernelSpec &spec,
                                                 const hq::Chip &chip) {
  const hq::InputSchema &in = spec.input;
  const hq::ScalarType &t = in.type;
  if (!(t == hq::ScalarType::e4m3() || t == hq::ScalarType::e5m2() ||
        t == hq::ScalarType::sint(8) || t == hq::ScalarType::sint(4) ||
        t == hq::ScalarType::e2m1()))
    return "expected e4m3, e5m2, int8, int4 or e2m1 activations, got " +
           t.str();
  if (t.bits == 4 && spec.k % 2 != 0)
    return "4-bit codes pack two per byte, so rows start at byte K / 2: "
           "expected an even K, got " +
           std::to_string(spec.k);
  // (At least K codes per row, and no more with per-group scales: the op
  // verifier's rules.)
  assert(spec.codes() >= spec.k &&
         (in.scaling != hq::ActScaling::Group || spec.codes() == spec.k) &&
         "codes per row the quantize op verifier refuses");
  if (t.bits == 4 && spec.codes() % 2 != 0)
    return "4-bit codes pack two per byte: expected an even number of codes "
           "per row, got " +
           std::to_string(spec.codes());
  const bool fp8 = !t.isInt() && t.bits == 8;
  if (fp8 && chip.sm < 89)
    return t.str() + " activations need cvt to fp8 (sm_89 and later), got " +
           chip.str();
  // (LLVM's NVPTX backend selects cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32 on
  // sm_89 only from PTX ISA 8.1: sm_89's minimum, 8.4, covers it.)
  if (in.scaling == hq::ActScaling::Group &&
      (in.groupK < kPerThread || in.groupK > 32 * kPerThread ||
       (in.groupK & (in.groupK - 1)) != 0))
    return "expected an activation group of a power of two from 8 to 256 "
           "elements (a group's lanes exchange their maxima in one warp), "
           "got group<" +
           std::to_string(in.groupK) + ">";
  return "";
}

gpu::GPUFuncOp mlir::humming::buildQuantizeKernel(OpBuilder &builder,
                                                  Location loc,
                                                  gpu::GPUModuleOp module,
                                                  StringRef name,
                                                  const QuantizeKernelSpec &spec) {
  MLIRContext *ctx = builder.getContext();
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToEnd(module.getBody());
  auto workgroup =
      gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
  auto warpMaxType = MemRefType::get({kWarps}, builder.getF32Type(),
                                     MemRefLayoutAttrInterface(), workgroup);
  auto func =
      gpu::GPUFuncOp::create(builder, loc, name, kernelFunctionType(builder),
                             TypeRange{warpMaxType});
  func->setAttr(gpu::GPUDialect::getKernelFuncAttrName(),
                builder.getUnitAttr());
  func.setKnownBlockSizeAttr(
      builder.getDenseI32ArrayAttr({int32_t(kQuantizeThreads), 1, 1}));
  ImplicitLocOpBuilder b(loc, builder);
  b.setInsertionPointToStart(&func.getBody().front());
  if (spec.launchDependents)
    NVVM::GriddepcontrolOp::create(b, NVVM::GridDepActionKind::launch_dependents);
  SmallVector<Value> params(func.getArguments().begin(),
                            func.getArguments().end());
  QuantizeEmitter(b, spec, params, func.getWorkgroupAttributions()[0]).emit();
  gpu::ReturnOp::create(b);
  return func;
}
