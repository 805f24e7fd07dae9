//===- LayerTest.cpp - humming::Layer without a GPU -----------------------===//
//
// Everything up to the launch: creation errors, weights, transform for a
// target (compile-only: PTX in process, then the kernel cache), the prepared
// or canonical choice, and forward()'s refusals. The launch itself runs in
// the GPU suite.
//
//===----------------------------------------------------------------------===//

#include "Humming/API/Layer.h"
#include "Humming/API/MoeLayer.h"
#include "Humming/API/MoeRouter.h"
#include "Humming/Quant/Safetensors.h"
#include "Humming/Runtime/Compiler.h"
#include "Humming/Target/TileHeuristics.h"
#include "TestCache.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <optional>
#include <random>
#include <string>

using namespace humming;

namespace {
std::vector<double> randomWeights(int64_t n, int64_t k) {
  std::mt19937 rng(7);
  std::normal_distribution<double> d(0.0, 0.02);
  std::vector<double> w(size_t(n * k));
  for (double &v : w)
    v = d(rng);
  return w;
}

const InputSchema kF16{ScalarType::f16(), ActScaling::None, 0};

/// A 256 x 512 W4A16 g128 layer with quantized random weights (none, with
/// a test failure, if that does not work).
std::optional<Layer> quantizedW4Layer() {
  WeightSchema w4 = WeightSchema::make(ScalarType::uint(4), ScalarType::f16(),
                                       Granularity::Group, 128);
  Result<Layer> layer = Layer::create(256, 512, w4, kF16);
  if (!layer.ok()) {
    ADD_FAILURE() << layer.error();
    return std::nullopt;
  }
  std::vector<double> w = randomWeights(256, 512);
  if (Status s = layer->quantize(w.data()); !s.ok()) {
    ADD_FAILURE() << s.error();
    return std::nullopt;
  }
  return layer.take();
}
} // namespace

TEST(Layer, CreateChecksTheDescription) {
  WeightSchema w4 = WeightSchema::make(ScalarType::uint(4), ScalarType::f16(),
                                       Granularity::Group, 128);
  EXPECT_TRUE(Layer::create(256, 512, w4, kF16).ok());
  EXPECT_EQ(Layer::create(0, 512, w4, kF16).error(),
            "expected positive layer sizes, got N = 0, K = 512");
  WeightSchema gptq = w4;
  gptq.format = SourceFormat::GPTQ;
  EXPECT_EQ(Layer::create(256, 512, gptq, kF16).error(),
            "expected a canonical weight schema, got format gptq (convert with "
            "humming::sourceToCanonical or the checkpoint adapters)");
  InputSchema fp8{ScalarType::e4m3(), ActScaling::Token, 0};
  EXPECT_TRUE(bool(Layer::create(256, 512, w4, fp8)));
  InputSchema i8{ScalarType::sint(8), ActScaling::Token, 0};
  EXPECT_TRUE(bool(Layer::create(256, 512, w4, i8)));
  InputSchema i4{ScalarType::sint(4), ActScaling::Token, 0};
  EXPECT_TRUE(bool(Layer::create(256, 512, w4, i4)));
  InputSchema f4{ScalarType::e2m1(), ActScaling::Token, 0};
  EXPECT_EQ(Layer::create(256, 512, w4, f4).error(),
            "expected f16, bf16, f8E4M3FN, f8E5M2, si8 or si4 activations, "
            "got f4E2M1FN: e2m1 activations wait for block-scaled MMA");
  EXPECT_EQ(Layer::create(256, 512, w4, kF16, {}, ScalarType::f32()).error(),
            "expected an f16 or bf16 output, got f32");
  WeightSchema moe = w4;
  moe.experts = 8;
  EXPECT_EQ(Layer::create(256, 512, moe, kF16).error(),
            "expected a dense layer (experts = 0), got 8 experts: create a "
            "mixture-of-experts GEMM with Layer::createMoe");
  // K not a multiple of the group size: the schema rules' own message.
  Result<Layer> odd = Layer::create(256, 100, w4, kF16);
  ASSERT_FALSE(odd.ok());
  EXPECT_FALSE(odd.error().empty());
}

TEST(Layer, MoeOptionsAreChecked) {
  WeightSchema w4 = WeightSchema::make(ScalarType::uint(4), ScalarType::f16(),
                                       Granularity::Group, 128);
  w4.experts = 8;
  MoeOptions moe;
  moe.topK = 2;
  EXPECT_TRUE(bool(Layer::createMoe(256, 512, w4, kF16, moe)));
  WeightSchema dense = w4;
  dense.experts = 0;
  EXPECT_EQ(Layer::createMoe(256, 512, dense, kF16, moe).error(),
            "expected 1 .. 2^20 experts in the weight schema of a MoE layer, "
            "got 0");
  MoeOptions bad = moe;
  bad.topK = 9;
  EXPECT_EQ(Layer::createMoe(256, 512, w4, kF16, bad).error(),
            "expected top_k in 1 .. 8 (the experts), got 9");
  bad = moe;
  bad.blockSize = 24;
  EXPECT_EQ(Layer::createMoe(256, 512, w4, kF16, bad).error(),
            "expected block_size to be 0 (chosen per M) or a multiple of 16 "
            "in 16 .. 1024 (the kernels' block_m divides it), got 24");
  bad = moe;
  bad.routing = GemmType::GroupedMasked;
  EXPECT_EQ(Layer::createMoe(256, 512, w4, kF16, bad).error(),
            "expected top_k = 1 with grouped_masked routing (rows are already "
            "per expert), got 2");
  bad.routing = GemmType::Dense;
  EXPECT_EQ(Layer::createMoe(256, 512, w4, kF16, bad).error(),
            "expected a MoE routing (indexed, grouped_contiguous or "
            "grouped_masked), got dense (use Layer::create)");
  ComputeOptions masked;
  masked.gemm = GemmType::GroupedMasked;
  EXPECT_EQ(Layer::createMoe(256, 512, w4, kF16, moe, masked).error(),
            "expected ComputeOptions::gemm to be dense or the routing "
            "(indexed), got grouped_masked");
  ComputeOptions invariant;
  invariant.batchInvariant = true;
  EXPECT_EQ(Layer::createMoe(256, 512, w4, kF16, moe, invariant).error(),
            "expected batch_invariant = false in a MoE layer (its tiles follow "
            "the tokens per expert, so a token's K decomposition depends on "
            "the batch)");
}

TEST(Layer, MoeCompilesAndChecksItsRouting) {
  test::useTestCache();
  WeightSchema w4 = WeightSchema::make(ScalarType::uint(4), ScalarType::f16(),
                                       Granularity::Group, 128);
  w4.experts = 4;
  MoeOptions moe;
  moe.topK = 2;
  moe.blockSize = 32;
  moe.routerWeights = true;
  Result<Layer> layer = Layer::createMoe(200, 256, w4, kF16, moe);
  ASSERT_TRUE(layer.ok()) << layer.error();
  std::vector<double> w(size_t(4 * 200 * 256), 0.25);
  ASSERT_TRUE(layer->quantize(w.data()).ok());
  // The canonical layout cannot run a MoE GEMM.
  LayerTarget canonical{"H200", "", /*compileOnly=*/true};
  canonical.canonicalLayout = true;
  EXPECT_EQ(layer->transform(canonical).error(),
            "a MoE layer runs over the prepared layout only, which is not "
            "used: the target asks for the canonical layout");
  Status s = layer->transform({"H200", "", /*compileOnly=*/true});
  ASSERT_TRUE(s.ok()) << s.error();
  ASSERT_FALSE(layer->kernels().empty());
  for (const humming::abi::KernelLaunch &k : layer->kernels()) {
    EXPECT_EQ(k.routing, humming::abi::kRoutingIndexed);
    EXPECT_EQ(k.experts, 4);
    EXPECT_EQ(k.topK, 2);
    EXPECT_EQ(k.blockSize, 32);
    EXPECT_EQ(32 % k.blockM, 0) << k.name;
    EXPECT_EQ(k.inputMap, 0) << k.name;
  }
  EXPECT_NE(layer->ptx().find(".entry"), std::string::npos);
  // A MoE layer runs by forwardMoe, with its routing; the routing's errors
  // come before the device's.
  EXPECT_EQ(layer->forward(nullptr, 16, 16, 1).error(),
            "a MoE layer (Layer::createMoe) runs by forwardMoe(), with its "
            "routing");
  MoeRouting r;
  EXPECT_EQ(layer->forwardMoe(nullptr, 16, 16, 1, r).error(),
            "expected sorted_ids (indexed routing), got a null pointer");
  r.sortedIds = 32;
  r.expertIds = 34;
  r.numTokensPadded = 64;
  EXPECT_EQ(layer->forwardMoe(nullptr, 16, 16, 1, r).error(),
            "expected a 4-byte aligned expert_ids, got 0x22");
  r.expertIds = 48;
  r.sortedLength = -1;
  EXPECT_EQ(layer->forwardMoe(nullptr, 16, 16, 1, r).error(),
            "expected the length of sorted_ids in 0 .. 2^31 - 1, got -1");
  r.sortedLength = 64;
  EXPECT_EQ(layer->forwardMoe(nullptr, 16, 16, 1, r).error(),
            "expected router weights (indexed routing), got a null pointer");
  r.routerWeights = 128;
  // A routing block size the kernel's block_m does not divide.
  r.blockSize = 40;
  EXPECT_EQ(layer->forwardMoe(nullptr, 16, 16, 1, r).error(),
            "expected the routing's block_size to be a multiple of 16 up to "
            "1024 (the block_m of the kernel for M = 1: route with "
            "Layer::moeBlockSize(M)), got 40");
  EXPECT_EQ(layer->moeBlockSize(1), 32);
  r.blockSize = 0; // the layer's 32
  EXPECT_EQ(layer->forwardMoe(nullptr, 16, 16, 1, r).error(),
            "the layer was transformed compile-only for sm_90a; transform it "
            "for a device to run it");
  EXPECT_EQ(layer->forwardMoe(nullptr, 16, 16, 1, r, 64).error(),
            "expected no activation scales with f16 activations, got a "
            "pointer");
  MoeRouting big = r;
  EXPECT_EQ(layer->forwardMoe(nullptr, 16, 16, int64_t(1) << 30, big).error(),
            "expected M * top_k <= 2^31 - 1, got M = 1073741824, top_k = 2");
  // A dense layer has no forwardMoe.
  WeightSchema dense = w4;
  dense.experts = 0;
  Result<Layer> d = Layer::create(256, 256, dense, kF16);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->forwardMoe(nullptr, 16, 16, 1, r).error(),
            "forwardMoe() runs MoE layers (Layer::createMoe); this one is "
            "dense: call forward()");
}

