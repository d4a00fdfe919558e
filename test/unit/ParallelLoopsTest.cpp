// Unit tests for parallel loops (docs/runtime.md "Parallel loops"): the stitch
// boundaries and per-stitch waits runtime::assignStitches derives from the parallel
// runs and iterations the expansion records, the generalized open rule of the
// simulator's stitch gate (at most device_sched_parallelism iterations in flight,
// stitches opening in order), the option's range, and the whole path through the
// Session (the `parallel` loop attribute, the expansion, the cache per option).
#include <catch2/catch.hpp>

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "RandomProgram.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "ptoc/runtime/ExpandLoops.h"
#include "ptoc/runtime/Simulator.h"
#include "ptoc/session/Session.h"

using Catch::Matchers::Contains;
using ptoc::codegen::Instance;
using ptoc::codegen::Program;
using ptoc::runtime::assignStitches;
using ptoc::runtime::KernelKind;
using ptoc::runtime::RunRecord;
using ptoc::runtime::SimOptions;
using ptoc::target::DeviceSpec;
using namespace ptoc::testprog;

namespace {

/// Appends an iteration with `tasks` independent calls of `leaf`, in parallel run
/// `run` (-1: none) at ordinal `iteration`.
void addIteration(Program &p, int leaf, int run, int64_t iteration, int tasks = 1) {
  if (p.bodies.empty()) p.bodies = {{"body", "abc123", 0}};
  Instance in;
  in.body = 0;
  in.loop = run >= 0 ? "par" : "seq";
  in.iteration = iteration;
  in.parallelRun = run;
  in.parallelIteration = iteration;
  p.instances.push_back(in);
  for (int t = 0; t < tasks; ++t) {
    int c = addCall(p, leaf, {});
    p.calls[c].instance = static_cast<int>(p.instances.size()) - 1;
  }
}

/// Per stitch, the instances in it (from the calls).
std::vector<std::vector<int>> instancesByStitch(const Program &p) {
  std::vector<std::vector<int>> out(p.stitchReadyCycles.size());
  for (const auto &c : p.calls)
    if (out[c.stitch].empty() || out[c.stitch].back() != c.instance)
      out[c.stitch].push_back(c.instance);
  return out;
}

/// The program of the assignStitches test (one call per instance):
///   instance 0        a segment                          -> stitch 0
///   instances 1..4    parallel run 0, iterations 0..3    -> stitches 1..4
///   instances 5..9    a plain loop after it (S = 2)      -> stitches 5, 6, 7
///   instance 10       parallel run 1, iteration 0        -> stitch 8
///   instance 11       run 1 iteration 1, before the nested loop -> stitch 9
///   instances 12..14  parallel run 2 (nested), its iterations 0..2 -> stitches 10..12
///   instance 15       run 1 iteration 1, after the nested loop  -> stitch 13
///   instance 16       run 1 iteration 2                  -> stitch 14
Program mixedProgram() {
  Program p;
  p.funcName = "mixed";
  int leaf = computeLeaf(p, 500);
  addIteration(p, leaf, -1, 0);
  for (int j = 0; j < 4; ++j) addIteration(p, leaf, 0, j);
  for (int i = 0; i < 5; ++i) addIteration(p, leaf, -1, i);
  addIteration(p, leaf, 1, 0);
  addIteration(p, leaf, 1, 1);
  for (int j = 0; j < 3; ++j) addIteration(p, leaf, 2, j);
  addIteration(p, leaf, 1, 1);
  addIteration(p, leaf, 1, 2);
  return p;
}

} // namespace

