// Timing of the pipe programs running on the cores (see CoreModel.h).
#include "CoreModel.h"

#include <algorithm>

namespace ptoc::runtime::sim {

CoreModel::CoreModel(const SimProgram &program, const RegionTable &regions,
                     MemorySystem &memory, EventQueue &events, RunRecord &record,
                     bool recordPipes, int numCores, double syncCycles)
    : program_(program), regions_(regions), memory_(memory), events_(events), record_(record),
      recordPipes_(recordPipes), sync_(syncCycles), cores_(numCores) {
  size_t slots = static_cast<size_t>(numCores) * static_cast<size_t>(program.maxLeafInstrs);
  remaining_.assign(slots, 0);
  earliest_.assign(slots, 0);
  work_.reserve(program.maxLeafInstrs);
}

void CoreModel::startTask(int core, int task, double now, double prologue) {
  CoreState &c = cores_[core];
  const int leaf = program_.callLeaf[task];
  const int first = program_.leafBegin[leaf];
  const int n = program_.leafBegin[leaf + 1] - first;
  c.task = task;
  c.base = first;
  c.left = n;
  record_.tasks[task].startCycle = now;
  const double begin = now + prologue;
  c.endMax = begin;
  if (n == 0) {
    events_.push(begin, EventKind::TaskEnd, static_cast<uint32_t>(core));
    return;
  }
  const size_t slot = static_cast<size_t>(core) * program_.maxLeafInstrs;
  int32_t *rem = remaining_.data() + slot;
  double *early = earliest_.data() + slot;
  const int32_t *indeg = program_.inDegree.data() + first;
  for (int i = 0; i < n; ++i) {
    rem[i] = indeg[i];
    early[i] = begin;
    if (indeg[i] == 0) work_.push_back(i);
  }
  drain(core, now);
}

void CoreModel::drain(int core, double now) {
  const double *early = earliest_.data() + static_cast<size_t>(core) * program_.maxLeafInstrs;
  while (!work_.empty()) {
    int i = work_.back();
    work_.pop_back();
    launch(core, i, early[i], now);
  }
}

void CoreModel::launch(int core, int i, double start, double now) {
  const SimInstr &in = program_.instrs[cores_[core].base + i];
  if (in.kind == InstrKind::Compute || in.kind == InstrKind::Local) {
    finish(core, i, start, start + in.duration, start + in.duration);
    return;
  }
  // A GM transfer: timed at its start, in simulated-time order.
  if (start > now) {
    events_.push(start, EventKind::TransferStart, static_cast<uint32_t>(core),
                 static_cast<uint32_t>(i));
    return;
  }
  const int task = cores_[core].task;
  TaskRecord &rec = record_.tasks[task];
  const int id = regions_.id(task, in.region);
  const double dataStart = start + in.fixed;
  double pipeFree, end;
  if (in.kind == InstrKind::Read) {
    MemorySystem::ReadResult r = memory_.read(id, in.bytes, dataStart, in.rate);
    pipeFree = r.dataEnd;
    end = r.end;
    rec.bytesIn += in.bytes;
    if (r.hit) rec.l2HitBytes += in.bytes;
    rec.readStallCycles += r.stall;
    rec.fillWaitCycles += r.fillWait;
  } else {
    pipeFree = end = memory_.write(id, in.bytes, dataStart, in.rate);
    rec.bytesOut += in.bytes;
  }
  finish(core, i, start, pipeFree, end);
}

void CoreModel::onTransferStart(int core, int instr, double now) {
  launch(core, instr, now, now);
  drain(core, now);
}

void CoreModel::finish(int core, int i, double start, double pipeFree, double end) {
  CoreState &c = cores_[core];
  const int global = c.base + i;
  if (recordPipes_) {
    PipeRecord p;
    p.task = c.task;
    p.pipe = program_.instrs[global].pipe;
    p.instr = i;
    p.startCycle = start;
    p.endCycle = pipeFree;
    p.readyCycle = end;
    p.bytes = program_.instrs[global].bytes;
    record_.pipes.push_back(p);
  }
  if (end > c.endMax) c.endMax = end;
  const size_t slot = static_cast<size_t>(core) * program_.maxLeafInstrs;
  int32_t *rem = remaining_.data() + slot;
  double *early = earliest_.data() + slot;
  const codegen::Pipe pipe = program_.instrs[global].pipe;
  for (int32_t e = program_.succBegin[global]; e < program_.succBegin[global + 1]; ++e) {
    int j = program_.succ[e];
    double ready = program_.instrs[c.base + j].pipe == pipe ? end : end + sync_;
    if (ready > early[j]) early[j] = ready;
    if (--rem[j] == 0) work_.push_back(j);
  }
  if (int j = program_.nextOnPipe[global]; j >= 0) {
    if (pipeFree > early[j]) early[j] = pipeFree;
    if (--rem[j] == 0) work_.push_back(j);
  }
  if (--c.left == 0) events_.push(c.endMax, EventKind::TaskEnd, static_cast<uint32_t>(core));
}

} // namespace ptoc::runtime::sim
