// A performance report from repeated runs: compile an operator and simulate it N
// times, and fill a profile::PerfReport (metrics from the first run's summary, the
// simulated time's and the host wall times' statistics over every run). What
// `ptoc prof report FILE.pto` writes; embedders call it directly.
#pragma once

#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "llvm/ADT/StringRef.h"
#include "ptoc/profile/PerfReport.h"
#include "ptoc/session/Session.h"

namespace ptoc::session {

/// The most runs one report may repeat: the simulator is deterministic, so more
/// repeats only sharpen the host wall-time statistics.
inline constexpr int kMaxReportRepeat = 1000;

/// What reportFromRuns compiles, runs and records.
struct ReportRunsOptions {
  CompileOptions compile;
  /// The scheduler mode and kernel kind. Numerics never run: a report holds the
  /// simulator's timing, and computing outputs would only cost time.
  RunOptions run;
  /// Compile and simulate this many times, 1 to kMaxReportRepeat.
  int repeat = 1;
  /// Whether the report's host wall times count (PerfReport::hasHostTimes); they
  /// vary from machine to machine, so a baseline meant for diffs leaves them out.
  bool hostTimes = true;
  /// The pass options as the user wrote them (name -> value text), recorded in the
  /// report; the knobs themselves are `compile.knobs`.
  std::map<std::string, std::string> passOptionsText;
};

/// Compiles `text` (named `fileName` in messages and in the report) and simulates it
/// `options.repeat` times on `session`'s device. The report's version is this
/// build's; its label and commit are the caller's to set. Errors: the compile's or
/// the run's, or a repeat out of range.
absl::StatusOr<profile::PerfReport> reportFromRuns(const Session &session, llvm::StringRef text,
                                                   llvm::StringRef fileName,
                                                   const ReportRunsOptions &options);

} // namespace ptoc::session
