// Performance reports: statistics, JSON round trip, reading a run summary, and the
// comparison's verdicts and errors that `ptoc prof compare` turns into exit codes.
#include <catch2/catch.hpp>

#include "ptoc/profile/PerfReport.h"
#include "ptoc/session/ReportRuns.h"
#include "ptoc/session/Session.h"
#include "ptoc/session/Version.h"

using namespace ptoc;
using namespace ptoc::profile;

namespace {

PerfReport sampleReport() {
  PerfReport r;
  r.ptocVersion = "0.1.0";
  r.commit = "abc";
  r.label = "unit";
  r.func = "softmax";
  r.file = "softmax.pto";
  r.args = {{"x", "f32", {64, 256}}};
  r.results = {{"", "f32", {64, 256}}};
  r.device = "tiny";
  r.deviceHash = "0123456789abcdef";
  r.pipeline = "expand-tiles,partition";
  r.schedMode = 1;
  r.passOptions = {{"vec_nbuffer_mode", "0"}};
  r.metrics = {{"simulated_us", 100.0}, {"bound_us", 50.0}, {"ratio", 0.5},
               {"aiv_utilisation", 0.75}, {"tasks", 8}, {"hbm_bytes", 131072}};
  r.limiter = "hbm";
  r.runs = 3;
  r.simulatedStats = computeStats({100, 100, 100});
  r.hasHostTimes = true;
  r.compileSeconds = computeStats({0.01, 0.02, 0.03});
  r.simulateSeconds = computeStats({0.001, 0.001, 0.004});
  return r;
}

const MetricDiff &row(const Comparison &c, const std::string &metric) {
  for (const MetricDiff &d : c.rows)
    if (d.metric == metric) return d;
  FAIL("no row for " << metric);
  return c.rows.front();
}

} // namespace

TEST_CASE("computeStats: nearest-rank percentiles and CV", "[perfreport]") {
  SampleStats s = computeStats({5, 1, 4, 2, 3});
  CHECK(s.count == 5);
  CHECK(s.min == 1);
  CHECK(s.max == 5);
  CHECK(s.mean == Approx(3));
  CHECK(s.p50 == 3);
  CHECK(s.p95 == 5);
  CHECK(s.cv == Approx(std::sqrt(2.0) / 3));
  SampleStats constant = computeStats({7, 7, 7});
  CHECK(constant.p50 == 7);
  CHECK(constant.p95 == 7);
  CHECK(constant.cv == 0);
  CHECK(computeStats({}).count == 0);
  // Twenty samples: p95 is the 19th smallest.
  std::vector<double> twenty;
  for (int i = 1; i <= 20; ++i) twenty.push_back(i);
  CHECK(computeStats(twenty).p95 == 19);
  CHECK(computeStats(twenty).p50 == 10);
}

TEST_CASE("perf report JSON round-trips", "[perfreport]") {
  PerfReport r = sampleReport();
  std::string json = perfReportJson(r);
  CHECK(json.find("\"schema\": \"ptoc-perf-report\"") != std::string::npos);
  absl::StatusOr<PerfReport> back = parsePerfReport(json, "r.json");
  REQUIRE(back.ok());
  CHECK(back->func == "softmax");
  CHECK(back->args == r.args);
  CHECK(back->results == r.results);
  CHECK(back->deviceHash == r.deviceHash);
  CHECK(back->schedMode == 1);
  CHECK(back->passOptions == r.passOptions);
  CHECK(back->metrics == r.metrics);
  CHECK(back->runs == 3);
  CHECK(back->hasHostTimes);
  CHECK(back->compileSeconds.p95 == Approx(0.03));
  CHECK(back->simulateSeconds.cv == Approx(r.simulateSeconds.cv).margin(1e-4));
  // Writing what was read gives the same text.
  CHECK(perfReportJson(*back) == json);
}

