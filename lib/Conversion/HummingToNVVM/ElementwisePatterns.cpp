//===- ElementwisePatterns.cpp - humming.silu_and_mul, humming.moe_sum
//------===//
//
// The elementwise ops of an MLP or MoE block: grid-stride kernels of
// kElementwiseThreads threads over the output's pairs.
//
//===----------------------------------------------------------------------===//

#include "Humming/Conversion/HummingToNVVM.h"
#include "Humming/Dialect/Humming/IR/HummingOps.h"
#include "Kernels.h"
#include "Lowering.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::humming;
using namespace mlir::humming::lowering;
namespace hq = ::humming;

namespace {

LogicalResult lowerElementwise(Operation *op, KernelLoweringState &state,
                               PatternRewriter &rewriter) {
  Value input = op->getOperand(0), output = op->getOperand(1);
  auto outType = cast<MemRefType>(output.getType());
  ElementwiseKernelSpec es;
  es.kind = isa<SiluAndMulOp>(op) ? hq::abi::kSiluAndMulKernel
                                  : hq::abi::kMoeSumKernel;
  es.columns = outType.getDimSize(1);
  if (auto sum = dyn_cast<MoeSumOp>(op))
    es.topK = int64_t(sum.getTopK());
  if (auto act = dyn_cast<SiluAndMulOp>(op)) {
    if (FloatAttr a = act.getAlphaAttr())
      es.alpha = a.getValueAsDouble();
    if (FloatAttr a = act.getUpOffsetAttr())
      es.upOffset = a.getValueAsDouble();
    if (FloatAttr a = act.getLimitAttr())
      es.limit = a.getValueAsDouble();
  }
  es.bf16 = outType.getElementType().isBF16();
  std::string name =
      state.kernelName(op, isa<SiluAndMulOp>(op) ? "silu_and_mul" : "moe_sum");
  gpu::GPUFuncOp kernel = buildElementwiseKernel(
      state.kernelBuilder(), op->getLoc(), state.kernelModule(), name, es);
  hq::abi::KernelLaunch l = state.smallLaunch(kernel, es.columns, es.kind);
  if (es.kind == hq::abi::kMoeSumKernel) {
    l.routing = hq::abi::kRoutingIndexed;
    l.topK = es.topK;
  }
  state.addLaunch(l);
  rewriter.setInsertionPoint(op);
  ImplicitLocOpBuilder b(op->getLoc(), rewriter);
  Value m = memref::DimOp::create(b, output, 0);
  Value null = devicePointer(b, Value());
  SmallVector<Value> args = abiArguments(
      null,
      {{hq::abi::ParamInput, devicePointer(b, input)},
       {hq::abi::ParamOutput, devicePointer(b, output)},
       {hq::abi::ParamM, arith::IndexCastOp::create(b, b.getI32Type(), m)}});
  Value pairs = arith::MulIOp::create(
      b, m, arith::ConstantIndexOp::create(b, es.columns / 2));
  Value any = arith::CmpIOp::create(b, arith::CmpIPredicate::ne, m,
                                    arith::ConstantIndexOp::create(b, 0));
  auto ifAny = scf::IfOp::create(b, any, /*withElseRegion=*/false);
  b.setInsertionPointToStart(ifAny.thenBlock());
  Value one = arith::ConstantIndexOp::create(b, 1);
  Value threads = arith::ConstantIndexOp::create(b, kElementwiseThreads);
  gpu::LaunchFuncOp::create(
      b, kernel,
      gpu::KernelDim3{arith::CeilDivUIOp::create(b, pairs, threads), one, one},
      gpu::KernelDim3{threads, one, one}, Value(), args);
  rewriter.eraseOp(op);
  return success();
}

} // namespace

void mlir::humming::lowering::populateElementwisePatterns(
    RewritePatternSet &patterns, KernelLoweringState &state) {
  patterns.add<DenseRowsLowering<SiluAndMulOp, lowerElementwise>,
               DenseRowsLowering<MoeSumOp, lowerElementwise>>(
      patterns.getContext(), state);
}
