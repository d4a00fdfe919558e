// The trace analysis on small hand-built traces with known answers: bubbles, groups,
// critical path, per-pipe view, each verdict firing and not firing; and malformed,
// truncated or mistyped traces giving errors, never crashes.
#include <catch2/catch.hpp>

#include <algorithm>
#include <random>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "llvm/Support/JSON.h"
#include "ptoc/profile/TraceAnalysis.h"
#include "ptoc/support/ErrorCategory.h"

using namespace ptoc::profile;

namespace {

struct FakeTask {
  std::string kind;
  int core;
  double ready, start, dur;
  int order;
  std::vector<int> preds = {};
};
struct FakePipe {
  int task;
  std::string pipe;
  double start, dur;
  int64_t bytes = 0;
};
struct FakeRun {
  int aic = 1, aiv = 2;
  double head = 10, simulated = 30, bound = 12;
  int schedMode = 0;
  std::vector<FakeTask> tasks;
  std::vector<FakePipe> pipes;
};

const std::vector<std::string> &pipesOf(const std::string &kind) {
  static const std::vector<std::string> aic = {"MTE2", "MTE1", "CUBE", "FIXPIPE"};
  static const std::vector<std::string> aiv = {"MTE2", "VEC", "MTE3"};
  return kind == "AIC" ? aic : aiv;
}

/// A trace in the layout ptoc writes (docs/outputs.md), pipe lanes when there are pipes.
std::string traceOf(const FakeRun &run) {
  bool pipeLanes = !run.pipes.empty();
  auto pid = [](const std::string &kind) { return kind == "AIC" ? 2 : 3; };
  auto coreTid = [&](const std::string &kind, int core) {
    return pipeLanes ? core * (1 + static_cast<int>(pipesOf(kind).size())) : core;
  };
  llvm::json::Array events;
  for (std::string kind : {"AIC", "AIV"}) {
    events.push_back(llvm::json::Object{{"ph", "M"}, {"name", "process_name"}, {"pid", pid(kind)},
                                        {"args", llvm::json::Object{{"name", kind}}}});
    int cores = kind == "AIC" ? run.aic : run.aiv;
    for (int c = 0; c < cores; ++c) {
      std::string lane = absl::StrCat(kind, "_", c);
      events.push_back(llvm::json::Object{{"ph", "M"}, {"name", "thread_name"}, {"pid", pid(kind)},
                                          {"tid", coreTid(kind, c)},
                                          {"args", llvm::json::Object{{"name", lane}}}});
      if (!pipeLanes) continue;
      for (size_t p = 0; p < pipesOf(kind).size(); ++p)
        events.push_back(llvm::json::Object{
            {"ph", "M"}, {"name", "thread_name"}, {"pid", pid(kind)},
            {"tid", coreTid(kind, c) + 1 + static_cast<int>(p)},
            {"args", llvm::json::Object{{"name", lane + " " + pipesOf(kind)[p]}}}});
    }
  }
  size_t edges = 0;
  for (size_t i = 0; i < run.tasks.size(); ++i) {
    const FakeTask &t = run.tasks[i];
    events.push_back(llvm::json::Object{
        {"ph", "X"}, {"name", absl::StrCat("func0_", t.order, " sg", i)}, {"cat", "task"},
        {"pid", pid(t.kind)}, {"tid", coreTid(t.kind, t.core)}, {"ts", t.start}, {"dur", t.dur},
        {"args", llvm::json::Object{{"call", static_cast<int64_t>(i)},
                                    {"subgraph", static_cast<int64_t>(i)},
                                    {"leaf", t.order},
                                    {"leaf_hash", absl::StrCat("h", t.order)},
                                    {"hash_order", t.order},
                                    {"group_size", 1},
                                    {"bytes_in", 1024},
                                    {"bytes_out", 512},
                                    {"l2_hit_bytes", 256},
                                    {"ready_us", t.ready},
                                    {"dispatch_us", t.start},
                                    {"thread", 0},
                                    {"preds", static_cast<int64_t>(t.preds.size())}}}});
  }
  int64_t id = 0;
  for (size_t i = 0; i < run.tasks.size(); ++i)
    for (int p : run.tasks[i].preds) {
      const FakeTask &prod = run.tasks[p], &cons = run.tasks[i];
      ++id;
      ++edges;
      events.push_back(llvm::json::Object{{"ph", "s"}, {"id", id}, {"cat", "dep"}, {"name", "dep"},
                                          {"pid", pid(prod.kind)},
                                          {"tid", coreTid(prod.kind, prod.core)},
                                          {"ts", prod.start + prod.dur - 0.001}});
      events.push_back(llvm::json::Object{{"ph", "f"}, {"id", id}, {"cat", "dep"}, {"name", "dep"},
                                          {"bp", "e"}, {"pid", pid(cons.kind)},
                                          {"tid", coreTid(cons.kind, cons.core)},
                                          {"ts", cons.start + 0.001}});
    }
  for (const FakePipe &p : run.pipes) {
    const FakeTask &t = run.tasks[p.task];
    const auto &names = pipesOf(t.kind);
    int lane = static_cast<int>(std::find(names.begin(), names.end(), p.pipe) - names.begin());
    events.push_back(llvm::json::Object{
        {"ph", "X"}, {"name", p.pipe}, {"cat", "pipe"}, {"pid", pid(t.kind)},
        {"tid", coreTid(t.kind, t.core) + 1 + lane}, {"ts", p.start}, {"dur", p.dur},
        {"args", llvm::json::Object{{"task", p.task}, {"instr", 0}, {"bytes", p.bytes}}}});
  }
  llvm::json::Object other{{"func", "fake"},
                           {"device", "test"},
                           {"sched_mode", run.schedMode},
                           {"clock_mhz", 1000},
                           {"aic_cores", run.aic},
                           {"aiv_cores", run.aiv},
                           {"scheduler_threads", 1},
                           {"tasks", static_cast<int64_t>(run.tasks.size())},
                           {"edges", static_cast<int64_t>(edges)},
                           {"simulated_us", run.simulated},
                           {"bound_us", run.bound},
                           {"head_us", run.head},
                           {"limiter", "hbm"},
                           {"ratio", run.bound / run.simulated},
                           {"pipe_records", static_cast<int64_t>(run.pipes.size())}};
  llvm::json::Value root = llvm::json::Object{{"traceEvents", std::move(events)},
                                              {"displayTimeUnit", "ns"},
                                              {"otherData", std::move(other)}};
  return llvm::formatv("{0:1}", root).str();
}

Analysis analyzeText(const std::string &json, const AnalysisOptions &options = {}) {
  absl::StatusOr<Timeline> trace = parseTrace(json, "fake.json");
  INFO(trace.status().ToString());
  REQUIRE(trace.ok());
  return analyze(*trace, options);
}

/// The bubble scenario: two AIV cores, one AIC core, head 10, run end 30.
///   AIV_0: t0 ready 10 runs [11,15); t2 (after t0, t1) ready 17 runs [18,23)
///   AIV_1: t1 ready 10 runs [10,16)
///   AIC_0: t3 (after t2) ready 23.5 runs [24,30)
FakeRun bubbleRun() {
  FakeRun run;
  run.tasks = {{"AIV", 0, 10, 11, 4, 0},
               {"AIV", 1, 10, 10, 6, 1},
               {"AIV", 0, 17, 18, 5, 0, {0, 1}},
               {"AIC", 0, 23.5, 24, 6, 2, {2}}};
  return run;
}

const Verdict *findVerdict(const Analysis &a, llvm::StringRef rule, llvm::StringRef scope) {
  for (const Verdict &v : a.verdicts)
    if (v.rule == rule && v.scope == scope) return &v;
  return nullptr;
}

} // namespace

