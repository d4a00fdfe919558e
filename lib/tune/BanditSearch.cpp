// Bandit search ("rl"): a sequential decision search over the knobs with UCB1 arms.
//
// The search keeps an incumbent (the best valid config so far) and improves it one
// knob at a time, learning as it goes which knobs pay off and which values are good:
//  - one UCB1 arm per knob; its reward is 1 when a move of that knob improved the
//    incumbent, else 0 (which knobs are worth touching);
//  - one UCB1 arm per (knob, value); its reward is min(1, incumbent time / new time),
//    0 for an invalid or pruned config (which values are good, relative to the
//    incumbent of the moment).
// Each step scores every not-yet-seen single-knob move from the incumbent by the sum
// of its knob's and its value's UCB1 index (mean + c * sqrt(ln N / n), an untried arm
// scores kUntriedScore; ties go to the value nearest the incumbent's, so the search
// walks neighbouring tile sizes first) and proposes the best `parallelism` of them.
// When every single-knob move from the incumbent is seen (a coordinate-wise local
// optimum), it scores two-knob moves the same way, which escapes optima caused by
// interacting knobs; when those run out too, it tries uniformly random unseen
// configs. Before any valid config is known it samples randomly.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>

#include "Strategies.h"

namespace ptoc::tune {
namespace {

/// The index of an arm nobody has pulled: above any pulled arm's mean + bonus for any
/// realistic number of pulls, so every arm is tried once before any is repeated.
constexpr double kUntriedScore = 10.0;

struct Arm {
  double pulls = 0;
  double reward = 0;
};

struct Move {
  Config config;
  double score = 0;
  /// The knobs changed (one or two).
  std::vector<std::size_t> dims;
  /// Sum of |new index - incumbent index| over the changed knobs.
  std::size_t distance = 0;
};

class Bandit {
public:
  Bandit(const SearchSpace &space, const BanditOptions &options, std::size_t parallelism,
         SearchRng &rng, CandidateEvaluator &evaluator)
      : options_(options), parallelism_(parallelism), evaluator_(evaluator), sampler_(space, rng), knobArms_(space.numDimensions()),
        valueArms_(space.numDimensions()) {
    for (std::size_t d = 0; d < space.numDimensions(); ++d)
      valueArms_[d].resize(space.dimensions()[d].values.size());
  }

  absl::Status run() {
    // The seeds first: the local search starts from the best of them.
    if (auto seeds = evaluator_.proposeSeeds(); !seeds.ok()) return seeds.status();
    if (absl::Status flushed = evaluator_.flush(); !flushed.ok()) return flushed;
    while (!evaluator_.done()) {
      const Evaluation *best = evaluator_.best();
      if (!best) {
        // Nothing valid yet: explore at random.
        std::size_t before = evaluator_.knownCount();
        if (absl::Status s = proposeRandom(); !s.ok()) return s;
        if (evaluator_.knownCount() == before) break; // the sampler ran dry
        continue;
      }
      const Config incumbent = best->config;
      const double incumbentCost = *best->micros;
      std::vector<Move> moves = singleMoves(incumbent);
      if (moves.empty()) moves = pairMoves(incumbent);
      if (moves.empty()) {
        std::size_t before = evaluator_.knownCount();
        if (absl::Status s = proposeRandom(); !s.ok()) return s;
        if (evaluator_.knownCount() == before) break; // space used up
        continue;
      }
      std::stable_sort(moves.begin(), moves.end(), [](const Move &a, const Move &b) {
        if (a.score != b.score) return a.score > b.score;
        return a.distance < b.distance;
      });
      const std::size_t batch = static_cast<std::size_t>(
          std::min<uint64_t>(parallelism_, evaluator_.remaining()));
      std::vector<const Move *> proposed;
      std::vector<const Move *> pruned;
      for (const Move &move : moves) {
        if (proposed.size() >= batch || evaluator_.done()) break;
        auto proposal = evaluator_.propose(move.config);
        if (!proposal.ok()) return proposal.status();
        if (*proposal == CandidateEvaluator::Proposal::Queued) proposed.push_back(&move);
        if (*proposal == CandidateEvaluator::Proposal::Pruned) pruned.push_back(&move);
      }
      if (absl::Status s = evaluator_.flush(); !s.ok()) return s;
      for (const Move *move : pruned) learn(*move, incumbentCost);
      for (const Move *move : proposed) learn(*move, incumbentCost);
      if (proposed.empty() && pruned.empty()) break; // defensive: no progress possible
    }
    return evaluator_.flush();
  }

private:
  double ucb(const Arm &arm, double totalPulls) const {
    if (arm.pulls == 0) return kUntriedScore;
    return arm.reward / arm.pulls +
           options_.exploration * std::sqrt(std::log(std::max(totalPulls, 1.0)) / arm.pulls);
  }

