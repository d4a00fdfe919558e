// Unit tests for the profile outputs of a run with loops (docs/outputs.md): the
// swimlane's iteration args and control-thread lane (still a valid trace that `ptoc
// prof` reads back), the summary's loops section, and the control_bound verdict, which
// fires when the cores wait for the control thread and only then.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "RandomProgram.h"
#include "llvm/Support/JSON.h"
#include "ptoc/profile/Summary.h"
#include "ptoc/profile/Swimlane.h"
#include "ptoc/profile/TraceAnalysis.h"
#include "ptoc/profile/TraceCheck.h"
#include "ptoc/profile/TraceReader.h"
#include "ptoc/runtime/Simulator.h"

using Catch::Matchers::Contains;
using ptoc::codegen::Program;
using ptoc::runtime::RunRecord;
using namespace ptoc;
using namespace ptoc::testprog;

namespace {

/// A segment "prologue" (one task, iteration 0) then a loop "kv" over body "kv_body"
/// of `iterations` iterations of two 2000-cycle tasks, `perStitch` iterations per
/// stitch; the segment is stitch 0. Stitch k is ready `gap` x k cycles after the head,
/// so a large gap makes the control thread the bottleneck.
Program loopProgram(int iterations, int perStitch, double gap) {
  Program p;
  p.funcName = "looped";
  int pro = computeLeaf(p, 500);
  int leaf = computeLeaf(p, 2000);
  p.bodies = {{"prologue", "11aa", 0}, {"kv_body", "22bb", 1}};
  addInstance(p, 0, "prologue", 0);
  int first = addCall(p, pro, {});
  p.calls[first].instance = 0;
  int stitches = 1 + (iterations + perStitch - 1) / perStitch;
  for (int i = 0; i < iterations; ++i) {
    addInstance(p, 1, "kv", i);
    for (int t = 0; t < 2; ++t) {
      int c = addCall(p, leaf, {}, {first});
      p.calls[c].instance = static_cast<int>(p.instances.size()) - 1;
      p.calls[c].stitch = 1 + i / perStitch;
    }
  }
  for (int k = 0; k < stitches; ++k) p.stitchReadyCycles.push_back(gap * k);
  return p;
}

RunRecord simulate(const Program &p) {
  auto r = runtime::simulate(p, preset("tiny"), {});
  if (!r.ok()) FAIL(std::string(r.status().message()));
  return *std::move(r);
}

const profile::Verdict *findVerdict(const std::vector<profile::Verdict> &vs,
                                    const std::string &rule) {
  for (const profile::Verdict &v : vs)
    if (v.rule == rule) return &v;
  return nullptr;
}

/// A string member of a JSON object, "" when missing.
std::string str(const llvm::json::Object *o, llvm::StringRef key) {
  return o ? o->getString(key).getValueOr("").str() : "";
}
int64_t integer(const llvm::json::Object *o, llvm::StringRef key) {
  return o ? o->getInteger(key).getValueOr(-1) : -1;
}

} // namespace