TEST_CASE("trace analysis: idle, bubbles and waits", "[trace-analysis]") {
  Analysis a = analyzeText(traceOf(bubbleRun()));
  const Summary &s = a.summary;
  CHECK(s.spanUs == Approx(20));
  CHECK(s.tasks == 4);
  CHECK(s.edges == 3);
  REQUIRE(s.coreKinds.size() == 2);
  const CoreKindSummary &aiv = s.coreKinds[1];
  CHECK(aiv.kind == "AIV");
  CHECK(aiv.tasks == 3);
  CHECK(aiv.busyUs == Approx(15));
  CHECK(aiv.utilization == Approx(15.0 / 40));
  CHECK(aiv.idleUs == Approx(25));

  REQUIRE(a.coreBubbles.size() == 3); // AIC_0, AIV_0, AIV_1
  const CoreBubbles &aic0 = a.coreBubbles[0], &aiv0 = a.coreBubbles[1], &aiv1 = a.coreBubbles[2];
  CHECK(aiv0.core == "AIV_0");
  CHECK(aiv0.schedIdleUs == Approx(2));  // 10->11 and 17->18: ready, not started
  CHECK(aiv0.depIdleUs == Approx(2));    // 15->17: waiting for t1
  CHECK(aiv0.tailIdleUs == Approx(7));   // 23->30
  CHECK(aiv1.tailIdleUs == Approx(14));
  CHECK(aic0.depIdleUs == Approx(13.5)); // 10->23.5
  CHECK(aic0.schedIdleUs == Approx(0.5));
  // Every core's span is busy + the three kinds of idle.
  for (const CoreBubbles &b : a.coreBubbles)
    CHECK(b.busyUs + b.schedIdleUs + b.depIdleUs + b.tailIdleUs == Approx(20));
  CHECK(a.kindBubbles[1].schedIdleUs == Approx(2));
  CHECK(a.kindBubbles[1].depIdleUs == Approx(2));

  REQUIRE(a.topWaits.size() == 4);
  CHECK(a.topWaits[0].call == 0); // 1 us, ties in call order
  CHECK(a.topWaits[1].call == 2);
  CHECK(a.topWaits[1].depWaitUs == Approx(2));
  CHECK(a.topWaits[2].call == 3);
  CHECK(a.topWaits[2].schedWaitUs == Approx(0.5));
  CHECK(a.topWaits[2].depWaitUs == Approx(13.5));
  CHECK(a.topWaits[3].schedWaitUs == Approx(0));
}

