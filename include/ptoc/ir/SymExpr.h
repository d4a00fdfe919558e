// Symbolic integer expressions: the bounds of a loop and the offsets of its windows
// as functions of loop indices (docs/ir.md, "Loops"). Text form: integers, index
// names, `+ - * // %`, unary minus, parentheses, `min(a, b)`, `max(a, b)`, and
// elements of integer tensors `t[e0, e1, ...]` (values the control thread reads from
// GM when the kernel runs), and sizes of dynamic axes `dim(t, k)` (axis k of argument
// t, known when the kernel is called); `//` and `%` round toward minus infinity like Python's. Plain data: evaluated by the
// runtime for every iteration, bounded over index ranges by the verifier.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

namespace ptoc::ir {

/// A name's value (evaluation) or range (bounds).
struct SymBinding {
  std::string name;
  int64_t lo = 0, hi = 0; ///< evaluation uses lo (== hi)
};

class SymExpr {
public:
  enum class Kind : uint8_t { Const, Name, Add, Sub, Mul, FloorDiv, Mod, Min, Max, Neg, Element, Dim };

  /// Reads element `index` of tensor `tensor` (a kernel argument) when a run
  /// evaluates an expression that reads one.
  using ElementReader =
      std::function<absl::StatusOr<int64_t>(llvm::StringRef tensor, llvm::ArrayRef<int64_t> index)>;

  /// The constant `v`.
  static SymExpr constant(int64_t v);
  /// Parses the text form. The error names the position and what was expected.
  static absl::StatusOr<SymExpr> parse(llvm::StringRef text);

  bool isConstant() const { return nodes_.size() == 1 && nodes_[0].kind == Kind::Const; }
  /// The value of a constant expression.
  int64_t constantValue() const { return nodes_[0].value; }
  /// The index names it mentions, each once, in order of first appearance.
  std::vector<std::string> names() const;
  /// The tensors it reads elements of (name and index count), each once.
  std::vector<std::pair<std::string, size_t>> tensorReads() const;
  /// The dynamic axes whose sizes it uses (`dim(t, k)`: tensor and axis), each once.
  std::vector<std::pair<std::string, int64_t>> dims() const;
  /// The binding name under which evaluate() and bounds() look up the size of axis
  /// `axis` of tensor `tensor`: its text form, "dim(t, k)".
  static std::string dimKey(llvm::StringRef tensor, int64_t axis);
  /// The text form (fully parenthesised where precedence needs it).
  std::string str() const;

  /// Its value with each name (and each `dim(t, k)`, under dimKey) bound to `lo` of
  /// its binding. Errors: an unbound name,
  /// division or modulo by zero, overflow.
  /// Tensor elements are read through `reader` (an error without one).
  absl::StatusOr<int64_t> evaluate(llvm::ArrayRef<SymBinding> bindings,
                                   const ElementReader &reader = nullptr) const;
  /// The smallest and largest values over every combination of the names in their
  /// [lo, hi] ranges (interval arithmetic: exact for an affine expression of distinct
  /// names, a safe enclosure otherwise); nullopt when a name is unbound or a divisor
  /// range contains zero, or it reads a tensor.
  std::optional<std::pair<int64_t, int64_t>> bounds(llvm::ArrayRef<SymBinding> bindings) const;
  /// Whether bounds() are attained (not just an enclosure): every name appears once
  /// and no `%` or divisor depends on a name, so the expression is monotonic in each
  /// name and its extremes lie at corners of the ranges.
  bool boundsAreExact() const;

private:
  struct Node {
    Kind kind = Kind::Const;
    int64_t value = 0;  ///< Const; Dim: the axis
    std::string name;   ///< Name; Element, Dim: the tensor
    int lhs = -1, rhs = -1;
    std::vector<int> args; ///< Element: the index expressions' nodes
  };
  friend class SymParser;
  std::vector<Node> nodes_; ///< postorder; the root is last
};

} // namespace ptoc::ir
