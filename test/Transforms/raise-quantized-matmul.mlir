// RUN: humming-opt %s --humming-raise-quantized-matmul -split-input-file | FileCheck %s

// The dequantize-then-matmul forms frontends emit, each raised to one
// humming.gemm with the schema the dequantization computed; the codes are
// passed unpacked, the dequantization, the fill and the buffer go.

// W8A16 int8, one f16 scale per row ([N], indexed (n)).
// CHECK-LABEL: func.func @int8_per_row
// CHECK-SAME:    (%[[X:.*]]: memref<?x256xf16>, %[[C:.*]]: memref<128x256xi8>, %[[S:.*]]: memref<128xf16>, %[[Y:.*]]: memref<?x128xf16>)
// CHECK-NEXT:    %[[S1:.*]] = memref.expand_shape %[[S]] {{\[\[}}0, 1]] output_shape [128, 1] : memref<128xf16> into memref<128x1xf16>
// CHECK-NEXT:    humming.gemm %[[X]], %[[C]] scales(%[[S1]] : memref<128x1xf16>) into %[[Y]]
// CHECK-SAME:      input_schema = #humming.input_schema<type = f16>
// CHECK-SAME:      weight_schema = #humming.weight_schema<type = si8, scale = f16>}
// CHECK-SAME:      : memref<?x256xf16>, memref<128x256xi8> -> memref<?x128xf16>
// CHECK-NEXT:    return
func.func @int8_per_row(%x: memref<?x256xf16>, %codes: memref<128x256xi8>, %s: memref<128xf16>,
                        %y: memref<?x128xf16>) {
  %wd = memref.alloc() : memref<128x256xf16>
  linalg.generic {indexing_maps = [affine_map<(n, k) -> (n, k)>, affine_map<(n, k) -> (n)>,
                                   affine_map<(n, k) -> (n, k)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%codes, %s : memref<128x256xi8>, memref<128xf16>) outs(%wd : memref<128x256xf16>) {
  ^bb0(%c: i8, %sc: f16, %o: f16):
    %f = arith.sitofp %c : i8 to f16
    %w = arith.mulf %f, %sc : f16
    linalg.yield %w : f16
  }
  %zero = arith.constant 0.0 : f16
  linalg.fill ins(%zero : f16) outs(%y : memref<?x128xf16>)
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
                                 affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %wd : memref<?x256xf16>, memref<128x256xf16>) outs(%y : memref<?x128xf16>)
  memref.dealloc %wd : memref<128x256xf16>
  return
}

// -----

// FP8 (e4m3) codes, bf16 scales per row as [N, 1] (indexed (n, 0)), the
// scale on the left of the product.
// CHECK-LABEL: func.func @fp8_per_row
// CHECK-NEXT:    humming.gemm %{{.*}}, %{{.*}} scales(%{{.*}} : memref<64x1xbf16>)
// CHECK-SAME:      input_schema = #humming.input_schema<type = bf16>
// CHECK-SAME:      weight_schema = #humming.weight_schema<type = f8E4M3FN, scale = bf16>}
// CHECK-SAME:      : memref<4x128xbf16>, memref<64x128xf8E4M3FN> -> memref<4x64xbf16>
// CHECK-NEXT:    return
func.func @fp8_per_row(%x: memref<4x128xbf16>, %codes: memref<64x128xf8E4M3FN>, %s: memref<64x1xbf16>,
                       %y: memref<4x64xbf16>) {
  %zero = arith.constant 0.0 : bf16
  %wd = memref.alloc() : memref<64x128xbf16>
  linalg.generic {indexing_maps = [affine_map<(n, k) -> (n, k)>, affine_map<(n, k) -> (n, 0)>,
                                   affine_map<(n, k) -> (n, k)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%codes, %s : memref<64x128xf8E4M3FN>, memref<64x1xbf16>) outs(%wd : memref<64x128xbf16>) {
  ^bb0(%c: f8E4M3FN, %sc: bf16, %o: bf16):
    %f = arith.extf %c : f8E4M3FN to bf16
    %w = arith.mulf %sc, %f : bf16
    linalg.yield %w : bf16
  }
  linalg.fill ins(%zero : bf16) outs(%y : memref<4x64xbf16>)
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
                                 affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %wd : memref<4x128xbf16>, memref<64x128xbf16>) outs(%y : memref<4x64xbf16>)
  return
}

// -----

// uint8 codes, f16 scales and float zero points per group of 128
// ([N, K / 128], indexed (n, k floordiv 128)).
// CHECK-LABEL: func.func @uint8_group_zero_points
// CHECK-NEXT:    humming.gemm %{{.*}}, %{{.*}} scales(%{{.*}} : memref<64x2xf16>) zero_points(%{{.*}} : memref<64x2xf16>)
// CHECK-SAME:      weight_schema = #humming.weight_schema<type = ui8, scale = f16, granularity = group<128>, zero_point = float>}
// CHECK-NEXT:    return
func.func @uint8_group_zero_points(%x: memref<?x256xf16>, %codes: memref<64x256xi8>, %s: memref<64x2xf16>,
                                   %z: memref<64x2xf16>, %y: memref<?x64xf16>) {
  %wd = memref.alloc() : memref<64x256xf16>
  linalg.generic {indexing_maps = [affine_map<(n, k) -> (n, k)>, affine_map<(n, k) -> (n, k floordiv 128)>,
                                   affine_map<(n, k) -> (n, k floordiv 128)>, affine_map<(n, k) -> (n, k)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%codes, %s, %z : memref<64x256xi8>, memref<64x2xf16>, memref<64x2xf16>)
      outs(%wd : memref<64x256xf16>) {
  ^bb0(%c: i8, %sc: f16, %zp: f16, %o: f16):
    %f = arith.uitofp %c : i8 to f16
    %d = arith.subf %f, %zp : f16
    %w = arith.mulf %d, %sc : f16
    linalg.yield %w : f16
  }
  %zero = arith.constant 0.0 : f16
  linalg.fill ins(%zero : f16) outs(%y : memref<?x64xf16>)
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
                                 affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %wd : memref<?x256xf16>, memref<64x256xf16>) outs(%y : memref<?x64xf16>)
  memref.dealloc %wd : memref<64x256xf16>
  return
}

// -----

// A plain f16 matmul is no quantized one: untouched, no remark.
// CHECK-LABEL: func.func @plain
// CHECK:         linalg.matmul
// CHECK-NOT:     humming.gemm
func.func @plain(%x: memref<?x64xf16>, %w: memref<32x64xf16>, %y: memref<?x32xf16>) {
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
                                 affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : memref<?x64xf16>, memref<32x64xf16>) outs(%y : memref<?x32xf16>)
  return
}

// -----

