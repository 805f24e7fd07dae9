//===- MoeCases.cpp - humming.moe_gemm on a GPU ---------------------------===//
//
// See MoeCases.h. Each case is a humming::Layer from Layer::createMoe (the
// API MoE callers use), so the routing checks, the tile choice per tokens
// per expert and the kernels' gathers and scatters are all on the path.
//
//===----------------------------------------------------------------------===//

#include "MoeCases.h"

#include "GpuCommon.h"

#include "Humming/API/Layer.h"
#include "Humming/API/MoeLayer.h"
#include "Humming/API/MoeRouter.h"
#include "Humming/Quant/Codec.h"
#include "Humming/Quant/Quantize.h"
#include "Humming/Target/KernelABI.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <numeric>
#include <random>
#include <set>

namespace humming::gputest {
namespace {

/// How a case's tokens pick their experts.
enum class Spread {
  Uniform, ///< every expert equally likely
  Skewed,  ///< most tokens on the first few experts
  Sparse,  ///< only every third expert gets tokens (the rest none)
  OffRank, ///< uniform, and expert 1 is on another rank (expert_ids -1)
};

const char *spreadName(Spread s) {
  switch (s) {
  case Spread::Uniform:
    return "uniform";
  case Spread::Skewed:
    return "skewed";
  case Spread::Sparse:
    return "sparse";
  case Spread::OffRank:
    return "offrank";
  }
  return "?";
}

struct MoeCase {
  std::string name;
  WeightSchema weight; ///< with experts
  ScalarType act = ScalarType::f16();
  ActScaling scaling = ActScaling::None;
  int64_t n = 256, k = 512;
  MoeOptions moe;
  Spread spread = Spread::Uniform;
  std::vector<int64_t> ms;
  /// Grouped routings: from top-k ids routed on the GPU (MoeGrouping), the
  /// activations scattered and the output gathered back to [M * top_k]
  /// rows (else: tokens per expert drawn on the host, top_k 1).
  bool fromTopk = false;
  /// 8-bit activations scaled per group of K (fine-grained FP8): its size.
  int64_t actGroup = 0;
  InputSchema input() const {
    return InputSchema{act, actGroup ? ActScaling::Group : scaling, actGroup};
  }
  ScalarType output() const {
    return act.bits < 16 ? ScalarType::f16() : act;
  }
};

std::vector<MoeCase> moeSuite(bool quick) {
  auto w4 = [](int64_t experts, ScalarType scale = ScalarType::f16()) {
    WeightSchema w = WeightSchema::make(ScalarType::uint(4), scale,
                                        Granularity::Group, 128);
    w.experts = experts;
    return w;
  };
  std::vector<int64_t> small = quick ? std::vector<int64_t>{1, 5, 64}
                                     : std::vector<int64_t>{1, 3, 16, 33, 64,
                                                            200};
  std::vector<int64_t> large = quick ? std::vector<int64_t>{1, 300}
                                     : std::vector<int64_t>{1, 7, 129, 600,
                                                            4096};
  std::vector<MoeCase> cases;
  auto add = [&](std::string name, WeightSchema w, GemmType routing,
                 int64_t topK, Spread spread, std::vector<int64_t> ms,
                 int64_t n = 256, int64_t k = 512,
                 ScalarType act = ScalarType::f16(), bool routerWeights = false,
                 int64_t blockSize = 64) {
    MoeCase c;
    c.name = std::move(name);
    c.weight = w;
    c.act = act;
    if (act.bits < 16)
      c.scaling = ActScaling::Token;
    c.n = n;
    c.k = k;
    c.moe.routing = routing;
    c.moe.topK = topK;
    c.moe.blockSize = routing == GemmType::Indexed ? blockSize : 0;
    c.moe.routerWeights = routerWeights;
    c.spread = spread;
    c.ms = std::move(ms);
    cases.push_back(c);
  };
  // Indexed (vLLM's moe_align_block_size): each spread, both 16-bit types,
  // router weights, odd sizes (padded N and K), 8-bit activations.
  add("moe_indexed_w4_e8_top2", w4(8), GemmType::Indexed, 2, Spread::Uniform,
      small);
  add("moe_indexed_w4_e8_top2_skewed", w4(8), GemmType::Indexed, 2,
      Spread::Skewed, small);
  add("moe_indexed_w4_e16_top4_sparse", w4(16), GemmType::Indexed, 4,
      Spread::Sparse, small);
  add("moe_indexed_w4_e8_top2_offrank", w4(8), GemmType::Indexed, 2,
      Spread::OffRank, small);
  add("moe_indexed_w4_e8_top2_bf16_router", w4(8, ScalarType::bf16()),
      GemmType::Indexed, 2, Spread::Uniform, small, 256, 512,
      ScalarType::bf16(), /*routerWeights=*/true);
  add("moe_indexed_w4_e8_top2_odd", w4(8), GemmType::Indexed, 2,
      Spread::Uniform, small, 200, 328);
  add("moe_indexed_w4_e32_top8_block16", w4(32), GemmType::Indexed, 8,
      Spread::Uniform, small, 256, 512, ScalarType::f16(), false, 16);
  // One token per expert on average (M x top_k <= E) and K deep enough:
  // the transposed kernel, eight rows per pass, while the hot experts get
  // 9-16 rows and more: the blocks that need the second pass, with blocks
  // of 16 and 64 rows.
  add("moe_indexed_w4_e64_top2_skewed_block16", w4(64), GemmType::Indexed, 2,
      Spread::Skewed, {9, 16, 32}, 256, 1024, ScalarType::f16(), false, 16);
  add("moe_indexed_w4_e64_top2_skewed_router", w4(64), GemmType::Indexed, 2,
      Spread::Skewed, {1, 12, 32}, 512, 1024, ScalarType::f16(), true);
  add("moe_indexed_w4_e8_top2_large", w4(8), GemmType::Indexed, 2,
      Spread::Uniform, large, 1024, 2048, ScalarType::f16(), true, 128);
  // The block size chosen per M (Layer::moeBlockSize): 16-row blocks at
  // decode, then the warp-specialized tiles of 32 / 48 / 96 rows at 9-16 /
  // 17-32 / 33-64 tokens per expert (M = 33 ... 200 here), from 65 the
  // 128-row one (no router weights) or 96 rows with them.
  std::vector<int64_t> perM = small;
  perM.push_back(100); // 25 tokens per expert: 48-row blocks
  add("moe_indexed_w4_e8_top2_per_m", w4(8), GemmType::Indexed, 2,
      Spread::Skewed, perM, 256, 512, ScalarType::f16(), false, 0);
  add("moe_indexed_w4_e8_top2_large_per_m", w4(8), GemmType::Indexed, 2,
      Spread::Uniform, large, 1024, 2048, ScalarType::f16(), false, 0);
  add("moe_indexed_w4_e8_top2_large_per_m_router", w4(8), GemmType::Indexed,
      2, Spread::Uniform, large, 1024, 2048, ScalarType::f16(), true, 0);
  add("moe_indexed_w4a8_e16_top4_per_m", w4(16), GemmType::Indexed, 4,
      Spread::Uniform, small, 512, 1024, ScalarType::e4m3(), false, 0);
  {
    WeightSchema w8 = WeightSchema::make(ScalarType::e4m3(),
                                         ScalarType::f16(),
                                         Granularity::Channel, 0);
    w8.experts = 8;
    add("moe_indexed_w8a8_fp8_e8_top2", w8, GemmType::Indexed, 2,
        Spread::Uniform, small, 256, 512, ScalarType::e4m3());
    // Prefill: the K-major weights' 128-token tile, its activation rows
    // gathered into TMA's 128-byte swizzle.
    add("moe_indexed_w8a8_fp8_e8_top2_large", w8, GemmType::Indexed, 2,
        Spread::Uniform, large, 1024, 2048, ScalarType::e4m3());
    // Fine-grained FP8 (DeepSeek-V3's experts: e4m3 weights with f32
    // scales per 128 x 128 block, e4m3 activations per token and 128 of
    // K), decode and prefill tiles.
    WeightSchema fb = WeightSchema::make(ScalarType::e4m3(), ScalarType::f32(),
                                         Granularity::Block, 128);
    fb.groupN = 128;
    fb.experts = 8;
    add("moe_indexed_w8a8_fp8_block_e8_top2", fb, GemmType::Indexed, 2,
        Spread::Uniform, large, 256, 1024, ScalarType::e4m3(), false, 0);
    cases.back().actGroup = 128;
  }
  // W4A8 (uint4 g128 x e4m3 per token), the benchmark's 8-bit variant.
  add("moe_indexed_w4a8_e16_top4", w4(16), GemmType::Indexed, 4,
      Spread::Uniform, small, 512, 1024, ScalarType::e4m3());
  // grouped_contiguous and grouped_masked.
  add("moe_contiguous_w4_e8", w4(8), GemmType::GroupedContiguous, 1,
      Spread::Uniform, small);
  add("moe_contiguous_w4_e16_sparse_router", w4(16, ScalarType::bf16()),
      GemmType::GroupedContiguous, 1, Spread::Sparse, small, 256, 512,
      ScalarType::bf16(), true);
  add("moe_masked_w4_e8", w4(8), GemmType::GroupedMasked, 1, Spread::Uniform,
      small);
  add("moe_masked_w4_e4_skewed_odd", w4(4), GemmType::GroupedMasked, 1,
      Spread::Skewed, small, 200, 328);
  // Without counts (MoeOptions::allRows): a batch of matmuls with one
  // weight matrix each, as a raised linalg.batch_matmul runs; odd sizes.
  add("moe_masked_all_rows_w4_e4_odd", w4(4), GemmType::GroupedMasked, 1,
      Spread::Uniform, small, 200, 328);
  cases.back().moe.allRows = true;
  // The grouped routings from the router's top-k ids (MoeGrouping):
  // off-rank ids (-1) take no row and gather as zeros.
  add("moe_contiguous_from_topk_w4_e16_top4", w4(16),
      GemmType::GroupedContiguous, 4, Spread::Uniform, small);
  add("moe_contiguous_from_topk_w4_e8_top2_offrank_bf16_router",
      w4(8, ScalarType::bf16()), GemmType::GroupedContiguous, 2,
      Spread::OffRank, small, 256, 512, ScalarType::bf16(), true);
  add("moe_masked_from_topk_w4_e8_top2_skewed_odd", w4(8),
      GemmType::GroupedMasked, 2, Spread::Skewed, small, 200, 328);
  add("moe_contiguous_from_topk_w4_e8_top2_large", w4(8),
      GemmType::GroupedContiguous, 2, Spread::Uniform, large, 1024, 2048);
  for (size_t i = cases.size() - 4; i < cases.size(); ++i)
    cases[i].fromTopk = true;
  return cases;
}

/// Distinct experts for each of m tokens (top_k each), by spread.
std::vector<int32_t> chooseExperts(int64_t m, int64_t topK, int64_t experts,
                                   Spread spread, std::mt19937 &rng) {
  std::vector<int32_t> ids;
  std::uniform_int_distribution<int64_t> any(0, experts - 1);
  const int64_t hot = std::min<int64_t>(experts, topK + 1);
  std::uniform_int_distribution<int64_t> hotPick(0, hot - 1);
  const int64_t thirds = (experts + 2) / 3;
  for (int64_t t = 0; t < m; ++t) {
    std::set<int32_t> chosen;
    while (int64_t(chosen.size()) < topK) {
      int64_t e = any(rng);
      if (spread == Spread::Skewed && rng() % 10 < 8)
        e = hotPick(rng);
      if (spread == Spread::Sparse && thirds >= topK)
        e = (e % thirds) * 3;
      chosen.insert(int32_t(e));
    }
    std::vector<int32_t> order(chosen.begin(), chosen.end());
    std::shuffle(order.begin(), order.end(), rng);
    ids.insert(ids.end(), order.begin(), order.end());
  }
  return ids;
}

/// Tokens per expert summing to `rows`, by spread.
std::vector<int64_t> splitRows(int64_t rows, int64_t experts, Spread spread,
                               std::mt19937 &rng) {
  std::vector<int64_t> counts(size_t(experts), 0);
  std::vector<int32_t> ids = chooseExperts(rows, 1, experts, spread, rng);
  for (int32_t e : ids)
    ++counts[size_t(e)];
  return counts;
}

/// A device copy of `data` (at least 16 bytes).
template <typename T>
Result<rt::DeviceBuffer> upload(const rt::CudaDriver &cu,
                                const std::vector<T> &data) {
  size_t bytes = data.size() * sizeof(T);
  Result<rt::DeviceBuffer> buf =
      rt::DeviceBuffer::allocate(cu, std::max<size_t>(bytes, 16));
  if (!buf)
    return buf;
  if (bytes)
    if (Status s = buf->upload(data.data(), bytes); !s)
      return Error{s.error()};
  return buf;
}

/// One MoE routing on the host and on the device, with what the reference
/// and the check need.
struct RoutedBatch {
  Routing routing;             ///< for referenceMoeGemm
  int64_t rows = 0;            ///< activation rows
  int64_t outRows = 0;         ///< output rows
  std::vector<bool> written;   ///< per output row: the kernel writes it
  std::vector<bool> zeroRow;   ///< per output row: expected zero (off rank)
  std::vector<float> routerWeights; ///< per output row (or empty)
  std::vector<rt::DeviceBuffer> buffers;
  MoeRouting device;
};

/// Indexed routing on the GPU (MoeRouter) from the same top-k ids: its
/// num_tokens_padded and expert_ids must be the host's, each block's ids the
/// same set (their order within an expert varies); then the GEMM runs on
/// the GPU's buffers. An error says what differs.
Status routeOnGpu(const rt::CudaDriver &cu, const MoeRouter &router,
                  const std::vector<int32_t> &topk, int64_t m,
                  RoutedBatch &b) {
  Result<rt::DeviceBuffer> ids = upload(cu, topk);
  const int64_t cap = router.sortedCapacity(m), blocks = router.blockCapacity(m);
  Result<rt::DeviceBuffer> sorted = upload(cu, std::vector<int32_t>(size_t(cap), -7));
  Result<rt::DeviceBuffer> experts =
      upload(cu, std::vector<int32_t>(size_t(blocks), -7));
  Result<rt::DeviceBuffer> padded = upload(cu, std::vector<int32_t>{-7});
  if (!ids || !sorted || !experts || !padded)
    return Error{"routing buffers: allocation failed"};
  Status s = router.forward(nullptr, ids->ptr(), m, sorted->ptr(),
                            experts->ptr(), padded->ptr());
  if (s)
    s = cu.check(cu.cuCtxSynchronize(), "cuCtxSynchronize");
  std::vector<int32_t> gs(static_cast<size_t>(cap)),
      ge(static_cast<size_t>(blocks)), gp(1);
  if (s)
    s = sorted->download(gs.data(), gs.size() * 4);
  if (s)
    s = experts->download(ge.data(), ge.size() * 4);
  if (s)
    s = padded->download(gp.data(), 4);
  if (!s)
    return s;
  const Routing &h = b.routing;
  if (gp[0] != h.numTokensPadded)
    return Error{concat("GPU routing: num_tokens_padded ", gp[0],
                        ", the host's ", h.numTokensPadded)};
  const size_t bs = size_t(h.blockM);
  for (size_t blk = 0; blk < h.expertIds.size(); ++blk)
    if (ge[blk] != h.expertIds[blk])
      return Error{concat("GPU routing: expert_ids[", blk, "] = ", ge[blk],
                          ", the host's ", h.expertIds[blk])};
  // Each expert's ids (its run of blocks) as a set: the GPU places them in
  // no fixed order.
  for (size_t first = 0; first < h.expertIds.size();) {
    size_t end = first;
    while (end < h.expertIds.size() && h.expertIds[end] == h.expertIds[first])
      ++end;
    std::multiset<int32_t> got(gs.begin() + ptrdiff_t(first * bs),
                               gs.begin() + ptrdiff_t(end * bs));
    std::multiset<int32_t> want(h.sortedIds.begin() + ptrdiff_t(first * bs),
                                h.sortedIds.begin() + ptrdiff_t(end * bs));
    if (got != want)
      return Error{concat("GPU routing: expert ", h.expertIds[first],
                          " (blocks ", first, " .. ", end - 1,
                          ") holds other ids than the host's")};
    first = end;
  }
  b.device.sortedIds = sorted->ptr();
  b.device.expertIds = experts->ptr();
  b.device.numTokensPadded = padded->ptr();
  b.device.sortedLength = cap;
  for (Result<rt::DeviceBuffer> *buf : {&ids, &sorted, &experts, &padded})
    b.buffers.push_back(buf->take());
  return Status::success();
}

Result<RoutedBatch> routeBatch(const rt::CudaDriver &cu, const MoeCase &c,
                               int64_t m, std::mt19937 &rng,
                               const MoeRouter *router) {
  RoutedBatch b;
  const int64_t experts = c.weight.experts;
  auto keep = [&](Result<rt::DeviceBuffer> buf, uint64_t &ptr) -> Status {
    if (!buf)
      return Error{buf.error()};
    ptr = buf->ptr();
    b.buffers.push_back(buf.take());
    return Status::success();
  };
  if (c.moe.routing == GemmType::Indexed) {
    std::vector<int32_t> ids =
        chooseExperts(m, c.moe.topK, experts, c.spread, rng);
    Result<Routing> r =
        alignBlockSize(ids, m, c.moe.topK, experts, c.moe.blockSize);
    if (!r)
      return Error{r.error()};
    b.routing = r.take();
    b.rows = m;
    b.outRows = m * c.moe.topK;
    b.written.assign(size_t(b.outRows), true);
    b.zeroRow.assign(size_t(b.outRows), false);
    // vLLM's buffers: sorted_ids of M * top_k + E * (block_size - 1)
    // entries (the tail holds sentinels), expert_ids of as many blocks (the
    // tail garbage): the kernels read neither past num_tokens_padded.
    std::vector<int32_t> sorted = b.routing.sortedIds;
    std::vector<int32_t> expertIds = b.routing.expertIds;
    const int64_t length = m * c.moe.topK + experts * (c.moe.blockSize - 1);
    sorted.resize(size_t(std::max<int64_t>(length, int64_t(sorted.size()))),
                  int32_t(m * c.moe.topK));
    expertIds.resize(size_t(ceilDiv(int64_t(sorted.size()),
                                        c.moe.blockSize)),
                     0x7fffff);
    if (c.spread == Spread::OffRank)
      for (size_t blk = 0; blk < b.routing.expertIds.size(); ++blk)
        if (b.routing.expertIds[blk] == 1) {
          expertIds[blk] = -1;
          for (int64_t j = 0; j < c.moe.blockSize; ++j) {
            int32_t id = b.routing.sortedIds[blk * size_t(c.moe.blockSize) +
                                             size_t(j)];
            if (id < b.outRows)
              b.zeroRow[size_t(id)] = true;
          }
        }
    std::vector<int32_t> padded = {b.routing.numTokensPadded};
    if (router && c.spread != Spread::OffRank) {
      if (Status s = routeOnGpu(cu, *router, ids, m, b); !s)
        return Error{s.error()};
    } else {
      if (Status s = keep(upload(cu, sorted), b.device.sortedIds); !s)
        return Error{s.error()};
      if (Status s = keep(upload(cu, expertIds), b.device.expertIds); !s)
        return Error{s.error()};
      if (Status s = keep(upload(cu, padded), b.device.numTokensPadded); !s)
        return Error{s.error()};
      b.device.sortedLength = int64_t(sorted.size());
    }
  } else if (c.moe.routing == GemmType::GroupedContiguous) {
    std::vector<int64_t> counts = splitRows(m, experts, c.spread, rng);
    b.routing.type = GemmType::GroupedContiguous;
    b.routing.expertLayout.assign(1, 0);
    for (int64_t cnt : counts)
      b.routing.expertLayout.push_back(b.routing.expertLayout.back() + cnt);
    // Rows past the last expert's (a buffer larger than the tokens) are
    // not written: m + 3 activation rows.
    b.rows = m + 3;
    b.outRows = b.rows;
    b.written.assign(size_t(b.outRows), false);
    std::fill(b.written.begin(), b.written.begin() + m, true);
    b.zeroRow.assign(size_t(b.outRows), false);
    std::vector<int32_t> offsets(b.routing.expertLayout.begin(),
                                 b.routing.expertLayout.end());
    if (Status s = keep(upload(cu, offsets), b.device.expertLayout); !s)
      return Error{s.error()};
  } else {
    // grouped_masked: max_tokens = m per expert, counts from 0 to m.
    b.routing.type = GemmType::GroupedMasked;
    b.routing.maxTokens = m;
    std::vector<int64_t> counts = splitRows(m, experts, c.spread, rng);
    // One expert full, so the last block of a full expert is exercised.
    counts[0] = m;
    // MoeOptions::allRows: no counts, every expert all of its rows.
    if (c.moe.allRows)
      counts.assign(size_t(experts), m);
    b.routing.expertLayout = counts;
    b.rows = experts * m;
    b.outRows = b.rows;
    b.written.assign(size_t(b.outRows), false);
    for (int64_t e = 0; e < experts; ++e)
      for (int64_t r = 0; r < counts[size_t(e)]; ++r)
        b.written[size_t(e * m + r)] = true;
    b.zeroRow.assign(size_t(b.outRows), false);
    std::vector<int32_t> c32(counts.begin(), counts.end());
    if (!c.moe.allRows)
      if (Status s = keep(upload(cu, c32), b.device.expertLayout); !s)
        return Error{s.error()};
  }
  if (c.moe.routerWeights) {
    std::uniform_real_distribution<float> uni(0.05f, 1.0f);
    b.routerWeights.resize(size_t(b.outRows));
    for (float &v : b.routerWeights)
      v = uni(rng);
    if (Status s = keep(upload(cu, b.routerWeights), b.device.routerWeights);
        !s)
      return Error{s.error()};
  }
  return b;
}

/// A case's layer: random normal weights [E, N, K] (and bias) quantized by
/// lib/Quant, transformed; the dequantized weights for the reference.
struct MoeCaseLayer {
  std::optional<Layer> layer;
  std::vector<double> deq, bias;
};

Result<MoeCaseLayer> makeMoeLayer(const MoeCase &c, const LayerTarget &target,
                                  std::mt19937 &rng) {
  // Grouped GEMMs take rows already per expert (top_k 1); a case from
  // top-k ids keeps its top_k for the routing.
  MoeOptions moe = c.moe;
  if (c.fromTopk)
    moe.topK = 1;
  Result<Layer> layer = Layer::createMoe(c.n, c.k, c.weight, c.input(), moe,
                                         {}, c.output());
  if (!layer)
    return Error{layer.error()};
  const int64_t experts = c.weight.experts;
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<double> w(size_t(experts * c.n * c.k));
  for (double &v : w)
    v = normal(rng);
  if (Status s = layer->quantize(w.data()); !s)
    return Error{s.error()};
  if (Status s = layer->transform(target); !s)
    return Error{s.error()};
  MoeCaseLayer out;
  if (!target.compileOnly) {
    // The schema the layer quantized with (padded): its dequantized
    // weights, logical sizes.
    QuantizeOptions qo;
    qo.paramDType =
        c.output() == ScalarType::bf16() ? DType::BF16 : DType::F16;
    Result<QuantizedWeights> q =
        quantizeWeights(layer->weightSchema(), w.data(), c.n, c.k, nullptr, qo);
    if (!q)
      return Error{"quantize: " + q.error()};
    Result<std::vector<double>> deq =
        dequantizeWeights(layer->weightSchema(), *q, c.n, c.k);
    if (!deq)
      return Error{"dequantize: " + deq.error()};
    out.deq = deq.take();
  }
  out.layer = layer.take();
  return out;
}

/// The W4A16 g128 schema of the benchmark and the MoE layer cases.
WeightSchema w4g128Experts(int64_t experts) {
  WeightSchema w = WeightSchema::make(ScalarType::uint(4), ScalarType::f16(),
                                      Granularity::Group, 128);
  w.experts = experts;
  return w;
}

/// Random canonical tensors of w4g128Experts [E, N, K]: uniform codes and
/// f16 group scales of a few thousandths (what a quantized layer holds;
/// their values do not change the time, and the reference dequantizes
/// them).
/// Fills the 32-bit words of `t` from a xorshift sequence of `seed`, each
/// word and-ed with `mask`.
void randomWords(Tensor &t, uint64_t seed, uint32_t mask = ~0u) {
  uint32_t *wd = t.as<uint32_t>();
  uint64_t x = 0x9E3779B97F4A7C15ull * (seed + 1);
  for (size_t i = 0; i < t.data.size() / 4; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    wd[i] = uint32_t(x) & mask;
  }
}

/// Scales of a few thousandths, 0.002 .. 0.006 by `seed`, into `t`.
void fewThousandths(Tensor &t, uint64_t seed) {
  for (int64_t i = 0; i < t.numel(); ++i)
    t.set(i, 0.002 + 0.0005 * double((i * 7 + int64_t(seed)) % 9));
}

QuantizedWeights randomW4(int64_t experts, int64_t n, int64_t k,
                          uint64_t seed) {
  QuantizedWeights q;
  q.weight = Tensor(DType::I32, {experts, n, k / 8});
  randomWords(q.weight, seed);
  q.scales = Tensor(DType::F16, {experts, n, k / 128});
  fewThousandths(*q.scales, seed);
  return q;
}

/// MXFP4 experts (gpt-oss): e2m1 codes with ue8m0 scales per 32 of K.
WeightSchema mxfp4Experts(int64_t experts) {
  WeightSchema w = WeightSchema::make(ScalarType::e2m1(), ScalarType::ue8m0(),
                                      Granularity::Group, 32);
  w.experts = experts;
  return w;
}

/// Random canonical tensors of mxfp4Experts [E, N, K]: uniform e2m1 codes
/// and ue8m0 scales of 2^-9 .. 2^-6 (their values do not change the time).
QuantizedWeights randomMxfp4(int64_t experts, int64_t n, int64_t k,
                             uint64_t seed) {
  QuantizedWeights q = randomW4(experts, n, k, seed);
  q.scales = Tensor(DType::F8_E8M0, {experts, n, k / 32});
  uint8_t *sd = q.scales->data.data();
  for (int64_t i = 0; i < experts * n * (k / 32); ++i)
    sd[i] = uint8_t(118 + (i * 7 + int64_t(seed)) % 4);
  return q;
}

/// Fine-grained FP8 experts (DeepSeek-V3, Qwen3 FP8): e4m3 codes with f32
/// scales per 128 x 128 block.
WeightSchema fp8BlockExperts(int64_t experts) {
  WeightSchema w = WeightSchema::make(ScalarType::e4m3(), ScalarType::f32(),
                                      Granularity::Block, 128);
  w.groupN = 128;
  w.experts = experts;
  return w;
}

/// Random canonical tensors of fp8BlockExperts [E, N, K]: e4m3 codes with
/// bits 3 and 7 of every byte clear (no NaN) and block scales of a few
/// thousandths (their values do not change the time); the tensors' shapes
/// are the schema's (expectedShape), or why not.
Result<QuantizedWeights> randomFp8Block(int64_t experts, int64_t n, int64_t k,
                                        uint64_t seed) {
  const WeightSchema w = fp8BlockExperts(experts);
  const InputSchema in{ScalarType::e4m3(), ActScaling::Group, 128};
  ShapeOrDiag codes = expectedShape(WeightOperand::Weight, w, in, n, k, false);
  ShapeOrDiag scales = expectedShape(WeightOperand::Scales, w, in, n, k, false);
  if (codes.error || scales.error)
    return Error{codes.error ? *codes.error : *scales.error};
  QuantizedWeights q;
  q.weight = Tensor(DType::I32, codes.shape);
  randomWords(q.weight, seed, 0x77777777u);
  q.scales = Tensor(DType::F32, scales.shape);
  fewThousandths(*q.scales, seed);
  return q;
}

/// Expert e's dequantized weights [N, K] of canonical tensors `q`
/// (w4g128Experts).
Result<std::vector<double>> expertWeights(const QuantizedWeights &q,
                                          int64_t e, int64_t n, int64_t k) {
  QuantizedWeights one;
  auto slice = [&](const Tensor &t) {
    Tensor part(t.dtype, std::vector<int64_t>(t.shape.begin() + 1, t.shape.end()));
    const size_t bytes = part.data.size();
    std::copy_n(t.data.begin() + ptrdiff_t(bytes * size_t(e)), bytes,
                part.data.begin());
    return part;
  };
  one.weight = slice(q.weight);
  one.scales = slice(*q.scales);
  return dequantizeWeights(w4g128Experts(0), one, n, k);
}

void jsonLine(const std::string &path, const std::string &line) {
  if (path.empty())
    return;
  std::ofstream f(path, std::ios::app);
  f << line << "\n";
}

/// A grouped case from top-k ids at one M (MoeCase::fromTopk): the GPU's
/// positions and expert layout checked against the host's counts, the
/// activations (and router weights) scattered into NaN-poisoned grouped
/// rows, the grouped GEMM, its rows gathered back to [M * top_k] and
/// compared with float64 (ids of no expert must gather as zeros). Returns
/// the relative error, or why it could not run / what the routing got
/// wrong.
Result<double> runFromTopk(const rt::CudaDriver &cu, const MoeCase &c,
                           const Layer &layer, const std::vector<double> &deq,
                           const MoeGrouping &g, int64_t m,
                           std::mt19937 &rng) {
  const int64_t experts = c.weight.experts, topK = c.moe.topK;
  const int64_t ids = m * topK, rows = g.groupedRows(m);
  std::vector<int32_t> topk = chooseExperts(m, topK, experts, c.spread, rng);
  if (c.spread == Spread::OffRank)
    for (int32_t &e : topk)
      if (e == 1)
        e = -1;
  std::vector<int64_t> counts(size_t(experts), 0);
  for (int32_t e : topk)
    if (e >= 0)
      ++counts[size_t(e)];
  std::vector<rt::DeviceBuffer> keep;
  auto buffer = [&](size_t bytes, int fill) -> Result<uint64_t> {
    Result<rt::DeviceBuffer> b =
        rt::DeviceBuffer::allocate(cu, std::max<size_t>(bytes, 16));
    if (!b)
      return Error{b.error()};
    if (Status s = b->fill(uint8_t(fill)); !s)
      return Error{s.error()};
    keep.push_back(b.take());
    return keep.back().ptr();
  };
  Result<rt::DeviceBuffer> idsBuf = upload(cu, topk);
  Result<uint64_t> pos = buffer(size_t(ids) * 4, 0xF9);
  Result<uint64_t> layout = buffer(size_t(g.layoutSize()) * 4, 0xF9);
  if (!idsBuf || !pos || !layout)
    return Error{"routing buffers: allocation failed"};
  Status s = g.forward(nullptr, idsBuf->ptr(), m, *pos, *layout);
  if (s)
    s = cu.check(cu.cuCtxSynchronize(), "cuCtxSynchronize");
  std::vector<int32_t> gp(static_cast<size_t>(ids)),
      gl(static_cast<size_t>(g.layoutSize()));
  if (s && ids)
    s = keep[0].download(gp.data(), gp.size() * 4);
  if (s)
    s = keep[1].download(gl.data(), gl.size() * 4);
  if (!s)
    return Error{s.error()};
  // The layout: offsets (prefix sums of the counts) or counts.
  const bool masked = c.moe.routing == GemmType::GroupedMasked;
  int64_t first = 0;
  std::vector<int64_t> start(static_cast<size_t>(experts));
  for (int64_t e = 0; e < experts; ++e) {
    start[size_t(e)] = masked ? e * g.maxTokens() : first;
    int64_t want = masked ? std::min(counts[size_t(e)], g.maxTokens()) : first;
    if (gl[size_t(e)] != want)
      return Error{concat("GPU grouping: expert_layout[", e, "] = ",
                          gl[size_t(e)], ", expected ", want)};
    first += counts[size_t(e)];
  }
  if (!masked && gl[size_t(experts)] != first)
    return Error{concat("GPU grouping: expert_layout[E] = ",
                        gl[size_t(experts)], ", expected ", first)};
  // Each id of an expert in its expert's rows, no row twice; the others -1.
  std::vector<bool> taken(size_t(rows), false);
  for (int64_t i = 0; i < ids; ++i) {
    const int32_t e = topk[size_t(i)], p = gp[size_t(i)];
    if (e < 0) {
      if (p != -1)
        return Error{concat("GPU grouping: id ", i, " of no expert got "
                            "position ", p, ", expected -1")};
      continue;
    }
    const int64_t lo = start[size_t(e)], hi = lo + counts[size_t(e)];
    if (p < lo || p >= hi || taken[size_t(p)])
      return Error{concat("GPU grouping: id ", i, " (expert ", e,
                          ") got position ", p, ", expected a free row in ",
                          lo, " .. ", hi - 1)};
    taken[size_t(p)] = true;
  }
  // Activations, scattered; the GEMM; gathered.
  const DType actD = c.act == ScalarType::bf16() ? DType::BF16 : DType::F16;
  Tensor a(actD, {m, c.k});
  std::vector<double> av(static_cast<size_t>(m * c.k));
  std::uniform_real_distribution<double> uni(-1.0, 1.0);
  for (int64_t i = 0; i < m * c.k; ++i) {
    a.set(i, uni(rng));
    av[size_t(i)] = a.at(i);
  }
  std::vector<float> weights;
  Result<rt::DeviceBuffer> aBuf = upload(cu, a.data);
  Result<uint64_t> xs = buffer(size_t(rows * c.k) * 2, 0xFF);
  Result<uint64_t> ys = buffer(size_t(rows * c.n) * 2, 0xFF);
  Result<uint64_t> y = buffer(size_t(ids * c.n) * 2, 0xFF);
  if (!aBuf || !xs || !ys || !y)
    return Error{"activation buffers: allocation failed"};
  const size_t yIndex = keep.size() - 1;
  MoeRouting routing;
  routing.expertLayout = *layout;
  std::optional<rt::DeviceBuffer> wBuf;
  if (c.moe.routerWeights) {
    std::uniform_real_distribution<float> w(0.05f, 1.0f);
    weights.resize(size_t(ids));
    for (float &v : weights)
      v = w(rng);
    Result<rt::DeviceBuffer> wb = upload(cu, weights);
    Result<uint64_t> ws = buffer(size_t(rows) * 4, 0xFF);
    if (!wb || !ws)
      return Error{"router weight buffers: allocation failed"};
    s = g.scatterWeights(nullptr, wb->ptr(), m, *pos, *ws);
    routing.routerWeights = *ws;
    wBuf.emplace(wb.take());
  }
  if (s)
    s = g.scatter(nullptr, 2 * c.k, aBuf->ptr(), m, *pos, *xs);
  if (s)
    s = layer.forwardMoe(nullptr, *xs, *ys, rows, routing);
  if (s)
    s = g.gather(nullptr, 2 * c.n, *ys, m, *pos, *y);
  if (s)
    s = cu.check(cu.cuCtxSynchronize(), "cuCtxSynchronize");
  Tensor out(actD, {ids, c.n});
  if (s && ids)
    s = keep[yIndex].download(out.data.data(), out.data.size());
  if (!s)
    return Error{s.error()};
  double num = 0, den = 0;
  for (int64_t i = 0; i < ids; ++i) {
    const int32_t e = topk[size_t(i)];
    const int64_t t = i / topK;
    for (int64_t j = 0; j < c.n; ++j) {
      const double got = out.at(i * c.n + j);
      double want = 0;
      if (e >= 0) {
        const double *w = deq.data() + (size_t(e) * size_t(c.n) + size_t(j)) *
                                           size_t(c.k);
        const double *x = av.data() + size_t(t * c.k);
        for (int64_t kk = 0; kk < c.k; ++kk)
          want += x[kk] * w[kk];
        if (!weights.empty())
          want *= double(weights[size_t(i)]);
      } else if (got != 0.0) {
        return Error{concat("row ", i, " (an id of no expert) gathered ",
                            got, ", expected 0")};
      }
      if (std::isnan(got))
        return Error{concat("row ", i, " column ", j, " is NaN (a grouped "
                            "row the GEMM did not write, or read unwritten)")};
      num += (got - want) * (got - want);
      den += want * want;
    }
  }
  return std::sqrt(num / std::max(den, 1e-300));
}

} // namespace

MoeTally runMoeCases(const rt::CudaDriver *cu, const std::string &device,
                     const std::string &chip, const std::string &filter,
                     bool quick, const std::string &ptxDir,
                     const std::string &json, const std::string &forceTiles) {
  MoeTally tally;
  std::mt19937 rng(cu ? uint32_t(std::random_device{}()) : 1u);
  for (const MoeCase &c : moeSuite(quick)) {
    if (!caseSelected(c.name, filter))
      continue;
    // 8-bit activations: fp8 from sm_89 (the prepared kernels' k32 MMAs).
    if (c.act.bits == 8 && chip < "sm_89")
      continue;
    LayerTarget target;
    target.device = device;
    target.chip = chip;
    target.compileOnly = cu == nullptr;
    target.tileConfig = forceTiles;
    Result<MoeCaseLayer> made = makeMoeLayer(c, target, rng);
    if (!made) {
      std::printf("%-44s ERROR %s\n", c.name.c_str(), made.error().c_str());
      ++tally.failed;
      continue;
    }
    const Layer &layer = *made->layer;
    // A case from top-k ids: its grouping (max_tokens = the largest M, so
    // every id has a row), compiled with the layer.
    std::optional<MoeGrouping> grouping;
    Status groupingStatus = Status::success();
    if (c.fromTopk) {
      Result<MoeGrouping> g = MoeGrouping::create(
          c.weight.experts, c.moe.topK,
          c.moe.routing == GemmType::GroupedMasked
              ? *std::max_element(c.ms.begin(), c.ms.end())
              : 0,
          {2 * c.k, 2 * c.n});
      LayerTarget plain = target;
      plain.tileConfig.clear();
      groupingStatus = g ? g->transform(plain) : Status(Error{g.error()});
      if (g)
        grouping.emplace(g.take());
    }
    if (!cu) {
      if (!groupingStatus) {
        std::printf("%-44s ERROR grouping: %s\n", c.name.c_str(),
                    groupingStatus.error().c_str());
        ++tally.failed;
        continue;
      }
      const std::vector<std::string> &modules = layer.modulePtx();
      for (size_t i = 0; i < modules.size() && !ptxDir.empty(); ++i) {
        std::ofstream file(ptxDir + "/" + c.name + "_m" + std::to_string(i) +
                           ".ptx");
        file << modules[i];
      }
      std::printf("%-44s compiled (%zu kernels)\n", c.name.c_str(),
                  layer.kernels().size());
      ++tally.passed;
      continue;
    }
    const int64_t experts = c.weight.experts;
    if (c.fromTopk) {
      for (int64_t m : c.ms) {
        std::string label = c.name + " M=" + std::to_string(m);
        Result<double> rel =
            groupingStatus
                ? runFromTopk(*cu, c, layer, made->deq, *grouping, m, rng)
                : Result<double>(Error{"grouping: " + groupingStatus.error()});
        const double bound = c.output() == ScalarType::bf16() ? 1e-2 : 1e-3;
        const bool pass = rel && *rel <= bound;
        if (!rel)
          std::printf("%-44s ERROR %s\n", label.c_str(), rel.error().c_str());
        else
          std::printf("%-44s %s rel=%.2e (routed, scattered and gathered on "
                      "the GPU)\n",
                      label.c_str(), pass ? "ok  " : "FAIL", *rel);
        (pass ? tally.passed : tally.failed)++;
        char line[512];
        std::snprintf(line, sizeof line,
                      "{\"case\": \"%s\", \"m\": %lld, \"routing\": \"%s\", "
                      "\"spread\": \"%s\", \"rel_error\": %.3e, \"from_topk\": "
                      "true, \"pass\": %s}",
                      c.name.c_str(), (long long)m, toString(c.moe.routing),
                      spreadName(c.spread), rel ? *rel : -1.0,
                      pass ? "true" : "false");
        jsonLine(json, line);
      }
      continue;
    }
    // Indexed cases route on the GPU too (every spread but off-rank, whose
    // expert_ids the test edits): the router's output against the host's.
    // A layer whose block size follows M routes each M with
    // Layer::moeBlockSize(M): a router per block size.
    std::map<int64_t, MoeRouter> routers;
    auto routerFor = [&](int64_t bs) -> Result<const MoeRouter *> {
      if (auto it = routers.find(bs); it != routers.end())
        return &it->second;
      Result<MoeRouter> r = MoeRouter::create(experts, c.moe.topK, bs);
      LayerTarget plain = target;
      plain.tileConfig.clear();
      Status rs = r ? r->transform(plain) : Status(Error{r.error()});
      if (!rs)
        return Error{concat("router: ", rs.error())};
      return &routers.emplace(bs, r.take()).first->second;
    };
    for (int64_t m : c.ms) {
      std::string label = c.name + " M=" + std::to_string(m);
      auto fail = [&](const std::string &why) {
        std::printf("%-44s ERROR %s\n", label.c_str(), why.c_str());
        ++tally.failed;
      };
      MoeCase cm = c;
      const MoeRouter *router = nullptr;
      if (c.moe.routing == GemmType::Indexed) {
        if (c.moe.blockSize == 0)
          cm.moe.blockSize = layer.moeBlockSize(m);
        Result<const MoeRouter *> r = routerFor(cm.moe.blockSize);
        if (!r) {
          fail(r.error());
          continue;
        }
        router = *r;
      }
      Result<RoutedBatch> routed = routeBatch(*cu, cm, m, rng, router);
      if (!routed) {
        fail(routed.error());
        continue;
      }
      RoutedBatch &rb = *routed;
      rb.device.blockSize = cm.moe.blockSize;
      // Activations: exact in the 16-bit type; 8-bit ones quantized on the
      // host per token (the reference multiplies what the codes stand for).
      const DType actD =
          c.output() == ScalarType::bf16() ? DType::BF16 : DType::F16;
      Tensor a(actD, {rb.rows, c.k});
      std::vector<double> av(size_t(rb.rows * c.k));
      std::uniform_real_distribution<double> uni(-1.0, 1.0);
      for (int64_t i = 0; i < rb.rows * c.k; ++i) {
        a.set(i, uni(rng));
        av[size_t(i)] = a.at(i);
      }
      Result<rt::DeviceBuffer> input = rt::DeviceBuffer::allocate(
          *cu, std::max<size_t>(16, a.data.size()));
      Result<rt::DeviceBuffer> output = rt::DeviceBuffer::allocate(
          *cu, size_t(rb.outRows * c.n) * 2);
      if (!input || !output) {
        fail(!input ? input.error() : output.error());
        continue;
      }
      std::optional<QuantizedInput> q8;
      if (c.act.bits < 16) {
        // (A MoE layer's rows are K wide: K is a multiple of 16 there.)
        Result<QuantizedInput> q = quantizeInput(*cu, c.input(), av, rb.rows,
                                                 c.k, c.k);
        if (!q) {
          fail(q.error());
          continue;
        }
        av = q->values;
        q8.emplace(q.take());
      }
      Status s = input->upload(a.data.data(), a.data.size());
      if (s)
        s = output->fill(0xFF); // NaN in f16 and bf16
      if (s)
        s = q8 ? layer.forwardMoe(nullptr, q8->codes.ptr(), output->ptr(),
                                  rb.rows, rb.device, q8->scales.ptr())
               : layer.forwardMoe(nullptr, input->ptr(), output->ptr(),
                                  rb.rows, rb.device);
      if (s)
        s = cu->check(cu->cuCtxSynchronize(), "cuCtxSynchronize");
      Tensor out(actD == DType::BF16 && c.act.bits == 16 ? DType::BF16
                                                          : DType::F16,
                 {rb.outRows, c.n});
      if (s)
        s = output->download(out.data.data(), out.data.size());
      if (!s) {
        fail(s.error());
        continue;
      }
      Result<std::vector<double>> ref =
          referenceMoeGemm(rb.routing, av.data(), rb.rows, made->deq.data(),
                           nullptr, experts, c.n, c.k);
      if (!ref) {
        fail("reference: " + ref.error());
        continue;
      }
      double num = 0, den = 0;
      int64_t nans = 0, overwritten = 0, nonzero = 0;
      const uint16_t *bits = out.as<uint16_t>();
      for (int64_t r = 0; r < rb.outRows; ++r)
        for (int64_t j = 0; j < c.n; ++j) {
          const int64_t i = r * c.n + j;
          if (!rb.written[size_t(r)]) {
            overwritten += bits[i] != 0xFFFF;
            continue;
          }
          double got = out.at(i);
          if (std::isnan(got)) {
            ++nans;
            continue;
          }
          double want = (*ref)[size_t(i)];
          if (rb.zeroRow[size_t(r)]) {
            nonzero += got != 0.0;
            continue;
          }
          if (!rb.routerWeights.empty())
            want *= double(rb.routerWeights[size_t(r)]);
          num += (got - want) * (got - want);
          den += want * want;
        }
      const double rel = std::sqrt(num / std::max(den, 1e-300));
      const double bound =
          c.output() == ScalarType::bf16() || c.act.bits < 16 ? 1e-2 : 1e-3;
      const bool pass = nans == 0 && overwritten == 0 && nonzero == 0 &&
                        rel <= bound;
      const abi::KernelLaunch *kl = abi::moeKernelFor(layer.kernels(), rb.rows);
      std::printf("%-44s %s rel=%.2e nan=%lld beyond=%lld offrank!=0:%lld "
                  "kernel=%s\n",
                  label.c_str(), pass ? "ok  " : "FAIL", rel, (long long)nans,
                  (long long)overwritten, (long long)nonzero,
                  kl ? kl->name.c_str() : "-");
      (pass ? tally.passed : tally.failed)++;
      char line[512];
      std::snprintf(line, sizeof line,
                    "{\"case\": \"%s\", \"m\": %lld, \"routing\": \"%s\", "
                    "\"spread\": \"%s\", \"rel_error\": %.3e, \"nans\": %lld, "
                    "\"written_beyond\": %lld, \"pass\": %s}",
                    c.name.c_str(), (long long)m, toString(c.moe.routing),
                    spreadName(c.spread), rel, (long long)nans,
                    (long long)overwritten, pass ? "true" : "false");
      jsonLine(json, line);
    }
  }
  return tally;
}

int runMoeBench(const rt::CudaDriver &cu, const std::string &device,
                const std::string &chip, const std::string &filter,
                const std::vector<int64_t> &ms, double bandwidthGBs,
                const std::string &json, int64_t blockSize,
                const std::string &forceTiles) {
  struct Shape {
    std::string name;
    int64_t experts, topK, n, k;
  };
  const Shape shapes[] = {
      {"qwen3_30b_a3b_gate_up", 128, 8, 1536, 2048},
      {"qwen3_30b_a3b_down", 128, 8, 2048, 768},
      {"mixtral_8x7b_gate_up", 8, 2, 28672, 4096},
      {"mixtral_8x7b_down", 8, 2, 4096, 14336},
      // DeepSeek-V3's routed experts (E 256, top-8; gate and up fused: 2 x
      // 2048 rows over 7168, down 7168 x 2048), as W4A16 g128.
      {"deepseek_v3_gate_up", 256, 8, 4096, 7168},
      {"deepseek_v3_down", 256, 8, 7168, 2048},
      // gpt-oss-120b's experts (E 128, top-4; hidden and intermediate 2880,
      // gate and up fused), stored as MXFP4: only the mxfp4 variant (K =
      // 2880 is not a multiple of 128).
      {"gpt_oss_120b_gate_up", 128, 4, 5760, 2880},
      {"gpt_oss_120b_down", 128, 4, 2880, 2880},
  };
  struct Variant {
    std::string name;
    ScalarType act;
    GemmType routing;
    /// MXFP4 weights (e2m1 codes, ue8m0 scales per 32 of K) instead of
    /// uint4 with f16 scales per 128; bf16 activations (ue8m0 scales are
    /// powers of two beyond f16's range).
    bool mxfp4 = false;
    /// Fine-grained FP8: e4m3 weights with 128 x 128 block scales, e4m3
    /// activations per token and 128 of K (DeepSeek-V3, Qwen3 FP8).
    bool fp8Block = false;
  };
  const Variant variants[] = {
      {"w4a16_indexed", ScalarType::f16(), GemmType::Indexed},
      {"w4a8_indexed", ScalarType::e4m3(), GemmType::Indexed},
      {"w4a16_contiguous", ScalarType::f16(), GemmType::GroupedContiguous},
      {"w4a16_masked", ScalarType::f16(), GemmType::GroupedMasked},
      {"mxfp4_bf16_indexed", ScalarType::bf16(), GemmType::Indexed, true},
      {"fp8_block_indexed", ScalarType::e4m3(), GemmType::Indexed, false, true},
  };
  int errors = 0;
  std::mt19937 rng(7);
  std::printf("%-24s %-18s %6s %10s %10s %8s  %s\n", "layer", "variant", "M",
              "us", "floor_us", "floor%", "kernel");
  for (const Shape &sh : shapes)
    for (const Variant &v : variants) {
      const std::string label = sh.name + "_" + v.name; // --filter matches it
      if (!caseSelected(label, filter))
        continue;
      const int64_t groupK = v.mxfp4 ? 32 : 128;
      if (sh.k % groupK != 0 || (v.fp8Block && sh.n % 128 != 0))
        continue; // (gpt-oss's K = 2880 with groups of 128)
      WeightSchema w = v.mxfp4      ? mxfp4Experts(sh.experts)
                       : v.fp8Block ? fp8BlockExperts(sh.experts)
                                    : w4g128Experts(sh.experts);
      InputSchema in{v.act,
                     v.fp8Block        ? ActScaling::Group
                     : v.act.bits < 16 ? ActScaling::Token
                                       : ActScaling::None,
                     v.fp8Block ? 128 : 0};
      MoeOptions moe;
      moe.routing = v.routing;
      moe.topK = v.routing == GemmType::Indexed ? sh.topK : 1;
      moe.blockSize = blockSize;
      // Four copies of the layer: random canonical tensors (codes and
      // scales; their values do not change the time), so the weights come
      // from HBM as in a model. A layer of more than 1 GiB (DeepSeek-V3's:
      // 3.8 GB) is one copy: L2 holds none of it between replays anyway.
      const double layerBytes = double(sh.experts) * double(sh.n) *
                                double(sh.k) * (v.fp8Block ? 1 : 0.5);
      const int copyCount = layerBytes > double(1 << 30) ? 1 : 4;
      std::vector<Layer> copies;
      std::string error;
      for (int copy = 0; copy < copyCount && error.empty(); ++copy) {
        Result<Layer> layer = Layer::createMoe(sh.n, sh.k, w, in, moe);
        if (!layer) {
          error = layer.error();
          break;
        }
        Result<QuantizedWeights> q =
            v.fp8Block ? randomFp8Block(sh.experts, sh.n, sh.k, uint64_t(copy))
            : v.mxfp4  ? Result<QuantizedWeights>(
                            randomMxfp4(sh.experts, sh.n, sh.k, uint64_t(copy)))
                      : Result<QuantizedWeights>(
                            randomW4(sh.experts, sh.n, sh.k, uint64_t(copy)));
        Status s =
            q ? layer->loadQuantized(q.take()) : Status(Error{q.error()});
        LayerTarget target;
        target.device = device;
        target.chip = chip;
        target.tileConfig = forceTiles;
        if (s)
          s = layer->transform(target);
        if (!s) {
          error = s.error();
          break;
        }
        copies.push_back(layer.take());
      }
      if (!error.empty()) {
        std::printf("%-24s %-18s ERROR %s\n", sh.name.c_str(), v.name.c_str(),
                    error.c_str());
        ++errors;
        continue;
      }
      // Codes (4 bits) and scales (f16 per 128, or one byte per 32); fp8
      // codes and f32 scales per 128 x 128 block.
      const double expertBytes =
          v.fp8Block
              ? double(sh.n) * double(sh.k) +
                    double(sh.n / 128) * double(sh.k / 128) * 4
              : double(sh.n) * double(sh.k) / 2 +
                    double(sh.n) * double(sh.k / groupK) * (v.mxfp4 ? 1 : 2);
      for (int64_t m : ms) {
        // Random routing of m tokens, top_k experts each; the grouped
        // layouts hold the same rows per expert.
        std::vector<int32_t> ids =
            chooseExperts(m, sh.topK, sh.experts, Spread::Uniform, rng);
        std::set<int32_t> active(ids.begin(), ids.end());
        std::vector<int64_t> counts(size_t(sh.experts), 0);
        for (int32_t e : ids)
          ++counts[size_t(e)];
        MoeRouting r;
        std::vector<rt::DeviceBuffer> keep;
        int64_t rows = m, outRows = m * sh.topK;
        Status s = Status::success();
        auto put = [&](auto vec, uint64_t &ptr) {
          if (!s)
            return;
          Result<rt::DeviceBuffer> b = upload(cu, vec);
          if (!b) {
            s = Error{b.error()};
            return;
          }
          ptr = b->ptr();
          keep.push_back(b.take());
        };
        // The layer's block size, or (0) the one of M's kernel.
        const int64_t bs =
            blockSize ? blockSize : copies[0].moeBlockSize(std::max<int64_t>(m, 1));
        r.blockSize = bs;
        if (v.routing == GemmType::Indexed) {
          Result<Routing> al = alignBlockSize(ids, m, sh.topK, sh.experts, bs);
          if (!al) {
            s = Error{al.error()};
          } else {
            put(al->sortedIds, r.sortedIds);
            put(al->expertIds, r.expertIds);
            put(std::vector<int32_t>{al->numTokensPadded}, r.numTokensPadded);
            r.sortedLength = int64_t(al->sortedIds.size());
          }
        } else if (v.routing == GemmType::GroupedContiguous) {
          std::vector<int32_t> offsets = {0};
          for (int64_t cnt : counts)
            offsets.push_back(offsets.back() + int32_t(cnt));
          rows = outRows = m * sh.topK;
          put(offsets, r.expertLayout);
        } else {
          int64_t maxTokens = *std::max_element(counts.begin(), counts.end());
          rows = outRows = sh.experts * maxTokens;
          put(std::vector<int32_t>(counts.begin(), counts.end()),
              r.expertLayout);
        }
        const size_t actBytes = size_t(rows * sh.k) * (v.act.bits / 8);
        Result<rt::DeviceBuffer> input =
            rt::DeviceBuffer::allocate(cu, std::max<size_t>(16, actBytes));
        // One f32 per row, or per row and 128 of K (fine-grained).
        Result<rt::DeviceBuffer> scales = rt::DeviceBuffer::allocate(
            cu, size_t(rows) * 4 * size_t(v.fp8Block ? sh.k / 128 : 1) + 16);
        Result<rt::DeviceBuffer> output =
            rt::DeviceBuffer::allocate(cu, size_t(outRows * sh.n) * 2);
        if (s && (!input || !output || !scales))
          s = Error{!input ? input.error()
                           : !output ? output.error() : scales.error()};
        if (s)
          s = input->fill(0x3C); // small finite values in every type
        if (s)
          s = scales->fill(0x3C);
        double us = 0;
        if (s) {
          const uint64_t scalePtr = v.act.bits < 16 ? scales->ptr() : 0;
          us = graphReplayUs(cu, copies.size(), [&](void *stream, size_t i) {
            return copies[i].forwardMoe(stream, input->ptr(), output->ptr(),
                                        rows, r, scalePtr);
          });
          if (us <= 0)
            s = Error{"the CUDA graph did not replay"};
        }
        if (!s) {
          std::printf("%-24s %-18s %6lld ERROR %s\n", sh.name.c_str(),
                      v.name.c_str(), (long long)m, s.error().c_str());
          ++errors;
          continue;
        }
        const double floorUs =
            double(active.size()) * expertBytes / (bandwidthGBs * 1e3);
        const abi::KernelLaunch *kl =
            abi::moeKernelFor(copies[0].kernels(), rows);
        // The kernel and its block (rows x columns, threads, K split).
        char tile[96] = "-";
        if (kl)
          std::snprintf(tile, sizeof tile, "%lldx%lld t%lld s%lld",
                        (long long)kl->blockM, (long long)kl->blockN,
                        (long long)kl->threads, (long long)kl->splitK);
        std::printf("%-24s %-18s %6lld %10.1f %10.1f %7.0f%%  %s %s\n",
                    sh.name.c_str(), v.name.c_str(), (long long)m, us, floorUs,
                    100.0 * floorUs / us, kl ? kl->name.c_str() : "-", tile);
        char line[512];
        std::snprintf(
            line, sizeof line,
            "{\"layer\": \"%s\", \"variant\": \"%s\", \"experts\": %lld, "
            "\"top_k\": %lld, \"n\": %lld, \"k\": %lld, \"m\": %lld, "
            "\"us\": %.2f, \"floor_us\": %.2f, \"active_experts\": %zu, "
            "\"kernel\": \"%s\", \"tile\": \"%s\", \"block_size\": %lld}",
            sh.name.c_str(), v.name.c_str(), (long long)sh.experts,
            (long long)sh.topK, (long long)sh.n, (long long)sh.k,
            (long long)m, us, floorUs, active.size(),
            kl ? kl->name.c_str() : "-", tile, (long long)bs);
        jsonLine(json, line);
      }
    }
  return errors ? 1 : 0;
}

MoeTally runMoeLayerCases(const rt::CudaDriver &cu, const std::string &device,
                          const std::string &chip, const std::string &filter,
                          const std::string &json) {
  struct Shape {
    std::string name;
    MoeLayerShape shape;
    std::vector<int64_t> ms;
  };
  // Qwen3-30B-A3B's and Mixtral-8x7B's blocks at their real sizes (random
  // codes: quantizing 10^9 float64 weights on the host would take minutes).
  const Shape shapes[] = {
      {"moe_layer_qwen3_30b_a3b", {2048, 768, 128, 8, 0}, {1, 7, 64}},
      {"moe_layer_mixtral_8x7b", {4096, 14336, 8, 2, 0}, {1, 5}},
      // Small, over every range of tokens per expert: 16 / 25 / 50 / 75
      // route with blocks of 32 / 48 / 96 / 384 (gate_up's 128 rows and
      // down's 96 rows: their least common multiple).
      {"moe_layer_small_e8", {512, 256, 8, 2, 0}, {1, 64, 100, 200, 300}},
  };
  MoeTally tally;
  std::mt19937 rng(uint32_t(std::random_device{}()));
  for (const Shape &sh : shapes) {
    if (!caseSelected(sh.name, filter))
      continue;
    const MoeLayerShape &s = sh.shape;
    const int64_t H = s.hidden, I = s.intermediate, E = s.experts, K = s.topK;
    auto fail = [&](const std::string &label, const std::string &why) {
      std::printf("%-44s ERROR %s\n", label.c_str(), why.c_str());
      ++tally.failed;
    };
    InputSchema in{ScalarType::f16(), ActScaling::None, 0};
    Result<MoeLayer> layer =
        MoeLayer::create(s, w4g128Experts(0), w4g128Experts(0), in);
    QuantizedWeights gu = randomW4(E, 2 * I, H, 11), dn = randomW4(E, H, I, 12);
    Status st = layer ? layer->loadQuantized(gu, dn)
                      : Status(Error{layer.error()});
    LayerTarget target;
    target.device = device;
    target.chip = chip;
    const int64_t maxM = *std::max_element(sh.ms.begin(), sh.ms.end());
    if (st)
      st = layer->transform(target, maxM);
    if (!st) {
      fail(sh.name, st.error());
      continue;
    }
    for (int64_t m : sh.ms) {
      const std::string label = sh.name + " M=" + std::to_string(m);
      // x [m, H] f16, top-k ids (distinct, uniform) and positive weights.
      Tensor x(DType::F16, {m, H});
      std::uniform_real_distribution<double> uni(-1.0, 1.0);
      for (int64_t i = 0; i < m * H; ++i)
        x.set(i, uni(rng));
      std::vector<int32_t> ids = chooseExperts(m, K, E, Spread::Uniform, rng);
      std::vector<float> weights(size_t(m * K));
      for (float &v : weights)
        v = float(0.1 + 0.9 * (uni(rng) + 1) / 2);
      Result<rt::DeviceBuffer> dx = rt::DeviceBuffer::allocate(cu, x.data.size());
      Result<rt::DeviceBuffer> dy =
          rt::DeviceBuffer::allocate(cu, size_t(m * H) * 2);
      Result<rt::DeviceBuffer> dids = upload(cu, ids);
      Result<rt::DeviceBuffer> dw = upload(cu, weights);
      if (!dx || !dy || !dids || !dw) {
        fail(label, "allocation failed");
        continue;
      }
      Status r = dx->upload(x.data.data(), x.data.size());
      if (r)
        r = dy->fill(0xFF);
      if (r)
        r = layer->forward(nullptr, dx->ptr(), dids->ptr(), dw->ptr(),
                           dy->ptr(), m);
      if (r)
        r = cu.check(cu.cuCtxSynchronize(), "cuCtxSynchronize");
      Tensor y(DType::F16, {m, H});
      if (r)
        r = dy->download(y.data.data(), y.data.size());
      if (!r) {
        fail(label, r.error());
        continue;
      }
      // The float64 reference, rounded to f16 where the layer stores its
      // intermediate tensors (gate_up's output, the activation, down's
      // weighted rows) and at the end; one expert's weights at a time.
      auto f16 = [](double v) {
        Tensor t(DType::F16, {1});
        t.set(0, v);
        return t.at(0);
      };
      std::vector<double> rows(size_t(m * K * H), 0.0);
      std::string refError;
      for (int64_t e = 0; e < E && refError.empty(); ++e) {
        std::vector<std::pair<int64_t, int64_t>> uses; // (token, k)
        for (int64_t t = 0; t < m; ++t)
          for (int64_t k = 0; k < K; ++k)
            if (ids[size_t(t * K + k)] == e)
              uses.push_back({t, k});
        if (uses.empty())
          continue;
        Result<std::vector<double>> wgu = expertWeights(gu, e, 2 * I, H);
        Result<std::vector<double>> wdn = expertWeights(dn, e, H, I);
        if (!wgu || !wdn) {
          refError = !wgu ? wgu.error() : wdn.error();
          break;
        }
        for (auto [t, k] : uses) {
          std::vector<double> act(static_cast<size_t>(I));
          for (int64_t j = 0; j < I; ++j) {
            double g = 0, u = 0;
            for (int64_t c = 0; c < H; ++c) {
              const double xv = x.at(t * H + c);
              g += xv * (*wgu)[size_t(j * H + c)];
              u += xv * (*wgu)[size_t((I + j) * H + c)];
            }
            g = f16(g);
            u = f16(u);
            act[size_t(j)] = f16(g / (1 + std::exp(-g)) * u);
          }
          for (int64_t n = 0; n < H; ++n) {
            double o = 0;
            for (int64_t j = 0; j < I; ++j)
              o += act[size_t(j)] * (*wdn)[size_t(n * I + j)];
            rows[size_t((t * K + k) * H + n)] =
                f16(double(weights[size_t(t * K + k)]) * o);
          }
        }
      }
      if (!refError.empty()) {
        fail(label, "reference: " + refError);
        continue;
      }
      double num = 0, den = 0;
      int64_t nans = 0;
      for (int64_t t = 0; t < m; ++t)
        for (int64_t n = 0; n < H; ++n) {
          double want = 0;
          for (int64_t k = 0; k < K; ++k)
            want += rows[size_t((t * K + k) * H + n)];
          want = f16(want);
          double got = y.at(t * H + n);
          if (std::isnan(got)) {
            ++nans;
            continue;
          }
          num += (got - want) * (got - want);
          den += want * want;
        }
      const double rel = std::sqrt(num / std::max(den, 1e-300));
      const bool pass = nans == 0 && rel <= 2e-3;
      std::printf("%-44s %s rel=%.2e nan=%lld\n", label.c_str(),
                  pass ? "ok  " : "FAIL", rel, (long long)nans);
      (pass ? tally.passed : tally.failed)++;
      char line[256];
      std::snprintf(line, sizeof line,
                    "{\"case\": \"%s\", \"m\": %lld, \"rel_error\": %.3e, "
                    "\"nans\": %lld, \"pass\": %s}",
                    sh.name.c_str(), (long long)m, rel, (long long)nans,
                    pass ? "true" : "false");
      jsonLine(json, line);
    }
  }
  return tally;
}

} // namespace humming::gputest
