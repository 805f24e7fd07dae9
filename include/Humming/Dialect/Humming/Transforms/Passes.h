//===- Passes.h - humming dialect passes ------------------------*- C++ -*-===//

#ifndef HUMMING_DIALECT_HUMMING_TRANSFORMS_PASSES_H
#define HUMMING_DIALECT_HUMMING_TRANSFORMS_PASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::humming {

#define GEN_PASS_DECL
#include "Humming/Dialect/Humming/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "Humming/Dialect/Humming/Transforms/Passes.h.inc"

} // namespace mlir::humming

#endif // HUMMING_DIALECT_HUMMING_TRANSFORMS_PASSES_H
