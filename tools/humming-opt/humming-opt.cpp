//===- humming-opt.cpp - The humming optimizer driver ---------------------===//
//
// mlir-opt with the humming dialect, the upstream dialects the pipeline lowers
// through, the humming passes and the upstream transform passes, and
// one-shot bufferization (with the arith / linalg / tensor / func / scf
// models) and the linalg passes, so that tensor-level IR (elementwise arith
// fused into linalg.generic first) raised by humming-raise-quantized-matmul
// bufferizes and compiles in one tool.
//
//===----------------------------------------------------------------------===//

#include "ToolVersion.h"
#include "Humming/Registration.h"

#include "mlir/Dialect/Arith/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/Transforms/FuncBufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Linalg/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/SCF/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Tensor/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/StringRef.h"

#include <vector>

int main(int argc, char **argv) {
  humming::tools::installVersionPrinter("humming-opt");
  mlir::registerTransformsPasses();
  mlir::humming::registerHummingPasses();
  mlir::DialectRegistry registry;
  mlir::humming::registerHummingDialects(registry);
  mlir::bufferization::registerBufferizationPasses();
  // Elementwise arith on tensors (a frontend's dequantization before
  // fusion) becomes one linalg.generic the raise pass reads:
  // convert-elementwise-to-linalg, linalg-fuse-elementwise-ops.
  mlir::registerLinalgPasses();
  mlir::arith::registerBufferizableOpInterfaceExternalModels(registry);
  mlir::bufferization::func_ext::registerBufferizableOpInterfaceExternalModels(
      registry);
  mlir::linalg::registerBufferizableOpInterfaceExternalModels(registry);
  mlir::scf::registerBufferizableOpInterfaceExternalModels(registry);
  mlir::tensor::registerBufferizableOpInterfaceExternalModels(registry);
  // A pass's error on the module would otherwise end with the whole
  // module printed as "see current operation" (thousands of lines for a
  // model's layers): off unless asked for
  // (--mlir-print-op-on-diagnostic=true).
  std::vector<char *> args(argv, argv + argc);
  static char quiet[] = "--mlir-print-op-on-diagnostic=false";
  bool asked = false;
  for (int i = 1; i < argc; ++i)
    asked |= llvm::StringRef(argv[i]).contains("mlir-print-op-on-diagnostic");
  if (!asked)
    args.insert(args.begin() + 1, quiet);
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      int(args.size()), args.data(), "Humming optimizer driver\n", registry));
}
