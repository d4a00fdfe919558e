// Unit tests for lib/profile: the swimlane trace (lanes, flows per edge, counters, pipe
// lanes), the trace validator on good and broken traces, the summary's numbers and
// verdicts on hand-made runs with known answers, and the run output folder.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>
#include <regex>
#include <string>
#include <vector>

#include <unistd.h>

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "ptoc/codegen/Program.h"
#include "ptoc/profile/RunOutputs.h"
#include "ptoc/profile/Summary.h"
#include "ptoc/profile/Swimlane.h"
#include "ptoc/profile/TraceCheck.h"
#include "ptoc/runtime/RunRecord.h"

using namespace ptoc;
using codegen::Pipe;
using target::CoreKind;

namespace {

struct Run {
  codegen::Program program;
  runtime::RunRecord record;
};

codegen::LeafOp op(ir::OpCode code, int region = -1) {
  codegen::LeafOp o;
  o.code = code;
  o.region = region;
  return o;
}

codegen::PipeInstr instr(Pipe pipe, int opIndex) {
  codegen::PipeInstr i;
  i.pipe = pipe;
  i.op = opIndex;
  return i;
}

codegen::Region region(int tensor, std::initializer_list<int64_t> offsets) {
  codegen::Region r;
  r.tensor = tensor;
  r.offsets.assign(offsets.begin(), offsets.end());
  return r;
}

// A small matmul -> exp -> sum program and a consistent run of it, with numbers
// chosen so every summary figure is known. Clock 1000 MHz: 1 cycle = 1 ns. Times
// count from the kernel launch; the head overhead takes the first 1000 cycles (1 us).
//   calls 0-3: AIC matmul tiles (group 0), on AIC_0 / AIC_1
//   calls 4-7: AIV exp tiles (group 1), call 4+i waits for call i
//   call 8:    AIV sum (group 2), waits for calls 4-7
// Task times (cycles after the head; the record holds them plus 1000):
//   0 AIC_0 0-1000     1 AIC_1 0-1000     2 AIC_0 1000-2000   3 AIC_1 1000-2400
//   4 AIV_0 1100-1600  5 AIV_1 1100-1600  6 AIV_0 2100-2600   7 AIV_1 2600-3100
//   8 AIV_2 3200-4000                                          makespan 1000 + 4000
Run makeRun(bool withPipes = false) {
  Run run;
  codegen::Program &p = run.program;
  p.funcName = "mm_exp_sum";
  for (const char *name : {"a", "b", "c", "d", "out"}) {
    codegen::GmTensor t;
    t.name = name;
    p.tensors.push_back(t);
  }
  codegen::Leaf mm;
  mm.id = 0;
  mm.hash = "00000000000000aa";
  mm.hashOrder = 0;
  mm.groupSize = 4;
  mm.core = CoreKind::AIC;
  mm.ops = {op(ir::OpCode::CopyIn, 0), op(ir::OpCode::CopyIn, 1), op(ir::OpCode::Matmul),
            op(ir::OpCode::CopyOut, 2)};
  mm.instrs = {instr(Pipe::Mte2, 0), instr(Pipe::Mte2, 1), instr(Pipe::Cube, 2),
               instr(Pipe::Fixpipe, 3)};
  mm.numRegions = 3;
  codegen::Leaf exp;
  exp.id = 1;
  exp.hash = "00000000000000bb";
  exp.hashOrder = 1;
  exp.groupSize = 4;
  exp.core = CoreKind::AIV;
  exp.ops = {op(ir::OpCode::CopyIn, 0), op(ir::OpCode::Exp), op(ir::OpCode::CopyOut, 1)};
  exp.instrs = {instr(Pipe::Mte2, 0), instr(Pipe::Vec, 1), instr(Pipe::Mte3, 2)};
  exp.numRegions = 2;
  codegen::Leaf sum = exp;
  sum.id = 2;
  sum.hash = "00000000000000cc";
  sum.hashOrder = 2;
  sum.groupSize = 1;
  sum.ops[1].code = ir::OpCode::Sum;
  p.leaves = {mm, exp, sum};

  for (int i = 0; i < 4; ++i) {
    codegen::Call c;
    c.leaf = 0;
    c.subgraph = i;
    c.regions = {region(0, {32 * i, 0}), region(1, {0, 0}), region(2, {32 * i, 0})};
    p.calls.push_back(c);
  }
  for (int i = 0; i < 4; ++i) {
    codegen::Call c;
    c.leaf = 1;
    c.subgraph = 4 + i;
    c.regions = {region(2, {32 * i, 0}), region(3, {32 * i, 0})};
    c.preds = {i};
    p.calls.push_back(c);
  }
  codegen::Call last;
  last.leaf = 2;
  last.subgraph = 8;
  last.regions = {region(3, {0, 0}), region(4, {0})};
  last.preds = {4, 5, 6, 7};
  p.calls.push_back(last);

  runtime::RunRecord &r = run.record;
  r.device = "tiny";
  r.clockMHz = 1000;
  r.aicCores = 2;
  r.aivCores = 4;
  r.schedulerThreads = 2;
  r.bound.cubeCycles = 1000;
  r.bound.vectorCycles = 500;
  r.bound.hbmCycles = 800;
  r.bound.hbmBytes = 8000;
  r.bound.headCycles = 1000;
  r.makespanCycles = 5000;
  struct Placement {
    CoreKind core;
    int index;
    double start, end;
  };
  const Placement placements[] = {
      {CoreKind::AIC, 0, 0, 1000},    {CoreKind::AIC, 1, 0, 1000},
      {CoreKind::AIC, 0, 1000, 2000}, {CoreKind::AIC, 1, 1000, 2400},
      {CoreKind::AIV, 0, 1100, 1600}, {CoreKind::AIV, 1, 1100, 1600},
      {CoreKind::AIV, 0, 2100, 2600}, {CoreKind::AIV, 1, 2600, 3100},
      {CoreKind::AIV, 2, 3200, 4000}};
  const double head = r.bound.headCycles;
  for (int c = 0; c < 9; ++c) {
    runtime::TaskRecord t;
    t.call = c;
    t.core = placements[c].core;
    t.coreIndex = placements[c].index;
    t.thread = t.coreIndex % 2;
    t.readyCycle = head;
    for (int pred : p.calls[c].preds)
      t.readyCycle = std::max(t.readyCycle, head + placements[pred].end);
    t.startCycle = head + placements[c].start;
    t.endCycle = head + placements[c].end;
    t.dispatchCycle = std::min(t.readyCycle + 50, t.startCycle);
    t.bytesIn = 2048;
    t.bytesOut = 1024;
    t.l2HitBytes = c >= 4 ? 1024 : 0;
    r.tasks.push_back(t);
  }
  r.queue = {{1000, CoreKind::AIC, 4}, {1000, CoreKind::AIC, 2}, {2000, CoreKind::AIC, 0},
             {2000, CoreKind::AIV, 2}, {2100, CoreKind::AIV, 0}, {4100, CoreKind::AIV, 1},
             {4200, CoreKind::AIV, 0}};
  r.coreBusyCycles = {2000, 2400, 1000, 1000, 800, 0};
  r.hbmReadBytes = 6000;
  r.hbmWriteBytes = 2000;
  r.l2ReadHitBytes = 300;
  r.l2ReadMissBytes = 700;
  r.copyInBytes = 9 * 2048;
  r.copyOutBytes = 9 * 1024;
  if (withPipes) {
    // Each task's instructions run back to back in equal shares of its time.
    for (int c = 0; c < 9; ++c) {
      const runtime::TaskRecord &t = r.tasks[c];
      const codegen::Leaf &leaf = p.leaves[p.calls[c].leaf];
      double step = (t.endCycle - t.startCycle) / leaf.instrs.size();
      for (size_t i = 0; i < leaf.instrs.size(); ++i) {
        runtime::PipeRecord pr;
        pr.task = c;
        pr.pipe = leaf.instrs[i].pipe;
        pr.instr = static_cast<int>(i);
        pr.startCycle = t.startCycle + step * i;
        pr.endCycle = t.startCycle + step * (i + 1);
        pr.bytes = codegen::isTransferPipe(pr.pipe) ? 1024 : 0;
        r.pipes.push_back(pr);
      }
    }
  }
  return run;
}

// `tasks` independent AIV tasks of one group on `cores` AIV cores, dealt round-robin
// in waves: each takes `taskCycles`, with `gapCycles` between a core's tasks. Clock
// 1000 MHz; no bound terms beyond the head, no HBM traffic.
Run makeWideRun(int tasks, int cores, double taskCycles, double gapCycles,
                double headCycles = 1000) {
  Run run = makeRun();
  codegen::Program &p = run.program;
  p.leaves = {p.leaves[1]};
  p.leaves[0].hashOrder = 0;
  p.leaves[0].groupSize = tasks;
  p.calls.clear();
  runtime::RunRecord &r = run.record;
  r.aicCores = 0;
  r.aivCores = cores;
  r.bound = {};
  r.bound.headCycles = headCycles;
  r.tasks.clear();
  r.queue.clear();
  r.coreBusyCycles.assign(cores, 0);
  r.hbmReadBytes = r.hbmWriteBytes = 0;
  double last = headCycles;
  for (int c = 0; c < tasks; ++c) {
    codegen::Call call;
    call.leaf = 0;
    call.subgraph = c;
    call.regions = {region(2, {32 * c, 0}), region(3, {32 * c, 0})};
    p.calls.push_back(call);
    runtime::TaskRecord t;
    t.call = c;
    t.core = CoreKind::AIV;
    t.coreIndex = c % cores;
    t.thread = 0;
    t.readyCycle = t.dispatchCycle = headCycles;
    t.startCycle = headCycles + (c / cores) * (taskCycles + gapCycles);
    t.endCycle = t.startCycle + taskCycles;
    r.coreBusyCycles[t.coreIndex] += taskCycles;
    last = std::max(last, t.endCycle);
    r.tasks.push_back(t);
  }
  r.makespanCycles = last;
  return run;
}

std::string trace(const Run &run, const profile::SwimlaneOptions &options = {}) {
  absl::StatusOr<std::string> json = profile::swimlaneJson(run.program, run.record, options);
  REQUIRE(json.ok());
  return *json;
}

llvm::json::Value parse(const std::string &text) {
  llvm::Expected<llvm::json::Value> value = llvm::json::parse(text);
  if (!value) FAIL(llvm::toString(value.takeError()));
  return std::move(*value);
}

const llvm::json::Array &events(const llvm::json::Value &root) {
  const llvm::json::Array *array = root.getAsObject()->getArray("traceEvents");
  REQUIRE(array);
  return *array;
}

std::string str(const llvm::json::Object &o, llvm::StringRef key) {
  return o.getString(key).getValueOr("").str();
}

/// thread_name metadata: lane name -> (pid, tid).
std::map<std::string, std::pair<int64_t, int64_t>> threadNames(const llvm::json::Array &evs) {
  std::map<std::string, std::pair<int64_t, int64_t>> names;
  for (const llvm::json::Value &v : evs) {
    const llvm::json::Object &e = *v.getAsObject();
    if (str(e, "ph") == "M" && str(e, "name") == "thread_name")
      names[str(*e.getObject("args"), "name")] = {*e.getInteger("pid"), *e.getInteger("tid")};
  }
  return names;
}

int countPhase(const llvm::json::Array &evs, llvm::StringRef ph, llvm::StringRef cat = "") {
  int n = 0;
  for (const llvm::json::Value &v : evs) {
    const llvm::json::Object &e = *v.getAsObject();
    if (str(e, "ph") == ph && (cat.empty() || str(e, "cat") == cat)) ++n;
  }
  return n;
}

std::string message(const absl::Status &status) { return std::string(status.message()); }

} // namespace

