// A GPTQ W4A16 layer (checkpoint_format gptq, group size 128, with
// zero points) as a frontend emits it after bufferization, on the
// checkpoint's own tensors: qweight [K / 8, N] (eight 4-bit codes per i32
// along K), scales [K / 128, N], qzeros [K / 128, N / 8] storing z - 1
// (so the dequantization adds 1, modulo 16: a stored 15 is z = 0), then a
// transposed-B matmul into a zeroed output (the form input * W over a
// [K, N] dequantization is taken too: test/Transforms/
// raise-quantized-matmul.mlir). humming-raise-quantized-matmul turns it into one humming.gemm in
// the gptq format on those tensors; humming-legalize-schema (in the
// compile pipeline) makes the kernel's arguments canonical and records
// that the caller converts them once on the host (humming::sourceToCanonical).
func.func @gptq_linear(%x: memref<?x4096xf16>, %qweight: memref<512x1024xi32>, %scales: memref<32x1024xf16>, %qzeros: memref<32x128xi32>,
    %y: memref<?x1024xf16>) {
  %w = memref.alloc() : memref<1024x4096xf16>
  linalg.generic {indexing_maps = [affine_map<(n, k) -> (k floordiv 8, n)>,
                                   affine_map<(n, k) -> (k floordiv 128, n)>,
                                   affine_map<(n, k) -> (k floordiv 128, n floordiv 8)>,
                                   affine_map<(n, k) -> (n, k)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%qweight, %scales, %qzeros : memref<512x1024xi32>, memref<32x1024xf16>, memref<32x128xi32>)
      outs(%w : memref<1024x4096xf16>) {
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
  linalg.fill ins(%zero : f16) outs(%y : memref<?x1024xf16>)
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
                                 affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : memref<?x4096xf16>, memref<1024x4096xf16>) outs(%y : memref<?x1024xf16>)
  memref.dealloc %w : memref<1024x4096xf16>
  return
}
