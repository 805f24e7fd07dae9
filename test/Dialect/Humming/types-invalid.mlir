// RUN: humming-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{expected at least 1 exponent bit, got e0m3}}
func.func @no_exponent(%a: memref<4x!humming.float<e0m3>>) { return }

// -----

// expected-error @+1 {{expected at most 8 bits (1 + exponent + mantissa), got e4m4 with 9 bits}}
func.func @too_wide(%a: memref<4x!humming.float<e4m4>>) { return }

// -----

// e2m1 exists as a builtin type: one spelling per format.
// expected-error @+1 {{expected the builtin type f4E2M1FN instead of !humming.float<e2m1>}}
func.func @builtin_e2m1(%a: memref<4x!humming.float<e2m1>>) { return }

// -----

// e4m3 always means the OCP FN flavour (one NaN code), which is f8E4M3FN.
// expected-error @+1 {{expected the builtin type f8E4M3FN instead of !humming.float<e4m3>}}
func.func @builtin_e4m3(%a: memref<4x!humming.float<e4m3>>) { return }

// -----

// expected-error @+1 {{expected the builtin type f6E3M2FN instead of !humming.float<e3m2>}}
func.func @builtin_e3m2(%a: memref<4x!humming.float<e3m2>>) { return }

// -----

// expected-error @+1 {{expected a float format 'eXmY' (e.g. e3m3), got 'fp8'}}
func.func @bad_spelling(%a: memref<4x!humming.float<fp8>>) { return }

// -----

// expected-error @+1 {{expected a float format 'eXmY' (e.g. e3m3), got 'e3m3x'}}
func.func @trailing(%a: memref<4x!humming.float<e3m3x>>) { return }