TEST_CASE("swimlane of a hand-made run validates and has a flow pair per edge", "[profile]") {
  Run run = makeRun();
  std::string json = trace(run);
  INFO(json);
  REQUIRE(profile::checkTrace(json).ok());
  absl::Status matches = profile::checkTraceMatches(json, run.program);
  INFO(message(matches));
  REQUIRE(matches.ok());

  llvm::json::Value root = parse(json);
  const llvm::json::Array &evs = events(root);
  CHECK(countPhase(evs, "X", "task") == 9);
  CHECK(countPhase(evs, "s") == 8); // 4 single edges + 4 into the sum
  CHECK(countPhase(evs, "f") == 8);
  CHECK(countPhase(evs, "X", "pipe") == 0);
  CHECK(str(*root.getAsObject(), "displayTimeUnit") == "ns");

  auto names = threadNames(evs);
  for (const char *lane : {"AIC_0", "AIC_1", "AIV_0", "AIV_3", "AICPU_0", "AICPU_1", "Kernel"})
    CHECK(names.count(lane) == 1);
  for (const auto &[name, lane] : names) CHECK(name.find(" MTE2") == std::string::npos);

  // Call 3: AIC_1, 1000..2400 cycles after a 1 us head -> ts 2 us, dur 1.4 us.
  bool seen = false;
  for (const llvm::json::Value &v : evs) {
    const llvm::json::Object &e = *v.getAsObject();
    if (str(e, "cat") != "task" || e.getObject("args")->getInteger("call") != int64_t(3)) continue;
    seen = true;
    CHECK(str(e, "name") == "func0_0 sg3");
    CHECK(*e.getInteger("tid") == names["AIC_1"].second);
    CHECK(*e.getInteger("pid") == names["AIC_1"].first);
    CHECK(*e.getNumber("ts") == Approx(2.0));
    CHECK(*e.getNumber("dur") == Approx(1.4));
    const llvm::json::Object &args = *e.getObject("args");
    CHECK(*args.getInteger("hash_order") == 0);
    CHECK(*args.getInteger("group_size") == 4);
    CHECK(str(args, "leaf_hash") == "00000000000000aa");
    CHECK(*args.getInteger("bytes_in") == 2048);
    CHECK(*args.getInteger("thread") == 1);
    const llvm::json::Array &regions = *args.getArray("regions");
    REQUIRE(regions.size() == 3);
    CHECK(regions[0].getAsString()->str() == "a[96,0]");
    CHECK(regions[2].getAsString()->str() == "c[96,0]");
  }
  CHECK(seen);

  // Counters for both core kinds, from RunRecord::queue.
  std::set<std::string> counters;
  for (const llvm::json::Value &v : evs) {
    const llvm::json::Object &e = *v.getAsObject();
    if (str(e, "ph") == "C") {
      counters.insert(str(e, "name"));
      CHECK(e.getObject("args")->getInteger("value").hasValue());
    }
  }
  CHECK(counters == std::set<std::string>{"ReadyCount_AIC", "ReadyCount_AIV"});
  CHECK(countPhase(evs, "C") == 7);

  const llvm::json::Object &other = *root.getAsObject()->getObject("otherData");
  CHECK(str(other, "device") == "tiny");
  CHECK(*other.getNumber("simulated_us") == Approx(5.0));
  CHECK(*other.getNumber("bound_us") == Approx(2.0));
  CHECK(*other.getInteger("edges") == 8);
}

