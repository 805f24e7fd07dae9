//===- QuantizeTest.cpp - Reference quantization and GEMM -----------------===//

#include "Humming/Quant/Codec.h"
#include "Humming/Quant/Pack.h"
#include "Humming/Quant/Quantize.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

using namespace humming;

namespace {
std::vector<double> randomValues(size_t n, uint32_t seed, double scale = 1.0) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> dist(0.0, scale);
  std::vector<double> v(n);
  for (double &x : v)
    x = dist(rng);
  return v;
}

WeightSchema schema(ScalarType type, ScalarType scale, Granularity g,
                    int64_t groupK = 0, ZeroPointKind zp = ZeroPointKind::None) {
  return WeightSchema::make(type, scale, g, groupK, zp);
}

/// Largest |w - dequant(quant(w))| relative to the group's absmax.
double worstRelativeError(const WeightSchema &w, int64_t n, int64_t k,
                          uint32_t seed) {
  int64_t e = std::max<int64_t>(w.experts, 1);
  std::vector<double> values = randomValues(size_t(e * n * k), seed);
  Result<QuantizedWeights> q = quantizeWeights(w, values.data(), n, k);
  EXPECT_TRUE(q.ok()) << q.error();
  if (!q.ok())
    return 1e9;
  Result<std::vector<double>> d = dequantizeWeights(w, *q, n, k);
  EXPECT_TRUE(d.ok()) << d.error();
  if (!d.ok())
    return 1e9;
  double amax = 0, worst = 0;
  for (double v : values)
    amax = std::max(amax, std::fabs(v));
  for (size_t i = 0; i < values.size(); ++i)
    worst = std::max(worst, std::fabs(values[i] - (*d)[i]));
  return worst / amax;
}
} // namespace

TEST(Quantize, IntegerSchemasReconstructWithinHalfAStep) {
  for (unsigned b : {2u, 3u, 4u, 5u, 8u}) {
    for (ZeroPointKind zp :
         {ZeroPointKind::None, ZeroPointKind::Int, ZeroPointKind::Float}) {
      for (Granularity g : {Granularity::Channel, Granularity::Group}) {
        WeightSchema w = schema(ScalarType::uint(b), ScalarType::f16(), g,
                                g == Granularity::Group ? 32 : 0, zp);
        double err = worstRelativeError(w, 64, 128, b * 7 + unsigned(zp));
        // Half a quantization step of a group, relative to the tensor's
        // absmax (plus a little for the f16 scale rounding).
        double step = zp == ZeroPointKind::None
                          ? 1.0 / ((1u << (b - 1)) - 1 ? (1u << (b - 1)) - 1 : 1)
                          : 2.0 / ((1u << b) - 1);
        EXPECT_LE(err, 0.51 * step + 1e-3)
            << "ui" << b << " zp " << toString(zp) << " " << toString(g);
      }
    }
  }
}

TEST(Quantize, FloatFormatsAndScaleTypes) {
  struct Case {
    ScalarType type, scale;
    Granularity g;
    int64_t groupK;
    double bound;
  } cases[] = {
      {ScalarType::e4m3(), ScalarType::f32(), Granularity::Tensor, 0, 0.07},
      {ScalarType::e4m3(), ScalarType::bf16(), Granularity::Channel, 0, 0.07},
      {ScalarType::e2m1(), ScalarType::ue8m0(), Granularity::Group, 32, 0.35},
      {ScalarType::e2m1(), ScalarType::e4m3(), Granularity::GroupTensor, 16, 0.2},
      {ScalarType::e3m2(), ScalarType::e5m2(), Granularity::Group, 64, 0.2},
      {*ScalarType::parse("e3m3"), ScalarType::f16(), Granularity::Group, 32, 0.1},
      {ScalarType::sint(8), ScalarType::f16(), Granularity::Channel, 0, 0.01},
  };
  for (const Case &c : cases) {
    WeightSchema w = schema(c.type, c.scale, c.g, c.groupK);
    EXPECT_LE(worstRelativeError(w, 32, 128, 3), c.bound)
        << c.type.str() << " / " << c.scale.str();
  }
}

