//===- HummingDialect.cpp - The humming dialect ---------------------------===//

#include "Humming/Dialect/Humming/IR/HummingDialect.h"
#include "Humming/Dialect/Humming/IR/HummingOps.h"
#include "Humming/Target/KernelABI.h"

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

LogicalResult HummingDialect::verifyRegionArgAttribute(Operation *op,
                                                       unsigned region,
                                                       unsigned argIndex,
                                                       NamedAttribute attr) {
  if (attr.getName() == kSourceSchemaAttrName) {
    auto schema = dyn_cast<WeightSchemaAttr>(attr.getValue());
    if (!schema ||
        schema.toHost().format == ::humming::SourceFormat::Canonical)
      return op->emitError()
             << "expected '" << kSourceSchemaAttrName << "' on argument #"
             << argIndex
             << " to be a #humming.weight_schema in a source format (gptq, "
                "gptq_v2, awq), got "
             << attr.getValue();
    return success();
  }
  if (attr.getName() == kOperandAttrName) {
    if (!isa<WeightOperandAttr>(attr.getValue()))
      return op->emitError() << "expected '" << kOperandAttrName
                             << "' on argument #" << argIndex
                             << " to be a #humming.operand, got "
                             << attr.getValue();
    return success();
  }
  return op->emitError() << "unknown humming argument attribute '"
                         << attr.getName().getValue() << "' on argument #"
                         << argIndex << "; expected '" << kSourceSchemaAttrName
                         << "' or '" << kOperandAttrName << "'";
}

LogicalResult HummingDialect::verifyOperationAttribute(Operation *op,
                                                       NamedAttribute attr) {
  if (attr.getName() == kLegalizedAttrName) {
    auto list = dyn_cast<ArrayAttr>(attr.getValue());
    if (!list || !llvm::all_of(list, [](Attribute a) { return isa<StringAttr>(a); }))
      return op->emitError() << "expected '" << kLegalizedAttrName
                             << "' to be an array of strings, got "
                             << attr.getValue();
    return success();
  }
  if (attr.getName() == kTargetAttrName) {
    if (!isa<TargetAttr>(attr.getValue()))
      return op->emitError() << "expected '" << kTargetAttrName
                             << "' to be a #humming.target attribute, got "
                             << attr.getValue();
    return success();
  }
  if (attr.getName() == ::humming::abi::kKernelTableAttr) {
    // Written by humming-lower-to-nvvm: one dictionary per kernel.
    auto table = dyn_cast<ArrayAttr>(attr.getValue());
    auto isEntry = [](Attribute a) {
      auto d = dyn_cast<DictionaryAttr>(a);
      if (!d || !d.getAs<StringAttr>("name"))
        return false;
      for (const ::humming::abi::KernelField &f : ::humming::abi::kKernelFields)
        if (f.optional() ? d.get(f.key) && !d.getAs<IntegerAttr>(f.key)
                      : !d.getAs<IntegerAttr>(f.key))
          return false;
      return true;
    };
    if (!table || !llvm::all_of(table, isEntry)) {
      std::string keys = "name";
      for (const ::humming::abi::KernelField &f : ::humming::abi::kKernelFields)
        if (!f.optional())
          keys += std::string(", ") + f.key;
      keys += " (MoE kernels also";
      for (const ::humming::abi::KernelField &f : ::humming::abi::kKernelFields)
        if (f.moeOnly)
          keys += std::string(" ") + f.key;
      keys += "; optionally";
      for (const ::humming::abi::KernelField &f : ::humming::abi::kKernelFields)
        if (f.onlyIfSet)
          keys += std::string(" ") + f.key;
      keys += ")";
      return op->emitError()
             << "expected '" << ::humming::abi::kKernelTableAttr
             << "' to be an array of {" << keys << "} dictionaries, got "
             << attr.getValue();
    }
    return success();
  }
  return op->emitError() << "unknown humming attribute '" << attr.getName().getValue()
                         << "'; expected '" << kTargetAttrName << "', '"
                         << ::humming::abi::kKernelTableAttr << "' or '"
                         << kLegalizedAttrName << "'";
}
