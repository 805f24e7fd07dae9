//===- MoeRouter.cpp - MoE routing on the GPU -----------------------------===//

#include "Humming/API/MoeRouter.h"
#include "Jit.h"

#include "Humming/Pipelines/Pipelines.h"
#include "Humming/Quant/Checked.h"

#include "mlir/IR/MLIRContext.h"

#include <algorithm>
#include <limits>
#include <map>

namespace humming {

struct MoeRouter::Impl {
  int64_t experts = 0, topK = 1, blockSize = 64;
  bool transformed = false, compileOnly = false;
  detail::SingleKernel k;
};

MoeRouter::MoeRouter(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
MoeRouter::MoeRouter(MoeRouter &&) noexcept = default;
MoeRouter &MoeRouter::operator=(MoeRouter &&) noexcept = default;
MoeRouter::~MoeRouter() = default;

Result<MoeRouter> MoeRouter::create(int64_t experts, int64_t topK,
                                    int64_t blockSize) {
  if (experts < 1 || experts > 1024)
    return Error{concat("expected 1 .. 1024 experts (one thread of the "
                        "routing block each), got ",
                        experts)};
  if (topK < 1 || topK > experts)
    return Error{concat("expected top_k in 1 .. ", experts,
                        " (the experts), got ", topK)};
  if (blockSize < 16 || blockSize > 1024 || blockSize % 16 != 0)
    return Error{concat("expected block_size to be a multiple of 16 in 16 .. "
                        "1024, got ",
                        blockSize)};
  auto impl = std::make_unique<Impl>();
  impl->experts = experts;
  impl->topK = topK;
  impl->blockSize = blockSize;
  return MoeRouter(std::move(impl));
}

Status MoeRouter::transform(const LayerTarget &target) {
  Impl &r = *impl_;
  if (!target.tileConfig.empty() || target.canonicalLayout)
    return Error{"a tile configuration or the canonical layout applies to a "
                 "layer's GEMM kernels; expected neither for the MoE router"};
  Result<detail::SingleKernel> k = detail::compileSingleKernel(
      target, "the MoE router",
      concat("moe_align experts=", r.experts, " top_k=", r.topK,
             " block_size=", r.blockSize),
      abi::kMoeAlignKernel, [&](mlir::MLIRContext &ctx) {
        return mlir::humming::buildMoeAlignModule(
            ctx, {r.experts, r.topK, r.blockSize});
      });
  if (!k)
    return Error{k.error()};
  r.k = k.take();
  r.compileOnly = target.compileOnly;
  r.transformed = true;
  return Status::success();
}

int64_t MoeRouter::sortedCapacity(int64_t m) const {
  return m * impl_->topK + impl_->experts * (impl_->blockSize - 1);
}

int64_t MoeRouter::blockCapacity(int64_t m) const {
  return (sortedCapacity(m) + impl_->blockSize - 1) / impl_->blockSize;
}

Status MoeRouter::forward(void *stream, uint64_t topkIds, int64_t m,
                          uint64_t sortedIds, uint64_t expertIds,
                          uint64_t numTokensPadded) const {
  const Impl &r = *impl_;
  if (!r.transformed)
    return Error{"call transform() before forward()"};
  if (m < 0 || m > (std::numeric_limits<int32_t>::max() -
                    r.experts * (r.blockSize - 1)) /
                       r.topK)
    return Error{concat("expected 0 <= M and M * top_k + E * (block_size - 1) "
                        "<= 2^31 - 1, got M = ",
                        m)};
  if ((m > 0 && !topkIds) || !sortedIds || !expertIds || !numTokensPadded)
    return Error{"expected device pointers for the top-k ids, sorted_ids, "
                 "expert_ids and num_tokens_padded, got a null pointer"};
  if (topkIds % 4 || sortedIds % 4 || expertIds % 4 || numTokensPadded % 4)
    return Error{"expected 4-byte aligned top-k ids, sorted_ids, expert_ids "
                 "and num_tokens_padded"};
  if (r.compileOnly)
    return Error{concat("the MoE router was transformed compile-only for ",
                        r.k.chip, "; transform it for a device to run it")};
  rt::CUdeviceptr null = 0, ids = topkIds, sorted = sortedIds,
                  blocks = expertIds, padded = numTokensPadded;
  int32_t m32 = int32_t(m), block32 = int32_t(r.blockSize);
  void *args[abi::NumMoeParams] = {&ids,  &null,   &null,   &null,   &null,
                                   &null, &null,   &null,   &m32,    &sorted,
                                   &blocks, &padded, &null, &block32};
  return r.k.driver->check(
      r.k.driver->cuLaunchKernel(r.k.function, 1, 1, 1,
                                 unsigned(r.k.kernel.threads), 1, 1, 0,
                                 static_cast<rt::CUstream>(stream), args,
                                 nullptr),
      "cuLaunchKernel");
}

int64_t MoeRouter::experts() const { return impl_->experts; }
int64_t MoeRouter::topK() const { return impl_->topK; }
int64_t MoeRouter::blockSize() const { return impl_->blockSize; }
const abi::KernelLaunch &MoeRouter::kernel() const { return impl_->k.kernel; }
const std::string &MoeRouter::ptx() const { return impl_->k.ptx; }

struct MoeGrouping::Impl {
  int64_t experts = 0, topK = 1, maxTokens = 0;
  std::vector<int64_t> rowBytes;
  bool transformed = false, compileOnly = false;
  detail::SingleKernel group, weights;
  std::map<int64_t, detail::SingleKernel> scatter, gather; // by row bytes

  int64_t ids(int64_t m) const { return m * topK; }
  int64_t groupedRows(int64_t m) const {
    return maxTokens ? experts * maxTokens : m * topK;
  }
  Status check(int64_t m, std::initializer_list<uint64_t> pointers,
               const char *what) const;
  /// Rows of `kernels`' width `rowBytes` (scatter or gather) from `src` to
  /// `dst` for `m` tokens, after the checks every call makes.
  Status moveRows(void *stream,
                  const std::map<int64_t, detail::SingleKernel> &kernels,
                  int64_t rowBytes, uint64_t src, int64_t m,
                  uint64_t positions, uint64_t dst, const char *what) const;
  /// One launch of a permute kernel over `m` tokens' ids.
  Status permute(void *stream, const detail::SingleKernel &k, uint64_t input,
                 int64_t positionsCount, uint64_t positions, uint64_t output,
                 int64_t groupedRows) const {
    if (positionsCount == 0)
      return Status::success();
    uint32_t grid[3];
    k.kernel.grid(positionsCount, 0, grid);
    rt::CUdeviceptr null = 0, in = input, out = output, pos = positions;
    int32_t p32 = int32_t(positionsCount), g32 = int32_t(groupedRows);
    void *args[abi::NumMoeParams] = {&in,   &null, &null, &null, &null,
                                     &null, &out,  &null, &p32,  &pos,
                                     &null, &null, &null, &g32};
    return k.driver->check(
        k.driver->cuLaunchKernel(k.function, grid[0], grid[1], grid[2],
                                 unsigned(k.kernel.threads), 1, 1, 0,
                                 static_cast<rt::CUstream>(stream), args,
                                 nullptr),
        "cuLaunchKernel");
  }
};

MoeGrouping::MoeGrouping(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
MoeGrouping::MoeGrouping(MoeGrouping &&) noexcept = default;
MoeGrouping &MoeGrouping::operator=(MoeGrouping &&) noexcept = default;
MoeGrouping::~MoeGrouping() = default;

Result<MoeGrouping> MoeGrouping::create(int64_t experts, int64_t topK,
                                        int64_t maxTokens,
                                        std::vector<int64_t> rowBytes) {
  if (experts < 1 || experts > 1024)
    return Error{concat("expected 1 .. 1024 experts (one thread of the "
                        "routing block each), got ",
                        experts)};
  if (topK < 1 || topK > experts)
    return Error{concat("expected top_k in 1 .. ", experts,
                        " (the experts), got ", topK)};
  if (maxTokens < 0 ||
      maxTokens > std::numeric_limits<int32_t>::max() / experts)
    return Error{concat("expected max_tokens 0 (grouped_contiguous) or 1 .. "
                        "(2^31 - 1) / experts (grouped_masked), got ",
                        maxTokens)};
  for (int64_t b : rowBytes)
    if (b < 4 || b % 4 != 0 || b > (int64_t(1) << 20))
      return Error{concat("expected row widths in bytes that are positive "
                          "multiples of 4 up to 1 MiB, got ",
                          b)};
  auto impl = std::make_unique<Impl>();
  impl->experts = experts;
  impl->topK = topK;
  impl->maxTokens = maxTokens;
  std::sort(rowBytes.begin(), rowBytes.end());
  rowBytes.erase(std::unique(rowBytes.begin(), rowBytes.end()),
                 rowBytes.end());
  impl->rowBytes = std::move(rowBytes);
  return MoeGrouping(std::move(impl));
}

Status MoeGrouping::transform(const LayerTarget &target) {
  Impl &g = *impl_;
  if (!target.tileConfig.empty() || target.canonicalLayout)
    return Error{"a tile configuration or the canonical layout applies to a "
                 "layer's GEMM kernels; expected neither for the MoE "
                 "grouping"};
  Result<detail::SingleKernel> group = detail::compileSingleKernel(
      target, "the MoE grouping",
      concat("moe_group experts=", g.experts, " top_k=", g.topK,
             " max_tokens=", g.maxTokens),
      abi::kMoeGroupKernel, [&](mlir::MLIRContext &ctx) {
        return mlir::humming::buildMoeGroupModule(
            ctx, {g.experts, g.topK, g.maxTokens});
      });
  if (!group)
    return Error{group.error()};
  auto permute = [&](int64_t words, int64_t topK,
                     bool gather) -> Result<detail::SingleKernel> {
    return detail::compileSingleKernel(
        target, "the MoE grouping",
        concat("moe_permute words=", words, " top_k=", topK,
               gather ? " gather" : " scatter"),
        gather ? abi::kMoeGatherKernel : abi::kMoeScatterKernel,
        [&](mlir::MLIRContext &ctx) {
          return mlir::humming::buildMoePermuteModule(ctx,
                                                      {words, topK, gather});
        });
  };
  Result<detail::SingleKernel> weights = permute(1, 1, false);
  if (!weights)
    return Error{weights.error()};
  std::map<int64_t, detail::SingleKernel> scatter, gather;
  for (int64_t bytes : g.rowBytes) {
    Result<detail::SingleKernel> s = permute(bytes / 4, g.topK, false);
    if (!s)
      return Error{s.error()};
    Result<detail::SingleKernel> t = permute(bytes / 4, 1, true);
    if (!t)
      return Error{t.error()};
    scatter.emplace(bytes, s.take());
    gather.emplace(bytes, t.take());
  }
  g.group = group.take();
  g.weights = weights.take();
  g.scatter = std::move(scatter);
  g.gather = std::move(gather);
  g.compileOnly = target.compileOnly;
  g.transformed = true;
  return Status::success();
}

int64_t MoeGrouping::groupedRows(int64_t m) const {
  return impl_->groupedRows(m);
}

int64_t MoeGrouping::layoutSize() const {
  return impl_->maxTokens ? impl_->experts : impl_->experts + 1;
}

/// The checks every MoeGrouping launch shares: transformed for a device,
/// M in range, 4-byte aligned non-null pointers (`m` > 0 needs them all).
Status MoeGrouping::Impl::check(int64_t m,
                                std::initializer_list<uint64_t> pointers,
                                const char *what) const {
  if (!transformed)
    return Error{"call transform() before forward()"};
  if (m < 0 || m > std::numeric_limits<int32_t>::max() / topK)
    return Error{concat("expected 0 <= M and M * top_k <= 2^31 - 1, got M = ",
                        m)};
  if (maxTokens && m > maxTokens)
    return Error{concat("expected M <= max_tokens = ", maxTokens,
                        " (grouped_masked: each expert can then take every "
                        "token), got M = ",
                        m)};
  for (uint64_t p : pointers) {
    if (m > 0 && !p)
      return Error{concat("expected device pointers for ", what,
                          ", got a null pointer")};
    if (p % 4)
      return Error{concat("expected 4-byte aligned device pointers for ", what)};
  }
  if (compileOnly)
    return Error{concat("the MoE grouping was transformed compile-only for ",
                        group.chip, "; transform it for a device to run it")};
  return Status::success();
}

Status MoeGrouping::Impl::moveRows(
    void *stream, const std::map<int64_t, detail::SingleKernel> &kernels,
    int64_t rowBytes, uint64_t src, int64_t m, uint64_t positions,
    uint64_t dst, const char *what) const {
  auto it = kernels.find(rowBytes);
  if (transformed && it == kernels.end())
    return Error{concat("expected one of the row widths the grouping was "
                        "created with, got ",
                        rowBytes, " bytes")};
  if (Status s = check(m, {src, positions, dst}, what); !s)
    return s;
  return permute(stream, it->second, src, ids(m), positions, dst,
                 groupedRows(m));
}

Status MoeGrouping::forward(void *stream, uint64_t topkIds, int64_t m,
                            uint64_t positions, uint64_t expertLayout) const {
  const Impl &g = *impl_;
  if (g.transformed && (!expertLayout || expertLayout % 4))
    return Error{"expected a 4-byte aligned device pointer for the expert "
                 "layout (written for every M, 0 included)"};
  if (Status s = g.check(m, {topkIds, positions},
                         "the top-k ids and the positions");
      !s)
    return s;
  rt::CUdeviceptr null = 0, ids = topkIds, pos = positions,
                  layout = expertLayout;
  int32_t m32 = int32_t(m), zero = 0;
  void *args[abi::NumMoeParams] = {&ids,  &null, &null,   &null, &null,
                                   &null, &pos,  &null,   &m32,  &layout,
                                   &null, &null, &null,   &zero};
  return g.group.driver->check(
      g.group.driver->cuLaunchKernel(g.group.function, 1, 1, 1,
                                     unsigned(g.group.kernel.threads), 1, 1, 0,
                                     static_cast<rt::CUstream>(stream), args,
                                     nullptr),
      "cuLaunchKernel");
}

Status MoeGrouping::scatter(void *stream, int64_t rowBytes, uint64_t rows,
                            int64_t m, uint64_t positions,
                            uint64_t grouped) const {
  return impl_->moveRows(stream, impl_->scatter, rowBytes, rows, m, positions,
                         grouped,
                         "the rows, the positions and the grouped rows");
}

Status MoeGrouping::scatterWeights(void *stream, uint64_t topkWeights,
                                   int64_t m, uint64_t positions,
                                   uint64_t grouped) const {
  const Impl &g = *impl_;
  if (Status s = g.check(m, {topkWeights, positions, grouped},
                         "the router weights, the positions and the grouped "
                         "weights");
      !s)
    return s;
  return g.permute(stream, g.weights, topkWeights, g.ids(m), positions,
                   grouped, g.groupedRows(m));
}

Status MoeGrouping::gather(void *stream, int64_t rowBytes, uint64_t grouped,
                           int64_t m, uint64_t positions,
                           uint64_t rows) const {
  return impl_->moveRows(stream, impl_->gather, rowBytes, grouped, m,
                         positions, rows,
                         "the grouped rows, the positions and the rows");
}

int64_t MoeGrouping::experts() const { return impl_->experts; }
int64_t MoeGrouping::topK() const { return impl_->topK; }
int64_t MoeGrouping::maxTokens() const { return impl_->maxTokens; }
GemmType MoeGrouping::routing() const {
  return impl_->maxTokens ? GemmType::GroupedMasked
                          : GemmType::GroupedContiguous;
}
const abi::KernelLaunch &MoeGrouping::kernel() const {
  return impl_->group.kernel;
}

} // namespace humming