TEST(Quantize, BlockScalesExpertsAndPadding) {
  WeightSchema w = schema(ScalarType::e4m3(), ScalarType::f32(),
                          Granularity::Block, 128);
  w.groupN = 128;
  w.experts = 3;
  w.padN = 64;
  w.padK = 32;
  w.bias = true;
  int64_t n = 192, k = 224;
  std::vector<double> values = randomValues(size_t(3 * n * k), 11);
  std::vector<double> bias = randomValues(size_t(3 * n), 12);
  Result<QuantizedWeights> q = quantizeWeights(w, values.data(), n, k, bias.data());
  ASSERT_TRUE(q.ok()) << q.error();
  EXPECT_EQ(q->weight.shape, (std::vector<int64_t>{3, 256, 64}));
  EXPECT_EQ(q->scales->shape, (std::vector<int64_t>{3, 2, 2}));
  EXPECT_EQ(q->bias->shape, (std::vector<int64_t>{3, 256}));
  Result<std::vector<double>> d = dequantizeWeights(w, *q, n, k);
  ASSERT_TRUE(d.ok()) << d.error();
  for (size_t i = 0; i < values.size(); ++i)
    EXPECT_NEAR((*d)[i], values[i], 0.07 * 4.5) << i;
  // Padding columns decode to zero.
  const uint32_t *words = q->weight.as<uint32_t>();
  EXPECT_EQ(decode(w.type, packedCodeAt(words, k, 8)), 0.0);
  std::vector<double> b = biasValues(w, *q, n);
  ASSERT_EQ(b.size(), bias.size());
  EXPECT_NEAR(b[5], bias[5], 1e-2);
}

TEST(Quantize, KernelPaddingAndPaddedTensors) {
  // The padding the kernels need: N to 64, K to the k-tiles (32 for
  // 16-bit activations, 64 for 8-bit) and the groups; K the activation
  // rows cannot be copied with is refused.
  const InputSchema f16{ScalarType::f16(), ActScaling::None, 0};
  const InputSchema e4{ScalarType::e4m3(), ActScaling::Token, 0};
  WeightSchema g128 = schema(ScalarType::uint(4), ScalarType::f16(),
                             Granularity::Group, 128);
  Result<Padding> p = kernelPadding(g128, f16, 1000, 4104);
  ASSERT_TRUE(p.ok()) << p.error();
  EXPECT_EQ(p->n, 24);
  EXPECT_EQ(p->k, 120);
  WeightSchema channel =
      schema(ScalarType::e4m3(), ScalarType::f16(), Granularity::Channel);
  p = kernelPadding(channel, e4, 4096, 4112);
  ASSERT_TRUE(p.ok()) << p.error();
  EXPECT_EQ(p->n, 0);
  EXPECT_EQ(p->k, 48);
  EXPECT_EQ(kernelPadding(g128, f16, 1000, 4100).error(),
            "expected K to be a multiple of 8 with f16 activations (their "
            "rows are copied in 16-byte pieces), got 4100: the layer cannot "
            "pad it; pad the activations' rows and the weights' K yourself "
            "(pad_k)");
  EXPECT_EQ(kernelPadding(channel, e4, 4096, 4104).error(),
            "expected K to be a multiple of 16 with f8E4M3FN activations "
            "(their rows are copied in 16-byte pieces), got 4104: the layer "
            "cannot pad it; pad the activations' rows and the weights' K "
            "yourself (pad_k)");

  // Unpadded tensors padded: the same weights where they are (zero points,
  // groups and bias included), ones for the padded scales (ue8m0 has no
  // zero).
  const int64_t n = 200, k = 1032;
  const int64_t kGroups = 1024; // whole groups of 128 (K 1032 has none)
  WeightSchema zp = schema(ScalarType::uint(4), ScalarType::bf16(),
                           Granularity::Group, 128, ZeroPointKind::Int);
  zp.bias = true;
  WeightSchema mx = schema(ScalarType::e2m1(), ScalarType::ue8m0(),
                           Granularity::Group, 32);
  std::vector<double> values = randomValues(size_t(n * k), 21);
  std::vector<double> bias = randomValues(size_t(n), 22);
  WeightSchema blocks = schema(ScalarType::e4m3(), ScalarType::f32(),
                               Granularity::Block, 128);
  blocks.groupN = 128; // a partial last block along K, kept as it is
  for (WeightSchema bare : {zp, mx, channel, blocks}) {
    const int64_t k = bare.granularity == Granularity::Group ? kGroups : 1032;
    Result<Padding> pad = kernelPadding(bare, f16, n, k);
    ASSERT_TRUE(pad.ok()) << pad.error();
    WeightSchema padded = bare;
    padded.padN = pad->n;
    padded.padK = pad->k;
    Result<QuantizedWeights> q =
        quantizeWeights(bare, values.data(), n, k, bare.bias ? bias.data() : nullptr);
    ASSERT_TRUE(q.ok()) << q.error();
    Result<QuantizedWeights> big = padCanonicalTensors(padded, *q, n, k);
    ASSERT_TRUE(big.ok()) << big.error();
    Status fits = checkQuantizedTensors(padded, *big, n, k, DType::F16);
    EXPECT_TRUE(fits.ok()) << fits.error();
    Result<std::vector<double>> want = dequantizeWeights(bare, *q, n, k);
    Result<std::vector<double>> got = dequantizeWeights(padded, *big, n, k);
    ASSERT_TRUE(want.ok()) << want.error();
    ASSERT_TRUE(got.ok()) << got.error();
    EXPECT_EQ(*want, *got) << bare.type.str();
    if (bare.bias)
      EXPECT_EQ(biasValues(bare, *q, n), biasValues(padded, *big, n));
    if (bare.scaleType == ScalarType::ue8m0()) {
      // The last group of the last (padded) row: 1.0 is code 127.
      EXPECT_EQ(big->scales->data.back(), 127);
    }
  }
  // A tensor of neither shape is named; a partial last group is refused.
  WeightSchema padded = zp;
  padded.padN = 56;
  Result<QuantizedWeights> q =
      quantizeWeights(zp, values.data(), n, kGroups, bias.data());
  ASSERT_TRUE(q.ok()) << q.error();
  q->scales = Tensor(DType::BF16, {n, 3});
  EXPECT_EQ(padCanonicalTensors(padded, *q, n, kGroups).error(),
            "scales: expected the unpadded shape [200, 8] (the layer pads "
            "it to [256, 8]), got [200, 3]");
  // Tensors whose elements are not whole bytes, scales of no float type,
  // and schemas that are not dense canonical ones.
  QuantizedWeights odd = *q;
  odd.scales = Tensor(DType::F4, {n, 8});
  EXPECT_EQ(padCanonicalTensors(padded, odd, n, kGroups).error(),
            "scales: expected whole-byte elements, got F4");
  odd.scales = Tensor(DType::I32, {n, 8});
  EXPECT_EQ(padCanonicalTensors(padded, odd, n, kGroups).error(),
            "scales: expected a float dtype, got I32");
  WeightSchema moe = padded;
  moe.experts = 2;
  EXPECT_EQ(padCanonicalTensors(moe, *q, n, kGroups).error(),
            "expected a dense canonical schema to pad tensors for, got format "
            "canonical with 2 experts");
  padded.padK = 24;
  EXPECT_EQ(padCanonicalTensors(padded, *q, n, k).error(),
            "expected K (1032) to be a multiple of the group size 128 to pad "
            "unpadded tensors (the last group would be partial); pass tensors "
            "of the padded K (1056)");
}

