//===- KernelABI.h - How the runtime launches generated kernels -*- C++ -*-===//
//
// The contract between the lowering (which generates the kernels) and the
// runtime (which launches them): parameter order, block size and grid. Both
// sides include this header, so they cannot disagree. No MLIR dependency.
//
//===----------------------------------------------------------------------===//

#ifndef HUMMING_TARGET_KERNELABI_H
#define HUMMING_TARGET_KERNELABI_H

#include <algorithm>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

namespace humming::abi {

/// Kernel parameters, in order: device pointers (null when the layer has no
/// such tensor) followed by M as a 32-bit integer (then, where a kernel
/// has them: the split-K workspace, KernelLaunch::workspace; the
/// activations' tensor map, KernelLaunch::inputMap). The prepared-weight
/// kernels copy activations, weights, scales and zero points in 16-byte
/// cp.async pieces: those pointers must be 16-byte aligned (cudaMalloc'd
/// tensors are; a view at an odd offset is not), the output 4-byte aligned.
enum GemmParam : unsigned {
  ParamInput = 0,
  ParamWeight,
  ParamScales,
  ParamZeroPoints,
  ParamGlobalScale,
  ParamBias,
  ParamOutput,
  /// The activations' f32 scales (8-bit activations: [M] per token, [1]
  /// static; null for 16-bit ones).
  ParamInputScale,
  ParamM,
  NumGemmParams
};

/// Mixture-of-experts kernels (KernelLaunch::routing != kRoutingDense) take
/// four more pointers after M, in this order (null where the routing has no
/// such tensor), then one i32. Indexed (vLLM's moe_align_block_size):
/// `sorted_ids` [P] i32, `expert_ids` [P / block_size] i32,
/// `num_tokens_padded` [1] i32; grouped: `expert_layout` (offsets [E + 1]
/// i32 / i64, or counts [E] i32; a grouped_masked op without counts has
/// kernels that read none: every expert has M / E rows) in the first slot.
/// The router weights, f32
/// per output row, are optional. The i32 is the indexed routing's
/// block_size, a multiple of the kernel's block_m (any other value, 0
/// included, makes every row of the output zero; grouped kernels ignore
/// it): the caller routes with the block size the kernel of its M asks for
/// (KernelLaunch::blockM, at least 16), not one fixed when compiling. P,
/// the length of sorted_ids, is not a parameter: the grid holds it
/// (moeGrid).
enum MoeParam : unsigned {
  ParamRowIds = NumGemmParams,
  ParamBlockExperts,
  ParamRowsPadded,
  ParamRouterWeights,
  ParamRoutingBlock,
  NumMoeParams
};

/// KernelLaunch::routing: how a kernel's rows are routed to experts.
constexpr int64_t kRoutingDense = 0, kRoutingIndexed = 1,
                  kRoutingContiguous = 2, kRoutingMasked = 3;

/// The mma_sync kernel's tile: 16 rows of M by 64 columns of N. Four warps
/// side by side along N each compute 16 x 16 with two m16n8k16 MMAs; kKSplit
/// groups of those four warps split K inside the block and add their partial
/// sums through shared memory, so even M = 1 keeps 16 warps per block busy.
struct MmaSyncTile {
  static constexpr int64_t kBlockM = 16;
  static constexpr int64_t kBlockN = 64;
  static constexpr int64_t kBlockK = 16;
  static constexpr int64_t kWarpsN = 4;
  static constexpr int64_t kKSplit = 4;
  static constexpr int64_t kWarps = kWarpsN * kKSplit;
  static constexpr int64_t kThreads = 32 * kWarps;
};

/// KernelLaunch::kind: what a kernel computes.
constexpr int64_t kGemmKernel = 0, kQuantizeKernel = 1, kMoeAlignKernel = 2,
                  kSiluAndMulKernel = 3, kMoeSumKernel = 4,
                  kMoeGroupKernel = 5, kMoeScatterKernel = 6,
                  kMoeGatherKernel = 7, kGatherColumnsKernel = 8,
                  kRepackKernel = 9, kWeightQuantizeKernel = 10;
/// The most blocks a scatter / gather kernel launches (a grid-stride loop
/// covers the rest).
constexpr int64_t kPermuteMaxBlocks = int64_t(1) << 20;

/// How to launch one generated kernel: the lowering records one entry per
/// kernel in the module attribute kKernelTableAttr (an array of dictionaries
/// with a string `name` and the integer fields of kKernelFields), so a
/// runtime that only holds the PTX can pick the kernel of an M and launch it
/// as the host code would.
struct KernelLaunch {
  std::string name;
  int64_t mMin = 1, mMax = 0; ///< tokens served, inclusive (mMax 0: no bound)
  int64_t blockM = 16, blockN = 64;
  int64_t threads = 128;
  /// Dynamic shared memory per block, in bytes (above 48 KiB the runtime
  /// must raise the function's limit first).
  int64_t smemBytes = 0;
  /// CTAs along K (grid z). With more than one and no cluster, the CTAs of
  /// an output tile add their partial sums through the workspace below.
  int64_t splitK = 1;
  /// Bytes of the split-K workspace the kernel takes (0: none): its fp32
  /// partial sums, then one i32 arrival counter per output tile. Such a
  /// kernel takes one more parameter, a pointer to them, right after M
  /// (before the tensor map of inputMap; never a MoE kernel): 16-byte
  /// aligned, zeroed before its first launch — every launch leaves the
  /// counters at zero —, and used by one launch at a time (launches on
  /// one stream may share one; launches that may overlap, e.g. on two
  /// streams, each need their own).
  int64_t workspace = 0;
  /// CTAs per thread block cluster along z: the split_k CTAs of the wgmma
  /// kernels (unless workspace_split: those use a workspace) and of
  /// mma_sync kernels with cluster_split form one (their PTX
  /// requires it: .reqnctapercluster 1, 1, cluster) and add their sums
  /// through distributed shared memory instead of a workspace; 1 for every
  /// other kernel. The runtime checks that the driver launches the loaded
  /// function with that cluster and can keep one resident.
  int64_t cluster = 1;
  /// CTAs per thread block cluster along x (grid x is then a multiple of
  /// it): the wgmma kernels with multicast_a = 2, whose pairs of column
  /// blocks share one activation tile, each CTA copying half of its rows
  /// into both (their PTX requires it: .reqnctapercluster 2, 1, 1; the
  /// activations' tensor-map box is then block_m / cluster_x rows). 0 for
  /// every other kernel.
  int64_t clusterX = 0;
  /// Where the GEMM kernel's CTAs take output tiles in turn
  /// (TileConfig::persistent: tile blockIdx.x, then + gridDim.x, ...): the
  /// CTAs per SM its grid is sized for — grid() launches at most that
  /// many times the device's SMs, and never more CTAs than output tiles.
  /// Any grid is correct; one larger than the device holds at once only
  /// runs its tiles in more waves. 0 for every other kernel.
  int64_t persistent = 0;
  /// Where the kernel reads its activations by TMA (tma = [a]): the
  /// columns of the tensor map's box, one iteration's K (16, 32 or 64
  /// 2-byte elements: rows of 32, 64 or 128 bytes, swizzled by their
  /// width); the kernel takes one more parameter after M (and after the
  /// workspace, where it has one), the activations' tensor map (a 128-byte CUtensorMap by value, 64-byte aligned) encoded
  /// from inputMapArgs for each launch. 0 for every other kernel.
  int64_t inputMap = 0;
  /// Where the kernel reads its weights by one tensor copy per iteration
  /// (KernelShape::weightMap: K-major 8-bit weights of a dense layer): the
  /// k-tiles of the copy's box, one iteration's K / 16; the kernel takes
  /// one more parameter after the activations' tensor map, the weights'
  /// tensor map (a CUtensorMap by value, as inputMap's) encoded from
  /// weightMapArgs once the weights are on the device. 0 for every other
  /// kernel.
  int64_t weightMap = 0;
  /// 1 where the kernel runs griddepcontrol.wait before it reads anything
  /// an earlier kernel on the stream may write (activations, workspace) and
  /// before it writes, and griddepcontrol.launch_dependents after it
  /// (prepared kernels for sm_90 and later): the runtime may then launch it
  /// with programmatic stream serialization (programmatic dependent launch),
  /// so that it starts, and copies its weights, scales and zero points —
  /// which no kernel may write while a forward is in flight — while the
  /// previous kernel finishes. 0 for every other kernel.
  int64_t gridDependency = 0;
  /// 1 where the CTAs of an output tile wait for each other
  /// (cooperative_split): the runtime must launch the kernel cooperatively
  /// (every CTA of the grid resident at once, else the launch fails rather
  /// than hangs) and checks when it loads the kernel that the largest grid
  /// of its M range fits the device. 0 for every other kernel.
  int64_t cooperative = 0;
  /// What the kernel computes: kGemmKernel (the layer's GEMM; the fields
  /// above as documented) or kQuantizeKernel (humming.quantize of the
  /// activations: input slot -> codes in the output slot and f32 scales in
  /// the scales slot; one block of `threads` per row along grid x, block_m
  /// = 1, block_n = K) or kMoeAlignKernel (humming.moe_align: top-k ids
  /// [M, top_k] in the input slot -> sorted_ids, expert_ids and
  /// num_tokens_padded in the routing slots of MoeParam; one block of
  /// `threads`, grid (1, 1, 1); experts, top_k and block_size set),
  /// kSiluAndMulKernel or kMoeSumKernel (humming.silu_and_mul / moe_sum:
  /// input slot -> output slot, M the output rows, block_n the output
  /// columns, one thread per pair of outputs; moe_sum's top_k set),
  /// kMoeGroupKernel (humming.moe_group: top-k ids [M, top_k] in the input
  /// slot -> positions [M * top_k] in the output slot and the offsets or
  /// counts in the first routing slot; one block of `threads`, grid
  /// (1, 1, 1); experts and top_k set, routing kRoutingContiguous or
  /// kRoutingMasked with max_tokens in block_size), kMoeScatterKernel or
  /// kMoeGatherKernel (humming.moe_permute: input slot -> output slot by
  /// the positions in the first routing slot, M the positions, the rows
  /// of the grouped side (scatter: output, gather: input) in the i32 slot
  /// after the routing pointers; block_n the 4-byte words of a row, one
  /// thread per word and grid-stride step; top_k is built in),
  /// kGatherColumnsKernel (humming.gather_columns: input slot -> output
  /// slot, each row's columns in the order of the [K] i32 indices in the
  /// first routing slot; M the rows, block_n the steps of a row — its
  /// 16-byte pieces (the output 16-byte aligned), or its elements where K
  /// is not a multiple of 16 bytes —, one thread per step and grid-stride
  /// step; griddepcontrol.launch_dependents first from sm_90 on),
  /// kRepackKernel (humming.repack: one weight-side tensor, canonical in
  /// the input slot, prepared in the output slot; M the experts (1 for a
  /// dense layer), block_n the items of one expert — a lane's words of a
  /// weight tile, a scale, a word of zero points —, one thread per item
  /// and grid-stride step), kWeightQuantizeKernel (humming.quantize of
  /// weights: fp weights in the input slot, codes in the output slot,
  /// scales, zero points and global scales in theirs; M the experts,
  /// block_n the items of one expert — scale groups, pairs of 16-column
  /// groups, blocks of 32 zero-point words to clear, or one —, one warp per
  /// item and grid-stride step; a module's kernels run in its table's
  /// order).
  int64_t kind = 0;
  /// Mixture of experts: the routing (kRouting*; kRoutingDense for a
  /// dense GEMM), the experts E, top_k (indexed; 1 otherwise), the indexed
  /// routing's block_size (sorted_ids pads each expert to a multiple of
  /// it; block_m divides it), and whether expert_layout holds i64 offsets.
  /// A MoE kernel serves a range of tokens per expert (moeRowsPerExpert),
  /// not of M.
  int64_t routing = kRoutingDense;
  int64_t experts = 0;
  int64_t topK = 1;
  int64_t blockSize = 0;
  int64_t layout64 = 0;