TEST_CASE("parallel iterations are stitches of their own, each waiting P iterations back",
          "[loops][parallel]") {
  DeviceSpec d = preset("tiny");
  const std::vector<std::vector<int>> stitches = {
      {0}, {1}, {2}, {3}, {4}, {5, 6}, {7, 8}, {9}, {10}, {11}, {12}, {13}, {14}, {15}, {16}};
  for (int P : {1, 2, 4}) {
    INFO("P = " << P);
    Program p = mixedProgram();
    REQUIRE(assignStitches(p, d, /*stitchMaxNum=*/2, P).ok());
    CHECK(instancesByStitch(p) == stitches);
    // The rule: the first stitch of iteration j of a run waits for the last stitch of
    // iteration j - P, or for the last stitch before the run when j < P; every other
    // stitch for the one before it. P = 1 is the barrier between consecutive stitches.
    std::vector<int> want;
    for (int k = 0; k < 15; ++k) want.push_back(k - 1);
    if (P == 2) {
      want[2] = 0;   // run 0 iteration 1: before the run (stitch 0)
      want[3] = 1;   // iteration 2: the end of iteration 0
      want[4] = 2;   // iteration 3: the end of iteration 1
      want[9] = 7;   // run 1 iteration 1: before run 1
      want[11] = 9;  // nested run 2 iteration 1: before run 2 (run 1's stitch 9)
      want[12] = 10; // run 2 iteration 2: the end of its iteration 0
      want[14] = 8;  // run 1 iteration 2: the end of run 1 iteration 0
    } else if (P == 4) {
      want[2] = want[3] = want[4] = 0;
      want[9] = 7;
      want[11] = want[12] = 9;
      want[14] = 7;
    }
    CHECK(p.stitchWaitFor == want);
    // Per stitch, the control thread's build: the same formula, a stitch cost each.
    const auto &s = d.scheduler;
    double clock = 0;
    for (size_t k = 0; k < stitches.size(); ++k) {
      clock += double(stitches[k].size()) * (s.controlIterationCycles + s.controlTaskCycles) +
               s.controlStitchCycles;
      CHECK(p.stitchReadyCycles[k] == Approx(clock));
    }
  }
}

TEST_CASE("a parallel iteration holds up to 1024 iterations per stitch", "[loops][parallel]") {
  DeviceSpec d = preset("tiny");
  Program p;
  int leaf = computeLeaf(p, 10);
  const int many = ptoc::runtime::kParallelStitchMaxNum + 6;
  for (int i = 0; i < many; ++i) addIteration(p, leaf, 0, 0); // a nested plain loop
  addIteration(p, leaf, 0, 1);
  REQUIRE(assignStitches(p, d, /*stitchMaxNum=*/4, /*parallelism=*/2).ok());
  REQUIRE(p.stitchReadyCycles.size() == 3);
  CHECK(p.calls[ptoc::runtime::kParallelStitchMaxNum - 1].stitch == 0);
  CHECK(p.calls[ptoc::runtime::kParallelStitchMaxNum].stitch == 1);
  CHECK(p.calls.back().stitch == 2);
  // Iteration 0's second stitch follows its first; iteration 1 waits for nothing.
  CHECK(p.stitchWaitFor == std::vector<int>{-1, 0, -1});
}

TEST_CASE("without parallel loops the stitches are as before", "[loops][parallel]") {
  DeviceSpec d = preset("tiny");
  Program p;
  int leaf = computeLeaf(p, 10);
  for (int i = 0; i < 7; ++i) addIteration(p, leaf, -1, i);
  for (int P : {1, 8}) {
    REQUIRE(assignStitches(p, d, 3, P).ok());
    CHECK(p.stitchWaitFor.empty());
    REQUIRE(p.stitchReadyCycles.size() == 3);
    for (const auto &c : p.calls) CHECK(c.stitch == c.instance / 3);
  }
}

TEST_CASE("device_sched_parallelism out of range is an error naming it", "[loops][parallel]") {
  DeviceSpec d = preset("tiny");
  Program p = mixedProgram();
  for (int bad : {9, -1}) {
    absl::Status s = assignStitches(p, d, 2, bad);
    REQUIRE_FALSE(s.ok());
    CHECK(s.code() == absl::StatusCode::kInvalidArgument);
    CHECK_THAT(std::string(s.message()),
               Contains("device_sched_parallelism must be 0 (automatic: derived from the "
                        "kernel) or between 1 and 8") &&
                   Contains(absl::StrCat("got ", bad)));
  }
  // 0 asks for the automatic value, which the program records.
  REQUIRE(assignStitches(p, d, 2, ptoc::runtime::kAutoSchedParallelism).ok());
  CHECK(p.schedParallelism == ptoc::runtime::automaticSchedParallelism(p, d));
  CHECK(p.schedParallelism >= 1);
}