TEST(Quantize, TensorParallelShardsAreSlicesOfTheLayer) {
  // Every rank's shard dequantizes to its slice of the full layer (rows
  // for column-parallel, columns for row-parallel), for int zero points
  // packed along N, group scales, blocks and a bias (row-parallel: rank 0
  // keeps it).
  const int64_t n = 256, k = 512;
  std::vector<double> values = randomValues(size_t(n * k), 31);
  std::vector<double> bias = randomValues(size_t(n), 32);
  WeightSchema zp = schema(ScalarType::uint(4), ScalarType::f16(),
                           Granularity::Group, 128, ZeroPointKind::Int);
  zp.bias = true;
  WeightSchema blocks = schema(ScalarType::e4m3(), ScalarType::f32(),
                               Granularity::Block, 128);
  blocks.groupN = 128;
  WeightSchema channel =
      schema(ScalarType::sint(8), ScalarType::f16(), Granularity::Channel);
  for (const WeightSchema &w : {zp, blocks, channel}) {
    Result<QuantizedWeights> q = quantizeWeights(
        w, values.data(), n, k, w.bias ? bias.data() : nullptr);
    ASSERT_TRUE(q.ok()) << q.error();
    Result<std::vector<double>> full = dequantizeWeights(w, *q, n, k);
    ASSERT_TRUE(full.ok()) << full.error();
    std::vector<double> fullBias = biasValues(w, *q, n);
    for (TensorParallel tp : {TensorParallel::Column, TensorParallel::Row})
      for (int64_t rank = 0; rank < 2; ++rank) {
        Result<ShardedWeights> s = shardCanonical(w, *q, n, k, tp, rank, 2);
        ASSERT_TRUE(s.ok()) << s.error();
        const bool col = tp == TensorParallel::Column;
        EXPECT_EQ(s->n, col ? n / 2 : n);
        EXPECT_EQ(s->k, col ? k : k / 2);
        Result<std::vector<double>> part =
            dequantizeWeights(s->schema, s->tensors, s->n, s->k);
        ASSERT_TRUE(part.ok()) << part.error();
        for (int64_t r = 0; r < s->n; ++r)
          for (int64_t c = 0; c < s->k; ++c) {
            int64_t fr = col ? rank * s->n + r : r;
            int64_t fc = col ? c : rank * s->k + c;
            ASSERT_EQ((*part)[size_t(r * s->k + c)],
                      (*full)[size_t(fr * k + fc)])
                << w.type.str() << (col ? " column" : " row") << " rank "
                << rank << " at " << r << ", " << c;
          }
        if (w.bias) {
          std::vector<double> b = biasValues(s->schema, s->tensors, s->n);
          for (int64_t r = 0; r < s->n; ++r)
            EXPECT_EQ(b[size_t(r)],
                      col ? fullBias[size_t(rank * s->n + r)]
                          : (rank == 0 ? fullBias[size_t(r)] : 0.0));
        }
      }
  }
  // Boundaries that would cut a group, a packed word or a block; bad ranks.
  Result<QuantizedWeights> q = quantizeWeights(zp, values.data(), n, k,
                                               bias.data());
  ASSERT_TRUE(q.ok()) << q.error();
  EXPECT_EQ(shardCanonical(zp, *q, n, k, TensorParallel::Row, 0, 8).error(),
            "a shard of 64 along K (K = 512 over 8 ranks) would cut a scale "
            "group (128 along K): expected shards of a multiple of 128");
  EXPECT_EQ(shardCanonical(zp, *q, n, k, TensorParallel::Column, 0, 64).error(),
            "a shard of 4 along N (N = 256 over 64 ranks) would cut a packed "
            "zero-point word (8 along N): expected shards of a multiple of 8");
  EXPECT_EQ(shardCanonical(zp, *q, n, k, TensorParallel::Column, 0, 3).error(),
            "expected N (256) to divide into 3 shards");
  EXPECT_EQ(shardCanonical(zp, *q, n, k, TensorParallel::Row, 2, 2).error(),
            "expected a tensor-parallel rank in 0 .. size - 1 and size >= 1, "
            "got rank 2 of 2");
  WeightSchema padded = zp;
  padded.padN = 64;
  EXPECT_EQ(shardCanonical(padded, *q, n, k, TensorParallel::Row, 0, 2).error(),
            "expected a dense, canonical, unpadded schema to shard, got format "
            "canonical, 0 experts, pad 64 x 0");
  QuantizedWeights deep = *q;
  deep.scales = Tensor(DType::F16, {1, n, 4});
  EXPECT_EQ(shardCanonical(zp, deep, n, k, TensorParallel::Row, 0, 2).error(),
            "expected canonical tensors of whole-byte elements and one or two "
            "dimensions, got F16 [1, 256, 4]");
}

