// Grid search: the space in enumeration order (last knob fastest) up to the budget.
#include "Strategies.h"

namespace ptoc::tune {

absl::Status gridSearch(const SearchSpace &space, CandidateEvaluator &evaluator) {
  absl::Status status;
  space.enumerate([&](const Config &config) {
    auto proposal = evaluator.propose(config);
    if (!proposal.ok()) {
      status = proposal.status();
      return false;
    }
    return !evaluator.done();
  });
  if (!status.ok()) return status;
  return evaluator.flush();
}

} // namespace ptoc::tune
