// humming-select-tiles diagnostics: unknown devices and chips, no device at
// all, a forced configuration that is not a tile_config, and tiles whose
// MMA the weights' chip lacks. A plain target of the device's SM (sm_90 of
// an H200) gets the device's facts under that chip: no wgmma tiles.

// RUN: not humming-opt %s --humming-select-tiles="device=B300X" 2>&1 | FileCheck %s --check-prefix=DEVICE
// RUN: not humming-opt %s --humming-select-tiles="chip=sm_12" 2>&1 | FileCheck %s --check-prefix=CHIP
// RUN: not humming-opt %s --humming-select-tiles="chip=sm_88" 2>&1 | FileCheck %s --check-prefix=NOREP
// RUN: sed 's/"sm_90a"/"sm_90"/' %s | humming-opt --humming-select-tiles="device=H200 chip=sm_90" | FileCheck %s --check-prefix=PLAIN
// RUN: not humming-opt %s --humming-select-tiles 2>&1 | FileCheck %s --check-prefix=NONE
// RUN: not humming-opt %s --humming-select-tiles="device=H200 force-tile-config='#humming.layout<chip = \"sm_90a\">'" 2>&1 | FileCheck %s --check-prefix=FORCE
// RUN: not humming-opt %s --humming-select-tiles="device=H200 target=H100" 2>&1 | FileCheck %s --check-prefix=BOTH
// RUN: sed 's/"sm_90a"/"sm_80"/' %s | not humming-opt --humming-select-tiles="device=H100" 2>&1 | FileCheck %s --check-prefix=OTHER

// DEVICE: humming-select-tiles: expected a device among T4, {{.*}}, got 'B300X'
// CHIP: humming-select-tiles: expected a chip among sm_75, {{.*}} got 'sm_12'
// NOREP: humming-select-tiles: no representative device is known for sm_88; give device=
// PLAIN: tile_configs = [
// PLAIN-NOT: mma = wgmma
// PLAIN: return
// NONE: humming-select-tiles: expected a humming.target on the module, device= or chip= to choose tiles for prepared weights
// BOTH: humming-select-tiles: expected target= and device= to name the same device, got 'H100' and 'H200'
// OTHER: error: 'humming.gemm' op humming-select-tiles: the tiles for H100 (sm_90a) use wgmma, which the weights' chip sm_80 does not have; expected weights prepared for sm_90a or a sm_80 device
// FORCE: humming-select-tiles: expected force-tile-config to be a #humming.tile_config, got '#humming.layout<chip = "sm_90a">'

func.func @prepared(%a: memref<?x4096xf16>, %w: memref<256x8192xi32>, %s: memref<32x4096xf16>, %c: memref<?x4096xf16>) {
  humming.gemm %a, %w scales(%s : memref<32x4096xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>>,
       input_schema = #humming.input_schema<type = f16>, layout = #humming.layout<chip = "sm_90a">}
      : memref<?x4096xf16>, memref<256x8192xi32> -> memref<?x4096xf16>
  return
}
