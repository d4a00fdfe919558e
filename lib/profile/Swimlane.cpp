// The swimlane writer: streams a RunRecord as Chrome trace-event JSON, one event per
// line, each event written by its own llvm::json::OStream (so strings are escaped by
// the JSON library and nothing but the current event is held in memory).
#include "ptoc/profile/Swimlane.h"

#include <algorithm>
#include <cmath>

#include "JsonNumbers.h"
#include "RecordCheck.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "llvm/Support/JSON.h"
#include "ptoc/ir/OpDef.h"

namespace ptoc::profile {

using codegen::Program;
using runtime::RunRecord;
using runtime::TaskRecord;
using target::CoreKind;

namespace {

// Process ids, in display order.
constexpr int kDevicePid = 0;
constexpr int kSchedulerPid = 1;
constexpr int kAicPid = 2;
constexpr int kAivPid = 3;
constexpr int kDeviceTid = 0;

/// Where the events of one run go: pids and tids of every lane, and the clock.
class Layout {
public:
  Layout(const RunRecord &record, bool pipeLanes) : record_(record), pipeLanes_(pipeLanes) {}

  int pid(CoreKind kind) const { return kind == CoreKind::AIC ? kAicPid : kAivPid; }
  /// A core's task lane; with pipe lanes its pipes follow it (tid + 1 + pipe lane).
  int coreTid(CoreKind kind, int core) const {
    int lanesPerCore = pipeLanes_ ? 1 + static_cast<int>(pipesOf(kind).size()) : 1;
    return core * lanesPerCore;
  }
  int pipeTid(CoreKind kind, int core, codegen::Pipe pipe) const {
    return coreTid(kind, core) + 1 + pipeLane(kind, pipe);
  }
  /// Nanoseconds since the kernel launch of a device cycle (RunRecord times count
  /// from the launch, the head overhead included). Every time goes through this one
  /// monotone rounding, so events that do not overlap in cycles do not overlap here.
  int64_t ns(double cycles) const { return std::llround(cycles * kNsPerUs / record_.clockMHz); }

  static constexpr double kNsPerUs = 1000.0;

private:
  const RunRecord &record_;
  bool pipeLanes_;
};

/// Writes the events of the traceEvents array, one per line, commas between.
class EventWriter {
public:
  explicit EventWriter(llvm::raw_ostream &os) : os_(os) {}

  /// Writes one event object; `body` fills it through the OStream it is given.
  template <typename Body> void event(Body &&body) {
    os_ << (first_ ? "\n" : ",\n");
    first_ = false;
    llvm::json::OStream json(os_);
    json.object([&] { body(json); });
  }

