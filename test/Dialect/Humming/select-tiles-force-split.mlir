// RUN: humming-opt %s --humming-select-tiles="device=H200 force-tile-config='#humming.tile_config<m = [1, 16], block = [16, 64, 256], warp = [16, 64, 32], split_k = 4>'" | FileCheck %s

// A forced split of K across CTAs serves M up to its range's top and the
// same tile without the split serves the rest (a split needs a bounded
// range: its workspace is sized for the range's largest M).
// CHECK: tile_configs = [#humming.tile_config<m = [1, 16], block = [16, 64, 256], warp = [16, 64, 32], split_k = 4>, #humming.tile_config<m = [17, inf], block = [16, 64, 256], warp = [16, 64, 32]>]
func.func @prepared(%a: memref<?x4096xf16>, %w: memref<256x8192xi32>, %s: memref<32x4096xf16>, %c: memref<?x4096xf16>) {
  humming.gemm %a, %w scales(%s : memref<32x4096xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>>,
       input_schema = #humming.input_schema<type = f16>,
       layout = #humming.layout<chip = "sm_90a">}
      : memref<?x4096xf16>, memref<256x8192xi32> -> memref<?x4096xf16>
  return
}
