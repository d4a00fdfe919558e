// Unit tests for the simulator: invariants of random runs (bound, dependencies, core
// and pipe exclusivity, pipe order, bandwidth), determinism, the L2 model, shared HBM
// bandwidth, pipe concurrency, and errors.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "RandomProgram.h"
#include "ptoc/runtime/Simulator.h"

using Catch::Matchers::Contains;
using ptoc::codegen::Program;
using ptoc::runtime::RunRecord;
using ptoc::runtime::SimOptions;
using ptoc::runtime::TaskRecord;
using ptoc::target::DeviceSpec;
using namespace ptoc::testprog;

namespace {

/// Relative slack for comparing sums of floating-point durations.
constexpr double kEps = 1e-9;

bool leq(double a, double b) { return a <= b + kEps * std::max(1.0, std::abs(b)); }

/// Checks every invariant of a run at task level (see checkPipes for pipe level).
void checkInvariants(const Program &p, const DeviceSpec &d, const RunRecord &r) {
  const double head = d.launchOverheadUs * d.clockMHz;
  REQUIRE(r.tasks.size() == p.calls.size());
  // The roofline bound holds, and HBM never carried more than its bandwidth allows.
  CHECK(leq(r.bound.totalCycles(), r.makespanCycles));
  double hbmBytes = static_cast<double>(r.hbmReadBytes + r.hbmWriteBytes);
  CHECK(leq(hbmBytes / d.hbmBytesPerCycle(), r.makespanCycles - head));
  CHECK(r.bound.hbmBytes <= r.hbmReadBytes + r.hbmWriteBytes);

  std::vector<std::vector<int>> perCore(d.aicCores + d.aivCores);
  std::vector<double> busy(d.aicCores + d.aivCores, 0.0);
  double last = head;
  for (size_t c = 0; c < p.calls.size(); ++c) {
    const TaskRecord &t = r.tasks[c];
    bool aic = p.leaves[p.calls[c].leaf].core == ptoc::target::CoreKind::AIC;
    REQUIRE(t.core == (aic ? ptoc::target::CoreKind::AIC : ptoc::target::CoreKind::AIV));
    int kindCores = aic ? d.aicCores : d.aivCores;
    REQUIRE(t.coreIndex >= 0);
    REQUIRE(t.coreIndex < kindCores);
    // The dispatching thread owns the core.
    int T = d.scheduler.threads;
    int begin = static_cast<int>(int64_t(t.thread) * kindCores / T);
    int end = static_cast<int>(int64_t(t.thread + 1) * kindCores / T);
    CHECK(t.coreIndex >= begin);
    CHECK(t.coreIndex < end);
    // Ready after the kernel head and after every predecessor ended; dispatched after
    // ready (a dispatch takes dispatch_cycles); started after dispatch.
    CHECK(t.readyCycle >= head);
    for (int pred : p.calls[c].preds) {
      CHECK(t.readyCycle >= r.tasks[pred].endCycle);
      CHECK(t.startCycle >= r.tasks[pred].endCycle);
    }
    CHECK(leq(t.readyCycle + d.scheduler.dispatchCycles, t.dispatchCycle));
    CHECK(t.startCycle >= t.dispatchCycle);
    CHECK(t.endCycle >= t.startCycle);
    int global = (aic ? 0 : d.aicCores) + t.coreIndex;
    perCore[global].push_back(static_cast<int>(c));
    busy[global] += t.endCycle - t.startCycle;
    last = std::max(last, t.endCycle);
  }
  CHECK(r.makespanCycles == last);
  // Tasks on one core never overlap; busy cycles add up.
  for (size_t core = 0; core < perCore.size(); ++core) {
    std::vector<int> &ts = perCore[core];
    std::sort(ts.begin(), ts.end(), [&](int a, int b) {
      return r.tasks[a].startCycle < r.tasks[b].startCycle;
    });
    for (size_t i = 1; i < ts.size(); ++i)
      CHECK(r.tasks[ts[i - 1]].endCycle <= r.tasks[ts[i]].startCycle);
    CHECK(r.coreBusyCycles[core] == Approx(busy[core]).margin(1e-6));
  }
  int64_t in = 0, out = 0;
  for (const TaskRecord &t : r.tasks) {
    in += t.bytesIn;
    out += t.bytesOut;
    CHECK(t.l2HitBytes <= t.bytesIn);
  }
  CHECK(r.copyInBytes == in);
  CHECK(r.copyOutBytes == out);
  CHECK(r.l2ReadHitBytes + r.l2ReadMissBytes == in);
  // Queue samples are in time order.
  for (size_t i = 1; i < r.queue.size(); ++i) CHECK(r.queue[i - 1].cycle <= r.queue[i].cycle);
}

/// Checks pipe records: one per instruction; inside the task; each pipe in order and
/// never overlapping on one core; dependencies respected; the task ends with its last.
void checkPipes(const Program &p, const DeviceSpec &d, const RunRecord &r) {
  size_t expected = 0;
  for (const auto &c : p.calls) expected += p.leaves[c.leaf].instrs.size();
  REQUIRE(r.pipes.size() == expected);
  // (task, instr) -> record
  std::vector<std::vector<const ptoc::runtime::PipeRecord *>> byTask(p.calls.size());
  for (size_t c = 0; c < p.calls.size(); ++c)
    byTask[c].assign(p.leaves[p.calls[c].leaf].instrs.size(), nullptr);
  for (const auto &pr : r.pipes) {
    REQUIRE(pr.task >= 0);
    REQUIRE(pr.task < static_cast<int>(p.calls.size()));
    REQUIRE(pr.instr >= 0);
    REQUIRE(pr.instr < static_cast<int>(byTask[pr.task].size()));
    REQUIRE(byTask[pr.task][pr.instr] == nullptr);
    byTask[pr.task][pr.instr] = &pr;
  }
  // Per core and pipe: all records, to check exclusivity across tasks.
  std::map<std::pair<int, int>, std::vector<std::pair<double, double>>> lanes;
  for (size_t c = 0; c < p.calls.size(); ++c) {
    const auto &leaf = p.leaves[p.calls[c].leaf];
    const TaskRecord &t = r.tasks[c];
    double lastOnPipe[ptoc::codegen::kNumPipes];
    std::fill(std::begin(lastOnPipe), std::end(lastOnPipe), -1.0);
    double maxEnd = t.startCycle;
    for (size_t i = 0; i < leaf.instrs.size(); ++i) {
      const auto *pr = byTask[c][i];
      REQUIRE(pr != nullptr);
      CHECK(pr->pipe == leaf.instrs[i].pipe);
      CHECK(pr->startCycle >= t.startCycle);
      CHECK(pr->readyCycle <= t.endCycle);
      CHECK(pr->endCycle >= pr->startCycle);
      CHECK(pr->readyCycle >= pr->endCycle);
      // Only a GM read's data arrives after it leaves the pipe.
      if (pr->pipe != ptoc::codegen::Pipe::Mte2) CHECK(pr->readyCycle == pr->endCycle);
      int pipe = static_cast<int>(pr->pipe);
      CHECK(pr->startCycle >= lastOnPipe[pipe]); // in order, no overlap on the pipe
      lastOnPipe[pipe] = pr->endCycle;
      for (int dep : leaf.instrs[i].deps) CHECK(pr->startCycle >= byTask[c][dep]->readyCycle);
      maxEnd = std::max(maxEnd, pr->readyCycle);
      int global = (t.core == ptoc::target::CoreKind::AIC ? 0 : d.aicCores) + t.coreIndex;
      lanes[{global, pipe}].push_back({pr->startCycle, pr->endCycle});
    }
    CHECK(t.endCycle == maxEnd);
  }
  for (auto &[key, spans] : lanes) {
    std::sort(spans.begin(), spans.end());
    for (size_t i = 1; i < spans.size(); ++i) CHECK(spans[i - 1].second <= spans[i].first);
  }
}

bool sameRecord(const RunRecord &a, const RunRecord &b) {
  if (a.makespanCycles != b.makespanCycles || a.tasks.size() != b.tasks.size() ||
      a.pipes.size() != b.pipes.size() || a.queue.size() != b.queue.size() ||
      a.hbmReadBytes != b.hbmReadBytes || a.hbmWriteBytes != b.hbmWriteBytes ||
      a.l2ReadHitBytes != b.l2ReadHitBytes || a.coreBusyCycles != b.coreBusyCycles)
    return false;
  for (size_t i = 0; i < a.tasks.size(); ++i) {
    const TaskRecord &x = a.tasks[i], &y = b.tasks[i];
    if (x.coreIndex != y.coreIndex || x.thread != y.thread || x.readyCycle != y.readyCycle ||
        x.dispatchCycle != y.dispatchCycle || x.startCycle != y.startCycle ||
        x.endCycle != y.endCycle || x.l2HitBytes != y.l2HitBytes)
      return false;
  }
  for (size_t i = 0; i < a.pipes.size(); ++i)
    if (a.pipes[i].startCycle != b.pipes[i].startCycle ||
        a.pipes[i].endCycle != b.pipes[i].endCycle)
      return false;
  return true;
}

} // namespace

