//===- LayerProbe.cpp - transform()'s first-use probe ---------------------===//
//
// On a chip the GPU suite has not run on, transform() runs each of the
// layer's M-range kernels on random activations beside a reference family
// on the same GPU and keeps them only where they agree (FirstUseProbe.h says
// what is compared with what and what is kept). The reference is a second
// layer over a copy of the canonical weights; a fallback transforms this
// layer again for the reference's target, through the kernel cache (the
// reference compiled the same kernels). Outcomes are remembered by the
// kernels' PTX, per process and in the kernel cache's directory, so each
// distinct layer is probed once per machine.
//
//===----------------------------------------------------------------------===//

#include "Humming/API/FirstUseProbe.h"
#include "Humming/API/Layer.h"
#include "LayerImpl.h"

#include "Humming/Quant/Codec.h"
#include "Humming/Quant/Quantize.h"
#include "Humming/Runtime/KernelCache.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/SHA256.h"

#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>

namespace humming {
namespace {

/// xorshift64: the probe's activations (fixed seed: a probe that fails
/// fails the same way again).
struct Xorshift {
  uint64_t s = 0x9E3779B97F4A7C15ull;
  uint64_t next() {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return s;
  }
};

/// Random activations of `in`'s type for `rows` rows of `kAct` elements
/// (those past `k` zero) and their f32 scales, on the device.
struct ProbeInputs {
  std::optional<rt::DeviceBuffer> codes, scales;
};
Result<ProbeInputs> probeInputs(const rt::CudaDriver &driver,
                                const InputSchema &in, int64_t rows,
                                int64_t k, int64_t kAct) {
  Xorshift rng;
  const int64_t bits = in.type.bits;
  std::vector<uint8_t> codes(size_t(rows * kAct * bits / 8), 0);
  if (bits == 16) {
    // Values in [-1, 1) from a table of 1024 codes.
    uint16_t table[1024];
    for (int i = 0; i < 1024; ++i)
      table[i] = uint16_t(encode(in.type, (i - 512) / 512.0));
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < k; ++c) {
        const uint16_t v = table[rng.next() & 1023];
        const size_t at = size_t(r * kAct + c) * 2;
        codes[at] = uint8_t(v);
        codes[at + 1] = uint8_t(v >> 8);
      }
  } else {
    // Finite codes of magnitude at most ~4 (no NaN or infinity).
    auto code = [&]() -> uint8_t {
      const uint64_t x = rng.next();
      const uint8_t sign = uint8_t((x >> 32) & 1) << 7;
      if (in.type == ScalarType::e4m3())
        return sign | uint8_t((x % 9) << 3) | uint8_t((x >> 8) & 7);
      if (in.type == ScalarType::e5m2())
        return sign | uint8_t((x % 17) << 2) | uint8_t((x >> 8) & 3);
      if (bits == 8)
        return uint8_t(int8_t(int64_t(x % 255) - 127));
      return uint8_t(x & 15); // 4-bit integer codes
    };
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < k; ++c) {
        const int64_t e = r * kAct + c;
        if (bits == 8)
          codes[size_t(e)] = code();
        else
          codes[size_t(e / 2)] |= uint8_t(code() << (4 * (e % 2)));
      }
  }
  ProbeInputs out;
  Result<rt::DeviceBuffer> c =
      rt::DeviceBuffer::copyOf(driver, codes.data(), codes.size());
  if (!c)
    return Error{c.error()};
  out.codes.emplace(c.take());
  int64_t scaleCount = 0;
  switch (in.scaling) {
  case ActScaling::None:
    break;
  case ActScaling::Static:
    scaleCount = 1;
    break;
  case ActScaling::Token:
    scaleCount = rows;
    break;
  case ActScaling::Group:
    scaleCount = rows * ceilDiv(kAct, in.groupK);
    break;
  }
  if (scaleCount) {
    std::vector<float> scales(static_cast<size_t>(scaleCount));
    for (float &s : scales)
      s = float((1 + (rng.next() & 255) / 256.0) / 128);
    Result<rt::DeviceBuffer> b = rt::DeviceBuffer::copyOf(
        driver, scales.data(), scales.size() * sizeof(float));
    if (!b)
      return Error{b.error()};
    out.scales.emplace(b.take());
  }
  return out;
}

