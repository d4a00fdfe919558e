// Tuning quality: for each example operator (matmul, attention, softmax, layernorm, mlp
// on the a2 preset), the best time each search strategy finds at budgets of 10% and
// 25% of the derived space and at the tuner's default budget (64), against the
// exhaustive optimum of that space, averaged over seeds, with random search at the
// same budget for comparison. Goals (issue 7): `ga` within 3% of the optimum at 25%
// budget on matmul and attention, `rl` within 3% on softmax and layernorm, and a bank
// hit costs zero evaluations. (mlp has no goal; it is measured for information.)
//
// Build and run:
//   ninja -C build bench_tune_quality && build/benchmarks/bench_tune_quality
//   build/benchmarks/bench_tune_quality --only=softmax         (one operator)
//   build/benchmarks/bench_tune_quality --seeds=20             (seeds 0..19; default 10)
//   build/benchmarks/bench_tune_quality --max-space=1400000    (attention's whole derived
//                                                               space, 1,347,840 configs;
//                                                               1,198,080 took about 20 min
//                                                               on 2 cores)
//   build/benchmarks/bench_tune_quality --no-start             (searches start from
//                                                               nothing, not the written
//                                                               config)
//   build/benchmarks/bench_tune_quality --parallelism=1        (rl batch size; default
//                                                               the machine's threads)
//   build/benchmarks/bench_tune_quality --examples=DIR         (where the .pto files are)
//
// How: every config of the space is compiled and simulated once, through the tuner
// itself (session::tuneModule, strategy grid, budget = space size, no bank), in
// parallel on the machine's threads. Each strategy's search then runs with
// tune::runSearch over the same space with a lookup table of those times as its
// evaluation callback, so the many seeds cost no simulation. A space larger than
// --max-space (default 5000) is cut to the sub-space with its cube merge counts held
// at the written value (attention's derived space, 1,347,840 configs, becomes 89,856,
// enumerated in about 110 s on 2 cores); if that is still larger, the operator is
// reported as skipped and its goal as not measured. Searches start from the function as written, as `ptoc tune` does. The bank check tunes softmax twice with a temporary
// bank and prints the second run's evaluations.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "ptoc/session/Session.h"
#include "ptoc/session/Tuner.h"
#include "ptoc/tune/Search.h"
#include "ptoc/tune/SearchSpace.h"

using namespace ptoc;

