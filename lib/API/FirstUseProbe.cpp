//===- FirstUseProbe.cpp - What the first-use probe compares --------------===//
//
// The decisions of the first-use probe (FirstUseProbe.h), without a GPU.
//
//===----------------------------------------------------------------------===//

#include "Humming/API/FirstUseProbe.h"
#include "Humming/Quant/Result.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>

namespace humming::probe {

Result<Policy> policy(FirstUseProbe asked, const char *env, const Chip &chip) {
  if (Status s = checkEnvironment(env); !s)
    return Error{s.error()};
  Policy p;
  if (env && *env) {
    // (mismatch: always, with the layer's output taken as zero.)
    p.forceMismatch = std::strcmp(env, "mismatch") == 0;
    asked = std::strcmp(env, "auto") == 0    ? FirstUseProbe::Auto
            : std::strcmp(env, "never") == 0 ? FirstUseProbe::Never
                                             : FirstUseProbe::Always;
  }
  switch (asked) {
  case FirstUseProbe::Never:
    p.why = "not probed: turned off";
    return p;
  case FirstUseProbe::Always:
    p.run = true;
    return p;
  case FirstUseProbe::Auto:
    break;
  }
  p.run = !chip.ranOnHardware();
  if (!p.run)
    p.why = concat("not probed: the GPU suite has run on sm_", chip.sm);
  return p;
}

Status checkEnvironment(const char *env) {
  if (!env || !*env)
    return Status::success();
  for (const char *known : {"auto", "always", "never", "mismatch"})
    if (std::strcmp(env, known) == 0)
      return Status::success();
  return Error{concat("expected HUMMING_PROBE to be auto, always, never or "
                      "mismatch, got '",
                      env, "'")};
}

std::string Reference::describe() const {
  return canonical ? "the canonical kernel"
                   : concat(chip, "'s mma_sync kernels");
}

std::optional<Reference> plainTarget(const Chip &chip) {
  if (chip.suffix == 0)
    return std::nullopt;
  Reference r;
  r.chip = chip.plain().str();
  return r;
}

Result<Reference> reference(const Chip &chip, bool prepared, bool moe,
                            const InputSchema &in) {
  if (in.type.bits == 16 && !moe) {
    if (!prepared)
      return Error{"not probed: the layer runs the canonical kernel, the "
                   "reference itself"};
    Reference r;
    r.canonical = true;
    r.chip = chip.str();
    return r;
  }
  // 8- and 4-bit activations and MoE layers have no canonical kernel.
  if (std::optional<Reference> r = plainTarget(chip))
    return *r;
  return Error{concat("not probed: ",
                      moe ? std::string("a MoE layer has")
                          : concat(in.type.str(), " activations have"),
                      " no canonical kernel, and ", chip.str(),
                      " no plain target with other kernels")};
}

std::vector<int64_t> rows(const std::vector<abi::KernelLaunch> &kernels) {
  std::vector<int64_t> out;
  for (const abi::KernelLaunch &kl : kernels) {
    const int64_t lo = std::max<int64_t>(1, kl.mMin);
    int64_t m = lo + 5;
    if (kl.mMax > 0)
      m = std::min(m, kl.mMax);
    // MoE: rows per expert to activation rows (indexed: the most tokens
    // whose ids give at most that many per expert, which is then exactly
    // that many as top_k <= E).
    if (kl.routing == abi::kRoutingIndexed)
      m = std::max<int64_t>(1, m * kl.experts / std::max<int64_t>(kl.topK, 1));
    else if (kl.routing != abi::kRoutingDense)
      m *= std::max<int64_t>(kl.experts, 1);
    out.push_back(m);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

Agreement compare(const std::vector<double> &got,
                  const std::vector<double> &want, double tolerance) {
  Agreement a;
  double diff = 0, norm = 0;
  const size_t n = std::min(got.size(), want.size());
  for (size_t i = 0; i < n; ++i) {
    const bool gf = std::isfinite(got[i]), wf = std::isfinite(want[i]);
    if (gf != wf) {
      ++a.nonFinite;
      continue;
    }
    if (!gf)
      continue;
    const double d = got[i] - want[i];
    diff += d * d;
    norm += want[i] * want[i];
  }
  a.nonFinite += int64_t(std::max(got.size(), want.size()) - n);
  a.relError = norm > 0 ? std::sqrt(diff / norm) : (diff > 0 ? INFINITY : 0);
  a.agrees = a.nonFinite == 0 && a.relError <= tolerance;
  return a;
}

double tolerance(const ScalarType &output, bool f16Accumulation) {
  return output == ScalarType::bf16() || f16Accumulation ? 3e-2 : 1e-2;
}

namespace {
std::string decisionPath(const std::string &dir, const std::string &key) {
  return concat(dir, "/probe-", key, ".txt");
}
const char *kindName(Kept k) {
  switch (k) {
  case Kept::Own:
    return "own";
  case Kept::Plain:
    return "plain";
  case Kept::Reference:
    return "reference";
  }
  return "own";
}
} // namespace

std::optional<Decision> readDecision(const std::string &dir,
                                     const std::string &key) {
  if (dir.empty())
    return std::nullopt;
  std::ifstream in(decisionPath(dir, key));
  std::string kind, text;
  if (!std::getline(in, kind) || !std::getline(in, text) || text.empty())
    return std::nullopt;
  for (Kept k : {Kept::Own, Kept::Plain, Kept::Reference})
    if (kind == kindName(k))
      return Decision{k, text};
  return std::nullopt;
}

void writeDecision(const std::string &dir, const std::string &key,
                   const Decision &d) {
  if (dir.empty())
    return;
  const std::string path = decisionPath(dir, key);
  const std::string tmp = concat(path, ".", ::getpid(), ".tmp");
  {
    std::ofstream out(tmp);
    // (One line of text: a compiler's message may hold several.)
    std::string text = d.text;
    std::replace(text.begin(), text.end(), '\n', ' ');
    out << kindName(d.kept) << "\n" << text << "\n";
    if (!out) {
      std::remove(tmp.c_str());
      return;
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0)
    std::remove(tmp.c_str());
}

} // namespace humming::probe
