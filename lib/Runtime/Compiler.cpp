//===- Compiler.cpp - ptxas, nvJitLink and the driver JIT -----------------===//

#include "Humming/Runtime/Compiler.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Program.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <fstream>
#include <mutex>
#include <optional>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace humming::rt {
namespace {

bool isExecutable(const std::string &path) {
  struct stat st;
  return !path.empty() && ::stat(path.c_str(), &st) == 0 &&
         S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

/// A scratch directory ($TMPDIR, else /tmp) removed with what it holds on
/// destruction; `path` is empty when it could not be made.
struct TempDir {
  std::string path, error;
  TempDir() {
    llvm::SmallString<128> dir;
    if (std::error_code ec =
            llvm::sys::fs::createUniqueDirectory("humming-compile", dir))
      error = ec.message();
    else
      path = std::string(dir);
  }
  ~TempDir() {
    if (!path.empty())
      llvm::sys::fs::remove_directories(path);
  }
};

/// Runs `argv` with stdout and stderr into `logPath` (the environment is
/// inherited); its exit status, or -1 when it could not start or was
/// killed by a signal.
int run(const std::vector<std::string> &argv, const std::string &logPath) {
  llvm::SmallVector<llvm::StringRef> args(argv.begin(), argv.end());
  std::optional<llvm::StringRef> redirects[] = {
      std::nullopt, llvm::StringRef(logPath), llvm::StringRef(logPath)};
  std::string error;
  int rc = llvm::sys::ExecuteAndWait(argv[0], args, /*Env=*/std::nullopt,
                                     redirects, /*SecondsToWait=*/0,
                                     /*MemoryLimit=*/0, &error);
  return rc < 0 ? -1 : rc;
}

std::string joined(const std::vector<std::string> &argv) {
  std::string s;
  for (const std::string &a : argv)
    s += (s.empty() ? "" : " ") + a;
  return s;
}

class Ptxas : public KernelCompiler {
public:
  explicit Ptxas(std::string path, std::string version)
      : path_(std::move(path)), version_(std::move(version)) {}
  std::string name() const override { return "ptxas"; }
  std::string version() const override { return version_; }
  Result<CompiledKernel> compile(const std::string &ptx,
                                 const std::string &chip) const override {
    TempDir tmp;
    if (tmp.path.empty())
      return Error{
          concat("ptxas: cannot create a temporary directory: ", tmp.error)};
    std::string in = tmp.path + "/in.ptx", out = tmp.path + "/out.cubin",
                log = tmp.path + "/log.txt";
    {
      std::ofstream f(in, std::ios::binary);
      f << ptx;
      f.flush();
      if (!f) {
        const int err = errno;
        return Error{concat("ptxas: cannot write ", in, " (",
                            err ? std::strerror(err) : "write failed",
                            "): ptxas reads the PTX from a temporary file; "
                            "check the space in TMPDIR")};
      }
    }
    std::vector<std::string> argv = {path_, "-arch=" + chip, "-O3", in, "-o",
                                     out};
    int rc = run(argv, log);
    CompiledKernel k;
    k.command = joined(argv);
    k.log = readFile(log);
    if (rc != 0)
      return Error{concat("ptxas failed (exit status ", rc, ") for ", chip,
                          ": ", k.log.empty() ? "no output" : k.log)};
    k.image = readFile(out);
    if (k.image.size() < 4 || k.image.compare(0, 4, "\x7f" "ELF") != 0)
      return Error{concat("ptxas produced no cubin for ", chip, " (",
                          k.image.size(), " bytes)")};
    return k;
  }

private:
  std::string path_, version_;
};

// nvJitLink through dlopen: the C API of nvJitLink.h, resolved by name.
using NvHandle = void *;
struct NvJitLinkApi {
  int (*create)(NvHandle *, uint32_t, const char **);
  int (*destroy)(NvHandle *);
  int (*addData)(NvHandle, int, const void *, size_t, const char *);
  int (*complete)(NvHandle);
  int (*cubinSize)(NvHandle, size_t *);
  int (*cubin)(NvHandle, void *);
  int (*errorLogSize)(NvHandle, size_t *);
  int (*errorLog)(NvHandle, char *);
  int (*infoLogSize)(NvHandle, size_t *);
  int (*infoLog)(NvHandle, char *);
  int (*version)(unsigned *, unsigned *);
};
constexpr int kNvJitLinkInputPtx = 2; // NVJITLINK_INPUT_PTX

Result<const NvJitLinkApi *> loadNvJitLink() {
  static std::once_flag once;
  static Result<const NvJitLinkApi *> result = Error{"not loaded"};
  std::call_once(once, [] {
    void *lib = nullptr;
    for (const char *so : {"libnvJitLink.so.13", "libnvJitLink.so.12",
                           "libnvJitLink.so"})
      if ((lib = dlopen(so, RTLD_NOW | RTLD_LOCAL)))
        break;
    if (!lib) {
      result = Error{"no nvJitLink: libnvJitLink.so.13 / .12 not found "
                     "(add the CUDA toolkit's lib64 to LD_LIBRARY_PATH)"};
      return;
    }
    static NvJitLinkApi api;
    struct Entry {
      void **slot;
      const char *name;
    } entries[] = {{(void **)&api.create, "nvJitLinkCreate"},
                   {(void **)&api.destroy, "nvJitLinkDestroy"},
                   {(void **)&api.addData, "nvJitLinkAddData"},
                   {(void **)&api.complete, "nvJitLinkComplete"},
                   {(void **)&api.cubinSize, "nvJitLinkGetLinkedCubinSize"},
                   {(void **)&api.cubin, "nvJitLinkGetLinkedCubin"},
                   {(void **)&api.errorLogSize, "nvJitLinkGetErrorLogSize"},
                   {(void **)&api.errorLog, "nvJitLinkGetErrorLog"},
                   {(void **)&api.infoLogSize, "nvJitLinkGetInfoLogSize"},
                   {(void **)&api.infoLog, "nvJitLinkGetInfoLog"},
                   {(void **)&api.version, "nvJitLinkVersion"}};
    for (Entry &e : entries)
      if (!(*e.slot = dlsym(lib, e.name))) {
        result = Error{concat("nvJitLink lacks ", e.name)};
        return;
      }
    result = &api;
  });
  return result;
}

class NvJitLink : public KernelCompiler {
public:
  explicit NvJitLink(const NvJitLinkApi &api) : api_(api) {}
  std::string name() const override { return "nvjitlink"; }
  std::string version() const override {
    unsigned major = 0, minor = 0;
    api_.version(&major, &minor);
    return concat("nvJitLink ", major, ".", minor);
  }
  Result<CompiledKernel> compile(const std::string &ptx,
                                 const std::string &chip) const override {
    std::string arch = "-arch=" + chip, opt = "-O3";
    const char *options[] = {arch.c_str(), opt.c_str()};
    NvHandle h = nullptr;
    CompiledKernel k;
    k.command = "nvJitLink " + arch + " " + opt;
    if (int rc = api_.create(&h, 2, options); rc != 0)
      return Error{concat("nvJitLink: cannot create a linker for ", chip,
                          " (error ", rc, ")")};
    auto read = [&](int (*size)(NvHandle, size_t *),
                    int (*text)(NvHandle, char *)) {
      size_t n = 0;
      if (size(h, &n) != 0 || n <= 1)
        return std::string();
      std::string s(n, '\0');
      text(h, s.data());
      s.resize(std::strlen(s.c_str()));
      return s;
    };
    // The info log carries ptxas's performance reports (C75xx).
    auto log = [&] {
      return read(api_.infoLogSize, api_.infoLog) +
             read(api_.errorLogSize, api_.errorLog);
    };
    int rc = api_.addData(h, kNvJitLinkInputPtx, ptx.data(), ptx.size(),
                          "humming.ptx");
    if (rc == 0)
      rc = api_.complete(h);
    if (rc != 0) {
      std::string why = log();
      api_.destroy(&h);
      return Error{concat("nvJitLink failed (error ", rc, ") for ", chip,
                          ": ", why.empty() ? "no log" : why)};
    }
    k.log = log();
    size_t size = 0;
    api_.cubinSize(h, &size);
    k.image.resize(size);
    api_.cubin(h, k.image.data());
    api_.destroy(&h);
    return k;
  }

private:
  const NvJitLinkApi &api_;
};

class DriverJit : public KernelCompiler {
public:
  std::string name() const override { return "driver"; }
  std::string version() const override { return "driver-jit"; }
  Result<CompiledKernel> compile(const std::string &ptx,
                                 const std::string &) const override {
    CompiledKernel k;
    k.image = ptx;
    k.isPtx = true;
    k.command = "cuModuleLoadDataEx (PTX, compiled by the driver at load)";
    return k;
  }
};

// nvJitLink for most kernels, a whole-program compiler for those that
// need one (needsWholeProgram).
class Routed : public KernelCompiler {
public:
  Routed(std::unique_ptr<KernelCompiler> separate,
         std::unique_ptr<KernelCompiler> wholeProgram)
      : separate_(std::move(separate)), wholeProgram_(std::move(wholeProgram)) {
  }
  std::string name() const override {
    return separate_->name() + "+" + wholeProgram_->name();
  }
  // Both versions: which one compiles a kernel follows from its PTX, also
  // part of the key.
  std::string version() const override {
    return separate_->version() + " / " + wholeProgram_->version();
  }
  Result<CompiledKernel> compile(const std::string &ptx,
                                 const std::string &chip) const override {
    return (needsWholeProgram(ptx) ? wholeProgram_ : separate_)
        ->compile(ptx, chip);
  }

private:
  std::unique_ptr<KernelCompiler> separate_, wholeProgram_;
};

std::string findPtxas() {
  std::vector<std::string> candidates;
  if (const char *p = std::getenv("HUMMING_PTXAS"))
    candidates.push_back(p);
  for (const char *var : {"CUDA_HOME", "CUDA_PATH"})
    if (const char *p = std::getenv(var))
      candidates.push_back(std::string(p) + "/bin/ptxas");
  candidates.push_back("/usr/local/cuda/bin/ptxas");
  if (const char *path = std::getenv("PATH")) {
    std::stringstream s(path);
    std::string dir;
    while (std::getline(s, dir, ':'))
      if (!dir.empty())
        candidates.push_back(dir + "/ptxas");
  }
  for (const std::string &c : candidates)
    if (isExecutable(c))
      return c;
  return "";
}

} // namespace

bool needsWholeProgram(const std::string &ptx) {
  return ptx.find("setmaxnreg.") != std::string::npos;
}

std::unique_ptr<KernelCompiler>
makeRoutedCompiler(std::unique_ptr<KernelCompiler> separate,
                   std::unique_ptr<KernelCompiler> wholeProgram) {
  return std::unique_ptr<KernelCompiler>(
      new Routed(std::move(separate), std::move(wholeProgram)));
}

std::vector<std::string> performanceReports(const std::string &log) {
  std::vector<std::string> out;
  std::stringstream lines(log);
  std::string line;
  while (std::getline(lines, line))
    if (line.find("Potential Performance Loss") != std::string::npos)
      out.push_back(line);
  return out;
}

Result<std::unique_ptr<KernelCompiler>> makePtxasCompiler(std::string path) {
  if (path.empty())
    path = findPtxas();
  if (!isExecutable(path))
    return Error{path.empty()
                     ? std::string("no ptxas: set HUMMING_PTXAS or CUDA_HOME, "
                                   "or put ptxas on PATH")
                     : concat("no ptxas: '", path, "' is not an executable")};
  TempDir tmp;
  std::string version = "ptxas";
  if (!tmp.path.empty() && run({path, "--version"}, tmp.path + "/log.txt") == 0) {
    std::string out = readFile(tmp.path + "/log.txt");
    size_t at = out.rfind(", V");
    if (at != std::string::npos)
      version = "ptxas " + out.substr(at + 3, out.find('\n', at) - at - 3);
  }
  return std::unique_ptr<KernelCompiler>(new Ptxas(path, version));
}

Result<std::unique_ptr<KernelCompiler>> makeNvJitLinkCompiler() {
  Result<const NvJitLinkApi *> api = loadNvJitLink();
  if (!api)
    return Error{api.error()};
  return std::unique_ptr<KernelCompiler>(new NvJitLink(**api));
}

std::unique_ptr<KernelCompiler> makeDriverCompiler() {
  return std::unique_ptr<KernelCompiler>(new DriverJit());
}

Result<std::unique_ptr<KernelCompiler>> selectCompiler(const char *request) {
  std::string r = request ? request : "";
  if (r == "ptxas")
    return makePtxasCompiler();
  if (r == "nvjitlink")
    return makeNvJitLinkCompiler();
  if (r == "driver")
    return makeDriverCompiler();
  if (!r.empty())
    return Error{concat("expected HUMMING_COMPILER to be ptxas, nvjitlink or "
                        "driver, got '",
                        r, "'")};
  // nvJitLink first: in process, and on the H200 (2026-12-01) it compiled a
  // layer's kernels faster than the ptxas subprocess (231 against 382 ms
  // per kernel on one thread). It compiles PTX as a separate compilation
  // unit, where ptxas ignores setmaxnreg (C7504): the warp-specialized
  // kernels then run slower (H200, 2026-12-01, W4A16 g128: 8192^2 M = 64
  // 54.1 -> 44.7 us with ptxas, 4096x14336 M = 64 45.4 -> 38.0, M = 256
  // 88.3 -> 76.3), so those go to ptxas, or to the driver's JIT (whole
  // program too) where there is no ptxas. The mma.sync kernels stay with
  // nvJitLink (8192^2 M = 16: 18.8 us, ptxas 19.8).
  if (auto c = makeNvJitLinkCompiler()) {
    auto whole = makePtxasCompiler();
    return makeRoutedCompiler(std::move(*c),
                              whole ? std::move(*whole) : makeDriverCompiler());
  }
  if (auto c = makePtxasCompiler())
    return c;
  return makeDriverCompiler();
}

Result<std::unique_ptr<KernelCompiler>> selectCompiler() {
  return selectCompiler(std::getenv("HUMMING_COMPILER"));
}

} // namespace humming::rt
