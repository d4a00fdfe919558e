// The AICPU scheduler threads and their four policies (see Scheduler.h).
#include "Scheduler.h"

#include <algorithm>
#include <limits>

namespace ptoc::runtime::sim {

Scheduler::Scheduler(const SimProgram &program, const target::DeviceSpec &device, int mode,
                     CoreModel &cores, EventQueue &events, RunRecord &record)
    : program_(program), mode_(mode), dispatchCycles_(device.scheduler.dispatchCycles),
      completionCycles_(device.scheduler.completionCycles),
      resolveCycles_(device.scheduler.dependencyResolveCycles), cores_(cores), events_(events),
      record_(record), numThreads_(device.scheduler.threads), gate_(program, events, record) {
  numCores_[kAic] = device.aicCores;
  numCores_[kAiv] = device.aivCores;
  const int total = numCores_[kAic] + numCores_[kAiv];
  running_.assign(total, -1);
  pending_.assign(total, -1);
  owner_.assign(total, 0);
  incoming_.assign(total, 0);
  slotStart_.assign(total, 0);
  threads_.resize(numThreads_);
  // Thread t owns the contiguous slice [t*n/T, (t+1)*n/T) of each core kind.
  for (int t = 0; t < numThreads_; ++t) {
    Thread &th = threads_[t];
    for (int k = 0; k < 2; ++k) {
      int offset = k == kAic ? 0 : numCores_[kAic];
      int n = numCores_[k];
      th.coreBegin[k] = offset + static_cast<int>(int64_t(t) * n / numThreads_);
      th.coreEnd[k] = offset + static_cast<int>(int64_t(t + 1) * n / numThreads_);
      th.idle[k] = th.coreEnd[k] - th.coreBegin[k];
      th.freeSlots[k] = 2 * th.idle[k];
      for (int c = th.coreBegin[k]; c < th.coreEnd[k]; ++c) owner_[c] = t;
    }
  }
  if (mode_ & kFairBit) own_.resize(2 * numThreads_);
  if (mode_ & kAffinityBit) direct_.resize(2 * numThreads_);
  predLeft_ = program.predCount;
  unfinished_[kAic] = program.tasksOfKind[kAic];
  unfinished_[kAiv] = program.tasksOfKind[kAiv];
}

void Scheduler::leave(int core) {
  Thread &th = threads_[owner_[core]];
  int k = kindOfCore(core), u = used(core);
  th.idle[k] -= u == 0;
  th.freeSlots[k] -= 2 - u;
}

void Scheduler::enter(int core) {
  Thread &th = threads_[owner_[core]];
  int k = kindOfCore(core), u = used(core);
  th.idle[k] += u == 0;
  th.freeSlots[k] += 2 - u;
}

void Scheduler::sampleQueue(int k, double now) {
  // At most one sample per kind per instant: a later change at the same cycle
  // overwrites it.
  std::vector<QueueSample> &q = record_.queue;
  int depth = static_cast<int>(readyCount_[k]);
  if (lastSample_[k] >= 0 && q[lastSample_[k]].cycle == now) {
    q[lastSample_[k]].depth = depth;
    return;
  }
  lastSample_[k] = static_cast<int64_t>(q.size());
  q.push_back({now, k == kAic ? target::CoreKind::AIC : target::CoreKind::AIV, depth});
}

void Scheduler::start(double head) {
  gate_.start(head);
  openDueStitches(head);
  wakeIdleThreads(head);
}

void Scheduler::onStitchOpen(int k, double now) {
  gate_.onEvent(k);
  if (openDueStitches(now)) wakeIdleThreads(now);
}

bool Scheduler::openDueStitches(double now) {
  bool placed = false;
  for (int k = gate_.due(); k >= 0; k = gate_.due()) {
    std::vector<int> initial;
    for (int x = gate_.open(k, now); x < gate_.end(k); ++x)
      if (predLeft_[x] == 0) initial.push_back(x);
    placed |= !initial.empty();
    placeInitial(initial, now);
  }
  return placed;
}

void Scheduler::placeInitial(const std::vector<int> &initial, double now) {
  // In program order. LIFO queues get them reversed so the first program task is
  // taken first; fair modes deal them round-robin.
  const bool lifo = mode_ & kAffinityBit;
  int64_t position[2] = {0, 0}, count[2] = {0, 0};
  for (int x : initial) ++count[program_.callKind[x]];
  auto place = [&](int x, int64_t pos) {
    int k = program_.callKind[x];
    record_.tasks[x].readyCycle = now;
    if (mode_ & kFairBit) own(static_cast<int>(pos % numThreads_), k).pushBack(x);
    else shared_[k].pushBack(x);
    ++readyCount_[k];
  };
  if (lifo) {
    for (auto it = initial.rbegin(); it != initial.rend(); ++it) {
      int k = program_.callKind[*it];
      place(*it, count[k] - 1 - position[k]);
      ++position[k];
    }
  } else {
    for (int x : initial) place(x, position[program_.callKind[x]]++);
  }
  for (int k = 0; k < 2; ++k)
    if (count[k] > 0) sampleQueue(k, now);
}

void Scheduler::wakeIdleThreads(double now) {
  for (int t = 0; t < numThreads_; ++t)
    if (!threads_[t].busy) pickNext(t, now);
}

int Scheduler::steal(int t, int k) {
  // Hand-over: take the oldest queued task of the thread with the most tasks it cannot
  // dispatch right now: all of its queue while it is busy (a sequential server with a
  // backlog), otherwise those beyond its idle cores.
  int victim = -1;
  int64_t best = 0;
  for (int v = 0; v < numThreads_; ++v) {
    if (v == t) continue;
    int64_t excess = static_cast<int64_t>(own(v, k).size()) -
                     (threads_[v].busy ? 0 : threads_[v].idle[k]);
    if (excess > best) {
      best = excess;
      victim = v;
    }
  }
  return victim < 0 ? -1 : own(victim, k).popFront();
}

int Scheduler::take(int t, int k, bool forIdleCore) {
  int x = -1;
  switch (mode_) {
  case 0:
    if (!shared_[k].empty()) x = shared_[k].popFront();
    break;
  case 1:
    if (!direct(t, k).empty()) x = direct(t, k).popBack();
    else if (!shared_[k].empty()) x = shared_[k].popBack();
    break;
  case 2:
    if (!own(t, k).empty()) x = own(t, k).popFront();
    else if (forIdleCore) x = steal(t, k);
    break;
  default: // 3
    if (!direct(t, k).empty()) x = direct(t, k).popBack();
    else if (!own(t, k).empty()) x = own(t, k).popBack();
    else if (forIdleCore) x = steal(t, k);
    break;
  }
  return x;
}

bool Scheduler::hasQueued(int t, int k) {
  if ((mode_ & kAffinityBit) && !direct(t, k).empty()) return true;
  return (mode_ & kFairBit) ? !own(t, k).empty() : !shared_[k].empty();
}

int Scheduler::balanceTarget(int t, int k) {
  // Tail of the fair modes: the thread with room on an idle core that has dispatched
  // the fewest tasks so far (ties: lowest index); the readying thread if none has room.
  int best = -1;
  for (int u = 0; u < numThreads_; ++u) {
    int64_t room = threads_[u].idle[k] - static_cast<int64_t>(own(u, k).size()) -
                   static_cast<int64_t>(mode_ & kAffinityBit ? direct(u, k).size() : 0);
    if (room <= 0) continue;
    if (best < 0 || threads_[u].dispatched < threads_[best].dispatched) best = u;
  }
  return best < 0 ? t : best;
}

void Scheduler::publish(int t, int x, double now) {
  const int k = program_.callKind[x];
  record_.tasks[x].readyCycle = now;
  if ((mode_ & kAffinityBit) &&
      static_cast<int64_t>(direct(t, k).size()) < threads_[t].freeSlots[k]) {
    direct(t, k).pushBack(x); // straight to a free slot of the readying thread
  } else if (mode_ & kFairBit) {
    own(tail(k) ? balanceTarget(t, k) : t, k).pushBack(x);
  } else {
    shared_[k].pushBack(x);
  }
  ++readyCount_[k];
  sampleQueue(k, now);
}

void Scheduler::pickNext(int t, double now) {
  Thread &th = threads_[t];
  if (th.busy) return;
  // 1. A completion to handle (they ready successors, which other threads can take
  //    meanwhile).
  if (!th.completions.empty()) {
    beginCompletion(t, now);
    return;
  }
  // 2. An idle core and a task for it.
  for (int k = 0; k < 2; ++k) {
    if (th.idle[k] == 0) continue;
    int x = take(t, k, /*forIdleCore=*/true);
    if (x < 0) continue;
    int core = th.coreBegin[k];
    while (used(core) != 0) ++core;
    beginDispatch(t, x, core, now);
    return;
  }
  // 3. A free pending slot: on the core whose running task started first.
  for (int k = 0; k < 2; ++k) {
    if (th.freeSlots[k] == 0 || !hasQueued(t, k)) continue;
    int best = -1;
    for (int c = th.coreBegin[k]; c < th.coreEnd[k]; ++c)
      if (used(c) == 1 && (best < 0 || slotStart_[c] < slotStart_[best])) best = c;
    if (best < 0) continue;
    int x = take(t, k, /*forIdleCore=*/false);
    if (x < 0) continue;
    beginDispatch(t, x, best, now);
    return;
  }
}

void Scheduler::beginDispatch(int t, int x, int core, double now) {
  Thread &th = threads_[t];
  const int k = program_.callKind[x];
  --readyCount_[k];
  sampleQueue(k, now);
  if (used(core) == 0) slotStart_[core] = now + dispatchCycles_;
  leave(core);
  ++incoming_[core];
  enter(core);
  th.busy = true;
  th.action = Action::Dispatch;
  th.task = x;
  th.core = core;
  ++th.dispatched;
  events_.push(now + dispatchCycles_, EventKind::ThreadActionEnd, static_cast<uint32_t>(t));
}

void Scheduler::beginCompletion(int t, double now) {
  Thread &th = threads_[t];
  const int x = th.completions.popFront();
  th.busy = true;
  th.action = Action::Completion;
  th.task = x;
  th.readies = program_.callSuccBegin[x + 1] > program_.callSuccBegin[x];
  double cost = completionCycles_ + (th.readies ? resolveCycles_ : 0.0);
  events_.push(now + cost, EventKind::ThreadActionEnd, static_cast<uint32_t>(t));
}

void Scheduler::startOnCore(int core, int x, double now) {
  slotStart_[core] = now;
  cores_.startTask(core, x, now);
}

void Scheduler::endDispatch(int t, double now) {
  Thread &th = threads_[t];
  const int core = th.core, x = th.task;
  TaskRecord &rec = record_.tasks[x];
  rec.dispatchCycle = now;
  rec.thread = t;
  const int k = kindOfCore(core);
  rec.core = k == kAic ? target::CoreKind::AIC : target::CoreKind::AIV;
  rec.coreIndex = core - (k == kAic ? 0 : numCores_[kAic]);
  leave(core);
  --incoming_[core];
  bool startNow = running_[core] < 0;
  if (startNow) running_[core] = x;
  else pending_[core] = x;
  enter(core);
  if (startNow) startOnCore(core, x, now);
}

bool Scheduler::endCompletion(int t, double now) {
  const int x = threads_[t].task;
  bool published = false;
  for (int32_t e = program_.callSuccBegin[x]; e < program_.callSuccBegin[x + 1]; ++e) {
    int s = program_.callSucc[e];
    if (--predLeft_[s] == 0 && gate_.isOpen(s)) { // else: placed when its stitch opens
      publish(t, s, now);
      published = true;
    }
  }
  return published;
}

void Scheduler::onActionEnd(int t, double now) {
  Thread &th = threads_[t];
  th.busy = false;
  Action a = th.action;
  th.action = Action::None;
  bool published = false;
  if (a == Action::Dispatch) endDispatch(t, now);
  else if (a == Action::Completion) published = endCompletion(t, now);
  // The readying thread acts first; then the others may take what it published.
  pickNext(t, now);
  if (published) wakeIdleThreads(now);
}

void Scheduler::onTaskEnd(int core, double now) {
  const int x = running_[core];
  TaskRecord &rec = record_.tasks[x];
  rec.endCycle = now;
  record_.coreBusyCycles[core] += now - rec.startCycle;
  lastEnd_ = std::max(lastEnd_, now);
  --unfinished_[kindOfCore(core)];
  cores_.finishTask(core);
  leave(core);
  running_[core] = pending_[core];
  pending_[core] = -1;
  enter(core);
  const int owner = owner_[core];
  threads_[owner].completions.pushBack(x);
  // The pre-posted task starts at once, without the thread.
  if (running_[core] >= 0) startOnCore(core, running_[core], now);
  // The last task of a stitch may open the next one.
  gate_.taskEnded(x, now);
  bool opened = openDueStitches(now);
  // The fair modes' tail rule may now apply, so every idle thread looks again.
  if ((mode_ & kFairBit) || opened) wakeIdleThreads(now);
  else pickNext(owner, now);
}

} // namespace ptoc::runtime::sim