  bool serves(int64_t m) const { return m >= mMin && (mMax == 0 || m <= mMax); }
  /// Grid for `m` tokens and padded N `np` (one block per block_n columns
  /// and block_m rows, rounded up; split_k blocks along z). A persistent
  /// kernel on a device of `sms` SMs: min(output tiles, persistent x sms)
  /// CTAs along x (every output tile its own CTA where `sms` is 0).
  /// A quantize kernel: (M, 1, 1).
  void grid(int64_t m, int64_t np, uint32_t g[3], int64_t sms = 0) const {
    if (kind == kQuantizeKernel) {
      g[0] = uint32_t(m);
      g[1] = g[2] = 1;
      return;
    }
    if (kind == kMoeAlignKernel || kind == kMoeGroupKernel) {
      g[0] = g[1] = g[2] = 1;
      return;
    }
    if (kind == kMoeScatterKernel || kind == kMoeGatherKernel ||
        kind == kGatherColumnsKernel || kind == kRepackKernel) {
      int64_t blocks = (m * blockN + threads - 1) / threads;
      g[0] = uint32_t(blocks < kPermuteMaxBlocks ? blocks : kPermuteMaxBlocks);
      g[1] = g[2] = 1;
      return;
    }
    if (kind == kWeightQuantizeKernel) {
      int64_t blocks = (m * blockN + threads / 32 - 1) / (threads / 32);
      g[0] = uint32_t(blocks < kPermuteMaxBlocks ? blocks : kPermuteMaxBlocks);
      g[1] = g[2] = 1;
      return;
    }
    if (kind == kSiluAndMulKernel || kind == kMoeSumKernel) {
      g[0] = uint32_t((m * (blockN / 2) + threads - 1) / threads);
      g[1] = g[2] = 1;
      return;
    }
    g[0] = uint32_t((np + blockN - 1) / blockN);
    g[1] = uint32_t((m + blockM - 1) / blockM);
    g[2] = uint32_t(splitK);
    if (persistent > 0) {
      const int64_t tiles = int64_t(g[0]) * g[1];
      g[0] = uint32_t(sms > 0 ? std::min(tiles, persistent * sms) : tiles);
      g[1] = 1;
    }
  }
};

/// The integer fields of a kernel-table entry, as spelled in the module
/// attribute; the lowering writes, the dialect verifies and the runtime
/// reads them from this one list.
struct KernelField {
  const char *key;
  int64_t KernelLaunch::*member;
  /// The MoE fields are written only for MoE kernels (routing !=
  /// kRoutingDense); absent, they keep KernelLaunch's defaults.
  bool moeOnly = false;
  /// Written only where not 0 (absent: 0), so that the tables of the
  /// kernels without it read as before.
  bool onlyIfSet = false;
  bool optional() const { return moeOnly || onlyIfSet; }
};
inline constexpr KernelField kKernelFields[] = {
    {"m_min", &KernelLaunch::mMin},
    {"m_max", &KernelLaunch::mMax},
    {"block_m", &KernelLaunch::blockM},
    {"block_n", &KernelLaunch::blockN},
    {"threads", &KernelLaunch::threads},
    {"smem", &KernelLaunch::smemBytes},
    {"split_k", &KernelLaunch::splitK},
    {"cluster", &KernelLaunch::cluster},
    {"input_map", &KernelLaunch::inputMap},
    {"grid_dependency", &KernelLaunch::gridDependency},
    {"cooperative", &KernelLaunch::cooperative, false, true},
    {"kind", &KernelLaunch::kind},
    {"routing", &KernelLaunch::routing, true},
    {"experts", &KernelLaunch::experts, true},
    {"top_k", &KernelLaunch::topK, true},
    {"block_size", &KernelLaunch::blockSize, true},
    {"layout64", &KernelLaunch::layout64, true},
    {"cluster_x", &KernelLaunch::clusterX, false, true},
    {"persistent", &KernelLaunch::persistent, false, true},
    {"workspace", &KernelLaunch::workspace, false, true},
    {"weight_map", &KernelLaunch::weightMap, false, true}};

constexpr const char *kKernelTableAttr = "humming.kernels";

/// The table as text, one kernel per line: its name, then the fields of
/// kKernelFields in order (what a kernel cache entry keeps with the image).
inline std::string formatKernelTable(const std::vector<KernelLaunch> &table) {
  std::string out;
  for (const KernelLaunch &k : table) {
    out += k.name;
    for (const KernelField &f : kKernelFields)
      out += " " + std::to_string(k.*f.member);
    out += "\n";
  }
  return out;
}

/// The inverse of formatKernelTable; false for text it did not write.
inline bool parseKernelTable(const std::string &text,
                             std::vector<KernelLaunch> &table) {
  table.clear();
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    KernelLaunch k;
    if (!(fields >> k.name))
      return false;
    for (const KernelField &f : kKernelFields)
      if (!(fields >> k.*f.member))
        return false;
    std::string extra;
    if (fields >> extra)
      return false;
    table.push_back(k);
  }
  return !table.empty();
}

