// RUN: humming-opt %s --convert-elementwise-to-linalg --linalg-fuse-elementwise-ops --humming-raise-quantized-matmul -split-input-file | FileCheck %s

// A frontend's dequantization as elementwise arith on whole tensors (before
// any linalg fusion: the codes converted, the scales broadcast by a
// linalg.generic as torch-mlir emits broadcasts, one arith.mulf) becomes
// the single linalg.generic the raise pass reads once the upstream passes
// convert-elementwise-to-linalg and linalg-fuse-elementwise-ops have run;
// the matmul stays a named op (those passes fuse into generics only).

// int8 codes, f16 scales per group of 128.
// CHECK-LABEL: func.func @int8_group
// CHECK-NOT:     linalg.generic
// CHECK:         humming.gemm %{{.*}}, %{{.*}} scales(%{{.*}} : memref<64x2xf16>) into
// CHECK-SAME:      weight_schema = #humming.weight_schema<type = si8, scale = f16, granularity = group<128>>
// CHECK-NOT:     linalg.matmul
func.func @int8_group(%x: tensor<?x256xf16>, %codes: tensor<64x256xi8>, %scales: tensor<64x2xf16>) -> tensor<?x64xf16> {
  %f = arith.sitofp %codes : tensor<64x256xi8> to tensor<64x256xf16>
  %e = tensor.empty() : tensor<64x256xf16>
  %sb = linalg.generic {indexing_maps = [affine_map<(n, k) -> (n, k floordiv 128)>, affine_map<(n, k) -> (n, k)>],
                        iterator_types = ["parallel", "parallel"]}
      ins(%scales : tensor<64x2xf16>) outs(%e : tensor<64x256xf16>) {
  ^bb0(%s: f16, %o: f16):
    linalg.yield %s : f16
  } -> tensor<64x256xf16>
  %w = arith.mulf %f, %sb : tensor<64x256xf16>
  %c0 = arith.constant 0 : index
  %m = tensor.dim %x, %c0 : tensor<?x256xf16>
  %y0 = tensor.empty(%m) : tensor<?x64xf16>
  %zero = arith.constant 0.0 : f16
  %y1 = linalg.fill ins(%zero : f16) outs(%y0 : tensor<?x64xf16>) -> tensor<?x64xf16>
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
                                      affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : tensor<?x256xf16>, tensor<64x256xf16>) outs(%y1 : tensor<?x64xf16>) -> tensor<?x64xf16>
  return %y : tensor<?x64xf16>
}

// -----

// FP8 (e4m3) weights [N, K] with bf16 scales per output channel, broadcast
// along K.
// CHECK-LABEL: func.func @fp8_channel
// CHECK-NOT:     linalg.generic
// CHECK:         humming.gemm %{{.*}}, %{{.*}} scales(%{{.*}} : memref<128x1xbf16>) into
// CHECK-SAME:      weight_schema = #humming.weight_schema<type = f8E4M3FN, scale = bf16>
// CHECK-NOT:     linalg.matmul
func.func @fp8_channel(%x: tensor<?x256xbf16>, %codes: tensor<128x256xf8E4M3FN>, %scales: tensor<128xbf16>) -> tensor<?x128xbf16> {
  %f = arith.extf %codes : tensor<128x256xf8E4M3FN> to tensor<128x256xbf16>
  %e = tensor.empty() : tensor<128x256xbf16>
  %sb = linalg.generic {indexing_maps = [affine_map<(n, k) -> (n)>, affine_map<(n, k) -> (n, k)>],
                        iterator_types = ["parallel", "parallel"]}
      ins(%scales : tensor<128xbf16>) outs(%e : tensor<128x256xbf16>) {
  ^bb0(%s: bf16, %o: bf16):
    linalg.yield %s : bf16
  } -> tensor<128x256xbf16>
  %w = arith.mulf %f, %sb : tensor<128x256xbf16>
  %c0 = arith.constant 0 : index
  %m = tensor.dim %x, %c0 : tensor<?x256xbf16>
  %y0 = tensor.empty(%m) : tensor<?x128xbf16>
  %zero = arith.constant 0.0 : bf16
  %y1 = linalg.fill ins(%zero : bf16) outs(%y0 : tensor<?x128xbf16>) -> tensor<?x128xbf16>
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
                                      affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : tensor<?x256xbf16>, tensor<128x256xbf16>) outs(%y1 : tensor<?x128xbf16>) -> tensor<?x128xbf16>
  return %y : tensor<?x128xbf16>
}
