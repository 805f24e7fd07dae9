// humming-select-tiles: per device, the tile configurations of a prepared
// W4A16 g128 4096 x 4096 layer (no GPU needed). The heuristics are pure
// functions of the schema, N, K and the device's facts: SM count, bandwidth,
// tensor throughput and shared memory (Humming/Target/TileHeuristics.h).

// RUN: humming-opt %s --humming-select-tiles="device=H200" | FileCheck %s --check-prefix=H200
// RUN: humming-opt %s --humming-select-tiles="device=H100" | FileCheck %s --check-prefix=H200
// RUN: humming-opt %s --humming-select-tiles="device=H20" | FileCheck %s --check-prefix=H20
// RUN: humming-opt %s --humming-select-tiles="device=A100" | FileCheck %s --check-prefix=A100
// RUN: humming-opt %s --humming-select-tiles="device=A10" | FileCheck %s --check-prefix=SM86
// RUN: humming-opt %s --humming-select-tiles="device=L40S" | FileCheck %s --check-prefix=SM86
// RUN: humming-opt %s --humming-select-tiles="chip=sm_89" | FileCheck %s --check-prefix=SM86

// Hopper: 132 SMs and 227 KiB of shared memory: at small M sixteen warps
// split K inside each 64-column block (16 warps per SM keep enough copies in
// flight), four pipeline slots.
// H200: tile_configs = [#humming.tile_config<m = [1, 16], block = [16, 64, 512], warp = [16, 64, 32]>,
// H200-SAME: #humming.tile_config<m = [17, 32], block = [32, 64, 256], warp = [32, 64, 32]>,
// H200-SAME: #humming.tile_config<m = [33, 64], block = [64, 128, 64], warp = [64, 64, 16], stages = 3>,
// H200-SAME: #humming.tile_config<m = [65, inf], block = [64, 128, 64], warp = [64, 64, 16], stages = 3>]

// The H20 has 78 SMs and a compute/memory crossover near M = 9: half the split at
// small M, and the large-M tile turns compute-bound (fewer warps).
// H20: tile_configs = [#humming.tile_config<m = [1, 16], block = [16, 64, 256], warp = [16, 64, 32]>,
// H20-SAME: #humming.tile_config<m = [17, 32], block = [32, 64, 256], warp = [32, 64, 32]>,
// H20-SAME: #humming.tile_config<m = [33, 64], block = [64, 128, 64], warp = [64, 64, 16], stages = 3>,
// H20-SAME: #humming.tile_config<m = [65, inf], block = [64, 128, 32], warp = [64, 64, 16], stages = 3>]

// The A100 has 108 SMs and 163 KiB: the small-M split still fits four slots.
// A100: tile_configs = [#humming.tile_config<m = [1, 16], block = [16, 64, 512], warp = [16, 64, 32]>,
// A100-SAME: #humming.tile_config<m = [17, 32], block = [32, 64, 256], warp = [32, 64, 32]>,
// A100-SAME: #humming.tile_config<m = [33, 64], block = [64, 128, 64], warp = [64, 64, 16], stages = 3>,
// A100-SAME: #humming.tile_config<m = [65, inf], block = [64, 128, 32], warp = [64, 64, 16], stages = 3>]

// sm_86 / sm_89 (A10, L40S; sm_89's representative is the L40S): 99 KiB
// of shared memory: three slots and an eight-way split.
// SM86: tile_configs = [#humming.tile_config<m = [1, 16], block = [16, 64, 256], warp = [16, 64, 32], stages = 3>,
// SM86-SAME: #humming.tile_config<m = [17, 32], block = [32, 64, 256], warp = [32, 64, 32], stages = 3>,

func.func @layer(%a: memref<?x4096xf16>, %w: memref<256x8192xi32>, %s: memref<32x4096xf16>, %c: memref<?x4096xf16>) {
  humming.gemm %a, %w scales(%s : memref<32x4096xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>>,
       input_schema = #humming.input_schema<type = f16>,
       layout = #humming.layout<chip = "sm_90a">}
      : memref<?x4096xf16>, memref<256x8192xi32> -> memref<?x4096xf16>
  return
}
