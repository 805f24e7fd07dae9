// RUN: humming-opt %s -split-input-file -verify-diagnostics

// The attributes humming-legalize-schema writes are checked when parsed.

// expected-error @+1 {{expected 'humming.legalized' to be an array of strings, got [1]}}
func.func @legalized_not_strings() attributes {humming.legalized = [1]} { return }

// -----

// expected-error @+1 {{expected 'humming.source_schema' on argument #0 to be a #humming.weight_schema in a source format (gptq, gptq_v2, awq), got #humming.weight_schema<type = ui4, scale = f16>}}
func.func @source_schema_canonical(%w: memref<8x8xi32> {humming.source_schema = #humming.weight_schema<type = ui4, scale = f16>}) { return }

// -----

// expected-error @+1 {{expected 'humming.operand' on argument #0 to be a #humming.operand, got "weight"}}
func.func @operand_string(%w: memref<8x8xi32> {humming.operand = "weight"}) { return }

// -----

// expected-error @+1 {{unknown humming argument attribute 'humming.layout' on argument #0; expected 'humming.source_schema' or 'humming.operand'}}
func.func @unknown_arg_attr(%w: memref<8x8xi32> {humming.layout = 1}) { return }
