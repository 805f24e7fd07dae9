//===- HummingToNVVM.cpp - humming-lower-to-nvvm --------------------------===//
//
// The pass: its options and target checks, then the lowering patterns
// (populateHummingToNVVMPatterns: GemmPatterns.cpp, QuantizePatterns.cpp,
// RoutingPatterns.cpp, RepackPatterns.cpp, ElementwisePatterns.cpp) applied
// op by op, and the module's kernel table. Every op is checked before any is
// rewritten, so a module that cannot be lowered is left as it was, with the
// reason at the op; what is not lowered yet is diagnosed, never miscompiled.
//
//===----------------------------------------------------------------------===//

#include "Humming/Conversion/HummingToNVVM.h"
#include "Humming/Conversion/Passes.h"
#include "Humming/Dialect/Humming/IR/HummingOps.h"

#include "mlir/Rewrite/FrozenRewritePatternSet.h"
#include "mlir/Rewrite/PatternApplicator.h"

#define DEBUG_TYPE "humming-lower-to-nvvm"

namespace mlir::humming {
#define GEN_PASS_DEF_HUMMINGLOWERTONVVMPASS
#include "Humming/Conversion/Passes.h.inc"
} // namespace mlir::humming

using namespace mlir;
using namespace mlir::humming;
namespace hq = ::humming;

namespace {

constexpr int kLoweringRanks = 9;
/// The order in which the pass lowers op kinds (kernel names number the
/// kernels in this order, whatever the ops' order in the module).
int loweringRank(Operation *op) {
  if (isa<GemmOp, MoeGemmOp>(op))
    return 0;
  if (auto q = dyn_cast<QuantizeOp>(op))
    return isa<InputSchemaAttr>(q.getSchema()) ? 1 : 7;
  if (isa<MoeAlignOp>(op))
    return 2;
  if (isa<MoeGroupOp>(op))
    return 3;
  if (isa<MoePermuteOp>(op))
    return 4;
  if (isa<GatherColumnsOp>(op))
    return 5;
  if (isa<RepackOp>(op))
    return 6;
  return 8; // silu_and_mul, moe_sum
}

struct LowerToNVVMPass
    : public mlir::humming::impl::HummingLowerToNVVMPassBase<LowerToNVVMPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::optional<hq::Chip> parsed = hq::Chip::parse(chip);
    if (!parsed) {
      module.emitError() << "humming-lower-to-nvvm: expected a chip among "
                         << hq::knownChipNames() << ", got '" << chip << "'";
      return signalPassFailure();
    }
    // The chip is the one the pipeline attaches to the gpu.module and emits
    // PTX for; a module that names its device must agree with it, or the
    // checks below would be made for one chip and the code built for another.
    if (TargetAttr target = lookupTarget(module);
        target && !(target.getHostChip() == *parsed)) {
      module.emitError() << "humming-lower-to-nvvm: the module's "
                            "humming.target ("
                         << target.getDevice() << ") is "
                         << target.getHostChip().str()
                         << "; expected chip=" << target.getHostChip().str()
                         << ", got chip=" << parsed->str();
      return signalPassFailure();
    }
    // The module's target also names the PTX ISA version to emit; the
    // pipeline must emit that one (0 means the chip's minimum).
    if (TargetAttr target = lookupTarget(module)) {
      unsigned effective =
          ptxVersion ? unsigned(ptxVersion) : parsed->minPtxVersion();
      if (target.getPtx() != effective) {
        module.emitError() << "humming-lower-to-nvvm: the module's "
                              "humming.target asks for PTX ISA "
                           << target.getPtx()
                           << "; expected ptx-version=" << target.getPtx()
                           << ", got ptx-version=" << effective
                           << (ptxVersion ? "" : " (the chip's minimum)");
        return signalPassFailure();
      }
    }
    // LLVM aborts on intrinsics a PTX version cannot express: check first.
    if (ptxVersion && (ptxVersion < parsed->minPtxVersion() ||
                       ptxVersion > hq::kMaxPtxVersion)) {
      module.emitError() << "humming-lower-to-nvvm: expected a PTX ISA version "
                            "between "
                         << parsed->minPtxVersion() << " and "
                         << hq::kMaxPtxVersion << " for " << parsed->str()
                         << ", got " << static_cast<unsigned>(ptxVersion);
      return signalPassFailure();
    }

    // Every humming op, checked before any is rewritten.
    KernelLoweringState state(module, *parsed, onlyKernel);
    SmallVector<Operation *> ops;
    bool failedAny = false;
    module.walk([&](Operation *op) {
      if (!isa_and_nonnull<HummingDialect>(op->getDialect()))
        return;
      ops.push_back(op);
      failedAny |= failed(checkHummingLowering(op, state));
    });
    if (failedAny)
      return signalPassFailure();
    if (ops.empty())
      return;

    // One pattern per op kind, applied op by op: all of one kind (in the
    // module's order) before the next kind, so that the kernels' numbering
    // does not depend on a driver's traversal.
    SmallVector<SmallVector<Operation *>> byRank(kLoweringRanks);
    for (Operation *op : ops)
      byRank[loweringRank(op)].push_back(op);
    ops.clear();
    for (ArrayRef<Operation *> rank : byRank)
      ops.append(rank.begin(), rank.end());
    RewritePatternSet patterns(&getContext());
    populateHummingToNVVMPatterns(patterns, state);
    FrozenRewritePatternSet frozen(std::move(patterns));
    PatternApplicator applicator(frozen);
    applicator.applyDefaultCostModel();
    PatternRewriter rewriter(&getContext());
    for (Operation *op : ops) {
      rewriter.setInsertionPoint(op);
      // (A pattern that fails has said why at the op.)
      if (failed(applicator.matchAndRewrite(op, rewriter)))
        return signalPassFailure();
    }
    // What a runtime needs to launch the kernels without running the host
    // code: names, M ranges and launch shapes (Humming/Target/KernelABI.h).
    state.writeKernelTable();
  }
};
} // namespace