TEST_CASE("random programs on random devices keep every invariant in every mode", "[sim]") {
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    RandomProgramOptions o;
    o.calls = 20 + static_cast<int>(seed * 7 % 90);
    Program p = randomProgram(seed, o);
    DeviceSpec d = randomDevice(seed);
    REQUIRE(d.validate().ok());
    for (int mode = 0; mode <= 3; ++mode) {
      INFO("seed " << seed << " mode " << mode << " device " << d.toJson());
      RunRecord r = run(p, d, mode, /*pipes=*/true);
      checkInvariants(p, d, r);
      checkPipes(p, d, r);
    }
  }
}

TEST_CASE("the presets keep every invariant on a larger random program", "[sim]") {
  RandomProgramOptions o;
  o.calls = 600;
  o.maxPreds = 2;
  Program p = randomProgram(99, o);
  for (const char *name : {"a2", "b3", "a3", "tiny"}) {
    DeviceSpec d = preset(name);
    for (int mode = 0; mode <= 3; ++mode) {
      INFO(name << " mode " << mode);
      RunRecord r = run(p, d, mode, true);
      checkInvariants(p, d, r);
      checkPipes(p, d, r);
    }
  }
}

TEST_CASE("simulation is deterministic", "[sim]") {
  Program p = randomProgram(7, {300, 3, 40});
  DeviceSpec d = randomDevice(7);
  for (int mode = 0; mode <= 3; ++mode) {
    RunRecord a = run(p, d, mode, true), b = run(p, d, mode, true);
    CHECK(sameRecord(a, b));
  }
}

