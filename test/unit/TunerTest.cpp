// The tuner (session/Tuner.h): derived spaces hold the written config and only shapes
// that compile, configs rewrite the tile attributes, every strategy finds the optimum of
// a small space, and the bank answers a repeated tuning without evaluations.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "ptoc/runtime/Simulator.h"
#include "ptoc/session/Session.h"
#include "ptoc/session/Tuner.h"
#include "ptoc/target/DeviceSpec.h"
#include "ptoc/tune/TuneResult.h"

using namespace ptoc;

namespace {

constexpr const char *kSoftmax = R"(
func @softmax(%x: tensor<32x256xf32>) -> tensor<32x256xf32> {
  %m = amax %x {axes = [1], keepdim = true, vec_tile = [8, 256]} : tensor<32x1xf32>
  %d = sub %x, %m {vec_tile = [8, 256]} : tensor<32x256xf32>
  %e = exp %d {vec_tile = [8, 256]} : tensor<32x256xf32>
  %s = sum %e {axes = [1], keepdim = true, vec_tile = [8, 256]} : tensor<32x1xf32>
  %y = div %e, %s {vec_tile = [8, 256]} : tensor<32x256xf32>
  return %y
}
)";

/// The same operator at another shape (another bank key).
constexpr const char *kSoftmaxWide = R"(
func @softmax(%x: tensor<64x256xf32>) -> tensor<64x256xf32> {
  %m = amax %x {axes = [1], keepdim = true, vec_tile = [8, 256]} : tensor<64x1xf32>
  %d = sub %x, %m {vec_tile = [8, 256]} : tensor<64x256xf32>
  %e = exp %d {vec_tile = [8, 256]} : tensor<64x256xf32>
  %s = sum %e {axes = [1], keepdim = true, vec_tile = [8, 256]} : tensor<64x1xf32>
  %y = div %e, %s {vec_tile = [8, 256]} : tensor<64x256xf32>
  return %y
}
)";

constexpr const char *kMatmul = R"(
func @mm(%a: tensor<64x128xf16>, %b: tensor<128x64xf16>) -> tensor<64x64xf32> {
  %c = matmul %a, %b {cube_tile = {m = [32, 32], k = [32, 64], n = [32, 32]}} : tensor<64x64xf32>
  return %c
}
)";

/// A matmul and an elementwise chain over a large tensor: most core time is on the
/// vector cores.
constexpr const char *kVectorHeavy = R"(
func @mixed(%a: tensor<32x64xf16>, %b: tensor<64x32xf16>, %x: tensor<256x1024xf32>) -> (tensor<32x32xf32>, tensor<256x1024xf32>) {
  %c = matmul %a, %b {cube_tile = {m = [32, 32], k = [32, 64], n = [32, 32]}} : tensor<32x32xf32>
  %e = exp %x {vec_tile = [2, 1024]} : tensor<256x1024xf32>
  %f = mul %e, %x {vec_tile = [2, 1024]} : tensor<256x1024xf32>
  %g = div %f, %e {vec_tile = [2, 1024]} : tensor<256x1024xf32>
  return %c, %g
}
)";

/// A larger matmul and a small elementwise op: most core time is on the cube cores.
constexpr const char *kCubeHeavy = R"(
func @mixed(%a: tensor<128x256xf16>, %b: tensor<256x128xf16>, %x: tensor<8x1024xf32>) -> (tensor<128x128xf32>, tensor<8x1024xf32>) {
  %c = matmul %a, %b {cube_tile = {m = [32, 32], k = [32, 128], n = [32, 32]}} : tensor<128x128xf32>
  %e = exp %x {vec_tile = [2, 1024]} : tensor<8x1024xf32>
  return %c, %e
}
)";

session::Session tinySession() {
  absl::StatusOr<session::Session> s = session::Session::create("tiny");
  REQUIRE(s.ok());
  return *s;
}

/// `text` compiled in `s` with pass knobs `knobs`: a candidate's module and knobs, or
/// a kernel as written with its own.
session::Kernel compileWith(const session::Session &s, llvm::StringRef text,
                            const passes::PassKnobs &knobs) {
  session::CompileOptions compile;
  compile.knobs = knobs;
  absl::StatusOr<session::Kernel> k = s.compileText(text, "cand.pto", compile);
  INFO(k.status().message());
  REQUIRE(k.ok());
  return *std::move(k);
}

const tune::Dimension &dimension(const tune::SearchSpace &space, llvm::StringRef name) {
  int i = space.findDimension(name);
  REQUIRE(i >= 0);
  return space.dimensions()[i];
}

bool contains(const tune::Dimension &dim, const tune::KnobValue &v) {
  return std::find(dim.values.begin(), dim.values.end(), v) != dim.values.end();
}

/// The config of `space` with `value` in dimension `name` and the first value elsewhere.
tune::Config configWith(const tune::SearchSpace &space,
                        const std::vector<std::pair<std::string, tune::KnobValue>> &values) {
  tune::Config c(space.numDimensions(), 0);
  for (const auto &[name, value] : values) {
    int i = space.findDimension(name);
    REQUIRE(i >= 0);
    const auto &vals = space.dimensions()[i].values;
    auto it = std::find(vals.begin(), vals.end(), value);
    REQUIRE(it != vals.end());
    c[i] = it - vals.begin();
  }
  return c;
}

/// A small space over the softmax's tile and two scheduler modes (fast to exhaust).
tune::SearchSpace smallSoftmaxSpace(const session::Session &s) {
  absl::StatusOr<tune::SearchSpace> derived = session::deriveSearchSpace(s, kSoftmax);
  REQUIRE(derived.ok());
  tune::SearchSpace space;
  REQUIRE(space.addDimension(dimension(*derived, "vec_tile[0]")).ok());
  REQUIRE(space
              .addDimension({"device_sched_mode", {int64_t(0), int64_t(1)},
                             tune::DimensionKind::Other})
              .ok());
  return space;
}

/// A fresh temporary folder, removed with everything in it when the test ends.
struct TempDir {
  std::string path;
  TempDir() {
    llvm::SmallString<128> dir;
    REQUIRE(!llvm::sys::fs::createUniqueDirectory("ptoc-tuner-test", dir));
    path = std::string(dir);
  }
  ~TempDir() { (void)llvm::sys::fs::remove_directories(path); }
};

/// Options for a search of `budget` configs on two threads, with no bank, writing its
/// tune_result into `results`.
session::TuneOptions searchOptions(const TempDir &results, uint64_t budget,
                                   tune::Strategy strategy = tune::Strategy::Auto) {
  session::TuneOptions options;
  options.useBank = false;
  options.threads = 2;
  options.resultDir = results.path;
  options.search.budget = budget;
  options.search.strategy = strategy;
  return options;
}

/// searchOptions, with a bank in `temp` (read and written).
session::TuneOptions bankOptions(const TempDir &temp, uint64_t budget,
                                 tune::Strategy strategy) {
  session::TuneOptions options = searchOptions(temp, budget, strategy);
  options.useBank = true;
  options.bankPath = temp.path + "/bank";
  return options;
}

} // namespace

TEST_CASE("derived vector space: the written tile plus variants that compile", "[tuner]") {
  session::Session s = tinySession();
  absl::StatusOr<tune::SearchSpace> space = session::deriveSearchSpace(s, kSoftmax);
  REQUIRE(space.ok());
  const tune::Dimension &tile = dimension(*space, "vec_tile[0]");
  CHECK(tile.kind == tune::DimensionKind::Vector);
  CHECK(contains(tile, std::vector<int64_t>{8, 256}));
  CHECK(contains(tile, std::vector<int64_t>{4, 256}));
  CHECK(contains(tile, std::vector<int64_t>{8, 128}));
  // 32x256 fp32 x 3 buffers (sub, div) = 96 KiB: more than tiny's 32 KiB of UB.
  CHECK(!contains(tile, std::vector<int64_t>{32, 256}));
  // Sorted, no duplicates.
  CHECK(std::is_sorted(tile.values.begin(), tile.values.end()));
  CHECK(std::adjacent_find(tile.values.begin(), tile.values.end()) == tile.values.end());
  // One merge-count knob per group of the written function (one AIV group of 4 here),
  // with counts up to the group's size and the default pipeline's "auto".
  const tune::Dimension &nbuffer = dimension(*space, "vec_nbuffer[0]");
  CHECK(nbuffer.kind == tune::DimensionKind::Vector);
  CHECK(nbuffer.values == std::vector<tune::KnobValue>{std::string("auto"), int64_t(1),
                                                       int64_t(2), int64_t(4)});
  CHECK(space->findDimension("vec_nbuffer[1]") == -1);
  CHECK(dimension(*space, "device_sched_mode").values.size() == 4);
  CHECK(space->findDimension("cube_tile[0]") == -1);
  CHECK(space->isEnumerable());
  CHECK(space->size() == tile.values.size() * nbuffer.values.size() * 4);

  // Every candidate tile compiles (the verifier and expand-tiles accept it).
  for (const tune::KnobValue &v : tile.values) {
    absl::StatusOr<session::TunedConfig> applied = tune::applyConfig(
        *space, configWith(*space, {{"vec_tile[0]", v}}), kSoftmax, {});
    REQUIRE(applied.ok());
    absl::StatusOr<session::Kernel> k = s.compileText(applied->moduleText, "cand.pto");
    INFO(tune::knobValueToString(v));
    CHECK(k.ok());
  }
}

