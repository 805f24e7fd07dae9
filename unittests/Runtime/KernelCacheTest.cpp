//===- KernelCacheTest.cpp - The on-disk kernel cache ---------------------===//
//
// Key sensitivity, hits and misses, corrupt entries (truncated, flipped,
// deleted files), a location that cannot be written, a full disk (a file
// size limit in a child process) and several processes compiling one key.
//
//===----------------------------------------------------------------------===//

#include "Humming/Runtime/KernelCache.h"

#include <gtest/gtest.h>

#include <atomic>
#include <csignal>
#include <cstdlib>
#include <fcntl.h>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace humming;
using namespace humming::rt;

namespace {

struct TempDir {
  std::string path;
  TempDir() {
    char buf[] = "/tmp/humming-cache-test-XXXXXX";
    path = ::mkdtemp(buf);
  }
  ~TempDir() { std::system(("rm -rf '" + path + "'").c_str()); }
};

CacheKey sampleKey() {
  return CacheKey{"humming 0.4", "LLVM 22.1", "ptxas", "ptxas 13.0.88",
                  "sm_90a", "opt-level=3", "module { }"};
}

CompiledKernel sampleKernel(const std::string &tag = "") {
  CompiledKernel k;
  k.image = std::string("\x7f" "ELF", 4) + "cubin bytes " + tag;
  k.command = "ptxas -arch=sm_90a -O3 in.ptx -o out.cubin";
  k.log = "ptxas info: 0 bytes spill";
  return k;
}

std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void writeFile(const std::string &path, const std::string &data) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << data;
}

} // namespace

TEST(CacheKey, DigestIsSha256OfLengthPrefixedFields) {
  // SHA-256 of "0:0:0:0:0:0:0:", the empty key's fields (sha256sum's).
  EXPECT_EQ(CacheKey{}.digest(),
            "6db2d5a4b4209856d3249ada2dd5cebd32f82c1ad350481ed1e52524ec3efd80");
}

TEST(KernelCache, EveryKeyFieldChangesTheDigestAndNothingElseDoes) {
  CacheKey base = sampleKey();
  EXPECT_EQ(base.digest(), sampleKey().digest());
  std::string CacheKey::*fields[] = {
      &CacheKey::hummingVersion, &CacheKey::llvmVersion, &CacheKey::compiler,
      &CacheKey::compilerVersion, &CacheKey::chip, &CacheKey::options,
      &CacheKey::ir};
  for (auto f : fields) {
    CacheKey k = base;
    k.*f += "x";
    EXPECT_NE(k.digest(), base.digest());
  }
  // Field boundaries count: moving a character between fields changes it.
  CacheKey a = base, b = base;
  a.chip = "sm_90";
  a.options = "a" + a.options;
  b.chip = "sm_90a";
  b.options = base.options;
  EXPECT_NE(a.digest(), b.digest());
}

TEST(KernelCache, MissThenDiskThenMemory) {
  TempDir dir;
  int compiles = 0;
  auto compile = [&]() -> Result<CompiledKernel> {
    ++compiles;
    return sampleKernel();
  };
  {
    KernelCache cache(dir.path);
    Result<KernelCache::Lookup> l = cache.get(sampleKey(), "ptx text", compile);
    ASSERT_TRUE(l.ok()) << l.error();
    EXPECT_EQ(l->source, KernelCache::Source::Compiled);
    l = cache.get(sampleKey(), "ptx text", compile);
    EXPECT_EQ(l->source, KernelCache::Source::Memory);
    EXPECT_TRUE(cache.warnings().empty());
  }
  // A new process (a new cache object) reads the entry from disk.
  KernelCache again(dir.path);
  Result<KernelCache::Lookup> l = again.get(sampleKey(), "ptx text", compile);
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->source, KernelCache::Source::Disk);
  EXPECT_EQ(l->kernel->image, sampleKernel().image);
  EXPECT_EQ(l->kernel->command, sampleKernel().command);
  EXPECT_EQ(l->kernel->log, sampleKernel().log);
  EXPECT_EQ(compiles, 1);
  // The entry keeps the PTX, the command line and the log.
  std::string entry = again.entryPath(sampleKey().digest());
  EXPECT_EQ(readFile(entry + "/kernel.ptx"), "ptx text");
  EXPECT_EQ(readFile(entry + "/command.txt"), sampleKernel().command);
  EXPECT_EQ(readFile(entry + "/compile.log"), sampleKernel().log);
}