TEST(Quantize, ExactlyRepresentableWeightsRoundTrip) {
  // ui4 with an int zero point, group 32: weights (q - z) * s for s a power of
  // two reconstruct exactly.
  WeightSchema w = schema(ScalarType::uint(4), ScalarType::f16(),
                          Granularity::Group, 32, ZeroPointKind::Int);
  int64_t n = 32, k = 64;
  std::vector<double> values(size_t(n * k));
  std::mt19937 rng(5);
  for (int64_t r = 0; r < n; ++r)
    for (int64_t c = 0; c < k; ++c) {
      int q = int(rng() % 16);
      if (c % 32 == 0)
        q = 0; // every group spans the whole range [0, 15]
      if (c % 32 == 1)
        q = 15;
      values[size_t(r * k + c)] = (q - 3) * 0.25;
    }
  Result<QuantizedWeights> q = quantizeWeights(w, values.data(), n, k);
  ASSERT_TRUE(q.ok()) << q.error();
  Result<std::vector<double>> d = dequantizeWeights(w, *q, n, k);
  ASSERT_TRUE(d.ok()) << d.error();
  EXPECT_EQ(*d, values);
}

TEST(Quantize, DequantizeChecksTheTensors) {
  WeightSchema w = schema(ScalarType::uint(4), ScalarType::f16(),
                          Granularity::Group, 32);
  std::vector<double> values = randomValues(64 * 64, 1);
  Result<QuantizedWeights> q = quantizeWeights(w, values.data(), 64, 64);
  ASSERT_TRUE(q.ok());
  QuantizedWeights bad = *q;
  bad.scales->shape = {64, 4};
  Result<std::vector<double>> d = dequantizeWeights(w, bad, 64, 64);
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.error(), "scales: expected shape [64, 2], got [64, 4]");
  bad = *q;
  bad.scales->dtype = DType::BF16;
  d = dequantizeWeights(w, bad, 64, 64);
  EXPECT_EQ(d.error(), "scales: expected dtype F16, got BF16");
  bad = *q;
  bad.weight.data.resize(10);
  d = dequantizeWeights(w, bad, 64, 64);
  EXPECT_EQ(d.error(), "weight: expected 2048 bytes, got 10");
  bad = *q;
  bad.scales.reset();
  d = dequantizeWeights(w, bad, 64, 64);
  EXPECT_EQ(d.error(), "scales: missing (the schema has group scales)");
  WeightSchema gptq = w;
  gptq.format = SourceFormat::GPTQ;
  EXPECT_FALSE(quantizeWeights(gptq, values.data(), 64, 64).ok());
}

