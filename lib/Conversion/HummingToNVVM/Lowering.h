//===- Lowering.h - What the lowering patterns share ------------*- C++ -*-===//
//
// Internal to humming-lower-to-nvvm: the launch helpers every pattern uses,
// the pattern base class, and each family's entry points (its patterns and
// the checks the pass asks of every op before it rewrites any).
//
//===----------------------------------------------------------------------===//

#ifndef HUMMING_LIB_CONVERSION_HUMMINGTONVVM_LOWERING_H
#define HUMMING_LIB_CONVERSION_HUMMINGTONVVM_LOWERING_H

#include "Humming/Conversion/HummingToNVVM.h"
#include "Humming/Dialect/Humming/IR/HummingOps.h"

#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::humming::lowering {

/// A pattern over one humming op kind that shares the module's state.
template <typename OpT> struct LoweringPattern : OpRewritePattern<OpT> {
  LoweringPattern(MLIRContext *ctx, KernelLoweringState &state)
      : OpRewritePattern<OpT>(ctx), state(state) {}
  KernelLoweringState &state;
};

/// The small kernels read their memrefs as dense rows: identity layouts
/// only (emits the first one that is not).
LogicalResult checkIdentityLayouts(Operation *op);

/// Checks the op's memrefs (checkIdentityLayouts), then lowers it by
/// `Lower(op, state, rewriter)`: the small kernels' patterns.
template <typename OpT, auto Lower>
struct DenseRowsLowering : LoweringPattern<OpT> {
  using LoweringPattern<OpT>::LoweringPattern;
  LogicalResult matchAndRewrite(OpT op,
                                PatternRewriter &rewriter) const override {
    if (failed(checkIdentityLayouts(op)))
      return failure();
    return Lower(op, this->state, rewriter);
  }
};

/// One entry of the module's kernel table.
DictionaryAttr launchAttr(OpBuilder &b, const ::humming::abi::KernelLaunch &l);
/// A device pointer (!llvm.ptr<1>) to the data of `memref`, or null.
Value devicePointer(ImplicitLocOpBuilder &b, Value memref);
/// A kernel's arguments in the slots of the kernel ABI (KernelABI.h:
/// abi::GemmParam, then abi::MoeParam): `given` (slot, value) pairs, every
/// other slot up to the highest one given `null` (a null device pointer).
/// The i32 slots — ParamM, and ParamRoutingBlock where the list reaches
/// it — must be given.
SmallVector<Value> abiArguments(Value null,
                                ArrayRef<std::pair<unsigned, Value>> given);
/// Launches a grid-stride kernel of kElementwiseThreads-thread blocks over
/// `count` items of `perItem` steps each (at most kPermuteMaxBlocks
/// blocks), only where `count` is nonzero.
void launchGridStride(ImplicitLocOpBuilder &b, gpu::GPUFuncOp kernel,
                      Value count, int64_t perItem, ValueRange args);
/// A kernel with the ABI's parameters and an empty body (only-kernel=).
gpu::GPUFuncOp buildStubKernel(OpBuilder &builder, Location loc,
                               gpu::GPUModuleOp module, StringRef name,
                               bool moe = false, bool workspace = false);

// Each family: its patterns and what the pass checks first.
void populateGemmPatterns(RewritePatternSet &patterns,
                          KernelLoweringState &state);
LogicalResult checkGemmLowering(Operation *op,
                                const KernelLoweringState &state);
void populateQuantizePatterns(RewritePatternSet &patterns,
                              KernelLoweringState &state);
LogicalResult checkQuantizeLowering(QuantizeOp op,
                                    const KernelLoweringState &state);
void populateRoutingPatterns(RewritePatternSet &patterns,
                             KernelLoweringState &state);
void populateRepackPatterns(RewritePatternSet &patterns,
                            KernelLoweringState &state);
LogicalResult checkRepackLowering(RepackOp op);
void populateElementwisePatterns(RewritePatternSet &patterns,
                                 KernelLoweringState &state);

} // namespace mlir::humming::lowering

#endif // HUMMING_LIB_CONVERSION_HUMMINGTONVVM_LOWERING_H
