//===- EmitterBase.cpp - Shared pieces of the kernel emitters -------------===//

#include "EmitterBase.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <cmath>

using namespace mlir;
using namespace mlir::humming;
namespace hq = ::humming;

EmitterBase::EmitterBase(ImplicitLocOpBuilder &b, ArrayRef<Value> params)
    : b(b), params(params.begin(), params.end()) {
  i1 = b.getI1Type();
  i8 = b.getI8Type();
  i16 = b.getI16Type();
  i32 = b.getI32Type();
  i64 = b.getI64Type();
  f32 = b.getF32Type();
  ptr = LLVM::LLVMPointerType::get(b.getContext(), 1);
}

Value EmitterBase::load(Type type, Value base, Value index) {
  Value addr = LLVM::GEPOp::create(b, ptr, type, base, ValueRange{index});
  // Every tensor a kernel reads is read-only while it runs: invariant loads
  // go through the non-coherent (read-only) cache path, ld.global.nc.
  return LLVM::LoadOp::create(b, type, addr, /*alignment=*/0,
                              /*isVolatile=*/false, /*isNonTemporal=*/false,
                              /*isInvariant=*/true);
}

scf::ForOp EmitterBase::gridStrideLoop(Value total, int64_t blockThreads) {
  Value tid = ext64(index32(gpu::ThreadIdOp::create(b, gpu::Dimension::x)));
  Value bid = ext64(index32(gpu::BlockIdOp::create(b, gpu::Dimension::x)));
  Value grid = ext64(index32(gpu::GridDimOp::create(b, gpu::Dimension::x)));
  Value start = arith::AddIOp::create(
      b, arith::MulIOp::create(b, bid, c64(blockThreads)), tid);
  Value stride = arith::MulIOp::create(b, grid, c64(blockThreads));
  return scf::ForOp::create(b, start, total, stride);
}

void EmitterBase::store(Value value, Value base, Value index) {
  Value addr =
      LLVM::GEPOp::create(b, ptr, value.getType(), base, ValueRange{index});
  LLVM::StoreOp::create(b, value, addr);
}

SmallVector<Value> EmitterBase::reduceSplitK(
    ArrayRef<Value> acc, Value warpK, Value isLeader, int64_t kSplit,
    Value slot, int64_t groupStride, function_ref<void(Value, Value)> store,
    function_ref<Value(Value)> load) {
  SmallVector<Value> out(acc.begin(), acc.end());
  if (kSplit <= 1)
    return out;
  const int64_t n = int64_t(acc.size());
  {
    auto ifNotLeader = scf::IfOp::create(
        b, arith::XOrIOp::create(b, isLeader,
                                 arith::ConstantIntOp::create(b, i1, 1)),
        /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifNotLeader.thenBlock());
    Value base = arith::AddIOp::create(
        b,
        arith::MulIOp::create(b, arith::SubIOp::create(b, warpK, c32(1)),
                              c32(groupStride)),
        slot);
    for (int64_t i = 0; i < n; ++i)
      store(acc[size_t(i)], arith::AddIOp::create(b, base, c32(i)));
  }
  gpu::BarrierOp::create(b);
  auto ifLeader = scf::IfOp::create(
      b, TypeRange(SmallVector<Type>(size_t(n), f32)), isLeader,
      /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifLeader.thenBlock());
    SmallVector<Value> sums = out;
    for (int64_t s = 1; s < kSplit; ++s) {
      Value base = arith::AddIOp::create(b, c32((s - 1) * groupStride), slot);
      for (int64_t i = 0; i < n; ++i)
        sums[size_t(i)] = arith::AddFOp::create(
            b, sums[size_t(i)], load(arith::AddIOp::create(b, base, c32(i))));
    }
    scf::YieldOp::create(b, sums);
    b.setInsertionPointToStart(ifLeader.elseBlock());
    scf::YieldOp::create(b, out);
  }
  out.assign(ifLeader.getResults().begin(), ifLeader.getResults().end());
  return out;
}

Value EmitterBase::half16ToF32(Value bits, bool isBF16) {
  Type t = isBF16 ? Type(b.getBF16Type()) : Type(b.getF16Type());
  Value h = arith::BitcastOp::create(b, t, bits);
  return arith::ExtFOp::create(b, f32, h);
}

Value EmitterBase::smallFloatToF32(Value code, const hq::ScalarType &t) {
  if (t.isE8M0()) {
    // 2^(code - 127); code 0 is 2^-127, an f32 subnormal.
    Value isZero = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, code, c32(0));
    Value normal = arith::BitcastOp::create(
        b, f32, arith::ShLIOp::create(b, code, c32(23)));
    return arith::SelectOp::create(b, isZero, cf(std::ldexp(1.0, -127)), normal);
  }
  unsigned e = t.exponentBits, m = t.mantissaBits;
  int bias = t.bias();
  Value sign = arith::AndIOp::create(
      b, arith::ShRUIOp::create(b, code, c32(e + m)), c32(1));
  Value exp = arith::AndIOp::create(
      b, arith::ShRUIOp::create(b, code, c32(m)), c32((1 << e) - 1));
  Value mant = arith::AndIOp::create(b, code, c32((1 << m) - 1));
  // Normal numbers: rebias the exponent and left-align the mantissa.
  Value bits = arith::OrIOp::create(
      b, arith::ShLIOp::create(b, sign, c32(31)),
      arith::OrIOp::create(
          b,
          arith::ShLIOp::create(
              b, arith::AddIOp::create(b, exp, c32(127 - bias)), c32(23)),
          arith::ShLIOp::create(b, mant, c32(23 - m))));
  Value normal = arith::BitcastOp::create(b, f32, bits);
  // Subnormals: mantissa * 2^(1 - bias - M), with the sign.
  Value sub = arith::MulFOp::create(
      b, arith::UIToFPOp::create(b, f32, mant),
      cf(std::ldexp(1.0, 1 - bias - int(m))));
  Value negSub = arith::NegFOp::create(b, sub);
  Value isNeg = arith::CmpIOp::create(b, arith::CmpIPredicate::ne, sign, c32(0));
  Value subnormal = arith::SelectOp::create(b, isNeg, negSub, sub);
  Value isSub = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, exp, c32(0));
  return arith::SelectOp::create(b, isSub, subnormal, normal);
}

Value EmitterBase::loadAsF32(Value base, Value index,
                               const hq::ScalarType &t) {
  if (t == hq::ScalarType::f32())
    return load(f32, base, index);
  if (t == hq::ScalarType::f16() || t == hq::ScalarType::bf16())
    return half16ToF32(load(i16, base, index), t == hq::ScalarType::bf16());
  // 8-bit float formats (e4m3, e5m2, ue8m0).
  Value byte = load(i8, base, index);
  return smallFloatToF32(arith::ExtUIOp::create(b, i32, byte), t);
}

