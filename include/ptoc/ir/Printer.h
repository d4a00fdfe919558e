// Prints IR in the ptoc text form (docs/ir.md). parse(print(m)) reprints identically.
#pragma once

#include <string>

#include "llvm/Support/raw_ostream.h"

#include "ptoc/ir/Module.h"

namespace ptoc::ir {

struct PrintOptions {
  /// Print `loc("file":line:col)` after each op and function header.
  bool printLocations = false;
};

void printModule(const Module &m, llvm::raw_ostream &os, const PrintOptions &opts = {});
void printFunc(const Func &f, llvm::raw_ostream &os, const PrintOptions &opts = {});
std::string toString(const Module &m, const PrintOptions &opts = {});
std::string toString(const Func &f, const PrintOptions &opts = {});

/// One op on one line, with value names as its function would print them (slow:
/// names the whole function; meant for diagnostics and debugging).
std::string opToString(const Operation &op);

} // namespace ptoc::ir