TEST_CASE("trace analysis: groups, top tasks and the critical path", "[trace-analysis]") {
  Analysis a = analyzeText(traceOf(bubbleRun()));
  const Summary &s = a.summary;
  REQUIRE(s.groups.size() == 3);
  const GroupSummary &g0 = s.groups[0];
  CHECK(g0.key == "func0_0");
  CHECK(g0.core == "AIV");
  CHECK(g0.tasks == 2);
  CHECK(g0.coresUsed == 1);
  CHECK(g0.minUs == Approx(4));
  CHECK(g0.avgUs == Approx(4.5));
  CHECK(g0.maxUs == Approx(5));
  CHECK(a.groupShares[0] == Approx(9.0 / 21));
  CHECK(s.groups[2].core == "AIC");

  REQUIRE(s.topTasks.size() == 4);
  CHECK(s.topTasks[0].call == 1); // 6 us, tie with call 3 broken by call order
  CHECK(s.topTasks[1].call == 3);
  CHECK(s.topTasks[2].call == 2);
  CHECK(s.topTasks[1].core == "AIC_0");

  const CriticalPath &path = s.criticalPath;
  CHECK(path.calls == std::vector<int>{1, 2, 3}); // t1 finished after t0, so it held t2
  CHECK(path.startUs == Approx(10));
  CHECK(path.endUs == Approx(30));
  CHECK(path.lengthUs == Approx(20));
  CHECK(path.busyUs == Approx(17));
  CHECK(path.waitUs == Approx(3));
  CHECK(a.criticalPathShare == Approx(1));
  REQUIRE(path.hashOrders.size() == 3);
  CHECK(path.hashOrders[0].first == 1);
}

TEST_CASE("trace analysis: the critical path's steps, in order", "[trace-analysis]") {
  // A chain on one core whose groups come back: the steps are its runs of one group in
  // the order they ran, not each group once.
  auto chain = [](const std::vector<int> &orders) {
    FakeRun run;
    for (size_t i = 0; i < orders.size(); ++i) {
      double start = 10 + 2.0 * i;
      std::vector<int> preds;
      if (i > 0) preds.push_back(static_cast<int>(i) - 1);
      run.tasks.push_back({"AIV", 0, start, start, 1.5, orders[i], preds});
    }
    run.simulated = 10 + 2.0 * orders.size();
    return run;
  };
  Analysis a = analyzeText(traceOf(chain({0, 1, 1, 0})));
  const CriticalPath &path = a.summary.criticalPath;
  REQUIRE(path.calls == std::vector<int>{0, 1, 2, 3});
  CHECK(criticalPathSteps(path) ==
        std::vector<std::string>{"func0_0 x1", "func0_1 x2", "func0_0 x1"});
  CHECK_THAT(analysisText(a),
             Catch::Contains("\n  steps: func0_0 x1 -> func0_1 x2 -> func0_0 x1\n"));
  // The JSON's hash_orders are each group once, with all its tasks on the path.
  REQUIRE(path.hashOrders.size() == 2);
  CHECK(path.hashOrders[0] == std::pair<int, int>{0, 2});
  CHECK(path.hashOrders[1] == std::pair<int, int>{1, 2});

  // 19 runs: the first 9 and the last 3, with the 7 between counted.
  std::vector<int> orders = {0, 0};
  for (int i = 0; i < 18; ++i) orders.push_back(i % 2 == 0 ? 1 : 0);
  Analysis b = analyzeText(traceOf(chain(orders)));
  std::vector<std::string> steps = criticalPathSteps(b.summary.criticalPath);
  REQUIRE(steps.size() == 19);
  CHECK(steps.front() == "func0_0 x2");
  std::string line = criticalPathStepsText(b.summary.criticalPath);
  CHECK(line == "  steps: func0_0 x2 -> func0_1 x1 -> func0_0 x1 -> func0_1 x1 -> func0_0 x1 -> "
                "func0_1 x1 -> func0_0 x1 -> func0_1 x1 -> func0_0 x1 -> (7 more) -> "
                "func0_0 x1 -> func0_1 x1 -> func0_0 x1\n");
  CHECK(criticalPathStepsText(CriticalPath{}).empty());
}

