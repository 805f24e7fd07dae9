//===- ElementwiseKernels.cpp - The MoE layer's small kernels -------------===//
//
// humming.silu_and_mul and humming.moe_sum: one thread per pair of 16-bit
// outputs (one 32-bit load per input pair, one 32-bit store), grid x =
// ceil(M x N / 2 / kElementwiseThreads), f32 arithmetic, one rounding.
// e^-x is 2^(-x log2 e) by ex2.approx (llvm.nvvm.ex2.approx.f32: an LLVM
// intrinsic, no libdevice), 1 / (1 + e^-x) a division in f32.
//
// humming.moe_permute: a grid-stride loop over (id, word) pairs in i64, one
// 4-byte word per thread and step (consecutive threads, consecutive words
// of a row: coalesced on both sides), positions checked against the
// grouped side's rows before any access.
//
//===----------------------------------------------------------------------===//

#include "EmitterBase.h"
#include "Kernels.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <cmath>

using namespace mlir;
using namespace mlir::humming;
namespace hq = ::humming;
namespace abi = ::humming::abi;

namespace {

class ElementwiseEmitter : EmitterBase {
public:
  ElementwiseEmitter(ImplicitLocOpBuilder &b, const ElementwiseKernelSpec &spec,
                     ArrayRef<Value> params)
      : EmitterBase(b, params), spec(spec) {
    half = spec.bf16 ? Type(b.getBF16Type()) : Type(b.getF16Type());
    pairType = VectorType::get({2}, half);
  }

  void emit() {
    Value tid = index32(gpu::ThreadIdOp::create(b, gpu::Dimension::x));
    Value bid = index32(gpu::BlockIdOp::create(b, gpu::Dimension::x));
    Value pair = arith::AddIOp::create(
        b, arith::MulIOp::create(b, ext64(bid), c64(kElementwiseThreads)),
        ext64(tid));
    const int64_t perRow = spec.columns / 2; // output pairs per row
    Value pairs =
        arith::MulIOp::create(b, ext64(param(abi::ParamM)), c64(perRow));
    auto ifIn = scf::IfOp::create(
        b, arith::CmpIOp::create(b, arith::CmpIPredicate::ult, pair, pairs),
        /*withElseRegion=*/false);
    b.setInsertionPointToStart(ifIn.thenBlock());
    Value row = arith::DivUIOp::create(b, pair, c64(perRow));
    Value col = arith::RemUIOp::create(b, pair, c64(perRow));
    Value in = param(abi::ParamInput);
    SmallVector<Value, 2> out;
    if (spec.kind == abi::kSiluAndMulKernel) {
      // Input rows of 2I = 2 x columns values: perRow x 2 pairs.
      Value base = arith::MulIOp::create(b, row, c64(2 * perRow));
      SmallVector<Value, 2> gate = unpack(load(i32, in, add(base, col)));
      SmallVector<Value, 2> up =
          unpack(load(i32, in, add(base, add(col, c64(perRow)))));
      for (int e = 0; e < 2; ++e) {
        Value g = gate[e], u = up[e];
        if (spec.limit > 0) {
          g = arith::MinimumFOp::create(b, g, cf(spec.limit));
          u = arith::MaximumFOp::create(
              b, arith::MinimumFOp::create(b, u, cf(spec.limit)),
              cf(-spec.limit));
        }
        if (spec.upOffset != 0)
          u = arith::AddFOp::create(b, u, cf(spec.upOffset));
        out.push_back(arith::MulFOp::create(b, silu(g), u));
      }
    } else {
      out = {cf(0), cf(0)};
      for (int64_t k = 0; k < spec.topK; ++k) {
        Value r = add(arith::MulIOp::create(b, row, c64(spec.topK)), c64(k));
        SmallVector<Value, 2> v =
            unpack(load(i32, in, add(arith::MulIOp::create(b, r, c64(perRow)),
                                     col)));
        for (int e = 0; e < 2; ++e)
          out[e] = arith::AddFOp::create(b, out[e], v[e]);
      }
    }
    store(pack(out), param(abi::ParamOutput),
          add(arith::MulIOp::create(b, row, c64(perRow)), col));
    b.setInsertionPointAfter(ifIn);
  }

private:
  SmallVector<Value, 2> unpack(Value word) {
    Value v = LLVM::BitcastOp::create(b, pairType, word);
    SmallVector<Value, 2> out;
    for (int64_t e = 0; e < 2; ++e)
      out.push_back(arith::ExtFOp::create(
          b, f32, Value(LLVM::ExtractElementOp::create(b, v, c32(e)))));
    return out;
  }
  Value pack(ArrayRef<Value> f) {
    Value v = LLVM::UndefOp::create(b, pairType);
    for (int64_t e = 0; e < 2; ++e)
      v = LLVM::InsertElementOp::create(
          b, v, arith::TruncFOp::create(b, half, f[size_t(e)]), c32(e));
    return LLVM::BitcastOp::create(b, i32, v);
  }
  /// x / (1 + 2^(-alpha x log2 e)).
  Value silu(Value x) {
    Value arg =
        arith::MulFOp::create(b, x, cf(-spec.alpha / std::log(2.0)));
    Value e = LLVM::CallIntrinsicOp::create(
                  b, f32, b.getStringAttr("llvm.nvvm.ex2.approx.f32"),
                  ValueRange{arg})
                  .getResult(0);
    return arith::DivFOp::create(b, x, arith::AddFOp::create(b, cf(1), e));
  }

