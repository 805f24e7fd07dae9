// RUN: humming-opt %s --split-input-file --humming-attach-target="device=H200" | FileCheck %s

// A module with no humming op still gets its target: the pass loads the
// dialect of the attribute it creates (it crashed here before 2026-12-06).
// CHECK: module attributes {humming.target = #humming.target<device = "H200">}
// CHECK-NEXT: func.func @plain
func.func @plain(%a: memref<4xf16>) {
  return
}

// -----

// CHECK: module attributes {humming.target = #humming.target<device = "H200">} {
// CHECK-NEXT: }
module {}