TEST_CASE("trace analysis: text and JSON carry the numbers", "[trace-analysis]") {
  Analysis a = analyzeText(traceOf(bubbleRun()));
  std::string text = analysisText(a);
  CHECK(text.find("simulated 30.000 us (bound 12.000 us") != std::string::npos);
  CHECK(text.find("critical path: 20.000 us") != std::string::npos);
  llvm::Expected<llvm::json::Value> json = llvm::json::parse(analysisJson(a));
  REQUIRE(bool(json));
  const llvm::json::Object &root = *json->getAsObject();
  CHECK(root.getNumber("simulated_us") == 30.0);
  CHECK(root.get("pipes")->getAsNull().hasValue());
  const llvm::json::Array &cores = *root.getArray("cores");
  CHECK(cores[1].getAsObject()->getNumber("sched_idle_us") == 2.0);
  const llvm::json::Object &bubbles = *root.getObject("bubbles");
  CHECK(bubbles.getArray("per_core")->size() == 3);
  CHECK(root.getObject("critical_path")->getArray("calls")->size() == 3);
  CHECK(root.getArray("groups")->front().getAsObject()->getString("key") ==
        llvm::Optional<llvm::StringRef>("func0_0"));
}

namespace {

/// Four AIV cores; each task copies in, computes, copies out. `overlapped`: the
/// copy-in of a task overlaps its compute (what ping-pong buffers give).
FakeRun pipeRun(bool overlapped) {
  FakeRun run;
  run.aic = 1;
  run.aiv = 4;
  run.head = 0;
  run.simulated = 4;
  run.bound = 1;
  for (int c = 0; c < 4; ++c) {
    run.tasks.push_back({"AIV", c, 0, 0, 4, 0});
    if (overlapped) {
      run.pipes.push_back({c, "MTE2", 0, 2, 2000});
      run.pipes.push_back({c, "VEC", 1, 2});
    } else {
      run.pipes.push_back({c, "MTE2", 0, 2, 2000});
      run.pipes.push_back({c, "VEC", 2, 1});
    }
    run.pipes.push_back({c, "MTE3", 3, 1, 1000});
  }
  return run;
}

} // namespace

TEST_CASE("trace analysis: the per-pipe view", "[trace-analysis]") {
  Analysis a = analyzeText(traceOf(pipeRun(false)));
  REQUIRE(a.hasPipes);
  REQUIRE(a.pipes.size() == 3);
  const PipeSummary &mte2 = a.pipes[0];
  CHECK(mte2.pipe == "MTE2");
  CHECK(mte2.transfer);
  CHECK(mte2.events == 4);
  CHECK(mte2.busyUs == Approx(8));
  CHECK(mte2.utilization == Approx(8.0 / 16));
  CHECK(mte2.bytes == 8000);
  CHECK(mte2.busyGBps == Approx(1.0)); // 8000 B in 8 us = 1 GB/s
  CHECK(mte2.spanGBps == Approx(2.0)); // over a 4 us span
  CHECK(a.pipes[1].pipe == "VEC");
  CHECK_FALSE(a.pipes[1].transfer);
  REQUIRE(a.pipeKinds.size() == 1);
  CHECK(a.pipeKinds[0].transferUs == Approx(12));
  CHECK(a.pipeKinds[0].computeUs == Approx(4));
  CHECK(a.pipeKinds[0].transferShare == Approx(0.75));
  CHECK(a.pipeKinds[0].overlapUs == Approx(0));

  Analysis b = analyzeText(traceOf(pipeRun(true)));
  CHECK(b.pipeKinds[0].overlapUs == Approx(4));          // [1,2) on each core
  CHECK(b.pipeKinds[0].overlapShare == Approx(4.0 / 8)); // compute union 2 per core
}

