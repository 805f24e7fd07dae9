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
//===----------------------------------------------------------------------===//

#ifndef HUMMING_API_MOEROUTER_H
#define HUMMING_API_MOEROUTER_H

#include "Humming/API/Layer.h"

#include <cstdint>
#include <memory>
#include <string>

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

} // namespace humming

#endif // HUMMING_API_MOEROUTER_H
