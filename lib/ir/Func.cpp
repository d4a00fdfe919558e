// Function bodies: creation and erasure of operations.
#include "ptoc/ir/Func.h"

#include <new>

#include "ptoc/ir/Context.h"

namespace ptoc::ir {

Func::Func(Context &ctx, llvm::StringRef name, llvm::ArrayRef<Type> argTypes,
           llvm::ArrayRef<Type> resultTypes, Location loc)
    : ctx_(ctx), name_(ctx.id(name)), loc_(loc),
      resultTypes_(resultTypes.begin(), resultTypes.end()) {
  numArgs_ = static_cast<unsigned>(argTypes.size());
  args_ = alloc_.Allocate<Value>(numArgs_);
  for (unsigned i = 0; i < numArgs_; ++i) new (&args_[i]) Value(argTypes[i], this, i);
}

void Func::setResultTypes(llvm::ArrayRef<Type> types) {
  resultTypes_.assign(types.begin(), types.end());
}

Operation *Func::returnOp() {
  if (ops_.empty()) return nullptr;
  Operation &last = ops_.back();
  return last.code() == OpCode::Return ? &last : nullptr;
}

Operation *Func::createOp(const OpDef &def, llvm::ArrayRef<Value *> operands,
                          llvm::ArrayRef<Type> resultTypes, Attribute attrs, Location loc,
                          Operation *before) {
  size_t bytes = sizeof(Operation) + operands.size() * sizeof(OpOperand) +
                 resultTypes.size() * sizeof(Value);
  void *mem = alloc_.Allocate(bytes, alignof(Operation));
  if (!attrs) attrs = ctx_.emptyDict();
  auto *op = new (mem) Operation(&def, loc, this, static_cast<unsigned>(operands.size()),
                                 static_cast<unsigned>(resultTypes.size()), attrs);
  op->normalizeSubgraphAttr(); // an Int `sg` lives in the op's field, not the dict
  OpOperand *ops = op->operandStorage();
  for (size_t i = 0; i < operands.size(); ++i) {
    new (&ops[i]) OpOperand();
    ops[i].owner_ = op;
    ops[i].set(operands[i]);
  }
  Value *res = op->resultStorage();
  for (size_t i = 0; i < resultTypes.size(); ++i)
    new (&res[i]) Value(resultTypes[i], op, static_cast<unsigned>(i));
  if (before)
    ops_.insert(before->getIterator(), *op);
  else
    ops_.push_back(*op);
  ++numOps_;
  return op;
}

void Func::erase(Operation *op) {
  op->dropOperandUses();
  ops_.remove(*op);
  --numOps_;
  // Memory stays in the bump allocator until the function is destroyed; every
  // part of an Operation is trivially destructible.
}

} // namespace ptoc::ir
