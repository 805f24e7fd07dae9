//===- FuzzIR.cpp - libFuzzer target: humming IR through the pipeline -----===//
//
// Any input as a .mlir module: parsed and verified with every dialect
// humming-opt knows, then, if it verifies, each humming pass runs alone on a
// copy of it (attach-target, legalize-schema, select-tiles, lower-to-nvvm,
// kernel-params: a pass meets modules the passes before it in the pipeline
// would have refused or changed, as in humming-opt or an embedding
// compiler), then it is raised by humming-raise-quantized-matmul (its
// matcher and the evaluator of packed code arithmetic see the mutated linalg
// bodies of the raise tests) and, if that still verifies, compiled by the
// named pipeline for sm_90a (one kernel per layer, LLVM at -O0: the fuzzer's
// time goes to our passes, not to NVPTX's optimizer). Diagnostics are
// expected and dropped; a crash, a hang, a leak or a sanitizer report is a
// finding.
//
//===----------------------------------------------------------------------===//

#include "Humming/Conversion/Passes.h"
#include "Humming/Dialect/Humming/Transforms/Passes.h"
#include "Humming/Pipelines/Pipelines.h"
#include "Humming/Registration.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
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

// Each humming pass alone on its own copy of the module.
static void runEachPassAlone(ModuleOp module) {
  using namespace mlir::humming;
  MLIRContext *ctx = module.getContext();
  auto runAlone = [&](auto addPasses) {
    OwningOpRef<ModuleOp> copy = module.clone();
    PassManager pm(ctx);
    addPasses(pm);
    (void)pm.run(*copy);
  };
  runAlone([](PassManager &pm) {
    HummingAttachTargetPassOptions o;
    o.device = "H200";
    pm.addPass(createHummingAttachTargetPass(o));
  });
  runAlone([](PassManager &pm) {
    HummingLegalizeSchemaPassOptions o;
    o.chip = "sm_90a";
    pm.addPass(createHummingLegalizeSchemaPass(o));
  });
  runAlone([](PassManager &pm) {
    HummingSelectTilesPassOptions o;
    o.chip = "sm_90a";
    pm.addPass(createHummingSelectTilesPass(o));
  });
  runAlone([](PassManager &pm) {
    HummingLowerToNVVMPassOptions o;
    o.chip = "sm_90a";
    o.onlyKernel = 0;
    pm.addPass(createHummingLowerToNVVMPass(o));
  });
  runAlone([](PassManager &pm) {
    pm.addNestedPass<gpu::GPUModuleOp>(createHummingKernelParamsPass());
  });
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
  runEachPassAlone(*module);
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
