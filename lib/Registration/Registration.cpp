//===- Registration.cpp - Register humming with an MLIR context -----------===//

#include "Humming/Registration.h"
#include "Humming/Dialect/Humming/IR/HummingDialect.h"
#include "Humming/Conversion/Passes.h"
#include "Humming/Dialect/Humming/Transforms/Passes.h"
#include "Humming/Pipelines/Pipelines.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/DialectRegistry.h"

void mlir::humming::registerHummingDialects(DialectRegistry &registry) {
  // (tensor and bufferization: the tensor-level IR that
  // humming-raise-quantized-matmul takes and the buffers it hands over.)
  registry.insert<HummingDialect, arith::ArithDialect,
                  bufferization::BufferizationDialect, func::FuncDialect,
                  gpu::GPUDialect, linalg::LinalgDialect, LLVM::LLVMDialect,
                  memref::MemRefDialect, nvgpu::NVGPUDialect,
                  NVVM::NVVMDialect, scf::SCFDialect, tensor::TensorDialect,
                  vector::VectorDialect>();
  registerHummingCodegenExtensions(registry);
}

void mlir::humming::registerHummingPasses() {
  static bool registered = [] {
    registerHummingTransformsPasses();
    registerHummingConversionPasses();
    registerHummingPipelines();
    return true;
  }();
  (void)registered;
}