TEST_CASE("derived cube space: written tile and valid variants", "[tuner]") {
  session::Session s = tinySession();
  absl::StatusOr<tune::SearchSpace> space = session::deriveSearchSpace(s, kMatmul);
  REQUIRE(space.ok());
  const tune::Dimension &tile = dimension(*space, "cube_tile[0]");
  CHECK(tile.kind == tune::DimensionKind::Cube);
  CHECK(space->hasCubeDimension());
  CHECK(contains(tile, std::vector<int64_t>{32, 32, 32, 64, 32, 32}));
  CHECK(tile.values.size() > 1);
  // No vector op: no vector merge-count knob; the AIC group (4 members) has one, with
  // no "auto" (the default pipeline merges cube groups only in loop bodies: 1 is the
  // written one).
  CHECK(space->findDimension("vec_nbuffer[0]") == -1);
  const tune::Dimension &merge = dimension(*space, "cube_nbuffer[0]");
  CHECK(merge.kind == tune::DimensionKind::Cube);
  CHECK(merge.values == std::vector<tune::KnobValue>{int64_t(1), int64_t(2), int64_t(4)});
  absl::StatusOr<session::TunedConfig> merged = tune::applyConfig(
      *space,
      configWith(*space, {{"cube_tile[0]", std::vector<int64_t>{32, 32, 32, 64, 32, 32}},
                          {"cube_nbuffer[0]", int64_t(2)}}),
      kMatmul, {});
  REQUIRE(merged.ok());
  CHECK(std::get<int64_t>(merged->knobs.values().at("cube_nbuffer_mode")) == 2);
  // Groups without a count (none here) stay unmerged, as written.
  CHECK(std::get<passes::GroupSetting>(merged->knobs.values().at("cube_nbuffer_setting")) ==
        passes::GroupSetting{{-1, 1}, {0, 2}});
  // All counts 1 is the written config: the cube merge stays at its default (off
  // outside loop bodies).
  absl::StatusOr<session::TunedConfig> ones = tune::applyConfig(
      *space,
      configWith(*space, {{"cube_tile[0]", std::vector<int64_t>{32, 32, 32, 64, 32, 32}},
                          {"cube_nbuffer[0]", int64_t(1)}}),
      kMatmul, {});
  REQUIRE(ones.ok());
  CHECK(ones->knobs.values().count("cube_nbuffer_mode") == 0);
  // ... also when the base knobs merge AIC groups: the config turns that off.
  passes::PassKnobs merging;
  REQUIRE(merging.set("cube_nbuffer_mode", int64_t(1)).ok());
  absl::StatusOr<session::TunedConfig> onesOverBase = tune::applyConfig(
      *space, configWith(*space, {{"cube_nbuffer[0]", int64_t(1)}}), kMatmul, merging);
  REQUIRE(onesOverBase.ok());
  CHECK(std::get<int64_t>(onesOverBase->knobs.values().at("cube_nbuffer_mode")) == 0);
  session::CompileOptions mergedCompile;
  mergedCompile.knobs = merged->knobs;
  absl::StatusOr<session::Kernel> two = s.compileText(merged->moduleText, "cand.pto", mergedCompile);
  absl::StatusOr<session::Kernel> written = s.compileText(kMatmul, "mm.pto");
  REQUIRE(two.ok());
  REQUIRE(written.ok());
  CHECK(written->stats.aicSubgraphs == 4);
  CHECK(two->stats.aicSubgraphs == 2);
  for (const tune::KnobValue &v : tile.values) {
    absl::StatusOr<session::TunedConfig> applied = tune::applyConfig(
        *space, configWith(*space, {{"cube_tile[0]", v}}), kMatmul, {});
    REQUIRE(applied.ok());
    INFO(tune::knobValueToString(v));
    CHECK(s.compileText(applied->moduleText, "cand.pto").ok());
  }
}

TEST_CASE("applyConfig rewrites tiles, knobs and the scheduler mode", "[tuner]") {
  session::Session s = tinySession();
  absl::StatusOr<tune::SearchSpace> space = session::deriveSearchSpace(s, kSoftmax);
  REQUIRE(space.ok());
  tune::Config c = configWith(*space, {{"vec_tile[0]", std::vector<int64_t>{4, 256}},
                                       {"vec_nbuffer[0]", std::string("auto")},
                                       {"device_sched_mode", int64_t(2)}});
  absl::StatusOr<session::TunedConfig> applied = tune::applyConfig(*space, c, kSoftmax, {});
  REQUIRE(applied.ok());
  CHECK(applied->schedMode == 2);
  REQUIRE(applied->knobs.values().count("vec_nbuffer_mode"));
  CHECK(std::get<int64_t>(applied->knobs.values().at("vec_nbuffer_mode")) == 1);
  CHECK(applied->configJson.find("\"vec_tile[0]\":[4,256]") != std::string::npos);
  absl::StatusOr<session::Kernel> k = s.compileText(applied->moduleText, "cand.pto");
  REQUIRE(k.ok());
  const std::string &tensorIr = k->irByStage.at(session::Stage::Tensor);
  CHECK(tensorIr.find("vec_tile = [4, 256]") != std::string::npos);
  CHECK(tensorIr.find("vec_tile = [8, 256]") == std::string::npos);

  tune::Config merge4 = configWith(*space, {{"vec_nbuffer[0]", int64_t(4)}});
  absl::StatusOr<session::TunedConfig> m = tune::applyConfig(*space, merge4, kSoftmax, {});
  REQUIRE(m.ok());
  CHECK(std::get<int64_t>(m->knobs.values().at("vec_nbuffer_mode")) == 2);
  CHECK(std::get<passes::GroupSetting>(m->knobs.values().at("vec_nbuffer_setting")) ==
        passes::GroupSetting{{0, 4}});
}

TEST_CASE("custom-space knobs: whole-function tiles, every-group merges, pass options",
          "[tuner]") {
  session::Session s = tinySession();
  tune::SearchSpace space;
  REQUIRE(space.addDimension({"vec_tile", {std::vector<int64_t>{2, 256}}}).ok());
  REQUIRE(space.addDimension({"vec_nbuffer", {int64_t(2)}}).ok());
  REQUIRE(space.addDimension({"pg_lower_bound", {int64_t(64)}}).ok());
  REQUIRE(space.addDimension({"fuse_local", {false}}).ok());
  absl::StatusOr<session::TunedConfig> applied =
      tune::applyConfig(space, tune::Config{0, 0, 0, 0}, kSoftmax, {});
  REQUIRE(applied.ok());
  CHECK(applied->moduleText.find("vec_tile = [2, 256]") != std::string::npos);
  CHECK(applied->moduleText.find("vec_tile = [8, 256]") == std::string::npos);
  const auto &knobs = applied->knobs.values();
  CHECK(std::get<passes::GroupSetting>(knobs.at("vec_nbuffer_setting")) == passes::GroupSetting{{-1, 2}});
  CHECK(std::get<int64_t>(knobs.at("pg_lower_bound")) == 64);
  CHECK(std::get<bool>(knobs.at("fuse_local")) == false);

  // A knob of the wrong kind, a map-valued option and an unknown name are errors that
  // say what to use instead.
  auto errorOf = [&](tune::Dimension dim) {
    tune::SearchSpace bad;
    REQUIRE(bad.addDimension(std::move(dim)).ok());
    absl::StatusOr<session::TunedConfig> r =
        tune::applyConfig(bad, tune::Config{0}, kSoftmax, {});
    REQUIRE(!r.ok());
    return std::string(r.status().message());
  };
  CHECK_THAT(errorOf({"pg_lower_bound", {std::string("big")}}),
             Catch::Contains("'pg_lower_bound' = \"big\": the pass option takes an integer"));
  CHECK_THAT(errorOf({"vec_nbuffer_setting", {int64_t(2)}}),
             Catch::Contains("vec_nbuffer[k]"));
  CHECK_THAT(errorOf({"vec_tiles", {int64_t(2)}}),
             Catch::Contains("unknown config knob 'vec_tiles'"));
  CHECK_THAT(errorOf({"cube_tile", {std::vector<int64_t>{16, 16, 16, 16, 16, 16}}}),
             Catch::Contains("the function has no cube_tile shapes"));
  CHECK_THAT(errorOf({"cube_nbuffer[0]", {std::string("auto")}}),
             Catch::Contains("\"auto\" only for every group"));
}

