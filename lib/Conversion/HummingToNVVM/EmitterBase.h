//===- EmitterBase.h - Shared pieces of the kernel emitters -----*- C++ -*-===//
//
// Constants, typed global loads and stores and exact small-float conversions
// that every generated GEMM kernel uses.
//
//===----------------------------------------------------------------------===//

#ifndef HUMMING_LIB_CONVERSION_HUMMINGTONVVM_EMITTERBASE_H
#define HUMMING_LIB_CONVERSION_HUMMINGTONVVM_EMITTERBASE_H

#include "Humming/Quant/DType.h"
#include "Humming/Target/KernelABI.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "llvm/ADT/STLFunctionalExtras.h"

namespace mlir::humming {

class EmitterBase {
public:
  EmitterBase(ImplicitLocOpBuilder &b, ArrayRef<Value> params);

protected:
  Value c32(int64_t v) { return arith::ConstantIntOp::create(b, i32, v); }
  Value c64(int64_t v) { return arith::ConstantIntOp::create(b, i64, v); }
  Value cf(double v) {
    return arith::ConstantFloatOp::create(b, cast<FloatType>(f32),
                                          APFloat(float(v)));
  }
  Value param(::humming::abi::GemmParam p) { return params[p]; }
  Value param(::humming::abi::MoeParam p) { return params[p]; }

  /// Element `index` (i64) of type `type` at `base` (an invariant load: the
  /// kernels only read their inputs).
  Value load(Type type, Value base, Value index);
  void store(Value value, Value base, Value index);
  /// Integer index arithmetic: a + c, and i64 a times, over (unsigned) and
  /// modulo a constant.
  Value add(Value a, Value c) { return arith::AddIOp::create(b, a, c); }
  Value mul(Value a, int64_t c) { return arith::MulIOp::create(b, a, c64(c)); }
  Value div(Value a, int64_t c) { return arith::DivUIOp::create(b, a, c64(c)); }
  Value rem(Value a, int64_t c) { return arith::RemUIOp::create(b, a, c64(c)); }
  Value ext64(Value v) { return arith::ExtUIOp::create(b, i64, v); }
  Value sext64(Value v) { return arith::ExtSIOp::create(b, i64, v); }
  /// An index (thread / block ids, loop counters) as i32.
  Value index32(Value v) { return arith::IndexCastOp::create(b, i32, v); }
  /// A grid-stride loop over 0 .. total - 1 (i64) of a one-dimensional
  /// grid of blocks of `blockThreads`: this thread's first index, stepping
  /// by every thread of the grid. The caller fills its body.
  scf::ForOp gridStrideLoop(Value total, int64_t blockThreads);

  /// The in-block split-K reduction: warp groups 1 .. kSplit-1 store their
  /// accumulators through `store(value, slotIndex)` at
  /// (group - 1) * groupStride + slot + i, a barrier follows, and group 0
  /// adds them (`load(slotIndex)`) to its own. Returns the sums in group 0
  /// and the unchanged accumulators elsewhere.
  SmallVector<Value>
  reduceSplitK(ArrayRef<Value> acc, Value warpK, Value isLeader,
               int64_t kSplit, Value slot, int64_t groupStride,
               function_ref<void(Value, Value)> store,
               function_ref<Value(Value)> load);

  /// f32 value of a 16-bit float stored as its bits.
  Value half16ToF32(Value bits, bool isBF16);
  /// f32 value of a small-float code (i32) of format `t` (exact).
  Value smallFloatToF32(Value code, const ::humming::ScalarType &t);
  /// f32 value of element `index` of a tensor of scalar type `t`.
  Value loadAsF32(Value base, Value index, const ::humming::ScalarType &t);

  ImplicitLocOpBuilder &b;
  SmallVector<Value> params;
  Type i1, i8, i16, i32, i64, f32;
  LLVM::LLVMPointerType ptr;
};

} // namespace mlir::humming

#endif // HUMMING_LIB_CONVERSION_HUMMINGTONVVM_EMITTERBASE_H
