// SSA values (operation results and function arguments) and their use lists.
#pragma once

#include <cstdint>
#include <iterator>

#include "ptoc/ir/Attribute.h"
#include "ptoc/ir/Type.h"

namespace ptoc::ir {

class Operation;
class Func;
class Value;

/// One use of a value: operand slot `index` of operation `owner`. Uses of a value
/// form an intrusive list, so users can be walked and values replaced in O(uses).
class OpOperand {
public:
  Value *get() const { return value_; }
  void set(Value *v);
  Operation *owner() const { return owner_; }
  unsigned index() const;
  OpOperand *nextUse() const { return next_; }

private:
  friend class Operation;
  friend class Value;
  friend class Func;
  void link();
  void unlink();

  Value *value_ = nullptr;
  Operation *owner_ = nullptr;
  OpOperand *next_ = nullptr;
  OpOperand **prevNext_ = nullptr;
};

/// An SSA value: the result of an operation or an argument of a function. Values
/// have stable addresses; pass them around as `Value *`.
class Value {
public:
  Type type() const { return type_; }
  void setType(Type t) { type_ = t; }

  /// The defining operation, or null for a function argument.
  Operation *definingOp() const { return isArg_ ? nullptr : op_; }
  /// The function for an argument, or null.
  Func *argOwner() const { return isArg_ ? func_ : nullptr; }
  bool isArgument() const { return isArg_; }
  /// Result number or argument number.
  unsigned index() const { return index_; }

  /// A name to print instead of a number (e.g. %x), kept from the text or builder.
  Identifier nameHint() const { return nameHint_; }
  void setNameHint(Identifier id) { nameHint_ = id; }

  bool useEmpty() const { return firstUse_ == nullptr; }
  bool hasOneUse() const { return firstUse_ && !firstUse_->nextUse(); }
  unsigned numUses() const;
  OpOperand *firstUse() const { return firstUse_; }
  /// Points every use of this value at `other` instead.
  void replaceAllUsesWith(Value *other);

  /// Iterates the uses (OpOperand &).
  class use_iterator {
  public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = OpOperand;
    using difference_type = std::ptrdiff_t;
    using pointer = OpOperand *;
    using reference = OpOperand &;
    explicit use_iterator(OpOperand *u) : u_(u) {}
    OpOperand &operator*() const { return *u_; }
    OpOperand *operator->() const { return u_; }
    use_iterator &operator++() {
      u_ = u_->nextUse();
      return *this;
    }
    bool operator==(const use_iterator &o) const { return u_ == o.u_; }
    bool operator!=(const use_iterator &o) const { return u_ != o.u_; }

  private:
    OpOperand *u_;
  };
  struct UseRange {
    OpOperand *first;
    use_iterator begin() const { return use_iterator(first); }
    use_iterator end() const { return use_iterator(nullptr); }
  };
  UseRange uses() const { return {firstUse_}; }

private:
  friend class Operation;
  friend class Func;
  friend class OpOperand;
  Value(Type t, Operation *op, unsigned idx) : type_(t), op_(op), index_(idx) {}
  Value(Type t, Func *f, unsigned idx) : type_(t), func_(f), index_(idx), isArg_(true) {}

  Type type_;
  union {
    Operation *op_;
    Func *func_;
  };
  OpOperand *firstUse_ = nullptr;
  Identifier nameHint_;
  uint32_t index_ = 0;
  bool isArg_ = false;
};

} // namespace ptoc::ir
