//===- KernelTableTest.cpp - What a runtime reads after the lowering ------===//
//
// A runtime that holds only the PTX launches from the module's
// `humming.kernels` table (Humming/Target/KernelABI.h): the kernels of a
// prepared layer, one per M range, cover every M from 1 without gaps, and
// each entry says its grid, threads and dynamic shared memory.
//
//===----------------------------------------------------------------------===//

#include "Humming/Conversion/HummingToNVVM.h"
#include "Humming/Dialect/Humming/IR/HummingOps.h"
#include "Humming/Pipelines/Pipelines.h"
#include "Humming/Registration.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <gtest/gtest.h>

#include <array>

using namespace mlir;
namespace habi = ::humming::abi;
namespace mh = ::mlir::humming;

namespace {
constexpr const char *kLayer = R"mlir(
func.func @layer(%a: memref<?x4096xf16>, %w: memref<256x8192xi32>, %s: memref<32x4096xf16>, %c: memref<?x4096xf16>) {
  humming.gemm %a, %w scales(%s : memref<32x4096xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>>,
       input_schema = #humming.input_schema<type = f16>, layout = #humming.layout<chip = "sm_90a">}
      : memref<?x4096xf16>, memref<256x8192xi32> -> memref<?x4096xf16>
  return
}
)mlir";

/// The kernel table of kLayer after `pipeline` (empty, with a test
/// failure, when parsing or the pipeline fails).
std::vector<habi::KernelLaunch> lowerLayer(const char *pipeline) {
  DialectRegistry registry;
  mh::registerHummingDialects(registry);
  mh::registerHummingPasses();
  MLIRContext ctx(registry);
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(kLayer, &ctx);
  EXPECT_TRUE(module);
  if (!module)
    return {};
  PassManager pm(&ctx, ModuleOp::getOperationName());
  EXPECT_TRUE(succeeded(parsePassPipeline(pipeline, pm)));
  EXPECT_TRUE(succeeded(pm.run(*module)));
  return mh::kernelTable(*module);
}
} // namespace

