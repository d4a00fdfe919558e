// `ptoc prof` on traces PyPTO wrote on real NPUs (test/data/pypto-real, as published):
// the numbers of an independent count of the Machine View, a Worker View's blocks
// against the file's own fields, the family detection, and mutated copies (truncated,
// reordered, lanes missing, hostile values) that give errors naming the file and the
// event, never a crash; and `ptoc prof diff` of them against a simulation and against
// a copy with one group slowed down.
#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <map>
#include <random>
#include <tuple>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "ptoc/profile/Swimlane.h"
#include "ptoc/profile/TimelineTrace.h"
#include "ptoc/profile/TraceAnalysis.h"
#include "ptoc/profile/TraceDiff.h"
#include "ptoc/runtime/Reference.h"
#include "ptoc/session/Session.h"
#include "ptoc/target/DeviceSpec.h"

using namespace ptoc;
using namespace ptoc::profile;

namespace {

const std::string kDataDir = PTOC_SOURCE_DIR "/test/data/pypto-real/";
const std::string kMachineView = kDataDir + "KayWang12138__pypto__merged_swimlane.json";
const std::string kWorkerViewEp8 =
    kDataDir + "georgebisbas__pypto-profiling__ep8-p8-l2-uniform1024-rank0-d21__merged_"
               "swimlane_20260910_071357.json";
const std::string kWorkerViewP2 =
    kDataDir + "georgebisbas__pypto-profiling__p2-host-uniform128-rank0-d63__merged_"
               "swimlane_20260909_155138.json";

std::string readText(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  REQUIRE(!text.str().empty());
  return text.str();
}

target::DeviceSpec a2() {
  absl::StatusOr<target::DeviceSpec> device = target::DeviceSpec::preset("a2");
  REQUIRE(device.ok());
  return *device;
}

Timeline load(const std::string &path, const target::DeviceSpec *device = nullptr) {
  TraceReadOptions options;
  options.device = device;
  absl::StatusOr<Timeline> t = loadTrace(path, options);
  INFO(t.status().ToString());
  REQUIRE(t.ok());
  return *std::move(t);
}

/// The task named `name` (PyPTO's "0-1-53").
int taskNamed(const Timeline &t, llvm::StringRef name) {
  for (size_t i = 0; i < t.tasks.size(); ++i)
    if (t.nameOf(static_cast<int>(i)) == name) return static_cast<int>(i);
  FAIL("no task " << name.str());
  return -1;
}

const Verdict *findVerdict(const Analysis &a, llvm::StringRef rule, llvm::StringRef scope = "") {
  for (const Verdict &v : a.verdicts)
    if (v.rule == rule && (scope.empty() || v.scope == scope)) return &v;
  return nullptr;
}

std::string errorOf(const std::string &json, const TraceReadOptions &options = {}) {
  absl::StatusOr<Timeline> t = parseTrace(json, "m.json", options);
  REQUIRE_FALSE(t.ok());
  return std::string(t.status().message());
}

/// A parsed copy of a trace whose traceEvents `change` edits.
template <typename Change> std::string mutated(const std::string &text, Change &&change) {
  llvm::Expected<llvm::json::Value> root = llvm::json::parse(text);
  REQUIRE(bool(root));
  change(*root->getAsObject()->getArray("traceEvents"));
  return llvm::formatv("{0}", *root).str();
}

bool isEvent(const llvm::json::Value &e, llvm::StringRef ph) {
  return e.getAsObject() && e.getAsObject()->getString("ph") == llvm::Optional<llvm::StringRef>(ph);
}

} // namespace

TEST_CASE("Machine View of a real run: the independent count", "[real-trace]") {
  target::DeviceSpec device = a2();
  Timeline t = load(kMachineView, &device);
  CHECK(t.family == TimelineFamily::MachineView);
  CHECK(familyName(t.family) == "pypto-machine-view");
  Analysis a = analyze(t);
  const Summary &s = a.summary;
  // 74 tasks on real cores plus 39 on the control lane.
  CHECK(t.tasks.size() == 113);
  CHECK(s.tasks == 74);
  REQUIRE(a.control);
  CHECK(a.control->nodes == 39);
  CHECK(s.edges == 281);
  // The real tasks span 43.06 us, 74 us with the control lane.
  CHECK(s.spanUs == Approx(43.06).margin(0.005));
  CHECK(a.control->spanWithControlUs == Approx(74.0).margin(0.005));
  // AIC: 40 tasks on all 24 cores, busy 212.1 us; AIV: 34 tasks on 32 cores, 186.4 us.
  REQUIRE(s.coreKinds.size() == 2);
  const CoreKindSummary &aic = s.coreKinds[0], &aiv = s.coreKinds[1];
  CHECK(aic.tasks == 40);
  CHECK(aic.coresUsed == 24);
  CHECK(aic.cores == 24);
  CHECK(aic.busyUs == Approx(212.1).margin(0.05));
  CHECK(aiv.tasks == 34);
  CHECK(aiv.coresUsed == 32);
  CHECK(aiv.cores == 48); // the device's, so the 16 idle cores count
  CHECK(aiv.busyUs == Approx(186.4).margin(0.05));
  CHECK(aiv.utilization == Approx(aiv.busyUs / (48 * s.spanUs)));
  // The heaviest leaf hash runs 16 AIV tasks for 108.5 us in all.
  const GroupSummary *heaviest = nullptr;
  for (const GroupSummary &g : s.groups)
    if (!heaviest || g.totalUs > heaviest->totalUs) heaviest = &g;
  REQUIRE(heaviest);
  CHECK(heaviest->key == "11156575235087307665");
  CHECK(heaviest->core == "AIV");
  CHECK(heaviest->tasks == 16);
  CHECK(heaviest->totalUs == Approx(108.5).margin(0.05));
  CHECK(heaviest->rootHash == "17950014656146227001");
  // The dependency chain through the control nodes spans the whole run: 9 nodes,
  // 44.06 us, from the first control node to the last task's end.
  const CriticalPath &path = s.criticalPath;
  CHECK(path.calls.size() == 9);
  CHECK(path.lengthUs == Approx(44.06).margin(0.005));
  CHECK(path.controlNodes == 4);
  CHECK(t.nameOf(path.calls.front()) == "0-1-0");
  CHECK(t.isControl(path.calls.front()));
  CHECK(t.nameOf(path.calls.back()) == "0-1-24");
  double lastEnd = 0;
  for (size_t i = 0; i < t.tasks.size(); ++i)
    if (!t.isControl(static_cast<int>(i))) lastEnd = std::max(lastEnd, t.tasks[i].end());
  CHECK(t.tasks[path.calls.back()].end() == lastEnd);
  // Every step of the path is an edge of the trace.
  for (size_t k = 1; k < path.calls.size(); ++k) {
    llvm::ArrayRef<int> preds = t.predsOf(path.calls[k]);
    CHECK(std::find(preds.begin(), preds.end(), path.calls[k - 1]) != preds.end());
  }
}

