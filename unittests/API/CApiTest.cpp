//===- CApiTest.cpp - The C API -------------------------------------------===//

#include "humming-c/humming.h"
#include "TestCache.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

extern "C" int humming_c_smoke(char *why, size_t size);

namespace {
/// uint4 weights with `scale` scales per group of 128 of K.
humming_weight_schema uint4Group128(const char *scale = "f16") {
  humming_weight_schema w = {};
  w.type = "uint4";
  w.scale_type = scale;
  w.granularity = "group";
  w.group_k = 128;
  return w;
}
} // namespace

TEST(CApi, FromC) {
  humming::test::useTestCache();
  char why[1024] = {0};
  EXPECT_EQ(humming_c_smoke(why, sizeof why), 0) << why;
}

TEST(CApi, ErrorsSayWhatWasExpected) {
  humming::test::useTestCache();
  humming_weight_schema w = {};
  w.type = "uint11";
  w.scale_type = "f16";
  w.granularity = "group";
  w.group_k = 128;
  humming_layer *layer = nullptr;
  EXPECT_NE(humming_layer_create(256, 512, &w, "f16", 0, &layer), 0);
  EXPECT_EQ(std::string(humming_last_error()),
            "weight.type: expected an element type such as uint4, int8, e4m3 "
            "or e2m1, got 'uint11'");
  EXPECT_EQ(layer, nullptr);
  w.type = "uint4";
  w.granularity = "rows";
  EXPECT_NE(humming_layer_create(256, 512, &w, "f16", 0, &layer), 0);
  EXPECT_EQ(std::string(humming_last_error()),
            "weight.granularity: expected channel, group, block, tensor or "
            "group_tensor, got 'rows'");
  w.granularity = "group";
  EXPECT_NE(humming_layer_create(256, 512, &w, "e4m3", 0, &layer), 0);
  EXPECT_EQ(std::string(humming_last_error()),
            "activation: expected f16 or bf16, got 'e4m3'");
  ASSERT_EQ(humming_layer_create(256, 512, &w, "f16", 0, &layer), 0)
      << humming_last_error();
  EXPECT_EQ(std::string(humming_last_error()), "");
  // Canonical tensors from host bytes: sizes checked against the schema.
  std::vector<int32_t> weight(256 * 512 * 4 / 32);
  std::vector<uint16_t> scales(256 * 4, 0x3c00); // 1.0 in f16
  EXPECT_NE(humming_layer_load_quantized(layer, weight.data(), 12, scales.data(),
                                         scales.size() * 2, nullptr, 0,
                                         nullptr, 0, nullptr, 0),
            0);
  EXPECT_EQ(std::string(humming_last_error()),
            "weight: expected 65536 bytes (I32 [256, 64]), got 12");
  EXPECT_NE(humming_layer_load_quantized(layer, weight.data(), weight.size() * 4,
                                         scales.data(), scales.size() * 2,
                                         weight.data(), 4, nullptr, 0, nullptr,
                                         0),
            0);
  EXPECT_EQ(std::string(humming_last_error()),
            "zero_points: the schema has none, got 4 bytes");
  EXPECT_EQ(humming_layer_load_quantized(layer, weight.data(), weight.size() * 4,
                                         scales.data(), scales.size() * 2,
                                         nullptr, 0, nullptr, 0, nullptr, 0),
            0)
      << humming_last_error();
  EXPECT_NE(humming_layer_transform(layer, nullptr, "sm_75", 1), 0);
  EXPECT_EQ(std::string(humming_last_error()),
            "the mma_sync kernels need sm_80 or newer, got sm_75");
  // A forced tile: one kernel; a malformed one: the parser's reason.
  EXPECT_EQ(humming_layer_transform_tuned(
                layer, "H200", nullptr, 1,
                "#humming.tile_config<block = [16, 64, 64], warp = [16, 64, 32]>"),
            0)
      << humming_last_error();
  EXPECT_EQ(humming_layer_kernel_count(layer), 1);
  EXPECT_NE(humming_layer_transform_tuned(layer, "H200", nullptr, 1, "tiles"),
            0);
  EXPECT_EQ(std::string(humming_last_error()).rfind(
                "expected a #humming.tile_config, got 'tiles'", 0),
            0u)
      << humming_last_error();
  humming_layer_destroy(layer);
  EXPECT_NE(humming_layer_forward(nullptr, nullptr, 0, 0, 1), 0);
  EXPECT_EQ(std::string(humming_last_error()), "expected a layer, got NULL");
  // Checkpoints: missing arguments and directories say so.
  EXPECT_NE(humming_layer_create_from_checkpoint(nullptr, "m", &layer), 0);
  EXPECT_EQ(std::string(humming_last_error()),
            "expected a checkpoint directory and a module name, got NULL");
  EXPECT_NE(humming_layer_create_from_checkpoint("/nonexistent", "m", nullptr), 0);
  EXPECT_EQ(std::string(humming_last_error()),
            "expected an output pointer, got NULL");
  EXPECT_NE(humming_layer_create_from_checkpoint("/nonexistent", "m", &layer), 0);
  EXPECT_NE(std::string(humming_last_error()).find("/nonexistent"),
            std::string::npos)
      << humming_last_error();
  // The same with the checkpoint's 8-bit activations (the refusals of
  // 16-bit and static ones: the Python package test, over generated
  // checkpoints).
  EXPECT_NE(humming_layer_create_from_checkpoint_quantized(nullptr, "m", &layer),
            0);
  EXPECT_EQ(std::string(humming_last_error()),
            "expected a checkpoint directory and a module name, got NULL");
  EXPECT_NE(
      humming_layer_create_from_checkpoint_quantized("/nonexistent", "m", nullptr),
      0);
  EXPECT_EQ(std::string(humming_last_error()),
            "expected an output pointer, got NULL");
  EXPECT_NE(humming_layer_create_from_checkpoint_shard(
                "/nonexistent", "m", "diagonal", 0, 2, "16-bit", &layer),
            0);
  EXPECT_EQ(std::string(humming_last_error()),
            "parallel: expected column or row, got 'diagonal'");
  EXPECT_NE(humming_layer_create_from_checkpoint_shard(
                "/nonexistent", "m", "row", 0, 2, "8-bit", &layer),
            0);
  EXPECT_EQ(std::string(humming_last_error()),
            "activations: expected 16-bit or checkpoint, got '8-bit'");
  EXPECT_STREQ(humming_layer_activation(nullptr), "");
  EXPECT_STREQ(humming_layer_activation_scaling(nullptr), "");
  EXPECT_NE(humming_layer_load_checkpoint(nullptr, "/nonexistent", "m"), 0);
  EXPECT_EQ(std::string(humming_last_error()), "expected a layer, got NULL");
  EXPECT_NE(humming_layer_quantize(nullptr, nullptr, nullptr), 0);
  EXPECT_EQ(std::string(humming_last_error()),
            "expected a layer and weights, got NULL");
  EXPECT_NE(humming_layer_quantize_on_device(nullptr, "H200", nullptr, 0x1000,
                                            "F16", nullptr),
            0);
  EXPECT_EQ(std::string(humming_last_error()),
            "expected a layer and a dtype, got NULL");
  EXPECT_NE(humming_layer_transform(nullptr, "H200", nullptr, 1), 0);
  EXPECT_EQ(std::string(humming_last_error()), "expected a layer, got NULL");
  EXPECT_NE(humming_layer_transform_tuned(nullptr, "H200", nullptr, 1, nullptr),
            0);
  EXPECT_EQ(std::string(humming_last_error()), "expected a layer, got NULL");
  EXPECT_NE(humming_layer_create(256, 512, nullptr, "f16", 0, &layer), 0);
  EXPECT_EQ(std::string(humming_last_error()),
            "expected a weight schema and an output pointer, got NULL");
  humming_transform_stats stats;
  EXPECT_NE(humming_layer_transform_stats(nullptr, &stats), 0);
  EXPECT_EQ(std::string(humming_last_error()),
            "expected a layer and a stats pointer, got NULL");
  EXPECT_EQ(std::string(humming_layer_compiler_reports(nullptr)), "");
}