TEST(KernelCache, CompileErrorsAreReturnedAndNotCached) {
  TempDir dir;
  KernelCache cache(dir.path);
  Result<KernelCache::Lookup> l = cache.get(
      sampleKey(), "ptx", []() -> Result<CompiledKernel> {
        return Error{"ptxas failed (exit status 255) for sm_90a: syntax error"};
      });
  ASSERT_FALSE(l.ok());
  EXPECT_EQ(l.error(), "ptxas failed (exit status 255) for sm_90a: syntax error");
  struct stat st;
  EXPECT_NE(::stat(cache.entryPath(sampleKey().digest()).c_str(), &st), 0);
}

TEST(KernelCache, CorruptEntriesAreReportedAndRebuilt) {
  struct Damage {
    const char *what;
    std::function<void(const std::string &)> apply;
    const char *reason;
  };
  const Damage damages[] = {
      {"truncated image",
       [](const std::string &e) {
         std::string d = readFile(e + "/image.bin");
         writeFile(e + "/image.bin", d.substr(0, d.size() / 2));
       },
       "(truncated?)"},
      {"flipped byte",
       [](const std::string &e) {
         std::string d = readFile(e + "/kernel.ptx");
         d[0] ^= 0x20;
         writeFile(e + "/kernel.ptx", d);
       },
       "does not match its checksum"},
      {"deleted image",
       [](const std::string &e) { ::unlink((e + "/image.bin").c_str()); },
       "missing file"},
      {"deleted manifest",
       [](const std::string &e) { ::unlink((e + "/manifest.txt").c_str()); },
       "unreadable manifest"},
      {"garbage manifest",
       [](const std::string &e) { writeFile(e + "/manifest.txt", "hello\n"); },
       "first line"},
  };
  for (const Damage &d : damages) {
    TempDir dir;
    int compiles = 0;
    auto compile = [&]() -> Result<CompiledKernel> {
      ++compiles;
      return sampleKernel(std::to_string(compiles));
    };
    {
      KernelCache cache(dir.path);
      ASSERT_TRUE(cache.get(sampleKey(), "ptx", compile).ok());
    }
    KernelCache cache(dir.path);
    d.apply(cache.entryPath(sampleKey().digest()));
    Result<KernelCache::Lookup> l = cache.get(sampleKey(), "ptx", compile);
    ASSERT_TRUE(l.ok()) << d.what;
    EXPECT_EQ(l->source, KernelCache::Source::Compiled) << d.what;
    EXPECT_EQ(l->kernel->image, sampleKernel("2").image) << d.what;
    std::vector<std::string> w = cache.warnings();
    ASSERT_EQ(w.size(), 1u) << d.what;
    EXPECT_NE(w[0].find("corrupt kernel cache entry"), std::string::npos) << w[0];
    EXPECT_NE(w[0].find(d.reason), std::string::npos) << d.what << ": " << w[0];
    // The rebuilt entry is whole again.
    KernelCache fresh(dir.path);
    l = fresh.get(sampleKey(), "ptx", compile);
    EXPECT_EQ(l->source, KernelCache::Source::Disk) << d.what;
    EXPECT_EQ(compiles, 2) << d.what;
  }
}

TEST(KernelCache, AnEntryForOtherPtxIsNotUsed) {
  TempDir dir;
  {
    KernelCache cache(dir.path);
    ASSERT_TRUE(cache.get(sampleKey(), "ptx one", [] {
      return Result<CompiledKernel>(sampleKernel());
    }).ok());
  }
  // Same key, different PTX (a key collision or a stale entry): rebuilt.
  KernelCache cache(dir.path);
  Result<KernelCache::Lookup> l = cache.get(sampleKey(), "ptx two", [] {
    return Result<CompiledKernel>(sampleKernel("two"));
  });
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->source, KernelCache::Source::Compiled);
  ASSERT_EQ(cache.warnings().size(), 1u);
  EXPECT_NE(cache.warnings()[0].find("differs from the PTX"), std::string::npos);
}

TEST(KernelCache, ReportsOfLostPerformanceBecomeWarnings) {
  // nvJitLink ignoring setmaxnreg and serializing wgmmas (what its info log
  // said for the warp-specialized kernels) must not pass unseen.
  TempDir dir;
  KernelCache cache(dir.path);
  CompiledKernel k = sampleKernel();
  k.log = "ptxas info    : (C7504) Potential Performance Loss: 'setmaxnreg' "
          "ignored to maintain compatibility across compilation units.\n"
          "ptxas info    : 0 bytes gmem\n";
  Result<KernelCache::Lookup> l = cache.get(
      sampleKey(), "ptx", [&] { return Result<CompiledKernel>(k); });
  ASSERT_TRUE(l.ok()) << l.error();
  ASSERT_EQ(cache.warnings().size(), 1u);
  EXPECT_NE(cache.warnings()[0].find("(ptxas): ptxas info    : (C7504) "
                                     "Potential Performance Loss"),
            std::string::npos)
      << cache.warnings()[0];
  // A hit does not report it again.
  l = cache.get(sampleKey(), "ptx", [&] { return Result<CompiledKernel>(k); });
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(cache.warnings().size(), 1u);
}