TEST_CASE("Machine View: ready times come from the flows, through control nodes",
          "[real-trace]") {
  target::DeviceSpec device = a2();
  Timeline t = load(kMachineView, &device);
  CHECK(t.carries.readyTimes);
  CHECK(t.carries.readyFromEdges);
  CHECK_FALSE(t.carries.bytes);
  CHECK_FALSE(t.carries.bound);
  for (size_t i = 0; i < t.tasks.size(); ++i) {
    if (t.isControl(static_cast<int>(i))) continue;
    REQUIRE(t.tasks[i].ready);
    CHECK(*t.tasks[i].ready <= t.tasks[i].start);
    CHECK(*t.tasks[i].ready >= t.runStart);
  }
  // 0-1-24 waits for control node 0-1-80, which waits for 22 tasks: it is ready when
  // the last of them ends, not when it starts.
  int task = taskNamed(t, "0-1-24"), control = taskNamed(t, "0-1-80");
  REQUIRE(t.predsOf(task).size() == 1);
  CHECK(t.predsOf(task)[0] == control);
  double latest = 0;
  for (int p : t.predsOf(control))
    if (!t.isControl(p)) latest = std::max(latest, t.tasks[p].end());
  CHECK(*t.tasks[task].ready == latest);
  CHECK(*t.tasks[task].ready < t.tasks[task].start);
}

TEST_CASE("Machine View: verdicts whose preconditions hold", "[real-trace]") {
  target::DeviceSpec device = a2();
  Analysis a = analyze(load(kMachineView, &device));
  // No bytes and no bound in a device trace: nothing judged on them.
  CHECK_FALSE(findVerdict(a, "memory_bound"));
  CHECK_FALSE(findVerdict(a, "near_roofline"));
  // The AIC tasks run in two dependent phases of 20: the waves are counted per phase.
  const CoreKindSummary &aic = a.summary.coreKinds[0];
  CHECK(aic.phases == 2);
  CHECK(aic.phaseTasks == std::vector<int>{20, 20});
  CHECK(aic.waves == 2);
  const Verdict *wave = findVerdict(a, "wave_imbalance", "AIC");
  REQUIRE(wave);
  CHECK_THAT(wave->finding, Catch::Contains("2 dependent phases (20, 20 tasks)"));
  // 34 AIV tasks for the device's 48 AIV cores.
  CHECK(findVerdict(a, "under_parallelised", "AIV"));
  // Without --device the lanes give 24 AIC and 36 AIV cores (AIV_25..AIV_60), a note
  // says so, and no verdict counts idle cores.
  Timeline lanesOnly = load(kMachineView);
  CHECK(lanesOnly.aicCores == 24);
  CHECK(lanesOnly.aivCores == 36);
  CHECK_FALSE(lanesOnly.carries.deviceCores);
  Analysis b = analyze(lanesOnly);
  CHECK_FALSE(findVerdict(b, "under_parallelised"));
  // Waves of 36 guessed AIV cores would be a finding about cores the device may not
  // have: without the device's counts no wave verdict fires.
  CHECK_FALSE(findVerdict(b, "wave_imbalance"));
  CHECK(std::any_of(b.notes.begin(), b.notes.end(), [](const std::string &n) {
    return n.find("--device") != std::string::npos &&
           n.find("no verdict judges waves or idle cores") != std::string::npos;
  }));
  // A device with fewer cores than the lanes name is an error naming the lane.
  absl::StatusOr<target::DeviceSpec> tiny = target::DeviceSpec::preset("tiny");
  REQUIRE(tiny.ok());
  TraceReadOptions small;
  small.device = &*tiny;
  CHECK_THAT(errorOf(readText(kMachineView), small),
             Catch::Contains("is not a core of device tiny") && Catch::Contains("--device"));
}

