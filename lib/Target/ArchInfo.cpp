//===- ArchInfo.cpp - Chips, known devices and what they can run ----------===//

#include "Humming/Target/ArchInfo.h"

#include "Humming/Quant/PreparedLayout.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <sstream>

namespace humming {

namespace {
struct ChipRow {
  unsigned sm;
  const char *suffixes; ///< accepted suffixes besides none, e.g. "af"
  unsigned minPtx;      ///< plain chip
  unsigned minPtxA;     ///< 'a' variant
  unsigned minPtxF;     ///< 'f' variant
  int64_t maxSmemPerBlock;
};

// PTX ISA minimums follow LLVM 22's NVPTX subtarget table, except sm_89's:
// 8.4 instead of 7.8, because LLVM selects the fp8 instructions the sm_89
// kernels use only from there (cvt to e4m3x2 / e5m2x2 from 8.1, mma.sync
// m16n8k32 e4m3 / e5m2 from 8.4; below, it aborts instead of reporting).
// Shared memory per block is the opt-in maximum of each compute capability.
constexpr ChipRow kChips[] = {
    {75, "", 63, 0, 0, 64 * 1024},
    {80, "", 70, 0, 0, 163 * 1024},
    {86, "", 71, 0, 0, 99 * 1024},
    {87, "", 74, 0, 0, 163 * 1024},
    {88, "", 90, 0, 0, 99 * 1024},
    {89, "", 84, 0, 0, 99 * 1024},
    {90, "a", 78, 80, 0, 227 * 1024},
    {100, "af", 86, 86, 88, 227 * 1024},
    {103, "af", 88, 88, 88, 227 * 1024},
    {110, "af", 90, 90, 90, 227 * 1024},
    {120, "af", 87, 87, 88, 99 * 1024},
    {121, "af", 88, 88, 88, 99 * 1024},
};

const ChipRow *findChip(unsigned sm) {
  for (const ChipRow &row : kChips)
    if (row.sm == sm)
      return &row;
  return nullptr;
}

std::string lower(std::string_view s) {
  std::string out;
  for (char c : s)
    if (!std::isspace(static_cast<unsigned char>(c)) && c != '-' && c != '_')
      out.push_back(char(std::tolower(static_cast<unsigned char>(c))));
  return out;
}
} // namespace

std::optional<Chip> Chip::parse(std::string_view name) {
  if (name.substr(0, 3) != "sm_")
    return std::nullopt;
  std::string_view rest = name.substr(3);
  unsigned sm = 0;
  size_t i = 0;
  while (i < rest.size() && std::isdigit(static_cast<unsigned char>(rest[i])) &&
         i < 3)
    sm = sm * 10 + unsigned(rest[i++] - '0');
  if (i == 0)
    return std::nullopt;
  const ChipRow *row = findChip(sm);
  if (!row)
    return std::nullopt;
  Chip chip;
  chip.sm = sm;
  if (i == rest.size())
    return chip;
  if (i + 1 != rest.size())
    return std::nullopt;
  char s = rest[i];
  if (!std::strchr(row->suffixes, s))
    return std::nullopt;
  chip.suffix = s;
  return chip;
}

std::string Chip::str() const {
  std::string s = "sm_" + std::to_string(sm);
  if (suffix)
    s.push_back(suffix);
  return s;
}

unsigned Chip::minPtxVersion() const {
  const ChipRow *row = findChip(sm);
  if (!row)
    return 0;
  if (suffix == 'a')
    return row->minPtxA;
  if (suffix == 'f')
    return row->minPtxF;
  return row->minPtx;
}

bool Chip::supportsMma(MmaKind k) const {
  return mmaGeneration(k).onChip(sm, suffix);
}

bool Chip::readsKMajorEightBit() const {
  for (MmaKind k : {MmaKind::MmaSync, MmaKind::Wgmma, MmaKind::Tcgen05,
                    MmaKind::BlockScaled}) {
    const MmaGeneration &g = mmaGeneration(k);
    if (g.kernels && g.readsKMajorEightBit && g.onChip(sm, suffix))
      return true;
  }
  return false;
}

int64_t Chip::maxSharedMemoryPerBlock() const {
  const ChipRow *row = findChip(sm);
  return row ? row->maxSmemPerBlock : 0;
}

std::string knownChipNames() {
  std::string out;
  for (const ChipRow &row : kChips) {
    std::string base = "sm_" + std::to_string(row.sm);
    out += (out.empty() ? "" : ", ") + base;
    for (const char *s = row.suffixes; *s; ++s)
      out += ", " + base + *s;
  }
  return out;
}

double DeviceInfo::tflopsFor(const ScalarType &t) const {
  if (t == ScalarType::f16())
    return tflopsF16;
  if (t == ScalarType::bf16())
    return tflopsBF16;
  if (t == ScalarType::e4m3() || t == ScalarType::e5m2())
    return tflopsFP8;
  if (t == ScalarType::sint(8))
    return tflopsINT8;
  if (t == ScalarType::sint(4))
    return tflopsINT4;
  if (t == ScalarType::e2m1())
    return tflopsFP4;
  return 0;
}

const std::vector<DeviceInfo> &knownDevices() {
  // Dense tensor-core throughput with fp32 accumulation (datasheets; the
  // GeForce parts run fp16/fp8 with fp32 accumulation at half rate).
  // name, chip, SMs, GB/s, smem KiB/block, L2 MiB, f16, bf16, fp8, int8,
  // int4, fp4.
  static const std::vector<DeviceInfo> devices = {
      {"T4", "sm_75", 40, 320, 64, 4, 65, 0, 0, 130, 260, 0},
      {"A100", "sm_80", 108, 2039, 163, 40, 312, 312, 0, 624, 1248, 0},
      {"A800", "sm_80", 108, 2039, 163, 40, 312, 312, 0, 624, 1248, 0},
      {"A10", "sm_86", 72, 600, 99, 6, 125, 125, 0, 250, 500, 0},
      {"RTX 3090", "sm_86", 82, 936, 99, 6, 71, 71, 0, 284, 568, 0},
      {"Orin", "sm_87", 16, 205, 163, 4, 43, 43, 0, 85, 170, 0},
      {"L4", "sm_89", 58, 300, 99, 48, 121, 121, 242, 242, 242, 0},
      {"L40S", "sm_89", 142, 864, 99, 96, 362, 362, 733, 733, 733, 0},
      {"RTX 4090", "sm_89", 128, 1008, 99, 72, 165, 165, 330, 661, 1321, 0},
      {"H20", "sm_90a", 78, 4000, 227, 60, 148, 148, 296, 296, 0, 0},
      {"H100", "sm_90a", 132, 3350, 227, 50, 989, 989, 1979, 1979, 0, 0},
      {"H800", "sm_90a", 132, 3350, 227, 50, 989, 989, 1979, 1979, 0, 0},
      {"H200", "sm_90a", 132, 4800, 227, 50, 989, 989, 1979, 1979, 0, 0},
      {"B200", "sm_100a", 148, 8000, 227, 126, 2250, 2250, 4500, 4500, 0, 9000},
      // GB200's Blackwell GPU at its 1,200 W configuration.
      {"GB200", "sm_100a", 148, 8000, 227, 126, 2500, 2500, 5000, 5000, 0,
       10000},
      {"B300", "sm_103a", 148, 8000, 227, 126, 2250, 2250, 4500, 0, 0, 13500},
      // Jetson AGX Thor (T5000): 20 SMs as its driver reports them, 32 MiB
      // of L2, LPDDR5X; 2,070 FP4 TFLOPS sparse, the others scaled from it.
      {"Thor", "sm_110a", 20, 273, 227, 32, 259, 259, 517, 517, 0, 1035},
      {"RTX 5090", "sm_120a", 170, 1792, 99, 96, 210, 210, 419, 838, 0, 1676},
      {"RTX PRO 6000", "sm_120a", 188, 1792, 99, 128, 252, 252, 504, 1007, 0,
       2015},
      {"DGX Spark", "sm_121a", 48, 273, 99, 24, 125, 125, 250, 250, 0, 500},
  };
  return devices;
}

const DeviceInfo *lookupDevice(std::string_view name) {
  std::string key = lower(name);
  for (const DeviceInfo &d : knownDevices())
    if (lower(d.name) == key)
      return &d;
  return nullptr;
}

std::string knownDeviceNames() {
  std::string out;
  for (const DeviceInfo &d : knownDevices())
    out += (out.empty() ? "" : ", ") + d.name;
  return out;
}

unsigned minSmForActivation(const ScalarType &t) {
  if (t == ScalarType::f16() || t == ScalarType::sint(8))
    return 75;
  if (t == ScalarType::bf16() || t == ScalarType::sint(4))
    return 80;
  if (t == ScalarType::e4m3() || t == ScalarType::e5m2())
    return 89;
  if (t == ScalarType::e2m1())
    return 120;
  return 0;
}

Diag verifyOnChip(const Chip &chip, const InputSchema &in,
                  const std::vector<TileConfig> &tiles,
                  std::optional<MmaKind> layoutMma,
                  std::optional<Chip> layoutChip) {
  std::ostringstream os;
  unsigned minSm = minSmForActivation(in.type);
  if (chip.sm < minSm) {
    os << "expected sm_" << minSm << " or newer for " << in.type.str()
       << " activations, got " << chip.str();
    return os.str();
  }
  if (layoutChip && !(*layoutChip == chip)) {
    os << "weights prepared for " << layoutChip->str()
       << " cannot run on the target " << chip.str()
       << "; expected a layout for " << chip.str();
    return os.str();
  }
  for (size_t i = 0; i < tiles.size(); ++i) {
    const TileConfig &t = tiles[i];
    os.str("");
    os << "tile_configs[" << i << "]: ";
    const MmaGeneration &gen = mmaGeneration(t.mma);
    if (!chip.supportsMma(t.mma)) {
      os << toString(t.mma) << " is not available on " << chip.str();
      return os.str();
    }
    if (!gen.kernels) {
      os << "expected mma = " << mmaNamesWith(&MmaGeneration::kernels)
         << ": Humming's kernels do not implement " << gen.name
         << " yet, got mma = " << gen.name;
      return os.str();
    }
    // The sm_90a wgmma kernels read the prepared mma_sync layout as it is
    // (a warp's A fragment of the transposed product is two n8 sub-tiles'
    // B fragments), so one layout serves both families on that chip.
    const bool sharedLayout =
        layoutMma && *layoutMma == MmaKind::MmaSync && gen.readsMmaSyncLayout;
    if (layoutMma && *layoutMma != t.mma && !sharedLayout) {
      os << "expected " << toString(*layoutMma)
         << " to match the weights' prepared layout, got "
         << toString(t.mma);
      return os.str();
    }
    if (!chip.hasTma() && (t.tma || t.warpSpecialized || t.multicastA > 1 ||
                           t.multicastB > 1)) {
      os << "expected sm_90 or newer for TMA, warp specialisation or "
            "multicast, got "
         << chip.str();
      return os.str();
    }
    if (!chip.hasCpAsync() && t.cpAsync) {
      os << "expected sm_80 or newer for cp.async, got " << chip.str();
      return os.str();
    }
  }
  return std::nullopt;
}

Diag preparedKernelsSupport(const WeightSchema &w, const InputSchema &in,
                            const ComputeOptions &c, int64_t n, int64_t k,
                            std::optional<Chip> chip, bool *chipRule) {
  if (chipRule)
    *chipRule = false;
  if (Diag d = layout::supports(w, in, n, k))
    return d;
  const bool quantized = in.type.bits < 16;
  if (quantized && c.f16Accumulation)
    return in.type.str() + " activations sum in f32 (s32 for integers); "
                           "expected f16_accumulation = false";
  // f16 accumulation multiplies channel scales into the weights in the
  // activation type.
  if (c.f16Accumulation && w.granularity == Granularity::Channel &&
      !layout::representableIn(w.scaleType, in.type))
    return "f16 accumulation applies channel scales to the weights in " +
           in.type.str() + " and expects scales it represents exactly, got " +
           w.scaleType.str();
  // The batch-invariant si4 tiles take 128 of K per iteration, one group
  // scale each.
  if (c.batchInvariant && layout::computesInFourBits(in.type) &&
      w.hasPerKScales() && w.groupK < 128)
    return "batch-invariant kernels take 128 of K per iteration with " +
           in.type.str() +
           " activations, each with one group scale; expected groups of at "
           "least 128, got " +
           std::to_string(w.groupK);
  if (chip && in.type.bits == 8 &&
      (!chip->supportsMma(MmaKind::Wgmma) ||
       (c.batchInvariant && layout::tileOrder(w, in, /*kMajorReader=*/true) !=
                                layout::TileOrder::KMajor))) {
    Diag d = layout::eightBitMmaSyncSupports(w, in);
    if (chipRule)
      *chipRule = bool(d);
    return d;
  }
  return std::nullopt;
}

ActivationChoice chooseActivation(const WeightSchema &w,
                                  const InputSchema &requested,
                                  const Chip &chip, bool paramIsF16,
                                  int64_t n, int64_t k) {
  std::vector<InputSchema> candidates = {requested};
  InputSchema token{ScalarType::e4m3(), ActScaling::Token, 0};
  if (requested.type == ScalarType::e2m1()) {
    candidates.push_back(token);
  } else if (requested.type == ScalarType::sint(4)) {
    candidates.push_back(token);
    candidates.push_back({ScalarType::sint(8), ActScaling::Token, 0});
  }
  InputSchema sixteen{paramIsF16 ? ScalarType::f16() : ScalarType::bf16(),
                      ActScaling::None, 0};
  candidates.push_back(sixteen);
  // bf16 holds wider exponents (e6m1, e7m0 weights) than f16.
  if (paramIsF16)
    candidates.push_back({ScalarType::bf16(), ActScaling::None, 0});
  ActivationChoice choice;
  for (const InputSchema &in : candidates) {
    Diag d = verifyInputSchema(in);
    if (!d)
      d = verifyCompatibility(w, in, {}, std::nullopt);
    if (!d && chip.sm < minSmForActivation(in.type))
      d = "expected sm_" + std::to_string(minSmForActivation(in.type)) +
          " or newer, got " + chip.str();
    // What the kernels run (not only the chip's MMAs).
    const bool eightBit = layout::computesInEightBits(in.type);
    const bool fourBit = layout::computesInFourBits(in.type);
    if (!d && in.type.bits != 16 && !eightBit && !fourBit)
      d = "no kernel takes " + in.type.str() + " activations yet";
    // si4: mma.sync m16n8k64 s4, whose tensor cores end with sm_89 (sm_90a
    // runs it emulated: the 8-bit candidates win there).
    if (!d && fourBit && (chip.sm < 80 || chip.sm >= 90))
      d = "int4 tensor cores are sm_80-sm_89 only, got " + chip.str();
    if (!d && fourBit && n > 0 && k > 0)
      d = layout::supports(w, in, n + w.padN, k + w.padK);
    // The k32 kernels: wgmma on sm_90a, mma.sync m16n8k32 from sm_80.
    if (!d && eightBit && chip.sm < 80)
      d = "the kernels of 8-bit activations need sm_80 or newer "
          "(m16n8k32), got " +
          chip.str();
    if (!d && eightBit && !chip.supportsMma(MmaKind::Wgmma))
      d = layout::eightBitMmaSyncSupports(w, in);
    if (!d && eightBit && n > 0 && k > 0)
      d = layout::supports(w, in, n + w.padN, k + w.padK);
    if (!d) {
      choice.input = in;
      return choice;
    }
    if (!choice.fallbackReason.empty())
      choice.fallbackReason += "; ";
    choice.fallbackReason += in.type.str() + " activations: " + *d;
  }
  // Unreachable for valid weight schemas: bf16 activations accept all.
  choice.input = candidates.back();
  return choice;
}

} // namespace humming
