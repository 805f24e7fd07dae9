// RUN: humming-translate %s --chip=sm_90a -o - | FileCheck %s

// 8-bit weights: a lane's part of a k-tile is 32 bytes. The warp copies the
// tile's kilobyte in global order, lane i of copy j taking bytes
// 512 j + 16 i (coalesced: every 32-byte sector whole, in one copy), and
// lane L reads its 32 bytes back from byte 512 (L / 16) + 32 (L % 16) of
// the pair of chunks after the warp barrier (other lanes copied them).
// CHECK-LABEL: .entry int8_gemm0_m0
// CHECK:       cp.async.cg.shared.global [[[DST:%rd[0-9]+]]], [[[SRC:%rd[0-9]+]]], 16;
// CHECK-NEXT:  cp.async.cg.shared.global [[[DST]]+512], [[[SRC]]+512], 16;
// CHECK:       cp.async.wait_group
// CHECK-NEXT:  bar.warp.sync
// CHECK-DAG:   ld.shared.v4.b32 {{.*}}, [[[RD:%rd[0-9]+]]+16];
// CHECK-DAG:   ld.shared.v4.b32 {{.*}}, [[[RD]]];
// CHECK:       mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32

#t = #humming.tile_config<block = [16, 64, 64], warp = [16, 64, 32], stages = 3>
func.func @int8(%a: memref<?x128xf16>, %w: memref<8x512xi32>, %s: memref<1x128xf16>, %c: memref<?x128xf16>) {
  humming.gemm %a, %w scales(%s : memref<1x128xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui8, scale = f16, granularity = channel>,
       input_schema = #humming.input_schema<type = f16>, layout = #humming.layout<chip = "sm_90a">, tile_configs = [#t]}
      : memref<?x128xf16>, memref<8x512xi32> -> memref<?x128xf16>
  return
}
