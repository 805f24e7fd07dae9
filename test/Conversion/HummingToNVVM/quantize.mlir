// RUN: humming-opt %s --humming-lower-to-nvvm="chip=sm_90a" -split-input-file | FileCheck %s

// Per token: one block of 128 threads per row (grid x = M), the activations,
// the codes and the scales in the input, output and scales slots of the
// kernel ABI; the kernel table says what the kernel is (kind = 1) and that
// block_n = K. K = 4096 is four chunks of 8 x 128: each thread
// loads its eight of each with one 16-byte load, keeps them in registers
// through the row's absmax (warp shuffles, then one value per warp through
// shared memory), converts pairs with cvt.rn.satfinite.e4m3x2.f32 and
// stores its eight codes with one 8-byte store. On sm_90 it first lets the
// kernel after it (the GEMM, launched with programmatic dependent launch)
// start: griddepcontrol.launch_dependents on entry (on sm_89 not:
// ptxas-quantize.test).
// CHECK: humming.kernels = [{block_m = 1 : i64, block_n = 4096 : i64, cluster = 1 : i64, grid_dependency = 0 : i64, input_map = 0 : i64, kind = 1 : i64, m_max = 0 : i64, m_min = 1 : i64, name = "tok_quantize0", smem = 0 : i64, split_k = 1 : i64, threads = 128 : i64}]
// CHECK-LABEL: func.func @tok
// CHECK:         %[[M:.*]] = memref.dim %arg0, %c0
// CHECK:         %[[NULL:.*]] = llvm.mlir.zero : !llvm.ptr<1>
// CHECK:         scf.if
// CHECK:           gpu.launch_func @humming_kernels::@tok_quantize0 blocks in (%[[M]], %{{.*}}, %{{.*}}) threads in (%c128, %{{.*}}, %{{.*}}) args(%{{.*}} : !llvm.ptr<1>, %[[NULL]] : !llvm.ptr<1>, %{{.*}} : !llvm.ptr<1>, %[[NULL]] : !llvm.ptr<1>, %[[NULL]] : !llvm.ptr<1>, %[[NULL]] : !llvm.ptr<1>, %{{.*}} : !llvm.ptr<1>, %{{.*}} : i32)
// CHECK:       gpu.func @tok_quantize0({{.*}}) workgroup(%{{.*}} : memref<4xf32, #gpu.address_space<workgroup>>) kernel attributes {known_block_size = array<i32: 128, 1, 1>}
// CHECK-NEXT:    nvvm.griddepcontrol launch_dependents
// CHECK-NOT:     scf.for
// CHECK-COUNT-4: llvm.load %{{.*}} invariant {alignment = 16 : i64} : !llvm.ptr<1> -> vector<8xf16>
// CHECK:         gpu.shuffle  xor %{{.*}}, %c16_i32, %c32_i32 : f32
// CHECK:         gpu.barrier
// CHECK:         arith.divf %{{.*}}, %{{.*}} : f32
// CHECK:         nvvm.convert.f32x2.to.f8x2 {{.*}} {rnd = #nvvm.fp_rnd_mode<rn>, sat = #nvvm.sat_mode<satfinite>} : i16(f8E4M3FN)
// CHECK:         llvm.store %{{.*}}, %{{.*}} {alignment = 8 : i64} : vector<8xi8>, !llvm.ptr<1>
// CHECK-NOT:     scf.for