TEST(Quantize, Activations) {
  std::vector<double> x = randomValues(8 * 256, 9, 3.0);
  for (InputSchema in :
       {InputSchema{ScalarType::e4m3(), ActScaling::Token, 0},
        InputSchema{ScalarType::sint(8), ActScaling::Group, 128},
        InputSchema{ScalarType::sint(4), ActScaling::Group, 64},
        InputSchema{ScalarType::e2m1(), ActScaling::Group, 64}}) {
    Result<QuantizedActivations> q = quantizeActivations(in, x.data(), 8, 256);
    ASSERT_TRUE(q.ok()) << q.error();
    std::vector<double> d = dequantizeActivations(in, *q, 8, 256);
    double amax = 0, worst = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      amax = std::max(amax, std::fabs(x[i]));
      worst = std::max(worst, std::fabs(x[i] - d[i]));
    }
    double bound = in.type.isInt() ? 0.5 / maxValue(in.type) : 0.25;
    EXPECT_LE(worst / amax, bound + 1e-6) << in.type.str();
  }
  InputSchema fixed{ScalarType::e4m3(), ActScaling::Static, 0};
  EXPECT_FALSE(quantizeActivations(fixed, x.data(), 8, 256).ok());
  Result<QuantizedActivations> q =
      quantizeActivations(fixed, x.data(), 8, 256, 0.05f);
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(q->scales, std::vector<float>{0.05f});
}

TEST(Quantize, ActivationRulesTheGpuKernelFollows) {
  // One row per rule, K = 4, per token.
  const double nan = std::nan("");
  std::vector<double> x = {
      0, 0, 0, 0,                       // all zero: scale 1, codes 0
      1, -2, nan, 0.5,                  // NaN does not count; its code is NaN
      448, 1e-3, -448, 3,               // absmax 448: scale 1
      0.1, 0.2, 0.30000001192092896, 7, // quotients rounded to f32 first
  };
  InputSchema e4m3{ScalarType::e4m3(), ActScaling::Token, 0};
  Result<QuantizedActivations> q = quantizeActivations(e4m3, x.data(), 4, 4);
  ASSERT_TRUE(q.ok()) << q.error();
  EXPECT_EQ(q->scales[0], 1.0f);
  for (int c = 0; c < 4; ++c)
    EXPECT_EQ(q->codes[c], 0u);
  EXPECT_EQ(q->scales[1], float(2.0 / 448));
  EXPECT_EQ(q->codes[6], encode(ScalarType::e4m3(), nan));
  EXPECT_EQ(q->scales[2], 1.0f);
  EXPECT_EQ(q->codes[8], 0x7Eu); // 448, the largest finite e4m3
  float s3 = float(7.0 / 448);
  EXPECT_EQ(q->scales[3], s3);
  for (int c = 0; c < 4; ++c)
    EXPECT_EQ(q->codes[12 + c],
              encode(ScalarType::e4m3(), double(float(x[12 + c]) / s3)));
  // Integers: NaN gives 0, the quotient rounds half to even.
  InputSchema s8{ScalarType::sint(8), ActScaling::Token, 0};
  q = quantizeActivations(s8, x.data(), 4, 4);
  ASSERT_TRUE(q.ok()) << q.error();
  EXPECT_EQ(q->codes[6], 0u);
  EXPECT_EQ(q->codes[5], uint32_t(-127) & 0xFF); // -2 / (2 / 127)
}