namespace {

constexpr const char *kDevice = "a2";
constexpr const char *kOperators[] = {"matmul", "attention", "softmax", "layernorm", "mlp"};
/// Budgets as fractions of the space size (rounded up)...
constexpr double kBudgetFractions[] = {0.10, 0.25};
/// ...and the tuner's default budget (what `ptoc tune` and `ptoc.tune` spend unless
/// told otherwise).
const uint64_t kDefaultBudget = tune::SearchOptions().budget;
/// The goals: a strategy's mean best / optimum at 25% budget.
constexpr double kGoalBudgetFraction = 0.25;
constexpr double kGoalRatio = 1.03;
constexpr uint64_t kDefaultSeeds = 10;
/// Spaces above this many configs take too long to enumerate by default (about 1 ms of
/// compile + simulate per config and core on attention, where four scheduler modes
/// share a compile).
constexpr uint64_t kDefaultMaxSpace = 100000;
/// The budget of the two bank-check tunings (any small number: the second run must
/// use none of it).
constexpr uint64_t kBankCheckBudget = 8;
constexpr const char *kBankCheckOperator = "softmax";
/// Two times this close are the same optimum (the simulator is deterministic, but the
/// times pass through floating point sums).
constexpr double kSameTimeTolerance = 1e-9;

const tune::Strategy kStrategies[] = {tune::Strategy::Random, tune::Strategy::Genetic,
                                      tune::Strategy::Bandit, tune::Strategy::Auto};

struct Args {
  std::string only;
  uint64_t seeds = kDefaultSeeds;
  uint64_t maxSpace = kDefaultMaxSpace;
  std::size_t parallelism = 0;   ///< 0 = the machine's threads (as `ptoc tune`)
  std::string examples;
  /// Start each search from the function as written, as `ptoc tune` does (--no-start:
  /// from nothing, as in session 3's figures).
  bool startFromWritten = true;
};

/// The examples folder next to this file's folder (the source tree).
std::string defaultExamplesDir() {
  llvm::SmallString<256> dir(__FILE__);
  llvm::sys::path::remove_filename(dir);   // benchmarks/
  llvm::sys::path::remove_filename(dir);   // the source root
  llvm::sys::path::append(dir, "examples");
  return std::string(dir);
}

/// One strategy at one budget over all seeds.
struct Row {
  std::string strategy;   ///< as asked ("auto" shows what it resolved to)
  uint64_t budget = 0;
  double meanRatio = 0;
  double worstRatio = 0;
  unsigned optimumHits = 0;
};

/// What one operator measured.
struct OperatorResult {
  std::string name;
  uint64_t spaceSize = 0;
  /// The derived space was too large and the cube merge knobs were held at the written
  /// value (no merging): the size of the full derived space.
  uint64_t fullSpaceSize = 0;
  bool skipped = false;
  std::string skipReason;
  uint64_t valid = 0;
  double optimumUs = 0;
  double exhaustiveSeconds = 0;
  uint64_t exhaustiveCompiles = 0;
  std::vector<Row> rows;
};

/// A temporary folder removed when it goes out of scope.
struct TempDir {
  std::string path;
  TempDir() {
    llvm::SmallString<128> p;
    if (!llvm::sys::fs::createUniqueDirectory("ptoc-tune-quality", p)) path = std::string(p);
  }
  ~TempDir() {
    if (!path.empty()) llvm::sys::fs::remove_directories(path);
  }
};

std::optional<std::string> readFile(const std::string &path) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer) return std::nullopt;
  return std::string((*buffer)->getBuffer());
}

/// Every config of a space, timed.
struct Exhaustive {
  std::vector<std::optional<double>> times;   ///< by ordinal (nullopt = invalid)
  uint64_t compiles = 0;
  bool cubeDominated = false;                 ///< what the tuner's `auto` decided
};

/// Evaluates every config of `space` for the function of `text` through the tuner.
absl::StatusOr<Exhaustive> exhaustive(const session::Session &session, const std::string &text,
                                      const tune::SearchSpace &space, const std::string &name) {
  TempDir results;
  session::TuneOptions options;
  options.search.strategy = tune::Strategy::Grid;
  options.search.budget = space.size();
  options.useBank = false;
  options.resultDir = results.path;
  uint64_t nextReport = 0;
  const uint64_t step = std::max<uint64_t>(1, space.size() / 10);
  options.progress = [&](const tune::SearchProgress &p) {
    if (p.evaluationsUsed < nextReport) return;
    std::fprintf(stderr, "%s: exhaustive %llu/%llu\n", name.c_str(),
                 static_cast<unsigned long long>(p.evaluationsUsed),
                 static_cast<unsigned long long>(p.evaluationsPlanned));
    nextReport = p.evaluationsUsed + step;
  };
  absl::StatusOr<session::TuneReport> report = session::tuneModule(session, text, options, &space);
  if (!report.ok()) return report.status();
  if (!report->result.spaceExhausted || report->result.evaluations.size() != space.size())
    return absl::InternalError(absl::StrCat("the grid run evaluated ",
                                            report->result.evaluations.size(), " of ",
                                            space.size(), " configs"));
  Exhaustive out;
  out.times.resize(space.size());
  for (const tune::Evaluation &e : report->result.evaluations)
    out.times[space.ordinalOf(e.config)] = e.micros;
  out.compiles = report->compiles;
  out.cubeDominated = report->cubeDominated;
  return out;
}

