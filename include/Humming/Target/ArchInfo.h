//===- ArchInfo.h - Chips, known devices and what they can run --*- C++ -*-===//
//
// The capability table of NVIDIA chips (sm_75 ... sm_121a), the facts of known
// devices that the tile heuristics use, and the target-dependent part of the
// support matrix. No MLIR dependency: the runtime and unit tests use it too.
//
//===----------------------------------------------------------------------===//

#ifndef HUMMING_TARGET_ARCHINFO_H
#define HUMMING_TARGET_ARCHINFO_H

#include "Humming/Quant/MmaGeneration.h"
#include "Humming/Quant/Schema.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace humming {

/// A compilation target such as sm_90a: compute capability 9.0 with the
/// arch-specific ('a') or family ('f') feature set.
struct Chip {
  unsigned sm = 0; ///< 75, 80, 86, 87, 88, 89, 90, 100, 103, 110, 120, 121
  char suffix = 0; ///< 0, 'a' or 'f'

  /// Parses "sm_90a"; nullopt for chips ptxas/LLVM do not know.
  static std::optional<Chip> parse(std::string_view name);
  std::string str() const;
  unsigned major() const { return sm / 10; }
  /// Lowest PTX ISA version (x10, e.g. 78 = 7.8) that can target this chip.
  unsigned minPtxVersion() const;
  /// Whether tensor-core family `k` exists on this chip
  /// (MmaGeneration::onChip).
  bool supportsMma(MmaKind k) const;
  /// Whether the chip's prepared kernels read 8-bit weights that the
  /// activation MMA takes as they are K-major from shared memory
  /// (MmaGeneration::readsKMajorEightBit: wgmma on sm_90a), which decides
  /// their prepared tile order (layout::tileOrder).
  bool readsKMajorEightBit() const;
  /// TMA, mbarrier transaction counts, clusters (sm_90+).
  bool hasTma() const { return sm >= 90; }
  /// cp.async (sm_80+).
  bool hasCpAsync() const { return sm >= 80; }
  /// ptxas expands an fp8 mma.sync (m16n8k32 e4m3 / e5m2) into two f16
  /// HMMAs with unpacks of both operands on sm_90, whose tensor cores take
  /// fp8 through wgmma only (SASS of the MoE W4A8 decode kernel,
  /// bench/NOTES.md); sm_89 and sm_120 run it natively (QMMA). The
  /// mma_sync kernels of 8-bit float activations then take the f16 MMA
  /// themselves (KernelShape::f16MmaForFp8). (sm_100 and later: unmeasured,
  /// left on the fp8 instruction.)
  bool emulatesFp8MmaSync() const { return sm == 90; }
  /// The sm_120 family's arch- and family-specific targets: plain fp8
  /// mma.sync runs at half the tensor cores' fp8 rate there (reported by
  /// others: triton-lang/triton #11320, ~1.55x for the block-scaled form),
  /// so the mma_sync kernels of 8-bit float activations issue
  /// kind::mxf8f6f4 block-scaled MMAs with unit ue8m0 scales instead
  /// (KernelShape::blockScaledFp8; the same sums): the chips of the
  /// block-scaled MMA generation (MmaGeneration). Not measured here: no
  /// sm_120 GPU can be lent (docs/Blackwell.md).
  bool blockScaledFp8MmaSync() const {
    return supportsMma(MmaKind::BlockScaled);
  }
  /// Largest dynamic shared memory per block, in bytes.
  int64_t maxSharedMemoryPerBlock() const;
  /// Whether Humming's GPU suite has passed on a GPU of this SM: only
  /// sm_90 (H100, H200; bench/results). Elsewhere Layer::transform()
  /// checks its kernels on first use (FirstUseProbe.h). Add an SM here
  /// when the suite has run on it.
  bool ranOnHardware() const { return sm == 90; }
  /// The chip's plain target (sm_90 of sm_90a, sm_120 of sm_120f): the
  /// same SM without arch- or family-specific instructions.
  Chip plain() const { return Chip{sm, 0}; }

  friend bool operator==(const Chip &a, const Chip &b) {
    return a.sm == b.sm && a.suffix == b.suffix;
  }
};

/// Highest PTX ISA version the toolchain (LLVM 22, ptxas 13) emits.
constexpr unsigned kMaxPtxVersion = 90;

