// RUN: humming-opt %s -split-input-file -verify-diagnostics

func.func @dynamic_k(%x: memref<?x?xf16>, %p: memref<?xi32>, %y: memref<?x?xf16>) {
  // expected-error @+1 {{expected 'input' to be a memref<?x{K}x{type}> with a static K and an 8-, 16- or 32-bit element type, got 'memref<?x?xf16>'}}
  humming.gather_columns %x columns(%p : memref<?xi32>) into %y : memref<?x?xf16> -> memref<?x?xf16>
  return
}

// -----

func.func @four_bit(%x: memref<?x64xi4>, %p: memref<64xi32>, %y: memref<?x64xi4>) {
  // expected-error @+1 {{expected 'input' to be a memref<?x{K}x{type}> with a static K and an 8-, 16- or 32-bit element type, got 'memref<?x64xi4>'}}
  humming.gather_columns %x columns(%p : memref<64xi32>) into %y : memref<?x64xi4> -> memref<?x64xi4>
  return
}

// -----

func.func @other_type(%x: memref<?x64xf16>, %p: memref<64xi32>, %y: memref<?x64xbf16>) {
  // expected-error @+1 {{expected 'output' to have the rows of 'input' (64 x 'f16'), got 'memref<?x64xbf16>'}}
  humming.gather_columns %x columns(%p : memref<64xi32>) into %y : memref<?x64xf16> -> memref<?x64xbf16>
  return
}

// -----

func.func @other_width(%x: memref<?x64xf16>, %p: memref<64xi32>, %y: memref<?x32xf16>) {
  // expected-error @+1 {{expected 'output' to have the rows of 'input' (64 x 'f16'), got 'memref<?x32xf16>'}}
  humming.gather_columns %x columns(%p : memref<64xi32>) into %y : memref<?x64xf16> -> memref<?x32xf16>
  return
}

// -----

func.func @other_rows(%x: memref<4x64xf16>, %p: memref<64xi32>, %y: memref<8x64xf16>) {
  // expected-error @+1 {{expected 'output' to have the 4 rows of 'input', got 'memref<8x64xf16>'}}
  humming.gather_columns %x columns(%p : memref<64xi32>) into %y : memref<4x64xf16> -> memref<8x64xf16>
  return
}

// -----

func.func @short_columns(%x: memref<?x64xf16>, %p: memref<32xi32>, %y: memref<?x64xf16>) {
  // expected-error @+1 {{expected 'columns' to be memref<64xi32>, got 'memref<32xi32>'}}
  humming.gather_columns %x columns(%p : memref<32xi32>) into %y : memref<?x64xf16> -> memref<?x64xf16>
  return
}

// -----

func.func @i64_columns(%x: memref<?x64xf16>, %p: memref<?xi64>, %y: memref<?x64xf16>) {
  // expected-error @+1 {{expected 'columns' to be a 1-D memref of i32, got 'memref<?xi64>'}}
  humming.gather_columns %x columns(%p : memref<?xi64>) into %y : memref<?x64xf16> -> memref<?x64xf16>
  return
}