absl::StatusOr<OperatorResult> measureOperator(const session::Session &session,
                                               const std::string &name, const Args &args) {
  OperatorResult out;
  out.name = name;
  std::string path = args.examples + "/" + name + ".pto";
  std::optional<std::string> text = readFile(path);
  if (!text) return absl::NotFoundError(absl::StrCat("cannot read ", path, " (try --examples=DIR)"));
  absl::StatusOr<tune::SearchSpace> space = session::deriveSearchSpace(session, *text);
  if (!space.ok()) return space.status();
  out.spaceSize = space->size();
  if (!space->isEnumerable() || space->size() > args.maxSpace) {
    // Too large: hold the cube merge counts at the written value (their dimensions
    // dropped: no cube merging) and measure that sub-space if it fits.
    tune::SearchSpace reduced;
    for (const tune::Dimension &d : space->dimensions())
      if (!llvm::StringRef(d.name).startswith("cube_nbuffer"))
        if (absl::Status s = reduced.addDimension(d); !s.ok()) return s;
    if (reduced.size() < space->size() && reduced.isEnumerable() &&
        reduced.size() <= args.maxSpace) {
      out.fullSpaceSize = space->size();
      out.spaceSize = reduced.size();
      *space = std::move(reduced);
    } else {
      out.skipped = true;
      out.skipReason = absl::StrCat("space of ", space->size(), " configs (", reduced.size(),
                                    " with cube merges as written) > --max-space=",
                                    args.maxSpace, "; not enumerated");
      return out;
    }
  }

  auto start = std::chrono::steady_clock::now();
  absl::StatusOr<Exhaustive> all = exhaustive(session, *text, *space, name);
  if (!all.ok()) return all.status();
  out.exhaustiveCompiles = all->compiles;
  const std::vector<std::optional<double>> &times = all->times;
  out.exhaustiveSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  double optimum = std::numeric_limits<double>::infinity();
  for (const std::optional<double> &t : times)
    if (t) {
      ++out.valid;
      optimum = std::min(optimum, *t);
    }
  if (out.valid == 0) return absl::InternalError(absl::StrCat(name, ": no config of the space is valid"));
  out.optimumUs = optimum;

  const tune::SearchSpace &theSpace = *space;
  tune::Evaluate lookup = [&](const std::vector<tune::Config> &batch) {
    std::vector<tune::Outcome> answer;
    answer.reserve(batch.size());
    for (const tune::Config &c : batch) {
      const std::optional<double> &t = times[theSpace.ordinalOf(c)];
      answer.push_back(t ? tune::Outcome(*t) : tune::Outcome::invalid("invalid in the exhaustive run"));
    }
    return answer;
  };
  // As the tuner does: start from the function as written.
  std::optional<tune::Config> written = tune::writtenConfig(theSpace, *text, {});
  // As the tuner decides for `auto` (from the written function's run: more busy time
  // on the cube cores than on the vector cores).
  const bool cubeDominated = all->cubeDominated;
  const std::size_t parallelism =
      args.parallelism ? args.parallelism : std::max(1u, std::thread::hardware_concurrency());
  std::vector<uint64_t> budgets;
  for (double fraction : kBudgetFractions)
    budgets.push_back(static_cast<uint64_t>(std::ceil(fraction * static_cast<double>(out.spaceSize))));
  if (kDefaultBudget < out.spaceSize &&
      std::find(budgets.begin(), budgets.end(), kDefaultBudget) == budgets.end())
    budgets.push_back(kDefaultBudget);
  std::sort(budgets.begin(), budgets.end());
  for (uint64_t budget : budgets) {
    for (tune::Strategy strategy : kStrategies) {
      Row row;
      row.budget = budget;
      row.strategy = tune::strategyName(strategy).str();
      if (strategy == tune::Strategy::Auto)
        row.strategy += absl::StrCat(
            "(", tune::strategyName(tune::resolveStrategy(strategy, theSpace, cubeDominated)).str(),
            ")");
      double sum = 0;
      for (uint64_t seed = 0; seed < args.seeds; ++seed) {
        tune::SearchOptions options;
        options.strategy = strategy;
        options.budget = budget;
        options.seed = seed;
        options.parallelism = parallelism;
        options.cubeDominated = cubeDominated;
        if (args.startFromWritten && written) options.seeds.push_back(*written);
        absl::StatusOr<tune::SearchResult> result = tune::runSearch(theSpace, lookup, options);
        if (!result.ok()) return result.status();
        const tune::Evaluation *best = result->bestEvaluation();
        double ratio = best ? *best->micros / optimum : std::numeric_limits<double>::infinity();
        sum += ratio;
        row.worstRatio = std::max(row.worstRatio, ratio);
        if (best && *best->micros <= optimum * (1 + kSameTimeTolerance)) ++row.optimumHits;
      }
      row.meanRatio = sum / static_cast<double>(args.seeds);
      out.rows.push_back(row);
    }
  }
  return out;
}

