//===- RoutingPatterns.cpp - moe_align, moe_group, moe_permute, gather_columns
//===//
//
// The MoE routing ops and the act-order gather: small kernels of one block
// (moe_align, moe_group) or grid-stride blocks (moe_permute,
// gather_columns), each op one pattern.
//
//===----------------------------------------------------------------------===//

#include "Humming/Conversion/HummingToNVVM.h"
#include "Humming/Dialect/Humming/IR/HummingOps.h"
#include "Kernels.h"
#include "Lowering.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <limits>

using namespace mlir;
using namespace mlir::humming;
using namespace mlir::humming::lowering;
namespace hq = ::humming;

namespace {

// humming.moe_align and humming.moe_group: one block of
// kMoeAlignThreads threads (KernelABI.h: KernelLaunch::kind); `args`
// gives the launch's parameters (null: devicePointer of none).
LogicalResult lowerRoutingBlock(
    KernelLoweringState &state, PatternRewriter &rewriter, Operation *op,
    const MoeAlignKernelSpec &spec, StringRef what, int64_t kind,
    int64_t blockSizeField,
    function_ref<SmallVector<Value>(ImplicitLocOpBuilder &, Value)> args) {
  if (std::string why = moeAlignKernelProblem(spec); !why.empty())
    return op->emitOpError() << why;
  gpu::GPUFuncOp kernel = buildMoeAlignKernel(
      state.kernelBuilder(), op->getLoc(), state.kernelModule(),
      state.kernelName(op, what), spec);
  state.addKernel(kernel);
  hq::abi::KernelLaunch l;
  l.name = kernel.getName().str();
  l.blockM = 1;
  l.blockN = spec.topK;
  l.threads = kMoeAlignThreads;
  l.kind = kind;
  l.routing = spec.routing;
  l.experts = spec.experts;
  l.topK = spec.topK;
  l.blockSize = blockSizeField;
  state.addLaunch(l);
  rewriter.setInsertionPoint(op);
  ImplicitLocOpBuilder b(op->getLoc(), rewriter);
  Value one = arith::ConstantIndexOp::create(b, 1);
  SmallVector<Value> params = args(b, devicePointer(b, Value()));
  gpu::LaunchFuncOp::create(
      b, kernel, gpu::KernelDim3{one, one, one},
      gpu::KernelDim3{arith::ConstantIndexOp::create(b, kMoeAlignThreads), one,
                      one},
      Value(), params);
  rewriter.eraseOp(op);
  return success();
}

LogicalResult lowerMoeAlign(MoeAlignOp op, KernelLoweringState &state,
                            PatternRewriter &rewriter) {
  auto idsType = cast<MemRefType>(op.getTopkIds().getType());
  MoeAlignKernelSpec as{int64_t(op.getExperts()), idsType.getDimSize(1),
                        int64_t(op.getBlockSize())};
  // The ids in the input slot, M in the M slot, the routing in its
  // slots, the block size in the i32 after them.
  if (failed(lowerRoutingBlock(
          state, rewriter, op, as, "moe_align", hq::abi::kMoeAlignKernel,
          as.blockSize,
          [&](ImplicitLocOpBuilder &b, Value null) -> SmallVector<Value> {
            Value m = memref::DimOp::create(b, op.getTopkIds(), 0);
            return abiArguments(
                null,
                {{hq::abi::ParamInput, devicePointer(b, op.getTopkIds())},
                 {hq::abi::ParamM,
                  arith::IndexCastOp::create(b, b.getI32Type(), m)},
                 {hq::abi::ParamRowIds, devicePointer(b, op.getSortedIds())},
                 {hq::abi::ParamBlockExperts,
                  devicePointer(b, op.getExpertIds())},
                 {hq::abi::ParamRowsPadded,
                  devicePointer(b, op.getNumTokensPadded())},
                 {hq::abi::ParamRoutingBlock,
                  arith::ConstantIntOp::create(b, b.getI32Type(),
                                               as.blockSize)}});
          })))
    return failure();
  return success();
}

LogicalResult lowerMoeGroup(MoeGroupOp op, KernelLoweringState &state,
                            PatternRewriter &rewriter) {
  auto idsType = cast<MemRefType>(op.getTopkIds().getType());
  MoeAlignKernelSpec gs;
  gs.experts = int64_t(op.getExperts());
  gs.topK = idsType.getDimSize(1);
  gs.blockSize = 1;
  gs.routing =
      op.getMaxTokens() ? hq::abi::kRoutingMasked : hq::abi::kRoutingContiguous;
  gs.maxTokens = int64_t(op.getMaxTokens().value_or(0));
  // The ids in the input slot, the positions in the output slot, the
  // offsets or counts in the first routing slot. M is capped at the
  // tokens whose ids fit in a dynamic 'positions'.
  if (failed(lowerRoutingBlock(
          state, rewriter, op, gs, "moe_group", hq::abi::kMoeGroupKernel,
          gs.maxTokens,
          [&](ImplicitLocOpBuilder &b, Value null) -> SmallVector<Value> {
            Value m = arith::MinUIOp::create(
                b, memref::DimOp::create(b, op.getTopkIds(), 0),
                arith::DivUIOp::create(
                    b, memref::DimOp::create(b, op.getPositions(), 0),
                    arith::ConstantIndexOp::create(b, gs.topK)));
            return abiArguments(
                null,
                {{hq::abi::ParamInput, devicePointer(b, op.getTopkIds())},
                 {hq::abi::ParamOutput, devicePointer(b, op.getPositions())},
                 {hq::abi::ParamM,
                  arith::IndexCastOp::create(b, b.getI32Type(), m)},
                 {hq::abi::ParamRowIds, devicePointer(b, op.getExpertLayout())},
                 {hq::abi::ParamRoutingBlock,
                  arith::ConstantIntOp::create(b, b.getI32Type(), 0)}});
          })))
    return failure();
  return success();
}

LogicalResult lowerMoePermute(MoePermuteOp op, KernelLoweringState &state,
                              PatternRewriter &rewriter) {
  auto inType = cast<MemRefType>(op.getInput().getType());
  MoePermuteKernelSpec ps;
  ps.words = inType.getDimSize(1) * inType.getElementTypeBitWidth() / 32;
  ps.gather = op.getGather();
  ps.topK = int64_t(op.getTopK().value_or(1));
  std::string name =
      state.kernelName(op, ps.gather ? "moe_gather" : "moe_scatter");
  gpu::GPUFuncOp kernel = buildMoePermuteKernel(
      state.kernelBuilder(), op.getLoc(), state.kernelModule(), name, ps);
  hq::abi::KernelLaunch l = state.smallLaunch(
      kernel, ps.words,
      ps.gather ? hq::abi::kMoeGatherKernel : hq::abi::kMoeScatterKernel);
  state.addLaunch(l);
  // The positions in use: at most one per output row (gather) or per
  // input row times top_k (scatter), so that a dynamic size that
  // disagrees reads and writes nothing outside the memrefs; the grouped
  // side's rows bound the positions (in the kernel).
  rewriter.setInsertionPoint(op);
  ImplicitLocOpBuilder b(op.getLoc(), rewriter);
  auto dim0 = [&](Value v) { return memref::DimOp::create(b, v, 0); };
  Value p = arith::MinUIOp::create(
      b, dim0(op.getPositions()),
      ps.gather ? Value(dim0(op.getOutput()))
                : Value(arith::MulIOp::create(
                      b, dim0(op.getInput()),
                      arith::ConstantIndexOp::create(b, ps.topK))));
  Value grouped = arith::MinUIOp::create(
      b, dim0(ps.gather ? op.getInput() : op.getOutput()),
      arith::ConstantIndexOp::create(b, std::numeric_limits<int32_t>::max()));
  Value null = devicePointer(b, Value());
  SmallVector<Value> args = abiArguments(
      null,
      {{hq::abi::ParamInput, devicePointer(b, op.getInput())},
       {hq::abi::ParamOutput, devicePointer(b, op.getOutput())},
       {hq::abi::ParamM, arith::IndexCastOp::create(b, b.getI32Type(), p)},
       {hq::abi::ParamRowIds, devicePointer(b, op.getPositions())},
       {hq::abi::ParamRoutingBlock,
        arith::IndexCastOp::create(b, b.getI32Type(), grouped)}});
  launchGridStride(b, kernel, p, ps.words, args);
  rewriter.eraseOp(op);
  return success();
}

LogicalResult lowerGatherColumns(GatherColumnsOp op, KernelLoweringState &state,
                                 PatternRewriter &rewriter) {
  auto inType = cast<MemRefType>(op.getInput().getType());
  GatherColumnsKernelSpec gs;
  gs.columns = inType.getDimSize(1);
  gs.elementBits = inType.getElementTypeBitWidth();
  std::string name = state.kernelName(op, "gather_columns");
  gpu::GPUFuncOp kernel = buildGatherColumnsKernel(
      state.kernelBuilder(), op.getLoc(), state.kernelModule(), name, gs,
      /*launchDependents=*/state.chip().sm >= 90);
  const int64_t steps = gs.columns / gatherVector(gs);
  hq::abi::KernelLaunch l =
      state.smallLaunch(kernel, steps, hq::abi::kGatherColumnsKernel);
  state.addLaunch(l);
  // The rows both sides hold (a dynamic size that disagrees reads and
  // writes nothing outside them), at most 2^31 - 1; the columns' length
  // is K (the verifier checks a static one; a dynamic one must be K).
  rewriter.setInsertionPoint(op);
  ImplicitLocOpBuilder b(op.getLoc(), rewriter);
  auto dim0 = [&](Value v) { return memref::DimOp::create(b, v, 0); };
  Value rows = arith::MinUIOp::create(
      b, arith::MinUIOp::create(b, dim0(op.getInput()), dim0(op.getOutput())),
      arith::ConstantIndexOp::create(b, std::numeric_limits<int32_t>::max() /
                                            gs.columns));
  Value null = devicePointer(b, Value());
  SmallVector<Value> args = abiArguments(
      null,
      {{hq::abi::ParamInput, devicePointer(b, op.getInput())},
       {hq::abi::ParamOutput, devicePointer(b, op.getOutput())},
       {hq::abi::ParamM, arith::IndexCastOp::create(b, b.getI32Type(), rows)},
       {hq::abi::ParamRowIds, devicePointer(b, op.getColumns())},
       {hq::abi::ParamRoutingBlock,
        arith::ConstantIntOp::create(b, b.getI32Type(), 0)}});
  launchGridStride(b, kernel, rows, steps, args);
  rewriter.eraseOp(op);
  return success();
}

} // namespace

void mlir::humming::lowering::populateRoutingPatterns(
    RewritePatternSet &patterns, KernelLoweringState &state) {
  patterns.add<DenseRowsLowering<MoeAlignOp, lowerMoeAlign>,
               DenseRowsLowering<MoeGroupOp, lowerMoeGroup>,
               DenseRowsLowering<MoePermuteOp, lowerMoePermute>,
               DenseRowsLowering<GatherColumnsOp, lowerGatherColumns>>(
      patterns.getContext(), state);
}