TEST_CASE("perf report parse errors name the file and key", "[perfreport]") {
  absl::StatusOr<PerfReport> notJson = parsePerfReport("{", "a.json");
  REQUIRE_FALSE(notJson.ok());
  CHECK(std::string(notJson.status().message()).find("a.json: invalid JSON at line 1 column") == 0);
  absl::StatusOr<PerfReport> other = parsePerfReport("{\"func\": \"f\"}", "s.json");
  REQUIRE_FALSE(other.ok());
  CHECK(std::string(other.status().message()).find("not a ptoc performance report") !=
        std::string::npos);
  std::string json = perfReportJson(sampleReport());
  std::string noMetrics = json;
  noMetrics.replace(noMetrics.find("\"metrics\""), 9, "\"metricz\"");
  absl::StatusOr<PerfReport> missing = parsePerfReport(noMetrics, "m.json");
  REQUIRE_FALSE(missing.ok());
  CHECK(std::string(missing.status().message()) == "m.json: metrics: missing or not an object");
  std::string future = json;
  future.replace(future.find("\"schema_version\": 1"), 19, "\"schema_version\": 99");
  REQUIRE_FALSE(parsePerfReport(future, "f.json").ok());
  // Counts and modes are integers in range, checked before any cast (3e9 does not fit
  // an int; 1.5 is not a count).
  for (const char *bad : {"3000000000", "1.5", "-1"}) {
    std::string wrong = json;
    size_t at = wrong.find("\"sched_mode\": 1");
    REQUIRE(at != std::string::npos);
    wrong.replace(at, 15, std::string("\"sched_mode\": ") + bad);
    absl::StatusOr<PerfReport> r = parsePerfReport(wrong, "w.json");
    REQUIRE_FALSE(r.ok());
    CHECK(std::string(r.status().message()) ==
          "w.json: options.sched_mode: missing or not an integer in [0, 2147483647]");
  }
}

TEST_CASE("compare: verdicts by direction and threshold", "[perfreport]") {
  PerfReport base = sampleReport(), cur = sampleReport();
  SECTION("identical reports pass") {
    absl::StatusOr<Comparison> c = compareReports(base, cur);
    REQUIRE(c.ok());
    CHECK_FALSE(c->regressed);
    CHECK(row(*c, "simulated_us").verdict == "same");
    CHECK(row(*c, "simulated_us").gated);
    CHECK_FALSE(row(*c, "ratio").gated);
  }
  SECTION("slower beyond the threshold regresses") {
    cur.metrics["simulated_us"] = 106;
    absl::StatusOr<Comparison> c = compareReports(base, cur, {5.0, {}, false});
    REQUIRE(c.ok());
    CHECK(c->regressed);
    CHECK(row(*c, "simulated_us").verdict == "REGRESSION");
    CHECK(*row(*c, "simulated_us").deltaPercent == Approx(6));
    std::string text = comparisonText(*c, base, cur, {5.0, {}, false});
    CHECK(text.find("FAIL: regression beyond 5%: simulated_us +6.00%") != std::string::npos);
    // A looser threshold lets it through, as "worse".
    absl::StatusOr<Comparison> loose = compareReports(base, cur, {10.0, {}, false});
    REQUIRE(loose.ok());
    CHECK_FALSE(loose->regressed);
    CHECK(row(*loose, "simulated_us").verdict == "worse");
  }
  SECTION("faster is better, never a regression") {
    cur.metrics["simulated_us"] = 50;
    absl::StatusOr<Comparison> c = compareReports(base, cur);
    REQUIRE(c.ok());
    CHECK_FALSE(c->regressed);
    CHECK(row(*c, "simulated_us").verdict == "better");
  }
  SECTION("higher-is-better metrics gate the other way") {
    cur.metrics["aiv_utilisation"] = 0.5;
    absl::StatusOr<Comparison> ungated = compareReports(base, cur);
    REQUIRE(ungated.ok());
    CHECK_FALSE(ungated->regressed);
    CHECK(row(*ungated, "aiv_utilisation").verdict == "worse");
    absl::StatusOr<Comparison> gated = compareReports(base, cur, {5.0, {"aiv_utilisation"}});
    REQUIRE(gated.ok());
    CHECK(gated->regressed);
    CHECK_FALSE(row(*gated, "simulated_us").gated);
  }
  SECTION("neutral metrics only change") {
    cur.metrics["tasks"] = 16;
    absl::StatusOr<Comparison> c = compareReports(base, cur);
    REQUIRE(c.ok());
    CHECK(row(*c, "tasks").verdict == "changed");
    CHECK_FALSE(c->regressed);
  }
  SECTION("differing options warn") {
    cur.schedMode = 3;
    absl::StatusOr<Comparison> c = compareReports(base, cur);
    REQUIRE(c.ok());
    REQUIRE(c->warnings.size() == 1);
    CHECK(c->warnings[0] == "sched mode differs: 1 vs 3");
  }
}