TEST_CASE("a prepared program simulates as the program does, in every mode", "[sim]") {
  for (uint64_t seed : {11u, 12u, 13u}) {
    Program p = randomProgram(seed, {200, 3, 30});
    DeviceSpec d = randomDevice(seed);
    absl::StatusOr<ptoc::runtime::PreparedProgram> prepared =
        ptoc::runtime::PreparedProgram::prepare(p, d);
    REQUIRE(prepared.ok());
    CHECK(prepared->numCalls() == int(p.calls.size()));
    CHECK(prepared->bound().totalCycles() == ptoc::runtime::rooflineBound(p, d).totalCycles());
    // The program may go away: the prepared one keeps what it needs.
    p = Program();
    Program again = randomProgram(seed, {200, 3, 30});
    for (int mode = 0; mode <= 3; ++mode) {
      INFO("seed " << seed << " mode " << mode);
      SimOptions o;
      o.schedMode = mode;
      o.recordPipes = true;
      absl::StatusOr<RunRecord> fromPrepared = ptoc::runtime::simulate(*prepared, o);
      REQUIRE(fromPrepared.ok());
      CHECK(sameRecord(*fromPrepared, run(again, d, mode, true)));
    }
  }
  // Errors: a bad mode when simulating, a malformed program when preparing.
  Program p = randomProgram(5, {10, 2, 5});
  DeviceSpec d = preset("a2");
  absl::StatusOr<ptoc::runtime::PreparedProgram> prepared =
      ptoc::runtime::PreparedProgram::prepare(p, d);
  REQUIRE(prepared.ok());
  SimOptions bad;
  bad.schedMode = 4;
  CHECK_THAT(std::string(ptoc::runtime::simulate(*prepared, bad).status().message()),
             Contains("device_sched_mode 4"));
  p.calls[2].preds = {5};
  absl::StatusOr<ptoc::runtime::PreparedProgram> cyclic =
      ptoc::runtime::PreparedProgram::prepare(p, d);
  REQUIRE_FALSE(cyclic.ok());
  CHECK_THAT(std::string(cyclic.status().message()), Contains("call 2 waits for call 5"));
}