TEST_CASE("every strategy with budget = space size finds the exhaustive optimum", "[tuner]") {
  session::Session s = tinySession();
  tune::SearchSpace space = smallSoftmaxSpace(s);
  TempDir results;
  session::TuneOptions options = searchOptions(results, space.size(), tune::Strategy::Grid);
  absl::StatusOr<session::TuneReport> grid = session::tuneModule(s, kSoftmax, options, &space);
  REQUIRE(grid.ok());
  REQUIRE(grid->result.evaluationsUsed() == space.size());
  double optimum = 1e300;
  double writtenUs = 0;
  for (const tune::Evaluation &e : grid->result.evaluations) {
    REQUIRE(e.micros);
    optimum = std::min(optimum, *e.micros);
    if (e.config == configWith(space, {{"vec_tile[0]", std::vector<int64_t>{8, 256}}}))
      writtenUs = *e.micros;
  }
  CHECK(grid->bestUs == optimum);
  // The baseline is the function as written: the written tile, scheduler mode 0.
  CHECK(grid->baselineUs == writtenUs);
  CHECK(llvm::sys::fs::exists(grid->resultPath));
  REQUIRE(grid->best);

  for (tune::Strategy st : {tune::Strategy::Random, tune::Strategy::Genetic,
                            tune::Strategy::Bandit, tune::Strategy::Auto}) {
    options.search.strategy = st;
    absl::StatusOr<session::TuneReport> r = session::tuneModule(s, kSoftmax, options, &space);
    REQUIRE(r.ok());
    INFO(tune::strategyName(st).str());
    CHECK(r->bestUs == optimum);
    CHECK(!r->bankHit);
  }
}

TEST_CASE("parseSearchSpace: knob objects, a tune_result's space array, errors", "[tuner]") {
  absl::StatusOr<tune::SearchSpace> space = tune::parseSearchSpace(
      R"({"vec_tile": [[4, 256], [8, 256]], "cube_nbuffer[0]": [1, 2],
          "device_sched_mode": [0, 3], "fuse_local": [true, false]})");
  REQUIRE(space.ok());
  // Name order; kinds from the names.
  REQUIRE(space->numDimensions() == 4);
  CHECK(space->dimensions()[0].name == "cube_nbuffer[0]");
  CHECK(space->dimensions()[0].kind == tune::DimensionKind::Cube);
  CHECK(space->dimensions()[1].name == "device_sched_mode");
  CHECK(space->dimensions()[1].kind == tune::DimensionKind::Other);
  CHECK(space->dimensions()[3].name == "vec_tile");
  CHECK(space->dimensions()[3].kind == tune::DimensionKind::Vector);
  CHECK(space->size() == 16);

  // The array form (a tune_result's "space") round-trips.
  std::string array;
  llvm::raw_string_ostream os(array);
  os << llvm::json::Value(space->toJson());
  os.flush();
  absl::StatusOr<tune::SearchSpace> again = tune::parseSearchSpace(array);
  REQUIRE(again.ok());
  CHECK(again->toJson() == space->toJson());

  auto error = [](llvm::StringRef text) {
    absl::StatusOr<tune::SearchSpace> s = tune::parseSearchSpace(text);
    REQUIRE(!s.ok());
    return std::string(s.status().message());
  };
  CHECK_THAT(error("{\"pg_lower_bnd\": [1]}"),
             Catch::Contains("unknown search space knob 'pg_lower_bnd'"));
  CHECK_THAT(error("{\"cube_l1_reuse_setting\": [1]}"), Catch::Contains("is a map"));
  CHECK_THAT(error("{\"vec_tile\": 4}"), Catch::Contains("must list its values"));
  CHECK_THAT(error("{\"vec_tile\": []}"), Catch::Contains("vec_tile"));
  CHECK_THAT(error("3"), Catch::Contains("a search space is a JSON object"));
  CHECK_THAT(error("{"), Catch::Contains("search space: invalid JSON at line 1 column 1"));
}

TEST_CASE("tiles that fail the verifier are pruned before compiling, invalid configs say why",
          "[tuner]") {
  session::Session s = tinySession();
  tune::SearchSpace space;
  // [32, 256] fp32 needs 32 KiB per buffer: more than tiny's UB holds for sub / div.
  REQUIRE(space.addDimension({"vec_tile", {std::vector<int64_t>{8, 256},
                                           std::vector<int64_t>{32, 256}}}).ok());
  REQUIRE(space.addDimension({"pg_lower_bound", {int64_t(64), std::string("big")}}).ok());
  TempDir results;
  session::TuneOptions options = searchOptions(results, 10, tune::Strategy::Grid);
  absl::StatusOr<session::TuneReport> r = session::tuneModule(s, kSoftmax, options, &space);
  REQUIRE(r.ok());
  // Pruned: both configs with the oversized tile, for free, with the verifier's reason.
  REQUIRE(r->result.prunedCount() == 2);
  for (const tune::PrunedConfig &p : r->result.prunedConfigs) {
    CHECK(p.config[0] == 1);
    CHECK_THAT(p.reason, Catch::StartsWith("vec_tile = [32,256] does not fit '"));
    CHECK_THAT(p.reason, Catch::Contains("of the tuned text)"));
  }
  // Evaluated: the fitting tile with both option values; the bad value says why.
  REQUIRE(r->result.evaluationsUsed() == 2);
  const tune::Evaluation &good = r->result.evaluations[0];
  const tune::Evaluation &bad = r->result.evaluations[1];
  CHECK(good.micros);
  CHECK(good.invalidReason.empty());
  CHECK(!bad.micros);
  CHECK_THAT(bad.invalidReason, Catch::Contains("'pg_lower_bound' = \"big\""));
  // ... and so does the tune_result file.
  auto text = llvm::MemoryBuffer::getFile(r->resultPath);
  REQUIRE(text);
  std::string json = (*text)->getBuffer().str();
  CHECK_THAT(json, Catch::Contains("\"invalid_reason\": \"config knob 'pg_lower_bound'"));
  CHECK_THAT(json, Catch::Contains("\"reason\": \"vec_tile = [32,256] does not fit"));
}

TEST_CASE("searches start from the function as written", "[tuner]") {
  session::Session s = tinySession();
  absl::StatusOr<tune::SearchSpace> space = session::deriveSearchSpace(s, kSoftmax);
  REQUIRE(space.ok());
  std::optional<tune::Config> written = tune::writtenConfig(*space, kSoftmax, {});
  REQUIRE(written);
  CHECK(space->configToString(*written) ==
        R"({"device_sched_mode":0,"vec_nbuffer[0]":"auto","vec_tile[0]":[8,256]})");
  // A kernel that runs with scheduler mode 2 is written with mode 2 (its baseline is
  // measured with it), so a search never reports 0 -> 2 as a change.
  std::optional<tune::Config> mode2 = tune::writtenConfig(*space, kSoftmax, {}, 2);
  REQUIRE(mode2);
  CHECK(space->configToString(*mode2) ==
        R"({"device_sched_mode":2,"vec_nbuffer[0]":"auto","vec_tile[0]":[8,256]})");
  TempDir results;
  session::TuneOptions options = searchOptions(results, 6);
  for (tune::Strategy st : {tune::Strategy::Random, tune::Strategy::Genetic, tune::Strategy::Bandit}) {
    INFO(tune::strategyName(st).str());
    options.search.strategy = st;
    absl::StatusOr<session::TuneReport> r = session::tuneModule(s, kSoftmax, options);
    REQUIRE(r.ok());
    REQUIRE(!r->result.evaluations.empty());
    CHECK(r->result.evaluations[0].config == *written);
    // Its time is the baseline's: the same function, compiled the same way.
    REQUIRE(r->result.evaluations[0].micros);
    CHECK(*r->result.evaluations[0].micros == r->baselineUs);
  }
}

