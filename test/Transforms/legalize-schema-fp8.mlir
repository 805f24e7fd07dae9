// RUN: humming-opt %s -split-input-file --humming-legalize-schema="chip=sm_90a" | FileCheck %s

// fp8 activations stay where the sm_90a wgmma kernels take them: prepared
// weights the layout holds with them (per-channel scales here). With
// canonical weights they fall back to the 16-bit values humming.quantize
// read; prepared weights cannot (legalize-schema-fp8-invalid.mlir, which
// has sm_89 too).
// CHECK-LABEL: func.func @kept
// CHECK:       humming.quantize
// CHECK:       humming.gemm
// CHECK-NOT:   humming.legalized
// CHECK-SAME:  input_schema = #humming.input_schema<type = f8E4M3FN, scaling = token>
func.func @kept(%x: memref<?x512xf16>, %q: memref<?x512xf8E4M3FN>, %as: memref<?x1xf32>, %w: memref<16x2048xi32>, %s: memref<1x256xf16>, %c: memref<?x256xf16>) {
  humming.quantize %x into %q scales(%as : memref<?x1xf32>)
      {schema = #humming.input_schema<type = f8E4M3FN, scaling = token>}
      : memref<?x512xf16> -> memref<?x512xf8E4M3FN>
  humming.gemm %q, %w scales(%s : memref<1x256xf16>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = f8E4M3FN, scale = f16, granularity = channel>,
       input_schema = #humming.input_schema<type = f8E4M3FN, scaling = token>, layout = #humming.layout<chip = "sm_90a">}
      : memref<?x512xf8E4M3FN>, memref<16x2048xi32> -> memref<?x256xf16>
  return
}

// -----

// Canonical (unprepared) weights on sm_90a: the canonical-weight kernel
// takes 16-bit activations.
// CHECK-LABEL: func.func @canonical
// CHECK:       humming.legalized = ["activations: f8E4M3FN -> f16 (the values humming.quantize read): the canonical-weight kernel takes 16-bit activations only (f8E4M3FN activations run over prepared weights: 'layout')"]
func.func @canonical(%x: memref<?x512xf16>, %q: memref<?x512xf8E4M3FN>, %as: memref<?x1xf32>, %w: memref<256x64xi32>, %s: memref<256x1xf16>, %c: memref<?x256xf16>) {
  humming.quantize %x into %q scales(%as : memref<?x1xf32>)
      {schema = #humming.input_schema<type = f8E4M3FN, scaling = token>}
      : memref<?x512xf16> -> memref<?x512xf8E4M3FN>
  humming.gemm %q, %w scales(%s : memref<256x1xf16>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16>,
       input_schema = #humming.input_schema<type = f8E4M3FN, scaling = token>}
      : memref<?x512xf8E4M3FN>, memref<256x64xi32> -> memref<?x256xf16>
  return
}

// -----

// si8 activations over canonical weights: the canonical-weight kernel's
// reason, as for fp8.
// CHECK-LABEL: func.func @int8
// CHECK:       humming.legalized = ["activations: si8 -> f16 (the values humming.quantize read): the canonical-weight kernel takes 16-bit activations only (si8 activations run over prepared weights: 'layout')"]
func.func @int8(%x: memref<?x512xf16>, %q: memref<?x512xi8>, %as: memref<?x1xf32>, %w: memref<256x64xi32>, %s: memref<256x1xf16>, %c: memref<?x256xf16>) {
  humming.quantize %x into %q scales(%as : memref<?x1xf32>)
      {schema = #humming.input_schema<type = si8, scaling = token>}
      : memref<?x512xf16> -> memref<?x512xi8>
  humming.gemm %q, %w scales(%s : memref<256x1xf16>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16>,
       input_schema = #humming.input_schema<type = si8, scaling = token>}
      : memref<?x512xi8>, memref<256x64xi32> -> memref<?x256xf16>
  return
}

// -----

// si8 activations over weights prepared for them stay (the s8 wgmma
// kernels).
// CHECK-LABEL: func.func @int8_kept
// CHECK:       humming.gemm
// CHECK-NOT:   humming.legalized
// CHECK-SAME:  input_schema = #humming.input_schema<type = si8, scaling = token>
func.func @int8_kept(%x: memref<?x512xf16>, %q: memref<?x512xi8>, %as: memref<?x1xf32>, %w: memref<16x1024xi32>, %s: memref<1x256xf16>, %c: memref<?x256xf16>) {
  humming.quantize %x into %q scales(%as : memref<?x1xf32>)
      {schema = #humming.input_schema<type = si8, scaling = token>}
      : memref<?x512xf16> -> memref<?x512xi8>
  humming.gemm %q, %w scales(%s : memref<1x256xf16>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = channel>,
       input_schema = #humming.input_schema<type = si8, scaling = token>, layout = #humming.layout<chip = "sm_90a">}
      : memref<?x512xi8>, memref<16x1024xi32> -> memref<?x256xf16>
  return
}

// -----

// 4-bit activations over canonical weights: the canonical-weight kernel's
// reason (si4 runs over prepared weights, mma.sync m16n8k64).
// CHECK-LABEL: func.func @int4
// CHECK:       humming.legalized = ["activations: si4 -> f16 (the values humming.quantize read): the canonical-weight kernel takes 16-bit activations only (si4 activations run over prepared weights: 'layout')"]
func.func @int4(%x: memref<?x512xf16>, %q: memref<?x512xi4>, %as: memref<?x1xf32>, %w: memref<512x32xi32>, %s: memref<512x1xf16>, %c: memref<?x512xf16>) {
  humming.quantize %x into %q scales(%as : memref<?x1xf32>)
      {schema = #humming.input_schema<type = si4, scaling = token>}
      : memref<?x512xf16> -> memref<?x512xi4>
  humming.gemm %q, %w scales(%s : memref<512x1xf16>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = ui2, scale = f16>,
       input_schema = #humming.input_schema<type = si4, scaling = token>}
      : memref<?x512xi4>, memref<512x32xi32> -> memref<?x512xf16>
  return
}

// -----

// Canonical weights with fp8 activations and no humming.quantize to fall
// back to: the weights are prepared on the device for them (a
// humming.repack per operand into new buffers, freed after the gemm), as
// for humming.moe_gemm.
// CHECK-LABEL: func.func @canonical_prepared_on_device
// CHECK:       %[[W:.*]] = memref.alloc() : memref<16x2048xi32>
// CHECK:       humming.repack %{{.*}} into %[[W]] {{.*}}operand = #humming.operand<weight>
// CHECK:       %[[S:.*]] = memref.alloc() : memref<1x256xf16>
// CHECK:       humming.repack %{{.*}} into %[[S]] {{.*}}operand = #humming.operand<scales>
// CHECK:       humming.gemm %{{.*}}, %[[W]] scales(%[[S]] : memref<1x256xf16>)
// CHECK-SAME:  humming.legalized = ["weights: canonical -> prepared for sm_90a by humming.repack on the device before each run
// CHECK-SAME:  layout = #humming.layout<chip = "sm_90a">
// CHECK:       memref.dealloc %[[W]]
// CHECK:       memref.dealloc %[[S]]
func.func @canonical_prepared_on_device(%q: memref<?x512xf8E4M3FN>, %as: memref<?x1xf32>, %w: memref<256x128xi32>, %s: memref<256x1xf16>, %c: memref<?x256xf16>) {
  humming.gemm %q, %w scales(%s : memref<256x1xf16>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = f8E4M3FN, scale = f16, granularity = channel>,
       input_schema = #humming.input_schema<type = f8E4M3FN, scaling = token>}
      : memref<?x512xf8E4M3FN>, memref<256x128xi32> -> memref<?x256xf16>
  return
}
