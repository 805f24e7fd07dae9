// RUN: humming-opt %s --mlir-very-unsafe-disable-verifier-on-parsing --humming-legalize-schema="chip=sm_80" -verify-diagnostics

// The op verifier's padding rules make every canonical shape exist, so only
// IR that skipped verification (an embedder building ops without verifying
// them, or this flag) reaches legalize-schema with a source tensor the
// canonical layout cannot hold: it is named, not packed wrongly.
func.func @gptq_k_not_packable(%a: memref<?x1004xf16>, %w: memref<125x1024xi32>, %s: memref<1x1024xf16>, %c: memref<?x1024xf16>) {
  // expected-error @+1 {{cannot hold 'weight' in the canonical layout: expected K*bits (1004*4) to be a multiple of 32 to pack the weight}}
  humming.gemm %a, %w scales(%s : memref<1x1024xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, format = gptq>,
       input_schema = #humming.input_schema<type = f16>}
      : memref<?x1004xf16>, memref<125x1024xi32> -> memref<?x1024xf16>
  return
}

// A canonical humming.moe_gemm whose padded K the prepared layout cannot
// hold (only unverified IR gets here: the verifier's padding rules): the
// preparation on the device says why instead of repacking wrongly.
func.func @moe_k_not_preparable(%a: memref<64x1004xf16>, %w: memref<4x256x125xi32>, %s: memref<4x256x1xf16>, %c: memref<64x256xf16>) {
  // expected-error @+1 {{cannot prepare the experts' canonical weights for sm_80 on the device: the prepared mma_sync layout expects the padded K to be a multiple of 16, got 1004}}
  humming.moe_gemm %a, %w scales(%s : memref<4x256x1xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, experts = 4>,
       input_schema = #humming.input_schema<type = f16>,
       compute = #humming.compute<gemm = grouped_masked>}
      : memref<64x1004xf16>, memref<4x256x125xi32> -> memref<64x256xf16>
  return
}
