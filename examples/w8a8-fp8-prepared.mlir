// An FP8 checkpoint's linear layer (N = K = 8192: e4m3 weights with one f32
// scale per output channel, e4m3 activations with one f32 scale per token,
// bf16 output) on weights already in the prepared layout for sm_90a
// (`layout = #humming.layout<chip = "sm_90a">`: the host or the device
// repacks the canonical tensors once, humming::Layer::transform; for fp8
// weights with fp8 activations the prepared tiles lie K-major, so wgmma
// reads them from shared memory as they are). No tile_configs: the device's
// heuristics choose one kernel per range of M (decode tiles that split K,
// the 128- and 192-token prefill tiles fed by TMA):
//
//   humming-translate examples/w8a8-fp8-prepared.mlir --chip=sm_90a --device=H100 -o layer.ptx
//
// writes one .entry per M range; `humming-opt ... --humming-select-tiles`
// shows the chosen #humming.tile_config attributes.
func.func @fp8_linear(%a: memref<?x8192xf8E4M3FN>, %w: memref<256x65536xi32>, %s: memref<1x8192xf32>, %as: memref<?x1xf32>, %c: memref<?x8192xbf16>) {
  humming.gemm %a, %w scales(%s : memref<1x8192xf32>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = f8E4M3FN, scale = f32, granularity = channel>,
       input_schema = #humming.input_schema<type = f8E4M3FN, scaling = token>,
       layout = #humming.layout<chip = "sm_90a">}
      : memref<?x8192xf8E4M3FN>, memref<256x65536xi32> -> memref<?x8192xbf16>
  return
}
