//===- FirstUseProbeTest.cpp - What the first-use probe decides -----------===//
//
// The probe's decisions without a GPU (FirstUseProbe.h): when it runs, what
// a layer is compared with, at which M, and what counts as agreement. The
// probe itself (kernels on a GPU, the fallback) runs in the GPU suite's
// probe_* cases.
//
//===----------------------------------------------------------------------===//

#include "Humming/API/FirstUseProbe.h"
#include "Humming/API/Layer.h"
#include "TestCache.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>

using namespace humming;

namespace {
Chip chip(const char *name) { return *Chip::parse(name); }

TEST(FirstUseProbeTest, AutoRunsWhereTheSuiteHasNotRun) {
  Result<probe::Policy> h = probe::policy(FirstUseProbe::Auto, nullptr,
                                          chip("sm_90a"));
  ASSERT_TRUE(h) << h.error();
  EXPECT_FALSE(h->run);
  EXPECT_EQ(h->why, "not probed: the GPU suite has run on sm_90");
  for (const char *c : {"sm_80", "sm_89", "sm_100a", "sm_120f", "sm_121a"}) {
    Result<probe::Policy> p = probe::policy(FirstUseProbe::Auto, "", chip(c));
    ASSERT_TRUE(p) << p.error();
    EXPECT_TRUE(p->run) << c;
    EXPECT_FALSE(p->forceMismatch) << c;
  }
}

TEST(FirstUseProbeTest, TheFieldAndTheEnvironment) {
  Result<probe::Policy> always =
      probe::policy(FirstUseProbe::Always, nullptr, chip("sm_90a"));
  ASSERT_TRUE(always);
  EXPECT_TRUE(always->run);
  Result<probe::Policy> never =
      probe::policy(FirstUseProbe::Never, nullptr, chip("sm_100a"));
  ASSERT_TRUE(never);
  EXPECT_FALSE(never->run);
  EXPECT_EQ(never->why, "not probed: turned off");
  // The environment replaces the field.
  Result<probe::Policy> envNever =
      probe::policy(FirstUseProbe::Always, "never", chip("sm_100a"));
  ASSERT_TRUE(envNever);
  EXPECT_FALSE(envNever->run);
  Result<probe::Policy> envAuto =
      probe::policy(FirstUseProbe::Never, "auto", chip("sm_100a"));
  ASSERT_TRUE(envAuto);
  EXPECT_TRUE(envAuto->run);
  Result<probe::Policy> mismatch =
      probe::policy(FirstUseProbe::Never, "mismatch", chip("sm_90a"));
  ASSERT_TRUE(mismatch);
  EXPECT_TRUE(mismatch->run);
  EXPECT_TRUE(mismatch->forceMismatch);
  Result<probe::Policy> bad =
      probe::policy(FirstUseProbe::Auto, "sometimes", chip("sm_90a"));
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error(), "expected HUMMING_PROBE to be auto, always, never or "
                         "mismatch, got 'sometimes'");
  EXPECT_FALSE(probe::checkEnvironment("Always"));
  EXPECT_TRUE(probe::checkEnvironment(nullptr));
  EXPECT_TRUE(probe::checkEnvironment(""));
}