// MoeOptions::blockSize = 0: the tiles are free among the block_m that
// divide kMoeFollowingBlockSize and each call routes with its kernel's
// block_m (16 at decode, 32 at 9-16 tokens per expert; from 65 the
// 128-row warp-specialized tile without router weights, 96 rows with
// them).
TEST(Layer, MoeBlockSizeFollowsM) {
  test::useTestCache();
  WeightSchema w4 = WeightSchema::make(ScalarType::uint(4), ScalarType::f16(),
                                       Granularity::Group, 128);
  w4.experts = 8;
  std::vector<double> w(size_t(8 * 1024 * 2048), 0.25);
  for (bool routerWeights : {false, true}) {
    MoeOptions moe;
    moe.topK = 2;
    moe.routerWeights = routerWeights;
    Result<Layer> layer = Layer::createMoe(1024, 2048, w4, kF16, moe);
    ASSERT_TRUE(layer.ok()) << layer.error();
    EXPECT_EQ(layer->moeBlockSize(1), 0); // before transform
    ASSERT_TRUE(layer->quantize(w.data()).ok());
    Status s = layer->transform({"H200", "", /*compileOnly=*/true});
    ASSERT_TRUE(s.ok()) << s.error();
    for (const humming::abi::KernelLaunch &k : layer->kernels())
      EXPECT_EQ(k.blockSize, kMoeFollowingBlockSize) << k.name; // the op's
    EXPECT_EQ(layer->moeBlockSize(1), 16);
    EXPECT_EQ(layer->moeBlockSize(32), 16);  // 8 tokens per expert
    EXPECT_EQ(layer->moeBlockSize(64), 32);  // 16
    EXPECT_EQ(layer->moeBlockSize(128), 48); // 32
    EXPECT_EQ(layer->moeBlockSize(256), 96); // 64
    // 1024 tokens per expert.
    EXPECT_EQ(layer->moeBlockSize(4096), routerWeights ? 96 : 128);
    MoeRouting r;
    r.sortedIds = r.expertIds = r.numTokensPadded = 64;
    r.sortedLength = 64;
    r.routerWeights = routerWeights ? 64 : 0;
    EXPECT_EQ(layer->forwardMoe(nullptr, 16, 16, 4096, r).error(),
              concat("expected the routing's block_size to be a multiple of ",
                     routerWeights ? 96 : 128,
                     " up to 1024 (the block_m of the kernel for M = 4096: "
                     "route with Layer::moeBlockSize(M)), got 0 "
                     "(MoeRouting::blockSize unset)"));
    r.blockSize = 384; // a multiple of block_m is as good
    EXPECT_EQ(layer->forwardMoe(nullptr, 16, 16, 4096, r).error(),
              "the layer was transformed compile-only for sm_90a; transform "
              "it for a device to run it");
  }
}

/// A 4-expert uint4 g128 MoE GEMM of 256 x 256 with `moe`'s routing,
/// quantized and transformed compile-only for the H200.
static Result<Layer> compileOnlyMoe(const MoeOptions &moe) {
  WeightSchema w4 = WeightSchema::make(ScalarType::uint(4), ScalarType::f16(),
                                       Granularity::Group, 128);
  w4.experts = 4;
  Result<Layer> layer = Layer::createMoe(256, 256, w4, kF16, moe);
  if (!layer)
    return layer;
  std::vector<double> w(size_t(4 * 256 * 256), 0.5);
  if (Status s = layer->quantize(w.data()); !s)
    return Error{s.error()};
  if (Status s = layer->transform({"H200", "", /*compileOnly=*/true}); !s)
    return Error{s.error()};
  return layer;
}

TEST(Layer, MoeGroupedMaskedNeedsWholeExperts) {
  test::useTestCache();
  MoeOptions moe;
  moe.routing = GemmType::GroupedMasked;
  Result<Layer> layer = compileOnlyMoe(moe);
  ASSERT_TRUE(layer.ok()) << layer.error();
  MoeRouting r;
  EXPECT_EQ(layer->forwardMoe(nullptr, 16, 16, 6, r).error(),
            "expected expert token counts [E] (grouped_masked routing), got a "
            "null pointer");
  MoeOptions contiguous;
  contiguous.routing = GemmType::GroupedContiguous;
  Result<Layer> offsets = compileOnlyMoe(contiguous);
  ASSERT_TRUE(offsets.ok()) << offsets.error();
  EXPECT_EQ(offsets->forwardMoe(nullptr, 16, 16, 6, r).error(),
            "expected expert offsets [E + 1] (grouped_contiguous routing), got "
            "a null pointer");
  r.expertLayout = 64;
  EXPECT_EQ(layer->forwardMoe(nullptr, 16, 16, 6, r).error(),
            "expected E x max_tokens rows with grouped_masked routing (E = 4), "
            "got M = 6");
  r.routerWeights = 128;
  EXPECT_EQ(layer->forwardMoe(nullptr, 16, 16, 8, r).error(),
            "expected no router weights: the layer was created without "
            "MoeOptions::routerWeights");
}

// MoeOptions::allRows: grouped_masked without counts (a batch of matmuls,
// one weight matrix each): the kernels read no expert_layout, a call gives
// none, and the option means nothing with another routing.
TEST(Layer, MoeAllRowsTakesNoCounts) {
  test::useTestCache();
  MoeOptions moe;
  moe.routing = GemmType::GroupedMasked;
  moe.allRows = true;
  Result<Layer> layer = compileOnlyMoe(moe);
  ASSERT_TRUE(layer.ok()) << layer.error();
  MoeRouting r;
  EXPECT_EQ(layer->forwardMoe(nullptr, 16, 16, 8, r).error(),
            "the layer was transformed compile-only for sm_90a; transform "
            "it for a device to run it");
  r.expertLayout = 64;
  EXPECT_EQ(layer->forwardMoe(nullptr, 16, 16, 8, r).error(),
            "expected no expert token counts with MoeOptions::allRows (every "
            "expert has all of its max_tokens rows), got a pointer");
  MoeOptions indexed;
  indexed.allRows = true;
  EXPECT_EQ(compileOnlyMoe(indexed).error(),
            "expected MoeOptions::allRows only with grouped_masked routing "
            "(every expert all of its max_tokens rows), got indexed");
}

// 8-bit MoE layers take codes with their scales, or 16-bit activations
// once transformed with activationRows.
TEST(Layer, MoeEightBitActivations) {
  test::useTestCache();
  WeightSchema w8 = WeightSchema::make(ScalarType::e4m3(), ScalarType::f16(),
                                       Granularity::Channel);
  w8.experts = 4;
  InputSchema fp8{ScalarType::e4m3(), ActScaling::Token, 0};
  MoeOptions moe;
  moe.topK = 2;
  Result<Layer> layer = Layer::createMoe(256, 256, w8, fp8, moe);
  ASSERT_TRUE(layer.ok()) << layer.error();
  std::vector<double> w(size_t(4 * 256 * 256), 0.5);
  ASSERT_TRUE(layer->quantize(w.data()).ok());
  Status s = layer->transform({"H200", "", /*compileOnly=*/true});
  ASSERT_TRUE(s.ok()) << s.error();
  MoeRouting r{32, 48, 64, 64};
  EXPECT_EQ(layer->forwardMoe(nullptr, 16, 16, 1, r, 66).error(),
            "expected 4-byte aligned activation scales, got 0x42");
  EXPECT_EQ(layer->forwardMoe(nullptr, 16, 16, 1, r).error(),
            "the layer takes f8E4M3FN activations: pass their f32 scales "
            "(inputScale), or transform it with LayerTarget::activationRows "
            "to give 16-bit ones");
}

