// Search strategies over a SearchSpace: grid, random, genetic (ga), bandit (rl), auto.
//
// A strategy never runs anything itself: it hands batches of candidate configs to an
// `Evaluate` callback (the session compiles and simulates them, in parallel on host
// threads) and decides what to try next from the times that come back. So tune never
// calls the session (DESIGN.md: tune sits between profile and session).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "llvm/ADT/StringRef.h"
#include "ptoc/tune/SearchSpace.h"

namespace ptoc::tune {

/// What evaluating one config gave: its simulated time in microseconds, or (no time)
/// why it is invalid: a tile that does not fit, bad alignment, a compile error.
struct Outcome {
  std::optional<double> micros;
  std::string invalidReason;

  Outcome() = default;
  /// A valid config's time.
  Outcome(double us) : micros(us) {}
  static Outcome invalid(std::string reason) {
    Outcome o;
    o.invalidReason = std::move(reason);
    return o;
  }
};

/// Evaluates a batch of candidates: one Outcome per config, in order. Strategies hand
/// out batches of at most `SearchOptions::parallelism` configs, never a config twice,
/// so the callback may evaluate a whole batch concurrently. Returning a vector of the
/// wrong length is an error of the caller and ends the search with a Status.
using Evaluate = std::function<std::vector<Outcome>(const std::vector<Config> &)>;

/// Returns why `config` is known invalid without simulating it (e.g. the tile does not
/// fit the buffer), or nullopt to evaluate it. A pruned config is recorded as pruned
/// with that reason, never evaluated, and does not count against the budget. Called
/// at most once per config, on the search thread.
using Prune = std::function<std::optional<std::string>(const Config &)>;

/// A progress report, sent after every evaluated batch (for a progress bar).
struct SearchProgress {
  uint64_t evaluationsUsed = 0;
  /// The evaluation budget, or the space size if that is smaller.
  uint64_t evaluationsPlanned = 0;
  uint64_t pruned = 0;
  /// The best valid time so far, if any, and its config.
  std::optional<double> bestMicros;
  Config bestConfig;
};
using Progress = std::function<void(const SearchProgress &)>;

/// The search strategies. `Auto` resolves to `Genetic` when the space has a cube
/// dimension and the operator is cube-dominated, otherwise to `Bandit` (CANN
/// AutoTune's split: GA for cube operators, a learned search for vector operators).
enum class Strategy { Auto, Grid, Random, Genetic, Bandit };

/// The user-facing name: "auto", "grid", "random", "ga", "rl".
llvm::StringRef strategyName(Strategy strategy);
/// Parses a user-facing name; the error lists the valid ones.
absl::StatusOr<Strategy> parseStrategy(llvm::StringRef name);
/// What `Auto` becomes for `space` (other strategies map to themselves).
Strategy resolveStrategy(Strategy strategy, const SearchSpace &space, bool cubeDominated);

/// Genetic algorithm defaults (Kernel Tuner's GA uses population 20, mutation chance
/// 1/10 per gene and keeps no elites; we keep the best two so the best-so-far is
/// never lost, and make mutation scale with the number of knobs).
inline constexpr std::size_t kDefaultGaPopulation = 20;
/// A small budget shrinks the population so that at least this many generations fit
/// (with 20 members, a budget of 30 would be two-thirds random sampling)...
inline constexpr std::size_t kGaMinGenerations = 4;
/// ...but never below this many members, so selection still has a choice.
inline constexpr std::size_t kGaMinPopulation = 6;
inline constexpr std::size_t kDefaultGaElites = 2;
inline constexpr std::size_t kDefaultGaTournament = 3;
/// Mutation probability per gene; 0 means automatic: max(1/dims, 1/20).
inline constexpr double kDefaultGaMutationRate = 0.0;
/// The floor of the automatic mutation rate (Kernel Tuner-like 1/20), so a space with
/// many knobs still mutates.
inline constexpr double kGaMinAutoMutationRate = 1.0 / 20.0;
/// A mutated gene steps to a neighbouring value with this probability, else jumps to a
/// uniformly random other value: neighbouring tile sizes tend to behave alike.
inline constexpr double kDefaultGaLocalMutationShare = 0.5;

/// Genetic algorithm options.
struct GeneticOptions {
  /// The largest population; the one used is
  /// max(kGaMinPopulation, budget / kGaMinGenerations) capped by this and the space size.
  std::size_t population = kDefaultGaPopulation;
  std::size_t elites = kDefaultGaElites;
  std::size_t tournament = kDefaultGaTournament;
  double mutationRate = kDefaultGaMutationRate;
  double localMutationShare = kDefaultGaLocalMutationShare;
};

/// UCB1 exploration weight c in mean + c * sqrt(ln N / n) (sqrt(2) is the textbook
/// UCB1 constant for rewards in [0, 1]).
inline constexpr double kDefaultUcbExploration = 1.4142135623730951;

/// Bandit ("rl") options.
struct BanditOptions {
  double exploration = kDefaultUcbExploration;
};

/// How to search.
struct SearchOptions {
  Strategy strategy = Strategy::Auto;
  /// The most configs to evaluate (invalid ones count; pruned ones do not). The search
  /// also stops when every config of the space has been evaluated or pruned.
  uint64_t budget = 64;
  /// Seeds every random choice; the same seed, space, options and callback answers
  /// give the same search.
  uint64_t seed = 0;
  /// The largest batch handed to `Evaluate` at once (the caller's thread count).
  /// Grid, random and ga results do not depend on it; rl proposes a batch from what it
  /// knows before the batch, so its path does.
  std::size_t parallelism = 1;
  /// The operator's time is dominated by cube work (for `Auto`).
  bool cubeDominated = false;
  /// Configs to evaluate first, e.g. the function as written (each must be a config of
  /// the space; they count against the budget): `ga` puts them into its first
  /// generation, `rl` starts its local search from the best of them, `random` tries
  /// them before sampling; `grid` walks the space in order and ignores them.
  std::vector<Config> seeds;
  GeneticOptions genetic;
  BanditOptions bandit;
};

/// One evaluated candidate.
struct Evaluation {
  Config config;
  /// Simulated time in microseconds; nullopt if the config was invalid...
  std::optional<double> micros;
  /// ...and then why.
  std::string invalidReason;
};

/// A config the Prune callback rejected, and why.
struct PrunedConfig {
  Config config;
  std::string reason;
};

/// What a search did.
struct SearchResult {
  /// The strategy that ran ("grid", "random", "ga", "rl"; never "auto").
  std::string strategy;
  uint64_t seed = 0;
  uint64_t budget = 0;
  /// Every evaluated config, in evaluation order, each exactly once.
  std::vector<Evaluation> evaluations;
  /// Configs the Prune callback rejected (never evaluated), in the order seen.
  std::vector<PrunedConfig> prunedConfigs;
  /// Index into `evaluations` of the fastest valid config (the first one on ties), or
  /// nullopt if no evaluated config was valid.
  std::optional<std::size_t> best;
  /// True if every config of the space was evaluated or pruned.
  bool spaceExhausted = false;

  uint64_t evaluationsUsed() const { return evaluations.size(); }
  uint64_t prunedCount() const { return prunedConfigs.size(); }
  const Evaluation *bestEvaluation() const {
    return best ? &evaluations[*best] : nullptr;
  }
};

/// Runs `options.strategy` over `space`. `prune` and `progress` may be empty. Fails
/// only on a malformed request (budget 0, parallelism 0, invalid GA options) or if
/// `evaluate` answers a batch with the wrong number of results.
absl::StatusOr<SearchResult> runSearch(const SearchSpace &space, const Evaluate &evaluate,
                                       const SearchOptions &options,
                                       const Prune &prune = nullptr,
                                       const Progress &progress = nullptr);

} // namespace ptoc::tune