TEST_CASE("a kernel's own merge settings are a config of its space", "[tuner]") {
  session::Session s = tinySession();
  absl::StatusOr<tune::SearchSpace> plain = session::deriveSearchSpace(s, kSoftmax);
  REQUIRE(plain.ok());
  const tune::Dimension &merges = dimension(*plain, "vec_nbuffer[0]");
  CHECK(std::find(merges.values.begin(), merges.values.end(), tune::KnobValue(int64_t(64))) ==
        merges.values.end());
  // Every group merged 64 at a time: more than the counts the tuner tries for this
  // group, so the count joins its choices and the written config is a point.
  session::PassKnobs knobs;
  REQUIRE(knobs.set("vec_nbuffer_mode", int64_t(2)).ok());
  REQUIRE(knobs.set("vec_nbuffer_setting", passes::GroupSetting{{-1, 64}}).ok());
  absl::StatusOr<tune::SearchSpace> space = session::deriveSearchSpace(s, kSoftmax, "", knobs);
  REQUIRE(space.ok());
  std::optional<tune::Config> written = tune::writtenConfig(*space, kSoftmax, knobs);
  REQUIRE(written);
  CHECK(space->configToString(*written) ==
        R"({"device_sched_mode":0,"vec_nbuffer[0]":64,"vec_tile[0]":[8,256]})");
  // Merging off is a count of 1; an exact key beats -1.
  session::PassKnobs off;
  REQUIRE(off.set("vec_nbuffer_mode", int64_t(0)).ok());
  std::optional<tune::Config> none = tune::writtenConfig(*space, kSoftmax, off);
  REQUIRE(none);
  CHECK_THAT(space->configToString(*none), Catch::Contains(R"("vec_nbuffer[0]":1)"));
  REQUIRE(knobs.set("vec_nbuffer_setting", passes::GroupSetting{{-1, 64}, {0, 2}}).ok());
  std::optional<tune::Config> exact = tune::writtenConfig(*space, kSoftmax, knobs);
  REQUIRE(exact);
  CHECK_THAT(space->configToString(*exact), Catch::Contains(R"("vec_nbuffer[0]":2)"));
  // A search starts from it: its first evaluation is the kernel as compiled with its
  // own knobs, the baseline.
  REQUIRE(knobs.set("vec_nbuffer_setting", passes::GroupSetting{{-1, 64}}).ok());
  TempDir results;
  session::TuneOptions options = searchOptions(results, 4, tune::Strategy::Random);
  options.baseKnobs = knobs;
  absl::StatusOr<session::TuneReport> r = session::tuneModule(s, kSoftmax, options);
  REQUIRE(r.ok());
  REQUIRE(!r->result.evaluations.empty());
  CHECK(r->writtenConfigJson == space->configToString(*written));
  REQUIRE(r->result.evaluations[0].micros);
  CHECK(*r->result.evaluations[0].micros == r->baselineUs);
}

TEST_CASE("configs that differ only in the scheduler mode share one compile", "[tuner]") {
  session::Session s = tinySession();
  absl::StatusOr<tune::SearchSpace> derived = session::deriveSearchSpace(s, kSoftmax);
  REQUIRE(derived.ok());
  tune::SearchSpace space;
  const tune::Dimension &tiles = dimension(*derived, "vec_tile[0]");
  REQUIRE(tiles.values.size() >= 2);
  REQUIRE(space.addDimension(tiles).ok());
  REQUIRE(space
              .addDimension({"device_sched_mode",
                             {int64_t(0), int64_t(1), int64_t(2), int64_t(3)},
                             tune::DimensionKind::Other})
              .ok());
  TempDir results;
  session::TuneOptions options = searchOptions(results, space.size(), tune::Strategy::Grid);
  absl::StatusOr<session::TuneReport> r = session::tuneModule(s, kSoftmax, options, &space);
  REQUIRE(r.ok());
  REQUIRE(r->result.evaluationsUsed() == space.size());
  // One compile per tile (the written one shared with the baseline), four simulations.
  CHECK(r->compiles == tiles.values.size());

  // Each time is what a separate compile and simulation of that config gives.
  for (const tune::Evaluation &e : r->result.evaluations) {
    absl::StatusOr<session::TunedConfig> applied =
        tune::applyConfig(space, e.config, kSoftmax, {});
    REQUIRE(applied.ok());
    session::Kernel k = compileWith(s, applied->moduleText, applied->knobs);
    runtime::SimOptions sim;
    sim.schedMode = applied->schedMode;
    absl::StatusOr<runtime::RunRecord> rec = runtime::simulate(k.program, s.device(), sim);
    REQUIRE(rec.ok());
    INFO(space.configToString(e.config));
    REQUIRE(e.micros);
    CHECK(*e.micros == rec->simulatedUs());
  }

  // rl proposes one config per batch on one thread: only the kept programs let its
  // scheduler-mode moves skip the compile; with no cache each config compiles.
  options.threads = 1;
  options.search.strategy = tune::Strategy::Bandit;
  absl::StatusOr<session::TuneReport> cached = session::tuneModule(s, kSoftmax, options, &space);
  REQUIRE(cached.ok());
  options.programCacheBytes = 0;
  absl::StatusOr<session::TuneReport> uncached = session::tuneModule(s, kSoftmax, options, &space);
  REQUIRE(uncached.ok());
  CHECK(cached->result.evaluationsUsed() == space.size());
  CHECK(cached->compiles == tiles.values.size());
  // The baseline's compile is not kept either: one more than the evaluations.
  CHECK(uncached->compiles == space.size() + 1);
  CHECK(uncached->bestUs == cached->bestUs);
}

TEST_CASE("auto searches with ga where the cube cores are busier, else with rl", "[tuner]") {
  session::Session s = tinySession();
  TempDir results;
  session::TuneOptions options = searchOptions(results, 4);
  struct Case {
    const char *name, *text;
    bool cubeDominated;
  };
  for (const Case &c : {Case{"matmul", kMatmul, true}, Case{"cube-heavy", kCubeHeavy, true},
                        Case{"vector-heavy", kVectorHeavy, false},
                        Case{"softmax", kSoftmax, false}}) {
    INFO(c.name);
    absl::StatusOr<session::TuneReport> r = session::tuneModule(s, c.text, options);
    REQUIRE(r.ok());
    CHECK(r->cubeDominated == c.cubeDominated);
    CHECK(r->result.strategy == (c.cubeDominated ? "ga" : "rl"));
  }
}

TEST_CASE("the bank answers a repeated tuning with no evaluation, another shape misses",
          "[tuner]") {
  session::Session s = tinySession();
  TempDir temp;
  session::TuneOptions options = bankOptions(temp, 4, tune::Strategy::Random);

  absl::StatusOr<session::TuneReport> first = session::tuneModule(s, kSoftmax, options);
  REQUIRE(first.ok());
  CHECK(!first->bankHit);
  CHECK(first->result.evaluationsUsed() == 4);
  REQUIRE(first->best);

  absl::StatusOr<session::TuneReport> second = session::tuneModule(s, kSoftmax, options);
  REQUIRE(second.ok());
  CHECK(second->bankHit);
  CHECK(second->result.evaluationsUsed() == 0);
  CHECK(second->resultPath.empty());
  REQUIRE(second->best);
  CHECK(second->bestUs == first->bestUs);
  CHECK(second->best->moduleText == first->best->moduleText);
  CHECK(second->best->schedMode == first->best->schedMode);

  absl::StatusOr<session::TuneReport> wide = session::tuneModule(s, kSoftmaxWide, options);
  REQUIRE(wide.ok());
  CHECK(!wide->bankHit);
  CHECK(wide->result.evaluationsUsed() == 4);

  // A different device never reuses the records.
  session::Session a2 = *session::Session::create("a2");
  absl::StatusOr<session::TuneReport> other = session::tuneModule(a2, kSoftmax, options);
  REQUIRE(other.ok());
  CHECK(!other->bankHit);

  // A space of the caller's own is searched even though the bank knows the function.
  tune::SearchSpace space = smallSoftmaxSpace(s);
  absl::StatusOr<session::TuneReport> mine = session::tuneModule(s, kSoftmax, options, &space);
  REQUIRE(mine.ok());
  CHECK(!mine->bankHit);
  CHECK(mine->result.evaluationsUsed() == 4);
}

