//===- HummingTypes.h - humming types ---------------------------*- C++ -*-===//

#ifndef HUMMING_DIALECT_HUMMING_IR_HUMMINGTYPES_H
#define HUMMING_DIALECT_HUMMING_IR_HUMMINGTYPES_H

#include "Humming/Quant/DType.h"
#include "mlir/IR/BuiltinTypeInterfaces.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Types.h"

#define GET_TYPEDEF_CLASSES
#include "Humming/Dialect/Humming/IR/HummingOpsTypes.h.inc"

namespace mlir::humming {

/// The host description of an MLIR element type, or nullopt for types
/// Humming does not know (f64, tf32, f8E4M3FNUZ...). Signless integers are
/// signed.
std::optional<::humming::ScalarType> toScalarType(Type type);

/// The MLIR type spelling a host scalar type.
Type toMLIRType(MLIRContext *ctx, const ::humming::ScalarType &t);

} // namespace mlir::humming

#endif // HUMMING_DIALECT_HUMMING_IR_HUMMINGTYPES_H
