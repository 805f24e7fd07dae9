//===- MmaGeneration.h - One description per tensor-core MMA generation ---===//
//
// Each MMA generation a tile_config names (mma = mma_sync | wgmma | tcgen05 |
// block_scaled) is described once here: which chips have it, whether
// Humming's prepared kernels implement it, which tile options its kernels
// take, and its shape rules. The op verifiers (verifyTileConfig,
// verifyTileForProblem), the chip checks (Chip::supportsMma, verifyOnChip),
// the lowering (preparedTile) and the tile heuristics ask this table instead
// of comparing MmaKind values, so that a generation gains a kernel or an
// option in one place. No MLIR dependency; in lib/Quant because the
// chip-independent verifiers live there (lib/Target builds on it).
//
//===----------------------------------------------------------------------===//

#ifndef HUMMING_QUANT_MMAGENERATION_H
#define HUMMING_QUANT_MMAGENERATION_H

#include "Humming/Quant/Result.h"
#include "Humming/Quant/Schema.h"

#include <cstdint>
#include <string>

namespace humming {

struct MmaGeneration {
  MmaKind kind;
  /// tile_config's spelling ("mma_sync").
  const char *name;
  /// The PTX instruction its kernels issue.
  const char *instruction;
  /// Whether Humming's prepared kernels implement it (tcgen05 and
  /// block-scaled MMA are described for the verifiers, not yet lowered).
  bool kernels;
  /// The transposed product: the warp's tokens are the instruction's n and
  /// a warpgroup's 64 weight rows its m (wgmma), so warp_n is not bounded
  /// by the activation width.
  bool tokensOnN;
  /// A producer warpgroup feeding consumer warpgroups through mbarriers
  /// (warp_specialized; with it TMA fills, multicast_a and the producer's
  /// l2_prefetch).
  bool producerWarpgroup;
  /// wgmma_in_flight = 1 (warp-specialized only).
  bool inFlight;
  /// scale_after_mma: group scales on each iteration's sums.
  bool scaleAfterMma;
  /// share_activations: warps along N share the activation copies.
  bool shareActivations;
  /// workspace_split: split_k sums through the global workspace although
  /// the generation's default is a cluster.
  bool workspaceSplit;
  /// split_k reduces in a thread block cluster by default.
  bool clusterSplitByDefault;
  /// Per-group activation scales of 8-bit activations (each iteration's
  /// sums times the token's group scale).
  bool groupInputScales;
  /// 4-bit (si4) activations: m16n8k64 s4.
  bool s4Activations;
  /// Each warp's K per stage may be one MMA k-step (256 / activation
  /// bits) besides the 512 / and 1024 / bits of the others.
  bool oneStepWarpK;
  /// 8-bit weights the activation MMA takes as they are lie K-major in
  /// shared memory (layout::TileOrder::KMajor) where the chip has this
  /// generation, and only it reads them.
  bool readsKMajorEightBit;
  /// Reads the weights of a layout prepared for `mma_sync` as they are (a
  /// warp's A fragment of the transposed product is two n8 sub-tiles' B
  /// fragments), so one layout serves both on the chip.
  bool readsMmaSyncLayout;

  /// Whether chip sm_<sm><suffix> (suffix 0, 'a' or 'f') has it.
  bool onChip(unsigned sm, char suffix) const;
  /// Rules of a tile config with this generation that do not depend on
  /// the layer (verifyTileConfig asks them after the generic ones).
  Diag tileProblem(const TileConfig &t) const;
  /// The activation types it takes beyond the layer's own rules
  /// (verifyTileForProblem): block-scaled MMA takes fp8 and fp4 only.
  Diag activationProblem(const InputSchema &in) const;
  /// Rules of its prepared kernels given the layer's operand types: f16
  /// accumulation, the instruction's K step, the sums a thread can hold
  /// (the lowering asks them; messages start with "expected").
  Diag kernelProblem(const TileConfig &t, const WeightSchema &w,
                     const InputSchema &in, bool f16Accumulation) const;
};

/// The description of `k`.
const MmaGeneration &mmaGeneration(MmaKind k);

/// The generations with `capability`, as "mma = a or b" names for
/// diagnostics ("mma_sync", "mma_sync or wgmma"); "none" if none has it.
std::string mmaNamesWith(bool MmaGeneration::*capability);

} // namespace humming

#endif // HUMMING_QUANT_MMAGENERATION_H
