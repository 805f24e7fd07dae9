// RUN: humming-opt %s -split-input-file --humming-legalize-schema="chip=sm_80" | FileCheck %s
// RUN: humming-opt %s -split-input-file --humming-legalize-schema | FileCheck %s --check-prefix=NOCHIP

// GPTQ v2 weights handed to the function: the arguments become the
// canonical layout (qweight [K*b/32, N] -> [N, K*b/32], scales [K/g, N] ->
// [N, K/g], qzeros [K/g, N*b/32] -> [N*b/32, K/g]) marked with the source
// schema for the host conversion, and the op says what changed.
// CHECK-LABEL: func.func @gptq_v2(
// CHECK-SAME: %{{.*}}: memref<?x4096xf16>,
// CHECK-SAME: %{{.*}}: memref<4096x512xi32> {humming.operand = #humming.operand<weight>, humming.source_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>, zero_point = int, format = gptq_v2>},
// CHECK-SAME: %{{.*}}: memref<4096x32xf16> {humming.operand = #humming.operand<scales>, humming.source_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>, zero_point = int, format = gptq_v2>},
// CHECK-SAME: %{{.*}}: memref<512x32xi32> {humming.operand = #humming.operand<zero_points>, humming.source_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>, zero_point = int, format = gptq_v2>},
// CHECK:      humming.gemm
// CHECK-SAME: humming.legalized = ["weights: gptq_v2 -> canonical; the caller converts arguments #1, #2, #3 on the host (humming::sourceToCanonical)"]
// CHECK-SAME: weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>, zero_point = int>}
// CHECK-SAME: : memref<?x4096xf16>, memref<4096x512xi32> -> memref<?x4096xf16>
func.func @gptq_v2(%a: memref<?x4096xf16>, %w: memref<512x4096xi32>, %s: memref<32x4096xf16>, %z: memref<32x512xi32>, %c: memref<?x4096xf16>) {
  humming.gemm %a, %w scales(%s : memref<32x4096xf16>) zero_points(%z : memref<32x512xi32>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>, zero_point = int, format = gptq_v2>,
       input_schema = #humming.input_schema<type = f16>}
      : memref<?x4096xf16>, memref<512x4096xi32> -> memref<?x4096xf16>
  return
}

// -----

// AWQ: qweight [K, N*b/32] packed along N -> [N, K*b/32].
// CHECK-LABEL: func.func @awq(
// CHECK-SAME: memref<1024x128xi32> {humming.operand = #humming.operand<weight>, humming.source_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>, format = awq>}, %{{.*}}: memref<1024x8xf16> {humming.operand = #humming.operand<scales>
// CHECK: humming.legalized = ["weights: awq -> canonical; the caller converts arguments #1, #2 on the host (humming::sourceToCanonical)"]
func.func @awq(%a: memref<?x1024xf16>, %w: memref<1024x128xi32>, %s: memref<8x1024xf16>, %c: memref<?x1024xf16>) {
  humming.gemm %a, %w scales(%s : memref<8x1024xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>, format = awq>,
       input_schema = #humming.input_schema<type = f16>}
      : memref<?x1024xf16>, memref<1024x128xi32> -> memref<?x1024xf16>
  return
}

// -----

// fp8 activations on sm_80 (no fp8 tensor cores): the gemm takes the bf16
// values humming.quantize read, drops the activation scales, and the
// quantize (now unread) is erased. Without a chip the reason is the
// kernels' (chosen per chip; legalize-schema-fp8.mlir has the sm_90a and
// sm_89 cases).
// CHECK-LABEL: func.func @fp8_activations
// CHECK-NOT:   humming.quantize
// CHECK:       humming.gemm %arg0, %{{.*}} scales(%{{.*}} : memref<1024x1xbf16>) into %{{.*}} {
// CHECK-SAME:  humming.legalized = ["activations: f8E4M3FN -> bf16 (the values humming.quantize read): sm_80 has no f8E4M3FN tensor cores (needs sm_89)"]
// CHECK-SAME:  input_schema = #humming.input_schema<type = bf16>
// CHECK-SAME:  : memref<?x1024xbf16>, memref<1024x128xi32> -> memref<?x1024xbf16>
// NOCHIP-LABEL: func.func @fp8_activations
// NOCHIP:       humming.legalized = ["activations: f8E4M3FN -> bf16 (the values humming.quantize read): the kernels of 8-bit activations are chosen per chip and the module has none (f8E4M3FN activations stay with a humming.target or chip=)"]
func.func @fp8_activations(%x: memref<?x1024xbf16>, %q: memref<?x1024xf8E4M3FN>, %as: memref<?x1xf32>, %w: memref<1024x128xi32>, %s: memref<1024x1xbf16>, %c: memref<?x1024xbf16>) {
  humming.quantize %x into %q scales(%as : memref<?x1xf32>)
      {schema = #humming.input_schema<type = f8E4M3FN, scaling = token>}
      : memref<?x1024xbf16> -> memref<?x1024xf8E4M3FN>
  humming.gemm %q, %w scales(%s : memref<1024x1xbf16>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = bf16>,
       input_schema = #humming.input_schema<type = f8E4M3FN, scaling = token>}
      : memref<?x1024xf8E4M3FN>, memref<1024x128xi32> -> memref<?x1024xbf16>
  return
}

// -----

// What the kernels run already is left alone.
// CHECK-LABEL: func.func @canonical
// CHECK-NOT:   humming.legalized
func.func @canonical(%a: memref<?x1024xf16>, %w: memref<1024x128xi32>, %s: memref<1024x8xf16>, %c: memref<?x1024xf16>) {
  humming.gemm %a, %w scales(%s : memref<1024x8xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>>,
       input_schema = #humming.input_schema<type = f16>}
      : memref<?x1024xf16>, memref<1024x128xi32> -> memref<?x1024xf16>
  return
}

// -----

// A humming.moe_gemm over canonical weights (as humming-raise-quantized-
// matmul makes of a batch matmul): with a chip, the weight and the scales
// are prepared on the device by humming.repack into new buffers before it
// and freed after it; the op takes them and the layout. Without a chip it
// stays as it is.
// CHECK-LABEL: func.func @moe_canonical(
// CHECK-SAME:    %[[A:.*]]: memref<64x512xf16>, %[[W:.*]]: memref<4x256x64xi32>, %[[S:.*]]: memref<4x256x4xf16>, %[[C:.*]]: memref<64x256xf16>)
// CHECK-NEXT:    %[[PW:.*]] = memref.alloc() : memref<4x32x512xi32>
// CHECK-NEXT:    humming.repack %[[W]] into %[[PW]] {{{.*}}k = 512 : i64, layout = #humming.layout<chip = "sm_80">, n = 256 : i64, operand = #humming.operand<weight>
// CHECK-NEXT:    %[[PS:.*]] = memref.alloc() : memref<4x4x256xf16>
// CHECK-NEXT:    humming.repack %[[S]] into %[[PS]] {{{.*}}operand = #humming.operand<scales>
// CHECK-NEXT:    humming.moe_gemm %[[A]], %[[PW]] scales(%[[PS]] : memref<4x4x256xf16>) into %[[C]]
// CHECK-SAME:      humming.legalized = ["weights: canonical -> prepared for sm_80 by humming.repack on the device before each run (a caller that keeps the weights prepares them once and passes them with 'layout')"]
// CHECK-SAME:      layout = #humming.layout<chip = "sm_80">
// CHECK-NEXT:    memref.dealloc %[[PW]]
// CHECK-NEXT:    memref.dealloc %[[PS]]
// NOCHIP-LABEL: func.func @moe_canonical(
// NOCHIP-NEXT:    humming.moe_gemm
// NOCHIP-NOT:       layout
// NOCHIP-NEXT:    return
func.func @moe_canonical(%a: memref<64x512xf16>, %w: memref<4x256x64xi32>, %s: memref<4x256x4xf16>, %c: memref<64x256xf16>) {
  humming.moe_gemm %a, %w scales(%s : memref<4x256x4xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>, experts = 4>,
       input_schema = #humming.input_schema<type = f16>,
       compute = #humming.compute<gemm = grouped_masked>}
      : memref<64x512xf16>, memref<4x256x64xi32> -> memref<64x256xf16>
  return
}

// -----

// Unpacked 8-bit codes ([E, N, K] i8) are prepared into i32 words; integer
// zero points are prepared too.
// CHECK-LABEL: func.func @moe_canonical_unpacked_w8_zero_points(
// CHECK:         memref.alloc() : memref<4x32x1024xi32>
// CHECK-NEXT:    humming.repack %{{.*}} : memref<4x256x512xi8> -> memref<4x32x1024xi32>
// CHECK:         humming.repack %{{.*}} : memref<4x256x4xf16> -> memref<4x4x256xf16>
// CHECK:         humming.repack %{{.*}} : memref<4x64x4xi32> -> memref<4x4x64xi32>
// CHECK:         humming.moe_gemm
// CHECK-SAME:      : memref<?x512xf16>, memref<4x32x1024xi32> -> memref<?x256xf16>
func.func @moe_canonical_unpacked_w8_zero_points(%a: memref<?x512xf16>, %w: memref<4x256x512xi8>, %s: memref<4x256x4xf16>,
                                                 %z: memref<4x64x4xi32>, %c: memref<?x256xf16>) {
  humming.moe_gemm %a, %w scales(%s : memref<4x256x4xf16>) zero_points(%z : memref<4x64x4xi32>) into %c
      {weight_schema = #humming.weight_schema<type = ui8, scale = f16, granularity = group<128>, zero_point = int, experts = 4>,
       input_schema = #humming.input_schema<type = f16>,
       compute = #humming.compute<gemm = grouped_masked>}
      : memref<?x512xf16>, memref<4x256x512xi8> -> memref<?x256xf16>
  return
}