TEST_CASE("automatic device_sched_parallelism fills the cores, and one more in flight",
          "[loops][parallel]") {
  using ptoc::runtime::automaticSchedParallelism;
  DeviceSpec d = preset("tiny"); // 4 AIV cores
  // A leaf whose cost-model estimate (what the rule reads) is `cycles`.
  auto costedLeaf = [](Program &p, int64_t cycles) {
    int leaf = computeLeaf(p, cycles);
    p.leaves[leaf].cycles = cycles;
    return leaf;
  };
  // Iterations of one task (a chain of one): each keeps pi = 1 core busy, so
  // ceil(4 / 1) = 4 fill the AIV cores, plus one: 5.
  Program chains;
  int leaf = costedLeaf(chains, 100);
  for (int j = 0; j < 8; ++j) addIteration(chains, leaf, 0, j);
  CHECK(automaticSchedParallelism(chains, d) == 5);
  // Iterations of 8 independent tasks: pi = 8 >= 4 cores, so one iteration fills them
  // on average; one more drains alongside: 2.
  Program wide;
  leaf = costedLeaf(wide, 100);
  for (int j = 0; j < 8; ++j) addIteration(wide, leaf, 0, j, 8);
  CHECK(automaticSchedParallelism(wide, d) == 2);
  // Iterations of a chain of 4 tasks (each waits for the one before): pi = 1 again.
  Program chained;
  leaf = costedLeaf(chained, 100);
  for (int j = 0; j < 8; ++j) {
    addIteration(chained, leaf, 0, j);
    for (int t = 1; t < 4; ++t) {
      int c = addCall(chained, leaf, {}, {static_cast<int>(chained.calls.size()) - 1});
      chained.calls[c].instance = static_cast<int>(chained.instances.size()) - 1;
    }
  }
  CHECK(automaticSchedParallelism(chained, d) == 5);
  // At most the iterations of a run (3 here), and at most 8 (a2's 48 AIV cores).
  Program three;
  leaf = costedLeaf(three, 100);
  for (int j = 0; j < 3; ++j) addIteration(three, leaf, 0, j);
  CHECK(automaticSchedParallelism(three, d) == 3);
  CHECK(automaticSchedParallelism(chains, preset("a2")) == ptoc::runtime::kMaxSchedParallelism);
  // No parallel loop: 1.
  Program plain;
  leaf = costedLeaf(plain, 100);
  for (int j = 0; j < 8; ++j) addIteration(plain, leaf, -1, j);
  CHECK(automaticSchedParallelism(plain, d) == 1);
}

namespace {

/// `n` independent parallel iterations of one `cycles`-cycle task each.
Program independentIterations(int n, int64_t cycles, bool parallel) {
  Program p;
  p.funcName = "independent";
  int leaf = computeLeaf(p, cycles);
  for (int j = 0; j < n; ++j) addIteration(p, leaf, parallel ? 0 : -1, j);
  return p;
}

/// The generalized rule, checked against the task times alone: stitches open in
/// order, each once built and once every stitch up to its wait stitch has finished
/// (its barrierCycle), and no task starts before its stitch opens.
void checkOpenRule(const Program &p, const RunRecord &r) {
  const double head = r.bound.headCycles + r.bound.startCycles;
  const int S = static_cast<int>(p.stitchReadyCycles.size());
  REQUIRE(static_cast<int>(r.stitches.size()) == S);
  std::vector<double> lastEnd(S, -std::numeric_limits<double>::infinity());
  for (size_t c = 0; c < p.calls.size(); ++c) {
    const auto &t = r.tasks[c];
    lastEnd[t.stitch] = std::max(lastEnd[t.stitch], t.endCycle);
    CHECK(t.startCycle >= r.stitches[t.stitch].openCycle);
  }
  double span = r.makespanCycles - head;
  for (int k = 0; k < S; ++k) {
    const auto &s = r.stitches[k];
    // A stitch is done when its last task ended (an empty one: when it opened).
    std::vector<double> done(k);
    for (int q = 0; q < k; ++q) done[q] = std::max(r.stitches[q].openCycle, lastEnd[q]);
    const int w = p.stitchWaitFor.empty() ? k - 1 : p.stitchWaitFor[k];
    double held = head;
    for (int q = 0; q <= w; ++q) held = std::max(held, done[q]);
    INFO("stitch " << k << " waits for " << w);
    CHECK(s.readyCycle == head + p.stitchReadyCycles[k]);
    CHECK(s.barrierCycle == held);
    double before = k == 0 ? head : r.stitches[k - 1].openCycle;
    CHECK(s.openCycle == std::max({s.readyCycle, s.barrierCycle, before}));
  }
  CHECK(r.controlWaitCycles >= 0);
  CHECK(r.barrierWaitCycles >= 0);
  CHECK(r.controlWaitCycles + r.barrierWaitCycles <= span + 1e-6);
}

} // namespace

