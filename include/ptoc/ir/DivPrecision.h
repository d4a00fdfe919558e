// div's precision mode (PyPTO's PrecisionType): the correctly rounded quotient, or
// the faster reciprocal-then-multiply of the vector unit's instructions.
#pragma once

#include <optional>

#include "llvm/ADT/StringRef.h"

#include "ptoc/ir/DType.h"

namespace ptoc::ir {

class Operation;

enum class DivPrecision {
  HighPrecision, ///< "high_precision" (the default): the correctly rounded quotient
  Intrinsic,     ///< "intrinsic": reciprocal then multiply, each rounded to the type
};

/// The mode named by a `precision` attribute's text; nullopt when unknown.
std::optional<DivPrecision> parseDivPrecision(llvm::StringRef text);

/// A div's mode: its `precision` attribute, HighPrecision when absent (or not div).
DivPrecision divPrecisionOf(const Operation &op);

/// The intrinsic quotient of one element of float type `t`: a x round_t(1 / b),
/// rounded to `t` (integers: the plain quotient, rounded).
double intrinsicDivide(double a, double b, DType t);

} // namespace ptoc::ir
