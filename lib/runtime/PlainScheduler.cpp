// A plain kernel's static round-robin of tasks over cores (see PlainScheduler.h).
#include "PlainScheduler.h"

#include <algorithm>

namespace ptoc::runtime::sim {

PlainScheduler::PlainScheduler(const SimProgram &program, const target::DeviceSpec &device,
                               CoreModel &cores, RunRecord &record)
    : program_(program), cores_(cores), record_(record), prologue_(device.plainBlockCycles),
      numAic_(device.aicCores) {
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
  for (size_t x = 0; x < predLeft_.size(); ++x)
    if (predLeft_[x] == 0) record_.tasks[x].readyCycle = begin;
  for (int core = 0; core < static_cast<int>(tasks_.size()); ++core) tryStart(core, begin);
}

void PlainScheduler::tryStart(int core, double now) {
  if (running_[core] >= 0 || next_[core] >= tasks_[core].size()) return;
  int x = tasks_[core][next_[core]];
  if (predLeft_[x] != 0) return; // started when its last predecessor ends
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
    if (--predLeft_[s] == 0) {
      record_.tasks[s].readyCycle = now;
      tryStart(coreOf_[s], now);
    }
  }
  tryStart(core, now);
}

} // namespace ptoc::runtime::sim