/// A MoE layer's routing for `m` activation rows, on the device: each
/// token's top_k experts consecutive ((t top_k + j) mod E, indexed, aligned
/// to `blockSize` as vLLM's moe_align_block_size does), grouped rows split
/// evenly among the experts; router weights in [0.5, 1) where the layer
/// takes them.
struct ProbeRouting {
  std::vector<rt::DeviceBuffer> buffers;
  MoeRouting routing;
  int64_t outRows = 0;
};
Result<ProbeRouting> probeRouting(const rt::CudaDriver &driver,
                                  const MoeOptions &moe, int64_t experts,
                                  int64_t m, int64_t blockSize) {
  ProbeRouting out;
  auto upload = [&](const void *data, size_t bytes) -> Result<uint64_t> {
    Result<rt::DeviceBuffer> b = rt::DeviceBuffer::copyOf(driver, data, bytes);
    if (!b)
      return Error{b.error()};
    out.buffers.push_back(b.take());
    return out.buffers.back().ptr();
  };
  MoeRouting &r = out.routing;
  if (moe.routing == GemmType::Indexed) {
    std::vector<int32_t> ids(size_t(m * moe.topK));
    for (size_t i = 0; i < ids.size(); ++i)
      ids[i] = int32_t(int64_t(i) % experts);
    Result<Routing> aligned =
        alignBlockSize(ids, m, moe.topK, experts, blockSize);
    if (!aligned)
      return Error{aligned.error()};
    // vLLM's capacities: sentinels past num_tokens_padded.
    std::vector<int32_t> sorted = aligned->sortedIds;
    sorted.resize(
        size_t(std::max<int64_t>(m * moe.topK + experts * (blockSize - 1),
                                 int64_t(sorted.size()))),
        int32_t(m * moe.topK));
    std::vector<int32_t> blocks = aligned->expertIds;
    blocks.resize(size_t(ceilDiv(int64_t(sorted.size()), blockSize)), 0);
    const int32_t padded = aligned->numTokensPadded;
    Result<uint64_t> a = upload(sorted.data(), sorted.size() * 4);
    Result<uint64_t> b = upload(blocks.data(), blocks.size() * 4);
    Result<uint64_t> c = upload(&padded, 4);
    if (!a || !b || !c)
      return Error{!a ? a.error() : !b ? b.error() : c.error()};
    r.sortedIds = *a;
    r.expertIds = *b;
    r.numTokensPadded = *c;
    r.sortedLength = int64_t(sorted.size());
    r.blockSize = blockSize;
    out.outRows = m * moe.topK;
  } else {
    out.outRows = m;
    if (!moe.allRows) {
      std::vector<int32_t> layout;
      if (moe.routing == GemmType::GroupedContiguous)
        for (int64_t e = 0; e <= experts; ++e)
          layout.push_back(int32_t(e * m / experts));
      else
        layout.assign(size_t(experts), int32_t(m / experts));
      Result<uint64_t> a = upload(layout.data(), layout.size() * 4);
      if (!a)
        return Error{a.error()};
      r.expertLayout = *a;
    }
  }
  if (moe.routerWeights) {
    Xorshift rng;
    std::vector<float> w(size_t(out.outRows));
    for (float &v : w)
      v = float(0.5 + (rng.next() & 1023) / 2048.0);
    Result<uint64_t> a = upload(w.data(), w.size() * 4);
    if (!a)
      return Error{a.error()};
    r.routerWeights = *a;
  }
  return out;
}

/// The decisions made in this process, by key.
using probe::Decision;
using probe::Kept;
std::mutex &memoMutex() {
  static std::mutex m;
  return m;
}
std::map<std::string, Decision> &memo() {
  static std::map<std::string, Decision> m;
  return m;
}

