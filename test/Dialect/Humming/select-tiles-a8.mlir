// humming-select-tiles for 8-bit activations (W4A8 uint4 g128 x e4m3,
// 4096 x 4096): the L40S's mma_sync m16n8k32 tiles; on the H200 the wgmma
// tiles, except M <= 16 where their 16 blocks leave SMs idle: there the
// 16-row mma_sync tile. Its fp8 MMAs are f16 ones on sm_90a (no fp8
// mma.sync there: Chip::emulatesFp8MmaSync), at sm_90a's own PTX ISA.

// RUN: humming-opt %s --humming-select-tiles="device=L40S" | FileCheck %s --check-prefix=SM89
// RUN: humming-opt %s --humming-select-tiles="device=H200" | FileCheck %s --check-prefix=H200

// SM89: tile_configs = [#humming.tile_config<m = [1, 16], block = [16, 64, 512], warp = [16, 64, 64], stages = 3, split_k = 2, scale_after_mma = true>,
// SM89-SAME: #humming.tile_config<m = [17, 64], block = [32, 64, {{[0-9]+}}], warp = [32, 64, 64]
// SM89-NOT: wgmma
// H200: tile_configs = [#humming.tile_config<m = [1, 16], block = [16, 64, 512], warp = [16, 64, 64], split_k = 2, scale_after_mma = true>,
// H200-SAME: #humming.tile_config<m = [17, {{.*}}mma = wgmma
func.func @w4a8(%a: memref<?x4096xf8E4M3FN>, %w: memref<128x16384xi32>, %s: memref<32x4096xf16>, %as: memref<?x1xf32>, %c: memref<?x4096xf16>) {
  humming.gemm %a, %w scales(%s : memref<32x4096xf16>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>>,
       input_schema = #humming.input_schema<type = f8E4M3FN, scaling = token>, layout = #humming.layout<chip = "sm_90a">}
      : memref<?x4096xf8E4M3FN>, memref<128x16384xi32> -> memref<?x4096xf16>
  return
}