TEST_CASE("a compile that consults the bank compiles its best config, a bad bank warns",
          "[tuner]") {
  session::Session s = tinySession();
  TempDir temp;
  session::TuneOptions options = bankOptions(temp, 6, tune::Strategy::Random);
  absl::StatusOr<session::TuneReport> tuned = session::tuneModule(s, kSoftmax, options);
  REQUIRE(tuned.ok());
  REQUIRE(tuned->best);

  session::CompileOptions plain;
  absl::StatusOr<session::Kernel> asWritten = s.compileText(kSoftmax, "<softmax>", plain);
  REQUIRE(asWritten.ok());
  CHECK(asWritten->bankConfig.empty());

  session::CompileOptions consulting;
  consulting.consultBank = true;
  consulting.bankPath = options.bankPath;
  absl::StatusOr<session::Kernel> fromBank = s.compileText(kSoftmax, "<softmax>", consulting);
  REQUIRE(fromBank.ok());
  CHECK(fromBank->warnings.empty());
  CHECK(fromBank->bankConfig == tuned->best->configJson);
  CHECK(fromBank->bankSchedMode == tuned->best->schedMode);
  CHECK(fromBank->knobs.values() == tuned->best->knobs.values());
  // The kernel is the tuned module's: its simulated time is the one the bank recorded.
  runtime::SimOptions sim;
  sim.schedMode = *fromBank->bankSchedMode;
  CHECK(runtime::simulate(fromBank->program, s.device(), sim)->simulatedUs() ==
        Approx(tuned->bestUs));

  // Another shape is not in the bank: compiled as written, without a warning.
  absl::StatusOr<session::Kernel> wide = s.compileText(kSoftmaxWide, "<wide>", consulting);
  REQUIRE(wide.ok());
  CHECK(wide->bankConfig.empty());
  CHECK(wide->warnings.empty());

  // A bank line nested 40,000 deep is skipped with a warning; the bank's other records
  // still answer.
  std::string bad = temp.path + "/bad";
  REQUIRE(!llvm::sys::fs::create_directories(bad));
  std::error_code ec;
  llvm::sys::fs::directory_iterator it(options.bankPath, ec);
  REQUIRE(!ec);
  std::string copy = bad + "/" + llvm::sys::path::filename(it->path()).str();
  REQUIRE(!llvm::sys::fs::copy_file(it->path(), copy));
  {
    llvm::raw_fd_ostream out(copy, ec, llvm::sys::fs::OF_Append);
    REQUIRE(!ec);
    out << std::string(40000, '[') << std::string(40000, ']') << "\n";
  }
  consulting.bankPath = bad;
  absl::StatusOr<session::Kernel> skipped = s.compileText(kSoftmax, "<softmax>", consulting);
  REQUIRE(skipped.ok());
  CHECK(skipped->bankConfig == tuned->best->configJson);
  REQUIRE(skipped->warnings.size() == 1);
  CHECK(skipped->warnings[0].find("skipped bank line") != std::string::npos);

  // A bank that cannot be opened (a file where the folder should be) is a warning; the
  // function compiles as written.
  consulting.bankPath = copy;
  absl::StatusOr<session::Kernel> unusable = s.compileText(kSoftmax, "<softmax>", consulting);
  REQUIRE(unusable.ok());
  CHECK(unusable->bankConfig.empty());
  REQUIRE(unusable->warnings.size() == 1);
  CHECK(unusable->warnings[0].find("not consulted") != std::string::npos);

  // A module of two functions cannot be keyed: a warning says why.
  std::string two = std::string(kSoftmax) + std::string(kSoftmaxWide).replace(
                                                std::string(kSoftmaxWide).find("@softmax"), 8,
                                                "@softmax_wide");
  consulting.bankPath = options.bankPath;
  consulting.funcName = "softmax";
  absl::StatusOr<session::Kernel> twoFuncs = s.compileText(two, "<two>", consulting);
  REQUIRE(twoFuncs.ok());
  REQUIRE(twoFuncs->warnings.size() == 1);
  CHECK(twoFuncs->warnings[0].find("2 functions") != std::string::npos);
}

TEST_CASE("a kernel with dynamic axes is tuned for the shapes it is given", "[tuner]") {
  static const char *kRows = R"pto(
func @rows(%x: tensor<?x64xf32>, %y: tensor<?x64xf32>) -> tensor<?x64xf32> {
  %y1 = loop %x, %y {body = "row", name = "i", stop = "dim(x, 0)", ins = [{of = 0, offsets = ["i", 0], sizes = [1, 64]}], outs = [{of = 1, offsets = ["i", 0], sizes = [1, 64]}]} : tensor<?x64xf32>
  return %y1
}
func @row(%r: tensor<64xf32>) -> tensor<64xf32> {
  %e = exp %r {vec_tile = [64]} : tensor<64xf32>
  return %e
}
)pto";
  session::Session s = tinySession();
  TempDir results;
  session::TuneOptions options = searchOptions(results, 2);
  // Without shapes the candidates cannot be instantiated: the error says what to give.
  absl::StatusOr<session::TuneReport> none = session::tuneModule(s, kRows, options);
  REQUIRE_FALSE(none.ok());
  CHECK_THAT(std::string(none.status().message()),
             Catch::Contains("has dynamic axes: give the tuner the shapes of its 2 arguments"));
  // With them, the simulated time is that of these sizes: 8 rows take longer than 2.
  options.argShapes = {{2, 64}, {2, 64}};
  absl::StatusOr<session::TuneReport> two = session::tuneModule(s, kRows, options);
  REQUIRE(two.ok());
  options.argShapes = {{8, 64}, {8, 64}};
  absl::StatusOr<session::TuneReport> eight = session::tuneModule(s, kRows, options);
  REQUIRE(eight.ok());
  CHECK(eight->baselineUs > two->baselineUs);
}

TEST_CASE("a kernel whose loops read its inputs is tuned with the data it is given",
          "[tuner]") {
  static const char *kFirstRows = R"pto(
func @first_rows(%x: tensor<64x256xf32>, %n: tensor<1xi32>, %y: tensor<64x256xf32>) -> tensor<64x256xf32> {
  %y_1 = loop %x, %y {body = "first_rows.g", index = "g", ins = [{of = 0, offsets = [0, 0], sizes = [64, 256]}, {of = 1, offsets = [0, 0], sizes = [64, 256]}], name = "g", outs = [{of = 1, offsets = [0, 0], sizes = [64, 256]}], stop = 1} : tensor<64x256xf32>
  return %y_1
}
func @first_rows.row(%x: tensor<256xf32>) -> tensor<256xf32> {
  %0 = exp %x {vec_tile = [1, 256]} : tensor<256xf32>
  return %0
}
func @first_rows.g(%x: tensor<64x256xf32>, %y: tensor<64x256xf32>) -> tensor<64x256xf32> {
  %y_1 = loop %x, %y {body = "first_rows.row", index = "row", ins = [{of = 0, offsets = ["row", 0], sizes = [1, 256]}], name = "row", outs = [{of = 1, offsets = ["row", 0], sizes = [1, 256]}], stop = "n[g]"} : tensor<64x256xf32>
  return %y_1
}
)pto";
  session::Session s = tinySession();
  TempDir results;
  session::TuneOptions options = searchOptions(results, 2);
  options.argShapes = {{64, 256}, {1}, {64, 256}};
  // Without the data the trip count is unknown: the error says what to give.
  absl::StatusOr<session::TuneReport> none = session::tuneModule(s, kFirstRows, options);
  REQUIRE_FALSE(none.ok());
  CHECK_THAT(std::string(none.status().message()),
             Catch::Contains("give the tuner its 3 arguments with their data"));
  // With it, the simulated time is that of those rows: 48 take longer than 8.
  std::vector<float> x(64 * 256, 0.0f), y(64 * 256, 0.0f);
  int32_t eight = 8, fortyEight = 48;
  options.argData = {x.data(), &eight, y.data()};
  absl::StatusOr<session::TuneReport> few = session::tuneModule(s, kFirstRows, options);
  REQUIRE(few.ok());
  options.argData = {x.data(), &fortyEight, y.data()};
  absl::StatusOr<session::TuneReport> many = session::tuneModule(s, kFirstRows, options);
  REQUIRE(many.ok());
  CHECK(many->baselineUs > few->baselineUs);
}

