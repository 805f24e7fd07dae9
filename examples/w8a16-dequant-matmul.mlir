// A frontend's W8A16 linear layer after bufferization: int8 codes
// dequantized with one f16 scale per output row into a buffer, then a
// transposed-B matmul into a zeroed output (y = x * W^T).
// humming-raise-quantized-matmul turns the three into one humming.gemm
// (test/Transforms/raise-quantized-matmul.mlir has the forms it takes).
func.func @w8a16_linear(%x: memref<?x4096xf16>, %codes: memref<1024x4096xi8>,
                        %scales: memref<1024xf16>, %y: memref<?x1024xf16>) {
  %w = memref.alloc() : memref<1024x4096xf16>
  linalg.generic {indexing_maps = [affine_map<(n, k) -> (n, k)>, affine_map<(n, k) -> (n)>,
                                   affine_map<(n, k) -> (n, k)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%codes, %scales : memref<1024x4096xi8>, memref<1024xf16>)
      outs(%w : memref<1024x4096xf16>) {
  ^bb0(%c: i8, %s: f16, %o: f16):
    %f = arith.sitofp %c : i8 to f16
    %v = arith.mulf %f, %s : f16
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
