//===- ActivationQuantizer.h - 8-bit activations on the GPU -----*- C++ -*-===//
//
// Quantizes 16- or 32-bit activations to the codes and scales of an 8- or
// 4-bit input schema on the GPU (humming.quantize, compiled by the same pipeline
// and kernel cache as the layers): what the original calls quant_input.
// The codes follow humming::quantizeActivations bit for bit.
//
//   auto q = humming::ActivationQuantizer::create(
//       {ScalarType::e4m3(), ActScaling::Token, 0}, ScalarType::bf16(), 4096);
//   q->transform({"H200"});
//   q->forward(stream, x, codes, scales, m); // codes [m, K], scales [m, 1]
//
//===----------------------------------------------------------------------===//

#ifndef HUMMING_API_ACTIVATIONQUANTIZER_H
#define HUMMING_API_ACTIVATIONQUANTIZER_H

#include "Humming/API/Layer.h"
#include "Humming/Quant/Result.h"
#include "Humming/Quant/Schema.h"
#include "Humming/Target/KernelABI.h"

#include <cstdint>
#include <memory>
#include <string>

namespace humming {

class ActivationQuantizer {
public:
  /// Activations of `k` columns of `source` (f16, bf16 or f32) to the codes
  /// of `input` (e4m3, e5m2, int8, or int4 and e2m1 packed two per byte;
  /// per token, per group or static), in rows of `codesK` codes (0: k; more
  /// than k, per token or static: the columns past k get the code of zero,
  /// as a GEMM over rows of K padded to 16 bytes takes them). The
  /// schema and sizes are checked here; what the chip lacks, in transform().
  static Result<ActivationQuantizer> create(const InputSchema &input,
                                            ScalarType source, int64_t k,
                                            int64_t codesK = 0);
  ActivationQuantizer(ActivationQuantizer &&) noexcept;
  ActivationQuantizer &operator=(ActivationQuantizer &&) noexcept;
  ~ActivationQuantizer();

  /// Compiles the kernel for `target` (a device or a chip; fp8 codes need
  /// sm_89 or later) through the kernel cache and, unless compileOnly,
  /// loads it on the current device, which must be the target's chip. A
  /// tile configuration or the canonical layout (GEMM settings) is refused;
  /// dependentLaunch does not apply (ordinary launches).
  Status transform(const LayerTarget &target);

  /// Quantizes m rows of `input` (device pointer, [m, K], 16-byte aligned)
  /// into `codes` ([m, codesK] bytes, or [m, codesK / 2] for 4-bit codes with
  /// the lower k in the low nibble; 8-byte aligned) and `scales` (f32, 4-byte
  /// aligned: [m, 1] per token, [m, K / g] per group written; with static
  /// scaling the one scale is read from it, and must be positive: the
  /// codes of a zero or negative one are saturated or NaN). Nothing is
  /// allocated or synchronized; m = 0 launches nothing.
  Status forward(void *stream, uint64_t input, uint64_t codes,
                 uint64_t scales, int64_t m) const;

  const InputSchema &inputSchema() const;
  ScalarType sourceType() const;
  int64_t k() const;
  /// Codes per row (k, or more: create()).
  int64_t codesK() const;
  /// After transform: the kernel, its PTX and how it was obtained.
  const abi::KernelLaunch &kernel() const;
  const std::string &ptx() const;
  const TransformStats &transformStats() const;

private:
  struct Impl;
  explicit ActivationQuantizer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

} // namespace humming

#endif // HUMMING_API_ACTIVATIONQUANTIZER_H
