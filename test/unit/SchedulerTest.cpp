// Unit tests for the simulated AICPU scheduler: thread costs and the kernel head,
// pending slots, the policies of device_sched_mode (FIFO order, L2 affinity, fairness
// across threads) and what more threads or cheaper dispatch buy.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "RandomProgram.h"
#include "ptoc/runtime/Simulator.h"

using ptoc::codegen::Program;
using ptoc::runtime::RunRecord;
using ptoc::runtime::SimOptions;
using ptoc::target::DeviceSpec;
using namespace ptoc::testprog;

namespace {

/// An AIV leaf that only computes for `cycles` (no GM traffic): scheduler-bound tests.
int addComputeLeaf(Program &p, int64_t cycles) {
  Leaf l;
  l.id = static_cast<int>(p.leaves.size());
  l.core = ptoc::target::CoreKind::AIV;
  int op = addOp(l, ptoc::ir::OpCode::Full, {16, 16}, ptoc::ir::DType::F32, ptoc::ir::MemSpace::UB);
  addInstr(l, Pipe::Vec, op, cycles, 0, -1, {});
  l.vectorBytes = 16 * 16 * 4;
  p.leaves.push_back(l);
  return l.id;
}

/// Tasks dispatched per scheduler thread: max - min.
int threadSpread(const RunRecord &r) {
  std::vector<int> n(r.schedulerThreads, 0);
  for (const auto &t : r.tasks) ++n[t.thread];
  auto [lo, hi] = std::minmax_element(n.begin(), n.end());
  return *hi - *lo;
}

} // namespace

TEST_CASE("thread costs: head, dispatch, completion and dependency resolution", "[sched]") {
  DeviceSpec d = preset("tiny");
  const double head = d.launchOverheadUs * d.clockMHz;
  const double D = d.scheduler.dispatchCycles, C = d.scheduler.completionCycles,
               R = d.scheduler.dependencyResolveCycles;
  Program p;
  int leaf = addComputeLeaf(p, 1000);
  int a = addCall(p, leaf, {});
  int b = addCall(p, leaf, {}, {a});
  RunRecord r = run(p, d);
  CHECK(r.tasks[a].readyCycle == head);
  CHECK(r.tasks[a].dispatchCycle == head + D); // the first dispatch ends the head
  CHECK(r.tasks[a].startCycle == head + D);
  CHECK(r.tasks[a].endCycle == head + D + 1000);
  // a has a successor: its completion costs completion + dependency resolution.
  CHECK(r.tasks[b].readyCycle == r.tasks[a].endCycle + C + R);
  CHECK(r.tasks[b].startCycle == r.tasks[b].readyCycle + D);
  CHECK(r.makespanCycles == r.tasks[b].startCycle + 1000);
  CHECK(r.coreBusyCycles[d.aicCores + r.tasks[a].coreIndex] >= 1000);
}

TEST_CASE("a pre-posted pending task starts the moment the running one ends", "[sched]") {
  DeviceSpec d = preset("tiny");
  d.aicCores = 1;
  d.aivCores = 1;
  d.scheduler.threads = 1;
  REQUIRE(d.validate().ok());
  Program p;
  int leaf = addComputeLeaf(p, 5000);
  for (int i = 0; i < 4; ++i) addCall(p, leaf, {});
  RunRecord r = run(p, d);
  // FIFO on one core: program order, back to back (the thread re-fills the pending
  // slot while the running task computes).
  for (int i = 1; i < 4; ++i) {
    CHECK(r.tasks[i].startCycle == r.tasks[i - 1].endCycle);
    CHECK(r.tasks[i].dispatchCycle < r.tasks[i].startCycle);
  }
  // The ready queue drained as tasks were dispatched. At most one sample per instant:
  // the head's shows the queue after the first dispatch took a task.
  REQUIRE(r.queue.size() == 4);
  CHECK(r.queue.front().cycle == d.launchOverheadUs * d.clockMHz);
  CHECK(r.queue.front().depth == 3);
  CHECK(r.queue.back().depth == 0);
}