TEST(Reference, Gemm) {
  double a[] = {1, 2, 3, 4, 5, 6};    // 2 x 3
  double w[] = {1, 0, 1, 0, 1, 0};    // 2 x 3
  double bias[] = {0.5, -1};
  std::vector<double> out = referenceGemm(a, w, bias, 2, 2, 3);
  EXPECT_EQ(out, (std::vector<double>{4.5, 1, 10.5, 4}));
}

TEST(Reference, MoeRoutingsAgree) {
  int64_t m = 7, topK = 2, experts = 4, n = 5, k = 6;
  std::vector<double> a = randomValues(size_t(m * k), 21);
  std::vector<double> w = randomValues(size_t(experts * n * k), 22);
  std::vector<int32_t> topk = {0, 1, 1, 2, 3, 0, 2, 2, 1, 3, 0, 3, 2, 1};
  Result<Routing> r = alignBlockSize(topk, m, topK, experts, 4);
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r->numTokensPadded % 4, 0);
  Result<std::vector<double>> out =
      referenceMoeGemm(*r, a.data(), m, w.data(), nullptr, experts, n, k);
  ASSERT_TRUE(out.ok()) << out.error();
  // Each (token, k) row is that token times its expert.
  for (int64_t t = 0; t < m; ++t)
    for (int64_t j = 0; j < topK; ++j) {
      int32_t e = topk[size_t(t * topK + j)];
      std::vector<double> direct =
          referenceGemm(a.data() + t * k, w.data() + e * n * k, nullptr, 1, n, k);
      for (int64_t c = 0; c < n; ++c)
        EXPECT_DOUBLE_EQ((*out)[size_t((t * topK + j) * n + c)], direct[size_t(c)]);
    }

  // Contiguous: rows sorted by expert.
  Routing contiguous;
  contiguous.type = GemmType::GroupedContiguous;
  contiguous.expertLayout = {0, 2, 2, 5, 7};
  out = referenceMoeGemm(contiguous, a.data(), m, w.data(), nullptr, experts, n, k);
  ASSERT_TRUE(out.ok()) << out.error();
  std::vector<double> row3 =
      referenceGemm(a.data() + 3 * k, w.data() + 2 * n * k, nullptr, 1, n, k);
  EXPECT_DOUBLE_EQ((*out)[size_t(3 * n)], row3[0]);

  // Masked: [E * max_tokens, K] with counts.
  Routing masked;
  masked.type = GemmType::GroupedMasked;
  masked.maxTokens = 2;
  masked.expertLayout = {2, 0, 1, 2};
  std::vector<double> am = randomValues(size_t(8 * k), 23);
  out = referenceMoeGemm(masked, am.data(), 8, w.data(), nullptr, experts, n, k);
  ASSERT_TRUE(out.ok()) << out.error();
  EXPECT_EQ((*out)[size_t(2 * n)], 0.0); // expert 1 has no tokens
  std::vector<double> row4 =
      referenceGemm(am.data() + 4 * k, w.data() + 2 * n * k, nullptr, 1, n, k);
  EXPECT_DOUBLE_EQ((*out)[size_t(4 * n + 1)], row4[1]);
}

TEST(Reference, MoeRoutingErrors) {
  std::vector<double> a(12), w(2 * 3 * 6);
  Routing r;
  r.type = GemmType::Indexed;
  r.blockM = 2;
  r.topK = 1;
  r.sortedIds = {0, 1};
  r.expertIds = {5};
  r.numTokensPadded = 2;
  Result<std::vector<double>> out =
      referenceMoeGemm(r, a.data(), 2, w.data(), nullptr, 2, 3, 6);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error(), "expert_ids[0] = 5 is outside [0, 2)");
  Routing c;
  c.type = GemmType::GroupedContiguous;
  c.expertLayout = {0, 3, 2};
  out = referenceMoeGemm(c, a.data(), 2, w.data(), nullptr, 2, 3, 6);
  EXPECT_EQ(out.error(),
            "expert offsets [0], [1] = 0, 3 are not ascending within [0, 2]");
  EXPECT_EQ(alignBlockSize({0, 7}, 2, 1, 2, 4).error(),
            "top-k id 1 selects expert 7, outside [0, 2)");
}
