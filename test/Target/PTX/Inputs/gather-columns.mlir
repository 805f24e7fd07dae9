func.func @gather(%x: memref<?x4096xf16>, %perm: memref<4096xi32>, %xg: memref<?x4096xf16>,
                  %c: memref<?x14336xf8E4M3FN>, %p: memref<14336xi32>, %cg: memref<?x14336xf8E4M3FN>) {
  humming.gather_columns %x columns(%perm : memref<4096xi32>) into %xg
      : memref<?x4096xf16> -> memref<?x4096xf16>
  humming.gather_columns %c columns(%p : memref<14336xi32>) into %cg
      : memref<?x14336xf8E4M3FN> -> memref<?x14336xf8E4M3FN>
  return
}
