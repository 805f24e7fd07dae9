// RUN: humming-opt %s -split-input-file -verify-diagnostics

func.func @silu_odd_i(%x: memref<?x6xf16>, %y: memref<?x3xf16>) {
  // expected-error @+1 {{expected 'input' to have 2I columns with I even, got 'memref<?x6xf16>'}}
  humming.silu_and_mul %x into %y : memref<?x6xf16> -> memref<?x3xf16>
  return
}

// -----

func.func @silu_half(%x: memref<?x8xf16>, %y: memref<?x8xf16>) {
  // expected-error @+1 {{expected 'output' to be a memref<?x4xf16>, got 'memref<?x8xf16>'}}
  humming.silu_and_mul %x into %y : memref<?x8xf16> -> memref<?x8xf16>
  return
}

// -----

func.func @silu_type(%x: memref<?x8xf32>, %y: memref<?x4xf32>) {
  // expected-error @+1 {{expected 'input' to be a memref<?x{even N}xf16 or bf16>, got 'memref<?x8xf32>'}}
  humming.silu_and_mul %x into %y : memref<?x8xf32> -> memref<?x4xf32>
  return
}

// -----

func.func @silu_rows(%x: memref<3x8xbf16>, %y: memref<4x4xbf16>) {
  // expected-error @+1 {{expected as many output rows as input rows (3), got 'memref<4x4xbf16>'}}
  humming.silu_and_mul %x into %y : memref<3x8xbf16> -> memref<4x4xbf16>
  return
}

// -----

func.func @sum_rows(%x: memref<6x8xf16>, %y: memref<2x8xf16>) {
  // expected-error @+1 {{expected M * top_k = 4 input rows, got 'memref<6x8xf16>'}}
  humming.moe_sum %x into %y {top_k = 2} : memref<6x8xf16> -> memref<2x8xf16>
  return
}

// -----

func.func @sum_types(%x: memref<?x8xf16>, %y: memref<?x8xbf16>) {
  // expected-error @+1 {{expected 'output' to be a memref<?x8xf16>, got 'memref<?x8xbf16>'}}
  humming.moe_sum %x into %y {top_k = 2} : memref<?x8xf16> -> memref<?x8xbf16>
  return
}

// -----

func.func @silu_alpha(%x: memref<?x8xf16>, %y: memref<?x4xf16>) {
  // expected-error @+1 {{expected a positive finite alpha, got 0.000000e+00}}
  humming.silu_and_mul %x into %y {alpha = 0.0} : memref<?x8xf16> -> memref<?x4xf16>
  return
}

// -----

func.func @silu_offset(%x: memref<?x8xf16>, %y: memref<?x4xf16>) {
  // expected-error @+1 {{expected a finite up_offset, got INF}}
  humming.silu_and_mul %x into %y {up_offset = 0x7FF0000000000000 : f64} : memref<?x8xf16> -> memref<?x4xf16>
  return
}

// -----

func.func @silu_limit(%x: memref<?x8xf16>, %y: memref<?x4xf16>) {
  // expected-error @+1 {{expected a positive finite limit, got -7.000000e+00}}
  humming.silu_and_mul %x into %y {limit = -7.0} : memref<?x8xf16> -> memref<?x4xf16>
  return
}
