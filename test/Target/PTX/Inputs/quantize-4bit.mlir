// Activation quantization kernels with 4-bit codes, two per byte (every
// chip: e2m1 is rounded by comparisons, not by the sm_100a cvt).
func.func @tok_s4(%x: memref<?x4096xf16>, %q: memref<?x4096xi4>, %s: memref<?x1xf32>) {
  humming.quantize %x into %q scales(%s : memref<?x1xf32>)
      {schema = #humming.input_schema<type = si4, scaling = token>}
      : memref<?x4096xf16> -> memref<?x4096xi4>
  return
}
func.func @grp_e2m1(%x: memref<?x2048xbf16>, %q: memref<?x2048xf4E2M1FN>, %s: memref<?x32xf32>) {
  humming.quantize %x into %q scales(%s : memref<?x32xf32>)
      {schema = #humming.input_schema<type = f4E2M1FN, scaling = group<64>>}
      : memref<?x2048xbf16> -> memref<?x2048xf4E2M1FN>
  return
}
func.func @static_s4(%x: memref<?x102xf32>, %q: memref<?x102xi4>, %s: memref<1xf32>) {
  humming.quantize %x into %q scales(%s : memref<1xf32>)
      {schema = #humming.input_schema<type = si4, scaling = static>}
      : memref<?x102xf32> -> memref<?x102xi4>
  return
}