TEST(KernelTable, CoversEveryMAndSaysHowToLaunch) {
  std::vector<habi::KernelLaunch> table = lowerLayer(
      "humming-select-tiles{device=H200},humming-lower-to-nvvm{chip=sm_90a}");
  // The H200's eight ranges on sm_90a, 33..64 and 65..128 one kernel.
  ASSERT_EQ(table.size(), 7u);
  EXPECT_EQ(table.front().name, "layer_gemm0_m0");
  EXPECT_EQ(table.front().mMin, 1);
  for (size_t i = 1; i < table.size(); ++i)
    EXPECT_EQ(table[i].mMin, table[i - 1].mMax + 1) << i; // no gaps
  EXPECT_EQ(table.back().mMax, 0);                        // open-ended
  for (const habi::KernelLaunch &k : table) {
    EXPECT_GT(k.threads, 0);
    EXPECT_LE(k.threads, 1024);
    EXPECT_GT(k.smemBytes, 0) << k.name;
    EXPECT_LE(k.smemBytes, 232448) << k.name; // sm_90a's per-block maximum
  }
  // The M <= 8 kernel on the H200: eight warps splitting K, four slots of
  // nine 512-byte chunks (four k-tiles of 4-bit weights and activations,
  // one of scales): 8 x 4 x 9 x 512 bytes, above the 48 KiB that needs the
  // runtime's opt-in.
  EXPECT_EQ(table[0].threads, 256);
  EXPECT_EQ(table[0].smemBytes, 8 * 4 * 9 * 512);
  // Every M finds exactly its kernel; M = 0 finds none.
  EXPECT_EQ(habi::kernelFor(table, 0), nullptr);
  EXPECT_EQ(habi::kernelFor(table, 1), &table[0]);
  EXPECT_EQ(habi::kernelFor(table, table[0].mMax), &table[0]);
  EXPECT_EQ(habi::kernelFor(table, table[0].mMax + 1), &table[1]);
  EXPECT_EQ(habi::kernelFor(table, 1 << 20), &table.back());
  // A quantize kernel in the same table serves no GEMM, whatever its range.
  {
    std::vector<habi::KernelLaunch> mixed = table;
    habi::KernelLaunch q;
    q.name = "layer_quantize9";
    q.kind = habi::kQuantizeKernel;
    mixed.insert(mixed.begin(), q); // m = [1, inf]
    EXPECT_EQ(habi::kernelFor(mixed, 1), &mixed[1]);
    EXPECT_EQ(habi::kernelFor(mixed, 1 << 20), &mixed.back());
  }
  // From M = 513 on (sm_90a): the warp-specialized wgmma tile, two
  // consumer warpgroups and a producer one; four slots of 64 of K:
  // activations (128 tokens x 64 x 2 bytes), 4-bit weights (256 x 64 / 2
  // bytes) and the block's 256 scales, padded to the 1024 bytes of the
  // activations' 128-byte swizzle pattern, then a full and an empty
  // mbarrier per slot. The activations come by TMA in boxes of 64 columns.
  EXPECT_EQ(table.back().mMin, 513);
  EXPECT_EQ(table.back().blockM, 128);
  EXPECT_EQ(table.back().threads, 384);
  const int64_t slot = 128 * 64 * 2 + 256 * 64 / 2 + 256 * 2;
  EXPECT_EQ(table.back().smemBytes, 4 * ((slot + 1023) / 1024 * 1024) + 4 * 16);
  EXPECT_EQ(table.back().inputMap, 64);
  // M = 33..128 (16 blocks of 256 columns): 64 tokens, K split four ways
  // through the workspace (no cluster), the activations by TMA. M =
  // 257..512: 128 tokens, K split two ways through the workspace, by TMA
  // too. No kernel here has a cluster (a forced cluster split below).
  EXPECT_EQ(table[3].mMin, 33);
  EXPECT_EQ(table[3].mMax, 128);
  EXPECT_EQ(table[3].splitK, 4);
  EXPECT_EQ(table[3].cluster, 1);
  EXPECT_EQ(table[3].inputMap, 64);
  EXPECT_EQ(table[5].mMin, 257);
  EXPECT_EQ(table[5].splitK, 2);
  EXPECT_EQ(table[5].cluster, 1);
  EXPECT_EQ(table[5].inputMap, 64);
  for (const habi::KernelLaunch &k : table)
    EXPECT_EQ(k.cluster, 1) << k.name;
  uint32_t splitGrid[3];
  table[3].grid(64, 4096, splitGrid);
  EXPECT_EQ(splitGrid[0], 16u);
  EXPECT_EQ(splitGrid[1], 1u);
  EXPECT_EQ(splitGrid[2], 4u);
  table[5].grid(512, 4096, splitGrid);
  EXPECT_EQ(splitGrid[0], 16u);
  EXPECT_EQ(splitGrid[1], 4u);
  EXPECT_EQ(splitGrid[2], 2u);
  // Grid: one block per block_n columns and block_m rows.
  uint32_t grid[3];
  table.back().grid(1000, 4096, grid);
  EXPECT_EQ(grid[0], uint32_t(4096 / table.back().blockN));
  EXPECT_EQ(grid[1],
            uint32_t((1000 + table.back().blockM - 1) / table.back().blockM));
  EXPECT_EQ(grid[2], 1u);
  // The text a kernel cache entry keeps reads back to the same table.
  std::vector<habi::KernelLaunch> again;
  ASSERT_TRUE(habi::parseKernelTable(habi::formatKernelTable(table), again));
  ASSERT_EQ(again.size(), table.size());
  for (size_t i = 0; i < table.size(); ++i) {
    EXPECT_EQ(again[i].name, table[i].name);
    for (const habi::KernelField &f : habi::kKernelFields)
      EXPECT_EQ(again[i].*f.member, table[i].*f.member) << f.key;
  }
  EXPECT_FALSE(habi::parseKernelTable("layer_gemm0_m0 1 16\n", again));
  EXPECT_FALSE(habi::parseKernelTable("", again));
  EXPECT_FALSE(habi::parseKernelTable(
      habi::formatKernelTable(table).substr(0, 20) + " 1 2 3 4 5 6 7 8 9\n",
      again));
}

TEST(KernelTable, AClusterSplitLaunchesItsClusterAlongZ) {
  // A forced K split in a cluster of two (the heuristics take the workspace
  // instead on the H200): the table says the cluster depth the launch must
  // ask for, z = the split, and the activations stay cp.async (no map).
  std::vector<habi::KernelLaunch> table = lowerLayer(
      "humming-select-tiles{device=H200 force-tile-config='#humming.tile_config"
      "<m = [1, inf], block = [128, 256, 64], warp = [128, 32, 64], mma = "
      "wgmma, warp_specialized = true, mbarrier = true, split_k = 2>'},"
      "humming-lower-to-nvvm{chip=sm_90a}");
  ASSERT_EQ(table.size(), 1u);
  EXPECT_EQ(table[0].splitK, 2);
  EXPECT_EQ(table[0].cluster, 2);
  EXPECT_EQ(table[0].inputMap, 0);
  uint32_t grid[3];
  table[0].grid(512, 4096, grid);
  EXPECT_EQ(grid[0], 16u);
  EXPECT_EQ(grid[1], 4u);
  EXPECT_EQ(grid[2], 2u);
}

