// A module: the functions parsed from one text buffer or built by one builder.
#pragma once

#include <memory>
#include <vector>

#include "llvm/ADT/StringRef.h"

#include "ptoc/ir/Func.h"

namespace ptoc::ir {

class Context;

/// An ordered list of functions with unique names.
class Module {
public:
  explicit Module(Context &ctx) : ctx_(ctx) {}
  Context &context() const { return ctx_; }

  /// Appends a new function and returns it.
  Func &addFunc(llvm::StringRef name, llvm::ArrayRef<Type> argTypes,
                llvm::ArrayRef<Type> resultTypes, Location loc);
  /// Removes `f` (its ops must not be used by other functions); later functions move
  /// up one position.
  void eraseFunc(Func &f);
  /// The function named `name`, or null.
  Func *lookup(llvm::StringRef name) const;

  size_t numFuncs() const { return funcs_.size(); }
  Func &func(size_t i) const { return *funcs_[i]; }
  auto funcs() const {
    return llvm::map_range(funcs_, [](const std::unique_ptr<Func> &f) -> Func & { return *f; });
  }
  /// Total number of operations over all functions.
  size_t numOps() const;

private:
  Context &ctx_;
  std::vector<std::unique_ptr<Func>> funcs_;
};

} // namespace ptoc::ir
