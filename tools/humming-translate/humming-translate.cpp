//===- humming-translate.cpp - humming IR to PTX or a cubin ---------------===//
//
//   humming-translate <in.mlir> --chip=sm_90a [--ptx-version=N] [--opt-level=N]
//                     [--emit=ptx|cubin] [--ptxas=<path>] [-o <out>]
//
// Runs humming-compile-pipeline (the same code path as humming-opt and the
// JIT) and writes the PTX of the module's kernels; with --emit=cubin it then
// assembles them with ptxas and reports the command line and ptxas' output on
// failure.
//
//===----------------------------------------------------------------------===//

#include "ToolVersion.h"
#include "Humming/Dialect/Humming/IR/HummingAttrs.h"
#include "Humming/Pipelines/Pipelines.h"
#include "Humming/Registration.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace llvm;

// --help lists these alone (LLVM's own flags: --help-hidden).
static cl::OptionCategory category("humming-translate options");

static cl::opt<std::string> inputFile(cl::Positional, cl::desc("<input .mlir>"),
                                      cl::init("-"), cl::cat(category));
static cl::opt<std::string> outputFile("o", cl::desc("Output file"),
                                       cl::init("-"), cl::cat(category));
static cl::opt<std::string>
    chip("chip",
         cl::desc("Target chip, e.g. sm_90a (default: the module's "
                  "humming.target, else sm_80)"),
         cl::init(""), cl::cat(category));
static cl::opt<unsigned> ptxVersion("ptx-version",
                                    cl::desc("PTX ISA version x10 (0: minimum)"),
                                    cl::init(0), cl::cat(category));
static cl::opt<unsigned> optLevel("opt-level", cl::desc("LLVM -O level"),
                                  cl::init(3), cl::cat(category));
static cl::opt<std::string>
    device("device", cl::desc("Known device whose facts choose the tiles of "
                              "prepared weights (default: the module's "
                              "humming.target, else the chip's "
                              "representative)"),
           cl::init(""), cl::cat(category));
static cl::opt<std::string> forceTileConfig(
    "force-tile-config",
    cl::desc("A #humming.tile_config every prepared GEMM uses for every M"),
    cl::init(""), cl::cat(category));
static cl::opt<std::string> emit("emit", cl::desc("ptx or cubin"),
                                 cl::init("ptx"), cl::cat(category));
static cl::opt<std::string> ptxasPath("ptxas",
                                      cl::desc("ptxas to use for --emit=cubin "
                                               "(default: PATH, then "
                                               "/usr/local/cuda/bin)"),
                                      cl::init(""), cl::cat(category));

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(category);
  humming::tools::installVersionPrinter("humming-translate");
  cl::ParseCommandLineOptions(argc, argv, "humming IR to PTX / cubin\n");
  if (emit != "ptx" && emit != "cubin") {
    errs() << "humming-translate: expected --emit=ptx or --emit=cubin, got '"
           << emit << "'\n";
    return 2;
  }
  mlir::DialectRegistry registry;
  mlir::humming::registerHummingDialects(registry);
  mlir::MLIRContext ctx(registry);
  // An error names its op by location; a dump of the module under it would
  // bury the message.
  ctx.printOpOnDiagnostic(false);
  llvm::SourceMgr sources;
  mlir::SourceMgrDiagnosticHandler handler(sources, &ctx);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceFile<mlir::ModuleOp>(inputFile, sources, &ctx);
  if (!module)
    return 1;
  // The pipeline's diagnostics reach `handler`: file:line:col: error: with
  // the source line and a caret, as humming-opt prints them.
  // The chip: --chip, else the module's target's, else sm_80 (a --chip
  // that contradicts the target is refused by the pipeline).
  std::string targetChip = chip;
  if (targetChip.empty()) {
    if (mlir::humming::TargetAttr target =
            mlir::humming::lookupTarget(*module))
      targetChip = target.getChip().str();
    else
      targetChip = "sm_80";
  }
  if (failed(mlir::humming::runCompilePipeline(*module, targetChip, ptxVersion,
                                               optLevel, device,
                                               forceTileConfig)))
    return 1;
  std::optional<std::string> ptx = mlir::humming::collectPtx(*module);
  if (ptx->empty()) {
    mlir::emitError(module->getLoc())
        << mlir::humming::kNoKernelsToCompile;
    return 1;
  }
  std::string error;
  if (emit == "ptx") {
    auto out = mlir::openOutputFile(outputFile, &error);
    if (!out) {
      errs() << "humming-translate: " << error << "\n";
      return 1;
    }
    out->os() << *ptx;
    out->keep();
    return 0;
  }
  // cubin through ptxas.
  std::string ptxas = ptxasPath;
  if (ptxas.empty()) {
    if (ErrorOr<std::string> p = sys::findProgramByName("ptxas"))
      ptxas = *p;
    else if (ErrorOr<std::string> q =
                 sys::findProgramByName("ptxas", {"/usr/local/cuda/bin"}))
      ptxas = *q;
  }
  if (ptxas.empty()) {
    errs() << "humming-translate: --emit=cubin needs ptxas: not on PATH nor "
              "in /usr/local/cuda/bin (pass --ptxas=<path>)\n";
    return 1;
  }
  SmallString<128> ptxFile, logFile;
  sys::fs::createTemporaryFile("humming", "ptx", ptxFile);
  sys::fs::createTemporaryFile("humming", "log", logFile);
  {
    std::error_code ec;
    raw_fd_ostream os(ptxFile, ec);
    os << *ptx;
  }
  std::string out = outputFile == "-" ? std::string(ptxFile) + ".cubin"
                                      : std::string(outputFile);
  std::string arch = "-arch=" + std::string(chip);
  SmallVector<StringRef> args = {ptxas, arch, "-O3", ptxFile, "-o", out};
  std::optional<StringRef> redirects[] = {std::nullopt, StringRef(logFile),
                                          StringRef(logFile)};
  int rc = sys::ExecuteAndWait(ptxas, args, std::nullopt, redirects);
  if (rc != 0) {
    auto log = MemoryBuffer::getFile(logFile);
    errs() << "humming-translate: ptxas failed (exit " << rc << "): ";
    for (StringRef a : args)
      errs() << a << " ";
    errs() << "\nPTX kept at " << ptxFile << "\n"
           << (log ? (*log)->getBuffer() : StringRef()) << "\n";
    return 1;
  }
  sys::fs::remove(ptxFile);
  sys::fs::remove(logFile);
  if (outputFile == "-")
    outs() << "wrote " << out << "\n";
  return 0;
}
