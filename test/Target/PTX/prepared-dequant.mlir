// RUN: humming-translate %s --chip=sm_90a -o - | FileCheck %s

// The dequantization sequences of the prepared kernels, in the PTX.

// Unsigned 4-bit codes, f16: one lop3 ((w & mask) | magic, LUT 0xEA, the
// magic number in a register: with two immediates ptxas would need two
// LOP3s) puts both codes of a pair in the two 16-bit lanes (mask 0x000F000F)
// as 1024 + code, one packed add of -(1024 + 8) (0xE408E408) subtracts magic
// and the symmetric zero, one packed multiply applies the group scale.
// CHECK-LABEL: .entry int4_gemm0_m0
// CHECK:       mov.b32 [[M:%r[0-9]+]], 1677747200;
// CHECK-NEXT:  // begin inline asm
// CHECK-NEXT:  lop3.b32 [[MAGIC:%r[0-9]+]], [[W:%r[0-9]+]], 983055, [[M]], 0xEA;
// CHECK-NEXT:  // end inline asm
// CHECK-NEXT:  mov.b32 [[ZERO:%r[0-9]+]], -469179384;
// CHECK-NEXT:  add.rn.f16x2 [[Q:%r[0-9]+]], [[MAGIC]], [[ZERO]];
// CHECK-NEXT:  mul.rn.f16x2 {{%r[0-9]+}}, [[Q]], {{%r[0-9]+}};
// The pair in the high nibbles of the same bytes is masked in place
// (0x00F000F0: 1024 + 16 code per lane after the OR), one packed fma by
// 1/16 (0x2C002C00) and -(1024 / 16 + 8) (0xD480D480) gives code - 8, and
// one shift by 8 serves the word's other two pairs: no shift by 4 or 12.
// CHECK-NEXT:  // begin inline asm
// CHECK-NEXT:  lop3.b32 [[HIM:%r[0-9]+]], [[W]], 15728880, [[M]], 0xEA;
// CHECK-NEXT:  // end inline asm
// CHECK-NEXT:  mov.b32 [[OFF:%r[0-9]+]], -729754496;
// CHECK-NEXT:  mov.b32 [[INV:%r[0-9]+]], 738208768;
// CHECK-NEXT:  fma.rn.f16x2 {{%r[0-9]+}}, [[HIM]], [[INV]], [[OFF]];
// CHECK:       mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// CHECK:       shr.u32 [[W8:%r[0-9]+]], [[W]], 8;
// CHECK-NEXT:  // begin inline asm
// CHECK-NEXT:  lop3.b32 {{%r[0-9]+}}, [[W8]], 983055, [[M]], 0xEA;
// CHECK-NOT:   shr.u32 {{%r[0-9]+}}, [[W]], {{4|12}};
// CHECK:       ret;

// e2m1 (MXFP4) codes, bf16: exponent and mantissa moved under bf16's
// (mask 0x01C001C0 after the shift), the sign to bit 15 of each lane
// (0x80008000), one packed multiply by 2^126 (0x7E80: bf16 bias 127 minus
// e2m1 bias 1) and one by the ue8m0 group scale (converted once per group).
// CHECK-LABEL: .entry e2m1_gemm1_m0
// CHECK:       and.b32 [[MAG:%r[0-9]+]], {{%r[0-9]+}}, 29360576;
// CHECK:       and.b32 [[SIGN:%r[0-9]+]], {{%r[0-9]+}}, -2147450880;
// CHECK-NEXT:  or.b32 [[BITS:%r[0-9]+]], [[MAG]], [[SIGN]];
// CHECK-NEXT:  mov.b32 [[FACTOR:%r[0-9]+]], 2122350208;
// CHECK-NEXT:  mul.rn.bf16x2 [[V:%r[0-9]+]], [[BITS]], [[FACTOR]];
// CHECK-NEXT:  mul.rn.bf16x2 {{%r[0-9]+}}, [[V]], {{%r[0-9]+}};
// CHECK:       mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32