TEST_CASE("swimlane options drop flows, counters and side lanes", "[profile]") {
  Run run = makeRun(/*withPipes=*/true);
  profile::SwimlaneOptions options;
  options.flows = false;
  options.counters = false;
  options.pipeLanes = false;
  options.schedulerLanes = false;
  options.deviceLane = false;
  std::string json = trace(run, options);
  REQUIRE(profile::checkTrace(json).ok());
  llvm::json::Value root = parse(json);
  const llvm::json::Array &evs = events(root);
  CHECK(countPhase(evs, "s") == 0);
  CHECK(countPhase(evs, "C") == 0);
  CHECK(countPhase(evs, "i") == 0);
  CHECK(countPhase(evs, "X") == 9);
  // Without flows the trace no longer shows the program's edges.
  absl::Status matches = profile::checkTraceMatches(json, run.program);
  CHECK(!matches.ok());
  CHECK_THAT(message(matches), Catch::Contains("edge call 0 -> call 4 has no flow pair"));
}

TEST_CASE("pipe lanes appear only with pipe records, right after their core", "[profile]") {
  std::string plain = trace(makeRun(false));
  CHECK(plain.find("\"cat\":\"pipe\"") == std::string::npos);
  CHECK(plain.find("AIC_0 MTE2") == std::string::npos);

  Run run = makeRun(true);
  std::string json = trace(run);
  absl::Status ok = profile::checkTraceMatches(json, run.program);
  INFO(message(ok));
  REQUIRE(ok.ok());
  llvm::json::Value root = parse(json);
  const llvm::json::Array &evs = events(root);
  CHECK(countPhase(evs, "X", "pipe") == 4 * 4 + 5 * 3);
  auto names = threadNames(evs);
  // AIC lanes: core, MTE2, MTE1, CUBE, FIXPIPE; AIV: core, MTE2, VEC, MTE3.
  CHECK(names["AIC_1"].second == 5);
  CHECK(names["AIC_1 MTE2"].second == 6);
  CHECK(names["AIC_1 FIXPIPE"].second == 9);
  CHECK(names["AIV_2"].second == 8);
  CHECK(names["AIV_2 VEC"].second == 10);
  CHECK(names["AIV_3 MTE3"].first == names["AIV_3"].first);
  bool sawCubeMatmul = false;
  for (const llvm::json::Value &v : evs) {
    const llvm::json::Object &e = *v.getAsObject();
    if (str(e, "cat") == "pipe" && str(e, "name") == "CUBE matmul") {
      sawCubeMatmul = true;
      CHECK(e.getInteger("tid") != names["AIC_0"].second); // on a pipe lane, not the task lane
    }
  }
  CHECK(sawCubeMatmul);
}

TEST_CASE("lanes never overlap when cycle boundaries fall between nanoseconds", "[profile]") {
  // 1.8 GHz: task boundaries at 7-cycle steps land on fractions of a nanosecond.
  Run run = makeRun();
  run.record.clockMHz = 1800;
  double t = 1000;
  for (int c : {0, 2}) {
    run.record.tasks[c].startCycle = t;
    run.record.tasks[c].endCycle = t += 7;
  }
  run.record.tasks[4].readyCycle = run.record.tasks[4].dispatchCycle = 1007;
  run.record.tasks[4].startCycle = 1007;
  run.record.tasks[4].endCycle = 1008;
  run.record.tasks[6].readyCycle = run.record.tasks[6].dispatchCycle = 1014;
  run.record.tasks[6].startCycle = 1015;
  run.record.tasks[6].endCycle = 1016;
  std::string json = trace(run);
  absl::Status ok = profile::checkTraceMatches(json, run.program);
  INFO(message(ok));
  CHECK(ok.ok());
  // Back-to-back tasks 0 and 2 on AIC_0: the first ends exactly where the next starts.
  llvm::json::Value root = parse(json);
  double end0 = -1, start2 = -2;
  for (const llvm::json::Value &v : events(root)) {
    const llvm::json::Object &e = *v.getAsObject();
    if (str(e, "cat") != "task") continue;
    int64_t call = *e.getObject("args")->getInteger("call");
    if (call == 0) end0 = *e.getNumber("ts") + *e.getNumber("dur");
    if (call == 2) start2 = *e.getNumber("ts");
  }
  CHECK(end0 == Approx(start2).margin(1e-9));
  CHECK(end0 <= start2 + 1e-9);
}

