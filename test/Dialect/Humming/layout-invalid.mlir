// RUN: humming-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{expected an MMA family available on sm_90, got wgmma}}
func.func @wgmma_needs_90a() attributes {l = #humming.layout<mma = wgmma, chip = "sm_90">} { return }

// -----

// expected-error @+1 {{expected an MMA family available on sm_90a, got tcgen05}}
func.func @tcgen05_on_hopper() attributes {l = #humming.layout<mma = tcgen05, chip = "sm_90a">} { return }

// -----

// expected-error @+1 {{expected an MMA family available on sm_100a, got block_scaled}}
func.func @block_scaled_on_b200() attributes {l = #humming.layout<mma = block_scaled, chip = "sm_100a">} { return }

// -----

// expected-error @+1 {{expected a chip among sm_75, sm_80, sm_86, sm_87, sm_88, sm_89, sm_90, sm_90a, sm_100, sm_100a, sm_100f, sm_103, sm_103a, sm_103f, sm_110, sm_110a, sm_110f, sm_120, sm_120a, sm_120f, sm_121, sm_121a, sm_121f, got 'sm_70'}}
func.func @volta() attributes {l = #humming.layout<chip = "sm_70">} { return }

// -----

// expected-error @+2 {{expected one of 'mma_sync', 'wgmma', 'tcgen05', 'block_scaled', got 'wmma'}}
// expected-error @+1 {{failed to parse Humming_LayoutAttr parameter 'mma'}}
func.func @unknown_mma() attributes {l = #humming.layout<mma = wmma, chip = "sm_80">} { return }
