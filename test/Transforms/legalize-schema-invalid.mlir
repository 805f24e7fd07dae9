// RUN: humming-opt %s -split-input-file --humming-legalize-schema="chip=sm_80" -verify-diagnostics

func.func @gptq_weight_not_an_argument(%a: memref<?x1024xf16>, %s: memref<8x1024xf16>, %c: memref<?x1024xf16>) {
  %w = memref.alloc() : memref<128x1024xi32>
  // expected-error @+1 {{expected the gptq 'weight' to be an argument of @gptq_weight_not_an_argument (the caller converts it to the canonical layout on the host), got a value defined by memref.alloc}}
  humming.gemm %a, %w scales(%s : memref<8x1024xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>, format = gptq>,
       input_schema = #humming.input_schema<type = f16>}
      : memref<?x1024xf16>, memref<128x1024xi32> -> memref<?x1024xf16>
  return
}

// -----

func.func @gptq_scales_shared(%a: memref<?x1024xf16>, %w: memref<128x1024xi32>, %s: memref<8x1024xf16>, %c: memref<?x1024xf16>, %t: memref<8x1024xf16>) {
  // expected-error @+1 {{expected the gptq 'scales' (argument #2) to be used only by this op: its type changes to the canonical layout}}
  humming.gemm %a, %w scales(%s : memref<8x1024xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>, format = gptq>,
       input_schema = #humming.input_schema<type = f16>}
      : memref<?x1024xf16>, memref<128x1024xi32> -> memref<?x1024xf16>
  memref.copy %s, %t : memref<8x1024xf16> to memref<8x1024xf16>
  return
}

// -----

func.func @fp8_without_quantize(%q: memref<?x1024xf8E4M3FN>, %as: memref<?x1xf32>, %w: memref<1024x128xi32>, %s: memref<1024x1xbf16>, %c: memref<?x1024xbf16>) {
  // expected-error @+1 {{sm_80 has no f8E4M3FN tensor cores (needs sm_89); expected the f8E4M3FN activations to be written by a humming.quantize of 16-bit values earlier in the block, to use those values instead}}
  humming.gemm %q, %w scales(%s : memref<1024x1xbf16>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = bf16>,
       input_schema = #humming.input_schema<type = f8E4M3FN, scaling = token>}
      : memref<?x1024xf8E4M3FN>, memref<1024x128xi32> -> memref<?x1024xbf16>
  return
}

// -----

func.func @fp8_from_f32(%x: memref<?x1024xf32>, %q: memref<?x1024xf8E4M3FN>, %as: memref<?x1xf32>, %w: memref<1024x128xi32>, %s: memref<1024x1xbf16>, %c: memref<?x1024xbf16>) {
  humming.quantize %x into %q scales(%as : memref<?x1xf32>)
      {schema = #humming.input_schema<type = f8E4M3FN, scaling = token>}
      : memref<?x1024xf32> -> memref<?x1024xf8E4M3FN>
  // expected-error @+1 {{sm_80 has no f8E4M3FN tensor cores (needs sm_89); expected the quantized activations' source to be f16 or bf16 to fall back to, got 'f32'}}
  humming.gemm %q, %w scales(%s : memref<1024x1xbf16>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = bf16>,
       input_schema = #humming.input_schema<type = f8E4M3FN, scaling = token>}
      : memref<?x1024xf8E4M3FN>, memref<1024x128xi32> -> memref<?x1024xbf16>
  return
}

// -----

// f16 accumulation holds for e4m3 activations with integer weights but not
// for bf16 ones: falling back to the bf16 source is refused with the
// compatibility rule's message.
func.func @fallback_incompatible(%x: memref<?x1024xbf16>, %q: memref<?x1024xf8E4M3FN>, %as: memref<?x1xf32>, %w: memref<1024x128xi32>, %s: memref<1024x1xbf16>, %c: memref<?x1024xbf16>) {
  humming.quantize %x into %q scales(%as : memref<?x1xf32>)
      {schema = #humming.input_schema<type = f8E4M3FN, scaling = token>}
      : memref<?x1024xbf16> -> memref<?x1024xf8E4M3FN>
  // expected-error-re @+1 {{sm_80 has no f8E4M3FN tensor cores (needs sm_89); the fallback to bf16 activations is not possible: {{.*}}f16 accumulation{{.*}}}}
  humming.gemm %q, %w scales(%s : memref<1024x1xbf16>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = bf16>,
       input_schema = #humming.input_schema<type = f8E4M3FN, scaling = token>,
       compute = #humming.compute<f16_accumulation = true>}
      : memref<?x1024xf8E4M3FN>, memref<1024x128xi32> -> memref<?x1024xbf16>
  return
}

// -----

func.func @moe_gptq(%a: memref<?x1024xbf16>, %w: memref<8x128x1024xi32>, %s: memref<8x8x1024xbf16>, %offs: memref<9xi32>, %c: memref<?x1024xbf16>) {
  // expected-error @+1 {{expected canonical weights: per-expert source formats are converted by the host adapters (humming::loadLayer), got format gptq}}
  humming.moe_gemm %a, %w scales(%s : memref<8x8x1024xbf16>) expert_layout(%offs : memref<9xi32>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = bf16, granularity = group<128>, experts = 8, format = gptq>,
       input_schema = #humming.input_schema<type = bf16>,
       compute = #humming.compute<gemm = grouped_contiguous>}
      : memref<?x1024xbf16>, memref<8x128x1024xi32> -> memref<?x1024xbf16>
  return
}

// -----

gpu.module @kernels {
  gpu.func @in_a_gpu_func(%a: memref<?x1024xf16>, %w: memref<128x1024xi32>, %s: memref<8x1024xf16>, %c: memref<?x1024xf16>) {
    // expected-error @+1 {{expected to be inside a func.func whose arguments carry the gptq weights (the caller converts them)}}
    humming.gemm %a, %w scales(%s : memref<8x1024xf16>) into %c
        {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>, format = gptq>,
         input_schema = #humming.input_schema<type = f16>}
        : memref<?x1024xf16>, memref<128x1024xi32> -> memref<?x1024xf16>
    gpu.return
  }
}


// -----

func.func @gptq_called(%a: memref<?x1024xf16>, %w: memref<128x1024xi32>, %s: memref<8x1024xf16>, %c: memref<?x1024xf16>) {
  // expected-error @+1 {{expected @gptq_called to have no callers in the module: its gptq arguments become canonical ones}}
  humming.gemm %a, %w scales(%s : memref<8x1024xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>, format = gptq>,
       input_schema = #humming.input_schema<type = f16>}
      : memref<?x1024xf16>, memref<128x1024xi32> -> memref<?x1024xf16>
  return
}
func.func @caller(%a: memref<?x1024xf16>, %w: memref<128x1024xi32>, %s: memref<8x1024xf16>, %c: memref<?x1024xf16>) {
  func.call @gptq_called(%a, %w, %s, %c) : (memref<?x1024xf16>, memref<128x1024xi32>, memref<8x1024xf16>, memref<?x1024xf16>) -> ()
  return
}

// -----

// MoE weights in the canonical layout that the prepared layout cannot hold
// (f16 group scales with bf16 activations: the scales multiply in the
// activation type): they are not prepared on the device, and the error
// says why (the op verifier, before the pass).
func.func @moe_canonical_unpreparable(%a: memref<?x512xbf16>, %w: memref<4x256x512xi8>, %s: memref<4x256x4xf16>, %c: memref<?x256xbf16>) {
  // expected-error @+1 {{cannot prepare the experts' canonical weights on the device: the prepared mma_sync layout applies scales in the activation type and expects scales that bf16 represents exactly, got f16}}
  humming.moe_gemm %a, %w scales(%s : memref<4x256x4xf16>) into %c
      {weight_schema = #humming.weight_schema<type = si8, scale = f16, granularity = group<128>, experts = 4>,
       input_schema = #humming.input_schema<type = bf16>,
       compute = #humming.compute<gemm = grouped_masked>}
      : memref<?x512xbf16>, memref<4x256x512xi8> -> memref<?x256xbf16>
  return
}

// -----

// RUN: echo 'module {}' | not humming-opt --humming-legalize-schema="chip=sm_99" 2>&1 | FileCheck %s --check-prefix=CHIP
// CHIP: humming-legalize-schema: expected a chip among {{.*}}, got 'sm_99'
