//===- HummingOps.h - humming operations ------------------------*- C++ -*-===//

#ifndef HUMMING_DIALECT_HUMMING_IR_HUMMINGOPS_H
#define HUMMING_DIALECT_HUMMING_IR_HUMMINGOPS_H

#include "Humming/Dialect/Humming/IR/HummingAttrs.h"
#include "Humming/Dialect/Humming/IR/HummingDialect.h"
#include "Humming/Dialect/Humming/IR/HummingTypes.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "Humming/Dialect/Humming/IR/HummingOps.h.inc"

#endif // HUMMING_DIALECT_HUMMING_IR_HUMMINGOPS_H
