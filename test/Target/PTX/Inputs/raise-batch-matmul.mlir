// A linalg.batch_matmul sharing 8-bit per-row weights [K, N] across the batch, for raise-quantized-matmul-ptx.test.
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
