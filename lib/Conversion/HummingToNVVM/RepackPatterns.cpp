//===- RepackPatterns.cpp - humming.repack
//----------------------------------===//
//
// humming.repack: the prepared layout made on the device, grid-stride
// blocks over the experts' items.
//
//===----------------------------------------------------------------------===//

#include "Humming/Conversion/HummingToNVVM.h"
#include "Humming/Dialect/Humming/IR/HummingOps.h"
#include "Kernels.h"
#include "Lowering.h"

#include "Humming/Quant/PreparedLayout.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::humming;
using namespace mlir::humming::lowering;
namespace hq = ::humming;

namespace {

/// What the repack kernel of `op` is specialised on (padded sizes).
RepackKernelSpec repackSpec(RepackOp op) {
  hq::WeightSchema w = op.getWeightSchema().toHost();
  hq::InputSchema in = op.getInputSchema().toHost();
  RepackKernelSpec rs;
  rs.operand = op.getOperand().getValue();
  rs.n = int64_t(op.getN()) + w.padN;
  rs.k = int64_t(op.getK()) + w.padK;
  rs.groups = w.groupsAlongK(rs.k);
  rs.bits = w.type.bits;
  rs.flip = w.type.isInt() && w.type.isSigned;
  rs.activationBits = in.type.bits;
  rs.elementBits =
      cast<MemRefType>(op.getSource().getType()).getElementTypeBitWidth();
  rs.intZeroPoints = w.zeroPoint == hq::ZeroPointKind::Int;
  if (w.granularity == hq::Granularity::Block)
    rs.scaleRowColumns = w.groupN;
  rs.order = hq::layout::tileOrder(
      w, in, op.getLayout().getHostChip().readsKMajorEightBit());
  rs.kMajorXor = hq::layout::kMajorXor(w);
  return rs;
}

/// Checks that the repack kernel can lower `op`: the prepared layout holds
/// the schema (the verifier checked the shapes).
LogicalResult checkRepackSupported(RepackOp op) {
  hq::WeightSchema w = op.getWeightSchema().toHost();
  hq::InputSchema in = op.getInputSchema().toHost();
  const int64_t n = int64_t(op.getN()) + w.padN,
                k = int64_t(op.getK()) + w.padK;
  if (hq::Diag d = hq::layout::supports(w, in, n, k))
    return op.emitOpError() << "cannot repack: " << *d;
  return success();
}

LogicalResult lowerRepack(RepackOp op, KernelLoweringState &state,
                          PatternRewriter &rewriter) {
  RepackKernelSpec rs = repackSpec(op);
  std::string name = state.kernelName(op, "repack");
  gpu::GPUFuncOp kernel = buildRepackKernel(state.kernelBuilder(), op.getLoc(),
                                            state.kernelModule(), name, rs);
  hq::abi::KernelLaunch l =
      state.smallLaunch(kernel, repackItems(rs), hq::abi::kRepackKernel);
  state.addLaunch(l);
  rewriter.setInsertionPoint(op);
  ImplicitLocOpBuilder b(op.getLoc(), rewriter);
  const int64_t experts =
      std::max<int64_t>(1, op.getWeightSchema().toHost().experts);
  Value null = devicePointer(b, Value());
  SmallVector<Value> args = abiArguments(
      null, {{hq::abi::ParamInput, devicePointer(b, op.getSource())},
             {hq::abi::ParamOutput, devicePointer(b, op.getDest())},
             {hq::abi::ParamM,
              arith::ConstantIntOp::create(b, b.getI32Type(), experts)},
             {hq::abi::ParamRoutingBlock,
              arith::ConstantIntOp::create(b, b.getI32Type(), 0)}});
  launchGridStride(b, kernel, arith::ConstantIndexOp::create(b, experts),
                   l.blockN, args);
  rewriter.eraseOp(op);
  return success();
}

struct RepackLowering : LoweringPattern<RepackOp> {
  using LoweringPattern::LoweringPattern;
  LogicalResult matchAndRewrite(RepackOp op,
                                PatternRewriter &rewriter) const override {
    if (failed(checkRepackLowering(op)))
      return failure();
    return lowerRepack(op, state, rewriter);
  }
};

} // namespace

LogicalResult mlir::humming::lowering::checkRepackLowering(RepackOp op) {
  if (failed(checkIdentityLayouts(op)))
    return failure();
  return checkRepackSupported(op);
}

void mlir::humming::lowering::populateRepackPatterns(
    RewritePatternSet &patterns, KernelLoweringState &state) {
  patterns.add<RepackLowering>(patterns.getContext(), state);
}