// uint8 codes minus 128 (the implicit zero of humming's unsigned codes
// without zero points), f16 scales per group of 64.
// CHECK-LABEL: func.func @uint8_implicit_zero
// CHECK-NEXT:    humming.gemm %{{.*}}, %{{.*}} scales(%{{.*}} : memref<64x2xf16>) into
// CHECK-SAME:      weight_schema = #humming.weight_schema<type = ui8, scale = f16, granularity = group<64>>}
// CHECK-NEXT:    return
func.func @uint8_implicit_zero(%x: memref<?x128xf16>, %codes: memref<64x128xi8>, %s: memref<64x2xf16>,
                               %y: memref<?x64xf16>) {
  %wd = memref.alloc() : memref<64x128xf16>
  linalg.generic {indexing_maps = [affine_map<(n, k) -> (n, k)>, affine_map<(n, k) -> (n, k floordiv 64)>,
                                   affine_map<(n, k) -> (n, k)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%codes, %s : memref<64x128xi8>, memref<64x2xf16>) outs(%wd : memref<64x128xf16>) {
  ^bb0(%c: i8, %sc: f16, %o: f16):
    %f = arith.uitofp %c : i8 to f16
    %z = arith.constant 128.0 : f16
    %d = arith.subf %f, %z : f16
    %w = arith.mulf %d, %sc : f16
    linalg.yield %w : f16
  }
  %zero = arith.constant 0.0 : f16
  linalg.fill ins(%zero : f16) outs(%y : memref<?x64xf16>)
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
                                 affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %wd : memref<?x128xf16>, memref<64x128xf16>) outs(%y : memref<?x64xf16>)
  return
}

// -----

// Packed 4-bit codes (humming's canonical form, compressed-tensors'
// pack-quantized one: 8 codes per i32 along K, least significant first),
// extracted with index arithmetic, unsigned minus their implicit 8 (GPTQ's
// symmetric form), f16 scales per group of 32: a ui4 group<32> gemm on the
// words as they are.
// CHECK-LABEL: func.func @packed_uint4_group
// CHECK-SAME:    (%[[X:.*]]: memref<?x128xf16>, %[[C:.*]]: memref<64x16xi32>, %[[S:.*]]: memref<64x4xf16>, %[[Y:.*]]: memref<?x64xf16>)
// CHECK-NEXT:    humming.gemm %[[X]], %[[C]] scales(%[[S]] : memref<64x4xf16>) into %[[Y]]
// CHECK-SAME:      weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<32>>}
// CHECK-SAME:      : memref<?x128xf16>, memref<64x16xi32> -> memref<?x64xf16>
// CHECK-NEXT:    return
func.func @packed_uint4_group(%x: memref<?x128xf16>, %codes: memref<64x16xi32>, %s: memref<64x4xf16>,
                              %y: memref<?x64xf16>) {
  %wd = memref.alloc() : memref<64x128xf16>
  linalg.generic {indexing_maps = [affine_map<(n, k) -> (n, k floordiv 8)>, affine_map<(n, k) -> (n, k floordiv 32)>,
                                   affine_map<(n, k) -> (n, k)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%codes, %s : memref<64x16xi32>, memref<64x4xf16>) outs(%wd : memref<64x128xf16>) {
  ^bb0(%c: i32, %sc: f16, %o: f16):
    %k = linalg.index 1 : index
    %c8 = arith.constant 8 : index
    %r = arith.remui %k, %c8 : index
    %c4 = arith.constant 4 : index
    %sh = arith.muli %r, %c4 : index
    %shi = arith.index_cast %sh : index to i32
    %v = arith.shrui %c, %shi : i32
    %m = arith.constant 15 : i32
    %q = arith.andi %v, %m : i32
    %f = arith.uitofp %q : i32 to f16
    %c8f = arith.constant 8.0 : f16
    %z = arith.subf %f, %c8f : f16
    %w = arith.mulf %z, %sc : f16
    linalg.yield %w : f16
  }
  %zero = arith.constant 0.0 : f16
  linalg.fill ins(%zero : f16) outs(%y : memref<?x64xf16>)
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
                                 affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %wd : memref<?x128xf16>, memref<64x128xf16>) outs(%y : memref<?x64xf16>)
  memref.dealloc %wd : memref<64x128xf16>
  return
}

// -----

// Packed 2-bit codes (16 per word), the shift computed in i32 as
// (k & 15) << 1 and the code taken by sitofp of the masked word (a
// non-negative value: unsigned codes), minus f16 zero points per group of
// 64: a ui2 gemm with float zero points.
// CHECK-LABEL: func.func @packed_uint2_zero_points
// CHECK-NEXT:    humming.gemm %{{.*}}, %{{.*}} scales(%{{.*}} : memref<64x2xf16>) zero_points(%{{.*}} : memref<64x2xf16>)
// CHECK-SAME:      weight_schema = #humming.weight_schema<type = ui2, scale = f16, granularity = group<64>, zero_point = float>}
// CHECK-SAME:      : memref<?x128xf16>, memref<64x8xi32> -> memref<?x64xf16>
// CHECK-NEXT:    return
func.func @packed_uint2_zero_points(%x: memref<?x128xf16>, %codes: memref<64x8xi32>, %s: memref<64x2xf16>,
                                    %zp: memref<64x2xf16>, %y: memref<?x64xf16>) {
  %wd = memref.alloc() : memref<64x128xf16>
  linalg.generic {indexing_maps = [affine_map<(n, k) -> (n, k floordiv 16)>, affine_map<(n, k) -> (n, k floordiv 64)>,
                                   affine_map<(n, k) -> (n, k floordiv 64)>, affine_map<(n, k) -> (n, k)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%codes, %s, %zp : memref<64x8xi32>, memref<64x2xf16>, memref<64x2xf16>) outs(%wd : memref<64x128xf16>) {
  ^bb0(%c: i32, %sc: f16, %z0: f16, %o: f16):
    %k = linalg.index 1 : index
    %ki = arith.index_cast %k : index to i32
    %c15 = arith.constant 15 : i32
    %r = arith.andi %ki, %c15 : i32
    %one = arith.constant 1 : i32
    %sh = arith.shli %r, %one : i32
    %v = arith.shrui %c, %sh : i32
    %m = arith.constant 3 : i32
    %q = arith.andi %v, %m : i32
    %f = arith.sitofp %q : i32 to f16
    %z = arith.subf %f, %z0 : f16
    %w = arith.mulf %z, %sc : f16
    linalg.yield %w : f16
  }
  %zero = arith.constant 0.0 : f16
  linalg.fill ins(%zero : f16) outs(%y : memref<?x64xf16>)
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
                                 affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %wd : memref<?x128xf16>, memref<64x128xf16>) outs(%y : memref<?x64xf16>)
  return
}

// -----

// Signed packed 4-bit codes: the nibble truncated to i4 and converted as
// signed (two's complement codes), bf16 scales per row: an si4 gemm.
// CHECK-LABEL: func.func @packed_sint4_per_row
// CHECK-NEXT:    %[[S1:.*]] = memref.expand_shape
// CHECK-NEXT:    humming.gemm %{{.*}}, %{{.*}} scales(%[[S1]] : memref<64x1xbf16>)
// CHECK-SAME:      weight_schema = #humming.weight_schema<type = si4, scale = bf16>}
// CHECK-SAME:      : memref<?x128xbf16>, memref<64x16xi32> -> memref<?x64xbf16>
// CHECK-NEXT:    return
func.func @packed_sint4_per_row(%x: memref<?x128xbf16>, %codes: memref<64x16xi32>, %s: memref<64xbf16>,
                                %y: memref<?x64xbf16>) {
  %wd = memref.alloc() : memref<64x128xbf16>
  linalg.generic {indexing_maps = [affine_map<(n, k) -> (n, k floordiv 8)>, affine_map<(n, k) -> (n)>,
                                   affine_map<(n, k) -> (n, k)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%codes, %s : memref<64x16xi32>, memref<64xbf16>) outs(%wd : memref<64x128xbf16>) {
  ^bb0(%c: i32, %sc: bf16, %o: bf16):
    %k = linalg.index 1 : index
    %c8 = arith.constant 8 : index
    %r = arith.remui %k, %c8 : index
    %c4 = arith.constant 4 : index
    %sh = arith.muli %r, %c4 : index
    %shi = arith.index_castui %sh : index to i32
    %v = arith.shrui %c, %shi : i32
    %q = arith.trunci %v : i32 to i4
    %f = arith.sitofp %q : i4 to bf16
    %w = arith.mulf %f, %sc : bf16
    linalg.yield %w : bf16
  }
  %zero = arith.constant 0.0 : bf16
  linalg.fill ins(%zero : bf16) outs(%y : memref<?x64xbf16>)
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
                                 affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %wd : memref<?x128xbf16>, memref<64x128xbf16>) outs(%y : memref<?x64xbf16>)
  return
}

