// RUN: humming-opt %s -split-input-file --humming-legalize-schema="chip=sm_89" -verify-diagnostics | FileCheck %s
// RUN: not humming-opt %s -split-input-file --humming-legalize-schema="chip=sm_80" 2>&1 | FileCheck %s --check-prefix=AMPERE
// RUN: not humming-opt %s -split-input-file --humming-legalize-schema="chip=sm_75" 2>&1 | FileCheck %s --check-prefix=TURING
// TURING: error: 'humming.gemm' op sm_75 has no f8E4M3FN tensor cores (needs sm_89)
// TURING: error: 'humming.gemm' op the kernels of 8-bit activations need sm_80 or newer (m16n8k32 / m16n8k64), got sm_75; the weights are prepared for si8 activations

// 8-bit activations over prepared weights stay where the mma_sync m16n8k32
// kernels take them: fp8 from sm_89, si8 from sm_80; so do si4 ones
// (m16n8k64 s4).
// CHECK-LABEL: func.func @fp8_kept
// CHECK-NOT:   humming.legalized
// CHECK:       input_schema = #humming.input_schema<type = f8E4M3FN, scaling = token>
// AMPERE:      error: 'humming.gemm' op sm_80 has no f8E4M3FN tensor cores (needs sm_89); the weights are prepared for f8E4M3FN activations, which the 16-bit fallback cannot read
func.func @fp8_kept(%x: memref<?x512xf16>, %q: memref<?x512xf8E4M3FN>, %as: memref<?x1xf32>, %w: memref<16x1024xi32>, %s: memref<4x256xbf16>, %c: memref<?x256xf16>) {
  humming.quantize %x into %q scales(%as : memref<?x1xf32>)
      {schema = #humming.input_schema<type = f8E4M3FN, scaling = token>}
      : memref<?x512xf16> -> memref<?x512xf8E4M3FN>
  humming.gemm %q, %w scales(%s : memref<4x256xbf16>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = bf16, granularity = group<128>>,
       input_schema = #humming.input_schema<type = f8E4M3FN, scaling = token>, layout = #humming.layout<chip = "sm_89">}
      : memref<?x512xf8E4M3FN>, memref<16x1024xi32> -> memref<?x256xf16>
  return
}

// -----

// CHECK-LABEL: func.func @int8_kept
// CHECK-NOT:   humming.legalized
// CHECK:       input_schema = #humming.input_schema<type = si8, scaling = token>
// AMPERE-LABEL: func.func @int8_kept
// AMPERE-NOT:   humming.legalized
// AMPERE:       input_schema = #humming.input_schema<type = si8, scaling = token>
func.func @int8_kept(%x: memref<?x512xf16>, %q: memref<?x512xi8>, %as: memref<?x1xf32>, %w: memref<16x2048xi32>, %s: memref<1x256xf16>, %c: memref<?x256xf16>) {
  humming.quantize %x into %q scales(%as : memref<?x1xf32>)
      {schema = #humming.input_schema<type = si8, scaling = token>}
      : memref<?x512xf16> -> memref<?x512xi8>
  humming.gemm %q, %w scales(%s : memref<1x256xf16>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = si8, scale = f16, granularity = channel>,
       input_schema = #humming.input_schema<type = si8, scaling = token>, layout = #humming.layout<chip = "sm_89">}
      : memref<?x512xi8>, memref<16x2048xi32> -> memref<?x256xf16>
  return
}

// -----

// MXFP4 weights (ue8m0 group scales): the mma_sync kernels take 16-bit group
// scales only, and the prepared weights cannot fall back.
func.func @mxfp4(%x: memref<?x512xf16>, %q: memref<?x512xf8E4M3FN>, %as: memref<?x1xf32>, %w: memref<16x1024xi32>, %s: memref<8x256xf8E8M0FNU>, %c: memref<?x256xf16>) {
  humming.quantize %x into %q scales(%as : memref<?x1xf32>)
      {schema = #humming.input_schema<type = f8E4M3FN, scaling = token>}
      : memref<?x512xf16> -> memref<?x512xf8E4M3FN>
  // expected-error @+1 {{the mma_sync kernels apply group scales to each iteration's sums per output column (scale_after_mma) and expect f16 or bf16 group scales with f8E4M3FN activations, got f8E8M0FNU; the weights are prepared for f8E4M3FN activations, which the 16-bit fallback cannot read: prepare them for 16-bit activations or pass canonical weights (on sm_89)}}
  humming.gemm %q, %w scales(%s : memref<8x256xf8E8M0FNU>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = f4E2M1FN, scale = f8E8M0FNU, granularity = group<64>>,
       input_schema = #humming.input_schema<type = f8E4M3FN, scaling = token>, layout = #humming.layout<chip = "sm_89">}
      : memref<?x512xf8E4M3FN>, memref<16x1024xi32> -> memref<?x256xf16>
  return
}

// -----

// CHECK-LABEL: func.func @int4_kept
// CHECK-NOT:   humming.legalized
// CHECK:       input_schema = #humming.input_schema<type = si4, scaling = token>
// AMPERE-LABEL: func.func @int4_kept
// AMPERE-NOT:   humming.legalized
// AMPERE:       input_schema = #humming.input_schema<type = si4, scaling = token>
func.func @int4_kept(%x: memref<?x512xf16>, %q: memref<?x512xi4>, %as: memref<?x1xf32>, %w: memref<8x2048xi32>, %s: memref<1x256xf16>, %c: memref<?x256xf16>) {
  humming.quantize %x into %q scales(%as : memref<?x1xf32>)
      {schema = #humming.input_schema<type = si4, scaling = token>}
      : memref<?x512xf16> -> memref<?x512xi4>
  humming.gemm %q, %w scales(%s : memref<1x256xf16>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = si4, scale = f16, granularity = channel>,
       input_schema = #humming.input_schema<type = si4, scaling = token>, layout = #humming.layout<chip = "sm_89">}
      : memref<?x512xi4>, memref<8x2048xi32> -> memref<?x256xf16>
  return
}
