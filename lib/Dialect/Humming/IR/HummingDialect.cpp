//===- HummingDialect.cpp - The humming dialect ---------------------------===//

#include "Humming/Dialect/Humming/IR/HummingDialect.h"
#include "Humming/Dialect/Humming/IR/HummingOps.h"

using namespace mlir;
using namespace mlir::humming;

#include "Humming/Dialect/Humming/IR/HummingOpsDialect.cpp.inc"

void HummingDialect::initialize() {
  registerTypes();
  registerAttributes();
  addOperations<
#define GET_OP_LIST
#include "Humming/Dialect/Humming/IR/HummingOps.cpp.inc"
      >();
}

LogicalResult HummingDialect::verifyOperationAttribute(Operation *op,
                                                       NamedAttribute attr) {
  if (attr.getName() == kTargetAttrName) {
    if (!isa<TargetAttr>(attr.getValue()))
      return op->emitError() << "expected '" << kTargetAttrName
                             << "' to be a #humming.target attribute, got "
                             << attr.getValue();
    return success();
  }
  return op->emitError() << "unknown humming attribute '" << attr.getName().getValue()
                         << "'; expected '" << kTargetAttrName << "'";
}
