// The tuner's compiles: candidates compiled once per distinct (function text, pass
// knobs), prepared for simulation once per device_sched_parallelism, and the most
// recent programs kept, so candidates that differ only in runtime knobs share one
// compile (the scheduler mode also one preparation): the programs across batches, the
// compile within a batch. The compile itself is a callback the session gives
// (session::tuneModule), so tune never calls the session.
#pragma once

#include <cstdint>
#include <functional>
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

namespace ptoc::tune {

/// A compiled candidate: its program prepared for simulation on the tuned device,
/// or why it does not compile.
using CompiledCandidate = std::shared_ptr<const absl::StatusOr<runtime::PreparedProgram>>;

/// A candidate's compiled kernel, prepared for simulation with a
/// device_sched_parallelism on each call (the compile's error when it failed).
using PrepareCandidate = std::function<absl::StatusOr<runtime::PreparedProgram>(int parallelism)>;
/// Compiles a config's function text with its knobs (the session's compile, for the
/// tuned device). Called from the pool's threads, as are the preparations it returns.
using CompileCandidate = std::function<PrepareCandidate(const TunedConfig &config)>;

class CandidateCompiler {
public:
  /// Compiles through `compile`, keeping programs between batches up to
  /// `capacityBytes` by estimated size (TuneOptions::programCacheBytes): small
  /// kernels keep hundreds, a program too large for the budget is not kept. A config
  /// without a device_sched_parallelism is prepared with `schedParallelism`.
  CandidateCompiler(CompileCandidate compile, uint64_t capacityBytes,
                    int schedParallelism = runtime::kDefaultSchedParallelism)
      : compile_(std::move(compile)), capacityBytes_(capacityBytes),
        schedParallelism_(schedParallelism) {}

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
  /// The iterations of a parallel loop in flight `config` runs with.
  int parallelismOf(const TunedConfig &config) const {
    return config.schedParallelism.value_or(schedParallelism_);
  }

  CompileCandidate compile_;
  uint64_t capacityBytes_;
  int schedParallelism_;
  uint64_t cachedBytes_ = 0;
  std::list<Entry> lru_;   // most recently used first
  std::unordered_map<std::string, std::list<Entry>::iterator> index_;
  uint64_t compiles_ = 0;
};

} // namespace ptoc::tune
