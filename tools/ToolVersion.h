//===- ToolVersion.h - `--version` of the humming tools ---------*- C++ -*-===//
//
// Every tool's --version names humming's version (CMake's HUMMING_VERSION,
// the one python/pyproject.toml and humming.__version__ repeat) before the
// LLVM it is built on, instead of LLVM's alone.
//
//===----------------------------------------------------------------------===//

#ifndef HUMMING_TOOLS_TOOLVERSION_H
#define HUMMING_TOOLS_TOOLVERSION_H

#include "llvm/Config/llvm-config.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

namespace humming::tools {

inline void installVersionPrinter(const char *tool) {
  llvm::cl::SetVersionPrinter([tool](llvm::raw_ostream &os) {
    os << tool << " (humming " HUMMING_VERSION_STRING ")\n"
       << "  built on LLVM " LLVM_VERSION_STRING "\n";
  });
}

} // namespace humming::tools

#endif // HUMMING_TOOLS_TOOLVERSION_H
