// div's precision modes (see DivPrecision.h; docs/ir.md "Elementwise").
#include "ptoc/ir/DivPrecision.h"

#include "ptoc/ir/Operation.h"

namespace ptoc::ir {

std::optional<DivPrecision> parseDivPrecision(llvm::StringRef text) {
  if (text == "high_precision") return DivPrecision::HighPrecision;
  if (text == "intrinsic") return DivPrecision::Intrinsic;
  return std::nullopt;
}

DivPrecision divPrecisionOf(const Operation &op) {
  Attribute a = op.attr("precision");
  if (!a || !a.isString()) return DivPrecision::HighPrecision;
  return parseDivPrecision(a.getString()).value_or(DivPrecision::HighPrecision);
}

double intrinsicDivide(double a, double b, DType t) {
  if (!isFloat(t)) return roundToDType(a / b, t);
  // The reciprocal is computed exactly enough in double that rounding it to t (at
  // most 24 bits) equals rounding the exact reciprocal; a x r of two t values is
  // exact in double, so the one rounding to t is the product's.
  return roundToDType(a * roundToDType(1.0 / b, t), t);
}

} // namespace ptoc::ir
