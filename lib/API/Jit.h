//===- Jit.h - The process's kernel compiler and cache (internal) -*- C++ -*-===//
//
// Shared by everything in the API that JIT-compiles (Layer,
// ActivationQuantizer): one compiler and one kernel cache per process.
//
//===----------------------------------------------------------------------===//

#ifndef HUMMING_LIB_API_JIT_H
#define HUMMING_LIB_API_JIT_H

#include "Humming/Runtime/Compiler.h"
#include "Humming/Runtime/KernelCache.h"

#include <memory>
#include <string>

namespace humming::detail {

struct JitState {
  std::unique_ptr<rt::KernelCompiler> compiler;
  std::string compilerError; ///< why there is no compiler
  std::unique_ptr<rt::KernelCache> cache;
};
/// Made on first use (rt::selectCompiler, the default cache directory).
JitState &jit();

} // namespace humming::detail

#endif // HUMMING_LIB_API_JIT_H