TEST_CASE("the record's bound is rooflineBound(), and a run without tasks is the head", "[sim]") {
  DeviceSpec d = preset("a2");
  Program p = randomProgram(3);
  RunRecord r = run(p, d);
  auto b = ptoc::runtime::rooflineBound(p, d);
  CHECK(b.totalCycles() == r.bound.totalCycles());
  CHECK(b.hbmBytes == r.bound.hbmBytes);
  CHECK(r.bound.headCycles == d.launchOverheadUs * d.clockMHz);

  Program empty;
  RunRecord e = run(empty, d);
  CHECK(e.makespanCycles == d.launchOverheadUs * d.clockMHz);
  CHECK(e.tasks.empty());
}

namespace {

/// C = A x B, 128 x 128 x 128 fp16, as four 64 x 64 output tiles on the cube: each reads
/// its A rows and B columns (A and B read twice each). A and B are tensors 0 and 1, C
/// (an intermediate) tensor 2, returned when `returnC`.
Program fourTileMatmul(bool returnC) {
  Program p;
  int A = addTensor(p, "a", GmTensor::Kind::Argument, {128, 128});
  int B = addTensor(p, "b", GmTensor::Kind::Argument, {128, 128});
  int C = addTensor(p, "c", GmTensor::Kind::Intermediate, {128, 128});
  if (returnC) p.results = {C};
  int mm = addAicLeaf(p, 64, 128, 64, 1);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j)
      addCall(p, mm, {region(A, 64 * i, 0), region(B, 0, 64 * j), region(C, 64 * i, 64 * j)});
  return p;
}

} // namespace

TEST_CASE("roofline bound terms: cube peak, vector width, compulsory HBM bytes", "[sim]") {
  DeviceSpec d = preset("a2");
  Program p = fourTileMatmul(/*returnC=*/true);
  auto b = ptoc::runtime::rooflineBound(p, d);
  const double flops = 4.0 * 2 * 64 * 64 * 128;
  CHECK(b.cubeCycles == Approx(flops / (24 * 8192.0)));
  CHECK(b.vectorCycles == 0);
  // Compulsory: A and B once (2 x 32 KiB) + C once (32 KiB).
  CHECK(b.hbmBytes == 3 * 128 * 128 * 2);
  CHECK(b.hbmCycles == Approx(b.hbmBytes / d.hbmBytesPerCycle()));
  CHECK(std::string(b.limiter()) == "hbm");
}

TEST_CASE("roofline bound: compulsory reads come through the reading cores' own ports",
          "[sim]") {
  DeviceSpec d = preset("a2");
  Program p = fourTileMatmul(/*returnC=*/false);
  const int B = 1;
  // C is an intermediate nobody sees: the compulsory bytes are A and B, 64 KiB, read
  // by cube tasks only. 24 AIC ports x 32 B/cycle = 768 B/cycle, slower than a2's HBM.
  const double bytes = 2 * 128 * 128 * 2;
  REQUIRE(d.aicCores * d.memory.coreHbmBytesPerCycle < d.hbmBytesPerCycle());
  auto b = ptoc::runtime::rooflineBound(p, d);
  CHECK(b.hbmBytes == bytes);
  CHECK(b.portCycles == Approx(bytes / (d.aicCores * d.memory.coreHbmBytesPerCycle)));
  CHECK(b.hbmCycles == Approx(b.portCycles));
  CHECK(b.hbmCycles > bytes / d.hbmBytesPerCycle());

  // Ports twice as fast (a3's 64 B/cycle): the device's HBM bandwidth is the limit again.
  DeviceSpec fast = d;
  fast.memory.coreHbmBytesPerCycle = 64;
  auto f = ptoc::runtime::rooflineBound(p, fast);
  CHECK(f.portCycles == Approx(bytes / (d.aicCores * 64.0)));
  CHECK(f.hbmCycles == Approx(bytes / d.hbmBytesPerCycle()));

  // B read by vector tasks as well: it may come through any core's port. A (32 KiB)
  // only through the AIC ports, and all 64 KiB through the 72 ports of both kinds.
  int copy = addAivLeaf(p, 64, 64);
  int D = addTensor(p, "d", GmTensor::Kind::Intermediate, {64, 64});
  addCall(p, copy, {region(B, 0, 0), region(D, 0, 0)});
  auto both = ptoc::runtime::rooflineBound(p, d);
  const double port = d.memory.coreHbmBytesPerCycle;
  CHECK(both.portCycles == Approx(std::max(bytes / 2 / (d.aicCores * port),
                                           bytes / ((d.aicCores + d.aivCores) * port))));
}