TEST_CASE("Machine View: analysis.json and the page's trace", "[real-trace]") {
  target::DeviceSpec device = a2();
  Timeline t = load(kMachineView, &device);
  Analysis a = analyze(t);
  llvm::Expected<llvm::json::Value> json = llvm::json::parse(analysisJson(a));
  REQUIRE(bool(json));
  const llvm::json::Object &root = *json->getAsObject();
  CHECK(root.getString("family") == llvm::Optional<llvm::StringRef>("pypto-machine-view"));
  CHECK(root.get("simulated_us")->getAsNull().hasValue()); // a device run: not simulated
  CHECK(root.get("bound")->getAsNull().hasValue());
  CHECK(root.get("bytes")->getAsNull().hasValue());
  CHECK(*root.getNumber("span_us") == Approx(43.06).margin(0.001));
  CHECK(*root.getObject("critical_path")->getInteger("tasks") == 9);
  CHECK(*root.getObject("control")->getInteger("nodes") == 39);
  CHECK(root.getObject("carries")->getBoolean("ready_from_edges") == llvm::Optional<bool>(true));
  CHECK_THAT(analysisText(a), Catch::Contains("measured span 43.060 us") &&
                                  Catch::Contains("74.000 us with the control lane"));
  // The page draws the timeline through a trace in ptoc's layout: one task event per
  // task, one flow pair per edge, each end naming its task.
  std::string display;
  llvm::raw_string_ostream os(display);
  REQUIRE(writeTimelineTrace(os, t).ok());
  os.flush();
  llvm::Expected<llvm::json::Value> trace = llvm::json::parse(display);
  REQUIRE(bool(trace));
  size_t tasks = 0, flows = 0;
  for (const llvm::json::Value &e : *trace->getAsObject()->getArray("traceEvents")) {
    const llvm::json::Object &o = *e.getAsObject();
    if (o.getString("cat") == llvm::Optional<llvm::StringRef>("task")) ++tasks;
    if (o.getString("cat") == llvm::Optional<llvm::StringRef>("dep") && isEvent(e, "s")) {
      ++flows;
      CHECK(o.getObject("args")->getInteger("call"));
    }
  }
  CHECK(tasks == 113);
  CHECK(flows == 281);
}

TEST_CASE("Worker View: blocks, kernel vs setup, no common clock", "[real-trace]") {
  target::DeviceSpec device = a2();
  // The file's own fields, summed here independently of the reader.
  auto fileTotals = [](const std::string &path) {
    llvm::Expected<llvm::json::Value> root = llvm::json::parse(readText(path));
    REQUIRE(bool(root));
    double kernel = 0, setup = 0;
    int blocks = 0;
    for (const llvm::json::Value &e : *root->getAsObject()->getArray("traceEvents"))
      if (isEvent(e, "X")) {
        const llvm::json::Object &args = *e.getAsObject()->getObject("args");
        kernel += *args.getNumber("kernel-duration-us");
        setup += *args.getNumber("local_setup_us");
        ++blocks;
      }
    return std::make_tuple(kernel, setup, blocks);
  };
  SECTION("ep8: three tasks of two blocks, one of them 5 ms") {
    Timeline t = load(kWorkerViewEp8, &device);
    CHECK(t.family == TimelineFamily::WorkerView);
    CHECK_FALSE(t.carries.commonClock);
    CHECK(t.edges() == 0);
    Analysis a = analyze(t);
    auto [kernel, setup, blocks] = fileTotals(kWorkerViewEp8);
    CHECK(blocks == 6);
    REQUIRE(a.blocks.size() == 3);
    double kernelSum = 0, setupSum = 0;
    for (const BlockSummary &b : a.blocks) {
      CHECK(b.blocks == 2);
      kernelSum += b.kernelUs;
      setupSum += b.setupUs;
    }
    CHECK(kernelSum == Approx(kernel));
    CHECK(setupSum == Approx(setup));
    const BlockSummary &r1t1 = a.blocks[1];
    CHECK(r1t1.task == "r1t1");
    CHECK(r1t1.maxKernelUs == Approx(5291.34).margin(1e-6));
    CHECK(r1t1.imbalance == Approx(5291.34 / ((5291.34 + 4654.62) / 2) - 1).margin(1e-6));
    CHECK(r1t1.slowestCore == "AIV_26");
    // The 5 ms task runs on 2 of the 48 AIV cores.
    const Verdict *v = findVerdict(a, "under_parallelised", "AIV");
    REQUIRE(v);
    CHECK_THAT(v->finding, Catch::Contains("task r1t1") && Catch::Contains("2 blocks"));
    // Each core has its own clock: a longest task's start counts from the first block
    // on its core (from the file: its ts less the smallest ts on its lane).
    llvm::Expected<llvm::json::Value> file = llvm::json::parse(readText(kWorkerViewEp8));
    REQUIRE(bool(file));
    std::map<int64_t, double> firstOnLane;
    std::map<std::pair<int64_t, double>, double> startOnLane; // (tid, dur) -> ts - first
    for (const llvm::json::Value &e : *file->getAsObject()->getArray("traceEvents"))
      if (isEvent(e, "X")) {
        int64_t tid = *e.getAsObject()->getInteger("tid");
        double ts = *e.getAsObject()->getNumber("ts");
        firstOnLane[tid] = firstOnLane.count(tid) ? std::min(firstOnLane[tid], ts) : ts;
      }
    for (const llvm::json::Value &e : *file->getAsObject()->getArray("traceEvents"))
      if (isEvent(e, "X")) {
        const llvm::json::Object &o = *e.getAsObject();
        startOnLane[{*o.getInteger("tid"), *o.getNumber("dur")}] =
            *o.getNumber("ts") - firstOnLane[*o.getInteger("tid")];
      }
    REQUIRE(a.summary.topTasks.size() == 6);
    for (const TaskSummary &task : a.summary.topTasks) {
      INFO(task.core << " " << task.durationUs);
      bool found = false;
      for (const auto &[key, start] : startOnLane)
        if (std::abs(key.second - task.durationUs) < 1e-6) {
          CHECK(task.startUs == Approx(start).margin(1e-6));
          found = true;
        }
      CHECK(found);
    }
    CHECK(a.summary.topTasks[0].startUs < 100); // not a device clock's microseconds
    CHECK_THAT(analysisText(a), Catch::Contains("start_on_core_us") &&
                                    Catch::Contains("from the first block on the same core"));
    // Nothing that needs one clock across cores.
    CHECK_FALSE(a.hasBubbles);
    CHECK_FALSE(findVerdict(a, "wave_imbalance"));
    CHECK_FALSE(findVerdict(a, "scheduling_gaps"));
    CHECK_FALSE(findVerdict(a, "scheduler_bound"));
    llvm::Expected<llvm::json::Value> json = llvm::json::parse(analysisJson(a));
    REQUIRE(bool(json));
    const llvm::json::Object &root = *json->getAsObject();
    CHECK(root.get("span_us")->getAsNull().hasValue());
    CHECK(root.get("critical_path")->getAsNull().hasValue());
    CHECK(root.get("bubbles")->getAsNull().hasValue());
    CHECK(root.getArray("blocks")->size() == 3);
  }
  SECTION("p2: one task of 7 blocks on both kinds, setup 37% of the time") {
    Timeline t = load(kWorkerViewP2, &device);
    Analysis a = analyze(t);
    auto [kernel, setup, blocks] = fileTotals(kWorkerViewP2);
    CHECK(blocks == 7);
    REQUIRE(a.blocks.size() == 1);
    CHECK(a.blocks[0].core == "AIC+AIV");
    CHECK(a.blocks[0].setupShare == Approx(setup / (kernel + setup)));
    const Verdict *v = findVerdict(a, "setup_overhead");
    REQUIRE(v);
    CHECK(v->evidence[0].second == Approx(setup / (kernel + setup)));
    // Its blocks are mostly setup: splitting further is not the advice.
    CHECK_FALSE(findVerdict(a, "under_parallelised"));
    // Lanes are drawn from their own first block.
    for (const TimelineLane &lane : t.lanes) {
      double first = 1e300;
      for (const TimelineTask &task : t.tasks)
        if (&t.lanes[task.lane] == &lane) first = std::min(first, task.start);
      CHECK(first + lane.drawShift == 0);
    }
  }
}

