// RUN: humming-opt %s --humming-raise-quantized-matmul -split-input-file -verify-diagnostics | FileCheck %s

// Near misses of humming-raise-quantized-matmul: each is left as it is (no
// humming.gemm anywhere) with a remark on the matmul that says why.
// CHECK-NOT: humming.gemm

// -----

func.func @no_fill(%x: memref<?x128xf16>, %codes: memref<64x128xi8>, %s: memref<64xf16>, %y: memref<?x64xf16>) {
  %wd = memref.alloc() : memref<64x128xf16>
  linalg.generic {indexing_maps = [affine_map<(n, k) -> (n, k)>, affine_map<(n, k) -> (n)>,
                                   affine_map<(n, k) -> (n, k)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%codes, %s : memref<64x128xi8>, memref<64xf16>) outs(%wd : memref<64x128xf16>) {
  ^bb0(%c: i8, %sc: f16, %o: f16):
    %f = arith.sitofp %c : i8 to f16
    %w = arith.mulf %f, %sc : f16
    linalg.yield %w : f16
  }
  // expected-remark @+1 {{humming-raise-quantized-matmul: not raised: expected 'output' zeroed by a linalg.fill of 0 before the matmul with nothing else touching it in between (linalg.matmul adds to its output, humming.gemm overwrites it)}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
                                 affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %wd : memref<?x128xf16>, memref<64x128xf16>) outs(%y : memref<?x64xf16>)
  return
}

// -----

func.func @fill_not_zero(%x: memref<?x128xf16>, %codes: memref<64x128xi8>, %s: memref<64xf16>, %y: memref<?x64xf16>) {
  %wd = memref.alloc() : memref<64x128xf16>
  linalg.generic {indexing_maps = [affine_map<(n, k) -> (n, k)>, affine_map<(n, k) -> (n)>,
                                   affine_map<(n, k) -> (n, k)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%codes, %s : memref<64x128xi8>, memref<64xf16>) outs(%wd : memref<64x128xf16>) {
  ^bb0(%c: i8, %sc: f16, %o: f16):
    %f = arith.sitofp %c : i8 to f16
    %w = arith.mulf %f, %sc : f16
    linalg.yield %w : f16
  }
  %zero = arith.constant 1.0 : f16
  linalg.fill ins(%zero : f16) outs(%y : memref<?x64xf16>)
  // expected-remark @+1 {{expected 'output' zeroed by a linalg.fill of 0}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
                                 affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %wd : memref<?x128xf16>, memref<64x128xf16>) outs(%y : memref<?x64xf16>)
  return
}

// -----

func.func @f32_output(%x: memref<?x128xf16>, %codes: memref<64x128xi8>, %s: memref<64xf16>, %y: memref<?x64xf32>) {
  %wd = memref.alloc() : memref<64x128xf16>
  linalg.generic {indexing_maps = [affine_map<(n, k) -> (n, k)>, affine_map<(n, k) -> (n)>,
                                   affine_map<(n, k) -> (n, k)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%codes, %s : memref<64x128xi8>, memref<64xf16>) outs(%wd : memref<64x128xf16>) {
  ^bb0(%c: i8, %sc: f16, %o: f16):
    %f = arith.sitofp %c : i8 to f16
    %w = arith.mulf %f, %sc : f16
    linalg.yield %w : f16
  }
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%y : memref<?x64xf32>)
  // expected-remark @+1 {{expected f16 or bf16 input, weights and output of one type (accumulation in f32 happens inside humming.gemm), got memref<?x128xf16>, memref<64x128xf16>, memref<?x64xf32>}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
                                 affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %wd : memref<?x128xf16>, memref<64x128xf16>) outs(%y : memref<?x64xf32>)
  return
}

// -----

func.func @weights_read_twice(%x: memref<?x128xf16>, %codes: memref<64x128xi8>, %s: memref<64xf16>, %y: memref<?x64xf16>, %copy: memref<64x128xf16>) {
  %wd = memref.alloc() : memref<64x128xf16>
  linalg.generic {indexing_maps = [affine_map<(n, k) -> (n, k)>, affine_map<(n, k) -> (n)>,
                                   affine_map<(n, k) -> (n, k)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%codes, %s : memref<64x128xi8>, memref<64xf16>) outs(%wd : memref<64x128xf16>) {
  ^bb0(%c: i8, %sc: f16, %o: f16):
    %f = arith.sitofp %c : i8 to f16
    %w = arith.mulf %f, %sc : f16
    linalg.yield %w : f16
  }
  %zero = arith.constant 0.0 : f16
  linalg.fill ins(%zero : f16) outs(%y : memref<?x64xf16>)
  // expected-remark @+1 {{the dequantized weights are also used by memref.copy: only the matmul may read them}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
                                 affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %wd : memref<?x128xf16>, memref<64x128xf16>) outs(%y : memref<?x64xf16>)
  memref.copy %wd, %copy : memref<64x128xf16> to memref<64x128xf16>
  return
}

// -----

func.func @weights_in_an_argument(%x: memref<?x128xf16>, %codes: memref<64x128xi8>, %s: memref<64xf16>, %y: memref<?x64xf16>, %wd: memref<64x128xf16>) {
  linalg.generic {indexing_maps = [affine_map<(n, k) -> (n, k)>, affine_map<(n, k) -> (n)>,
                                   affine_map<(n, k) -> (n, k)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%codes, %s : memref<64x128xi8>, memref<64xf16>) outs(%wd : memref<64x128xf16>) {
  ^bb0(%c: i8, %sc: f16, %o: f16):
    %f = arith.sitofp %c : i8 to f16
    %w = arith.mulf %f, %sc : f16
    linalg.yield %w : f16
  }
  %zero = arith.constant 0.0 : f16
  linalg.fill ins(%zero : f16) outs(%y : memref<?x64xf16>)
  // expected-remark @+1 {{expected the dequantized weights in a memref.alloc of their own}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
                                 affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %wd : memref<?x128xf16>, memref<64x128xf16>) outs(%y : memref<?x64xf16>)
  return
}

// -----

func.func @scales_per_k(%x: memref<?x128xf16>, %codes: memref<64x128xi8>, %s: memref<64x128xf16>, %y: memref<?x64xf16>) {
  %wd = memref.alloc() : memref<64x128xf16>
  linalg.generic {indexing_maps = [affine_map<(n, k) -> (n, k)>, affine_map<(n, k) -> (n, k)>,
                                   affine_map<(n, k) -> (n, k)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%codes, %s : memref<64x128xi8>, memref<64x128xf16>) outs(%wd : memref<64x128xf16>) {
  ^bb0(%c: i8, %sc: f16, %o: f16):
    %f = arith.sitofp %c : i8 to f16
    %w = arith.mulf %f, %sc : f16
    linalg.yield %w : f16
  }
  %zero = arith.constant 0.0 : f16
  linalg.fill ins(%zero : f16) outs(%y : memref<?x64xf16>)
  // expected-remark @+1 {{the dequantization (linalg.generic writing the weights): the scales of type memref<64x128xf16> indexed by (d0, d1) -> (d0, d1): expected [N, K / g] by (n, k floordiv g), or [N] / [N, 1] by (n) / (n, 0) (N = 64, K = 128)}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
                                 affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %wd : memref<?x128xf16>, memref<64x128xf16>) outs(%y : memref<?x64xf16>)
  return
}

// -----

func.func @f32_scales(%x: memref<?x128xf16>, %codes: memref<64x128xi8>, %s: memref<64xf32>, %y: memref<?x64xf16>) {
  %wd = memref.alloc() : memref<64x128xf16>
  linalg.generic {indexing_maps = [affine_map<(n, k) -> (n, k)>, affine_map<(n, k) -> (n)>,
                                   affine_map<(n, k) -> (n, k)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%codes, %s : memref<64x128xi8>, memref<64xf32>) outs(%wd : memref<64x128xf16>) {
  ^bb0(%c: i8, %sc: f32, %o: f16):
    %f = arith.sitofp %c : i8 to f16
    %s16 = arith.truncf %sc : f32 to f16
    %w = arith.mulf %f, %s16 : f16
    linalg.yield %w : f16
  }
  %zero = arith.constant 0.0 : f16
  linalg.fill ins(%zero : f16) outs(%y : memref<?x64xf16>)
  // expected-remark @+1 {{expected scales of the weights' type f16, or f8E8M0FNU / f8E4M3FN ones converted to it with arith.extf, got f32}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
                                 affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %wd : memref<?x128xf16>, memref<64x128xf16>) outs(%y : memref<?x64xf16>)
  return
}

// -----

