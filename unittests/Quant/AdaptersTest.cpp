//===- AdaptersTest.cpp - Checkpoints in every format ---------------------===//
//
// Each test writes a small checkpoint in one format from random values, with
// its own (test-side) implementation of that format's public packing
// convention, loads it through the adapter and requires the dequantized
// canonical weights to equal the values the test meant, exactly.
//
//===----------------------------------------------------------------------===//

#include "Humming/Quant/Adapters.h"
#include "Humming/Quant/Checked.h"
#include "Humming/Quant/Codec.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <random>

using namespace humming;

namespace {
/// A temporary model directory.
struct ModelDir {
  std::string path;
  ModelDir() {
    char tmpl[] = "/tmp/humming-ckpt-XXXXXX";
    path = mkdtemp(tmpl);
  }
  ~ModelDir() { std::system(("rm -rf " + path).c_str()); }
  void file(const std::string &name, const std::string &text) const {
    std::ofstream(path + "/" + name) << text;
  }
  void tensors(const std::vector<std::pair<std::string, Tensor>> &ts,
               const std::string &name = "model.safetensors") const {
    std::vector<std::pair<std::string, TensorView>> views;
    for (const auto &[n, t] : ts)
      views.push_back({n, t.view()});
    ASSERT_TRUE(writeSafetensors(path + "/" + name, views).ok());
  }
};

Tensor words(std::vector<int64_t> shape, const std::vector<uint32_t> &w) {
  Tensor t(DType::I32, std::move(shape));
  EXPECT_EQ(int64_t(w.size()), t.numel());
  std::memcpy(t.data.data(), w.data(), w.size() * 4);
  return t;
}
Tensor bytes(DType d, std::vector<int64_t> shape, const std::vector<uint8_t> &b) {
  Tensor t(d, std::move(shape));
  EXPECT_EQ(b.size(), t.data.size());
  t.data = b;
  return t;
}
Tensor values(DType d, std::vector<int64_t> shape, const std::vector<double> &v) {
  Tensor t(d, std::move(shape));
  for (size_t i = 0; i < v.size(); ++i)
    t.set(int64_t(i), v[i]);
  return t;
}
/// Rounds to what a dtype holds (the test's scales are stored in it).
double as(DType d, double v) { return decode(*dtypeScalar(d), encode(*dtypeScalar(d), v)); }

/// Sets bits [bit, bit + width) of a little-endian word array (test-side,
/// one bit at a time).
void putBits(std::vector<uint32_t> &w, int64_t bit, unsigned width, uint32_t v) {
  for (unsigned i = 0; i < width; ++i) {
    int64_t b = bit + i;
    if ((v >> i) & 1)
      w[size_t(b / 32)] |= 1u << (b % 32);
  }
}

/// Loads `module` of a checkpoint whose directory and config must read (a
/// failure there fails the test); the layer's own result is returned.
Result<LoadedLayer> loadModule(const ModelDir &dir, const std::string &module) {
  Result<Checkpoint> c = Checkpoint::open(dir.path);
  EXPECT_TRUE(c.ok()) << c.error();
  if (!c)
    return Error{c.error()};
  Result<QuantConfig> q = QuantConfig::fromCheckpoint(*c);
  EXPECT_TRUE(q.ok()) << q.error();
  if (!q)
    return Error{q.error()};
  return loadLayer(*c, *q, module);
}

/// Loads `module` and returns its dequantized weights [E, N, K].
std::vector<double> loadAndDequantize(const ModelDir &dir,
                                      const std::string &module,
                                      LoadedLayer *out = nullptr) {
  Result<LoadedLayer> l = loadModule(dir, module);
  EXPECT_TRUE(l.ok()) << l.error();
  if (!l)
    return {};
  Result<std::vector<double>> d =
      dequantizeWeights(l->weight, l->tensors, l->n, l->k);
  EXPECT_TRUE(d.ok()) << d.error();
  if (out)
    *out = *l;
  return d.ok() ? *d : std::vector<double>();
}

/// A GPTQ/AWQ-style quantized matrix: codes [K][N] (k-major as the
/// checkpoints store them), scales and zeros per (group, n).
struct IntLayer {
  int64_t n, k, group;
  unsigned bits;
  std::vector<uint32_t> q;      // [K, N]
  std::vector<double> scale;    // [G, N] (f16 values)
  std::vector<uint32_t> zero;   // [G, N]
  std::vector<int32_t> gIdx;    // [K]
  int64_t groups() const { return group ? k / group : 1; }
  double value(int64_t kk, int64_t nn) const {
    int64_t g = gIdx[size_t(kk)];
    return (double(q[size_t(kk * n + nn)]) - zero[size_t(g * n + nn)]) *
           scale[size_t(g * n + nn)];
  }
};

IntLayer randomIntLayer(int64_t n, int64_t k, int64_t group, unsigned bits,
                        bool symmetric, uint32_t seed, bool shuffleGroups = false) {
  std::mt19937 rng(seed);
  IntLayer l{n, k, group, bits, {}, {}, {}, {}};
  uint32_t maxq = (1u << bits) - 1;
  for (int64_t i = 0; i < n * k; ++i)
    l.q.push_back(rng() & maxq);
  for (int64_t i = 0; i < l.groups() * n; ++i) {
    l.scale.push_back(as(DType::F16, 0.001 + (rng() % 1000) * 1e-4));
    l.zero.push_back(symmetric ? 1u << (bits - 1) : rng() & maxq);
  }
  for (int64_t i = 0; i < k; ++i)
    l.gIdx.push_back(group ? int32_t(i / group) : 0);
  if (shuffleGroups)
    std::shuffle(l.gIdx.begin(), l.gIdx.end(), rng);
  return l;
}

/// GPTQ tensors: qweight [K*b/32, N] (bit stream along K per column),
/// qzeros [G, N*b/32] (bit stream along N), scales [G, N].
std::vector<std::pair<std::string, Tensor>>
gptqTensors(const std::string &m, const IntLayer &l, bool v1) {
  std::vector<uint32_t> qw(size_t(l.k * l.bits / 32 * l.n), 0);
  for (int64_t nn = 0; nn < l.n; ++nn) {
    std::vector<uint32_t> column(size_t(l.k * l.bits / 32), 0);
    for (int64_t kk = 0; kk < l.k; ++kk)
      putBits(column, kk * l.bits, l.bits, l.q[size_t(kk * l.n + nn)]);
    for (size_t i = 0; i < column.size(); ++i)
      qw[i * size_t(l.n) + size_t(nn)] = column[i];
  }
  std::vector<uint32_t> qz;
  for (int64_t g = 0; g < l.groups(); ++g) {
    std::vector<uint32_t> row(size_t(l.n * l.bits / 32), 0);
    for (int64_t nn = 0; nn < l.n; ++nn) {
      uint32_t z = l.zero[size_t(g * l.n + nn)];
      putBits(row, nn * l.bits, l.bits, v1 ? (z - 1) & ((1u << l.bits) - 1) : z);
    }
    qz.insert(qz.end(), row.begin(), row.end());
  }
  return {{m + ".qweight", words({l.k * l.bits / 32, l.n}, qw)},
          {m + ".qzeros", words({l.groups(), l.n * l.bits / 32}, qz)},
          {m + ".scales", values(DType::F16, {l.groups(), l.n}, l.scale)},
          {m + ".g_idx", [&] {
             Tensor t(DType::I32, {l.k});
             std::memcpy(t.data.data(), l.gIdx.data(), size_t(l.k) * 4);
             return t;
           }()}};
}

void expectIntLayer(const std::vector<double> &d, const IntLayer &l,
                    const std::vector<int32_t> &perm = {}) {
  ASSERT_EQ(int64_t(d.size()), l.n * l.k);
  for (int64_t nn = 0; nn < l.n; ++nn)
    for (int64_t j = 0; j < l.k; ++j) {
      int64_t kk = perm.empty() ? j : perm[size_t(j)];
      ASSERT_EQ(d[size_t(nn * l.k + j)], l.value(kk, nn)) << nn << ", " << j;
    }
}
} // namespace

