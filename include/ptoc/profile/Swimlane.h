// The swimlane trace: a simulated run as Chrome trace-event JSON (opens in Perfetto UI
// and chrome://tracing). One process per core kind with a lane per core, one complete
// event per task, a flow arrow for every dependency edge, ready-queue counters, with
// pipe records a lane per pipe inside each core, and for loops the control thread's
// lane and each task's iteration. docs/outputs.md describes it.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "llvm/Support/raw_ostream.h"
#include "ptoc/codegen/Program.h"
#include "ptoc/runtime/RunRecord.h"

namespace ptoc::profile {

/// What goes into a swimlane beyond the task lanes (which are always there).
struct SwimlaneOptions {
  bool flows = true;           ///< an 's'/'f' flow pair per dependency edge
  bool counters = true;        ///< ReadyCount_AIC / ReadyCount_AIV counter tracks
  bool pipeLanes = true;       ///< per-pipe lanes, when the record has pipe records
  bool schedulerLanes = true;  ///< a lane per AICPU thread with its dispatches
  bool deviceLane = true;      ///< the kernel head overhead and the execute span
  /// Loops: a lane for the AICPU control thread with a slice per stitch it built and
  /// a mark where each stitch opened (only for a run with loops).
  bool controlLane = true;
};

/// Streams the trace of `record` (a run of `program`) to `os`, in time linear in the
/// number of tasks, edges and pipe records, without building the document in memory.
/// Times count from the kernel launch (the head overhead is the Device lane's first
/// event) and are quantised to nanoseconds from cycles, so events that do not overlap
/// in cycles never overlap in the trace.
/// Errors: an InternalError when the record does not belong to the program (nothing
/// is written then).
absl::Status writeSwimlane(llvm::raw_ostream &os, const codegen::Program &program,
                           const runtime::RunRecord &record, const SwimlaneOptions &options = {});

/// writeSwimlane into a string.
absl::StatusOr<std::string> swimlaneJson(const codegen::Program &program,
                                         const runtime::RunRecord &record,
                                         const SwimlaneOptions &options = {});

} // namespace ptoc::profile
