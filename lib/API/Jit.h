//===- Jit.h - The process's kernel compiler and cache (internal) -*- C++ -*-===//
//
// Shared by everything in the API that JIT-compiles (Layer,
// ActivationQuantizer, MoeRouter): one compiler and one kernel cache per process, and
// what a LayerTarget names.
//
//===----------------------------------------------------------------------===//

#ifndef HUMMING_LIB_API_JIT_H
#define HUMMING_LIB_API_JIT_H

#include "Humming/API/Layer.h"
#include "Humming/Runtime/Compiler.h"
#include "Humming/Runtime/CudaDriver.h"
#include "Humming/Runtime/KernelCache.h"
#include "Humming/Target/ArchInfo.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <functional>
#include <memory>
#include <string>

namespace humming::detail {

struct JitState {
  std::unique_ptr<rt::KernelCompiler> compiler;
  std::string compilerError; ///< why there is no compiler
  std::unique_ptr<rt::KernelCache> cache;
};
/// Made on first use (rt::selectCompiler, the default cache directory).
JitState &jit();

/// The chip a target names: its own, else its known device's; an error
/// names the unknown device or chip, or says that neither was given.
Result<Chip> targetChip(const LayerTarget &target);

/// The driver of the current device, which must be `chip` (`what` names
/// the caller in that error: "the layer", "the quantizer"); null for a
/// compile-only target, which opens no device.
Result<const rt::CudaDriver *> deviceFor(const Chip &chip,
                                         const LayerTarget &target,
                                         const char *what);

/// The PTX options of one cached kernel image (mlir::humming::compileToPtx's
/// arguments after the chip).
struct PtxOptions {
  unsigned ptxVersion = 0;
  std::string device, tileConfig;
  int onlyKernel = -1;
};
/// The image of the module `build` makes, compiled for `chip` through the
/// pipeline and the JIT's compiler, or read from the kernel cache under
/// `description` (which must name everything the PTX depends on but this
/// build of humming, the compiler and the chip, which the key adds).
Result<rt::KernelCache::Lookup> cachedImage(
    JitState &j, const Chip &chip, const std::string &description,
    const std::function<Result<mlir::OwningOpRef<mlir::ModuleOp>>(
        mlir::MLIRContext &)> &build,
    const PtxOptions &options = {});

/// One kernel of its own module (the activation quantizer, the MoE
/// router): its kernel-table entry, PTX, how it was obtained, and, unless
/// compile-only, the loaded module and function.
struct SingleKernel {
  abi::KernelLaunch kernel;
  std::string ptx, chip;
  TransformStats stats;
  const rt::CudaDriver *driver = nullptr;
  std::unique_ptr<rt::Module> module;
  rt::CUfunction function = nullptr;
};
/// The kernels of one module (a layer's weight repacks): their kernel-table
/// entries and, unless compile-only, the loaded module and functions in the
/// same order.
struct ModuleKernels {
  std::vector<abi::KernelLaunch> kernels;
  std::vector<rt::CUfunction> functions;
  std::string ptx, chip;
  TransformStats stats;
  const rt::CudaDriver *driver = nullptr;
  std::unique_ptr<rt::Module> module;
};
/// Compiles (or reads from the kernel cache under `description`) the
/// module `build` makes, for `target`, and loads it unless compile-only;
/// every kernel of the module must be of kind `kind`. `what` names the
/// caller in errors ("the quantizer").
Result<ModuleKernels> compileKernels(
    const LayerTarget &target, const char *what,
    const std::string &description, int64_t kind,
    const std::function<Result<mlir::OwningOpRef<mlir::ModuleOp>>(
        mlir::MLIRContext &)> &build);
/// The kernels of a cached image (cachedImage) as compileKernels returns
/// them, loaded with `driver` unless it is null (compile-only).
Result<ModuleKernels> loadKernels(const rt::KernelCache::Lookup &image,
                                  const Chip &chip,
                                  const rt::CudaDriver *driver, int64_t kind,
                                  const char *what);
/// compileKernels for a module of one kernel.
Result<SingleKernel> compileSingleKernel(
    const LayerTarget &target, const char *what,
    const std::string &description, int64_t kind,
    const std::function<Result<mlir::OwningOpRef<mlir::ModuleOp>>(
        mlir::MLIRContext &)> &build);

/// Whether a layer of activations `in` quantizes 16-bit inputs itself
/// (LayerTarget::activationRows applies; a MoE block's GEMMs always do):
/// 8- or 4-bit codes scaled per token, or 8-bit ones per group of K.
inline bool quantizesItsInput(const InputSchema &in) {
  return in.type.bits <= 8 &&
         (in.scaling == ActScaling::Token ||
          (in.scaling == ActScaling::Group && in.type.bits == 8));
}

} // namespace humming::detail

#endif // HUMMING_LIB_API_JIT_H
