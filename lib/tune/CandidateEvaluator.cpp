// Batching, caching, budget and pruning for the search strategies.
#include "CandidateEvaluator.h"

#include <limits>

#include "absl/strings/str_cat.h"

namespace ptoc::tune {

CandidateEvaluator::CandidateEvaluator(const SearchSpace &space, const Evaluate &evaluate,
                                       const Prune &prune, const Progress &progress,
                                       uint64_t budget, std::size_t parallelism,
                                       std::vector<Config> seeds)
    : space_(space), evaluate_(evaluate), prune_(prune), progress_(progress),
      budget_(budget), parallelism_(parallelism), seeds_(std::move(seeds)) {}

absl::StatusOr<std::vector<Config>> CandidateEvaluator::proposeSeeds(std::size_t limit) {
  std::vector<Config> queued;
  for (const Config &seed : seeds_) {
    if (queued.size() >= limit || done()) break;
    absl::StatusOr<Proposal> proposal = propose(seed);
    if (!proposal.ok()) return proposal.status();
    if (*proposal == Proposal::Queued) queued.push_back(seed);
  }
  return queued;
}

bool CandidateEvaluator::done() const {
  if (remaining() == 0) return true;
  return space_.isEnumerable() && states_.size() >= space_.size();
}

absl::StatusOr<CandidateEvaluator::Proposal>
CandidateEvaluator::propose(const Config &config) {
  if (known(config)) return Proposal::Known;
  if (remaining() == 0) return Proposal::OverBudget;
  if (prune_) {
    if (std::optional<std::string> reason = prune_(config)) {
      states_.emplace(config, kPruned);
      pruned_.push_back(PrunedConfig{config, *std::move(reason)});
      return Proposal::Pruned;
    }
  }
  states_.emplace(config, kPending);
  pending_.push_back(config);
  if (pending_.size() >= parallelism_ || remaining() == 0 || done())
    if (absl::Status flushed = flush(); !flushed.ok()) return flushed;
  return Proposal::Queued;
}

absl::Status CandidateEvaluator::flush() {
  if (pending_.empty()) return absl::OkStatus();
  std::vector<Config> batch;
  batch.swap(pending_);
  std::vector<Outcome> outcomes = evaluate_(batch);
  if (outcomes.size() != batch.size())
    return absl::InternalError(absl::StrCat(
        "the tuning evaluate callback returned ", outcomes.size(), " results for a batch of ",
        batch.size(), " configs; it must return one per config (this is a bug in the caller)"));
  for (std::size_t i = 0; i < batch.size(); ++i) {
    std::size_t index = evaluations_.size();
    states_[batch[i]] = static_cast<int64_t>(index);
    const std::optional<double> &time = outcomes[i].micros;
    evaluations_.push_back(Evaluation{batch[i], time,
                                      time ? std::string() : std::move(outcomes[i].invalidReason)});
    // Strictly better only, so the first of equal times stays best.
    if (time && (!best_ || *time < *evaluations_[*best_].micros)) best_ = index;
  }
  if (progress_) {
    SearchProgress report;
    report.evaluationsUsed = evaluations_.size();
    report.evaluationsPlanned = std::min<uint64_t>(budget_, space_.size());
    report.pruned = pruned_.size();
    if (best_) {
      report.bestMicros = evaluations_[*best_].micros;
      report.bestConfig = evaluations_[*best_].config;
    }
    progress_(report);
  }
  return absl::OkStatus();
}

const std::optional<double> *CandidateEvaluator::result(const Config &config) const {
  auto it = states_.find(config);
  if (it == states_.end() || it->second < 0) return nullptr;
  return &evaluations_[it->second].micros;
}

double CandidateEvaluator::cost(const Config &config) const {
  const std::optional<double> *time = result(config);
  if (!time || !*time) return std::numeric_limits<double>::infinity();
  return **time;
}

SearchResult CandidateEvaluator::takeResult(llvm::StringRef strategy, uint64_t seed) {
  SearchResult result;
  result.strategy = strategy.str();
  result.seed = seed;
  result.budget = budget_;
  result.spaceExhausted = space_.isEnumerable() && states_.size() >= space_.size();
  result.evaluations = std::move(evaluations_);
  result.prunedConfigs = std::move(pruned_);
  result.best = best_;
  return result;
}

} // namespace ptoc::tune