/// The activations' tensor map of a kernel with inputMap, as
/// cuTensorMapEncodeTiled takes it: 2-byte elements (f16 / bf16 copied as
/// bits; 8-bit activations as pairs), rank 2 — a row of `k` activations of
/// `activationBits` bits (k x bits / 16 elements, dimension 0) by `m` rows
/// with a row stride of k x bits / 8 bytes —, boxes of inputMap elements
/// (one iteration's K) by block_m rows, no interleave, swizzled by the box
/// row's width (the layout the kernel's wgmma descriptors read),
/// out-of-bounds elements zero. inputMapArgs fills `out` and returns "", or
/// returns why the encoding cannot hold the layer's K, this M or the
/// kernel's box.
struct InputMapArgs {
  uint64_t dims[2] = {0, 0};
  uint64_t strides[1] = {0}; ///< bytes, of dimension 1
  uint32_t box[2] = {0, 0};
  uint32_t elementStrides[2] = {1, 1};
  /// CUtensorMapSwizzle: 1, 2 or 3 for rows of 32, 64 or 128 bytes.
  int swizzle = 0;
};
inline std::string inputMapArgs(const KernelLaunch &kl, int64_t k, int64_t m,
                                InputMapArgs &out,
                                unsigned activationBits = 16) {
  // cuTensorMapEncodeTiled: strides multiples of 16 bytes below 2^40, every
  // dimension in [1, 2^32], box sides in [1, 256].
  if (activationBits != 16 && activationBits != 8)
    return "a tensor map of the activations holds 16- or 8-bit ones, got " +
           std::to_string(activationBits) + "-bit activations";
  const int64_t perRow = 128 / int64_t(activationBits); // 16-byte rows
  if (k <= 0 || k % perRow != 0 || k >= (int64_t(1) << 40) / 16 * perRow)
    return "a tensor map of " + std::to_string(activationBits) +
           "-bit activations needs K to be a positive multiple of " +
           std::to_string(perRow) + " below 2^40 bytes (16-byte rows), got "
           "K = " + std::to_string(k);
  if (m <= 0 || m > (int64_t(1) << 32))
    return "a tensor map of the activations needs 1 <= M <= 2^32, got M = " +
           std::to_string(m);
  if (kl.blockM <= 0 || kl.blockM > 256)
    return "kernel " + kl.name +
           ": a tensor map box holds at most 256 rows, "
           "got block_m = " +
           std::to_string(kl.blockM);
  // Rows of 32, 64 or 128 bytes, each width its own swizzle mode
  // (CU_TENSOR_MAP_SWIZZLE_32B / 64B / 128B).
  int swizzle = kl.inputMap == 16 ? 1 : kl.inputMap == 32 ? 2
                : kl.inputMap == 64 ? 3 : 0;
  if (swizzle == 0)
    return "kernel " + kl.name +
           ": expected the activations' box to be 16, 32 or 64 columns "
           "(input_map: rows of 32, 64 or 128 bytes, one TMA swizzle "
           "each), got " +
           std::to_string(kl.inputMap);
  out = InputMapArgs{};
  out.dims[0] = uint64_t(k * activationBits / 16);
  out.dims[1] = uint64_t(m);
  out.strides[0] = uint64_t(k * activationBits / 8);
  out.box[0] = uint32_t(kl.inputMap);
  // (A cluster along x shares the tile: each CTA copies its share of the
  // rows into every CTA of the cluster.)
  out.box[1] = uint32_t(kl.blockM / std::max<int64_t>(1, kl.clusterX));
  out.swizzle = swizzle;
  return "";
}

