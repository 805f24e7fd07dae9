// Activation quantization kernels with int8 codes (every chip).
func.func @tok_s8(%x: memref<?x4096xf16>, %q: memref<?x4096xi8>, %s: memref<?x1xf32>) {
  humming.quantize %x into %q scales(%s : memref<?x1xf32>)
      {schema = #humming.input_schema<type = si8, scaling = token>}
      : memref<?x4096xf16> -> memref<?x4096xi8>
  return
}
func.func @grp_s8(%x: memref<?x2048xbf16>, %q: memref<?x2048xi8>, %s: memref<?x64xf32>) {
  humming.quantize %x into %q scales(%s : memref<?x64xf32>)
      {schema = #humming.input_schema<type = si8, scaling = group<32>>}
      : memref<?x2048xbf16> -> memref<?x2048xi8>
  return
}
func.func @static_s8(%x: memref<?x100xf32>, %q: memref<?x100xi8>, %s: memref<1xf32>) {
  humming.quantize %x into %q scales(%s : memref<1xf32>)
      {schema = #humming.input_schema<type = si8, scaling = static>}
      : memref<?x100xf32> -> memref<?x100xi8>
  return
}
