// Factories for every pass, and the function that registers them all.
#pragma once

#include <memory>

#include "ptoc/passes/Pass.h"
#include "ptoc/passes/PassRegistry.h"

namespace ptoc::passes {

/// Options of `canonicalize`.
struct CanonicalizeOptions {
  /// Fold ops whose operands are all constants (`full`) into a constant, and drop
  /// `x + 0`-style identities. Off: only the layout simplifications run.
  bool foldConstants = true;
};

/// Fold reshape chains, drop identity casts/transposes/views, fold constants in
/// elementwise ops; erases ops it made dead.
std::unique_ptr<Pass> createCanonicalizePass(const CanonicalizeOptions &options = {});
/// Common-subexpression elimination: identical ops on identical operands.
std::unique_ptr<Pass> createCSEPass();
/// Dead-code elimination: ops whose results reach no `return`.
std::unique_ptr<Pass> createDCEPass();

/// Each pass's declaration (argument, summary, options, factory), defined in the
/// pass's own file.
void registerCanonicalizePass(PassRegistry &registry);
void registerCSEPass(PassRegistry &registry);
void registerDCEPass(PassRegistry &registry);

/// Registers every pass and named pipeline into `registry`.
void registerAllPasses(PassRegistry &registry);

} // namespace ptoc::passes