TEST(Adapters, GptqEveryWidthBothZeroConventions) {
  for (unsigned bits : {2u, 3u, 4u, 8u})
    for (bool v1 : {true, false})
      for (bool sym : {true, false}) {
        ModelDir dir;
        IntLayer l = randomIntLayer(64, 256, bits == 3 ? 64 : 128, bits, sym,
                                    bits * 10 + v1 * 2 + sym);
        dir.file("config.json",
                 std::string(R"({"torch_dtype": "float16", "quantization_config": {
                   "quant_method": "gptq", "bits": )") +
                     std::to_string(bits) + R"(, "group_size": )" +
                     std::to_string(l.group) + R"(, "sym": )" +
                     (sym ? "true" : "false") + R"(, "desc_act": false,
                   "checkpoint_format": ")" + (v1 ? "gptq" : "gptq_v2") + R"("}})");
        dir.tensors(gptqTensors("model.layers.0.mlp.down_proj", l, v1));
        LoadedLayer layer;
        std::vector<double> d =
            loadAndDequantize(dir, "model.layers.0.mlp.down_proj", &layer);
        expectIntLayer(d, l);
        EXPECT_EQ(layer.weight.zeroPoint,
                  sym ? ZeroPointKind::None : ZeroPointKind::Int)
            << bits << (v1 ? " v1" : " v2");
        EXPECT_EQ(layer.n, 64);
        EXPECT_EQ(layer.k, 256);
      }
}

TEST(Adapters, GptqActOrderPermutesK) {
  ModelDir dir;
  IntLayer l = randomIntLayer(32, 256, 64, 4, false, 77, /*shuffle=*/true);
  dir.file("config.json", R"({"quantization_config": {"quant_method": "gptq",
      "bits": 4, "group_size": 64, "sym": false, "desc_act": true,
      "checkpoint_format": "gptq_v2"}})");
  dir.tensors(gptqTensors("m", l, false));
  LoadedLayer layer;
  std::vector<double> d = loadAndDequantize(dir, "m", &layer);
  ASSERT_EQ(layer.kPermutation.size(), 256u);
  // Canonical column j is checkpoint column perm[j]; groups are contiguous.
  expectIntLayer(d, l, layer.kPermutation);
  for (int64_t j = 0; j < 256; ++j)
    EXPECT_EQ(l.gIdx[size_t(layer.kPermutation[size_t(j)])], j / 64);
}

TEST(Adapters, GptqUnequalGroupsAreRejected) {
  ModelDir dir;
  IntLayer l = randomIntLayer(32, 128, 64, 4, true, 5);
  l.gIdx[0] = 1; // group 1 now has 65 channels
  dir.file("config.json", R"({"quantization_config": {"quant_method": "gptq",
      "bits": 4, "group_size": 64, "desc_act": true}})");
  dir.tensors(gptqTensors("m", l, true));
  Result<LoadedLayer> layer = loadModule(dir, "m");
  ASSERT_FALSE(layer.ok());
  EXPECT_EQ(layer.error(), "m.g_idx: group 0 has 63 input channels; expected 64 "
                           "(act-order needs equal groups)");
}

namespace {
constexpr int kAwqOrder[8] = {0, 2, 4, 6, 1, 3, 5, 7};
/// AWQ packs 8 columns per word; nibble i holds column order[i].
std::vector<uint32_t> awqPack(const std::vector<uint32_t> &rowsByN, int64_t rows,
                              int64_t n) {
  std::vector<uint32_t> out(size_t(rows * n / 8), 0);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t w = 0; w < n / 8; ++w)
      for (int i = 0; i < 8; ++i)
        out[size_t(r * (n / 8) + w)] |=
            rowsByN[size_t(r * n + w * 8 + kAwqOrder[i])] << (4 * i);
  return out;
}
} // namespace

TEST(Adapters, AwqInterleaveAndAutoRound) {
  for (const char *config :
       {R"({"quantization_config": {"quant_method": "awq", "bits": 4, "group_size": 64,
           "zero_point": true, "version": "gemm"}})",
        R"({"quantization_config": {"quant_method": "auto-round", "bits": 4,
           "group_size": 64, "sym": false, "packing_format": "auto_round:auto_awq"}})"}) {
    ModelDir dir;
    IntLayer l = randomIntLayer(64, 128, 64, 4, false, 9);
    std::vector<uint32_t> zeros(l.zero.begin(), l.zero.end());
    dir.file("config.json", config);
    dir.tensors({{"m.qweight", words({128, 8}, awqPack(l.q, 128, 64))},
                 {"m.qzeros", words({2, 8}, awqPack(zeros, 2, 64))},
                 {"m.scales", values(DType::F16, {2, 64}, l.scale)}});
    expectIntLayer(loadAndDequantize(dir, "m"), l);
  }
}

TEST(Adapters, AutoRoundGptqPacking) {
  ModelDir dir;
  IntLayer l = randomIntLayer(32, 128, 32, 4, false, 12);
  dir.file("config.json", R"({"quantization_config": {"quant_method": "auto-round",
      "bits": 4, "group_size": 32, "sym": false, "data_type": "int",
      "packing_format": "auto_round:auto_gptq"}})");
  dir.tensors(gptqTensors("m", l, /*v1=*/true));
  expectIntLayer(loadAndDequantize(dir, "m"), l);
}

TEST(Adapters, CompressedTensorsPackQuantized) {
  for (bool symmetric : {true, false}) {
    ModelDir dir;
    int64_t n = 64, k = 256, g = 32, groups = k / g;
    std::mt19937 rng(3);
    // Signed values in [-8, 7], stored offset-binary (value + 8).
    std::vector<int> q(size_t(n * k)), zp(size_t(n * groups));
    std::vector<double> scale(size_t(n * groups));
    for (int &v : q)
      v = int(rng() % 16) - 8;
    for (int &z : zp)
      z = symmetric ? 0 : int(rng() % 16) - 8;
    for (double &s : scale)
      s = as(DType::BF16, 0.01 + (rng() % 100) * 1e-3);
    std::vector<uint32_t> packed(size_t(n * k / 8), 0);
    for (int64_t r = 0; r < n; ++r)
      for (int64_t c = 0; c < k; ++c)
        putBits(packed, (r * k + c) * 4, 4, uint32_t(q[size_t(r * k + c)] + 8));
    std::vector<uint32_t> zpPacked(size_t(n / 8 * groups), 0);
    for (int64_t gi = 0; gi < groups; ++gi) {
      std::vector<uint32_t> column(size_t(n / 8), 0);
      for (int64_t r = 0; r < n; ++r)
        putBits(column, r * 4, 4, uint32_t(zp[size_t(r * groups + gi)] + 8));
      for (int64_t i = 0; i < n / 8; ++i)
        zpPacked[size_t(i * groups + gi)] = column[size_t(i)];
    }
    dir.file("config.json", std::string(R"({"quantization_config": {
        "quant_method": "compressed-tensors", "format": "pack-quantized",
        "ignore": ["lm_head", "re:.*gate$"],
        "config_groups": {"group_0": {"targets": ["Linear"],
          "weights": {"num_bits": 4, "type": "int", "symmetric": )") +
        (symmetric ? "true" : "false") + R"(, "strategy": "group", "group_size": 32}}}}})");
    std::vector<std::pair<std::string, Tensor>> ts = {
        {"layers.0.up.weight_packed", words({n, k / 8}, packed)},
        {"layers.0.up.weight_scale", values(DType::BF16, {n, groups}, scale)},
        {"layers.0.up.weight_shape", [] {
           Tensor t(DType::I64, {2});
           int64_t v[2] = {64, 256};
           std::memcpy(t.data.data(), v, 16);
           return t;
         }()},
        {"layers.0.gate.weight_packed", words({n, k / 8}, packed)},
        {"layers.0.gate.weight_scale", values(DType::BF16, {n, groups}, scale)}};
    if (!symmetric)
      ts.push_back({"layers.0.up.weight_zero_point", words({n / 8, groups}, zpPacked)});
    dir.tensors(ts);
    std::vector<double> d = loadAndDequantize(dir, "layers.0.up");
    ASSERT_EQ(int64_t(d.size()), n * k);
    for (int64_t r = 0; r < n; ++r)
      for (int64_t c = 0; c < k; ++c)
        ASSERT_EQ(d[size_t(r * k + c)],
                  (q[size_t(r * k + c)] - zp[size_t(r * groups + c / g)]) *
                      scale[size_t(r * groups + c / g)]);
    // The ignore list's regex keeps gate unquantized.
    Result<Checkpoint> c = Checkpoint::open(dir.path);
    Result<QuantConfig> cfg = QuantConfig::fromCheckpoint(*c);
    EXPECT_EQ(quantizedModules(*c, *cfg), std::vector<std::string>{"layers.0.up"});
  }
}

namespace {
std::vector<uint8_t> randomFp8Codes(size_t count, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> out(count);
  for (uint8_t &b : out) {
    do
      b = uint8_t(rng());
    while ((b & 0x7F) == 0x7F); // skip NaN
  }
  return out;
}
/// Two e2m1 codes per byte, low nibble first.
std::vector<uint8_t> packFp4(const std::vector<uint8_t> &codes) {
  std::vector<uint8_t> out(codes.size() / 2);
  for (size_t i = 0; i < out.size(); ++i)
    out[i] = uint8_t(codes[2 * i] | (codes[2 * i + 1] << 4));
  return out;
}
} // namespace

TEST(Adapters, Fp8BlockAndChannelAndTensor) {
  int64_t n = 192, k = 256;
  std::vector<uint8_t> codes = randomFp8Codes(size_t(n * k), 4);
  struct Case {
    const char *config;
    const char *scaleName;
    std::vector<int64_t> scaleShape;
  } cases[] = {
      {R"({"quantization_config": {"quant_method": "fp8", "weight_block_size": [128, 128],
          "activation_scheme": "dynamic"}})",
       ".weight_scale_inv", {2, 2}},
      {R"({"quantization_config": {"quant_method": "fp8", "activation_scheme": "static"}})",
       ".weight_scale", {192, 1}},
      {R"({"quantization_config": {"quant_method": "fp8"}})", ".weight_scale", {1}},
  };
  for (const Case &cs : cases) {
    ModelDir dir;
    std::vector<double> scales;
    std::mt19937 rng(8);
    for (int64_t i = 0; i < numElements(cs.scaleShape); ++i)
      scales.push_back(as(DType::F32, 1e-3 * (1 + rng() % 997)));
    dir.file("config.json", cs.config);
    dir.tensors({{std::string("w") + ".weight", bytes(DType::F8_E4M3, {n, k}, codes)},
                 {std::string("w") + cs.scaleName,
                  values(DType::F32, cs.scaleShape, scales)}});
    LoadedLayer layer;
    std::vector<double> d = loadAndDequantize(dir, "w", &layer);
    ASSERT_EQ(int64_t(d.size()), n * k);
    for (int64_t r = 0; r < n; ++r)
      for (int64_t c = 0; c < k; ++c) {
        double s = scales.size() == 4 ? scales[size_t((r / 128) * 2 + c / 128)]
                   : scales.size() == 1 ? scales[0]
                                        : scales[size_t(r)];
        ASSERT_EQ(d[size_t(r * k + c)],
                  decode(ScalarType::e4m3(), codes[size_t(r * k + c)]) * s);
      }
    EXPECT_EQ(layer.input.type, ScalarType::e4m3());
  }
}

