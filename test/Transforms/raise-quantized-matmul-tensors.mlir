// RUN: humming-opt %s --humming-raise-quantized-matmul -split-input-file | FileCheck %s
// RUN: humming-opt %s --humming-raise-quantized-matmul --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" -split-input-file | FileCheck %s --check-prefix=BUF

// The tensor-level forms (what frontends emit before bufferization): the
// dequantization's result is the matmul's B, the matmul's init a zero
// linalg.fill. humming.gemm reads read-only buffers of the tensors, writes
// a new buffer sized from the input's rows, and bufferization.to_tensor of
// it replaces the matmul; the dequantization, the fill and their empty
// tensors go. One-shot bufferization then leaves the gemm on the
// function's memrefs, with no copies.

// W4A16: compressed-tensors' pack-quantized words, code - 8, f16 scales
// per group of 128, M dynamic.
// CHECK-LABEL: func.func @packed_w4_g128
// CHECK-SAME:    (%[[X:.*]]: tensor<?x4096xf16>, %[[P:.*]]: tensor<1024x512xi32>, %[[S:.*]]: tensor<1024x32xf16>)
// CHECK-NOT:     linalg
// CHECK-DAG:     %[[XB:.*]] = bufferization.to_buffer %[[X]] read_only : tensor<?x4096xf16> to memref<?x4096xf16>
// CHECK-DAG:     %[[PB:.*]] = bufferization.to_buffer %[[P]] read_only : tensor<1024x512xi32> to memref<1024x512xi32>
// CHECK-DAG:     %[[SB:.*]] = bufferization.to_buffer %[[S]] read_only : tensor<1024x32xf16> to memref<1024x32xf16>
// CHECK:         %[[M:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<?x4096xf16>
// CHECK-NEXT:    %[[Y:.*]] = memref.alloc(%[[M]]) : memref<?x1024xf16>
// CHECK-NEXT:    humming.gemm %[[XB]], %[[PB]] scales(%[[SB]] : memref<1024x32xf16>) into %[[Y]]
// CHECK-SAME:      weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>>
// CHECK-NEXT:    %[[R:.*]] = bufferization.to_tensor %[[Y]] restrict writable : memref<?x1024xf16> to tensor<?x1024xf16>
// CHECK-NEXT:    return %[[R]]
// CHECK-NOT:     tensor.empty
// BUF-LABEL: func.func @packed_w4_g128
// BUF-SAME:    (%[[X:.*]]: memref<?x4096xf16>, %[[P:.*]]: memref<1024x512xi32>, %[[S:.*]]: memref<1024x32xf16>) -> memref<?x1024xf16>
// BUF-NOT:     memref.copy
// BUF:         %[[Y:.*]] = memref.alloc(%{{.*}}) : memref<?x1024xf16>
// BUF-NEXT:    humming.gemm %[[X]], %[[P]] scales(%[[S]] : memref<1024x32xf16>) into %[[Y]]
// BUF-NEXT:    return %[[Y]] : memref<?x1024xf16>
func.func @packed_w4_g128(%x: tensor<?x4096xf16>, %packed: tensor<1024x512xi32>,
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

// -----

// W8A16 int8 per row as [N] (a [N, 1] view of its buffer), static M, bf16.
// CHECK-LABEL: func.func @int8_per_row_static
// CHECK:         %[[S:.*]] = bufferization.to_buffer %{{.*}} read_only : tensor<64xbf16> to memref<64xbf16>
// CHECK:         %[[Y:.*]] = memref.alloc() : memref<4x64xbf16>
// CHECK-NEXT:    %[[S1:.*]] = memref.expand_shape %[[S]] {{\[\[}}0, 1]] output_shape [64, 1] : memref<64xbf16> into memref<64x1xbf16>
// CHECK-NEXT:    humming.gemm %{{.*}}, %{{.*}} scales(%[[S1]] : memref<64x1xbf16>) into %[[Y]]
// CHECK-SAME:      weight_schema = #humming.weight_schema<type = si8, scale = bf16>
// CHECK-SAME:      : memref<4x128xbf16>, memref<64x128xi8> -> memref<4x64xbf16>
// CHECK-NEXT:    bufferization.to_tensor %[[Y]] restrict writable : memref<4x64xbf16> to tensor<4x64xbf16>
// CHECK-NOT:     linalg
// BUF-LABEL: func.func @int8_per_row_static
// BUF-NOT:     memref.copy
// BUF:         humming.gemm
// BUF-NOT:     linalg
func.func @int8_per_row_static(%x: tensor<4x128xbf16>, %codes: tensor<64x128xi8>, %s: tensor<64xbf16>)
    -> tensor<4x64xbf16> {
  %e = tensor.empty() : tensor<64x128xbf16>
  %wd = linalg.generic {indexing_maps = [affine_map<(n, k) -> (n, k)>, affine_map<(n, k) -> (n)>,
                                         affine_map<(n, k) -> (n, k)>],
                        iterator_types = ["parallel", "parallel"]}
      ins(%codes, %s : tensor<64x128xi8>, tensor<64xbf16>) outs(%e : tensor<64x128xbf16>) {
  ^bb0(%c: i8, %sc: bf16, %o: bf16):
    %f = arith.sitofp %c : i8 to bf16
    %w = arith.mulf %sc, %f : bf16
    linalg.yield %w : bf16
  } -> tensor<64x128xbf16>
  %ye = tensor.empty() : tensor<4x64xbf16>
  %zero = arith.constant 0.0 : bf16
  %y0 = linalg.fill ins(%zero : bf16) outs(%ye : tensor<4x64xbf16>) -> tensor<4x64xbf16>
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
                                      affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %wd : tensor<4x128xbf16>, tensor<64x128xbf16>) outs(%y0 : tensor<4x64xbf16>) -> tensor<4x64xbf16>
  return %y : tensor<4x64xbf16>
}