func.func @tok(%x: memref<?x4096xf16>, %q: memref<?x4096xf8E4M3FN>, %s: memref<?x1xf32>) {
  humming.quantize %x into %q scales(%s : memref<?x1xf32>)
      {schema = #humming.input_schema<type = f8E4M3FN, scaling = token>}
      : memref<?x4096xf16> -> memref<?x4096xf8E4M3FN>
  return
}

// -----

// K = 16384 does not stay in registers: the absmax loop reads the row, a
// second loop reads it again and converts.
// CHECK-LABEL: gpu.func @long_quantize0
// CHECK:         scf.for {{.*}} iter_args
// CHECK:           vector<8xbf16>
// CHECK:         gpu.barrier
// CHECK:         scf.for
// CHECK:           vector<8xbf16>
// CHECK:           nvvm.convert.f32x2.to.f8x2

func.func @long(%x: memref<?x16384xbf16>, %q: memref<?x16384xf8E4M3FN>, %s: memref<?x1xf32>) {
  humming.quantize %x into %q scales(%s : memref<?x1xf32>)
      {schema = #humming.input_schema<type = f8E4M3FN, scaling = token>}
      : memref<?x16384xbf16> -> memref<?x16384xf8E4M3FN>
  return
}

// -----

// Per group of 64 (8 lanes of 8 elements): three shuffles within the group,
// no barrier, int8 codes by clamping, rounding half to even (1.5 x 2^23
// added and subtracted) and converting; the group's first lane writes its
// scale at [row, column / 64].
// CHECK-LABEL: gpu.func @grp_quantize0
// CHECK-NOT:     gpu.barrier
// CHECK:         gpu.shuffle  xor %{{.*}}, %c4_i32{{.*}}, %c32_i32{{.*}} : f32
// CHECK:         gpu.shuffle  xor %{{.*}}, %c2_i32{{.*}}, %c32_i32{{.*}} : f32
// CHECK:         gpu.shuffle  xor %{{.*}}, %c1_i32{{.*}}, %c32_i32{{.*}} : f32
// CHECK:         %[[LO:.*]] = arith.constant -1.280000e+02 : f32
// CHECK:         %[[HI:.*]] = arith.constant 1.270000e+02 : f32
// CHECK:         arith.cmpf olt, %{{.*}}, %[[LO]] : f32
// CHECK:         arith.cmpf ogt, %{{.*}}, %[[HI]] : f32
// CHECK:         arith.constant 0x4B400000 : f32
// CHECK:         arith.addf
// CHECK:         arith.subf
// CHECK:         arith.fptosi
// CHECK:         arith.remui %{{.*}}, %c8_i32
// CHECK:         arith.divui %{{.*}}, %c64_i64
// CHECK-NOT:     gpu.barrier
// CHECK:         gpu.return

func.func @grp(%x: memref<?x1024xbf16>, %q: memref<?x1024xi8>, %s: memref<?x16xf32>) {
  humming.quantize %x into %q scales(%s : memref<?x16xf32>)
      {schema = #humming.input_schema<type = si8, scaling = group<64>>}
      : memref<?x1024xbf16> -> memref<?x1024xi8>
  return
}

// -----

// A static scale is read from scales[0]; nothing is reduced. K = 100 is no
// multiple of 8: element loads and one-byte stores, each where it lies in
// the row.
// CHECK-LABEL: gpu.func @fixed_quantize0
// CHECK-NOT:     gpu.shuffle
// CHECK:         %[[S:.*]] = llvm.load %{{.*}} invariant : !llvm.ptr<1> -> f32
// CHECK:         scf.for
// CHECK:           arith.divf %{{.*}}, %[[S]] : f32
// CHECK:         nvvm.convert.f32x2.to.f8x2 {{.*}} : i16(f8E5M2)
// CHECK-NOT:     vector<8x
// CHECK:         llvm.store %{{.*}}, %{{.*}} : i8, !llvm.ptr<1>

func.func @fixed(%x: memref<?x100xf32>, %q: memref<?x100xf8E5M2>, %s: memref<1xf32>) {
  humming.quantize %x into %q scales(%s : memref<1xf32>)
      {schema = #humming.input_schema<type = f8E5M2, scaling = static>}
      : memref<?x100xf32> -> memref<?x100xf8E5M2>
  return
}

// -----

// int4 codes: clamped to [-8, 7], rounded, two per byte (the lower k in
// the low nibble), one 4-byte store of a thread's eight.
// CHECK-LABEL: gpu.func @s4_quantize0
// CHECK:         arith.constant -8.000000e+00 : f32
// CHECK:         arith.constant 7.000000e+00 : f32
// CHECK:         arith.shli %{{.*}}, %c4_i8
// CHECK:         arith.ori
// CHECK:         llvm.store %{{.*}}, %{{.*}} {alignment = 4 : i64} : vector<4xi8>, !llvm.ptr<1>

func.func @s4(%x: memref<?x4096xf16>, %q: memref<?x4096xi4>, %s: memref<?x1xf32>) {
  humming.quantize %x into %q scales(%s : memref<?x1xf32>)
      {schema = #humming.input_schema<type = si4, scaling = token>}
      : memref<?x4096xf16> -> memref<?x4096xi4>
  return
}

// -----

// e2m1 codes (no cvt before sm_100a): the number of rounding midpoints the
// magnitude passes (0.25 ... 5), the sign bit of the quotient, 0 for NaN.
// CHECK-LABEL: gpu.func @fp4_quantize0
// CHECK:         arith.cmpf ogt, %{{.*}}, %cst{{.*}} : f32
// CHECK:         arith.cmpf oge, %{{.*}}, %cst{{.*}} : f32
// CHECK:         arith.shrui %{{.*}}, %c28_i32
// CHECK:         arith.cmpf uno
// CHECK:         llvm.store %{{.*}}, %{{.*}} {alignment = 4 : i64} : vector<4xi8>, !llvm.ptr<1>

func.func @fp4(%x: memref<?x1024xbf16>, %q: memref<?x1024xf4E2M1FN>, %s: memref<?x16xf32>) {
  humming.quantize %x into %q scales(%s : memref<?x16xf32>)
      {schema = #humming.input_schema<type = f4E2M1FN, scaling = group<64>>}
      : memref<?x1024xbf16> -> memref<?x1024xf4E2M1FN>
  return
}

// -----

// K = 4104 (not a multiple of 16) into rows of 4112 codes: the row's
// activations are read at row x 4104, its codes written at row x 4112;
// the chunks cover the 4112 codes and each thread's eight are stored when
// they lie before 4112 (the last eight, columns 4104 .. 4111, read nothing
// of the row: their value, and so their code, is zero). K and the codes
// per row are multiples of 8: 16-byte loads, 8-byte stores.
// CHECK-LABEL: gpu.func @padded_quantize0
// CHECK:         arith.muli %{{.*}}, %c4104_i64 : i64
// CHECK:         arith.muli %{{.*}}, %c4112_i64 : i64
// CHECK:         arith.cmpi slt, %{{.*}}, %c4104_i64{{.*}} : i64
// CHECK:         llvm.load %{{.*}} invariant {alignment = 16 : i64} : !llvm.ptr<1> -> vector<8xf16>
// CHECK:         arith.cmpi slt, %{{.*}}, %c4112_i64{{.*}} : i64
// CHECK:         llvm.store %{{.*}}, %{{.*}} {alignment = 8 : i64} : vector<8xi8>, !llvm.ptr<1>

func.func @padded(%x: memref<?x4104xf16>, %q: memref<?x4112xf8E4M3FN>, %s: memref<?x1xf32>) {
  humming.quantize %x into %q scales(%s : memref<?x1xf32>)
      {schema = #humming.input_schema<type = f8E4M3FN, scaling = token>}
      : memref<?x4104xf16> -> memref<?x4112xf8E4M3FN>
  return
}