namespace {

/// Eight independent iterations of a few big tiles each (test_parallel_loops.py's
/// blocks kernel): on a2, a barrier after every iteration leaves most cores idle, so
/// more iterations in flight are faster.
constexpr const char *kParallelBlocks = R"pto(
func @blocks(%x: tensor<8x128x512xf32>, %y: tensor<8x128x512xf32>) -> tensor<8x128x512xf32> {
  %y_1 = loop %x, %y {body = "blocks.b", index = "b", ins = [{of = 0, offsets = ["b", 0, 0], sizes = [1, 128, 512]}], name = "b", outs = [{of = 1, offsets = ["b", 0, 0], sizes = [1, 128, 512]}], parallel = true, stop = 8} : tensor<8x128x512xf32>
  return %y_1
}
func @blocks.b(%x: tensor<128x512xf32>) -> tensor<128x512xf32> {
  %0 = exp %x {vec_tile = [32, 512]} : tensor<128x512xf32>
  %1 = full {value = 2.0, vec_tile = [32, 512]} : tensor<1x1xf32>
  %2 = mul %0, %1 {vec_tile = [32, 512]} : tensor<128x512xf32>
  return %2
}
)pto";

/// The same loop, not marked parallel.
std::string serialBlocks() {
  std::string text = kParallelBlocks;
  text.erase(text.find("parallel = true, "), std::string("parallel = true, ").size());
  return text;
}

session::Session a2Session() {
  absl::StatusOr<session::Session> s = session::Session::create("a2");
  REQUIRE(s.ok());
  return *s;
}

} // namespace

namespace {

/// A matmul of 16 cube tiles per iteration of a loop: cube-nbuffer-merge's default
/// mode merges its AIC group automatically (a loop body), as nbuffer-merge does AIV
/// groups everywhere.
constexpr const char *kLoopMatmul = R"pto(
func @heads(%a: tensor<4x64x64xf16>, %b: tensor<64x64xf16>, %y: tensor<4x64x64xf32>) -> tensor<4x64x64xf32> {
  %y1 = loop %a, %b, %y {body = "head", name = "h", stop = 4, ins = [{of = 0, offsets = ["h", 0, 0], sizes = [1, 64, 64]}, {of = 1, offsets = [0, 0], sizes = [64, 64]}], outs = [{of = 2, offsets = ["h", 0, 0], sizes = [1, 64, 64]}]} : tensor<4x64x64xf32>
  return %y1
}
func @head(%a: tensor<64x64xf16>, %b: tensor<64x64xf16>) -> tensor<64x64xf32> {
  %c = matmul %a, %b {cube_tile = {m = [16, 16], k = [64, 64], n = [16, 16]}} : tensor<64x64xf32>
  return %c
}
)pto";

} // namespace

TEST_CASE("a loop body's cube groups merge automatically by default, and the space says so",
          "[tuner]") {
  session::Session s = tinySession();
  // L1 reuse off, so the counts below are cube-nbuffer-merge's alone.
  passes::PassKnobs base;
  REQUIRE(base.set("cube_l1_reuse_mode", int64_t(0)).ok());
  absl::StatusOr<tune::SearchSpace> space = session::deriveSearchSpace(s, kLoopMatmul, "", base);
  REQUIRE(space.ok());
  const tune::Dimension &merge = dimension(*space, "cube_nbuffer[0]");
  // "auto" is a choice, and the written one (the default pipeline's mode in a loop body).
  CHECK(contains(merge, tune::KnobValue(std::string(tune::kNBufferAuto))));
  std::optional<tune::Config> written = tune::writtenConfig(*space, kLoopMatmul, base);
  REQUIRE(written);
  CHECK(merge.values[(*written)[space->findDimension("cube_nbuffer[0]")]] ==
        tune::KnobValue(std::string(tune::kNBufferAuto)));
  // A count of 1 turns the default's merging off.
  absl::StatusOr<session::TunedConfig> ones = tune::applyConfig(
      *space, configWith(*space, {{"cube_nbuffer[0]", int64_t(1)}}), kLoopMatmul, base);
  REQUIRE(ones.ok());
  CHECK(std::get<int64_t>(ones->knobs.values().at("cube_nbuffer_mode")) == 0);
  // A count for the group leaves the others automatic (no -1 entry of 1).
  absl::StatusOr<session::TunedConfig> two = tune::applyConfig(
      *space, configWith(*space, {{"cube_nbuffer[0]", int64_t(2)}}), kLoopMatmul, base);
  REQUIRE(two.ok());
  CHECK(std::get<passes::GroupSetting>(two->knobs.values().at("cube_nbuffer_setting")) ==
        passes::GroupSetting{{0, 2}});
  // And the three compile as they say: 16 tiles unmerged, 8 tasks of 2, the automatic N.
  auto aicTasks = [&](const session::TunedConfig &c) {
    return compileWith(s, c.moduleText, c.knobs).stats.aicSubgraphs;
  };
  CHECK(aicTasks(*ones) == 16);
  CHECK(aicTasks(*two) == 8);
  CHECK(compileWith(s, kLoopMatmul, base).stats.aicSubgraphs < 16);
}

TEST_CASE("device_sched_parallelism is a knob only of functions with a parallel loop",
          "[tuner]") {
  session::Session s = a2Session();
  absl::StatusOr<tune::SearchSpace> parallel = session::deriveSearchSpace(s, kParallelBlocks);
  REQUIRE(parallel.ok());
  const tune::Dimension &p = dimension(*parallel, tune::kSchedParallelismDim);
  // 0 is the kernel's own value (the default: automatic), and joins the powers of two.
  CHECK(p.values == std::vector<tune::KnobValue>{int64_t(0), int64_t(1), int64_t(2), int64_t(4),
                                                 int64_t(8)});
  // The function as written runs with the kernel's own value.
  std::optional<tune::Config> written = tune::writtenConfig(*parallel, kParallelBlocks, {});
  REQUIRE(written);
  CHECK(p.values[(*written)[parallel->findDimension(tune::kSchedParallelismDim)]] ==
        tune::KnobValue(int64_t(0)));

  // A kernel run with 3: 3 joins the values and is the written one.
  absl::StatusOr<tune::SearchSpace> three =
      session::deriveSearchSpace(s, kParallelBlocks, "", {}, 3);
  REQUIRE(three.ok());
  const tune::Dimension &p3 = dimension(*three, tune::kSchedParallelismDim);
  CHECK(p3.values == std::vector<tune::KnobValue>{int64_t(1), int64_t(2), int64_t(3), int64_t(4),
                                                  int64_t(8)});
  std::optional<tune::Config> written3 = tune::writtenConfig(*three, kParallelBlocks, {}, 0, 3);
  REQUIRE(written3);
  CHECK(three->configToString(*written3).find("\"device_sched_parallelism\":3") !=
        std::string::npos);
  // A value the runtime does not take is an error naming it.
  absl::StatusOr<tune::SearchSpace> nine = session::deriveSearchSpace(s, kParallelBlocks, "", {}, 9);
  REQUIRE_FALSE(nine.ok());
  CHECK_THAT(std::string(nine.status().message()), Catch::Contains("= 9") &&
                                                       Catch::Contains("1..8"));

  // The same loop not marked parallel, and a function without loops: no such knob.
  absl::StatusOr<tune::SearchSpace> serial = session::deriveSearchSpace(s, serialBlocks());
  REQUIRE(serial.ok());
  CHECK(serial->findDimension(tune::kSchedParallelismDim) < 0);
  CHECK(serial->findDimension(tune::kSchedDim) >= 0);
  absl::StatusOr<tune::SearchSpace> plain = session::deriveSearchSpace(tinySession(), kSoftmax);
  REQUIRE(plain.ok());
  CHECK(plain->findDimension(tune::kSchedParallelismDim) < 0);
}

