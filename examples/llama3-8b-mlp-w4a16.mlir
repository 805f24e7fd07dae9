// The down projection of a Llama-3-8B MLP (N = 4096, K = 14336) with GPTQ
// 4-bit weights, group size 128, integer zero points, as the checkpoint stores
// them (gptq_v2: qweight [K/8, N], scales [K/128, N], qzeros [K/128, N/8]),
// on fp16 activations.
//
//   humming-opt examples/llama3-8b-mlp-w4a16.mlir --humming-attach-target="device=H200"
//
// verifies the layer against the H200 (sm_90a) and prints it with the
// device's facts attached.
func.func @down_proj_w4a16_g128(%x: memref<?x14336xf16>,
                                %qweight: memref<1792x4096xi32>,
                                %scales: memref<112x4096xf16>,
                                %qzeros: memref<112x512xi32>,
                                %y: memref<?x4096xf16>) {
  humming.gemm %x, %qweight scales(%scales : memref<112x4096xf16>)
      zero_points(%qzeros : memref<112x512xi32>) into %y
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>,
                                              zero_point = int, format = gptq_v2>,
       input_schema = #humming.input_schema<type = f16>}
      : memref<?x14336xf16>, memref<1792x4096xi32> -> memref<?x4096xf16>
  return
}

// The same layer as MXFP4 (e2m1 with e8m0 group-32 scales, as gpt-oss
// stores its experts) on fp8 activations with per-token scales. (NVFP4's
// group of 16 is finer than one fp8 MMA k-step of 32, so NVFP4 weights run
// on 16-bit activations: the verifier says so.)
func.func @down_proj_mxfp4_a8(%x: memref<?x14336xf8E4M3FN>,
                              %w: memref<4096x1792xi32>,
                              %scales: memref<4096x448xf8E8M0FNU>,
                              %xs: memref<?x1xf32>,
                              %y: memref<?x4096xbf16>) {
  humming.gemm %x, %w scales(%scales : memref<4096x448xf8E8M0FNU>)
      input_scale(%xs : memref<?x1xf32>) into %y
      {weight_schema = #humming.weight_schema<type = f4E2M1FN, scale = f8E8M0FNU,
                                              granularity = group<32>>,
       input_schema = #humming.input_schema<type = f8E4M3FN, scaling = token>}
      : memref<?x14336xf8E4M3FN>, memref<4096x1792xi32> -> memref<?x4096xbf16>
  return
}
