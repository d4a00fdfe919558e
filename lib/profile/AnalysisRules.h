// Internal to lib/profile: the verdict rules that need more than the run summary
// (bubbles, pipe lanes, a Worker View's blocks); the summary's own rules are
// profile::verdicts (Summary.h). Both live in Verdicts.cpp.
#pragma once

#include <vector>

#include "ptoc/profile/Timeline.h"
#include "ptoc/profile/TraceAnalysis.h"

namespace ptoc::profile {

/// Appends scheduler_bound (needs ready times and one clock), missing_double_buffer
/// (needs pipe lanes), setup_overhead and block_imbalance (need a Worker View's
/// kernel / setup split) to `out`, each only when its precondition holds.
void appendAnalysisVerdicts(const Timeline &timeline, const Analysis &analysis,
                            const AnalysisOptions &options, std::vector<Verdict> &out);

} // namespace ptoc::profile