TEST(MoeRouter, ChecksItsArguments) {
  test::useTestCache();
  EXPECT_EQ(MoeRouter::create(2048, 8, 64).error(),
            "expected 1 .. 1024 experts (one thread of the routing block "
            "each), got 2048");
  EXPECT_EQ(MoeRouter::create(8, 0, 64).error(),
            "expected top_k in 1 .. 8 (the experts), got 0");
  Result<MoeRouter> r = MoeRouter::create(128, 8, 64);
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r->sortedCapacity(4), 4 * 8 + 128 * 63);
  EXPECT_EQ(r->blockCapacity(4), (4 * 8 + 128 * 63 + 63) / 64);
  EXPECT_EQ(r->forward(nullptr, 16, 1, 16, 16, 16).error(),
            "call transform() before forward()");
  LayerTarget tiled{"H200", "", /*compileOnly=*/true};
  tiled.tileConfig = "#humming.tile_config<block = [16, 64, 64], warp = "
                     "[16, 64, 32]>";
  EXPECT_EQ(r->transform(tiled).error(),
            "a tile configuration or the canonical layout applies to a "
            "layer's GEMM kernels; expected neither for the MoE router");
  ASSERT_TRUE(r->transform({"H200", "", /*compileOnly=*/true}).ok());
  EXPECT_EQ(r->kernel().kind, humming::abi::kMoeAlignKernel);
  EXPECT_NE(r->ptx().find("atom.shared.add"), std::string::npos);
  EXPECT_EQ(r->forward(nullptr, 16, 1, 0, 16, 16).error(),
            "expected device pointers for the top-k ids, sorted_ids, "
            "expert_ids and num_tokens_padded, got a null pointer");
  EXPECT_EQ(r->forward(nullptr, 16, 1, 18, 16, 16).error(),
            "expected 4-byte aligned top-k ids, sorted_ids, expert_ids and "
            "num_tokens_padded");
  EXPECT_EQ(r->forward(nullptr, 16, -1, 16, 16, 16).error(),
            "expected 0 <= M and M * top_k + E * (block_size - 1) <= 2^31 - "
            "1, got M = -1");
  EXPECT_EQ(r->forward(nullptr, 16, 1, 16, 16, 16).error(),
            "the MoE router was transformed compile-only for sm_90a; "
            "transform it for a device to run it");
}

TEST(MoeGrouping, ChecksItsArguments) {
  test::useTestCache();
  EXPECT_EQ(MoeGrouping::create(2048, 8, 0, {}).error(),
            "expected 1 .. 1024 experts (one thread of the routing block "
            "each), got 2048");
  EXPECT_EQ(MoeGrouping::create(8, 9, 0, {}).error(),
            "expected top_k in 1 .. 8 (the experts), got 9");
  EXPECT_EQ(MoeGrouping::create(1024, 8, 3000000, {}).error(),
            "expected max_tokens 0 (grouped_contiguous) or 1 .. (2^31 - 1) / "
            "experts (grouped_masked), got 3000000");
  EXPECT_EQ(MoeGrouping::create(8, 2, 0, {4096, 6}).error(),
            "expected row widths in bytes that are positive multiples of 4 up "
            "to 1 MiB, got 6");
  Result<MoeGrouping> c = MoeGrouping::create(128, 8, 0, {4096, 3072});
  ASSERT_TRUE(c.ok()) << c.error();
  EXPECT_EQ(c->routing(), GemmType::GroupedContiguous);
  EXPECT_EQ(c->groupedRows(5), 40);
  EXPECT_EQ(c->layoutSize(), 129);
  EXPECT_EQ(c->forward(nullptr, 16, 1, 16, 16).error(),
            "call transform() before forward()");
  LayerTarget tiled{"H200", "", /*compileOnly=*/true};
  tiled.tileConfig = "#humming.tile_config<block = [16, 64, 64], warp = "
                     "[16, 64, 32]>";
  EXPECT_EQ(c->transform(tiled).error(),
            "a tile configuration or the canonical layout applies to a "
            "layer's GEMM kernels; expected neither for the MoE grouping");
  ASSERT_TRUE(c->transform({"H200", "", /*compileOnly=*/true}).ok());
  EXPECT_EQ(c->kernel().kind, humming::abi::kMoeGroupKernel);
  EXPECT_EQ(c->kernel().routing, humming::abi::kRoutingContiguous);
  EXPECT_EQ(c->forward(nullptr, 16, -1, 16, 16).error(),
            "expected 0 <= M and M * top_k <= 2^31 - 1, got M = -1");
  EXPECT_EQ(c->forward(nullptr, 0, 2, 16, 16).error(),
            "expected device pointers for the top-k ids and the positions, "
            "got a null pointer");
  EXPECT_EQ(c->forward(nullptr, 16, 0, 16, 0).error(),
            "expected a 4-byte aligned device pointer for the expert layout "
            "(written for every M, 0 included)");
  EXPECT_EQ(c->scatter(nullptr, 4096, 16, 2, 18, 16).error(),
            "expected 4-byte aligned device pointers for the rows, the "
            "positions and the grouped rows");
  EXPECT_EQ(c->scatter(nullptr, 4096, 16, 2, 16, 16).error(),
            "the MoE grouping was transformed compile-only for sm_90a; "
            "transform it for a device to run it");
  Result<MoeGrouping> m = MoeGrouping::create(8, 2, 64, {256});
  ASSERT_TRUE(m.ok()) << m.error();
  EXPECT_EQ(m->routing(), GemmType::GroupedMasked);
  EXPECT_EQ(m->groupedRows(5), 8 * 64);
  EXPECT_EQ(m->layoutSize(), 8);
  ASSERT_TRUE(m->transform({"H200", "", /*compileOnly=*/true}).ok());
  EXPECT_EQ(m->kernel().routing, humming::abi::kRoutingMasked);
  EXPECT_EQ(m->kernel().blockSize, 64);
  EXPECT_EQ(m->forward(nullptr, 16, 65, 16, 16).error(),
            "expected M <= max_tokens = 64 (grouped_masked: each expert can "
            "then take every token), got M = 65");
  EXPECT_EQ(m->gather(nullptr, 512, 16, 2, 16, 16).error(),
            "expected one of the row widths the grouping was created with, "
            "got 512 bytes");
  EXPECT_EQ(m->gather(nullptr, 256, 16, 2, 16, 16).error(),
            "the MoE grouping was transformed compile-only for sm_90a; "
            "transform it for a device to run it");
}

TEST(MoeLayer, CompilesAndChecksItsArguments) {
  test::useTestCache();
  WeightSchema w4 = WeightSchema::make(ScalarType::uint(4), ScalarType::f16(),
                                       Granularity::Group, 128);
  EXPECT_EQ(MoeLayer::create({256, 127, 4, 2}, w4, w4, kF16).error(),
            "expected positive, even hidden and intermediate sizes, got H = "
            "256, I = 127");
  Result<MoeLayer> moe = MoeLayer::create({256, 128, 4, 2, 32}, w4, w4, kF16);
  ASSERT_TRUE(moe.ok()) << moe.error();
  EXPECT_EQ(moe->forward(nullptr, 16, 16, 16, 16, 1).error(),
            "call transform() before forward()");
  EXPECT_EQ(moe->quantize(nullptr, nullptr).error(),
            "expected gate_up and down weights, got a null pointer");
  std::vector<double> gu(size_t(4 * 256 * 256), 0.5), dn(size_t(4 * 256 * 128), 0.25);
  ASSERT_TRUE(moe->quantize(gu.data(), dn.data()).ok());
  EXPECT_EQ(moe->transform({"H200", "", /*compileOnly=*/true}, 0).error(),
            "expected 1 <= maxTokens and maxTokens * top_k + E * (block_size "
            "- 1) <= 2^31 - 1 (block_size up to 32), got 0");
  Status s = moe->transform({"H200", "", /*compileOnly=*/true}, 64);
  ASSERT_TRUE(s.ok()) << s.error();
  EXPECT_EQ(moe->gateUp().n(), 256);
  EXPECT_EQ(moe->down().k(), 128);
  EXPECT_EQ(moe->down().moe()->topK, 1);
  EXPECT_TRUE(moe->down().moe()->routerWeights);
  EXPECT_EQ(moe->forward(nullptr, 16, 16, 16, 16, 65).error(),
            "expected 0 <= M <= 64 tokens (transform's maxTokens), got 65");
  EXPECT_EQ(moe->forward(nullptr, 16, 16, 16, 0, 1).error(),
            "expected device pointers for x, topk_ids, topk_weights and y, "
            "got a null pointer");
  EXPECT_EQ(moe->forward(nullptr, 8, 16, 16, 16, 1).error(),
            "expected 16-byte aligned x and y and 4-byte aligned topk_ids and "
            "topk_weights");
  EXPECT_EQ(moe->forward(nullptr, 16, 16, 16, 16, 1).error(),
            "the MoE layer was transformed compile-only; transform it for a "
            "device to run it");
  EXPECT_EQ(moe->blockSizeFor(1), 32); // fixed
  // Chosen per call (the default): decode routes 16-row blocks.
  Result<MoeLayer> perM = MoeLayer::create({256, 128, 4, 2}, w4, w4, kF16);
  ASSERT_TRUE(perM.ok()) << perM.error();
  ASSERT_TRUE(perM->quantize(gu.data(), dn.data()).ok());
  s = perM->transform({"H200", "", /*compileOnly=*/true}, 64);
  ASSERT_TRUE(s.ok()) << s.error();
  EXPECT_EQ(perM->blockSizeFor(1), 16);
}