TEST_CASE("device_sched_parallelism in configs and custom spaces: applied, checked",
          "[tuner]") {
  // A config that names it sets it; one that does not leaves it to the kernel.
  absl::StatusOr<session::TunedConfig> four = tune::applyConfigValues(
      {{tune::kSchedParallelismDim, int64_t(4)}}, kParallelBlocks, {});
  REQUIRE(four.ok());
  CHECK(four->schedParallelism == 4);
  absl::StatusOr<session::TunedConfig> none = tune::applyConfigValues({}, kParallelBlocks, {});
  REQUIRE(none.ok());
  CHECK_FALSE(none->schedParallelism);
  for (tune::KnobValue bad : {tune::KnobValue(int64_t(-1)), tune::KnobValue(int64_t(9)),
                              tune::KnobValue(std::string("8"))}) {
    absl::StatusOr<session::TunedConfig> r =
        tune::applyConfigValues({{tune::kSchedParallelismDim, bad}}, kParallelBlocks, {});
    REQUIRE_FALSE(r.ok());
    CHECK_THAT(std::string(r.status().message()),
               Catch::Contains("config knob 'device_sched_parallelism' = " +
                               tune::knobValueToString(bad)) &&
                   Catch::Contains("must be an integer in 1..8"));
  }

  // A custom space: values out of range are an error at parse time, naming the knob,
  // the value and the range; the knob on a function without a parallel loop is one
  // when the space is checked against it.
  absl::StatusOr<tune::SearchSpace> bad =
      tune::parseSearchSpace(R"({"device_sched_parallelism": [1, 16]})");
  REQUIRE_FALSE(bad.ok());
  CHECK(std::string(bad.status().message()) ==
        "search space knob 'device_sched_parallelism' = 16: device_sched_parallelism "
        "(iterations of a parallel loop in flight) must be an integer in 1..8, or 0 "
        "(automatic)");
  // 0 (automatic) is a value a config may name.
  absl::StatusOr<session::TunedConfig> automatic = tune::applyConfigValues(
      {{tune::kSchedParallelismDim, int64_t(0)}}, kParallelBlocks, {});
  REQUIRE(automatic.ok());
  CHECK(automatic->schedParallelism == 0);
  absl::StatusOr<tune::SearchSpace> good =
      tune::parseSearchSpace(R"({"device_sched_parallelism": [1, 8]})");
  REQUIRE(good.ok());
  CHECK(tune::checkSpaceApplies(*good, kParallelBlocks).ok());
  absl::Status serial = tune::checkSpaceApplies(*good, serialBlocks());
  REQUIRE_FALSE(serial.ok());
  CHECK_THAT(std::string(serial.message()),
             Catch::Contains("knob 'device_sched_parallelism' does not apply: the function "
                             "has no parallel loop"));
}

TEST_CASE("a grid over device_sched_parallelism finds that a parallel loop wants more "
          "iterations in flight", "[tuner]") {
  session::Session s = a2Session();
  TempDir results;
  session::TuneOptions options = searchOptions(results, 4, tune::Strategy::Grid);
  options.schedParallelism = 1; // a kernel run with PyPTO's default, no overlap
  absl::StatusOr<tune::SearchSpace> space =
      tune::parseSearchSpace(R"({"device_sched_parallelism": [1, 2, 4, 8]})");
  REQUIRE(space.ok());
  absl::StatusOr<session::TuneReport> r = session::tuneModule(s, kParallelBlocks, options, &*space);
  REQUIRE(r.ok());
  CHECK(r->result.evaluationsUsed() == 4);
  // One compile for the written function (P = 1, the baseline), one for the other
  // values of the batch (they share it; each gets its own program).
  CHECK(r->compiles == 2);
  REQUIRE(r->best);
  CHECK(r->writtenConfigJson == R"({"device_sched_parallelism":1})");
  REQUIRE(r->best->schedParallelism);
  CHECK(*r->best->schedParallelism > 1);
  CHECK(r->bestUs < r->baselineUs);
  CHECK(r->best->configJson ==
        absl::StrCat(R"({"device_sched_parallelism":)", *r->best->schedParallelism, "}"));
  // Each value's time is what the kernel simulates when run with it.
  for (const tune::Evaluation &e : r->result.evaluations) {
    REQUIRE(e.micros);
    int p = int(std::get<int64_t>(space->dimensions()[0].values[e.config[0]]));
    absl::StatusOr<session::Kernel> k = s.compileText(kParallelBlocks, "blocks.pto");
    REQUIRE(k.ok());
    absl::StatusOr<std::shared_ptr<const codegen::Program>> program =
        k->runnable(runtime::kDefaultStitchMaxNum, p);
    REQUIRE(program.ok());
    absl::StatusOr<runtime::RunRecord> run = runtime::simulate(**program, s.device(), {});
    REQUIRE(run.ok());
    CHECK(run->simulatedUs() == Approx(*e.micros).epsilon(1e-12));
  }

  // The kernel's own value is the written one: run with the best value, there is
  // nothing left to gain.
  options.schedParallelism = *r->best->schedParallelism;
  absl::StatusOr<session::TuneReport> again = session::tuneModule(s, kParallelBlocks, options, &*space);
  REQUIRE(again.ok());
  CHECK(again->baselineUs == Approx(r->bestUs).epsilon(1e-12));
  CHECK(again->writtenConfigJson == r->best->configJson);
  CHECK(again->bestUs == Approx(again->baselineUs).epsilon(1e-12));
}

TEST_CASE("bank records without device_sched_parallelism load and keep the kernel's own",
          "[tuner]") {
  session::Session s = a2Session();
  TempDir temp;
  session::TuneOptions options = bankOptions(temp, 1, tune::Strategy::Grid);
  // A space without the knob records configs without it (as every record made before
  // it was a knob).
  absl::StatusOr<tune::SearchSpace> tiles =
      tune::parseSearchSpace(R"({"vec_tile[0]": [[32, 512]]})");
  REQUIRE(tiles.ok());
  REQUIRE(session::tuneModule(s, kParallelBlocks, options, &*tiles).ok());
  // The derived space consults the bank: the hit applies, with the kernel's own value.
  options.schedParallelism = 2;
  absl::StatusOr<session::TuneReport> hit = session::tuneModule(s, kParallelBlocks, options);
  REQUIRE(hit.ok());
  CHECK(hit->bankHit);
  REQUIRE(hit->best);
  CHECK(hit->best->configJson.find("device_sched_parallelism") == std::string::npos);
  CHECK(hit->best->schedParallelism == 2);

  // A record that names it answers with its value.
  absl::StatusOr<tune::SearchSpace> eight =
      tune::parseSearchSpace(R"({"device_sched_parallelism": [8]})");
  REQUIRE(eight.ok());
  options.schedParallelism = 1;
  absl::StatusOr<session::TuneReport> tuned = session::tuneModule(s, kParallelBlocks, options, &*eight);
  REQUIRE(tuned.ok());
  absl::StatusOr<session::TuneReport> hit8 = session::tuneModule(s, kParallelBlocks, options);
  REQUIRE(hit8.ok());
  CHECK(hit8->bankHit);
  REQUIRE(hit8->best);
  CHECK(hit8->best->schedParallelism == 8);
}

namespace {

/// A control function (function 0) running two loops whose bodies are alike: each cuts
/// its 8x64 window into eight 1x64 rows, one AIV group of eight subgraphs per body,
/// func1_0 in @rows_a and func2_0 in @rows_b (test/loops/settings.pto's module).
constexpr const char *kTwoBodies = R"pto(
func @ctl(%x: tensor<16x64xf32>, %y: tensor<16x64xf32>) -> tensor<16x64xf32> {
  %w = gm_tensor : tensor<16x64xf32>
  %a = loop %x, %w {body = "rows_a", name = "a", stop = 2, ins = [{of = 0, offsets = ["a * 8", 0], sizes = [8, 64]}], outs = [{of = 1, offsets = ["a * 8", 0], sizes = [8, 64]}]} : tensor<16x64xf32>
  %b = loop %a, %y {body = "rows_b", name = "b", stop = 2, ins = [{of = 0, offsets = ["b * 8", 0], sizes = [8, 64]}], outs = [{of = 1, offsets = ["b * 8", 0], sizes = [8, 64]}]} : tensor<16x64xf32>
  return %b
}
func @rows_a(%r: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %e = exp %r {vec_tile = [1, 64]} : tensor<8x64xf32>
  return %e
}
func @rows_b(%r: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %e = neg %r {vec_tile = [1, 64]} : tensor<8x64xf32>
  return %e
}
)pto";

/// The size of the group named `key` in `kernel`'s compile statistics (-1: none).
int64_t groupSize(const session::Kernel &kernel, llvm::StringRef key) {
  for (const session::GroupStats &g : kernel.stats.groups)
    if (g.key == key) return g.size;
  return -1;
}

} // namespace