TEST_CASE("independent parallel iterations overlap up to device_sched_parallelism",
          "[sim][loops][parallel]") {
  DeviceSpec d = preset("tiny"); // 4 AIV cores
  const int n = 8;
  const int64_t cycles = 20000; // far longer than building an iteration
  Program plain = independentIterations(n, cycles, false);
  REQUIRE(assignStitches(plain, d, /*stitchMaxNum=*/1).ok());
  for (KernelKind kind : {KernelKind::Aicpu, KernelKind::Plain})
    for (int mode = 0; mode <= (kind == KernelKind::Plain ? 0 : 3); ++mode) {
      INFO("mode " << mode << " " << ptoc::runtime::kernelKindName(kind));
      std::vector<double> span;
      std::vector<RunRecord> records;
      for (int P : {1, 2, 4}) {
        Program p = independentIterations(n, cycles, true);
        REQUIRE(assignStitches(p, d, ptoc::runtime::kDefaultStitchMaxNum, P).ok());
        RunRecord r = run(p, d, mode, false, kind);
        checkOpenRule(p, r);
        // At most P iterations in flight: iteration j starts after j - P ended.
        for (int j = P; j < n; ++j) CHECK(r.tasks[j].startCycle >= r.tasks[j - P].endCycle);
        span.push_back(r.makespanCycles);
        records.push_back(std::move(r));
      }
      // P = 1 keeps one iteration per stitch and the barrier: exactly the plain loop
      // with one iteration per stitch.
      RunRecord one = run(plain, d, mode, false, kind);
      CHECK(span[0] == one.makespanCycles);
      CHECK(records[0].barrierWaitCycles == Approx(one.barrierWaitCycles));
      // More iterations in flight: strictly shorter, and less time lost at barriers.
      CHECK(span[1] < span[0]);
      CHECK(span[2] < span[1]);
      CHECK(records[2].barrierWaitCycles < records[0].barrierWaitCycles);
      // With four cores and P = 4, the eight iterations run in two waves.
      CHECK(span[2] < span[0] / 2);
    }
}

TEST_CASE("a parallel loop's data dependencies still order its iterations",
          "[sim][loops][parallel]") {
  // Iteration j reads what j - 1 wrote (the promise of independence is false): task
  // edges keep the results' order, whatever P says.
  DeviceSpec d = preset("tiny");
  Program p = independentIterations(6, 3000, true);
  for (size_t c = 1; c < p.calls.size(); ++c) p.calls[c].preds = {static_cast<int>(c) - 1};
  REQUIRE(assignStitches(p, d, ptoc::runtime::kDefaultStitchMaxNum, 4).ok());
  for (int mode = 0; mode <= 3; ++mode) {
    RunRecord r = run(p, d, mode, false, KernelKind::Aicpu);
    checkOpenRule(p, r);
    for (size_t c = 1; c < p.calls.size(); ++c)
      CHECK(r.tasks[c].startCycle >= r.tasks[c - 1].endCycle);
  }
}

TEST_CASE("random parallel programs keep the open rule in every mode", "[sim][loops][parallel]") {
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    INFO("seed " << seed);
    DeviceSpec d = randomDevice(seed);
    Program p = randomProgram(seed, {60, 3, 20});
    // Six iterations of ten calls: a segment, four parallel iterations, a segment.
    p.bodies = {{"body", "abc123", 0}};
    for (int i = 0; i < 6; ++i) {
      Instance in;
      in.body = 0;
      in.iteration = i;
      in.parallelRun = i >= 1 && i <= 4 ? 0 : -1;
      in.parallelIteration = i - 1;
      p.instances.push_back(in);
    }
    for (size_t c = 0; c < p.calls.size(); ++c) p.calls[c].instance = static_cast<int>(c / 10);
    for (int P : {1, 2, 3, 8}) {
      INFO("P " << P);
      REQUIRE(assignStitches(p, d, 2, P).ok());
      for (int mode = 0; mode <= 3; ++mode)
        checkOpenRule(p, run(p, d, mode, false, KernelKind::Aicpu));
      checkOpenRule(p, run(p, d, 0, false, KernelKind::Plain));
    }
  }
}

TEST_CASE("a malformed stitchWaitFor is reported as a compiler bug", "[sim][loops][parallel]") {
  DeviceSpec d = preset("tiny");
  Program p = independentIterations(3, 100, true);
  REQUIRE(assignStitches(p, d, 4, 2).ok());
  Program forward = p;
  forward.stitchWaitFor[1] = 1;
  auto r = ptoc::runtime::simulate(forward, d, {});
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == absl::StatusCode::kInternal);
  CHECK_THAT(std::string(r.status().message()), Contains("stitch 1 waits for stitch 1"));
  Program shorter = p;
  shorter.stitchWaitFor.pop_back();
  r = ptoc::runtime::simulate(shorter, d, {});
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(std::string(r.status().message()), Contains("stitchWaitFor has 2 entries for 3"));
}

