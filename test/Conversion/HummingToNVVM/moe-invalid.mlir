// RUN: humming-opt %s -split-input-file --humming-lower-to-nvvm="chip=sm_90a" -verify-diagnostics

// The MoE kernels run over prepared weights only.
func.func @canonical(%a: memref<?x512xf16>, %w: memref<8x256x64xi32>, %s: memref<8x256x4xf16>,
                     %offs: memref<9xi32>, %c: memref<?x256xf16>) {
  // expected-error @+1 {{humming.moe_gemm lowers over prepared weights ('layout') only; prepare the experts' weights for sm_90a (humming-legalize-schema with a chip prepares canonical ones on the device)}}
  humming.moe_gemm %a, %w scales(%s : memref<8x256x4xf16>) expert_layout(%offs : memref<9xi32>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>, experts = 8>,
       input_schema = #humming.input_schema<type = f16>, compute = #humming.compute<gemm = grouped_contiguous>}
      : memref<?x512xf16>, memref<8x256x64xi32> -> memref<?x256xf16>
  return
}

// -----

// A hand-written tile whose block_m does not divide block_size.
#t64 = #humming.tile_config<m = [1, inf], block = [64, 64, 32], warp = [64, 64, 32]>
func.func @block_m(%a: memref<?x512xf16>, %w: memref<8x32x512xi32>, %s: memref<8x4x256xf16>,
                   %ids: memref<?xi32>, %eids: memref<?xi32>, %np: memref<1xi32>, %c: memref<?x256xf16>) {
  // expected-error @+1 {{tile_configs[0]: expected block_m to divide block_size (32: a block of rows never straddles two experts), got block_m = 64}}
  humming.moe_gemm %a, %w scales(%s : memref<8x4x256xf16>)
      sorted_ids(%ids : memref<?xi32>) expert_ids(%eids : memref<?xi32>)
      num_tokens_padded(%np : memref<1xi32>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>, experts = 8>,
       input_schema = #humming.input_schema<type = f16>, layout = #humming.layout<chip = "sm_90a">,
       compute = #humming.compute<gemm = indexed>, top_k = 2, block_size = 32, tile_configs = [#t64]}
      : memref<?x512xf16>, memref<8x32x512xi32> -> memref<?x256xf16>
  return
}

// -----

// A split through the workspace (sized for a dense grid's output tiles).
#split = #humming.tile_config<m = [1, 16], block = [16, 64, 32], warp = [16, 64, 32], split_k = 2>
#rest = #humming.tile_config<m = [17, inf], block = [16, 64, 32], warp = [16, 64, 32]>
func.func @workspace(%a: memref<?x512xf16>, %w: memref<8x32x512xi32>, %s: memref<8x4x256xf16>,
                     %counts: memref<8xi32>, %c: memref<?x256xf16>) {
  // expected-error @+1 {{tile_configs[0]: expected split_k = 1 or a split in a thread block cluster in a MoE kernel (the workspace holds a dense grid's output tiles), got split_k = 2 without cluster_split}}
  humming.moe_gemm %a, %w scales(%s : memref<8x4x256xf16>) expert_layout(%counts : memref<8xi32>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>, experts = 8>,
       input_schema = #humming.input_schema<type = f16>, layout = #humming.layout<chip = "sm_90a">,
       compute = #humming.compute<gemm = grouped_masked>, tile_configs = [#split, #rest]}
      : memref<?x512xf16>, memref<8x32x512xi32> -> memref<?x256xf16>
  return
}