// -----

// Packed 4-bit codes with integer zero points packed along N the same
// way (compressed-tensors' asymmetric pack-quantized weight_zero_point:
// [N / 8, G] words, zero point n of group g at bits 4 (n mod 8) of word
// (n floordiv 8, g)), each converted on its own and subtracted: a ui4
// gemm with integer zero points on both tensors as they are.
// CHECK-LABEL: func.func @packed_uint4_int_zero_points
// CHECK-SAME:    (%[[X:.*]]: memref<?x128xf16>, %[[C:.*]]: memref<64x16xi32>, %[[S:.*]]: memref<64x4xf16>, %[[Z:.*]]: memref<8x4xi32>, %[[Y:.*]]: memref<?x64xf16>)
// CHECK-NEXT:    humming.gemm %[[X]], %[[C]] scales(%[[S]] : memref<64x4xf16>) zero_points(%[[Z]] : memref<8x4xi32>) into %[[Y]]
// CHECK-SAME:      weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<32>, zero_point = int>}
// CHECK-NEXT:    return
func.func @packed_uint4_int_zero_points(%x: memref<?x128xf16>, %codes: memref<64x16xi32>, %s: memref<64x4xf16>,
                              %zp: memref<8x4xi32>, %y: memref<?x64xf16>) {
  %wd = memref.alloc() : memref<64x128xf16>
  linalg.generic {indexing_maps = [affine_map<(n, k) -> (n, k floordiv 8)>, affine_map<(n, k) -> (n, k floordiv 32)>,
                                   affine_map<(n, k) -> (n floordiv 8, k floordiv 32)>, affine_map<(n, k) -> (n, k)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%codes, %s, %zp : memref<64x16xi32>, memref<64x4xf16>, memref<8x4xi32>) outs(%wd : memref<64x128xf16>) {
  ^bb0(%c: i32, %sc: f16, %z: i32, %o: f16):
    %k = linalg.index 1 : index
    %c8 = arith.constant 8 : index
    %r = arith.remui %k, %c8 : index
    %c4 = arith.constant 4 : index
    %sh = arith.muli %r, %c4 : index
    %shi = arith.index_cast %sh : index to i32
    %v = arith.shrui %c, %shi : i32
    %m = arith.constant 15 : i32
    %q = arith.andi %v, %m : i32
    %nn = linalg.index 0 : index
    %zr = arith.remui %nn, %c8 : index
    %zs = arith.muli %zr, %c4 : index
    %zsi = arith.index_cast %zs : index to i32
    %zv = arith.shrui %z, %zsi : i32
    %zq = arith.andi %zv, %m : i32
    %f = arith.uitofp %q : i32 to f16
    %zf = arith.uitofp %zq : i32 to f16
    %d = arith.subf %f, %zf : f16
    %w = arith.mulf %d, %sc : f16
    linalg.yield %w : f16
  }
  %zero = arith.constant 0.0 : f16
  linalg.fill ins(%zero : f16) outs(%y : memref<?x64xf16>)
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
                                 affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %wd : memref<?x128xf16>, memref<64x128xf16>) outs(%y : memref<?x64xf16>)
  return
}

// -----

// The same with the zero point converted before the code: the code's
// conversion is the one reading its word.
// CHECK-LABEL: func.func @packed_zero_point_converted_first
// CHECK-SAME:    (%[[X:.*]]: memref<?x128xf16>, %[[C:.*]]: memref<64x16xi32>, %[[S:.*]]: memref<64x4xf16>, %[[Z:.*]]: memref<8x4xi32>, %[[Y:.*]]: memref<?x64xf16>)
// CHECK-NEXT:    humming.gemm %[[X]], %[[C]] scales(%[[S]] : memref<64x4xf16>) zero_points(%[[Z]] : memref<8x4xi32>) into %[[Y]]
// CHECK-SAME:      weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<32>, zero_point = int>}
// CHECK-NEXT:    return
func.func @packed_zero_point_converted_first(%x: memref<?x128xf16>, %codes: memref<64x16xi32>, %s: memref<64x4xf16>,
                              %zp: memref<8x4xi32>, %y: memref<?x64xf16>) {
  %wd = memref.alloc() : memref<64x128xf16>
  linalg.generic {indexing_maps = [affine_map<(n, k) -> (n, k floordiv 8)>, affine_map<(n, k) -> (n, k floordiv 32)>,
                                   affine_map<(n, k) -> (n floordiv 8, k floordiv 32)>, affine_map<(n, k) -> (n, k)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%codes, %s, %zp : memref<64x16xi32>, memref<64x4xf16>, memref<8x4xi32>) outs(%wd : memref<64x128xf16>) {
  ^bb0(%c: i32, %sc: f16, %z: i32, %o: f16):
    %k = linalg.index 1 : index
    %c8 = arith.constant 8 : index
    %r = arith.remui %k, %c8 : index
    %c4 = arith.constant 4 : index
    %sh = arith.muli %r, %c4 : index
    %shi = arith.index_cast %sh : index to i32
    %v = arith.shrui %c, %shi : i32
    %m = arith.constant 15 : i32
    %q = arith.andi %v, %m : i32
    %nn = linalg.index 0 : index
    %zr = arith.remui %nn, %c8 : index
    %zs = arith.muli %zr, %c4 : index
    %zsi = arith.index_cast %zs : index to i32
    %zv = arith.shrui %z, %zsi : i32
    %zq = arith.andi %zv, %m : i32
    %zf = arith.uitofp %zq : i32 to f16
    %f = arith.uitofp %q : i32 to f16
    %d = arith.subf %f, %zf : f16
    %w = arith.mulf %d, %sc : f16
    linalg.yield %w : f16
  }
  %zero = arith.constant 0.0 : f16
  linalg.fill ins(%zero : f16) outs(%y : memref<?x64xf16>)
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
                                 affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %wd : memref<?x128xf16>, memref<64x128xf16>) outs(%y : memref<?x64xf16>)
  return
}

// -----

