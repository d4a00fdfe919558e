// The operation registry: one declaration per op (name, arity, attributes, core
// kind, tile kind, type rule, scalar semantics). Everything that needs to know
// about an op asks its OpDef instead of switching on op names.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "llvm/ADT/SmallVector.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include "ptoc/ir/Diagnostics.h"
#include "ptoc/ir/Attribute.h"
#include "ptoc/ir/Type.h"
#include "ptoc/target/CoreKind.h"

namespace ptoc::ir {

class Context;

enum class OpCode : uint16_t {
#define PTOC_OP(Code, Name, Class) Code,
#include "ptoc/ir/Ops.def"
};
inline constexpr unsigned kNumOpCodes = 0
#define PTOC_OP(Code, Name, Class) +1
#include "ptoc/ir/Ops.def"
    ;

/// Families of ops that share a type rule and attribute set.
enum class OpClass : uint8_t {
  ElementwiseUnary,
  ElementwiseBinary,
  Reduction,
  Matmul,
  Cast,
  Reshape,
  Transpose,
  View,
  Assemble,
  Concat,
  Full,
  Return,
  GmTensor, ///< a workspace tensor in GM (tile level)
  CopyIn,   ///< GM region -> local tile (tile level)
  CopyOut,  ///< local tile -> GM region (tile level)
  Subgraph, ///< a subgraph's description (partitioned level)
  Loop,     ///< runs a body function per iteration on windows of its operands
  Select,   ///< elementwise choice between two operands by a bool operand (where)
  TopK,        ///< the k largest (smallest) along a dim: values and indices (tensor level)
  TopKIndices, ///< the indices topk selects (one result; topk's tile-level half)
  Gather,      ///< elements of the first operand at an index tensor's positions along a dim
  ExpandClone, ///< broadcast to a shape, materialised
  Scatter,     ///< the first operand with a source written at an index tensor's positions
};

/// Which tile-shape attribute an op takes: `vec_tile` (vector ops), `cube_tile`
/// (matmul), or none.
enum class TileKind : uint8_t { None, Vec, Cube };

/// What an attribute value must look like.
enum class AttrShape : uint8_t {
  Int, Number, Bool, DType, IntArray, CubeTile, String,
  SymInt,  ///< an integer or a symbolic expression string (ir/SymExpr.h)
  Windows, ///< loop windows: [{of = N, offsets = [...], sizes = [...]}, ...]
  /// Source locations (debug info): an array of "file:line:col" strings ("" for
  /// unknown). Printed only where op locations are (ptoc-opt --print-debuginfo).
  Locations,
};

/// One attribute an op accepts.
struct AttrSpec {
  llvm::StringRef name;
  AttrShape shape;
  bool required;
  llvm::StringRef help;
};

/// The element type of the index results ptoc makes (topk's indices). Index operands
/// (gather) may be any integer type: see isIndexDType.
inline constexpr DType kIndexDType = DType::I32;

/// The inputs of a type rule: operand types, the op's attributes (a Dict, possibly
/// null), and the result type written in the text (null when a builder asks).
struct TypeRuleInput {
  Context &ctx;
  llvm::ArrayRef<Type> operands;
  Attribute attrs;
  Type declared;
};

/// A type rule's complaint: a message that names the problem and the fix (without
/// the op name; the caller adds it), filed under Shape unless the element types are
/// at fault (DType).
struct RuleError {
  std::string message;
  DiagCategory category = DiagCategory::Shape;
  bool empty() const { return message.empty(); }
  RuleError &operator=(std::string m) {
    message = std::move(m);
    return *this;
  }
};

/// A type rule returns the result type or fills `error`.
using TypeRule = Type (*)(const TypeRuleInput &in, RuleError &error);
/// Ops with more than one result (topk): appends the types of results 1.. given
/// result 0's (the type rule's, which has checked the inputs).
using ExtraResultsRule = void (*)(const TypeRuleInput &in, Type first,
                                  llvm::SmallVectorImpl<Type> &rest);

/// The registry entry for one operation.
struct OpDef {
  OpCode code;
  llvm::StringRef name;
  OpClass cls;
  target::CoreKind core;
  TileKind tile;
  unsigned minOperands;
  unsigned maxOperands; ///< kVariadic for "any number >= minOperands"
  unsigned numResults;   ///< kVariadic for "any number" (loop)
  llvm::ArrayRef<AttrSpec> attrs;
  TypeRule inferType;
  /// The types of results 1.. of a multi-result op with fixed arity (null otherwise).
  ExtraResultsRule extraResults = nullptr;
  /// Scalar semantics for elementwise ops (constant folding and reference numerics);
  /// null for others.
  double (*unaryFn)(double) = nullptr;
  double (*binaryFn)(double, double) = nullptr;
  /// Whether `binaryFn` is commutative (add, mul, max, min).
  bool commutative = false;
  /// Comparisons and logical ops: a bool result from operands of any (one) type, so
  /// operand and result tiles may differ in kind (float operands, an integer result).
  bool boolResult = false;
  /// Whether the op does more than compute its results: copy_out writes GM,
  /// gm_tensor allocates a distinct buffer, subgraph describes the partition. Such
  /// ops are never erased as dead nor merged by CSE.
  bool hasSideEffects = false;
  /// The value with `x op identity == x` exactly, sign of zero included (-0.0 for
  /// add, +0.0 for sub, 1 for mul/div/pow), if any.
  std::optional<double> rightIdentity;

  static constexpr unsigned kVariadic = ~0u;
  bool isElementwise() const {
    return cls == OpClass::ElementwiseUnary || cls == OpClass::ElementwiseBinary;
  }
  /// The spec of attribute `name` on this op, or null.
  const AttrSpec *findAttr(llvm::StringRef name) const;
};

/// Attributes any compute op may carry besides its own (tile shapes, scope).
llvm::ArrayRef<AttrSpec> commonAttrSpecs();

/// Immutable table of every op; built once, shared read-only.
class OpRegistry {
public:
  static const OpRegistry &get();
  const OpDef &def(OpCode code) const { return defs_[static_cast<unsigned>(code)]; }
  /// Lookup by text name; null when unknown.
  const OpDef *lookup(llvm::StringRef name) const;
  llvm::ArrayRef<OpDef> all() const { return defs_; }

private:
  OpRegistry();
  std::vector<OpDef> defs_;
};

/// The shape an op's tile shape covers: the input for reductions, topk and transpose
/// (PyPTO cuts a transpose's input by its vec_tile), assemble's source, the result
/// otherwise. Tile shapes have this rank.
llvm::ArrayRef<int64_t> iterationShape(const OpDef &def, llvm::ArrayRef<Type> operands,
                                       llvm::ArrayRef<Type> results);

/// numpy broadcasting of two shapes; nullopt when they are incompatible.
std::optional<llvm::SmallVector<int64_t, 4>> broadcastShapes(llvm::ArrayRef<int64_t> a,
                                                            llvm::ArrayRef<int64_t> b);

} // namespace ptoc::ir
