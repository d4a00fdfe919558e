// Unit tests for loop stitches in the simulator (docs/runtime.md "Loops"): a stitch's
// tasks start only once the control thread has built it and every task of the stitch
// before has ended, under every scheduler mode and in plain kernels; the stitch
// records and the control / barrier wait totals; a one-stitch program simulates as a
// program without loops; malformed loop fields are reported as compiler bugs.
#include <catch2/catch.hpp>

#include <algorithm>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "RandomProgram.h"
#include "ptoc/runtime/Simulator.h"
#include "ptoc/support/ErrorCategory.h"

using Catch::Matchers::Contains;
using ptoc::codegen::Program;
using ptoc::runtime::KernelKind;
using ptoc::runtime::RunRecord;
using ptoc::runtime::SimOptions;
using ptoc::runtime::StitchRecord;
using ptoc::runtime::TaskRecord;
using ptoc::target::DeviceSpec;
using namespace ptoc::testprog;

namespace {

/// Puts calls [begin[k], begin[k + 1]) into stitch k, ready `ready[k]` cycles after
/// the head, with one loop instance per call.
void stitch(Program &p, const std::vector<int> &begin, std::vector<double> ready) {
  p.bodies = {{"body", "abc123", 0}};
  p.instances.clear();
  for (size_t k = 0; k + 1 < begin.size(); ++k)
    for (int c = begin[k]; c < begin[k + 1]; ++c) {
      p.calls[c].stitch = static_cast<int>(k);
      p.calls[c].instance = static_cast<int>(p.instances.size());
      addInstance(p, 0, "i", c);
    }
  p.stitchReadyCycles = std::move(ready);
}

/// The rule and the records, checked against the task times alone: no task of stitch
/// k starts before the last of stitch k - 1 ends nor before head + ready[k]; a task
/// is ready no earlier than its stitch opens; the stitch records and totals agree.
void checkStitches(const Program &p, const RunRecord &r) {
  const double head = r.bound.headCycles + r.bound.startCycles;
  const int S = static_cast<int>(p.stitchReadyCycles.size());
  REQUIRE(static_cast<int>(r.stitches.size()) == S);
  std::vector<double> firstStart(S, std::numeric_limits<double>::infinity());
  std::vector<double> lastEnd(S, -std::numeric_limits<double>::infinity());
  std::vector<int> tasks(S, 0);
  for (size_t c = 0; c < p.calls.size(); ++c) {
    const TaskRecord &t = r.tasks[c];
    REQUIRE(t.stitch == p.calls[c].stitch);
    CHECK(t.instance == p.calls[c].instance);
    firstStart[t.stitch] = std::min(firstStart[t.stitch], t.startCycle);
    lastEnd[t.stitch] = std::max(lastEnd[t.stitch], t.endCycle);
    ++tasks[t.stitch];
    CHECK(t.startCycle >= head + p.stitchReadyCycles[t.stitch]);
    CHECK(t.readyCycle >= r.stitches[t.stitch].openCycle);
    CHECK(t.startCycle >= t.readyCycle);
  }
  double control = 0, barrier = 0;
  for (int k = 0; k < S; ++k) {
    const StitchRecord &s = r.stitches[k];
    // Stitch k - 1 was done when its last task ended (an empty one: when it opened).
    double before = k == 0 ? head : std::max(r.stitches[k - 1].openCycle, lastEnd[k - 1]);
    if (k > 0) CHECK(firstStart[k] >= lastEnd[k - 1]); // the barrier
    CHECK(s.tasks == tasks[k]);
    CHECK(s.readyCycle == head + p.stitchReadyCycles[k]);
    CHECK(s.barrierCycle == before);
    CHECK(s.openCycle == std::max(s.readyCycle, before));
    if (tasks[k] > 0) CHECK(firstStart[k] >= s.openCycle);
    control += std::max(0.0, s.readyCycle - before);
    if (k > 0) {
      // The window it waited at the barrier, weighted by the idle share of the cores
      // the program uses while the stitch before finished.
      double from = std::max(s.readyCycle, r.stitches[k - 1].openCycle);
      double until = std::max(from, s.barrierCycle);
      double busy = 0;
      bool aic = false, aiv = false;
      for (const TaskRecord &t : r.tasks) {
        aic |= t.core == ptoc::target::CoreKind::AIC;
        aiv |= t.core == ptoc::target::CoreKind::AIV;
        if (t.stitch == k - 1)
          busy += std::max(0.0, std::min(t.endCycle, until) - std::max(t.startCycle, from));
      }
      double cores = (aic ? r.aicCores : 0) + (aiv ? r.aivCores : 0);
      barrier += std::max(0.0, (until - from) - busy / cores);
    }
  }
  CHECK(r.controlWaitCycles == Approx(control));
  CHECK(r.barrierWaitCycles == Approx(barrier));
  CHECK(r.controlBusyCycles == p.stitchReadyCycles.back());
}

/// Three stitches of two independent 1000-cycle tasks; stitch 1 is built long before
/// stitch 0 ends (the barrier holds it), stitch 2 long after stitch 1 ends (the
/// control thread holds it).
Program threeStitches(double lateReady) {
  Program p;
  p.funcName = "loops";
  int leaf = computeLeaf(p, 1000);
  for (int i = 0; i < 6; ++i) addCall(p, leaf, {});
  stitch(p, {0, 2, 4, 6}, {0, 100, lateReady});
  return p;
}

} // namespace