TEST(KernelTable, APersistentGridHoldsAtMostItsWavesOfCtas) {
  // persistent = w (x ctas_per_sm): at most w CTAs per SM of the device
  // the runtime found, never more than output tiles, all along x; without
  // a device (sms 0) one CTA per tile, which the kernel's grid-stride loop
  // runs as well.
  habi::KernelLaunch k;
  k.blockM = 192;
  k.blockN = 128;
  k.persistent = 1;
  uint32_t g[3];
  k.grid(8192, 8192, g, /*sms=*/132); // 43 x 64 = 2752 tiles
  EXPECT_EQ(g[0], 132u);
  EXPECT_EQ(g[1], 1u);
  EXPECT_EQ(g[2], 1u);
  k.grid(8192, 8192, g);
  EXPECT_EQ(g[0], 2752u);
  EXPECT_EQ(g[1], 1u);
  k.grid(100, 8192, g, 132); // 64 tiles
  EXPECT_EQ(g[0], 64u);
  k.persistent = 4;
  k.grid(8192, 8192, g, 132);
  EXPECT_EQ(g[0], 528u);
  // The field travels with a cached image's table.
  k.name = "layer_gemm0_m0";
  std::vector<habi::KernelLaunch> back;
  ASSERT_TRUE(habi::parseKernelTable(habi::formatKernelTable({k}), back));
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].persistent, 4);
}