/// The evaluations of a second tuning of the same function with the same bank (a bank
/// hit), or an error.
struct BankCheck {
  uint64_t firstEvaluations = 0;
  uint64_t secondEvaluations = 0;
  bool secondHit = false;
};

absl::StatusOr<BankCheck> checkBank(const session::Session &session, const Args &args) {
  std::string path = args.examples + "/" + kBankCheckOperator + ".pto";
  std::optional<std::string> text = readFile(path);
  if (!text) return absl::NotFoundError(absl::StrCat("cannot read ", path, " (try --examples=DIR)"));
  TempDir dir;
  if (dir.path.empty()) return absl::InternalError("cannot create a temporary folder");
  session::TuneOptions options;
  options.search.budget = kBankCheckBudget;
  options.bankPath = dir.path + "/bank";
  options.resultDir = dir.path;
  BankCheck check;
  absl::StatusOr<session::TuneReport> first = session::tuneModule(session, *text, options);
  if (!first.ok()) return first.status();
  check.firstEvaluations = first->result.evaluationsUsed();
  absl::StatusOr<session::TuneReport> second = session::tuneModule(session, *text, options);
  if (!second.ok()) return second.status();
  check.secondEvaluations = second->result.evaluationsUsed();
  check.secondHit = second->bankHit;
  return check;
}

const Row *findRow(const OperatorResult &r, llvm::StringRef strategy, uint64_t budget) {
  for (const Row &row : r.rows)
    if (row.budget == budget && llvm::StringRef(row.strategy).startswith(strategy)) return &row;
  return nullptr;
}

} // namespace