namespace {
/// A GPTQ (v1, asymmetric, group 128) 4-bit layer's tensors as a checkpoint
/// stores them: code(k, n) = (7 k + 3 n) % 16, zero point of group g and
/// column n (g + n) % 16 (stored minus one), scales 1 + n / 256.
struct GptqTensors {
  int64_t n, k;
  std::vector<int32_t> qweight, qzeros, gIdx;
  std::vector<uint16_t> scales;
  int64_t qwShape[2], qzShape[2], sShape[2], gShape[1];
  static int code(int64_t kk, int64_t nn) { return int((7 * kk + 3 * nn) % 16); }
  static int zero(int64_t g, int64_t nn) { return int((g + nn) % 16); }
  GptqTensors(int64_t n, int64_t k) : n(n), k(k) {
    const int64_t groups = k / 128;
    qweight.assign(size_t(k / 8 * n), 0);
    for (int64_t kk = 0; kk < k; ++kk)
      for (int64_t nn = 0; nn < n; ++nn)
        qweight[size_t(kk / 8 * n + nn)] |= code(kk, nn) << (4 * (kk % 8));
    qzeros.assign(size_t(groups * n / 8), 0);
    for (int64_t g = 0; g < groups; ++g)
      for (int64_t nn = 0; nn < n; ++nn)
        qzeros[size_t(g * n / 8 + nn / 8)] |= ((zero(g, nn) - 1) & 15)
                                              << (4 * (nn % 8));
    for (int64_t g = 0; g < groups; ++g)
      for (int64_t nn = 0; nn < n; ++nn)
        scales.push_back(uint16_t(0x3c00 + nn)); // 1 + nn / 1024 in f16
    for (int64_t kk = 0; kk < k; ++kk)
      gIdx.push_back(int32_t(kk / 128));
    qwShape[0] = k / 8, qwShape[1] = n;
    qzShape[0] = groups, qzShape[1] = n / 8;
    sShape[0] = groups, sShape[1] = n;
    gShape[0] = k;
  }
  std::vector<humming_tensor> list() const {
    return {{"qweight", "I32", 2, qwShape, qweight.data(), qweight.size() * 4},
            {"qzeros", "I32", 2, qzShape, qzeros.data(), qzeros.size() * 4},
            {"scales", "F16", 2, sShape, scales.data(), scales.size() * 2},
            {"g_idx", "I32", 1, gShape, gIdx.data(), gIdx.size() * 4}};
  }
};
const char *kGptqConfig =
    R"({"torch_dtype": "float16", "quantization_config": {"quant_method":
        "gptq", "bits": 4, "group_size": 128, "sym": false, "desc_act": false,
        "checkpoint_format": "gptq"}})";

/// Canonical tensor `which` of `layer`: dtype, shape and bytes.
struct Exported {
  std::string dtype;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;
};
Exported exportTensor(const humming_layer *layer, const char *which) {
  Exported e;
  const char *dtype = nullptr;
  int64_t shape[8], rank = 0;
  int64_t size = humming_layer_canonical_tensor(layer, which, &dtype, shape,
                                                &rank, nullptr, 0);
  EXPECT_GE(size, 0) << humming_last_error();
  if (size <= 0)
    return e;
  e.dtype = dtype;
  e.shape.assign(shape, shape + rank);
  e.bytes.resize(size_t(size));
  EXPECT_EQ(humming_layer_canonical_tensor(layer, which, nullptr, nullptr,
                                           nullptr, e.bytes.data(), size),
            size);
  return e;
}
int canonicalCode(const Exported &w, int64_t kWords, int64_t nn, int64_t kk) {
  uint32_t word;
  std::memcpy(&word, w.bytes.data() + 4 * size_t(nn * kWords + kk / 8), 4);
  return int((word >> (4 * (kk % 8))) & 15);
}
} // namespace