/// The list of every chip name Chip::parse accepts, for diagnostics.
std::string knownChipNames();

/// Facts about a device that the heuristics use. Throughputs are dense
/// tensor-core TFLOP/s (TOP/s for integers) with fp32 accumulation, from the
/// vendors' datasheets; 0 means "not supported".
struct DeviceInfo {
  std::string name;  ///< "H200"
  std::string chip;  ///< "sm_90a"
  int64_t smCount = 0;
  double memoryBandwidthGBs = 0; ///< GB/s
  int64_t smemPerSmKB = 0;       ///< shared memory per SM usable by one block, KiB
  int64_t l2MB = 0;              ///< L2 size, MiB
  double tflopsF16 = 0, tflopsBF16 = 0, tflopsFP8 = 0, tflopsINT8 = 0,
         tflopsINT4 = 0, tflopsFP4 = 0;

  /// Tensor throughput for activations of type `t` (0: unsupported).
  double tflopsFor(const ScalarType &t) const;
};

/// Every known device.
const std::vector<DeviceInfo> &knownDevices();
/// Case-insensitive lookup ("h200", "RTX 5090", "rtx5090").
const DeviceInfo *lookupDevice(std::string_view name);
std::string knownDeviceNames();

/// Minimum compute capability for activations of type `t` (fp16/int8: 75;
/// bf16/int4: 80; fp8: 89; fp4: 120).
unsigned minSmForActivation(const ScalarType &t);

/// Target-dependent rules: activation type vs SM, each tile config's MMA
/// family and TMA/warp-specialisation/multicast features vs the chip, a
/// prepared layout vs the chip and the tiles.
Diag verifyOnChip(const Chip &chip, const InputSchema &in,
                  const std::vector<TileConfig> &tiles,
                  std::optional<MmaKind> layoutMma,
                  std::optional<Chip> layoutChip);

/// What the prepared-weight kernels need of a layer beyond its schemas
/// (what the GEMM verifiers and humming-legalize-schema ask before a layer
/// runs over prepared weights): layout::supports for the padded `n` x `k`;
/// with 8- or 4-bit activations f32 / s32 sums (no f16 accumulation); f16
/// accumulation's channel scales exact in the activation type; batch-
/// invariant si4 layers with groups of at least 128; and on `chip`, where
/// it has no wgmma (or for batch-invariant layers whose weights do not lie
/// K-major, which take the mma_sync kernels there too), the mma_sync
/// kernels' 8-bit rules. `chipRule` (optional) says whether a refusal
/// came from that last, chip-dependent rule.
Diag preparedKernelsSupport(const WeightSchema &w, const InputSchema &in,
                            const ComputeOptions &c, int64_t n, int64_t k,
                            std::optional<Chip> chip,
                            bool *chipRule = nullptr);

/// The activations a layer runs with on a chip, and why.
struct ActivationChoice {
  InputSchema input;
  /// Empty when the requested activations run as asked; otherwise why each
  /// rejected candidate was rejected ("f4E2M1FN activations: expected sm_120
  /// or newer ...; f8E4M3FN activations: ...").
  std::string fallbackReason;
};

/// Picks the activations for weights `w` on `chip`: the requested ones when
/// legal and a kernel runs them, else the original's fallbacks (fp4 ->
/// e4m3; int4 -> e4m3 -> int8), else the model's 16-bit type (`paramIsF16`
/// ? f16 : bf16), else bf16, which every valid weight schema accepts on
/// every chip. 8-bit activations run in the k32 kernels over prepared
/// weights (wgmma on sm_90a, mma.sync m16n8k32 from sm_80 for si8 and
/// sm_89 for fp8), si4 ones in the mma.sync m16n8k64 kernels where int4
/// tensor cores are (sm_80-sm_89) — layout::supports for the layer's
/// padded `n` x `k`, checked where they are given; e2m1 activations have
/// no kernel yet.
ActivationChoice chooseActivation(const WeightSchema &w,
                                  const InputSchema &requested,
                                  const Chip &chip, bool paramIsF16,
                                  int64_t n = 0, int64_t k = 0);

} // namespace humming

#endif // HUMMING_TARGET_ARCHINFO_H
