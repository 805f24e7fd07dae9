// A frontend's W4A16 linear layer after bufferization, with its weights as
// compressed-tensors' pack-quantized checkpoints store them (and humming's
// canonical form): 4-bit codes packed eight to an i32 along K, least
// significant first, weight_packed [N, K / 8]; symmetric int4 stored as
// code + 8, so the dequantization takes the nibble, subtracts 8 and
// multiplies by one f16 scale per group of 128. Then a transposed-B matmul
// into a zeroed output (y = x * W^T).
// humming-raise-quantized-matmul turns the three into one humming.gemm
// on the packed words as they are (test/Transforms/raise-quantized-matmul.mlir
// has the forms it takes).
func.func @w4a16_linear(%x: memref<?x4096xf16>, %packed: memref<1024x512xi32>,
                        %scales: memref<1024x32xf16>, %y: memref<?x1024xf16>) {
  %w = memref.alloc() : memref<1024x4096xf16>
  linalg.generic {indexing_maps = [affine_map<(n, k) -> (n, k floordiv 8)>,
                                   affine_map<(n, k) -> (n, k floordiv 128)>,
                                   affine_map<(n, k) -> (n, k)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%packed, %scales : memref<1024x512xi32>, memref<1024x32xf16>)
      outs(%w : memref<1024x4096xf16>) {
  ^bb0(%word: i32, %s: f16, %o: f16):
    %k = linalg.index 1 : index
    %c8 = arith.constant 8 : index
    %lane = arith.remui %k, %c8 : index
    %c4 = arith.constant 4 : index
    %bit = arith.muli %lane, %c4 : index
    %shift = arith.index_cast %bit : index to i32
    %shifted = arith.shrui %word, %shift : i32
    %mask = arith.constant 15 : i32
    %nibble = arith.andi %shifted, %mask : i32
    %f = arith.uitofp %nibble : i32 to f16
    %offset = arith.constant 8.0 : f16
    %q = arith.subf %f, %offset : f16
    %v = arith.mulf %q, %s : f16
    linalg.yield %v : f16
  }
  %zero = arith.constant 0.0 : f16
  linalg.fill ins(%zero : f16) outs(%y : memref<?x1024xf16>)
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
                                 affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : memref<?x4096xf16>, memref<1024x4096xf16>) outs(%y : memref<?x1024xf16>)
  memref.dealloc %w : memref<1024x4096xf16>
  return
}