func.func @packed_int4(%x: memref<?x128xf16>, %codes: memref<64x128xi32>, %s: memref<64xf16>, %y: memref<?x64xf16>) {
  %wd = memref.alloc() : memref<64x128xf16>
  linalg.generic {indexing_maps = [affine_map<(n, k) -> (n, k)>, affine_map<(n, k) -> (n)>,
                                   affine_map<(n, k) -> (n, k)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%codes, %s : memref<64x128xi32>, memref<64xf16>) outs(%wd : memref<64x128xf16>) {
  ^bb0(%c: i32, %sc: f16, %o: f16):
    %four = arith.constant 4 : i32
    %sh = arith.shrui %c, %four : i32
    %m = arith.constant 15 : i32
    %q = arith.andi %sh, %m : i32
    %f = arith.uitofp %q : i32 to f16
    %w = arith.mulf %f, %sc : f16
    linalg.yield %w : f16
  }
  %zero = arith.constant 0.0 : f16
  linalg.fill ins(%zero : f16) outs(%y : memref<?x64xf16>)
  // expected-remark @+1 {{packed codes: expected packed codes as [N, K b / 32] 32-bit words indexed by (n, k floordiv 32 / b) (humming's canonical form) or [K b / 32, N] indexed by (k floordiv 32 / b, n) (GPTQ's qweight) for b = 1, 2, 4 or 8, or [K, N / 8] indexed by (k, n floordiv 8) (AWQ's qweight) (N = 64, K = 128), got memref<64x128xi32> indexed by (d0, d1) -> (d0, d1)}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
                                 affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %wd : memref<?x128xf16>, memref<64x128xf16>) outs(%y : memref<?x64xf16>)
  return
}

// -----

func.func @bias_in_the_body(%x: memref<?x128xf16>, %codes: memref<64x128xi8>, %s: memref<64xf16>, %y: memref<?x64xf16>) {
  %wd = memref.alloc() : memref<64x128xf16>
  linalg.generic {indexing_maps = [affine_map<(n, k) -> (n, k)>, affine_map<(n, k) -> (n)>,
                                   affine_map<(n, k) -> (n, k)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%codes, %s : memref<64x128xi8>, memref<64xf16>) outs(%wd : memref<64x128xf16>) {
  ^bb0(%c: i8, %sc: f16, %o: f16):
    %f = arith.sitofp %c : i8 to f16
    %w = arith.mulf %f, %sc : f16
    %one = arith.constant 1.0 : f16
    %b = arith.addf %w, %one : f16
    linalg.yield %b : f16
  }
  %zero = arith.constant 0.0 : f16
  linalg.fill ins(%zero : f16) outs(%y : memref<?x64xf16>)
  // expected-remark @+1 {{expected a body of a conversion of the code, a multiplication by the scale and the yield, got 4 operations}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
                                 affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %wd : memref<?x128xf16>, memref<64x128xf16>) outs(%y : memref<?x64xf16>)
  return
}

// -----

// output = input * W with W [K, N] dequantized from 8-bit codes stored
// [K, N]: humming.gemm takes 8-bit codes [N, K] (unpacked codes in another
// order need a transpose, not a relabelling).
func.func @codes_k_major_8bit(%x: memref<?x128xf16>, %codes: memref<128x64xi8>, %s: memref<128xf16>, %y: memref<?x64xf16>) {
  %wd = memref.alloc() : memref<128x64xf16>
  linalg.generic {indexing_maps = [affine_map<(n, k) -> (n, k)>, affine_map<(n, k) -> (n)>,
                                   affine_map<(n, k) -> (n, k)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%codes, %s : memref<128x64xi8>, memref<128xf16>) outs(%wd : memref<128x64xf16>) {
  ^bb0(%c: i8, %sc: f16, %o: f16):
    %f = arith.sitofp %c : i8 to f16
    %w = arith.mulf %f, %sc : f16
    linalg.yield %w : f16
  }
  %zero = arith.constant 0.0 : f16
  linalg.fill ins(%zero : f16) outs(%y : memref<?x64xf16>)
  // expected-remark @+1 {{the dequantization (linalg.generic writing the weights [K, N]: its maps read as of (n, k) = (d0, d1)): expected the codes [64, 128] indexed by (n, k) with an identity layout, got memref<128x64xi8> indexed by (d0, d1) -> (d1, d0)}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>,
                                 affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %wd : memref<?x128xf16>, memref<128x64xf16>) outs(%y : memref<?x64xf16>)
  return
}

// -----

// A schema humming.gemm does not take (zero points with float codes).
func.func @fp8_zero_points(%x: memref<?x128xf16>, %codes: memref<64x128xf8E4M3FN>, %s: memref<64xf16>, %z: memref<64xf16>, %y: memref<?x64xf16>) {
  %wd = memref.alloc() : memref<64x128xf16>
  linalg.generic {indexing_maps = [affine_map<(n, k) -> (n, k)>, affine_map<(n, k) -> (n)>,
                                   affine_map<(n, k) -> (n)>, affine_map<(n, k) -> (n, k)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%codes, %s, %z : memref<64x128xf8E4M3FN>, memref<64xf16>, memref<64xf16>) outs(%wd : memref<64x128xf16>) {
  ^bb0(%c: f8E4M3FN, %sc: f16, %zp: f16, %o: f16):
    %f = arith.extf %c : f8E4M3FN to f16
    %d = arith.subf %f, %zp : f16
    %w = arith.mulf %d, %sc : f16
    linalg.yield %w : f16
  }
  %zero = arith.constant 0.0 : f16
  linalg.fill ins(%zero : f16) outs(%y : memref<?x64xf16>)
  // expected-remark @+1 {{the schema found (f8E4M3FN codes, f16 scales per row, float zero points) is not valid: expected an unsigned integer weight type with a zero point, got f8E4M3FN}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
                                 affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %wd : memref<?x128xf16>, memref<64x128xf16>) outs(%y : memref<?x64xf16>)
  return
}

// -----

// Tensors whose matmul init is a function argument, not a zeroed tensor:
// linalg.matmul adds to it, humming.gemm would not.
func.func @tensors_init_not_zeroed(%x: tensor<?x128xf16>, %codes: tensor<64x128xi8>, %s: tensor<64xf16>, %y: tensor<?x64xf16>,
                   %e: tensor<64x128xf16>) -> tensor<?x64xf16> {
  %wd = linalg.generic {indexing_maps = [affine_map<(n, k) -> (n, k)>, affine_map<(n, k) -> (n)>,
                                   affine_map<(n, k) -> (n, k)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%codes, %s : tensor<64x128xi8>, tensor<64xf16>) outs(%e : tensor<64x128xf16>) {
  ^bb0(%c: i8, %sc: f16, %o: f16):
    %f = arith.sitofp %c : i8 to f16
    %w = arith.mulf %f, %sc : f16
    linalg.yield %w : f16
  } -> tensor<64x128xf16>
  // expected-remark @+1 {{expected 'output' a linalg.fill of 0 (linalg.matmul adds to its output, humming.gemm overwrites it)}}
  %r = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
                                 affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %wd : tensor<?x128xf16>, tensor<64x128xf16>) outs(%y : tensor<?x64xf16>) -> tensor<?x64xf16>
  return %r : tensor<?x64xf16>
}

// -----

// Tensors: the init is filled with 1, not 0.
func.func @tensors_init_filled_with_one(%x: tensor<?x128xf16>, %codes: tensor<64x128xi8>, %s: tensor<64xf16>,
                                        %e: tensor<64x128xf16>, %ye: tensor<?x64xf16>) -> tensor<?x64xf16> {
  %wd = linalg.generic {indexing_maps = [affine_map<(n, k) -> (n, k)>, affine_map<(n, k) -> (n)>,
                                   affine_map<(n, k) -> (n, k)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%codes, %s : tensor<64x128xi8>, tensor<64xf16>) outs(%e : tensor<64x128xf16>) {
  ^bb0(%c: i8, %sc: f16, %o: f16):
    %f = arith.sitofp %c : i8 to f16
    %w = arith.mulf %f, %sc : f16
    linalg.yield %w : f16
  } -> tensor<64x128xf16>
  %one = arith.constant 1.0 : f16
  %y0 = linalg.fill ins(%one : f16) outs(%ye : tensor<?x64xf16>) -> tensor<?x64xf16>
  // expected-remark @+1 {{expected 'output' a linalg.fill of 0}}
  %r = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
                                 affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %wd : tensor<?x128xf16>, tensor<64x128xf16>) outs(%y0 : tensor<?x64xf16>) -> tensor<?x64xf16>
  return %r : tensor<?x64xf16>
}

// -----

// Tensors: the dequantized weights are also returned, so they must exist.
func.func @tensors_weights_escape(%x: tensor<?x128xf16>, %codes: tensor<64x128xi8>, %s: tensor<64xf16>,
                                  %e: tensor<64x128xf16>, %ye: tensor<?x64xf16>)
    -> (tensor<?x64xf16>, tensor<64x128xf16>) {
  %wd = linalg.generic {indexing_maps = [affine_map<(n, k) -> (n, k)>, affine_map<(n, k) -> (n)>,
                                   affine_map<(n, k) -> (n, k)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%codes, %s : tensor<64x128xi8>, tensor<64xf16>) outs(%e : tensor<64x128xf16>) {
  ^bb0(%c: i8, %sc: f16, %o: f16):
    %f = arith.sitofp %c : i8 to f16
    %w = arith.mulf %f, %sc : f16
    linalg.yield %w : f16
  } -> tensor<64x128xf16>
  %zero = arith.constant 0.0 : f16
  %y0 = linalg.fill ins(%zero : f16) outs(%ye : tensor<?x64xf16>) -> tensor<?x64xf16>
  // expected-remark @+1 {{the dequantized weights are also used by func.return: only the matmul may read them}}
  %r = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
                                 affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %wd : tensor<?x128xf16>, tensor<64x128xf16>) outs(%y0 : tensor<?x64xf16>) -> tensor<?x64xf16>
  return %r, %wd : tensor<?x64xf16>, tensor<64x128xf16>
}

