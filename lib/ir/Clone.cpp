// cloneOpsInto: op-by-op copy with an operand mapping.
#include "ptoc/ir/Clone.h"

#include "llvm/ADT/SmallVector.h"
#include "ptoc/ir/Func.h"
#include "ptoc/ir/Operation.h"

namespace ptoc::ir {

void cloneOpsInto(llvm::ArrayRef<Operation *> ops, Func &into,
                  llvm::DenseMap<Value *, Value *> &mapped) {
  for (Operation *op : ops) {
    llvm::SmallVector<Value *, 4> operands;
    for (Value *v : op->operands()) operands.push_back(mapped.lookup(v));
    llvm::SmallVector<Type, 2> types;
    for (const Value &r : op->results()) types.push_back(r.type());
    Operation *copy = into.createOp(op->def(), operands, types, op->attrDict(), op->loc());
    for (unsigned i = 0; i < op->numResults(); ++i) {
      copy->result(i)->setNameHint(op->result(i)->nameHint());
      mapped[op->result(i)] = copy->result(i);
    }
  }
}

} // namespace ptoc::ir