/// The weights' tensor map of a kernel with weightMap, as
/// cuTensorMapEncodeTiled takes it: 8-byte elements, rank 3 over the
/// prepared weights of `bits`-bit codes (PreparedLayout.h: tile (k-tile,
/// n-tile) of 128 x bits bytes, the n-tiles of a k-tile contiguous) —
/// an n-tile's 16 x bits elements (dimension 0), `np` / 64 n-tiles
/// (dimension 1, stride 128 x bits bytes) and `kp` / 16 k-tiles (dimension
/// 2, stride np x 2 x bits bytes) —, boxes of one n-tile by the block's
/// block_n / 64 n-tiles by weightMap k-tiles (one iteration's, in the
/// order the slot holds them), no interleave, no swizzle (wgmma's no-swizzle
/// K-major core matrices are the tiles themselves), out-of-bounds elements
/// zero (the n-tiles past N of a partial last block of columns, the k-tiles
/// past K of the last iteration). weightMapArgs fills `out` and returns "",
/// or returns why the encoding cannot hold the layer or the kernel's box.
struct WeightMapArgs {
  uint64_t dims[3] = {0, 0, 0};
  uint64_t strides[2] = {0, 0}; ///< bytes, of dimensions 1 and 2
  uint32_t box[3] = {0, 0, 0};
  uint32_t elementStrides[3] = {1, 1, 1};
};
inline std::string weightMapArgs(const KernelLaunch &kl, int64_t np, int64_t kp,
                                 unsigned bits, WeightMapArgs &out) {
  if (bits != 8)
    return "kernel " + kl.name +
           ": a tensor map of the prepared weights holds 8-bit K-major "
           "tiles, got " +
           std::to_string(bits) + "-bit weights";
  if (np <= 0 || np % 64 != 0 || kp <= 0 || kp % 16 != 0)
    return "kernel " + kl.name +
           ": a tensor map of the prepared weights needs the padded N to be "
           "a positive multiple of 64 and the padded K of 16, got " +
           std::to_string(np) + " x " + std::to_string(kp);
  const int64_t rowBytes = np * 2 * int64_t(bits);
  if (rowBytes * (kp / 16) >= (int64_t(1) << 40))
    return "kernel " + kl.name +
           ": the prepared weights are too large for a tensor map (strides "
           "below 2^40 bytes), got " +
           std::to_string(np) + " x " + std::to_string(kp);
  const int64_t nTiles = kl.blockN / 64;
  if (kl.blockN % 64 != 0 || nTiles < 1 || nTiles > 256 || kl.weightMap < 1 ||
      kl.weightMap > 256)
    return "kernel " + kl.name +
           ": expected a weights' box of 1 to 256 n-tiles of 64 columns by 1 "
           "to 256 k-tiles, got block_n = " +
           std::to_string(kl.blockN) +
           ", weight_map = " + std::to_string(kl.weightMap);
  out = WeightMapArgs{};
  // (An n-tile's 128 x bits bytes are 16 x bits 8-byte elements.)
  out.dims[0] = uint64_t(16 * bits);
  out.dims[1] = uint64_t(np / 64);
  out.dims[2] = uint64_t(kp / 16);
  out.strides[0] = uint64_t(128 * int64_t(bits));
  out.strides[1] = uint64_t(rowBytes);
  out.box[0] = uint32_t(out.dims[0]);
  out.box[1] = uint32_t(nTiles);
  out.box[2] = uint32_t(kl.weightMap);
  return "";
}