TEST(KernelTable, AClusterTheDriverDoesNotFormIsRefused) {
  // The wgmma split_k kernels read each other's shared memory: a loaded
  // function whose required cluster depth is not the table's is refused
  // with what was expected and found (Layer::transform asks the driver).
  habi::KernelLaunch k;
  k.name = "layer_gemm0_m4";
  k.splitK = k.cluster = 4;
  EXPECT_EQ(habi::clusterMismatch(k, 4), "");
  EXPECT_EQ(habi::clusterMismatch(k, 0),
            "kernel layer_gemm0_m4: expected the driver to launch its 4 CTAs "
            "along z as one cluster (.reqnctapercluster 1, 1, 4), got a "
            "required cluster depth of 0");
  EXPECT_NE(habi::clusterMismatch(k, 2), "");
  // A cluster the device cannot keep resident at all (the driver's
  // cuOccupancyMaxActiveClusters says 0) is refused at transform time.
  k.threads = 384;
  k.smemBytes = 200000;
  EXPECT_EQ(habi::clusterCannotRun(k, 0),
            "kernel layer_gemm0_m4: the device cannot run a cluster of 4 CTAs "
            "of 384 threads and 200000 bytes of shared memory each "
            "(cuOccupancyMaxActiveClusters: 0); force a tile with a smaller "
            "split_k");
  EXPECT_EQ(habi::clusterCannotRun(k, 1), "");
  // Kernels without a cluster: the driver reports 0 (or 1).
  habi::KernelLaunch plain;
  plain.name = "layer_gemm0_m0";
  EXPECT_EQ(habi::clusterMismatch(plain, 0), "");
  EXPECT_EQ(habi::clusterMismatch(plain, 1), "");
  EXPECT_NE(habi::clusterMismatch(plain, 2), "");
  EXPECT_EQ(habi::clusterCannotRun(plain, 0), "");
  // multicast_a = 2: pairs along x (the required cluster width).
  habi::KernelLaunch pair;
  pair.name = "layer_gemm0_m6";
  pair.clusterX = 2;
  pair.threads = 384;
  pair.smemBytes = 200000;
  EXPECT_EQ(habi::clusterMismatch(pair, 0, 2), "");
  EXPECT_EQ(habi::clusterMismatch(pair, 0, 0),
            "kernel layer_gemm0_m6: expected the driver to launch its CTAs "
            "along x in clusters of 2 (.reqnctapercluster 2, 1, 1), got a "
            "required cluster width of 0");
  EXPECT_NE(habi::clusterMismatch(plain, 0, 2), "");
  EXPECT_EQ(habi::clusterCannotRun(pair, 0),
            "kernel layer_gemm0_m6: the device cannot run a cluster of 2 CTAs "
            "of 384 threads and 200000 bytes of shared memory each "
            "(cuOccupancyMaxActiveClusters: 0); force a tile without "
            "multicast_a");
  // cooperative_split: every CTA of the range's largest grid must be
  // resident at once (the CTAs of a tile wait for each other); 8192
  // columns of 256 at M = 128 split four ways are 128 CTAs.
  habi::KernelLaunch coop;
  coop.name = "layer_gemm0_m2";
  coop.cooperative = 1;
  coop.blockM = 128;
  coop.blockN = 256;
  coop.splitK = 4;
  coop.mMin = 65;
  coop.mMax = 128;
  EXPECT_EQ(habi::cooperativeCannotRun(coop, 8192, 1, 132), "");
  EXPECT_EQ(habi::cooperativeCannotRun(coop, 8192, 1, 114),
            "kernel layer_gemm0_m2: its 128 CTAs at M = 128 wait for each "
            "other (cooperative_split), so all must be resident at once; the "
            "device keeps 114 (1 per SM on 114 SMs); force a tile without "
            "cooperative_split or with a smaller split_k");
  coop.mMax = 256;
  EXPECT_NE(habi::cooperativeCannotRun(coop, 8192, 1, 132), "");
  EXPECT_EQ(habi::cooperativeCannotRun(coop, 8192, 2, 132), "");
  coop.mMax = 0;
  EXPECT_EQ(habi::cooperativeCannotRun(coop, 8192, 1, 132),
            "kernel layer_gemm0_m2: a cooperative kernel needs a bounded M "
            "range (its largest grid must be resident at once), got m_max = 0");
  EXPECT_EQ(habi::cooperativeCannotRun(plain, 1 << 20, 1, 1), "");
  // ... and a driver that can launch it cooperatively and check its grid.
  coop.mMax = 128;
  EXPECT_EQ(habi::cooperativeNeedsDriver(coop, true, true), "");
  EXPECT_EQ(habi::cooperativeNeedsDriver(plain, false, false), "");
  EXPECT_EQ(habi::cooperativeNeedsDriver(coop, false, true),
            "kernel layer_gemm0_m2 is launched cooperatively "
            "(cooperative_split); expected a CUDA 12 or newer driver, got one "
            "without cuLaunchKernelEx; force a tile without "
            "cooperative_split");
  EXPECT_NE(habi::cooperativeNeedsDriver(coop, true, false)
                .find("without cuOccupancyMaxActiveBlocksPerMultiprocessor;"),
            std::string::npos);
  EXPECT_NE(habi::cooperativeNeedsDriver(coop, false, false)
                .find("without cuLaunchKernelEx and "
                      "cuOccupancyMaxActiveBlocksPerMultiprocessor;"),
            std::string::npos);
  // The table keeps the fields through its text form (kernel cache entries).
  coop.mMax = 128;
  std::vector<habi::KernelLaunch> table = {k, plain, coop}, back;
  ASSERT_TRUE(habi::parseKernelTable(habi::formatKernelTable(table), back));
  ASSERT_EQ(back.size(), 3u);
  EXPECT_EQ(back[0].cluster, 4);
  EXPECT_EQ(back[1].cluster, 1);
  EXPECT_EQ(back[1].cooperative, 0);
  EXPECT_EQ(back[2].cooperative, 1);
}

TEST(KernelTable, EmptyWithoutLoweredLayers) {
  MLIRContext ctx;
  OwningOpRef<ModuleOp> module = ModuleOp::create(UnknownLoc::get(&ctx));
  EXPECT_TRUE(mh::kernelTable(*module).empty());
}

