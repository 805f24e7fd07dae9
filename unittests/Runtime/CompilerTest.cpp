//===- CompilerTest.cpp - ptxas, nvJitLink and the driver JIT -------------===//
//
// Compiles a small kernel with each compiler present on this machine (the
// CUDA toolkit needs no GPU) and checks the errors of bad input.
//
//===----------------------------------------------------------------------===//

#include "Humming/Runtime/Compiler.h"

#include <gtest/gtest.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace humming;
using namespace humming::rt;

namespace {
const char *kPtx = R"(.version 8.0
.target sm_80
.address_size 64
.visible .entry add_one(.param .u64 p) {
  .reg .b64 %rd<3>;
  .reg .b32 %r<3>;
  ld.param.u64 %rd1, [p];
  cvta.to.global.u64 %rd2, %rd1;
  ld.global.u32 %r1, [%rd2];
  add.s32 %r2, %r1, 1;
  st.global.u32 [%rd2], %r2;
  ret;
}
)";

void expectCompiles(const KernelCompiler &c) {
  Result<CompiledKernel> k = c.compile(kPtx, "sm_80");
  ASSERT_TRUE(k.ok()) << c.name() << ": " << k.error();
  ASSERT_GE(k->image.size(), 4u);
  EXPECT_EQ(k->image.substr(0, 4), std::string("\x7f" "ELF", 4)) << c.name();
  EXPECT_FALSE(k->isPtx);
  EXPECT_NE(k->command.find("sm_80"), std::string::npos) << k->command;
  EXPECT_FALSE(c.version().empty());
  // Bad PTX: the error carries the compiler's message.
  Result<CompiledKernel> bad = c.compile(".version 8.0\n.target sm_80\nnonsense;\n",
                                         "sm_80");
  ASSERT_FALSE(bad.ok()) << c.name();
  EXPECT_NE(bad.error().find(c.name() == "ptxas" ? "ptxas failed"
                                                 : "nvJitLink failed"),
            std::string::npos)
      << bad.error();
}
} // namespace

TEST(Compiler, Ptxas) {
  Result<std::unique_ptr<KernelCompiler>> c = makePtxasCompiler();
  if (!c.ok())
    GTEST_SKIP() << c.error();
  EXPECT_EQ((*c)->name(), "ptxas");
  EXPECT_EQ((*c)->version().rfind("ptxas ", 0), 0u) << (*c)->version();
  expectCompiles(**c);
}

TEST(Compiler, APtxasThatWritesNoCubinIsAnError) {
  // A "ptxas" that succeeds without output, and one that writes something
  // other than an ELF image: both are errors, never a kernel.
  char dir[] = "/tmp/humming-fake-ptxas-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  const std::pair<const char *, const char *> fakes[] = {
      {"silent", "#!/bin/sh\nexit 0\n"},
      // (`--version`, which makePtxasCompiler asks first, writes nothing.)
      {"garbage", "#!/bin/sh\n[ \"$1\" = --version ] && exit 0\n"
                  "for a; do out=$a; done\n"
                  "printf 'not a cubin' > \"$out\"\nexit 0\n"}};
  for (auto [name, script] : fakes) {
    std::string path = std::string(dir) + "/" + name;
    {
      std::ofstream f(path);
      f << script;
    }
    ::chmod(path.c_str(), 0755);
    Result<std::unique_ptr<KernelCompiler>> c = makePtxasCompiler(path);
    ASSERT_TRUE(c.ok()) << c.error();
    Result<CompiledKernel> k = (*c)->compile(kPtx, "sm_80");
    ASSERT_FALSE(k.ok()) << name;
    EXPECT_EQ(k.error(), std::string("ptxas produced no cubin for sm_80 (") +
                             (std::string(name) == "silent" ? "0" : "11") +
                             " bytes)")
        << name;
  }
  std::system((std::string("rm -rf ") + dir).c_str());
}

TEST(Compiler, APtxInputThatCannotBeWrittenIsAnError) {
  // ptxas reads the PTX from a temporary file: where it cannot be written
  // (a full disk; here a file size limit of 0, in a child process) the
  // error names the file and the reason, never a crash or a kernel.
  Result<std::unique_ptr<KernelCompiler>> c = makePtxasCompiler();
  if (!c.ok())
    GTEST_SKIP() << c.error();
  auto compileWithoutSpace = [&] {
    // (The soft limit only, lifted again before the message is written:
    // the death test's stderr goes to a file.)
    std::signal(SIGXFSZ, SIG_IGN);
    struct rlimit limit;
    ::getrlimit(RLIMIT_FSIZE, &limit);
    const rlim_t was = limit.rlim_cur;
    limit.rlim_cur = 0;
    ::setrlimit(RLIMIT_FSIZE, &limit);
    Result<CompiledKernel> k = (*c)->compile(kPtx, "sm_80");
    limit.rlim_cur = was;
    ::setrlimit(RLIMIT_FSIZE, &limit);
    std::fprintf(stderr, "%s\n", k.ok() ? "compiled" : k.error().c_str());
    std::exit(k.ok() ? 1 : 0);
  };
  EXPECT_EXIT(compileWithoutSpace(), ::testing::ExitedWithCode(0),
      "ptxas: cannot write .*/in.ptx \\(File too large\\): ptxas reads the "
      "PTX from a temporary file; check the space in TMPDIR");
}