TEST(Adapters, Nvfp4CompressedTensorsAndModelOpt) {
  int64_t n = 64, k = 128;
  std::mt19937 rng(6);
  std::vector<uint8_t> codes(size_t(n * k));
  for (uint8_t &c : codes)
    c = uint8_t(rng() % 16);
  std::vector<uint8_t> scaleCodes = randomFp8Codes(size_t(n * k / 16), 7);
  for (uint8_t &s : scaleCodes)
    s &= 0x7F; // positive scales
  for (bool modelopt : {false, true}) {
    ModelDir dir;
    double stored = 0.0625; // compressed-tensors stores 1 / global
    if (modelopt) {
      dir.file("hf_quant_config.json", R"({"producer": {"name": "modelopt"},
          "quantization": {"quant_algo": "NVFP4", "group_size": 16,
                           "exclude_modules": ["lm_head", "*.router"]}})");
      dir.tensors({{"l.weight", bytes(DType::U8, {n, k / 2}, packFp4(codes))},
                   {"l.weight_scale", bytes(DType::F8_E4M3, {n, k / 16}, scaleCodes)},
                   {"l.weight_scale_2", values(DType::F32, {}, {stored})},
                   {"l.router.weight", bytes(DType::U8, {n, k / 2}, packFp4(codes))},
                   {"l.router.weight_scale", bytes(DType::F8_E4M3, {n, k / 16}, scaleCodes)}});
    } else {
      dir.file("config.json", R"({"quantization_config": {"quant_method": "compressed-tensors",
          "format": "nvfp4-pack-quantized", "config_groups": {"g": {"targets": ["Linear"],
          "weights": {"num_bits": 4, "type": "float", "strategy": "tensor_group", "group_size": 16},
          "input_activations": {"num_bits": 4, "type": "float", "strategy": "tensor_group",
                                "group_size": 16, "dynamic": "local"}}}}})");
      dir.tensors({{"l.weight_packed", bytes(DType::U8, {n, k / 2}, packFp4(codes))},
                   {"l.weight_scale", bytes(DType::F8_E4M3, {n, k / 16}, scaleCodes)},
                   {"l.weight_global_scale", values(DType::F32, {1}, {stored})}});
    }
    LoadedLayer layer;
    std::vector<double> d = loadAndDequantize(dir, "l", &layer);
    double global = modelopt ? stored : 1.0 / stored;
    ASSERT_EQ(int64_t(d.size()), n * k);
    for (int64_t i = 0; i < n * k; ++i)
      ASSERT_EQ(d[size_t(i)], decode(ScalarType::e2m1(), codes[size_t(i)]) *
                                  decode(ScalarType::e4m3(), scaleCodes[size_t(i / 16)]) *
                                  global);
    EXPECT_EQ(layer.weight.granularity, Granularity::GroupTensor);
    EXPECT_EQ(layer.input.type, ScalarType::e2m1());
    if (modelopt) {
      Result<Checkpoint> c = Checkpoint::open(dir.path);
      Result<QuantConfig> cfg = QuantConfig::fromCheckpoint(*c);
      EXPECT_EQ(quantizedModules(*c, *cfg), std::vector<std::string>{"l"});
    }
  }
}

TEST(Adapters, MxFormats) {
  int64_t n = 32, k = 128;
  std::mt19937 rng(10);
  std::vector<uint8_t> codes(size_t(n * k));
  for (uint8_t &c : codes)
    c = uint8_t(rng() % 16);
  std::vector<uint8_t> exps(size_t(n * k / 32));
  for (uint8_t &e : exps)
    e = uint8_t(120 + rng() % 16);
  auto expectMx = [&](const std::vector<double> &d, ScalarType t,
                      const std::vector<uint8_t> &c) {
    ASSERT_EQ(int64_t(d.size()), n * k);
    for (int64_t i = 0; i < n * k; ++i)
      ASSERT_EQ(d[size_t(i)], decode(t, c[size_t(i)]) * std::ldexp(1.0, exps[size_t(i / 32)] - 127));
  };
  { // compressed-tensors mxfp4
    ModelDir dir;
    dir.file("config.json", R"({"quantization_config": {"quant_method": "compressed-tensors",
        "format": "mxfp4-pack-quantized", "config_groups": {"g": {"targets": ["Linear"],
        "weights": {"num_bits": 4, "type": "float", "strategy": "group", "group_size": 32}}}}})");
    dir.tensors({{"l.weight_packed", bytes(DType::U8, {n, k / 2}, packFp4(codes))},
                 {"l.weight_scale", bytes(DType::U8, {n, k / 32}, exps)}});
    expectMx(loadAndDequantize(dir, "l"), ScalarType::e2m1(), codes);
  }
  { // ModelOpt MXFP8
    ModelDir dir;
    std::vector<uint8_t> fp8 = randomFp8Codes(size_t(n * k), 11);
    dir.file("config.json", R"({"quantization_config": {"quant_method": "modelopt",
        "quant_algo": "MXFP8"}})");
    dir.tensors({{"l.weight", bytes(DType::F8_E4M3, {n, k}, fp8)},
                 {"l.weight_scale", bytes(DType::U8, {n, k / 32}, exps)}});
    expectMx(loadAndDequantize(dir, "l"), ScalarType::e4m3(), fp8);
  }
  { // Quark fp4
    ModelDir dir;
    dir.file("config.json", R"({"quantization_config": {"quant_method": "quark",
        "global_quant_config": {"weight": {"dtype": "fp4", "qscheme": "per_group",
        "group_size": 32}}}})");
    dir.tensors({{"l.weight", bytes(DType::U8, {n, k / 2}, packFp4(codes))},
                 {"l.weight_scale", bytes(DType::U8, {n, k / 32}, exps)}});
    expectMx(loadAndDequantize(dir, "l"), ScalarType::e2m1(), codes);
  }
}