TEST(MoeLayer, TakesEightBitActivationsItQuantizes) {
  // fp8 activations per token: each GEMM quantizes its own 16-bit input
  // (x, then the gated intermediate), so the layer's x and y are the output
  // type; a static scale (one for x and the intermediate alike) and 16-bit
  // activations of another type than the output are refused up front.
  test::useTestCache();
  WeightSchema w4 = WeightSchema::make(ScalarType::uint(4), ScalarType::f16(),
                                       Granularity::Group, 128);
  const InputSchema e4{ScalarType::e4m3(), ActScaling::Token, 0};
  const InputSchema fixed{ScalarType::e4m3(), ActScaling::Static, 0};
  EXPECT_EQ(MoeLayer::create({256, 128, 4, 2}, w4, w4, fixed).error(),
            "expected f8E4M3FN activations scaled per token (or per group of "
            "K) in a MoE block, whose GEMMs quantize their own 16-bit inputs, "
            "got " +
                formatInputSchema(fixed));
  EXPECT_EQ(MoeLayer::create({256, 128, 4, 2}, w4, w4, kF16, ScalarType::bf16())
                .error(),
            "expected the output type of 16-bit activations (x, y and the "
            "intermediates share it), got f16 activations and bf16 output");
  Result<MoeLayer> moe =
      MoeLayer::create({256, 128, 4, 2}, w4, w4, e4, ScalarType::bf16());
  ASSERT_TRUE(moe.ok()) << moe.error();
  EXPECT_EQ(moe->outputType(), ScalarType::bf16());
  std::vector<double> gu(size_t(4 * 256 * 256), 0.5),
      dn(size_t(4 * 256 * 128), 0.25);
  ASSERT_TRUE(moe->quantize(gu.data(), dn.data()).ok());
  Status s = moe->transform({"H200", "", /*compileOnly=*/true}, 64);
  ASSERT_TRUE(s.ok()) << s.error();
  EXPECT_EQ(moe->gateUp().inputSchema().type, ScalarType::e4m3());
  EXPECT_EQ(moe->down().inputSchema().scaling, ActScaling::Token);
}

TEST(Layer, TransformCompilesEveryKernelForTheTarget) {
  test::useTestCache();
  WeightSchema w4 = WeightSchema::make(ScalarType::uint(4), ScalarType::f16(),
                                       Granularity::Group, 128);
  Result<Layer> layer = Layer::create(256, 512, w4, kF16);
  ASSERT_TRUE(layer.ok()) << layer.error();
  // Nothing to transform yet, nothing to run.
  EXPECT_EQ(layer->transform({"H200", "", true}).error(),
            "expected weights before transform(): call loadQuantized() or "
            "quantize() first");
  EXPECT_EQ(layer->forward(nullptr, 256, 256, 1).error(),
            "call transform() before forward()");
  std::vector<double> w = randomWeights(256, 512);
  ASSERT_TRUE(layer->quantize(w.data()).ok());
  Status s = layer->transform({"H200", "", /*compileOnly=*/true});
  ASSERT_TRUE(s.ok()) << s.error();
  EXPECT_TRUE(layer->prepared());
  // One per M range (1-8, 9-64, 65-512, 513-: the heuristics' ranges with
  // equal tiles merged, but not across 8 / 9: up to 8 tokens the 16-row
  // tile takes the transposed product).
  ASSERT_EQ(layer->kernels().size(), 4u);
  EXPECT_EQ(layer->kernels()[0].mMin, 1);
  EXPECT_EQ(layer->kernels().back().mMax, 0);
  EXPECT_NE(layer->ptx().find(".target sm_90a"), std::string::npos);
  EXPECT_NE(layer->ptx().find(".entry layer_gemm0_m0"), std::string::npos);
  // One pipeline run (one PTX module) per M-range kernel, run in parallel.
  size_t modules = 0;
  for (size_t at = layer->ptx().find(".version"); at != std::string::npos;
       at = layer->ptx().find(".version", at + 1))
    ++modules;
  EXPECT_EQ(modules, 4u);
  EXPECT_EQ(layer->transformStats().compiled + layer->transformStats().cached, 4);
  // The same layer again: every kernel from the cache, no pipeline run.
  Result<Layer> twin = Layer::create(256, 512, w4, kF16);
  ASSERT_TRUE(twin.ok());
  ASSERT_TRUE(twin->quantize(w.data()).ok());
  ASSERT_TRUE(twin->transform({"H200", "", true}).ok());
  EXPECT_EQ(twin->transformStats().cached, 4);
  EXPECT_EQ(twin->transformStats().compiled, 0);
  EXPECT_EQ(twin->ptx(), layer->ptx());
  EXPECT_LT(twin->transformStats().kernelSeconds, 0.5);
  EXPECT_GE(twin->transformStats().weightSeconds, 0.0);
  EXPECT_EQ(layer->forward(nullptr, 256, 256, 1).error(),
            "the layer was transformed compile-only for sm_90a; transform it "
            "for a device to run it");
  // Bad arguments are named before anything needs a device.
  EXPECT_EQ(layer->forward(nullptr, 256, 256, -1).error(),
            "expected 0 <= M <= 2^31 - 1 tokens, got -1");
  EXPECT_EQ(layer->forward(nullptr, 0, 256, 1).error(),
            "expected device pointers for the input and the output, got a "
            "null pointer");
  EXPECT_EQ(layer->forward(nullptr, 0x1008, 0x2002, 1).error(),
            "expected a 16-byte aligned input and a 4-byte aligned output, "
            "got 0x1008 and 0x2002");
}

// Where the prepared weights are made (HUMMING_PREPARE: on the device by
// the humming.repack kernels by default, or on the host) and what
// deviceWeights() says without weights on a device. (The device's repack
// against the host's, word for word: the GPU suite's checkDeviceRepack.)
TEST(Layer, DeviceWeightsAndThePrepareSetting) {
  test::useTestCache();
  std::optional<Layer> layer = quantizedW4Layer();
  ASSERT_TRUE(layer);
  EXPECT_EQ(layer->deviceWeights().error(),
            "call transform() before deviceWeights()");
  ::setenv("HUMMING_PREPARE", "gpu", 1);
  EXPECT_EQ(layer->transform({"H200", "", true}).error(),
            "expected HUMMING_PREPARE to be host (the weights prepared on the "
            "host) or device (by the GPU where the layer runs on one), got "
            "'gpu'");
  for (const char *where : {"host", "device"}) {
    ::setenv("HUMMING_PREPARE", where, 1);
    Status s = layer->transform({"H200", "", true});
    EXPECT_TRUE(s.ok()) << where << ": " << s.error();
  }
  ::unsetenv("HUMMING_PREPARE");
  EXPECT_EQ(layer->deviceWeights().error(),
            "the layer was transformed compile-only for sm_90a; its weights "
            "are on no device");
}

// quantizeOnDevice's arguments are checked before any device is needed (the
// quantization itself against the host's, byte for byte: the GPU suite's
// quantize_weights cases).
TEST(Layer, QuantizeOnDeviceChecksItsArguments) {
  WeightSchema w4 = WeightSchema::make(ScalarType::uint(4), ScalarType::f16(),
                                       Granularity::Group, 128);
  Result<Layer> layer = Layer::create(256, 512, w4, kF16);
  ASSERT_TRUE(layer.ok()) << layer.error();
  LayerTarget h200{"H200", "", false};
  EXPECT_EQ(layer->quantizeOnDevice(h200, 0, DType::F16).error(),
            "expected device weights to quantize, got a null pointer");
  EXPECT_EQ(layer->quantizeOnDevice(h200, 0x1000, DType::I32).error(),
            "expected F16, BF16 or F32 weights to quantize, got I32");
  EXPECT_EQ(layer->quantizeOnDevice({"H200", "", true}, 0x1000, DType::F16)
                .error(),
            "quantizeOnDevice() runs on a device; the target is compile-only "
            "(quantize() runs on the host)");
  WeightSchema withBias = w4;
  withBias.bias = true;
  Result<Layer> biased = Layer::create(256, 512, withBias, kF16);
  ASSERT_TRUE(biased.ok()) << biased.error();
  EXPECT_EQ(biased->quantizeOnDevice(h200, 0x1000, DType::F16).error(),
            "expected a bias: the schema has bias = true");
}

TEST(Layer, SchemasThePreparedLayoutRefusesUseTheCanonicalKernel) {
  test::useTestCache();
  // Block scales: the general kernel over canonical weights.
  WeightSchema block = WeightSchema::make(ScalarType::e4m3(), ScalarType::f32(),
                                          Granularity::Block, 128);
  block.groupN = 128;
  Result<Layer> layer = Layer::create(256, 512, block, kF16);
  ASSERT_TRUE(layer.ok()) << layer.error();
  std::vector<double> w = randomWeights(256, 512);
  ASSERT_TRUE(layer->quantize(w.data()).ok());
  Status s = layer->transform({"", "sm_80", true});
  ASSERT_TRUE(s.ok()) << s.error();
  EXPECT_FALSE(layer->prepared());
  EXPECT_EQ(layer->kernels().size(), 1u);
  EXPECT_NE(layer->ptx().find(".target sm_80"), std::string::npos);
}

TEST(Layer, TargetAndWeightErrors) {
  test::useTestCache();
  WeightSchema w8 = WeightSchema::make(ScalarType::uint(8), ScalarType::f16(),
                                       Granularity::Channel);
  Result<Layer> layer = Layer::create(128, 256, w8, kF16);
  ASSERT_TRUE(layer.ok());
  std::vector<double> w = randomWeights(128, 256);
  ASSERT_TRUE(layer->quantize(w.data()).ok());
  EXPECT_NE(layer->transform({"H201", "", true}).error().find(
                "expected a device among"),
            std::string::npos);
  EXPECT_NE(layer->transform({"", "sm_99", true}).error().find(
                "expected a chip among"),
            std::string::npos);
  EXPECT_EQ(layer->transform({"", "sm_75", true}).error(),
            "the mma_sync kernels need sm_80 or newer, got sm_75");
  EXPECT_EQ(layer->transform({"", "", true}).error(),
            "expected a target device or chip");
  // loadQuantized checks the tensors against the schema.
  QuantizedWeights wrong;
  wrong.weight = Tensor(DType::I32, {128, 32});
  Status bad = layer->loadQuantized(wrong);
  ASSERT_FALSE(bad.ok());
  EXPECT_FALSE(bad.error().empty());
  EXPECT_EQ(layer->quantize(nullptr).error(),
            "expected weights to quantize, got a null pointer");
}