// -----

// Tensors: K dynamic in the input (the weights' K is static, the input's
// is not): humming.gemm needs static N and K.
func.func @tensors_dynamic_k(%x: tensor<?x?xf16>, %codes: tensor<64x128xi8>, %s: tensor<64xf16>,
                             %e: tensor<64x128xf16>, %ye: tensor<?x64xf16>) -> tensor<?x64xf16> {
  %wd = linalg.generic {indexing_maps = [affine_map<(n, k) -> (n, k)>, affine_map<(n, k) -> (n)>,
                                   affine_map<(n, k) -> (n, k)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%codes, %s : tensor<64x128xi8>, tensor<64xf16>) outs(%e : tensor<64x128xf16>) {
  ^bb0(%c: i8, %sc: f16, %o: f16):
    %f = arith.sitofp %c : i8 to f16
    %w = arith.mulf %f, %sc : f16
    linalg.yield %w : f16
  } -> tensor<64x128xf16>
  %zero = arith.constant 0.0 : f16
  %y0 = linalg.fill ins(%zero : f16) outs(%ye : tensor<?x64xf16>) -> tensor<?x64xf16>
  // expected-remark @+1 {{expected tensors with static N and K (M may be dynamic), got tensor<?x?xf16>, tensor<64x128xf16>, tensor<?x64xf16>}}
  %r = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
                                 affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %wd : tensor<?x?xf16>, tensor<64x128xf16>) outs(%y0 : tensor<?x64xf16>) -> tensor<?x64xf16>
  return %r : tensor<?x64xf16>
}

// -----

// The output written between the fill and the matmul (inside a loop): the
// matmul adds to that, humming.gemm would not.
func.func @output_written_between(%x: memref<?x128xf16>, %codes: memref<64x128xi8>, %s: memref<64xf16>,
                                  %y: memref<?x64xf16>, %b: memref<?x64xf16>, %n: index) {
  %wd = memref.alloc() : memref<64x128xf16>
  linalg.generic {indexing_maps = [affine_map<(n, k) -> (n, k)>, affine_map<(n, k) -> (n)>,
                                   affine_map<(n, k) -> (n, k)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%codes, %s : memref<64x128xi8>, memref<64xf16>) outs(%wd : memref<64x128xf16>) {
  ^bb0(%c: i8, %sc: f16, %o: f16):
    %f = arith.sitofp %c : i8 to f16
    %w = arith.mulf %f, %sc : f16
    linalg.yield %w : f16
  }
  %zero = arith.constant 0.0 : f16
  linalg.fill ins(%zero : f16) outs(%y : memref<?x64xf16>)
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    memref.copy %b, %y : memref<?x64xf16> to memref<?x64xf16>
  }
  // expected-remark @+1 {{expected 'output' zeroed by a linalg.fill of 0 before the matmul with nothing else touching it in between}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
                                 affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %wd : memref<?x128xf16>, memref<64x128xf16>) outs(%y : memref<?x64xf16>)
  return
}

// -----

// The codes overwritten after the dequantization read them.
func.func @codes_changed_between(%x: memref<?x128xf16>, %codes: memref<64x128xi8>, %s: memref<64xf16>,
                                 %y: memref<?x64xf16>, %other: memref<64x128xi8>) {
  %wd = memref.alloc() : memref<64x128xf16>
  linalg.generic {indexing_maps = [affine_map<(n, k) -> (n, k)>, affine_map<(n, k) -> (n)>,
                                   affine_map<(n, k) -> (n, k)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%codes, %s : memref<64x128xi8>, memref<64xf16>) outs(%wd : memref<64x128xf16>) {
  ^bb0(%c: i8, %sc: f16, %o: f16):
    %f = arith.sitofp %c : i8 to f16
    %w = arith.mulf %f, %sc : f16
    linalg.yield %w : f16
  }
  memref.copy %other, %codes : memref<64x128xi8> to memref<64x128xi8>
  %zero = arith.constant 0.0 : f16
  linalg.fill ins(%zero : f16) outs(%y : memref<?x64xf16>)
  // expected-remark @+1 {{the codes, scales or zero points are used between the dequantization and the matmul: expected them unchanged there}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
                                 affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %wd : memref<?x128xf16>, memref<64x128xf16>) outs(%y : memref<?x64xf16>)
  return
}

// -----

// Unsigned codes used as they are: humming's unsigned codes without zero
// points stand for code - 128.
func.func @uint8_without_zero(%x: memref<?x128xf16>, %codes: memref<64x128xi8>, %s: memref<64xf16>,
                              %y: memref<?x64xf16>) {
  %wd = memref.alloc() : memref<64x128xf16>
  linalg.generic {indexing_maps = [affine_map<(n, k) -> (n, k)>, affine_map<(n, k) -> (n)>,
                                   affine_map<(n, k) -> (n, k)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%codes, %s : memref<64x128xi8>, memref<64xf16>) outs(%wd : memref<64x128xf16>) {
  ^bb0(%c: i8, %sc: f16, %o: f16):
    %f = arith.uitofp %c : i8 to f16
    %w = arith.mulf %f, %sc : f16
    linalg.yield %w : f16
  }
  %zero = arith.constant 0.0 : f16
  linalg.fill ins(%zero : f16) outs(%y : memref<?x64xf16>)
  // expected-remark @+1 {{expected unsigned codes minus a zero point (a third input) or minus 128 (humming's implicit zero for unsigned codes without zero points), got codes used as they are}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
                                 affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %wd : memref<?x128xf16>, memref<64x128xf16>) outs(%y : memref<?x64xf16>)
  return
}

// -----

// Unsigned codes minus another constant.
func.func @uint8_minus_100(%x: memref<?x128xf16>, %codes: memref<64x128xi8>, %s: memref<64xf16>,
                           %y: memref<?x64xf16>) {
  %wd = memref.alloc() : memref<64x128xf16>
  linalg.generic {indexing_maps = [affine_map<(n, k) -> (n, k)>, affine_map<(n, k) -> (n)>,
                                   affine_map<(n, k) -> (n, k)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%codes, %s : memref<64x128xi8>, memref<64xf16>) outs(%wd : memref<64x128xf16>) {
  ^bb0(%c: i8, %sc: f16, %o: f16):
    %f = arith.uitofp %c : i8 to f16
    %z = arith.constant 100.0 : f16
    %d = arith.subf %f, %z : f16
    %w = arith.mulf %d, %sc : f16
    linalg.yield %w : f16
  }
  %zero = arith.constant 0.0 : f16
  linalg.fill ins(%zero : f16) outs(%y : memref<?x64xf16>)
  // expected-remark @+1 {{expected unsigned codes minus 128 (their implicit zero without a zero point tensor), arith.subf of a constant}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
                                 affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %wd : memref<?x128xf16>, memref<64x128xf16>) outs(%y : memref<?x64xf16>)
  return
}

// -----

// N not a multiple of the kernels' 64: humming.gemm would need padded
// weights, which the raise cannot make without a copy.
func.func @n_needs_padding(%x: memref<?x128xf16>, %codes: memref<32x128xi8>, %s: memref<32xf16>,
                           %y: memref<?x32xf16>) {
  %wd = memref.alloc() : memref<32x128xf16>
  linalg.generic {indexing_maps = [affine_map<(n, k) -> (n, k)>, affine_map<(n, k) -> (n)>,
                                   affine_map<(n, k) -> (n, k)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%codes, %s : memref<32x128xi8>, memref<32xf16>) outs(%wd : memref<32x128xf16>) {
  ^bb0(%c: i8, %sc: f16, %o: f16):
    %f = arith.sitofp %c : i8 to f16
    %w = arith.mulf %f, %sc : f16
    linalg.yield %w : f16
  }
  %zero = arith.constant 0.0 : f16
  linalg.fill ins(%zero : f16) outs(%y : memref<?x32xf16>)
  // expected-remark @+1 {{the sizes N = 32, K = 128 need padding: expected the padded N to be a multiple of 64, got 32 (pad N with pad_n)}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
                                 affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %wd : memref<?x128xf16>, memref<32x128xf16>) outs(%y : memref<?x32xf16>)
  return
}

// -----

// Something before the conversion of the code.
func.func @scale_first(%x: memref<?x128xf16>, %codes: memref<64x128xi8>, %s: memref<64xf16>, %y: memref<?x64xf16>) {
  %wd = memref.alloc() : memref<64x128xf16>
  linalg.generic {indexing_maps = [affine_map<(n, k) -> (n, k)>, affine_map<(n, k) -> (n)>,
                                   affine_map<(n, k) -> (n, k)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%codes, %s : memref<64x128xi8>, memref<64xf16>) outs(%wd : memref<64x128xf16>) {
  ^bb0(%c: i8, %sc: f16, %o: f16):
    %t = arith.negf %sc : f16
    %f = arith.sitofp %c : i8 to f16
    linalg.yield %f : f16
  }
  %zero = arith.constant 0.0 : f16
  linalg.fill ins(%zero : f16) outs(%y : memref<?x64xf16>)
  // expected-remark @+1 {{expected the conversion of the code as the body's first step, got arith.negf}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
                                 affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %wd : memref<?x128xf16>, memref<64x128xf16>) outs(%y : memref<?x64xf16>)
  return
}

