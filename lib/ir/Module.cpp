// Modules: ordered, named functions.
#include "ptoc/ir/Module.h"

namespace ptoc::ir {

Func &Module::addFunc(llvm::StringRef name, llvm::ArrayRef<Type> argTypes,
                      llvm::ArrayRef<Type> resultTypes, Location loc) {
  funcs_.push_back(std::make_unique<Func>(ctx_, name, argTypes, resultTypes, loc));
  return *funcs_.back();
}

void Module::eraseFunc(Func &f) {
  for (auto it = funcs_.begin(); it != funcs_.end(); ++it)
    if (it->get() == &f) {
      funcs_.erase(it);
      return;
    }
}

Func *Module::lookup(llvm::StringRef name) const {
  for (const auto &f : funcs_)
    if (f->name() == name) return f.get();
  return nullptr;
}

size_t Module::numOps() const {
  size_t n = 0;
  for (const auto &f : funcs_) n += f->numOps();
  return n;
}

} // namespace ptoc::ir
