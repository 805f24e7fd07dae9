//===- SafetensorsTest.cpp - The safetensors reader and checkpoints -------===//

#include "Humming/Quant/Safetensors.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <random>
#include <sys/stat.h>
#include <unistd.h>

using namespace humming;

namespace {
Tensor sample(DType d, std::vector<int64_t> shape, uint8_t seed) {
  Tensor t(d, std::move(shape));
  for (size_t i = 0; i < t.data.size(); ++i)
    t.data[i] = uint8_t(seed + i * 7);
  return t;
}

std::vector<uint8_t> withHeader(const std::string &header,
                                std::vector<uint8_t> data) {
  std::vector<uint8_t> out(8);
  for (int i = 0; i < 8; ++i)
    out[size_t(i)] = uint8_t(uint64_t(header.size()) >> (8 * i));
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

std::string tempDir() {
  char tmpl[] = "/tmp/humming-test-XXXXXX";
  const char *d = mkdtemp(tmpl);
  return d ? d : "";
}
} // namespace

TEST(Safetensors, WritesAndReadsEveryDtype) {
  std::vector<Tensor> tensors = {
      sample(DType::F16, {3, 5}, 1),     sample(DType::BF16, {4}, 2),
      sample(DType::F32, {2, 2}, 3),     sample(DType::I32, {7}, 4),
      sample(DType::U8, {9}, 5),         sample(DType::F8_E4M3, {2, 8}, 6),
      sample(DType::F8_E5M2, {3}, 7),    sample(DType::F8_E8M0, {4, 1}, 8),
      sample(DType::F4, {6, 2}, 9),      sample(DType::F6_E2M3, {8}, 10),
      sample(DType::I64, {2}, 11),       sample(DType::BOOL, {}, 12),
      sample(DType::F32, {0, 4}, 13)};
  std::vector<std::pair<std::string, TensorView>> named;
  for (size_t i = 0; i < tensors.size(); ++i)
    named.push_back({"t" + std::to_string(i), tensors[i].view()});
  Result<SafetensorsFile> f = SafetensorsFile::fromBytes(
      serializeSafetensors(named, {{"format", "pt"}}), "mem.safetensors");
  ASSERT_TRUE(f.ok()) << f.error();
  EXPECT_EQ(f->metadata().at(0).second, "pt");
  for (size_t i = 0; i < tensors.size(); ++i) {
    Result<TensorView> v = f->tensor("t" + std::to_string(i));
    ASSERT_TRUE(v.ok()) << v.error();
    EXPECT_EQ(v->dtype, tensors[i].dtype);
    EXPECT_EQ(v->shape, tensors[i].shape);
    ASSERT_EQ(v->nbytes, tensors[i].data.size());
    EXPECT_TRUE(std::equal(v->data, v->data + v->nbytes, tensors[i].data.begin()));
  }
  EXPECT_EQ(f->tensor("nope").error(), "mem.safetensors: no tensor 'nope'");
}

TEST(Safetensors, MalformedFilesAreReportedWithFileAndTensor) {
  struct Case {
    std::vector<uint8_t> bytes;
    const char *error;
  } cases[] = {
      {{1, 2, 3}, "f: expected at least 8 bytes (the header length), got 3"},
      {{0xFF, 0, 0, 0, 0, 0, 0, 0},
       "f: header length 255 runs past the end of the file (8 bytes)"},
      {{0, 0, 0, 0, 0, 0, 0, 0x10},
       "f: header length 1152921504606846976 exceeds the 100 MiB limit"},
      {withHeader("{\"a\": ", {}),
       "f: invalid JSON header: line 1, column 7: expected a value, got the end of the input"},
      {withHeader("[1]", {}), "f: expected the header to be an object, got an array"},
      {withHeader(R"({"w": {"dtype": "F7", "shape": [1], "data_offsets": [0, 1]}})", {0}),
       "f: tensor 'w': unknown dtype 'F7'"},
      {withHeader(R"({"w": {"dtype": "F16", "shape": [2, 3], "data_offsets": [0, 10]}})",
                  std::vector<uint8_t>(10)),
       "f: tensor 'w': dtype F16 with shape [2, 3] needs 12 bytes, data_offsets give 10"},
      {withHeader(R"({"w": {"dtype": "U8", "shape": [4], "data_offsets": [0, 4]}})",
                  std::vector<uint8_t>(2)),
       "f: tensor 'w': data_offsets [0, 4] lie outside the 2-byte data buffer"},
      {withHeader(R"({"w": {"dtype": "U8", "shape": [-1], "data_offsets": [0, 0]}})", {}),
       "f: tensor 'w': expected non-negative integer dimensions, got -1"},
      {withHeader(R"({"a": {"dtype": "U8", "shape": [4], "data_offsets": [0, 4]},
                      "b": {"dtype": "U8", "shape": [2], "data_offsets": [2, 4]}})",
                  std::vector<uint8_t>(4)),
       "f: tensor 'b' (bytes 2..4) overlaps tensor 'a' (bytes 0..4)"},
      {withHeader(R"({"a": {"dtype": "U8", "shape": [2], "data_offsets": [2, 4]}})",
                  std::vector<uint8_t>(4)),
       "f: bytes 0..2 of the data buffer belong to no tensor (before 'a')"},
      {withHeader(R"({"a": {"dtype": "U8", "shape": [2], "data_offsets": [0, 2]}})",
                  std::vector<uint8_t>(4)),
       "f: the data buffer has 4 bytes but the tensors end at byte 2"},
      {withHeader(R"({"__metadata__": {"k": 1}})", {}),
       "f: __metadata__ 'k': expected a string, got a number"},
      {withHeader(R"({"w": {"dtype": "U8", "shape": [1]}})", {0}),
       "f: tensor 'w': expected 'data_offsets' [begin, end]"},
      {withHeader(R"({"w": {"dtype": "U8", "shape": [4294967296, 4294967296], "data_offsets": [0, 0]}})", {}),
       "f: tensor 'w': shape [4294967296,4294967296] is too large (the product "
       "of its non-zero sizes must be at most 2^48)"},
      {withHeader("{\"" + std::string(2000, 'x') +
                      "\": {\"dtype\": \"U8\", \"shape\": [0], \"data_offsets\": [0, 0]}}",
                  {}),
       "f: a tensor name of 2000 bytes (starting 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'): "
       "expected at most 1024"},
      // A zero size made the bound skip the others.
      {withHeader(R"({"w": {"dtype": "U8", "shape": [0, 4611686018427387904], "data_offsets": [0, 0]}})", {}),
       "f: tensor 'w': shape [0,4611686018427387904] is too large (the product "
       "of its non-zero sizes must be at most 2^48)"},
  };
  for (const Case &c : cases) {
    Result<SafetensorsFile> f = SafetensorsFile::fromBytes(c.bytes, "f");
    ASSERT_FALSE(f.ok()) << c.error;
    EXPECT_EQ(f.error(), c.error);
  }
}

