// Use-list maintenance, operation attributes.
#include "ptoc/ir/Operation.h"

#include <algorithm>

#include "ptoc/ir/Context.h"
#include "ptoc/ir/Func.h"

namespace ptoc::ir {

// ---------------------------------------------------------------- OpOperand

void OpOperand::link() {
  if (!value_) return;
  next_ = value_->firstUse_;
  if (next_) next_->prevNext_ = &next_;
  prevNext_ = &value_->firstUse_;
  value_->firstUse_ = this;
}

void OpOperand::unlink() {
  if (!value_) return;
  *prevNext_ = next_;
  if (next_) next_->prevNext_ = prevNext_;
  next_ = nullptr;
  prevNext_ = nullptr;
}

void OpOperand::set(Value *v) {
  if (v == value_) return;
  unlink();
  value_ = v;
  link();
}

unsigned OpOperand::index() const {
  return static_cast<unsigned>(this - owner_->opOperands().data());
}

// ---------------------------------------------------------------- Value

unsigned Value::numUses() const {
  unsigned n = 0;
  for (OpOperand *u = firstUse_; u; u = u->nextUse()) ++n;
  return n;
}

void Value::replaceAllUsesWith(Value *other) {
  if (other == this) return;
  while (firstUse_) firstUse_->set(other);
}

// ---------------------------------------------------------------- Operation

target::CoreKind Operation::coreKind() const {
  using target::CoreKind;
  switch (code()) {
  case OpCode::CopyIn:
    return resultType().space() == MemSpace::L1 ? CoreKind::AIC : CoreKind::AIV;
  case OpCode::CopyOut:
    return numOperands() && operand(0) && operand(0)->type().isTile() &&
                   operand(0)->type().space() == MemSpace::L0C
               ? CoreKind::AIC
               : CoreKind::AIV;
  case OpCode::Reshape:
  case OpCode::View:
    return numResults() && resultType().isTensor() ? CoreKind::None : def().core;
  default: return def().core;
  }
}

bool Operation::isTileOp() const {
  if (code() == OpCode::CopyIn || code() == OpCode::CopyOut) return true;
  return numResults() == 1 && resultType().isTile();
}

unsigned Operation::firstDependencyOperand() const {
  switch (code()) {
  case OpCode::CopyIn: return std::min(numOperands(), 1u);
  case OpCode::CopyOut: return std::min(numOperands(), 2u);
  default: return numOperands();
  }
}

bool Operation::useEmpty() const {
  for (const Value &r : results())
    if (!r.useEmpty()) return false;
  return true;
}

llvm::ArrayRef<NamedAttr> Operation::attrs() const {
  return attrs_ ? attrs_.getDict() : llvm::ArrayRef<NamedAttr>();
}

Attribute Operation::attr(llvm::StringRef name) const {
  for (const NamedAttr &a : attrs())
    if (a.name.str() == name) return a.value;
  if (name == "sg" && sgId_ >= 0) return parent_->context().intAttr(sgId_);
  return {};
}

void Operation::setAttr(llvm::StringRef name, Attribute value) {
  Context &ctx = parent_->context();
  Identifier id = ctx.id(name);
  bool toField = id == ctx.sgKey() && (!value || (value.isInt() && value.getInt() >= 0));
  if (toField) sgId_ = value ? value.getInt() : -1;
  llvm::SmallVector<NamedAttr, 4> entries;
  bool replaced = false;
  for (const NamedAttr &a : attrs()) {
    if (a.name == id) {
      replaced = true;
      if (value && !toField) entries.push_back({id, value});
    } else {
      entries.push_back(a);
    }
  }
  if (toField && !replaced) return;
  if (!replaced && value) entries.push_back({id, value});
  attrs_ = ctx.dictAttr(entries, /*sortByName=*/true);
}

void Operation::setAttrDict(Attribute dict) {
  attrs_ = dict;
  if (parent_) normalizeSubgraphAttr();
}

void Operation::normalizeSubgraphAttr() {
  if (!attrs_ || !attrs_.isDict()) return;
  Context &ctx = parent_->context();
  Identifier key = ctx.sgKey();
  llvm::ArrayRef<NamedAttr> entries = attrs_.getDict();
  for (size_t i = 0; i < entries.size(); ++i) {
    if (entries[i].name != key) continue;
    if (!entries[i].value.isInt() || entries[i].value.getInt() < 0) return;
    sgId_ = entries[i].value.getInt();
    llvm::SmallVector<NamedAttr, 8> rest(entries.begin(), entries.begin() + i);
    rest.append(entries.begin() + i + 1, entries.end());
    attrs_ = ctx.dictAttr(rest, /*sortByName=*/true);
    return;
  }
}

void Operation::dropOperandUses() {
  for (OpOperand &o : opOperands()) o.set(nullptr);
}

} // namespace ptoc::ir
