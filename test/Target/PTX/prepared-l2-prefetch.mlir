// RUN: humming-translate %s --chip=sm_90a -o %t.ptx
// RUN: FileCheck %s --input-file=%t.ptx
// RUN: awk '/\.entry/ {e = $3} /cp\.async\.bulk\.prefetch\.L2/ {p[e]++} END {for (k in p) print k, "prefetch", p[k]}' %t.ptx | sort | FileCheck %s --check-prefix=COUNT
// RUN: %if ptxas %{ %ptxas -arch=sm_90a %t.ptx -o %t.cubin %}
// RUN: humming-opt %s --humming-lower-to-nvvm="chip=sm_90a" | FileCheck %s --check-prefix=IR

// l2_prefetch = 2: after the prologue's copies (stages - 1 iterations) the
// kernel asks L2 for the weights of the next two iterations — before the
// griddepcontrol.wait, as the weights are constants — and every iteration
// for those two beyond the one it copies. A warp's own copies prefetch its
// n-tile of each of its k-tiles (512 bytes of 4-bit codes), cooperative
// blocks their n-tiles of each k-tile of the iteration (1 KiB for two).
// IR-LABEL: gpu.func @warp_gemm0_m0
// IR:         %[[W:.*]] = arith.constant 512 : i32
// IR-NEXT:    %[[SRC:.*]] = llvm.getelementptr %arg1
// IR-NEXT:    nvvm.cp.async.bulk.prefetch %[[SRC]], %[[W]] : <1>
// IR-LABEL: gpu.func @shared_gemm1_m0
// IR:         %[[B:.*]] = arith.constant 1024 : i32
// IR-NEXT:    %[[SRC:.*]] = llvm.getelementptr %arg1
// IR-NEXT:    nvvm.cp.async.bulk.prefetch %[[SRC]], %[[B]] : <1>
// CHECK-LABEL: .entry warp_gemm0_m0
// CHECK:         cp.async.bulk.prefetch.L2.global [%rd{{[0-9]+}}], %r{{[0-9]+}};
// CHECK:         cp.async.bulk.prefetch.L2.global [%rd{{[0-9]+}}], %r{{[0-9]+}};
// CHECK:         griddepcontrol.wait;
// In the loop, ahead of the wait for the iteration's copies:
// CHECK:         cp.async.bulk.prefetch.L2.global [%rd{{[0-9]+}}], %r{{[0-9]+}};
// CHECK-NEXT:  $L__BB
// CHECK-NEXT:    cp.async.wait_group 1;
// CHECK-LABEL: .entry shared_gemm1_m0
// CHECK:         cp.async.bulk.prefetch.L2.global [%rd{{[0-9]+}}], %r{{[0-9]+}};
// CHECK:         cp.async.bulk.prefetch.L2.global [%rd{{[0-9]+}}], %r{{[0-9]+}};
// CHECK:         griddepcontrol.wait;
// In the loop, ahead of the wait for the iteration's copies:
// CHECK:         cp.async.bulk.prefetch.L2.global [%rd{{[0-9]+}}], %r{{[0-9]+}};
// CHECK-NEXT:  $L__BB
// CHECK-NEXT:    cp.async.wait_group 1;
// COUNT: shared_gemm1_m0( prefetch 3
// COUNT-NEXT: warp_gemm0_m0( prefetch 3

#warp = #humming.tile_config<m = [1, inf], block = [16, 64, 64], warp = [16, 64, 32], stages = 3, l2_prefetch = 2>
func.func @warp(%a: memref<?x1024xf16>, %w: memref<64x256xi32>, %s: memref<8x128xf16>, %c: memref<?x128xf16>) {
  humming.gemm %a, %w scales(%s : memref<8x128xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>>,
       input_schema = #humming.input_schema<type = f16>, layout = #humming.layout<chip = "sm_90a">,
       tile_configs = [#warp]}
      : memref<?x1024xf16>, memref<64x256xi32> -> memref<?x128xf16>
  return
}

#shared = #humming.tile_config<m = [1, inf], block = [16, 128, 64], warp = [16, 64, 32], stages = 3, block_copies = true, l2_prefetch = 2>
func.func @shared(%a: memref<?x1024xf16>, %w: memref<64x512xi32>, %s: memref<8x256xf16>, %c: memref<?x256xf16>) {
  humming.gemm %a, %w scales(%s : memref<8x256xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>>,
       input_schema = #humming.input_schema<type = f16>, layout = #humming.layout<chip = "sm_90a">,
       tile_configs = [#shared]}
      : memref<?x1024xf16>, memref<64x512xi32> -> memref<?x256xf16>
  return
}