TEST(KernelTable, TheActivationsTensorMapOfATmaKernel) {
  // tma = [a]: the runtime encodes, per launch, K columns by M rows of
  // 2-byte elements, rows 2K bytes apart, in boxes of one iteration's K
  // (input_map columns) by block_m rows, swizzled by the box row's width.
  habi::KernelLaunch k;
  k.name = "layer_gemm0_m5";
  k.blockM = 128;
  k.inputMap = 64;
  habi::InputMapArgs a;
  ASSERT_EQ(habi::inputMapArgs(k, 8192, 1000, a), "");
  EXPECT_EQ(a.dims[0], 8192u);
  EXPECT_EQ(a.dims[1], 1000u);
  EXPECT_EQ(a.strides[0], 16384u);
  EXPECT_EQ(a.box[0], 64u);
  EXPECT_EQ(a.box[1], 128u);
  EXPECT_EQ(a.elementStrides[0], 1u);
  EXPECT_EQ(a.elementStrides[1], 1u);
  EXPECT_EQ(a.swizzle, 3); // CU_TENSOR_MAP_SWIZZLE_128B
  // multicast_a = 2: each CTA of the pair copies half the rows.
  k.clusterX = 2;
  ASSERT_EQ(habi::inputMapArgs(k, 8192, 1000, a), "");
  EXPECT_EQ(a.box[1], 64u);
  k.clusterX = 0;
  for (auto [columns, swizzle] : {std::pair{16, 1}, {32, 2}}) {
    k.inputMap = columns;
    ASSERT_EQ(habi::inputMapArgs(k, 8192, 1000, a), "");
    EXPECT_EQ(a.box[0], uint32_t(columns));
    EXPECT_EQ(a.swizzle, swizzle);
  }
  // A box no swizzle mode holds (a table of before this layout said 1).
  for (int64_t columns : {1, 8, 128}) {
    k.inputMap = columns;
    EXPECT_EQ(habi::inputMapArgs(k, 8192, 1000, a),
              "kernel layer_gemm0_m5: expected the activations' box to be "
              "16, 32 or 64 columns (input_map: rows of 32, 64 or 128 "
              "bytes, one TMA swizzle each), got " +
                  std::to_string(columns));
  }
  k.inputMap = 64;
  // What the encoding cannot hold, with what was expected and found.
  EXPECT_EQ(habi::inputMapArgs(k, 500, 16, a),
            "a tensor map of 16-bit activations needs K to be a positive "
            "multiple of 8 below 2^40 bytes (16-byte rows), got K = 500");
  // 8-bit activations travel as pairs: K / 2 elements, rows of K bytes.
  ASSERT_EQ(habi::inputMapArgs(k, 8192, 1000, a, 8), "");
  EXPECT_EQ(a.dims[0], 4096u);
  EXPECT_EQ(a.strides[0], 8192u);
  EXPECT_EQ(a.box[0], 64u);
  EXPECT_EQ(habi::inputMapArgs(k, 8200, 16, a, 8),
            "a tensor map of 8-bit activations needs K to be a positive "
            "multiple of 16 below 2^40 bytes (16-byte rows), got K = 8200");
  EXPECT_EQ(habi::inputMapArgs(k, 8192, 16, a, 4),
            "a tensor map of the activations holds 16- or 8-bit ones, got "
            "4-bit activations");
  EXPECT_EQ(habi::inputMapArgs(k, 8192, int64_t(1) << 33, a),
            "a tensor map of the activations needs 1 <= M <= 2^32, got M = "
            "8589934592");
  k.blockM = 512;
  EXPECT_EQ(habi::inputMapArgs(k, 8192, 16, a),
            "kernel layer_gemm0_m5: a tensor map box holds at most 256 rows, "
            "got block_m = 512");
  // A driver without the encoder (before CUDA 12) cannot launch it; other
  // kernels do not care.
  EXPECT_EQ(habi::tensorMapsWithoutEncoder(k, true), "");
  EXPECT_EQ(habi::tensorMapsWithoutEncoder(k, false),
            "kernel layer_gemm0_m5 reads its activations by TMA tensor "
            "copies; expected a CUDA 12 or newer driver "
            "(cuTensorMapEncodeTiled), got one without");
  k.weightMap = 8;
  EXPECT_EQ(habi::tensorMapsWithoutEncoder(k, false),
            "kernel layer_gemm0_m5 reads its activations and weights by TMA "
            "tensor copies; expected a CUDA 12 or newer driver "
            "(cuTensorMapEncodeTiled), got one without");
  k.inputMap = 0;
  EXPECT_EQ(habi::tensorMapsWithoutEncoder(k, false),
            "kernel layer_gemm0_m5 reads its weights by TMA tensor copies; "
            "expected a CUDA 12 or newer driver (cuTensorMapEncodeTiled), "
            "got one without");
  k.weightMap = 0;
  EXPECT_EQ(habi::tensorMapsWithoutEncoder(k, false), "");
}

