// The trace analysis: the numbers the run summary shows (same definitions, rebuilt
// from the trace's events), plus bubbles per core, the per-pipe view and the verdicts
// that need the trace (scheduler_bound, missing_double_buffer).
#include "ptoc/profile/TraceAnalysis.h"

#include <algorithm>
#include <limits>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace ptoc::profile {

namespace {

constexpr const char *kKinds[] = {"AIC", "AIV"};
/// Pipes in lane order per core kind (docs/outputs.md); the first of each pair of
/// lists are transfer pipes.
const std::vector<std::string> &pipeOrder(llvm::StringRef kind) {
  static const std::vector<std::string> kAic = {"MTE2", "MTE1", "CUBE", "FIXPIPE"};
  static const std::vector<std::string> kAiv = {"MTE2", "VEC", "MTE3"};
  return kind == "AIC" ? kAic : kAiv;
}
bool isComputePipe(llvm::StringRef pipe) { return pipe == "CUBE" || pipe == "VEC"; }
/// Merge counts users try (REFERENCE.md: 1/2/4/8/16).
constexpr int kMergeCounts[] = {2, 4, 8, 16};
constexpr double kBytesPerUsPerGBps = 1e3; // 1 GB/s = 1e9 B/s = 1e3 B/us

double safeRatio(double num, double den) { return den > 0 ? num / den : 0.0; }
std::string percent(double share) { return absl::StrFormat("%.1f%%", 100 * share); }
std::string groupKeyOf(int order) { return absl::StrCat("func0_", order); }

int coresOf(const TraceData &t, llvm::StringRef kind) {
  return kind == "AIC" ? t.aicCores : t.aivCores;
}

void fillRun(const TraceData &t, Summary &s) {
  s.func = t.func;
  s.device = t.device;
  s.schedMode = t.schedMode;
  s.clockMHz = t.clockMHz;
  s.tasks = static_cast<int>(t.tasks.size());
  s.edges = t.edges;
  s.simulatedUs = t.simulatedUs;
  s.headUs = t.headUs;
  s.spanUs = std::max(0.0, t.simulatedUs - t.headUs);
  s.boundUs = t.boundUs;
  s.limiter = t.limiter;
  s.ratio = t.ratio;
  s.spanRatio = safeRatio(t.boundUs - t.headUs, s.spanUs);
  for (const TraceTask &task : t.tasks) {
    s.copyInBytes += task.bytesIn;
    s.copyOutBytes += task.bytesOut;
    s.l2HitBytes += task.l2HitBytes;
  }
  s.l2MissBytes = std::max<int64_t>(0, s.copyInBytes - s.l2HitBytes);
  if (!t.runSummaryPath.empty()) {
    s.cubeBoundUs = t.cubeBoundUs;
    s.vectorBoundUs = t.vectorBoundUs;
    s.hbmBoundUs = t.hbmBoundUs;
    s.compulsoryHbmBytes = t.compulsoryHbmBytes;
    s.hbmReadBytes = t.hbmReadBytes;
    s.hbmWriteBytes = t.hbmWriteBytes;
    s.l2HitBytes = t.l2HitBytes;
    s.l2MissBytes = t.l2MissBytes;
  }
  s.l2HitRate = safeRatio(static_cast<double>(s.l2HitBytes),
                          static_cast<double>(s.l2HitBytes + s.l2MissBytes));
}

/// Core kinds exactly as summarizeCoreKinds defines them.
void fillCoreKinds(const TraceData &t, Summary &s) {
  for (const char *kind : kKinds) {
    CoreKindSummary k;
    k.kind = kind;
    k.cores = coresOf(t, kind);
    std::vector<char> used(static_cast<size_t>(std::max(k.cores, 0)), 0);
    double busy = 0, first = std::numeric_limits<double>::infinity(), last = 0;
    for (const TraceTask &task : t.tasks) {
      if (task.kind != kind) continue;
      ++k.tasks;
      busy += task.durUs;
      first = std::min(first, task.startUs);
      last = std::max(last, task.endUs());
      used[task.coreIndex] = 1; // index checked by the loader
    }
    k.coresUsed = static_cast<int>(std::count(used.begin(), used.end(), 1));
    k.busyUs = busy;
    k.idleUs = std::max(0.0, k.cores * s.spanUs - busy);
    k.utilization = safeRatio(busy, k.cores * s.spanUs);
    if (k.tasks > 0) {
      double window = last - first;
      k.windowUs = window;
      k.windowIdleShare = window > 0 ? std::max(0.0, 1.0 - busy / (k.cores * window)) : 0.0;
      if (k.cores > 0) {
        k.waves = (k.tasks + k.cores - 1) / k.cores;
        k.waveIdleShare = 1.0 - static_cast<double>(k.tasks) / (k.waves * k.cores);
      }
    }
    s.coreKinds.push_back(std::move(k));
  }
}

void fillGroups(const TraceData &t, Summary &s) {
  struct Accum {
    const TraceTask *first = nullptr;
    int tasks = 0;
    double minUs = std::numeric_limits<double>::infinity(), maxUs = 0, totalUs = 0;
    std::vector<char> used;
  };
  std::map<int, Accum> groups;
  for (const TraceTask &task : t.tasks) {
    Accum &g = groups[task.hashOrder];
    if (!g.first) {
      g.first = &task;
      g.used.assign(static_cast<size_t>(std::max(coresOf(t, task.kind), 0)), 0);
    }
    ++g.tasks;
    g.minUs = std::min(g.minUs, task.durUs);
    g.maxUs = std::max(g.maxUs, task.durUs);
    g.totalUs += task.durUs;
    // A group spans one core kind in ptoc traces; a hand-edited one may not.
    if (task.coreIndex < static_cast<int>(g.used.size())) g.used[task.coreIndex] = 1;
  }
  for (const auto &[order, g] : groups) {
    GroupSummary out;
    out.hashOrder = order;
    out.key = groupKeyOf(order);
    out.core = g.first->kind;
    out.hash = g.first->leafHash;
    out.groupSize = g.first->groupSize;
    out.tasks = g.tasks;
    out.coresUsed = static_cast<int>(std::count(g.used.begin(), g.used.end(), 1));
    out.minUs = g.minUs;
    out.maxUs = g.maxUs;
    out.totalUs = g.totalUs;
    out.avgUs = g.totalUs / g.tasks;
    s.groups.push_back(std::move(out));
  }
}

void fillTopTasks(const TraceData &t, int count, Summary &s) {
  std::vector<size_t> order(t.tasks.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  size_t keep = std::min(order.size(), static_cast<size_t>(std::max(count, 0)));
  std::partial_sort(order.begin(), order.begin() + keep, order.end(), [&](size_t a, size_t b) {
    double da = t.tasks[a].durUs, db = t.tasks[b].durUs;
    return da != db ? da > db : a < b;
  });
  for (size_t i = 0; i < keep; ++i) {
    const TraceTask &task = t.tasks[order[i]];
    s.topTasks.push_back(TaskSummary{static_cast<int>(task.call), task.subgraph, task.hashOrder,
                                     task.core(), task.startUs, task.durUs});
  }
}

/// The same chain as the run summary: from the last-finishing task (the first of
/// equals), back through the predecessor that finished last.
void fillCriticalPath(const TraceData &t, Summary &s) {
  if (t.tasks.empty()) return;
  size_t current = 0;
  for (size_t c = 1; c < t.tasks.size(); ++c)
    if (t.tasks[c].endUs() > t.tasks[current].endUs()) current = c;
  CriticalPath &path = s.criticalPath;
  std::vector<char> seen(t.tasks.size(), 0);
  double busy = 0;
  while (!seen[current]) { // a hand-made trace may have cycles; ptoc's never do
    seen[current] = 1;
    path.calls.push_back(static_cast<int>(current));
    busy += t.tasks[current].durUs;
    const std::vector<int64_t> &preds = t.tasks[current].preds;
    if (preds.empty()) break;
    int64_t next = preds.front();
    for (int64_t p : preds)
      if (t.tasks[p].endUs() > t.tasks[next].endUs()) next = p;
    current = static_cast<size_t>(next);
  }
  std::reverse(path.calls.begin(), path.calls.end());
  path.startUs = t.tasks[path.calls.front()].startUs;
  path.endUs = t.tasks[path.calls.back()].endUs();
  path.lengthUs = path.endUs - path.startUs;
  path.busyUs = busy;
  path.waitUs = std::max(0.0, path.lengthUs - path.busyUs);
  for (int c : path.calls) {
    int order = t.tasks[c].hashOrder;
    auto it = std::find_if(path.hashOrders.begin(), path.hashOrders.end(),
                           [&](const auto &entry) { return entry.first == order; });
    if (it == path.hashOrders.end())
      path.hashOrders.push_back({order, 1});
    else
      ++it->second;
  }
}

/// Bubbles: each core's span (head end to run end) splits into busy, idle while its
/// next task was ready (sched), idle before it was ready (dep), and after its last task.
void fillBubbles(const TraceData &t, const AnalysisOptions &options, Analysis &a) {
  double runEnd = std::max(t.simulatedUs, t.headUs);
  std::vector<TaskWait> waits;
  for (const char *kind : kKinds) {
    int cores = coresOf(t, kind);
    std::vector<std::vector<const TraceTask *>> perCore(static_cast<size_t>(std::max(cores, 0)));
    for (const TraceTask &task : t.tasks)
      if (task.kind == kind) perCore[task.coreIndex].push_back(&task);
    KindBubbles kb;
    kb.kind = kind;
    kb.spanUs = a.summary.spanUs;
    for (int core = 0; core < cores; ++core) {
      std::vector<const TraceTask *> &tasks = perCore[core];
      std::sort(tasks.begin(), tasks.end(), [](const TraceTask *x, const TraceTask *y) {
        return x->startUs != y->startUs ? x->startUs < y->startUs : x->call < y->call;
      });
      CoreBubbles cb;
      cb.core = absl::StrCat(kind, "_", core);
      cb.kind = kind;
      double prevEnd = t.headUs;
      for (const TraceTask *task : tasks) {
        ++cb.tasks;
        cb.busyUs += task->durUs;
        double gap = std::max(0.0, task->startUs - prevEnd);
        double dep = std::clamp(task->readyUs - prevEnd, 0.0, gap);
        cb.depIdleUs += dep;
        cb.schedIdleUs += gap - dep;
        double schedWait = std::max(0.0, task->startUs - task->readyUs);
        cb.schedWaitUs += schedWait;
        waits.push_back(TaskWait{task->call, task->subgraph, task->hashOrder, cb.core,
                                 task->readyUs, task->startUs, schedWait,
                                 std::max(0.0, std::min(task->readyUs, task->startUs) - prevEnd)});
        prevEnd = std::max(prevEnd, task->endUs());
      }
      cb.tailIdleUs = std::max(0.0, runEnd - prevEnd);
      if (cb.tasks > 0) ++kb.coresUsed;
      kb.schedIdleUs += cb.schedIdleUs;
      kb.depIdleUs += cb.depIdleUs;
      kb.tailIdleUs += cb.tailIdleUs;
      kb.schedWaitUs += cb.schedWaitUs;
      a.coreBubbles.push_back(std::move(cb));
    }
    a.kindBubbles.push_back(std::move(kb));
  }
  size_t keep = std::min(waits.size(), static_cast<size_t>(std::max(options.topWaits, 0)));
  std::partial_sort(waits.begin(), waits.begin() + keep, waits.end(),
                    [](const TaskWait &x, const TaskWait &y) {
                      return x.schedWaitUs != y.schedWaitUs ? x.schedWaitUs > y.schedWaitUs
                                                            : x.call < y.call;
                    });
  waits.resize(keep);
  a.topWaits = std::move(waits);
}

using Interval = std::pair<double, double>;

/// Total length of the union of `intervals` (sorted in place); the merged list in `out`.
double unionOf(std::vector<Interval> &intervals, std::vector<Interval> &out) {
  std::sort(intervals.begin(), intervals.end());
  out.clear();
  for (const Interval &i : intervals) {
    if (i.second <= i.first) continue;
    if (!out.empty() && i.first <= out.back().second)
      out.back().second = std::max(out.back().second, i.second);
    else
      out.push_back(i);
  }
  double total = 0;
  for (const Interval &i : out) total += i.second - i.first;
  return total;
}

double intersection(const std::vector<Interval> &x, const std::vector<Interval> &y) {
  double total = 0;
  size_t i = 0, j = 0;
  while (i < x.size() && j < y.size()) {
    double lo = std::max(x[i].first, y[j].first), hi = std::min(x[i].second, y[j].second);
    if (hi > lo) total += hi - lo;
    (x[i].second < y[j].second ? i : j)++;
  }
  return total;
}

void fillPipes(const TraceData &t, Analysis &a) {
  a.hasPipes = !t.pipes.empty();
  a.summary.hasPipes = a.hasPipes;
  if (!a.hasPipes) return;
  double span = a.summary.spanUs;
  for (const char *kind : kKinds) {
    std::map<std::string, PipeSummary> byName;
    // Per core: transfer and compute intervals, for the overlap.
    std::map<int, std::pair<std::vector<Interval>, std::vector<Interval>>> perCore;
    for (const TracePipe &pipe : t.pipes) {
      if (pipe.kind != kind) continue;
      PipeSummary &p = byName[pipe.pipe];
      p.kind = kind;
      p.pipe = pipe.pipe;
      p.transfer = !isComputePipe(pipe.pipe);
      ++p.events;
      p.busyUs += pipe.durUs;
      p.bytes += pipe.bytes;
      auto &lanes = perCore[pipe.coreIndex];
      (p.transfer ? lanes.first : lanes.second).push_back({pipe.startUs, pipe.endUs()});
    }
    if (byName.empty()) continue;
    int cores = coresOf(t, kind);
    PipeKindSummary pk;
    pk.kind = kind;
    auto emit = [&](PipeSummary &p) {
      p.utilization = safeRatio(p.busyUs, cores * span);
      p.busyGBps = safeRatio(static_cast<double>(p.bytes), p.busyUs) / kBytesPerUsPerGBps;
      p.spanGBps = safeRatio(static_cast<double>(p.bytes), span) / kBytesPerUsPerGBps;
      (p.transfer ? pk.transferUs : pk.computeUs) += p.busyUs;
      a.pipes.push_back(p);
    };
    for (const std::string &name : pipeOrder(kind))
      if (auto it = byName.find(name); it != byName.end()) {
        emit(it->second);
        byName.erase(it);
      }
    for (auto &[name, p] : byName) emit(p); // pipes this version does not know, by name
    std::vector<Interval> transfer, compute;
    for (auto &[core, lanes] : perCore) {
      pk.transferUnionUs += unionOf(lanes.first, transfer);
      pk.computeUnionUs += unionOf(lanes.second, compute);
      pk.overlapUs += intersection(transfer, compute);
    }
    pk.transferShare = safeRatio(pk.transferUs, pk.transferUs + pk.computeUs);
    pk.overlapShare = safeRatio(pk.overlapUs, std::min(pk.transferUnionUs, pk.computeUnionUs));
    a.summary.transferPipeUs += pk.transferUs;
    a.summary.computePipeUs += pk.computeUs;
    a.pipeKinds.push_back(pk);
  }
}

/// The group of `kind` with the most total time, or null.
const GroupSummary *heaviestGroup(const Summary &s, llvm::StringRef kind) {
  const GroupSummary *best = nullptr;
  for (const GroupSummary &g : s.groups)
    if (g.core == kind && (!best || g.totalUs > best->totalUs)) best = &g;
  return best;
}

/// The largest merge count users try that still leaves a task per core.
int suggestedMerge(const GroupSummary &group, int cores) {
  int best = kMergeCounts[0];
  for (int n : kMergeCounts)
    if (cores > 0 && group.tasks / n >= cores) best = n;
  return best;
}

void schedulerVerdicts(const TraceData &t, const Analysis &a, const AnalysisOptions &options,
                       std::vector<Verdict> &out) {
  const Summary &s = a.summary;
  for (const KindBubbles &kb : a.kindBubbles) {
    double capacity = kb.coresUsed * kb.spanUs;
    double share = safeRatio(kb.schedIdleUs, capacity);
    if (kb.coresUsed == 0 || share <= options.schedulerIdleShare || kb.schedIdleUs <= kb.depIdleUs)
      continue;
    std::string knob;
    switch (s.schedMode) {
    case 0:
      knob = "device_sched_mode=1 (L2 affinity: a task readied by a completion goes straight "
             "to an idle core of the same scheduler thread) or 3 (also fair hand-over "
             "between scheduler threads)";
      break;
    case 1:
    case 2:
      knob = "device_sched_mode=3 (L2 affinity and fair hand-over between scheduler threads)";
      break;
    default: {
      const GroupSummary *g = heaviestGroup(s, kb.kind);
      llvm::StringRef prefix = kb.kind == "AIV" ? "vec" : "cube";
      knob = g ? absl::StrFormat("fewer, longer tasks so dispatch cost weighs less: "
                                 "%s_nbuffer_mode=2, %s_nbuffer_setting={%d: %d} (group %s)",
                                 prefix.str(), prefix.str(), g->hashOrder,
                                 suggestedMerge(*g, coresOf(t, kb.kind)), g->key)
               : "fewer, longer tasks (bigger tiles) so dispatch cost weighs less";
    }
    }
    out.push_back(Verdict{
        "scheduler_bound", "warn", kb.kind,
        absl::StrFormat("%s cores sat idle with their next task already ready for %.3f us, "
                        "%s of the %d used cores x %.3f us span (waiting for predecessors: "
                        "%.3f us); sched mode %d",
                        kb.kind, kb.schedIdleUs, percent(share), kb.coresUsed, kb.spanUs,
                        kb.depIdleUs, s.schedMode),
        knob,
        {{"sched_idle_us", kb.schedIdleUs},
         {"dep_idle_us", kb.depIdleUs},
         {"sched_idle_share", share},
         {"cores_used", kb.coresUsed},
         {"sched_mode", s.schedMode}}});
  }
}

void doubleBufferVerdicts(const TraceData &t, const Analysis &a, const AnalysisOptions &options,
                          std::vector<Verdict> &out) {
  for (const PipeKindSummary &pk : a.pipeKinds) {
    if (pk.transferUnionUs <= 0 || pk.computeUnionUs <= 0) continue;
    if (pk.transferShare < options.doubleBufferTransferShare ||
        pk.overlapShare >= options.doubleBufferOverlap)
      continue;
    const GroupSummary *g = heaviestGroup(a.summary, pk.kind);
    int cores = coresOf(t, pk.kind);
    llvm::StringRef prefix = pk.kind == "AIV" ? "vec" : "cube";
    std::string knob;
    if (g) {
      int n = suggestedMerge(*g, cores);
      knob = absl::StrFormat("merge isomorphic tasks so one task streams several tiles through "
                             "ping-pong buffers: %s_nbuffer_mode=2, %s_nbuffer_setting={%d: %d} "
                             "for group %s",
                             prefix.str(), prefix.str(), g->hashOrder, n, g->key);
      if (g->tasks / n < cores)
        absl::StrAppend(&knob, " (leaves ", g->tasks / n, " tasks for ", cores,
                        " cores: smaller tiles first)");
    } else {
      knob = absl::StrCat(prefix.str(), "_nbuffer_setting with N >= 2");
    }
    out.push_back(Verdict{
        "missing_double_buffer", "warn", pk.kind,
        absl::StrFormat("on %s cores transfers and compute overlap for only %s of the shorter "
                        "of the two (%.3f us overlap; transfer pipes busy %.3f us, compute "
                        "%.3f us, transfer share %s): each transfer waits for compute and "
                        "vice versa",
                        pk.kind, percent(pk.overlapShare), pk.overlapUs, pk.transferUnionUs,
                        pk.computeUnionUs, percent(pk.transferShare)),
        knob,
        {{"overlap_share", pk.overlapShare},
         {"overlap_us", pk.overlapUs},
         {"transfer_us", pk.transferUnionUs},
         {"compute_us", pk.computeUnionUs},
         {"transfer_share", pk.transferShare}}});
  }
}

} // namespace

Analysis analyze(const TraceData &trace, const AnalysisOptions &options) {
  Analysis a;
  a.source = trace.path;
  a.runSummary = trace.runSummaryPath;
  Summary &s = a.summary;
  fillRun(trace, s);
  fillCoreKinds(trace, s);
  fillGroups(trace, s);
  fillTopTasks(trace, options.summary.topTasks, s);
  fillCriticalPath(trace, s);
  double busy = 0;
  for (const CoreKindSummary &k : s.coreKinds) busy += k.busyUs;
  for (const GroupSummary &g : s.groups) a.groupShares.push_back(safeRatio(g.totalUs, busy));
  a.criticalPathShare = safeRatio(s.criticalPath.lengthUs, s.spanUs);
  fillBubbles(trace, options, a);
  fillPipes(trace, a);
  // The summary's rules on the same numbers, so `ptoc prof` never contradicts
  // summary.txt; then the rules only the trace can judge.
  s.verdicts = verdicts(s, options.summary);
  a.verdicts = s.verdicts;
  schedulerVerdicts(trace, a, options, a.verdicts);
  doubleBufferVerdicts(trace, a, options, a.verdicts);
  return a;
}

} // namespace ptoc::profile
