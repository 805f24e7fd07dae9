//===- HummingToNVVM.h - humming ops to GPU kernels, as patterns -*- C++
//-*-===//
//
// The conversion behind humming-lower-to-nvvm, for compilers that embed it:
// one rewrite pattern per humming op kind replaces the op by gpu.launch_func
// of kernels it generates into the module's gpu.module "humming_kernels"
// (NVVM and LLVM ops), and records each kernel in the module's kernel table
// (Humming/Target/KernelABI.h). The patterns share a KernelLoweringState:
// the chip, the kernel module, the kernels' numbering and the table.
//
//   KernelLoweringState state(module, *Chip::parse("sm_90a"));
//   RewritePatternSet patterns(ctx);
//   populateHummingToNVVMPatterns(patterns, state);
//   ... apply them (the pass applies them op by op in a fixed order of op
//   kinds, so that kernel names do not depend on a driver's traversal) ...
//   state.writeKernelTable();
//
// A pattern that cannot lower its op emits the reason at the op and fails
// to match; it never builds a kernel for what it does not support.
//
//===----------------------------------------------------------------------===//

#ifndef HUMMING_CONVERSION_HUMMINGTONVVM_H
#define HUMMING_CONVERSION_HUMMINGTONVVM_H

#include "Humming/Target/ArchInfo.h"
#include "Humming/Target/KernelABI.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/SymbolTable.h"

#include <memory>
#include <optional>
#include <string>

namespace mlir::humming {

/// What the lowering patterns share over one module.
class KernelLoweringState {
public:
  /// `onlyKernel` >= 0: of each GEMM's M-range kernels, build only that one
  /// (the others as stubs of the same parameters), as the JIT compiles
  /// each kernel in a run of its own.
  KernelLoweringState(ModuleOp module, const ::humming::Chip &chip,
                      int64_t onlyKernel = -1);

  const ::humming::Chip &chip() const { return chip_; }
  int64_t onlyKernel() const { return onlyKernel_; }
  ModuleOp module() const { return module_; }

  /// The gpu.module the kernels go into (made on first use; the module
  /// becomes a gpu.container_module) and a builder for kernel functions.
  gpu::GPUModuleOp kernelModule();
  OpBuilder &kernelBuilder() { return builder_; }

  /// "<enclosing function>_<what><n>": n counts every name given so far.
  std::string kernelName(Operation *op, StringRef what);
  /// Registers `kernel` in the kernel module's symbol table.
  void addKernel(gpu::GPUFuncOp kernel);
  /// Appends the kernel table's entry of one launch.
  void addLaunch(const ::humming::abi::KernelLaunch &launch);
  /// The entry of a grid-stride kernel of kElementwiseThreads threads
  /// (registered here): block_n items of `kind`.
  ::humming::abi::KernelLaunch smallLaunch(gpu::GPUFuncOp kernel,
                                           int64_t blockN, int64_t kind);
  /// Writes the kernel table onto the module (abi::kKernelTableAttr).
  void writeKernelTable();

private:
  ModuleOp module_;
  ::humming::Chip chip_;
  int64_t onlyKernel_;
  OpBuilder builder_;
  gpu::GPUModuleOp kernels_;
  std::unique_ptr<SymbolTable> symbols_;
  SmallVector<Attribute> table_;
  unsigned counter_ = 0;
};

/// The lowering patterns of every humming op kind (humming.gemm,
/// moe_gemm, quantize of activations and of weights, moe_align, moe_group,
/// moe_permute, gather_columns, repack, silu_and_mul, moe_sum).
void populateHummingToNVVMPatterns(RewritePatternSet &patterns,
                                   KernelLoweringState &state);

/// Checks that the patterns can lower `op` (a humming op), emitting why
/// not at the op; what the pass asks of every op before it rewrites any.
LogicalResult checkHummingLowering(Operation *op,
                                   const KernelLoweringState &state);

} // namespace mlir::humming

#endif // HUMMING_CONVERSION_HUMMINGTONVVM_H