TEST(KernelCache, AnUnwritableLocationKeepsKernelsInMemory) {
  TempDir dir;
  // A file where the cache directory should be: nothing can be created.
  std::string blocked = dir.path + "/not-a-directory";
  writeFile(blocked, "x");
  KernelCache cache(blocked + "/cache");
  ASSERT_EQ(cache.warnings().size(), 1u);
  EXPECT_NE(cache.warnings()[0].find("is not usable"), std::string::npos)
      << cache.warnings()[0];
  int compiles = 0;
  auto compile = [&]() -> Result<CompiledKernel> {
    ++compiles;
    return sampleKernel();
  };
  Result<KernelCache::Lookup> l = cache.get(sampleKey(), "ptx", compile);
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->source, KernelCache::Source::Compiled);
  EXPECT_EQ(cache.get(sampleKey(), "ptx", compile)->source,
            KernelCache::Source::Memory);
  EXPECT_EQ(compiles, 1);
}

TEST(KernelCache, OffKeepsKernelsInMemoryAndWritesNothing) {
  TempDir dir;
  char cwd[4096];
  ASSERT_NE(::getcwd(cwd, sizeof cwd), nullptr);
  ASSERT_EQ(::chdir(dir.path.c_str()), 0); // a relative "off" would land here
  ::setenv("HUMMING_CACHE_DIR", "off", 1);
  {
    KernelCache cache;
    EXPECT_EQ(cache.directory(), "off");
    int compiles = 0;
    auto compile = [&]() -> Result<CompiledKernel> {
      ++compiles;
      return sampleKernel();
    };
    EXPECT_EQ(cache.get(sampleKey(), "ptx", compile)->source,
              KernelCache::Source::Compiled);
    EXPECT_EQ(cache.get(sampleKey(), "ptx", compile)->source,
              KernelCache::Source::Memory);
    EXPECT_EQ(compiles, 1);
    EXPECT_TRUE(cache.warnings().empty());
  }
  ::unsetenv("HUMMING_CACHE_DIR");
  struct stat st;
  EXPECT_NE(::stat((dir.path + "/off").c_str(), &st), 0); // nothing written
  ASSERT_EQ(::chdir(cwd), 0);
}

