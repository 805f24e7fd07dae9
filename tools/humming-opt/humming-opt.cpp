//===- humming-opt.cpp - The humming optimizer driver ---------------------===//
//
// mlir-opt with the humming dialect, the upstream dialects the pipeline lowers
// through, the humming passes and the upstream transform passes.
//
//===----------------------------------------------------------------------===//

#include "Humming/Registration.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::registerTransformsPasses();
  mlir::humming::registerHummingPasses();
  mlir::DialectRegistry registry;
  mlir::humming::registerHummingDialects(registry);
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "Humming optimizer driver\n", registry));
}
