// Copying ops between functions: what outline-segments and the Python tracer's loop
// bodies use to move a run of ops into a function of its own.
#pragma once

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/DenseMap.h"

namespace ptoc::ir {

class Func;
class Operation;
class Value;

/// Appends a copy of each op of `ops` (in order) to `into`: same op, attributes,
/// location and result name hints; each operand is looked up in `mapped`, and each
/// copied result is added to it. Every operand must be in `mapped` by the time its
/// user is copied.
void cloneOpsInto(llvm::ArrayRef<Operation *> ops, Func &into,
                  llvm::DenseMap<Value *, Value *> &mapped);

} // namespace ptoc::ir
