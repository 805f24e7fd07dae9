// The W4A16 linear layer of w4a16-packed-dequant-matmul.mlir as a frontend
// emits it before bufferization: the same compressed-tensors pack-quantized
// words and per-group scales as tensors, the dequantization a
// linalg.generic producing the f16 weights, the matmul's init a zero fill.
// humming-raise-quantized-matmul raises it to humming.gemm on read-only
// buffers of the tensors; one-shot bufferization (function boundaries as
// identity-layout memrefs) then leaves the gemm on the arguments:
//
//   humming-opt w4a16-packed-dequant-matmul-tensors.mlir \
//     --humming-raise-quantized-matmul \
//     --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
//     --humming-compile-pipeline="chip=sm_90a"
func.func @w4a16_linear(%x: tensor<?x4096xf16>, %packed: tensor<1024x512xi32>,
                          %scales: tensor<1024x32xf16>) -> tensor<?x1024xf16> {
  %e = tensor.empty() : tensor<1024x4096xf16>
  %w = linalg.generic {indexing_maps = [affine_map<(n, k) -> (n, k floordiv 8)>,
                                        affine_map<(n, k) -> (n, k floordiv 128)>,
                                        affine_map<(n, k) -> (n, k)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%packed, %scales : tensor<1024x512xi32>, tensor<1024x32xf16>)
      outs(%e : tensor<1024x4096xf16>) {
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
  } -> tensor<1024x4096xf16>
  %c0 = arith.constant 0 : index
  %m = tensor.dim %x, %c0 : tensor<?x4096xf16>
  %ye = tensor.empty(%m) : tensor<?x1024xf16>
  %zero = arith.constant 0.0 : f16
  %y0 = linalg.fill ins(%zero : f16) outs(%ye : tensor<?x1024xf16>) -> tensor<?x1024xf16>
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
                                      affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : tensor<?x4096xf16>, tensor<1024x4096xf16>) outs(%y0 : tensor<?x1024xf16>) -> tensor<?x1024xf16>
  return %y : tensor<?x1024xf16>
}
