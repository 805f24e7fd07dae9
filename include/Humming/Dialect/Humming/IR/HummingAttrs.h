//===- HummingAttrs.h - humming attributes ----------------------*- C++ -*-===//

#ifndef HUMMING_DIALECT_HUMMING_IR_HUMMINGATTRS_H
#define HUMMING_DIALECT_HUMMING_IR_HUMMINGATTRS_H

#include "Humming/Quant/Schema.h"
#include "Humming/Target/ArchInfo.h"
#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/Hashing.h"
#include "llvm/ADT/bit.h"

namespace mlir::humming {

/// `channel`, `group<k>`, `block<n, k>`, `tensor`, `group_tensor<k>`.
struct ScaleGranularity {
  ::humming::Granularity kind = ::humming::Granularity::Channel;
  int64_t n = 0; ///< block only
  int64_t k = 0; ///< group, block, group_tensor
  bool operator==(const ScaleGranularity &o) const {
    return kind == o.kind && n == o.n && k == o.k;
  }
};
inline llvm::hash_code hash_value(const ScaleGranularity &g) {
  return llvm::hash_combine(g.kind, g.n, g.k);
}

/// `none`, `token`, `group<k>`, `static`.
struct ActivationScaling {
  ::humming::ActScaling kind = ::humming::ActScaling::None;
  int64_t k = 0;
  bool operator==(const ActivationScaling &o) const {
    return kind == o.kind && k == o.k;
  }
};
inline llvm::hash_code hash_value(const ActivationScaling &s) {
  return llvm::hash_combine(s.kind, s.k);
}

/// `[lo, hi]` token range; hi == 0 is printed `inf`.
struct MRange {
  int64_t lo = 1, hi = 0;
  bool operator==(const MRange &o) const { return lo == o.lo && hi == o.hi; }
};
inline llvm::hash_code hash_value(const MRange &r) {
  return llvm::hash_combine(r.lo, r.hi);
}

/// A real number attribute parameter (doubles have no llvm::hash_value).
struct Real {
  double value = 0;
  Real() = default;
  Real(double v) : value(v) {}
  operator double() const { return value; }
  bool operator==(const Real &o) const { return value == o.value; }
};
inline llvm::hash_code hash_value(const Real &r) {
  return llvm::hash_value(llvm::bit_cast<uint64_t>(r.value));
}

/// `[m, n, k]`.
struct Dim3 {
  int64_t m = 0, n = 0, k = 0;
  bool operator==(const Dim3 &o) const {
    return m == o.m && n == o.n && k == o.k;
  }
};
inline llvm::hash_code hash_value(const Dim3 &d) {
  return llvm::hash_combine(d.m, d.n, d.k);
}

// Parameter parsers and printers used by the generated attribute code.
FailureOr<bool> parseBool(AsmParser &parser);
FailureOr<int64_t> parseI64(AsmParser &parser);
void printBool(AsmPrinter &printer, bool value);
FailureOr<ScaleGranularity> parseGranularity(AsmParser &parser);
void printGranularity(AsmPrinter &printer, const ScaleGranularity &g);
FailureOr<ActivationScaling> parseActScaling(AsmParser &parser);
void printActScaling(AsmPrinter &printer, const ActivationScaling &s);
FailureOr<MRange> parseMRange(AsmParser &parser);
void printMRange(AsmPrinter &printer, const MRange &r);
FailureOr<Dim3> parseDim3(AsmParser &parser);
void printDim3(AsmPrinter &printer, const Dim3 &d);
FailureOr<uint32_t> parseTmaMask(AsmParser &parser);
void printTmaMask(AsmPrinter &printer, uint32_t mask);

/// Every value of a host enum, in declaration order.
template <typename E> llvm::ArrayRef<E> enumValues();

/// Parses a keyword naming a value of host enum E (its toString spelling);
/// on failure says which keywords were expected.
template <typename E> FailureOr<E> parseEnumKeyword(AsmParser &parser) {
  llvm::SMLoc loc = parser.getCurrentLocation();
  StringRef keyword;
  std::string expected;
  for (E v : enumValues<E>())
    expected += (expected.empty() ? "'" : ", '") +
                std::string(::humming::toString(v)) + "'";
  if (failed(parser.parseOptionalKeyword(&keyword)))
    return parser.emitError(loc, "expected one of ") << expected;
  for (E v : enumValues<E>())
    if (keyword == ::humming::toString(v))
      return v;
  return parser.emitError(loc, "expected one of ")
         << expected << ", got '" << keyword << "'";
}

} // namespace mlir::humming

#define GET_ATTRDEF_CLASSES
#include "Humming/Dialect/Humming/IR/HummingAttrs.h.inc"

namespace mlir::humming {
/// The #humming.target of the closest ancestor (or `op` itself) that carries
/// the `humming.target` attribute; null when none does.
TargetAttr lookupTarget(Operation *op);
} // namespace mlir::humming

#endif // HUMMING_DIALECT_HUMMING_IR_HUMMINGATTRS_H