TEST_CASE("the swimlane of a run with loops names each task's iteration and draws the "
          "control thread",
          "[profile][loops]") {
  Program p = loopProgram(6, 2, 20000);
  RunRecord r = simulate(p);
  auto json = profile::swimlaneJson(p, r);
  REQUIRE(json.ok());
  REQUIRE(profile::checkTraceMatches(*json, p).ok());
  auto doc = llvm::json::parse(*json);
  REQUIRE(bool(doc));
  const llvm::json::Array &events = *doc->getAsObject()->getArray("traceEvents");
  int controlTid = -1, tasksWithLoop = 0, builds = 0, opens = 0;
  std::vector<std::string> buildNames;
  for (const llvm::json::Value &v : events) {
    const llvm::json::Object &e = *v.getAsObject();
    std::string ph = str(&e, "ph"), name = str(&e, "name"), cat = str(&e, "cat");
    const llvm::json::Object *args = e.getObject("args");
    if (ph == "M" && name == "thread_name" && str(args, "name") == "AICPU_control") {
      CHECK(integer(&e, "pid") == 1); // the Scheduler process
      controlTid = static_cast<int>(integer(&e, "tid"));
    }
    if (ph == "X" && cat == "task") {
      int call = static_cast<int>(integer(args, "call"));
      const codegen::Instance &inst = p.instances[p.calls[call].instance];
      CHECK(str(args, "loop") == inst.loop);
      CHECK(integer(args, "iteration") == inst.iteration);
      CHECK(str(args, "body") == p.bodies[inst.body].name);
      CHECK(str(args, "body_hash") == p.bodies[inst.body].hash);
      CHECK(integer(args, "stitch") == p.calls[call].stitch);
      ++tasksWithLoop;
    }
    if (cat == "control") {
      CHECK(integer(&e, "tid") == controlTid);
      int k = static_cast<int>(integer(args, "stitch"));
      if (ph == "X") {
        ++builds;
        buildNames.push_back(name);
        // The slice ends when the stitch is built.
        double end = *e.getNumber("ts") + *e.getNumber("dur");
        CHECK(end == Approx(r.toUs(r.stitches[k].readyCycle)).margin(1e-3));
      } else {
        ++opens;
        CHECK(ph == "i");
        CHECK(*e.getNumber("ts") == Approx(r.toUs(r.stitches[k].openCycle)).margin(1e-3));
      }
    }
  }
  CHECK(controlTid == r.schedulerThreads);
  CHECK(tasksWithLoop == static_cast<int>(p.calls.size()));
  CHECK(opens == 4);
  // Stitch 0 is ready at the head: nothing to draw; the others take `gap` each.
  REQUIRE(builds == 3);
  CHECK(buildNames[0] == "build stitch 1: kv iterations 0..1");
  CHECK(buildNames[2] == "build stitch 3: kv iterations 4..5");
  const llvm::json::Object *loops = doc->getAsObject()->getObject("otherData")->getObject("loops");
  REQUIRE(loops);
  CHECK(integer(loops, "stitches") == 4);
  CHECK(*loops->getNumber("control_wait_us") == Approx(r.toUs(r.controlWaitCycles)).margin(1e-3));

  // Without the lane option, or without loops, there is no control lane.
  profile::SwimlaneOptions noLane;
  noLane.controlLane = false;
  auto bare = profile::swimlaneJson(p, r, noLane);
  REQUIRE(bare.ok());
  CHECK_THAT(*bare, !Contains("AICPU_control"));
  Program flat = p;
  flat.stitchReadyCycles.clear();
  for (auto &c : flat.calls) c.stitch = 0;
  RunRecord fr = simulate(flat);
  auto flatJson = profile::swimlaneJson(flat, fr);
  REQUIRE(flatJson.ok());
  CHECK_THAT(*flatJson, !Contains("AICPU_control"));
  CHECK_THAT(*flatJson, !Contains("\"stitch\""));
  CHECK_THAT(*flatJson, Contains("\"body_hash\":\"22bb\"")); // iterations still named
}

