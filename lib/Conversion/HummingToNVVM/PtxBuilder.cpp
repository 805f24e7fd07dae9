//===- PtxBuilder.cpp - The lowering's one way to inline PTX --------------===//

#include "PtxBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

#include <string>

using namespace mlir;
using namespace mlir::humming;

LLVM::InlineAsmOp PtxBuilder::asmOp(TypeRange results, ValueRange operands,
                                    StringRef text, StringRef constraints,
                                    bool sideEffects) {
  return LLVM::InlineAsmOp::create(
      b, results, operands, text, constraints, sideEffects,
      /*is_align_stack=*/false, LLVM::tailcallkind::TailCallKind::None,
      LLVM::AsmDialectAttr::get(b.getContext(), LLVM::AsmDialect::AD_ATT),
      ArrayAttr());
}

Value PtxBuilder::maskOr(Value x, uint32_t mask, Value orValue) {
  // LUT 0xEA = (a & b) | c; pure, so LLVM may move and merge it.
  Value m = arith::ConstantIntOp::create(b, b.getI32Type(), int64_t(mask));
  return asmOp(TypeRange{b.getI32Type()}, ValueRange{x, m, orValue},
               "lop3.b32 $0, $1, $2, $3, 0xEA;", "=r,r,n,r",
               /*sideEffects=*/false)
      .getResult(0);
}

void PtxBuilder::gridDependencyWait() {
  asmOp(TypeRange(), ValueRange(),
        "griddepcontrol.wait;\n\tgriddepcontrol.launch_dependents;",
        "~{memory}", /*sideEffects=*/true);
}

SmallVector<Value> PtxBuilder::tied(StringRef text, ArrayRef<Value> vals) {
  std::string constraints;
  SmallVector<Type> types;
  Type f32 = b.getF32Type(), i64 = b.getI64Type();
  for (Value v : vals) {
    constraints += constraints.empty() ? "" : ",";
    constraints += v.getType() == f32 ? "=f" : v.getType() == i64 ? "=l" : "=r";
    types.push_back(v.getType());
  }
  for (size_t i = 0; i < vals.size(); ++i)
    constraints += "," + std::to_string(i);
  Type result = types.size() == 1
                    ? types[0]
                    : LLVM::LLVMStructType::getLiteral(b.getContext(), types);
  auto op = asmOp(result, vals, text, constraints, /*sideEffects=*/true);
  if (types.size() == 1)
    return {op.getResult(0)};
  SmallVector<Value> out;
  for (size_t i = 0; i < vals.size(); ++i)
    out.push_back(LLVM::ExtractValueOp::create(b, op.getResult(0), int64_t(i)));
  return out;
}

SmallVector<Value> PtxBuilder::wgmmaFence(ArrayRef<Value> vals) {
  return tied("wgmma.fence.sync.aligned;", vals);
}

SmallVector<Value> PtxBuilder::wgmmaWait(int64_t pending,
                                         ArrayRef<Value> vals) {
  return tied(("wgmma.wait_group.sync.aligned " + Twine(pending) + ";").str(),
              vals);
}

SmallVector<Value> PtxBuilder::wgmmaRegisterA(int64_t n, StringRef type,
                                              ArrayRef<Value> a, Value descB,
                                              ArrayRef<Value> acc,
                                              bool accumulate) {
  const int64_t perTile = n / 2;
  assert(a.size() == 4 && int64_t(acc.size()) == perTile &&
         "a wgmma m64nNk16 / k32 takes four A registers and N / 2 sums");
  const bool integer = type == "s8";
  const bool eightBit = integer || type == "e4m3" || type == "e5m2";
  assert((eightBit || type == "f16" || type == "bf16") &&
         "wgmma register-A types: f16, bf16, e4m3, e5m2, s8");
  // d (perTile f32, s32 for s8), a (4 x b32), the descriptor; scale-d (1:
  // accumulate), scale-a = scale-b = 1 (floats only), B not transposed
  // (K-major). scale-d is a predicate: set from operand $(perTile + 5) (1).
  std::string text = "{\n.reg .pred p;\nsetp.ne.b32 p, $" +
                     std::to_string(perTile + 5) +
                     ", 0;\nwgmma.mma_async.sync.aligned.m64n" +
                     std::to_string(n) + (eightBit ? "k32" : "k16") +
                     (integer ? ".s32." : ".f32.") + type.str() + "." +
                     type.str() + " {";
  for (int64_t i = 0; i < perTile; ++i)
    text += (i ? ", $" : "$") + std::to_string(i);
  text += "}, {$" + std::to_string(perTile) + ", $" +
          std::to_string(perTile + 1) + ", $" + std::to_string(perTile + 2) +
          ", $" + std::to_string(perTile + 3) + "}, $" +
          std::to_string(perTile + 4) +
          // 8-bit operands have no transpose flag (B is K-major anyway),
          // integers no scale-a / scale-b.
          (integer    ? ", p;\n}"
           : eightBit ? ", p, 1, 1;\n}"
                      : ", p, 1, 1, 0;\n}");
  std::string constraints;
  for (int64_t i = 0; i < perTile; ++i)
    constraints += (i ? "," : "") + std::string(integer ? "=r" : "=f");
  constraints += ",r,r,r,r,l,n";
  for (int64_t i = 0; i < perTile; ++i)
    constraints += "," + std::to_string(i);
  Type sum = integer ? Type(b.getI32Type()) : Type(b.getF32Type());
  Type result = LLVM::LLVMStructType::getLiteral(
      b.getContext(), SmallVector<Type>(size_t(perTile), sum));
  SmallVector<Value> operands(a.begin(), a.end());
  operands.push_back(descB);
  operands.push_back(
      arith::ConstantIntOp::create(b, b.getI32Type(), accumulate ? 1 : 0));
  operands.append(acc.begin(), acc.end());
  auto op = asmOp(result, operands, text, constraints, /*sideEffects=*/true);
  SmallVector<Value> out;
  for (int64_t i = 0; i < perTile; ++i)
    out.push_back(LLVM::ExtractValueOp::create(b, op.getResult(0), i));
  return out;
}

Value PtxBuilder::opaque(Value v) {
  return asmOp(b.getI32Type(), ValueRange{v}, "mov.b32 $0, $1;", "=r,r",
               /*sideEffects=*/true)
      .getResult(0);
}

Value PtxBuilder::barrierReduceOr(int64_t id, int64_t threads, Value pred) {
  return asmOp(b.getI32Type(), ValueRange{pred},
               ("{\n.reg .pred p, q;\nsetp.ne.u32 q, $1, 0;\n"
                "bar.red.or.pred p, " +
                Twine(id) + ", " + Twine(threads) +
                ", q;\nselp.u32 $0, 1, 0, p;\n}")
                   .str(),
               "=r,r", /*sideEffects=*/true)
      .getResult(0);
}

void PtxBuilder::mbarrierWaitParity(Value bar, Value parity) {
  // The 32-bit shared address (the int-to-pointer it came from folds away).
  Value addr = LLVM::PtrToIntOp::create(b, b.getI32Type(), bar);
  asmOp(TypeRange(), ValueRange{addr, parity},
        "{\n.reg .pred done;\nwait:\n"
        "mbarrier.try_wait.parity.shared::cta.b64 done, [$0], $1;\n"
        "@!done bra wait;\n}",
        "r,r", /*sideEffects=*/true);
}
