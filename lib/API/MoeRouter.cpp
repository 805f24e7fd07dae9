//===- MoeRouter.cpp - MoE routing on the GPU -----------------------------===//

#include "Humming/API/MoeRouter.h"
#include "Jit.h"

#include "Humming/Pipelines/Pipelines.h"
#include "Humming/Quant/Checked.h"

#include "mlir/IR/MLIRContext.h"

#include <limits>

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

} // namespace humming
