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

namespace mlir::humming {
/// The humming.quantize of 16-bit values (into an input schema) that writes
/// `input`, the quantized activations of `user`: its result, or, on
/// memrefs, the one writing into `input` earlier in `user`'s block; null
/// when there is none. humming-legalize-schema falls back to its source
/// where the chip or the kernels cannot take the quantized activations, and
/// the GEMM verifiers accept such activations for that reason.
QuantizeOp findActivationQuantize(Operation *user, Value input);
} // namespace mlir::humming

#endif // HUMMING_DIALECT_HUMMING_IR_HUMMINGOPS_H