TEST_CASE("trace analysis: verdicts fire and stay quiet", "[trace-analysis]") {
  SECTION("missing_double_buffer and memory_bound") {
    Analysis a = analyzeText(traceOf(pipeRun(false)));
    const Verdict *db = findVerdict(a, "missing_double_buffer", "AIV");
    REQUIRE(db);
    CHECK(db->knob.find("vec_nbuffer_setting={0: 2}") != std::string::npos);
    CHECK(findVerdict(a, "memory_bound", "run"));
    Analysis b = analyzeText(traceOf(pipeRun(true)));
    CHECK_FALSE(findVerdict(b, "missing_double_buffer", "AIV"));
    // At the roofline nothing is memory-bound.
    FakeRun fine = pipeRun(false);
    fine.bound = 4;
    Analysis c = analyzeText(traceOf(fine));
    CHECK_FALSE(findVerdict(c, "memory_bound", "run"));
    CHECK(findVerdict(c, "near_roofline", "run"));
  }
  SECTION("under_parallelised") {
    FakeRun run;
    run.aiv = 4;
    run.tasks = {{"AIV", 0, 10, 10, 20, 0}, {"AIV", 1, 10, 10, 20, 0}};
    Analysis a = analyzeText(traceOf(run));
    const Verdict *v = findVerdict(a, "under_parallelised", "AIV");
    REQUIRE(v);
    CHECK(v->knob.find("set_vec_tile_shapes") != std::string::npos);
    run.tasks.push_back({"AIV", 2, 10, 10, 20, 0});
    run.tasks.push_back({"AIV", 3, 10, 10, 20, 0});
    CHECK_FALSE(findVerdict(analyzeText(traceOf(run)), "under_parallelised", "AIV"));
  }
  SECTION("wave_imbalance") {
    FakeRun run;
    run.aiv = 4;
    for (int i = 0; i < 5; ++i) run.tasks.push_back({"AIV", i % 4, 10, 10.0 + 10 * (i / 4), 10, 0});
    CHECK(findVerdict(analyzeText(traceOf(run)), "wave_imbalance", "AIV"));
    run.tasks.pop_back();
    CHECK_FALSE(findVerdict(analyzeText(traceOf(run)), "wave_imbalance", "AIV"));
  }
  SECTION("scheduler_bound") {
    // Four tasks ready at the head, started one after another by one slow scheduler.
    FakeRun run;
    run.aiv = 4;
    run.simulated = 20;
    for (int i = 0; i < 4; ++i) run.tasks.push_back({"AIV", i, 10, 10.0 + 2 * i, 4, 0});
    Analysis a = analyzeText(traceOf(run));
    const Verdict *v = findVerdict(a, "scheduler_bound", "AIV");
    REQUIRE(v);
    CHECK(v->knob.find("device_sched_mode=1") != std::string::npos);
    run.schedMode = 1;
    Analysis b = analyzeText(traceOf(run));
    v = findVerdict(b, "scheduler_bound", "AIV");
    REQUIRE(v);
    CHECK(v->knob.find("device_sched_mode=3") != std::string::npos);
    // Started as soon as ready: no scheduler verdict.
    for (FakeTask &t : run.tasks) t.start = 10;
    run.simulated = 14;
    CHECK_FALSE(findVerdict(analyzeText(traceOf(run)), "scheduler_bound", "AIV"));
    // Idle spent waiting for predecessors is not the scheduler's fault.
    FakeRun dep;
    dep.aiv = 1;
    dep.aic = 1;
    dep.simulated = 30;
    dep.tasks = {{"AIC", 0, 10, 10, 10, 0}, {"AIV", 0, 20, 21, 9, 1, {0}}};
    CHECK_FALSE(findVerdict(analyzeText(traceOf(dep)), "scheduler_bound", "AIV"));
  }
  SECTION("the summary's rules agree with verdicts()") {
    Analysis a = analyzeText(traceOf(bubbleRun()));
    std::vector<Verdict> shared = verdicts(a.summary);
    REQUIRE(a.verdicts.size() >= shared.size());
    for (size_t i = 0; i < shared.size(); ++i) CHECK(a.verdicts[i].rule == shared[i].rule);
  }
}

TEST_CASE("trace analysis: malformed traces are errors", "[trace-analysis]") {
  std::string good = traceOf(bubbleRun());
  auto errorOf = [](const std::string &json) {
    absl::StatusOr<Timeline> trace = parseTrace(json, "t.json");
    REQUIRE_FALSE(trace.ok());
    return std::string(trace.status().message());
  };
  CHECK(errorOf(good.substr(0, good.size() / 2)).find("not valid JSON at line") !=
        std::string::npos);
  CHECK(errorOf("[1,2]").find("not a JSON object") != std::string::npos);
  CHECK(errorOf("{\"traceEvents\": 3}").find("traceEvents") != std::string::npos);
  CHECK(errorOf("{\"traceEvents\": []}").find("otherData") != std::string::npos);
  CHECK(errorOf(std::string(100, '[')).find("nested deeper") != std::string::npos);

  llvm::json::Value root = *llvm::json::parse(good);
  auto mutate = [&](auto &&change) {
    llvm::json::Value copy = root;
    change(*copy.getAsObject());
    return llvm::formatv("{0}", copy).str();
  };
  auto firstTask = [](llvm::json::Object &r) -> llvm::json::Object & {
    for (llvm::json::Value &e : *r.getArray("traceEvents"))
      if (e.getAsObject()->getString("cat") == llvm::Optional<llvm::StringRef>("task"))
        return *e.getAsObject();
    FAIL("no task");
    return r;
  };
  CHECK(errorOf(mutate([&](llvm::json::Object &r) {
          (*firstTask(r).getObject("args"))["call"] = "zero";
        })).find("args.call") != std::string::npos);
  CHECK(errorOf(mutate([&](llvm::json::Object &r) { firstTask(r)["ts"] = "soon"; }))
            .find("\"ts\"") != std::string::npos);
  CHECK(errorOf(mutate([&](llvm::json::Object &r) { firstTask(r)["tid"] = 77; }))
            .find("no thread_name") != std::string::npos);
  CHECK(errorOf(mutate([&](llvm::json::Object &r) {
          (*r.getObject("otherData"))["tasks"] = 9;
        })).find("otherData.tasks is 9") != std::string::npos);
  CHECK(errorOf(mutate([&](llvm::json::Object &r) { r.getObject("otherData")->erase("head_us"); }))
            .find("otherData.head_us") != std::string::npos);
  // A flow start without its end (the trace was cut between them).
  CHECK(errorOf(mutate([&](llvm::json::Object &r) {
          llvm::json::Array &events = *r.getArray("traceEvents");
          for (size_t i = 0; i < events.size(); ++i)
            if (events[i].getAsObject()->getString("ph") == llvm::Optional<llvm::StringRef>("f")) {
              (*events[i].getAsObject())["ph"] = "i"; // no longer a flow end
              break;
            }
        })).find("no 'f'") != std::string::npos);
}