// GPTQ's own tensors (checkpoint_format gptq): qweight [K / 8, N] packed
// along K, scales [K / g, N], qzeros [G, N / 8] storing z - 1 (the
// dequantization adds 1): raised to a gemm in the gptq format on the
// tensors as they are (humming-legalize-schema repacks them on the host).
// The sum is taken modulo 16, as humming's gptq format reads qzeros (a
// stored 15 is z = 0).
// CHECK-LABEL: func.func @gptq_w4_g128_qzeros_minus_one
// CHECK-NEXT:    humming.gemm %{{.*}}, %{{.*}} scales(%{{.*}} : memref<2x64xf16>) zero_points(%{{.*}} : memref<2x8xi32>)
// CHECK-SAME:      weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>, zero_point = int, format = gptq>}
// CHECK-SAME:      : memref<?x256xf16>, memref<32x64xi32> -> memref<?x64xf16>
// CHECK-NEXT:    return
func.func @gptq_w4_g128_qzeros_minus_one(%x: memref<?x256xf16>, %qweight: memref<32x64xi32>, %scales: memref<2x64xf16>, %qzeros: memref<2x8xi32>,
    %y: memref<?x64xf16>) {
  %w = memref.alloc() : memref<64x256xf16>
  linalg.generic {indexing_maps = [affine_map<(n, k) -> (k floordiv 8, n)>,
                                   affine_map<(n, k) -> (k floordiv 128, n)>,
                                   affine_map<(n, k) -> (k floordiv 128, n floordiv 8)>,
                                   affine_map<(n, k) -> (n, k)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%qweight, %scales, %qzeros : memref<32x64xi32>, memref<2x64xf16>, memref<2x8xi32>)
      outs(%w : memref<64x256xf16>) {
  ^bb0(%word: i32, %s: f16, %zword: i32, %o: f16):
    %k = linalg.index 1 : index
    %n = linalg.index 0 : index
    %c8 = arith.constant 8 : index
    %c4 = arith.constant 4 : index
    %mask = arith.constant 15 : i32
    %one = arith.constant 1 : i32
    %klane = arith.remui %k, %c8 : index
    %kbit = arith.muli %klane, %c4 : index
    %kshift = arith.index_cast %kbit : index to i32
    %kshifted = arith.shrui %word, %kshift : i32
    %code = arith.andi %kshifted, %mask : i32
    %nlane = arith.remui %n, %c8 : index
    %nbit = arith.muli %nlane, %c4 : index
    %nshift = arith.index_cast %nbit : index to i32
    %nshifted = arith.shrui %zword, %nshift : i32
    %zstored = arith.andi %nshifted, %mask : i32
    %zsum = arith.addi %zstored, %one : i32
    %z = arith.andi %zsum, %mask : i32
    %cf = arith.uitofp %code : i32 to f16
    %zf = arith.uitofp %z : i32 to f16
    %q = arith.subf %cf, %zf : f16
    %v = arith.mulf %q, %s : f16
    linalg.yield %v : f16
  }
  %zero = arith.constant 0.0 : f16
  linalg.fill ins(%zero : f16) outs(%y : memref<?x64xf16>)
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
                                 affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : memref<?x256xf16>, memref<64x256xf16>) outs(%y : memref<?x64xf16>)
  memref.dealloc %w : memref<64x256xf16>
  return
}

// -----

// checkpoint_format gptq_v2: qzeros store z itself.
// CHECK-LABEL: func.func @gptq_v2_w4_g128
// CHECK-NEXT:    humming.gemm
// CHECK-SAME:      weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>, zero_point = int, format = gptq_v2>}
func.func @gptq_v2_w4_g128(%x: memref<?x256xf16>, %qweight: memref<32x64xi32>, %scales: memref<2x64xf16>, %qzeros: memref<2x8xi32>,
    %y: memref<?x64xf16>) {
  %w = memref.alloc() : memref<64x256xf16>
  linalg.generic {indexing_maps = [affine_map<(n, k) -> (k floordiv 8, n)>,
                                   affine_map<(n, k) -> (k floordiv 128, n)>,
                                   affine_map<(n, k) -> (k floordiv 128, n floordiv 8)>,
                                   affine_map<(n, k) -> (n, k)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%qweight, %scales, %qzeros : memref<32x64xi32>, memref<2x64xf16>, memref<2x8xi32>)
      outs(%w : memref<64x256xf16>) {
  ^bb0(%word: i32, %s: f16, %zword: i32, %o: f16):
    %k = linalg.index 1 : index
    %n = linalg.index 0 : index
    %c8 = arith.constant 8 : index
    %c4 = arith.constant 4 : index
    %mask = arith.constant 15 : i32
    %one = arith.constant 1 : i32
    %klane = arith.remui %k, %c8 : index
    %kbit = arith.muli %klane, %c4 : index
    %kshift = arith.index_cast %kbit : index to i32
    %kshifted = arith.shrui %word, %kshift : i32
    %code = arith.andi %kshifted, %mask : i32
    %nlane = arith.remui %n, %c8 : index
    %nbit = arith.muli %nlane, %c4 : index
    %nshift = arith.index_cast %nbit : index to i32
    %nshifted = arith.shrui %zword, %nshift : i32
    %z = arith.andi %nshifted, %mask : i32
    %cf = arith.uitofp %code : i32 to f16
    %zf = arith.uitofp %z : i32 to f16
    %q = arith.subf %cf, %zf : f16
    %v = arith.mulf %q, %s : f16
    linalg.yield %v : f16
  }
  %zero = arith.constant 0.0 : f16
  linalg.fill ins(%zero : f16) outs(%y : memref<?x64xf16>)
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
                                 affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : memref<?x256xf16>, memref<64x256xf16>) outs(%y : memref<?x64xf16>)
  memref.dealloc %w : memref<64x256xf16>
  return
}

// -----

// GPTQ's qweight with one scale per column ([1, N] by (0, n)) and no
// qzeros (symmetric: code - 8).
// CHECK-LABEL: func.func @gptq_symmetric_channel
// CHECK-NEXT:    humming.gemm %{{.*}}, %{{.*}} scales(%{{.*}} : memref<1x64xf16>) into
// CHECK-SAME:      weight_schema = #humming.weight_schema<type = ui4, scale = f16, format = gptq>}
func.func @gptq_symmetric_channel(%x: memref<?x256xf16>, %qweight: memref<32x64xi32>, %scales: memref<1x64xf16>,
    %y: memref<?x64xf16>) {
  %w = memref.alloc() : memref<64x256xf16>
  linalg.generic {indexing_maps = [affine_map<(n, k) -> (k floordiv 8, n)>,
                                   affine_map<(n, k) -> (0, n)>,
                                   affine_map<(n, k) -> (n, k)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%qweight, %scales : memref<32x64xi32>, memref<1x64xf16>)
      outs(%w : memref<64x256xf16>) {
  ^bb0(%word: i32, %s: f16, %o: f16):
    %k = linalg.index 1 : index
    %c8 = arith.constant 8 : index
    %c4 = arith.constant 4 : index
    %mask = arith.constant 15 : i32
    %one = arith.constant 1 : i32
    %klane = arith.remui %k, %c8 : index
    %kbit = arith.muli %klane, %c4 : index
    %kshift = arith.index_cast %kbit : index to i32
    %kshifted = arith.shrui %word, %kshift : i32
    %code = arith.andi %kshifted, %mask : i32
    %cf = arith.uitofp %code : i32 to f16
    %eight = arith.constant 8.0 : f16
    %q = arith.subf %cf, %eight : f16
    %v = arith.mulf %q, %s : f16
    linalg.yield %v : f16
  }
  %zero = arith.constant 0.0 : f16
  linalg.fill ins(%zero : f16) outs(%y : memref<?x64xf16>)
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
                                 affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : memref<?x256xf16>, memref<64x256xf16>) outs(%y : memref<?x64xf16>)
  memref.dealloc %w : memref<64x256xf16>
  return
}

// -----

