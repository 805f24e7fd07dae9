//===- FuzzIR.cpp - libFuzzer target: humming IR through the pipeline -----===//
//
// Any input as a .mlir module: parsed and verified with every dialect
// humming-opt knows, then, if it verifies, raised by
// humming-raise-quantized-matmul (its matcher and the evaluator of packed
// code arithmetic see the mutated linalg bodies of the raise tests) and,
// if that still verifies, compiled by the named pipeline for sm_90a (one
// kernel per layer, LLVM at -O0: the fuzzer's time goes to our passes, not
// to NVPTX's optimizer). Diagnostics are expected and dropped; a crash, a
// hang, a leak or a sanitizer report is a finding.
//
//===----------------------------------------------------------------------===//

#include "Humming/Dialect/Humming/Transforms/Passes.h"
#include "Humming/Pipelines/Pipelines.h"
#include "Humming/Registration.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  mlir::humming::registerHummingPasses();
  mlir::humming::registerHummingPipelines();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  DialectRegistry registry;
  mlir::humming::registerHummingDialects(registry);
  mlir::humming::registerHummingCodegenExtensions(registry);
  MLIRContext ctx(registry, MLIRContext::Threading::DISABLED);
  ctx.allowUnregisteredDialects(false);
  ctx.printOpOnDiagnostic(false);
  ScopedDiagnosticHandler quiet(&ctx, [](Diagnostic &) { return success(); });
  llvm::SourceMgr sources;
  sources.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(
          llvm::StringRef(reinterpret_cast<const char *>(data), size), "in"),
      llvm::SMLoc());
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sources, &ctx);
  if (!module || failed(verify(*module)))
    return 0;
  PassManager raise(&ctx);
  raise.addPass(mlir::humming::createHummingRaiseQuantizedMatmulPass());
  if (failed(raise.run(*module)) || failed(verify(*module)))
    return 0;
  (void)mlir::humming::runCompilePipeline(*module, "sm_90a", /*ptxVersion=*/0,
                                          /*optLevel=*/0, /*device=*/"",
                                          /*forceTileConfig=*/"",
                                          /*onlyKernel=*/0);
  return 0;
}
