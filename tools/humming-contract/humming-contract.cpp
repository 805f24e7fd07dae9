//===- humming-contract.cpp - the verifier <=> lowering contract ----------===//
//
//   humming-contract [--chips=sm_75,sm_80,sm_86,sm_89,sm_90a] [--n=256]
//                    [--k=512] [--stage=lower|ptx|ptxas] [--ptxas=<path>]
//                    [--shard=<i>/<n>] [--filter=<substring>] [--list]
//                    [--all-compute] [--all-routings]
//
// Every combination of the support matrix — weight type, scale type and
// granularity, zero point, activation type and scaling, output type,
// canonical or prepared weights, humming.gemm or humming.moe_gemm (indexed
// routing), target chip — built as the JIT builds a layer
// (buildLayerModule) under a module whose #humming.target names the chip,
// then verified. What the verifier accepts must compile: `lower` runs the
// pipeline's humming passes (legalize-schema, select-tiles, lower-to-nvvm),
// `ptx` the whole named pipeline to PTX, `ptxas` also assembles that PTX for
// the chip. A combination that verifies and then fails is a contract
// violation, printed with the pipeline's diagnostics; the exit status is 1
// when there is one. --list prints every combination's verdict (refused:
// with the verifier's reason). --shard runs every n-th combination (the
// lit test samples the matrix this way; scripts/contract-matrix.sh runs it
// all in parallel shards).
//
//===----------------------------------------------------------------------===//

#include "ToolVersion.h"
#include "Humming/Dialect/Humming/IR/HummingDialect.h"
#include "Humming/Dialect/Humming/IR/HummingAttrs.h"
#include "Humming/Pipelines/Pipelines.h"
#include "Humming/Quant/Schema.h"
#include "Humming/Registration.h"
#include "Humming/Target/ArchInfo.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"

#include <cstdio>
#include <map>
#include <string>
#include <vector>

using namespace llvm;
namespace hq = ::humming;
namespace mh = mlir::humming;

static cl::OptionCategory category("humming-contract options");
static cl::opt<std::string>
    chipList("chips",
             cl::desc("Comma-separated target chips (each with its "
                      "representative device's facts)"),
             cl::init("sm_75,sm_80,sm_86,sm_89,sm_90a"), cl::cat(category));
static cl::opt<int64_t> layerN("n", cl::desc("The layers' N"), cl::init(256),
                               cl::cat(category));
static cl::opt<int64_t> layerK("k", cl::desc("The layers' K"), cl::init(512),
                               cl::cat(category));
static cl::opt<std::string>
    stage("stage",
          cl::desc("How far an accepted combination must get: lower (the "
                   "humming passes), ptx (the named pipeline) or ptxas (its "
                   "PTX assembled for the chip)"),
          cl::init("ptx"), cl::cat(category));
static cl::opt<std::string>
    ptxasPath("ptxas",
              cl::desc("ptxas for --stage=ptxas (default: PATH, then "
                       "/usr/local/cuda/bin)"),
              cl::init(""), cl::cat(category));
static cl::opt<std::string>
    shard("shard",
          cl::desc("Only combination i, i + n, i + 2n, ... of the matrix"),
          cl::value_desc("i/n"), cl::init(""), cl::cat(category));
static cl::opt<std::string>
    filter("filter", cl::desc("Only combinations whose name contains this"),
           cl::init(""), cl::cat(category));
static cl::opt<bool>
    allCompute("all-compute",
               cl::desc("Also every combination with f16_accumulation and "
                        "with batch_invariant (three times the matrix)"),
               cl::init(false), cl::cat(category));
static cl::opt<bool>
    allRoutings("all-routings",
                cl::desc("humming.moe_gemm with every routing (indexed, "
                         "grouped_contiguous, grouped_masked with counts and "
                         "with all rows), not only indexed"),
                cl::init(false), cl::cat(category));
static cl::opt<bool>
    padding("padding",
            cl::desc("Also every combination with padded weights: pad_n = "
                     "64, and K as activations + pad_k of K - 16 + 16, K - 8 "
                     "+ 8 and K - 64 + 64 (five times the matrix)"),
            cl::init(false), cl::cat(category));
