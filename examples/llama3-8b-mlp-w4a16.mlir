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
// stores its experts) on bf16 activations (e8m0 scales are exact in bf16).
// (On fp8 activations the sm_90a kernels scale each iteration's sums by one
// group of at least 64 of K, so MXFP4's 32 and NVFP4's 16 run on 16-bit
// activations there: the verifier says so.)
func.func @down_proj_mxfp4(%x: memref<?x14336xbf16>,
                           %w: memref<4096x1792xi32>,
                           %scales: memref<4096x448xf8E8M0FNU>,
                           %y: memref<?x4096xbf16>) {
  humming.gemm %x, %w scales(%scales : memref<4096x448xf8E8M0FNU>) into %y
      {weight_schema = #humming.weight_schema<type = f4E2M1FN, scale = f8E8M0FNU,
                                              granularity = group<32>>,
       input_schema = #humming.input_schema<type = bf16>}
      : memref<?x14336xbf16>, memref<4096x1792xi32> -> memref<?x4096xbf16>
  return
}
