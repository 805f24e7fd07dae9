//===- QuantizePatterns.cpp - humming.quantize
//------------------------------===//
//
// humming.quantize of activations (an input schema: one block per row) and
// of weights (a weight schema: one kernel per phase), one pattern.
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

/// What the activation quantization kernel of `op` is specialised on.
QuantizeKernelSpec quantizeSpec(QuantizeOp op) {
  auto srcType = cast<MemRefType>(op.getSource().getType());
  QuantizeKernelSpec qs;
  qs.input = cast<InputSchemaAttr>(op.getSchema()).toHost();
  qs.source = *toScalarType(srcType.getElementType());
  qs.k = srcType.getDimSize(1);
  qs.codesK = cast<MemRefType>(op.getDest().getType()).getDimSize(1);
  return qs;
}

/// Checks that the activation quantization kernel can lower `op`.
LogicalResult checkQuantizeSupported(QuantizeOp op, const hq::Chip &chip) {
  auto srcType = cast<MemRefType>(op.getSource().getType());
  QuantizeKernelSpec qs = quantizeSpec(op);
  if (std::string why = quantizeKernelProblem(qs, chip); !why.empty())
    return op.emitOpError() << why;
  if (srcType.getDimSize(1) > (int64_t(1) << 24))
    return op.emitOpError() << "expected K <= 2^24 activations per row, got "
                            << srcType.getDimSize(1);
  for (Value v : op->getOperands()) {
    auto t = cast<MemRefType>(v.getType());
    if (!t.getLayout().isIdentity())
      return op.emitOpError() << "expected identity-layout memrefs, got " << t;
  }
  return success();
}

/// What the weight quantization kernel of `op` is specialised on.
WeightQuantizeKernelSpec weightQuantizeSpec(QuantizeOp op) {
  WeightQuantizeKernelSpec qs;
  qs.weight = cast<WeightSchemaAttr>(op.getSchema()).toHost();
  auto src = cast<MemRefType>(op.getSource().getType());
  qs.source = *toScalarType(src.getElementType());
  qs.n = src.getDimSize(src.getRank() - 2);
  qs.k = src.getDimSize(src.getRank() - 1);
  if (Value z = op.getZeroPoints();
      z && qs.weight.zeroPoint == hq::ZeroPointKind::Float)
    qs.zeroPointType =
        *toScalarType(cast<MemRefType>(z.getType()).getElementType());
  return qs;
}

LogicalResult lowerActivationQuantize(QuantizeOp op, KernelLoweringState &state,
                                      PatternRewriter &rewriter) {
  QuantizeKernelSpec qs = quantizeSpec(op);
  qs.launchDependents = state.chip().sm >= 90;
  std::string name = state.kernelName(op, "quantize");
  gpu::GPUFuncOp kernel = buildQuantizeKernel(
      state.kernelBuilder(), op.getLoc(), state.kernelModule(), name, qs);
  state.addKernel(kernel);
  hq::abi::KernelLaunch l;
  l.name = kernel.getName().str();
  l.blockM = 1;
  l.blockN = qs.k;
  l.threads = kQuantizeThreads;
  l.kind = hq::abi::kQuantizeKernel;
  state.addLaunch(l);
  // One block per row (grid x); the activations, codes and scales in
  // the slots of the kernel ABI (KernelABI.h: KernelLaunch::kind).
  rewriter.setInsertionPoint(op);
  ImplicitLocOpBuilder b(op.getLoc(), rewriter);
  Value m = memref::DimOp::create(b, op.getSource(), 0);
  Value null = devicePointer(b, Value());
  SmallVector<Value> args = abiArguments(
      null,
      {{hq::abi::ParamInput, devicePointer(b, op.getSource())},
       {hq::abi::ParamScales, devicePointer(b, op.getScales())},
       {hq::abi::ParamOutput, devicePointer(b, op.getDest())},
       {hq::abi::ParamM, arith::IndexCastOp::create(b, b.getI32Type(), m)}});
  Value any = arith::CmpIOp::create(b, arith::CmpIPredicate::ne, m,
                                    arith::ConstantIndexOp::create(b, 0));
  auto ifAny = scf::IfOp::create(b, any, /*withElseRegion=*/false);
  b.setInsertionPointToStart(ifAny.thenBlock());
  Value one = arith::ConstantIndexOp::create(b, 1);
  gpu::LaunchFuncOp::create(
      b, kernel, gpu::KernelDim3{m, one, one},
      gpu::KernelDim3{arith::ConstantIndexOp::create(b, kQuantizeThreads), one,
                      one},
      Value(), args);
  rewriter.eraseOp(op);
  return success();
}

