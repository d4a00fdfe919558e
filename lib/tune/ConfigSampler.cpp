// Seeded random numbers and sampling without replacement over a search space.
#include "ConfigSampler.h"

#include <limits>

namespace ptoc::tune {

uint64_t SearchRng::below(uint64_t n) {
  // Reject the top partial copy of [0, n) so every residue is equally likely.
  const uint64_t limit = std::numeric_limits<uint64_t>::max() -
                         std::numeric_limits<uint64_t>::max() % n;
  uint64_t x;
  do {
    x = engine_();
  } while (x >= limit);
  return x % n;
}

double SearchRng::unit() {
  constexpr double kTwoToMinus53 = 1.0 / 9007199254740992.0;
  return static_cast<double>(engine_() >> 11) * kTwoToMinus53;
}

Config SearchRng::config(const SearchSpace &space) {
  Config config(space.numDimensions());
  for (std::size_t i = 0; i < config.size(); ++i)
    config[i] = static_cast<std::size_t>(below(space.dimensions()[i].values.size()));
  return config;
}

uint64_t ConfigSampler::ordinalAt(uint64_t position) const {
  auto it = swapped_.find(position);
  return it == swapped_.end() ? position : it->second;
}

std::optional<Config> ConfigSampler::next(const CandidateEvaluator &evaluator) {
  if (!space_.isEnumerable()) {
    for (int attempt = 0; attempt < kMaxRejections; ++attempt) {
      Config config = rng_.config(space_);
      if (!evaluator.known(config)) return config;
    }
    return std::nullopt;
  }
  const uint64_t size = space_.size();
  while (drawn_ < size) {
    // One step of Fisher-Yates: swap position drawn_ with a random later position.
    uint64_t pick = drawn_ + rng_.below(size - drawn_);
    uint64_t ordinal = ordinalAt(pick);
    swapped_[pick] = ordinalAt(drawn_);
    swapped_.erase(drawn_);
    ++drawn_;
    Config config = space_.configAt(ordinal);
    if (!evaluator.known(config)) return config;
  }
  return std::nullopt;
}

} // namespace ptoc::tune
