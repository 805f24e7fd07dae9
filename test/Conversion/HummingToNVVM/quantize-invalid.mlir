// RUN: humming-opt %s --humming-lower-to-nvvm="chip=sm_80" -split-input-file -verify-diagnostics

// fp8 codes come from cvt.rn.satfinite.e4m3x2.f32, which sm_80 lacks.
func.func @fp8_on_sm80(%x: memref<?x256xf16>, %q: memref<?x256xf8E4M3FN>, %s: memref<?x1xf32>) {
  // expected-error @+1 {{'humming.quantize' op f8E4M3FN activations need cvt to fp8 (sm_89 and later), got sm_80}}
  humming.quantize %x into %q scales(%s : memref<?x1xf32>)
      {schema = #humming.input_schema<type = f8E4M3FN, scaling = token>}
      : memref<?x256xf16> -> memref<?x256xf8E4M3FN>
  return
}

// -----

// 4-bit codes pack two per byte: a row of odd K would start mid-byte.
func.func @int4_odd(%x: memref<?x255xf16>, %q: memref<?x255xi4>, %s: memref<?x1xf32>) {
  // expected-error @+1 {{'humming.quantize' op 4-bit codes pack two per byte, so rows start at byte K / 2: expected an even K, got 255}}
  humming.quantize %x into %q scales(%s : memref<?x1xf32>)
      {schema = #humming.input_schema<type = si4, scaling = token>}
      : memref<?x255xf16> -> memref<?x255xi4>
  return
}

// -----

// The same for rows padded past K: an odd number of codes per row.
func.func @int4_odd_codes(%x: memref<?x256xf16>, %q: memref<?x257xi4>, %s: memref<?x1xf32>) {
  // expected-error @+1 {{'humming.quantize' op 4-bit codes pack two per byte: expected an even number of codes per row, got 257}}
  humming.quantize %x into %q scales(%s : memref<?x1xf32>)
      {schema = #humming.input_schema<type = si4, scaling = token>}
      : memref<?x256xf16> -> memref<?x257xi4>
  return
}

// -----

func.func @wide_group(%x: memref<?x1024xf16>, %q: memref<?x1024xi8>, %s: memref<?x2xf32>) {
  // expected-error @+1 {{'humming.quantize' op expected an activation group of a power of two from 8 to 256 elements (a group's lanes exchange their maxima in one warp), got group<512>}}
  humming.quantize %x into %q scales(%s : memref<?x2xf32>)
      {schema = #humming.input_schema<type = si8, scaling = group<512>>}
      : memref<?x1024xf16> -> memref<?x1024xi8>
  return
}

// -----

func.func @too_wide(%x: memref<?x16777218xf16>, %q: memref<?x16777218xi8>, %s: memref<?x1xf32>) {
  // expected-error @+1 {{'humming.quantize' op expected K <= 2^24 activations per row, got 16777218}}
  humming.quantize %x into %q scales(%s : memref<?x1xf32>)
      {schema = #humming.input_schema<type = si8, scaling = token>}
      : memref<?x16777218xf16> -> memref<?x16777218xi8>
  return
}

// -----

func.func @strided(%x: memref<?x256xf16, strided<[512, 1]>>, %q: memref<?x256xi8>, %s: memref<?x1xf32>) {
  // expected-error @+1 {{'humming.quantize' op expected identity-layout memrefs, got 'memref<?x256xf16, strided<[512, 1]>>'}}
  humming.quantize %x into %q scales(%s : memref<?x1xf32>)
      {schema = #humming.input_schema<type = si8, scaling = token>}
      : memref<?x256xf16, strided<[512, 1]>> -> memref<?x256xi8>
  return
}

