// A Llama-3-8B down projection (N = 4096, K = 14336) with 4-bit weights in
// Humming's canonical layout (the adapters produce it from GPTQ, AWQ,
// compressed-tensors ...), group-128 f16 scales, fp16 activations.
//
//   humming-translate examples/down-proj-w4a16-g128.mlir --chip=sm_90a -o layer.ptx
//
// compiles it with humming-compile-pipeline to PTX for the H200.
module attributes {humming.target = #humming.target<device = "H200">} {
func.func @down_proj(%x: memref<?x14336xf16>, %w: memref<4096x1792xi32>,
                     %scales: memref<4096x112xf16>, %y: memref<?x4096xf16>) {
  humming.gemm %x, %w scales(%scales : memref<4096x112xf16>) into %y
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>>,
       input_schema = #humming.input_schema<type = f16>}
      : memref<?x14336xf16>, memref<4096x1792xi32> -> memref<?x4096xf16>
  return
}
}
