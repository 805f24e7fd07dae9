//===- ActivationQuantizer.cpp - 8-bit activations on the GPU -------------===//

#include "Humming/API/ActivationQuantizer.h"
#include "Jit.h"

#include "Humming/Pipelines/Pipelines.h"
#include "Humming/Quant/Adapters.h"
#include "Humming/Quant/Checked.h"
#include "Humming/Registration.h"
#include "Humming/Runtime/CudaDriver.h"
#include "Humming/Runtime/KernelCache.h"
#include "Humming/Target/ArchInfo.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Config/llvm-config.h"

#include <chrono>
#include <cstdio>
#include <limits>
#include <optional>

namespace humming {

struct ActivationQuantizer::Impl {
  InputSchema input;
  ScalarType source;
  int64_t k = 0, codesK = 0;
  bool transformed = false, compileOnly = false;
  std::string chip;
  abi::KernelLaunch kernel;
  std::string ptx;
  TransformStats stats;
  const rt::CudaDriver *driver = nullptr;
  std::unique_ptr<rt::Module> module;
  rt::CUfunction function = nullptr;
};

ActivationQuantizer::ActivationQuantizer(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)) {}
ActivationQuantizer::ActivationQuantizer(ActivationQuantizer &&) noexcept =
    default;
ActivationQuantizer &
ActivationQuantizer::operator=(ActivationQuantizer &&) noexcept = default;
ActivationQuantizer::~ActivationQuantizer() = default;

Result<ActivationQuantizer>
ActivationQuantizer::create(const InputSchema &input, ScalarType source,
                            int64_t k, int64_t codesK) {
  if (Diag d = verifyInputSchema(input))
    return Error{*d};
  if (input.scaling == ActScaling::None)
    return Error{concat("expected an 8- or 4-bit input schema to quantize to, got ",
                        input.type.str(), " (16-bit activations are used as "
                        "they are)")};
  if (!(source == ScalarType::f16() || source == ScalarType::bf16() ||
        source == ScalarType::f32()))
    return Error{concat("expected f16, bf16 or f32 activations to quantize, "
                        "got ",
                        source.str())};
  if (k <= 0 || k > (int64_t(1) << 24))
    return Error{concat("expected 1 <= K <= 2^24 activations per row, got ", k)};
  if (input.scaling == ActScaling::Group && k % input.groupK != 0)
    return Error{concat("expected K to be a multiple of the activation group ",
                        input.groupK, ", got K = ", k)};
  if (codesK == 0)
    codesK = k;
  if (codesK < k || codesK > (int64_t(1) << 24))
    return Error{
        concat("expected K (", k, ") to 2^24 codes per row, got ", codesK)};
  if (codesK != k && input.scaling == ActScaling::Group)
    return Error{concat("expected K (", k,
                        ") codes per row with per-group "
                        "scales (K is a multiple of the group: nothing to "
                        "pad), got ",
                        codesK)};
  if (input.type.bits == 4 && codesK % 2 != 0)
    return Error{concat("expected an even number of 4-bit codes per row (two "
                        "per byte), got ",
                        codesK)};
  auto impl = std::make_unique<Impl>();
  impl->input = input;
  impl->source = source;
  impl->k = k;
  impl->codesK = codesK;
  return ActivationQuantizer(std::move(impl));
}

Status ActivationQuantizer::transform(const LayerTarget &target) {
  Impl &q = *impl_;
  // The GEMM-only parts of a target: said, not ignored.
  if (!target.tileConfig.empty() || target.canonicalLayout)
    return Error{"a tile configuration or the canonical layout applies to a "
                 "layer's GEMM kernels; expected neither for the activation "
                 "quantizer"};
  // The chip's minimum PTX ISA (sm_89's, 8.4, has the fp8 cvt LLVM selects
  // there from 8.1 only).
  Result<detail::SingleKernel> k = detail::compileSingleKernel(
      target, "the quantizer",
      concat("quantize ", formatInputSchema(q.input), " source=",
             q.source.str(), " k=", q.k, " codes=", q.codesK, " ptx=0"),
      abi::kQuantizeKernel, [&](mlir::MLIRContext &ctx) {
        return mlir::humming::buildQuantizeModule(
            ctx, {q.input, q.source, q.k, q.codesK});
      });
  if (!k)
    return Error{k.error()};
  q.kernel = k->kernel;
  q.ptx = k->ptx;
  q.stats = k->stats;
  q.chip = k->chip;
  q.driver = k->driver;
  q.module = std::move(k->module);
  q.function = k->function;
  q.compileOnly = target.compileOnly;
  q.transformed = true;
  return Status::success();
}

Status ActivationQuantizer::forward(void *stream, uint64_t input,
                                    uint64_t codes, uint64_t scales,
                                    int64_t m) const {
  const Impl &q = *impl_;
  if (!q.transformed)
    return Error{"call transform() before forward()"};
  if (m < 0 || m > std::numeric_limits<int32_t>::max())
    return Error{concat("expected 0 <= M <= 2^31 - 1 rows, got ", m)};
  if (m > 0 && (!input || !codes || !scales))
    return Error{"expected device pointers for the activations, the codes "
                 "and the scales, got a null pointer"};
  if (m > 0 && (input % 16 != 0 || codes % 8 != 0 || scales % 4 != 0)) {
    char text[128];
    std::snprintf(text, sizeof text, "0x%llx, 0x%llx and 0x%llx",
                  (unsigned long long)input, (unsigned long long)codes,
                  (unsigned long long)scales);
    return Error{concat("expected 16-byte aligned activations, 8-byte "
                        "aligned codes and 4-byte aligned scales, got ",
                        text)};
  }
  if (q.compileOnly)
    return Error{concat("the quantizer was transformed compile-only for ",
                        q.chip, "; transform it for a device to run it")};
  if (m == 0)
    return Status::success();
  rt::CUdeviceptr null = 0, in = input, out = codes, sc = scales;
  int32_t m32 = int32_t(m);
  void *args[abi::NumGemmParams] = {&in,   &null, &sc,   &null, &null,
                                    &null, &out,  &null, &m32};
  uint32_t grid[3];
  q.kernel.grid(m, q.k, grid);
  return q.driver->check(
      q.driver->cuLaunchKernel(q.function, grid[0], grid[1], grid[2],
                               unsigned(q.kernel.threads), 1, 1,
                               unsigned(q.kernel.smemBytes),
                               static_cast<rt::CUstream>(stream), args,
                               nullptr),
      "cuLaunchKernel");
}

const InputSchema &ActivationQuantizer::inputSchema() const {
  return impl_->input;
}
ScalarType ActivationQuantizer::sourceType() const { return impl_->source; }
int64_t ActivationQuantizer::k() const { return impl_->k; }
int64_t ActivationQuantizer::codesK() const { return impl_->codesK; }
const abi::KernelLaunch &ActivationQuantizer::kernel() const {
  return impl_->kernel;
}
const std::string &ActivationQuantizer::ptx() const { return impl_->ptx; }
const TransformStats &ActivationQuantizer::transformStats() const {
  return impl_->stats;
}

} // namespace humming