TEST(FirstUseProbeTest, WhatALayerIsComparedWith) {
  const InputSchema f16{}, e4m3{ScalarType::e4m3(), ActScaling::Token, 0};
  // 16-bit activations over prepared weights: the canonical kernel.
  Result<probe::Reference> r =
      probe::reference(chip("sm_100a"), true, false, f16);
  ASSERT_TRUE(r) << r.error();
  EXPECT_TRUE(r->canonical);
  EXPECT_EQ(r->chip, "sm_100a");
  EXPECT_EQ(r->describe(), "the canonical kernel");
  // The canonical kernel is its own reference.
  Result<probe::Reference> canonical =
      probe::reference(chip("sm_100a"), false, false, f16);
  ASSERT_FALSE(canonical);
  EXPECT_EQ(canonical.error(), "not probed: the layer runs the canonical "
                               "kernel, the reference itself");
  // 8-bit activations: the plain target's prepared kernels.
  Result<probe::Reference> fp8 =
      probe::reference(chip("sm_120a"), true, false, e4m3);
  ASSERT_TRUE(fp8) << fp8.error();
  EXPECT_FALSE(fp8->canonical);
  EXPECT_EQ(fp8->chip, "sm_120");
  EXPECT_EQ(fp8->describe(), "sm_120's mma_sync kernels");
  Result<probe::Reference> ada =
      probe::reference(chip("sm_89"), true, false, e4m3);
  ASSERT_FALSE(ada);
  EXPECT_EQ(ada.error(), "not probed: f8E4M3FN activations have no canonical "
                         "kernel, and sm_89 no plain target with other "
                         "kernels");
  // MoE layers: no canonical kernel either.
  Result<probe::Reference> moe =
      probe::reference(chip("sm_100a"), true, true, f16);
  ASSERT_TRUE(moe) << moe.error();
  EXPECT_FALSE(moe->canonical);
  EXPECT_EQ(moe->chip, "sm_100");
  Result<probe::Reference> moeAmpere =
      probe::reference(chip("sm_80"), true, true, f16);
  ASSERT_FALSE(moeAmpere);
  EXPECT_EQ(moeAmpere.error(), "not probed: a MoE layer has no canonical "
                               "kernel, and sm_80 no plain target with other "
                               "kernels");
  // The second opinion after a disagreement.
  EXPECT_EQ(probe::plainTarget(chip("sm_90a"))->chip, "sm_90");
  EXPECT_EQ(probe::plainTarget(chip("sm_120f"))->chip, "sm_120");
  EXPECT_FALSE(probe::plainTarget(chip("sm_80")));
}

TEST(FirstUseProbeTest, OneRowCountPerKernelWithPartialTiles) {
  auto kernel = [](int64_t lo, int64_t hi) {
    humming::abi::KernelLaunch k;
    k.mMin = lo;
    k.mMax = hi;
    return k;
  };
  EXPECT_EQ(probe::rows({kernel(513, 0), kernel(1, 16), kernel(17, 32),
                         kernel(33, 512)}),
            (std::vector<int64_t>{6, 22, 38, 518}));
  // Within a narrow range; one kernel of all M; repeats dropped.
  EXPECT_EQ(probe::rows({kernel(1, 3), kernel(4, 0)}),
            (std::vector<int64_t>{3, 9}));
  EXPECT_EQ(probe::rows({kernel(1, 0)}), (std::vector<int64_t>{6}));
  EXPECT_EQ(probe::rows({kernel(0, 0), kernel(1, 0)}),
            (std::vector<int64_t>{6}));
  // MoE kernels count rows per expert: 6 and 22 rows per expert are 96 and
  // 352 tokens of top-8 over 128 experts (indexed), 768 and 2816 rows
  // grouped; with top_k 3 of 8, 6 rows per expert are 16 tokens (48 ids,
  // 6 per expert).
  auto moeKernel = [&](int64_t lo, int64_t hi, int64_t routing, int64_t e,
                       int64_t topK) {
    humming::abi::KernelLaunch k = kernel(lo, hi);
    k.routing = routing;
    k.experts = e;
    k.topK = topK;
    return k;
  };
  using humming::abi::kRoutingContiguous;
  using humming::abi::kRoutingIndexed;
  EXPECT_EQ(probe::rows({moeKernel(1, 16, kRoutingIndexed, 128, 8),
                         moeKernel(17, 0, kRoutingIndexed, 128, 8)}),
            (std::vector<int64_t>{96, 352}));
  EXPECT_EQ(probe::rows({moeKernel(1, 16, kRoutingContiguous, 128, 1),
                         moeKernel(17, 0, kRoutingContiguous, 128, 1)}),
            (std::vector<int64_t>{768, 2816}));
  EXPECT_EQ(probe::rows({moeKernel(1, 0, kRoutingIndexed, 8, 3)}),
            (std::vector<int64_t>{16}));
  EXPECT_EQ(humming::abi::moeRowsPerExpert(kRoutingIndexed, 16, 3, 8), 6);
}