// GPTQ as its reference kernels compute it: W [K, N] = dequantized
// qweight, a generic over (k, n) (linalg.index 0 is k), then output =
// input * W (B indexed (k, n)). The same gemm in the gptq format.
// CHECK-LABEL: func.func @gptq_k_major_input_times_w
// CHECK-NEXT:    humming.gemm %{{.*}}, %{{.*}} scales(%{{.*}} : memref<2x64xf16>) zero_points(%{{.*}} : memref<2x8xi32>)
// CHECK-SAME:      weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>, zero_point = int, format = gptq>}
// CHECK-SAME:      : memref<?x256xf16>, memref<32x64xi32> -> memref<?x64xf16>
// CHECK-NEXT:    return
func.func @gptq_k_major_input_times_w(%x: memref<?x256xf16>, %qweight: memref<32x64xi32>, %scales: memref<2x64xf16>,
                                      %qzeros: memref<2x8xi32>, %y: memref<?x64xf16>) {
  %w = memref.alloc() : memref<256x64xf16>
  linalg.generic {indexing_maps = [affine_map<(k, n) -> (k floordiv 8, n)>,
                                   affine_map<(k, n) -> (k floordiv 128, n)>,
                                   affine_map<(k, n) -> (k floordiv 128, n floordiv 8)>,
                                   affine_map<(k, n) -> (k, n)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%qweight, %scales, %qzeros : memref<32x64xi32>, memref<2x64xf16>, memref<2x8xi32>)
      outs(%w : memref<256x64xf16>) {
  ^bb0(%word: i32, %s: f16, %zword: i32, %o: f16):
    %k = linalg.index 0 : index
    %n = linalg.index 1 : index
    %c8 = arith.constant 8 : index
    %c4 = arith.constant 4 : index
    %mask = arith.constant 15 : i32
    %one = arith.constant 1 : i32
    %klane = arith.remui %k, %c8 : index
    %kbit = arith.muli %klane, %c4 : index
    %kshift = arith.index_cast %kbit : index to i32
    %kshifted = arith.shrui %word, %kshift : i32
    %code = arith.andi %kshifted, %mask : i32
    %nlane = arith.remui %n, %c8 : index
    %nbit = arith.muli %nlane, %c4 : index
    %nshift = arith.index_cast %nbit : index to i32
    %nshifted = arith.shrui %zword, %nshift : i32
    %zstored = arith.andi %nshifted, %mask : i32
    %zsum = arith.addi %zstored, %one : i32
    %z = arith.andi %zsum, %mask : i32
    %cf = arith.uitofp %code : i32 to f16
    %zf = arith.uitofp %z : i32 to f16
    %q = arith.subf %cf, %zf : f16
    %v = arith.mulf %q, %s : f16
    linalg.yield %v : f16
  }
  %zero = arith.constant 0.0 : f16
  linalg.fill ins(%zero : f16) outs(%y : memref<?x64xf16>)
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>,
                                 affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : memref<?x256xf16>, memref<256x64xf16>) outs(%y : memref<?x64xf16>)
  memref.dealloc %w : memref<256x64xf16>
  return
}

// -----

// A batch matmul whose weights are shared by the batch (upstream
// linalg.batch_matmul broadcasts a [K, N] B): the [B, M, K] input and
// [B, M, N] output are [B M, K] and [B M, N] rows for the gemm (collapsed
// views of the same memory), W [K, N] dequantized over (k, n) from 8-bit
// codes [N, K] read by (n, k).
// CHECK-LABEL: func.func @batch_w8
// CHECK-SAME:    (%[[X:.*]]: memref<?x?x128xf16>, %[[C:.*]]: memref<64x128xi8>, %[[S:.*]]: memref<64xf16>, %[[Y:.*]]: memref<?x?x64xf16>)
// CHECK-NEXT:    %[[X2:.*]] = memref.collapse_shape %[[X]] {{\[\[}}0, 1], [2]] : memref<?x?x128xf16> into memref<?x128xf16>
// CHECK-NEXT:    %[[Y2:.*]] = memref.collapse_shape %[[Y]] {{\[\[}}0, 1], [2]] : memref<?x?x64xf16> into memref<?x64xf16>
// CHECK-NEXT:    %[[S1:.*]] = memref.expand_shape %[[S]]
// CHECK-NEXT:    humming.gemm %[[X2]], %[[C]] scales(%[[S1]] : memref<64x1xf16>) into %[[Y2]]
// CHECK-SAME:      weight_schema = #humming.weight_schema<type = si8, scale = f16>}
// CHECK-NEXT:    return
func.func @batch_w8(%x: memref<?x?x128xf16>, %codes: memref<64x128xi8>, %s: memref<64xf16>, %y: memref<?x?x64xf16>) {
  %wd = memref.alloc() : memref<128x64xf16>
  linalg.generic {indexing_maps = [affine_map<(k, n) -> (n, k)>, affine_map<(k, n) -> (n)>,
                                   affine_map<(k, n) -> (k, n)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%codes, %s : memref<64x128xi8>, memref<64xf16>) outs(%wd : memref<128x64xf16>) {
  ^bb0(%c: i8, %sc: f16, %o: f16):
    %f = arith.sitofp %c : i8 to f16
    %w = arith.mulf %f, %sc : f16
    linalg.yield %w : f16
  }
  %zero = arith.constant 0.0 : f16
  linalg.fill ins(%zero : f16) outs(%y : memref<?x?x64xf16>)
  linalg.batch_matmul indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (k, n)>,
                                       affine_map<(b, m, n, k) -> (b, m, n)>]
      ins(%x, %wd : memref<?x?x128xf16>, memref<128x64xf16>) outs(%y : memref<?x?x64xf16>)
  memref.dealloc %wd : memref<128x64xf16>
  return
}

// -----

// AWQ's own tensors (GEMM version): qweight [K, N / 8] packed along N in
// AWQ's nibble order (column j of eight in nibble (j mod 2) 4 + j floordiv
// 2, i.e. the order 0, 2, 4, 6, 1, 3, 5, 7), qzeros [G, N / 8] packed the
// same way and storing z, scales [K / g, N]: a gemm in the awq format on
// them as they are (humming-legalize-schema repacks them on the host).
// CHECK-LABEL: func.func @awq_w4_g128
// CHECK-NEXT:    humming.gemm %{{.*}}, %{{.*}} scales(%{{.*}} : memref<2x64xf16>) zero_points(%{{.*}} : memref<2x8xi32>)
// CHECK-SAME:      weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>, zero_point = int, format = awq>}
// CHECK-SAME:      : memref<?x256xf16>, memref<256x8xi32> -> memref<?x64xf16>
// CHECK-NEXT:    return
func.func @awq_w4_g128(%x: memref<?x256xf16>, %qweight: memref<256x8xi32>, %scales: memref<2x64xf16>,
                       %qzeros: memref<2x8xi32>, %y: memref<?x64xf16>) {
  %w = memref.alloc() : memref<64x256xf16>
  linalg.generic {indexing_maps = [affine_map<(n, k) -> (k, n floordiv 8)>,
                                   affine_map<(n, k) -> (k floordiv 128, n)>,
                                   affine_map<(n, k) -> (k floordiv 128, n floordiv 8)>,
                                   affine_map<(n, k) -> (n, k)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%qweight, %scales, %qzeros : memref<256x8xi32>, memref<2x64xf16>, memref<2x8xi32>)
      outs(%w : memref<64x256xf16>) {
  ^bb0(%word: i32, %s: f16, %zword: i32, %o: f16):
    %n = linalg.index 0 : index
    %c8 = arith.constant 8 : index
    %c2 = arith.constant 2 : index
    %c4 = arith.constant 4 : index
    %mask = arith.constant 15 : i32
    %j = arith.remui %n, %c8 : index
    %odd = arith.remui %j, %c2 : index
    %half = arith.divui %j, %c2 : index
    %hi = arith.muli %odd, %c4 : index
    %slot = arith.addi %hi, %half : index
    %bit = arith.muli %slot, %c4 : index
    %shift = arith.index_cast %bit : index to i32
    %cw = arith.shrui %word, %shift : i32
    %code = arith.andi %cw, %mask : i32
    %zw = arith.shrui %zword, %shift : i32
    %z = arith.andi %zw, %mask : i32
    %cf = arith.uitofp %code : i32 to f16
    %zf = arith.uitofp %z : i32 to f16
    %q = arith.subf %cf, %zf : f16
    %v = arith.mulf %q, %s : f16
    linalg.yield %v : f16
  }
  %zero = arith.constant 0.0 : f16
  linalg.fill ins(%zero : f16) outs(%y : memref<?x64xf16>)
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
                                 affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : memref<?x256xf16>, memref<64x256xf16>) outs(%y : memref<?x64xf16>)
  memref.dealloc %w : memref<64x256xf16>
  return
}