TEST_CASE("compare: mismatched runs and bad gates are errors", "[perfreport]") {
  PerfReport base = sampleReport(), cur = sampleReport();
  SECTION("another operator") {
    cur.func = "layernorm";
    absl::StatusOr<Comparison> c = compareReports(base, cur);
    REQUIRE_FALSE(c.ok());
    CHECK(std::string(c.status().message()).find("operator 'softmax' vs 'layernorm'") !=
          std::string::npos);
    CHECK(std::string(c.status().message()).find("--force") != std::string::npos);
    absl::StatusOr<Comparison> forced = compareReports(base, cur, {5.0, {}, true});
    REQUIRE(forced.ok());
    CHECK(forced->warnings.front().find("forced: operator") == 0);
  }
  SECTION("other shapes") {
    cur.args[0].shape = {128, 256};
    REQUIRE_FALSE(compareReports(base, cur).ok());
  }
  SECTION("a changed device description") {
    cur.deviceHash = "fedcba9876543210";
    absl::StatusOr<Comparison> c = compareReports(base, cur);
    REQUIRE_FALSE(c.ok());
    CHECK(std::string(c.status().message()).find("content hash") != std::string::npos);
  }
  SECTION("an unknown, neutral or missing gated metric") {
    CHECK_FALSE(compareReports(base, cur, {5.0, {"speed"}}).ok());
    CHECK_FALSE(compareReports(base, cur, {5.0, {"tasks"}}).ok());
    CHECK_FALSE(compareReports(base, cur, {5.0, {"l2_hit_rate"}}).ok());
    CHECK_FALSE(compareReports(base, cur, {-1.0, {}}).ok());
  }
}

TEST_CASE("parseThresholdPercent", "[perfreport]") {
  CHECK(*parseThresholdPercent("5%") == 5);
  CHECK(*parseThresholdPercent("0.5") == 0.5);
  CHECK(*parseThresholdPercent("0%") == 0);
  CHECK_FALSE(parseThresholdPercent("-1%").ok());
  CHECK_FALSE(parseThresholdPercent("%").ok());
  CHECK_FALSE(parseThresholdPercent("five").ok());
}

namespace {

/// One exp over a 64x256 f32 tensor, small enough for the tiny device.
const char *kExp = R"(func @f(%x: tensor<64x256xf32>) -> tensor<64x256xf32> {
  %y = exp %x {vec_tile = [8, 256]} : tensor<64x256xf32>
  return %y
})";

/// kExp compiled with `compile` and simulated once with `run` (timing only).
struct TimedRun {
  session::Kernel kernel;
  session::RunReport report;
};
TimedRun timedRun(const session::Session &s, const session::CompileOptions &compile = {},
                  session::RunOptions run = {}) {
  absl::StatusOr<session::Kernel> k = s.compileText(kExp, "f.pto", compile);
  REQUIRE(k.ok());
  std::vector<runtime::HostTensor> in = {runtime::HostTensor(ir::DType::F32, {64, 256})}, out;
  run.numerics = false;
  absl::StatusOr<session::RunReport> report = s.run(*k, in, out, run);
  REQUIRE(report.ok());
  return {*std::move(k), *std::move(report)};
}

} // namespace

