// `ptoc prof diff A B`: two analysed timelines side by side (two device runs, two
// simulations, or a ptoc simulation against a device run of the same operator):
// span, per core kind and per group the task count, total and mean time with their
// ratios B / A, and where the critical paths part. docs/profiling.md "ptoc prof diff".
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ptoc/profile/TraceAnalysis.h"

namespace ptoc::profile {

/// Counts and times of one side of a row (absent: that side has no such group).
struct DiffSide {
  int tasks = 0;
  double totalUs = 0, meanUs = 0;
};

/// One row: a core kind or a group on both sides.
struct DiffRow {
  /// "AIC" / "AIV", or the group's key: A's when groups were matched by position
  /// (empty when only B has a group at that position).
  std::string key;
  /// B's key when groups were matched by position (empty when only A has the group).
  std::string otherKey;
  /// The core label; a group on one kind in A and on both in B is "AIC+AIV".
  std::string core;
  std::optional<DiffSide> a, b;
  /// B / A of tasks, total and mean; nullopt when a side is missing or A is 0.
  std::optional<double> tasksRatio, totalRatio, meanRatio;
};

/// Where the two critical paths part.
struct PathDiff {
  double lengthA = 0, lengthB = 0;
  std::optional<double> lengthRatio;
  int tasksA = 0, tasksB = 0;
  /// Each path as runs of one group, in order ("func0_2 x3": three tasks of it in a row).
  std::vector<std::string> stepsA, stepsB;
  /// Steps both paths share from the start; equal to both sizes when the paths agree.
  int commonSteps = 0;
  std::string summary;        ///< one sentence
  bool known = false;         ///< both sides have a critical path (one clock)
};

/// The comparison.
struct TraceDiff {
  std::string sourceA, sourceB, familyA, familyB;
  std::optional<double> spanA, spanB, spanRatio; ///< measured or simulated span
  std::vector<DiffRow> kinds;
  std::vector<DiffRow> groups;
  /// "key" (same group keys on both sides) or "position" (no key in common: groups of
  /// each core kind matched in the order they first ran).
  std::string groupMatch = "key";
  PathDiff criticalPath;
  /// Nothing differs: same span, counts and times in every row, same path.
  bool same = false;
};

/// Compares two analyses (A the base, B the other).
TraceDiff diffAnalyses(const Analysis &a, const Analysis &b);

/// Aligned text: span, the core-kind and group tables with ratios, the critical paths.
std::string traceDiffText(const TraceDiff &diff);

/// The same as JSON (keys in docs/profiling.md "ptoc prof diff").
std::string traceDiffJson(const TraceDiff &diff);

} // namespace ptoc::profile