namespace {

/// Outer loop `b` (4 iterations) over a nested loop `h` (2 iterations), each writing
/// its own R x C rows (exp in R/T tiles of T x C); PB / PH mark either loop parallel.
std::string nestedModule(bool parallelB, bool parallelH, int R = 4, int C = 64, int T = 4) {
  return absl::StrReplaceAll(R"(
func @nest(%x: tensor<4x2x@R@x@C@xf32>, %y: tensor<4x2x@R@x@C@xf32>) -> tensor<4x2x@R@x@C@xf32> {
  %y1 = loop %x, %y {body = "nest_b", name = "b", stop = 4PB, ins = [{of = 0, offsets = ["b", 0, 0, 0], sizes = [1, 2, @R@, @C@]}, {of = 1, offsets = ["b", 0, 0, 0], sizes = [1, 2, @R@, @C@]}], outs = [{of = 1, offsets = ["b", 0, 0, 0], sizes = [1, 2, @R@, @C@]}]} : tensor<4x2x@R@x@C@xf32>
  return %y1
}
func @nest_b(%xb: tensor<2x@R@x@C@xf32>, %yb: tensor<2x@R@x@C@xf32>) -> tensor<2x@R@x@C@xf32> {
  %y2 = loop %xb, %yb {body = "nest_h", name = "h", stop = 2PH, ins = [{of = 0, offsets = ["h", 0, 0], sizes = [1, @R@, @C@]}], outs = [{of = 1, offsets = ["h", 0, 0], sizes = [1, @R@, @C@]}]} : tensor<2x@R@x@C@xf32>
  return %y2
}
func @nest_h(%xh: tensor<@R@x@C@xf32>) -> tensor<@R@x@C@xf32> {
  %e = exp %xh {vec_tile = [@T@, @C@]} : tensor<@R@x@C@xf32>
  return %e
}
)",
                             {{"PB", parallelB ? ", parallel = true" : ""},
                              {"PH", parallelH ? ", parallel = true" : ""},
                              {"@R@", std::to_string(R)},
                              {"@C@", std::to_string(C)},
                              {"@T@", std::to_string(T)}});
}

ptoc::session::Session makeSession(const char *device = "tiny") {
  auto s = ptoc::session::Session::create(device);
  REQUIRE(s.ok());
  return *std::move(s);
}

} // namespace

TEST_CASE("the expansion records each iteration's innermost parallel loop",
          "[loops][parallel][expand]") {
  ptoc::session::Session s = makeSession();
  struct Case {
    bool b, h;
  };
  for (Case c : {Case{false, false}, Case{true, false}, Case{false, true}, Case{true, true}}) {
    INFO("parallel b " << c.b << ", h " << c.h);
    auto k = s.compileText(nestedModule(c.b, c.h), "nest.pto");
    INFO(k.status().message());
    REQUIRE(k.ok());
    auto p = k->runnable(ptoc::runtime::kDefaultStitchMaxNum, 2);
    REQUIRE(p.ok());
    const Program &prog = **p;
    // Eight iterations of the inner body, b-major (nothing else: the bodies are loops).
    REQUIRE(prog.instances.size() == 8);
    for (size_t i = 0; i < 8; ++i) {
      const Instance &in = prog.instances[i];
      const int b = int(i) / 2, h = int(i) % 2;
      if (c.h) { // the inner loop: a run per outer iteration (after the outer's own run)
        CHECK(in.parallelRun == b + (c.b ? 1 : 0));
        CHECK(in.parallelIteration == h);
      } else if (c.b) {
        CHECK(in.parallelRun == 0);
        CHECK(in.parallelIteration == b);
      } else {
        CHECK(in.parallelRun == -1);
      }
    }
    // Stitches: one per parallel iteration; without parallel loops one for all eight.
    size_t stitches = c.h ? 8 : c.b ? 4 : 1;
    CHECK(prog.stitchReadyCycles.size() == stitches);
    CHECK(prog.stitchWaitFor.empty() == !(c.b || c.h));
  }
}