/// Where a kernel with inputMap or weightMap meets a driver without
/// cuTensorMapEncodeTiled (before CUDA 12): what it needs; empty otherwise.
inline std::string tensorMapsWithoutEncoder(const KernelLaunch &kl,
                                            bool haveEncoder) {
  if ((!kl.inputMap && !kl.weightMap) || haveEncoder)
    return "";
  return "kernel " + kl.name + " reads its " +
         (kl.inputMap ? kl.weightMap ? "activations and weights" : "activations"
                      : "weights") +
         " by TMA tensor copies; expected a CUDA 12 or newer driver "
         "(cuTensorMapEncodeTiled), got one without";
}

/// Where the loaded function's required cluster depth (the driver's
/// CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH) is not the kernel's cluster:
/// what was expected and found; empty where they agree.
inline std::string clusterMismatch(const KernelLaunch &k, int depth,
                                   int width = 0) {
  // Along x (clusterX): the required cluster width.
  const int64_t x = std::max<int64_t>(1, k.clusterX);
  if (width != int(x) && !(x == 1 && width == 0))
    return "kernel " + k.name + ": expected the driver to launch its CTAs " +
           "along x in clusters of " + std::to_string(x) +
           " (.reqnctapercluster " +
           std::to_string(x) + ", 1, 1), got a required cluster width of " +
           std::to_string(width);
  if (depth == int(k.cluster) || (k.cluster == 1 && depth == 0))
    return "";
  return "kernel " + k.name + ": expected the driver to launch its " +
         std::to_string(k.cluster) +
         " CTAs along z as one cluster (.reqnctapercluster 1, 1, " +
         std::to_string(k.cluster) + "), got a required cluster depth of " +
         std::to_string(depth);
}

