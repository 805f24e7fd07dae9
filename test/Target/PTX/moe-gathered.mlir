// RUN: humming-opt %s --humming-lower-to-nvvm="chip=sm_90a" | FileCheck %s --check-prefix=TABLE
// RUN: humming-translate %s --chip=sm_90a -o %t.ptx
// RUN: awk '/\.entry/ {e = $3} /cp\.async\.cg/ {g[e]++} /cp\.async\.bulk\.shared::cluster\.global/ {k[e]++} /cp\.async\.bulk\.tensor/ {t[e]++} /tensormap/ {m[e]++} END {for (x in g) print x, "cg", g[x] + 0, "bulk", k[x] + 0, "tensor", t[x] + 0, "map", m[x] + 0}' %t.ptx | sort | FileCheck %s
// REQUIRES: ptxas
// RUN: %ptxas -arch=sm_90a -v %t.ptx -o %t.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS

// A warp-specialized MoE tile with tma = [a, b]: the block's rows are
// scattered tokens and sm_90's TMA gathers no rows, so the producers copy
// each row's 16-byte units with cp.async into the layout the tensor copy
// would leave (TMA's 128-byte swizzle: the consumers' wgmma descriptors
// read it as they do in the dense kernel), while the expert's weights come
// by one bulk copy per k-tile. 64 tokens x 128 bytes per iteration are 512
// units: four per producer thread, plus one for the group scales. No
// tensor map: the kernel table asks the runtime for none (input_map = 0).
// TABLE: input_map = 0 : i64{{.*}}name = "gathered_moe_gemm0_m0"
// CHECK: gathered_moe_gemm0_m0( cg 5 bulk 4 tensor 0 map 0
// PTXAS: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads

#ws = #humming.tile_config<block = [64, 256, 64], warp = [64, 32, 64], mma = wgmma, warp_specialized = true, mbarrier = true, tma = [a, b]>
func.func @gathered(%a: memref<?x1024xf16>, %w: memref<8x64x512xi32>,
    %s: memref<8x8x256xf16>, %ids: memref<?xi32>, %eids: memref<?xi32>, %ntp: memref<1xi32>,
    %c: memref<?x256xf16>) {
  humming.moe_gemm %a, %w scales(%s : memref<8x8x256xf16>)
      sorted_ids(%ids : memref<?xi32>) expert_ids(%eids : memref<?xi32>)
      num_tokens_padded(%ntp : memref<1xi32>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>, experts = 8>,
       input_schema = #humming.input_schema<type = f16>,
       layout = #humming.layout<chip = "sm_90a">,
       compute = #humming.compute<gemm = indexed>, top_k = 2, block_size = 64,
       tile_configs = [#ws]}
      : memref<?x1024xf16>, memref<8x64x512xi32> -> memref<?x256xf16>
  return
}
