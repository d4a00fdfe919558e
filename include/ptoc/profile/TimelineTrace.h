// A timeline as a trace in ptoc's layout (docs/outputs.md), so swimlane.html, which
// reads that layout, draws any family: a PyPTO device trace is shown through this
// rendering of its timeline. ptoc's own runs keep their merged_swimlane.json, written
// from the run record with every detail (Swimlane.h).
#pragma once

#include "absl/status/status.h"
#include "llvm/Support/raw_ostream.h"
#include "ptoc/profile/Timeline.h"

namespace ptoc::profile {

/// Streams `timeline` as Chrome trace-event JSON: a process per lane kind with a lane
/// per core (idle cores too) and the control lane, one 'X' event with cat "task" per
/// task (args: call, hash_order (ptoc's, else the group's index), group, name, ...),
/// one flow pair with cat "dep" per edge whose ends name their tasks (args.call), and
/// otherData with the family and the reader's notes. Times are microseconds from the
/// timeline's origin, shifted per lane by TimelineLane::drawShift.
absl::Status writeTimelineTrace(llvm::raw_ostream &os, const Timeline &timeline);

} // namespace ptoc::profile