// A serving engine's loaded GPTQ tensors become a layer as the checkpoint
// directory would (canonical tensors exported back), a column shard of
// them too; each bad tensor description says which and why.
TEST(CApi, LayersFromTensors) {
  humming::test::useTestCache();
  GptqTensors g(256, 512);
  std::vector<humming_tensor> ts = g.list();
  humming_layer *layer = nullptr;
  ASSERT_EQ(humming_layer_create_from_tensors(kGptqConfig, ts.data(),
                                              int64_t(ts.size()), "mlp.up",
                                              "column", 0, 1, "16-bit", &layer),
            0)
      << humming_last_error();
  EXPECT_EQ(humming_layer_n(layer), 256);
  EXPECT_EQ(humming_layer_k(layer), 512);
  EXPECT_EQ(humming_layer_activation_k(layer), 512);
  EXPECT_EQ(humming_layer_activation_k(nullptr), 0);
  EXPECT_EQ(std::string(humming_layer_activation(layer)), "f16");
  Exported w = exportTensor(layer, "weight");
  EXPECT_EQ(w.dtype, "I32");
  EXPECT_EQ(w.shape, (std::vector<int64_t>{256, 64}));
  for (int64_t nn : {0, 5, 255})
    for (int64_t kk : {0, 9, 511})
      EXPECT_EQ(canonicalCode(w, 64, nn, kk), GptqTensors::code(kk, nn))
          << nn << ", " << kk;
  Exported z = exportTensor(layer, "zero_points");
  EXPECT_EQ(z.dtype, "I32");
  EXPECT_EQ(z.shape, (std::vector<int64_t>{256 * 4 / 32, 4}));
  Exported s = exportTensor(layer, "scales");
  EXPECT_EQ(s.dtype, "F16");
  EXPECT_EQ(s.shape, (std::vector<int64_t>{256, 4}));
  int64_t rank = 0;
  EXPECT_EQ(humming_layer_canonical_tensor(layer, "bias", nullptr, nullptr,
                                           &rank, nullptr, 0),
            0);
  EXPECT_EQ(rank, -1);
  // The exported tensors load back into a layer of the same schema.
  humming_weight_schema schema = {};
  schema.type = "uint4";
  schema.scale_type = "f16";
  schema.granularity = "group";
  schema.group_k = 128;
  schema.zero_point = "int";
  humming_layer *again = nullptr;
  ASSERT_EQ(humming_layer_create(256, 512, &schema, "f16", 0, &again), 0)
      << humming_last_error();
  ASSERT_EQ(humming_layer_load_quantized(again, w.bytes.data(), w.bytes.size(),
                                         s.bytes.data(), s.bytes.size(),
                                         z.bytes.data(), z.bytes.size(),
                                         nullptr, 0, nullptr, 0),
            0)
      << humming_last_error();
  EXPECT_EQ(exportTensor(again, "weight").bytes, w.bytes);
  // An act-order permutation set back (a saved layer's state), checked.
  std::vector<int32_t> perm(512);
  for (int32_t j = 0; j < 512; ++j)
    perm[size_t(j)] = (j * 7) % 512;
  ASSERT_EQ(humming_layer_set_input_permutation(again, perm.data(), 512), 0)
      << humming_last_error();
  std::vector<int32_t> back(512);
  EXPECT_EQ(humming_layer_input_permutation(again, back.data(), 512), 512);
  EXPECT_EQ(back, perm);
  perm[3] = perm[4];
  EXPECT_NE(humming_layer_set_input_permutation(again, perm.data(), 512), 0);
  EXPECT_EQ(std::string(humming_last_error()),
            "expected a permutation of 0 .. 511, got 28 at 4 (a repeat)");
  EXPECT_NE(humming_layer_set_input_permutation(again, perm.data(), 5), 0);
  EXPECT_EQ(std::string(humming_last_error()),
            "expected a permutation of K = 512 input columns, got 5 entries");
  EXPECT_NE(humming_layer_set_input_permutation(again, nullptr, 512), 0);
  EXPECT_EQ(std::string(humming_last_error()),
            "expected a permutation of 512 columns, got 0 (NULL)");
  EXPECT_EQ(humming_layer_set_input_permutation(again, nullptr, 0), 0);
  EXPECT_EQ(humming_layer_input_permutation(again, nullptr, 0), 0);
  humming_layer_destroy(again);
  EXPECT_EQ(humming_layer_canonical_tensor(layer, "qweight", nullptr, nullptr,
                                           nullptr, nullptr, 0),
            -1);
  EXPECT_EQ(std::string(humming_last_error()),
            "expected weight, scales, zero_points, global_scale or bias, got "
            "'qweight'");
  std::vector<uint8_t> small(8);
  EXPECT_EQ(humming_layer_canonical_tensor(layer, "weight", nullptr, nullptr,
                                           nullptr, small.data(), 8),
            -1);
  EXPECT_EQ(std::string(humming_last_error()),
            "weight: expected room for 65536 bytes, got 8");
  humming_layer_destroy(layer);

  // Rank 1 of a column split in two: columns 128..255.
  ASSERT_EQ(humming_layer_create_from_tensors(kGptqConfig, ts.data(),
                                              int64_t(ts.size()), nullptr,
                                              "column", 1, 2, "16-bit", &layer),
            0)
      << humming_last_error();
  EXPECT_EQ(humming_layer_n(layer), 128);
  Exported half = exportTensor(layer, "weight");
  for (int64_t nn : {0, 77, 127})
    for (int64_t kk : {3, 300})
      EXPECT_EQ(canonicalCode(half, 64, nn, kk),
                GptqTensors::code(kk, nn + 128));
  humming_layer_destroy(layer);

  // Errors.
  auto refused = [&](std::vector<humming_tensor> list, const char *config,
                     const std::string &why) {
    humming_layer *l = nullptr;
    EXPECT_NE(humming_layer_create_from_tensors(
                  config, list.data(), int64_t(list.size()), "m", "column", 0,
                  1, "16-bit", &l),
              0);
    EXPECT_EQ(l, nullptr);
    EXPECT_EQ(std::string(humming_last_error()).substr(0, why.size()), why)
        << humming_last_error();
  };
  refused(ts, nullptr,
          "expected the model's config.json text (with its "
          "quantization_config), got NULL");
  refused(ts, "{\"quantization_config\": ", "config: ");
  refused({}, kGptqConfig, "expected at least one tensor, got 0");
  std::vector<humming_tensor> bad = ts;
  bad[0].dtype = "int32";
  refused(bad, kGptqConfig,
          "tensor 0 (qweight): expected a safetensors dtype such as I32, F16, "
          "BF16, F32, U8, F8_E4M3, got 'int32'");
  bad = ts;
  bad[2].bytes -= 2;
  refused(bad, kGptqConfig,
          "tensor 2 (scales): expected 2048 bytes of F16 data, got 2046");
  bad = ts;
  bad[1].rank = 9;
  refused(bad, kGptqConfig,
          "tensor 1 (qzeros): expected a rank of 0 to 8 with its shape, got "
          "rank 9");
  bad = ts;
  bad[3].name = "scales";
  refused(bad, kGptqConfig, "tensor 3 (scales): the name is given twice");
  bad = ts;
  bad.erase(bad.begin() + 2);
  refused(bad, kGptqConfig,
          "m: missing tensor 'm.scales' (gptq 4-bit group 128 asymmetric)");
  refused(ts, R"({"torch_dtype": "float16"})",
          "(tensors): no quantization_config in config.json");
  humming_layer *l = nullptr;
  EXPECT_NE(humming_layer_create_from_tensors(kGptqConfig, ts.data(),
                                              int64_t(ts.size()), "m", "rows",
                                              0, 1, "16-bit", &l),
            0);
  EXPECT_EQ(std::string(humming_last_error()),
            "parallel: expected column or row, got 'rows'");
  EXPECT_NE(humming_layer_create_from_tensors(kGptqConfig, ts.data(),
                                              int64_t(ts.size()), "m",
                                              "column", 0, 1, "16-bit",
                                              nullptr),
            0);
  EXPECT_EQ(std::string(humming_last_error()),
            "expected an output pointer, got NULL");
}