// -----

// fp4 (e2m1) codes packed eight to an i32 along K (NVFP4-like: bf16
// scales per group of 16 here): the field extracted as an i4, bitcast to
// f4E2M1FN, extended; raised to an e2m1 gemm on the words.
// CHECK-LABEL: func.func @nvfp4_like
// CHECK-NEXT:    humming.gemm %{{.*}}, %{{.*}} scales(%{{.*}} : memref<64x16xbf16>) into
// CHECK-SAME:      weight_schema = #humming.weight_schema<type = f4E2M1FN, scale = bf16, granularity = group<16>>}
// CHECK-SAME:      : memref<?x256xbf16>, memref<64x32xi32> -> memref<?x64xbf16>
// CHECK-NEXT:    return
func.func @nvfp4_like(%x: memref<?x256xbf16>, %packed: memref<64x32xi32>, %scales: memref<64x16xbf16>, %y: memref<?x64xbf16>) {
  %w = memref.alloc() : memref<64x256xbf16>
  linalg.generic {indexing_maps = [affine_map<(n, k) -> (n, k floordiv 8)>,
                                   affine_map<(n, k) -> (n, k floordiv 16)>,
                                   affine_map<(n, k) -> (n, k)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%packed, %scales : memref<64x32xi32>, memref<64x16xbf16>) outs(%w : memref<64x256xbf16>) {
  ^bb0(%word: i32, %s: bf16, %o: bf16):
    %k = linalg.index 1 : index
    %c8 = arith.constant 8 : index
    %c4 = arith.constant 4 : index
    %lane = arith.remui %k, %c8 : index
    %bit = arith.muli %lane, %c4 : index
    %shift = arith.index_cast %bit : index to i32
    %shifted = arith.shrui %word, %shift : i32
    %nibble = arith.trunci %shifted : i32 to i4
    %code = arith.bitcast %nibble : i4 to f4E2M1FN
    %f = arith.extf %code : f4E2M1FN to bf16
    %v = arith.mulf %f, %s : bf16
    linalg.yield %v : bf16
  }
  %zero = arith.constant 0.0 : bf16
  linalg.fill ins(%zero : bf16) outs(%y : memref<?x64xbf16>)
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
                                 affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : memref<?x256xbf16>, memref<64x256xbf16>) outs(%y : memref<?x64xbf16>)
  memref.dealloc %w : memref<64x256xbf16>
  return
}

// -----

// MXFP4 (gpt-oss): e2m1 codes packed along K, e8m0 scales per 32
// converted to the weights' type in the body (arith.extf): raised with the
// scales as they are.
// CHECK-LABEL: func.func @mxfp4_like
// CHECK-NEXT:    humming.gemm %{{.*}}, %{{.*}} scales(%{{.*}} : memref<64x8xf8E8M0FNU>) into
// CHECK-SAME:      weight_schema = #humming.weight_schema<type = f4E2M1FN, scale = f8E8M0FNU, granularity = group<32>>}
// CHECK-NEXT:    return
func.func @mxfp4_like(%x: memref<?x256xbf16>, %packed: memref<64x32xi32>, %scales: memref<64x8xf8E8M0FNU>, %y: memref<?x64xbf16>) {
  %w = memref.alloc() : memref<64x256xbf16>
  linalg.generic {indexing_maps = [affine_map<(n, k) -> (n, k floordiv 8)>,
                                   affine_map<(n, k) -> (n, k floordiv 32)>,
                                   affine_map<(n, k) -> (n, k)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%packed, %scales : memref<64x32xi32>, memref<64x8xf8E8M0FNU>) outs(%w : memref<64x256xbf16>) {
  ^bb0(%word: i32, %s: f8E8M0FNU, %o: bf16):
    %k = linalg.index 1 : index
    %c8 = arith.constant 8 : index
    %c4 = arith.constant 4 : index
    %lane = arith.remui %k, %c8 : index
    %bit = arith.muli %lane, %c4 : index
    %shift = arith.index_cast %bit : index to i32
    %shifted = arith.shrui %word, %shift : i32
    %nibble = arith.trunci %shifted : i32 to i4
    %code = arith.bitcast %nibble : i4 to f4E2M1FN
    %f = arith.extf %code : f4E2M1FN to bf16
    %sf = arith.extf %s : f8E8M0FNU to bf16
    %v = arith.mulf %f, %sf : bf16
    linalg.yield %v : bf16
  }
  %zero = arith.constant 0.0 : bf16
  linalg.fill ins(%zero : bf16) outs(%y : memref<?x64xbf16>)
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
                                 affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : memref<?x256xbf16>, memref<64x256xbf16>) outs(%y : memref<?x64xbf16>)
  memref.dealloc %w : memref<64x256xbf16>
  return
}

// -----

// NVFP4 (ModelOpt): e2m1 codes packed along K, e4m3 scales per 16
// converted in the body, and the tensor's global scale ([1], f32 truncated
// to the weights' type) multiplied in last: raised as a
// group_tensor schema with the global scale operand.
// CHECK-LABEL: func.func @nvfp4_global_scale
// CHECK-NEXT:    humming.gemm %{{.*}}, %{{.*}} scales(%{{.*}} : memref<64x16xf8E4M3FN>) global_scale(%{{.*}} : memref<1xf32>) into
// CHECK-SAME:      weight_schema = #humming.weight_schema<type = f4E2M1FN, scale = f8E4M3FN, granularity = group_tensor<16>>}
// CHECK-NEXT:    return
func.func @nvfp4_global_scale(%x: memref<?x256xbf16>, %packed: memref<64x32xi32>, %scales: memref<64x16xf8E4M3FN>, %gs: memref<1xf32>, %y: memref<?x64xbf16>) {
  %w = memref.alloc() : memref<64x256xbf16>
  linalg.generic {indexing_maps = [affine_map<(n, k) -> (n, k floordiv 8)>,
                                   affine_map<(n, k) -> (n, k floordiv 16)>,
                                   affine_map<(n, k) -> (0)>,
                                   affine_map<(n, k) -> (n, k)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%packed, %scales, %gs : memref<64x32xi32>, memref<64x16xf8E4M3FN>, memref<1xf32>) outs(%w : memref<64x256xbf16>) {
  ^bb0(%word: i32, %s: f8E4M3FN, %g: f32, %o: bf16):
    %k = linalg.index 1 : index
    %c8 = arith.constant 8 : index
    %c4 = arith.constant 4 : index
    %lane = arith.remui %k, %c8 : index
    %bit = arith.muli %lane, %c4 : index
    %shift = arith.index_cast %bit : index to i32
    %shifted = arith.shrui %word, %shift : i32
    %nibble = arith.trunci %shifted : i32 to i4
    %code = arith.bitcast %nibble : i4 to f4E2M1FN
    %f = arith.extf %code : f4E2M1FN to bf16
    %sf = arith.extf %s : f8E4M3FN to bf16
    %v = arith.mulf %f, %sf : bf16
    %gh = arith.truncf %g : f32 to bf16
    %vg = arith.mulf %v, %gh : bf16
    linalg.yield %vg : bf16
  }
  %zero = arith.constant 0.0 : bf16
  linalg.fill ins(%zero : bf16) outs(%y : memref<?x64xbf16>)
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
                                 affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : memref<?x256xbf16>, memref<64x256xbf16>) outs(%y : memref<?x64xbf16>)
  memref.dealloc %w : memref<64x256xbf16>
  return
}