TEST(KernelCache, AReadOnlyDirectoryStillCompiles) {
  TempDir dir;
  ::chmod(dir.path.c_str(), 0755);
  { KernelCache warm(dir.path); } // the layout, owned by this user
  // In a child running as another user (root drops to nobody; others make
  // the directories read-only): nothing can be locked or published.
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    if (::geteuid() == 0) {
      if (::setgid(65534) != 0 || ::setuid(65534) != 0)
        std::_Exit(2);
    } else {
      for (const char *sub : {"/tmp", "/locks", "/entries"})
        ::chmod((dir.path + sub).c_str(), 0555);
    }
    KernelCache cache(dir.path);
    Result<KernelCache::Lookup> l = cache.get(sampleKey(), "ptx", [] {
      return Result<CompiledKernel>(sampleKernel());
    });
    bool stored = false, locked = true, unusable = false;
    for (const std::string &w : cache.warnings()) {
      stored |= w.find("not stored in the cache") != std::string::npos;
      locked &= w.find("cannot lock ") == std::string::npos ||
                w.find("compiling without the lock") == std::string::npos;
      unusable |= w.find("is not usable") != std::string::npos;
    }
    // The lock file cannot be created either: said, and compiled anyway.
    // Where the user cannot even reach the directory (a temporary
    // directory under a root-only /tmp, mode 0700), the cache says it is
    // not usable and compiles in memory.
    std::_Exit(l.ok() && l->kernel->image == sampleKernel().image &&
                       ((stored && !locked) || unusable)
                   ? 0
                   : 1);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  for (const char *sub : {"/tmp", "/locks", "/entries"})
    ::chmod((dir.path + sub).c_str(), 0755);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST(KernelCache, AFullDiskStillReturnsTheKernel) {
  TempDir dir;
  // In a child: a 64-byte file size limit makes every larger write fail
  // (EFBIG), as a full disk would.
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    std::signal(SIGXFSZ, SIG_IGN);
    struct rlimit lim = {64, 64};
    ::setrlimit(RLIMIT_FSIZE, &lim);
    KernelCache cache(dir.path);
    CompiledKernel big = sampleKernel();
    big.image += std::string(4096, 'z');
    Result<KernelCache::Lookup> l = cache.get(sampleKey(), "ptx", [&] {
      return Result<CompiledKernel>(big);
    });
    bool ok = l.ok() && l->kernel->image == big.image &&
              cache.warnings().size() == 1 &&
              cache.warnings()[0].find("not stored in the cache") !=
                  std::string::npos;
    std::_Exit(ok ? 0 : 1);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  // Nothing half-written was published, and the scratch space is clean.
  KernelCache cache(dir.path);
  struct stat st;
  EXPECT_NE(::stat(cache.entryPath(sampleKey().digest()).c_str(), &st), 0);
  std::string leftovers = dir.path + "/tmp";
  EXPECT_EQ(std::system(("test -z \"$(ls -A '" + leftovers + "')\"").c_str()), 0);
}

TEST(KernelCache, ConcurrentProcessesCompileOnce) {
  TempDir dir;
  const std::string counter = dir.path + "/compiles";
  const int kProcesses = 6;
  std::vector<pid_t> children;
  for (int i = 0; i < kProcesses; ++i) {
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      KernelCache cache(dir.path + "/cache");
      Result<KernelCache::Lookup> l = cache.get(sampleKey(), "ptx", [&] {
        int fd = ::open(counter.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
        (void)!::write(fd, "x", 1);
        ::close(fd);
        ::usleep(200 * 1000); // a slow compiler: the others must wait
        return Result<CompiledKernel>(sampleKernel());
      });
      std::_Exit(l.ok() && l->kernel->image == sampleKernel().image ? 0 : 1);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0);
  }
  EXPECT_EQ(readFile(counter), "x");
}

TEST(KernelCache, ThreadsShareOneCompile) {
  TempDir dir;
  KernelCache cache(dir.path);
  std::atomic<int> compiles{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i)
    threads.emplace_back([&] {
      Result<KernelCache::Lookup> l = cache.get(sampleKey(), "ptx", [&] {
        ++compiles;
        ::usleep(50 * 1000);
        return Result<CompiledKernel>(sampleKernel());
      });
      EXPECT_TRUE(l.ok());
    });
  for (std::thread &t : threads)
    t.join();
  EXPECT_EQ(compiles.load(), 1);
}

TEST(KernelCache, ArtifactsKeyedByDescriptionSkipTheWork) {
  TempDir dir;
  CacheKey key = sampleKey();
  key.ir.clear(); // the description is the key: no PTX before the work
  key.options = "layer: ui4 g128 4096x4096 only=0";
  int produced = 0;
  auto produce = [&]() -> Result<CachedArtifact> {
    ++produced;
    return CachedArtifact{sampleKernel(), "ptx of the layer",
                          "layer_gemm0_m0 1 16 16 64 256 81920 2\n",
                          "module 0.001 s, passes and NVPTX 0.2 s"};
  };
  {
    KernelCache cache(dir.path);
    Result<KernelCache::Lookup> l = cache.getArtifact(key, produce);
    ASSERT_TRUE(l.ok()) << l.error();
    EXPECT_EQ(l->source, KernelCache::Source::Compiled);
    // The compile's time split travels with the fresh artifact only.
    EXPECT_EQ(l->artifact->compileSplit,
              "module 0.001 s, passes and NVPTX 0.2 s");
  }
  KernelCache cache(dir.path);
  Result<KernelCache::Lookup> l = cache.getArtifact(key, produce);
  ASSERT_TRUE(l.ok()) << l.error();
  EXPECT_EQ(l->source, KernelCache::Source::Disk);
  EXPECT_EQ(produced, 1);
  ASSERT_TRUE(l->artifact);
  EXPECT_EQ(l->artifact->ptx, "ptx of the layer");
  EXPECT_EQ(l->artifact->metadata, "layer_gemm0_m0 1 16 16 64 256 81920 2\n");
  EXPECT_EQ(l->artifact->compileSplit, "");
  EXPECT_EQ(l->kernel->image, sampleKernel().image);
  // Damage is still detected without a PTX to compare.
  std::string entry = cache.entryPath(key.digest());
  writeFile(entry + "/metadata.txt", "tampered");
  KernelCache fresh(dir.path);
  l = fresh.getArtifact(key, produce);
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->source, KernelCache::Source::Compiled);
  EXPECT_EQ(produced, 2);
  ASSERT_EQ(fresh.warnings().size(), 1u);
  EXPECT_NE(fresh.warnings()[0].find("metadata.txt"), std::string::npos)
      << fresh.warnings()[0];
}
