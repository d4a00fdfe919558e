// The parts of the Pass interface that are not inline: statistics registration and
// the per-pass debug stream.
#include "ptoc/passes/Pass.h"

#include "llvm/ADT/STLExtras.h"

namespace ptoc::passes {

PassStatistic::PassStatistic(Pass *owner, const char *name, const char *description)
    : name_(name), description_(description) {
  owner->statistics_.push_back(this);
}

llvm::raw_ostream *PassContext::debugStream(llvm::StringRef argument) const {
  bool enabled = llvm::any_of(debugPasses, [&](const std::string &p) {
    return p == "all" || p == argument;
  });
  return enabled ? debugOut : nullptr;
}

} // namespace ptoc::passes