// A MoE block from tensors a host holds: two experts' GPTQ gate, up and
// down projections under "experts.{e}", as a checkpoint names them.
TEST(CApi, MoeLayersFromTensors) {
  humming::test::useTestCache();
  GptqTensors gateUp(128, 256), down(256, 128);
  std::vector<std::string> names;
  std::vector<humming_tensor> ts;
  for (int e = 0; e < 2; ++e)
    for (const char *proj : {"gate_proj", "up_proj", "down_proj"})
      for (humming_tensor t :
           (std::string(proj) == "down_proj" ? down : gateUp).list()) {
        names.push_back(std::string("experts.") + std::to_string(e) + "." +
                        proj + "." + t.name);
        ts.push_back(t);
      }
  for (size_t i = 0; i < ts.size(); ++i)
    ts[i].name = names[i].c_str();
  humming_moe_layer *moe = nullptr;
  ASSERT_EQ(humming_moe_layer_create_from_tensors(
                kGptqConfig, ts.data(), int64_t(ts.size()), "experts.{e}", 2,
                1, 0, nullptr, nullptr, nullptr, &moe),
            0)
      << humming_last_error();
  EXPECT_EQ(humming_moe_layer_hidden(moe), 256);
  EXPECT_EQ(humming_moe_layer_intermediate(moe), 128);
  EXPECT_EQ(humming_moe_layer_transform(moe, "H200", nullptr, 1, 64), 0)
      << humming_last_error();
  humming_moe_layer_destroy(moe);
  // Three experts named, two given: the missing one is named.
  EXPECT_NE(humming_moe_layer_create_from_tensors(
                kGptqConfig, ts.data(), int64_t(ts.size()), "experts.{e}", 3,
                1, 0, nullptr, nullptr, nullptr, &moe),
            0);
  EXPECT_NE(std::string(humming_last_error()).find("experts.2.gate_proj"),
            std::string::npos)
      << humming_last_error();
  EXPECT_EQ(moe, nullptr);
  EXPECT_NE(humming_moe_layer_create_from_tensors(
                kGptqConfig, ts.data(), 0, "experts.{e}", 2, 1, 0, nullptr,
                nullptr, nullptr, &moe),
            0);
  EXPECT_EQ(std::string(humming_last_error()),
            "expected at least one tensor, got 0");
  EXPECT_NE(humming_moe_layer_create_from_tensors(
                nullptr, ts.data(), 1, "experts.{e}", 2, 1, 0, nullptr,
                nullptr, nullptr, &moe),
            0);
  EXPECT_EQ(std::string(humming_last_error()),
            "expected the model's config.json text, an experts' module "
            "pattern and an output pointer, got NULL");
}