  double knobPulls() const {
    double total = 0;
    for (const Arm &arm : knobArms_) total += arm.pulls;
    return total;
  }

  double moveScore(std::size_t d, std::size_t v, double totalKnobPulls) const {
    return ucb(knobArms_[d], totalKnobPulls) + ucb(valueArms_[d][v], knobArms_[d].pulls);
  }

  std::vector<Move> singleMoves(const Config &incumbent) const {
    std::vector<Move> moves;
    const double total = knobPulls();
    for (std::size_t d = 0; d < incumbent.size(); ++d)
      for (std::size_t v = 0; v < valueArms_[d].size(); ++v) {
        if (v == incumbent[d]) continue;
        Config config = incumbent;
        config[d] = v;
        if (evaluator_.known(config)) continue;
        std::size_t distance = v > incumbent[d] ? v - incumbent[d] : incumbent[d] - v;
        moves.push_back(Move{std::move(config), moveScore(d, v, total), {d}, distance});
      }
    return moves;
  }

  std::vector<Move> pairMoves(const Config &incumbent) const {
    std::vector<Move> moves;
    const double total = knobPulls();
    for (std::size_t d1 = 0; d1 < incumbent.size(); ++d1)
      for (std::size_t d2 = d1 + 1; d2 < incumbent.size(); ++d2)
        for (std::size_t v1 = 0; v1 < valueArms_[d1].size(); ++v1) {
          if (v1 == incumbent[d1]) continue;
          for (std::size_t v2 = 0; v2 < valueArms_[d2].size(); ++v2) {
            if (v2 == incumbent[d2]) continue;
            Config config = incumbent;
            config[d1] = v1;
            config[d2] = v2;
            if (evaluator_.known(config)) continue;
            std::size_t distance =
                (v1 > incumbent[d1] ? v1 - incumbent[d1] : incumbent[d1] - v1) +
                (v2 > incumbent[d2] ? v2 - incumbent[d2] : incumbent[d2] - v2);
            double score = moveScore(d1, v1, total) + moveScore(d2, v2, total);
            moves.push_back(Move{std::move(config), score, {d1, d2}, distance});
          }
        }
    return moves;
  }

  /// Updates the arms of `move` from its result (pruned or invalid: reward 0).
  void learn(const Move &move, double incumbentCost) {
    const double cost = evaluator_.cost(move.config);
    const bool improved = cost < incumbentCost;
    const double reward = std::isinf(cost) ? 0.0 : std::min(1.0, incumbentCost / cost);
    for (std::size_t d : move.dims) {
      knobArms_[d].pulls += 1;
      knobArms_[d].reward += improved ? 1.0 : 0.0;
      Arm &value = valueArms_[d][move.config[d]];
      value.pulls += 1;
      value.reward += reward;
    }
  }

  /// Proposes up to `parallelism` uniformly random unseen configs and evaluates them.
  absl::Status proposeRandom() {
    std::size_t queued = 0;
    while (queued < parallelism_ && !evaluator_.done()) {
      std::optional<Config> config = sampler_.next(evaluator_);
      if (!config) break;
      auto proposal = evaluator_.propose(*config);
      if (!proposal.ok()) return proposal.status();
      if (*proposal == CandidateEvaluator::Proposal::Queued) ++queued;
    }
    return evaluator_.flush();
  }

  const BanditOptions &options_;
  std::size_t parallelism_;
  CandidateEvaluator &evaluator_;
  ConfigSampler sampler_;
  std::vector<Arm> knobArms_;
  std::vector<std::vector<Arm>> valueArms_;
};

} // namespace

absl::Status banditSearch(const SearchSpace &space, const BanditOptions &options,
                          std::size_t parallelism, SearchRng &rng,
                          CandidateEvaluator &evaluator) {
  return Bandit(space, options, parallelism, rng, evaluator).run();
}

} // namespace ptoc::tune
