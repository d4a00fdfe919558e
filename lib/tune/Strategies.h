// The strategy entry points behind runSearch (one .cpp each), for lib/tune only.
#pragma once

#include "CandidateEvaluator.h"
#include "ConfigSampler.h"
#include "absl/status/status.h"
#include "ptoc/tune/Search.h"

namespace ptoc::tune {

/// Every config in enumeration order until the budget is spent.
absl::Status gridSearch(const SearchSpace &space, CandidateEvaluator &evaluator);
/// Uniformly random configs without replacement.
absl::Status randomSearch(const SearchSpace &space, SearchRng &rng,
                          CandidateEvaluator &evaluator);
/// The genetic algorithm (see GeneticSearch.cpp).
absl::Status geneticSearch(const SearchSpace &space, const GeneticOptions &options,
                           std::size_t parallelism, SearchRng &rng,
                           CandidateEvaluator &evaluator);
/// The UCB1 bandit over knobs and values (see BanditSearch.cpp).
absl::Status banditSearch(const SearchSpace &space, const BanditOptions &options,
                          std::size_t parallelism, SearchRng &rng,
                          CandidateEvaluator &evaluator);

} // namespace ptoc::tune