TEST(Adapters, GptOssExperts) {
  int64_t e = 3, n = 16, k = 64;
  std::mt19937 rng(12);
  std::vector<uint8_t> codes(size_t(e * n * k));
  for (uint8_t &c : codes)
    c = uint8_t(rng() % 16);
  std::vector<uint8_t> exps(size_t(e * n * k / 32));
  for (uint8_t &x : exps)
    x = uint8_t(124 + rng() % 8);
  std::vector<double> bias(size_t(e * n));
  for (double &b : bias)
    b = as(DType::BF16, (int(rng() % 200) - 100) * 0.01);
  ModelDir dir;
  dir.file("config.json", R"({"torch_dtype": "bfloat16", "quantization_config": {
      "quant_method": "mxfp4", "modules_to_not_convert": ["model.layers.*.self_attn",
      "model.layers.*.mlp.router", "model.embed_tokens", "lm_head"]}})");
  std::string m = "model.layers.0.mlp.experts.gate_up_proj";
  dir.tensors({{m + "_blocks", bytes(DType::U8, {e, n, k / 32, 16}, packFp4(codes))},
               {m + "_scales", bytes(DType::U8, {e, n, k / 32}, exps)},
               {m + "_bias", values(DType::BF16, {e, n}, bias)}});
  LoadedLayer layer;
  std::vector<double> d = loadAndDequantize(dir, m, &layer);
  ASSERT_EQ(int64_t(d.size()), e * n * k);
  for (int64_t i = 0; i < e * n * k; ++i)
    ASSERT_EQ(d[size_t(i)], decode(ScalarType::e2m1(), codes[size_t(i)]) *
                                std::ldexp(1.0, exps[size_t(i / 32)] - 127));
  EXPECT_EQ(layer.weight.experts, 3);
  EXPECT_TRUE(layer.weight.bias);
  EXPECT_EQ(biasValues(layer.weight, layer.tensors, n), bias);
}

TEST(Adapters, QuarkInt4ReorderAndUint4) {
  int64_t n = 16, k = 128, g = 64;
  std::mt19937 rng(13);
  for (bool reorder : {false, true})
    for (bool isSigned : {true, false}) {
      std::vector<uint32_t> codes(size_t(n * k));
      for (uint32_t &c : codes)
        c = rng() % 16;
      std::vector<double> scale(size_t(n * k / g));
      for (double &s : scale)
        s = as(DType::F16, 0.01 * (1 + rng() % 50));
      std::vector<uint32_t> zp(size_t(n * k / g));
      for (uint32_t &z : zp)
        z = rng() % 16;
      std::vector<uint32_t> packed(size_t(n * k / 8), 0);
      for (int64_t r = 0; r < n; ++r)
        for (int64_t w = 0; w < k / 8; ++w)
          for (int i = 0; i < 8; ++i) {
            int col = reorder ? kAwqOrder[i] : i;
            packed[size_t(r * k / 8 + w)] |= codes[size_t(r * k + w * 8 + col)] << (4 * i);
          }
      ModelDir dir;
      dir.file("config.json", std::string(R"({"quantization_config": {"quant_method": "quark",
          "export": {"pack_method": ")") + (reorder ? "reorder" : "order") +
          R"("}, "global_quant_config": {"weight": {"dtype": ")" +
          (isSigned ? "int4" : "uint4") + R"(", "qscheme": "per_group", "group_size": 64,
          "symmetric": )" + (isSigned ? "true" : "false") + "}}}}");
      std::vector<std::pair<std::string, Tensor>> ts = {
          {"l.weight", words({n, k / 8}, packed)},
          {"l.weight_scale", values(DType::F16, {n, k / g}, scale)}};
      if (!isSigned) {
        Tensor z(DType::I32, {n, k / g});
        std::memcpy(z.data.data(), zp.data(), zp.size() * 4);
        ts.push_back({"l.weight_zero_point", z});
      }
      dir.tensors(ts);
      std::vector<double> d = loadAndDequantize(dir, "l");
      ASSERT_EQ(int64_t(d.size()), n * k);
      for (int64_t r = 0; r < n; ++r)
        for (int64_t c = 0; c < k; ++c) {
          uint32_t q = codes[size_t(r * k + c)];
          double v = isSigned ? (q >= 8 ? double(q) - 16 : double(q))
                              : double(q) - zp[size_t(r * (k / g) + c / g)];
          ASSERT_EQ(d[size_t(r * k + c)], v * scale[size_t(r * (k / g) + c / g)])
              << (reorder ? "reorder " : "order ") << (isSigned ? "int4" : "uint4");
        }
    }
}

TEST(Adapters, Int8CompressedTensorsAndQuark) {
  int64_t n = 32, k = 64;
  std::mt19937 rng(14);
  std::vector<uint8_t> q(size_t(n * k));
  for (uint8_t &b : q)
    b = uint8_t(rng());
  std::vector<double> scale(static_cast<size_t>(n));
  for (double &s : scale)
    s = as(DType::F32, 1e-3 * (1 + rng() % 999));
  for (int quark = 0; quark < 2; ++quark) {
    ModelDir dir;
    dir.file("config.json", quark
        ? R"({"quantization_config": {"quant_method": "quark", "global_quant_config": {
             "weight": {"dtype": "int8", "qscheme": "per_channel", "symmetric": true},
             "input_tensors": {"dtype": "int8", "qscheme": "per_tensor", "is_dynamic": false}}}})"
        : R"({"quantization_config": {"quant_method": "compressed-tensors",
             "format": "int-quantized", "config_groups": {"g": {"targets": ["Linear"],
             "weights": {"num_bits": 8, "type": "int", "strategy": "channel"},
             "input_activations": {"num_bits": 8, "type": "int", "strategy": "token",
                                   "dynamic": true}}}}})");
    dir.tensors({{"l.weight", bytes(DType::I8, {n, k}, q)},
                 {"l.weight_scale", values(DType::F32, {n, 1}, scale)}});
    LoadedLayer layer;
    std::vector<double> d = loadAndDequantize(dir, "l", &layer);
    ASSERT_EQ(int64_t(d.size()), n * k);
    for (int64_t i = 0; i < n * k; ++i)
      ASSERT_EQ(d[size_t(i)], double(int8_t(q[size_t(i)])) * scale[size_t(i / k)]);
    EXPECT_EQ(layer.input.type, ScalarType::sint(8));
    EXPECT_EQ(layer.input.scaling, quark ? ActScaling::Static : ActScaling::Token);
  }
}

TEST(Adapters, BitNet) {
  int64_t n = 16, k = 32;
  std::mt19937 rng(15);
  std::vector<int> value(size_t(n * k));
  for (int &v : value)
    v = int(rng() % 3) - 1;
  std::vector<uint8_t> packed(size_t(n / 4 * k), 0);
  for (int64_t r = 0; r < n / 4; ++r)
    for (int64_t c = 0; c < k; ++c)
      for (int64_t j = 0; j < 4; ++j)
        packed[size_t(r * k + c)] |=
            uint8_t((value[size_t((r + j * n / 4) * k + c)] + 1) << (2 * j));
  ModelDir dir;
  dir.file("config.json", R"({"quantization_config": {"quant_method": "bitnet"}})");
  dir.tensors({{"l.weight", bytes(DType::U8, {n / 4, k}, packed)},
               {"l.weight_scale", values(DType::BF16, {1}, {4.0})}});
  std::vector<double> d = loadAndDequantize(dir, "l");
  ASSERT_EQ(int64_t(d.size()), n * k);
  for (int64_t i = 0; i < n * k; ++i)
    ASSERT_EQ(d[size_t(i)], value[size_t(i)] * 0.25);
}

TEST(Adapters, FusedShardsWithDifferentTensorScales) {
  ModelDir dir;
  int64_t n = 64, k = 128;
  std::vector<uint8_t> a = randomFp8Codes(size_t(n * k), 20),
                       b = randomFp8Codes(size_t(n * k), 21);
  dir.file("config.json", R"({"quantization_config": {"quant_method": "fp8"}})");
  dir.tensors({{"q.weight", bytes(DType::F8_E4M3, {n, k}, a)},
               {"q.weight_scale", values(DType::F32, {1}, {0.5})},
               {"k.weight", bytes(DType::F8_E4M3, {n, k}, b)},
               {"k.weight_scale", values(DType::F32, {1}, {0.125})}});
  Result<Checkpoint> c = Checkpoint::open(dir.path);
  Result<QuantConfig> cfg = QuantConfig::fromCheckpoint(*c);
  Result<LoadedLayer> q = loadLayer(*c, *cfg, "q"), kk = loadLayer(*c, *cfg, "k");
  ASSERT_TRUE(q.ok() && kk.ok());
  Result<LoadedLayer> fused = fuseShards({*q, *kk}, DType::BF16);
  ASSERT_TRUE(fused.ok()) << fused.error();
  EXPECT_EQ(fused->n, 2 * n);
  EXPECT_EQ(fused->weight.granularity, Granularity::Channel);
  EXPECT_EQ(fused->weight.scaleType, ScalarType::f32());
  Result<std::vector<double>> d =
      dequantizeWeights(fused->weight, fused->tensors, fused->n, fused->k);
  ASSERT_TRUE(d.ok()) << d.error();
  for (int64_t i = 0; i < n * k; ++i) {
    ASSERT_EQ((*d)[size_t(i)], decode(ScalarType::e4m3(), a[size_t(i)]) * 0.5);
    ASSERT_EQ((*d)[size_t(n * k + i)], decode(ScalarType::e4m3(), b[size_t(i)]) * 0.125);
  }
}

