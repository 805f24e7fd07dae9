//===- TileHeuristics.h - Tile configurations from device facts -*- C++ -*-===//
//
// The heuristics humming-select-tiles runs: pure functions of the layer
// (schema, padded N and K) and the device's facts (SM count, bandwidth,
// tensor throughput, shared memory), so lit tests check them per device
// without a GPU and the runtime can recompute them. No MLIR dependency.
//
//===----------------------------------------------------------------------===//

#ifndef HUMMING_TARGET_TILEHEURISTICS_H
#define HUMMING_TARGET_TILEHEURISTICS_H

#include "Humming/Quant/Result.h"
#include "Humming/Quant/Schema.h"
#include "Humming/Target/ArchInfo.h"

#include <vector>

namespace humming {

/// Tokens where a layer turns from memory- to compute-bound on `device`:
/// weight bytes per element / bandwidth = 2 M / tensor throughput.
double computeMemoryCrossover(const WeightSchema &w, const InputSchema &in,
                              const DeviceInfo &device);

/// The device whose facts stand for a chip when the module names no
/// device (sm_80: A100, sm_86: A10, sm_89: L40S, sm_90a: H100, ...).
const DeviceInfo *representativeDevice(const Chip &chip);

/// The M-range configurations a forced tile configuration stands for: it
/// serves every M; an mma_sync one that splits K across CTAs has a
/// bounded range (the verifier insists) and serves M up to that range's
/// top, the same tile without the split the rest (wgmma kernels and
/// cluster_split ones split K within a cluster and serve every M).
std::vector<TileConfig> forcedTileConfigs(TileConfig forced);

/// The facts the tile heuristics use for a named device, else for the
/// chip's representative device (humming-select-tiles and humming::Layer
/// choose the same way). A chip given beside a device of its SM (sm_90 for
/// an H200, whose facts say sm_90a) goes into the facts, so that the
/// heuristics choose only what it has (no wgmma on plain sm_90); beside a
/// device of another SM the device's facts stay whole (its tiles, for
/// running them on another GPU). Errors name what was expected.
Result<DeviceInfo> tileDeviceFacts(std::string_view device,
                                   std::string_view chip);

/// Tile configurations, one per M range (1-8, 9-16, 17-64, 65-128,
/// 129-512, 513-inf; neighbours with the same tile merge into one kernel,
/// but a 16-row mma_sync tile keeps 1-8 apart unless the layer is
/// batch-invariant: at most 8 tokens it compiles to the transposed
/// product),
/// for the prepared-layout mma_sync kernels of a layer with padded sizes
/// n x k. Each range picks warp_m (16, 32, 64), then warps along N and the
/// in-block
/// K split so that the resident warps cover the device (more for the
/// memory-bound ranges below the crossover, fewer above it), within the
/// register and shared-memory budgets of the kernel; the pipeline depth
/// shrinks as the per-warp registers grow. A diagnostic when the layer does
/// not fit the family. Batch-invariant layers get one K decomposition for
/// every M (no in-block split, warp_k = block_k = 32, warp_m <= 32), so a
/// token's sums never depend on how many tokens share the batch. 8-bit
/// activations get the sm_90a wgmma tiles (with the 16-row mma_sync tile
/// at M <= 16 where those leave SMs idle, and for fp8 over <= 4-bit weights
/// at M <= 8 elsewhere: f16 MMAs there, Chip::emulatesFp8MmaSync) or,
/// without wgmma, the mma_sync m16n8k32 ones; si4 activations the mma_sync
/// m16n8k64 per-warp tiles.
Result<std::vector<TileConfig>> selectMmaSyncTiles(const WeightSchema &w,
                                                   const InputSchema &in,
                                                   const ComputeOptions &c,
                                                   int64_t n, int64_t k,
                                                   const DeviceInfo &device);

/// What the tiles of a MoE GEMM (humming.moe_gemm) depend on beyond the
/// dense layer's: the routing, the experts, top_k and (indexed) the
/// block_size sorted_ids are padded to.
struct MoeShape {
  GemmType gemm = GemmType::Indexed;
  int64_t experts = 0;
  int64_t topK = 1;
  /// Indexed: the routing's block_size the tiles' block_m must divide
  /// (kMoeFollowingBlockSize when the caller routes each M with its kernel's
  /// block_m).
  int64_t blockSize = 0;
  /// The epilogue multiplies rows by router weights (a down projection).
  bool routerWeights = false;
};

/// The block_size of the humming.moe_gemm of a layer whose routing follows
/// M (Layer's MoeOptions::blockSize = 0), which its tiles are selected
/// with: a multiple of every block_m a MoE tile may have (16, 32, 48, 64,
/// 96, 128). Each call routes with its own block_size, a launch parameter
/// of the kernels: its M's kernel's block_m rounded up to 16, or for
/// MoeLayer the least common multiple of its two GEMMs' (a divisor of
/// this).
constexpr int64_t kMoeFollowingBlockSize = 384;

/// A MoE kernel for one token per expert in a 16-row mma_sync tile takes
/// the transposed product (eight block rows per pass) where each CTA sums
/// at least this much of K: its fixed cost (32 shuffles, one more block
/// reduction) against half the MMAs. Measured on the H200 (2026-12-04,
/// with each pass's coordinates recomputed, bench/NOTES.md "Mixture of
/// experts"): it wins at K = 768 per CTA (Qwen3-30B-A3B down, M = 16 32.1
/// -> 29.9 us) and with K split in a cluster (Qwen3 grouped_contiguous
/// gate_up, 1024 per CTA: 127.2 -> 121.3); shallower CTAs were not
/// measured and keep the other kernel.
constexpr int64_t kMoeTransposedMinDepth = 512;

/// Whether a MoE kernel in a 16-row mma_sync tile (16-bit activations, f32
/// sums, not batch-invariant) takes the transposed product: its range of
/// tokens per expert ends at `mMax` = 1 and each CTA sums `kPerCta` >=
/// kMoeTransposedMinDepth of K. The one rule of the heuristics (that range
/// stays a kernel of its own) and of the kernel
/// (PreparedEmitter::moeTransposed).
inline bool moeTransposes(int64_t mMax, int64_t kPerCta) {
  return mMax == 1 && kPerCta >= kMoeTransposedMinDepth;
}

/// Tiles of a MoE GEMM, one per range of tokens per expert
/// (abi::moeRowsPerExpert): the experts that run at once together are a
/// dense GEMM of that many tokens whose N is the experts' N side by side,
/// so the dense heuristics' tile for that M and width serves them: one
/// expert wide at one token per expert (indexed and grouped_contiguous;
/// measured faster there than top_k experts wide), all E from two on
/// (grouped_masked: always). Then: (1) K splits across CTAs reduce in a
/// cluster (sm_90; a wgmma split divides warp_m / 8) or not at all: the
/// workspace is sized per output tile of a dense grid. (2) TMA as the
/// dense tile has it with 16-bit activations outside a cluster split: with
/// tma = [a] the producers gather the block's rows into the tensor copy's
/// layout (no row gather in sm_90's TMA), with [b] the expert's weights
/// come by bulk copies. (3) Indexed: block_m divides block_size (a block
/// never straddles two experts); the ranges whose tile does not are served
/// by the last one that does. (4) block_n divides the expert's N, else the
/// expert's own dense tiles serve. (5) The warp-specialized 128-row tiles only without
/// router weights (with them their epilogue spills). (6) Indexed, sm_90a,
/// 16-bit activations, <= 4-bit weights: 9-16 / 17-32 / 33-64 / 65+ tokens
/// per expert take the warp-specialized wgmma tile of 32 / 48 / 96 / 128
/// rows (96 with router weights; two CTAs per SM up to 48 rows: a block
/// that holds an expert's rows under the routing's spread). (7) Indexed,
/// fp8 activations on sm_90a (f16 MMAs: Chip::emulatesFp8MmaSync), <= 4-bit
/// weights: 2-16 tokens per expert take the 16-row mma_sync tile.
Result<std::vector<TileConfig>> selectMoeTiles(const WeightSchema &w,
                                               const InputSchema &in,
                                               const ComputeOptions &c,
                                               int64_t n, int64_t k,
                                               const DeviceInfo &device,
                                               const MoeShape &moe);

/// Where the prepared MoE kernels cannot run tile `t` (the rules
/// selectMoeTiles keeps): a diagnostic, or none.
Diag moeTileProblem(const TileConfig &t, const MoeShape &moe,
                    unsigned chipSm);

} // namespace humming

#endif // HUMMING_TARGET_TILEHEURISTICS_H
