// humming-select-tiles for W4A8 MoE GEMMs (uint4 g128 x e4m3 per token,
// indexed routing) on the H200, from 2 to 16 tokens per expert the 16-row
// mma_sync tile, whose fp8 MMAs are f16 ones on sm_90a
// (Chip::emulatesFp8MmaSync) — [16, 128, 128] with warp_k 64 where the
// experts' 128-column blocks fill every SM twice (Qwen3-30B-A3B gate_up:
// 128 experts x 12), else [16, 64, 256] with warp_k 32 (Mixtral-8x7B down:
// 8 x 32 = 256 blocks of 132 SMs); the wgmma tiles from 17 on. On the L40S
// (sm_89: a native fp8 mma.sync) the dense rules' tiles stay.

// RUN: humming-opt %s --humming-select-tiles="device=H200" | FileCheck %s --check-prefix=H200
// RUN: humming-opt %s --humming-select-tiles="device=L40S" | FileCheck %s --check-prefix=L40S

// H200-LABEL: func.func @qwen3_gate_up
// H200: tile_configs = [#humming.tile_config<m = [1, 1], block = [16, 64, 256], warp = [16, 64, 32]
// H200-SAME: #humming.tile_config<m = [2, 16], block = [16, 128, 128], warp = [16, 64, 64], scale_after_mma = true>
// H200-SAME: #humming.tile_config<m = [17, {{.*}}mma = wgmma
// H200-LABEL: func.func @mixtral_down
// (One token per expert takes the same tile: one kernel for 1-16.)
// H200: tile_configs = [#humming.tile_config<m = [1, 16], block = [16, 64, 256], warp = [16, 64, 32], scale_after_mma = true>
// H200-SAME: #humming.tile_config<m = [17, {{.*}}mma = wgmma
// L40S-LABEL: func.func @qwen3_gate_up
// L40S: #humming.tile_config<m = [2, 16], block = [16, 128, 64], warp = [16, 64, 64], scale_after_mma = true>
// L40S-LABEL: func.func @mixtral_down
// L40S: #humming.tile_config<m = [2, 16], block = [16, 64, 128], warp = [16, 64, 64], scale_after_mma = true>
func.func @qwen3_gate_up(%a: memref<?x2048xf8E4M3FN>, %w: memref<128x64x6144xi32>, %s: memref<128x16x1536xf16>,
    %as: memref<?x1xf32>, %ids: memref<?xi32>, %eids: memref<?xi32>, %np: memref<1xi32>, %c: memref<?x1536xf16>) {
  humming.moe_gemm %a, %w scales(%s : memref<128x16x1536xf16>) input_scale(%as : memref<?x1xf32>)
      sorted_ids(%ids : memref<?xi32>) expert_ids(%eids : memref<?xi32>)
      num_tokens_padded(%np : memref<1xi32>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>, experts = 128>,
       input_schema = #humming.input_schema<type = f8E4M3FN, scaling = token>, layout = #humming.layout<chip = "sm_90a">,
       compute = #humming.compute<gemm = indexed>, top_k = 8, block_size = 384}
      : memref<?x2048xf8E4M3FN>, memref<128x64x6144xi32> -> memref<?x1536xf16>
  return
}
func.func @mixtral_down(%a: memref<?x14336xf8E4M3FN>, %w: memref<8x448x16384xi32>, %s: memref<8x112x4096xf16>,
    %as: memref<?x1xf32>, %ids: memref<?xi32>, %eids: memref<?xi32>, %np: memref<1xi32>, %r: memref<?xf32>, %c: memref<?x4096xf16>) {
  humming.moe_gemm %a, %w scales(%s : memref<8x112x4096xf16>) input_scale(%as : memref<?x1xf32>)
      sorted_ids(%ids : memref<?xi32>) expert_ids(%eids : memref<?xi32>)
      num_tokens_padded(%np : memref<1xi32>) topk_weights(%r : memref<?xf32>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>, experts = 8>,
       input_schema = #humming.input_schema<type = f8E4M3FN, scaling = token>, layout = #humming.layout<chip = "sm_90a">,
       compute = #humming.compute<gemm = indexed>, top_k = 2, block_size = 384}
      : memref<?x14336xf8E4M3FN>, memref<8x448x16384xi32> -> memref<?x4096xf16>
  return
}
