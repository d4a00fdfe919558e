// runSearch: validates the request, resolves `auto`, and runs one strategy.
#include "ptoc/tune/Search.h"

#include "Strategies.h"
#include "absl/strings/str_cat.h"

namespace ptoc::tune {

llvm::StringRef strategyName(Strategy strategy) {
  switch (strategy) {
  case Strategy::Auto: return "auto";
  case Strategy::Grid: return "grid";
  case Strategy::Random: return "random";
  case Strategy::Genetic: return "ga";
  case Strategy::Bandit: return "rl";
  }
  return "auto";
}

absl::StatusOr<Strategy> parseStrategy(llvm::StringRef name) {
  for (Strategy s : {Strategy::Auto, Strategy::Grid, Strategy::Random, Strategy::Genetic,
                     Strategy::Bandit})
    if (name == strategyName(s)) return s;
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown tuning strategy '", name.str(), "'; use auto, grid, random, ga or rl"));
}

Strategy resolveStrategy(Strategy strategy, const SearchSpace &space, bool cubeDominated) {
  if (strategy != Strategy::Auto) return strategy;
  return space.hasCubeDimension() && cubeDominated ? Strategy::Genetic : Strategy::Bandit;
}

namespace {

absl::Status checkOptions(const SearchOptions &options) {
  if (options.budget == 0)
    return absl::InvalidArgumentError("tuning budget is 0; allow at least one evaluation");
  if (options.parallelism == 0)
    return absl::InvalidArgumentError(
        "tuning parallelism is 0; evaluate at least one config at a time");
  const GeneticOptions &ga = options.genetic;
  if (ga.population == 0)
    return absl::InvalidArgumentError("ga population is 0; use at least 2 (default 20)");
  if (ga.elites >= ga.population)
    return absl::InvalidArgumentError(absl::StrCat(
        "ga keeps ", ga.elites, " elites of a population of ", ga.population,
        ", leaving no room for children; keep fewer elites than the population"));
  if (ga.tournament == 0)
    return absl::InvalidArgumentError("ga tournament size is 0; use at least 1 (default 3)");
  if (!(ga.mutationRate >= 0 && ga.mutationRate <= 1))
    return absl::InvalidArgumentError(absl::StrCat(
        "ga mutation rate ", ga.mutationRate, " is not in [0, 1] (0 = automatic)"));
  if (!(ga.localMutationShare >= 0 && ga.localMutationShare <= 1))
    return absl::InvalidArgumentError(absl::StrCat(
        "ga local mutation share ", ga.localMutationShare, " is not in [0, 1]"));
  if (!(options.bandit.exploration >= 0))
    return absl::InvalidArgumentError(absl::StrCat(
        "rl exploration weight ", options.bandit.exploration, " is negative"));
  return absl::OkStatus();
}

} // namespace

absl::StatusOr<SearchResult> runSearch(const SearchSpace &space, const Evaluate &evaluate,
                                       const SearchOptions &options, const Prune &prune,
                                       const Progress &progress) {
  if (absl::Status valid = checkOptions(options); !valid.ok()) return valid;
  if (!evaluate)
    return absl::InvalidArgumentError("runSearch needs an evaluate callback (it is empty)");
  const Strategy strategy = resolveStrategy(options.strategy, space, options.cubeDominated);
  for (std::size_t i = 0; i < options.seeds.size(); ++i)
    if (!space.isValid(options.seeds[i]))
      return absl::InvalidArgumentError(absl::StrCat(
          "search seed ", i, " is not a config of the space (one value index per knob, each "
          "in range)"));
  CandidateEvaluator evaluator(space, evaluate, prune, progress, options.budget,
                               options.parallelism, options.seeds);
  SearchRng rng(options.seed);
  absl::Status status;
  switch (strategy) {
  case Strategy::Grid: status = gridSearch(space, evaluator); break;
  case Strategy::Random: status = randomSearch(space, rng, evaluator); break;
  case Strategy::Genetic:
    status = geneticSearch(space, options.genetic, options.parallelism, rng, evaluator);
    break;
  case Strategy::Auto: // resolved above; rl is the fallback
  case Strategy::Bandit:
    status = banditSearch(space, options.bandit, options.parallelism, rng, evaluator);
    break;
  }
  if (!status.ok()) return status;
  return evaluator.takeResult(strategyName(strategy), options.seed);
}

} // namespace ptoc::tune
