//===- TileHeuristics.cpp - Tile configurations from device facts ---------===//

#include "Humming/Target/TileHeuristics.h"

#include "Humming/Quant/PreparedLayout.h"

#include <algorithm>
#include <cmath>

namespace humming {

double computeMemoryCrossover(const WeightSchema &w, const InputSchema &in,
                              const DeviceInfo &device) {
  double bytesPerWeight = w.type.bits / 8.0;
  double flops = device.tflopsFor(in.type) * 1e12;
  double bandwidth = device.memoryBandwidthGBs * 1e9;
  if (flops <= 0 || bandwidth <= 0)
    return 0;
  return bytesPerWeight * flops / (2.0 * bandwidth);
}

const DeviceInfo *representativeDevice(const Chip &chip) {
  const char *name = nullptr;
  switch (chip.sm) {
  case 75: name = "T4"; break;
  case 80: name = "A100"; break;
  case 86: name = "A10"; break;
  case 87: name = "Orin"; break;
  case 89: name = "L40S"; break;
  case 90: name = "H100"; break;
  case 100: case 103: name = "B200"; break;
  case 120: name = "RTX 5090"; break;
  case 121: name = "DGX Spark"; break;
  default: break;
  }
  return name ? lookupDevice(name) : nullptr;
}

namespace {
/// Largest power of two <= v (v >= 1).
int64_t floorPow2(int64_t v) {
  int64_t p = 1;
  while (p * 2 <= v)
    p *= 2;
  return p;
}
} // namespace

Result<std::vector<TileConfig>> selectMmaSyncTiles(const WeightSchema &w,
                                                   const InputSchema &in,
                                                   const ComputeOptions &c,
                                                   int64_t n, int64_t k,
                                                   const DeviceInfo &device) {
  if (Diag d = layout::supports(w, in, n, k))
    return Error{*d};
  if (device.smCount <= 0)
    return Error{concat("humming-select-tiles: expected the device's SM count, "
                        "got ", device.smCount)};
  const double crossover = computeMemoryCrossover(w, in, device);
  const int64_t columnTiles = n / layout::kTileN;
  const unsigned bits = w.type.bits;
  struct Range {
    int64_t lo, hi, warpM;
  };
  const Range ranges[] = {{1, 16, 16}, {17, 32, 32}, {33, 64, 64}, {65, 0, 64}};
  std::vector<TileConfig> out;
  for (Range r : ranges) {
    if (c.batchInvariant)
      r.warpM = std::min<int64_t>(r.warpM, 32);
    TileConfig t;
    t.mMin = r.lo;
    t.mMax = r.hi;
    t.cpAsync = false; // the mma_sync kernels pipeline through registers
    t.mma = MmaKind::MmaSync;
    const int64_t mt = r.warpM / 16;
    // Tokens the range stands for: its top, or 256 for the open range.
    const int64_t mRep = r.hi ? r.hi : 256;
    const int64_t mTiles = ceilDiv(mRep, r.warpM);
    const bool memoryBound = double(mRep) <= crossover;
    // Warps per SM that keep enough loads in flight (memory-bound) or the
    // tensor pipes fed (compute-bound).
    const int64_t wantWarps = device.smCount * (memoryBound ? 16 : 8);
    // Warps along N: one while the grid alone cannot fill the device, two
    // once there are several blocks per SM (fewer, larger blocks reuse A).
    int64_t warpsN = 1;
    if (n % (2 * layout::kTileN) == 0 &&
        (mt == 4 || columnTiles * mTiles >= 4 * device.smCount))
      warpsN = 2;
    // k-tiles per warp and iteration: two when K allows it.
    int64_t kTiles = mt < 4 && k % (2 * layout::kTileK) == 0 ? 2 : 1;
    if (c.batchInvariant) {
      if (k % (2 * layout::kTileK) != 0)
        return Error{concat("humming-select-tiles: batch-invariant kernels "
                            "take K in steps of 32; expected the padded K to "
                            "be a multiple of 32, got ", k)};
      kTiles = 2;
    }
    // In-block K split: as many warp groups as the device needs, bounded
    // by registers (warp_m = 64 holds 128 accumulators per thread: at most
    // 256 threads), shared memory for the partial sums (48 KiB static) and
    // at least two iterations per warp group.
    const int64_t blocks = (columnTiles / warpsN) * mTiles;
    int64_t kSplit = floorPow2(std::max<int64_t>(1, wantWarps / (blocks * warpsN)));
    const int64_t maxThreads = mt == 4 ? 256 : mt == 2 ? 512 : 512;
    auto fits = [&](int64_t s) {
      int64_t threads = 32 * warpsN * s;
      int64_t smem = (s - 1) * warpsN * 32 * mt * 32 * 4;
      int64_t chunk = s * kTiles * layout::kTileK;
      return threads <= maxThreads && smem <= 48 * 1024 && k % chunk == 0 &&
             k / chunk >= 2;
    };
    while (kSplit > 1 && !fits(kSplit))
      kSplit /= 2;
    if (c.batchInvariant)
      kSplit = 1;
    // Pipeline depth: registers in flight per stage grow with warp_m and
    // the weight width.
    int64_t stages = mt == 1 ? 4 : mt == 2 ? 3 : 2;
    if (bits > 4 && stages > 2)
      --stages;
    t.warpM = t.blockM = r.warpM;
    t.warpN = layout::kTileN;
    t.blockN = warpsN * layout::kTileN;
    t.warpK = kTiles * layout::kTileK;
    t.blockK = kSplit * t.warpK;
    t.stages = stages;
    if (Diag d = verifyTileConfig(t))
      return Error{concat("humming-select-tiles chose an invalid tile (a bug): ",
                          *d)};
    out.push_back(t);
  }
  return out;
}

} // namespace humming