TEST_CASE("trace families: detection and what else is an error", "[real-trace]") {
  // A complete file of another kind says what it holds and what was expected, and
  // never calls itself truncated.
  std::string empty = errorOf("{\"traceEvents\":[]}");
  CHECK_THAT(empty, Catch::Contains("no \"otherData\" object") &&
                        Catch::Contains("\"Machine View\"") &&
                        Catch::Contains("0 events (0 complete)"));
  CHECK_THAT(empty, !Catch::Contains("truncated"));
  std::string other = errorOf(
      R"({"traceEvents":[{"ph":"M","name":"process_name","pid":1,"args":{"name":"GPU 0"}},)"
      R"({"ph":"X","name":"k","cat":"kernel","pid":1,"tid":2,"ts":1,"dur":2}]})");
  CHECK_THAT(other, Catch::Contains("process names \"GPU 0\"") &&
                        Catch::Contains("categories \"kernel\"") && !Catch::Contains("truncated"));
  // Damage in the middle is not a truncation; a cut is.
  std::string text = readText(kWorkerViewEp8);
  std::string damaged = text;
  damaged[text.size() / 2] = '}';
  CHECK_THAT(errorOf(damaged), Catch::Contains("not valid JSON") && !Catch::Contains("truncated"));
  CHECK_THAT(errorOf(text.substr(0, text.size() / 2)),
             Catch::Contains("not valid JSON") && Catch::Contains("a truncated trace?"));
  // The advice for a cut follows who wrote the trace: PyPTO's process names come
  // first, so a cut PyPTO trace is not told to re-run with a ptoc debug mode.
  std::string pypto = errorOf(readText(kMachineView).substr(0, 5000));
  CHECK_THAT(pypto, Catch::Contains("a truncated trace? PyPTO writes it after the device run: "
                                    "copy the whole file again from that run's output)") &&
                        !Catch::Contains("runtime_debug_mode"));
  // Cut before any process name: both writers' advice.
  CHECK_THAT(errorOf(text.substr(0, 20)),
             Catch::Contains("a ptoc run: re-run with runtime_debug_mode=1 and let the run "
                             "finish; a PyPTO device trace: PyPTO writes it"));
}

TEST_CASE("trace files: a folder with PyPTO-3's stamped trace", "[real-trace]") {
  llvm::SmallString<128> dir;
  REQUIRE(!llvm::sys::fs::createUniqueDirectory("ptoc-real-trace", dir));
  auto copy = [&](const std::string &from, llvm::StringRef name) {
    llvm::SmallString<128> to(dir);
    llvm::sys::path::append(to, name);
    std::ofstream(std::string(to), std::ios::binary) << readText(from);
    return std::string(to);
  };
  copy(kWorkerViewEp8, "merged_swimlane_20260910_071357.json");
  Timeline one = load(std::string(dir));
  CHECK(one.family == TimelineFamily::WorkerView);
  CHECK(one.tasks.size() == 6);
  // Two runs: the newest by its stamp, and a note says which.
  copy(kWorkerViewP2, "merged_swimlane_20260911_000000.json");
  Timeline newest = load(std::string(dir));
  CHECK(newest.tasks.size() == 7);
  CHECK_THAT(newest.notes.front(), Catch::Contains("read the newest, "
                                                   "merged_swimlane_20260911_000000.json"));
  llvm::sys::fs::remove_directories(dir);
}

