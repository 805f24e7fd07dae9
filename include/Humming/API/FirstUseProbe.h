//===- FirstUseProbe.h - Kernels checked on first use -----------*- C++ -*-===//
//
// Humming emits kernels for chips no machine of the project has run them on
// (the Blackwell families, Ampere, Ada: docs/Blackwell.md). On such a chip
// Layer::transform() checks its kernels on first use: it runs each M-range
// kernel on random activations beside a reference kernel of a simpler family
// on the same GPU and keeps its kernels only where they agree; otherwise it
// takes the simpler family, says so on stderr and in
// TransformStats::probe. What is compared with what, and what is kept:
//
//   - 16-bit activations, dense: the reference is the canonical-layout
//     kernel (a different weight layout and kernel altogether). On a
//     disagreement, an arch- or family-specific chip (sm_90a, sm_100a,
//     sm_120f) also runs the prepared mma_sync kernels of its plain target
//     (sm_90, sm_100, sm_120: none of wgmma, tcgen05 or block-scaled MMA);
//     those are kept when they agree with the canonical kernel, the
//     layer's own when only those two agree (the canonical kernel is then
//     the one that failed), and the transform fails when no two agree. A
//     plain chip falls back to the canonical kernel.
//   - 8- and 4-bit activations and MoE layers (no canonical kernel): the
//     reference, and the fallback, is the plain target's prepared mma_sync
//     family; a plain chip has nothing to compare with and is not probed.
//     A MoE layer runs over a balanced routing of its own kind (each
//     token's top_k experts consecutive; grouped rows split evenly).
//
// A decision is made once per machine for the same kernels: it is kept in
// the process and in the kernel cache's directory.
//
// This header holds the decisions as functions without a GPU, so that they
// are unit-tested; Layer::transform() runs them (LayerProbe.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef HUMMING_API_FIRSTUSEPROBE_H
#define HUMMING_API_FIRSTUSEPROBE_H
#include "Humming/Quant/Result.h"
#include "Humming/Quant/Schema.h"
#include "Humming/Target/ArchInfo.h"
#include "Humming/Target/KernelABI.h"
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace humming {

/// LayerTarget::probe: whether transform() checks its kernels against a
/// simpler family on the GPU before it keeps them. Auto: on chips no
/// hardware run of Humming's GPU suite is recorded for
/// (Chip::ranOnHardware). The environment variable HUMMING_PROBE
/// (auto, always, never; mismatch: always, with the layer's own kernels
/// taken to disagree, which tests the fallback on a GPU where they agree)
/// replaces this field for every layer when set.
enum class FirstUseProbe : uint8_t { Auto, Always, Never };

namespace probe {

/// Whether a transform probes its kernels.
struct Policy {
  bool run = false;
  /// HUMMING_PROBE=mismatch: the layer's own output is zeroed before it is
  /// compared, so the comparison fails and the fallback runs for real.
  bool forceMismatch = false;
  /// Why (for TransformStats::probe where it does not run).
  std::string why;
};
/// The policy for `asked` on `chip`, `env` the value of HUMMING_PROBE (null
/// or empty: unset). An unknown value is an error that lists the known
/// ones (checkEnvironment: transform() refuses it before it compiles, also
/// compile-only).
Result<Policy> policy(FirstUseProbe asked, const char *env, const Chip &chip);
Status checkEnvironment(const char *env);

/// The kernels a layer's kernels are compared with.
struct Reference {
  /// The canonical-layout kernel on the same chip; else the prepared
  /// kernels of `chip`.
  bool canonical = false;
  std::string chip;
  /// "the canonical kernel" or "sm_90's mma_sync kernels".
  std::string describe() const;
};
/// What a layer over `in` activations on `chip` (its weights prepared or
/// not; a MoE layer or not) is compared with; an error saying why there is
/// nothing to compare it with.
Result<Reference> reference(const Chip &chip, bool prepared, bool moe,
                            const InputSchema &in);
/// The prepared mma_sync kernels of the chip's plain target (sm_90 for
/// sm_90a): the second opinion after a disagreement with the canonical
/// kernel; none for a plain chip.
std::optional<Reference> plainTarget(const Chip &chip);

/// The M each probe runs at: one per kernel, its smallest M plus five
/// (partial tiles) within its range; ascending, without repeats. A MoE
/// kernel's range counts rows per expert (abi::moeRowsPerExpert): its M is
/// the activation rows that give that many, floor(r E / top_k) tokens
/// (indexed) or r E rows (grouped).
std::vector<int64_t> rows(const std::vector<abi::KernelLaunch> &kernels);

/// The most bytes of activations and outputs one probe M may take (larger
/// ones are left out, and the probe says which).
constexpr int64_t kMaxBytes = int64_t(1) << 29;

/// Two outputs of one probe compared.
struct Agreement {
  /// ||got - want|| / ||want|| over the finite pairs (0 for two zero
  /// outputs).
  double relError = 0;
  /// Elements finite in one output and not in the other.
  int64_t nonFinite = 0;
  bool agrees = false;
};
/// `got` against `want` (same size), within `tolerance`.
Agreement compare(const std::vector<double> &got,
                  const std::vector<double> &want, double tolerance);
/// The relative error two correct kernels of `output` values may differ by
/// (their sums in another order, rounded to the output type): 1e-2 for
/// f16, 3e-2 for bf16 or f16 sums.
double tolerance(const ScalarType &output, bool f16Accumulation);

/// What a probe decided: keep the layer's kernels, take the plain
/// target's after a disagreement with the canonical kernel, or take the
/// reference's; and the text TransformStats::probe gives.
enum class Kept { Own, Plain, Reference };
struct Decision {
  Kept kept = Kept::Own;
  std::string text;
  /// False where no comparison could be made (the text says why): the
  /// layer keeps its kernels and nothing is recorded.
  bool probed = true;
};
/// Decisions outlive the process in the kernel cache's directory `dir`
/// ("": a cache in memory, nothing is kept): probe-<key>.txt (`key` a
/// digest in hex) holds "own", "plain" or "reference", then the text. A
/// file that does not read back as that is no decision (the probe runs
/// again and rewrites it); one is written to a temporary file and renamed,
/// so readers never see half of one, and a directory that cannot be
/// written keeps nothing.
std::optional<Decision> readDecision(const std::string &dir,
                                     const std::string &key);
void writeDecision(const std::string &dir, const std::string &key,
                   const Decision &d);

} // namespace probe
} // namespace humming

#endif // HUMMING_API_FIRSTUSEPROBE_H
