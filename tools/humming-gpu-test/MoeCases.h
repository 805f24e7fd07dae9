//===- MoeCases.h - humming.moe_gemm on a GPU -------------------*- C++ -*-===//
//
// The mixture-of-experts cases of humming-gpu-test (MoeCases.cpp):
// correctness of every routing against the float64 MoE reference, and the
// MoE benchmark of bench/PROTOCOL.md (the Qwen3-MoE and Mixtral
// layers).
//
//===----------------------------------------------------------------------===//

#ifndef HUMMING_TOOLS_GPU_TEST_MOECASES_H
#define HUMMING_TOOLS_GPU_TEST_MOECASES_H

#include "Humming/Runtime/CudaDriver.h"

#include <string>
#include <vector>

namespace humming::gputest {

struct MoeTally {
  int passed = 0, failed = 0;
};

/// Every MoE case whose name contains `filter`: a humming::Layer made by
/// createMoe with random weights quantized by lib/Quant, transformed for
/// `device` / `chip` (compile-only without a driver: the case passes when
/// it compiles, and `ptxDir` receives <case>_m<i>.ptx), then at each M fresh
/// random activations and routing (balanced, skewed, experts with no token,
/// an expert on another rank), forwardMoe into a NaN-poisoned output, and
/// the rows compared against referenceMoeGemm (relative error <= 1e-3 for
/// f16 outputs, 1e-2 for bf16 and 8-bit activations; rows no expert takes
/// must stay poisoned). One line per run; a JSON line per run to `json`
/// when set.
/// `forceTiles`, when set, replaces the heuristics' tiles (as
/// LayerTarget::tileConfig).
MoeTally runMoeCases(const rt::CudaDriver *cu, const std::string &device,
                     const std::string &chip, const std::string &filter,
                     bool quick, const std::string &ptxDir,
                     const std::string &json,
                     const std::string &forceTiles = "");

/// humming::MoeLayer end to end (router, gate_up, silu_and_mul, down with
/// router weights, moe_sum) at Qwen3-30B-A3B's and Mixtral-8x7B's sizes,
/// random W4A16 g128 codes, against a float64 reference rounded to f16 where
/// the layer stores its intermediates (relative error <= 2e-3).
MoeTally runMoeLayerCases(const rt::CudaDriver &cu, const std::string &device,
                          const std::string &chip, const std::string &filter,
                          const std::string &json);

/// The MoE benchmark: the gate_up and down projections of a Qwen3-30B-A3B
/// (E = 128, top-8) and a Mixtral (E = 8, top-2) layer, W4A16 uint4 g128
/// f16 scales (and W4A8 x e4m3 where `fp8`), indexed routing (and the
/// grouped ones), random routing, median of CUDA-graph replays over four
/// layer copies, at each M of `ms`; with the bandwidth floor (the activated
/// experts' bytes at `bandwidthGBs`). `blockSize` is the indexed routing's
/// block_size (0: each M's kernel's, Layer::moeBlockSize); `forceTiles` a
/// #humming.tile_config every kernel uses (empty: the heuristics), so one
/// device run can compare tiles. Returns 0 when every run was measured.
int runMoeBench(const rt::CudaDriver &cu, const std::string &device,
                const std::string &chip, const std::string &filter,
                const std::vector<int64_t> &ms, double bandwidthGBs,
                const std::string &json, int64_t blockSize,
                const std::string &forceTiles);

} // namespace humming::gputest

#endif // HUMMING_TOOLS_GPU_TEST_MOECASES_H