TEST_CASE("checkTrace catches overlaps, unpaired flows and broken JSON", "[profile]") {
  SECTION("overlapping tasks on one core") {
    Run run = makeRun();
    run.record.tasks[2].startCycle = 1900; // AIC_0 still runs call 0 until 2000
    absl::Status status = profile::checkTrace(trace(run));
    REQUIRE(!status.ok());
    CHECK_THAT(message(status), Catch::Contains("overlaps"));
    CHECK_THAT(message(status), Catch::Contains("AIC/AIC_0"));
    CHECK_THAT(message(status), Catch::Contains("func0_0 sg2"));
  }
  SECTION("a flow end removed from a good trace") {
    std::string json = trace(makeRun());
    size_t at = json.find("\"ph\":\"f\"");
    REQUIRE(at != std::string::npos);
    size_t begin = json.rfind('\n', at) + 1;
    size_t end = json.find('\n', at) + 1;
    REQUIRE(json[end - 2] == ','); // a middle line: dropping it keeps the JSON valid
    json.erase(begin, end - begin);
    absl::Status status = profile::checkTrace(json);
    REQUIRE(!status.ok());
    CHECK_THAT(message(status), Catch::Contains("flow id #1"));
    CHECK_THAT(message(status), Catch::Contains("no matching 'f'"));
  }
  SECTION("hand-written traces") {
    const std::string names =
        R"({"ph":"M","name":"process_name","pid":1,"args":{"name":"P"}},)"
        R"({"ph":"M","name":"thread_name","pid":1,"tid":0,"args":{"name":"T0"}},)"
        R"({"ph":"M","name":"thread_name","pid":1,"tid":1,"args":{"name":"T1"}},)";
    const std::string slices =
        R"({"ph":"X","name":"a","pid":1,"tid":0,"ts":0,"dur":2},)"
        R"({"ph":"X","name":"b","pid":1,"tid":1,"ts":3,"dur":2})";
    auto check = [&](const std::string &extra) {
      return profile::checkTrace("{\"traceEvents\":[" + names + slices + extra + "]}");
    };
    CHECK(check("").ok());
    CHECK(check(R"(,{"ph":"s","id":7,"cat":"dep","name":"dep","pid":1,"tid":0,"ts":1},)"
                R"({"ph":"f","bp":"e","id":7,"cat":"dep","name":"dep","pid":1,"tid":1,"ts":3})")
              .ok());
    absl::Status unpaired =
        check(R"(,{"ph":"f","bp":"e","id":9,"cat":"dep","name":"dep","pid":1,"tid":1,"ts":3})");
    CHECK_THAT(message(unpaired), Catch::Contains("flow id #9: the 'f' event 5"));
    CHECK_THAT(message(unpaired), Catch::Contains("no matching 's'"));
    absl::Status offSlice =
        check(R"(,{"ph":"s","id":7,"cat":"dep","name":"dep","pid":1,"tid":0,"ts":2.5},)"
              R"({"ph":"f","bp":"e","id":7,"cat":"dep","name":"dep","pid":1,"tid":1,"ts":3})");
    CHECK_THAT(message(offSlice), Catch::Contains("not inside any complete event"));
    absl::Status backwards =
        check(R"(,{"ph":"s","id":7,"cat":"dep","name":"dep","pid":1,"tid":1,"ts":4},)"
              R"({"ph":"f","bp":"e","id":7,"cat":"dep","name":"dep","pid":1,"tid":0,"ts":1})");
    CHECK_THAT(message(backwards), Catch::Contains("before it starts"));
    absl::Status renamed =
        check(R"(,{"ph":"s","id":"k","cat":"dep","name":"dep","pid":1,"tid":0,"ts":1},)"
              R"({"ph":"f","bp":"e","id":"k","cat":"dep","name":"other","pid":1,"tid":1,"ts":3})");
    CHECK_THAT(message(renamed), Catch::Contains("flow id \"k\": start event 5"));
    CHECK_THAT(message(renamed), Catch::Contains("differ"));
    absl::Status twice =
        check(R"(,{"ph":"s","id":7,"cat":"dep","name":"dep","pid":1,"tid":0,"ts":1},)"
              R"({"ph":"s","id":7,"cat":"dep","name":"dep","pid":1,"tid":0,"ts":1.5})");
    CHECK_THAT(message(twice), Catch::Contains("flow id #7 has two 's' events (5 and 6)"));
    absl::Status unnamed = check(R"(,{"ph":"X","name":"c","pid":1,"tid":2,"ts":0,"dur":1})");
    CHECK_THAT(message(unnamed), Catch::Contains("(pid 1, tid 2)"));
    CHECK_THAT(message(unnamed), Catch::Contains("no thread_name"));
    CHECK_THAT(message(check(R"(,{"ph":"X","name":"c","pid":1,"tid":0,"ts":0})")),
               Catch::Contains("event 5 ('X' 'c') needs a finite numeric \"dur\""));
    CHECK_THAT(message(check(R"(,{"ph":"X","name":"c","pid":1,"tid":1,"ts":9,"dur":-1})")),
               Catch::Contains("negative duration"));
    CHECK_THAT(message(check(R"(,{"ph":"X","name":"c","pid":1,"tid":1,"ts":4,"dur":0.5})")),
               Catch::Contains("overlaps event 4 ('b'"));
    // Touching slices (end == next start) are fine.
    CHECK(check(R"(,{"ph":"X","name":"c","pid":1,"tid":1,"ts":5,"dur":1})").ok());
  }
  SECTION("malformed input is an error, not a crash") {
    std::string json = trace(makeRun());
    for (size_t cut : {size_t(0), size_t(1), json.size() / 3, json.size() / 2, json.size() - 3}) {
      absl::Status status = profile::checkTrace(llvm::StringRef(json).take_front(cut));
      CHECK(!status.ok());
      CHECK_THAT(message(status), Catch::Contains("invalid swimlane trace"));
    }
    CHECK_THAT(message(profile::checkTrace("[]")), Catch::Contains("not a JSON object"));
    CHECK_THAT(message(profile::checkTrace(R"({"traceEvents":5})")),
               Catch::Contains("no \"traceEvents\" array"));
    CHECK_THAT(message(profile::checkTrace(R"({"traceEvents":[5]})")),
               Catch::Contains("event 0 is not a JSON object"));
    CHECK_THAT(message(profile::checkTrace(R"({"traceEvents":[{"name":"x"}]})")),
               Catch::Contains("no string \"ph\""));
    CHECK_THAT(message(profile::checkTrace("{\"traceEvents\":[" + std::string(100000, '[') +
                                           std::string(100001, ']') + "}")),
               Catch::Contains("nested deeper"));
    CHECK_THAT(message(profile::checkTrace(json + "x")), Catch::Contains("unexpected text after"));
    CHECK_THAT(message(profile::checkTrace(R"({"traceEvents":[{"ph":"X",}]})")),
               Catch::Contains("event 0 (at byte 16) is not valid JSON"));
    CHECK_THAT(message(profile::checkTrace(R"({"traceEvents":[], "otherData":{"a":}})")),
               Catch::Contains("the value of \"otherData\" is not valid JSON"));
    CHECK_THAT(message(profile::checkTrace(R"({"traceEvents":[] "x":1})")),
               Catch::Contains("expected ',' or '}' in the top-level object at byte 18"));
    CHECK(profile::checkTrace(R"( { "otherData" : {}, "traceEvents" : [ ] } )").ok());
  }
}