TEST(Layer, EightBitActivationsNeedThePreparedWgmmaKernels) {
  // fp8 activations: the sm_90a wgmma kernels over prepared weights; a
  // schema the prepared layout does not hold with them (groups of 32), the
  // canonical layout, and forward() of 16-bit activations are refused.
  test::useTestCache();
  const InputSchema e4{ScalarType::e4m3(), ActScaling::Token, 0};
  WeightSchema g32 = WeightSchema::make(ScalarType::uint(4), ScalarType::f16(),
                                        Granularity::Group, 32);
  Result<Layer> layer = Layer::create(128, 256, g32, e4);
  ASSERT_TRUE(layer.ok()) << layer.error();
  std::vector<double> w = randomWeights(128, 256);
  ASSERT_TRUE(layer->quantize(w.data()).ok());
  EXPECT_EQ(layer->transform({"H200", "", true}).error(),
            "f8E4M3FN activations run over the prepared layout only, which is "
            "not used: the prepared mma_sync layout applies group scales to "
            "each 64-column iteration's f32 sums with f8E4M3FN activations "
            "and expects groups of at least 64, got 32");
  WeightSchema g128 = g32;
  g128.groupK = 128;
  Result<Layer> ok = Layer::create(128, 256, g128, e4);
  ASSERT_TRUE(ok.ok()) << ok.error();
  ASSERT_TRUE(ok->quantize(w.data()).ok());
  EXPECT_EQ(ok->forwardQuantized(nullptr, 16, 16, 16, 1).error(),
            "call transform() before forwardQuantized()");
  LayerTarget canonical{"H200", "", true};
  canonical.canonicalLayout = true;
  EXPECT_EQ(ok->transform(canonical).error(),
            "f8E4M3FN activations run over the prepared layout only, which is "
            "not used: the target asks for the canonical layout");
  // si4 (W4A4 int) likewise.
  const WeightSchema s4w = WeightSchema::make(
      ScalarType::sint(4), ScalarType::f16(), Granularity::Channel);
  Result<Layer> w4a4 = Layer::create(
      128, 256, s4w, {ScalarType::sint(4), ActScaling::Token, 0});
  ASSERT_TRUE(w4a4.ok()) << w4a4.error();
  ASSERT_TRUE(w4a4->quantize(w.data()).ok());
  LayerTarget a100{"A100", "", true};
  a100.canonicalLayout = true;
  EXPECT_EQ(w4a4->transform(a100).error(),
            "si4 activations run over the prepared layout only, which is not "
            "used: the target asks for the canonical layout");
  a100.canonicalLayout = false;
  ASSERT_TRUE(w4a4->transform(a100).ok());
  EXPECT_TRUE(w4a4->prepared());
  ASSERT_TRUE(ok->transform({"H200", "", true}).ok());
  EXPECT_TRUE(ok->prepared());
  // (From M = 129 W4A8 reads its activations by TMA: a tensor map per
  // launch; the smaller tiles copy them.)
  for (const humming::abi::KernelLaunch &k : ok->kernels())
    EXPECT_EQ(k.inputMap != 0, k.mMin > 128) << k.name;
  EXPECT_NE(ok->forward(nullptr, 16, 16, 1).error().find(
                "call forwardQuantized()"),
            std::string::npos);
  // forward() of 16-bit activations: with LayerTarget::activationRows the
  // layer compiles a quantizer and takes up to that many rows.
  LayerTarget rows{"H200", "", true};
  rows.activationRows = 64;
  ASSERT_TRUE(ok->transform(rows).ok());
  EXPECT_EQ(ok->forward(nullptr, 16, 16, 65).error(),
            "expected at most 64 rows (LayerTarget::activationRows), got M = "
            "65");
  EXPECT_EQ(ok->forward(nullptr, 0, 16, 1).error(),
            "expected device pointers for the input and the output, got a "
            "null pointer");
  EXPECT_EQ(ok->forward(nullptr, 16, 16, 1).error(),
            "the layer was transformed compile-only for sm_90a; transform it "
            "for a device to run it");
  rows.activationRows = -1;
  EXPECT_EQ(ok->transform(rows).error(),
            "expected LayerTarget::activationRows in 0 .. 2^31 - 1, got -1");
  Result<Layer> f16Layer = Layer::create(128, 256, g128, kF16);
  ASSERT_TRUE(f16Layer->quantize(w.data()).ok());
  rows.activationRows = 8;
  EXPECT_EQ(f16Layer->transform(rows).error(),
            "LayerTarget::activationRows applies to layers of 8- or 4-bit "
            "activations scaled per token, or 8-bit ones per group "
            "(forward() quantizes them), got "
            "#humming.input_schema<type = f16>");
  ASSERT_TRUE(f16Layer->transform({"H200", "", true}).ok());
  EXPECT_EQ(f16Layer->forwardQuantized(nullptr, 16, 16, 16, 1).error(),
            "the layer takes f16 activations: call forward()");
}

TEST(Layer, FineGrainedFp8RunsOverKMajorWeights) {
  // DeepSeek-V3's FP8: e4m3 weights with f32 scales per 128 x 128 block,
  // e4m3 activations per token and group of 128 of K. On sm_90a the
  // weights lie K-major, the block scales become each column's group
  // scales, and every kernel is a wgmma one; forward() of 16-bit
  // activations quantizes them per group. Without wgmma (sm_89) the
  // mma_sync kernels take no per-group activation scales.
  test::useTestCache();
  WeightSchema block = WeightSchema::make(ScalarType::e4m3(), ScalarType::f32(),
                                          Granularity::Block, 128);
  block.groupN = 128;
  const InputSchema g128{ScalarType::e4m3(), ActScaling::Group, 128};
  Result<Layer> layer = Layer::create(256, 512, block, g128);
  ASSERT_TRUE(layer.ok()) << layer.error();
  std::vector<double> w = randomWeights(256, 512);
  ASSERT_TRUE(layer->quantize(w.data()).ok());
  LayerTarget h200{"H200", "", true};
  h200.activationRows = 16;
  Status s = layer->transform(h200);
  ASSERT_TRUE(s.ok()) << s.error();
  EXPECT_TRUE(layer->prepared());
  EXPECT_EQ(layer->tileOrder(), layout::TileOrder::KMajor);
  for (const humming::abi::KernelLaunch &k : layer->kernels())
    EXPECT_EQ(k.kind, humming::abi::kGemmKernel);
  EXPECT_NE(layer->ptx().find("wgmma.mma_async.sync.aligned.m64n"),
            std::string::npos);
  EXPECT_EQ(layer->ptx().find("mma.sync.aligned"), std::string::npos);
  EXPECT_EQ(layer->transform({"L40S", "", true}).error(),
            "per-group f8E4M3FN activation scales are applied by sm_90a's "
            "wgmma kernels; the mma_sync kernels take per-token or static "
            "ones (on sm_89)");
}

TEST(Layer, LoadQuantizedChecksPaddedTensorsAndTheBias) {
  test::useTestCache();
  // Padded weights with a bias: the host quantizer's tensors (padded
  // shapes, bias in the output type) load; a bias of the wrong length or
  // type does not.
  WeightSchema w = WeightSchema::make(ScalarType::uint(4), ScalarType::f16(),
                                      Granularity::Group, 128);
  w.padN = 64;
  w.padK = 128;
  w.bias = true;
  Result<Layer> layer = Layer::create(192, 384, w, kF16);
  ASSERT_TRUE(layer.ok()) << layer.error();
  std::vector<double> v = randomWeights(192, 384), bias(192, 0.5);
  Result<QuantizedWeights> q = quantizeWeights(w, v.data(), 192, 384, bias.data());
  ASSERT_TRUE(q.ok()) << q.error();
  Status s = layer->loadQuantized(*q);
  ASSERT_TRUE(s.ok()) << s.error();
  s = layer->transform({"H200", "", true});
  ASSERT_TRUE(s.ok()) << s.error();
  EXPECT_TRUE(layer->prepared());
  QuantizedWeights shortBias = *q;
  shortBias.bias = Tensor(DType::F16, {100});
  EXPECT_EQ(layer->loadQuantized(shortBias).error(),
            "bias: expected shape [256], got [100]");
  QuantizedWeights wrongType = *q;
  wrongType.bias = Tensor(DType::F32, {256});
  EXPECT_EQ(layer->loadQuantized(wrongType).error(),
            "bias: expected dtype F16, got F32");
  QuantizedWeights noBias = *q;
  noBias.bias.reset();
  EXPECT_EQ(layer->loadQuantized(noBias).error(),
            "bias: missing (the schema has bias = true)");
}

