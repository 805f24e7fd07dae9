//===- Passes.td - humming dialect passes ------------------*- tablegen -*-===//
//
// Keep the definitions alphabetical; test passes go in their own section.
//
//===----------------------------------------------------------------------===//

#ifndef HUMMING_DIALECT_HUMMING_TRANSFORMS_PASSES_TD
#define HUMMING_DIALECT_HUMMING_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def HummingAttachTargetPass : Pass<"humming-attach-target", "::mlir::ModuleOp"> {
  let summary = "Attach a #humming.target to the module";
  let description = [{
    Sets the module's `humming.target` attribute from the table of known
    devices, so that every humming operation below it is verified against
    that chip (activation types, MMA families, TMA, prepared layouts) and
    the tile heuristics see its facts. An unknown device, chip or PTX
    version is an error that names what is known.

    ```sh
    humming-opt --humming-attach-target="device=H200" layer.mlir
    humming-opt --humming-attach-target="device=H200 chip=sm_90 ptx-version=85" layer.mlir
    ```
  }];
  let options = [
    Option<"device", "device", "std::string", /*default=*/"\"\"",
           "Known device name, e.g. H200, A100, RTX 5090 (required)">,
    Option<"chip", "chip", "std::string", /*default=*/"\"\"",
           "Chip override, e.g. sm_90 (default: the device's chip)">,
    Option<"ptxVersion", "ptx-version", "unsigned", /*default=*/"0",
           "PTX ISA version x10, e.g. 85 (default: the chip's minimum)">,
  ];
}

#endif // HUMMING_DIALECT_HUMMING_TRANSFORMS_PASSES_TD