TEST_CASE("the summary's loops section and the control_bound verdict", "[profile][loops]") {
  SECTION("a control thread slower than the cores: the verdict fires") {
    Program p = loopProgram(6, 2, 20000);
    RunRecord r = simulate(p);
    auto s = profile::summarize(p, r);
    REQUIRE(s.ok());
    REQUIRE(s->loops);
    const profile::LoopSummary &l = *s->loops;
    CHECK(l.stitches == 4);
    CHECK(l.controlBusyUs == Approx(r.toUs(60000)));
    CHECK(l.controlWaitUs == Approx(r.toUs(r.controlWaitCycles)));
    CHECK(l.controlWaitShare == Approx(l.controlWaitUs / s->spanUs));
    CHECK(l.controlWaitShare > 0.5);
    REQUIRE(l.bodies.size() == 2);
    CHECK(l.bodies[0].name == "prologue");
    CHECK(l.bodies[0].iterations == 1);
    CHECK(l.bodies[1].name == "kv_body");
    CHECK(l.bodies[1].hash == "22bb");
    CHECK(l.bodies[1].iterations == 6);
    CHECK(l.bodies[1].tasks == 12);
    CHECK(l.bodies[1].busyUs == Approx(r.toUs(12 * 2000.0)));
    // The four tasks of a stitch overlap; the stitches run one after another.
    std::vector<double> first(4, 1e300), last(4, 0);
    for (size_t c = 1; c < r.tasks.size(); ++c) {
      first[r.tasks[c].stitch] = std::min(first[r.tasks[c].stitch], r.tasks[c].startCycle);
      last[r.tasks[c].stitch] = std::max(last[r.tasks[c].stitch], r.tasks[c].endCycle);
    }
    double active = 0;
    for (int k = 1; k < 4; ++k) active += last[k] - first[k];
    CHECK(l.bodies[1].activeUs == Approx(r.toUs(active)));
    CHECK(active < 12 * 2000.0);
    CHECK(l.tasksOutsideBodies == 0);
    const profile::Verdict *v = findVerdict(s->verdicts, "control_bound");
    REQUIRE(v);
    CHECK_THAT(v->knob, Contains("stitch_function_max_num"));
    CHECK_THAT(v->knob, Contains("ptoc.loop_unroll"));
    CHECK_THAT(v->finding, Contains("body kv_body: 6 iterations"));
    // The control thread pays per task: merging more tiles per task is a knob too.
    CHECK_THAT(v->knob, Contains("vec_nbuffer_setting"));
    double busyShare = -1;
    for (const auto &[name, value] : v->evidence)
      if (name == "control_busy_share") busyShare = value;
    CHECK(busyShare == Approx(l.controlBusyUs / s->spanUs));
    CHECK_THAT(v->finding, Contains("of the span) building 4 stitches"));
    // The control thread was busy for most of the span: it limits the run, and its
    // verdict comes first. Held to a share above what it reached, the verdict still
    // fires (the cores waited for it) but keeps its place after the others.
    REQUIRE(l.controlBusyUs >= profile::SummaryOptions().controlBusyShare * s->spanUs);
    REQUIRE(s->verdicts.size() >= 2);
    CHECK(s->verdicts.front().rule == "control_bound");
    profile::SummaryOptions strict;
    strict.controlBusyShare = 1.5;
    std::vector<profile::Verdict> unordered = profile::verdicts(*s, strict);
    REQUIRE(findVerdict(unordered, "control_bound"));
    CHECK(unordered.front().rule != "control_bound");

    std::string text = profile::summaryText(*s);
    CHECK_THAT(text, Contains("loops: 4 stitches"));
    CHECK_THAT(text, Contains("kv_body"));
    CHECK_THAT(text, Contains("control_bound"));
    auto json = llvm::json::parse(profile::summaryJson(*s));
    REQUIRE(bool(json));
    const llvm::json::Object *loops = json->getAsObject()->getObject("loops");
    REQUIRE(loops);
    CHECK(integer(loops, "stitches") == 4);
    REQUIRE(loops->getArray("bodies"));
    CHECK(loops->getArray("bodies")->size() == 2);
    CHECK(integer((*loops->getArray("bodies"))[1].getAsObject(), "iterations") == 6);

    // `ptoc prof` on the trace finds the same loops and verdict.
    auto trace = profile::swimlaneJson(p, r);
    REQUIRE(trace.ok());
    auto timeline = profile::parseTrace(*trace, "trace.json");
    REQUIRE(timeline.ok());
    profile::Analysis a = profile::analyze(*timeline);
    REQUIRE(a.summary.loops);
    CHECK(a.summary.loops->stitches == 4);
    CHECK(a.summary.loops->controlWaitUs == Approx(l.controlWaitUs).margin(1e-3));
    REQUIRE(a.summary.loops->bodies.size() == 2);
    CHECK(a.summary.loops->bodies[1].iterations == 6);
    CHECK(a.summary.loops->bodies[1].busyUs == Approx(l.bodies[1].busyUs).margin(1e-2));
    CHECK(findVerdict(a.verdicts, "control_bound"));
    CHECK_THAT(profile::analysisText(a), Contains("loops: 4 stitches"));
  }
  SECTION("a control thread that keeps ahead of the cores, one stitch for the loop: no verdict") {
    // Every iteration in one stitch, built early: nothing waits at a barrier.
    Program p = loopProgram(6, 6, 10);
    RunRecord r = simulate(p);
    auto s = profile::summarize(p, r);
    REQUIRE(s.ok());
    REQUIRE(s->loops);
    CHECK(s->loops->controlWaitShare < 0.1);
    CHECK(s->loops->barrierWaitShare < 0.1);
    CHECK_FALSE(findVerdict(s->verdicts, "control_bound"));
  }
  SECTION("stitches too small for the cores: the barrier serialises them, the verdict fires") {
    // One iteration (two tasks) per stitch: every stitch waits for the one before while
    // most cores idle.
    Program p = loopProgram(6, 1, 10);
    RunRecord r = simulate(p);
    auto s = profile::summarize(p, r);
    REQUIRE(s.ok());
    REQUIRE(s->loops);
    CHECK(s->loops->controlWaitShare < 0.1);
    CHECK(s->loops->barrierWaitShare > 0.1);
    CHECK(findVerdict(s->verdicts, "control_bound"));
  }
  SECTION("a program without loops has no loops section and no verdict on them") {
    Program p = loopProgram(6, 2, 20000);
    p.stitchReadyCycles.clear();
    p.bodies.clear();
    p.instances.clear();
    for (auto &c : p.calls) {
      c.stitch = 0;
      c.instance = -1;
    }
    RunRecord r = simulate(p);
    auto s = profile::summarize(p, r);
    INFO(s.status().message());
    REQUIRE(s.ok());
    CHECK_FALSE(s->loops);
    CHECK_FALSE(findVerdict(s->verdicts, "control_bound"));
    CHECK_THAT(profile::summaryText(*s), !Contains("loops:"));
    CHECK_THAT(profile::summaryJson(*s), Contains("\"loops\": null"));
  }
}

TEST_CASE("a record whose stitches do not match the program is an internal error",
          "[profile][loops]") {
  Program p = loopProgram(4, 2, 1000);
  RunRecord r = simulate(p);
  RunRecord wrongStitch = r;
  wrongStitch.tasks[3].stitch = 0;
  auto s = profile::summarize(p, wrongStitch);
  REQUIRE_FALSE(s.ok());
  CHECK(s.status().code() == absl::StatusCode::kInternal);
  CHECK_THAT(std::string(s.status().message()), Contains("task 3 is in stitch 0"));
  RunRecord fewer = r;
  fewer.stitches.pop_back();
  auto w = profile::swimlaneJson(p, fewer);
  REQUIRE_FALSE(w.ok());
  CHECK_THAT(std::string(w.status().message()), Contains("2 stitch records for 3 stitches"));
}
