//===- Compiler.h - PTX to a loadable image ---------------------*- C++ -*-===//
//
// The PTX is always produced in process by humming-compile-pipeline; these
// turn it into what the driver loads: a cubin from ptxas (subprocess) or
// nvJitLink (in process, through dlopen), or the PTX itself for the
// driver's JIT. `HUMMING_COMPILER=ptxas|nvjitlink|driver` picks one; by
// default nvJitLink, with the kernels that use setmaxnreg (which its
// separate compilation ignores) sent to ptxas or the driver
// (docs/Rationale.md); without nvJitLink ptxas, else the driver.
//
//===----------------------------------------------------------------------===//

#ifndef HUMMING_RUNTIME_COMPILER_H
#define HUMMING_RUNTIME_COMPILER_H

#include "Humming/Quant/Result.h"

#include <memory>
#include <string>
#include <vector>

namespace humming::rt {

/// A compiled kernel module and how it was made.
struct CompiledKernel {
  /// The cubin, or (isPtx) the PTX for the driver to JIT-compile at load.
  std::string image;
  bool isPtx = false;
  /// The command line or the options the compiler ran with.
  std::string command;
  /// What the compiler printed (nvJitLink: its info log, then its error
  /// log).
  std::string log;
};

/// The lines of a compiler log that report lost performance (ptxas'
/// "Potential Performance Loss": setmaxnreg ignored, wgmmas serialized,
/// ...), in order.
std::vector<std::string> performanceReports(const std::string &log);

class KernelCompiler {
public:
  virtual ~KernelCompiler() = default;
  /// "ptxas", "nvjitlink" or "driver".
  virtual std::string name() const = 0;
  /// Its version, part of every cache key.
  virtual std::string version() const = 0;
  /// Compiles `ptx` for `chip` ("sm_90a"); errors carry the compiler's log.
  virtual Result<CompiledKernel> compile(const std::string &ptx,
                                         const std::string &chip) const = 0;
};

/// ptxas at `path`, else $HUMMING_PTXAS, $CUDA_HOME/bin, $CUDA_PATH/bin,
/// /usr/local/cuda/bin or PATH.
Result<std::unique_ptr<KernelCompiler>> makePtxasCompiler(std::string path = "");
/// libnvJitLink.so (the CUDA 13 or 12 soname), through dlopen.
Result<std::unique_ptr<KernelCompiler>> makeNvJitLinkCompiler();
/// The driver's PTX JIT: the "image" is the PTX.
std::unique_ptr<KernelCompiler> makeDriverCompiler();

/// Whether `ptx` needs whole-program compilation: it uses setmaxnreg,
/// which separate compilation (nvJitLink) ignores (C7504).
bool needsWholeProgram(const std::string &ptx);
/// `separate` for most kernels, `wholeProgram` for those that need it; its
/// name is "<separate>+<wholeProgram>" and its version both versions.
std::unique_ptr<KernelCompiler>
makeRoutedCompiler(std::unique_ptr<KernelCompiler> separate,
                   std::unique_ptr<KernelCompiler> wholeProgram);
/// The compiler `request` names ("ptxas", "nvjitlink", "driver"; empty: the
/// best one present). `request` defaults to $HUMMING_COMPILER.
Result<std::unique_ptr<KernelCompiler>> selectCompiler(const char *request);
Result<std::unique_ptr<KernelCompiler>> selectCompiler();

} // namespace humming::rt

#endif // HUMMING_RUNTIME_COMPILER_H