TEST_CASE("a stitch opens when it is built and the stitch before has ended", "[sim][loops]") {
  DeviceSpec d = preset("tiny");
  const double D = d.scheduler.dispatchCycles;
  const double late = 50000;
  Program p = threeStitches(late);
  for (int mode = 0; mode <= 3; ++mode) {
    INFO("mode " << mode);
    RunRecord r = run(p, d, mode, false, KernelKind::Aicpu);
    checkStitches(p, r);
    const double head = r.bound.headCycles;
    const std::vector<StitchRecord> &s = r.stitches;
    // Stitch 1 waited at the barrier: it opened when stitch 0's last task ended.
    CHECK(s[1].openCycle == std::max(r.tasks[0].endCycle, r.tasks[1].endCycle));
    CHECK(s[1].barrierWaitCycles() > 0);
    CHECK(s[1].controlWaitCycles() == 0);
    // Stitch 2 waited for the control thread; the idle thread dispatched its tasks
    // the moment it opened.
    CHECK(s[2].openCycle == head + late);
    CHECK(s[2].controlWaitCycles() > 0);
    CHECK(r.tasks[4].readyCycle == head + late);
    CHECK(std::min(r.tasks[4].startCycle, r.tasks[5].startCycle) == head + late + D);
    CHECK(r.controlWaitCycles == Approx(s[2].controlWaitCycles()));
    // Stitch 0's two tasks leave half of tiny's four AIV cores idle while stitch 1 waits.
    CHECK(r.barrierWaitCycles > 0);
    CHECK(r.barrierWaitCycles < s[1].barrierWaitCycles() + s[2].barrierWaitCycles());
    CHECK(r.controlBusyCycles == late);
  }
}

TEST_CASE("plain kernels keep the stitch barrier and ready times", "[sim][loops]") {
  DeviceSpec d = preset("tiny");
  const double late = 50000;
  Program p = threeStitches(late);
  RunRecord r = run(p, d, 0, false, KernelKind::Plain);
  checkStitches(p, r);
  const double begin = r.bound.headCycles + r.bound.startCycles;
  CHECK(r.stitches[2].openCycle == begin + late);
  CHECK(std::min(r.tasks[4].startCycle, r.tasks[5].startCycle) == begin + late);
  // Without stitches the first four tasks start at once on the four AIV cores.
  Program flat = p;
  for (auto &c : flat.calls) c.stitch = 0;
  flat.stitchReadyCycles.clear();
  RunRecord f = run(flat, d, 0, false, KernelKind::Plain);
  CHECK(f.tasks[3].startCycle == begin);
  CHECK(r.tasks[3].startCycle > begin);
  CHECK(f.makespanCycles < r.makespanCycles);
}

TEST_CASE("cross-stitch dependencies: a task waits for its stitch and its predecessors",
          "[sim][loops]") {
  DeviceSpec d = preset("tiny");
  Program p;
  int leaf = computeLeaf(p, 700);
  int a = addCall(p, leaf, {});
  int b = addCall(p, leaf, {}, {a});   // stitch 0, after a
  int c = addCall(p, leaf, {}, {a});   // stitch 1: a done long before it opens
  int e = addCall(p, leaf, {}, {b, c}); // stitch 1, after c
  (void)e;
  stitch(p, {0, 2, 4}, {0, 3000});
  for (int mode = 0; mode <= 3; ++mode) {
    INFO("mode " << mode);
    RunRecord r = run(p, d, mode, false, KernelKind::Aicpu);
    checkStitches(p, r);
    // c's predecessor ended in stitch 0, so c became ready when stitch 1 opened.
    CHECK(r.tasks[c].readyCycle == r.stitches[1].openCycle);
    CHECK(r.tasks[b].readyCycle < r.stitches[1].openCycle);
  }
}

