// Genetic search ("ga"): a population of configs evolved by tournament selection,
// uniform crossover, per-gene mutation and elitism.
//
// One generation: keep the `elites` cheapest members, then breed children until the
// population is full again. A child whose config was already evaluated (or is already
// in this generation) is mutated again, up to kMaxDuplicateRetries times, and then
// replaced by a uniformly random config nobody has seen; so every generation spends
// its evaluations on new configs, nothing is evaluated twice, and when the budget
// exceeds the space the search ends having covered all of it. Costs are simulated
// times; invalid and pruned configs cost +infinity and so lose every tournament.
#include <algorithm>
#include <limits>

#include "Strategies.h"

namespace ptoc::tune {
namespace {

/// How often a duplicate child is re-mutated before it is replaced by a random one.
constexpr int kMaxDuplicateRetries = 8;

struct Member {
  Config config;
  double cost = std::numeric_limits<double>::infinity();
};

class Genetic {
public:
  Genetic(const SearchSpace &space, const GeneticOptions &options, SearchRng &rng,
          CandidateEvaluator &evaluator)
      : space_(space), options_(options), rng_(rng), evaluator_(evaluator),
        sampler_(space, rng) {
    double automatic = space.numDimensions() == 0
                           ? 1.0
                           : std::max(1.0 / static_cast<double>(space.numDimensions()),
                                      kGaMinAutoMutationRate);
    mutationRate_ = options.mutationRate > 0 ? options.mutationRate : automatic;
  }

  absl::Status run() {
    const uint64_t budgetShare =
        std::max<uint64_t>(kGaMinPopulation, evaluator_.remaining() / kGaMinGenerations);
    const std::size_t populationSize = static_cast<std::size_t>(
        std::min<uint64_t>({options_.population, budgetShare, space_.size()}));
    // The first generation: the seeds, then distinct random configs.
    absl::StatusOr<std::vector<Config>> seeds = evaluator_.proposeSeeds(populationSize);
    if (!seeds.ok()) return seeds.status();
    std::vector<Config> first = *std::move(seeds);
    while (first.size() < populationSize && !evaluator_.done()) {
      std::optional<Config> config = sampler_.next(evaluator_);
      if (!config) break;
      auto proposal = evaluator_.propose(*config);
      if (!proposal.ok()) return proposal.status();
      if (*proposal == CandidateEvaluator::Proposal::Queued) first.push_back(*config);
    }
    if (absl::Status flushed = evaluator_.flush(); !flushed.ok()) return flushed;
    population_ = withCosts(first);

    while (!evaluator_.done() && !population_.empty()) {
      // Stable: among equal costs the older member stays ahead, deterministically.
      std::stable_sort(population_.begin(), population_.end(),
                       [](const Member &a, const Member &b) { return a.cost < b.cost; });
      std::vector<Member> next(population_.begin(),
                               population_.begin() +
                                   std::min(options_.elites, population_.size()));
      const std::size_t wanted = populationSize > next.size() ? populationSize - next.size() : 1;
      std::vector<Config> children;
      while (children.size() < wanted && !evaluator_.done()) {
        std::optional<Config> child = breed();
        if (!child) break;
        auto proposal = evaluator_.propose(*child);
        if (!proposal.ok()) return proposal.status();
        if (*proposal == CandidateEvaluator::Proposal::Queued) children.push_back(*child);
        if (*proposal == CandidateEvaluator::Proposal::OverBudget) break;
      }
      if (absl::Status flushed = evaluator_.flush(); !flushed.ok()) return flushed;
      if (children.empty()) break; // nothing new can be bred or sampled
      for (Member &m : withCosts(children)) next.push_back(std::move(m));
      population_ = std::move(next);
    }
    return evaluator_.flush();
  }

private:
  std::vector<Member> withCosts(const std::vector<Config> &configs) const {
    std::vector<Member> members;
    for (const Config &c : configs) members.push_back(Member{c, evaluator_.cost(c)});
    return members;
  }

  const Member &tournament() {
    const Member *winner = nullptr;
    for (std::size_t i = 0; i < options_.tournament; ++i) {
      const Member &m = population_[rng_.below(population_.size())];
      if (!winner || m.cost < winner->cost) winner = &m;
    }
    return *winner;
  }

  /// Changes gene `d` to another value: a neighbour or a uniformly random one.
  void mutateGene(Config &config, std::size_t d) {
    const std::size_t n = space_.dimensions()[d].values.size();
    if (n < 2) return;
    if (rng_.unit() < options_.localMutationShare) {
      bool up = rng_.below(2) == 0;
      if (config[d] == 0) up = true;
      if (config[d] + 1 == n) up = false;
      config[d] = up ? config[d] + 1 : config[d] - 1;
    } else {
      std::size_t other = static_cast<std::size_t>(rng_.below(n - 1));
      config[d] = other >= config[d] ? other + 1 : other;
    }
  }

  /// A new child not known to the evaluator, or nullopt if none can be found.
  std::optional<Config> breed() {
    const Config &a = tournament().config;
    const Config &b = tournament().config;
    Config child(a.size());
    for (std::size_t d = 0; d < child.size(); ++d) child[d] = rng_.below(2) ? a[d] : b[d];
    for (std::size_t d = 0; d < child.size(); ++d)
      if (rng_.unit() < mutationRate_) mutateGene(child, d);
    for (int retry = 0; retry < kMaxDuplicateRetries && evaluator_.known(child); ++retry) {
      if (child.empty()) break;
      mutateGene(child, static_cast<std::size_t>(rng_.below(child.size())));
    }
    if (!evaluator_.known(child)) return child;
    return sampler_.next(evaluator_);
  }

  const SearchSpace &space_;
  const GeneticOptions &options_;
  SearchRng &rng_;
  CandidateEvaluator &evaluator_;
  ConfigSampler sampler_;
  double mutationRate_ = 0;
  std::vector<Member> population_;
};

} // namespace

absl::Status geneticSearch(const SearchSpace &space, const GeneticOptions &options,
                           std::size_t /*parallelism*/, SearchRng &rng,
                           CandidateEvaluator &evaluator) {
  return Genetic(space, options, rng, evaluator).run();
}

} // namespace ptoc::tune