// -----

// The zeroed tensor is also returned: it stays (the gemm writes a buffer
// of its own), the dequantization goes.
// CHECK-LABEL: func.func @zeros_also_returned
// CHECK:         %[[Z:.*]] = linalg.fill
// CHECK:         humming.gemm
// CHECK:         %[[R:.*]] = bufferization.to_tensor
// CHECK-NEXT:    return %[[R]], %[[Z]]
// CHECK-NOT:     linalg.generic
// BUF-LABEL: func.func @zeros_also_returned
// BUF:         linalg.fill
// BUF:         humming.gemm
// BUF-NOT:     linalg.generic
func.func @zeros_also_returned(%x: tensor<?x128xf16>, %codes: tensor<64x128xi8>, %s: tensor<64xf16>,
                               %ye: tensor<?x64xf16>) -> (tensor<?x64xf16>, tensor<?x64xf16>) {
  %e = tensor.empty() : tensor<64x128xf16>
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
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
                                      affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %wd : tensor<?x128xf16>, tensor<64x128xf16>) outs(%y0 : tensor<?x64xf16>) -> tensor<?x64xf16>
  return %y, %y0 : tensor<?x64xf16>, tensor<?x64xf16>
}

// -----

// The batch form on tensors: the gemm runs on collapsed views of the
// input's buffer and of a new [B, M, N] buffer, sized from the input.
// CHECK-LABEL: func.func @batch_w8_tensors
// CHECK-DAG:     %[[XB:.*]] = bufferization.to_buffer %[[X:.*]] read_only : tensor<?x?x128xf16> to memref<?x?x128xf16>
// CHECK-DAG:     %[[B:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<?x?x128xf16>
// CHECK-DAG:     %[[M:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<?x?x128xf16>
// CHECK:         %[[Y:.*]] = memref.alloc(%[[B]], %[[M]]) : memref<?x?x64xf16>
// CHECK-NEXT:    %[[X2:.*]] = memref.collapse_shape %[[XB]] {{\[\[}}0, 1], [2]]
// CHECK-NEXT:    %[[Y2:.*]] = memref.collapse_shape %[[Y]] {{\[\[}}0, 1], [2]]
// CHECK:         humming.gemm %[[X2]], %{{.*}} scales(%{{.*}} : memref<64x1xf16>) into %[[Y2]]
// CHECK-NEXT:    %[[R:.*]] = bufferization.to_tensor %[[Y]] restrict writable : memref<?x?x64xf16> to tensor<?x?x64xf16>
// CHECK-NEXT:    return %[[R]]
// BUF-LABEL: func.func @batch_w8_tensors
// BUF-NOT:     memref.copy
// BUF:         humming.gemm
// BUF-NOT:     linalg
func.func @batch_w8_tensors(%x: tensor<?x?x128xf16>, %codes: tensor<64x128xi8>, %s: tensor<64xf16>,
                            %ye: tensor<?x?x64xf16>) -> tensor<?x?x64xf16> {
  %e = tensor.empty() : tensor<128x64xf16>
  %wd = linalg.generic {indexing_maps = [affine_map<(k, n) -> (n, k)>, affine_map<(k, n) -> (n)>,
                                         affine_map<(k, n) -> (k, n)>],
                        iterator_types = ["parallel", "parallel"]}
      ins(%codes, %s : tensor<64x128xi8>, tensor<64xf16>) outs(%e : tensor<128x64xf16>) {
  ^bb0(%c: i8, %sc: f16, %o: f16):
    %f = arith.sitofp %c : i8 to f16
    %w = arith.mulf %f, %sc : f16
    linalg.yield %w : f16
  } -> tensor<128x64xf16>
  %zero = arith.constant 0.0 : f16
  %y0 = linalg.fill ins(%zero : f16) outs(%ye : tensor<?x?x64xf16>) -> tensor<?x?x64xf16>
  %y = linalg.batch_matmul indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (k, n)>,
                                            affine_map<(b, m, n, k) -> (b, m, n)>]
      ins(%x, %wd : tensor<?x?x128xf16>, tensor<128x64xf16>) outs(%y0 : tensor<?x?x64xf16>) -> tensor<?x?x64xf16>
  return %y : tensor<?x?x64xf16>
}