std::string listRows(const std::vector<int64_t> &rows) {
  std::string s;
  for (int64_t m : rows)
    s += (s.empty() ? "" : ", ") + std::to_string(m);
  return s;
}
} // namespace

namespace {
/// Runs layers on the probe's activations (one set for every layer, rows
/// enough for the largest probe M) into one output poisoned with NaN before
/// each run, and compares their outputs at every probe M. `launch` runs a
/// dense layer's kernels on codes (Layer::launch: no gathering, no
/// quantization); MoE layers run through forwardMoe over a routing of
/// their own block size.
class ProbeBench {
public:
  using Launch =
      std::function<Status(const Layer &, uint64_t input, uint64_t scales,
                           uint64_t output, int64_t m)>;
  /// Whether two layers agree at every probe M: the largest difference and
  /// the M where they did not.
  struct Comparison {
    bool agrees = true;
    double worst = 0;
    int64_t nonFinite = 0;
    std::vector<int64_t> failedRows;
  };

  static Result<ProbeBench> create(const rt::CudaDriver &driver,
                                   const InputSchema &in, ScalarType output,
                                   int64_t n, int64_t k, int64_t kAct,
                                   const std::optional<MoeOptions> &moe,
                                   int64_t experts, std::vector<int64_t> rows,
                                   double tolerance, Launch launch) {
    const int64_t topK =
        moe && moe->routing == GemmType::Indexed ? moe->topK : 1;
    Result<ProbeInputs> inputs = probeInputs(driver, in, rows.back(), k, kAct);
    if (!inputs)
      return Error{
          concat("the first-use probe's activations: ", inputs.error())};
    Result<rt::DeviceBuffer> out =
        rt::DeviceBuffer::allocate(driver, size_t(rows.back() * topK * n * 2));
    if (!out)
      return Error{concat("the first-use probe's output: ", out.error())};
    ProbeBench b(driver, inputs.take(), out.take());
    b.moe_ = moe;
    b.experts_ = experts;
    b.n_ = n;
    b.rows_ = std::move(rows);
    b.tolerance_ = tolerance;
    b.launch_ = std::move(launch);
    b.decoded_.resize(65536);
    for (uint32_t c = 0; c < 65536; ++c)
      b.decoded_[c] = decode(output, c);
    return b;
  }

  const std::vector<int64_t> &rows() const { return rows_; }

  /// `a` (its output taken as zero with `zeroA`) against `b`.
  Result<Comparison> compare(const Layer &a, bool zeroA, const Layer &b) {
    Comparison c;
    for (int64_t m : rows_) {
      Result<std::vector<double>> va = outputOf(a, m, zeroA);
      if (!va)
        return Error{concat("the first-use probe: ", va.error())};
      Result<std::vector<double>> vb = outputOf(b, m, false);
      if (!vb)
        return Error{concat("the first-use probe: ", vb.error())};
      probe::Agreement g = probe::compare(*va, *vb, tolerance_);
      c.worst = std::max(c.worst, g.relError);
      c.nonFinite += g.nonFinite;
      if (!g.agrees) {
        c.agrees = false;
        c.failedRows.push_back(m);
      }
    }
    return c;
  }

  static std::string describe(const Comparison &c) {
    std::string s = concat("relative difference ", c.worst);
    if (c.nonFinite)
      s +=
          concat(", ", c.nonFinite, " outputs finite in one and not the other");
    return s;
  }

private:
  ProbeBench(const rt::CudaDriver &driver, ProbeInputs inputs,
             rt::DeviceBuffer out)
      : driver_(&driver), inputs_(std::move(inputs)) {
    out_.emplace(std::move(out));
  }

