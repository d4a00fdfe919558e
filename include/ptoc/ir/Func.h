// A function: typed arguments, result types and a body of operations ending in
// `return`. The function owns (and allocates) its operations.
#pragma once

#include <memory>

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/simple_ilist.h"
#include "llvm/Support/Allocator.h"

#include "ptoc/ir/Attribute.h"
#include "ptoc/ir/Location.h"
#include "ptoc/ir/Operation.h"

namespace ptoc::ir {

class Context;

/// A function in a Module. The body is a single list of operations in a
/// topological order (definitions before uses) whose last operation is `return`.
class Func {
public:
  using OpList = llvm::simple_ilist<Operation>;

  Func(Context &ctx, llvm::StringRef name, llvm::ArrayRef<Type> argTypes,
       llvm::ArrayRef<Type> resultTypes, Location loc);
  Func(const Func &) = delete;
  Func &operator=(const Func &) = delete;

  Context &context() const { return ctx_; }
  llvm::StringRef name() const { return name_.str(); }
  Location loc() const { return loc_; }

  unsigned numArgs() const { return numArgs_; }
  Value *arg(unsigned i) { return &args_[i]; }
  const Value *arg(unsigned i) const { return &args_[i]; }
  llvm::MutableArrayRef<Value> args() { return {args_, numArgs_}; }
  llvm::ArrayRef<Value> args() const { return {args_, numArgs_}; }
  llvm::ArrayRef<Type> resultTypes() const { return resultTypes_; }
  void setResultTypes(llvm::ArrayRef<Type> types);

  OpList &ops() { return ops_; }
  const OpList &ops() const { return ops_; }
  size_t numOps() const { return numOps_; }
  /// The trailing `return`, or null while the body is being built.
  Operation *returnOp();
  const Operation *returnOp() const { return const_cast<Func *>(this)->returnOp(); }

  /// Creates an operation and inserts it before `before` (at the end when null).
  /// Type rules are not checked here: use GraphBuilder, or run the verifier.
  Operation *createOp(const OpDef &def, llvm::ArrayRef<Value *> operands,
                      llvm::ArrayRef<Type> resultTypes, Attribute attrs, Location loc,
                      Operation *before = nullptr);
  /// Unlinks and destroys `op`; its results must have no uses.
  void erase(Operation *op);

  /// Reserves `count` fresh walk marks and returns the base: a walk numbers its
  /// ops base+1, base+2, ... in Operation::walkMark, and a mark <= base is stale
  /// (from an earlier walk). Lets analyses order ops without a side table.
  uint64_t reserveWalkMarks(uint64_t count) const {
    uint64_t base = walkMarks_;
    walkMarks_ += count + 1;
    return base;
  }

  /// Bytes allocated for this function's operations (for memory reports).
  size_t allocatedBytes() const { return alloc_.getTotalMemory(); }

private:
  Context &ctx_;
  Identifier name_;
  Location loc_;
  llvm::BumpPtrAllocator alloc_;
  Value *args_ = nullptr;
  unsigned numArgs_ = 0;
  llvm::SmallVector<Type, 2> resultTypes_;
  OpList ops_;
  size_t numOps_ = 0;
  mutable uint64_t walkMarks_ = 0;
};

} // namespace ptoc::ir
