//===- KernelCache.cpp - Compiled kernels on disk and in memory -----------===//

#include "Humming/Runtime/KernelCache.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/SHA256.h"

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <sstream>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace humming::rt {

const char *hummingVersion() { return "humming 0.4"; }

const std::string &buildIdentity() {
  static const std::string id = [] {
    // The object holding this function: libhumming.so, or the executable
    // (whose name dladdr may give relative to the start directory).
    Dl_info info;
    std::string path;
    if (::dladdr(reinterpret_cast<void *>(&buildIdentity), &info) &&
        info.dli_fname && info.dli_fname[0] == '/')
      path = info.dli_fname;
    else {
      char buf[4096];
      ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf);
      if (n > 0)
        path.assign(buf, size_t(n));
    }
    struct stat st;
    if (!path.empty() && ::stat(path.c_str(), &st) == 0)
      return concat(path, " ", st.st_size, " ", st.st_mtime);
    return std::string("unknown build");
  }();
  return id;
}

namespace {

/// SHA-256 of `data` as 64 lowercase hex digits.
std::string sha256Hex(std::string_view data) {
  return llvm::toHex(llvm::SHA256::hash(llvm::arrayRefFromStringRef(
                         llvm::StringRef(data.data(), data.size()))),
                     /*LowerCase=*/true);
}

bool infoLogging() {
  static const bool on = [] {
    const char *v = std::getenv("HUMMING_LOG");
    return v && (std::strcmp(v, "info") == 0 || std::strcmp(v, "debug") == 0);
  }();
  return on;
}

/// mkdir -p; false with errno set when a component cannot be made.
bool makeDirs(const std::string &path) {
  std::string partial;
  std::stringstream s(path);
  std::string part;
  if (!path.empty() && path[0] == '/')
    partial = "/";
  while (std::getline(s, part, '/')) {
    if (part.empty())
      continue;
    partial += part + "/";
    if (::mkdir(partial.c_str(), 0755) != 0 && errno != EEXIST)
      return false;
    struct stat st;
    if (::stat(partial.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
      errno = ENOTDIR;
      return false;
    }
  }
  return true;
}

void removeTree(const std::string &path) {
  if (DIR *d = ::opendir(path.c_str())) {
    while (dirent *e = ::readdir(d)) {
      std::string name = e->d_name;
      if (name == "." || name == "..")
        continue;
      std::string child = path + "/" + name;
      struct stat st;
      if (::lstat(child.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
        removeTree(child);
      else
        ::unlink(child.c_str());
    }
    ::closedir(d);
  }
  ::rmdir(path.c_str());
}

/// The whole file, or an error naming it.
Result<std::string> readWhole(const std::string &path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return Error{concat(path, ": ", std::strerror(errno))};
  std::string data;
  char buf[1 << 16];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) > 0)
    data.append(buf, size_t(n));
  int err = errno;
  ::close(fd);
  if (n < 0)
    return Error{concat(path, ": ", std::strerror(err))};
  return data;
}

/// Writes and flushes `data`; an error with the system's reason (a full
/// disk, a file-size limit, a read-only file system).
Status writeWhole(const std::string &path, const std::string &data) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    return Error{concat(path, ": ", std::strerror(errno))};
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      int err = n < 0 ? errno : ENOSPC;
      ::close(fd);
      return Error{concat(path, ": ", std::strerror(err))};
    }
    done += size_t(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0)
    return Error{concat(path, ": ", std::strerror(errno))};
  return Status::success();
}

/// The files of an entry besides its manifest.
struct EntryFile {
  const char *name;
  const std::string CompiledKernel::*member; // null: the PTX
};
constexpr const char *kManifest = "manifest.txt";
constexpr const char *kManifestMagic = "humming-kernel-cache 1";

std::string manifestLine(const char *name, const std::string &data) {
  return concat(name, " ", data.size(), " ", sha256Hex(data), "\n");
}

/// An exclusive lock on a file, released on destruction.
struct FileLock {
  int fd = -1;
  explicit FileLock(const std::string &path) {
    fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd >= 0)
      while (::flock(fd, LOCK_EX) != 0 && errno == EINTR) {
      }
  }
  ~FileLock() {
    if (fd >= 0) {
      ::flock(fd, LOCK_UN);
      ::close(fd);
    }
  }
};

} // namespace

void logInfo(const std::string &message) {
  if (infoLogging())
    std::fprintf(stderr, "humming: %s\n", message.c_str());
}

std::string CacheKey::digest() const {
  llvm::SHA256 h;
  for (const std::string *f : {&hummingVersion, &llvmVersion, &compiler,
                               &compilerVersion, &chip, &options, &ir}) {
    std::string len = std::to_string(f->size()) + ":";
    h.update(len);
    h.update(*f);
  }
  return llvm::toHex(h.final(), /*LowerCase=*/true);
}

std::string KernelCache::defaultDirectory() {
  if (const char *d = std::getenv("HUMMING_CACHE_DIR"); d && *d)
    return d;
  const char *home = std::getenv("HOME");
  return std::string(home && *home ? home : "/tmp") + "/.cache/humming";
}