TEST_CASE("real traces mutated: errors name the file and the event, never a crash",
          "[real-trace]") {
  target::DeviceSpec device = a2();
  TraceReadOptions withDevice;
  withDevice.device = &device;
  std::string mv = readText(kMachineView), wv = readText(kWorkerViewP2);

  SECTION("truncated anywhere") {
    for (const std::string *text : {&mv, &wv}) {
      size_t step = std::max<size_t>(1, text->size() / 997);
      for (size_t cut = 0; cut + 1 < text->size(); cut += step) {
        absl::StatusOr<Timeline> t = parseTrace(text->substr(0, cut), "m.json");
        REQUIRE_FALSE(t.ok());
        CHECK_THAT(std::string(t.status().message()),
                   Catch::StartsWith("m.json: ") &&
                       (Catch::Contains("a truncated trace?") ||
                        Catch::Contains("not a JSON object")));
      }
    }
  }
  SECTION("events in another order read the same") {
    Analysis base = analyze(load(kMachineView, &device));
    std::mt19937 rng(7);
    std::string shuffled = mutated(mv, [&](llvm::json::Array &events) {
      std::vector<llvm::json::Value> all(events.begin(), events.end());
      std::shuffle(all.begin(), all.end(), rng);
      events.clear();
      for (llvm::json::Value &v : all) events.push_back(std::move(v));
    });
    absl::StatusOr<Timeline> t = parseTrace(shuffled, "m.json", withDevice);
    INFO(t.status().ToString());
    REQUIRE(t.ok());
    Analysis a = analyze(*t);
    CHECK(a.summary.tasks == base.summary.tasks);
    CHECK(a.summary.edges == base.summary.edges);
    CHECK(a.summary.spanUs == base.summary.spanUs);
    CHECK(a.summary.coreKinds[0].busyUs == Approx(base.summary.coreKinds[0].busyUs));
    CHECK(a.summary.criticalPath.lengthUs == base.summary.criticalPath.lengthUs);
    CHECK(a.summary.criticalPath.calls.size() == base.summary.criticalPath.calls.size());
  }
  SECTION("missing lanes") {
    // Idle cores have no lane: dropping every event of AIV_60 is a trace with one idle
    // core more (its flows dropped too).
    std::string fewer = mutated(mv, [](llvm::json::Array &events) {
      std::vector<llvm::json::Value> kept;
      for (llvm::json::Value &e : events) {
        const llvm::json::Object &o = *e.getAsObject();
        if (o.getInteger("tid") != llvm::Optional<int64_t>(1120)) kept.push_back(e);
      }
      // Flows with one end on the dropped lane lose their pair.
      std::map<int64_t, int> ends;
      for (llvm::json::Value &e : kept)
        if (isEvent(e, "s") || isEvent(e, "f")) ++ends[*e.getAsObject()->getInteger("id")];
      events.clear();
      for (llvm::json::Value &e : kept)
        if (!(isEvent(e, "s") || isEvent(e, "f")) || ends[*e.getAsObject()->getInteger("id")] == 2)
          events.push_back(e);
    });
    absl::StatusOr<Timeline> t = parseTrace(fewer, "m.json", withDevice);
    INFO(t.status().ToString());
    REQUIRE(t.ok());
    CHECK(analyze(*t).summary.coreKinds[1].coresUsed == 31);
    // An event on a lane without a name is an error naming it.
    std::string unnamed = mutated(mv, [](llvm::json::Array &events) {
      std::vector<llvm::json::Value> kept;
      for (llvm::json::Value &e : events) {
        const llvm::json::Object &o = *e.getAsObject();
        if (!(isEvent(e, "M") && o.getInteger("tid") == llvm::Optional<int64_t>(1002)))
          kept.push_back(e);
      }
      events = llvm::json::Array(kept);
    });
    CHECK_THAT(errorOf(unnamed), Catch::StartsWith("m.json: event ") &&
                                     Catch::Contains("('0-1-53-82-3()')") &&
                                     Catch::Contains("lane pid 1 tid 1002 has no thread_name"));
  }
  SECTION("clock jitter at flow ends is tolerated") {
    // Flow starts a few tenths of a nanosecond past their slice's end (what reading
    // absolute device microseconds into doubles gives) bind as before.
    Timeline base = load(kMachineView, &device);
    std::string jittered = mutated(mv, [](llvm::json::Array &events) {
      for (llvm::json::Value &e : events)
        if (isEvent(e, "s"))
          (*e.getAsObject())["ts"] = *e.getAsObject()->getNumber("ts") + 0.0003;
    });
    absl::StatusOr<Timeline> t = parseTrace(jittered, "m.json", withDevice);
    INFO(t.status().ToString());
    REQUIRE(t.ok());
    CHECK(t->preds == base.preds);
    CHECK(t->predStart == base.predStart);
  }
  SECTION("hostile values") {
    // Sets `key` of the first complete event to `value`.
    auto firstTask = [&](const std::string &text, const char *key, llvm::json::Value value) {
      return mutated(text, [&](llvm::json::Array &events) {
        for (llvm::json::Value &e : events)
          if (isEvent(e, "X")) {
            (*e.getAsObject())[key] = std::move(value);
            return;
          }
      });
    };
    for (const std::string *text : {&mv, &wv}) {
      CHECK_THAT(errorOf(firstTask(*text, "ts", 1e300)),
                 Catch::StartsWith("m.json: event ") &&
                     Catch::Contains("\"ts\" and \"dur\" must be numbers between 0 and 1e+15"));
      CHECK_THAT(errorOf(firstTask(*text, "dur", -1)), Catch::Contains("\"dur\""));
      CHECK_THAT(errorOf(firstTask(*text, "ts", "soon")), Catch::Contains("\"ts\""));
      CHECK_THAT(errorOf(firstTask(*text, "tid", "AIC")),
                 Catch::Contains("no integer \"pid\" and \"tid\""));
      CHECK_THAT(errorOf(firstTask(*text, "ph", 7)), Catch::Contains("no string \"ph\""));
    }
    // A lane named like no core.
    std::string lane = mutated(mv, [](llvm::json::Array &events) {
      for (llvm::json::Value &e : events)
        if (isEvent(e, "M") && e.getAsObject()->getInteger("tid") == llvm::Optional<int64_t>(1002))
          (*e.getAsObject()->getObject("args"))["name"] = "NPU_1";
    });
    CHECK_THAT(errorOf(lane), Catch::Contains("lane 'NPU_1' is neither a core"));
    std::string huge = mutated(mv, [](llvm::json::Array &events) {
      for (llvm::json::Value &e : events)
        if (isEvent(e, "M") && e.getAsObject()->getInteger("tid") == llvm::Optional<int64_t>(1002))
          (*e.getAsObject()->getObject("args"))["name"] = "AIC_99999999999";
    });
    CHECK_THAT(errorOf(huge), Catch::Contains("AIC_99999999999"));
    // A flow end moved off every task, and one end lost.
    std::string offSlice = mutated(mv, [](llvm::json::Array &events) {
      for (llvm::json::Value &e : events)
        if (isEvent(e, "s")) {
          (*e.getAsObject())["ts"] = 1.0;
          return;
        }
    });
    CHECK_THAT(errorOf(offSlice), Catch::Contains("flow id 113: its 's' event") &&
                                      Catch::Contains("lies on no task of lane 'AIC_1'"));
    std::string oneEnd = mutated(mv, [](llvm::json::Array &events) {
      std::vector<llvm::json::Value> kept;
      bool dropped = false;
      for (llvm::json::Value &e : events) {
        if (!dropped && isEvent(e, "f")) {
          dropped = true;
          continue;
        }
        kept.push_back(e);
      }
      events = llvm::json::Array(kept);
    });
    CHECK_THAT(errorOf(oneEnd), Catch::Contains("flow id 113 has a 's' event") &&
                                    Catch::Contains("but no 'f'"));
    // A block's kernel time that is not a number.
    std::string kernel = mutated(wv, [](llvm::json::Array &events) {
      for (llvm::json::Value &e : events)
        if (isEvent(e, "X")) {
          (*e.getAsObject()->getObject("args"))["kernel-duration-us"] = -3;
          return;
        }
    });
    CHECK_THAT(errorOf(kernel), Catch::Contains("args.kernel-duration-us must be a number"));
  }
  SECTION("random damage: any answer, never a crash") {
    std::mt19937 rng(20);
    const char kJunk[] = "{}[]\",:0-9.eE \"ax_";
    for (const std::string *text : {&mv, &wv})
      for (int round = 0; round < 150; ++round) {
        std::string copy = *text;
        int flips = 1 + static_cast<int>(rng() % 4);
        for (int f = 0; f < flips; ++f)
          copy[rng() % copy.size()] = kJunk[rng() % (sizeof(kJunk) - 1)];
        absl::StatusOr<Timeline> t = parseTrace(copy, "m.json", withDevice);
        if (!t.ok()) {
          CHECK_THAT(std::string(t.status().message()), Catch::StartsWith("m.json: "));
          continue;
        }
        Analysis a = analyze(*t);
        CHECK_FALSE(analysisJson(a).empty());
        CHECK_FALSE(analysisText(a).empty());
        std::string display;
        llvm::raw_string_ostream os(display);
        CHECK(writeTimelineTrace(os, *t).ok());
      }
  }
}