TEST(FirstUseProbeTest, Agreement) {
  const std::vector<double> want = {1, -2, 3, 0.5};
  probe::Agreement same = probe::compare(want, want, 1e-2);
  EXPECT_TRUE(same.agrees);
  EXPECT_EQ(same.relError, 0);
  std::vector<double> close = want;
  for (double &v : close)
    v *= 1.001;
  EXPECT_TRUE(probe::compare(close, want, 1e-2).agrees);
  probe::Agreement zero = probe::compare({0, 0, 0, 0}, want, 1e-2);
  EXPECT_FALSE(zero.agrees);
  EXPECT_DOUBLE_EQ(zero.relError, 1);
  // An output left unwritten (NaN) disagrees however close the rest is.
  probe::Agreement nan = probe::compare({1, -2, NAN, 0.5}, want, 1e-2);
  EXPECT_FALSE(nan.agrees);
  EXPECT_EQ(nan.nonFinite, 1);
  EXPECT_EQ(nan.relError, 0);
  EXPECT_TRUE(probe::compare({0, 0}, {0, 0}, 1e-2).agrees);
  probe::Agreement fromZero = probe::compare({1, 0}, {0, 0}, 1e-2);
  EXPECT_FALSE(fromZero.agrees);
  EXPECT_TRUE(std::isinf(fromZero.relError));
  EXPECT_FALSE(probe::compare({1, 2}, {1, 2, 3}, 1e-2).agrees);
  EXPECT_EQ(probe::tolerance(ScalarType::f16(), false), 1e-2);
  EXPECT_EQ(probe::tolerance(ScalarType::bf16(), false), 3e-2);
  EXPECT_EQ(probe::tolerance(ScalarType::f16(), true), 3e-2);
}

// Decisions kept in the kernel cache's directory: read back as written (one
// line of text), nothing for a cache in memory, a file of anything else no
// decision, a directory that cannot be written no error.
TEST(FirstUseProbeTest, DecisionsOutliveTheProcess) {
  char tmpl[] = "/tmp/humming-probe-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  const std::string key(64, 'a');
  EXPECT_FALSE(probe::readDecision(dir, key));
  probe::writeDecision(dir, key, {probe::Kept::Plain, "disagree\nsecond line"});
  std::optional<probe::Decision> d = probe::readDecision(dir, key);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->kept, probe::Kept::Plain);
  EXPECT_EQ(d->text, "disagree second line");
  probe::writeDecision(dir, key, {probe::Kept::Own, "agree"});
  d = probe::readDecision(dir, key);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->kept, probe::Kept::Own);
  EXPECT_EQ(d->text, "agree");
  { std::ofstream(dir + "/probe-" + key + ".txt") << "maybe\nsomething\n"; }
  EXPECT_FALSE(probe::readDecision(dir, key));
  { std::ofstream(dir + "/probe-" + key + ".txt") << "own\n"; }
  EXPECT_FALSE(probe::readDecision(dir, key));
  probe::writeDecision("", key, {probe::Kept::Own, "agree"});
  EXPECT_FALSE(probe::readDecision("", key));
  probe::writeDecision(dir + "/absent/deeper", key, {probe::Kept::Own, "x"});
  EXPECT_FALSE(probe::readDecision(dir + "/absent/deeper", key));
  std::remove((dir + "/probe-" + key + ".txt").c_str());
  ::rmdir(dir.c_str());
}

// A compile-only transform neither probes nor says anything of it; an
// unknown HUMMING_PROBE is refused before anything compiles.
TEST(FirstUseProbeTest, CompileOnlyTransforms) {
  test::useTestCache();
  WeightSchema w = WeightSchema::make(ScalarType::uint(4), ScalarType::f16(),
                                      Granularity::Group, 128);
  Result<Layer> layer = Layer::create(128, 256, w, InputSchema{});
  ASSERT_TRUE(layer) << layer.error();
  std::vector<double> weights(128 * 256, 0.01);
  ASSERT_TRUE(layer->quantize(weights.data()));
  LayerTarget target;
  target.chip = "sm_100a";
  target.compileOnly = true;
  ASSERT_TRUE(layer->transform(target));
  EXPECT_EQ(layer->transformStats().probe, "");
  ::setenv("HUMMING_PROBE", "sometimes", 1);
  Status s = layer->transform(target);
  ::unsetenv("HUMMING_PROBE");
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error(), "expected HUMMING_PROBE to be auto, always, never or "
                       "mismatch, got 'sometimes'");
}
} // namespace
