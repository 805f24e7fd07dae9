//===- QuantizeCases.cpp - humming.quantize of activations on a GPU -------===//
//
// The activation quantization kernel (humming.quantize with an input
// schema) against the host reference, humming::quantizeActivations: the
// codes and scales must match bit for bit. Each case goes through
// humming::ActivationQuantizer (the op as IR, the pipeline, the compiler and
// the kernel cache the layers use; its kernel table entry must say quantize)
// and runs on fresh random
// activations with a row of zeros, a NaN, a huge and a tiny value planted,
// into poisoned outputs; and times the big cases (one launch, after a
// warm-up).
//
//===----------------------------------------------------------------------===//

#include "QuantizeCases.h"
#include "GpuCommon.h"

#include "Humming/API/ActivationQuantizer.h"
#include "Humming/Quant/Codec.h"
#include "Humming/Quant/Quantize.h"
#include "Humming/Quant/Tensor.h"
#include "Humming/Target/KernelABI.h"


#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>

using namespace humming;

namespace {

struct QuantizeCase {
  std::string name;
  InputSchema input;
  DType source = DType::F16;
  int64_t k = 0;
  std::vector<int64_t> ms;
};

const char *mlirType(DType d) {
  return d == DType::F32 ? "f32" : d == DType::BF16 ? "bf16" : "f16";
}
std::vector<QuantizeCase> quantizeCases(bool quick) {
  std::vector<QuantizeCase> out;
  const std::vector<int64_t> ms =
      quick ? std::vector<int64_t>{1, 7, 33}
            : std::vector<int64_t>{1, 7, 33, 300, 4096};
  struct Kind {
    const char *name;
    ScalarType type;
  };
  const Kind kinds[] = {{"e4m3", ScalarType::e4m3()},
                        {"e5m2", ScalarType::e5m2()},
                        {"s8", ScalarType::sint(8)},
                        {"s4", ScalarType::sint(4)},
                        {"e2m1", ScalarType::e2m1()}};
  for (const Kind &kind : kinds) {
    auto add = [&](const std::string &scaling, ActScaling s, int64_t g,
                   DType src, int64_t k) {
      QuantizeCase c;
      c.name = std::string("quantize_") + kind.name + "_" + scaling + "_" +
               mlirType(src) + "_k" + std::to_string(k);
      c.input = InputSchema{kind.type, s, g};
      c.source = src;
      c.k = k;
      c.ms = ms;
      out.push_back(c);
    };
    add("token", ActScaling::Token, 0, DType::F16, 4096);
    add("token", ActScaling::Token, 0, DType::BF16, 7168);
    add("token", ActScaling::Token, 0, DType::F32, 1000); // a short last chunk
    add("token", ActScaling::Token, 0, DType::F16, 100); // a thread's 8 cut
    add("token", ActScaling::Token, 0, DType::BF16, 16384); // read twice
    if (kind.type.bits == 8) // 4-bit groups are at least 64 wide
      add("group32", ActScaling::Group, 32, DType::BF16, 4096);
    add("group128", ActScaling::Group, 128, DType::F16, 7168);
    add("group64", ActScaling::Group, 64, DType::F32, 1088);
    add("static", ActScaling::Static, 0, DType::F16, 4096);
    add("static", ActScaling::Static, 0, DType::BF16, 36);
  }
  return out;
}

ScalarType sourceScalar(DType d) {
  return d == DType::F32    ? ScalarType::f32()
         : d == DType::BF16 ? ScalarType::bf16()
                            : ScalarType::f16();
}

/// The case's quantizer, transformed for `chip` (compile-only without a
/// driver).
Result<ActivationQuantizer> quantizerFor(const QuantizeCase &c,
                                         const std::string &chip,
                                         bool compileOnly) {
  Result<ActivationQuantizer> q =
      ActivationQuantizer::create(c.input, sourceScalar(c.source), c.k);
  if (!q)
    return q;
  LayerTarget target;
  target.chip = chip;
  target.compileOnly = compileOnly;
  if (Status s = q->transform(target); !s)
    return Error{s.error()};
  if (q->kernel().kind != abi::kQuantizeKernel)
    return Error{"expected a quantize kernel in the kernel table"};
  return q;
}

/// Random activations of `c` for m rows in its source type, with a row of
/// zeros (row 1), a NaN, a value near the type's largest and a tiny one.
Tensor randomActivations(const QuantizeCase &c, int64_t m, std::mt19937 &rng) {
  Tensor x(c.source, {m, c.k});
  std::normal_distribution<double> normal(0.0, 1.5);
  for (int64_t i = 0; i < m * c.k; ++i)
    x.set(i, normal(rng));
  if (m > 1)
    for (int64_t j = 0; j < c.k; ++j)
      x.set(c.k + j, 0.0);
  if (m > 2) {
    x.set(2 * c.k + c.k / 3, std::nan(""));
    x.set(2 * c.k + c.k / 2, c.source == DType::F16 ? 60000.0 : 1e30);
    x.set(2 * c.k + c.k - 1, 1e-7);
  }
  return x;
}

struct Checked {
  bool ok = true;
  std::string why;
  double us = 0;
};

Checked runCase(const rt::CudaDriver &cu, const ActivationQuantizer &q,
                const QuantizeCase &c, int64_t m, std::mt19937 &rng,
                bool timed) {
  Checked r;
  auto fail = [&](const std::string &why) {
    r.ok = false;
    r.why = why;
    return r;
  };
  Tensor x = randomActivations(c, m, rng);
  std::vector<double> xv(size_t(m * c.k));
  for (int64_t i = 0; i < m * c.k; ++i)
    xv[size_t(i)] = x.at(i);
  const bool isStatic = c.input.scaling == ActScaling::Static;
  const float staticScale = 0.0125f;
  Result<QuantizedActivations> ref = quantizeActivations(
      c.input, xv.data(), m, c.k,
      isStatic ? std::optional<float>(staticScale) : std::nullopt);
  if (!ref)
    return fail("host reference: " + ref.error());
  const size_t scaleCount = ref->scales.size();
  auto dx = rt::DeviceBuffer::allocate(cu, x.data.size());
  // 4-bit codes: two per byte, the lower k in the low nibble.
  const bool packed = c.input.type.bits == 4;
  const size_t codeBytes = packed ? size_t(m * c.k / 2) : size_t(m * c.k);
  auto dq = rt::DeviceBuffer::allocate(cu, codeBytes);
  auto ds = rt::DeviceBuffer::allocate(cu, scaleCount * 4);
  if (!dx || !dq || !ds)
    return fail(!dx ? dx.error() : !dq ? dq.error() : ds.error());
  Status s = dx->upload(x.data.data(), x.data.size());
  if (s)
    s = dq->fill(0xA5); // poison: no code the reference writes everywhere
  if (s)
    s = isStatic ? ds->upload(&staticScale, 4) : ds->fill(0xFF); // NaN
  if (!s)
    return fail(s.error());
  auto launch = [&]() {
    return q.forward(nullptr, dx->ptr(), dq->ptr(), ds->ptr(), m);
  };
  if (Status l = launch(); !l)
    return fail(l.error());
  if (Status sync = cu.check(cu.cuCtxSynchronize(), "cuCtxSynchronize"); !sync)
    return fail(sync.error());
  std::vector<uint8_t> bytes(codeBytes);
  std::vector<float> scales(scaleCount);
  s = dq->download(bytes.data(), bytes.size());
  if (s)
    s = ds->download(scales.data(), scales.size() * 4);
  if (!s)
    return fail(s.error());
  std::vector<uint8_t> codes(size_t(m * c.k));
  for (size_t i = 0; i < codes.size(); ++i)
    codes[i] = packed ? uint8_t((bytes[i / 2] >> (4 * (i % 2))) & 15)
                      : bytes[i];
  int64_t badCodes = 0, badScales = 0, first = -1;
  // NaN codes match whatever NaN pattern each side writes (e5m2: the
  // hardware's 0x7F, the host codec's 0x7E).
  auto same = [&](uint32_t a, uint32_t b) {
    return a == b || (std::isnan(decode(c.input.type, a)) &&
                      std::isnan(decode(c.input.type, b)));
  };
  for (size_t i = 0; i < codes.size(); ++i)
    if (!same(codes[i], ref->codes[i] & (packed ? 0xF : 0xFF))) {
      if (first < 0)
        first = int64_t(i);
      ++badCodes;
    }
  for (size_t i = 0; i < scaleCount; ++i)
    if (std::memcmp(&scales[i], &ref->scales[i], 4) != 0)
      ++badScales;
  if (badCodes || badScales) {
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  "%lld codes and %lld scales differ from the reference "
                  "(first code at [%lld, %lld]: got 0x%02x, expected 0x%02x)",
                  (long long)badCodes, (long long)badScales,
                  (long long)(first < 0 ? -1 : first / c.k),
                  (long long)(first < 0 ? -1 : first % c.k),
                  first < 0 ? 0 : codes[size_t(first)],
                  first < 0 ? 0 : unsigned(ref->codes[size_t(first)]));
    return fail(buf);
  }
  if (timed) {
    rt::CUevent start, stop;
    cu.cuEventCreate(&start, 0);
    cu.cuEventCreate(&stop, 0);
    const int reps = 20;
    cu.cuEventRecord(start, nullptr);
    for (int i = 0; i < reps; ++i)
      if (Status l = launch(); !l)
        return fail(l.error());
    cu.cuEventRecord(stop, nullptr);
    cu.cuEventSynchronize(stop);
    float ms = 0;
    cu.cuEventElapsedTime(&ms, start, stop);
    r.us = 1000.0 * ms / reps;
    cu.cuEventDestroy(start);
    cu.cuEventDestroy(stop);
  }
  return r;
}

} // namespace