TEST_CASE("a run takes device_sched_parallelism, each value instantiated once",
          "[loops][parallel][session]") {
  // Iterations of a few big tiles on a2's many cores: the barrier between stitches
  // leaves most cores idle, which overlapping iterations fill.
  ptoc::session::Session s = makeSession("a2");
  auto k = s.compileText(nestedModule(true, false, 128, 512, 32), "nest.pto");
  INFO(k.status().message());
  REQUIRE(k.ok());
  std::vector<ptoc::runtime::HostTensor> args{
      ptoc::runtime::HostTensor(ptoc::ir::DType::F32, {4, 2, 128, 512}),
      ptoc::runtime::HostTensor(ptoc::ir::DType::F32, {4, 2, 128, 512})};
  for (int64_t i = 0; i < args[0].numElements(); ++i) args[0].set(i, double(i % 97) / 97.0);
  auto runWith = [&](int P, std::vector<ptoc::runtime::HostTensor> &out) {
    ptoc::session::RunOptions o;
    o.schedParallelism = P;
    auto r = s.run(*k, args, out, o);
    INFO(r.status().message());
    REQUIRE(r.ok());
    return *std::move(r);
  };
  std::vector<ptoc::runtime::HostTensor> one, four;
  auto r1 = runWith(1, one);
  auto r4 = runWith(4, four);
  // The same results; the iterations overlap with P = 4.
  REQUIRE(one.size() == 1);
  REQUIRE(four.size() == 1);
  for (int64_t i = 0; i < one[0].numElements(); ++i) CHECK(one[0].get(i) == four[0].get(i));
  CHECK(one[0].get(5) != 0);
  CHECK(r4.simulatedUs < r1.simulatedUs);
  CHECK(r1.record.stitches.size() == 4);
  CHECK(r1.schedParallelism == 1);
  CHECK(r4.schedParallelism == 4);
  // The default: the automatic value, derived from the expanded program and reported.
  std::vector<ptoc::runtime::HostTensor> automatic;
  auto rAuto = runWith(ptoc::session::RunOptions{}.schedParallelism, automatic);
  auto expanded = k->runnable(ptoc::runtime::kDefaultStitchMaxNum, 1);
  REQUIRE(expanded.ok());
  CHECK(rAuto.schedParallelism ==
        ptoc::runtime::automaticSchedParallelism(**expanded, s.device()));
  CHECK(rAuto.schedParallelism > 1);
  CHECK(rAuto.simulatedUs < r1.simulatedUs);
  // Kept per option: the same program object for the same value, another for another.
  auto a = k->runnable(ptoc::runtime::kDefaultStitchMaxNum, 4);
  auto b = k->runnable(ptoc::runtime::kDefaultStitchMaxNum, 4);
  auto c = k->runnable(ptoc::runtime::kDefaultStitchMaxNum, 1);
  REQUIRE((a.ok() && b.ok() && c.ok()));
  CHECK(a->get() == b->get());
  CHECK(a->get() != c->get());
  CHECK((*a)->stitchWaitFor != (*c)->stitchWaitFor);
  // Their prepared forms are kept too (a run repeats only the event loop), and
  // simulate what the programs simulate; another device gets its own.
  const std::string json = s.device().toJson();
  auto pa = k->prepared(*a, s.device(), json);
  auto pb = k->prepared(*b, s.device(), json);
  auto pc = k->prepared(*c, s.device(), json);
  REQUIRE((pa.ok() && pb.ok() && pc.ok()));
  CHECK(pa->get() == pb->get());
  CHECK(pa->get() != pc->get());
  ptoc::target::DeviceSpec other = s.device();
  other.memory.l2Bytes /= 2;
  auto po = k->prepared(*a, other, other.toJson());
  REQUIRE(po.ok());
  CHECK(po->get() != pa->get());
  CHECK(k->prepared(*a, other, other.toJson())->get() != po->get()); // not kept: afresh
  ptoc::runtime::SimOptions so;
  auto direct = ptoc::runtime::simulate(**a, s.device(), so);
  auto viaPrepared = ptoc::runtime::simulate(**pa, so);
  REQUIRE((direct.ok() && viaPrepared.ok()));
  CHECK(direct->simulatedUs() == viaPrepared->simulatedUs());
  CHECK(viaPrepared->simulatedUs() == Approx(r4.simulatedUs));
  // Out of range: an error naming the option, the value and the range.
  ptoc::session::RunOptions bad;
  bad.schedParallelism = 9;
  std::vector<ptoc::runtime::HostTensor> out;
  auto r = s.run(*k, args, out, bad);
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(std::string(r.status().message()),
             Contains("device_sched_parallelism must be 0 (automatic: derived from the kernel) "
                      "or between 1 and 8") &&
                 Contains("got 9"));
}