TEST(Layer, UnalignedSizesArePaddedByTheLayer) {
  test::useTestCache();
  // N = 1000, K = 1032 with no padding asked for: the layer pads to 1024 x
  // 1056 itself, takes float weights or tensors of either shape, and runs
  // the prepared kernels; explicit padding is kept as given.
  WeightSchema w = WeightSchema::make(ScalarType::uint(4), ScalarType::f16(),
                                      Granularity::Channel);
  w.bias = true;
  Result<Layer> layer = Layer::create(1000, 1032, w, kF16);
  ASSERT_TRUE(layer.ok()) << layer.error();
  EXPECT_EQ(layer->weightSchema().padN, 24);
  EXPECT_EQ(layer->weightSchema().padK, 24);
  std::vector<double> v = randomWeights(1000, 1032), bias(1000, 0.25);
  ASSERT_TRUE(layer->quantize(v.data(), bias.data()).ok());
  Status s = layer->transform({"H200", "", true});
  ASSERT_TRUE(s.ok()) << s.error();
  EXPECT_TRUE(layer->prepared());
  Result<QuantizedWeights> unpadded =
      quantizeWeights(w, v.data(), 1000, 1032, bias.data());
  ASSERT_TRUE(unpadded.ok()) << unpadded.error();
  s = layer->loadQuantized(*unpadded);
  ASSERT_TRUE(s.ok()) << s.error();
  Result<QuantizedWeights> padded = quantizeWeights(
      layer->weightSchema(), v.data(), 1000, 1032, bias.data());
  ASSERT_TRUE(padded.ok()) << padded.error();
  s = layer->loadQuantized(*padded);
  ASSERT_TRUE(s.ok()) << s.error();
  QuantizedWeights wrong = *unpadded;
  wrong.weight = Tensor(DType::I32, {1000, 100});
  EXPECT_EQ(layer->loadQuantized(wrong).error(),
            "weight: expected shape [1024, 132], got [1000, 100]");
  // K the activation rows cannot be copied with.
  EXPECT_EQ(Layer::create(1000, 1030, w, kF16).error(),
            "expected K to be a multiple of 8 with f16 activations (their "
            "rows are copied in 16-byte pieces), got 1030: the layer cannot "
            "pad it; pad the activations' rows and the weights' K yourself "
            "(pad_k)");
  // Explicit padding: as given (and checked); the dimension not padded
  // by the caller is padded by the layer.
  WeightSchema explicitPad = w;
  explicitPad.padN = 24;
  Result<Layer> padNOnly = Layer::create(1000, 1032, explicitPad, kF16);
  ASSERT_TRUE(padNOnly.ok()) << padNOnly.error();
  EXPECT_EQ(padNOnly->weightSchema().padN, 24);
  EXPECT_EQ(padNOnly->weightSchema().padK, 24);
  explicitPad.padN = 0;
  explicitPad.padK = 24;
  Result<Layer> padKOnly = Layer::create(1000, 1032, explicitPad, kF16);
  ASSERT_TRUE(padKOnly.ok()) << padKOnly.error();
  EXPECT_EQ(padKOnly->weightSchema().padN, 24);
  explicitPad.padN = 8;
  EXPECT_EQ(Layer::create(1000, 1032, explicitPad, kF16).error(),
            "expected the padded N to be a multiple of 64, got 1008 (pad N "
            "with pad_n)");
}

TEST(Layer, EightBitActivationRowsArePaddedTo16Bytes) {
  test::useTestCache();
  // K = 1032 with e4m3 activations: rows of 1032 codes cannot be copied in
  // 16-byte pieces, so the GEMM reads rows of 1040 (activationK), the
  // codes past K zero, and the weights are padded from 1032 to 1088 (a
  // multiple of 64) as before: pad_k 56, of which the GEMM sees 48.
  const InputSchema e4{ScalarType::e4m3(), ActScaling::Token, 0};
  WeightSchema w = WeightSchema::make(ScalarType::e4m3(), ScalarType::f32(),
                                      Granularity::Channel);
  Result<Layer> layer = Layer::create(1024, 1032, w, e4);
  ASSERT_TRUE(layer.ok()) << layer.error();
  EXPECT_EQ(layer->k(), 1032);
  EXPECT_EQ(layer->activationK(), 1040);
  EXPECT_EQ(layer->weightSchema().padK, 56);
  std::vector<double> v = randomWeights(1024, 1032);
  ASSERT_TRUE(layer->quantize(v.data()).ok());
  LayerTarget rows{"H100", "", true};
  rows.activationRows = 64;
  Status s = layer->transform(rows);
  ASSERT_TRUE(s.ok()) << s.error();
  // The GEMM's activations are [?, 1040] codes; its quantizer writes them.
  EXPECT_NE(layer->ptx().find("wgmma"), std::string::npos);
  // 16-bit activations' K needs no such rounding; K aligned to 16 none.
  EXPECT_EQ(Layer::create(1024, 1032, w, kF16)->activationK(), 1032);
  EXPECT_EQ(Layer::create(1024, 1024, w, e4)->activationK(), 1024);
  // si4 codes: 32 per 16 bytes.
  const WeightSchema s4w = WeightSchema::make(
      ScalarType::sint(4), ScalarType::f16(), Granularity::Channel);
  EXPECT_EQ(Layer::create(1024, 1032, s4w,
                          {ScalarType::sint(4), ActScaling::Token, 0})
                ->activationK(),
            1056);
  // Explicit pad_k: at least the rounding.
  WeightSchema pad = w;
  pad.padK = 56;
  Result<Layer> padded = Layer::create(1024, 1032, pad, e4);
  ASSERT_TRUE(padded.ok()) << padded.error();
  EXPECT_EQ(padded->activationK(), 1040);
  pad.padK = 4;
  pad.padN = 64;
  EXPECT_EQ(Layer::create(1024, 1032, pad, e4).error(),
            "expected pad_k >= 8 (K = 1032 rounded up to 16 bytes of f8E4M3FN "
            "codes is 1040), got 4");
  // Per-group activation scales: K is a multiple of the group or refused.
  EXPECT_EQ(
      Layer::create(1024, 1032, w, {ScalarType::e4m3(), ActScaling::Group, 128})
          .error(),
      "expected K to be a multiple of the activation group size 128 "
      "with per-group activation scales, got 1032");
  // MoE and act-order layers read rows of K: refused there.
  WeightSchema experts = w;
  experts.experts = 4;
  MoeOptions moe;
  moe.routing = GemmType::Indexed;
  moe.topK = 2;
  EXPECT_EQ(Layer::createMoe(1024, 1032, experts, e4, moe).error(),
            "expected K to be a multiple of 16 with f8E4M3FN activations in a "
            "MoE layer (their rows are copied in 16-byte pieces), got 1032");
  std::vector<int32_t> perm(1032);
  for (size_t i = 0; i < perm.size(); ++i)
    perm[i] = int32_t(perm.size() - 1 - i);
  EXPECT_EQ(layer->setInputPermutation(perm).error(),
            "expected K to be a multiple of 16 with f8E4M3FN activations in an "
            "act-order layer (the gathered rows are K wide), got 1032");
}

TEST(Layer, ActOrderLayersGatherTheirActivations) {
  test::useTestCache();
  // A permuted K (act-order): the permutation is checked; a layer of
  // 16-bit activations compiles its gather kernel and runs by
  // forwardGathering() (forward() says so), unless the caller says it
  // gathers x[:, perm] itself; 8-bit activations must be gathered by the
  // caller.
  WeightSchema w = WeightSchema::make(ScalarType::uint(4), ScalarType::f16(),
                                      Granularity::Group, 128);
  Result<Layer> layer = Layer::create(256, 256, w, kF16);
  ASSERT_TRUE(layer.ok()) << layer.error();
  std::vector<double> v = randomWeights(256, 256);
  ASSERT_TRUE(layer->quantize(v.data()).ok());
  EXPECT_EQ(layer->setInputPermutation({0, 1}).error(),
            "expected a permutation of K = 256 input columns, got 2 entries");
  std::vector<int32_t> perm(256);
  for (int32_t j = 0; j < 256; ++j)
    perm[size_t(j)] = (j * 7) % 256;
  std::vector<int32_t> repeat = perm;
  repeat[5] = repeat[4];
  EXPECT_EQ(layer->setInputPermutation(repeat).error(),
            "expected a permutation of 0 .. 255, got 28 at 5 (a repeat)");
  std::vector<int32_t> outside = perm;
  outside[3] = 256;
  EXPECT_EQ(layer->setInputPermutation(outside).error(),
            "expected a permutation of 0 .. 255, got 256 at 3 (out of range)");
  ASSERT_TRUE(layer->setInputPermutation(perm).ok());
  EXPECT_EQ(layer->inputPermutation(), perm);
  LayerTarget target{"H200", "", true};
  Status s = layer->transform(target);
  ASSERT_TRUE(s.ok()) << s.error();
  // The GEMM kernels and the gather (counted in the stats, not a GEMM).
  const size_t gemms = layer->kernels().size();
  EXPECT_EQ(size_t(layer->transformStats().compiled +
                   layer->transformStats().cached),
            gemms + 1);
  EXPECT_EQ(layer->forward(nullptr, 0x1000, 0x2000, 4).error(),
            "the layer's K is permuted (act-order) and it gathers its "
            "activations itself, into a scratch buffer the caller gives: "
            "call forwardGathering()");
  EXPECT_EQ(layer->forwardGathering(nullptr, 0x1000, 0, 0x3000, 4).error(),
            "expected device pointers for the input and the scratch buffer, "
            "got a null pointer");
  // 4 rows of 256 2-byte elements: 2 KiB; a scratch inside them overlaps.
  EXPECT_EQ(layer->forwardGathering(nullptr, 0x1000, 0x1400, 0x3000, 4).error(),
            "expected a scratch buffer apart from the input (the gather "
            "would overwrite columns it has yet to read)");
  EXPECT_EQ(layer->forwardGathering(nullptr, 0x1000, 0x1808, 0x3000, 4).error(),
            "expected a 2-byte aligned input and a 16-byte aligned scratch "
            "buffer, got 0x1000 and 0x1808");
  EXPECT_EQ(layer->forwardGathering(nullptr, 0x1000, 0x1800, 0x3000, -1).error(),
            "expected 0 <= M <= 2^31 - 1 tokens, got -1");
  EXPECT_EQ(layer->forwardGathering(nullptr, 0x1000, 0x1800, 0x3000, 4).error(),
            "the layer was transformed compile-only for sm_90a; transform it "
            "for a device to run it");
  target.activationsGathered = true;
  s = layer->transform(target);
  ASSERT_TRUE(s.ok()) << s.error();
  EXPECT_EQ(size_t(layer->transformStats().compiled +
                   layer->transformStats().cached),
            gemms);
  EXPECT_EQ(layer->forwardGathering(nullptr, 0x1000, 0x1800, 0x3000, 4).error(),
            "forwardGathering() runs act-order layers that gather their "
            "activations (a permutation, transformed without "
            "LayerTarget::activationsGathered); call forward()");
  // 8-bit activations: the caller gathers the codes.
  Result<Layer> a8 =
      Layer::create(256, 256, w, InputSchema{ScalarType::e4m3(),
                                             ActScaling::Token, 0});
  ASSERT_TRUE(a8.ok()) << a8.error();
  ASSERT_TRUE(a8->quantize(v.data()).ok());
  ASSERT_TRUE(a8->setInputPermutation(perm).ok());
  EXPECT_EQ(a8->transform({"H200", "", true}).error(),
            "the layer's K is permuted (act-order) and it takes f8E4M3FN "
            "activations, which it does not gather itself: forward() needs "
            "the activations' columns gathered by inputPermutation() "
            "(x[:, perm]); set LayerTarget::activationsGathered to say the "
            "caller does");
}

