// A validator for swimlane traces (Chrome trace-event JSON): structure, lanes that
// never overlap, paired flows that land on slices, named lanes; and, against a
// Program, one task slice per call and one flow pair per dependency edge. Tests and
// `ptoc prof` use it to prove a written trace is what Perfetto will show.
#pragma once

#include "absl/status/status.h"
#include "llvm/ADT/StringRef.h"
#include "ptoc/codegen/Program.h"

namespace ptoc::profile {

/// Slack when comparing trace times (microseconds): 1 ps, far below the trace's
/// nanosecond resolution, only absorbs decimal-to-binary rounding.
inline constexpr double kTraceTimeSlackUs = 1e-6;

/// Checks a trace: it parses as a JSON object with a `traceEvents` array; every
/// event is an object with a string `ph`; every complete event ('X') has integer
/// pid/tid and numeric ts and dur >= 0; complete events on one (pid, tid) lane never
/// overlap; every flow start ('s') has exactly one flow end ('f') with the same id,
/// cat and name and vice versa, the end no earlier than the start, and both ends lie
/// on lanes with a complete event at that time; process_name / thread_name metadata
/// name every process and lane used. Returns InvalidArgument naming the first problem
/// (event index, lane, flow id). Malformed or truncated input is an error, never a
/// crash.
absl::Status checkTrace(llvm::StringRef json);

/// checkTrace, then against `program`: exactly one task event (an 'X' with cat
/// "task" and an integer args.call) per call, and the flow pairs are exactly the
/// dependency edges: each pair runs from the task event of a predecessor to the task
/// event of its successor, and every edge has one pair.
absl::Status checkTraceMatches(llvm::StringRef json, const codegen::Program &program);

} // namespace ptoc::profile