TEST(Safetensors, MutatedFilesNeverCrash) {
  Tensor a = sample(DType::F16, {4, 4}, 1), b = sample(DType::I32, {3}, 2);
  std::vector<uint8_t> good =
      serializeSafetensors({{"model.w", a.view()}, {"model.b", b.view()}});
  std::mt19937 rng(3);
  int ok = 0;
  for (int i = 0; i < 4000; ++i) {
    std::vector<uint8_t> bytes = good;
    switch (i % 4) {
    case 0:
      bytes.resize(rng() % bytes.size());
      break;
    case 1:
      for (int j = 0; j < 3; ++j)
        bytes[rng() % bytes.size()] = uint8_t(rng());
      break;
    case 2: // digits in the header are the interesting bytes
      for (size_t j = 8; j < bytes.size(); ++j)
        if (bytes[j] >= '0' && bytes[j] <= '9' && rng() % 8 == 0)
          bytes[j] = uint8_t('0' + rng() % 10);
      break;
    case 3:
      bytes.insert(bytes.begin() + 8 + rng() % 40, uint8_t(rng()));
      break;
    }
    Result<SafetensorsFile> f = SafetensorsFile::fromBytes(bytes, "m");
    if (!f.ok())
      continue;
    ++ok;
    // Whatever parsed must be readable in full, within the buffer.
    for (const SafetensorsEntry &e : f->entries()) {
      Result<TensorView> v = f->tensor(e.name);
      ASSERT_TRUE(v.ok());
      volatile double sink = 0;
      for (int64_t k = 0; k < v->numel(); ++k)
        sink = sink + v->at(k);
      (void)sink;
    }
  }
  EXPECT_GT(ok, 0);
}

