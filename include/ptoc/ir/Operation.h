// An operation: an OpDef, operands, results, attributes and a location.
#pragma once

#include <cstdint>

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/ilist_node.h"

#include "ptoc/ir/Attribute.h"
#include "ptoc/ir/Location.h"
#include "ptoc/ir/OpDef.h"
#include "ptoc/ir/Value.h"

namespace ptoc::ir {

class Func;

/// One operation in a function body. Operands and results live in storage trailing
/// the object (allocated by the owning Func), so their count is fixed at creation.
/// Attributes are one uniqued Dict attribute, sorted by key, except the subgraph
/// id `sg` (partitioned level), which lives in a field of its own: it differs
/// from op to op and every merge pass rewrites it, so keeping it out of the
/// dictionary keeps those rewrites from uniquing a dictionary per op. The text
/// form is unchanged: the printer merges `sg = N` into the dictionary in sorted
/// key position, and the parser takes a non-negative Int `sg` out of it.
class Operation : public llvm::ilist_node<Operation> {
public:
  const OpDef &def() const { return *def_; }
  OpCode code() const { return def_->code; }
  llvm::StringRef name() const { return def_->name; }
  Location loc() const { return loc_; }
  void setLoc(Location l) { loc_ = l; }
  Func *parentFunc() const { return parent_; }
  /// The core kind that runs this op: the OpDef's, refined at the tile level
  /// (copy_in to l1 / copy_out from l0c are AIC; to ub / from ub AIV). None for
  /// ops that move no data: return, gm_tensor, subgraph, and reshape/view of GM
  /// tensors (aliases).
  target::CoreKind coreKind() const;
  /// Whether this op works on local tiles (it belongs in a subgraph once
  /// partitioned): copies and compute ops whose result is a tile.
  bool isTileOp() const;

  // --- operands ---
  unsigned numOperands() const { return numOperands_; }
  Value *operand(unsigned i) const { return operandStorage()[i].get(); }
  void setOperand(unsigned i, Value *v) { operandStorage()[i].set(v); }
  llvm::MutableArrayRef<OpOperand> opOperands() { return {operandStorage(), numOperands_}; }
  llvm::ArrayRef<OpOperand> opOperands() const { return {operandStorage(), numOperands_}; }
  /// The operand values (Value *), in order.
  auto operands() const {
    return llvm::map_range(opOperands(), [](const OpOperand &o) { return o.get(); });
  }
  Type operandType(unsigned i) const { return operand(i)->type(); }
  /// Operands from this index on are dependency operands: they order this op after
  /// the ops defining them and carry no data. A copy_in's operands after its source
  /// are the copy_out tokens of earlier writes into the region it reads; a
  /// copy_out's operands after its tile and destination are the earlier copy_outs
  /// (tokens) and copy_ins (reads) of the region it overwrites. Every other op
  /// has none (the index is numOperands()).
  unsigned firstDependencyOperand() const;
  bool isDependencyOperand(unsigned i) const { return i >= firstDependencyOperand(); }

  // --- results ---
  unsigned numResults() const { return numResults_; }
  Value *result(unsigned i = 0) { return &resultStorage()[i]; }
  const Value *result(unsigned i = 0) const { return &resultStorage()[i]; }
  llvm::MutableArrayRef<Value> results() { return {resultStorage(), numResults_}; }
  llvm::ArrayRef<Value> results() const { return {resultStorage(), numResults_}; }
  Type resultType(unsigned i = 0) const { return result(i)->type(); }
  bool useEmpty() const;

  // --- subgraph id (the `sg` attribute of the text form) ---
  /// The subgraph this op belongs to (partitioned level); -1 when it has none.
  int64_t subgraphId() const { return sgId_; }
  void setSubgraphId(int64_t id) { sgId_ = id; }
  bool hasSubgraphId() const { return sgId_ >= 0; }

  // --- attributes (kept sorted by name) ---
  /// The attribute dictionary (a Dict attribute, possibly empty). It never holds
  /// a non-negative Int `sg`: that is subgraphId() (a non-Int or negative `sg`,
  /// which only bad input has, stays in the dictionary for the verifier to report).
  Attribute attrDict() const { return attrs_; }
  /// The entries of attrDict() (so without the subgraph id).
  llvm::ArrayRef<NamedAttr> attrs() const;
  /// An attribute by name. `sg` reads subgraphId() (an Int attribute, or null
  /// when it is -1) unless the dictionary holds a (bad) `sg`.
  Attribute attr(llvm::StringRef name) const;
  /// Sets or replaces an attribute; a null value removes it. A non-negative Int
  /// `sg` sets subgraphId() (a null `sg` clears it to -1) instead of the dictionary.
  void setAttr(llvm::StringRef name, Attribute value);
  /// Replaces the dictionary. A non-negative Int `sg` in it moves to
  /// subgraphId(); without
  /// one the subgraph id is left as it is.
  void setAttrDict(Attribute dict);

  /// Drops this op's uses of its operands (before erasing it).
  void dropOperandUses();

  /// Scratch number for a walk that orders the body (see Func::reserveWalkMarks):
  /// meaningful only to the walk that set it.
  mutable uint64_t walkMark = 0;

private:
  friend class Func;
  Operation(const OpDef *def, Location loc, Func *parent, unsigned numOperands,
            unsigned numResults, Attribute attrs)
      : def_(def), loc_(loc), parent_(parent), attrs_(attrs), numOperands_(numOperands),
        numResults_(numResults) {}

  /// Moves an Int `sg` out of attrs_ into sgId_ (see attrDict()).
  void normalizeSubgraphAttr();

  OpOperand *operandStorage() const {
    return reinterpret_cast<OpOperand *>(const_cast<Operation *>(this) + 1);
  }
  Value *resultStorage() const {
    return reinterpret_cast<Value *>(operandStorage() + numOperands_);
  }

  const OpDef *def_;
  Location loc_;
  Func *parent_;
  Attribute attrs_;
  int64_t sgId_ = -1;
  uint32_t numOperands_;
  uint32_t numResults_;
};

} // namespace ptoc::ir
