// Parses the ptoc text form (docs/ir.md) into a Module.
#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "llvm/ADT/StringRef.h"

#include "ptoc/ir/Module.h"

namespace ptoc::ir {

class Context;

struct ParseOptions {
  /// Line number of the first line of `text` (for chunks of a larger file, so
  /// diagnostics name the line in the whole file).
  unsigned firstLine = 1;
};

/// Parses `text` (named `fileName` in locations). On error, emits one diagnostic at
/// the offending `file:line:col` through `ctx.diag()` and returns null. Never
/// crashes on malformed input. The result is not verified: call `verify`.
std::unique_ptr<Module> parseModule(llvm::StringRef text, llvm::StringRef fileName,
                                    Context &ctx, const ParseOptions &opts = {});

/// The same, returning the error text as an InvalidArgument status.
absl::StatusOr<std::unique_ptr<Module>> parseModuleOrError(llvm::StringRef text,
                                                           llvm::StringRef fileName,
                                                           Context &ctx,
                                                           const ParseOptions &opts = {});

} // namespace ptoc::ir