static cl::opt<bool> list("list",
                          cl::desc("Print every combination's verdict"),
                          cl::init(false), cl::cat(category));

namespace {

/// One point of the support matrix.
struct Combination {
  std::string name;
  mh::LayerSpec spec;
  std::string device; ///< the chip's representative (its tiles' facts)
};

/// The chips' representative devices: what their tiles are chosen for.
const char *deviceOf(const std::string &chip) {
  static const std::map<std::string, const char *> devices = {
      {"sm_75", "T4"},   {"sm_80", "A100"},    {"sm_86", "A10"},
      {"sm_89", "L40S"}, {"sm_90", "H100"},    {"sm_90a", "H100"},
      {"sm_100a", "B200"}, {"sm_120a", "RTX 5090"}};
  auto it = devices.find(chip);
  return it == devices.end() ? nullptr : it->second;
}

std::string sanitize(std::string s) {
  for (char &c : s)
    if (!isAlnum(c) && c != '_')
      c = '_';
  return s;
}

/// Every legal weight schema (verifyWeightSchema) and input schema
/// (verifyInputSchema) crossed with outputs, layouts, ops and chips: the
/// op-level rules (verifyCompatibility, padding, the chip) are what the
/// contract is about.
std::vector<Combination> matrix(const std::vector<std::string> &chips) {
  struct Gran {
    hq::Granularity g;
    int64_t k;
  };
  const Gran grans[] = {{hq::Granularity::Channel, 0},
                        {hq::Granularity::Group, 32},
                        {hq::Granularity::Group, 128},
                        {hq::Granularity::GroupTensor, 64},
                        {hq::Granularity::Block, 128},
                        {hq::Granularity::Tensor, 0}};
  const hq::ScalarType scales[] = {
      hq::ScalarType::f16(),  hq::ScalarType::bf16(), hq::ScalarType::e4m3(),
      hq::ScalarType::e5m2(), hq::ScalarType::ue8m0(), hq::ScalarType::f32()};
  std::vector<hq::InputSchema> inputs = {
      {hq::ScalarType::f16(), hq::ActScaling::None, 0},
      {hq::ScalarType::bf16(), hq::ActScaling::None, 0}};
  for (hq::ScalarType t :
       {hq::ScalarType::e4m3(), hq::ScalarType::e5m2(),
        hq::ScalarType::sint(8), hq::ScalarType::sint(4),
        hq::ScalarType::e2m1()})
    for (auto [s, g] : {std::pair{hq::ActScaling::Token, int64_t(0)},
                        {hq::ActScaling::Group, int64_t(32)},
                        {hq::ActScaling::Group, int64_t(128)},
                        {hq::ActScaling::Static, int64_t(0)}}) {
      hq::InputSchema in{t, s, g};
      if (!hq::verifyInputSchema(in))
        inputs.push_back(in);
    }
  std::vector<Combination> out;
  for (const hq::ScalarType &type : hq::allWeightTypes())
    for (const Gran &g : grans)
      for (const hq::ScalarType &sc : scales)
        for (hq::ZeroPointKind zp :
             {hq::ZeroPointKind::None, hq::ZeroPointKind::Int,
              hq::ZeroPointKind::Float}) {
          hq::WeightSchema w = hq::WeightSchema::make(type, sc, g.g, g.k, zp);
          if (g.g == hq::Granularity::Block)
            w.groupN = 128;
          if (hq::verifyWeightSchema(w))
            continue;
          std::string wName = type.str() + "_" + sc.str() + "_" +
                              hq::toString(g.g) +
                              (g.k ? std::to_string(g.k) : "") + "_zp" +
                              hq::toString(zp);
          for (const hq::InputSchema &in : inputs)
           for (int compute = 0; compute < (allCompute ? 3 : 1); ++compute)
            for (hq::ScalarType o : {hq::ScalarType::f16(), hq::ScalarType::bf16()})
              for (int route = 0; route < (allRoutings ? 5 : 2); ++route)
               for (int pad = 0; pad < (padding ? 5 : 1); ++pad)
                for (bool prepared : {false, true})
                  for (const std::string &chip : chips) {
                    Combination c;
                    c.spec.weight = w;
                    c.spec.input = in;
                    c.spec.output = o;
                    c.spec.n = layerN;
                    c.spec.k = layerK;
                    // pad: 0 none; 1 pad_n 64; 2-4 the last 16, 8 or 64
                    // of K as pad_k (the activations' K the rest).
                    static const int64_t padKs[] = {0, 0, 16, 8, 64};
                    c.spec.weight.padN = pad == 1 ? 64 : 0;
                    c.spec.weight.padK = padKs[pad];
                    c.spec.k = layerK - padKs[pad];
                    c.spec.prepared = prepared;
                    c.spec.chip = chip;
                    c.spec.compute.f16Accumulation = compute == 1;
                    c.spec.compute.batchInvariant = compute == 2;
                    // route: 0 gemm; moe_gemm 1 indexed, 2
                    // grouped_contiguous, 3 grouped_masked, 4 the same
                    // over all rows (no counts).
                    const bool moe = route != 0;
                    static const hq::GemmType routings[] = {
                        hq::GemmType::Dense, hq::GemmType::Indexed,
                        hq::GemmType::GroupedContiguous,
                        hq::GemmType::GroupedMasked,
                        hq::GemmType::GroupedMasked};
                    static const char *routeNames[] = {
                        "", "", "_contiguous", "_masked", "_masked_all_rows"};
                    if (moe) {
                      c.spec.weight.experts = 4;
                      c.spec.moeRouting = routings[route];
                      c.spec.topK = 2;
                      c.spec.blockSize =
                          routings[route] == hq::GemmType::Indexed ? 64 : 0;
                      c.spec.allRows = route == 4;
                    }
                    c.device = deviceOf(chip);
                    std::string aName =
                        in.type.str() +
                        (in.scaling == hq::ActScaling::None
                             ? std::string()
                             : "_" + std::string(hq::toString(in.scaling)) +
                                   (in.groupK ? std::to_string(in.groupK)
                                              : ""));
                    c.name = sanitize(std::string(moe ? "moe_gemm" : "gemm") +
                                      (prepared ? "_prepared_" : "_canonical_") +
                                      chip + "_w_" + wName + "_a_" + aName +
                                      "_o_" + o.str() + routeNames[route] +
                                      (pad == 1 ? "_pad_n64"
                                       : pad > 1
                                           ? "_pad_k" + std::to_string(padKs[pad])
                                           : "") +
                                      (compute == 1   ? "_f16acc"
                                       : compute == 2 ? "_batch_invariant"
                                                      : ""));
                    out.push_back(std::move(c));
                  }
        }
  return out;
}

/// The first lines of `text` (diagnostics can be long).
std::string firstLines(const std::string &text, size_t lines = 3) {
  size_t at = 0;
  for (size_t i = 0; i < lines && at != std::string::npos; ++i)
    at = text.find('\n', at == 0 ? 0 : at + 1);
  std::string s = at == std::string::npos ? text : text.substr(0, at);
  while (!s.empty() && (s.back() == '\n' || s.back() == ' '))
    s.pop_back();
  return s;
}

/// ptxas on `ptx` for `chip`: "" when it assembles, else its output.
std::string assemble(const std::string &ptxas, const std::string &ptx,
                     const std::string &chip) {
  SmallString<128> in, out, log;
  if (sys::fs::createTemporaryFile("humming-contract", "ptx", in) ||
      sys::fs::createTemporaryFile("humming-contract", "cubin", out) ||
      sys::fs::createTemporaryFile("humming-contract", "log", log))
    return "cannot create temporary files for ptxas";
  {
    std::error_code ec;
    raw_fd_ostream os(in, ec);
    if (ec)
      return "cannot write " + in.str().str() + ": " + ec.message();
    os << ptx;
  }
  std::string arch = "-arch=" + chip;
  SmallVector<StringRef> args = {ptxas, arch, "-o", out, in};
  std::optional<StringRef> redirects[] = {std::nullopt, StringRef(log),
                                          StringRef(log)};
  std::string err;
  int rc = sys::ExecuteAndWait(ptxas, args, std::nullopt, redirects, 0, 0,
                               &err);
  std::string result;
  if (rc != 0) {
    auto text = MemoryBuffer::getFile(log);
    result = "ptxas " + arch + " exited with " + std::to_string(rc) +
             (err.empty() ? "" : " (" + err + ")") + ": " +
             (text ? firstLines((*text)->getBuffer().str(), 4) : "");
  }
  sys::fs::remove(in);
  sys::fs::remove(out);
  sys::fs::remove(log);
  return result;
}

/// The pipeline's humming passes alone (buildHummingLoweringPasses: the
/// pipeline's own first part, with the options it gives them).
std::string lowerOnly(mlir::ModuleOp module, const std::string &chip,
                      const std::string &device) {
  std::string diagnostics;
  mlir::ScopedDiagnosticHandler handler(
      module.getContext(), [&](mlir::Diagnostic &d) {
        if (d.getSeverity() == mlir::DiagnosticSeverity::Error)
          diagnostics += d.str() + "\n";
        return mlir::success();
      });
  mlir::PassManager pm(module.getContext());
  mh::CompilePipelineOptions options;
  options.chip = chip;
  options.device = device;
  mh::buildHummingLoweringPasses(pm, options);
  if (failed(pm.run(module)))
    return diagnostics.empty() ? "the humming passes failed" : diagnostics;
  return "";
}

} // namespace

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(category);
  humming::tools::installVersionPrinter("humming-contract");
  cl::ParseCommandLineOptions(
      argc, argv,
      "humming-contract: what the verifier accepts compiles, over the "
      "support matrix\n");
  if (stage != "lower" && stage != "ptx" && stage != "ptxas") {
    std::fprintf(stderr,
                 "humming-contract: expected --stage=lower, ptx or ptxas, got "
                 "'%s'\n",
                 stage.c_str());
    return 2;
  }
  std::vector<std::string> chips;
  for (StringRef c : split(StringRef(chipList), ',')) {
    std::string chip = c.trim().str();
    if (!hq::Chip::parse(chip) || !deviceOf(chip)) {
      std::fprintf(stderr,
                   "humming-contract: expected --chips to list chips among "
                   "sm_75, sm_80, sm_86, sm_89, sm_90, sm_90a, sm_100a, "
                   "sm_120a, got '%s'\n",
                   chip.c_str());
      return 2;
    }
    chips.push_back(chip);
  }
  if (layerN <= 0 || layerK <= 0) {
    std::fprintf(stderr, "humming-contract: expected --n and --k > 0, got %lld "
                         "and %lld\n",
                 (long long)layerN, (long long)layerK);
    return 2;
  }
  unsigned shardIndex = 0, shardCount = 1;
  if (!shard.empty()) {
    char tail = 0;
    if (std::sscanf(shard.c_str(), "%u/%u%c", &shardIndex, &shardCount,
                    &tail) != 2 ||
        shardCount == 0 || shardIndex >= shardCount) {
      std::fprintf(stderr,
                   "humming-contract: expected --shard=<i>/<n> with 0 <= i < "
                   "n, got '--shard=%s'\n",
                   shard.c_str());
      return 2;
    }
  }
  std::string ptxas;
  if (stage == "ptxas") {
    if (!ptxasPath.empty()) {
      ptxas = ptxasPath;
    } else if (ErrorOr<std::string> p = sys::findProgramByName("ptxas")) {
      ptxas = *p;
    } else if (ErrorOr<std::string> q = sys::findProgramByName(
                   "ptxas", {"/usr/local/cuda/bin"})) {
      ptxas = *q;
    }
    if (ptxas.empty() || !sys::fs::can_execute(ptxas)) {
      std::fprintf(stderr,
                   "humming-contract: --stage=ptxas needs ptxas (none on "
                   "PATH or in /usr/local/cuda/bin; give --ptxas=<path>)\n");
      return 2;
    }
  }

  mlir::DialectRegistry registry;
  mh::registerHummingDialects(registry);
  mh::registerHummingCodegenExtensions(registry);
  mlir::MLIRContext ctx(registry, mlir::MLIRContext::Threading::DISABLED);
  ctx.loadAllAvailableDialects();
  ctx.printOpOnDiagnostic(false);

  std::vector<Combination> all = matrix(chips);
  int64_t total = 0, refused = 0, passed = 0, violations = 0;
  std::map<std::string, int64_t> reasons;
  for (size_t i = 0; i < all.size(); ++i) {
    if (i % shardCount != shardIndex)
      continue;
    const Combination &c = all[i];
    if (!filter.empty() && c.name.find(filter) == std::string::npos)
      continue;
    ++total;
    // Built and verified as the JIT builds it, then verified again under
    // the chip's #humming.target (what an embedding compiler's module
    // says after humming-attach-target).
    std::string refusal;
    hq::Result<mlir::OwningOpRef<mlir::ModuleOp>> built =
        mh::buildLayerModule(ctx, c.spec);
    if (!built) {
      refusal = built.error();
    } else {
      std::string diagnostics;
      mlir::ScopedDiagnosticHandler handler(&ctx, [&](mlir::Diagnostic &d) {
        if (d.getSeverity() == mlir::DiagnosticSeverity::Error)
          diagnostics += d.str() + "\n";
        return mlir::success();
      });
      auto target = mh::TargetAttr::getKnown(
          [&] { return mlir::emitError(mlir::UnknownLoc::get(&ctx)); }, &ctx,
          c.device, c.spec.chip, 0);
      if (!target) {
        std::fprintf(stderr, "humming-contract: %s: %s\n", c.name.c_str(),
                     diagnostics.c_str());
        return 2;
      }
      (**built)->setAttr(mh::HummingDialect::kTargetAttrName, target);
      if (failed(mlir::verify(**built)))
        refusal = diagnostics.empty() ? "does not verify" : diagnostics;
    }
    if (!refusal.empty()) {
      ++refused;
      // Reasons without the "the layer does not verify: " prefix, counted.
      std::string reason = firstLines(refusal, 1);
      if (size_t at = reason.find(": "); reason.rfind("the layer", 0) == 0)
        reason = reason.substr(at + 2);
      ++reasons[reason];
      if (list)
        std::printf("%s: refused: %s\n", c.name.c_str(), reason.c_str());
      continue;
    }
    std::string failure, where;
    if (stage == "lower") {
      failure = lowerOnly(**built, c.spec.chip, c.device);
      where = "lowering";
    } else {
      hq::Result<std::string> ptx =
          mh::compileToPtx(**built, c.spec.chip, 0, 3, c.device);
      if (!ptx) {
        failure = ptx.error();
        where = "pipeline";
      } else if (stage == "ptxas") {
        failure = assemble(ptxas, *ptx, c.spec.chip);
        where = "ptxas";
      }
    }
    if (!failure.empty()) {
      ++violations;
      std::printf("%s: VIOLATION: verifies, then the %s fails: %s\n",
                  c.name.c_str(), where.c_str(), firstLines(failure).c_str());
      continue;
    }
    ++passed;
    if (list)
      std::printf("%s: ok\n", c.name.c_str());
  }
  if (list) {
    std::printf("refusals by reason:\n");
    for (auto &[reason, count] : reasons)
      std::printf("  %6lld  %s\n", (long long)count, reason.c_str());
  }
  std::printf("humming-contract: %lld combinations: %lld refused by the "
              "verifier, %lld %s, %lld violations\n",
              (long long)total, (long long)refused, (long long)passed,
              stage == "lower"   ? "lowered"
              : stage == "ptx"   ? "compiled to PTX"
                                 : "assembled by ptxas",
              (long long)violations);
  return violations ? 1 : 0;
}