TEST_CASE("report metrics from a run summary match the summary", "[perfreport]") {
  absl::StatusOr<session::Session> s = session::Session::create("tiny");
  REQUIRE(s.ok());
  TimedRun timed = timedRun(*s);
  const session::RunReport *run = &timed.report;
  absl::StatusOr<Summary> summary = summarize(timed.kernel.program, run->record);
  REQUIRE(summary.ok());
  PerfReport r;
  fillMetrics(r, *summary);
  CHECK(r.func == "f");
  CHECK(r.device == "tiny");
  CHECK(r.metrics.at("simulated_us") == Approx(run->simulatedUs));
  CHECK(r.metrics.at("aiv_utilisation") == Approx(run->aivUtilization));
  CHECK(r.metrics.at("tasks") == summary->tasks);
  CHECK(r.metrics.at("hbm_bytes") == summary->hbmReadBytes + summary->hbmWriteBytes);
  // The same numbers come back from summary.json (the run-folder path).
  absl::StatusOr<PerfReport> fromJson = reportFromSummaryJson(summaryJson(*summary), "s.json");
  REQUIRE(fromJson.ok());
  CHECK(fromJson->source == "run_folder");
  for (const auto &[key, value] : r.metrics) {
    INFO(key);
    CHECK(fromJson->metrics.at(key) == Approx(value).epsilon(1e-3));
  }
  REQUIRE_FALSE(reportFromSummaryJson("{\"func\": \"f\"}", "s.json").ok());
}

TEST_CASE("reportFromRuns: N runs of one compile's options, first run's metrics", "[perfreport]") {
  absl::StatusOr<session::Session> s = session::Session::create("tiny");
  REQUIRE(s.ok());
  const char *text = kExp;
  session::ReportRunsOptions options;
  options.repeat = 3;
  options.run.schedMode = 1;
  options.hostTimes = false;
  REQUIRE(options.compile.knobs.setText("vec_nbuffer_mode", "0").ok());
  options.passOptionsText["vec_nbuffer_mode"] = "0";
  absl::StatusOr<PerfReport> r = session::reportFromRuns(*s, text, "f.pto", options);
  REQUIRE(r.ok());
  CHECK(r->func == "f");
  CHECK(r->file == "f.pto");
  CHECK(r->device == "tiny");
  CHECK(r->deviceHash.size() == 16);
  CHECK(r->ptocVersion == session::version().str());
  CHECK(r->runs == 3);
  CHECK(r->schedMode == 1);
  CHECK(r->passOptions == std::map<std::string, std::string>{{"vec_nbuffer_mode", "0"}});
  CHECK_FALSE(r->hasHostTimes);
  CHECK(r->simulatedStats.count == 3);
  CHECK(r->compileSeconds.count == 3);
  CHECK(r->args == std::vector<TensorInfo>{{"x", "f32", {64, 256}}});

  // The metrics are those of one run compiled and simulated with the same options.
  TimedRun one = timedRun(*s, options.compile, options.run);
  CHECK(r->pipeline == one.kernel.pipeline);
  CHECK(r->metrics.at("simulated_us") == Approx(one.report.simulatedUs));
  CHECK(r->simulatedStats.min == Approx(one.report.simulatedUs));
  CHECK(r->simulatedStats.max == Approx(one.report.simulatedUs));

  options.repeat = 0;
  absl::StatusOr<PerfReport> none = session::reportFromRuns(*s, text, "f.pto", options);
  REQUIRE_FALSE(none.ok());
  CHECK(std::string(none.status().message()).find("1 to 1000") != std::string::npos);
  options.repeat = 1;
  absl::StatusOr<PerfReport> bad = session::reportFromRuns(*s, "func @f(", "bad.pto", options);
  REQUIRE_FALSE(bad.ok());
  CHECK(std::string(bad.status().message()).find("bad.pto:1") != std::string::npos);
}