// Issue 14, item 5: trace numbers are checked (type, range, overflow-safe totals)
// with errors naming the file and the event. Before, `ptoc prof` summed bytes_in into
// "copy-in -4 B" and cast otherData values to int unchecked.
TEST_CASE("trace analysis: numbers out of range are errors naming the event",
          "[trace-analysis]") {
  std::string good = traceOf(bubbleRun());
  llvm::json::Value root = *llvm::json::parse(good);
  auto errorOf = [](const std::string &json) {
    absl::StatusOr<Timeline> trace = parseTrace(json, "t.json");
    REQUIRE_FALSE(trace.ok());
    return std::string(trace.status().message());
  };
  // Sets `key` of the args of every task event (or of otherData) to `value`.
  auto withArg = [&](const char *key, llvm::json::Value value) {
    llvm::json::Value copy = root;
    for (llvm::json::Value &e : *copy.getAsObject()->getArray("traceEvents")) {
      llvm::json::Object &event = *e.getAsObject();
      if (event.getString("cat") == llvm::Optional<llvm::StringRef>("task"))
        (*event.getObject("args"))[key] = value;
    }
    return llvm::formatv("{0}", copy).str();
  };
  auto withOther = [&](const char *key, llvm::json::Value value) {
    llvm::json::Value copy = root;
    (*copy.getAsObject()->getObject("otherData"))[key] = std::move(value);
    return llvm::formatv("{0}", copy).str();
  };
  using Catch::Contains;
  using Catch::StartsWith;
  CHECK_THAT(errorOf(withArg("bytes_in", -4)),
             StartsWith("t.json: event ") &&
                 Contains("args.bytes_in must be an integer between 0 and 9007199254740992, "
                          "got -4"));
  CHECK_THAT(errorOf(withArg("bytes_out", 1.5)),
             Contains("args.bytes_out must be an integer between 0 and 9007199254740992, got 1.5"));
  CHECK_THAT(errorOf(withArg("bytes_in", "many")), Contains("args.bytes_in must be an integer"));
  CHECK_THAT(errorOf(withArg("group_size", int64_t(1) << 40)),
             Contains("args.group_size must be an integer between 0 and 2147483647, got "
                      "1099511627776"));
  CHECK_THAT(errorOf(withArg("thread", -7)), Contains("args.thread must be an integer between -1"));
  CHECK_THAT(errorOf(withArg("hash_order", int64_t(1) << 33)),
             Contains("args.hash_order must be an integer between -1 and 2147483647"));
  CHECK_THAT(errorOf(withArg("ready_us", 1e300)),
             Contains("args.ready_us / dispatch_us must be numbers between 0 and 1e+15"));
  // Each task at the cap, 1024 of them: the total passes int64 and is an error.
  {
    FakeRun many;
    for (int i = 0; i < 1030; ++i) many.tasks.push_back({"AIV", 0, 10.0 + i, 10.0 + i, 1, 0});
    many.simulated = 1100;
    llvm::json::Value big = *llvm::json::parse(traceOf(many));
    for (llvm::json::Value &e : *big.getAsObject()->getArray("traceEvents")) {
      llvm::json::Object &event = *e.getAsObject();
      if (event.getString("cat") == llvm::Optional<llvm::StringRef>("task"))
        (*event.getObject("args"))["bytes_out"] = int64_t(1) << 53;
    }
    CHECK_THAT(errorOf(llvm::formatv("{0}", big).str()),
               Contains("event 1028 ('func0_0 sg1023'): args.bytes_in / bytes_out: the tasks' "
                        "bytes add up to more than 2^63 - 1"));
  }
  CHECK_THAT(errorOf(withArg("l2_hit_bytes", int64_t(1) << 40)),
             Contains("args.l2_hit_bytes (1099511627776) exceeds args.bytes_in"));
  // Read stalls: times in range, the fill wait a part of the stall.
  CHECK_THAT(errorOf(withArg("read_stall_us", -1)),
             Contains("args.read_stall_us must be a number between 0 and 1e+15 (us)"));
  {
    llvm::json::Value both = *llvm::json::parse(withArg("read_stall_us", 0.5));
    for (llvm::json::Value &e : *both.getAsObject()->getArray("traceEvents")) {
      llvm::json::Object &event = *e.getAsObject();
      if (event.getString("cat") == llvm::Optional<llvm::StringRef>("task"))
        (*event.getObject("args"))["fill_wait_us"] = 0.75;
    }
    CHECK_THAT(errorOf(llvm::formatv("{0}", both).str()),
               Contains("args.fill_wait_us one between 0 and read_stall_us (it is a part of it)"));
    // Within it, the trace carries read stalls; without the arg, it does not.
    for (llvm::json::Value &e : *both.getAsObject()->getArray("traceEvents")) {
      llvm::json::Object &event = *e.getAsObject();
      if (event.getString("cat") == llvm::Optional<llvm::StringRef>("task"))
        (*event.getObject("args"))["fill_wait_us"] = 0.25;
    }
    absl::StatusOr<Timeline> ok = parseTrace(llvm::formatv("{0}", both).str(), "t.json");
    REQUIRE(ok.ok());
    CHECK(ok->carries.readStalls);
    CHECK(ok->tasks.front().readStall == Approx(0.5));
    CHECK(ok->tasks.front().fillWait == Approx(0.25));
    absl::StatusOr<Timeline> without = parseTrace(good, "t.json");
    REQUIRE(without.ok());
    CHECK_FALSE(without->carries.readStalls);
  }
  // otherData: whole numbers in range, no casts of arbitrary doubles to int.
  CHECK_THAT(errorOf(withOther("sched_mode", 1e300)),
             Contains("otherData.sched_mode is 1e+300; it must be a whole number between 0 and 3"));
  CHECK_THAT(errorOf(withOther("sched_mode", 1.5)), Contains("otherData.sched_mode is 1.5"));
  CHECK_THAT(errorOf(withOther("aic_cores", 3e9)),
             Contains("otherData.aic_cores is 3e+09; it must be a whole number between 0 and "
                      "2.14748e+09"));
  CHECK_THAT(errorOf(withOther("scheduler_threads", -1)),
             Contains("otherData.scheduler_threads is -1"));
  CHECK_THAT(errorOf(withOther("clock_mhz", 0)), Contains("otherData.clock_mhz is 0"));
  CHECK_THAT(errorOf(withOther("simulated_us", -1)), Contains("otherData.simulated_us is -1"));
  CHECK_THAT(errorOf(withOther("ratio", -2)), Contains("otherData.ratio is -2"));
}