TEST_CASE("L2 affinity (mode 1) hits L2 more than FIFO (mode 0) on producer-consumer chains",
          "[sched]") {
  DeviceSpec d = preset("tiny");
  d.memory.l2Bytes = 256 << 10; // 32 tiles of 8 KiB
  const int chains = 64;
  Program p;
  int A = addTensor(p, "a", GmTensor::Kind::Argument, {64 * chains, 64});
  int B = addTensor(p, "b", GmTensor::Kind::Argument, {64, 64});
  int T1 = addTensor(p, "t1", GmTensor::Kind::Intermediate, {64 * chains, 64});
  int T2 = addTensor(p, "t2", GmTensor::Kind::Intermediate, {64 * chains, 64});
  int R = addTensor(p, "r", GmTensor::Kind::Intermediate, {64 * chains, 64});
  p.results = {R};
  int mm = addAicLeaf(p, 64, 64, 64, 1);
  int vec = addAivLeaf(p, 64, 64, 1, 1);
  std::vector<int> last;
  // All first stages, then the rest of each chain: AIC -> AIV -> AIC over distinct tiles.
  std::vector<int> first;
  for (int i = 0; i < chains; ++i)
    first.push_back(addCall(p, mm, {region(A, 64 * i, 0), region(B, 0, 0), region(T1, 64 * i, 0)}));
  for (int i = 0; i < chains; ++i) {
    int mid = addCall(p, vec, {region(T1, 64 * i, 0), region(T2, 64 * i, 0)}, {first[i]});
    last.push_back(
        addCall(p, mm, {region(T2, 64 * i, 0), region(B, 0, 0), region(R, 64 * i, 0)}, {mid}));
  }
  RunRecord fifo = run(p, d, 0), affinity = run(p, d, 1);
  INFO("FIFO hit rate " << fifo.l2HitRate() << ", affinity hit rate " << affinity.l2HitRate());
  CHECK(affinity.l2HitRate() > fifo.l2HitRate() + 0.1);
  // The last stage reads what the middle stage wrote: under FIFO it waits behind every
  // first stage and finds it evicted.
  auto lastHits = [&](const RunRecord &r) {
    int64_t hits = 0;
    for (int c : last) hits += r.tasks[c].l2HitBytes;
    return hits;
  };
  CHECK(lastHits(affinity) > lastHits(fifo));
}

TEST_CASE("fair mode (2) spreads a chain readied by one thread across threads", "[sched]") {
  DeviceSpec d = preset("a2"); // 3 threads, 48 AIV cores
  Program p;
  int leaf = addComputeLeaf(p, 2000);
  int prev = -1;
  for (int i = 0; i < 30; ++i)
    prev = addCall(p, leaf, {}, prev < 0 ? std::vector<int>{} : std::vector<int>{prev});
  int fifo = threadSpread(run(p, d, 0));
  int affinity = threadSpread(run(p, d, 1));
  int fair = threadSpread(run(p, d, 2));
  INFO("spread: FIFO " << fifo << ", affinity " << affinity << ", fair " << fair);
  CHECK(fair < fifo);
  CHECK(fair < affinity);
  CHECK(fair <= 1);
}

TEST_CASE("fair mode hands work over to idle threads", "[sched]") {
  DeviceSpec d = preset("a2");
  Program p;
  int leaf = addComputeLeaf(p, 3000);
  // One root whose completion (on one thread) readies 600 tasks at once.
  int root = addCall(p, leaf, {});
  for (int i = 0; i < 600; ++i) addCall(p, leaf, {}, {root});
  RunRecord r = run(p, d, 2);
  std::vector<int> perThread(3, 0);
  for (const auto &t : r.tasks) ++perThread[t.thread];
  for (int n : perThread) CHECK(n >= 150);
}

TEST_CASE("more scheduler threads or cheaper dispatch shorten a dispatch-bound run", "[sched]") {
  DeviceSpec d = preset("a2");
  const double head = d.launchOverheadUs * d.clockMHz;
  Program p;
  int leaf = addComputeLeaf(p, 20);
  for (int i = 0; i < 3000; ++i) addCall(p, leaf, {});
  for (int mode = 0; mode <= 3; ++mode) {
    INFO("mode " << mode);
    DeviceSpec one = d;
    one.scheduler.threads = 1;
    double three = run(p, d, mode).makespanCycles - head;
    double single = run(p, one, mode).makespanCycles - head;
    CHECK(three < 0.5 * single);
    DeviceSpec cheap = d;
    cheap.scheduler.dispatchCycles = 20;
    CHECK(run(p, cheap, mode).makespanCycles - head < 0.8 * three);
  }
}

TEST_CASE("affinity keeps a producer's successors on its thread, FIFO lets idle threads "
          "take them, fair deals initial tasks round-robin", "[sched]") {
  DeviceSpec d = preset("tiny"); // 2 AIC, 4 AIV
  d.scheduler.threads = 2;       // thread 0: AIV 0-1, thread 1: AIV 2-3
  REQUIRE(d.validate().ok());
  Program p;
  int leaf = addComputeLeaf(p, 4000);
  int root = addCall(p, leaf, {});
  int x = addCall(p, leaf, {}, {root});
  int y = addCall(p, leaf, {}, {root});
  RunRecord fifo = run(p, d, 0), affinity = run(p, d, 1);
  REQUIRE(fifo.tasks[root].thread == 0);
  CHECK(fifo.tasks[x].thread == 0);
  CHECK(fifo.tasks[y].thread == 1); // the idle thread took it from the shared queue
  REQUIRE(affinity.tasks[root].thread == 0);
  CHECK(affinity.tasks[x].thread == 0);
  CHECK(affinity.tasks[y].thread == 0);
  // LIFO: the most recently readied (y) is dispatched first.
  CHECK(affinity.tasks[y].dispatchCycle < affinity.tasks[x].dispatchCycle);

  Program flat;
  int f = addComputeLeaf(flat, 4000);
  for (int i = 0; i < 6; ++i) addCall(flat, f, {});
  RunRecord fair = run(flat, d, 2);
  for (int i = 0; i < 6; ++i) CHECK(fair.tasks[i].thread == i % 2);
}