KernelCache::KernelCache(std::string dir)
    : dir_(dir.empty() ? defaultDirectory() : std::move(dir)) {
  if (dir_ == "off")
    return; // asked for: memory only, nothing written, nothing to warn
  for (const char *sub : {"/entries", "/tmp", "/locks"})
    if (!makeDirs(dir_ + sub)) {
      warn(concat("kernel cache '", dir_, "' is not usable (",
                  std::strerror(errno), "): kernels are kept in memory only"));
      return;
    }
  usable_ = true;
}

void KernelCache::warn(std::string message) {
  logInfo("warning: " + message);
  std::lock_guard<std::mutex> lock(mutex_);
  warnings_.push_back(std::move(message));
}

std::vector<std::string> KernelCache::warnings() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return warnings_;
}

std::string KernelCache::entryPath(const std::string &digest) const {
  return dir_ + "/entries/" + digest;
}

Result<CachedArtifact> KernelCache::readEntry(const std::string &digest,
                                              const std::string *expectedPtx) const {
  std::string path = entryPath(digest);
  struct stat st;
  if (::stat(path.c_str(), &st) != 0)
    return Error{"missing"};
  Result<std::string> manifest = readWhole(path + "/" + kManifest);
  if (!manifest)
    return Error{concat("unreadable manifest (", manifest.error(), ")")};
  std::istringstream lines(*manifest);
  std::string magic;
  std::getline(lines, magic);
  if (magic != kManifestMagic)
    return Error{"the manifest's first line is not '" +
                 std::string(kManifestMagic) + "'"};
  CachedArtifact a;
  CompiledKernel &k = a.kernel;
  bool sawKey = false, sawPtx = false;
  std::string name;
  while (lines >> name) {
    if (name == "key") {
      std::string key;
      lines >> key;
      if (key != digest)
        return Error{concat("the manifest names key ", key)};
      sawKey = true;
      continue;
    }
    if (name == "is_ptx") {
      int v = 0;
      lines >> v;
      k.isPtx = v != 0;
      continue;
    }
    size_t size = 0;
    std::string sha;
    if (!(lines >> size >> sha))
      return Error{concat("malformed manifest line for '", name, "'")};
    Result<std::string> data = readWhole(path + "/" + name);
    if (!data)
      return Error{concat("missing file (", data.error(), ")")};
    if (data->size() != size)
      return Error{concat(name, " has ", data->size(), " bytes; the manifest "
                          "says ", size, " (truncated?)")};
    if (sha256Hex(*data) != sha)
      return Error{concat(name, " does not match its checksum")};
    if (name == "kernel.ptx") {
      if (expectedPtx && *data != *expectedPtx)
        return Error{"kernel.ptx differs from the PTX being compiled"};
      a.ptx = data.take();
      sawPtx = true;
    } else if (name == "metadata.txt") {
      a.metadata = data.take();
    } else if (name == "image.bin") {
      k.image = data.take();
    } else if (name == "command.txt") {
      k.command = data.take();
    } else if (name == "compile.log") {
      k.log = data.take();
    }
  }
  if (!sawKey || !sawPtx || k.image.empty())
    return Error{"the manifest lacks the key, the PTX or the image"};
  return a;
}

Status KernelCache::writeEntry(const std::string &digest,
                               const CachedArtifact &artifact) {
  const CompiledKernel &kernel = artifact.kernel;
  // An absolute model: createUniqueDirectory puts a relative one under the
  // system's temporary directory, from where the rename below may not reach.
  llvm::SmallString<256> model(dir_ + "/tmp/" + digest), made;
  llvm::sys::fs::make_absolute(model);
  if (std::error_code ec = llvm::sys::fs::createUniqueDirectory(model, made))
    return Error{concat("cannot create a directory under ", dir_,
                        "/tmp: ", ec.message())};
  std::string tmp(made);
  std::string manifest = std::string(kManifestMagic) + "\nkey " + digest +
                         "\nis_ptx " + (kernel.isPtx ? "1" : "0") + "\n";
  const std::pair<const char *, const std::string *> files[] = {
      {"kernel.ptx", &artifact.ptx},
      {"image.bin", &kernel.image},
      {"command.txt", &kernel.command},
      {"compile.log", &kernel.log},
      {"metadata.txt", &artifact.metadata}};
  for (auto [name, data] : files) {
    if (Status s = writeWhole(tmp + "/" + name, *data); !s) {
      removeTree(tmp);
      return s;
    }
    manifest += manifestLine(name, *data);
  }
  // The manifest last: an entry without one is incomplete.
  if (Status s = writeWhole(tmp + "/" + kManifest, manifest); !s) {
    removeTree(tmp);
    return s;
  }
  if (::rename(tmp.c_str(), entryPath(digest).c_str()) != 0) {
    int err = errno;
    removeTree(tmp);
    // Another process published the same key first: theirs is as good.
    if (err == EEXIST || err == ENOTEMPTY)
      return Status::success();
    return Error{concat("cannot publish ", entryPath(digest), ": ",
                        std::strerror(err))};
  }
  return Status::success();
}