TEST(Layer, JitThreadsBoundTheParallelCompile) {
  test::useTestCache();
  std::optional<Layer> layer = quantizedW4Layer();
  ASSERT_TRUE(layer);
  for (const char *bad : {"0", "two", "3x", "-1", "100000"}) {
    ::setenv("HUMMING_JIT_THREADS", bad, 1);
    EXPECT_EQ(layer->transform({"H200", "", true}).error(),
              std::string("expected HUMMING_JIT_THREADS to be a thread count "
                          "between 1 and 1024, got '") + bad + "'");
  }
  // One thread makes every kernel in turn: the same kernels.
  ::setenv("HUMMING_JIT_THREADS", "1", 1);
  Status s = layer->transform({"H200", "", true});
  ::unsetenv("HUMMING_JIT_THREADS");
  ASSERT_TRUE(s.ok()) << s.error();
  EXPECT_EQ(layer->kernels().size(), 4u);
  EXPECT_EQ(layer->transformStats().compiled + layer->transformStats().cached, 4);
  EXPECT_NE(layer->ptx().find(".entry layer_gemm0_m3"), std::string::npos);
}

TEST(Layer, DependentLaunchSettingAndKernelTable) {
  test::useTestCache();
  std::optional<Layer> layer = quantizedW4Layer();
  ASSERT_TRUE(layer);
  for (const char *bad : {"2", "on", "yes", "01"}) {
    ::setenv("HUMMING_PDL", bad, 1);
    EXPECT_EQ(layer->transform({"H200", "", true}).error(),
              std::string("expected HUMMING_PDL to be 0 (ordinary launches) "
                          "or 1 (programmatic dependent launch), got '") +
                  bad + "'");
  }
  ::setenv("HUMMING_PDL", "0", 1);
  Status s = layer->transform({"H200", "", true});
  ::unsetenv("HUMMING_PDL");
  ASSERT_TRUE(s.ok()) << s.error();
  EXPECT_FALSE(layer->dependentLaunch()); // compile-only: no launches
  // sm_90a kernels support it whatever the setting (it decides the launch);
  // an A100's kernels (sm_80: no griddepcontrol) do not.
  for (const humming::abi::KernelLaunch &k : layer->kernels())
    EXPECT_EQ(k.gridDependency, 1) << k.name;
  EXPECT_NE(layer->ptx().find("griddepcontrol.wait;"), std::string::npos);
  s = layer->transform({"A100", "", true});
  ASSERT_TRUE(s.ok()) << s.error();
  for (const humming::abi::KernelLaunch &k : layer->kernels())
    EXPECT_EQ(k.gridDependency, 0) << k.name;
  EXPECT_EQ(layer->ptx().find("griddepcontrol"), std::string::npos);
}

TEST(Layer, AForcedTileConfigReplacesTheHeuristics) {
  test::useTestCache();
  std::optional<Layer> layer = quantizedW4Layer();
  ASSERT_TRUE(layer);
  LayerTarget target{"H200", "", /*compileOnly=*/true};
  // One tile for every M: one kernel, of that shape.
  target.tileConfig = "#humming.tile_config<m = [1, inf], block = [128, 128, "
                      "32], warp = [64, 64, 32], stages = 3>";
  Status s = layer->transform(target);
  ASSERT_TRUE(s.ok()) << s.error();
  ASSERT_EQ(layer->kernels().size(), 1u);
  EXPECT_EQ(layer->kernels()[0].blockM, 128);
  EXPECT_EQ(layer->kernels()[0].blockN, 128);
  EXPECT_EQ(layer->kernels()[0].threads, 128);
  // Splitting K across CTAs: that tile up to M = 16, the same without the
  // split beyond.
  target.tileConfig = "#humming.tile_config<m = [1, 16], block = [16, 64, 64], "
                      "warp = [16, 64, 32], split_k = 2>";
  s = layer->transform(target);
  ASSERT_TRUE(s.ok()) << s.error();
  ASSERT_EQ(layer->kernels().size(), 2u);
  EXPECT_EQ(layer->kernels()[0].splitK, 2);
  EXPECT_EQ(layer->kernels()[0].mMax, 16);
  EXPECT_EQ(layer->kernels()[1].splitK, 1);
  // Errors: not a tile config, one the verifier refuses, one the lowering
  // refuses for this layer.
  target.tileConfig = "#humming.tile_config<block = [16, 64]>";
  EXPECT_EQ(layer->transform(target).error().rfind(
                "expected a #humming.tile_config, got '#humming.tile_config<"
                "block = [16, 64]>': ",
                0),
            0u)
      << layer->transform(target).error();
  target.tileConfig = "#humming.tile_config<block = [16, 64, 64], warp = "
                      "[16, 64, 32], stages = 1>";
  EXPECT_NE(layer->transform(target).error().find(
                "expected stages >= 2, got 1"),
            std::string::npos)
      << layer->transform(target).error();
  target.tileConfig = "#humming.tile_config<block = [16, 512, 32], warp = "
                      "[16, 64, 32]>";
  EXPECT_NE(layer->transform(target).error().find(
                "expected block_n (512) to divide the padded N (256)"),
            std::string::npos)
      << layer->transform(target).error();
  // The canonical layout has one fixed kernel: nothing to tune.
  WeightSchema block = WeightSchema::make(ScalarType::e4m3(), ScalarType::f32(),
                                          Granularity::Block, 128);
  block.groupN = 128;
  Result<Layer> canonical = Layer::create(256, 512, block, kF16);
  ASSERT_TRUE(canonical.ok());
  std::vector<double> w = randomWeights(256, 512);
  ASSERT_TRUE(canonical->quantize(w.data()).ok());
  target.tileConfig = "#humming.tile_config<block = [16, 64, 32], warp = "
                      "[16, 64, 32]>";
  EXPECT_EQ(canonical->transform(target).error().rfind(
                "a tile configuration applies to the prepared layout, which "
                "is not used: ",
                0),
            0u)
      << canonical->transform(target).error();
  target.canonicalLayout = true;
  EXPECT_EQ(layer->transform(target).error(),
            "a tile configuration applies to the prepared layout, which is "
            "not used: the target asks for the canonical layout");
}

TEST(Layer, TheCompilersReportsOfLostPerformanceReachTheCaller) {
  // The warp-specialized wgmma kernel relies on setmaxnreg, which nvJitLink
  // ignores (separate compilation) and reports; ptxas honours it and says
  // nothing, and the default compiler routes such kernels to ptxas. The
  // process picks its compiler once, as selectCompiler does: the report
  // path runs under HUMMING_COMPILER=nvjitlink (as
  // test/humming-gpu-test/compiler-routing.test does through the tool).
  test::useTestCache();
  Result<std::unique_ptr<rt::KernelCompiler>> compiler = rt::selectCompiler();
  ASSERT_TRUE(compiler.ok()) << compiler.error();
  const std::string name = (*compiler)->name();
  if (name == "driver")
    GTEST_SKIP() << "neither nvJitLink nor ptxas here: nothing reports";
  std::optional<Layer> layer = quantizedW4Layer();
  ASSERT_TRUE(layer);
  LayerTarget target{"H200", "", /*compileOnly=*/true};
  target.tileConfig =
      "#humming.tile_config<m = [1, inf], block = [128, 256, 64], warp = "
      "[128, 32, 64], stages = 4, mma = wgmma, warp_specialized = true, "
      "mbarrier = true>";
  for (int pass = 0; pass < 2; ++pass) { // compiled, then from the cache
    Status s = layer->transform(target);
    ASSERT_TRUE(s.ok()) << s.error();
    const std::vector<std::string> &reports =
        layer->transformStats().compilerReports;
    if (name == "nvjitlink") {
      ASSERT_FALSE(reports.empty()) << "pass " << pass;
      bool setmaxnreg = false;
      for (const std::string &r : reports) {
        EXPECT_EQ(r.rfind("kernel 0: ", 0), 0u) << r;
        setmaxnreg |= r.find("'setmaxnreg' ignored") != std::string::npos;
      }
      EXPECT_TRUE(setmaxnreg);
    } else {
      EXPECT_TRUE(reports.empty()) << reports.front();
    }
  }
  // The heuristics' own kernels for this small layer report nothing.
  target.tileConfig.clear();
  ASSERT_TRUE(layer->transform(target).ok());
  EXPECT_TRUE(layer->transformStats().compilerReports.empty());
}