namespace {

/// Per group of a trace, counted from the file's own events (not by the reader).
struct CountedGroup {
  int tasks = 0;
  double totalUs = 0;
  double firstStartUs = 1e300;
};

/// A Machine View's groups of one core kind ("AIC_" / "AIV_" lanes) by leaf hash, and
/// the span of the tasks on cores.
std::map<std::string, CountedGroup> machineViewGroups(const std::string &text,
                                                      llvm::StringRef lanePrefix,
                                                      double *span = nullptr) {
  llvm::Expected<llvm::json::Value> root = llvm::json::parse(text);
  REQUIRE(bool(root));
  const llvm::json::Array &events = *root->getAsObject()->getArray("traceEvents");
  std::map<int64_t, std::string> lanes;
  for (const llvm::json::Value &e : events)
    if (e.getAsObject()->getString("name") == llvm::Optional<llvm::StringRef>("thread_name"))
      lanes[*e.getAsObject()->getInteger("tid")] =
          e.getAsObject()->getObject("args")->getString("name")->str();
  std::map<std::string, CountedGroup> out;
  double first = 1e300, last = 0;
  for (const llvm::json::Value &e : events) {
    if (!isEvent(e, "X")) continue;
    const llvm::json::Object &o = *e.getAsObject();
    llvm::StringRef lane = lanes[*o.getInteger("tid")];
    if (!lane.startswith("AIC_") && !lane.startswith("AIV_")) continue;
    double ts = *o.getNumber("ts"), dur = *o.getNumber("dur");
    first = std::min(first, ts);
    last = std::max(last, ts + dur);
    if (!lane.startswith(lanePrefix)) continue;
    llvm::StringRef hint = *o.getObject("args")->getString("event-hint");
    llvm::StringRef leaf = hint.split("leafHash:").second.split(',').first;
    CountedGroup &g = out[leaf.str()];
    ++g.tasks;
    g.totalUs += dur;
    g.firstStartUs = std::min(g.firstStartUs, ts);
  }
  if (span) *span = last - first;
  return out;
}

/// The key of the group that ran first.
template <typename Groups> std::string firstToRun(const Groups &groups) {
  std::string key;
  double first = 1e300;
  for (const auto &[k, g] : groups)
    if (g.firstStartUs < first) {
      first = g.firstStartUs;
      key = k;
    }
  return key;
}

} // namespace

