//===- HummingDialect.h - The humming dialect -------------------*- C++ -*-===//

#ifndef HUMMING_DIALECT_HUMMING_IR_HUMMINGDIALECT_H
#define HUMMING_DIALECT_HUMMING_IR_HUMMINGDIALECT_H

#include "mlir/IR/Dialect.h"

#include "Humming/Dialect/Humming/IR/HummingOpsDialect.h.inc"

#endif // HUMMING_DIALECT_HUMMING_IR_HUMMINGDIALECT_H