/// Where the driver can keep none of a cluster kernel's clusters resident
/// (cuOccupancyMaxActiveClusters gave `clusters`): what the kernel needs;
/// empty where at least one fits.
inline std::string clusterCannotRun(const KernelLaunch &k, int clusters) {
  const int64_t ctas = k.cluster * std::max<int64_t>(1, k.clusterX);
  if (ctas <= 1 || clusters > 0)
    return "";
  return "kernel " + k.name + ": the device cannot run a cluster of " +
         std::to_string(ctas) + " CTAs of " + std::to_string(k.threads) +
         " threads and " + std::to_string(k.smemBytes) +
         " bytes of shared memory each (cuOccupancyMaxActiveClusters: " +
         std::to_string(clusters) +
         (k.clusterX > 1 ? "); force a tile without multicast_a"
                         : "); force a tile with a smaller split_k");
}

/// Where the driver lacks what a cooperative kernel needs: the launch with
/// attributes (cuLaunchKernelEx, CUDA 12) and the occupancy query that
/// checks its grid is resident (cuOccupancyMaxActiveBlocksPerMultiprocessor);
/// empty for other kernels or a driver with both.
inline std::string cooperativeNeedsDriver(const KernelLaunch &k,
                                          bool hasLaunchKernelEx,
                                          bool hasOccupancyQuery) {
  if (!k.cooperative || (hasLaunchKernelEx && hasOccupancyQuery))
    return "";
  std::string missing =
      !hasLaunchKernelEx && !hasOccupancyQuery
          ? "cuLaunchKernelEx and cuOccupancyMaxActiveBlocksPerMultiprocessor"
      : !hasLaunchKernelEx ? "cuLaunchKernelEx"
                           : "cuOccupancyMaxActiveBlocksPerMultiprocessor";
  return "kernel " + k.name +
         " is launched cooperatively (cooperative_split); expected a CUDA 12 "
         "or newer driver, got one without " + missing +
         "; force a tile without cooperative_split";
}

