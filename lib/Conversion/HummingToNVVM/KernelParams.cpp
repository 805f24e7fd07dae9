//===- KernelParams.cpp - the tensor-map parameter of TMA kernels ---------===//
//
// humming-kernel-params: after convert-gpu-to-nvvm, kernels that call the
// input-map placeholder get their by-value tensor-map parameter (after M,
// Humming/Target/KernelABI.h) and use its address instead; then those that
// call the weight-map placeholder get theirs after it. The parameter
// cannot be a gpu.func argument from the start: the GPU-to-NVVM lowering
// drops `llvm.byval` from gpu.func arguments, and a by-value parameter is
// what lets the driver copy a per-launch map into the kernel's parameter
// space (captured by value in CUDA graphs).
//
//===----------------------------------------------------------------------===//

#include "Humming/Conversion/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "llvm/ADT/MapVector.h"

namespace mlir::humming {
#define GEN_PASS_DEF_HUMMINGKERNELPARAMSPASS
#include "Humming/Conversion/Passes.h.inc"
} // namespace mlir::humming

using namespace mlir;
using namespace mlir::humming;

namespace {

/// The size and alignment of a CUtensorMap.
constexpr int64_t kTensorMapBytes = 128, kTensorMapAlign = 64;

struct HummingKernelParamsPass
    : public mlir::humming::impl::HummingKernelParamsPassBase<
          HummingKernelParamsPass> {
  void runOnOperation() override {
    // In the kernels' parameter order: the activations' map, then the
    // weights'.
    for (StringRef placeholder : {kInputMapPlaceholder, kWeightMapPlaceholder})
      if (failed(replacePlaceholder(placeholder)))
        return signalPassFailure();
  }

  /// Each kernel that calls `placeholder` gets a by-value tensor-map
  /// parameter (appended) whose address replaces the calls.
  LogicalResult replacePlaceholder(StringRef placeholder) {
    gpu::GPUModuleOp module = getOperation();
    auto decl = module.lookupSymbol<LLVM::LLVMFuncOp>(placeholder);
    if (!decl)
      return success();
    MLIRContext *ctx = &getContext();
    Builder b(ctx);
    SmallVector<LLVM::CallOp> calls;
    module.walk([&](LLVM::CallOp call) {
      if (call.getCallee() == placeholder)
        calls.push_back(call);
    });
    // The calls per kernel, in order; a call outside a kernel has no
    // parameter to stand for.
    llvm::MapVector<LLVM::LLVMFuncOp, SmallVector<LLVM::CallOp>> byKernel;
    for (LLVM::CallOp call : calls) {
      auto func = call->getParentOfType<LLVM::LLVMFuncOp>();
      if (!func || !func->hasAttr(NVVM::NVVMDialect::getKernelFuncAttrName()))
        return call.emitOpError()
               << "calls " << placeholder
               << " outside a kernel; expected it only in the prepared "
                  "kernels with tma = [a] (the activations' map) or K-major "
                  "weights by TMA (the weights')";
      byKernel[func].push_back(call);
    }
    auto arrayType =
        LLVM::LLVMArrayType::get(IntegerType::get(ctx, 8), kTensorMapBytes);
    for (auto &[func, uses] : byKernel) {
      unsigned index = func.getNumArguments();
      NamedAttrList attrs;
      attrs.set(LLVM::LLVMDialect::getByValAttrName(),
                TypeAttr::get(arrayType));
      attrs.set(LLVM::LLVMDialect::getAlignAttrName(),
                b.getI64IntegerAttr(kTensorMapAlign));
      attrs.set(NVVM::NVVMDialect::getGridConstantAttrName(), b.getUnitAttr());
      // By hand: LLVMFuncOp does not implement FunctionOpInterface's
      // insertArgument (no getTypeWithArgsAndResults for LLVM types).
      LLVM::LLVMFunctionType type = func.getFunctionType();
      SmallVector<Type> params(type.getParams());
      params.push_back(LLVM::LLVMPointerType::get(ctx));
      func.setFunctionType(LLVM::LLVMFunctionType::get(
          type.getReturnType(), params, type.isVarArg()));
      func.getBody().front().addArgument(params.back(), func.getLoc());
      SmallVector<Attribute> argAttrs(params.size(),
                                      DictionaryAttr::get(ctx, {}));
      if (ArrayAttr old = func.getArgAttrsAttr())
        for (auto [i, a] : llvm::enumerate(old))
          argAttrs[i] = a;
      argAttrs[index] = attrs.getDictionary(ctx);
      func.setArgAttrsAttr(ArrayAttr::get(ctx, argAttrs));
      Value map = func.getArgument(index);
      for (LLVM::CallOp call : uses) {
        call.getResult().replaceAllUsesWith(map);
        call.erase();
      }
    }
    decl.erase();
    return success();
  }
};

} // namespace