TEST_CASE("trace analysis: fuzzed traces never crash", "[trace-analysis]") {
  std::string good = traceOf(bubbleRun());
  // Every truncation is an error (the closing brace is last).
  for (size_t cut = 0; cut + 1 < good.size(); cut += 7)
    CHECK_FALSE(parseTrace(good.substr(0, cut), "t.json").ok());
  // Random byte flips and wrong-typed values: any status, but no crash, and an
  // accepted trace analyses and renders.
  std::mt19937 rng(12345);
  const char kJunk[] = "{}[]\",:0-9.eE \"ax";
  for (int round = 0; round < 400; ++round) {
    std::string text = good;
    int flips = 1 + static_cast<int>(rng() % 4);
    for (int f = 0; f < flips; ++f)
      text[rng() % text.size()] = kJunk[rng() % (sizeof(kJunk) - 1)];
    absl::StatusOr<Timeline> trace = parseTrace(text, "t.json");
    if (trace.ok()) {
      Analysis a = analyze(*trace);
      CHECK_FALSE(analysisJson(a).empty());
      CHECK_FALSE(analysisText(a).empty());
    } else {
      CHECK_FALSE(trace.status().message().empty());
    }
  }
}

TEST_CASE("trace analysis: loadTrace reads a file or a run folder", "[trace-analysis]") {
  absl::StatusOr<Timeline> missing = loadTrace("/nonexistent/ptoc/trace.json");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().message().find("cannot read trace '/nonexistent/ptoc/trace.json'") !=
        std::string::npos);
  CHECK(ptoc::support::categoryOf(missing.status()) == ptoc::support::DiagCategory::IO);
  absl::StatusOr<Timeline> emptyFolder = loadTrace(PTOC_SOURCE_DIR "/docs");
  REQUIRE_FALSE(emptyFolder.ok());
  CHECK(emptyFolder.status().message().find("no merged_swimlane.json in folder") !=
        std::string::npos);
}

