//===- Passes.h - humming conversion passes ---------------------*- C++ -*-===//

#ifndef HUMMING_CONVERSION_PASSES_H
#define HUMMING_CONVERSION_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::humming {

/// The function whose calls stand for the address of a kernel's
/// activation tensor map until humming-kernel-params makes it the kernel's
/// by-value parameter after M (Humming/Target/KernelABI.h, inputMap).
inline constexpr llvm::StringLiteral kInputMapPlaceholder =
    "__humming_input_map";
/// The same for the weights' tensor map (KernelLaunch::weightMap): the
/// parameter after the activations' map.
inline constexpr llvm::StringLiteral kWeightMapPlaceholder =
    "__humming_weight_map";

#define GEN_PASS_DECL
#include "Humming/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "Humming/Conversion/Passes.h.inc"

} // namespace mlir::humming

#endif // HUMMING_CONVERSION_PASSES_H