/// Where a cooperative kernel (its CTAs wait for each other) cannot have
/// every CTA of its largest grid — M = mMax tokens, `np` padded columns —
/// resident at once on a device of `sms` SMs that keeps `perSm` of its
/// CTAs per SM (cuOccupancyMaxActiveBlocksPerMultiprocessor): what it
/// needs and what the device holds; empty where the grid fits.
inline std::string cooperativeCannotRun(const KernelLaunch &k, int64_t np,
                                        int perSm, int sms) {
  if (!k.cooperative)
    return "";
  if (k.mMax <= 0)
    return "kernel " + k.name +
           ": a cooperative kernel needs a bounded M range (its largest "
           "grid must be resident at once), got m_max = 0";
  uint32_t g[3];
  k.grid(k.mMax, np, g);
  const int64_t ctas = int64_t(g[0]) * g[1] * g[2];
  const int64_t resident = int64_t(perSm) * sms;
  if (ctas <= resident)
    return "";
  return "kernel " + k.name + ": its " + std::to_string(ctas) +
         " CTAs at M = " + std::to_string(k.mMax) +
         " wait for each other (cooperative_split), so all must be resident "
         "at once; the device keeps " + std::to_string(resident) + " (" +
         std::to_string(perSm) + " per SM on " + std::to_string(sms) +
         " SMs); force a tile without cooperative_split or with a smaller "
         "split_k";
}

