// RUN: humming-opt %s -split-input-file -verify-diagnostics

// What the chip of the module's #humming.target can run.

module attributes {humming.target = #humming.target<device = "A100">} {
func.func @wgmma_on_a100(%a: memref<?x4096xf16>, %w: memref<4096x512xi32>, %s: memref<4096x1xf16>, %c: memref<?x4096xf16>) {
  // expected-error @+1 {{tile_configs[0]: wgmma is not available on sm_80}}
  humming.gemm %a, %w scales(%s : memref<4096x1xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16>, input_schema = #humming.input_schema<type = f16>,
       tile_configs = [#humming.tile_config<block = [64, 256, 64], warp = [64, 32, 64], mma = wgmma>]}
      : memref<?x4096xf16>, memref<4096x512xi32> -> memref<?x4096xf16>
  return
}
}

// -----

module attributes {humming.target = #humming.target<device = "H100", chip = "sm_90">} {
// Plain sm_90 (no 'a') has no wgmma.
func.func @wgmma_on_sm90(%a: memref<?x4096xf16>, %w: memref<4096x512xi32>, %s: memref<4096x1xf16>, %c: memref<?x4096xf16>) {
  // expected-error @+1 {{tile_configs[0]: wgmma is not available on sm_90}}
  humming.gemm %a, %w scales(%s : memref<4096x1xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16>, input_schema = #humming.input_schema<type = f16>,
       tile_configs = [#humming.tile_config<block = [64, 256, 64], warp = [64, 32, 64], mma = wgmma>]}
      : memref<?x4096xf16>, memref<4096x512xi32> -> memref<?x4096xf16>
  return
}
}

// -----

module attributes {humming.target = #humming.target<device = "H200">} {
func.func @tcgen05_on_h200(%a: memref<?x4096xf16>, %w: memref<4096x512xi32>, %s: memref<4096x1xf16>, %c: memref<?x4096xf16>) {
  // expected-error @+1 {{tile_configs[0]: tcgen05 is not available on sm_90a}}
  humming.gemm %a, %w scales(%s : memref<4096x1xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16>, input_schema = #humming.input_schema<type = f16>,
       tile_configs = [#humming.tile_config<block = [64, 256, 64], warp = [64, 32, 64], mma = tcgen05>]}
      : memref<?x4096xf16>, memref<4096x512xi32> -> memref<?x4096xf16>
  return
}
}

// -----

// On a chip that has it, a generation without Humming kernels (tcgen05 on
// the B200) is refused by the verifier, not lowered as another family
// (MmaGeneration::kernels).
module attributes {humming.target = #humming.target<device = "B200">} {
func.func @tcgen05_on_b200(%a: memref<?x4096xf16>, %w: memref<4096x512xi32>, %s: memref<4096x1xf16>, %c: memref<?x4096xf16>) {
  // expected-error @+1 {{tile_configs[0]: expected mma = mma_sync or wgmma: Humming's kernels do not implement tcgen05 yet, got mma = tcgen05}}
  humming.gemm %a, %w scales(%s : memref<4096x1xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16>, input_schema = #humming.input_schema<type = f16>,
       tile_configs = [#humming.tile_config<block = [64, 256, 64], warp = [64, 32, 64], mma = tcgen05>]}
      : memref<?x4096xf16>, memref<4096x512xi32> -> memref<?x4096xf16>
  return
}
}

// -----

module attributes {humming.target = #humming.target<device = "L40S">} {
func.func @tma_on_l40s(%a: memref<?x4096xf16>, %w: memref<4096x512xi32>, %s: memref<4096x1xf16>, %c: memref<?x4096xf16>) {
  // expected-error @+1 {{tile_configs[0]: expected sm_90 or newer for TMA, warp specialisation or multicast, got sm_89}}
  humming.gemm %a, %w scales(%s : memref<4096x1xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16>, input_schema = #humming.input_schema<type = f16>,
       tile_configs = [#humming.tile_config<block = [64, 256, 64], warp = [64, 32, 64], mbarrier = true, tma = [b]>]}
      : memref<?x4096xf16>, memref<4096x512xi32> -> memref<?x4096xf16>
  return
}
}

// -----

module attributes {humming.target = #humming.target<device = "T4">} {
func.func @cp_async_on_t4(%a: memref<?x4096xf16>, %w: memref<4096x512xi32>, %s: memref<4096x1xf16>, %c: memref<?x4096xf16>) {
  // expected-error @+1 {{tile_configs[0]: expected sm_80 or newer for cp.async, got sm_75}}
  humming.gemm %a, %w scales(%s : memref<4096x1xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16>, input_schema = #humming.input_schema<type = f16>,
       tile_configs = [#humming.tile_config<block = [64, 256, 64], warp = [64, 32, 64]>]}
      : memref<?x4096xf16>, memref<4096x512xi32> -> memref<?x4096xf16>
  return
}
}

// -----

module attributes {humming.target = #humming.target<device = "A100">} {
func.func @fp8_on_a100(%a: memref<?x4096xf8E4M3FN>, %w: memref<4096x512xi32>, %s: memref<4096x1xf16>, %as: memref<?x1xf32>, %c: memref<?x4096xf16>) {
  // expected-error @+1 {{expected sm_89 or newer for f8E4M3FN activations, got sm_80}}
  humming.gemm %a, %w scales(%s : memref<4096x1xf16>) input_scale(%as : memref<?x1xf32>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16>, input_schema = #humming.input_schema<type = f8E4M3FN, scaling = token>,
       tile_configs = [#humming.tile_config<block = [64, 256, 128], warp = [64, 32, 128]>]}
      : memref<?x4096xf8E4M3FN>, memref<4096x512xi32> -> memref<?x4096xf16>
  return
}
}

// -----

module attributes {humming.target = #humming.target<device = "H200">} {
func.func @layout_other_chip(%a: memref<?x4096xf16>, %w: memref<256x8192xi32>, %s: memref<1x4096xf16>, %c: memref<?x4096xf16>) {
  // expected-error @+1 {{weights prepared for sm_80 cannot run on the target sm_90a; expected a layout for sm_90a}}
  humming.gemm %a, %w scales(%s : memref<1x4096xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16>, input_schema = #humming.input_schema<type = f16>,
       layout = #humming.layout<chip = "sm_80">,
       tile_configs = [#humming.tile_config<block = [64, 256, 64], warp = [64, 32, 64]>]}
      : memref<?x4096xf16>, memref<256x8192xi32> -> memref<?x4096xf16>
  return
}
}

// -----

module attributes {humming.target = #humming.target<device = "H200">} {
func.func @layout_other_mma(%a: memref<?x4096xf16>, %w: memref<256x8192xi32>, %s: memref<1x4096xf16>, %c: memref<?x4096xf16>) {
  // expected-error @+1 {{tile_configs[0]: expected wgmma to match the weights' prepared layout, got mma_sync}}
  humming.gemm %a, %w scales(%s : memref<1x4096xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16>, input_schema = #humming.input_schema<type = f16>,
       layout = #humming.layout<mma = wgmma, chip = "sm_90a">,
       tile_configs = [#humming.tile_config<block = [64, 256, 64], warp = [64, 32, 64]>]}
      : memref<?x4096xf16>, memref<256x8192xi32> -> memref<?x4096xf16>
  return
}
}

// -----

module {
// Without a target the prepared layout still fixes the MMA family.
func.func @layout_other_mma_no_target(%a: memref<?x4096xf16>, %w: memref<256x8192xi32>, %s: memref<1x4096xf16>, %c: memref<?x4096xf16>) {
  // expected-error @+1 {{tile_configs[0]: expected wgmma to match the weights' prepared layout, got mma_sync}}
  humming.gemm %a, %w scales(%s : memref<1x4096xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16>, input_schema = #humming.input_schema<type = f16>,
       layout = #humming.layout<mma = wgmma, chip = "sm_90a">,
       tile_configs = [#humming.tile_config<block = [64, 256, 64], warp = [64, 32, 64]>]}
      : memref<?x4096xf16>, memref<256x8192xi32> -> memref<?x4096xf16>
  return
}
}