TEST_CASE("checkTraceMatches names a missing or foreign edge", "[profile]") {
  Run run = makeRun();
  std::string json = trace(run);
  codegen::Program more = run.program;
  more.calls[8].preds = {3, 4, 5, 6, 7};
  absl::Status missing = profile::checkTraceMatches(json, more);
  CHECK_THAT(message(missing), Catch::Contains("edge call 3 -> call 8 has no flow pair"));
  codegen::Program fewer = run.program;
  fewer.calls[8].preds = {4, 5, 6};
  absl::Status extra = profile::checkTraceMatches(json, fewer);
  CHECK_THAT(message(extra), Catch::Contains("from call 7 to call 8, which is not a dependency"));
  codegen::Program bigger = run.program;
  bigger.calls.push_back(bigger.calls.back());
  CHECK_THAT(message(profile::checkTraceMatches(json, bigger)),
             Catch::Contains("call 9 has no task event"));
}

TEST_CASE("summary numbers of a hand-made run", "[profile]") {
  Run run = makeRun();
  absl::StatusOr<profile::Summary> summary = profile::summarize(run.program, run.record);
  REQUIRE(summary.ok());
  const profile::Summary &s = *summary;
  CHECK(s.simulatedUs == Approx(5.0));
  CHECK(s.headUs == Approx(1.0));
  CHECK(s.spanUs == Approx(4.0));
  CHECK(s.boundUs == Approx(2.0));
  CHECK(s.ratio == Approx(0.4));
  CHECK(s.limiter == "cube");
  CHECK(s.tasks == 9);
  CHECK(s.edges == 8);
  CHECK(s.l2HitRate == Approx(0.3));

  REQUIRE(s.coreKinds.size() == 2);
  const profile::CoreKindSummary &aic = s.coreKinds[0], &aiv = s.coreKinds[1];
  CHECK(aic.kind == "AIC");
  CHECK(aic.tasks == 4);
  CHECK(aic.coresUsed == 2);
  CHECK(aic.busyUs == Approx(4.4));
  CHECK(aic.idleUs == Approx(3.6));     // 2 cores x 4 us - 4.4
  CHECK(aic.utilization == Approx(0.55));
  CHECK(aic.windowUs == Approx(2.4));
  CHECK(aic.windowIdleShare == Approx(1 - 4.4 / 4.8));
  CHECK(aiv.tasks == 5);
  CHECK(aiv.coresUsed == 3);
  CHECK(aiv.busyUs == Approx(2.8));
  CHECK(aiv.idleUs == Approx(13.2));    // 4 cores x 4 us - 2.8
  CHECK(aiv.utilization == Approx(0.175));
  CHECK(aiv.utilization == Approx(run.record.utilization(CoreKind::AIV)));

  REQUIRE(s.groups.size() == 3);
  CHECK(s.groups[0].key == "func0_0");
  CHECK(s.groups[0].core == "AIC");
  CHECK(s.groups[0].tasks == 4);
  CHECK(s.groups[0].coresUsed == 2);
  CHECK(s.groups[0].minUs == Approx(1.0));
  CHECK(s.groups[0].avgUs == Approx(1.1));
  CHECK(s.groups[0].maxUs == Approx(1.4));
  CHECK(s.groups[0].totalUs == Approx(4.4));
  CHECK(s.groups[1].minUs == Approx(0.5));
  CHECK(s.groups[1].maxUs == Approx(0.5));
  CHECK(s.groups[2].tasks == 1);
  CHECK(s.groups[2].groupSize == 1);
  CHECK(s.groups[2].avgUs == Approx(0.8));

  REQUIRE(s.topTasks.size() == 9); // fewer tasks than the default 10
  std::vector<int> order;
  for (const profile::TaskSummary &t : s.topTasks) order.push_back(t.call);
  CHECK(order == std::vector<int>{3, 0, 1, 2, 8, 4, 5, 6, 7});
  CHECK(s.topTasks[0].core == "AIC_1");
  CHECK(s.topTasks[0].durationUs == Approx(1.4));
  CHECK(s.topTasks[0].startUs == Approx(2.0));

  // 8 waits for 4..7; 7 finished last (3.1); 7 waits for 3.
  const profile::CriticalPath &path = s.criticalPath;
  CHECK(path.calls == std::vector<int>{3, 7, 8});
  CHECK(path.startUs == Approx(2.0)); // from the launch: 1 us head + 1 us
  CHECK(path.endUs == Approx(5.0));
  CHECK(path.lengthUs == Approx(3.0));
  CHECK(path.busyUs == Approx(2.7));
  CHECK(path.waitUs == Approx(0.3));
  CHECK(path.hashOrders == std::vector<std::pair<int, int>>{{0, 1}, {1, 1}, {2, 1}});

  profile::SummaryOptions three;
  three.topTasks = 3;
  absl::StatusOr<profile::Summary> short3 = profile::summarize(run.program, run.record, three);
  REQUIRE(short3.ok());
  CHECK(short3->topTasks.size() == 3);
}

namespace {

std::vector<std::string> rules(const profile::Summary &s, llvm::StringRef scope = "") {
  std::vector<std::string> out;
  for (const profile::Verdict &v : s.verdicts)
    if (scope.empty() || v.scope == scope) out.push_back(v.rule);
  return out;
}

const profile::Verdict *find(const profile::Summary &s, llvm::StringRef rule) {
  for (const profile::Verdict &v : s.verdicts)
    if (v.rule == rule) return &v;
  return nullptr;
}

double evidence(const profile::Verdict &v, llvm::StringRef name) {
  for (const auto &[key, value] : v.evidence)
    if (key == name) return value;
  FAIL("no evidence " << name.str());
  return 0;
}

profile::Summary summarize(const Run &run, const profile::SummaryOptions &options = {}) {
  absl::StatusOr<profile::Summary> s = profile::summarize(run.program, run.record, options);
  REQUIRE(s.ok());
  return *s;
}

} // namespace

