// The bookkeeping every strategy shares: batches, the budget, the result cache, pruning.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "ptoc/tune/Search.h"

namespace ptoc::tune {

/// Collects a strategy's proposals into batches of at most `parallelism`, sends them to
/// the Evaluate callback, and remembers every answer, so no config is ever evaluated
/// twice and the budget is respected exactly. Pruned configs are remembered too and
/// cost nothing.
class CandidateEvaluator {
public:
  CandidateEvaluator(const SearchSpace &space, const Evaluate &evaluate, const Prune &prune,
                     const Progress &progress, uint64_t budget, std::size_t parallelism,
                     std::vector<Config> seeds = {});

  /// What became of a proposal.
  enum class Proposal {
    Queued,     ///< new: added to the pending batch (which is evaluated when full)
    Known,      ///< already evaluated, pruned or pending: nothing to do
    Pruned,     ///< new, but the Prune callback rejected it
    OverBudget, ///< new, but the budget is spent
  };
  /// Proposes `config`; evaluates the pending batch once it is full. Errors come only
  /// from a misbehaving Evaluate callback.
  absl::StatusOr<Proposal> propose(const Config &config);
  /// Evaluates the pending batch now (strategies that need results before going on).
  absl::Status flush();
  /// Proposes the search's seed configs (SearchOptions::seeds), at most `limit` of
  /// them; returns the ones queued (new ones). Does not flush.
  absl::StatusOr<std::vector<Config>> proposeSeeds(std::size_t limit = SIZE_MAX);

  /// Evaluations still allowed, counting pending ones as spent.
  uint64_t remaining() const { return budget_ - evaluations_.size() - pending_.size(); }
  /// True if the budget is spent or every config is evaluated, pruned or pending.
  bool done() const;
  /// True if `config` was evaluated, pruned or is pending.
  bool known(const Config &config) const { return states_.count(config) != 0; }
  /// How many configs were evaluated, pruned or are pending.
  std::size_t knownCount() const { return states_.size(); }
  /// The result of an evaluated config: its time or nullopt (invalid); nullptr if it
  /// was not evaluated (unknown, pending or pruned).
  const std::optional<double> *result(const Config &config) const;
  /// A cost to minimise: the time if evaluated and valid, else +infinity.
  double cost(const Config &config) const;
  /// The best valid evaluation so far, or nullptr.
  const Evaluation *best() const {
    return best_ ? &evaluations_[*best_] : nullptr;
  }
  const std::vector<Evaluation> &evaluations() const { return evaluations_; }

  /// Moves the record out into a SearchResult.
  SearchResult takeResult(llvm::StringRef strategy, uint64_t seed);

private:
  static constexpr int64_t kPending = -1;
  static constexpr int64_t kPruned = -2;

  const SearchSpace &space_;
  const Evaluate &evaluate_;
  const Prune &prune_;
  const Progress &progress_;
  uint64_t budget_;
  std::size_t parallelism_;
  std::vector<Config> seeds_;
  /// Config -> index into evaluations_, or kPending / kPruned.
  std::map<Config, int64_t> states_;
  std::vector<Config> pending_;
  std::vector<Evaluation> evaluations_;
  std::vector<PrunedConfig> pruned_;
  std::optional<std::size_t> best_;
};

} // namespace ptoc::tune
