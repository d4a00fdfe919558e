// The timeline of a simulated run: a Program and the RunRecord of one of its runs, in
// device cycles (ticks = cycles), so the summary's sums are taken exactly as the
// simulator counted them.
#include <algorithm>
#include <map>

#include "RecordCheck.h"
#include "ptoc/profile/Timeline.h"

namespace ptoc::profile {

using target::CoreKind;

absl::StatusOr<Timeline> timelineOf(const codegen::Program &program,
                                    const runtime::RunRecord &record) {
  if (absl::Status status = checkRunRecord(program, record); !status.ok()) return status;
  Timeline t;
  t.family = TimelineFamily::PtocRun;
  t.carries.edges = true;
  t.carries.readyTimes = true;
  t.carries.bytes = true;
  t.carries.readStalls = true;
  t.carries.bound = true;
  t.carries.schedMode = true;
  t.carries.deviceCores = true;
  t.carries.hashOrders = true;
  t.carries.pipes = !record.pipes.empty();
  t.func = program.funcName;
  t.device = record.device;
  t.schedMode = record.schedMode;
  t.clockMHz = record.clockMHz;
  t.ticksPerUs = record.clockMHz;
  t.aicCores = record.aicCores;
  t.aivCores = record.aivCores;
  t.schedulerThreads = record.schedulerThreads;
  t.runStart = record.bound.headCycles;
  t.runEnd = record.makespanCycles;

  TimelineBound bound;
  bound.simulatedUs = record.simulatedUs();
  bound.headUs = record.toUs(record.bound.headCycles);
  bound.boundUs = record.boundUs();
  bound.ratio = bound.simulatedUs > 0 ? bound.boundUs / bound.simulatedUs : 0.0;
  bound.limiter = record.bound.limiter();
  bound.cubeUs = record.toUs(record.bound.cubeCycles);
  bound.vectorUs = record.toUs(record.bound.vectorCycles);
  bound.hbmUs = record.toUs(record.bound.hbmCycles);
  bound.compulsoryHbmBytes = record.bound.hbmBytes;
  t.bound = bound;
  t.traffic = TimelineTraffic{record.copyInBytes,  record.copyOutBytes,   record.hbmReadBytes,
                              record.hbmWriteBytes, record.l2ReadHitBytes, record.l2ReadMissBytes};

  // Groups by root function and hash order (a program with loops has several root
  // functions), each described by the leaf of its first call.
  std::map<std::pair<unsigned, int>, int> groupOfOrder;
  std::vector<int> firstLeaf;
  auto keyOf = [&](int leaf) {
    return std::make_pair(program.leaves[leaf].funcIndex, program.leaves[leaf].hashOrder);
  };
  for (const codegen::Call &call : program.calls)
    if (groupOfOrder.emplace(keyOf(call.leaf), 0).second) firstLeaf.push_back(call.leaf);
  int index = 0;
  for (auto &[order, group] : groupOfOrder) group = index++;
  t.groups.resize(groupOfOrder.size());
  for (int leafIndex : firstLeaf) {
    const codegen::Leaf &leaf = program.leaves[leafIndex];
    TimelineGroup &g = t.groups[groupOfOrder[keyOf(leafIndex)]];
    g.key = program.groupKey(leafIndex);
    g.hashOrder = leaf.hashOrder;
    g.core = coreKindLabel(leaf.core).str();
    g.leafHash = leaf.hash;
    g.groupSize = leaf.groupSize;
    g.singleBuffered = leaf.noRoomToDoubleBuffer;
  }

  // One lane per core that ran a task, in first-use order.
  std::vector<int> laneOf(static_cast<size_t>(std::max(record.aicCores, 0) +
                                              std::max(record.aivCores, 0)),
                          -1);
  t.tasks.resize(record.tasks.size());
  EdgeList edges;
  for (size_t c = 0; c < record.tasks.size(); ++c) {
    const runtime::TaskRecord &r = record.tasks[c];
    const codegen::Call &call = program.calls[c];
    bool aic = r.core == CoreKind::AIC;
    int &lane = laneOf[(aic ? 0 : record.aicCores) + r.coreIndex];
    if (lane < 0) {
      lane = static_cast<int>(t.lanes.size());
      LaneKind kind = aic ? LaneKind::Aic : LaneKind::Aiv;
      t.lanes.push_back(TimelineLane{t.coreName(kind, r.coreIndex), kind, r.coreIndex, 0});
    }
    TimelineTask &task = t.tasks[c];
    task.lane = lane;
    task.group = groupOfOrder[keyOf(call.leaf)];
    task.start = r.startCycle;
    task.dur = r.endCycle - r.startCycle;
    task.ready = r.readyCycle;
    task.dispatch = r.dispatchCycle;
    task.thread = r.thread;
    task.subgraph = call.subgraph;
    task.leaf = call.leaf;
    task.bytesIn = r.bytesIn;
    task.bytesOut = r.bytesOut;
    task.l2HitBytes = r.l2HitBytes;
    task.readStall = r.readStallCycles;
    task.fillWait = r.fillWaitCycles;
    task.instance = r.instance;
    for (int p : call.preds)
      edges.add(static_cast<int>(c), p,
                std::binary_search(call.writeOrderPreds.begin(), call.writeOrderPreds.end(), p));
  }
  edges.moveInto(t);
  if (!record.stitches.empty() || !program.instances.empty()) {
    TimelineLoops loops;
    for (const codegen::Body &body : program.bodies) loops.bodies.push_back({body.name, body.hash});
    for (const codegen::Instance &instance : program.instances)
      loops.instances.push_back({instance.body, instance.loop, instance.iteration});
    // Without stitch records the program is one stitch, ready at the head.
    loops.stitches = std::max(1, static_cast<int>(record.stitches.size()));
    loops.controlBusy = record.controlBusyCycles;
    loops.controlWait = record.controlWaitCycles;
    loops.barrierWait = record.barrierWaitCycles;
    if (program.parallelLoops) {
      loops.parallelism = program.schedParallelism;
      loops.parallelismDerived = program.schedParallelismDerived;
    }
    loops.workspacePools = program.workspacePools;
    loops.workspacePoolBytes = program.workspacePoolBytes;
    loops.workspaceWraps = program.workspaceWraps;
    t.loops = std::move(loops);
  }
  for (const runtime::PipeRecord &p : record.pipes)
    t.pipes.push_back(TimelinePipe{p.task,
                                   record.tasks[p.task].core == CoreKind::AIC ? LaneKind::Aic
                                                                              : LaneKind::Aiv,
                                   record.tasks[p.task].coreIndex,
                                   codegen::pipeName(p.pipe).str(),
                                   codegen::isTransferPipe(p.pipe), p.startCycle,
                                   p.endCycle - p.startCycle, p.bytes});
  return t;
}

} // namespace ptoc::profile