TEST_CASE("bottleneck verdicts fire on their evidence and only then", "[profile]") {
  SECTION("the hand-made run: AIV idles 76% of its window, AIC only 8%") {
    profile::Summary s = summarize(makeRun());
    // 5 AIV tasks on 4 cores: 2 waves, the last 1/4 full (37.5% idle), and gaps besides.
    CHECK(rules(s) == std::vector<std::string>{"wave_imbalance", "scheduling_gaps"});
    CHECK(rules(s, "AIC").empty());
    const profile::Verdict *wave = find(s, "wave_imbalance");
    REQUIRE(wave);
    CHECK(wave->scope == "AIV");
    CHECK(evidence(*wave, "waves") == 2);
    CHECK(evidence(*wave, "last_wave_tasks") == 1);
    CHECK(evidence(*wave, "wave_idle_share") == Approx(0.375));
    CHECK_THAT(wave->knob, Catch::Contains("multiple of 4 tasks (e.g. 4 or 8)"));
    const profile::Verdict *gaps = find(s, "scheduling_gaps");
    REQUIRE(gaps);
    CHECK(gaps->severity == "warn");
    CHECK(evidence(*gaps, "idle_share") == Approx(1 - 2.8 / (4 * 2.9)));
    // Of the window's idle, 3.2 us is AIV cores waiting for predecessors (AIV_0 0.4 us
    // and AIV_1 0.8 us for their matmuls, AIV_2 2 us for the four exps): not a gap.
    CHECK(evidence(*gaps, "dep_idle_share") == Approx(3.2 / (4 * 2.9)));
    CHECK(evidence(*gaps, "gap_share") == Approx(1 - 2.8 / (4 * 2.9) - 0.375 - 3.2 / (4 * 2.9)));
    CHECK(evidence(*gaps, "window_us") == Approx(2.9));
    // The biggest AIV group has 4 tasks for 4 cores: merging would idle cores.
    CHECK_THAT(gaps->knob, Catch::Contains("device_sched_mode=3"));
    profile::SummaryOptions lenient;
    lenient.idleShare = 0.8;
    CHECK(rules(summarize(makeRun(), lenient)).empty());
  }
  SECTION("scheduling gaps between many short tasks: merge them") {
    // 16 tasks on 4 cores in 4 full waves, 100-cycle tasks with 100-cycle gaps.
    profile::Summary s = summarize(makeWideRun(16, 4, 100, 100));
    CHECK(rules(s) == std::vector<std::string>{"scheduling_gaps"});
    const profile::Verdict *v = find(s, "scheduling_gaps");
    REQUIRE(v);
    CHECK(evidence(*v, "idle_share") == Approx(1 - 400.0 / 700));
    CHECK(evidence(*v, "gap_share") == Approx(1 - 400.0 / 700));
    CHECK_THAT(v->knob, Catch::Contains("vec_nbuffer_setting={0: 2} for group func0_0"));
    CHECK_THAT(v->knob, Catch::Contains("up to 4 keeps every core busy"));
    // A program with several root functions (loop bodies): the advice names the body's
    // group by its func<F>_<order> key, so it changes that group only; with one root
    // function, the plain hash order.
    profile::Summary looped = s;
    REQUIRE(looped.groups.size() == 1);
    looped.groups[0].key = "func2_0";
    looped.loops.emplace();
    looped.loops->rootFunctions = 3;
    const profile::Verdict *perBody = nullptr;
    std::vector<profile::Verdict> loopedVerdicts = profile::verdicts(looped);
    for (const profile::Verdict &w : loopedVerdicts)
      if (w.rule == "scheduling_gaps") perBody = &w;
    REQUIRE(perBody);
    CHECK_THAT(perBody->knob,
               Catch::Contains("vec_nbuffer_setting={\"func2_0\": 2} for group func2_0"));
    looped.loops->rootFunctions = 1;
    loopedVerdicts = profile::verdicts(looped);
    perBody = nullptr;
    for (const profile::Verdict &w : loopedVerdicts)
      if (w.rule == "scheduling_gaps") perBody = &w;
    REQUIRE(perBody);
    CHECK_THAT(perBody->knob, Catch::Contains("vec_nbuffer_setting={0: 2} for group func2_0"));
    // Back to back, nothing fires.
    CHECK(summarize(makeWideRun(16, 4, 100, 0)).verdicts.empty());
  }
  SECTION("wave imbalance: 17 tasks on 4 cores leave the fifth wave 1/4 full") {
    profile::Summary s = summarize(makeWideRun(17, 4, 100, 0));
    CHECK(rules(s) == std::vector<std::string>{"wave_imbalance"});
    CHECK(evidence(*find(s, "wave_imbalance"), "wave_idle_share") == Approx(0.15));
    CHECK(s.coreKinds[1].waves == 5);
    // 18 tasks: the last wave is half full, 10% idle, not over the threshold.
    CHECK(summarize(makeWideRun(18, 4, 100, 0)).verdicts.empty());
  }
  SECTION("under-parallelised: 5 AIV tasks for 8 AIV cores") {
    Run run = makeRun();
    run.record.aivCores = 8;
    profile::Summary s = summarize(run);
    CHECK(rules(s, "AIV") == std::vector<std::string>{"under_parallelised"});
    const profile::Verdict *v = find(s, "under_parallelised");
    REQUIRE(v);
    CHECK(evidence(*v, "tasks") == 5);
    CHECK(evidence(*v, "cores") == 8);
    CHECK(evidence(*v, "cores_used") == 3);
    CHECK_THAT(v->knob, Catch::Contains("set_vec_tile_shapes"));
    CHECK(rules(s, "AIC").empty()); // 4 AIC tasks fill 2 AIC cores
  }
  SECTION("memory-bound from HBM traffic: 2.2 us of transfers vs 1 us of compute") {
    Run run = makeRun();
    run.record.hbmReadBytes = 20000; // 22000 B at 8000 B / 0.8 us
    profile::Summary s = summarize(run);
    const profile::Verdict *v = find(s, "memory_bound");
    REQUIRE(v);
    CHECK(evidence(*v, "transfer_us") == Approx(2.2));
    CHECK(evidence(*v, "compute_us") == Approx(1.0));
    CHECK(evidence(*v, "transfer_share") == Approx(2.2 / 3.2));
    CHECK_THAT(v->knob, Catch::Contains("cube_l1_reuse_setting"));
    // The unmodified run moves 0.8 us of bytes against 1 us of compute: not memory-bound.
    CHECK(!find(summarize(makeRun()), "memory_bound"));
  }
  SECTION("memory-bound from pipe records: 3/4 of AIC and 2/3 of AIV pipe time is transfer") {
    profile::Summary s = summarize(makeRun(/*withPipes=*/true));
    REQUIRE(s.hasPipes);
    CHECK(s.transferPipeUs == Approx(0.75 * 4.4 + 2.0 / 3 * 2.8));
    CHECK(s.computePipeUs == Approx(0.25 * 4.4 + 1.0 / 3 * 2.8));
    CHECK(find(s, "memory_bound"));
  }
  SECTION("near the roofline: bound 3.5 us of a 4 us span") {
    Run run = makeRun();
    run.record.bound.cubeCycles = 3500;
    run.record.hbmReadBytes = 20000; // transfer-heavy, but nothing left to gain
    profile::Summary s = summarize(run);
    const profile::Verdict *v = find(s, "near_roofline");
    REQUIRE(v);
    CHECK(v->severity == "ok");
    CHECK(evidence(*v, "span_ratio") == Approx(0.875));
    CHECK(evidence(*v, "ratio") == Approx(0.9));
    CHECK(!find(s, "memory_bound"));
    CHECK(!find(summarize(makeRun()), "near_roofline"));
  }
  SECTION("port-bound: the AIC tasks' reads stalled, mostly waiting for each other's fills") {
    // AIC busy 4.4 us; each AIC task's reads stalled for 60% of it, two thirds of that
    // waiting for a fill the other core had started.
    Run run = makeRun();
    for (int c = 0; c < 4; ++c) {
      runtime::TaskRecord &t = run.record.tasks[c];
      t.readStallCycles = 0.6 * (t.endCycle - t.startCycle);
      t.fillWaitCycles = 0.4 * (t.endCycle - t.startCycle);
    }
    profile::Summary s = summarize(run);
    const profile::Verdict *v = find(s, "port_bound");
    REQUIRE(v);
    CHECK(v->scope == "AIC");
    CHECK(evidence(*v, "read_stall_us") == Approx(0.6 * 4.4));
    CHECK(evidence(*v, "read_stall_share") == Approx(0.6));
    CHECK(evidence(*v, "fill_wait_share") == Approx(2.0 / 3));
    CHECK(evidence(*v, "l2_miss_bytes") == 4 * 2048); // the AIC tasks hit nothing
    // Mostly duplicate reads: matmul tiles that read the same K slabs at once (the
    // stagger keeps them apart), then run the tiles that share an operand on one core.
    CHECK_THAT(v->knob, Catch::StartsWith("matmul tiles that run at once read the same K "
                                          "slabs: keep cube_k_stagger=True"));
    CHECK_THAT(v->knob, Catch::Contains("; run the tiles that share an operand on one core"));
    CHECK_THAT(v->knob, Catch::Contains("cube_nbuffer_setting={0: 2} for group func0_0"));
    CHECK_THAT(v->knob, Catch::Contains("cube_l1_reuse_mode"));
    // AIC carries most of the critical path (1.4 of its 2.7 busy us): its verdict comes
    // before the AIV cores' wave imbalance and gaps.
    CHECK(s.coreKinds[0].criticalBusyUs == Approx(1.4));
    CHECK(s.coreKinds[1].criticalBusyUs == Approx(1.3));
    CHECK(rules(s) ==
          std::vector<std::string>{"port_bound", "wave_imbalance", "scheduling_gaps"});
    // The same stalls, none of them fill waits: the ports themselves, spread the reads.
    for (int c = 0; c < 4; ++c) run.record.tasks[c].fillWaitCycles = 0;
    profile::Summary own = summarize(run);
    v = find(own, "port_bound");
    REQUIRE(v);
    CHECK_THAT(v->knob, Catch::StartsWith("keep every core's port streaming different data"));
    CHECK_THAT(v->knob, !Catch::Contains("nbuffer"));
    // On 4 AIC cores the 4 tasks in pairs would idle half of them: no pairing then.
    for (int c = 0; c < 4; ++c)
      run.record.tasks[c].fillWaitCycles = 0.4 * (run.record.tasks[c].endCycle -
                                                   run.record.tasks[c].startCycle);
    run.record.aicCores = 4;
    profile::Summary wide = summarize(run);
    v = find(wide, "port_bound");
    REQUIRE(v);
    CHECK(evidence(*v, "fill_wait_share") == Approx(2.0 / 3));
    CHECK_THAT(v->knob, !Catch::Contains("nbuffer"));
    run.record.aicCores = 2;
    for (int c = 0; c < 4; ++c) run.record.tasks[c].fillWaitCycles = 0;
    // Below the threshold, or near the roofline, it stays quiet.
    profile::SummaryOptions strict;
    strict.readStallShare = 0.7;
    CHECK(!find(summarize(run, strict), "port_bound"));
    run.record.bound.cubeCycles = 3500;
    CHECK(!find(summarize(run), "port_bound"));
    // Without read stalls in the record (a device trace), no verdict is built on them.
    CHECK(!find(summarize(makeRun()), "port_bound"));
  }
  SECTION("a long head overhead does not make slow tasks look fine") {
    // 100 us head, then 700 ns of tasks against a 100 ns vector bound: the headline
    // ratio is 99%, the span ratio 14%.
    Run run = makeWideRun(16, 4, 100, 100, /*headCycles=*/100000);
    run.record.bound.vectorCycles = 100;
    profile::Summary s = summarize(run);
    CHECK(s.ratio == Approx(100100.0 / 100700));
    CHECK(s.spanRatio == Approx(100.0 / 700));
    CHECK(!find(s, "near_roofline"));
    CHECK(find(s, "scheduling_gaps"));
  }
}