int main(int argc, char **argv) {
  Args args;
  args.examples = defaultExamplesDir();
  for (int i = 1; i < argc; ++i) {
    llvm::StringRef a(argv[i]);
    if (a.consume_front("--only=")) args.only = a.str();
    else if (a.consume_front("--seeds=")) args.seeds = std::max(1ll, std::atoll(a.data()));
    else if (a.consume_front("--max-space=")) args.maxSpace = std::max(1ll, std::atoll(a.data()));
    else if (a.consume_front("--parallelism=")) args.parallelism = std::max(1ll, std::atoll(a.data()));
    else if (a.consume_front("--examples=")) args.examples = a.str();
    else if (a == "--no-start") args.startFromWritten = false;
    else {
      std::fprintf(stderr,
                   "usage: %s [--only=NAME] [--seeds=N] [--max-space=N] [--parallelism=N] "
                   "[--examples=DIR] [--no-start]\n",
                   argv[0]);
      return 2;
    }
  }
  absl::StatusOr<session::Session> session = session::Session::create(kDevice);
  if (!session.ok()) {
    std::fprintf(stderr, "%s\n", std::string(session.status().message()).c_str());
    return 1;
  }

  std::vector<OperatorResult> results;
  for (const char *name : kOperators) {
    if (!args.only.empty() && args.only != name) continue;
    absl::StatusOr<OperatorResult> r = measureOperator(*session, name, args);
    if (!r.ok()) {
      std::fprintf(stderr, "%s: %s\n", name, std::string(r.status().message()).c_str());
      return 1;
    }
    results.push_back(*std::move(r));
  }
  if (results.empty()) {
    std::fprintf(stderr,
                 "--only=%s names no operator (matmul, attention, softmax, layernorm, mlp)\n",
                 args.only.c_str());
    return 2;
  }

  std::printf("device %s, seeds 0..%llu, rl/ga batch %zu, searches start %s; ratio = best found / "
              "exhaustive optimum\n",
              kDevice, static_cast<unsigned long long>(args.seeds - 1),
              args.parallelism ? args.parallelism
                               : std::max<std::size_t>(1, std::thread::hardware_concurrency()),
              args.startFromWritten ? "from the function as written" : "from nothing (--no-start)");
  std::printf("%-10s %7s %6s %11s %-10s %7s %10s %10s %9s %12s\n", "operator", "space", "valid",
              "optimum_us", "strategy", "budget", "mean", "worst", "hit_rate", "random_mean");
  for (const OperatorResult &r : results) {
    if (r.skipped) {
      std::printf("%-10s %7llu  skipped: %s\n", r.name.c_str(),
                  static_cast<unsigned long long>(r.spaceSize), r.skipReason.c_str());
      continue;
    }
    for (const Row &row : r.rows) {
      const Row *random = findRow(r, "random", row.budget);
      std::printf("%-10s %7llu %6llu %11.3f %-10s %7llu %10.4f %10.4f %9.2f %12.4f\n",
                  r.name.c_str(), static_cast<unsigned long long>(r.spaceSize),
                  static_cast<unsigned long long>(r.valid), r.optimumUs, row.strategy.c_str(),
                  static_cast<unsigned long long>(row.budget), row.meanRatio, row.worstRatio,
                  static_cast<double>(row.optimumHits) / static_cast<double>(args.seeds),
                  random ? random->meanRatio : 0.0);
    }
    std::printf("%-10s exhaustive: %llu configs (%llu compiles) in %.1f s\n", r.name.c_str(),
                static_cast<unsigned long long>(r.spaceSize),
                static_cast<unsigned long long>(r.exhaustiveCompiles), r.exhaustiveSeconds);
    if (r.fullSpaceSize)
      std::printf("%-10s (a sub-space: the cube merge counts held as written; the derived space "
                  "has %llu configs)\n",
                  r.name.c_str(), static_cast<unsigned long long>(r.fullSpaceSize));
  }

  std::printf("\nGOALS\n");
  struct Goal {
    const char *op;
    const char *strategy;
  };
  const Goal goals[] = {{"matmul", "ga"}, {"attention", "ga"}, {"softmax", "rl"}, {"layernorm", "rl"}};
  for (const Goal &g : goals) {
    const OperatorResult *r = nullptr;
    for (const OperatorResult &x : results)
      if (x.name == g.op) r = &x;
    if (!r) continue;
    if (r->skipped) {
      std::printf("NOT MEASURED  %s within 3%% at 25%% budget on %s: %s\n", g.strategy, g.op,
                  r->skipReason.c_str());
      continue;
    }
    uint64_t budget = static_cast<uint64_t>(
        std::ceil(kGoalBudgetFraction * static_cast<double>(r->spaceSize)));
    const Row *row = findRow(*r, g.strategy, budget);
    if (!row) continue;
    std::printf("%-12s  %s within 3%% at 25%% budget on %s: mean %.4f (%+.2f%%), worst %.4f\n",
                row->meanRatio <= kGoalRatio ? "PASS" : "MISS", g.strategy, g.op, row->meanRatio,
                100.0 * (row->meanRatio - 1.0), row->worstRatio);
  }
  absl::StatusOr<BankCheck> bank = checkBank(*session, args);
  if (!bank.ok()) {
    std::printf("MISS          a bank hit costs zero evaluations: %s\n",
                std::string(bank.status().message()).c_str());
    return 1;
  }
  bool pass = bank->secondHit && bank->secondEvaluations == 0;
  std::printf("%-12s  a bank hit costs zero evaluations: %s tuned twice with one bank: %llu then "
              "%llu evaluations (second run %s)\n",
              pass ? "PASS" : "MISS", kBankCheckOperator,
              static_cast<unsigned long long>(bank->firstEvaluations),
              static_cast<unsigned long long>(bank->secondEvaluations),
              bank->secondHit ? "a bank hit" : "not a bank hit");
  return 0;
}