TEST(CApi, QuantizedActivationLayers) {
  // 8-bit activation layers: the arguments' errors, then compile-only
  // transforms for sm_89 (mma_sync m16n8k32) and sm_90a (the wgmma k32
  // kernels), which chips without fp8 MMAs refuse.
  humming::test::useTestCache();
  humming_weight_schema w = {};
  w.type = "e4m3";
  w.scale_type = "f16";
  w.granularity = "channel";
  humming_layer *layer = nullptr;
  EXPECT_NE(humming_layer_create_quantized(256, 512, &w, "f16", "token", "f16",
                                           &layer),
            0);
  EXPECT_EQ(std::string(humming_last_error()),
            "activation: expected f8E4M3FN, f8E5M2, si8 or si4, got 'f16'");
  EXPECT_NE(humming_layer_create_quantized(256, 512, &w, "f8E4M3FN", "group",
                                           "f16", &layer),
            0);
  EXPECT_EQ(std::string(humming_last_error()),
            "scaling: expected token, static or group<g>, got 'group'");
  EXPECT_NE(humming_layer_create_quantized(256, 512, &w, "f8E4M3FN",
                                           "group<128>x", "f16", &layer),
            0);
  EXPECT_EQ(std::string(humming_last_error()),
            "scaling: expected token, static or group<g>, got 'group<128>x'");
  EXPECT_NE(humming_layer_create_quantized(256, 512, &w, "f8E4M3FN", "token",
                                           "f32", &layer),
            0);
  EXPECT_EQ(std::string(humming_last_error()),
            "output: expected f16 or bf16, got 'f32'");
  EXPECT_NE(humming_layer_create_quantized(256, 512, nullptr, "f8E4M3FN",
                                           "token", "f16", &layer),
            0);
  EXPECT_EQ(std::string(humming_last_error()),
            "expected a weight schema and an output pointer, got NULL");
  ASSERT_EQ(humming_layer_create_quantized(256, 512, &w, "f8E4M3FN", "token",
                                           "bf16", &layer),
            0)
      << humming_last_error();
  std::vector<float> weights(256 * 512, 0.25f);
  EXPECT_NE(humming_layer_quantize_on_device(layer, "H200", nullptr, 0x1000,
                                            "F64", nullptr),
            0);
  EXPECT_EQ(std::string(humming_last_error()),
            "expected F16, BF16 or F32 weights to quantize, got F64");
  EXPECT_NE(humming_layer_quantize_on_device(layer, "H200", nullptr, 0x1000,
                                            "float16", nullptr),
            0);
  EXPECT_EQ(std::string(humming_last_error()),
            "expected the dtype F16, BF16 or F32, got 'float16'");
  ASSERT_EQ(humming_layer_quantize(layer, weights.data(), nullptr), 0)
      << humming_last_error();
  EXPECT_NE(humming_layer_transform(layer, nullptr, "sm_86", 1), 0);
  EXPECT_EQ(std::string(humming_last_error()),
            "f8E4M3FN activations need sm_89 or newer (m16n8k32 f8E4M3FN "
            "MMAs); got sm_86");
  // sm_89: the mma_sync m16n8k32 kernels.
  EXPECT_EQ(humming_layer_transform(layer, nullptr, "sm_89", 1), 0)
      << humming_last_error();
  EXPECT_EQ(humming_layer_is_prepared(layer), 1);
  EXPECT_EQ(humming_layer_transform(layer, "H200", nullptr, 1), 0)
      << humming_last_error();
  EXPECT_EQ(humming_layer_is_prepared(layer), 1);
  // si8 activations (W8A8 int8): integer weights only.
  humming_layer *i8 = nullptr;
  EXPECT_NE(humming_layer_create_quantized(256, 512, &w, "si8", "token", "f16",
                                           &i8),
            0);
  EXPECT_EQ(std::string(humming_last_error()),
            "float weights (f8E4M3FN) cannot be used with integer activations "
            "(si8)");
  humming_weight_schema w8 = w;
  w8.type = "int8";
  ASSERT_EQ(humming_layer_create_quantized(256, 512, &w8, "si8", "token",
                                           "f16", &i8),
            0)
      << humming_last_error();
  ASSERT_EQ(humming_layer_quantize(i8, weights.data(), nullptr), 0)
      << humming_last_error();
  EXPECT_EQ(humming_layer_transform(i8, "H200", nullptr, 1), 0)
      << humming_last_error();
  EXPECT_EQ(humming_layer_is_prepared(i8), 1);
  EXPECT_STREQ(humming_layer_activation(i8), "si8");
  EXPECT_STREQ(humming_layer_activation_scaling(i8), "token");
  humming_layer_destroy(i8);
  // si4 activations (W4A4 int): 4-bit integer weights without zero points,
  // the mma.sync m16n8k64 s4 kernels from sm_80.
  humming_layer *i4 = nullptr;
  humming_weight_schema w4 = w;
  w4.type = "int4";
  ASSERT_EQ(humming_layer_create_quantized(256, 512, &w4, "si4", "static",
                                           "bf16", &i4),
            0)
      << humming_last_error();
  ASSERT_EQ(humming_layer_quantize(i4, weights.data(), nullptr), 0)
      << humming_last_error();
  EXPECT_NE(humming_layer_transform(i4, nullptr, "sm_75", 1), 0);
  EXPECT_EQ(humming_layer_transform(i4, "A100", nullptr, 1), 0)
      << humming_last_error();
  EXPECT_EQ(humming_layer_is_prepared(i4), 1);
  EXPECT_STREQ(humming_layer_activation(i4), "si4");
  EXPECT_STREQ(humming_layer_activation_scaling(i4), "static");
  humming_layer_destroy(i4);
  // A 16-bit forward on it, missing or misaligned scales, no device.
  EXPECT_NE(humming_layer_forward(layer, nullptr, 16, 16, 1), 0);
  EXPECT_EQ(std::string(humming_last_error()),
            "the layer takes f8E4M3FN activations: call forwardQuantized() "
            "with their codes and scales (humming::ActivationQuantizer makes "
            "them from 16-bit activations), or transform it with "
            "LayerTarget::activationRows");
  EXPECT_NE(humming_layer_forward_quantized(layer, nullptr, 16, 0, 16, 1), 0);
  EXPECT_EQ(std::string(humming_last_error()),
            "expected the activations' f32 scales (token scaling), got a null "
            "pointer");
  EXPECT_NE(humming_layer_forward_quantized(layer, nullptr, 16, 18, 16, 1), 0);
  EXPECT_EQ(std::string(humming_last_error()),
            "expected 4-byte aligned activation scales, got 0x12");
  EXPECT_NE(humming_layer_forward_quantized(layer, nullptr, 16, 16, 16, 1), 0);
  EXPECT_EQ(std::string(humming_last_error()),
            "the layer was transformed compile-only for sm_90a; transform it "
            "for a device to run it");
  // 16-bit activations quantized by the layer: rows set before transform.
  EXPECT_NE(humming_layer_set_activation_rows(layer, -2), 0);
  EXPECT_EQ(std::string(humming_last_error()), "expected rows >= 0, got -2");
  EXPECT_NE(humming_layer_set_activation_rows(nullptr, 2), 0);
  EXPECT_EQ(std::string(humming_last_error()), "expected a layer, got NULL");
  // Per-stream scratch blocks made up front (LayerTarget::streams).
  EXPECT_NE(humming_layer_set_streams(nullptr, 2), 0);
  EXPECT_EQ(std::string(humming_last_error()), "expected a layer, got NULL");
  EXPECT_NE(humming_layer_set_streams(layer, -1), 0);
  EXPECT_EQ(std::string(humming_last_error()),
            "expected 0 <= streams <= 64, got -1");
  EXPECT_NE(humming_layer_set_streams(layer, 65), 0);
  EXPECT_EQ(humming_layer_set_streams(layer, 4), 0);
  // The first-use probe's mode (it never runs compile-only: nothing said).
  EXPECT_NE(humming_layer_set_probe(nullptr, HUMMING_PROBE_NEVER), 0);
  EXPECT_EQ(std::string(humming_last_error()), "expected a layer, got NULL");
  EXPECT_NE(humming_layer_set_probe(layer, 3), 0);
  EXPECT_EQ(std::string(humming_last_error()),
            "expected HUMMING_PROBE_AUTO (0), HUMMING_PROBE_ALWAYS (1) or "
            "HUMMING_PROBE_NEVER (2), got 3");
  EXPECT_EQ(humming_layer_set_probe(layer, HUMMING_PROBE_ALWAYS), 0);
  EXPECT_STREQ(humming_layer_probe(nullptr), "");
  ASSERT_EQ(humming_layer_set_activation_rows(layer, 32), 0);
  ASSERT_EQ(humming_layer_transform(layer, "H200", nullptr, 1), 0)
      << humming_last_error();
  EXPECT_STREQ(humming_layer_probe(layer), "");
  EXPECT_NE(humming_layer_forward(layer, nullptr, 16, 16, 33), 0);
  EXPECT_EQ(std::string(humming_last_error()),
            "expected at most 32 rows (LayerTarget::activationRows), got M = "
            "33");
  humming_layer_destroy(layer);
  EXPECT_NE(humming_layer_forward_quantized(nullptr, nullptr, 0, 0, 0, 1), 0);
  EXPECT_EQ(std::string(humming_last_error()), "expected a layer, got NULL");
}

