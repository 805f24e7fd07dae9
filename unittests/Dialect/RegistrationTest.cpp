//===- RegistrationTest.cpp - Embedding humming in another compiler -------===//
//
// What an ML compiler that embeds humming does: its own registry and context,
// registerHummingDialects / registerHummingPasses, then humming IR parsed,
// verified and transformed with a textual pipeline.
//
//===----------------------------------------------------------------------===//

#include "Humming/Dialect/Humming/IR/HummingOps.h"
#include "Humming/Registration.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

#include <gtest/gtest.h>

using namespace mlir;

namespace {
const char *kLayer = R"mlir(
func.func @gemm_w4a16(%a: memref<?x4096xf16>, %w: memref<4096x512xi32>,
                      %s: memref<4096x1xf16>, %c: memref<?x4096xf16>) {
  humming.gemm %a, %w scales(%s : memref<4096x1xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16>,
       input_schema = #humming.input_schema<type = f16>}
      : memref<?x4096xf16>, memref<4096x512xi32> -> memref<?x4096xf16>
  return
}
)mlir";

const char *kFp8Layer = R"mlir(
func.func @gemm_fp8(%a: memref<?x4096xf8E4M3FN>, %w: memref<4096x1024xi32>,
                    %s: memref<4096x1xf16>, %as: memref<?x1xf32>,
                    %c: memref<?x4096xf16>) {
  humming.gemm %a, %w scales(%s : memref<4096x1xf16>)
      input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = f8E4M3FN, scale = f16>,
       input_schema = #humming.input_schema<type = f8E4M3FN, scaling = token>}
      : memref<?x4096xf8E4M3FN>, memref<4096x1024xi32> -> memref<?x4096xf16>
  return
}
)mlir";
} // namespace

TEST(Registration, ExternalRegistryParsesAndVerifiesHummingIR) {
  DialectRegistry registry;
  mlir::humming::registerHummingDialects(registry);
  MLIRContext ctx(registry);
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(kLayer, &ctx);
  ASSERT_TRUE(module);
  EXPECT_TRUE(succeeded(verify(*module)));
  int gemms = 0;
  module->walk([&](mlir::humming::GemmOp op) {
    ++gemms;
    EXPECT_EQ(op.getWeightSchema().toHost().type, ::humming::ScalarType::uint(4));
  });
  EXPECT_EQ(gemms, 1);
  // The upstream dialects the pipeline lowers through come with it.
  for (StringRef name : {"arith", "func", "gpu", "llvm", "memref", "nvgpu",
                         "nvvm", "scf", "vector", "humming"})
    EXPECT_TRUE(registry.getDialectAllocator(name)) << name.str();
}

TEST(Registration, PassesRunFromATextualPipeline) {
  mlir::humming::registerHummingPasses();
  mlir::humming::registerHummingPasses(); // idempotent
  DialectRegistry registry;
  mlir::humming::registerHummingDialects(registry);
  MLIRContext ctx(registry);
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(kFp8Layer, &ctx);
  ASSERT_TRUE(module);

  // On an H200 the fp8 layer is legal.
  PassManager pm(&ctx, ModuleOp::getOperationName());
  ASSERT_TRUE(succeeded(
      parsePassPipeline("humming-attach-target{device=H200}", pm)));
  EXPECT_TRUE(succeeded(pm.run(*module)));
  auto target = (*module)->getAttrOfType<mlir::humming::TargetAttr>("humming.target");
  ASSERT_TRUE(target);
  EXPECT_EQ(target.getChip(), "sm_90a");
  EXPECT_EQ(target.getSms(), 132);

  // On an A100 the verifier after the pass rejects it, with the reason.
  std::string diagnostics;
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &d) {
    diagnostics += d.str() + "\n";
    return success();
  });
  PassManager pm2(&ctx, ModuleOp::getOperationName());
  ASSERT_TRUE(succeeded(
      parsePassPipeline("humming-attach-target{device=A100}", pm2)));
  EXPECT_TRUE(failed(pm2.run(*module)));
  EXPECT_NE(diagnostics.find("expected sm_89 or newer for f8E4M3FN activations, "
                             "got sm_80"),
            std::string::npos)
      << diagnostics;
}
