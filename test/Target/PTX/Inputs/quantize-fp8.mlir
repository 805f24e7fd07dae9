// Activation quantization kernels with fp8 codes (sm_89 and later).
func.func @tok_e4m3(%x: memref<?x7168xbf16>, %q: memref<?x7168xf8E4M3FN>, %s: memref<?x1xf32>) {
  humming.quantize %x into %q scales(%s : memref<?x1xf32>)
      {schema = #humming.input_schema<type = f8E4M3FN, scaling = token>}
      : memref<?x7168xbf16> -> memref<?x7168xf8E4M3FN>
  return
}
func.func @grp_e4m3(%x: memref<?x4096xf16>, %q: memref<?x4096xf8E4M3FN>, %s: memref<?x32xf32>) {
  humming.quantize %x into %q scales(%s : memref<?x32xf32>)
      {schema = #humming.input_schema<type = f8E4M3FN, scaling = group<128>>}
      : memref<?x4096xf16> -> memref<?x4096xf8E4M3FN>
  return
}
func.func @static_e5m2(%x: memref<?x24xf16>, %q: memref<?x24xf8E5M2>, %s: memref<1xf32>) {
  humming.quantize %x into %q scales(%s : memref<1xf32>)
      {schema = #humming.input_schema<type = f8E5M2, scaling = static>}
      : memref<?x24xf16> -> memref<?x24xf8E5M2>
  return
}