TEST(Layer, TheCanonicalLayoutCanBeChosen) {
  test::useTestCache();
  std::optional<Layer> layer = quantizedW4Layer();
  ASSERT_TRUE(layer);
  LayerTarget target{"H200", "", /*compileOnly=*/true};
  target.canonicalLayout = true;
  Status s = layer->transform(target);
  ASSERT_TRUE(s.ok()) << s.error();
  EXPECT_FALSE(layer->prepared());
  ASSERT_EQ(layer->kernels().size(), 1u);
  EXPECT_EQ(layer->ptx().find("cp.async"), std::string::npos);
  // And back: the prepared kernels, from a description of their own.
  target.canonicalLayout = false;
  s = layer->transform(target);
  ASSERT_TRUE(s.ok()) << s.error();
  EXPECT_TRUE(layer->prepared());
  EXPECT_EQ(layer->kernels().size(), 4u);
}

TEST(Layer, ForwardWithoutADeviceFailsAtTransform) {
  test::useTestCache();
  std::optional<Layer> layer = quantizedW4Layer();
  ASSERT_TRUE(layer);
  // A real transform needs the CUDA driver and a device of the target chip;
  // here there is none, and the error says so.
  Status s = layer->transform({"H200", "", false});
  if (s.ok())
    GTEST_SKIP() << "a CUDA device is present";
  EXPECT_NE(s.error().find("CUDA"), std::string::npos) << s.error();
  EXPECT_EQ(layer->forward(nullptr, 256, 256, 1).error(),
            "call transform() before forward()");
}

// A MoE block from a checkpoint's per-expert modules (FP8, Mixtral's w1 /
// w3 / w2 names): sizes from the tensors, compiled for the H200.
TEST(MoeLayer, FromCheckpointPerExpertModules) {
  test::useTestCache();
  char tmpl[] = "/tmp/humming-moe-ckpt-XXXXXX";
  const std::string dir = mkdtemp(tmpl);
  std::ofstream(dir + "/config.json")
      << R"({"quantization_config": {"quant_method": "fp8"}})";
  const int64_t experts = 4, h = 256, inter = 128;
  std::vector<std::pair<std::string, Tensor>> tensors;
  std::mt19937 rng(9);
  auto add = [&](const std::string &module, int64_t n, int64_t k, double s) {
    Tensor w(DType::F8_E4M3, {n, k});
    for (uint8_t &b : w.data)
      b = uint8_t(rng() % 0x70); // finite, positive e4m3 codes
    Tensor scale(DType::F32, {1});
    scale.set(0, s);
    tensors.push_back({module + ".weight", std::move(w)});
    tensors.push_back({module + ".weight_scale", std::move(scale)});
  };
  for (int64_t e = 0; e < experts; ++e) {
    std::string p = "model.layers.0.block_sparse_moe.experts." + std::to_string(e);
    add(p + ".w1", inter, h, 0.5);
    add(p + ".w3", inter, h, 0.25);
    add(p + ".w2", h, inter, 0.125);
  }
  std::vector<std::pair<std::string, TensorView>> views;
  for (const auto &[n, t] : tensors)
    views.push_back({n, t.view()});
  ASSERT_TRUE(writeSafetensors(dir + "/model.safetensors", views).ok());
  Result<MoeLayer> moe = MoeLayer::fromCheckpoint(
      dir, "model.layers.0.block_sparse_moe.experts.{e}", experts, 2, 64,
      "w1", "w3", "w2");
  ASSERT_TRUE(moe.ok()) << moe.error();
  EXPECT_EQ(moe->shape().hidden, h);
  EXPECT_EQ(moe->shape().intermediate, inter);
  Status s = moe->transform({"H200", "", /*compileOnly=*/true}, 32);
  EXPECT_TRUE(s.ok()) << s.error();
  Result<MoeLayer> missing = MoeLayer::fromCheckpoint(
      dir, "model.layers.0.block_sparse_moe.experts.{e}", experts + 1, 2);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().find("experts.0.gate_proj"), std::string::npos)
      << missing.error();
  std::system(("rm -rf " + dir).c_str());
}

// Layer::fromCheckpoint (the C++ face of the C and Python checkpoint
// loaders) over a checkpoint held in memory: a GPTQ act-order layer whole,
// a column shard of it (N halved, the permutation kept), the row shard it
// refuses, and ranks outside the size.
TEST(Layer, FromCheckpointShardsAndKeepsThePermutation) {
  test::useTestCache();
  const int64_t n = 128, k = 256;
  Tensor qweight(DType::I32, {k / 8, n}), qzeros(DType::I32, {k / 128, n / 8}),
      scales(DType::F16, {k / 128, n}), gIdx(DType::I32, {k});
  for (size_t i = 0; i < qweight.data.size(); ++i)
    qweight.data[i] = uint8_t(i * 37 + 11);
  for (size_t i = 0; i < qzeros.data.size(); i += 4) // stored 7: z = 8
    qzeros.data[i] = qzeros.data[i + 1] = qzeros.data[i + 2] =
        qzeros.data[i + 3] = 0x77;
  for (size_t i = 0; i < scales.data.size(); i += 2) { // 1.0
    scales.data[i] = 0x00;
    scales.data[i + 1] = 0x3c;
  }
  for (int64_t c = 0; c < k; ++c) {
    const int32_t g = int32_t(((c * 7) % k) / 128);
    std::memcpy(gIdx.data.data() + 4 * c, &g, 4);
  }
  const std::string m = "model.layers.0.mlp.up_proj";
  std::vector<std::pair<std::string, TensorView>> views = {
      {m + ".qweight", qweight.view()},
      {m + ".qzeros", qzeros.view()},
      {m + ".scales", scales.view()},
      {m + ".g_idx", gIdx.view()}};
  Result<SafetensorsFile> file =
      SafetensorsFile::fromBytes(serializeSafetensors(views), "mem");
  ASSERT_TRUE(file.ok()) << file.error();
  Result<Json> config = parseJson(R"({"torch_dtype": "bfloat16",
      "quantization_config": {"quant_method": "gptq", "bits": 4,
      "group_size": 128, "sym": true, "desc_act": true}})");
  ASSERT_TRUE(config.ok());
  std::vector<SafetensorsFile> files;
  files.push_back(file.take());
  Result<Checkpoint> ckpt =
      Checkpoint::fromParts("mem", config.take(), nullptr, std::move(files));
  ASSERT_TRUE(ckpt.ok()) << ckpt.error();
  Result<OpenedCheckpoint> open = openCheckpoint(ckpt.take());
  ASSERT_TRUE(open.ok()) << open.error();
  const OpenedCheckpoint &opened = *open;

  Result<Layer> whole = Layer::fromCheckpoint(opened, m);
  ASSERT_TRUE(whole.ok()) << whole.error();
  EXPECT_EQ(whole->n(), n);
  EXPECT_EQ(whole->k(), k);
  EXPECT_EQ(whole->inputSchema().type, ScalarType::bf16());
  ASSERT_EQ(whole->inputPermutation().size(), size_t(k));
  CheckpointLoad column;
  column.rank = 1;
  column.size = 2;
  Result<Layer> shard = Layer::fromCheckpoint(opened, m, column);
  ASSERT_TRUE(shard.ok()) << shard.error();
  EXPECT_EQ(shard->n(), n / 2);
  EXPECT_EQ(shard->inputPermutation(), whole->inputPermutation());
  // The shard's codes are the whole layer's columns n/2 .. n - 1.
  const Tensor &wAll = whole->canonicalWeights()->weight;
  const Tensor &wHalf = shard->canonicalWeights()->weight;
  ASSERT_EQ(wHalf.data.size() * 2, wAll.data.size());
  EXPECT_EQ(0, std::memcmp(wHalf.data.data(),
                           wAll.data.data() + wAll.data.size() / 2,
                           wHalf.data.size()));
  CheckpointLoad row = column;
  row.parallel = TensorParallel::Row;
  EXPECT_EQ(Layer::fromCheckpoint(opened, m, row).error(),
            m + ": act-order (desc_act) permutes K, so a row shard's columns "
                "are scattered over the whole input: split it by columns, or "
                "load it whole");
  CheckpointLoad outside;
  outside.rank = 2;
  outside.size = 2;
  EXPECT_EQ(Layer::fromCheckpoint(opened, m, outside).error(),
            "expected 0 <= rank < size (tensor parallelism), got rank 2 of 2");
  EXPECT_NE(Layer::fromCheckpoint("/nonexistent", m).error().find(
                "/nonexistent"),
            std::string::npos);
}