TEST_CASE("transfer durations follow the device fields", "[sim]") {
  DeviceSpec d = preset("a2");
  const auto &m = d.memory;
  const auto &ps = d.pipes;
  Program p;
  int X = addTensor(p, "x", GmTensor::Kind::Argument, {64, 64});
  int B = addTensor(p, "b", GmTensor::Kind::Argument, {64, 64});
  int Y = addTensor(p, "y", GmTensor::Kind::Intermediate, {64, 64});
  p.results = {Y};
  int mm = addAicLeaf(p, 64, 64, 64, 1);
  int first = addCall(p, mm, {region(X, 0, 0), region(B, 0, 0), region(Y, 0, 0)});
  addCall(p, mm, {region(X, 0, 0), region(B, 0, 0), region(Y, 0, 0)}, {first});
  RunRecord r = run(p, d, 0, true);
  const double tile = 64 * 64 * 2;
  auto record = [&](int task, int instr) -> const ptoc::runtime::PipeRecord & {
    for (const auto &pr : r.pipes)
      if (pr.task == task && pr.instr == instr) return pr;
    FAIL("no record");
    return r.pipes.front();
  };
  auto busy = [&](int task, int instr) {
    return record(task, instr).endCycle - record(task, instr).startCycle;
  };
  auto latency = [&](int task, int instr) {
    return record(task, instr).readyCycle - record(task, instr).endCycle;
  };
  // Instructions: 0 MTE2 a, 1 MTE2 b, 2 MTE1 -> L0A, 3 MTE1 -> L0B, 4 CUBE, 5 FIXPIPE.
  // A cube core's reads convert ND -> NZ; a miss streams at the core's HBM rate and its
  // data arrives the GM latency later; the pipe is free before that.
  double missRate = std::min(ps.nd2nzBytesPerCycle, m.coreHbmBytesPerCycle);
  CHECK(busy(0, 0) == Approx(ps.nd2nzFixedCycles + tile / missRate));
  CHECK(latency(0, 0) == Approx(m.gmLatencyCycles));
  CHECK(record(0, 1).startCycle == Approx(record(0, 0).endCycle));
  // A hit streams at the path's own rate.
  CHECK(busy(1, 0) == Approx(ps.nd2nzFixedCycles + tile / ps.nd2nzBytesPerCycle));
  CHECK(latency(1, 0) == Approx(m.l2LatencyCycles));
  CHECK(busy(0, 2) == Approx(ps.mte1FixedCycles + tile / ps.mte1L0aBytesPerCycle));
  CHECK(busy(0, 3) == Approx(ps.mte1FixedCycles + tile / ps.mte1L0bBytesPerCycle));
  CHECK(busy(0, 4) == p.leaves[mm].instrs[4].cycles);
  CHECK(busy(0, 5) == Approx(ps.fixpipeFixedCycles + tile / ps.fixpipeBytesPerCycle));
  CHECK(latency(0, 5) == 0);
  CHECK(r.tasks[0].l2HitBytes == 0);
  CHECK(r.tasks[1].l2HitBytes == 2 * tile);
}

