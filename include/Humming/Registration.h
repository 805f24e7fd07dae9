//===- Registration.h - Register humming with an MLIR context ---*- C++ -*-===//
//
// The entry points for tools and for other compilers that embed humming:
// registerHummingDialects adds the humming dialect and every upstream dialect
// its pipeline lowers through; registerHummingPasses registers the humming
// passes with the global pass registry (for mlir-opt style drivers).
//
//===----------------------------------------------------------------------===//

#ifndef HUMMING_REGISTRATION_H
#define HUMMING_REGISTRATION_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace mlir::humming {

/// Adds humming plus arith, func, gpu, llvm, memref, nvgpu, nvvm, scf and
/// vector to `registry`.
void registerHummingDialects(DialectRegistry &registry);

/// Registers every humming pass (idempotent).
void registerHummingPasses();

} // namespace mlir::humming

#endif // HUMMING_REGISTRATION_H