TEST(Compiler, NvJitLink) {
  Result<std::unique_ptr<KernelCompiler>> c = makeNvJitLinkCompiler();
  if (!c.ok())
    GTEST_SKIP() << c.error();
  EXPECT_EQ((*c)->name(), "nvjitlink");
  expectCompiles(**c);
}

// A kernel that hands registers over with setmaxnreg, as the
// warp-specialized ones do.
const char *kSetmaxnregPtx = R"(.version 8.0
.target sm_90a
.address_size 64
.visible .entry ws() .maxntid 384, 1, 1 .maxnreg 168 {
  setmaxnreg.inc.sync.aligned.u32 224;
  ret;
}
)";

// Records what it was asked to compile.
class Fake : public KernelCompiler {
public:
  explicit Fake(std::string name) : name_(std::move(name)) {}
  std::string name() const override { return name_; }
  std::string version() const override { return name_ + " 1.0"; }
  Result<CompiledKernel> compile(const std::string &ptx,
                                 const std::string &chip) const override {
    CompiledKernel k;
    k.image = ptx;
    k.command = name_ + " " + chip;
    return k;
  }

private:
  std::string name_;
};

TEST(Compiler, RoutedSendsSetmaxnregKernelsToTheWholeProgramCompiler) {
  EXPECT_TRUE(needsWholeProgram(kSetmaxnregPtx));
  EXPECT_FALSE(needsWholeProgram(kPtx));
  std::unique_ptr<KernelCompiler> c = makeRoutedCompiler(
      std::make_unique<Fake>("separate"), std::make_unique<Fake>("whole"));
  EXPECT_EQ(c->name(), "separate+whole");
  // Both versions go into every cache key.
  EXPECT_EQ(c->version(), "separate 1.0 / whole 1.0");
  Result<CompiledKernel> plain = c->compile(kPtx, "sm_80");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->command, "separate sm_80");
  Result<CompiledKernel> ws = c->compile(kSetmaxnregPtx, "sm_90a");
  ASSERT_TRUE(ws.ok());
  EXPECT_EQ(ws->command, "whole sm_90a");
}

// The reason for the routing, on the real compilers: nvJitLink ignores
// setmaxnreg (C7504), ptxas keeps it; the default compiler takes ptxas
// for such a kernel.
TEST(Compiler, NvJitLinkIgnoresSetmaxnregAndTheDefaultAvoidsIt) {
  Result<std::unique_ptr<KernelCompiler>> nvj = makeNvJitLinkCompiler();
  Result<std::unique_ptr<KernelCompiler>> ptxas = makePtxasCompiler();
  if (!nvj.ok() || !ptxas.ok())
    GTEST_SKIP() << "needs nvJitLink and ptxas";
  auto reports = [](const KernelCompiler &c) {
    Result<CompiledKernel> k = c.compile(kSetmaxnregPtx, "sm_90a");
    EXPECT_TRUE(k.ok()) << c.name() << ": " << (k.ok() ? "" : k.error());
    std::string all;
    if (k.ok())
      for (const std::string &line : performanceReports(k->log))
        all += line + "\n";
    return all;
  };
  EXPECT_NE(reports(**nvj).find("C7504"), std::string::npos);
  EXPECT_EQ(reports(**ptxas), "");
  Result<std::unique_ptr<KernelCompiler>> def = selectCompiler("");
  ASSERT_TRUE(def.ok());
  EXPECT_EQ((*def)->name(), "nvjitlink+ptxas");
  EXPECT_EQ(reports(**def), "");
  Result<CompiledKernel> plain = (*def)->compile(kPtx, "sm_80");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->command.rfind("nvJitLink", 0), 0u) << plain->command;
}

TEST(Compiler, DriverJitPassesThePtxThrough) {
  std::unique_ptr<KernelCompiler> c = makeDriverCompiler();
  Result<CompiledKernel> k = c->compile(kPtx, "sm_80");
  ASSERT_TRUE(k.ok());
  EXPECT_TRUE(k->isPtx);
  EXPECT_EQ(k->image, kPtx);
}

TEST(Compiler, Selection) {
  Result<std::unique_ptr<KernelCompiler>> c = selectCompiler("driver");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ((*c)->name(), "driver");
  Result<std::unique_ptr<KernelCompiler>> bad = selectCompiler("nvcc");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error(),
            "expected HUMMING_COMPILER to be ptxas, nvjitlink or driver, got 'nvcc'");
  // The default is the best one present: never an error (the driver JIT
  // is always there).
  EXPECT_TRUE(selectCompiler("").ok());
  Result<std::unique_ptr<KernelCompiler>> missing =
      makePtxasCompiler("/nonexistent/ptxas");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error(), "no ptxas: '/nonexistent/ptxas' is not an executable");
}
