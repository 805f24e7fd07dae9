//===- MoeRouter.h - MoE routing on the GPU ---------------------*- C++ -*-===//
//
// Turns the router's top-k expert ids into the indexed routing a MoE layer
// (Layer::createMoe with GemmType::Indexed) runs on: vLLM's
// moe_align_block_size as a humming.moe_align kernel, compiled by the same
// pipeline and kernel cache as the layers.
//
//   auto r = humming::MoeRouter::create(128, 8, 64); // E, top_k, block_size
//   r->transform({"H200"});
//   // sorted_ids: r->sortedCapacity(m) i32, expert_ids: r->blockCapacity(m)
//   r->forward(stream, topkIds, m, sortedIds, expertIds, numTokensPadded);
//   layer.forwardMoe(stream, x, y, m, {sortedIds, expertIds,
//                    numTokensPadded, r->sortedCapacity(m)});
//
// MoeGrouping does the same for the grouped routings (humming.moe_group)
// and moves the rows into and out of their order (humming.moe_permute):
//
//   auto g = humming::MoeGrouping::create(128, 8, 0, {2 * 2048});
//   g->transform({"H200"});            // E, top_k, max_tokens, row bytes
//   g->forward(stream, topkIds, m, positions, offsets);
//   g->scatter(stream, 4096, x, m, positions, xs); // g->groupedRows(m) rows
//   layer.forwardMoe(stream, xs, ys, g->groupedRows(m), {.expertLayout =
//                    offsets});         // a grouped_contiguous layer
//   g->gather(stream, 4096, ys, m, positions, y);  // [m * top_k] rows
//
//===----------------------------------------------------------------------===//

#ifndef HUMMING_API_MOEROUTER_H
#define HUMMING_API_MOEROUTER_H

#include "Humming/API/Layer.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace humming {

class MoeRouter {
public:
  /// Routing for `experts` experts (1 .. 1024), `topK` of them per token,
  /// each expert's ids padded to a multiple of `blockSize` (a multiple of
  /// 16 up to 1024: the MoE layer's MoeOptions::blockSize).
  static Result<MoeRouter> create(int64_t experts, int64_t topK,
                                  int64_t blockSize);
  MoeRouter(MoeRouter &&) noexcept;
  MoeRouter &operator=(MoeRouter &&) noexcept;
  ~MoeRouter();
  /// Compiles the kernel for `target` through the kernel cache and, unless
  /// compileOnly, loads it on the current device (the target's chip). GEMM
  /// settings (a tile configuration, the canonical layout) are refused.
  Status transform(const LayerTarget &target);
  /// The sorted_ids a batch of `m` tokens needs: m * top_k + E *
  /// (block_size - 1); and the expert_ids: that over block_size, rounded
  /// up. (The ids in use, num_tokens_padded, are at most that.)
  int64_t sortedCapacity(int64_t m) const;
  int64_t blockCapacity(int64_t m) const;
  /// Routes `m` tokens' expert ids (`topkIds` [m, top_k] i32, device
  /// pointer; ids outside 0 .. E - 1 are skipped) into `sortedIds`,
  /// `expertIds` and `numTokensPadded` (device pointers of the capacities
  /// above, 4-byte aligned). Ordinary launch, nothing allocated or
  /// synchronized; m = 0 writes num_tokens_padded = 0 all the same.
  Status forward(void *stream, uint64_t topkIds, int64_t m, uint64_t sortedIds,
                 uint64_t expertIds, uint64_t numTokensPadded) const;
  int64_t experts() const;
  int64_t topK() const;
  int64_t blockSize() const;
  /// After transform: the kernel and its PTX.
  const abi::KernelLaunch &kernel() const;
  const std::string &ptx() const;

private:
  struct Impl;
  explicit MoeRouter(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

/// Top-k expert ids to the grouped routings of Layer::createMoe
/// (GemmType::GroupedContiguous, GroupedMasked) on the GPU, and the row
/// moves around such a GEMM.
class MoeGrouping {
public:
  /// Routing for `experts` experts (1 .. 1024), `topK` of them per token:
  /// grouped_contiguous (`maxTokens` 0: rows sorted by expert, offsets
  /// [E + 1]) or grouped_masked (`maxTokens` rows per expert, counts [E]).
  /// `rowBytes`: the widths (bytes, each a positive multiple of 4, at most
  /// 1 MiB) of the rows scatter() and gather() will move, e.g. 2 x K of
  /// 16-bit activations and 2 x N of the GEMM's output.
  static Result<MoeGrouping> create(int64_t experts, int64_t topK,
                                    int64_t maxTokens,
                                    std::vector<int64_t> rowBytes);
  MoeGrouping(MoeGrouping &&) noexcept;
  MoeGrouping &operator=(MoeGrouping &&) noexcept;
  ~MoeGrouping();
  /// Compiles the routing kernel, a scatter and a gather per row width and
  /// the router weights' scatter for `target` through the kernel cache;
  /// loads them unless compileOnly. GEMM settings are refused.
  Status transform(const LayerTarget &target);
  /// The GEMM's rows for `m` tokens: m * top_k (contiguous) or E *
  /// max_tokens (masked); `expert_layout`'s entries: E + 1 or E.
  int64_t groupedRows(int64_t m) const;
  int64_t layoutSize() const;
  /// Routes `m` tokens' ids (`topkIds` [m, top_k] i32) into `positions`
  /// [m * top_k] i32 (each id's grouped row; -1 for ids outside 0 .. E - 1)
  /// and `expertLayout` (offsets or counts, layoutSize() i32). Masked: m
  /// must be at most max_tokens (then every id has a row unless a token
  /// names an expert twice; ids past an expert's max_tokens get -1).
  /// Ordinary launch, device pointers, 4-byte aligned.
  Status forward(void *stream, uint64_t topkIds, int64_t m, uint64_t positions,
                 uint64_t expertLayout) const;
  /// grouped[positions[i]] = rows[i / top_k] for i < m * top_k: the
  /// tokens' rows ([m] of `rowBytes`, one of create()'s widths) into the
  /// GEMM's groupedRows(m) rows (those no id names are not written).
  Status scatter(void *stream, int64_t rowBytes, uint64_t rows, int64_t m,
                 uint64_t positions, uint64_t grouped) const;
  /// The router weights [m, top_k] f32 into the grouped rows' order
  /// (groupedRows(m) f32): a down projection's MoeRouting::routerWeights.
  Status scatterWeights(void *stream, uint64_t topkWeights, int64_t m,
                        uint64_t positions, uint64_t grouped) const;
  /// rows[i] = grouped[positions[i]] for i < m * top_k (zero where the
  /// id has no row): the GEMM's output back to the [m * top_k] rows of
  /// moe_sum.
  Status gather(void *stream, int64_t rowBytes, uint64_t grouped, int64_t m,
                uint64_t positions, uint64_t rows) const;
  int64_t experts() const;
  int64_t topK() const;
  int64_t maxTokens() const;
  GemmType routing() const;
  /// After transform: the routing kernel.
  const abi::KernelLaunch &kernel() const;

private:
  struct Impl;
  explicit MoeGrouping(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

} // namespace humming

#endif // HUMMING_API_MOEROUTER_H