Result<KernelCache::Lookup>
KernelCache::compile(const KernelCompiler &compiler,
                     const std::string &llvmVersion, const std::string &chip,
                     const std::string &ptx) {
  CacheKey key{hummingVersion(), llvmVersion,     compiler.name(),
               compiler.version(), chip,          "-O3",
               ptx};
  return get(key, ptx, [&] { return compiler.compile(ptx, chip); });
}

Result<KernelCache::Lookup>
KernelCache::get(const CacheKey &key, const std::string &ptx,
                 const std::function<Result<CompiledKernel>()> &compile) {
  return lookup(key, &ptx, [&]() -> Result<CachedArtifact> {
    Result<CompiledKernel> k = compile();
    if (!k)
      return Error{k.error()};
    return CachedArtifact{k.take(), ptx, "", ""};
  });
}

Result<KernelCache::Lookup> KernelCache::getArtifact(
    const CacheKey &key,
    const std::function<Result<CachedArtifact>()> &produce) {
  return lookup(key, nullptr, produce);
}

Result<KernelCache::Lookup>
KernelCache::lookup(const CacheKey &key, const std::string *expectedPtx,
                    const std::function<Result<CachedArtifact>()> &produce) {
  using Clock = std::chrono::steady_clock;
  auto start = Clock::now();
  auto seconds = [&] {
    return std::chrono::duration<double>(Clock::now() - start).count();
  };
  const std::string digest = key.digest();
  const std::string shortKey = digest.substr(0, 12);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto it = memory_.find(digest); it != memory_.end()) {
      logInfo(concat("cache hit (memory) ", shortKey, " for ", key.chip));
      return Lookup{{it->second, &it->second->kernel}, Source::Memory,
                    seconds(), it->second};
    }
  }
  auto remember = [&](CachedArtifact a, Source source) {
    auto shared = std::make_shared<const CachedArtifact>(std::move(a));
    std::lock_guard<std::mutex> lock(mutex_);
    memory_[digest] = shared;
    return Lookup{{shared, &shared->kernel}, source, seconds(), shared};
  };
  // A corrupt entry is reported, moved aside and rebuilt.
  auto tryDisk = [&]() -> std::optional<CachedArtifact> {
    Result<CachedArtifact> entry = readEntry(digest, expectedPtx);
    if (entry)
      return entry.take();
    if (entry.error() != "missing") {
      warn(concat("corrupt kernel cache entry ", entryPath(digest), ": ",
                  entry.error(), "; rebuilding it"));
      std::string aside = dir_ + "/tmp/corrupt-" + digest + "-" +
                          std::to_string(::getpid());
      if (::rename(entryPath(digest).c_str(), aside.c_str()) == 0)
        removeTree(aside);
      else
        removeTree(entryPath(digest));
    }
    return std::nullopt;
  };
  if (usable_) {
    if (std::optional<CachedArtifact> k = tryDisk()) {
      Lookup l = remember(std::move(*k), Source::Disk);
      logInfo(concat("cache hit (disk) ", shortKey, " for ", key.chip, " in ",
                     l.seconds * 1e3, " ms"));
      return l;
    }
  }
  // One process compiles a key; the others wait and then read its entry.
  std::optional<FileLock> lock;
  if (usable_) {
    lock.emplace(dir_ + "/locks/" + digest + ".lock");
    if (lock->fd < 0)
      warn(concat("cannot lock ", dir_, "/locks/", digest, ".lock (",
                  std::strerror(errno), "): compiling without the lock"));
    if (std::optional<CachedArtifact> k = tryDisk()) {
      Lookup l = remember(std::move(*k), Source::Disk);
      logInfo(concat("cache hit (disk, after waiting) ", shortKey, " for ",
                     key.chip, " in ", l.seconds * 1e3, " ms"));
      return l;
    }
  }
  Result<CachedArtifact> compiled = produce();
  if (!compiled)
    return Error{compiled.error()};
  if (usable_)
    if (Status s = writeEntry(digest, *compiled); !s)
      warn(concat("kernel ", shortKey, " not stored in the cache: ",
                  s.error()));
  // ptxas's reports of lost performance (setmaxnreg ignored, wgmmas
  // serialized, ...) are the kernel's business too: warnings, not only log.
  for (const std::string &line : performanceReports(compiled->kernel.log))
    warn(concat("kernel ", shortKey, " (", key.compiler, "): ", line));
  const std::string split = compiled->compileSplit;
  Lookup l = remember(compiled.take(), Source::Compiled);
  logInfo(concat("compiled ", shortKey, " for ", key.chip, " with ",
                 key.compiler, " in ", l.seconds, " s (cache miss",
                 split.empty() ? "" : "; ", split, ")"));
  return l;
}

} // namespace humming::rt
