// Seeded random numbers and uniform sampling of not-yet-seen configs, for the strategies.
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <unordered_map>

#include "CandidateEvaluator.h"
#include "ptoc/tune/SearchSpace.h"

namespace ptoc::tune {

/// The strategies' random source. std::mt19937_64's output is fixed by the standard,
/// and the helpers below avoid the implementation-defined std distributions, so a seed
/// gives the same search with any standard library.
class SearchRng {
public:
  explicit SearchRng(uint64_t seed) : engine_(seed) {}
  /// Uniform in [0, n), n > 0 (rejection sampling, no modulo bias).
  uint64_t below(uint64_t n);
  /// Uniform in [0, 1).
  double unit();
  /// A uniformly random config.
  Config config(const SearchSpace &space);

private:
  std::mt19937_64 engine_;
};

/// Draws configs uniformly without replacement, skipping those the evaluator already
/// knows (evaluated, pruned, pending). For an enumerable space it is a lazy
/// Fisher-Yates shuffle of the ordinals (memory grows with the draws, not the space),
/// so it returns every config exactly once before running dry. For a space too large
/// to number, it draws random configs and gives up after kMaxRejections known ones.
class ConfigSampler {
public:
  ConfigSampler(const SearchSpace &space, SearchRng &rng) : space_(space), rng_(rng) {}
  /// The next config not known to `evaluator`, or nullopt when none is left.
  std::optional<Config> next(const CandidateEvaluator &evaluator);

private:
  static constexpr int kMaxRejections = 1000;
  uint64_t ordinalAt(uint64_t position) const;

  const SearchSpace &space_;
  SearchRng &rng_;
  uint64_t drawn_ = 0;
  /// Positions of the virtual permutation that differ from the identity.
  std::unordered_map<uint64_t, uint64_t> swapped_;
};

} // namespace ptoc::tune