TEST_CASE("summary text and JSON", "[profile]") {
  profile::Summary s = summarize(makeRun());
  std::string text = profile::summaryText(s);
  INFO(text);
  CHECK(text.rfind("simulated 5.000 us (bound 2.000 us, 40% of roofline, limited by cube)\n", 0) ==
        0);
  CHECK_THAT(text, Catch::Contains("func0_0"));
  CHECK_THAT(text, Catch::Contains("[warn] scheduling_gaps (AIV)"));
  CHECK_THAT(text, Catch::Contains("[warn] wave_imbalance (AIV)"));
  CHECK_THAT(text, Catch::Contains("critical path: 3.000 us"));
  CHECK_THAT(text, Catch::Contains("func0_0 x1 -> func0_1 x1 -> func0_2 x1"));
  // The core table is aligned: header and rows have one width.
  size_t header = text.find("cores  ");
  REQUIRE(header != std::string::npos);
  std::vector<std::string> lines;
  for (size_t at = header; lines.size() < 3; at = text.find('\n', at) + 1)
    lines.push_back(text.substr(at, text.find('\n', at) - at));
  CHECK(lines[0].size() == lines[1].size());
  CHECK(lines[1].size() == lines[2].size());

  llvm::json::Value root = parse(profile::summaryJson(s));
  const llvm::json::Object &o = *root.getAsObject();
  CHECK(*o.getNumber("simulated_us") == Approx(5.0));
  CHECK(*o.getNumber("ratio") == Approx(0.4));
  CHECK(str(o, "limiter") == "cube");
  const llvm::json::Object &aiv = *(*o.getArray("cores"))[1].getAsObject();
  CHECK(str(aiv, "kind") == "AIV");
  CHECK(*aiv.getNumber("utilisation") == Approx(0.175));
  CHECK(*aiv.getNumber("idle_us") == Approx(13.2));
  CHECK(*o.getObject("bytes")->getNumber("l2_hit_rate") == Approx(0.3));
  const llvm::json::Object &g0 = *(*o.getArray("groups"))[0].getAsObject();
  CHECK(str(g0, "key") == "func0_0");
  CHECK(*g0.getNumber("avg_us") == Approx(1.1));
  CHECK(*o.getObject("critical_path")->getInteger("tasks") == 3);
  CHECK(*o.getNumber("span_ratio") == Approx(0.25));
  CHECK(*(*o.getArray("cores"))[1].getAsObject()->getInteger("waves") == 2);
  const llvm::json::Array &verdicts = *o.getArray("verdicts");
  REQUIRE(verdicts.size() == 2);
  CHECK(str(*verdicts[0].getAsObject(), "rule") == "wave_imbalance");
  const llvm::json::Object &gaps = *verdicts[1].getAsObject();
  CHECK(str(gaps, "rule") == "scheduling_gaps");
  CHECK(str(gaps, "scope") == "AIV");
  CHECK(*gaps.getObject("evidence")->getNumber("idle_share") == Approx(0.7586));
  // Fixed decimals, not 17 significant digits ("1.1000000000000001").
  CHECK_THAT(profile::summaryJson(s), Catch::Contains("\"avg_us\": 1.1,"));
}

