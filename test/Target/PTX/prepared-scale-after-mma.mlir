// RUN: humming-translate %s --chip=sm_90a -o %t.ptx
// RUN: FileCheck %s --input-file=%t.ptx
// RUN: awk '/\.entry/ {e = $3} /fma\.rn\.f32/ {f[e]++} /cvt\.f32\.f16/ {c[e]++} /mul\.rn\.f16x2/ {m[e]++} END {for (k in f) print k, "fma", f[k] + 0, "cvt", c[k] + 0, "mul", m[k] + 0}' %t.ptx | sort | FileCheck %s --check-prefix=COUNT

// scale_after_mma: the dequantized pairs are not scaled (no mul.rn.f16x2 in
// the kernels); each warp's MMAs of an iteration start from zero (the C
// operand one zero register) and the sums join the accumulators through one
// f32 fma per element by its column's scale, converted from f16 once per
// iteration (16 columns per lane). A tile serving at most 8 tokens scales
// only the C rows g (16 fma per iteration); one serving more, all 32.
// CHECK-LABEL: .entry int4_gemm0_m0
// CHECK:       mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// CHECK-NEXT:    {{.*}},
// CHECK-NEXT:    {{.*}},
// CHECK-NEXT:    {{.*}},
// CHECK-NEXT:    {[[Z:%r[0-9]+]], [[Z]], [[Z]], [[Z]]};
// CHECK:       fma.rn.f32
// CHECK-LABEL: .entry int4_gemm0_m1
// CHECK:       fma.rn.f32
// COUNT: int4_gemm0_m0( fma 16 cvt 16 mul 0
// COUNT-NEXT: int4_gemm0_m1( fma 32 cvt 16 mul 0
// The shared-activation tile (block_copies, two warps along N, K split in
// two inside the block): each lane reads its C columns' 16 scales from the
// block's copy of the group's row.
// COUNT-NEXT: shared_gemm1_m0( fma 32 cvt 16 mul 0

#few = #humming.tile_config<m = [1, 8], block = [16, 64, 64], warp = [16, 64, 32], stages = 3, scale_after_mma = true>
#more = #humming.tile_config<m = [9, inf], block = [16, 64, 64], warp = [16, 64, 32], stages = 3, scale_after_mma = true>
func.func @int4(%a: memref<?x256xf16>, %w: memref<16x256xi32>, %s: memref<2x128xf16>, %c: memref<?x128xf16>) {
  humming.gemm %a, %w scales(%s : memref<2x128xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>>,
       input_schema = #humming.input_schema<type = f16>, layout = #humming.layout<chip = "sm_90a">,
       tile_configs = [#few, #more]}
      : memref<?x256xf16>, memref<16x256xi32> -> memref<?x128xf16>
  return
}

#shared = #humming.tile_config<m = [1, inf], block = [16, 128, 64], warp = [16, 64, 32], stages = 3, block_copies = true, scale_after_mma = true>
func.func @shared(%a: memref<?x256xf16>, %w: memref<16x512xi32>, %s: memref<2x256xf16>, %c: memref<?x256xf16>) {
  humming.gemm %a, %w scales(%s : memref<2x256xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>>,
       input_schema = #humming.input_schema<type = f16>, layout = #humming.layout<chip = "sm_90a">,
       tile_configs = [#shared]}
      : memref<?x256xf16>, memref<16x512xi32> -> memref<?x256xf16>
  return
}
