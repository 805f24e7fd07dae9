// An AWQ W4A16 g128 layer on its own qweight / qzeros / scales, for raise-quantized-matmul-ptx.test.
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