TEST(KernelTable, TheWeightsTensorMapOfAKMajorKernel) {
  // weight_map: the runtime encodes, once per layer, the prepared 8-bit
  // K-major weights as [K / 16][N / 64][1024 bytes] of 8-byte elements,
  // in boxes of the block's n-tiles by one iteration's k-tiles: the slot's
  // order, [k-tile][n-tile][tile].
  habi::KernelLaunch k;
  k.name = "layer_gemm0_m5";
  k.blockN = 128;
  k.weightMap = 8;
  habi::WeightMapArgs a;
  ASSERT_EQ(habi::weightMapArgs(k, 8192, 7168, 8, a), "");
  EXPECT_EQ(a.dims[0], 128u);
  EXPECT_EQ(a.dims[1], 128u);
  EXPECT_EQ(a.dims[2], 448u);
  EXPECT_EQ(a.strides[0], 1024u);
  EXPECT_EQ(a.strides[1], 8192u * 16);
  EXPECT_EQ(a.box[0], 128u);
  EXPECT_EQ(a.box[1], 2u);
  EXPECT_EQ(a.box[2], 8u);
  // 256 columns (int8), four k-tiles per iteration.
  k.blockN = 256;
  k.weightMap = 4;
  ASSERT_EQ(habi::weightMapArgs(k, 2112, 1024, 8, a), "");
  EXPECT_EQ(a.dims[1], 33u);
  EXPECT_EQ(a.box[1], 4u);
  EXPECT_EQ(a.box[2], 4u);
  // What the encoding cannot hold, named.
  EXPECT_EQ(habi::weightMapArgs(k, 2112, 1024, 4, a),
            "kernel layer_gemm0_m5: a tensor map of the prepared weights "
            "holds 8-bit K-major tiles, got 4-bit weights");
  EXPECT_EQ(habi::weightMapArgs(k, 2100, 1024, 8, a),
            "kernel layer_gemm0_m5: a tensor map of the prepared weights "
            "needs the padded N to be a positive multiple of 64 and the "
            "padded K of 16, got 2100 x 1024");
  EXPECT_EQ(habi::weightMapArgs(k, int64_t(1) << 24, int64_t(1) << 24, 8, a),
            "kernel layer_gemm0_m5: the prepared weights are too large for a "
            "tensor map (strides below 2^40 bytes), got 16777216 x 16777216");
  k.weightMap = 512;
  EXPECT_EQ(habi::weightMapArgs(k, 2112, 1024, 8, a),
            "kernel layer_gemm0_m5: expected a weights' box of 1 to 256 "
            "n-tiles of 64 columns by 1 to 256 k-tiles, got block_n = 256, "
            "weight_map = 512");
}

TEST(KernelTable, ARowMoveCoversItsWordsWithAtMostTheCappedGrid) {
  // humming.moe_permute's kernels: one thread per 4-byte word of the
  // positions' rows, at most kPermuteMaxBlocks blocks (a grid-stride loop
  // does the rest); a routing kernel is one block.
  habi::KernelLaunch k;
  k.kind = habi::kMoeScatterKernel;
  k.blockN = 1024; // a 2048-column 16-bit row
  k.threads = 256;
  uint32_t g[3];
  k.grid(10, 0, g);
  EXPECT_EQ(g[0], 40u);
  EXPECT_EQ(g[1], 1u);
  EXPECT_EQ(g[2], 1u);
  k.kind = habi::kMoeGatherKernel;
  k.grid(int64_t(1) << 24, 0, g);
  EXPECT_EQ(g[0], uint32_t(habi::kPermuteMaxBlocks));
  k.kind = habi::kMoeGroupKernel;
  k.grid(4096, 0, g);
  EXPECT_EQ(g[0], 1u);
}

