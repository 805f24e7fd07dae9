//===- AttachTarget.cpp - Attach a #humming.target to a module ------------===//

#include "Humming/Dialect/Humming/IR/HummingOps.h"
#include "Humming/Dialect/Humming/Transforms/Passes.h"

#define DEBUG_TYPE "humming-attach-target"

namespace mlir::humming {
#define GEN_PASS_DEF_HUMMINGATTACHTARGETPASS
#include "Humming/Dialect/Humming/Transforms/Passes.h.inc"
} // namespace mlir::humming

using namespace mlir;
using namespace mlir::humming;

namespace {
struct AttachTargetPass
    : public mlir::humming::impl::HummingAttachTargetPassBase<AttachTargetPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto emitError = [&] {
      return module.emitError() << "humming-attach-target: ";
    };
    TargetAttr target = TargetAttr::getKnown(emitError, module.getContext(),
                                             device, chip, ptxVersion);
    if (!target)
      return signalPassFailure();
    module->setAttr(HummingDialect::kTargetAttrName, target);
  }
};
} // namespace