TEST_CASE("diff: a ptoc simulation of an example against the Machine View",
          "[real-trace][trace-diff]") {
  // examples/softmax.pto simulated on a2, its trace read back as `ptoc prof` reads it.
  absl::StatusOr<session::Session> s = session::Session::create("a2");
  REQUIRE(s.ok());
  absl::StatusOr<session::Kernel> k =
      s->compileText(readText(PTOC_SOURCE_DIR "/examples/softmax.pto"), "softmax.pto", {});
  INFO(k.status().message());
  REQUIRE(k.ok());
  std::vector<runtime::HostTensor> args, results;
  for (size_t i = 0; i < k->args.size(); ++i)
    args.push_back(runtime::randomTensor(k->args[i].dtype, k->args[i].shape, 7 + i));
  session::RunOptions options;
  options.numerics = false;
  absl::StatusOr<session::RunReport> run = s->run(*k, args, results, options);
  REQUIRE(run.ok());
  absl::StatusOr<std::string> trace = swimlaneJson(k->program, run->record);
  REQUIRE(trace.ok());
  absl::StatusOr<Timeline> simulated = parseTrace(*trace, "softmax.json");
  REQUIRE(simulated.ok());
  target::DeviceSpec device = a2();
  TraceDiff d = diffAnalyses(analyze(*simulated), analyze(load(kMachineView, &device)));

  // The simulation's groups by hash order, counted from its trace's task events.
  llvm::Expected<llvm::json::Value> root = llvm::json::parse(*trace);
  REQUIRE(bool(root));
  std::map<std::string, CountedGroup> sim;
  for (const llvm::json::Value &e : *root->getAsObject()->getArray("traceEvents")) {
    const llvm::json::Object &o = *e.getAsObject();
    if (o.getString("cat") != llvm::Optional<llvm::StringRef>("task")) continue;
    CountedGroup &g = sim[absl::StrCat("func0_", *o.getObject("args")->getInteger("hash_order"))];
    ++g.tasks;
    g.totalUs += *o.getNumber("dur");
    g.firstStartUs = std::min(g.firstStartUs, *o.getNumber("ts"));
  }
  const llvm::json::Object &other = *root->getAsObject()->getObject("otherData");
  double spanA = *other.getNumber("simulated_us") - *other.getNumber("head_us");
  double spanB = 0;
  std::map<std::string, CountedGroup> aic = machineViewGroups(readText(kMachineView), "AIC_");
  std::map<std::string, CountedGroup> aiv =
      machineViewGroups(readText(kMachineView), "AIV_", &spanB);
  REQUIRE(spanB == Approx(43.06).margin(0.005));

  CHECK(d.familyA == "ptoc-trace");
  CHECK(d.familyB == "pypto-machine-view");
  REQUIRE(d.spanRatio);
  CHECK(*d.spanRatio == Approx(spanB / spanA).epsilon(1e-4));
  // Hash orders and leaf hashes have no key in common: matched by position.
  CHECK(d.groupMatch == "position");
  // Softmax runs nothing on AIC: the Machine View's AIC groups come first, B's only,
  // with no key for A.
  REQUIRE(d.groups.size() >= aic.size());
  for (size_t i = 0; i < aic.size(); ++i) {
    CHECK(d.groups[i].key.empty());
    CHECK(aic.count(d.groups[i].otherKey));
    CHECK_FALSE(d.groups[i].a);
    CHECK(d.groups[i].core == "AIC");
  }
  // The first pair with both sides: the AIV groups that ran first in each.
  auto pair = std::find_if(d.groups.begin(), d.groups.end(),
                           [](const DiffRow &r) { return r.a && r.b; });
  REQUIRE(pair != d.groups.end());
  std::string keyA = firstToRun(sim), keyB = firstToRun(aiv);
  CHECK(pair->key == keyA);
  CHECK(pair->otherKey == keyB);
  CHECK(pair->core == "AIV");
  REQUIRE(pair->totalRatio);
  CHECK(*pair->totalRatio == Approx(aiv[keyB].totalUs / sim[keyA].totalUs).epsilon(1e-4));
  REQUIRE(pair->tasksRatio);
  CHECK(*pair->tasksRatio == Approx(double(aiv[keyB].tasks) / sim[keyA].tasks));
  // A's path is one softmax task; B's starts at a control node: nothing in common.
  REQUIRE(d.criticalPath.known);
  CHECK(d.criticalPath.commonSteps == 0);
  CHECK(d.criticalPath.stepsB.front() == "control x1");
  CHECK_FALSE(d.same);

  // The text: "-" where A has no group; the JSON: key null, key_b B's.
  std::string text = traceDiffText(d);
  CHECK_THAT(text, Catch::Contains(absl::StrCat("\n  -  ")));
  CHECK_THAT(text, Catch::Contains("differ from their first step"));
  llvm::Expected<llvm::json::Value> json = llvm::json::parse(traceDiffJson(d));
  REQUIRE(bool(json));
  const llvm::json::Array &groups = *json->getAsObject()->getArray("groups");
  const llvm::json::Object &onlyB = *groups[0].getAsObject();
  CHECK(onlyB.get("key")->getAsNull().hasValue());
  CHECK(onlyB.getString("key_b") == llvm::Optional<llvm::StringRef>(d.groups[0].otherKey));
  const llvm::json::Object &matched = *groups[pair - d.groups.begin()].getAsObject();
  CHECK(matched.getString("key") == llvm::Optional<llvm::StringRef>(keyA));
  CHECK(matched.getString("key_b") == llvm::Optional<llvm::StringRef>(keyB));
  CHECK(*matched.getNumber("total_ratio") ==
        Approx(aiv[keyB].totalUs / sim[keyA].totalUs).margin(1e-4));
  CHECK(json->getAsObject()->getObject("critical_path")->getInteger("common_steps") ==
        llvm::Optional<int64_t>(0));
}