TEST_CASE("cores reading a tile that is still being fetched wait for that fetch", "[sim]") {
  // Two cube cores read the same two tiles at once: the first core's reads miss, the
  // second core's hit L2 but cannot get the data before the first fetch brings it.
  DeviceSpec d = preset("a2");
  Program p;
  int X = addTensor(p, "x", GmTensor::Kind::Argument, {64, 64});
  int B = addTensor(p, "b", GmTensor::Kind::Argument, {64, 64});
  int Y0 = addTensor(p, "y0", GmTensor::Kind::Intermediate, {64, 64});
  int Y1 = addTensor(p, "y1", GmTensor::Kind::Intermediate, {64, 64});
  int mm = addAicLeaf(p, 64, 64, 64, 1);
  addCall(p, mm, {region(X, 0, 0), region(B, 0, 0), region(Y0, 0, 0)});
  addCall(p, mm, {region(X, 0, 0), region(B, 0, 0), region(Y1, 0, 0)});
  ptoc::runtime::SimOptions o;
  o.recordPipes = true;
  o.kernelKind = ptoc::runtime::KernelKind::Plain; // both cores start at once
  auto r = ptoc::runtime::simulate(p, d, o);
  REQUIRE(r.ok());
  auto record = [&](int task, int instr) -> const ptoc::runtime::PipeRecord & {
    for (const auto &pr : r->pipes)
      if (pr.task == task && pr.instr == instr) return pr;
    FAIL("no record");
    return r->pipes.front();
  };
  REQUIRE(r->tasks[0].startCycle == r->tasks[1].startCycle);
  int leader = r->tasks[0].l2HitBytes == 0 ? 0 : 1, follower = 1 - leader;
  CHECK(r->tasks[leader].l2HitBytes == 0);
  CHECK(r->tasks[follower].l2HitBytes == 2 * 64 * 64 * 2);
  for (int instr : {0, 1}) {
    CHECK(record(follower, instr).endCycle >= record(leader, instr).endCycle);
    CHECK(record(follower, instr).readyCycle >= record(leader, instr).readyCycle);
  }
  CHECK(r->tasks[follower].endCycle >= r->tasks[leader].endCycle);
}

TEST_CASE("a consumer tile of another shape hits L2 when its producers' tiles are resident",
          "[sim]") {
  DeviceSpec d = preset("a2");
  Program p;
  int X = addTensor(p, "x", GmTensor::Kind::Argument, {128, 64});
  int T = addTensor(p, "t", GmTensor::Kind::Intermediate, {128, 64});
  int Y = addTensor(p, "y", GmTensor::Kind::Intermediate, {128, 64});
  p.results = {Y};
  int prod = addAivLeaf(p, 32, 64);   // writes 32 x 64 tiles of T
  int cons = addAivLeaf(p, 64, 64);   // reads 64 x 64 tiles: two producer tiles each
  int c0 = addCall(p, prod, {region(X, 0, 0), region(T, 0, 0)});
  int c1 = addCall(p, prod, {region(X, 32, 0), region(T, 32, 0)});
  int c2 = addCall(p, cons, {region(T, 0, 0), region(Y, 0, 0)}, {c0, c1});
  // Reads T rows 64..127, which nothing wrote: served by HBM.
  int c3 = addCall(p, cons, {region(T, 64, 0), region(Y, 64, 0)}, {c0});
  RunRecord r = run(p, d);
  CHECK(r.tasks[c0].l2HitBytes == 0);
  CHECK(r.tasks[c1].l2HitBytes == 0);
  CHECK(r.tasks[c2].l2HitBytes == r.tasks[c2].bytesIn);
  CHECK(r.tasks[c2].bytesIn == 64 * 64 * 2);
  CHECK(r.tasks[c3].l2HitBytes == 0);
  // Y is the result: both of its tiles are written through to HBM; T stays in L2.
  CHECK(r.hbmWriteBytes == 2 * 64 * 64 * 2);
}

TEST_CASE("a small L2 evicts: a re-read after other traffic misses", "[sim]") {
  DeviceSpec d = preset("tiny");
  d.memory.l2Bytes = 64 << 10; // room for 8 tiles of 8 KiB
  Program p;
  int X = addTensor(p, "x", GmTensor::Kind::Argument, {64 * 32, 128});
  int Y = addTensor(p, "y", GmTensor::Kind::Intermediate, {64 * 32, 128});
  p.results = {Y};
  int leaf = addAivLeaf(p, 32, 128);
  // Read tile 0, then 20 other tiles, then tile 0 again (a chain, so the order is fixed).
  int prev = addCall(p, leaf, {region(X, 0, 0), region(Y, 0, 0)});
  int again = -1;
  for (int i = 1; i <= 21; ++i) {
    int row = i == 21 ? 0 : 32 * i;
    prev = addCall(p, leaf, {region(X, row, 0), region(Y, row, 0)}, {prev});
    if (i == 21) again = prev;
  }
  RunRecord small = run(p, d);
  CHECK(small.tasks[again].l2HitBytes == 0);
  d.memory.l2Bytes = 4 << 20;
  RunRecord big = run(p, d);
  CHECK(big.tasks[again].l2HitBytes == big.tasks[again].bytesIn);
}