/// Mixture of experts: the tokens per expert the tile of `m` activation
/// rows is chosen for (balanced routing): indexed, ceil(m * top_k / E);
/// grouped_contiguous, ceil(m / E); grouped_masked, m / E (max_tokens).
inline int64_t moeRowsPerExpert(int64_t routing, int64_t m, int64_t topK,
                                int64_t experts) {
  if (experts <= 0)
    return m;
  if (routing == kRoutingIndexed)
    return (m * topK + experts - 1) / experts;
  if (routing == kRoutingMasked)
    return m / experts;
  return (m + experts - 1) / experts;
}

/// The grid of a MoE kernel `k` for `m` activation rows, padded N `np` and,
/// indexed, `p` = the length of sorted_ids. Along y: indexed, floor(p /
/// block_m) blocks (num_tokens_padded, a multiple of block_size, is at most
/// p); grouped_contiguous, ceil(m / block_m) + min(E, m) (each expert with
/// rows ends at most one partial block); grouped_masked, E x ceil(max_tokens
/// / block_m). Blocks without rows exit at once.
inline void moeGrid(const KernelLaunch &k, int64_t m, int64_t np, int64_t p,
                    uint32_t g[3]) {
  g[0] = uint32_t((np + k.blockN - 1) / k.blockN);
  int64_t y = 0;
  if (k.routing == kRoutingIndexed)
    y = p / k.blockM;
  else if (k.routing == kRoutingContiguous)
    y = (m + k.blockM - 1) / k.blockM + std::min(k.experts, m);
  else
    y = k.experts * ((m / std::max<int64_t>(k.experts, 1) + k.blockM - 1) /
                     k.blockM);
  g[1] = uint32_t(y);
  g[2] = uint32_t(k.splitK);
}

/// The GEMM entry of `table` serving `m`, or null (also for m = 0: with no
/// tokens there is nothing to launch; a zero-block grid is a launch error).
/// Quantize kernels (kind) of the same module are not candidates.
inline const KernelLaunch *kernelFor(const std::vector<KernelLaunch> &table,
                                     int64_t m) {
  for (const KernelLaunch &k : table)
    if (k.kind == kGemmKernel && k.serves(m))
      return &k;
  return nullptr;
}

/// The MoE GEMM entry of `table` for `m` activation rows (chosen by
/// moeRowsPerExpert), or null for m = 0.
inline const KernelLaunch *moeKernelFor(const std::vector<KernelLaunch> &table,
                                        int64_t m) {
  if (m <= 0)
    return nullptr;
  for (const KernelLaunch &k : table)
    if (k.kind == kGemmKernel && k.routing != kRoutingDense)
      return kernelFor(table, std::max<int64_t>(
                                  1, moeRowsPerExpert(k.routing, m, k.topK,
                                                      k.experts)));
  return nullptr;
}

} // namespace humming::abi

#endif // HUMMING_TARGET_KERNELABI_H
