// NVFP4-like: e2m1 codes packed along K, e4m3 scales per 16 and an f32 global scale, for raise-quantized-matmul-ptx.test.
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