TEST_CASE("random programs split into stitches keep the stitch rule in every mode",
          "[sim][loops]") {
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    INFO("seed " << seed);
    DeviceSpec d = randomDevice(seed);
    Program p = randomProgram(seed, {60, 3, 20});
    std::mt19937_64 rng(seed);
    // 1-5 stitches at random cut points (some empty), ready times random but in order.
    int S = 1 + static_cast<int>(rng() % 5);
    std::vector<int> begin = {0};
    for (int k = 1; k < S; ++k) begin.push_back(static_cast<int>(rng() % 61));
    begin.push_back(60);
    std::sort(begin.begin(), begin.end());
    std::vector<double> ready;
    double t = 0;
    for (int k = 0; k < S; ++k) ready.push_back(t += static_cast<double>(rng() % 20000));
    stitch(p, begin, ready);
    for (int mode = 0; mode <= 3; ++mode) {
      INFO("mode " << mode);
      checkStitches(p, run(p, d, mode, false, KernelKind::Aicpu));
    }
    checkStitches(p, run(p, d, 0, false, KernelKind::Plain));
  }
}

TEST_CASE("one stitch ready at the head simulates as a program without loops", "[sim][loops]") {
  DeviceSpec d = preset("a2");
  Program flat = randomProgram(7, {80, 3, 30});
  Program one = flat;
  stitch(one, {0, 80}, {0});
  Program late = flat;
  const double delay = 12345;
  stitch(late, {0, 80}, {delay});
  for (KernelKind kind : {KernelKind::Aicpu, KernelKind::Plain})
    for (int mode = 0; mode <= (kind == KernelKind::Plain ? 0 : 3); ++mode) {
      INFO("mode " << mode << " " << ptoc::runtime::kernelKindName(kind));
      RunRecord a = run(flat, d, mode, false, kind);
      RunRecord b = run(one, d, mode, false, kind);
      RunRecord c = run(late, d, mode, false, kind);
      CHECK(a.stitches.empty());
      CHECK(a.controlBusyCycles == 0);
      CHECK(a.controlWaitCycles == 0);
      REQUIRE(b.stitches.size() == 1);
      CHECK(b.controlWaitCycles == 0);
      CHECK(c.controlWaitCycles == delay);
      CHECK(a.makespanCycles == b.makespanCycles);
      CHECK(c.makespanCycles == Approx(a.makespanCycles + delay));
      for (size_t x = 0; x < a.tasks.size(); ++x) {
        CHECK(a.tasks[x].stitch == 0);
        CHECK(a.tasks[x].instance == -1);
        CHECK(a.tasks[x].readyCycle == b.tasks[x].readyCycle);
        CHECK(a.tasks[x].dispatchCycle == b.tasks[x].dispatchCycle);
        CHECK(a.tasks[x].startCycle == b.tasks[x].startCycle);
        CHECK(a.tasks[x].endCycle == b.tasks[x].endCycle);
        CHECK(a.tasks[x].coreIndex == b.tasks[x].coreIndex);
        CHECK(a.tasks[x].thread == b.tasks[x].thread);
        // A stitch built late shifts the whole run.
        CHECK(c.tasks[x].startCycle == Approx(a.tasks[x].startCycle + delay));
        CHECK(c.tasks[x].coreIndex == a.tasks[x].coreIndex);
      }
    }
}

TEST_CASE("malformed loop fields are reported as compiler bugs naming the call",
          "[sim][loops]") {
  DeviceSpec d = preset("tiny");
  Program good = threeStitches(1000);
  auto expectBug = [&](const Program &p, const std::string &what) {
    auto r = ptoc::runtime::simulate(p, d, {});
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == absl::StatusCode::kInternal);
    CHECK(ptoc::support::categoryOf(r.status()) == ptoc::support::DiagCategory::Internal);
    CHECK_THAT(std::string(r.status().message()), Contains(what));
  };
  Program order = good;
  order.calls[3].stitch = 0; // after call 2 in stitch 1
  expectBug(order, "call 3 (subgraph 3) is in stitch 0 after call 2 in stitch 1");
  Program range = good;
  range.calls[5].stitch = 3;
  expectBug(range, "call 5 (subgraph 5) is in stitch 3 but the program has 3 stitches");
  Program noReady = good;
  noReady.stitchReadyCycles.clear();
  expectBug(noReady, "call 2 (subgraph 2) is in stitch 1 but the program has 1 stitch");
  Program backwards = good;
  backwards.stitchReadyCycles = {0, 500, 400};
  expectBug(backwards, "stitch 2 is ready at cycle 400, before stitch 1");
  Program nan = good;
  nan.stitchReadyCycles[1] = std::numeric_limits<double>::quiet_NaN();
  expectBug(nan, "stitch 1 is ready at cycle nan");
  Program instance = good;
  instance.calls[4].instance = 99;
  expectBug(instance, "call 4 (subgraph 4) names loop instance 99 but the program has 6");
  Program body = good;
  body.instances[1].body = 2;
  expectBug(body, "call 1 (subgraph 1): its instance 1 names body 2 but the program has 1");
}
