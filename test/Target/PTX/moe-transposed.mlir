// RUN: humming-translate %s --chip=sm_90a -o %t.ptx
// RUN: awk '/\.entry/ {e = $3} /fma\.rn\.f32/ {f[e]++} /cvt\.f32\.f16/ {c[e]++} /mma\.sync/ {y[e]++} /shfl\.sync/ {h[e]++} /ldmatrix.*\.x2/ {x[e]++} /bar\.red\.or/ {r[e]++} END {for (k in f) print k, "fma", f[k] + 0, "cvt", c[k] + 0, "mma", y[k] + 0, "shfl", h[k] + 0, "x2", x[k] + 0, "red", r[k] + 0}' %t.ptx | sort | FileCheck %s
// REQUIRES: ptxas
// RUN: %ptxas -arch=sm_90a -v %t.ptx -o %t.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS
// RUN: %ptxas -arch=sm_90a -v %t.ptx -o %t.cubin 2>&1 | FileCheck %s --check-prefix=REGS

// A MoE kernel for one token per expert (the range t <= 1) with a 16-row
// mma.sync tile takes the transposed product: the dequantized weights the
// m16n8k16 A operand, tokens 0..7 of the block the B operand (ldmatrix.x2),
// four MMAs per k-tile instead of eight, 16 fma per iteration by the 8
// scales of the lane's B columns, 32 shuffles after the loop. An expert
// may still get more rows than the tile was chosen for, so the block runs
// in passes of eight rows: a second reduction over the block (bar.red.or)
// finds whether rows 8-15 hold a token, and only then a second pass over K.
// The kernel for two tokens per expert and more keeps the MMAs' roles, and
// so does one whose CTAs sum less than 512 of K (kMoeTransposedMinDepth:
// the shuffles and the reduction may cost more than the MMAs saved). A K
// split in a cluster takes it too (1024 of K per CTA here).
// CHECK: indexed_moe_gemm0_m0( fma 16 cvt 8 mma 8 shfl 32 x2 2 red 2
// CHECK-NEXT: indexed_moe_gemm0_m1( fma 32 cvt 16 mma 16 shfl 0 x2 0 red 1
// CHECK-NEXT: shallow_moe_gemm1_m0( fma 32 cvt 16 mma 16 shfl 0 x2 0 red 1
// CHECK-NEXT: shallow_moe_gemm1_m1( fma 32 cvt 16 mma 16 shfl 0 x2 0 red 1
// CHECK-NEXT: split_moe_gemm2_m0( fma 16 cvt 8 mma 8 shfl 32 x2 2 red 2
// CHECK-NEXT: split_moe_gemm2_m1( fma 32 cvt 16 mma 16 shfl 0 x2 0 red 1
// Each pass recomputes the thread's coordinates from an opaque tid: with
// them hoisted out of the pass loop the kernel kept its addresses live
// across it (Qwen3-30B-A3B's gate_up kernel 120 registers, 64 without; the
// cluster split 231, 79 without).
// (ptxas reports the entries last to first.)
// REGS-LABEL: Compiling entry function 'split_moe_gemm2_m0'
// REGS: Used {{[1-7]?[0-9]}} registers
// REGS-LABEL: Compiling entry function 'indexed_moe_gemm0_m0'
// REGS: Used {{[1-7]?[0-9]}} registers
// PTXAS-COUNT-6: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads

#one = #humming.tile_config<m = [1, 1], block = [16, 64, 64], warp = [16, 64, 32], stages = 3, scale_after_mma = true>
#more = #humming.tile_config<m = [2, inf], block = [16, 64, 64], warp = [16, 64, 32], stages = 3, scale_after_mma = true>
func.func @indexed(%a: memref<?x1024xf16>, %w: memref<8x64x256xi32>,
    %s: memref<8x8x128xf16>, %ids: memref<?xi32>, %eids: memref<?xi32>, %ntp: memref<1xi32>,
    %c: memref<?x128xf16>) {
  humming.moe_gemm %a, %w scales(%s : memref<8x8x128xf16>)
      sorted_ids(%ids : memref<?xi32>) expert_ids(%eids : memref<?xi32>)
      num_tokens_padded(%ntp : memref<1xi32>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>, experts = 8>,
       input_schema = #humming.input_schema<type = f16>,
       layout = #humming.layout<chip = "sm_90a">,
       compute = #humming.compute<gemm = indexed>, top_k = 2, block_size = 16,
       tile_configs = [#one, #more]}
      : memref<?x1024xf16>, memref<8x64x256xi32> -> memref<?x128xf16>
  return
}

func.func @shallow(%a: memref<?x384xf16>, %w: memref<8x24x256xi32>,
    %s: memref<8x3x128xf16>, %ids: memref<?xi32>, %eids: memref<?xi32>, %ntp: memref<1xi32>,
    %c: memref<?x128xf16>) {
  humming.moe_gemm %a, %w scales(%s : memref<8x3x128xf16>)
      sorted_ids(%ids : memref<?xi32>) expert_ids(%eids : memref<?xi32>)
      num_tokens_padded(%ntp : memref<1xi32>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>, experts = 8>,
       input_schema = #humming.input_schema<type = f16>,
       layout = #humming.layout<chip = "sm_90a">,
       compute = #humming.compute<gemm = indexed>, top_k = 2, block_size = 16,
       tile_configs = [#one, #more]}
      : memref<?x384xf16>, memref<8x24x256xi32> -> memref<?x128xf16>
  return
}

#oneSplit = #humming.tile_config<m = [1, 1], block = [16, 64, 64], warp = [16, 64, 32], stages = 3, split_k = 2, cluster_split = true, scale_after_mma = true>
func.func @split(%a: memref<?x2048xf16>, %w: memref<8x128x256xi32>,
    %s: memref<8x16x128xf16>, %ids: memref<?xi32>, %eids: memref<?xi32>, %ntp: memref<1xi32>,
    %c: memref<?x128xf16>) {
  humming.moe_gemm %a, %w scales(%s : memref<8x16x128xf16>)
      sorted_ids(%ids : memref<?xi32>) expert_ids(%eids : memref<?xi32>)
      num_tokens_padded(%ntp : memref<1xi32>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>, experts = 8>,
       input_schema = #humming.input_schema<type = f16>,
       layout = #humming.layout<chip = "sm_90a">,
       compute = #humming.compute<gemm = indexed>, top_k = 2, block_size = 16,
       tile_configs = [#oneSplit, #more]}
      : memref<?x2048xf16>, memref<8x128x256xi32> -> memref<?x128xf16>
  return
}
