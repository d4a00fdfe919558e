// Tuner: searches the knobs of one tensor-level function on the simulator — tile
// shapes (each distinct vec_tile / cube_tile of its ops), merge counts per
// hash-order group, scheduler modes, device_sched_parallelism of a function with a
// parallel loop — with a lib/tune strategy, evaluating
// candidates (compile + simulate, no numerics) in parallel on host threads, and
// records the results in the knowledge bank. `ptoc tune FILE.pto` and Python's
// `ptoc.tune` are faces over it.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "llvm/ADT/StringRef.h"
#include "ptoc/runtime/ExpandLoops.h"
#include "ptoc/session/Session.h"
#include "ptoc/tune/BankLookup.h"
#include "ptoc/tune/Search.h"
#include "ptoc/tune/SearchSpace.h"
#include "ptoc/tune/TuneSpace.h"

namespace ptoc::session {

/// Tuner options (one struct, defaults here).
struct TuneOptions {
  /// Strategy, budget, seed, parallelism (batch size = host threads by default).
  tune::SearchOptions search;
  /// Host threads evaluating candidates; 0 = hardware concurrency.
  unsigned threads = 0;
  /// The knowledge bank folder; "" = the default (PTOC_TUNE_BANK_PATH or
  /// ~/.cache/ptoc/bank). `useBank = false`: neither read nor written.
  std::string bankPath;
  bool useBank = true;
  /// Where tune_result_<ts>_pid<n>.json goes; "" = the output base folder
  /// (PTOC_OUTPUT_DIR or ./output).
  std::string resultDir;
  /// Pass knobs every candidate starts from (a candidate's own knobs win).
  PassKnobs baseKnobs;
  /// Called after each batch (evaluations used, best so far), e.g. a progress bar.
  tune::Progress progress;
  /// Compiled candidates kept for configs that differ only in runtime knobs (the
  /// scheduler mode), by estimated size. 0 keeps none: configs still share a compile
  /// within one batch.
  uint64_t programCacheBytes = uint64_t(64) << 20;
  /// The shapes of the kernel's arguments, in order: the sizes a kernel with dynamic
  /// axes is instantiated for when its candidates are simulated (a size-independent
  /// kernel ignores them; a dynamic one without them is an error naming the fix).
  std::vector<std::vector<int64_t>> argShapes;
  /// The data of each argument, laid out as argShapes says (the caller keeps it alive
  /// while tuning), or empty: a kernel whose loops read values of its inputs (paged
  /// attention's block table, grouped GEMM offsets) is instantiated with it; without
  /// it such a kernel is an error naming the fix.
  std::vector<const void *> argData;
  /// The kernel's runtime options: the function as written is measured with its
  /// scheduler mode and device_sched_parallelism (parallel loops: iterations in
  /// flight, 1..8; the derived space's as-written value of that knob) — a config that
  /// names neither keeps them — and every candidate with its stitch size (loops:
  /// iterations per stitch, stitch_function_max_num).
  int schedMode = 0;
  int64_t stitchMaxNum = runtime::kDefaultStitchMaxNum;
  int schedParallelism = runtime::kDefaultSchedParallelism;
};

/// One candidate applied (tune/TuneSpace.h).
using tune::TunedConfig;

/// What a tuning run found.
struct TuneReport {
  tune::SearchSpace space;
  tune::SearchResult result;
  /// The best config (when any was valid), ready to compile and run.
  std::optional<TunedConfig> best;
  double bestUs = 0;
  /// The simulated time of the function as written (no config), for comparison.
  double baselineUs = 0;
  /// A bank record answered without searching (0 evaluations).
  bool bankHit = false;
  /// Nothing the search found beat the function as written, which is `best`.
  bool bestIsWritten = false;
  /// The function as written, as a config of `space` (its JSON; "" when the space
  /// cannot express it, e.g. on a bank hit): what the best config changed.
  std::string writtenConfigJson;
  /// Compiles the search made (the written function's included): configs that differ
  /// only in runtime knobs share one, so this may be below the evaluations.
  uint64_t compiles = 0;
  /// The function as written spent more core time on the cube cores than on the
  /// vector cores (its baseline run): `auto` searches with `ga` then, else with `rl`.
  bool cubeDominated = false;
  std::string resultPath;   ///< the tune_result file ("" on a bank hit)
};

/// Derives the search space of the (only or `funcName`) function of `moduleText`
/// (tensor level, as ptoc-opt prints it) on `session`'s device: tile candidates per
/// distinct tile shape, a merge count per hash-order group of two or more subgraphs
/// (the groups of the function as written, compiled with `baseKnobs` and merging
/// off; the count `baseKnobs`' own merge options give a group is always one of its
/// choices), the scheduler modes and, with a parallel loop, device_sched_parallelism
/// (including `schedParallelism`, the kernel's own) (tune::deriveSearchSpace with the
/// groups of a compile on the session).
absl::StatusOr<tune::SearchSpace> deriveSearchSpace(
    const Session &session, llvm::StringRef moduleText, llvm::StringRef funcName = "",
    const PassKnobs &baseKnobs = {}, int schedParallelism = runtime::kDefaultSchedParallelism);

/// A config the knowledge bank knows for a function, applied to it.
using tune::BankAnswer;

/// The bank's best config for the function of `moduleText` (bank folder `bankPath`,
/// "" = the default), applied to it; nullopt when the bank has no record of its key
/// (version, device, graph, signature). No evaluation: what `@ptoc.jit` does before
/// compiling. Lines of the bank it skipped and a record that no longer applies are
/// appended to `warnings`.
absl::StatusOr<std::optional<BankAnswer>> lookupTuned(const Session &session,
                                                      llvm::StringRef moduleText,
                                                      llvm::StringRef bankPath,
                                                      const PassKnobs &baseKnobs,
                                                      std::vector<std::string> &warnings);

/// Tunes the function of `moduleText`: with no `space`, consults the bank first (a hit
/// costs no evaluation), else searches the derived space; a given `space` is always
/// searched. Every valid config measured is recorded in the bank.
absl::StatusOr<TuneReport> tuneModule(const Session &session, llvm::StringRef moduleText,
                                      const TuneOptions &options,
                                      const tune::SearchSpace *space = nullptr);

} // namespace ptoc::session