  /// `layer`'s output for `m` rows.
  Result<std::vector<double>> outputOf(const Layer &layer, int64_t m,
                                       bool zeroed) {
    if (Status s = out_->fill(0xFF); !s)
      return Error{s.error()};
    const uint64_t scales = inputs_.scales ? inputs_.scales->ptr() : 0;
    int64_t outRows = m;
    // (A MoE layer's routing, for its own block size at m — the
    // reference's may differ —, lives until the kernels are waited for.)
    std::optional<ProbeRouting> routing;
    if (moe_) {
      Result<ProbeRouting> r =
          probeRouting(*driver_, *moe_, experts_, m,
                       std::max<int64_t>(16, layer.moeBlockSize(m)));
      if (!r)
        return Error{r.error()};
      routing.emplace(r.take());
      outRows = routing->outRows;
      if (Status s = layer.forwardMoe(nullptr, inputs_.codes->ptr(),
                                      out_->ptr(), m, routing->routing, scales);
          !s)
        return Error{s.error()};
    } else if (Status s =
                   launch_(layer, inputs_.codes->ptr(), scales, out_->ptr(), m);
               !s)
      return Error{s.error()};
    if (Status s =
            driver_->check(driver_->cuCtxSynchronize(), "cuCtxSynchronize");
        !s)
      return Error{s.error()};
    std::vector<uint16_t> raw(size_t(outRows * n_));
    if (Status s = out_->download(raw.data(), raw.size() * 2); !s)
      return Error{s.error()};
    std::vector<double> v(raw.size());
    for (size_t i = 0; i < raw.size(); ++i)
      v[i] = zeroed ? 0.0 : decoded_[raw[i]];
    return v;
  }

  const rt::CudaDriver *driver_;
  std::optional<MoeOptions> moe_;
  int64_t experts_ = 0, n_ = 0;
  std::vector<int64_t> rows_;
  double tolerance_ = 0;
  Launch launch_;
  ProbeInputs inputs_;
  std::optional<rt::DeviceBuffer> out_;
  std::vector<double> decoded_;
};

/// A probe's target for reference `r`: `target`'s, with the reference's
/// chip and layout, the heuristics' tiles and no probe of its own; a
/// reference (`reference`) quantizes no activations (the probe gives it
/// codes).
LayerTarget probeTarget(const LayerTarget &target, const probe::Reference &r,
                        bool reference) {
  LayerTarget t = target;
  t.chip = r.chip;
  t.canonicalLayout = r.canonical;
  t.tileConfig.clear();
  t.probe = FirstUseProbe::Never;
  if (reference)
    t.activationRows = 0;
  return t;
}
} // namespace

Result<Layer> Layer::sameWeights() const {
  const Impl &l = *impl_;
  if (!l.canonical)
    return Error{"the layer has no canonical weights (a bug)"};
  auto impl = std::make_unique<Impl>();
  impl->n = l.n;
  impl->k = l.k;
  impl->kAct = l.kAct;
  impl->weight = l.weight;
  impl->input = l.input;
  impl->compute = l.compute;
  impl->output = l.output;
  impl->canonical = *l.canonical;
  impl->inputPermutation = l.inputPermutation;
  impl->moe = l.moe;
  return Layer(std::move(impl));
}