QuantizeTally runQuantizeCases(const rt::CudaDriver *cu,
                               const std::string &chip,
                               const std::string &filter, bool quick,
                               bool timing, const std::string &ptxDir) {
  QuantizeTally tally;
  std::mt19937 rng(uint32_t(std::random_device{}()));
  for (const QuantizeCase &c : quantizeCases(quick)) {
    if (!gputest::caseSelected(c.name, filter))
      continue;
    // fp8 codes need sm_89 (the lowering says so): skip them below.
    int sm = std::atoi(chip.c_str() + 3);
    if (!c.input.type.isInt() && c.input.type.bits == 8 && sm < 89)
      continue;
    Result<ActivationQuantizer> k = quantizerFor(c, chip, cu == nullptr);
    if (!k) {
      std::printf("%-40s ERROR %s\n", c.name.c_str(), k.error().c_str());
      ++tally.failed;
      continue;
    }
    if (!ptxDir.empty()) {
      std::ofstream(ptxDir + "/" + c.name + ".ptx") << k->ptx();
    }
    if (!cu) {
      ++tally.passed;
      continue;
    }
    for (int64_t m : c.ms) {
      bool timed = timing && m == c.ms.back() && c.k >= 4096;
      Checked r = runCase(*cu, *k, c, m, rng, timed);
      std::string label = c.name + " M=" + std::to_string(m);
      if (!r.ok) {
        std::printf("%-40s FAIL %s\n", label.c_str(), r.why.c_str());
        ++tally.failed;
        continue;
      }
      ++tally.passed;
      if (timed) {
        double bytes = double(m * c.k) *
                       (dtypeBits(c.source) + c.input.type.bits) / 8.0;
        std::printf("%-40s ok  %.1f us (%.2f TB/s)\n", label.c_str(), r.us,
                    bytes / (r.us * 1e-6) / 1e12);
      } else {
        std::printf("%-40s ok\n", label.c_str());
      }
    }
  }
  return tally;
}
