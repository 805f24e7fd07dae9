// RUN: humming-translate %s --chip=sm_90a -o %t.ptx
// RUN: FileCheck %s --input-file=%t.ptx
// RUN: awk '/\.entry/ {e = $3} /fma\.rn\.f32/ {f[e]++} /cvt\.f32\.f16/ {c[e]++} /mul\.rn\.f16x2/ {m[e]++} /mma\.sync/ {y[e]++} /shfl\.sync/ {h[e]++} /ldmatrix.*\.x2/ {x[e]++} END {for (k in f) print k, "fma", f[k] + 0, "cvt", c[k] + 0, "mul", m[k] + 0, "mma", y[k] + 0, "shfl", h[k] + 0, "x2", x[k] + 0}' %t.ptx | sort | FileCheck %s --check-prefix=COUNT

// scale_after_mma: the dequantized pairs are not scaled (no mul.rn.f16x2 in
// the kernels); each warp's MMAs of an iteration start from zero (the C
// operand one zero register) and the sums join the accumulators through one
// f32 fma per element by its column's scale, converted from f16 once per
// iteration (16 columns per lane). A tile serving more than 8 tokens
// scales all 32 C elements, 8 MMAs per k-tile (the activations the A
// operand, ldmatrix.x4).
// A tile serving at most 8 tokens takes the transposed product
// (weightsAsA): per k-tile four m16n8k16 MMAs with the dequantized
// weights as A and tokens 0..7 as B (ldmatrix.x2), 16 fma per iteration by
// the 8 scales of the lane's B columns (8 cvt), and 32 shuffles after the
// loop back to the C layout of the epilogue.
// CHECK-LABEL: .entry int4_gemm0_m0
// CHECK:       mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// CHECK-NEXT:    {{.*}},
// CHECK-NEXT:    {{.*}},
// CHECK-NEXT:    {{.*}},
// CHECK-NEXT:    {[[Z:%r[0-9]+]], [[Z]], [[Z]], [[Z]]};
// CHECK:       fma.rn.f32
// CHECK:       shfl.sync.idx.b32
// CHECK-LABEL: .entry int4_gemm0_m1
// CHECK:       mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// CHECK-NEXT:    {{.*}},
// CHECK-NEXT:    {{.*}},
// CHECK-NEXT:    {{.*}},
// CHECK-NEXT:    {[[Z2:%r[0-9]+]], [[Z2]], [[Z2]], [[Z2]]};
// CHECK:       fma.rn.f32
// COUNT: int4_gemm0_m0( fma 16 cvt 8 mul 0 mma 8 shfl 32 x2 2
// COUNT-NEXT: int4_gemm0_m1( fma 32 cvt 16 mul 0 mma 16 shfl 0 x2 0
// The shared-activation tile (block_copies, two warps along N, K split in
// two inside the block): each lane reads its C columns' 16 scales from the
// block's copy of the group's row; at most 8 tokens, the 8 of its B
// columns (the transposed product).
// COUNT-NEXT: shared_gemm1_m0( fma 16 cvt 8 mul 0 mma 8 shfl 32 x2 2
// COUNT-NEXT: shared_gemm1_m1( fma 32 cvt 16 mul 0 mma 16 shfl 0 x2 0
// Batch-invariant layers keep the MMAs' operand roles at every M (a row's
// result may not depend on M): no transposed product.
// COUNT-NEXT: steady_gemm2_m0( fma 16 cvt 16 mul 0 mma 16 shfl 0 x2 0
// COUNT-NEXT: steady_gemm2_m1( fma 32 cvt 16 mul 0 mma 16 shfl 0 x2 0

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

#shared8 = #humming.tile_config<m = [1, 8], block = [16, 128, 64], warp = [16, 64, 32], stages = 3, block_copies = true, scale_after_mma = true>
#shared = #humming.tile_config<m = [9, inf], block = [16, 128, 64], warp = [16, 64, 32], stages = 3, block_copies = true, scale_after_mma = true>
func.func @shared(%a: memref<?x256xf16>, %w: memref<16x512xi32>, %s: memref<2x256xf16>, %c: memref<?x256xf16>) {
  humming.gemm %a, %w scales(%s : memref<2x256xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>>,
       input_schema = #humming.input_schema<type = f16>, layout = #humming.layout<chip = "sm_90a">,
       tile_configs = [#shared8, #shared]}
      : memref<?x256xf16>, memref<16x512xi32> -> memref<?x256xf16>
  return
}

#steady = #humming.tile_config<m = [1, 8], block = [16, 64, 32], warp = [16, 64, 32], stages = 3, scale_after_mma = true>
#steadyRest = #humming.tile_config<m = [9, inf], block = [16, 64, 32], warp = [16, 64, 32], stages = 3, scale_after_mma = true>
func.func @steady(%a: memref<?x256xf16>, %w: memref<16x256xi32>, %s: memref<2x128xf16>, %c: memref<?x128xf16>) {
  humming.gemm %a, %w scales(%s : memref<2x128xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>>,
       input_schema = #humming.input_schema<type = f16>, layout = #humming.layout<chip = "sm_90a">,
       compute = #humming.compute<batch_invariant = true>,
       tile_configs = [#steady, #steadyRest]}
      : memref<?x256xf16>, memref<16x256xi32> -> memref<?x128xf16>
  return
}
