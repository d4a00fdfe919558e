// What default-tiles (DefaultTiles.cpp) and its two tile rules (DefaultVecTileRule.h,
// DefaultCubeTileRule.h) share: the pass's name, the tie tolerance, size arithmetic and
// text, and the estimate of a task's and a schedule's cycles. Internal to lib/passes.
#pragma once

#include <cstdint>
#include <string>

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

namespace ptoc::target {
struct DeviceSpec;
}

namespace ptoc::passes::default_tiles {

using Dims = llvm::SmallVector<int64_t, 4>;

constexpr llvm::StringLiteral kPassName = "default-tiles";
/// Scores within this factor of the best are ties, decided by the other preferences.
constexpr double kTieTolerance = 1.05;

inline int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
inline int64_t roundUp(int64_t v, int64_t m) { return ceilDiv(v, m) * m; }

/// `bytes` as the remarks write it: "512 B", "48 KiB", "48.1 KiB".
std::string bytesText(int64_t bytes);
/// `v` as a comma-separated list ("3, 4096").
std::string listText(llvm::ArrayRef<int64_t> v);

/// How a rule counts a candidate's `tiles` (the text `tiles` spells them, e.g. "86
/// tiles") on `cores` cores of kind `kind` ("AIV"): "86 tiles = 2 waves of 48 AIV" when
/// the merge passes leave them one task each (`merged` false: the rules' estimate merges
/// none and the function is no loop body), else "8192 tiles, 170.7 per AIV core before
/// merging" ("16 tiles for 48 AIV cores before merging" when fewer than the cores): the
/// merge passes choose how many a task runs, which depends on what the
/// tiles feed, the L1 regions they share and, in a loop body, the control thread
/// (docs/passes.md, "Merge rules"), which the merge passes see and default-tiles does
/// not; the summary's groups table shows what they chose.
std::string tilesOnCores(llvm::StringRef tiles, int64_t count, int64_t cores, llvm::StringRef kind,
                         bool merged);

/// The cycles of a task running `n` tiles (or K steps) one after another, each
/// `sum` cycles with its slowest pipe `slowest`: the pipes overlap across tiles
/// (double buffering), so after the first tile each adds its slowest pipe.
double pipelinedCycles(int64_t n, double sum, double slowest);

/// The estimated span of `tasks` tasks of `taskCycles` each on `cores` cores, as the
/// AICPU scheduler runs them: its threads dispatch the first wave one task at a time
/// each (the last core starts ceil(first wave / threads) dispatches late), later waves
/// go to the cores' pending slots while they run, and over several waves the threads
/// must keep up with every task's dispatch, completion and (with successors) release.
double spanCycles(int64_t tasks, double taskCycles, int64_t cores, bool successors,
                  const target::DeviceSpec &d);

} // namespace ptoc::passes::default_tiles
