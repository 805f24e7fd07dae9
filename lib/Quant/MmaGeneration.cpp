//===- MmaGeneration.cpp - One description per tensor-core MMA generation -===//

#include "Humming/Quant/MmaGeneration.h"

#include "Humming/Quant/PreparedLayout.h"

#include <array>

namespace humming {
namespace {

// mma.sync m16n8k16 (and k32 / k64 for 8- / 4-bit activations): warps of
// 16 x 64 weight tiles, cp.async pipelines, no producer warpgroup.
Diag mmaSyncTile(const TileConfig &) { return std::nullopt; }

Diag mmaSyncKernel(const TileConfig &t, const WeightSchema &w,
                   const InputSchema &in, bool f16Accumulation) {
  const unsigned bits = in.type.bits;
  // 4-bit activations: per-warp copies (their k64 tiles of 32-byte rows;
  // the cooperative slots and the shared activation copies hold 8- and
  // 16-bit rows only).
  if (bits == 4) {
    if (t.blockM != t.warpM || t.blockCopies || t.shareActivations)
      return std::string("expected per-warp copies with si4 activations "
                         "(block_m = warp_m, no block_copies, no "
                         "share_activations)");
    if (w.hasPerKScales() && t.warpK > w.groupK)
      return concat("expected warp_k <= the group size (", w.groupK,
                    ") with si4 activations (each iteration's sums take one "
                    "group scale), got ",
                    t.warpK);
  }
  // 8- and 4-bit activations: m16n8k32 / k64 steps over two / four
  // k-tiles, each iteration's sums folded into the running f32 ones.
  if (bits == 4 || bits == 8) {
    // (The op verifier has checked warp_k: whole k32 / k64 steps.)
    const std::string type = in.type.str();
    if (f16Accumulation)
      return concat("expected f16_accumulation = false with ", type,
                    " activations (their MMAs sum in f32 or s32)");
    if (t.warpM > 32)
      return concat("expected warp_m of 16 or 32 with ", type,
                    " activations (each iteration's sums are a second set "
                    "of accumulators), got ",
                    t.warpM);
    // (Measured on the H200, 2026-12-02: with 8-bit rows the shared copies
    // fault — an illegal instruction — where the per-warp ones run; the
    // heuristics never choose them for 8-bit activations.)
    if (bits == 8 && t.shareActivations)
      return concat("expected share_activations = false with ", type,
                    " activations (the shared activation copies hold 16-bit "
                    "rows; with 8-bit ones the kernel faults)");
    if (w.hasPerKScales() && !t.scaleAfterMma)
      return concat("expected scale_after_mma = true with ", type,
                    " activations and group scales (the group scales "
                    "multiply each iteration's sums per output column)");
    // (LLVM selects the fp8 mma.sync from PTX ISA 8.4 only, the minimum of
    // every chip that has one; sm_90 has none and its kernels take f16
    // MMAs instead: KernelShape::f16MmaForFp8.)
  }
  if (t.warpN != 64)
    return concat("expected warp_n = 64 (one 16x64 weight tile per warp), "
                  "got ",
                  t.warpN);
  if (t.warpM % 16 != 0 || t.warpM > 64)
    return concat("expected warp_m of 16, 32, 48 or 64, got ", t.warpM);
  return std::nullopt;
}

// wgmma.mma_async m64nNk16 / k32 (sm_90a): the transposed product, tokens
// on the instruction's N (8..256), a warpgroup's 64 weight rows on its M.
Diag wgmmaTile(const TileConfig &t) {
  if (t.warpM > 256)
    return concat("expected warp_m <= 256 with wgmma (it is the "
                  "instruction's n), got ",
                  t.warpM);
  if (t.blockN < 4 * t.warpN)
    return concat("expected block_n >= 4 * warp_n with wgmma (a warpgroup "
                  "spans four warps), got block_n = ",
                  t.blockN, ", warp_n = ", t.warpN);
  if (t.warpSpecialized && t.stages < 3)
    return concat("expected stages >= 3 with warp specialisation and wgmma, "
                  "got ",
                  t.stages);
  return std::nullopt;
}

Diag wgmmaKernel(const TileConfig &t, const WeightSchema &w,
                 const InputSchema &in, bool f16Accumulation) {
  // (The op verifier has checked that the chip has wgmma.)
  if (f16Accumulation)
    return std::string("the wgmma kernels accumulate in f32; expected "
                       "f16_accumulation = false");
  if (t.blockK != t.warpK)
    return concat("expected block_k = warp_k with wgmma (no K split inside "
                  "the block), got block_k = ",
                  t.blockK, ", warp_k = ", t.warpK);
  if (t.stages < 3)
    return concat("expected stages >= 3 with wgmma (a slot is refilled two "
                  "iterations after it is read: its wgmmas run on), got ",
                  t.stages);
  // split_k: the CTAs of one thread block cluster (at most 8, the portable
  // size) share K; CTA r adds and stores tokens 8 jj ..+8 for its share of
  // the warp_m / 8 rows of eight. With workspace_split the last CTA to
  // arrive adds every row (any split_k).
  if (t.splitsInCluster() && t.splitK != 2 && t.splitK != 4 && t.splitK != 8)
    return concat("expected split_k of 1, 2, 4 or 8 with wgmma (the CTAs of "
                  "one thread block cluster), got ",
                  t.splitK);
  if (t.splitsInCluster() && (t.warpM / 8) % t.splitK != 0)
    return concat("expected split_k to divide warp_m / 8 with wgmma (each "
                  "CTA of the cluster stores a share of the rows of eight "
                  "tokens), got warp_m = ",
                  t.warpM, ", split_k = ", t.splitK);
  // A consumer thread holds warp_m / 2 sums per n-tile, per set. A
  // warp-specialized block's consumers take the producer's registers
  // (setmaxnreg, up to 224 with two consumer warpgroups: the lowering's
  // register split check), which holds 192 sums and a wgmma's operands:
  // the 192-token fp8 tile's two sets of 96; other kernels keep their
  // launch's share, 128 sums at most.
  const bool twoSets = layout::wgmmaPromotes(w, in);
  const int64_t maxSums = t.warpSpecialized ? 192 : 128;
  if (int64_t sums = t.warpM / 2 * (t.warpN / 16) * (twoSets ? 2 : 1);
      sums > maxSums)
    return concat("warp_m = ", t.warpM, ", warp_n = ", t.warpN, " keep ", sums,
                  " f32 sums per thread",
                  twoSets ? " (two sets with 8-bit activations)" : "",
                  "; expected at most ", maxSums,
                  t.warpSpecialized ? " with" : " without",
                  " warp_specialized (warp_m x warp_n <= ",
                  maxSums * 32 / (twoSets ? 2 : 1), ")");
  return std::nullopt;
}

// tcgen05.mma (sm_100 family) and block-scaled mma.sync (sm_120 family):
// described for the verifiers; no kernel yet (docs/Blackwell.md).
Diag noTileRules(const TileConfig &) { return std::nullopt; }

Diag noKernels(const TileConfig &t, const WeightSchema &, const InputSchema &,
               bool) {
  return concat("expected mma = ", mmaNamesWith(&MmaGeneration::kernels),
                ": Humming's kernels do not implement ", toString(t.mma),
                " yet, got mma = ", toString(t.mma));
}

Diag anyActivations(const InputSchema &) { return std::nullopt; }

Diag blockScaledActivations(const InputSchema &in) {
  if (in.type == ScalarType::e4m3() || in.type == ScalarType::e5m2() ||
      in.type == ScalarType::e2m1())
    return std::nullopt;
  return concat("expected fp8 or fp4 activations with block_scaled MMA, got ",
                in.type.str());
}

struct Entry {
  MmaGeneration generation;
  bool (*onChip)(unsigned sm, char suffix);
  Diag (*activations)(const InputSchema &);
  Diag (*tile)(const TileConfig &);
  Diag (*kernel)(const TileConfig &, const WeightSchema &, const InputSchema &,
                 bool);
};

Entry mmaSyncEntry() {
  Entry e{};
  e.activations = anyActivations;
  MmaGeneration &g = e.generation;
  g.kind = MmaKind::MmaSync;
  g.name = "mma_sync";
  g.instruction = "mma.sync";
  g.kernels = true;
  g.scaleAfterMma = true;
  g.shareActivations = true;
  g.s4Activations = true;
  g.oneStepWarpK = true;
  g.readsMmaSyncLayout = true;
  e.onChip = [](unsigned sm, char) { return sm >= 75; };
  e.tile = mmaSyncTile;
  e.kernel = mmaSyncKernel;
  return e;
}

Entry wgmmaEntry() {
  Entry e{};
  e.activations = anyActivations;
  MmaGeneration &g = e.generation;
  g.kind = MmaKind::Wgmma;
  g.name = "wgmma";
  g.instruction = "wgmma.mma_async";
  g.kernels = true;
  g.tokensOnN = true;
  g.producerWarpgroup = true;
  g.inFlight = true;
  g.workspaceSplit = true;
  g.clusterSplitByDefault = true;
  g.groupInputScales = true;
  g.readsKMajorEightBit = true;
  g.readsMmaSyncLayout = true;
  e.onChip = [](unsigned sm, char suffix) { return sm == 90 && suffix == 'a'; };
  e.tile = wgmmaTile;
  e.kernel = wgmmaKernel;
  return e;
}

Entry tcgen05Entry() {
  Entry e{};
  e.activations = anyActivations;
  MmaGeneration &g = e.generation;
  g.kind = MmaKind::Tcgen05;
  g.name = "tcgen05";
  g.instruction = "tcgen05.mma";
  // (Weights on the instruction's M side, tokens on N, as the original's
  // UMMA kernels put them.)
  g.tokensOnN = true;
  e.onChip = [](unsigned sm, char suffix) {
    return (sm == 100 || sm == 103 || sm == 110) && suffix != 0;
  };
  e.tile = noTileRules;
  e.kernel = noKernels;
  return e;
}

Entry blockScaledEntry() {
  Entry e{};
  e.activations = anyActivations;
  MmaGeneration &g = e.generation;
  g.kind = MmaKind::BlockScaled;
  g.name = "block_scaled";
  g.instruction = "mma.sync.block_scale";
  e.onChip = [](unsigned sm, char suffix) {
    return (sm == 120 || sm == 121) && suffix != 0;
  };
  e.activations = blockScaledActivations;
  e.tile = noTileRules;
  e.kernel = noKernels;
  return e;
}

// Oldest first: the order of mmaNamesWith's lists.
const std::array<Entry, 4> &entries() {
  static const std::array<Entry, 4> table = {
      mmaSyncEntry(), wgmmaEntry(), tcgen05Entry(), blockScaledEntry()};
  return table;
}

const Entry &entryOf(MmaKind k) {
  for (const Entry &e : entries())
    if (e.generation.kind == k)
      return e;
  return entries()[0]; // (every MmaKind has an entry: MmaGenerationTest)
}

} // namespace

const MmaGeneration &mmaGeneration(MmaKind k) { return entryOf(k).generation; }

bool MmaGeneration::onChip(unsigned sm, char suffix) const {
  return entryOf(kind).onChip(sm, suffix);
}

Diag MmaGeneration::tileProblem(const TileConfig &t) const {
  return entryOf(kind).tile(t);
}

Diag MmaGeneration::activationProblem(const InputSchema &in) const {
  return entryOf(kind).activations(in);
}

Diag MmaGeneration::kernelProblem(const TileConfig &t, const WeightSchema &w,
                                  const InputSchema &in,
                                  bool f16Accumulation) const {
  return entryOf(kind).kernel(t, w, in, f16Accumulation);
}

std::string mmaNamesWith(bool MmaGeneration::*capability) {
  std::string names;
  const auto &table = entries();
  size_t count = 0, seen = 0;
  for (const Entry &e : table)
    count += e.generation.*capability;
  for (const Entry &e : table) {
    if (!(e.generation.*capability))
      continue;
    ++seen;
    if (seen > 1)
      names += seen == count ? " or " : ", ";
    names += e.generation.name;
  }
  return names.empty() ? "none" : names;
}

} // namespace humming