  void metadata(llvm::StringRef name, int pid, int tid, bool withTid, llvm::StringRef argName,
                llvm::json::Value argValue) {
    event([&](llvm::json::OStream &json) {
      json.attribute("ph", "M");
      json.attribute("name", name);
      json.attribute("pid", pid);
      if (withTid) json.attribute("tid", tid);
      json.attributeObject("args", [&] { json.attribute(argName, std::move(argValue)); });
    });
  }
  void processName(int pid, llvm::StringRef name) {
    metadata("process_name", pid, 0, false, "name", name);
    metadata("process_sort_index", pid, 0, false, "sort_index", pid);
  }
  void threadName(int pid, int tid, llvm::StringRef name) {
    metadata("thread_name", pid, tid, true, "name", name);
    metadata("thread_sort_index", pid, tid, true, "sort_index", tid);
  }

private:
  llvm::raw_ostream &os_;
  bool first_ = true;
};

void writeTime(llvm::json::OStream &json, llvm::StringRef key, int64_t ns) {
  json.attributeBegin(key);
  writeNsAsUs(json, ns);
  json.attributeEnd();
}

/// "x[0,64]": the tensor and offsets of one region of a call.
std::string regionText(const Program &program, const codegen::Region &region) {
  std::string text = region.tensor >= 0 && region.tensor < static_cast<int>(program.tensors.size())
                         ? program.tensors[region.tensor].name
                         : absl::StrCat("tensor", region.tensor);
  text += '[';
  for (size_t i = 0; i < region.offsets.size(); ++i)
    absl::StrAppend(&text, i ? "," : "", region.offsets[i]);
  text += ']';
  return text;
}

std::string taskName(const Program &program, int call) {
  const codegen::Call &c = program.calls[call];
  return absl::StrCat(program.groupKey(c.leaf), " sg", c.subgraph);
}

/// The control thread's lane: in the Scheduler process, after the scheduler threads.
int controlTid(const RunRecord &record) { return std::max(record.schedulerThreads, 0); }

bool hasControlLane(const RunRecord &record, const SwimlaneOptions &options) {
  return options.controlLane && !record.stitches.empty();
}

void writeMetadata(EventWriter &events, const RunRecord &record, const Layout &layout,
                   const SwimlaneOptions &options, bool pipeLanes) {
  if (options.deviceLane) {
    events.processName(kDevicePid, "Device");
    events.threadName(kDevicePid, kDeviceTid, "Kernel");
  }
  bool schedulerLanes = options.schedulerLanes && record.schedulerThreads > 0;
  if (schedulerLanes || hasControlLane(record, options))
    events.processName(kSchedulerPid, "Scheduler");
  if (schedulerLanes)
    for (int t = 0; t < record.schedulerThreads; ++t)
      events.threadName(kSchedulerPid, t, absl::StrCat("AICPU_", t));
  if (hasControlLane(record, options))
    events.threadName(kSchedulerPid, controlTid(record), "AICPU_control");
  for (CoreKind kind : {CoreKind::AIC, CoreKind::AIV}) {
    llvm::StringRef label = coreKindLabel(kind);
    events.processName(layout.pid(kind), label);
    int cores = kind == CoreKind::AIC ? record.aicCores : record.aivCores;
    for (int core = 0; core < cores; ++core) {
      std::string lane = absl::StrCat(label.str(), "_", core);
      events.threadName(layout.pid(kind), layout.coreTid(kind, core), lane);
      if (!pipeLanes) continue;
      for (codegen::Pipe pipe : pipesOf(kind))
        events.threadName(layout.pid(kind), layout.pipeTid(kind, core, pipe),
                          absl::StrCat(lane, " ", codegen::pipeName(pipe).str()));
    }
  }
}

void writeDeviceLane(EventWriter &events, const RunRecord &record, const Layout &layout) {
  auto span = [&](llvm::StringRef name, int64_t startNs, int64_t endNs) {
    if (endNs <= startNs) return;
    events.event([&](llvm::json::OStream &json) {
      json.attribute("ph", "X");
      json.attribute("name", name);
      json.attribute("cat", "device");
      json.attribute("pid", kDevicePid);
      json.attribute("tid", kDeviceTid);
      writeTime(json, "ts", startNs);
      writeTime(json, "dur", endNs - startNs);
    });
  };
  int64_t headNs = layout.ns(record.bound.headCycles);
  span("kernel head", 0, headNs);
  span("execute", headNs, layout.ns(record.makespanCycles));
}

void writeTasks(EventWriter &events, const Program &program, const RunRecord &record,
                const Layout &layout) {
  for (size_t c = 0; c < program.calls.size(); ++c) {
    const codegen::Call &call = program.calls[c];
    const codegen::Leaf &leaf = program.leaves[call.leaf];
    const TaskRecord &task = record.tasks[c];
    int64_t startNs = layout.ns(task.startCycle);
    int64_t endNs = layout.ns(task.endCycle);
    events.event([&](llvm::json::OStream &json) {
      json.attribute("ph", "X");
      json.attribute("name", taskName(program, static_cast<int>(c)));
      json.attribute("cat", "task");
      json.attribute("pid", layout.pid(task.core));
      json.attribute("tid", layout.coreTid(task.core, task.coreIndex));
      writeTime(json, "ts", startNs);
      writeTime(json, "dur", endNs - startNs);
      json.attributeObject("args", [&] {
        json.attribute("call", static_cast<int64_t>(c));
        json.attribute("subgraph", call.subgraph);
        json.attribute("leaf", call.leaf);
        json.attribute("leaf_hash", leaf.hash);
        json.attribute("hash_order", leaf.hashOrder);
        json.attribute("group", program.groupKey(call.leaf));
        json.attribute("group_size", leaf.groupSize);
        if (leaf.noRoomToDoubleBuffer) json.attribute("single_buffered", true);
        json.attributeArray("regions", [&] {
          for (const codegen::Region &region : call.regions) json.value(regionText(program, region));
        });
        json.attribute("bytes_in", task.bytesIn);
        json.attribute("bytes_out", task.bytesOut);
        json.attribute("l2_hit_bytes", task.l2HitBytes);
        writeTime(json, "read_stall_us", layout.ns(task.readStallCycles));
        writeTime(json, "fill_wait_us", layout.ns(task.fillWaitCycles));
        writeTime(json, "ready_us", layout.ns(task.readyCycle));
        writeTime(json, "dispatch_us", layout.ns(task.dispatchCycle));
        json.attribute("thread", task.thread);
        json.attribute("preds", static_cast<int64_t>(call.preds.size()));
        if (!program.stitchReadyCycles.empty()) json.attribute("stitch", call.stitch);
        if (call.instance >= 0) {
          const codegen::Instance &instance = program.instances[call.instance];
          const codegen::Body &body = program.bodies[instance.body];
          json.attribute("loop", instance.loop);
          json.attribute("iteration", instance.iteration);
          // Which run of the body: iteration values repeat under an enclosing loop.
          json.attribute("instance", call.instance);
          json.attribute("body", body.name);
          json.attribute("body_hash", body.hash);
        }
      });
    });
  }
}

/// One flow pair per edge (named "dep", or "write order" for an edge along which
/// a task overwrites what another wrote or read). Each end sits just inside its slice (1 ns from the
/// producer's end, 1 ns after the consumer's start, clamped to the slice): viewers
/// bind a flow end to the slice open at its timestamp, and at an exact boundary a
/// back-to-back neighbour on the same lane could take it.
void writeFlows(EventWriter &events, const Program &program, const RunRecord &record,
                const Layout &layout) {
  int64_t id = 0;
  for (size_t c = 0; c < program.calls.size(); ++c) {
    const TaskRecord &consumer = record.tasks[c];
    int64_t consumerStart = layout.ns(consumer.startCycle);
    int64_t consumerTs = std::min(layout.ns(consumer.endCycle), consumerStart + 1);
    const std::vector<int> &writeOrder = program.calls[c].writeOrderPreds;
    for (int p : program.calls[c].preds) {
      const TaskRecord &producer = record.tasks[p];
      // An edge that keeps writes of one region in order is named so.
      const char *name =
          std::binary_search(writeOrder.begin(), writeOrder.end(), p) ? "write order" : "dep";
      int64_t producerEnd = layout.ns(producer.endCycle);
      int64_t producerTs = std::max(layout.ns(producer.startCycle), producerEnd - 1);
      ++id;
      auto end = [&](const char *phase, const TaskRecord &task, int64_t ns) {
        events.event([&](llvm::json::OStream &json) {
          json.attribute("ph", phase);
          json.attribute("id", id);
          json.attribute("cat", "dep");
          json.attribute("name", name);
          if (phase[0] == 'f') json.attribute("bp", "e");
          json.attribute("pid", layout.pid(task.core));
          json.attribute("tid", layout.coreTid(task.core, task.coreIndex));
          writeTime(json, "ts", ns);
        });
      };
      end("s", producer, producerTs);
      end("f", consumer, consumerTs);
    }
  }
}

void writeCounters(EventWriter &events, const RunRecord &record, const Layout &layout) {
  for (const runtime::QueueSample &sample : record.queue) {
    events.event([&](llvm::json::OStream &json) {
      json.attribute("ph", "C");
      json.attribute("name", absl::StrCat("ReadyCount_", coreKindLabel(sample.core).str()));
      json.attribute("pid", layout.pid(sample.core));
      json.attribute("tid", 0);
      writeTime(json, "ts", layout.ns(sample.cycle));
      json.attributeObject("args", [&] { json.attribute("value", sample.depth); });
    });
  }
}

void writeSchedulerLanes(EventWriter &events, const Program &program, const RunRecord &record,
                         const Layout &layout) {
  for (size_t c = 0; c < record.tasks.size(); ++c) {
    const TaskRecord &task = record.tasks[c];
    if (task.thread < 0) continue;
    events.event([&](llvm::json::OStream &json) {
      json.attribute("ph", "i");
      json.attribute("s", "t");
      json.attribute("name", absl::StrCat("dispatch ", taskName(program, static_cast<int>(c))));
      json.attribute("cat", "sched");
      json.attribute("pid", kSchedulerPid);
      json.attribute("tid", task.thread);
      writeTime(json, "ts", layout.ns(task.dispatchCycle));
      json.attributeObject("args", [&] { json.attribute("call", static_cast<int64_t>(c)); });
    });
  }
}

/// "kv iterations 0..7" per loop, in order of first appearance, for the calls of one
/// stitch ([begin, end)).
std::string stitchIterations(const Program &program, size_t begin, size_t end) {
  struct Range {
    std::string loop;
    int64_t lo, hi;
    int count;
  };
  std::vector<Range> ranges;
  int lastInstance = -1;
  for (size_t c = begin; c < end; ++c) {
    int i = program.calls[c].instance;
    if (i < 0 || i == lastInstance) continue;
    lastInstance = i;
    const codegen::Instance &instance = program.instances[i];
    auto it = std::find_if(ranges.begin(), ranges.end(),
                           [&](const Range &r) { return r.loop == instance.loop; });
    if (it == ranges.end()) {
      ranges.push_back({instance.loop, instance.iteration, instance.iteration, 1});
      continue;
    }
    it->lo = std::min(it->lo, instance.iteration);
    it->hi = std::max(it->hi, instance.iteration);
    ++it->count;
  }
  std::vector<std::string> parts;
  for (const Range &r : ranges)
    parts.push_back(r.lo == r.hi ? absl::StrCat(r.loop, " iteration ", r.lo)
                                 : absl::StrCat(r.loop, " iterations ", r.lo, "..", r.hi));
  return parts.empty() ? "no iterations" : absl::StrJoin(parts, ", ");
}

/// The control thread's lane: a slice per stitch it built (from the previous stitch's
/// ready time, or the head, to this one's: it builds them one after another) and an
/// instant where each stitch opened.
void writeControlLane(EventWriter &events, const Program &program, const RunRecord &record,
                      const Layout &layout) {
  const int tid = controlTid(record);
  size_t begin = 0;
  double built = record.bound.headCycles + record.bound.startCycles;
  for (size_t k = 0; k < record.stitches.size(); ++k) {
    const runtime::StitchRecord &stitch = record.stitches[k];
    size_t end = begin;
    while (end < program.calls.size() && program.calls[end].stitch == static_cast<int>(k)) ++end;
    int64_t startNs = layout.ns(built), endNs = layout.ns(stitch.readyCycle);
    auto args = [&](llvm::json::OStream &json) {
      json.attributeObject("args", [&] {
        json.attribute("stitch", static_cast<int64_t>(k));
        json.attribute("tasks", stitch.tasks);
        writeTime(json, "ready_us", layout.ns(stitch.readyCycle));
        writeTime(json, "barrier_us", layout.ns(stitch.barrierCycle));
        writeTime(json, "open_us", layout.ns(stitch.openCycle));
      });
    };
    if (endNs > startNs)
      events.event([&](llvm::json::OStream &json) {
        json.attribute("ph", "X");
        json.attribute("name", absl::StrCat("build stitch ", k, ": ",
                                            stitchIterations(program, begin, end)));
        json.attribute("cat", "control");
        json.attribute("pid", kSchedulerPid);
        json.attribute("tid", tid);
        writeTime(json, "ts", startNs);
        writeTime(json, "dur", endNs - startNs);
        args(json);
      });
    events.event([&](llvm::json::OStream &json) {
      json.attribute("ph", "i");
      json.attribute("s", "t");
      json.attribute("name", absl::StrCat("open stitch ", k));
      json.attribute("cat", "control");
      json.attribute("pid", kSchedulerPid);
      json.attribute("tid", tid);
      writeTime(json, "ts", layout.ns(stitch.openCycle));
      args(json);
    });
    built = std::max(built, stitch.readyCycle);
    begin = end;
  }
}

void writePipes(EventWriter &events, const Program &program, const RunRecord &record,
                const Layout &layout) {
  const ir::OpRegistry &ops = ir::OpRegistry::get();
  for (const runtime::PipeRecord &pipe : record.pipes) {
    const TaskRecord &task = record.tasks[pipe.task];
    const codegen::Leaf &leaf = program.leaves[program.calls[pipe.task].leaf];
    std::string name = codegen::pipeName(pipe.pipe).str();
    if (pipe.instr >= 0) {
      int op = leaf.instrs[pipe.instr].op;
      if (op >= 0 && op < static_cast<int>(leaf.ops.size()))
        absl::StrAppend(&name, " ", ops.def(leaf.ops[op].code).name.str());
    }
    int64_t startNs = layout.ns(pipe.startCycle);
    int64_t endNs = layout.ns(pipe.endCycle);
    events.event([&](llvm::json::OStream &json) {
      json.attribute("ph", "X");
      json.attribute("name", name);
      json.attribute("cat", "pipe");
      json.attribute("pid", layout.pid(task.core));
      json.attribute("tid", layout.pipeTid(task.core, task.coreIndex, pipe.pipe));
      writeTime(json, "ts", startNs);
      writeTime(json, "dur", endNs - startNs);
      json.attributeObject("args", [&] {
        json.attribute("task", pipe.task);
        json.attribute("instr", pipe.instr);
        json.attribute("bytes", pipe.bytes);
      });
    });
  }
}

void writeOtherData(llvm::raw_ostream &os, const Program &program, const RunRecord &record) {
  size_t edges = 0;
  for (const codegen::Call &call : program.calls) edges += call.preds.size();
  llvm::json::OStream json(os);
  json.object([&] {
    json.attribute("func", program.funcName);
    json.attribute("device", record.device);
    json.attribute("sched_mode", record.schedMode);
    json.attributeBegin("clock_mhz");
    writeFixed(json, record.clockMHz, kRatioDecimals);
    json.attributeEnd();
    json.attribute("aic_cores", record.aicCores);
    json.attribute("aiv_cores", record.aivCores);
    json.attribute("scheduler_threads", record.schedulerThreads);
    json.attribute("tasks", static_cast<int64_t>(program.calls.size()));
    json.attribute("edges", static_cast<int64_t>(edges));
    auto us = [&](llvm::StringRef key, double value) {
      json.attributeBegin(key);
      writeFixed(json, value, kUsDecimals);
      json.attributeEnd();
    };
    us("simulated_us", record.simulatedUs());
    us("bound_us", record.boundUs());
    us("head_us", record.toUs(record.bound.headCycles));
    json.attribute("limiter", record.bound.limiter());
    json.attributeBegin("ratio");
    writeFixed(json, record.makespanCycles > 0
                         ? record.bound.totalCycles() / record.makespanCycles
                         : 0.0,
               kRatioDecimals);
    json.attributeEnd();
    json.attribute("pipe_records", static_cast<int64_t>(record.pipes.size()));
    // As the summary counts them: without stitch records, one stitch at the head.
    if (!record.stitches.empty() || !program.instances.empty())
      json.attributeObject("loops", [&] {
        json.attribute("stitches", std::max<int64_t>(1, record.stitches.size()));
        us("control_busy_us", record.toUs(record.controlBusyCycles));
        us("control_wait_us", record.toUs(record.controlWaitCycles));
        us("barrier_wait_us", record.toUs(record.barrierWaitCycles));
        if (program.parallelLoops) {
          json.attribute("parallelism", static_cast<int64_t>(program.schedParallelism));
          json.attribute("parallelism_derived", program.schedParallelismDerived);
        }
        if (program.workspacePools > 0) {
          json.attribute("workspace_pools", static_cast<int64_t>(program.workspacePools));
          json.attribute("workspace_pool_bytes", program.workspacePoolBytes);
          json.attribute("workspace_wraps", program.workspaceWraps);
        }
      });
  });
}

} // namespace

absl::Status writeSwimlane(llvm::raw_ostream &os, const Program &program, const RunRecord &record,
                           const SwimlaneOptions &options) {
  if (absl::Status status = checkRunRecord(program, record); !status.ok()) return status;
  bool pipeLanes = options.pipeLanes && !record.pipes.empty();
  Layout layout(record, pipeLanes);
  os << "{\"traceEvents\":[";
  EventWriter events(os);
  writeMetadata(events, record, layout, options, pipeLanes);
  if (options.deviceLane) writeDeviceLane(events, record, layout);
  writeTasks(events, program, record, layout);
  if (options.flows) writeFlows(events, program, record, layout);
  if (options.counters) writeCounters(events, record, layout);
  if (options.schedulerLanes && record.schedulerThreads > 0)
    writeSchedulerLanes(events, program, record, layout);
  if (hasControlLane(record, options)) writeControlLane(events, program, record, layout);
  if (pipeLanes) writePipes(events, program, record, layout);
  os << "\n],\n\"displayTimeUnit\":\"ns\",\n\"otherData\":";
  writeOtherData(os, program, record);
  os << "}\n";
  return absl::OkStatus();
}

absl::StatusOr<std::string> swimlaneJson(const Program &program, const RunRecord &record,
                                         const SwimlaneOptions &options) {
  std::string text;
  llvm::raw_string_ostream os(text);
  if (absl::Status status = writeSwimlane(os, program, record, options); !status.ok())
    return status;
  os.flush();
  return text;
}

} // namespace ptoc::profile