  const ElementwiseKernelSpec &spec;
  Type half;
  VectorType pairType;
};

} // namespace

gpu::GPUFuncOp mlir::humming::buildSmallKernel(
    OpBuilder &builder, Location loc, gpu::GPUModuleOp module, StringRef name,
    bool moe,
    function_ref<void(ImplicitLocOpBuilder &, ArrayRef<Value>)> emit) {
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToEnd(module.getBody());
  auto func = gpu::GPUFuncOp::create(builder, loc, name,
                                     kernelFunctionType(builder, moe));
  func->setAttr(gpu::GPUDialect::getKernelFuncAttrName(),
                builder.getUnitAttr());
  func.setKnownBlockSizeAttr(
      builder.getDenseI32ArrayAttr({int32_t(kElementwiseThreads), 1, 1}));
  ImplicitLocOpBuilder b(loc, builder);
  b.setInsertionPointToStart(&func.getBody().front());
  SmallVector<Value> params(func.getArguments().begin(),
                            func.getArguments().end());
  emit(b, params);
  gpu::ReturnOp::create(b);
  return func;
}

gpu::GPUFuncOp mlir::humming::buildElementwiseKernel(
    OpBuilder &builder, Location loc, gpu::GPUModuleOp module, StringRef name,
    const ElementwiseKernelSpec &spec) {
  return buildSmallKernel(builder, loc, module, name, /*moe=*/false,
                          [&](ImplicitLocOpBuilder &b, ArrayRef<Value> params) {
                            ElementwiseEmitter(b, spec, params).emit();
                          });
}

namespace {

class MoePermuteEmitter : EmitterBase {
public:
  MoePermuteEmitter(ImplicitLocOpBuilder &b, const MoePermuteKernelSpec &spec,
                    ArrayRef<Value> params)
      : EmitterBase(b, params), spec(spec) {}

  void emit() {
    using P = arith::CmpIPredicate;
    const int64_t W = spec.words;
    Value ids = ext64(param(abi::ParamM));
    Value groupedRows = param(abi::ParamRoutingBlock);
    Value total = arith::MulIOp::create(b, ids, c64(W));
    auto loop = gridStrideLoop(total, kElementwiseThreads);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value j = loop.getInductionVar();
    Value i = arith::DivUIOp::create(b, j, c64(W));
    Value word = arith::RemUIOp::create(b, j, c64(W));
    Value pos = load(i32, param(abi::ParamRowIds), i);
    Value inRange = arith::AndIOp::create(
        b, arith::CmpIOp::create(b, P::sge, pos, c32(0)),
        arith::CmpIOp::create(b, P::slt, pos, groupedRows));
    auto at = [&](Value row) {
      return arith::AddIOp::create(b, arith::MulIOp::create(b, row, c64(W)),
                                   word);
    };
    Value in = param(abi::ParamInput), out = param(abi::ParamOutput);
    if (spec.gather) {
      auto ifIn = scf::IfOp::create(b, TypeRange{i32}, inRange,
                                    /*withElseRegion=*/true);
      {
        OpBuilder::InsertionGuard inner(b);
        b.setInsertionPointToStart(ifIn.thenBlock());
        scf::YieldOp::create(b, load(i32, in, at(ext64(pos))));
        b.setInsertionPointToStart(ifIn.elseBlock());
        scf::YieldOp::create(b, c32(0));
      }
      store(ifIn.getResult(0), out, at(i));
      return;
    }
    auto ifIn = scf::IfOp::create(b, inRange, /*withElseRegion=*/false);
    b.setInsertionPointToStart(ifIn.thenBlock());
    Value source = arith::DivUIOp::create(b, i, c64(spec.topK));
    store(load(i32, in, at(source)), out, at(ext64(pos)));
  }

private:
  const MoePermuteKernelSpec &spec;
};

} // namespace