// -----

// Packed codes whose arithmetic picks another code than humming's canonical
// order (the most significant nibble first): the evaluation finds it.
func.func @packed_nibbles_reversed(%x: memref<?x128xf16>, %codes: memref<64x16xi32>, %s: memref<64xf16>, %y: memref<?x64xf16>) {
  %wd = memref.alloc() : memref<64x128xf16>
  linalg.generic {indexing_maps = [affine_map<(n, k) -> (n, k floordiv 8)>, affine_map<(n, k) -> (n)>,
                                   affine_map<(n, k) -> (n, k)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%codes, %s : memref<64x16xi32>, memref<64xf16>) outs(%wd : memref<64x128xf16>) {
  ^bb0(%c: i32, %sc: f16, %o: f16):
    %k = linalg.index 1 : index
    %c8 = arith.constant 8 : index
    %r = arith.remui %k, %c8 : index
    %c4 = arith.constant 4 : index
    %sh = arith.muli %r, %c4 : index
    %c28 = arith.constant 28 : index
    %rev = arith.subi %c28, %sh : index
    %shi = arith.index_cast %rev : index to i32
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
  // expected-remark @+1 {{packed codes: expected the body to extract the code at k as bits 4 (k mod 8) ..+4 of its word (least significant first), got 7 for word 76543210 at k = 0 (want 0)}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
                                 affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %wd : memref<?x128xf16>, memref<64x128xf16>) outs(%y : memref<?x64xf16>)
  return
}

// -----

// The code's extraction may use the word, k and constants only.
func.func @packed_code_uses_scale(%x: memref<?x128xf16>, %codes: memref<64x16xi32>, %s: memref<64xf16>, %y: memref<?x64xf16>) {
  %wd = memref.alloc() : memref<64x128xf16>
  linalg.generic {indexing_maps = [affine_map<(n, k) -> (n, k floordiv 8)>, affine_map<(n, k) -> (n)>,
                                   affine_map<(n, k) -> (n, k)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%codes, %s : memref<64x16xi32>, memref<64xf16>) outs(%wd : memref<64x128xf16>) {
  ^bb0(%c: i32, %sc: f16, %o: f16):
    %k = linalg.index 1 : index
    %c8 = arith.constant 8 : index
    %r = arith.remui %k, %c8 : index
    %c4 = arith.constant 4 : index
    %sh = arith.muli %r, %c4 : index
    %shi = arith.index_cast %sh : index to i32
    %v = arith.shrui %c, %shi : i32
    %sb = arith.bitcast %sc : f16 to i16
    %sx = arith.extui %sb : i16 to i32
    %v2 = arith.xori %v, %sx : i32
    %m = arith.constant 15 : i32
    %q = arith.andi %v2, %m : i32
    %f = arith.uitofp %q : i32 to f16
    %c8f = arith.constant 8.0 : f16
    %z = arith.subf %f, %c8f : f16
    %w = arith.mulf %z, %sc : f16
    linalg.yield %w : f16
  }
  %zero = arith.constant 0.0 : f16
  linalg.fill ins(%zero : f16) outs(%y : memref<?x64xf16>)
  // expected-remark @+1 {{packed codes: expected integer arithmetic (arith shifts, masks, add, sub, mul, div, rem, casts) extracting the code, got arith.bitcast}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
                                 affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %wd : memref<?x128xf16>, memref<64x128xf16>) outs(%y : memref<?x64xf16>)
  return
}

// -----

func.func @packed_code_uses_n(%x: memref<?x128xf16>, %codes: memref<64x16xi32>, %s: memref<64xf16>, %y: memref<?x64xf16>) {
  %wd = memref.alloc() : memref<64x128xf16>
  linalg.generic {indexing_maps = [affine_map<(n, k) -> (n, k floordiv 8)>, affine_map<(n, k) -> (n)>,
                                   affine_map<(n, k) -> (n, k)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%codes, %s : memref<64x16xi32>, memref<64xf16>) outs(%wd : memref<64x128xf16>) {
  ^bb0(%c: i32, %sc: f16, %o: f16):
    %n = linalg.index 0 : index
    %ni = arith.index_cast %n : index to i32
    %v = arith.shrui %c, %ni : i32
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
  // expected-remark @+1 {{packed codes: expected the code computed from k (linalg.index 1), got linalg.index 0}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
                                 affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %wd : memref<?x128xf16>, memref<64x128xf16>) outs(%y : memref<?x64xf16>)
  return
}

// -----

func.func @packed_code_unsupported_op(%x: memref<?x128xf16>, %codes: memref<64x16xi32>, %s: memref<64xf16>, %y: memref<?x64xf16>) {
  %wd = memref.alloc() : memref<64x128xf16>
  linalg.generic {indexing_maps = [affine_map<(n, k) -> (n, k floordiv 8)>, affine_map<(n, k) -> (n)>,
                                   affine_map<(n, k) -> (n, k)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%codes, %s : memref<64x16xi32>, memref<64xf16>) outs(%wd : memref<64x128xf16>) {
  ^bb0(%c: i32, %sc: f16, %o: f16):
    %k = linalg.index 1 : index
    %c8 = arith.constant 8 : index
    %r = arith.remui %k, %c8 : index
    %c4 = arith.constant 4 : index
    %sh = arith.muli %r, %c4 : index
    %shi = arith.index_cast %sh : index to i32
    %v = arith.shrui %c, %shi : i32
    %m = arith.constant 15 : i32
    %q = arith.minui %v, %m : i32
    %f = arith.uitofp %q : i32 to f16
    %c8f = arith.constant 8.0 : f16
    %z = arith.subf %f, %c8f : f16
    %w = arith.mulf %z, %sc : f16
    linalg.yield %w : f16
  }
  %zero = arith.constant 0.0 : f16
  linalg.fill ins(%zero : f16) outs(%y : memref<?x64xf16>)
  // expected-remark @+1 {{packed codes: expected integer arithmetic (arith shifts, masks, add, sub, mul, div, rem, casts) extracting the code, got arith.minui}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
                                 affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %wd : memref<?x128xf16>, memref<64x128xf16>) outs(%y : memref<?x64xf16>)
  return
}

// -----

// Unsigned 4-bit codes without zero points mean code - 8 in humming.
func.func @packed_uint4_without_zero(%x: memref<?x128xf16>, %codes: memref<64x16xi32>, %s: memref<64xf16>, %y: memref<?x64xf16>) {
  %wd = memref.alloc() : memref<64x128xf16>
  linalg.generic {indexing_maps = [affine_map<(n, k) -> (n, k floordiv 8)>, affine_map<(n, k) -> (n)>,
                                   affine_map<(n, k) -> (n, k)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%codes, %s : memref<64x16xi32>, memref<64xf16>) outs(%wd : memref<64x128xf16>) {
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
    %w = arith.mulf %f, %sc : f16
    linalg.yield %w : f16
  }
  %zero = arith.constant 0.0 : f16
  linalg.fill ins(%zero : f16) outs(%y : memref<?x64xf16>)
  // expected-remark @+1 {{expected unsigned codes minus a zero point (a third input) or minus 8 (humming's implicit zero for unsigned codes without zero points), got codes used as they are}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
                                 affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %wd : memref<?x128xf16>, memref<64x128xf16>) outs(%y : memref<?x64xf16>)
  return
}

// -----

// Integer zero points are packed along N: extracted by k they are not.
func.func @packed_zero_points_along_k(%x: memref<?x128xf16>, %codes: memref<64x16xi32>, %s: memref<64x4xf16>,
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
    %zv = arith.shrui %z, %shi : i32
    %zq = arith.andi %zv, %m : i32
    %f = arith.uitofp %q : i32 to f16
    %zf = arith.uitofp %zq : i32 to f16
    %d = arith.subf %f, %zf : f16
    %w = arith.mulf %d, %sc : f16
    linalg.yield %w : f16
  }
  %zero = arith.constant 0.0 : f16
  linalg.fill ins(%zero : f16) outs(%y : memref<?x64xf16>)
  // expected-remark @+1 {{packed zero points: expected the zero point computed from n (linalg.index 0), got linalg.index 1}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
                                 affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %wd : memref<?x128xf16>, memref<64x128xf16>) outs(%y : memref<?x64xf16>)
  return
}

// -----

