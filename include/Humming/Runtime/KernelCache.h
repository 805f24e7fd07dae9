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

/// What an entry holds: the compiled kernel, the PTX it was made from and
/// free-form metadata (e.g. the kernel table of a layer).
struct CachedArtifact {
  CompiledKernel kernel;
  std::string ptx;
  std::string metadata;
  /// Where a fresh compile's time went ("module 0.002 s, passes and NVPTX
  /// 0.19 s, ptxas 0.19 s"), for the HUMMING_LOG=info line of a cache
  /// miss; not stored on disk.
  std::string compileSplit;
};

class KernelCache {
public:
  enum class Source { Memory, Disk, Compiled };
  struct Lookup {
    std::shared_ptr<const CompiledKernel> kernel;
    Source source = Source::Compiled;
    double seconds = 0; ///< time to get it (compile or read)
    /// The whole entry (kernel, PTX, metadata).
    std::shared_ptr<const CachedArtifact> artifact;
  };

  /// A cache rooted at `dir` ("": $HUMMING_CACHE_DIR, else
  /// $HOME/.cache/humming); "off" keeps kernels in memory only and writes
  /// nothing. A directory that cannot be created works in memory only
  /// too (see warnings()).
  explicit KernelCache(std::string dir = "");

  /// The kernel of `key`: from memory, else a valid disk entry, else
  /// `compile()` — once across processes sharing the directory — whose
  /// result is published on disk. `ptx` is stored with the entry.
  Result<Lookup> get(const CacheKey &key, const std::string &ptx,
                     const std::function<Result<CompiledKernel>()> &compile);

  /// An entry keyed by a description of what produces it (`key.ir` may
  /// then be empty: the key must name everything the PTX depends on). On a
  /// hit nothing runs — no PTX generation, no compiler — so a cached load
  /// is a few file reads; on a miss `produce()` makes the PTX, the kernel
  /// and the metadata, once across processes.
  Result<Lookup> getArtifact(const CacheKey &key,
                             const std::function<Result<CachedArtifact>()> &produce);

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
  /// `expectedPtx` (when set) must equal the entry's PTX.
  Result<CachedArtifact> readEntry(const std::string &digest,
                                   const std::string *expectedPtx) const;
  Status writeEntry(const std::string &digest, const CachedArtifact &artifact);
  Result<Lookup> lookup(const CacheKey &key, const std::string *expectedPtx,
                        const std::function<Result<CachedArtifact>()> &produce);

  std::string dir_;
  bool usable_ = false;
  mutable std::mutex mutex_;
  std::map<std::string, std::shared_ptr<const CachedArtifact>> memory_;
  std::vector<std::string> warnings_;
};

/// The humming version stamped into cache keys.
const char *hummingVersion();

/// The identity of this build of humming: the size and modification time
/// of the executable or shared library this code was linked into. Keys of
/// entries found by description (getArtifact) include it, so a rebuilt
/// compiler never reuses what an older one produced.
const std::string &buildIdentity();

/// Writes "humming: <message>" to stderr when HUMMING_LOG is info or debug.
void logInfo(const std::string &message);

} // namespace humming::rt

#endif // HUMMING_RUNTIME_KERNELCACHE_H
