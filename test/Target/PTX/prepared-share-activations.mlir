// RUN: humming-translate %s --chip=sm_90a -o %t.ptx
// RUN: FileCheck %s --input-file=%t.ptx
// RUN: awk '/\.entry/ {e = $3} /cp\.async\.cg\.shared\.global.*, 16, %r/ {a[e]++} /ldmatrix/ {l[e]++} /bar\.warp\.sync/ {w[e]++} END {for (k in l) print k, "activation-copies", a[k] + 0, "ldmatrix", l[k] + 0, "warp-barriers", w[k] + 0}' %t.ptx | sort | FileCheck %s --check-prefix=COUNT
// RUN: %if ptxas %{ %ptxas -arch=sm_90a -v %t.ptx -o %t.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS %}
// RUN: humming-opt %s --humming-lower-to-nvvm="chip=sm_90a" | FileCheck %s --check-prefix=IR

// share_activations: the two warps along N of each K group copy one half
// each of the group's activation tiles (one 16-byte zero-filling cp.async
// per lane and tile share, where each warp copied all of them) and meet at
// the group's named barrier (1 + warp_k-group, 64 threads) instead of a
// warp barrier; the ldmatrix reads are unchanged in number.
// IR-LABEL: gpu.func @share_gemm0_m0
// IR:         nvvm.cp.async.wait.group 1
// IR-NEXT:    %[[ONE:.*]] = arith.constant 1 : i32
// IR-NEXT:    %[[ID:.*]] = arith.addi %{{.*}}, %[[ONE]] : i32
// IR-NEXT:    %[[N:.*]] = arith.constant 64 : i32
// IR-NEXT:    nvvm.barrier id = %[[ID]] number_of_threads = %[[N]]
// CHECK-LABEL: .entry share_gemm0_m0
// CHECK:       cp.async.wait_group 1;
// CHECK-NEXT:  bar.sync %r{{[0-9]+}}, 64;
// CHECK-LABEL: .entry share_gemm0_m1
// CHECK:       bar.sync %r{{[0-9]+}}, 64;
// The same tiles without the flag copy every activation tile per warp.
// CHECK-LABEL: .entry own_gemm1_m0
// CHECK:       bar.warp.sync -1;

// Per kernel: two prologue stages and the loop's. 16-token warps hold two
// tiles per iteration (one copied per warp); 32-token warps four (two per
// warp: j = warp_n + 2 r).
// COUNT: own_gemm1_m0( activation-copies 6 ldmatrix 2 warp-barriers 1
// COUNT-NEXT: share_gemm0_m0( activation-copies 3 ldmatrix 2 warp-barriers 0
// COUNT-NEXT: share_gemm0_m1( activation-copies 6 ldmatrix 4 warp-barriers 0
// PTXAS-COUNT-3: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads

#s16 = #humming.tile_config<m = [1, 16], block = [16, 128, 64], warp = [16, 64, 32], stages = 3, split_k = 2, share_activations = true>
#s32 = #humming.tile_config<m = [17, inf], block = [32, 128, 64], warp = [32, 64, 32], stages = 3, share_activations = true>
func.func @share(%a: memref<?x512xf16>, %w: memref<32x512xi32>, %s: memref<4x256xf16>, %c: memref<?x256xf16>) {
  humming.gemm %a, %w scales(%s : memref<4x256xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>>,
       input_schema = #humming.input_schema<type = f16>, layout = #humming.layout<chip = "sm_90a">,
       tile_configs = [#s16, #s32]}
      : memref<?x512xf16>, memref<32x512xi32> -> memref<?x256xf16>
  return
}

#o16 = #humming.tile_config<m = [1, inf], block = [16, 128, 64], warp = [16, 64, 32], stages = 3>
func.func @own(%a: memref<?x512xf16>, %w: memref<32x512xi32>, %s: memref<4x256xf16>, %c: memref<?x256xf16>) {
  humming.gemm %a, %w scales(%s : memref<4x256xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>>,
       input_schema = #humming.input_schema<type = f16>, layout = #humming.layout<chip = "sm_90a">,
       tile_configs = [#o16]}
      : memref<?x512xf16>, memref<32x512xi32> -> memref<?x256xf16>
  return
}