// Unsigned 2-bit codes, bf16 (7 mantissa bits): pairs at bits 0, 2 and 4
// of a word come in place (masks 0x00030003, 0x000C000C, 0x00300030, each
// in one lop3 with the magic number 0x43004300), the others after shifts by
// 6 and 12; fma by 1/4 (0x3E803E80) and -(128 / 4 + 2) = -34 (0xC208C208)
// for the pair at bit 2.
// CHECK-LABEL: .entry int2_gemm2_m0
// CHECK:       mov.b32 [[M2:%r[0-9]+]], 1124090624;
// CHECK:       lop3.b32 {{%r[0-9]+}}, [[W2:%r[0-9]+]], 196611, [[M2]], 0xEA;
// CHECK:       lop3.b32 [[P2M:%r[0-9]+]], [[W2]], 786444, [[M2]], 0xEA;
// CHECK-NEXT:  // end inline asm
// CHECK-NEXT:  mov.b32 [[OFF2:%r[0-9]+]], -1039613432;
// CHECK-NEXT:  mov.b32 [[INV2:%r[0-9]+]], 1048592000;
// CHECK-NEXT:  fma.rn.bf16x2 {{%r[0-9]+}}, [[P2M]], [[INV2]], [[OFF2]];
// CHECK:       lop3.b32 {{%r[0-9]+}}, [[W2]], 3145776, [[M2]], 0xEA;
// CHECK:       shr.u32 {{%r[0-9]+}}, [[W2]], 6;
// CHECK:       shr.u32 {{%r[0-9]+}}, [[W2]], 12;
// CHECK:       mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32

// Unsigned 8-bit codes, bf16: bf16's 7 mantissa bits hold a code's low
// seven bits in 128's mantissa (one lop3, mask 0x007F007F, magic
// 0x43004300); its bit 7 flips bit 7 of 256 (0x4380, and + xor with
// 0x00800080 / 0x43804380), so one packed subtraction leaves code - 128:
// 256 off where bit 7 is clear, 128 where set. Then the group scale.
// CHECK-LABEL: .entry int8_gemm3_m0
// CHECK:       mov.b32 [[M8:%r[0-9]+]], 1124090624;
// CHECK:       lop3.b32 [[LOW:%r[0-9]+]], [[W8W:%r[0-9]+]], 8323199, [[M8]], 0xEA;
// CHECK-NEXT:  // end inline asm
// CHECK-NEXT:  and.b32 [[H:%r[0-9]+]], [[W8W]], 8388736;
// CHECK-NEXT:  xor.b32 [[LESS:%r[0-9]+]], [[H]], 1132479360;
// CHECK-NEXT:  sub.rn.bf16x2 [[V8:%r[0-9]+]], [[LOW]], [[LESS]];
// CHECK-NEXT:  mul.rn.bf16x2 {{%r[0-9]+}}, [[V8]], {{%r[0-9]+}};
// CHECK-NEXT:  shr.u32 {{%r[0-9]+}}, [[W8W]], 8;
// CHECK:       mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32

#t = #humming.tile_config<block = [16, 64, 64], warp = [16, 64, 32], stages = 3>
func.func @int4(%a: memref<?x128xf16>, %w: memref<8x256xi32>, %s: memref<1x128xf16>, %c: memref<?x128xf16>) {
  humming.gemm %a, %w scales(%s : memref<1x128xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>>,
       input_schema = #humming.input_schema<type = f16>, layout = #humming.layout<chip = "sm_90a">, tile_configs = [#t]}
      : memref<?x128xf16>, memref<8x256xi32> -> memref<?x128xf16>
  return
}
func.func @e2m1(%a: memref<?x128xbf16>, %w: memref<8x256xi32>, %s: memref<4x128xf8E8M0FNU>, %c: memref<?x128xbf16>) {
  humming.gemm %a, %w scales(%s : memref<4x128xf8E8M0FNU>) into %c
      {weight_schema = #humming.weight_schema<type = f4E2M1FN, scale = f8E8M0FNU, granularity = group<32>>,
       input_schema = #humming.input_schema<type = bf16>, layout = #humming.layout<chip = "sm_90a">, tile_configs = [#t]}
      : memref<?x128xbf16>, memref<8x256xi32> -> memref<?x128xbf16>
  return
}
func.func @int2(%a: memref<?x128xbf16>, %w: memref<8x128xi32>, %s: memref<1x128xbf16>, %c: memref<?x128xbf16>) {
  humming.gemm %a, %w scales(%s : memref<1x128xbf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui2, scale = bf16, granularity = group<128>>,
       input_schema = #humming.input_schema<type = bf16>, layout = #humming.layout<chip = "sm_90a">, tile_configs = [#t]}
      : memref<?x128xbf16>, memref<8x128xi32> -> memref<?x128xbf16>
  return
}
func.func @int8(%a: memref<?x128xbf16>, %w: memref<8x512xi32>, %s: memref<1x128xbf16>, %c: memref<?x128xbf16>) {
  humming.gemm %a, %w scales(%s : memref<1x128xbf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui8, scale = bf16, granularity = group<128>>,
       input_schema = #humming.input_schema<type = bf16>, layout = #humming.layout<chip = "sm_90a">, tile_configs = [#t]}
      : memref<?x128xbf16>, memref<8x512xi32> -> memref<?x128xbf16>
  return
}