TEST_CASE("diff: the Machine View against a copy with one group twice as slow",
          "[real-trace][trace-diff]") {
  // The heaviest leaf hash's tasks take twice as long; the flows leaving them move to
  // their new ends (where a device would have written them).
  const std::string slow = "11156575235087307665";
  std::string text = readText(kMachineView);
  std::string doubled = mutated(text, [&](llvm::json::Array &events) {
    std::vector<std::tuple<int64_t, double, double>> moved; // lane, old end, added
    for (llvm::json::Value &e : events) {
      if (!isEvent(e, "X")) continue;
      llvm::json::Object &o = *e.getAsObject();
      llvm::StringRef hint = *o.getObject("args")->getString("event-hint");
      if (hint.split("leafHash:").second.split(',').first != slow) continue;
      double ts = *o.getNumber("ts"), dur = *o.getNumber("dur");
      moved.emplace_back(*o.getInteger("tid"), ts + dur, dur);
      o["dur"] = 2 * dur;
    }
    REQUIRE(moved.size() == 16);
    for (llvm::json::Value &e : events) {
      if (!isEvent(e, "s")) continue;
      llvm::json::Object &o = *e.getAsObject();
      for (const auto &[tid, end, added] : moved)
        if (*o.getInteger("tid") == tid && std::abs(*o.getNumber("ts") - end) <= 0.05) {
          o["ts"] = end + added;
          break;
        }
    }
  });
  target::DeviceSpec device = a2();
  TraceReadOptions options;
  options.device = &device;
  absl::StatusOr<Timeline> slower = parseTrace(doubled, "doubled.json", options);
  INFO(slower.status().ToString());
  REQUIRE(slower.ok());
  TraceDiff d = diffAnalyses(analyze(load(kMachineView, &device)), analyze(*slower));
  CHECK(d.groupMatch == "key");
  int rows = 0;
  for (const DiffRow &r : d.groups) {
    INFO(r.key);
    REQUIRE(r.a);
    REQUIRE(r.b);
    REQUIRE(r.tasksRatio);
    REQUIRE(r.totalRatio);
    REQUIRE(r.meanRatio);
    CHECK(*r.tasksRatio == 1);
    double expected = r.key == slow ? 2.0 : 1.0;
    CHECK(*r.totalRatio == Approx(expected).epsilon(1e-4));
    CHECK(*r.meanRatio == Approx(expected).epsilon(1e-4));
    rows += r.key == slow;
  }
  CHECK(rows == 1);
  // The AIV row: its busy time grows by the group's, counted from the file; AIC's not.
  std::map<std::string, CountedGroup> aiv = machineViewGroups(text, "AIV_");
  double busy = 0;
  for (const auto &[key, g] : aiv) busy += g.totalUs;
  REQUIRE(d.kinds.size() == 2);
  CHECK(*d.kinds[0].totalRatio == 1);
  CHECK(*d.kinds[1].totalRatio == Approx((busy + aiv[slow].totalUs) / busy).epsilon(1e-4));
  CHECK_FALSE(d.same);
  CHECK_THAT(traceDiffText(d), Catch::EndsWith("\ndifferent\n"));
}

TEST_CASE("diff: a task on both core kinds keeps the merged label",
          "[real-trace][trace-diff]") {
  CHECK(mergedCoreLabel("AIV", "AIV") == "AIV");
  CHECK(mergedCoreLabel("AIV", "AIC") == "AIC+AIV");
  CHECK(mergedCoreLabel("AIC+AIV", "AIV") == "AIC+AIV");
  target::DeviceSpec device = a2();
  Analysis ep8 = analyze(load(kWorkerViewEp8, &device));
  Analysis p2 = analyze(load(kWorkerViewP2, &device));
  // r1t0 runs on AIV in ep8 and on both kinds in p2: AIC+AIV, whichever side is A.
  for (const TraceDiff &d : {diffAnalyses(ep8, p2), diffAnalyses(p2, ep8)}) {
    CHECK(d.groupMatch == "key");
    auto r1t0 = std::find_if(d.groups.begin(), d.groups.end(),
                             [](const DiffRow &r) { return r.key == "r1t0"; });
    REQUIRE(r1t0 != d.groups.end());
    CHECK(r1t0->core == "AIC+AIV");
  }
  // Matched by position, a task on both kinds is matched among such tasks, not dropped.
  TraceDiff d = diffAnalyses(analyze(load(kMachineView, &device)), p2);
  CHECK(d.groupMatch == "position");
  auto mixed = std::find_if(d.groups.begin(), d.groups.end(),
                            [](const DiffRow &r) { return r.otherKey == "r1t0"; });
  REQUIRE(mixed != d.groups.end());
  CHECK(mixed->core == "AIC+AIV");
  CHECK(mixed->key.empty());
  CHECK(mixed->b->tasks == 7);
}