// The trace is read event by event by a strict JSON reader of its own (not
// llvm::json): these pin what it accepts and rejects.
TEST_CASE("trace analysis: the event reader on tricky JSON", "[trace-analysis]") {
  std::string good = traceOf(bubbleRun());
  absl::StatusOr<Timeline> base = parseTrace(good, "t.json");
  REQUIRE(base.ok());
  llvm::json::Value root = *llvm::json::parse(good);
  auto sameTasks = [&](const Timeline &t) {
    REQUIRE(t.tasks.size() == base->tasks.size());
    for (size_t c = 0; c < t.tasks.size(); ++c) {
      CHECK(t.tasks[c].start == base->tasks[c].start);
      CHECK(t.tasks[c].dur == base->tasks[c].dur);
      CHECK(t.lanes[t.tasks[c].lane].name == base->lanes[base->tasks[c].lane].name);
      CHECK(t.predsOf(int(c)).vec() == base->predsOf(int(c)).vec());
    }
    CHECK(t.edges() == base->edges());
  };
  SECTION("pretty-printed whitespace reads the same") {
    absl::StatusOr<Timeline> pretty = parseTrace(llvm::formatv("{0:4}", root).str(), "t.json");
    REQUIRE(pretty.ok());
    sameTasks(*pretty);
  }
  SECTION("escapes, unicode, exponents and nested args") {
    llvm::json::Value copy = root;
    for (llvm::json::Value &e : *copy.getAsObject()->getArray("traceEvents")) {
      llvm::json::Object &event = *e.getAsObject();
      if (event.getString("cat") != llvm::Optional<llvm::StringRef>("task")) continue;
      llvm::json::Object &args = *event.getObject("args");
      args["nested"] = llvm::json::Array{llvm::json::Object{{"deep", llvm::json::Array{1, "x"}}},
                                         nullptr, true, false, -0.5};
    }
    std::string text = llvm::formatv("{0}", copy).str();
    // Write one leaf hash with escapes (llvm::json prints them raw) and one time with an
    // exponent: "ts":10 -> "ts":1.0e1 keeps the value.
    size_t hash = text.find("\"leaf_hash\":\"");
    REQUIRE(hash != std::string::npos);
    text.insert(hash + 13, "\\u00e9\\ud83d\\ude00\\\"\\\\\\/\\n");
    size_t ts = text.find("\"ts\":10,");
    if (ts != std::string::npos) text.replace(ts, 8, "\"ts\":1.0E+1,");
    absl::StatusOr<Timeline> tricky = parseTrace(text, "t.json");
    REQUIRE(tricky.ok());
    sameTasks(*tricky);
    bool decoded = false;
    for (const TimelineGroup &g : tricky->groups)
      decoded |= llvm::StringRef(g.leafHash).startswith("\xc3\xa9\xf0\x9f\x98\x80\"\\/\n");
    CHECK(decoded);
  }
  SECTION("not JSON: the reader is strict") {
    auto errorOf = [](const std::string &json) {
      absl::StatusOr<Timeline> trace = parseTrace(json, "t.json");
      REQUIRE_FALSE(trace.ok());
      return std::string(trace.status().message());
    };
    for (const char *bad : {"{\"traceEvents\":[{\"ph\":\"M\",\"x\":01}]}",
                            "{\"traceEvents\":[{\"ph\":\"M\",\"x\":1.}]}",
                            "{\"traceEvents\":[{\"ph\":\"M\",\"x\":-}]}",
                            "{\"traceEvents\":[{\"ph\":\"M\",\"x\":\"\\q\"}]}",
                            "{\"traceEvents\":[{\"ph\":\"M\",\"x\":\"\\u12g4\"}]}",
                            "{\"traceEvents\":[{\"ph\":\"M\",\"x\":\"a\tb\"}]}",
                            "{\"traceEvents\":[{\"ph\":\"M\",\"x\":\"\xff\"}]}",
                            "{\"traceEvents\":[{\"ph\":\"M\",\"x\":tru}]}",
                            "{\"traceEvents\":[{\"ph\":\"M\",}]}",
                            "{\"traceEvents\":[] \"otherData\":{}}",
                            "{\"traceEvents\":[]} x"})
      CHECK_THAT(errorOf(bad), Catch::Contains("not valid JSON at line 1 col"));
    CHECK_THAT(errorOf("{\"traceEvents\":[\n{\"ph\":\"M\",\n\"x\":01}]}"),
               Catch::Contains("not valid JSON at line 3 col 6"));
    CHECK_THAT(errorOf("{\"traceEvents\":[{\"ph\":\"M\",\"x\":01}], \"otherData\": 3}"),
               Catch::Contains("not valid JSON"));
  }
  SECTION("cut at every byte: an error naming where, never a crash") {
    for (size_t cut = 0; cut + 1 < good.size(); ++cut) {
      absl::StatusOr<Timeline> trace = parseTrace(good.substr(0, cut), "t.json");
      REQUIRE_FALSE(trace.ok());
      CHECK_THAT(std::string(trace.status().message()),
                 Catch::Contains("not valid JSON at line") || Catch::Contains("not a JSON object"));
    }
  }
}