TEST(Adapters, ConfigErrorsNameTheField) {
  struct Case {
    std::string config, error;
  } cases[] = {
      {R"({"quantization_config": {"quant_method": "exl2"}})",
       "D/config.json: quantization_config: quant_method 'exl2' is not supported; "
       "expected one of gptq, awq, auto-round, compressed-tensors, fp8, modelopt, "
       "mxfp4, quark, bitnet"},
      {R"({"quantization_config": {"quant_method": "gptq", "bits": "four"}})",
       "D/config.json: quantization_config: 'bits': expected an integer, got \"four\""},
      {R"({"quantization_config": {"quant_method": "awq", "version": "gemv"}})",
       "D/config.json: quantization_config: 'version': expected gemm (the packed "
       "layout Humming reads), got 'gemv'"},
      {R"({"quantization_config": {"quant_method": "modelopt", "quant_algo": "W4A8_AWQ"}})",
       "D/config.json: quantization_config: 'quant_algo': expected FP8, NVFP4 or "
       "MXFP8, got 'W4A8_AWQ' (it needs per-channel activation pre-scaling, "
       "pre_quant_scale, which Humming does not implement)"},
      {R"({"quantization_config": {"quant_method": "compressed-tensors",
           "config_groups": {"g": {"targets": ["Linear"],
           "weights": {"num_bits": 4, "strategy": "rows"}}}}})",
       "D/config.json: quantization_config: config_groups 'g': weights: 'strategy': "
       "expected channel, group, block, tensor or tensor_group, got 'rows'"},
      {R"({"quantization_config": {"quant_method": "auto-round", "act_bits": 8}})",
       "D/config.json: quantization_config: 'act_bits': expected 16 (activation "
       "quantization is not supported for auto-round checkpoints), got 8"},
      {R"({"quantization_config": {"quant_method": "gptq", "dynamic": {"-:(": {}}}})",
       "D/config.json: quantization_config: dynamic '-:(': invalid regular expression"},
      // Patterns std::regex cannot take safely (humming-fuzz-quant-config:
      // a huge repetition count overflowed inside libstdc++).
      {R"({"quantization_config": {"quant_method": "gptq", "dynamic": {"-:a{99999999999999999999}": {}}}})",
       "D/config.json: quantization_config: dynamic '-:a{99999999999999999999}': "
       "unsupported regular expression (expected repetition counts of at most 1000)"},
      // ... and an unclosed brace's count (read before the missing brace is
      // noticed).
      {R"({"quantization_config": {"quant_method": "gptq", "dynamic": {"-:he+ad{02222222222222222222": {}}}})",
       "D/config.json: quantization_config: dynamic '-:he+ad{02222222222222222222': "
       "unsupported regular expression (expected repetition counts of at most 1000)"},
      {R"({"quantization_config": {"quant_method": "gptq", "dynamic": {"-:(a)\\77777777777777777777": {}}}})",
       "D/config.json: quantization_config: dynamic '-:(a)\\77777777777777777777': "
       "unsupported regular expression (expected back-references of at most two "
       "digits)"},
      {R"({"quantization_config": {"quant_method": "gptq", "dynamic": {"-:.*((x+)y)*z": {}}}})",
       "D/config.json: quantization_config: dynamic '-:.*((x+)y)*z': unsupported "
       "regular expression (expected no unbounded repetition of a group that holds "
       "one (as (a+)+: exponential matching time))"},
      {"{\"quantization_config\": {\"quant_method\": \"gptq\", \"dynamic\": {\"-:" +
           std::string(300, 'a') + "\": {}}}}",
       "D/config.json: quantization_config: dynamic '-:" + std::string(75, 'a') +
           "...': unsupported regular expression (expected at most 256 "
           "characters, got 300)"},
      {R"j({"quantization_config": {"quant_method": "gptq", "dynamic": {"-:(((((((((a)))))))))": {}}}})j",
       "D/config.json: quantization_config: dynamic '-:(((((((((a)))))))))': "
       "unsupported regular expression (expected groups nested at most 8 deep)"},
      {R"({"quantization_config": {"quant_method": "compressed-tensors",
          "config_groups": {"g": {"targets": ["re:.*(q|k|v)_proj{1,2}$"],
          "weights": {"num_bits": 4, "strategy": "group", "group_size": 300000000000}}}}})",
       "D/config.json: quantization_config: config_groups 'g': weights: 'group_size': "
       "expected an integer in -1 .. 1048576, got 300000000000"},
      {R"({"quantization_config": {"quant_method": "gptq", "bits": 4294967300}})",
       "D/config.json: quantization_config: 'bits': expected an integer in -1 .. "
       "1048576, got 4294967300"},
      {R"({"torch_dtype": "float16"})",
       "D: no quantization_config in config.json and no hf_quant_config.json: the "
       "checkpoint is not quantized"},
      // A zero block size divided the scale shapes by zero (SIGFPE); a
      // negative or huge one gave nonsense or overflowing shapes.
      {R"({"quantization_config": {"quant_method": "fp8", "weight_block_size": [128, 0]}})",
       "D/config.json: quantization_config: 'weight_block_size': expected [n, k] "
       "with sizes in 1 .. 1048576, got [128, 0]"},
      {R"({"quantization_config": {"quant_method": "fp8", "weight_block_size": [-1, 128]}})",
       "D/config.json: quantization_config: 'weight_block_size': expected [n, k] "
       "with sizes in 1 .. 1048576, got [-1, 128]"},
      {R"({"quantization_config": {"quant_method": "compressed-tensors",
          "config_groups": {"g": {"targets": ["Linear"], "weights": {"num_bits": 8,
          "type": "float", "strategy": "block", "block_structure": [0, 128]}}}}})",
       "D/config.json: quantization_config: config_groups 'g': weights: "
       "'block_structure': expected [n, k] with sizes in 1 .. 1048576, got [0, 128]"},
      {R"({"quantization_config": {"quant_method": "fp8",
          "weight_block_size": [128, 4611686018427387904]}})",
       "D/config.json: quantization_config: 'weight_block_size': expected [n, k] "
       "with sizes in 1 .. 1048576, got [128, 4611686018427387904]"},
  };
  for (const Case &c : cases) {
    Result<Json> j = parseJson(c.config);
    ASSERT_TRUE(j.ok());
    Result<QuantConfig> q = QuantConfig::fromJson(*j, nullptr, "D");
    ASSERT_FALSE(q.ok()) << c.config;
    EXPECT_EQ(q.error(), c.error);
  }
}

TEST(Adapters, TensorErrorsNameTheTensor) {
  ModelDir dir;
  IntLayer l = randomIntLayer(32, 128, 64, 4, false, 30);
  auto ts = gptqTensors("m", l, false);
  ts[2].second = values(DType::F16, {4, 32}, std::vector<double>(128, 1.0)); // scales
  dir.file("config.json", R"({"quantization_config": {"quant_method": "gptq",
      "bits": 4, "group_size": 64, "sym": false, "checkpoint_format": "gptq_v2",
      "dynamic": {"-:.*skip.*": {}}}})");
  dir.tensors(ts);
  Result<Checkpoint> c = Checkpoint::open(dir.path);
  Result<QuantConfig> q = QuantConfig::fromCheckpoint(*c);
  Result<LoadedLayer> layer = loadLayer(*c, *q, "m");
  ASSERT_FALSE(layer.ok());
  EXPECT_EQ(layer.error(), "m.scales: expected shape [2, 32] ([K / group_size, N]), "
                           "got [4, 32]");
  layer = loadLayer(*c, *q, "other");
  EXPECT_EQ(layer.error(), "other: missing tensor 'other.qweight' (gptq gptq_v2 "
                           "4-bit group 64 asymmetric)");
  layer = loadLayer(*c, *q, "model.skip.proj");
  EXPECT_EQ(layer.error(), "model.skip.proj: the quantization config leaves this "
                           "module unquantized");
}

