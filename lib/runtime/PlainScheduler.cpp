// A plain kernel's static round-robin of tasks over cores (see PlainScheduler.h).
#include "PlainScheduler.h"

#include <algorithm>

namespace ptoc::runtime::sim {

PlainScheduler::PlainScheduler(const SimProgram &program, const target::DeviceSpec &device,
                               CoreModel &cores, EventQueue &events, RunRecord &record)
    : program_(program), cores_(cores), record_(record), prologue_(device.plainBlockCycles),
      numAic_(device.aicCores), gate_(program, events, record) {
  const int numCores = device.aicCores + device.aivCores;
  tasks_.resize(numCores);
  next_.assign(numCores, 0);
  running_.assign(numCores, -1);
  const int numTasks = static_cast<int>(program.callKind.size());
  coreOf_.resize(numTasks);
  int64_t seen[2] = {0, 0};
  const int count[2] = {device.aicCores, device.aivCores};
  for (int x = 0; x < numTasks; ++x) {
    int k = program.callKind[x];
    int core = static_cast<int>(seen[k]++ % count[k]) + (k == kAic ? 0 : numAic_);
    coreOf_[x] = core;
    tasks_[core].push_back(x);
  }
  predLeft_ = program.predCount;
  unfinished_ = numTasks;
}

void PlainScheduler::start(double begin) {
  gate_.start(begin);
  openDueStitches(begin);
}

bool PlainScheduler::openDueStitches(double now) {
  bool opened = false;
  for (int k = gate_.due(); k >= 0; k = gate_.due()) {
    for (int x = gate_.open(k, now); x < gate_.end(k); ++x)
      if (predLeft_[x] == 0) record_.tasks[x].readyCycle = now;
    opened = true;
  }
  if (opened)
    for (int core = 0; core < static_cast<int>(tasks_.size()); ++core) tryStart(core, now);
  return opened;
}

void PlainScheduler::onStitchOpen(int k, double now) {
  gate_.onEvent(k);
  openDueStitches(now);
}

void PlainScheduler::tryStart(int core, double now) {
  if (running_[core] >= 0 || next_[core] >= tasks_[core].size()) return;
  int x = tasks_[core][next_[core]];
  // Started when its last predecessor ends, or when its stitch opens.
  if (predLeft_[x] != 0 || !gate_.isOpen(x)) return;
  ++next_[core];
  running_[core] = x;
  TaskRecord &rec = record_.tasks[x];
  rec.dispatchCycle = now;
  rec.thread = -1; // no scheduler thread: the core takes its own blocks
  const bool aic = core < numAic_;
  rec.core = aic ? target::CoreKind::AIC : target::CoreKind::AIV;
  rec.coreIndex = aic ? core : core - numAic_;
  cores_.startTask(core, x, now, prologue_);
}

void PlainScheduler::onTaskEnd(int core, double now) {
  const int x = running_[core];
  TaskRecord &rec = record_.tasks[x];
  rec.endCycle = now;
  record_.coreBusyCycles[core] += now - rec.startCycle;
  lastEnd_ = std::max(lastEnd_, now);
  --unfinished_;
  cores_.finishTask(core);
  running_[core] = -1;
  for (int32_t e = program_.callSuccBegin[x]; e < program_.callSuccBegin[x + 1]; ++e) {
    int s = program_.callSucc[e];
    if (--predLeft_[s] == 0 && gate_.isOpen(s)) {
      record_.tasks[s].readyCycle = now;
      tryStart(coreOf_[s], now);
    }
  }
  tryStart(core, now);
  gate_.taskEnded(x, now);
  openDueStitches(now);
}

} // namespace ptoc::runtime::sim
