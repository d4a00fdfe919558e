// Internal to the tuner (lib/session/Tuner.cpp): compiles tuning candidates once per
// distinct (function text, pass knobs), prepared for simulation once per
// device_sched_parallelism, and keeps the most recent programs, so candidates that
// differ only in runtime knobs share one compile (the scheduler mode also one
// preparation): the programs across batches, the compile within a batch.
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/status/statusor.h"
#include "llvm/ADT/ArrayRef.h"
#include "ptoc/runtime/ExpandLoops.h"
#include "ptoc/runtime/PreparedProgram.h"
#include "ptoc/tune/TuneSpace.h"

namespace llvm {
class ThreadPool;
}

namespace ptoc::session {

class Session;
using tune::TunedConfig;

/// What every candidate is instantiated with (TuneOptions::argShapes, argData,
/// stitchMaxNum, schedParallelism): the sizes of a kernel's dynamic axes, the data a
/// kernel whose loops read its inputs needs (one pointer per argument, laid out as
/// argShapes says; empty when the caller gave none), the stitch size of its loops and
/// how many iterations of a parallel loop run at once when the config does not say
/// (TunedConfig::schedParallelism).
struct CandidateInputs {
  std::vector<std::vector<int64_t>> argShapes;
  std::vector<const void *> argData;
  int64_t stitchMaxNum = runtime::kDefaultStitchMaxNum;
  int schedParallelism = runtime::kDefaultSchedParallelism;
};

/// A compiled candidate: its program prepared for simulation on the session's device,
/// or why it does not compile.
using CompiledCandidate = std::shared_ptr<const absl::StatusOr<runtime::PreparedProgram>>;

class CandidateCompiler {
public:
  /// Compiles for `session`'s device (no IR text, no statistics, no per-pass
  /// verification: candidates are only simulated), keeping programs between batches up
  /// to `capacityBytes` by estimated size (TuneOptions::programCacheBytes): small
  /// kernels keep hundreds, a program too large for the budget is not kept.
  /// Every candidate is instantiated with `inputs`.
  CandidateCompiler(const Session &session, uint64_t capacityBytes, CandidateInputs inputs = {})
      : session_(session), capacityBytes_(capacityBytes), inputs_(std::move(inputs)) {}

  /// The program of each config of `batch` (null entries stay null): those whose text,
  /// knobs and device_sched_parallelism were prepared before are taken from the cache;
  /// each distinct new text and knobs is compiled once, then prepared once per
  /// device_sched_parallelism the batch asks of it, in parallel on `pool`. Called
  /// from one thread.
  std::vector<CompiledCandidate> compileBatch(llvm::ArrayRef<const TunedConfig *> batch,
                                              llvm::ThreadPool &pool);

  /// Compiles done (distinct text and knobs within a batch).
  uint64_t compiles() const { return compiles_; }

private:
  struct Entry {
    std::string key;
    CompiledCandidate compiled;
    uint64_t bytes = 0;   ///< the key's and the prepared program's estimated bytes
  };
  /// The cached result of `key`, now the most recently used, or null.
  CompiledCandidate lookup(const std::string &key);
  void insert(std::string key, CompiledCandidate compiled);

  const Session &session_;
  uint64_t capacityBytes_;
  CandidateInputs inputs_;
  uint64_t cachedBytes_ = 0;
  std::list<Entry> lru_;   // most recently used first
  std::unordered_map<std::string, std::list<Entry>::iterator> index_;
  uint64_t compiles_ = 0;
};

} // namespace ptoc::session