TEST_CASE("L2 knows memory, not names: windows of one tensor over the same bytes share it",
          "[sim]") {
  // A loop reads one K block per iteration through that iteration's own window tensor
  // (ExpandLoops gives each iteration its aliases). Two windows over the same rows of X
  // are one region: the second read hits. A window over other rows misses.
  DeviceSpec d = preset("tiny");
  Program p;
  int X = addTensor(p, "x", GmTensor::Kind::Argument, {128, 128});
  int Y = addTensor(p, "y", GmTensor::Kind::Intermediate, {3 * 32, 128});
  p.results = {Y};
  auto window = [&](const std::string &name, int64_t row) {
    int w = addTensor(p, name, GmTensor::Kind::Alias, {32, 128});
    p.tensors[w].base = X;
    p.tensors[w].baseOffset = row * 128;
    return w;
  };
  int w0 = window("x_it0", 32), w1 = window("x_it1", 32), w2 = window("x_it2", 64);
  int leaf = addAivLeaf(p, 32, 128);
  int a = addCall(p, leaf, {region(w0, 0, 0), region(Y, 0, 0)});
  int b = addCall(p, leaf, {region(w1, 0, 0), region(Y, 32, 0)}, {a});
  int c = addCall(p, leaf, {region(w2, 0, 0), region(Y, 64, 0)}, {b});
  RunRecord r = run(p, d);
  CHECK(r.tasks[a].l2HitBytes == 0);
  CHECK(r.tasks[b].l2HitBytes == r.tasks[b].bytesIn);
  CHECK(r.tasks[c].l2HitBytes == 0);
  // Each task brings one 32-row tile of X.
  CHECK(r.tasks[b].bytesIn == 32 * 128 * 2);
}

TEST_CASE("doubling HBM bandwidth speeds a memory-bound program, not a compute-bound one",
          "[sim]") {
  DeviceSpec d = preset("a2");
  DeviceSpec fast = d;
  fast.memory.hbmBytesPerSecond *= 2;

  const double head = d.launchOverheadUs * d.clockMHz;

  // Memory-bound: 192 AIV tasks each streaming a distinct 128 KiB tile in and out,
  // trivial compute: 48 cores x 32 B/cycle ask for more than HBM's ~889 B/cycle.
  Program mem;
  int X = addTensor(mem, "x", GmTensor::Kind::Argument, {192 * 64, 1024});
  int Y = addTensor(mem, "y", GmTensor::Kind::Intermediate, {192 * 64, 1024});
  mem.results = {Y};
  int leaf = addAivLeaf(mem, 64, 1024, 1, 1, 16);
  for (int i = 0; i < 192; ++i) addCall(mem, leaf, {region(X, 64 * i, 0), region(Y, 64 * i, 0)});
  RunRecord slowMem = run(mem, d), fastMem = run(mem, fast);
  CHECK(fastMem.makespanCycles - head < 0.8 * (slowMem.makespanCycles - head));
  // The cores could stream faster than HBM; the run still cannot beat HBM bandwidth,
  // and it is HBM-bound (within 20% of streaming every byte at the device rate).
  const double hbmBytes = static_cast<double>(slowMem.hbmReadBytes + slowMem.hbmWriteBytes);
  CHECK(48 * d.memory.coreHbmBytesPerCycle > d.hbmBytesPerCycle());
  CHECK(hbmBytes / d.hbmBytesPerCycle() <= slowMem.makespanCycles - head);
  CHECK(slowMem.makespanCycles - head < 1.2 * hbmBytes / d.hbmBytesPerCycle());
  CHECK(std::string(slowMem.bound.limiter()) == "hbm");

  // Compute-bound: the same number of tasks with small tiles and long vector work.
  Program comp;
  int S = addTensor(comp, "s", GmTensor::Kind::Argument, {480 * 16, 64});
  int U = addTensor(comp, "u", GmTensor::Kind::Intermediate, {480 * 16, 64});
  comp.results = {U};
  int heavy = addAivLeaf(comp, 16, 64, 1, 4, 50000);
  for (int i = 0; i < 480; ++i) addCall(comp, heavy, {region(S, 16 * i, 0), region(U, 16 * i, 0)});
  RunRecord slowComp = run(comp, d), fastComp = run(comp, fast);
  CHECK(fastComp.makespanCycles - head > 0.99 * (slowComp.makespanCycles - head));
}