Status Layer::probeKernels(const LayerTarget &target) {
  Impl &l = *impl_;
  std::optional<Chip> chip = Chip::parse(l.chip);
  if (!chip)
    return Error{concat("the layer's chip '", l.chip, "' does not parse (a bug)")};
  Result<probe::Policy> policy =
      probe::policy(target.probe, std::getenv("HUMMING_PROBE"), *chip);
  if (!policy)
    return Error{policy.error()};
  if (!policy->run) {
    l.stats.probe = policy->why;
    return Status::success();
  }
  Result<probe::Reference> ref =
      probe::reference(*chip, l.prepared, bool(l.moe), l.input);
  if (!ref) {
    l.stats.probe = ref.error();
    rt::logInfo(concat("first-use probe on ", l.chip, ": ", ref.error()));
    return Status::success();
  }
  // Once for the same kernels against the same reference: per process, and
  // across processes through the kernel cache's directory (HUMMING_PROBE=
  // mismatch never reads or writes it: its verdict is made up).
  const std::string key = llvm::toHex(
      llvm::SHA256::hash(llvm::arrayRefFromStringRef(concat(
          "humming first-use probe ", rt::hummingVersion(), "\n", l.chip, "\n",
          ref->describe(), "\n", policy->forceMismatch, "\n", l.ptx))),
      /*LowerCase=*/true);
  const std::string &dir = detail::jit().cache->directory();
  std::optional<Decision> known;
  {
    std::lock_guard<std::mutex> lock(memoMutex());
    auto it = memo().find(key);
    if (it != memo().end()) {
      known = it->second;
      known->text += " (probed before in this process)";
    }
  }
  if (!known && !policy->forceMismatch)
    if ((known = probe::readDecision(dir, key))) {
      std::lock_guard<std::mutex> lock(memoMutex());
      memo()[key] = *known;
      known->text += " (probed before: the kernel cache's record)";
    }
  if (known)
    return applyProbeDecision(target, *ref, *known);
  Result<Decision> made = probeDecision(target, *ref, policy->forceMismatch);
  if (!made)
    return Error{made.error()};
  if (!made->probed) {
    l.stats.probe = made->text;
    rt::logInfo(concat("first-use probe on ", l.chip, ": ", made->text));
    return Status::success();
  }
  {
    std::lock_guard<std::mutex> lock(memoMutex());
    memo()[key] = *made;
  }
  if (!policy->forceMismatch)
    probe::writeDecision(dir, key, *made);
  return applyProbeDecision(target, *ref, *made);
}

Status Layer::applyProbeDecision(const LayerTarget &target,
                                 const probe::Reference &ref,
                                 const probe::Decision &d) {
  Impl &l = *impl_;
  if (d.kept != Kept::Own) {
    const TransformStats before = l.stats;
    const probe::Reference to =
        d.kept == Kept::Plain ? *probe::plainTarget(*Chip::parse(l.chip)) : ref;
    if (Status s = transformKernels(probeTarget(target, to, false)); !s)
      return Error{
          concat(d.text, "; transforming the layer for it: ", s.error())};
    // The work of both transforms.
    l.stats.compiled += before.compiled;
    l.stats.cached += before.cached;
    l.stats.kernelSeconds += before.kernelSeconds;
    l.stats.weightSeconds += before.weightSeconds;
    std::fprintf(stderr, "humming: warning: %s\n", d.text.c_str());
  }
  l.stats.probe = d.text;
  return Status::success();
}

