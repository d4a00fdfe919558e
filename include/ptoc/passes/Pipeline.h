// Pipeline strings: `canonicalize,partition{pg-lower-bound=256 pg-skip-partition=true}`.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "llvm/ADT/StringRef.h"

#include "ptoc/passes/PassOptions.h"
#include "ptoc/passes/PassRegistry.h"

namespace ptoc::passes {

/// One step of a parsed pipeline: which pass, with which option values.
struct PipelineElement {
  const PassInfo *info = nullptr;
  PassOptionValues options;
  /// `argument{options}` as it would be written back.
  std::string str() const;
};

/// Parses a comma-separated pipeline. Options go in braces, separated by spaces
/// (or commas); values may be braced maps (`{0:4,-1:2}`). A named pipeline (e.g.
/// `default`) expands in place. Errors name the position and the fix (unknown pass:
/// the list of passes; unknown option: the pass's options).
absl::StatusOr<std::vector<PipelineElement>> parsePipeline(llvm::StringRef text,
                                                          const PassRegistry &registry);

/// Writes a pipeline back as text (parsePipeline(str) gives the same pipeline).
std::string pipelineToString(const std::vector<PipelineElement> &pipeline);

} // namespace ptoc::passes