TEST(Checkpoint, ShardedIndexAndErrors) {
  std::string dir = tempDir();
  ASSERT_FALSE(dir.empty());
  Tensor a = sample(DType::F16, {2, 2}, 1), b = sample(DType::I32, {3}, 2);
  ASSERT_TRUE(writeSafetensors(dir + "/model-00001-of-00002.safetensors",
                               {{"x.weight", a.view()}}).ok());
  ASSERT_TRUE(writeSafetensors(dir + "/model-00002-of-00002.safetensors",
                               {{"y.qweight", b.view()}}).ok());
  {
    std::ofstream(dir + "/model.safetensors.index.json")
        << R"({"metadata": {"total_size": 20}, "weight_map": {
               "x.weight": "model-00001-of-00002.safetensors",
               "y.qweight": "model-00002-of-00002.safetensors"}})";
    std::ofstream(dir + "/config.json")
        << R"({"quantization_config": {"quant_method": "gptq", "bits": 4}})";
  }
  Result<Checkpoint> c = Checkpoint::open(dir);
  ASSERT_TRUE(c.ok()) << c.error();
  EXPECT_EQ(c->tensorNames(), (std::vector<std::string>{"x.weight", "y.qweight"}));
  EXPECT_EQ(c->tensor("y.qweight")->shape, (std::vector<int64_t>{3}));
  EXPECT_EQ(c->config().get("quantization_config")->get("bits")->asInteger(), 4);
  EXPECT_EQ(c->tensor("z").error(), dir + ": no tensor 'z' in 2 safetensors files");

  // An index naming a missing shard.
  std::ofstream(dir + "/model.safetensors.index.json")
      << R"({"weight_map": {"x.weight": "model-00003.safetensors"}})";
  c = Checkpoint::open(dir);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error(), dir + "/model.safetensors.index.json names "
                             "'model-00003.safetensors', which does not exist");
  // An index that maps a tensor to the wrong shard.
  std::ofstream(dir + "/model.safetensors.index.json")
      << R"({"weight_map": {"x.weight": "model-00002-of-00002.safetensors"}})";
  c = Checkpoint::open(dir);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error(), dir + "/model.safetensors.index.json maps 'x.weight' to "
                             "'model-00002-of-00002.safetensors', which does not hold it");
  // An empty weight_map, and file names that are not files of the
  // directory ("" and "." named the directory itself: a raw system error).
  std::ofstream(dir + "/model.safetensors.index.json") << R"({"weight_map": {}})";
  EXPECT_EQ(Checkpoint::open(dir).error(),
            dir + "/model.safetensors.index.json: expected 'weight_map' to map "
                  "tensor names to files, got an empty object");
  for (const char *name : {"", ".", "..", "../x.safetensors"}) {
    std::ofstream(dir + "/model.safetensors.index.json")
        << "{\"weight_map\": {\"x.weight\": \"" << name << "\"}}";
    EXPECT_EQ(Checkpoint::open(dir).error(),
              dir + "/model.safetensors.index.json: weight_map 'x.weight': "
                    "expected the name of a file in the directory, got '" +
                  name + "'");
  }
  // A shard that is a directory.
  ASSERT_EQ(::mkdir((dir + "/sub.safetensors").c_str(), 0700), 0);
  std::ofstream(dir + "/model.safetensors.index.json")
      << R"({"weight_map": {"x.weight": "sub.safetensors"}})";
  EXPECT_EQ(Checkpoint::open(dir).error(),
            dir + "/sub.safetensors: expected a safetensors file, got a directory");
  ::rmdir((dir + "/sub.safetensors").c_str());
  EXPECT_EQ(SafetensorsFile::open("/dev/null").error(),
            "/dev/null: expected a safetensors file, got a special file");
  // A broken config names the file and the place.
  std::remove((dir + "/model.safetensors.index.json").c_str());
  std::ofstream(dir + "/config.json") << "{\"a\": }";
  c = Checkpoint::open(dir);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error(), dir + "/config.json: line 1, column 7: expected a value, got '}'");
  EXPECT_EQ(Checkpoint::open(dir + "/none").error(), dir + "/none: not a directory");
}

TEST(Checkpoint, FromPartsInMemory) {
  Tensor a = sample(DType::F16, {2, 2}, 1);
  Result<SafetensorsFile> f1 =
      SafetensorsFile::fromBytes(serializeSafetensors({{"x.weight", a.view()}}), "m1");
  Result<SafetensorsFile> f2 =
      SafetensorsFile::fromBytes(serializeSafetensors({{"x.weight", a.view()}}), "m2");
  ASSERT_TRUE(f1.ok() && f2.ok());
  Result<Checkpoint> c = Checkpoint::fromParts("mem", Json::object(), nullptr, {*f1});
  ASSERT_TRUE(c.ok()) << c.error();
  EXPECT_EQ(c->tensorNames(), std::vector<std::string>{"x.weight"});
  EXPECT_EQ(c->hfQuantConfig(), nullptr);
  EXPECT_EQ(Checkpoint::fromParts("mem", Json::object(), nullptr, {*f1, *f2}).error(),
            "mem: tensor 'x.weight' is in both m1 and m2");
  EXPECT_EQ(Checkpoint::fromParts("mem", Json::array(), nullptr, {*f1}).error(),
            "mem/config.json: expected an object, got an array");
  EXPECT_EQ(Checkpoint::fromParts("mem", Json::object(), nullptr, {}).error(),
            "mem: expected at least one safetensors file");
}