// Zero points per group with the scales: one word column per group.
func.func @packed_zero_points_shape(%x: memref<?x128xf16>, %codes: memref<64x16xi32>, %s: memref<64x4xf16>,
                              %zp: memref<8x1xi32>, %y: memref<?x64xf16>) {
  %wd = memref.alloc() : memref<64x128xf16>
  linalg.generic {indexing_maps = [affine_map<(n, k) -> (n, k floordiv 8)>, affine_map<(n, k) -> (n, k floordiv 32)>,
                                   affine_map<(n, k) -> (n floordiv 8, 0)>, affine_map<(n, k) -> (n, k)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%codes, %s, %zp : memref<64x16xi32>, memref<64x4xf16>, memref<8x1xi32>) outs(%wd : memref<64x128xf16>) {
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
  // expected-remark @+1 {{packed zero points: expected [N b / 32, G] 32-bit words indexed by (n floordiv 32 / b, k floordiv g) (N = 64, b = 4, G = 4), got memref<8x1xi32> indexed by (d0, d1) -> (d0 floordiv 8, 0)}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
                                 affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %wd : memref<?x128xf16>, memref<64x128xf16>) outs(%y : memref<?x64xf16>)
  return
}

// -----

// Integer zero points given but never converted and subtracted.
func.func @packed_zero_points_unconverted(%x: memref<?x128xf16>, %codes: memref<64x16xi32>, %s: memref<64x4xf16>,
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
    %f = arith.uitofp %q : i32 to f16
    %c8f = arith.constant 8.0 : f16
    %d = arith.subf %f, %c8f : f16
    %w = arith.mulf %d, %sc : f16
    linalg.yield %w : f16
  }
  %zero = arith.constant 0.0 : f16
  linalg.fill ins(%zero : f16) outs(%y : memref<?x64xf16>)
  // expected-remark @+1 {{expected integer zero points (i32 words, the third input) converted to f16 with arith.uitofp}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
                                 affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %wd : memref<?x128xf16>, memref<64x128xf16>) outs(%y : memref<?x64xf16>)
  return
}

// -----

// Zero points converted as signed 4-bit values: humming's are unsigned.
func.func @packed_zero_points_signed(%x: memref<?x128xf16>, %codes: memref<64x16xi32>, %s: memref<64x4xf16>,
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
    %f = arith.uitofp %q : i32 to f16
    %nn = linalg.index 0 : index
    %zr = arith.remui %nn, %c8 : index
    %zs = arith.muli %zr, %c4 : index
    %zsi = arith.index_cast %zs : index to i32
    %zv = arith.shrui %z, %zsi : i32
    %zt = arith.trunci %zv : i32 to i4
    %zf = arith.sitofp %zt : i4 to f16
    %d = arith.subf %f, %zf : f16
    %w = arith.mulf %d, %sc : f16
    linalg.yield %w : f16
  }
  %zero = arith.constant 0.0 : f16
  linalg.fill ins(%zero : f16) outs(%y : memref<?x64xf16>)
  // expected-remark @+1 {{expected unsigned zero points (humming's integer zero points are unsigned b-bit values), got a signed conversion of an i4}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
                                 affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %wd : memref<?x128xf16>, memref<64x128xf16>) outs(%y : memref<?x64xf16>)
  return
}

// -----

// Packed codes with one step more than the dequantization: the count
// leaves the extraction out.
func.func @packed_extra_step(%x: memref<?x128xf16>, %codes: memref<64x16xi32>, %s: memref<64xf16>, %y: memref<?x64xf16>) {
  %wd = memref.alloc() : memref<64x128xf16>
  linalg.generic {indexing_maps = [affine_map<(n, k) -> (n, k floordiv 8)>, affine_map<(n, k) -> (n)>,
                                   affine_map<(n, k) -> (n, k)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%codes, %s : memref<64x16xi32>, memref<64xf16>) outs(%wd : memref<64x128xf16>) {
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
    %n = arith.negf %z : f16
    %w = arith.mulf %n, %sc : f16
    linalg.yield %w : f16
  }
  %zero = arith.constant 0.0 : f16
  linalg.fill ins(%zero : f16) outs(%y : memref<?x64xf16>)
  // expected-remark @+1 {{expected a body of a conversion of the code, a multiplication by the scale and the yield, got 5 operations besides the code's extraction (unsigned codes: also a subtraction of 8)}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
                                 affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %wd : memref<?x128xf16>, memref<64x128xf16>) outs(%y : memref<?x64xf16>)
  return
}

// -----

// Signed packed codes with a step of the scale before their conversion.
func.func @packed_step_before_conversion(%x: memref<?x128xf16>, %codes: memref<64x16xi32>, %s: memref<64xf16>, %y: memref<?x64xf16>) {
  %wd = memref.alloc() : memref<64x128xf16>
  linalg.generic {indexing_maps = [affine_map<(n, k) -> (n, k floordiv 8)>, affine_map<(n, k) -> (n)>,
                                   affine_map<(n, k) -> (n, k)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%codes, %s : memref<64x16xi32>, memref<64xf16>) outs(%wd : memref<64x128xf16>) {
  ^bb0(%c: i32, %sc: f16, %o: f16):
    %k = linalg.index 1 : index
    %c8 = arith.constant 8 : index
    %r = arith.remui %k, %c8 : index
    %c4 = arith.constant 4 : index
    %sh = arith.muli %r, %c4 : index
    %shi = arith.index_cast %sh : index to i32
    %v = arith.shrui %c, %shi : i32
    %q = arith.trunci %v : i32 to i4
    %ns = arith.negf %sc : f16
    %f = arith.sitofp %q : i4 to f16
    linalg.yield %f : f16
  }
  %zero = arith.constant 0.0 : f16
  linalg.fill ins(%zero : f16) outs(%y : memref<?x64xf16>)
  // expected-remark @+1 {{expected the conversion of the code as the body's first step after the code's extraction, got arith.negf}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
                                 affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %wd : memref<?x128xf16>, memref<64x128xf16>) outs(%y : memref<?x64xf16>)
  return
}

// -----

// Unsigned 4-bit codes minus a constant other than their implicit 8.
func.func @packed_wrong_implicit_zero(%x: memref<?x128xf16>, %codes: memref<64x16xi32>, %s: memref<64xf16>, %y: memref<?x64xf16>) {
  %wd = memref.alloc() : memref<64x128xf16>
  linalg.generic {indexing_maps = [affine_map<(n, k) -> (n, k floordiv 8)>, affine_map<(n, k) -> (n)>,
                                   affine_map<(n, k) -> (n, k)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%codes, %s : memref<64x16xi32>, memref<64xf16>) outs(%wd : memref<64x128xf16>) {
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
    %c7f = arith.constant 7.0 : f16
    %z = arith.subf %f, %c7f : f16
    %w = arith.mulf %z, %sc : f16
    linalg.yield %w : f16
  }
  %zero = arith.constant 0.0 : f16
  linalg.fill ins(%zero : f16) outs(%y : memref<?x64xf16>)
  // expected-remark @+1 {{expected unsigned codes minus 8 (their implicit zero without a zero point tensor), arith.subf of a constant}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
                                 affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %wd : memref<?x128xf16>, memref<64x128xf16>) outs(%y : memref<?x64xf16>)
  return
}

// -----

// GPTQ's qweight with the scales in humming's orientation [N, K / g]:
// a GPTQ layer's scales are [K / g, N].
func.func @gptq_scales_canonical(%x: memref<?x256xf16>, %qweight: memref<32x64xi32>, %scales: memref<64x2xf16>, %qzeros: memref<2x8xi32>,
    %y: memref<?x64xf16>) {
  %w = memref.alloc() : memref<64x256xf16>
  linalg.generic {indexing_maps = [affine_map<(n, k) -> (k floordiv 8, n)>,
                                   affine_map<(n, k) -> (n, k floordiv 128)>,
                                   affine_map<(n, k) -> (k floordiv 128, n floordiv 8)>,
                                   affine_map<(n, k) -> (n, k)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%qweight, %scales, %qzeros : memref<32x64xi32>, memref<64x2xf16>, memref<2x8xi32>)
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
  // expected-remark @+1 {{the scales of type memref<64x2xf16> indexed by (d0, d1) -> (d0, d1 floordiv 128): with GPTQ's qweight expected its scales [K / g, N] by (k floordiv g, n) or [1, N] by (0, n) (N = 64, K = 256)}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
                                 affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : memref<?x256xf16>, memref<64x256xf16>) outs(%y : memref<?x64xf16>)
  memref.dealloc %w : memref<64x256xf16>
  return
}

// -----

// GPTQ's qweight with zero points packed as compressed-tensors' [N / 8, G].
func.func @gptq_qzeros_canonical(%x: memref<?x256xf16>, %qweight: memref<32x64xi32>, %scales: memref<2x64xf16>, %qzeros: memref<8x2xi32>,
    %y: memref<?x64xf16>) {
  %w = memref.alloc() : memref<64x256xf16>
  linalg.generic {indexing_maps = [affine_map<(n, k) -> (k floordiv 8, n)>,
                                   affine_map<(n, k) -> (k floordiv 128, n)>,
                                   affine_map<(n, k) -> (n floordiv 8, k floordiv 128)>,
                                   affine_map<(n, k) -> (n, k)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%qweight, %scales, %qzeros : memref<32x64xi32>, memref<2x64xf16>, memref<8x2xi32>)
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
  // expected-remark @+1 {{packed zero points with GPTQ's qweight: expected its qzeros [G, N b / 32] 32-bit words indexed by (k floordiv g, n floordiv 32 / b) (N = 64, b = 4, G = 2), got memref<8x2xi32> indexed by (d0, d1) -> (d0 floordiv 8, d1 floordiv 128)}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
                                 affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : memref<?x256xf16>, memref<64x256xf16>) outs(%y : memref<?x64xf16>)
  memref.dealloc %w : memref<64x256xf16>
  return
}

// -----

