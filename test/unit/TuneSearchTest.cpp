// Unit tests for lib/tune's search layer: the search space and its JSON, every strategy
// on a small space with a known optimum, the budget, caching, invalid and pruned
// configs, determinism per seed, and the tune_result_*.json file.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <unistd.h>

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "ptoc/tune/Search.h"
#include "ptoc/tune/SearchSpace.h"
#include "ptoc/tune/TuneResult.h"

using namespace ptoc::tune;

namespace {

// 6 x 5 x 4 = 120 configs, shaped like a real space: a vector tile shape, an n-buffer
// count and a scheduler mode.
// GCC 12 reports a false -Wmaybe-uninitialized inside std::variant's vector
// alternative when the dimensions are copied here (a known GCC 12 false positive).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
SearchSpace makeSpace(bool withCube = false) {
  SearchSpace space;
  Dimension tile{"vec_tile[0]", {}, withCube ? DimensionKind::Cube : DimensionKind::Vector};
  for (int64_t rows : {1, 2, 4, 8, 16, 32})
    tile.values.push_back(std::vector<int64_t>{rows, 4096});
  REQUIRE(space.addDimension(tile).ok());
  Dimension nbuf{"vec_nbuffer_setting[0]", {}, DimensionKind::Vector};
  for (int64_t n : {1, 2, 4, 8, 16}) nbuf.values.push_back(n);
  REQUIRE(space.addDimension(nbuf).ok());
  Dimension sched{"device_sched_mode", {}, DimensionKind::Other};
  for (int64_t m : {0, 1, 2, 3}) sched.values.push_back(m);
  REQUIRE(space.addDimension(sched).ok());
  return space;
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

// The optimum of `objective`: config (4, 1, 2), time 100.
constexpr double kOptimum = 100.0;
const Config kOptimalConfig = {4, 1, 2};

// A smooth objective: separable quadratic bowls plus an interaction between the first
// two knobs (positive definite, so the minimum stays at (4, 1, 2)).
double objective(const Config &c) {
  double a = static_cast<double>(c[0]) - 4, b = static_cast<double>(c[1]) - 1,
         s = static_cast<double>(c[2]) - 2;
  return kOptimum + 3 * a * a + 2 * b * b + 4 * s * s + 1.5 * a * b;
}

// An Evaluate callback over `objective` that records every batch it was given.
struct Recorder {
  std::vector<std::vector<Config>> batches;
  std::function<bool(const Config &)> invalid = [](const Config &) { return false; };

  Evaluate callback() {
    return [this](const std::vector<Config> &batch) {
      batches.push_back(batch);
      std::vector<Outcome> outcomes;
      for (const Config &c : batch)
        outcomes.push_back(invalid(c) ? Outcome::invalid("invalid by the test's rule") : Outcome(objective(c)));
      return outcomes;
    };
  }
  std::vector<Config> all() const {
    std::vector<Config> configs;
    for (const auto &b : batches) configs.insert(configs.end(), b.begin(), b.end());
    return configs;
  }
};

SearchResult search(const SearchSpace &space, Strategy strategy, uint64_t budget,
                    uint64_t seed = 0, std::size_t parallelism = 1, Recorder *recorder = nullptr,
                    const Prune &prune = nullptr) {
  Recorder local;
  Recorder &r = recorder ? *recorder : local;
  SearchOptions options;
  options.strategy = strategy;
  options.budget = budget;
  options.seed = seed;
  options.parallelism = parallelism;
  auto result = runSearch(space, r.callback(), options, prune);
  REQUIRE(result.ok());
  return std::move(*result);
}

double bestTime(const SearchResult &result) {
  REQUIRE(result.bestEvaluation() != nullptr);
  return *result.bestEvaluation()->micros;
}

bool allDistinct(const std::vector<Config> &configs) {
  return std::set<Config>(configs.begin(), configs.end()).size() == configs.size();
}

std::vector<Config> evaluatedConfigs(const SearchResult &result) {
  std::vector<Config> configs;
  for (const Evaluation &e : result.evaluations) configs.push_back(e.config);
  return configs;
}

const Strategy kAllStrategies[] = {Strategy::Grid, Strategy::Random, Strategy::Genetic,
                                   Strategy::Bandit};

} // namespace

TEST_CASE("search space: size, ordinals and enumeration order", "[tune]") {
  SearchSpace space = makeSpace();
  CHECK(space.size() == 120);
  CHECK(space.isEnumerable());
  CHECK(space.configAt(0) == Config{0, 0, 0});
  CHECK(space.configAt(1) == Config{0, 0, 1}); // last dimension fastest
  CHECK(space.configAt(119) == Config{5, 4, 3});
  uint64_t ordinal = 0;
  space.enumerate([&](const Config &c) {
    CHECK(c == space.configAt(ordinal));
    CHECK(space.ordinalOf(c) == ordinal);
    ++ordinal;
    return true;
  });
  CHECK(ordinal == 120);
  int visited = 0;
  space.enumerate([&](const Config &) { return ++visited < 7; });
  CHECK(visited == 7);
  CHECK(SearchSpace().size() == 1);
  CHECK_FALSE(space.isValid(Config{6, 0, 0}));
  CHECK_FALSE(space.isValid(Config{0, 0}));
}

TEST_CASE("search space: bad dimensions are refused with a reason", "[tune]") {
  SearchSpace space = makeSpace();
  absl::Status dup = space.addDimension(Dimension{"device_sched_mode", {int64_t{0}}});
  CHECK(dup.message().find("defined twice") != absl::string_view::npos);
  absl::Status empty = space.addDimension(Dimension{"cube_l1_reuse", {}});
  CHECK(empty.message().find("no values") != absl::string_view::npos);
  absl::Status twice =
      space.addDimension(Dimension{"tile", {std::vector<int64_t>{64, 512}, std::vector<int64_t>{64, 512}}});
  CHECK(twice.message().find("twice") != absl::string_view::npos);
  CHECK_FALSE(space.addDimension(Dimension{"", {int64_t{1}}}).ok());
  CHECK(space.numDimensions() == 3);
}

TEST_CASE("search space: config JSON round trip and errors", "[tune]") {
  SearchSpace space = makeSpace();
  Dimension flags{"pg_skip_partition", {false, true}};
  REQUIRE(space.addDimension(flags).ok());
  Dimension names{"mode", {std::string("fifo"), std::string("affinity")}};
  REQUIRE(space.addDimension(names).ok());
  Config config = {3, 4, 1, 1, 0};
  CHECK(space.configToString(config) ==
        R"({"device_sched_mode":1,"mode":"fifo","pg_skip_partition":true,)"
        R"("vec_nbuffer_setting[0]":16,"vec_tile[0]":[8,4096]})");
  auto back = space.configFromJson(llvm::json::Value(space.configToJson(config)));
  REQUIRE(back.ok());
  CHECK(*back == config);
  // Every config survives the trip.
  space.enumerate([&](const Config &c) {
    auto parsed = space.configFromJson(llvm::json::Value(space.configToJson(c)));
    REQUIRE(parsed.ok());
    CHECK(*parsed == c);
    return true;
  });

  llvm::json::Object missing = space.configToJson(config);
  missing.erase("mode");
  auto noMode = space.configFromJson(llvm::json::Value(std::move(missing)));
  CHECK(noMode.status().message().find("lacks knob 'mode'") != absl::string_view::npos);
  llvm::json::Object unknown = space.configToJson(config);
  unknown["bogus"] = 1;
  auto withBogus = space.configFromJson(llvm::json::Value(std::move(unknown)));
  CHECK(withBogus.status().message().find("unknown knob 'bogus'") != absl::string_view::npos);
  llvm::json::Object offList = space.configToJson(config);
  offList["vec_nbuffer_setting[0]"] = 3;
  auto notListed = space.configFromJson(llvm::json::Value(std::move(offList)));
  CHECK(notListed.status().message().find("not one of its 5 candidate values") !=
        absl::string_view::npos);

  auto spaceBack = SearchSpace::fromJson(llvm::json::Value(space.toJson()));
  REQUIRE(spaceBack.ok());
  REQUIRE(spaceBack->numDimensions() == space.numDimensions());
  for (std::size_t d = 0; d < space.numDimensions(); ++d) {
    CHECK(spaceBack->dimensions()[d].name == space.dimensions()[d].name);
    CHECK(spaceBack->dimensions()[d].values == space.dimensions()[d].values);
    CHECK(spaceBack->dimensions()[d].kind == space.dimensions()[d].kind);
  }
}

TEST_CASE("strategy names and the auto choice", "[tune]") {
  for (Strategy s : {Strategy::Auto, Strategy::Grid, Strategy::Random, Strategy::Genetic,
                     Strategy::Bandit}) {
    auto parsed = parseStrategy(strategyName(s));
    REQUIRE(parsed.ok());
    CHECK(*parsed == s);
  }
  CHECK(parseStrategy("annealing").status().message().find("auto, grid, random, ga or rl") !=
        absl::string_view::npos);
  SearchSpace vectorSpace = makeSpace(false), cubeSpace = makeSpace(true);
  CHECK(resolveStrategy(Strategy::Auto, cubeSpace, true) == Strategy::Genetic);
  CHECK(resolveStrategy(Strategy::Auto, cubeSpace, false) == Strategy::Bandit);
  CHECK(resolveStrategy(Strategy::Auto, vectorSpace, true) == Strategy::Bandit);
  CHECK(resolveStrategy(Strategy::Random, cubeSpace, true) == Strategy::Random);
  Recorder recorder;
  SearchOptions options;
  options.budget = 10;
  options.cubeDominated = true;
  CHECK(runSearch(cubeSpace, recorder.callback(), options)->strategy == "ga");
  CHECK(runSearch(vectorSpace, recorder.callback(), options)->strategy == "rl");
}

TEST_CASE("grid search enumerates in order and finds the optimum with the whole space",
          "[tune]") {
  SearchSpace space = makeSpace();
  SearchResult full = search(space, Strategy::Grid, space.size());
  CHECK(full.strategy == "grid");
  CHECK(full.evaluationsUsed() == 120);
  CHECK(full.spaceExhausted);
  CHECK(bestTime(full) == kOptimum);
  CHECK(full.bestEvaluation()->config == kOptimalConfig);
  SearchResult part = search(space, Strategy::Grid, 17);
  REQUIRE(part.evaluationsUsed() == 17);
  for (uint64_t i = 0; i < 17; ++i) CHECK(part.evaluations[i].config == space.configAt(i));
  CHECK_FALSE(part.spaceExhausted);
}

TEST_CASE("random search samples without replacement and finds the optimum with the whole "
          "space", "[tune]") {
  SearchSpace space = makeSpace();
  SearchResult full = search(space, Strategy::Random, space.size(), /*seed=*/7);
  CHECK(full.evaluationsUsed() == 120);
  CHECK(allDistinct(evaluatedConfigs(full)));
  CHECK(bestTime(full) == kOptimum);
  // Not the grid order.
  SearchResult grid = search(space, Strategy::Grid, space.size());
  CHECK(evaluatedConfigs(full) != evaluatedConfigs(grid));
}

TEST_CASE("ga and rl find the exact optimum within half the space", "[tune]") {
  SearchSpace space = makeSpace();
  const uint64_t halfSpace = space.size() / 2;
  for (Strategy strategy : {Strategy::Genetic, Strategy::Bandit}) {
    INFO("strategy " << strategyName(strategy).str());
    SearchResult result = search(space, strategy, halfSpace, /*seed=*/0);
    CHECK(result.evaluationsUsed() == halfSpace);
    CHECK(bestTime(result) == kOptimum);
    CHECK(result.bestEvaluation()->config == kOptimalConfig);

    double sum = 0;
    int exact = 0;
    const int kSeeds = 10;
    for (int seed = 0; seed < kSeeds; ++seed) {
      double best = bestTime(search(space, strategy, halfSpace, seed));
      sum += best;
      exact += best == kOptimum;
    }
    double mean = sum / kSeeds;
    INFO("mean best " << mean << ", exact in " << exact << " of " << kSeeds);
    CHECK(mean <= kOptimum * 1.03);
  }
}

TEST_CASE("rl beats random search on average at a small budget", "[tune]") {
  // Guards the point of the learned search: on a smooth objective, walking from the
  // incumbent must do better than sampling blindly.
  SearchSpace space = makeSpace();
  const uint64_t budget = space.size() / 5;
  double rl = 0, random = 0;
  for (int seed = 0; seed < 10; ++seed) {
    rl += bestTime(search(space, Strategy::Bandit, budget, seed));
    random += bestTime(search(space, Strategy::Random, budget, seed));
  }
  CHECK(rl < random);
}

TEST_CASE("every strategy: budget exact, no config twice, batches within parallelism",
          "[tune]") {
  SearchSpace space = makeSpace();
  for (Strategy strategy : kAllStrategies)
    for (std::size_t parallelism : {std::size_t{1}, std::size_t{3}, std::size_t{8}})
      for (uint64_t budget : {uint64_t{1}, uint64_t{5}, uint64_t{37}, uint64_t{119}}) {
        INFO(strategyName(strategy).str() << " parallelism " << parallelism << " budget "
                                          << budget);
        Recorder recorder;
        SearchResult result = search(space, strategy, budget, 3, parallelism, &recorder);
        CHECK(result.evaluationsUsed() == budget);
        std::vector<Config> sent = recorder.all();
        CHECK(sent.size() == budget);
        CHECK(allDistinct(sent));
        CHECK(sent == evaluatedConfigs(result));
        for (const auto &batch : recorder.batches) {
          CHECK(!batch.empty());
          CHECK(batch.size() <= parallelism);
        }
        // The best is the minimum of what was evaluated.
        double minimum = 1e300;
        for (const Evaluation &e : result.evaluations) minimum = std::min(minimum, *e.micros);
        CHECK(bestTime(result) == minimum);
      }
}

TEST_CASE("every strategy covers a space smaller than its budget and stops", "[tune]") {
  SearchSpace space = makeSpace();
  for (Strategy strategy : kAllStrategies)
    for (std::size_t parallelism : {std::size_t{1}, std::size_t{4}}) {
      INFO(strategyName(strategy).str() << " parallelism " << parallelism);
      SearchResult result = search(space, strategy, 1000, 11, parallelism);
      CHECK(result.evaluationsUsed() == space.size());
      CHECK(allDistinct(evaluatedConfigs(result)));
      CHECK(result.spaceExhausted);
      CHECK(bestTime(result) == kOptimum);
    }
}

TEST_CASE("every strategy is deterministic per seed", "[tune]") {
  SearchSpace space = makeSpace();
  for (Strategy strategy : kAllStrategies) {
    INFO(strategyName(strategy).str());
    SearchResult a = search(space, strategy, 40, 5, 2);
    SearchResult b = search(space, strategy, 40, 5, 2);
    CHECK(evaluatedConfigs(a) == evaluatedConfigs(b));
    CHECK(a.best == b.best);
    if (strategy == Strategy::Grid) continue;
    // Another seed takes another path.
    bool differs = false;
    for (uint64_t seed = 6; seed < 10 && !differs; ++seed)
      differs = evaluatedConfigs(search(space, strategy, 40, seed, 2)) != evaluatedConfigs(a);
    CHECK(differs);
  }
}

TEST_CASE("grid, random and ga do not depend on the batch size", "[tune]") {
  SearchSpace space = makeSpace();
  for (Strategy strategy : {Strategy::Grid, Strategy::Random, Strategy::Genetic}) {
    INFO(strategyName(strategy).str());
    CHECK(evaluatedConfigs(search(space, strategy, 50, 2, 1)) ==
          evaluatedConfigs(search(space, strategy, 50, 2, 6)));
  }
}

TEST_CASE("invalid configs count as evaluated and never win", "[tune]") {
  SearchSpace space = makeSpace();
  for (Strategy strategy : kAllStrategies) {
    INFO(strategyName(strategy).str());
    Recorder recorder;
    // The unconstrained optimum and its row of tile shapes are invalid (do not fit).
    recorder.invalid = [](const Config &c) { return c[0] >= 4; };
    SearchResult result = search(space, strategy, 90, 1, 2, &recorder);
    CHECK(result.evaluationsUsed() == 90);
    std::size_t invalid = 0;
    for (const Evaluation &e : result.evaluations) invalid += !e.micros;
    CHECK(invalid > 0);
    REQUIRE(result.bestEvaluation());
    CHECK(result.bestEvaluation()->config[0] < 4);
    // The best valid config: (3, 1, 2) with 3 + 2*0 + 0 + 1.5*(-1)*0 = 103.
    CHECK(bestTime(result) == Approx(103.0));
  }
  // Everything invalid: no best, and the search still spends exactly its budget.
  for (Strategy strategy : kAllStrategies) {
    INFO(strategyName(strategy).str());
    Recorder recorder;
    recorder.invalid = [](const Config &) { return true; };
    SearchResult result = search(space, strategy, 30, 1, 1, &recorder);
    CHECK(result.evaluationsUsed() == 30);
    CHECK_FALSE(result.best.has_value());
    CHECK(allDistinct(evaluatedConfigs(result)));
  }
}

TEST_CASE("pruned configs are never evaluated and do not count against the budget", "[tune]") {
  SearchSpace space = makeSpace();
  // Scheduler mode 3 is "known invalid" (a quarter of the space).
  Prune prune = [](const Config &c) -> std::optional<std::string> {
    if (c[2] == 3) return "mode 3 is known invalid";
    return std::nullopt;
  };
  for (Strategy strategy : kAllStrategies) {
    INFO(strategyName(strategy).str());
    Recorder recorder;
    SearchResult result = search(space, strategy, 50, 4, 3, &recorder, prune);
    CHECK(result.evaluationsUsed() == 50);
    for (const Config &c : recorder.all()) CHECK(c[2] != 3);
    CHECK(result.prunedCount() > 0);
    std::vector<Config> pruned;
    for (const PrunedConfig &p : result.prunedConfigs) {
      CHECK(p.config[2] == 3);
      CHECK(p.reason == "mode 3 is known invalid");
      pruned.push_back(p.config);
    }
    CHECK(allDistinct(pruned));

    // With budget to spare, the whole unpruned part is evaluated and the rest pruned.
    SearchResult all = search(space, strategy, 1000, 4, 3, nullptr, prune);
    CHECK(all.evaluationsUsed() == 90);
    CHECK(all.prunedCount() == 30);
    CHECK(all.spaceExhausted);
    CHECK(bestTime(all) == kOptimum);
  }
}

TEST_CASE("progress reports follow the search", "[tune]") {
  SearchSpace space = makeSpace();
  std::vector<SearchProgress> reports;
  SearchOptions options;
  options.strategy = Strategy::Genetic;
  options.budget = 30;
  options.parallelism = 4;
  Recorder recorder;
  auto result = runSearch(space, recorder.callback(), options, nullptr,
                          [&](const SearchProgress &p) { reports.push_back(p); });
  REQUIRE(result.ok());
  REQUIRE(reports.size() == recorder.batches.size());
  for (std::size_t i = 1; i < reports.size(); ++i) {
    CHECK(reports[i].evaluationsUsed > reports[i - 1].evaluationsUsed);
    CHECK(*reports[i].bestMicros <= *reports[i - 1].bestMicros);
  }
  CHECK(reports.back().evaluationsUsed == 30);
  CHECK(reports.back().evaluationsPlanned == 30);
  CHECK(*reports.back().bestMicros == bestTime(*result));
  CHECK(reports.back().bestConfig == result->bestEvaluation()->config);
}

TEST_CASE("malformed requests and a misbehaving callback are errors, not crashes", "[tune]") {
  SearchSpace space = makeSpace();
  Recorder recorder;
  SearchOptions options;
  options.budget = 0;
  CHECK(runSearch(space, recorder.callback(), options).status().message().find("budget is 0") !=
        absl::string_view::npos);
  options.budget = 10;
  options.parallelism = 0;
  CHECK_FALSE(runSearch(space, recorder.callback(), options).ok());
  options.parallelism = 1;
  options.genetic.elites = options.genetic.population;
  options.strategy = Strategy::Genetic;
  CHECK(runSearch(space, recorder.callback(), options).status().message().find("elites") !=
        absl::string_view::npos);
  options.genetic = GeneticOptions{};
  Evaluate shortAnswer = [](const std::vector<Config> &) {
    return std::vector<Outcome>{};
  };
  auto wrong = runSearch(space, shortAnswer, options);
  CHECK(wrong.status().message().find("one per config") != absl::string_view::npos);
}

TEST_CASE("tune result file: name, contents and round trip", "[tune]") {
  SearchSpace space = makeSpace();
  Recorder recorder;
  recorder.invalid = [](const Config &c) { return c[1] == 4; };
  SearchOptions options;
  options.strategy = Strategy::Bandit;
  options.budget = 25;
  options.seed = 9;
  auto result = runSearch(space, recorder.callback(), options,
                          [](const Config &c) -> std::optional<std::string> {
                            if (c[2] == 0) return "mode 0 is pruned here";
                            return std::nullopt;
                          });
  REQUIRE(result.ok());

  llvm::SmallString<128> folder;
  REQUIRE(!llvm::sys::fs::createUniqueDirectory("tune-result-test", folder));
  auto path = writeTuneResult(space, *result, folder);
  REQUIRE(path.ok());
  std::string name = llvm::sys::path::filename(*path).str();
  CHECK(std::regex_match(name, std::regex(R"(tune_result_\d{8}_\d{6}_pid\d+\.json)")));
  CHECK(name.find("_pid" + std::to_string(getpid()) + ".json") != std::string::npos);
  // A second write in the same second gets its own file.
  auto second = writeTuneResult(space, *result, folder);
  REQUIRE(second.ok());
  CHECK(*second != *path);

  auto buffer = llvm::MemoryBuffer::getFile(*path);
  REQUIRE(buffer);
  std::string text = (*buffer)->getBuffer().str();
  auto json = llvm::json::parse(text);
  REQUIRE(bool(json));
  // The file is streamed; its text is what llvm::json prints of it (keys sorted,
  // indented by two).
  CHECK(text == llvm::formatv("{0:2}", *json).str() + "\n");
  const llvm::json::Object &root = *json->getAsObject();
  CHECK(root.getString("strategy") == llvm::StringRef("rl"));
  CHECK(root.getInteger("evaluations_used") == int64_t{25});
  CHECK(root.getInteger("pruned") == static_cast<int64_t>(result->prunedCount()));
  CHECK(root.getArray("evaluations")->size() == 25);
  CHECK(*root.getObject("best")->getNumber("time_us") == bestTime(*result));

  auto parsed = parseTuneResult(text);
  REQUIRE(parsed.ok());
  CHECK(parsed->space.numDimensions() == 3);
  const SearchResult &back = parsed->result;
  CHECK(back.strategy == "rl");
  CHECK(back.seed == 9);
  CHECK(back.budget == 25);
  CHECK(back.best == result->best);
  REQUIRE(back.prunedConfigs.size() == result->prunedConfigs.size());
  for (std::size_t i = 0; i < back.prunedConfigs.size(); ++i) {
    CHECK(back.prunedConfigs[i].config == result->prunedConfigs[i].config);
    CHECK(back.prunedConfigs[i].reason == result->prunedConfigs[i].reason);
  }
  REQUIRE(back.evaluations.size() == result->evaluations.size());
  bool sawInvalid = false;
  for (std::size_t i = 0; i < back.evaluations.size(); ++i) {
    CHECK(back.evaluations[i].config == result->evaluations[i].config);
    CHECK(back.evaluations[i].micros == result->evaluations[i].micros);
    CHECK(back.evaluations[i].invalidReason == result->evaluations[i].invalidReason);
    if (!back.evaluations[i].micros) CHECK(back.evaluations[i].invalidReason == "invalid by the test's rule");
    sawInvalid |= !back.evaluations[i].micros;
  }
  CHECK(sawInvalid);

  CHECK(parseTuneResult("{\"format\": \"other\"}").status().message().find("format") !=
        absl::string_view::npos);
  CHECK_FALSE(parseTuneResult("not json").ok());
  llvm::sys::fs::remove_directories(folder);
}

TEST_CASE("seed configs are evaluated first, rl searches around the best seed", "[tune]") {
  SearchSpace space = makeSpace();
  // A seed next to the optimum (one scheduler step away).
  const Config nearOptimum = {4, 1, 3};
  for (Strategy strategy : {Strategy::Random, Strategy::Genetic, Strategy::Bandit}) {
    INFO(strategyName(strategy).str());
    Recorder recorder;
    SearchOptions options;
    options.strategy = strategy;
    options.budget = 12;
    options.parallelism = 4;
    options.seeds = {nearOptimum, {0, 0, 0}};
    auto result = runSearch(space, recorder.callback(), options);
    REQUIRE(result.ok());
    REQUIRE(!recorder.batches.empty());
    const std::vector<Config> &first = recorder.batches.front();
    REQUIRE(first.size() >= 2);
    CHECK(first[0] == nearOptimum);
    CHECK(first[1] == Config{0, 0, 0});
    // Seeds count against the budget and are never evaluated twice.
    CHECK(result->evaluationsUsed() == 12);
    CHECK(allDistinct(recorder.all()));
    if (strategy == Strategy::Bandit) {
      // One knob step from the seed is the optimum: the local search finds it.
      CHECK(bestTime(*result) == kOptimum);
    }
  }
  // Grid walks the space in order whatever the seeds.
  Recorder grid;
  SearchOptions options;
  options.strategy = Strategy::Grid;
  options.budget = 3;
  options.seeds = {nearOptimum};
  auto result = runSearch(space, grid.callback(), options);
  REQUIRE(result.ok());
  CHECK(grid.all().front() == Config{0, 0, 0});

  // A seed outside the space is an error of the caller.
  options.seeds = {{9, 0, 0}};
  auto bad = runSearch(space, grid.callback(), options);
  REQUIRE(!bad.ok());
  CHECK_THAT(std::string(bad.status().message()), Catch::Contains("seed 0 is not a config"));
}