TEST(Adapters, ZeroDimensionsAreRefusedByName) {
  // A zero dimension needs no bytes, so safetensors accepts it beside any
  // other: a 2^31 x 0 "layer" was loaded, 2^40 x 0 hung in a loop per row.
  for (std::vector<int64_t> shape :
       {std::vector<int64_t>{int64_t(1) << 31, 0}, {int64_t(1) << 40, 0},
        {0, int64_t(1) << 40}}) {
    ModelDir dir;
    dir.file("config.json",
             R"({"quantization_config": {"quant_method": "fp8"}})");
    dir.tensors({{"w.weight", bytes(DType::F8_E4M3, shape, {})},
                 {"w.weight_scale", values(DType::F32, {1}, {1.0})}});
    Result<LoadedLayer> layer = loadModule(dir, "w");
    ASSERT_FALSE(layer.ok());
    EXPECT_EQ(layer.error(),
              concat("w.weight: expected no zero dimension, got shape [",
                     shape[0], ", ", shape[1], "]"));
  }
}

TEST(Adapters, ValuesReadFromTheFileAreCheckedBeforeArithmetic) {
  // compressed-tensors' weight_shape holds K as data: K = 2^62 overflowed
  // K * bits. Now it is a mismatch like any other, with the values named.
  for (int64_t kValue : {int64_t(1) << 62, std::numeric_limits<int64_t>::max(),
                         int64_t(-64)}) {
    ModelDir dir;
    dir.file("config.json", R"({"quantization_config": {
        "quant_method": "compressed-tensors", "format": "pack-quantized",
        "config_groups": {"g": {"targets": ["Linear"], "weights": {"num_bits": 4,
        "type": "int", "symmetric": true, "strategy": "channel"}}}}})");
    Tensor shape(DType::I64, {2});
    int64_t v[2] = {64, kValue};
    std::memcpy(shape.data.data(), v, 16);
    dir.tensors({{"l.weight_packed", words({64, 32}, std::vector<uint32_t>(64 * 32))},
                 {"l.weight_scale", values(DType::F16, {64, 1}, std::vector<double>(64, 1))},
                 {"l.weight_shape", shape}});
    Result<LoadedLayer> layer = loadModule(dir, "l");
    ASSERT_FALSE(layer.ok());
    EXPECT_EQ(layer.error(),
              concat("l.weight_shape: expected [64, K] with ceil(K * 4 / 32) = 32 "
                     "words per row, got [64, ", kValue, "]"));
  }
}

TEST(Adapters, CheckedArithmetic) {
  EXPECT_EQ(checkedMul(int64_t(1) << 31, int64_t(1) << 31), int64_t(1) << 62);
  EXPECT_EQ(checkedMul(int64_t(1) << 62, 2), std::nullopt);
  EXPECT_EQ(checkedMul(int64_t(1) << 20, int64_t(1) << 20, int64_t(1) << 20), int64_t(1) << 60);
  EXPECT_EQ(checkedMul(int64_t(1) << 30, int64_t(1) << 30, 16), std::nullopt);
  EXPECT_EQ(checkedMul(-1, std::numeric_limits<int64_t>::min()), std::nullopt);
  EXPECT_EQ(checkedAdd(std::numeric_limits<int64_t>::max(), 1), std::nullopt);
  EXPECT_EQ(checkedAdd(-5, 3), -2);
  EXPECT_EQ(checkedCeilDiv(std::numeric_limits<int64_t>::max(), 32),
            std::numeric_limits<int64_t>::max() / 32 + 1);
  EXPECT_EQ(checkedCeilDiv(64, 32), 2);
  EXPECT_EQ(checkedCeilDiv(0, 32), 0);
  EXPECT_EQ(checkedCeilDiv(1, 0), std::nullopt);
  EXPECT_EQ(checkedCeilDiv(-1, 2), std::nullopt);
  EXPECT_TRUE(isLayerSize(kMaxSize));
  EXPECT_FALSE(isLayerSize(kMaxSize + 1));
  EXPECT_FALSE(isLayerSize(0));
}

TEST(Adapters, HostSchemaTextMatchesTheDialect) {
  // The dialect's printer is checked against this text in the dialect tests;
  // here the host side covers every field.
  WeightSchema w;
  w.type = ScalarType::uint(4);
  w.granularity = Granularity::Group;
  w.groupK = 128;
  w.zeroPoint = ZeroPointKind::Int;
  w.bias = true;
  w.experts = 8;
  w.padN = 64;
  w.format = SourceFormat::GPTQv2;
  EXPECT_EQ(formatWeightSchema(w),
            "#humming.weight_schema<type = ui4, scale = f16, granularity = group<128>, "
            "zero_point = int, bias = true, experts = 8, pad_n = 64, format = gptq_v2>");
  EXPECT_EQ(formatInputSchema({ScalarType::e4m3(), ActScaling::Group, 128}),
            "#humming.input_schema<type = f8E4M3FN, scaling = group<128>>");
}

TEST(Adapters, GptqPerChannel) {
  ModelDir dir;
  IntLayer l = randomIntLayer(32, 128, 0, 4, false, 40);
  dir.file("config.json", R"({"quantization_config": {"quant_method": "gptq",
      "bits": 4, "group_size": -1, "sym": false, "checkpoint_format": "gptq_v2"}})");
  auto ts = gptqTensors("m", l, false);
  ts.pop_back(); // no g_idx
  dir.tensors(ts);
  LoadedLayer layer;
  expectIntLayer(loadAndDequantize(dir, "m", &layer), l);
  EXPECT_EQ(layer.weight.granularity, Granularity::Channel);
}

TEST(Adapters, CompressedTensorsFloatBlocksAndOcpMxfp4) {
  int64_t n = 256, k = 384;
  std::vector<uint8_t> codes = randomFp8Codes(size_t(n * k), 41);
  std::vector<double> scales = {0.5, 0.25, 0.125, 1.0, 2.0, 4.0};
  {
    ModelDir dir;
    dir.file("config.json", R"({"quantization_config": {"quant_method": "compressed-tensors",
        "format": "float-quantized", "config_groups": {"g": {"targets": ["Linear"],
        "weights": {"num_bits": 8, "type": "float", "strategy": "block",
                    "block_structure": [128, 128]},
        "input_activations": {"num_bits": 8, "type": "float", "strategy": "group",
                              "group_size": 128}}}}})");
    dir.tensors({{"l.weight", bytes(DType::F8_E4M3, {n, k}, codes)},
                 {"l.weight_scale", values(DType::F32, {2, 3}, scales)}});
    LoadedLayer layer;
    std::vector<double> d = loadAndDequantize(dir, "l", &layer);
    ASSERT_EQ(int64_t(d.size()), n * k);
    for (int64_t r = 0; r < n; ++r)
      for (int64_t c = 0; c < k; ++c)
        ASSERT_EQ(d[size_t(r * k + c)], decode(ScalarType::e4m3(), codes[size_t(r * k + c)]) *
                                            scales[size_t((r / 128) * 3 + c / 128)]);
    EXPECT_EQ(layer.weight.granularity, Granularity::Block);
    EXPECT_EQ(layer.input.scaling, ActScaling::Group);
  }
  {
    ModelDir dir;
    std::mt19937 rng(42);
    std::vector<uint8_t> fp4(size_t(64 * 64)), exps(size_t(64 * 2));
    for (uint8_t &c : fp4)
      c = uint8_t(rng() % 16);
    for (uint8_t &e : exps)
      e = uint8_t(125 + rng() % 5);
    dir.file("config.json", R"({"quantization_config": {"quant_method": "mxfp4"}})");
    dir.tensors({{"l.weight", bytes(DType::U8, {64, 32}, packFp4(fp4))},
                 {"l.weight_scale", bytes(DType::U8, {64, 2}, exps)}});
    std::vector<double> d = loadAndDequantize(dir, "l");
    ASSERT_EQ(d.size(), fp4.size());
    for (size_t i = 0; i < d.size(); ++i)
      ASSERT_EQ(d[i], decode(ScalarType::e2m1(), fp4[i]) * std::ldexp(1.0, exps[i / 32] - 127));
  }
}

