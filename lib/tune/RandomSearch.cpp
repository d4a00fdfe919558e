// Random search: uniformly random configs, each at most once, up to the budget.
#include "Strategies.h"

namespace ptoc::tune {

absl::Status randomSearch(const SearchSpace &space, SearchRng &rng,
                          CandidateEvaluator &evaluator) {
  ConfigSampler sampler(space, rng);
  if (auto seeds = evaluator.proposeSeeds(); !seeds.ok()) return seeds.status();
  while (!evaluator.done()) {
    std::optional<Config> config = sampler.next(evaluator);
    if (!config) break;
    if (auto proposal = evaluator.propose(*config); !proposal.ok()) return proposal.status();
  }
  return evaluator.flush();
}

} // namespace ptoc::tune