gpu::GPUFuncOp mlir::humming::buildMoePermuteKernel(
    OpBuilder &builder, Location loc, gpu::GPUModuleOp module, StringRef name,
    const MoePermuteKernelSpec &spec) {
  return buildSmallKernel(builder, loc, module, name, /*moe=*/true,
                          [&](ImplicitLocOpBuilder &b, ArrayRef<Value> params) {
                            MoePermuteEmitter(b, spec, params).emit();
                          });
}

namespace {

/// output[r, j] = input[r, columns[j]]: each thread and grid-stride step
/// writes 16 bytes of a row (8 16-bit elements; 1 element where K is not a
/// multiple of them) with one vector store, reading each element by its
/// index (the indices stay in L1). The kernel lets the next one on the
/// stream launch at once (griddepcontrol.launch_dependents, sm_90 on): a
/// GEMM launched as a programmatic dependent copies its weights meanwhile
/// and waits (griddepcontrol.wait) for this grid's writes before it reads
/// them.
class GatherColumnsEmitter : EmitterBase {
public:
  GatherColumnsEmitter(ImplicitLocOpBuilder &b,
                       const GatherColumnsKernelSpec &spec,
                       ArrayRef<Value> params)
      : EmitterBase(b, params), spec(spec) {}

  void emit() {
    using P = arith::CmpIPredicate;
    const int64_t K = spec.columns, V = gatherVector(spec);
    const unsigned bits = spec.elementBits;
    Type elem = b.getIntegerType(bits);
    Value rows = ext64(param(::humming::abi::ParamM));
    Value total = arith::MulIOp::create(b, rows, c64(K / V));
    auto loop = gridStrideLoop(total, kElementwiseThreads);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value j = loop.getInductionVar();
    Value row = arith::DivUIOp::create(b, j, c64(K / V));
    Value first = arith::MulIOp::create(
        b, arith::RemUIOp::create(b, j, c64(K / V)), c64(V));
    Value rowStart = arith::MulIOp::create(b, row, c64(K));
    // Element e of the chunk, zero for an index outside the row.
    auto element = [&](int64_t e) -> Value {
      Value col = arith::AddIOp::create(b, first, c64(e));
      Value src = load(i32, param(::humming::abi::ParamRowIds), col);
      Value inRange = arith::AndIOp::create(
          b, arith::CmpIOp::create(b, P::sge, src, c32(0)),
          arith::CmpIOp::create(b, P::slt, src, c32(K)));
      auto ifIn = scf::IfOp::create(b, TypeRange{elem}, inRange,
                                    /*withElseRegion=*/true);
      OpBuilder::InsertionGuard inner(b);
      b.setInsertionPointToStart(ifIn.thenBlock());
      scf::YieldOp::create(b, load(elem, param(::humming::abi::ParamInput),
                                   arith::AddIOp::create(b, rowStart,
                                                         ext64(src))));
      b.setInsertionPointToStart(ifIn.elseBlock());
      scf::YieldOp::create(b, Value(arith::ConstantIntOp::create(b, elem, 0)));
      return ifIn.getResult(0);
    };
    if (V == 1) {
      store(element(0), param(::humming::abi::ParamOutput), j);
      return;
    }
    // 16 bytes: four words of 32 / bits elements, lowest first.
    const int64_t perWord = 32 / bits;
    Value words = LLVM::UndefOp::create(b, VectorType::get({4}, i32));
    for (int64_t w = 0; w < 4; ++w) {
      Value word = c32(0);
      for (int64_t e = 0; e < perWord; ++e) {
        Value v = element(w * perWord + e);
        if (bits < 32)
          v = arith::ExtUIOp::create(b, i32, v);
        if (e)
          v = arith::ShLIOp::create(b, v, c32(int64_t(e * bits)));
        word = e ? Value(arith::OrIOp::create(b, word, v)) : v;
      }
      words = LLVM::InsertElementOp::create(b, words, word, c32(w));
    }
    store(words, param(::humming::abi::ParamOutput), j);
  }

private:
  const GatherColumnsKernelSpec &spec;
};

} // namespace

gpu::GPUFuncOp mlir::humming::buildGatherColumnsKernel(
    OpBuilder &builder, Location loc, gpu::GPUModuleOp module, StringRef name,
    const GatherColumnsKernelSpec &spec, bool launchDependents) {
  return buildSmallKernel(builder, loc, module, name, /*moe=*/true,
                          [&](ImplicitLocOpBuilder &b, ArrayRef<Value> params) {
                            if (launchDependents)
                              NVVM::GriddepcontrolOp::create(
                                  b, NVVM::GridDepActionKind::launch_dependents);
                            GatherColumnsEmitter(b, spec, params).emit();
                          });
}
