//===- HummingDialect.td - The humming dialect -------------*- tablegen -*-===//

#ifndef HUMMING_DIALECT_HUMMING_IR_HUMMINGDIALECT_TD
#define HUMMING_DIALECT_HUMMING_IR_HUMMINGDIALECT_TD

include "mlir/IR/OpBase.td"

def Humming_Dialect : Dialect {
  let name = "humming";
  let cppNamespace = "::mlir::humming";
  let summary = "Quantized matrix multiplication for LLM inference";
  let description = [{
    The `humming` dialect describes dense and mixture-of-experts linear layers
    whose weights are stored at 1-8 bits (integers or small floats) and whose
    activations are fp16, bf16, fp8, int8, int4 or fp4.

    Types and attributes say *what the data is*: `#humming.weight_schema`,
    `#humming.input_schema`, `#humming.compute`, the prepared
    `#humming.layout`, the `#humming.target` device, and the tuning choice
    `#humming.tile_config`. Operations work on memrefs in destination-passing
    style. Every operation and attribute verifies the support matrix (which
    weight, activation, scale and zero-point combinations run on which chip)
    and says what it expected and what it found.

    A module names its device with the discardable attribute
    `humming.target = #humming.target<...>`; operations below it are then
    also checked against that device.
  }];
  let useDefaultAttributePrinterParser = 1;
  let useDefaultTypePrinterParser = 1;
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
  let extraClassDeclaration = [{
    /// Name of the discardable attribute that carries the #humming.target.
    static constexpr ::llvm::StringLiteral kTargetAttrName = "humming.target";
    /// On an op: what humming-legalize-schema changed and why (strings).
    static constexpr ::llvm::StringLiteral kLegalizedAttrName =
        "humming.legalized";
    /// On a function argument: the source #humming.weight_schema of a tensor
    /// the caller converts to the canonical layout (with kOperandAttrName
    /// naming which tensor it is).
    static constexpr ::llvm::StringLiteral kSourceSchemaAttrName =
        "humming.source_schema";
    static constexpr ::llvm::StringLiteral kOperandAttrName = "humming.operand";

  private:
    void registerAttributes();
    void registerTypes();

  public:
  }];
}

class Humming_Op<string mnemonic, list<Trait> traits = []>
    : Op<Humming_Dialect, mnemonic, traits>;

#endif // HUMMING_DIALECT_HUMMING_IR_HUMMINGDIALECT_TD