TEST_CASE("a module with several root functions gets a merge knob per body", "[tuner]") {
  session::Session s = tinySession();
  absl::StatusOr<tune::SearchSpace> space = session::deriveSearchSpace(s, kTwoBodies);
  REQUIRE(space.ok());
  // One knob per body's group, keyed as the summary prints it; no knob that would set
  // both bodies at once.
  const tune::Dimension &a = dimension(*space, "vec_nbuffer[func1_0]");
  const tune::Dimension &b = dimension(*space, "vec_nbuffer[func2_0]");
  CHECK(space->findDimension("vec_nbuffer[0]") < 0);
  CHECK(contains(a, std::string("auto")));
  CHECK(contains(b, int64_t(4)));

  // Body 1's group in pairs, body 2's four at a time: each body gets its own count.
  absl::StatusOr<session::TunedConfig> applied = tune::applyConfigValues(
      {{"vec_nbuffer[func1_0]", int64_t(2)}, {"vec_nbuffer[func2_0]", int64_t(4)}}, kTwoBodies,
      {});
  REQUIRE(applied.ok());
  CHECK(std::get<int64_t>(applied->knobs.values().at("vec_nbuffer_mode")) == 2);
  CHECK(std::get<passes::GroupSetting>(applied->knobs.values().at("vec_nbuffer_setting")) ==
        passes::GroupSetting{{passes::GroupKey::inFunc(1, 0), 2},
                             {passes::GroupKey::inFunc(2, 0), 4}});
  session::Kernel k = compileWith(s, applied->moduleText, applied->knobs);
  CHECK(groupSize(k, "func1_0") == 4);
  CHECK(groupSize(k, "func2_0") == 2);
  CHECK(k.warnings.empty());

  // The kernel's own setting, a plain key and one for body 2, is the written config:
  // body 1 takes the plain key, body 2 its own.
  session::PassKnobs own;
  REQUIRE(own.set("vec_nbuffer_mode", int64_t(2)).ok());
  REQUIRE(own.set("vec_nbuffer_setting",
                  passes::GroupSetting{{0, 4}, {passes::GroupKey::inFunc(2, 0), 8}})
              .ok());
  absl::StatusOr<tune::SearchSpace> ownSpace =
      session::deriveSearchSpace(s, kTwoBodies, "", own);
  REQUIRE(ownSpace.ok());
  std::optional<tune::Config> written = tune::writtenConfig(*ownSpace, kTwoBodies, own);
  REQUIRE(written);
  std::string writtenJson = ownSpace->configToString(*written);
  CHECK_THAT(writtenJson, Catch::Contains(R"("vec_nbuffer[func1_0]":4)"));
  CHECK_THAT(writtenJson, Catch::Contains(R"("vec_nbuffer[func2_0]":8)"));

  // A custom space may name a body's group too; a key that is no group name is not a knob.
  CHECK(tune::parseSearchSpace(R"({"vec_nbuffer[func2_0]": [1, 2]})").ok());
  for (const char *bad : {R"({"vec_nbuffer[func2]": [1]})", R"({"vec_nbuffer[-1]": [1]})",
                          R"({"vec_nbuffer[\"func2_0\"]": [1]})"}) {
    INFO(bad);
    absl::StatusOr<tune::SearchSpace> parsed = tune::parseSearchSpace(bad);
    REQUIRE_FALSE(parsed.ok());
    CHECK_THAT(std::string(parsed.status().message()),
               Catch::Contains("unknown search space knob"));
  }
}

TEST_CASE("a config keeps the kernel's own merge counts for the groups it does not name",
          "[tuner]") {
  session::Session s = tinySession();
  // The kernel merges every group 4 at a time (its own {-1: 4}).
  session::PassKnobs own;
  REQUIRE(own.set("vec_nbuffer_mode", int64_t(2)).ok());
  REQUIRE(own.set("vec_nbuffer_setting", passes::GroupSetting{{-1, 4}}).ok());
  // A space of one body's count: the other body keeps the kernel's 4.
  absl::StatusOr<session::TunedConfig> one =
      tune::applyConfigValues({{"vec_nbuffer[func1_0]", int64_t(2)}}, kTwoBodies, own);
  REQUIRE(one.ok());
  CHECK(std::get<passes::GroupSetting>(one->knobs.values().at("vec_nbuffer_setting")) ==
        passes::GroupSetting{{passes::GroupKey::inFunc(1, 0), 2}, {-1, 4}});
  session::Kernel k = compileWith(s, one->moduleText, one->knobs);
  CHECK(groupSize(k, "func1_0") == 4); // 8 rows in pairs
  CHECK(groupSize(k, "func2_0") == 2); // 8 rows four at a time, as written
  // "auto" for a group is the automatic count, whatever the kernel's -1 says.
  absl::StatusOr<session::TunedConfig> automatic = tune::applyConfigValues(
      {{"vec_nbuffer[func1_0]", std::string("auto")}}, kTwoBodies, own);
  REQUIRE(automatic.ok());
  CHECK(std::get<passes::GroupSetting>(automatic->knobs.values().at("vec_nbuffer_setting")) ==
        passes::GroupSetting{{passes::GroupKey::inFunc(1, 0), passes::kAutomaticCount},
                             {-1, 4}});
  session::Kernel asAutomatic = compileWith(s, kTwoBodies, {});
  session::Kernel ka = compileWith(s, automatic->moduleText, automatic->knobs);
  CHECK(groupSize(ka, "func1_0") == groupSize(asAutomatic, "func1_0"));
  CHECK(groupSize(ka, "func2_0") == 2);
  // Every group "auto": nothing of the kernel's setting is left.
  absl::StatusOr<session::TunedConfig> all =
      tune::applyConfigValues({{"vec_nbuffer", std::string("auto")}}, kTwoBodies, own);
  REQUIRE(all.ok());
  CHECK(std::get<int64_t>(all->knobs.values().at("vec_nbuffer_mode")) == 1);
}

TEST_CASE("a loop body's cube groups named \"auto\" stay automatic", "[tuner]") {
  session::Session s = tinySession();
  passes::PassKnobs base;
  REQUIRE(base.set("cube_l1_reuse_mode", int64_t(0)).ok());
  absl::StatusOr<tune::SearchSpace> space = session::deriveSearchSpace(s, kLoopMatmul, "", base);
  REQUIRE(space.ok());
  // The written config of a loop body's cube group is "auto": applied, it compiles as
  // the kernel does (it used to turn cube merging off).
  std::optional<tune::Config> written = tune::writtenConfig(*space, kLoopMatmul, base);
  REQUIRE(written);
  absl::StatusOr<session::TunedConfig> applied =
      tune::applyConfig(*space, *written, kLoopMatmul, base);
  REQUIRE(applied.ok());
  session::Kernel candidate = compileWith(s, applied->moduleText, applied->knobs);
  session::Kernel asWritten = compileWith(s, kLoopMatmul, base);
  CHECK(candidate.stats.aicSubgraphs == asWritten.stats.aicSubgraphs);
  CHECK(asWritten.stats.aicSubgraphs < 16);
}

TEST_CASE("per-body merge knobs round-trip through the tune result file and the bank",
          "[tuner]") {
  session::Session s = tinySession();
  TempDir temp;
  session::TuneOptions options = bankOptions(temp, 6, tune::Strategy::Random);
  absl::StatusOr<session::TuneReport> first = session::tuneModule(s, kTwoBodies, options);
  REQUIRE(first.ok());
  REQUIRE(first->best);
  REQUIRE(!first->resultPath.empty());

  // The file names the knobs per body, and its best config applies to the same knobs.
  auto text = llvm::MemoryBuffer::getFile(first->resultPath);
  REQUIRE(text);
  absl::StatusOr<tune::TuneResultFile> file = tune::parseTuneResult((*text)->getBuffer());
  REQUIRE(file.ok());
  CHECK(file->space.findDimension("vec_nbuffer[func1_0]") >= 0);
  CHECK(file->space.findDimension("vec_nbuffer[func2_0]") >= 0);
  REQUIRE(file->result.bestEvaluation());
  absl::StatusOr<session::TunedConfig> fromFile =
      tune::applyConfig(file->space, file->result.bestEvaluation()->config, kTwoBodies, {});
  REQUIRE(fromFile.ok());
  CHECK(fromFile->knobs.values() == first->best->knobs.values());
  CHECK(fromFile->moduleText == first->best->moduleText);

  // The bank answers the same tuning with the same knobs.
  absl::StatusOr<session::TuneReport> second = session::tuneModule(s, kTwoBodies, options);
  REQUIRE(second.ok());
  CHECK(second->bankHit);
  REQUIRE(second->best);
  CHECK(second->best->knobs.values() == first->best->knobs.values());
  CHECK(second->bestUs == first->bestUs);
}
