//===- HummingTypes.td - humming types ---------------------*- tablegen -*-===//

#ifndef HUMMING_DIALECT_HUMMING_IR_HUMMINGTYPES_TD
#define HUMMING_DIALECT_HUMMING_IR_HUMMINGTYPES_TD

include "Humming/Dialect/Humming/IR/HummingDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/BuiltinTypeInterfaces.td"

def Humming_SmallFloatType : TypeDef<Humming_Dialect, "SmallFloat",
    [MemRefElementTypeInterface]> {
  let mnemonic = "float";
  let summary = "A signed small float eXmY without inf or NaN";
  let description = [{
    `!humming.float<eXmY>` is a signed float with X exponent bits (X >= 1) and
    Y mantissa bits, 1 + X + Y <= 8 bits in all. Like the OCP FN formats it
    uses the IEEE-like bias 2^(X-1) - 1, has subnormals and reserves no code
    for inf or NaN, so e.g. `!humming.float<e3m3>` or `!humming.float<e1m2>`
    weights are first-class.

    The formats that MLIR has as builtin types must be spelled as such:
    e2m1 is `f4E2M1FN`, e2m3 is `f6E2M3FN`, e3m2 is `f6E3M2FN`; e4m3 and e5m2
    always mean the OCP `f8E4M3FN` (one NaN code) and the IEEE `f8E5M2`.

    ```mlir
    #humming.weight_schema<type = !humming.float<e3m3>, scale = f16>
    ```
  }];
  let parameters = (ins "unsigned":$exponentBits, "unsigned":$mantissaBits);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    unsigned getWidth() const { return 1 + getExponentBits() + getMantissaBits(); }
  }];
}

#endif // HUMMING_DIALECT_HUMMING_IR_HUMMINGTYPES_TD
