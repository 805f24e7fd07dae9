//===- HummingTypes.cpp - humming types -----------------------------------===//

#include "Humming/Dialect/Humming/IR/HummingTypes.h"
#include "Humming/Dialect/Humming/IR/HummingDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::humming;
using ::humming::ScalarType;

#define GET_TYPEDEF_CLASSES
#include "Humming/Dialect/Humming/IR/HummingOpsTypes.cpp.inc"

void HummingDialect::registerTypes() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "Humming/Dialect/Humming/IR/HummingOpsTypes.cpp.inc"
      >();
}

/// `<e3m3>`
Type SmallFloatType::parse(AsmParser &parser) {
  llvm::SMLoc loc = parser.getCurrentLocation();
  StringRef keyword;
  if (parser.parseLess())
    return {};
  loc = parser.getCurrentLocation();
  if (parser.parseKeyword(&keyword))
    return {};
  unsigned e = 0, m = 0;
  StringRef rest = keyword;
  if (!rest.consume_front("e") || rest.consumeInteger(10, e) ||
      !rest.consume_front("m") || rest.consumeInteger(10, m) || !rest.empty()) {
    parser.emitError(loc, "expected a float format 'eXmY' (e.g. e3m3), got '")
        << keyword << "'";
    return {};
  }
  if (parser.parseGreater())
    return {};
  return getChecked([&] { return parser.emitError(loc); },
                    parser.getContext(), e, m);
}

void SmallFloatType::print(AsmPrinter &printer) const {
  printer << "<e" << getExponentBits() << "m" << getMantissaBits() << ">";
}

LogicalResult SmallFloatType::verify(function_ref<InFlightDiagnostic()> emitError,
                                unsigned e, unsigned m) {
  if (e < 1)
    return emitError() << "expected at least 1 exponent bit, got e" << e << "m"
                       << m;
  if (1 + e + m > 8)
    return emitError() << "expected at most 8 bits (1 + exponent + mantissa), "
                          "got e"
                       << e << "m" << m << " with " << 1 + e + m << " bits";
  struct Builtin {
    unsigned e, m;
    const char *name;
  };
  for (Builtin b : {Builtin{2, 1, "f4E2M1FN"}, Builtin{2, 3, "f6E2M3FN"},
                    Builtin{3, 2, "f6E3M2FN"}, Builtin{4, 3, "f8E4M3FN"},
                    Builtin{5, 2, "f8E5M2"}})
    if (b.e == e && b.m == m)
      return emitError() << "expected the builtin type " << b.name
                         << " instead of !humming.float<e" << e << "m" << m
                         << ">";
  return success();
}

std::optional<ScalarType> mlir::humming::toScalarType(Type type) {
  if (auto it = dyn_cast<IntegerType>(type)) {
    if (it.getWidth() < 1 || it.getWidth() > 64)
      return std::nullopt;
    return it.isUnsigned() ? ScalarType::uint(it.getWidth())
                           : ScalarType::sint(it.getWidth());
  }
  if (auto ft = dyn_cast<SmallFloatType>(type))
    return ScalarType::floatEM(ft.getExponentBits(), ft.getMantissaBits());
  return llvm::TypeSwitch<Type, std::optional<ScalarType>>(type)
      .Case([](Float16Type) { return ScalarType::f16(); })
      .Case([](BFloat16Type) { return ScalarType::bf16(); })
      .Case([](Float32Type) { return ScalarType::f32(); })
      .Case([](Float8E4M3FNType) { return ScalarType::e4m3(); })
      .Case([](Float8E5M2Type) { return ScalarType::e5m2(); })
      .Case([](Float4E2M1FNType) { return ScalarType::e2m1(); })
      .Case([](Float6E2M3FNType) { return ScalarType::e2m3(); })
      .Case([](Float6E3M2FNType) { return ScalarType::e3m2(); })
      .Case([](Float8E8M0FNUType) { return ScalarType::ue8m0(); })
      .Default([](Type) { return std::nullopt; });
}

Type mlir::humming::toMLIRType(MLIRContext *ctx, const ScalarType &t) {
  Builder b(ctx);
  if (t.isInt())
    return IntegerType::get(ctx, t.bits,
                            t.isSigned ? IntegerType::Signed
                                       : IntegerType::Unsigned);
  if (t == ScalarType::f16())
    return b.getF16Type();
  if (t == ScalarType::bf16())
    return b.getBF16Type();
  if (t == ScalarType::f32())
    return b.getF32Type();
  if (t == ScalarType::e4m3())
    return Float8E4M3FNType::get(ctx);
  if (t == ScalarType::e5m2())
    return Float8E5M2Type::get(ctx);
  if (t == ScalarType::e2m1())
    return Float4E2M1FNType::get(ctx);
  if (t == ScalarType::e2m3())
    return Float6E2M3FNType::get(ctx);
  if (t == ScalarType::e3m2())
    return Float6E3M2FNType::get(ctx);
  if (t == ScalarType::ue8m0())
    return Float8E8M0FNUType::get(ctx);
  return SmallFloatType::get(ctx, t.exponentBits, t.mantissaBits);
}