// qzeros plus 2: neither GPTQ's z - 1 nor z.
func.func @gptq_qzeros_plus_two(%x: memref<?x256xf16>, %qweight: memref<32x64xi32>, %scales: memref<2x64xf16>, %qzeros: memref<2x8xi32>,
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
    %two = arith.constant 2 : i32
    %z = arith.addi %zstored, %two : i32
    %cf = arith.uitofp %code : i32 to f16
    %zf = arith.uitofp %z : i32 to f16
    %q = arith.subf %cf, %zf : f16
    %v = arith.mulf %q, %s : f16
    linalg.yield %v : f16
  }
  %zero = arith.constant 0.0 : f16
  linalg.fill ins(%zero : f16) outs(%y : memref<?x64xf16>)
  // expected-remark @+1 {{packed zero points: expected the body to extract the zero point at n as bits 4 (n mod 8) ..+4 of its word}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
                                 affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : memref<?x256xf16>, memref<64x256xf16>) outs(%y : memref<?x64xf16>)
  memref.dealloc %w : memref<64x256xf16>
  return
}

// -----

// qzeros plus 1 as AutoGPTQ's v1 kernels compute it, without the modulo: a
// stored 15 would be a zero point of 16.
func.func @gptq_qzeros_plus_one_unwrapped(%x: memref<?x256xf16>, %qweight: memref<32x64xi32>, %scales: memref<2x64xf16>, %qzeros: memref<2x8xi32>,
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
    %z = arith.addi %zstored, %one : i32
    %cf = arith.uitofp %code : i32 to f16
    %zf = arith.uitofp %z : i32 to f16
    %q = arith.subf %cf, %zf : f16
    %v = arith.mulf %q, %s : f16
    linalg.yield %v : f16
  }
  %zero = arith.constant 0.0 : f16
  linalg.fill ins(%zero : f16) outs(%y : memref<?x64xf16>)
  // expected-remark @+1 {{packed zero points: GPTQ's qzeros plus 1 without wrapping: a stored 15 gives 16, which no 4-bit zero point holds (humming's gptq format reads it as 0, the z the quantizer stored); expected (stored + 1) mod 16 (arith.andi of the sum with 15)}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
                                 affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : memref<?x256xf16>, memref<64x256xf16>) outs(%y : memref<?x64xf16>)
  memref.dealloc %w : memref<64x256xf16>
  return
}

// -----

// B broadcast along N (one weight per k): neither W [N, K] nor W [K, N].
func.func @b_broadcast(%x: memref<?x128xf16>, %codes: memref<128xi8>, %s: memref<128xf16>, %y: memref<?x64xf16>) {
  %wd = memref.alloc() : memref<128xf16>
  linalg.generic {indexing_maps = [affine_map<(k) -> (k)>, affine_map<(k) -> (k)>, affine_map<(k) -> (k)>],
                  iterator_types = ["parallel"]}
      ins(%codes, %s : memref<128xi8>, memref<128xf16>) outs(%wd : memref<128xf16>) {
  ^bb0(%c: i8, %sc: f16, %o: f16):
    %f = arith.sitofp %c : i8 to f16
    %w = arith.mulf %f, %sc : f16
    linalg.yield %w : f16
  }
  %zero = arith.constant 0.0 : f16
  linalg.fill ins(%zero : f16) outs(%y : memref<?x64xf16>)
  // expected-remark @+1 {{expected the weights as B [N, K] indexed (n, k) (a transposed-B matmul: output = input * W^T) or [K, N] indexed (k, n) (output = input * W), got B indexed (d0, d1, d2) -> (d2)}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k)>,
                                 affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %wd : memref<?x128xf16>, memref<128xf16>) outs(%y : memref<?x64xf16>)
  return
}

// -----

// W [K, N] over loops (k, n) whose code is taken at n (linalg.index 1):
// the position of a code along K is linalg.index 0 there.
func.func @gptq_k_major_code_at_n(%x: memref<?x256xf16>, %qweight: memref<32x64xi32>, %scales: memref<2x64xf16>,
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
    %klane = arith.remui %n, %c8 : index
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
  // expected-remark @+1 {{packed codes: expected the code computed from k (linalg.index 0), got linalg.index 1}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>,
                                 affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : memref<?x256xf16>, memref<256x64xf16>) outs(%y : memref<?x64xf16>)
  memref.dealloc %w : memref<256x64xf16>
  return
}

// -----

// A batch matmul with weights of its own per batch element (B [B, K, N]
// indexed (b, k, n)) whose 8-bit codes are [B, K, N] too: humming's 8-bit
// codes are [N, K] per matrix (as for one matrix, raise-quantized-matmul.mlir
// @batch_weights_per_element_w8 reads them (b, n, k)).
func.func @batch_weights_per_element(%x: memref<2x?x128xf16>, %codes: memref<2x128x64xi8>, %s: memref<2x64xf16>, %y: memref<2x?x64xf16>) {
  %wd = memref.alloc() : memref<2x128x64xf16>
  linalg.generic {indexing_maps = [affine_map<(b, k, n) -> (b, k, n)>, affine_map<(b, k, n) -> (b, n)>,
                                   affine_map<(b, k, n) -> (b, k, n)>],
                  iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%codes, %s : memref<2x128x64xi8>, memref<2x64xf16>) outs(%wd : memref<2x128x64xf16>) {
  ^bb0(%c: i8, %sc: f16, %o: f16):
    %f = arith.sitofp %c : i8 to f16
    %w = arith.mulf %f, %sc : f16
    linalg.yield %w : f16
  }
  %zero = arith.constant 0.0 : f16
  linalg.fill ins(%zero : f16) outs(%y : memref<2x?x64xf16>)
  // expected-remark @+1 {{the dequantization (linalg.generic writing the weights per batch element [B, K, N]: its maps read without the batch, as of (n, k) = (d0, d1)): expected the codes [64, 128] indexed by (n, k) with an identity layout, got memref<128x64xi8> indexed by (d0, d1) -> (d1, d0)}}
  linalg.batch_matmul ins(%x, %wd : memref<2x?x128xf16>, memref<2x128x64xf16>) outs(%y : memref<2x?x64xf16>)
  return
}

// -----

// Weights per batch element whose scales are shared by the batch ([N]
// indexed (n)): every weight-side tensor of a batch element is its own.
func.func @batch_weights_shared_scales(%x: memref<2x?x128xf16>, %codes: memref<2x64x128xi8>, %s: memref<64xf16>, %y: memref<2x?x64xf16>) {
  %wd = memref.alloc() : memref<2x64x128xf16>
  linalg.generic {indexing_maps = [affine_map<(b, n, k) -> (b, n, k)>, affine_map<(b, n, k) -> (n)>,
                                   affine_map<(b, n, k) -> (b, n, k)>],
                  iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%codes, %s : memref<2x64x128xi8>, memref<64xf16>) outs(%wd : memref<2x64x128xf16>) {
  ^bb0(%c: i8, %sc: f16, %o: f16):
    %f = arith.sitofp %c : i8 to f16
    %w = arith.mulf %f, %sc : f16
    linalg.yield %w : f16
  }
  %zero = arith.constant 0.0 : f16
  linalg.fill ins(%zero : f16) outs(%y : memref<2x?x64xf16>)
  // expected-remark @+1 {{the dequantization (linalg.generic writing the weights per batch element [B, N, K]: its maps read without the batch, as of (n, k) = (d0, d1)): expected input #1 [B, ...] (B = 2) indexed (b, ...) with b only first, one matrix's tensor per batch element (or a global scale [B] indexed (b)), got memref<64xf16> indexed by (d0, d1, d2) -> (d1)}}
  linalg.batch_matmul indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>,
                                       affine_map<(b, m, n, k) -> (b, m, n)>]
      ins(%x, %wd : memref<2x?x128xf16>, memref<2x64x128xf16>) outs(%y : memref<2x?x64xf16>)
  return
}

// -----

// Weights per batch element whose batch is not the input's: a batch
// element of the input has no matrix of its own.
func.func @batch_weights_other_batch(%x: memref<3x?x128xf16>, %codes: memref<2x64x128xi8>, %s: memref<2x64xf16>, %y: memref<3x?x64xf16>) {
  %wd = memref.alloc() : memref<2x64x128xf16>
  linalg.generic {indexing_maps = [affine_map<(b, n, k) -> (b, n, k)>, affine_map<(b, n, k) -> (b, n)>,
                                   affine_map<(b, n, k) -> (b, n, k)>],
                  iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%codes, %s : memref<2x64x128xi8>, memref<2x64xf16>) outs(%wd : memref<2x64x128xf16>) {
  ^bb0(%c: i8, %sc: f16, %o: f16):
    %f = arith.sitofp %c : i8 to f16
    %w = arith.mulf %f, %sc : f16
    linalg.yield %w : f16
  }
  %zero = arith.constant 0.0 : f16
  linalg.fill ins(%zero : f16) outs(%y : memref<3x?x64xf16>)
  // expected-remark @+1 {{expected the batch of the input to be the weights' (one matrix per batch element), got memref<3x?x128xf16> and memref<2x64x128xf16>}}
  linalg.batch_matmul indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>,
                                       affine_map<(b, m, n, k) -> (b, m, n)>]
      ins(%x, %wd : memref<3x?x128xf16>, memref<2x64x128xf16>) outs(%y : memref<3x?x64xf16>)
  return
}

// -----