TEST(Adapters, FusedNvfp4ShardsFoldUnequalGlobals) {
  int64_t n = 32, k = 64;
  std::mt19937 rng(43);
  std::vector<uint8_t> codes(size_t(n * k)), sc(size_t(n * k / 16));
  for (uint8_t &c : codes)
    c = uint8_t(rng() % 16);
  for (uint8_t &s : sc)
    s = uint8_t(0x30 + rng() % 16); // e4m3 scales around 1
  ModelDir dir;
  dir.file("config.json", R"({"torch_dtype": "bfloat16"})");
  dir.file("hf_quant_config.json", R"({"quantization": {"quant_algo": "NVFP4"}})");
  dir.tensors({{"gate.weight", bytes(DType::U8, {n, k / 2}, packFp4(codes))},
               {"gate.weight_scale", bytes(DType::F8_E4M3, {n, k / 16}, sc)},
               {"gate.weight_scale_2", values(DType::F32, {}, {0.5})},
               {"up.weight", bytes(DType::U8, {n, k / 2}, packFp4(codes))},
               {"up.weight_scale", bytes(DType::F8_E4M3, {n, k / 16}, sc)},
               {"up.weight_scale_2", values(DType::F32, {}, {0.25})}});
  Result<Checkpoint> c = Checkpoint::open(dir.path);
  Result<QuantConfig> cfg = QuantConfig::fromCheckpoint(*c);
  Result<LoadedLayer> a = loadLayer(*c, *cfg, "gate"), b = loadLayer(*c, *cfg, "up");
  ASSERT_TRUE(a.ok() && b.ok()) << a.error() << b.error();
  Result<LoadedLayer> fused = fuseShards({*a, *b}, DType::BF16);
  ASSERT_TRUE(fused.ok()) << fused.error();
  EXPECT_EQ(fused->weight.granularity, Granularity::Group);
  EXPECT_EQ(fused->weight.scaleType, ScalarType::bf16());
  ASSERT_EQ(fused->notes.size(), 1u);
  Result<std::vector<double>> d =
      dequantizeWeights(fused->weight, fused->tensors, fused->n, fused->k);
  ASSERT_TRUE(d.ok()) << d.error();
  // e4m3 scales times 0.5 or 0.25 are exact in bf16 (4 significant bits).
  for (int64_t i = 0; i < n * k; ++i) {
    double base = decode(ScalarType::e2m1(), codes[size_t(i)]) *
                  decode(ScalarType::e4m3(), sc[size_t(i / 16)]);
    ASSERT_EQ((*d)[size_t(i)], base * 0.5);
    ASSERT_EQ((*d)[size_t(n * k + i)], base * 0.25);
  }
  // Shards with different schemas are refused, naming both.
  b->weight.type = ScalarType::e4m3();
  EXPECT_NE(fuseShards({*a, *b}, DType::BF16).error().find("cannot fuse up"),
            std::string::npos);
}

// sourceToCanonical: the host step humming-legalize-schema leaves to the
// caller for weights handed over in a source format. Same packings as the
// checkpoint loaders, on in-memory tensors.
TEST(Adapters, SourceToCanonicalGptqAndAwq) {
  for (unsigned bits : {2u, 3u, 4u, 8u})
    for (bool v1 : {true, false}) {
      IntLayer l = randomIntLayer(64, 256, bits == 3 ? 64 : 128, bits, false,
                                  bits * 3 + v1);
      auto t = gptqTensors("m", l, v1);
      WeightSchema w = WeightSchema::make(ScalarType::uint(bits),
                                          ScalarType::f16(), Granularity::Group,
                                          l.group, ZeroPointKind::Int);
      w.format = v1 ? SourceFormat::GPTQ : SourceFormat::GPTQv2;
      QuantizedWeights q;
      q.weight = t[0].second;
      q.zeroPoints = t[1].second;
      q.scales = t[2].second;
      Result<CanonicalLayer> c = sourceToCanonical(w, q, l.n, l.k);
      ASSERT_TRUE(c.ok()) << c.error();
      EXPECT_EQ(c->weight.format, SourceFormat::Canonical);
      Result<std::vector<double>> d =
          dequantizeWeights(c->weight, c->tensors, l.n, l.k);
      ASSERT_TRUE(d.ok()) << d.error();
      expectIntLayer(*d, l);
    }
  IntLayer l = randomIntLayer(64, 128, 64, 4, false, 9);
  std::vector<uint32_t> zeros(l.zero.begin(), l.zero.end());
  WeightSchema w = WeightSchema::make(ScalarType::uint(4), ScalarType::f16(),
                                      Granularity::Group, 64, ZeroPointKind::Int);
  w.format = SourceFormat::AWQ;
  QuantizedWeights q;
  q.weight = words({128, 8}, awqPack(l.q, 128, 64));
  q.zeroPoints = words({2, 8}, awqPack(zeros, 2, 64));
  q.scales = values(DType::F16, {2, 64}, l.scale);
  Result<CanonicalLayer> c = sourceToCanonical(w, q, 64, 128);
  ASSERT_TRUE(c.ok()) << c.error();
  Result<std::vector<double>> d = dequantizeWeights(c->weight, c->tensors, 64, 128);
  ASSERT_TRUE(d.ok()) << d.error();
  expectIntLayer(*d, l);

  // Errors name the tensor, what was expected and what was found.
  QuantizedWeights bad = q;
  bad.scales = values(DType::F16, {64, 2}, l.scale);
  EXPECT_EQ(sourceToCanonical(w, bad, 64, 128).error(),
            "scales: expected shape [2, 64], got [64, 2]");
  bad = q;
  bad.zeroPoints.reset();
  EXPECT_EQ(sourceToCanonical(w, bad, 64, 128).error(),
            "expected the 'zero_points' tensor of the schema");
  bad = q;
  bad.scales = values(DType::BF16, {2, 64}, l.scale);
  EXPECT_EQ(sourceToCanonical(w, bad, 64, 128).error(),
            "scales: expected dtype F16, got BF16");
  WeightSchema canonical = w;
  canonical.format = SourceFormat::Canonical;
  EXPECT_EQ(sourceToCanonical(canonical, q, 64, 128).error(),
            "expected weights in the gptq, gptq_v2 or awq format, got canonical");
  WeightSchema experts = w;
  experts.experts = 4;
  EXPECT_EQ(sourceToCanonical(experts, q, 64, 128).error(),
            "expected a dense layer (experts = 0) to convert, got 4 experts "
            "(convert each expert)");
  WeightSchema withBias = w;
  withBias.bias = true;
  EXPECT_EQ(sourceToCanonical(withBias, q, 64, 128).error(),
            "bias: expected 64 values (one per output channel)");
}

// A MoE block's experts: gate and up fused per expert, then stacked [E, ...]
// with their scales; each expert dequantizes to its own modules' values.
TEST(Adapters, MoeExpertsStackPerExpertModules) {
  ModelDir dir;
  const int64_t experts = 3, h = 128, inter = 64;
  dir.file("config.json", R"({"quantization_config": {"quant_method": "fp8"}})");
  std::vector<std::pair<std::string, Tensor>> tensors;
  std::vector<std::vector<uint8_t>> codes;
  auto add = [&](const std::string &module, int64_t n, int64_t k, double scale,
                 unsigned seed) {
    codes.push_back(randomFp8Codes(size_t(n * k), seed));
    tensors.push_back({module + ".weight", bytes(DType::F8_E4M3, {n, k}, codes.back())});
    tensors.push_back({module + ".weight_scale", values(DType::F32, {1}, {scale})});
  };
  for (int64_t e = 0; e < experts; ++e) {
    std::string p = "model.layers.0.mlp.experts." + std::to_string(e);
    add(p + ".gate_proj", inter, h, 0.5 / double(1 << e), unsigned(30 + 3 * e));
    add(p + ".up_proj", inter, h, 0.25 / double(1 << e), unsigned(31 + 3 * e));
    add(p + ".down_proj", h, inter, 0.125 / double(1 << e), unsigned(32 + 3 * e));
  }
  dir.tensors(tensors);
  Result<Checkpoint> c = Checkpoint::open(dir.path);
  ASSERT_TRUE(c.ok()) << c.error();
  Result<QuantConfig> cfg = QuantConfig::fromCheckpoint(*c);
  ASSERT_TRUE(cfg.ok()) << cfg.error();
  Result<LoadedMoe> moe =
      loadMoeExperts(*c, *cfg, "model.layers.0.mlp.experts.{e}", experts);
  ASSERT_TRUE(moe.ok()) << moe.error();
  EXPECT_EQ(moe->gateUp.weight.experts, experts);
  EXPECT_EQ(moe->gateUp.n, 2 * inter);
  EXPECT_EQ(moe->gateUp.k, h);
  EXPECT_EQ(moe->down.n, h);
  EXPECT_EQ(moe->down.tensors.weight.shape[0], experts);
  Result<std::vector<double>> gu = dequantizeWeights(
      moe->gateUp.weight, moe->gateUp.tensors, moe->gateUp.n, moe->gateUp.k);
  Result<std::vector<double>> dn = dequantizeWeights(
      moe->down.weight, moe->down.tensors, moe->down.n, moe->down.k);
  ASSERT_TRUE(gu.ok() && dn.ok()) << (gu ? dn.error() : gu.error());
  for (int64_t e = 0; e < experts; ++e) {
    const double scale = 1.0 / double(1 << e);
    for (int64_t i = 0; i < inter * h; ++i) {
      ASSERT_EQ((*gu)[size_t(e * 2 * inter * h + i)],
                decode(ScalarType::e4m3(), codes[size_t(3 * e)][size_t(i)]) * 0.5 * scale);
      ASSERT_EQ((*gu)[size_t(e * 2 * inter * h + inter * h + i)],
                decode(ScalarType::e4m3(), codes[size_t(3 * e + 1)][size_t(i)]) * 0.25 * scale);
      ASSERT_EQ((*dn)[size_t(e * h * inter + i)],
                decode(ScalarType::e4m3(), codes[size_t(3 * e + 2)][size_t(i)]) * 0.125 * scale);
    }
  }
  // What cannot be stacked says which expert and why.
  EXPECT_EQ(loadMoeExperts(*c, *cfg, "model.layers.0.mlp.experts", 3).error(),
            "expected the experts' module pattern to hold {e} (their index), "
            "got 'model.layers.0.mlp.experts'");
  Result<LoadedMoe> four =
      loadMoeExperts(*c, *cfg, "model.layers.0.mlp.experts.{e}", 4);
  ASSERT_FALSE(four.ok());
  EXPECT_NE(four.error().find("model.layers.0.mlp.experts.3.gate_proj"),
            std::string::npos)
      << four.error();
  std::vector<LoadedLayer> mixed = {moe->down, moe->down};
  mixed[0].weight.experts = 0;
  mixed[1].weight.experts = 0;
  mixed[1].n = 64;
  EXPECT_NE(stackExperts(mixed).error().find(
                "expected the schema and sizes of expert 0"),
            std::string::npos);
  mixed[1] = mixed[0];
  mixed[1].kPermutation = {1, 0};
  EXPECT_NE(stackExperts(mixed).error().find("act-order"), std::string::npos);
  mixed[1] = mixed[0];
  mixed[1].input.type = ScalarType::sint(8);
  EXPECT_NE(stackExperts(mixed).error().find(
                "expected the activations of expert 0"),
            std::string::npos);
  EXPECT_NE(stackExperts({moe->down}).error().find(
                "expected a dense layer, got 3 experts"),
            std::string::npos);
  EXPECT_EQ(loadMoeExperts(*c, *cfg, "model.layers.0.mlp.experts.{e}", 0)
                .error(),
            "expected 1 .. 2^20 experts, got 0");
}