// The weight preparation modules the layer compiles on a device (no device
// needed to build them): one repack kernel per operand (kind 9, block_n the
// items of an expert: lanes of the weight tiles, scale elements, zero-point
// words) and one weight quantization kernel (kind 10, block_n the scale
// groups), to PTX with no libdevice call (the JIT links none); a schema the
// kernels do not take fails with the lowering's diagnostic.
TEST(KernelTable, WeightPreparationModules) {
  DialectRegistry registry;
  mh::registerHummingDialects(registry);
  MLIRContext ctx(registry);
  ctx.loadAllAvailableDialects();
  using namespace ::humming;
  WeightSchema w = WeightSchema::make(ScalarType::uint(4), ScalarType::f16(),
                                      Granularity::Group, 128);
  w.zeroPoint = ZeroPointKind::Int;
  mh::RepackSpec rs;
  rs.weight = w;
  rs.input = InputSchema{ScalarType::f16(), ActScaling::None, 0};
  rs.n = 4096;
  rs.k = 4096;
  rs.chip = "sm_90a";
  rs.operands = {WeightOperand::Weight, WeightOperand::Scales,
                 WeightOperand::ZeroPoints};
  auto repack = mh::buildRepackModule(ctx, rs);
  ASSERT_TRUE(repack.ok()) << repack.error();
  auto repackPtx = mh::compileToPtx(**repack, "sm_90a");
  ASSERT_TRUE(repackPtx.ok()) << repackPtx.error();
  EXPECT_EQ(repackPtx->find("call"), std::string::npos);
  std::vector<habi::KernelLaunch> table = mh::kernelTable(**repack);
  ASSERT_EQ(table.size(), 3u);
  for (const habi::KernelLaunch &l : table)
    EXPECT_EQ(l.kind, habi::kRepackKernel);
  EXPECT_EQ(table[0].blockN, 4096 / 16 * (4096 / 64) * 32);
  EXPECT_EQ(table[1].blockN, 32 * 4096);
  EXPECT_EQ(table[2].blockN, 32 * 4096 * 4 / 32);

  mh::WeightQuantizeSpec qs;
  qs.weight = w;
  qs.source = ScalarType::bf16();
  qs.n = 4096;
  qs.k = 4096;
  auto quantize = mh::buildWeightQuantizeModule(ctx, qs);
  ASSERT_TRUE(quantize.ok()) << quantize.error();
  auto quantizePtx = mh::compileToPtx(**quantize, "sm_90a");
  ASSERT_TRUE(quantizePtx.ok()) << quantizePtx.error();
  EXPECT_EQ(quantizePtx->find("call"), std::string::npos);
  table = mh::kernelTable(**quantize);
  // Integer zero points: a clearing kernel (32 words per warp) first.
  ASSERT_EQ(table.size(), 2u);
  EXPECT_EQ(table[0].kind, habi::kWeightQuantizeKernel);
  EXPECT_EQ(table[0].blockN, 4096 * 4 / 32 * 32 / 32);
  EXPECT_EQ(table[1].kind, habi::kWeightQuantizeKernel);
  EXPECT_EQ(table[1].blockN, 4096 * 32);
  uint32_t grid[3];
  table[1].grid(1, 0, grid);
  EXPECT_EQ(grid[0], 4096u * 32 / 8); // one warp per group, 8 per block

  // MXFP4 (e2m1 codes, e8m0 scales per 32): one warp per group of 32.
  qs.weight = WeightSchema::make(ScalarType::e2m1(), ScalarType::ue8m0(),
                                 Granularity::Group, 32);
  auto fp4 = mh::buildWeightQuantizeModule(ctx, qs);
  ASSERT_TRUE(fp4.ok()) << fp4.error();
  auto fp4Ptx = mh::compileToPtx(**fp4, "sm_90a");
  ASSERT_TRUE(fp4Ptx.ok()) << fp4Ptx.error();
  EXPECT_EQ(fp4Ptx->find("call"), std::string::npos);
  table = mh::kernelTable(**fp4);
  ASSERT_EQ(table.size(), 1u);
  EXPECT_EQ(table[0].blockN, 4096 * 128);

  // NVFP4 (a global scale over every group, groups of 16): four kernels
  // in launch order — clear (one warp per expert), amax and quantize (one
  // warp per pair of groups), finish.
  qs.weight = WeightSchema::make(ScalarType::e2m1(), ScalarType::e4m3(),
                                 Granularity::GroupTensor, 16);
  auto nvfp4 = mh::buildWeightQuantizeModule(ctx, qs);
  ASSERT_TRUE(nvfp4.ok()) << nvfp4.error();
  auto nvfp4Ptx = mh::compileToPtx(**nvfp4, "sm_90a");
  ASSERT_TRUE(nvfp4Ptx.ok()) << nvfp4Ptx.error();
  EXPECT_EQ(nvfp4Ptx->find("call"), std::string::npos);
  // The four kernels in launch order and each one's items (block_n).
  auto expectPhases = [](const std::vector<habi::KernelLaunch> &t,
                         std::array<int64_t, 4> items) {
    ASSERT_EQ(t.size(), 4u);
    EXPECT_NE(t[0].name.find("clear"), std::string::npos) << t[0].name;
    EXPECT_NE(t[1].name.find("amax"), std::string::npos) << t[1].name;
    EXPECT_NE(t[3].name.find("finish"), std::string::npos) << t[3].name;
    for (size_t i = 0; i < 4; ++i)
      EXPECT_EQ(t[i].blockN, items[i]) << t[i].name;
  };
  expectPhases(mh::kernelTable(**nvfp4),
               {1, 4096 * 4096 / 32, 4096 * 4096 / 32, 1});

  // Block scales: the same four kernels, Clear and Finish 32 of the
  // expert's 32 x 32 block slots per item, Amax and the quantization a warp
  // per row and block column.
  qs.weight = WeightSchema::make(ScalarType::e4m3(), ScalarType::f32(),
                                 Granularity::Block, 128);
  qs.weight.groupN = 128;
  auto block = mh::buildWeightQuantizeModule(ctx, qs);
  ASSERT_TRUE(block.ok()) << block.error();
  auto blockPtx = mh::compileToPtx(**block, "sm_90a");
  ASSERT_TRUE(blockPtx.ok()) << blockPtx.error();
  EXPECT_EQ(blockPtx->find("call"), std::string::npos);
  expectPhases(mh::kernelTable(**block), {32 * 32 / 32, 4096 * 4096 / 128,
                                          4096 * 4096 / 128, 32 * 32 / 32});

  // Blocks must tile the padded K: a partial last block along K stays on
  // the host.
  qs.k = 4000;
  auto partial = mh::buildWeightQuantizeModule(ctx, qs);
  ASSERT_TRUE(partial.ok()) << partial.error();
  auto partialPtx = mh::compileToPtx(**partial, "sm_90a");
  ASSERT_FALSE(partialPtx.ok());
  EXPECT_NE(partialPtx.error().find("the weight quantization kernel takes "
                                    "block scales of a multiple of 32 columns "
                                    "dividing the padded K, got blocks of 128 "
                                    "columns in a padded K of 4000"),
            std::string::npos)
      << partialPtx.error();
}