// -----

// A batch matmul with one weight matrix per batch element (B [B, N, K]
// indexed (b, n, k), a transposed-B batch matmul): packed ui4 codes
// [B, N, K / 8] minus their implicit 8, f16 scales per group of 32
// [B, N, K / 32]; the dequantization's loops are (b, n, k), the code's k
// is linalg.index 2. It becomes a humming.moe_gemm with one expert per
// batch element: grouped_masked over the [B M, K] rows without counts
// (every expert has all of its M rows).
// CHECK-LABEL: func.func @batch_weights_per_element_packed
// CHECK-SAME:    (%[[X:.*]]: memref<4x?x128xf16>, %[[C:.*]]: memref<4x64x16xi32>, %[[S:.*]]: memref<4x64x4xf16>, %[[Y:.*]]: memref<4x?x64xf16>)
// CHECK-NEXT:    %[[X2:.*]] = memref.collapse_shape %[[X]] {{\[\[}}0, 1], [2]] : memref<4x?x128xf16> into memref<?x128xf16>
// CHECK-NEXT:    %[[Y2:.*]] = memref.collapse_shape %[[Y]] {{\[\[}}0, 1], [2]] : memref<4x?x64xf16> into memref<?x64xf16>
// CHECK-NEXT:    humming.moe_gemm %[[X2]], %[[C]] scales(%[[S]] : memref<4x64x4xf16>) into %[[Y2]]
// CHECK-SAME:      compute = #humming.compute<gemm = grouped_masked>
// CHECK-SAME:      weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<32>, experts = 4>}
// CHECK-SAME:      : memref<?x128xf16>, memref<4x64x16xi32> -> memref<?x64xf16>
// CHECK-NEXT:    return
func.func @batch_weights_per_element_packed(%x: memref<4x?x128xf16>, %codes: memref<4x64x16xi32>, %s: memref<4x64x4xf16>,
                                            %y: memref<4x?x64xf16>) {
  %wd = memref.alloc() : memref<4x64x128xf16>
  linalg.generic {indexing_maps = [affine_map<(b, n, k) -> (b, n, k floordiv 8)>, affine_map<(b, n, k) -> (b, n, k floordiv 32)>,
                                   affine_map<(b, n, k) -> (b, n, k)>],
                  iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%codes, %s : memref<4x64x16xi32>, memref<4x64x4xf16>) outs(%wd : memref<4x64x128xf16>) {
  ^bb0(%c: i32, %sc: f16, %o: f16):
    %k = linalg.index 2 : index
    %c8 = arith.constant 8 : index
    %r = arith.remui %k, %c8 : index
    %c4 = arith.constant 4 : index
    %sh = arith.muli %r, %c4 : index
    %shi = arith.index_cast %sh : index to i32
    %v = arith.shrui %c, %shi : i32
    %m = arith.constant 15 : i32
    %q = arith.andi %v, %m : i32
    %f = arith.uitofp %q : i32 to f16
    %c8f = arith.constant 8.0 : f16
    %z = arith.subf %f, %c8f : f16
    %w = arith.mulf %z, %sc : f16
    linalg.yield %w : f16
  }
  %zero = arith.constant 0.0 : f16
  linalg.fill ins(%zero : f16) outs(%y : memref<4x?x64xf16>)
  linalg.batch_matmul indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>,
                                       affine_map<(b, m, n, k) -> (b, m, n)>]
      ins(%x, %wd : memref<4x?x128xf16>, memref<4x64x128xf16>) outs(%y : memref<4x?x64xf16>)
  memref.dealloc %wd : memref<4x64x128xf16>
  return
}

// -----

// Weights per batch element read as W ([B, K, N] indexed (b, k, n), the
// plain batch matmul): unpacked si8 codes [B, N, K] read (b, n, k) by the
// (b, k, n) loops, per-row f16 scales [B, N] (viewed as [B, N, 1]). The
// batch and M of the input are dynamic (the weights' B is static).
// CHECK-LABEL: func.func @batch_weights_per_element_w8
// CHECK-SAME:    (%[[X:.*]]: memref<?x?x128xf16>, %[[C:.*]]: memref<2x64x128xi8>, %[[S:.*]]: memref<2x64xf16>, %[[Y:.*]]: memref<?x?x64xf16>)
// CHECK-NEXT:    %[[X2:.*]] = memref.collapse_shape %[[X]]
// CHECK-NEXT:    %[[Y2:.*]] = memref.collapse_shape %[[Y]]
// CHECK-NEXT:    %[[S1:.*]] = memref.expand_shape %[[S]] {{\[\[}}0], [1, 2]] output_shape [2, 64, 1] : memref<2x64xf16> into memref<2x64x1xf16>
// CHECK-NEXT:    humming.moe_gemm %[[X2]], %[[C]] scales(%[[S1]] : memref<2x64x1xf16>) into %[[Y2]]
// CHECK-SAME:      weight_schema = #humming.weight_schema<type = si8, scale = f16, experts = 2>}
// CHECK-NEXT:    return
func.func @batch_weights_per_element_w8(%x: memref<?x?x128xf16>, %codes: memref<2x64x128xi8>, %s: memref<2x64xf16>, %y: memref<?x?x64xf16>) {
  %wd = memref.alloc() : memref<2x128x64xf16>
  linalg.generic {indexing_maps = [affine_map<(b, k, n) -> (b, n, k)>, affine_map<(b, k, n) -> (b, n)>,
                                   affine_map<(b, k, n) -> (b, k, n)>],
                  iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%codes, %s : memref<2x64x128xi8>, memref<2x64xf16>) outs(%wd : memref<2x128x64xf16>) {
  ^bb0(%c: i8, %sc: f16, %o: f16):
    %f = arith.sitofp %c : i8 to f16
    %w = arith.mulf %f, %sc : f16
    linalg.yield %w : f16
  }
  %zero = arith.constant 0.0 : f16
  linalg.fill ins(%zero : f16) outs(%y : memref<?x?x64xf16>)
  linalg.batch_matmul ins(%x, %wd : memref<?x?x128xf16>, memref<2x128x64xf16>) outs(%y : memref<?x?x64xf16>)
  memref.dealloc %wd : memref<2x128x64xf16>
  return
}

// -----

