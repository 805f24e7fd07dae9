//===- KernelCache.h - Compiled kernels on disk and in memory ---*- C++ -*-===//
//
// Compiled kernels are cached under $HUMMING_CACHE_DIR (default
// ~/.cache/humming), keyed by a SHA-256 of everything that decides the
// result (humming and LLVM versions, compiler and its version, chip,
// options, the final IR). An entry is written into a temporary directory
// and published by an atomic rename; a lock file per key makes concurrent
// processes compile once; each entry keeps the PTX, the command line, the
// compiler log and a manifest of sizes and checksums, and an entry that
// does not match its manifest is reported and rebuilt, never used. A cache
// that cannot be written (read-only, disk full) still returns the kernel
// and says why it was not stored. An in-memory map sits in front.
// `HUMMING_LOG=info` reports hits, misses and times on stderr.
//
//===----------------------------------------------------------------------===//

#ifndef HUMMING_RUNTIME_KERNELCACHE_H
#define HUMMING_RUNTIME_KERNELCACHE_H

#include "Humming/Quant/Result.h"
#include "Humming/Runtime/Compiler.h"

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace humming::rt {

/// What decides a compiled kernel. Every field takes part in the digest.
struct CacheKey {
  std::string hummingVersion;
  std::string llvmVersion;
  std::string compiler;
  std::string compilerVersion;
  std::string chip;
  std::string options;
  std::string ir;
  /// SHA-256 (hex) over the length-prefixed fields.
  std::string digest() const;
};

class KernelCache {
public:
  enum class Source { Memory, Disk, Compiled };
  struct Lookup {
    std::shared_ptr<const CompiledKernel> kernel;
    Source source = Source::Compiled;
    double seconds = 0; ///< time to get it (compile or read)
  };

  /// A cache rooted at `dir` ("": $HUMMING_CACHE_DIR, else
  /// $HOME/.cache/humming). A directory that cannot be created works in
  /// memory only (see warnings()).
  explicit KernelCache(std::string dir = "");

  /// The kernel of `key`: from memory, else a valid disk entry, else
  /// `compile()` — once across processes sharing the directory — whose
  /// result is published on disk. `ptx` is stored with the entry.
  Result<Lookup> get(const CacheKey &key, const std::string &ptx,
                     const std::function<Result<CompiledKernel>()> &compile);

  /// `compiler` turning `ptx` into the image for `chip`, through the cache:
  /// the key is (humming version, `llvmVersion` — the LLVM that generated
  /// the PTX —, the compiler and its version, chip, its options, the PTX).
  Result<Lookup> compile(const KernelCompiler &compiler,
                         const std::string &llvmVersion,
                         const std::string &chip, const std::string &ptx);

  const std::string &directory() const { return dir_; }
  /// Why entries were rebuilt or not stored, oldest first.
  std::vector<std::string> warnings() const;
  /// The entry directory of a digest (for tools and tests).
  std::string entryPath(const std::string &digest) const;

  /// $HUMMING_CACHE_DIR, else $HOME/.cache/humming.
  static std::string defaultDirectory();

private:
  void warn(std::string message);
  /// The verified entry of `digest`, or an error saying what is wrong
  /// ("missing" when there is none).
  Result<CompiledKernel> readEntry(const std::string &digest,
                                   const std::string &ptx) const;
  Status writeEntry(const std::string &digest, const std::string &ptx,
                    const CompiledKernel &kernel);

  std::string dir_;
  bool usable_ = false;
  mutable std::mutex mutex_;
  std::map<std::string, std::shared_ptr<const CompiledKernel>> memory_;
  std::vector<std::string> warnings_;
};

/// The humming version stamped into cache keys.
const char *hummingVersion();

} // namespace humming::rt

#endif // HUMMING_RUNTIME_KERNELCACHE_H