Result<probe::Decision> Layer::probeDecision(const LayerTarget &target,
                                             const probe::Reference &ref,
                                             bool forceMismatch) {
  Impl &l = *impl_;
  // The reference layer over the canonical tensors (brought from the device
  // where a device quantization left them).
  if (Status s = l.canonicalToHost(); !s)
    return Error{concat("the first-use probe: bringing the canonical "
                        "tensors from the device: ",
                        s.error())};
  Result<Layer> reference = sameWeights();
  if (!reference)
    return Error{reference.error()};
  if (Status s = reference->transformKernels(probeTarget(target, ref, true));
      !s)
    return Decision{Kept::Own,
                    concat("not probed: ", ref.describe(),
                           " could not be made: ", s.error()),
                    /*probed=*/false};
  // Each probe M within the probe's bytes (activations, outputs).
  const int64_t topK =
      l.moe && l.moe->routing == GemmType::Indexed ? l.moe->topK : 1;
  std::vector<int64_t> rows, tooLarge;
  for (int64_t m : probe::rows(l.kernels))
    (m * l.kAct * int64_t(l.input.type.bits) / 8 + m * topK * l.n * 2 <=
             probe::kMaxBytes
         ? rows
         : tooLarge)
        .push_back(m);
  if (rows.empty())
    return Decision{Kept::Own,
                    concat("not probed: every kernel's probe is larger than ",
                           probe::kMaxBytes, " bytes"),
                    /*probed=*/false};
  Result<ProbeBench> bench = ProbeBench::create(
      *l.driver, l.input, l.output, l.n, l.k, l.kAct, l.moe, l.weight.experts,
      rows, probe::tolerance(l.output, l.compute.f16Accumulation),
      [](const Layer &layer, uint64_t in, uint64_t scales, uint64_t out,
         int64_t m) { return layer.launch(nullptr, in, scales, out, m); });
  if (!bench)
    return Error{bench.error()};
  const std::string where =
      concat("on ", l.chip, " at M = ", listRows(rows),
             tooLarge.empty() ? std::string()
                              : concat(" (not at M = ", listRows(tooLarge),
                                       ": larger than the probe's ",
                                       probe::kMaxBytes, " bytes)"),
             forceMismatch
                 ? " (HUMMING_PROBE=mismatch: the layer's output taken as zero)"
                 : "");
  Result<ProbeBench::Comparison> own =
      bench->compare(*this, forceMismatch, *reference);
  if (!own)
    return Error{own.error()};
  if (own->agrees)
    return Decision{Kept::Own,
                    concat("the layer's kernels agree with ", ref.describe(),
                           " ", where, " (", ProbeBench::describe(*own), ")")};
  // Which of the layer's kernels disagreed, at which M.
  std::string failed;
  for (int64_t m : own->failedRows) {
    const abi::KernelLaunch *kl =
        l.moe ? abi::moeKernelFor(l.kernels, m) : abi::kernelFor(l.kernels, m);
    failed += concat(failed.empty() ? "" : ", ",
                     kl ? kl->name : std::string("?"), " (M = ", m, ")");
  }
  const std::string disagreement =
      concat("the layer's kernels disagree with ", ref.describe(), " ", where,
             ": ", failed, "; ", ProbeBench::describe(*own));
  // 8- and 4-bit activations, MoE: the reference is the plain target's.
  if (!ref.canonical)
    return Decision{Kept::Reference, concat(disagreement, "; the layer runs ",
                                            ref.describe(), " instead")};
  const std::optional<probe::Reference> plain =
      probe::plainTarget(*Chip::parse(l.chip));
  if (!plain)
    return Decision{
        Kept::Reference,
        concat(disagreement, "; the layer runs the canonical kernel instead")};
  // A second opinion: the plain target's prepared kernels.
  Result<Layer> second = sameWeights();
  if (!second)
    return Error{second.error()};
  if (Status s = second->transformKernels(probeTarget(target, *plain, true));
      !s)
    return Decision{Kept::Reference,
                    concat(disagreement, "; ", plain->describe(),
                           " could not be made (", s.error(),
                           "): the layer runs the canonical kernel instead")};
  Result<ProbeBench::Comparison> plainVsCanonical =
      bench->compare(*second, false, *reference);
  if (!plainVsCanonical)
    return Error{plainVsCanonical.error()};
  if (plainVsCanonical->agrees)
    return Decision{Kept::Plain, concat(disagreement, "; ", plain->describe(),
                                        " agree with it (",
                                        ProbeBench::describe(*plainVsCanonical),
                                        "): the layer runs those instead")};
  Result<ProbeBench::Comparison> ownVsPlain =
      bench->compare(*this, forceMismatch, *second);
  if (!ownVsPlain)
    return Error{ownVsPlain.error()};
  if (ownVsPlain->agrees)
    return Decision{Kept::Own,
                    concat(disagreement, "; ", plain->describe(),
                           " agree with the layer's (",
                           ProbeBench::describe(*ownVsPlain),
                           "): the canonical kernel is the one that failed, "
                           "the layer keeps its kernels")};
  return Error{
      concat(disagreement, "; ", plain->describe(), " agree with neither (",
             ProbeBench::describe(*plainVsCanonical),
             " from the canonical kernel, ", ProbeBench::describe(*ownVsPlain),
             " from the layer's): no two kernel families agree on "
             "this GPU, so the layer refuses to run")};
}

} // namespace humming