// gpt-oss's stacked MXFP4 experts: one tensor per projection, gate_up's rows
// alternating gate and up. loadStackedMoeExperts gives each expert's gate
// rows then its up rows (codes, e8m0 scales and biases moved together).
TEST(Adapters, StackedMoeExpertsDeinterleaveGateAndUp) {
  const int64_t e = 2, h = 64, inter = 32;
  std::mt19937 rng(21);
  ModelDir dir;
  dir.file("config.json", R"({"torch_dtype": "bfloat16", "swiglu_limit": 7.0,
      "quantization_config": {"quant_method": "mxfp4",
      "modules_to_not_convert": ["model.layers.*.self_attn", "lm_head"]}})");
  const std::string m = "model.layers.0.mlp.experts";
  struct Projection {
    int64_t n, k;
    std::vector<uint8_t> codes, exps;
    std::vector<double> bias;
  };
  std::vector<std::pair<std::string, Tensor>> tensors;
  std::vector<Projection> ps;
  for (auto [name, n, k] : {std::tuple{"gate_up_proj", 2 * inter, h},
                            std::tuple{"down_proj", h, inter}}) {
    Projection p{n, k, {}, {}, {}};
    p.codes.resize(size_t(e * n * k));
    for (uint8_t &c : p.codes)
      c = uint8_t(rng() % 16);
    p.exps.resize(size_t(e * n * k / 32));
    for (uint8_t &x : p.exps)
      x = uint8_t(124 + rng() % 6);
    p.bias.resize(size_t(e * n));
    for (double &b : p.bias)
      b = as(DType::BF16, (int(rng() % 200) - 100) * 0.01);
    std::string t = m + "." + name;
    tensors.push_back({t + "_blocks", bytes(DType::U8, {e, n, k / 32, 16}, packFp4(p.codes))});
    tensors.push_back({t + "_scales", bytes(DType::U8, {e, n, k / 32}, p.exps)});
    tensors.push_back({t + "_bias", values(DType::BF16, {e, n}, p.bias)});
    ps.push_back(std::move(p));
  }
  dir.tensors(tensors);
  Result<Checkpoint> c = Checkpoint::open(dir.path);
  ASSERT_TRUE(c.ok()) << c.error();
  Result<QuantConfig> cfg = QuantConfig::fromCheckpoint(*c);
  ASSERT_TRUE(cfg.ok()) << cfg.error();
  Result<LoadedMoe> moe = loadStackedMoeExperts(*c, *cfg, m, e);
  ASSERT_TRUE(moe.ok()) << moe.error();
  const LoadedLayer &gu = moe->gateUp;
  ASSERT_EQ(gu.n, 2 * inter);
  ASSERT_EQ(gu.weight.experts, e);
  Result<std::vector<double>> w = dequantizeWeights(gu.weight, gu.tensors, gu.n, gu.k);
  ASSERT_TRUE(w.ok()) << w.error();
  std::vector<double> bias = biasValues(gu.weight, gu.tensors, gu.n);
  const Projection &p = ps[0];
  for (int64_t ei = 0; ei < e; ++ei)
    for (int64_t r = 0; r < 2 * inter; ++r) {
      // Row r: gate row r (checkpoint row 2r), then up row r - I (2(r-I)+1).
      const int64_t src = r < inter ? 2 * r : 2 * (r - inter) + 1;
      const int64_t row = ei * 2 * inter + r, from = ei * 2 * inter + src;
      ASSERT_EQ(bias[size_t(row)], p.bias[size_t(from)]) << row;
      for (int64_t k = 0; k < h; ++k)
        ASSERT_EQ((*w)[size_t(row * h + k)],
                  decode(ScalarType::e2m1(), p.codes[size_t(from * h + k)]) *
                      std::ldexp(1.0, p.exps[size_t((from * h + k) / 32)] - 127))
            << row << ", " << k;
    }
  EXPECT_EQ(moe->down.n, h);
  EXPECT_EQ(biasValues(moe->down.weight, moe->down.tensors, h), ps[1].bias);
  // Not interleaved: the checkpoint's order.
  Result<LoadedMoe> asIs =
      loadStackedMoeExperts(*c, *cfg, m, e, "gate_up_proj", "down_proj", false);
  ASSERT_TRUE(asIs.ok()) << asIs.error();
  EXPECT_EQ(biasValues(asIs->gateUp.weight, asIs->gateUp.tensors, 2 * inter),
            p.bias);
  // The diagnostics: a wrong expert count, a missing projection.
  EXPECT_EQ(loadStackedMoeExperts(*c, *cfg, m, 3).error(),
            m + ".gate_up_proj: expected 3 experts in one tensor, got 2");
  EXPECT_NE(loadStackedMoeExperts(*c, *cfg, m, e, "w13").error().find(
                m + ".w13"),
            std::string::npos);
  EXPECT_EQ(loadStackedMoeExperts(*c, *cfg, m, 0).error(),
            "expected 1 .. 2^20 experts, got 0");
  // An odd number of gate_up rows cannot alternate gate and up.
  ModelDir odd;
  odd.file("config.json", R"({"quantization_config": {"quant_method": "mxfp4"}})");
  std::vector<uint8_t> zeros(33 * 64);
  odd.tensors({{m + ".gate_up_proj_blocks", bytes(DType::U8, {1, 33, 2, 16}, packFp4(zeros))},
               {m + ".gate_up_proj_scales", bytes(DType::U8, {1, 33, 2}, std::vector<uint8_t>(66, 127))},
               {m + ".down_proj_blocks", bytes(DType::U8, {1, 32, 1, 16}, packFp4(std::vector<uint8_t>(32 * 32)))},
               {m + ".down_proj_scales", bytes(DType::U8, {1, 32, 1}, std::vector<uint8_t>(32, 127))}});
  Result<Checkpoint> oc = Checkpoint::open(odd.path);
  ASSERT_TRUE(oc.ok()) << oc.error();
  Result<QuantConfig> ocfg = QuantConfig::fromCheckpoint(*oc);
  ASSERT_TRUE(ocfg.ok()) << ocfg.error();
  EXPECT_EQ(loadStackedMoeExperts(*oc, *ocfg, m, 1).error(),
            m + ".gate_up_proj: expected an even number of gate and up rows "
                "without N padding, got N = 33 (pad_n = 0)");
}
