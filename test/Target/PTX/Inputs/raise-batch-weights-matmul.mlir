// linalg.batch_matmuls with one quantized weight matrix per batch element, for raise-quantized-matmul-ptx.test:
// @batch_w4 packed ui4 codes [B, N, K / 8] minus 8, f16 scales per group of 128, on tensors (a transposed-B batch
// matmul); @batch_w8 unpacked si8 codes [B, N, K] with per-row f16 scales, on memrefs, read as W [B, K, N].
func.func @batch_w4(%x: tensor<8x?x2048xf16>, %codes: tensor<8x1024x256xi32>, %s: tensor<8x1024x16xf16>) -> tensor<8x?x1024xf16> {
  %c1 = arith.constant 1 : index
  %m = tensor.dim %x, %c1 : tensor<8x?x2048xf16>
  %e = tensor.empty() : tensor<8x1024x2048xf16>
  %wd = linalg.generic {indexing_maps = [affine_map<(b, n, k) -> (b, n, k floordiv 8)>, affine_map<(b, n, k) -> (b, n, k floordiv 128)>,
                                         affine_map<(b, n, k) -> (b, n, k)>],
                        iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%codes, %s : tensor<8x1024x256xi32>, tensor<8x1024x16xf16>) outs(%e : tensor<8x1024x2048xf16>) {
  ^bb0(%c: i32, %sc: f16, %o: f16):
    %k = linalg.index 2 : index
    %c8 = arith.constant 8 : index
    %r = arith.remui %k, %c8 : index
    %c4 = arith.constant 4 : index
    %sh = arith.muli %r, %c4 : index
    %shi = arith.index_cast %sh : index to i32
    %v = arith.shrui %c, %shi : i32
    %mask = arith.constant 15 : i32
    %q = arith.andi %v, %mask : i32
    %f = arith.uitofp %q : i32 to f16
    %c8f = arith.constant 8.0 : f16
    %z = arith.subf %f, %c8f : f16
    %w = arith.mulf %z, %sc : f16
    linalg.yield %w : f16
  } -> tensor<8x1024x2048xf16>
  %zero = arith.constant 0.0 : f16
  %ye = tensor.empty(%m) : tensor<8x?x1024xf16>
  %y0 = linalg.fill ins(%zero : f16) outs(%ye : tensor<8x?x1024xf16>) -> tensor<8x?x1024xf16>
  %y = linalg.batch_matmul indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>,
                                            affine_map<(b, m, n, k) -> (b, m, n)>]
      ins(%x, %wd : tensor<8x?x2048xf16>, tensor<8x1024x2048xf16>) outs(%y0 : tensor<8x?x1024xf16>) -> tensor<8x?x1024xf16>
  return %y : tensor<8x?x1024xf16>
}

func.func @batch_w8(%x: memref<4x?x512xf16>, %codes: memref<4x256x512xi8>, %s: memref<4x256xf16>, %y: memref<4x?x256xf16>) {
  %wd = memref.alloc() : memref<4x512x256xf16>
  linalg.generic {indexing_maps = [affine_map<(b, k, n) -> (b, n, k)>, affine_map<(b, k, n) -> (b, n)>,
                                   affine_map<(b, k, n) -> (b, k, n)>],
                  iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%codes, %s : memref<4x256x512xi8>, memref<4x256xf16>) outs(%wd : memref<4x512x256xf16>) {
  ^bb0(%c: i8, %sc: f16, %o: f16):
    %f = arith.sitofp %c : i8 to f16
    %w = arith.mulf %f, %sc : f16
    linalg.yield %w : f16
  }
  %zero = arith.constant 0.0 : f16
  linalg.fill ins(%zero : f16) outs(%y : memref<4x?x256xf16>)
  linalg.batch_matmul ins(%x, %wd : memref<4x?x512xf16>, memref<4x512x256xf16>) outs(%y : memref<4x?x256xf16>)
  memref.dealloc %wd : memref<4x512x256xf16>
  return
}