// si8 codes with bf16 activations and scales per batch element: the
// prepared layout holds 8-bit integers with bf16 activations (they go
// as the low seven bits and bit 7, PreparedEmitter::wideIntInBf16), so the
// batch is raised too.
// CHECK-LABEL: func.func @batch_weights_si8_bf16
// CHECK:         humming.moe_gemm %{{.*}}, %{{.*}} scales(%{{.*}} : memref<2x64x1xbf16>) into
// CHECK-SAME:      weight_schema = #humming.weight_schema<type = si8, scale = bf16, experts = 2>}
// CHECK-NEXT:    return
func.func @batch_weights_si8_bf16(%x: memref<2x?x128xbf16>, %codes: memref<2x64x128xi8>, %s: memref<2x64xbf16>, %y: memref<2x?x64xbf16>) {
  %wd = memref.alloc() : memref<2x64x128xbf16>
  linalg.generic {indexing_maps = [affine_map<(b, n, k) -> (b, n, k)>, affine_map<(b, n, k) -> (b, n)>,
                                   affine_map<(b, n, k) -> (b, n, k)>],
                  iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%codes, %s : memref<2x64x128xi8>, memref<2x64xbf16>) outs(%wd : memref<2x64x128xbf16>) {
  ^bb0(%c: i8, %sc: bf16, %o: bf16):
    %f = arith.sitofp %c : i8 to bf16
    %w = arith.mulf %f, %sc : bf16
    linalg.yield %w : bf16
  }
  %zero = arith.constant 0.0 : bf16
  linalg.fill ins(%zero : bf16) outs(%y : memref<2x?x64xbf16>)
  linalg.batch_matmul indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>,
                                       affine_map<(b, m, n, k) -> (b, m, n)>]
      ins(%x, %wd : memref<2x?x128xbf16>, memref<2x64x128xbf16>) outs(%y : memref<2x?x64xbf16>)
  return
}

// -----

// NVFP4 per batch element: e2m1 codes [B, N, K / 8] words, e4m3 scales per
// group of 16 [B, N, K / 16] and one f32 global scale per batch element,
// [B] indexed (b): the moe_gemm's global_scale [E].
// CHECK-LABEL: func.func @batch_nvfp4_global_scale
// CHECK:         humming.moe_gemm %{{.*}}, %{{.*}} scales(%{{.*}} : memref<3x64x16xf8E4M3FN>) global_scale(%{{.*}} : memref<3xf32>) into
// CHECK-SAME:      weight_schema = #humming.weight_schema<type = f4E2M1FN, scale = f8E4M3FN, granularity = group_tensor<16>, experts = 3>}
// CHECK-NEXT:    return
func.func @batch_nvfp4_global_scale(%x: memref<3x?x256xbf16>, %packed: memref<3x64x32xi32>, %scales: memref<3x64x16xf8E4M3FN>, %gs: memref<3xf32>, %y: memref<3x?x64xbf16>) {
  %w = memref.alloc() : memref<3x64x256xbf16>
  linalg.generic {indexing_maps = [affine_map<(b, n, k) -> (b, n, k floordiv 8)>,
                                   affine_map<(b, n, k) -> (b, n, k floordiv 16)>,
                                   affine_map<(b, n, k) -> (b)>,
                                   affine_map<(b, n, k) -> (b, n, k)>],
                  iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%packed, %scales, %gs : memref<3x64x32xi32>, memref<3x64x16xf8E4M3FN>, memref<3xf32>) outs(%w : memref<3x64x256xbf16>) {
  ^bb0(%word: i32, %s: f8E4M3FN, %g: f32, %o: bf16):
    %k = linalg.index 2 : index
    %c8 = arith.constant 8 : index
    %c4 = arith.constant 4 : index
    %lane = arith.remui %k, %c8 : index
    %bit = arith.muli %lane, %c4 : index
    %shift = arith.index_cast %bit : index to i32
    %shifted = arith.shrui %word, %shift : i32
    %nibble = arith.trunci %shifted : i32 to i4
    %code = arith.bitcast %nibble : i4 to f4E2M1FN
    %f = arith.extf %code : f4E2M1FN to bf16
    %sf = arith.extf %s : f8E4M3FN to bf16
    %v = arith.mulf %f, %sf : bf16
    %gh = arith.truncf %g : f32 to bf16
    %vg = arith.mulf %v, %gh : bf16
    linalg.yield %vg : bf16
  }
  %zero = arith.constant 0.0 : bf16
  linalg.fill ins(%zero : bf16) outs(%y : memref<3x?x64xbf16>)
  linalg.batch_matmul indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>,
                                       affine_map<(b, m, n, k) -> (b, m, n)>]
      ins(%x, %w : memref<3x?x256xbf16>, memref<3x64x256xbf16>) outs(%y : memref<3x?x64xbf16>)
  memref.dealloc %w : memref<3x64x256xbf16>
  return
}

// -----

// Weights per batch element with integer zero points packed along N
// (compressed-tensors' asymmetric form, one matrix per batch element):
// codes [B, N, K / 8], scales [B, N, G], zero points [B, N / 8, G]; over
// the (b, n, k) loops the code's k is linalg.index 2 and the zero point's
// n linalg.index 1.
// CHECK-LABEL: func.func @batch_weights_per_element_zero_points
// CHECK:         humming.moe_gemm %{{.*}}, %{{.*}} scales(%{{.*}} : memref<2x64x4xf16>) zero_points(%{{.*}} : memref<2x8x4xi32>) into
// CHECK-SAME:      weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<32>, zero_point = int, experts = 2>}
// CHECK-NEXT:    return
func.func @batch_weights_per_element_zero_points(%x: memref<2x?x128xf16>, %codes: memref<2x64x16xi32>, %s: memref<2x64x4xf16>,
                                                 %zp: memref<2x8x4xi32>, %y: memref<2x?x64xf16>) {
  %wd = memref.alloc() : memref<2x64x128xf16>
  linalg.generic {indexing_maps = [affine_map<(b, n, k) -> (b, n, k floordiv 8)>, affine_map<(b, n, k) -> (b, n, k floordiv 32)>,
                                   affine_map<(b, n, k) -> (b, n floordiv 8, k floordiv 32)>, affine_map<(b, n, k) -> (b, n, k)>],
                  iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%codes, %s, %zp : memref<2x64x16xi32>, memref<2x64x4xf16>, memref<2x8x4xi32>) outs(%wd : memref<2x64x128xf16>) {
  ^bb0(%c: i32, %sc: f16, %z: i32, %o: f16):
    %k = linalg.index 2 : index
    %c8 = arith.constant 8 : index
    %r = arith.remui %k, %c8 : index
    %c4 = arith.constant 4 : index
    %sh = arith.muli %r, %c4 : index
    %shi = arith.index_cast %sh : index to i32
    %v = arith.shrui %c, %shi : i32
    %m = arith.constant 15 : i32
    %q = arith.andi %v, %m : i32
    %nn = linalg.index 1 : index
    %zr = arith.remui %nn, %c8 : index
    %zs = arith.muli %zr, %c4 : index
    %zsi = arith.index_cast %zs : index to i32
    %zv = arith.shrui %z, %zsi : i32
    %zq = arith.andi %zv, %m : i32
    %f = arith.uitofp %q : i32 to f16
    %zf = arith.uitofp %zq : i32 to f16
    %d = arith.subf %f, %zf : f16
    %w = arith.mulf %d, %sc : f16
    linalg.yield %w : f16
  }
  %zero = arith.constant 0.0 : f16
  linalg.fill ins(%zero : f16) outs(%y : memref<2x?x64xf16>)
  linalg.batch_matmul indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>,
                                       affine_map<(b, m, n, k) -> (b, m, n)>]
      ins(%x, %wd : memref<2x?x128xf16>, memref<2x64x128xf16>) outs(%y : memref<2x?x64xf16>)
  memref.dealloc %wd : memref<2x64x128xf16>
  return
}