// GPTQ's qweight per batch element ([B, K / 8, N] read (b, k floordiv 8,
// n)): humming.moe_gemm takes canonical weights only.
func.func @batch_weights_gptq(%x: memref<2x?x128xf16>, %qweight: memref<2x16x64xi32>, %scales: memref<2x1x64xf16>, %y: memref<2x?x64xf16>) {
  %wd = memref.alloc() : memref<2x128x64xf16>
  linalg.generic {indexing_maps = [affine_map<(b, k, n) -> (b, k floordiv 8, n)>, affine_map<(b, k, n) -> (b, 0, n)>,
                                   affine_map<(b, k, n) -> (b, k, n)>],
                  iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%qweight, %scales : memref<2x16x64xi32>, memref<2x1x64xf16>) outs(%wd : memref<2x128x64xf16>) {
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
  linalg.fill ins(%zero : f16) outs(%y : memref<2x?x64xf16>)
  // expected-remark @+1 {{the dequantization (linalg.generic writing the weights per batch element [B, K, N]: its maps read without the batch, as of (n, k) = (d0, d1)): expected weights per batch element in humming's canonical form: humming.moe_gemm takes no GPTQ's tensors (convert them per expert on the host, humming::sourceToCanonical)}}
  linalg.batch_matmul ins(%x, %wd : memref<2x?x128xf16>, memref<2x128x64xf16>) outs(%y : memref<2x?x64xf16>)
  return
}

// -----

// AWQ's shapes with the nibbles in plain order (column j in nibble j):
// not AWQ's packing, which interleaves them.
func.func @awq_sequential_nibbles(%x: memref<?x256xf16>, %qweight: memref<256x8xi32>, %scales: memref<2x64xf16>,
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
    %c0i = arith.constant 0 : index
    %j = arith.remui %n, %c8 : index
    %odd = arith.remui %j, %c2 : index
    %half = arith.divui %j, %c2 : index
    %hi = arith.muli %odd, %c4 : index
    %slot = arith.addi %j, %c0i : index
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
  // expected-remark @+1 {{packed codes: AWQ's qweight ([K, N / 8] words indexed by (k, n floordiv 8)): expected the body to extract the code at n as bits 4 (AWQ's nibble of n mod 8) ..+4 of its word (least significant first), got 1 for word 76543210 at n = 1 (want 4)}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
                                 affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : memref<?x256xf16>, memref<64x256xf16>) outs(%y : memref<?x64xf16>)
  memref.dealloc %w : memref<64x256xf16>
  return
}

// -----

// e2m1 codes bitcast from 2-bit fields (an i4 holding a 2-bit value): fp4
// codes are 4-bit fields.
func.func @fp4_in_2bit_fields(%x: memref<?x256xbf16>, %packed: memref<64x16xi32>, %scales: memref<64x16xbf16>, %y: memref<?x64xbf16>) {
  %w = memref.alloc() : memref<64x256xbf16>
  linalg.generic {indexing_maps = [affine_map<(n, k) -> (n, k floordiv 16)>,
                                   affine_map<(n, k) -> (n, k floordiv 16)>,
                                   affine_map<(n, k) -> (n, k)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%packed, %scales : memref<64x16xi32>, memref<64x16xbf16>) outs(%w : memref<64x256xbf16>) {
  ^bb0(%word: i32, %s: bf16, %o: bf16):
    %k = linalg.index 1 : index
    %c8 = arith.constant 16 : index
    %c4 = arith.constant 2 : index
    %lane = arith.remui %k, %c8 : index
    %bit = arith.muli %lane, %c4 : index
    %shift = arith.index_cast %bit : index to i32
    %shifted = arith.shrui %word, %shift : i32
    %m3 = arith.constant 3 : i32
    %two = arith.andi %shifted, %m3 : i32
    %nibble = arith.trunci %two : i32 to i4
    %code = arith.bitcast %nibble : i4 to f4E2M1FN
    %f = arith.extf %code : f4E2M1FN to bf16
    %v = arith.mulf %f, %s : bf16
    linalg.yield %v : bf16
  }
  %zero = arith.constant 0.0 : bf16
  linalg.fill ins(%zero : bf16) outs(%y : memref<?x64xbf16>)
  // expected-remark @+1 {{packed e2m1 codes: expected 4-bit fields packed along K, eight to an i32 word, got 2-bit fields}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
                                 affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : memref<?x256xbf16>, memref<64x256xbf16>) outs(%y : memref<?x64xbf16>)
  memref.dealloc %w : memref<64x256xbf16>
  return
}

// -----

// e2m1 codes in AWQ's packing: humming's e2m1 weights are packed along K.
func.func @fp4_in_awq_order(%x: memref<?x256xbf16>, %qweight: memref<256x8xi32>, %scales: memref<2x64xbf16>, %y: memref<?x64xbf16>) {
  %w = memref.alloc() : memref<64x256xbf16>
  linalg.generic {indexing_maps = [affine_map<(n, k) -> (k, n floordiv 8)>,
                                   affine_map<(n, k) -> (k floordiv 128, n)>,
                                   affine_map<(n, k) -> (n, k)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%qweight, %scales : memref<256x8xi32>, memref<2x64xbf16>) outs(%w : memref<64x256xbf16>) {
  ^bb0(%word: i32, %s: bf16, %o: bf16):
    %n = linalg.index 0 : index
    %c8 = arith.constant 8 : index
    %c2 = arith.constant 2 : index
    %c4 = arith.constant 4 : index
    %j = arith.remui %n, %c8 : index
    %odd = arith.remui %j, %c2 : index
    %half = arith.divui %j, %c2 : index
    %hi = arith.muli %odd, %c4 : index
    %slot = arith.addi %hi, %half : index
    %bit = arith.muli %slot, %c4 : index
    %shift = arith.index_cast %bit : index to i32
    %cw = arith.shrui %word, %shift : i32
    %nibble = arith.trunci %cw : i32 to i4
    %code = arith.bitcast %nibble : i4 to f4E2M1FN
    %f = arith.extf %code : f4E2M1FN to bf16
    %v = arith.mulf %f, %s : bf16
    linalg.yield %v : bf16
  }
  %zero = arith.constant 0.0 : bf16
  linalg.fill ins(%zero : bf16) outs(%y : memref<?x64xbf16>)
  // expected-remark @+1 {{packed e2m1 codes: expected 4-bit fields packed along K, eight to an i32 word, got 4-bit fields in AWQ's order}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
                                 affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : memref<?x256xbf16>, memref<64x256xbf16>) outs(%y : memref<?x64xbf16>)
  memref.dealloc %w : memref<64x256xbf16>
  return
}

// -----

// e5m2 scales converted in the body: humming's scales are of the weights'
// type, e8m0 (MXFP4) or e4m3 (NVFP4).
func.func @fp4_e5m2_scales(%x: memref<?x256xbf16>, %packed: memref<64x32xi32>, %scales: memref<64x8xf8E5M2>, %y: memref<?x64xbf16>) {
  %w = memref.alloc() : memref<64x256xbf16>
  linalg.generic {indexing_maps = [affine_map<(n, k) -> (n, k floordiv 8)>,
                                   affine_map<(n, k) -> (n, k floordiv 32)>,
                                   affine_map<(n, k) -> (n, k)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%packed, %scales : memref<64x32xi32>, memref<64x8xf8E5M2>) outs(%w : memref<64x256xbf16>) {
  ^bb0(%word: i32, %s: f8E5M2, %o: bf16):
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
    %sf = arith.extf %s : f8E5M2 to bf16
    %v = arith.mulf %f, %sf : bf16
    linalg.yield %v : bf16
  }
  %zero = arith.constant 0.0 : bf16
  linalg.fill ins(%zero : bf16) outs(%y : memref<?x64xbf16>)
  // expected-remark @+1 {{expected scales of the weights' type bf16, or f8E8M0FNU / f8E4M3FN ones converted to it with arith.extf, got f8E5M2}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
                                 affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : memref<?x256xbf16>, memref<64x256xbf16>) outs(%y : memref<?x64xbf16>)
  memref.dealloc %w : memref<64x256xbf16>
  return
}

// -----

// A batch matmul reading its input transposed (A indexed (b, k, m)):
// humming.gemm reads rows of K.
func.func @batch_a_transposed(%x: memref<2x128x?xf16>, %codes: memref<64x128xi8>, %s: memref<64xf16>, %y: memref<2x?x64xf16>) {
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
  linalg.fill ins(%zero : f16) outs(%y : memref<2x?x64xf16>)
  // expected-remark @+1 {{expected a batch matmul of A indexed (b, m, k) into C (b, m, n) with the weights as B}}
  linalg.batch_matmul indexing_maps = [affine_map<(b, m, n, k) -> (b, k, m)>, affine_map<(b, m, n, k) -> (k, n)>,
                                       affine_map<(b, m, n, k) -> (b, m, n)>]
      ins(%x, %wd : memref<2x128x?xf16>, memref<128x64xf16>) outs(%y : memref<2x?x64xf16>)
  memref.dealloc %wd : memref<128x64xf16>
  return
}

// -----

// A batch matmul whose input's K is dynamic.
func.func @batch_dynamic_k(%x: memref<2x?x?xf16>, %codes: memref<64x128xi8>, %s: memref<64xf16>, %y: memref<2x?x64xf16>) {
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
  linalg.fill ins(%zero : f16) outs(%y : memref<2x?x64xf16>)
  // expected-remark @+1 {{expected identity-layout memrefs with static N and K (the batch and M may be dynamic), got memref<2x?x?xf16>, memref<128x64xf16>, memref<2x?x64xf16>}}
  linalg.batch_matmul indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (k, n)>,
                                       affine_map<(b, m, n, k) -> (b, m, n)>]
      ins(%x, %wd : memref<2x?x?xf16>, memref<128x64xf16>) outs(%y : memref<2x?x64xf16>)
  memref.dealloc %wd : memref<128x64xf16>
  return
}