TEST(CApi, QuantizerErrorsSayWhatWasExpected) {
  humming_quantizer *q = nullptr;
  EXPECT_NE(humming_quantizer_create("int2", "token", 0, "f16", 256, &q), 0);
  EXPECT_EQ(std::string(humming_last_error()),
            "type: expected e4m3, e5m2, int8, int4 or e2m1, got 'int2'");
  EXPECT_NE(humming_quantizer_create("e4m3", "row", 0, "f16", 256, &q), 0);
  EXPECT_EQ(std::string(humming_last_error()),
            "scaling: expected token, group or static, got 'row'");
  EXPECT_NE(humming_quantizer_create("e4m3", "token", 64, "f16", 256, &q), 0);
  EXPECT_EQ(std::string(humming_last_error()),
            "group_k: expected 0 with token scaling, got 64");
  EXPECT_NE(humming_quantizer_create("int8", "group", 64, "x16", 256, &q), 0);
  EXPECT_EQ(std::string(humming_last_error()),
            "source: expected f16, bf16 or f32, got 'x16'");
  EXPECT_NE(humming_quantizer_create("int8", "group", 64, "f16", 100, &q), 0);
  EXPECT_EQ(std::string(humming_last_error()),
            "expected K to be a multiple of the activation group 64, got K = "
            "100");
  EXPECT_NE(humming_quantizer_create("e4m3", "token", 0, "f16", 256, nullptr),
            0);
  EXPECT_EQ(std::string(humming_last_error()),
            "expected an output pointer, got NULL");
  EXPECT_EQ(q, nullptr);
  EXPECT_NE(humming_quantizer_transform(nullptr, "H200", nullptr, 1), 0);
  EXPECT_EQ(std::string(humming_last_error()),
            "expected a quantizer, got NULL");
  EXPECT_NE(humming_quantizer_forward(nullptr, nullptr, 0, 0, 0, 1), 0);
  EXPECT_EQ(std::string(humming_last_error()),
            "expected a quantizer, got NULL");
  EXPECT_NE(humming_quantizer_set_codes_k(nullptr, 16), 0);
  EXPECT_EQ(std::string(humming_last_error()),
            "expected a quantizer, got NULL");
  // Rows of more codes than K: at least K; a refusal keeps the quantizer.
  ASSERT_EQ(humming_quantizer_create("e4m3", "token", 0, "f16", 1032, &q), 0);
  EXPECT_NE(humming_quantizer_set_codes_k(q, 1024), 0);
  EXPECT_EQ(std::string(humming_last_error()),
            "expected K (1032) to 2^24 codes per row, got 1024");
  EXPECT_EQ(humming_quantizer_set_codes_k(q, 1040), 0);
  EXPECT_EQ(humming_quantizer_transform(q, nullptr, "sm_90a", 1), 0)
      << humming_last_error();
  humming_quantizer_destroy(q);
}

TEST(CApi, TheCompilerNamesItselfOrSaysWhyNot) {
  // What the benchmarks record: the compiler every transform of this
  // process uses, with its version.
  const char *compiler = humming_compiler();
  ASSERT_NE(compiler, nullptr) << humming_last_error();
  std::string text(compiler);
  EXPECT_NE(text.find(" ("), std::string::npos) << text;
  EXPECT_EQ(text.back(), ')') << text;
  EXPECT_EQ(std::string(humming_compiler()), text); // chosen once
}

TEST(CApi, WithoutACompilerTheCallSaysWhy) {
  // A process whose HUMMING_COMPILER names no compiler gets NULL and why.
  // The choice is made once per process: a fresh one (threadsafe death
  // tests re-run this test alone in a new process) that asks nothing first.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        ::setenv("HUMMING_COMPILER", "nvcc", 1);
        const char *none = humming_compiler();
        std::fprintf(stderr, "[%s] %s\n", none ? none : "null",
                     humming_last_error());
        std::exit(none ? 1 : 0);
      },
      ::testing::ExitedWithCode(0),
      "\\[null\\] expected HUMMING_COMPILER to be ptxas, nvjitlink or "
      "driver, got 'nvcc'");
}

TEST(CApi, MoeGemmLayers) {
  // The MoE GEMM alone (humming_layer_create_moe): its arguments' errors,
  // [E, N, K] float weights, a compile-only transform, the block size per M
  // and forward_moe's routing checks.
  humming::test::useTestCache();
  humming_weight_schema w = uint4Group128();
  humming_layer *layer = nullptr;
  EXPECT_NE(humming_layer_create_moe(256, 512, 8, &w, "f16", "sorted", 2, 0,
                                     0, &layer),
            0);
  EXPECT_EQ(std::string(humming_last_error()),
            "routing: expected indexed, grouped_contiguous or grouped_masked, "
            "got 'sorted'");
  EXPECT_NE(humming_layer_create_moe(256, 512, 8, &w, "f16", "indexed", 2, 24,
                                     0, &layer),
            0);
  EXPECT_EQ(std::string(humming_last_error()),
            "expected block_size to be 0 (chosen per M) or a multiple of 16 "
            "in 16 .. 1024 (the kernels' block_m divides it), got 24");
  ASSERT_EQ(humming_layer_create_moe(256, 512, 8, &w, "f16", "indexed", 2, 0,
                                     1, &layer),
            0)
      << humming_last_error();
  std::vector<float> weights(size_t(8 * 256 * 512), 0.25f);
  ASSERT_EQ(humming_layer_quantize(layer, weights.data(), nullptr), 0)
      << humming_last_error();
  EXPECT_EQ(humming_layer_moe_block_size(layer, 1), 0); // before transform
  ASSERT_EQ(humming_layer_transform(layer, "H200", nullptr, 1), 0)
      << humming_last_error();
  EXPECT_EQ(humming_layer_moe_block_size(layer, 1), 16);
  EXPECT_EQ(humming_layer_moe_block_size(nullptr, 1), 0);
  // Indexed routing without its sorted ids, then without a block size.
  EXPECT_NE(humming_layer_forward_moe(layer, nullptr, 16, 16, 1, 0, 0, 0, 0,
                                      16, 0, 64),
            0);
  EXPECT_EQ(std::string(humming_last_error()),
            "expected sorted_ids (indexed routing), got a null pointer");
  EXPECT_NE(humming_layer_forward_moe(layer, nullptr, 16, 16, 1, 64, 64, 64,
                                      64, 0, 0, 64),
            0);
  EXPECT_EQ(std::string(humming_last_error()),
            "expected the routing's block_size to be a multiple of 16 up to "
            "1024 (the block_m of the kernel for M = 1: route with "
            "Layer::moeBlockSize(M)), got 0 (MoeRouting::blockSize unset)");
  EXPECT_NE(humming_layer_forward_moe(nullptr, nullptr, 16, 16, 1, 64, 64, 64,
                                      64, 16, 0, 64),
            0);
  humming_layer_destroy(layer);

  // A batch of matmuls with a weight matrix each (grouped_masked without
  // counts): no expert_layout at forward.
  humming_layer *batched = nullptr;
  EXPECT_NE(humming_layer_create_batched(256, 512, 4, &w, "f32", &batched), 0);
  EXPECT_EQ(std::string(humming_last_error()),
            "activation: expected f16 or bf16, got 'f32'");
  ASSERT_EQ(humming_layer_create_batched(256, 512, 4, &w, "f16", &batched), 0)
      << humming_last_error();
  std::vector<float> four(size_t(4 * 256 * 512), 0.25f);
  ASSERT_EQ(humming_layer_quantize(batched, four.data(), nullptr), 0)
      << humming_last_error();
  ASSERT_EQ(humming_layer_transform(batched, "H200", nullptr, 1), 0)
      << humming_last_error();
  EXPECT_NE(humming_layer_forward_moe(batched, nullptr, 16, 16, 8, 0, 0, 0, 0,
                                      0, 64, 0),
            0);
  EXPECT_EQ(std::string(humming_last_error()),
            "expected no expert token counts with MoeOptions::allRows (every "
            "expert has all of its max_tokens rows), got a pointer");
  humming_layer_destroy(batched);
}

