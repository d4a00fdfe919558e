// Reading a swimlane trace into a Timeline: the family is detected from the content
// (ptoc's own trace, PyPTO's "Machine View" or PyPTO-3's "Worker View"), each read by
// its own reader; a trace of any other kind is an error saying what was found and
// what was expected. docs/profiling.md "Timelines" lists what each family carries.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "llvm/ADT/StringRef.h"
#include "ptoc/profile/Timeline.h"
#include "ptoc/target/DeviceSpec.h"

namespace ptoc::profile {

/// How to read a trace.
struct TraceReadOptions {
  /// The device a PyPTO trace ran on (`ptoc prof --device`): its core counts replace
  /// the ones the lanes show (a device trace names only the cores that ran) and lane
  /// numbers beyond them are errors. Null: counts come from the trace. ptoc traces
  /// name their device in otherData and ignore this.
  const target::DeviceSpec *device = nullptr;
};

/// The trace file `path` names: `path` itself, or in a folder its merged_swimlane.json,
/// else its merged_swimlane_<stamp>.json (PyPTO-3; the newest by name when there are
/// several). NotFound names the folder and what was looked for.
absl::StatusOr<std::string> findTraceFile(llvm::StringRef path);

/// Reads and validates a trace; `path` is a trace file or a folder (findTraceFile).
/// Errors (InvalidArgument / NotFound) name the file and what is wrong and where (line
/// and column for bad JSON, event index and key for bad events); never crashes on
/// malformed or truncated input. A ptoc trace also takes the bound terms and traffic
/// from summary.json beside it when that describes the same run.
absl::StatusOr<Timeline> loadTrace(llvm::StringRef path, const TraceReadOptions &options = {});

/// The same from the trace's text; `name` is used in messages.
absl::StatusOr<Timeline> parseTrace(llvm::StringRef json, llvm::StringRef name,
                                    const TraceReadOptions &options = {});

} // namespace ptoc::profile