TEST_CASE("the simulator overlaps pipes: ping-pong buffering beats serialised loads", "[sim]") {
  DeviceSpec d = preset("a2");
  auto program = [](bool pingPong) {
    Program p;
    const int tiles = 8;
    int X = addTensor(p, "x", GmTensor::Kind::Argument, {64 * tiles, 128});
    int Y = addTensor(p, "y", GmTensor::Kind::Intermediate, {64 * tiles, 128});
    p.results = {Y};
    int leaf = addStreamingAivLeaf(p, tiles, 64, 128, 3000, pingPong);
    std::vector<Region> regs;
    for (int i = 0; i < tiles; ++i) regs.push_back(region(X, 64 * i, 0));
    for (int i = 0; i < tiles; ++i) regs.push_back(region(Y, 64 * i, 0));
    addCall(p, leaf, regs);
    return p;
  };
  Program pingPong = program(true), serialised = program(false);
  RunRecord pp = run(pingPong, d, 0, true), serial = run(serialised, d, 0, true);
  checkPipes(pingPong, d, pp);
  checkPipes(serialised, d, serial);
  CHECK(pp.tasks[0].endCycle - pp.tasks[0].startCycle <
        0.8 * (serial.tasks[0].endCycle - serial.tasks[0].startCycle));
  // With ping-pong some MTE2 load runs while the VEC pipe computes; serialised, none.
  auto overlaps = [](const RunRecord &r) {
    for (const auto &x : r.pipes)
      for (const auto &y : r.pipes)
        if (x.pipe == ptoc::codegen::Pipe::Mte2 && y.pipe == ptoc::codegen::Pipe::Vec &&
            x.startCycle < y.endCycle && y.startCycle < x.endCycle)
          return true;
    return false;
  };
  CHECK(overlaps(pp));
  CHECK_FALSE(overlaps(serial));
}

TEST_CASE("simulate rejects bad scheduler modes and malformed programs", "[sim]") {
  DeviceSpec d = preset("a2");
  Program p = randomProgram(5, {10, 2, 5});
  for (int mode : {-1, 4, 7}) {
    SimOptions o;
    o.schedMode = mode;
    auto r = ptoc::runtime::simulate(p, d, o);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == absl::StatusCode::kInvalidArgument);
    std::string msg(r.status().message());
    CHECK_THAT(msg, Contains("device_sched_mode " + std::to_string(mode)));
    CHECK_THAT(msg, Contains("valid modes: 0 (shared FIFO ready queue), 1 (L2 affinity), 2 (fair"));
  }

  Program cyclic = p;
  cyclic.calls[2].preds = {5};
  auto r = ptoc::runtime::simulate(cyclic, d, {});
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(std::string(r.status().message()), Contains("call 2 waits for call 5"));

  Program noCore = p;
  noCore.leaves[0].core = ptoc::target::CoreKind::None;
  r = ptoc::runtime::simulate(noCore, d, {});
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(std::string(r.status().message()), Contains("leaf 0"));

  Program badDep = p;
  badDep.leaves[0].instrs[0].deps = {3};
  r = ptoc::runtime::simulate(badDep, d, {});
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(std::string(r.status().message()),
             Contains("instruction 0 depends on instruction 3"));

  Program fewRegions = p;
  fewRegions.calls[0].regions.clear();
  r = ptoc::runtime::simulate(fewRegions, d, {});
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(std::string(r.status().message()), Contains("call 0"));

  DeviceSpec badDevice = d;
  badDevice.scheduler.threads = 0;
  r = ptoc::runtime::simulate(p, badDevice, {});
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(std::string(r.status().message()), Contains("threads"));
}