TEST(CApi, MoeLayers) {
  // A MoE block from C: the arguments' errors, then float weights quantized
  // and a compile-only transform for the H200.
  humming::test::useTestCache();
  humming_weight_schema w = uint4Group128("bf16");
  humming_moe_layer *moe = nullptr;
  EXPECT_NE(humming_moe_layer_create(256, 128, 4, 2, 64, &w, nullptr, "f16",
                                     &moe),
            0);
  EXPECT_EQ(std::string(humming_last_error()),
            "expected two weight schemas and an output pointer, got NULL");
  EXPECT_NE(humming_moe_layer_create(256, 128, 4, 2, 64, &w, &w, "f32", &moe),
            0);
  EXPECT_EQ(std::string(humming_last_error()),
            "activation: expected f16 or bf16, got 'f32'");
  EXPECT_NE(humming_moe_layer_create(256, 128, 4, 9, 64, &w, &w, "f16", &moe),
            0);
  EXPECT_EQ(std::string(humming_last_error()),
            "expected top_k in 1 .. 4 (the experts), got 9");
  ASSERT_EQ(humming_moe_layer_create(256, 128, 4, 2, 64, &w, &w, "bf16", &moe),
            0)
      << humming_last_error();
  EXPECT_EQ(humming_moe_layer_hidden(moe), 256);
  EXPECT_EQ(humming_moe_layer_intermediate(moe), 128);
  EXPECT_EQ(std::string(humming_moe_layer_activation(moe)), "bf16");
  EXPECT_NE(humming_moe_layer_quantize(moe, nullptr, nullptr), 0);
  std::vector<float> gu(size_t(4 * 256 * 256), 0.5f), dn(size_t(4 * 256 * 128), 0.25f);
  EXPECT_EQ(humming_moe_layer_quantize(moe, gu.data(), dn.data()), 0)
      << humming_last_error();
  // The gated activation: gpt-oss's is taken; a negative limit is not.
  EXPECT_EQ(humming_moe_layer_set_activation(moe, 1.702, 1.0, 7.0), 0)
      << humming_last_error();
  EXPECT_NE(humming_moe_layer_set_activation(moe, 1.0, 0.0, -1.0), 0);
  EXPECT_EQ(std::string(humming_last_error()),
            "expected a positive finite alpha, a finite up offset and a limit "
            ">= 0 (0: none) for the gated activation, got alpha = 1, up "
            "offset = 0, limit = -1");
  EXPECT_NE(humming_moe_layer_set_activation(nullptr, 1.0, 0.0, 0.0), 0);
  // Per-stream scratch blocks made up front (LayerTarget::streams).
  EXPECT_NE(humming_moe_layer_set_streams(nullptr, 1), 0);
  EXPECT_EQ(std::string(humming_last_error()), "expected a MoE layer, got NULL");
  EXPECT_NE(humming_moe_layer_set_streams(moe, 65), 0);
  EXPECT_EQ(std::string(humming_last_error()),
            "expected 0 <= streams <= 64, got 65");
  EXPECT_EQ(humming_moe_layer_set_streams(moe, 1), 0);
  EXPECT_EQ(humming_moe_layer_transform(moe, "H200", nullptr, 1, 32), 0)
      << humming_last_error();
  EXPECT_NE(humming_moe_layer_forward(moe, nullptr, 16, 16, 16, 16, 1), 0);
  EXPECT_EQ(std::string(humming_last_error()),
            "the MoE layer was transformed compile-only; transform it for a "
            "device to run it");
  humming_moe_layer_destroy(moe);
  // 8-bit activations: the quantized layers' activation, scaling and
  // output arguments; a static scale is refused (each GEMM quantizes its
  // own input); x and y are the output type.
  EXPECT_NE(humming_moe_layer_create_quantized(
                256, 128, 4, 2, 0, &w, &w, "f8E4M3FN", "token", "f32", &moe),
            0);
  EXPECT_EQ(std::string(humming_last_error()),
            "output: expected f16 or bf16, got 'f32'");
  EXPECT_NE(humming_moe_layer_create_quantized(
                256, 128, 4, 2, 0, &w, &w, "f8E4M3FN", "static", "bf16", &moe),
            0);
  EXPECT_EQ(std::string(humming_last_error())
                .rfind("expected f8E4M3FN activations scaled per token (or per "
                       "group of K) in a MoE block",
                       0),
            0u)
      << humming_last_error();
  EXPECT_NE(humming_moe_layer_create_quantized(256, 128, 4, 2, 0, &w, nullptr,
                                               "f8E4M3FN", "token", "bf16",
                                               &moe),
            0);
  ASSERT_EQ(humming_moe_layer_create_quantized(
                256, 128, 4, 2, 0, &w, &w, "f8E4M3FN", "token", "bf16", &moe),
            0)
      << humming_last_error();
  EXPECT_EQ(std::string(humming_moe_layer_activation(moe)), "bf16");
  EXPECT_EQ(humming_moe_layer_quantize(moe, gu.data(), dn.data()), 0)
      << humming_last_error();
  EXPECT_EQ(humming_moe_layer_transform(moe, "H200", nullptr, 1, 32), 0)
      << humming_last_error();
  humming_moe_layer_destroy(moe);
  EXPECT_NE(humming_moe_layer_create_from_checkpoint(nullptr, "x.{e}", 4, 2,
                                                     64, nullptr, nullptr,
                                                     nullptr, &moe),
            0);
  EXPECT_EQ(std::string(humming_last_error()),
            "expected a checkpoint directory, an experts' module pattern and "
            "an output pointer, got NULL");
}