LogicalResult lowerWeightQuantize(QuantizeOp op, KernelLoweringState &state,
                                  PatternRewriter &rewriter) {
  // One kernel per phase (most schemas: one), launched in order; the
  // table lists them in that order.
  rewriter.setInsertionPoint(op);
  ImplicitLocOpBuilder b(op.getLoc(), rewriter);
  WeightQuantizeKernelSpec qs = weightQuantizeSpec(op);
  const int64_t experts = std::max<int64_t>(1, qs.weight.experts);
  Value null = devicePointer(b, Value());
  SmallVector<Value> args = abiArguments(
      null, {{hq::abi::ParamInput, devicePointer(b, op.getSource())},
             {hq::abi::ParamScales, devicePointer(b, op.getScales())},
             {hq::abi::ParamZeroPoints, devicePointer(b, op.getZeroPoints())},
             {hq::abi::ParamGlobalScale, devicePointer(b, op.getGlobalScale())},
             {hq::abi::ParamOutput, devicePointer(b, op.getDest())},
             {hq::abi::ParamM,
              arith::ConstantIntOp::create(b, b.getI32Type(), experts)}});
  for (WeightQuantizePhase phase : weightQuantizePhases(qs)) {
    qs.phase = phase;
    std::string name = state.kernelName(
        op, phase == WeightQuantizePhase::Clear    ? "quantize_weights_clear"
            : phase == WeightQuantizePhase::Amax   ? "quantize_weights_amax"
            : phase == WeightQuantizePhase::Finish ? "quantize_weights_finish"
                                                   : "quantize_weights");
    gpu::GPUFuncOp kernel = buildWeightQuantizeKernel(
        state.kernelBuilder(), op.getLoc(), state.kernelModule(), name, qs);
    hq::abi::KernelLaunch l = state.smallLaunch(kernel, weightQuantizeItems(qs),
                                                hq::abi::kWeightQuantizeKernel);
    state.addLaunch(l);
    // One warp per item: 32 thread steps each.
    launchGridStride(b, kernel, arith::ConstantIndexOp::create(b, experts),
                     32 * l.blockN, args);
  }
  rewriter.eraseOp(op);
  return success();
}

struct QuantizeLowering : LoweringPattern<QuantizeOp> {
  using LoweringPattern::LoweringPattern;
  LogicalResult matchAndRewrite(QuantizeOp op,
                                PatternRewriter &rewriter) const override {
    if (failed(checkQuantizeLowering(op, state)))
      return failure();
    if (isa<InputSchemaAttr>(op.getSchema()))
      return lowerActivationQuantize(op, state, rewriter);
    return lowerWeightQuantize(op, state, rewriter);
  }
};

} // namespace

LogicalResult mlir::humming::lowering::checkQuantizeLowering(
    QuantizeOp op, const KernelLoweringState &state) {
  if (isa<InputSchemaAttr>(op.getSchema()))
    return checkQuantizeSupported(op, state.chip());
  if (failed(checkIdentityLayouts(op)))
    return failure();
  if (std::string why = weightQuantizeKernelProblem(weightQuantizeSpec(op));
      !why.empty())
    return op.emitOpError() << why;
  return success();
}

void mlir::humming::lowering::populateQuantizePatterns(
    RewritePatternSet &patterns, KernelLoweringState &state) {
  patterns.add<QuantizeLowering>(patterns.getContext(), state);
}
