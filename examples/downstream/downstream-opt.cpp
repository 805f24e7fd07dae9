//===- downstream-opt.cpp - A compiler that embeds humming ----------------===//
//
// An mlir-opt style driver of its own: it registers the upstream dialects
// it uses plus humming (Humming/Registration.h), humming's passes, and one
// pipeline of its own, downstream-compile, that canonicalizes its IR and
// then runs humming-compile-pipeline inside it.
//
//===----------------------------------------------------------------------===//

#include "Humming/Registration.h"

#include "mlir/Dialect/Func/Extensions/AllExtensions.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

namespace {
struct DownstreamOptions
    : public mlir::PassPipelineOptions<DownstreamOptions> {
  Option<std::string> chip{*this, "chip", llvm::cl::desc("Target chip"),
                           llvm::cl::init("sm_90a")};
};
} // namespace

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mlir::humming::registerHummingDialects(registry);
  mlir::func::registerAllExtensions(registry);
  mlir::humming::registerHummingPasses();
  mlir::registerCanonicalizerPass();
  mlir::PassPipelineRegistration<DownstreamOptions>(
      "downstream-compile",
      "canonicalize, then humming-compile-pipeline for `chip`",
      [](mlir::OpPassManager &pm, const DownstreamOptions &options) {
        pm.addPass(mlir::createCanonicalizerPass());
        std::string error;
        llvm::raw_string_ostream errors(error);
        if (mlir::failed(mlir::parsePassPipeline(
                "humming-compile-pipeline{chip=" + options.chip + "}", pm,
                errors)))
          llvm::report_fatal_error(llvm::StringRef(error));
      });
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "humming downstream driver\n", registry));
}