TEST(CApi, MoeGrouping) {
  // Grouped routing from top-k ids: its arguments' errors, a compile-only
  // transform, the sizes, the calls' checks.
  humming::test::useTestCache();
  humming_moe_grouping *g = nullptr;
  const int64_t widths[] = {1024, 512};
  EXPECT_NE(humming_moe_grouping_create(8, 2, 0, nullptr, 2, &g), 0);
  EXPECT_EQ(std::string(humming_last_error()),
            "expected the row widths (count > 0) and an output pointer, got "
            "NULL");
  EXPECT_NE(humming_moe_grouping_create(8, 2, 0, widths, 65, &g), 0);
  EXPECT_EQ(std::string(humming_last_error()),
            "expected 0 .. 64 row widths, got 65");
  EXPECT_NE(humming_moe_grouping_create(8, 2, -1, widths, 2, &g), 0);
  EXPECT_EQ(std::string(humming_last_error()),
            "expected max_tokens 0 (grouped_contiguous) or 1 .. (2^31 - 1) / "
            "experts (grouped_masked), got -1");
  ASSERT_EQ(humming_moe_grouping_create(8, 2, 32, widths, 2, &g), 0)
      << humming_last_error();
  EXPECT_EQ(humming_moe_grouping_rows(g, 5), 8 * 32);
  EXPECT_EQ(humming_moe_grouping_layout_size(g), 8);
  EXPECT_EQ(humming_moe_grouping_rows(nullptr, 5), -1);
  EXPECT_NE(humming_moe_grouping_forward(g, nullptr, 16, 1, 16, 16), 0);
  EXPECT_EQ(std::string(humming_last_error()),
            "call transform() before forward()");
  ASSERT_EQ(humming_moe_grouping_transform(g, "H200", nullptr, 1), 0)
      << humming_last_error();
  EXPECT_NE(humming_moe_grouping_forward(g, nullptr, 16, 33, 16, 16), 0);
  EXPECT_EQ(std::string(humming_last_error()),
            "expected M <= max_tokens = 32 (grouped_masked: each expert can "
            "then take every token), got M = 33");
  EXPECT_NE(humming_moe_grouping_scatter(g, nullptr, 2048, 16, 1, 16, 16), 0);
  EXPECT_EQ(std::string(humming_last_error()),
            "expected one of the row widths the grouping was created with, "
            "got 2048 bytes");
  EXPECT_NE(humming_moe_grouping_scatter_weights(g, nullptr, 0, 1, 16, 16),
            0);
  EXPECT_EQ(std::string(humming_last_error()),
            "expected device pointers for the router weights, the positions "
            "and the grouped weights, got a null pointer");
  EXPECT_NE(humming_moe_grouping_gather(g, nullptr, 512, 16, 1, 16, 16), 0);
  EXPECT_EQ(std::string(humming_last_error()),
            "the MoE grouping was transformed compile-only for sm_90a; "
            "transform it for a device to run it");
  EXPECT_NE(humming_moe_grouping_gather(nullptr, nullptr, 512, 16, 1, 16, 16),
            0);
  EXPECT_EQ(std::string(humming_last_error()),
            "expected a MoE grouping, got NULL");
  humming_moe_grouping_destroy(g);
}

TEST(CApi, BatchInvarianceIsOfferedBeforeTransform) {
  // humming_layer_set_batch_invariant (the original's use_batch_invariant):
  // one K decomposition for every M. On the H200 a W4A16 g128 layer's
  // heuristics choose several kernels by M (K splits, wgmma at prefill);
  // batch-invariant tiles agree across the ranges, which merge, so the
  // layer needs fewer kernels. A transformed layer is transformed again.
  humming::test::useTestCache();
  humming_weight_schema w = uint4Group128();
  humming_layer *layer = nullptr;
  ASSERT_EQ(humming_layer_create(4096, 4096, &w, "f16", 0, &layer), 0)
      << humming_last_error();
  std::vector<float> weights(size_t(4096) * 4096, 0.125f);
  ASSERT_EQ(humming_layer_quantize(layer, weights.data(), nullptr), 0)
      << humming_last_error();
  EXPECT_EQ(humming_layer_batch_invariant(layer), 0);
  ASSERT_EQ(humming_layer_transform(layer, "H200", nullptr, 1), 0)
      << humming_last_error();
  const int byM = humming_layer_kernel_count(layer);
  ASSERT_EQ(humming_layer_set_batch_invariant(layer, 1), 0)
      << humming_last_error();
  EXPECT_EQ(humming_layer_batch_invariant(layer), 1);
  ASSERT_EQ(humming_layer_transform(layer, "H200", nullptr, 1), 0)
      << humming_last_error();
  const int invariant = humming_layer_kernel_count(layer);
  EXPECT_GE(invariant, 1);
  EXPECT_LT(invariant, byM);
  ASSERT_EQ(humming_layer_set_batch_invariant(layer, 0), 0);
  ASSERT_EQ(humming_layer_transform(layer, "H200", nullptr, 1), 0);
  EXPECT_EQ(humming_layer_kernel_count(layer), byM);
  humming_layer_destroy(layer);
  // A MoE layer's tiles follow the tokens per expert: refused.
  ASSERT_EQ(humming_layer_create_moe(256, 512, 4, &w, "f16", "indexed", 2, 0,
                                     0, &layer),
            0)
      << humming_last_error();
  EXPECT_NE(humming_layer_set_batch_invariant(layer, 1), 0);
  EXPECT_EQ(std::string(humming_last_error()),
            "expected batch_invariant = false in a MoE layer (its tiles follow "
            "the tokens per expert, so a token's K decomposition depends on "
            "the batch)");
  EXPECT_EQ(humming_layer_set_batch_invariant(layer, 0), 0);
  humming_layer_destroy(layer);
  EXPECT_NE(humming_layer_set_batch_invariant(nullptr, 1), 0);
  EXPECT_EQ(std::string(humming_last_error()), "expected a layer, got NULL");
  EXPECT_EQ(humming_layer_batch_invariant(nullptr), 0);
}

TEST(CApi, DeviceFactsByNameOrByChip) {
  // What a decode kernel's floor is measured against: a known device's
  // facts, else (a name the table lacks) those of the chip's
  // representative, as transform does.
  int64_t sms = 0;
  double gbs = 0;
  ASSERT_EQ(humming_device_facts("H200", nullptr, &sms, &gbs), 0)
      << humming_last_error();
  EXPECT_EQ(sms, 132);
  EXPECT_EQ(gbs, 4800.0);
  ASSERT_EQ(humming_device_facts("H100 80GB HBM3", "sm_90a", &sms, &gbs), 0)
      << humming_last_error();
  EXPECT_EQ(gbs, 3350.0);
  EXPECT_NE(humming_device_facts("H300", nullptr, &sms, &gbs), 0);
  EXPECT_EQ(std::string(humming_last_error()).rfind(
                "expected a device among ", 0),
            0u);
  EXPECT_NE(humming_device_facts(nullptr, "sm_42", &sms, &gbs), 0);
  EXPECT_EQ(std::string(humming_last_error()).rfind(
                "expected a chip among ", 0),
            0u);
  EXPECT_NE(humming_device_facts(nullptr, nullptr, &sms, &gbs), 0);
  EXPECT_EQ(std::string(humming_last_error()),
            "expected a device or a chip, got neither");
  EXPECT_NE(humming_device_facts("H200", nullptr, nullptr, &gbs), 0);
  EXPECT_EQ(std::string(humming_last_error()),
            "expected output pointers, got NULL");
}