// An embedding compiler applies the lowering's patterns with its own driver
// (populateHummingToNVVMPatterns): here MLIR's greedy driver over the whole
// module, the humming ops in reverse kind order (silu_and_mul before the
// GEMM). Every humming op is replaced by launches, each kernel is in the
// kernel module and in the table, whatever the driver's order.
TEST(KernelTable, ThePatternsLowerUnderAnotherDriver) {
  DialectRegistry registry;
  mh::registerHummingDialects(registry);
  MLIRContext ctx(registry);
  ctx.loadAllAvailableDialects();
  constexpr const char *kBlock = R"mlir(
func.func @block(%x: memref<?x8192xf16>, %h: memref<?x4096xf16>, %a: memref<?x4096xf16>, %w: memref<4096x512xi32>, %s: memref<4096x32xf16>, %c: memref<?x4096xf16>) {
  humming.silu_and_mul %x into %h : memref<?x8192xf16> -> memref<?x4096xf16>
  humming.gemm %a, %w scales(%s : memref<4096x32xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>>,
       input_schema = #humming.input_schema<type = f16>}
      : memref<?x4096xf16>, memref<4096x512xi32> -> memref<?x4096xf16>
  return
}
)mlir";
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(kBlock, &ctx);
  ASSERT_TRUE(module);
  std::optional<::humming::Chip> chip = ::humming::Chip::parse("sm_80");
  ASSERT_TRUE(chip);
  mh::KernelLoweringState state(*module, *chip);
  module->walk([&](Operation *op) {
    if (isa_and_nonnull<mh::HummingDialect>(op->getDialect()))
      EXPECT_TRUE(succeeded(mh::checkHummingLowering(op, state)));
  });
  RewritePatternSet patterns(&ctx);
  mh::populateHummingToNVVMPatterns(patterns, state);
  GreedyRewriteConfig config;
  config.enableFolding(false);
  ASSERT_TRUE(
      succeeded(applyPatternsGreedily(*module, std::move(patterns), config)));
  state.writeKernelTable();
  int humming = 0, launches = 0;
  module->walk([&](Operation *op) {
    humming += isa_and_nonnull<mh::HummingDialect>(op->getDialect());
    launches += isa<gpu::LaunchFuncOp>(op);
  });
  EXPECT_EQ(humming, 0);
  EXPECT_EQ(launches, 2);
  std::vector<habi::KernelLaunch> table = mh::kernelTable(*module);
  ASSERT_EQ(table.size(), 2u);
  auto kernels = module->lookupSymbol<gpu::GPUModuleOp>("humming_kernels");
  ASSERT_TRUE(kernels);
  for (const habi::KernelLaunch &k : table)
    EXPECT_TRUE(kernels.lookupSymbol(k.name)) << k.name;
}