TEST_CASE("a record that does not belong to the program is an internal error", "[profile]") {
  Run wrongCount = makeRun();
  wrongCount.record.tasks.pop_back();
  Run wrongKind = makeRun();
  wrongKind.record.tasks[0].core = CoreKind::AIV;
  Run wrongCore = makeRun();
  wrongCore.record.tasks[5].coreIndex = 4;
  Run wrongPipe = makeRun(true);
  wrongPipe.record.pipes[0].pipe = Pipe::Vec; // an AIC task has no VEC pipe
  for (const Run *run : {&wrongCount, &wrongKind, &wrongCore, &wrongPipe}) {
    absl::StatusOr<std::string> json = profile::swimlaneJson(run->program, run->record);
    REQUIRE(!json.ok());
    CHECK(json.status().code() == absl::StatusCode::kInternal);
    CHECK_THAT(message(json.status()), Catch::Contains("does not match its program"));
    CHECK(!profile::summarize(run->program, run->record).ok());
  }
  CHECK_THAT(message(profile::swimlaneJson(wrongCore.program, wrongCore.record).status()),
             Catch::Contains("task 5 ran on AIV_4 but the device has 4 such cores"));
}

namespace {

std::string makeTempDir() {
  llvm::SmallString<128> path;
  REQUIRE(!llvm::sys::fs::createUniqueDirectory("ptoc-profile-test", path));
  return std::string(path);
}

std::vector<std::string> listDir(const std::string &dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec; it.increment(ec))
    names.push_back(llvm::sys::path::filename(it->path()).str());
  std::sort(names.begin(), names.end());
  return names;
}

std::string readFile(const std::string &path) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  REQUIRE(buffer);
  return (*buffer)->getBuffer().str();
}

} // namespace

TEST_CASE("writeRunOutputs writes the run folder", "[profile]") {
  Run run = makeRun(true);
  std::string base = makeTempDir();
  absl::StatusOr<std::string> folder = profile::writeRunOutputs(run.program, run.record, base);
  INFO(folder.status().ToString());
  REQUIRE(folder.ok());
  CHECK(llvm::sys::path::parent_path(*folder) == base);
  std::string name = llvm::sys::path::filename(*folder).str();
  std::regex pattern("output_[0-9]{8}_[0-9]{6}_[0-9]{6}_" + std::to_string(getpid()));
  CHECK(std::regex_match(name, pattern));
  CHECK(listDir(*folder) ==
        std::vector<std::string>{"merged_swimlane.json", "summary.json", "summary.txt", "swimlane.html"});
  CHECK(profile::checkTraceMatches(readFile(*folder + "/merged_swimlane.json"), run.program).ok());
  CHECK(readFile(*folder + "/summary.txt").rfind("simulated 5.000 us", 0) == 0);
  llvm::json::Value summary = parse(readFile(*folder + "/summary.json"));
  CHECK(str(*summary.getAsObject(), "func") == "mm_exp_sum");

  // A second run in the same process gets its own folder.
  absl::StatusOr<std::string> second = profile::writeRunOutputs(run.program, run.record, base);
  REQUIRE(second.ok());
  CHECK(*second != *folder);

  // An inconsistent record leaves no folder behind.
  Run bad = makeRun();
  bad.record.tasks.pop_back();
  CHECK(!profile::writeRunOutputs(bad.program, bad.record, base).ok());
  CHECK(listDir(base).size() == 2);
  llvm::sys::fs::remove_directories(base);
}

TEST_CASE("writeRunOutputs uses PTOC_OUTPUT_DIR when no base folder is given", "[profile]") {
  const char *old = std::getenv("PTOC_OUTPUT_DIR");
  std::string saved = old ? old : "";
  std::string base = makeTempDir();
  std::string envBase = base + "/from-env";
  setenv("PTOC_OUTPUT_DIR", envBase.c_str(), 1);
  Run run = makeRun();
  absl::StatusOr<std::string> folder = profile::writeRunOutputs(run.program, run.record, "");
  if (old)
    setenv("PTOC_OUTPUT_DIR", saved.c_str(), 1);
  else
    unsetenv("PTOC_OUTPUT_DIR");
  REQUIRE(folder.ok());
  CHECK(llvm::sys::path::parent_path(*folder) == envBase);
  CHECK(listDir(*folder).size() == 4);
  // An explicit base wins over the environment.
  setenv("PTOC_OUTPUT_DIR", envBase.c_str(), 1);
  absl::StatusOr<std::string> explicitFolder =
      profile::writeRunOutputs(run.program, run.record, base);
  if (old)
    setenv("PTOC_OUTPUT_DIR", saved.c_str(), 1);
  else
    unsetenv("PTOC_OUTPUT_DIR");
  REQUIRE(explicitFolder.ok());
  CHECK(llvm::sys::path::parent_path(*explicitFolder) == base);
  llvm::sys::fs::remove_directories(base);
}

TEST_CASE("the summary's tiles line names each derived tile, then how many more",
          "[profile][default-tiles]") {
  profile::Summary s;
  CHECK(profile::derivedTilesText(s).empty()); // nothing derived: no line
  s.derivedTiles.push_back({passes::DerivedTile::Kind::Vec, "f", "[3, 4096]", 5, "'amax' at f.py:3:5",
                            "whole reduction axis 1, 48 KiB at f32, 86 tiles = 2 waves of 48 AIV", 86});
  s.derivedTiles.push_back({passes::DerivedTile::Kind::Cube, "f", "{m = [176, 176], k = [64, 256], n = [128, 128]}",
                            1, "'matmul' at f.py:4:5", "48 tiles = 2 waves of 24 AIC", 48});
  CHECK(profile::derivedTilesText(s) ==
        "tiles: derived vec_tile [3, 4096] for 5 ops (whole reduction axis 1, 48 KiB at f32, 86 "
        "tiles = 2 waves of 48 AIV); cube_tile {m = [176, 176], k = [64, 256], n = [128, 128]} "
        "for 1 op (48 tiles = 2 waves of 24 AIC)\n");
  // Past kDerivedTilesListed entries the line counts the rest.
  while (s.derivedTiles.size() < profile::kDerivedTilesListed + 2)
    s.derivedTiles.push_back(s.derivedTiles.front());
  std::string line = profile::derivedTilesText(s);
  CHECK(line.find("; and 2 more (summary.json lists them)\n") != std::string::npos);
  size_t named = 0;
  for (size_t at = line.find(" for "); at != std::string::npos; at = line.find(" for ", at + 1))
    ++named;
  CHECK(named == profile::kDerivedTilesListed);
}
