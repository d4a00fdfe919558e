// `ptoc prof PATH` as one library operation, shared by the CLI and Python's
// ptoc.profile.analyze: read a trace of any family, analyse it, and (when asked) write
// the analysis beside the trace and refresh or write its swimlane.html.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "llvm/ADT/StringRef.h"
#include "ptoc/profile/TraceAnalysis.h"

namespace ptoc::profile {

/// What profileTrace does.
struct TraceProfileOptions {
  AnalysisOptions analysis;
  TraceReadOptions read;
  /// Write the analysis JSON beside the trace, then the page: a ptoc run folder's
  /// swimlane.html is refreshed when it exists, any other family's is written.
  bool write = true;
};

/// What profileTrace produced.
struct TraceProfile {
  Timeline timeline;
  Analysis analysis;
  std::string analysisJson;   ///< the text written (or that would be)
  std::string analysisPath;   ///< "" when not written
  std::string htmlPath;       ///< "" when not written
  std::string htmlWarning;    ///< a page that could not be refreshed (the analysis stands)
};

/// Where the analysis and the page of `traceFile` go: analysis.json and swimlane.html
/// beside a ptoc trace (its run folder), <stem>.analysis.json and <stem>.swimlane.html
/// beside a device trace (a folder may hold several).
std::string analysisPathFor(llvm::StringRef traceFile, TimelineFamily family);
std::string swimlaneHtmlPathFor(llvm::StringRef traceFile, TimelineFamily family);

/// Reads `path` (a trace or a folder, loadTrace), analyses it and, with `write`, writes
/// the analysis and the page atomically. Errors: the trace's (loadTrace) or an output
/// that cannot be written (naming it).
absl::StatusOr<TraceProfile> profileTrace(llvm::StringRef path,
                                          const TraceProfileOptions &options = {});

} // namespace ptoc::profile