// -----

// GPTQ's qweight with float zero points: the gptq format's zero points are
// qzeros, integers packed into i32 words.
func.func @gptq_float_zero_points(%x: memref<?x256xf16>, %qweight: memref<32x64xi32>, %scales: memref<2x64xf16>,
                                  %zeros: memref<2x64xf16>, %y: memref<?x64xf16>) {
  %w = memref.alloc() : memref<64x256xf16>
  linalg.generic {indexing_maps = [affine_map<(n, k) -> (k floordiv 8, n)>,
                                   affine_map<(n, k) -> (k floordiv 128, n)>,
                                   affine_map<(n, k) -> (k floordiv 128, n)>,
                                   affine_map<(n, k) -> (n, k)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%qweight, %scales, %zeros : memref<32x64xi32>, memref<2x64xf16>, memref<2x64xf16>)
      outs(%w : memref<64x256xf16>) {
  ^bb0(%word: i32, %s: f16, %z: f16, %o: f16):
    %k = linalg.index 1 : index
    %c8 = arith.constant 8 : index
    %c4 = arith.constant 4 : index
    %mask = arith.constant 15 : i32
    %klane = arith.remui %k, %c8 : index
    %kbit = arith.muli %klane, %c4 : index
    %kshift = arith.index_cast %kbit : index to i32
    %kshifted = arith.shrui %word, %kshift : i32
    %code = arith.andi %kshifted, %mask : i32
    %cf = arith.uitofp %code : i32 to f16
    %q = arith.subf %cf, %z : f16
    %v = arith.mulf %q, %s : f16
    linalg.yield %v : f16
  }
  %zero = arith.constant 0.0 : f16
  linalg.fill ins(%zero : f16) outs(%y : memref<?x64xf16>)
  // expected-remark @+1 {{expected GPTQ's qzeros (integer zero points packed into i32 words) with its qweight, got float zero points}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
                                 affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : memref<?x256xf16>, memref<64x256xf16>) outs(%y : memref<?x64xf16>)
  memref.dealloc %w : memref<64x256xf16>
  return
}

// -----

// NVFP4's global scale in f32 multiplied in f32 (not truncated to the
// weights' type first): the product is not the one humming.gemm computes
// in that order.
// CHECK-LABEL: func.func @nvfp4_f32_untruncated
func.func @nvfp4_f32_untruncated(%x: memref<?x256xbf16>, %packed: memref<64x32xi32>, %scales: memref<64x16xf8E4M3FN>, %gs: memref<1xf32>, %y: memref<?x64xbf16>) {
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
    %ve = arith.extf %v : bf16 to f32
    %vf = arith.mulf %ve, %g : f32
    %vg = arith.truncf %vf : f32 to bf16
    linalg.yield %vg : bf16
  }
  %zero = arith.constant 0.0 : bf16
  linalg.fill ins(%zero : bf16) outs(%y : memref<?x64xbf16>)
  // expected-remark @+1 {{humming-raise-quantized-matmul: not raised: the dequantization (linalg.generic writing the weights): expected the f32 global scale converted to bf16 with arith.truncf before its product}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
                                 affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : memref<?x256xbf16>, memref<64x256xbf16>) outs(%y : memref<?x64xbf16>)
  memref.dealloc %w : memref<64x256xbf16>
  return
}

// -----

// A third input of one value per row is no global scale (nor a zero
// point of the scales' type and indexing).
// CHECK-LABEL: func.func @nvfp4_global_per_row
func.func @nvfp4_global_per_row(%x: memref<?x256xbf16>, %packed: memref<64x32xi32>, %scales: memref<64x16xf8E4M3FN>, %gs: memref<64xf32>, %y: memref<?x64xbf16>) {
  %w = memref.alloc() : memref<64x256xbf16>
  linalg.generic {indexing_maps = [affine_map<(n, k) -> (n, k floordiv 8)>,
                                   affine_map<(n, k) -> (n, k floordiv 16)>,
                                   affine_map<(n, k) -> (n)>,
                                   affine_map<(n, k) -> (n, k)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%packed, %scales, %gs : memref<64x32xi32>, memref<64x16xf8E4M3FN>, memref<64xf32>) outs(%w : memref<64x256xbf16>) {
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
  // expected-remark @+1 {{humming-raise-quantized-matmul: not raised: the dequantization (linalg.generic writing the weights): expected a body of a conversion of the code, a subtraction of the zero point, a multiplication by the scale and the yield, got 5 operations besides the code's extraction}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
                                 affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : memref<?x256xbf16>, memref<64x256xbf16>) outs(%y : memref<?x64xbf16>)
  memref.dealloc %w : memref<64x256xbf16>
  return
}

// -----

// The global scale folded into the group scale before the code's product:
// another order of rounding than humming.gemm's.
// CHECK-LABEL: func.func @nvfp4_global_first
func.func @nvfp4_global_first(%x: memref<?x256xbf16>, %packed: memref<64x32xi32>, %scales: memref<64x16xf8E4M3FN>, %gs: memref<1xf32>, %y: memref<?x64xbf16>) {
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
    %gh = arith.truncf %g : f32 to bf16
    %sg = arith.mulf %sf, %gh : bf16
    %vg = arith.mulf %f, %sg : bf16
    linalg.yield %vg : bf16
  }
  %zero = arith.constant 0.0 : bf16
  linalg.fill ins(%zero : bf16) outs(%y : memref<?x64xbf16>)
  // expected-remark @+1 {{humming-raise-quantized-matmul: not raised: the dequantization (linalg.generic writing the weights): expected the code times the scale (the second input), arith.mulf in bf16}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
                                 affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : memref<?x256xbf16>, memref<64x256xbf16>) outs(%y : memref<?x64xbf16>)
  memref.dealloc %w : memref<64x256xbf16>
  return
}

// -----

// A global scale of the weights' type: humming.gemm takes an f32 one.
// CHECK-LABEL: func.func @nvfp4_bf16_global
func.func @nvfp4_bf16_global(%x: memref<?x256xbf16>, %packed: memref<64x32xi32>, %scales: memref<64x16xf8E4M3FN>, %gs: memref<1xbf16>, %y: memref<?x64xbf16>) {
  %w = memref.alloc() : memref<64x256xbf16>
  linalg.generic {indexing_maps = [affine_map<(n, k) -> (n, k floordiv 8)>,
                                   affine_map<(n, k) -> (n, k floordiv 16)>,
                                   affine_map<(n, k) -> (0)>,
                                   affine_map<(n, k) -> (n, k)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%packed, %scales, %gs : memref<64x32xi32>, memref<64x16xf8E4M3FN>, memref<1xbf16>) outs(%w : memref<64x256xbf16>) {
  ^bb0(%word: i32, %s: f8E4M3FN, %g: bf16, %o: bf16):
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
    %vg = arith.mulf %v, %g : bf16
    linalg.yield %vg : bf16
  }
  %zero = arith.constant 0.0 : bf16
  linalg.fill ins(%zero : bf16) outs(%y : memref<?x64xbf16>)
  // expected-remark @+1 {{humming-raise-quantized-matmul: not raised: the dequantization (linalg.generic writing the weights): expected the global scale ([1], the last input) in f32, as humming.gemm takes it, got memref<1xbf16>}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
                                 affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : memref<?x256xbf16>, memref<64x256xbf16>) outs(%y : memref<?x64xbf16>)
  memref.dealloc %w : memref<64x256xbf16>
  return
}

// -----

// Weights per batch element whose packed code is extracted at linalg.index
// 1 — n over the (b, n, k) loops, not k (a body written for one matrix's
// (n, k) loops): the evaluation of the extraction says so.
func.func @batch_weights_code_at_n(%x: memref<2x?x128xf16>, %codes: memref<2x64x16xi32>, %s: memref<2x64x4xf16>, %y: memref<2x?x64xf16>) {
  %wd = memref.alloc() : memref<2x64x128xf16>
  linalg.generic {indexing_maps = [affine_map<(b, n, k) -> (b, n, k floordiv 8)>, affine_map<(b, n, k) -> (b, n, k floordiv 32)>,
                                   affine_map<(b, n, k) -> (b, n, k)>],
                  iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%codes, %s : memref<2x64x16xi32>, memref<2x64x4xf16>) outs(%wd : memref<2x64x128xf16>) {
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
  linalg.fill ins(%zero : f16) outs(%y : memref<2x?x64xf16>)
  // expected-remark @+1 {{the dequantization (linalg.generic writing the weights per batch element [B, N, K]: its maps read without the batch, as of (n, k) = (d0, d1)): packed codes: expected the code computed from k (linalg.index 2), got linalg.index 1}}
  linalg.batch_matmul indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>,
                                       affine_map<(b, m, n, k) -> (b, m, n)>]
      ins(%x, %wd : memref<2x?x128xf16>, memref<2x64x128xf16>) outs(%y : memref<2x?x64xf16>)
  return
}
