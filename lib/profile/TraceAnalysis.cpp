// The analysis of a Timeline, whatever produced it: the run summary's numbers (core
// kinds, groups, longest tasks, critical path), the bubbles per core, the per-pipe
// view, a Machine View's control lane and root functions, a Worker View's blocks, and
// the verdicts (Verdicts.cpp). Sums are taken in the timeline's ticks and converted to
// microseconds once, so a simulation's summary counts exactly what the simulator did.
#include "ptoc/profile/TraceAnalysis.h"

#include <algorithm>
#include <array>
#include <limits>
#include <map>

#include "AnalysisRules.h"
#include "absl/strings/str_cat.h"

namespace ptoc::profile {

namespace {

constexpr LaneKind kKinds[] = {LaneKind::Aic, LaneKind::Aiv};
constexpr double kBytesPerUsPerGBps = 1e3; // 1 GB/s = 1e9 B/s = 1e3 B/us
constexpr double kNoEnd = -std::numeric_limits<double>::infinity();

/// Pipes in lane order per core kind (docs/outputs.md).
const std::vector<std::string> &pipeOrder(LaneKind kind) {
  static const std::vector<std::string> kAic = {"MTE2", "MTE1", "CUBE", "FIXPIPE"};
  static const std::vector<std::string> kAiv = {"MTE2", "VEC", "MTE3"};
  return kind == LaneKind::Aic ? kAic : kAiv;
}

double safeRatio(double num, double den) { return den > 0 ? num / den : 0.0; }

/// What the passes below share: the timeline and facts derived from it once.
class Analyzer {
public:
  Analyzer(const Timeline &t, const AnalysisOptions &options, Analysis &a)
      : t_(t), options_(options), a_(a), s_(a.summary) {}

  void run();

private:
  LaneKind kindOf(int task) const { return t_.lanes[t_.tasks[task].lane].kind; }
  bool control(int task) const { return kindOf(task) == LaneKind::Control; }
  int coreOf(int task) const { return t_.lanes[t_.tasks[task].lane].core; }
  double us(double ticks) const { return t_.toUs(ticks); }
  /// The run's span in ticks (runStart to runEnd).
  double spanTicks() const { return std::max(0.0, t_.runEnd - t_.runStart); }
  const TimelineGroup *groupOf(int task) const {
    int g = t_.tasks[task].group;
    return g >= 0 && g < static_cast<int>(t_.groups.size()) ? &t_.groups[g] : nullptr;
  }
  std::string groupKeyOf(int task) const {
    const TimelineGroup *g = groupOf(task);
    return control(task) ? "control" : g ? g->key : "";
  }
  int hashOrderOf(int task) const {
    const TimelineGroup *g = groupOf(task);
    return g && !control(task) ? g->hashOrder : -1;
  }

  void fillRun();
  void fillCoreKinds();
  void fillGroups();
  void fillTopTasks();
  void fillCriticalPath();
  void fillBubbles();
  void fillPipes();
  void fillControlAndRoots();
  void fillBlocks();
  void fillLoops();

  const Timeline &t_;
  const AnalysisOptions &options_;
  Analysis &a_;
  Summary &s_;
  std::vector<int> order_;      ///< every task, in a topological order (topologicalOrder)
  /// Per task: when its measured work ended, for comparing predecessors. A control
  /// node's time is placed, not measured, so it passes on the latest end among its
  /// predecessors (-inf when none of them ran on a core).
  std::vector<double> effectiveEnd_;
};

void Analyzer::fillRun() {
  s_.family = t_.family;
  s_.carries = t_.carries;
  s_.func = t_.func;
  s_.device = t_.device;
  s_.schedMode = t_.schedMode.value_or(0);
  s_.clockMHz = t_.clockMHz;
  for (size_t i = 0; i < t_.tasks.size(); ++i) s_.tasks += !control(static_cast<int>(i));
  s_.edges = t_.edges();
  if (t_.bound) {
    const TimelineBound &b = *t_.bound;
    s_.simulatedUs = b.simulatedUs;
    s_.headUs = b.headUs;
    s_.spanUs = std::max(0.0, b.simulatedUs - b.headUs);
    s_.boundUs = b.boundUs;
    s_.limiter = b.limiter;
    s_.ratio = b.ratio;
    s_.spanRatio = safeRatio(b.boundUs - b.headUs, s_.spanUs);
    s_.cubeBoundUs = b.cubeUs;
    s_.vectorBoundUs = b.vectorUs;
    s_.hbmBoundUs = b.hbmUs;
    s_.compulsoryHbmBytes = b.compulsoryHbmBytes;
  } else if (t_.carries.commonClock) {
    s_.spanUs = us(spanTicks());
  }
  // Totals of the record or summary.json where the source has them, else task sums
  // (overflow was ruled out when the trace was read).
  int64_t copyIn = 0, copyOut = 0, l2Hit = 0;
  for (const TimelineTask &task : t_.tasks) {
    copyIn += task.bytesIn;
    copyOut += task.bytesOut;
    l2Hit += task.l2HitBytes;
  }
  s_.copyInBytes = copyIn;
  s_.copyOutBytes = copyOut;
  s_.l2HitBytes = l2Hit;
  s_.l2MissBytes = std::max<int64_t>(0, copyIn - l2Hit);
  if (t_.traffic) {
    const TimelineTraffic &traffic = *t_.traffic;
    if (traffic.copyIn) s_.copyInBytes = *traffic.copyIn;
    if (traffic.copyOut) s_.copyOutBytes = *traffic.copyOut;
    s_.hbmReadBytes = traffic.hbmRead;
    s_.hbmWriteBytes = traffic.hbmWrite;
    s_.l2HitBytes = traffic.l2Hit;
    s_.l2MissBytes = traffic.l2Miss;
  }
  s_.l2HitRate = safeRatio(static_cast<double>(s_.l2HitBytes),
                           static_cast<double>(s_.l2HitBytes + s_.l2MissBytes));
}

void Analyzer::fillCoreKinds() {
  // Phases: per task, the deepest phase of each kind among it and its ancestors
  // (-1: none); a task's own phase is one past the deepest of its kind before it.
  std::vector<std::array<int, 2>> reach(t_.tasks.size(), {-1, -1});
  std::vector<int> phase(t_.tasks.size(), 0);
  for (int v : order_) {
    std::array<int, 2> inherited{-1, -1};
    for (int p : t_.predsOf(v)) {
      inherited[0] = std::max(inherited[0], reach[p][0]);
      inherited[1] = std::max(inherited[1], reach[p][1]);
    }
    reach[v] = inherited;
    if (!control(v)) {
      int k = kindOf(v) == LaneKind::Aic ? 0 : 1;
      phase[v] = inherited[k] + 1;
      reach[v][k] = phase[v];
    }
  }
  double span = spanTicks();
  for (LaneKind kind : kKinds) {
    CoreKindSummary k;
    k.kind = laneKindLabel(kind).str();
    k.cores = t_.coresOf(kind);
    std::vector<char> used(t_.lanes.size(), 0);
    double busy = 0, stall = 0, fillWait = 0;
    int64_t missed = 0;
    double first = std::numeric_limits<double>::infinity(), last = 0;
    bool anyTask = false;
    for (size_t i = 0; i < t_.tasks.size(); ++i) {
      if (kindOf(static_cast<int>(i)) != kind) continue;
      const TimelineTask &task = t_.tasks[i];
      ++k.tasks;
      busy += task.dur;
      stall += task.readStall;
      fillWait += task.fillWait;
      missed += std::max<int64_t>(0, task.bytesIn - task.l2HitBytes);
      first = anyTask ? std::min(first, task.start) : task.start;
      last = anyTask ? std::max(last, task.end()) : task.end();
      anyTask = true;
      used[t_.tasks[i].lane] = 1;
      size_t p = static_cast<size_t>(phase[i]);
      if (k.phaseTasks.size() <= p) k.phaseTasks.resize(p + 1, 0);
      ++k.phaseTasks[p];
    }
    k.phases = static_cast<int>(k.phaseTasks.size());
    k.coresUsed = static_cast<int>(std::count(used.begin(), used.end(), 1));
    k.busyUs = us(busy);
    if (t_.carries.readStalls) {
      k.readStallUs = us(stall);
      k.fillWaitUs = us(fillWait);
    }
    if (t_.carries.bytes) k.l2MissBytes = missed;
    k.idleUs = us(std::max(0.0, k.cores * span - busy));
    k.utilization = safeRatio(busy, k.cores * span);
    if (k.tasks > 0) {
      double window = last - first;
      k.windowUs = us(window);
      k.windowIdleShare = window > 0 ? std::max(0.0, 1.0 - busy / (k.cores * window)) : 0.0;
      if (k.cores > 0) {
        // Each dependent phase fills its own waves.
        for (int n : k.phaseTasks) k.waves += (n + k.cores - 1) / k.cores;
        k.waveIdleShare = 1.0 - static_cast<double>(k.tasks) / (k.waves * k.cores);
      }
    }
    s_.coreKinds.push_back(std::move(k));
  }
}

void Analyzer::fillGroups() {
  struct Accum {
    int tasks = 0;
    double minTicks = std::numeric_limits<double>::infinity(), maxTicks = 0, totalTicks = 0;
    double firstStart = std::numeric_limits<double>::infinity();
    double readStallTicks = 0, fillWaitTicks = 0;
    int lanes = 0;
  };
  // Distinct (group, lane) pairs: the cores each group used, in a bitmap when it is
  // small (groups x lanes), else sorted pairs.
  constexpr size_t kMaxBitmap = size_t(1) << 24;
  size_t cells = t_.groups.size() * t_.lanes.size();
  std::vector<char> seen(cells <= kMaxBitmap ? cells : 0, 0);
  std::vector<std::pair<int, int>> groupLanes;
  std::vector<Accum> groups(t_.groups.size());
  for (size_t i = 0; i < t_.tasks.size(); ++i) {
    const TimelineTask &task = t_.tasks[i];
    if (control(static_cast<int>(i)) || task.group < 0) continue;
    Accum &g = groups[task.group];
    ++g.tasks;
    g.minTicks = std::min(g.minTicks, task.dur);
    g.maxTicks = std::max(g.maxTicks, task.dur);
    g.totalTicks += task.dur;
    g.readStallTicks += task.readStall;
    g.fillWaitTicks += task.fillWait;
    g.firstStart = std::min(g.firstStart, task.start + t_.lanes[task.lane].drawShift);
    if (!seen.empty()) {
      char &cell = seen[static_cast<size_t>(task.group) * t_.lanes.size() + task.lane];
      g.lanes += !cell;
      cell = 1;
    } else {
      groupLanes.push_back({task.group, task.lane});
    }
  }
  std::sort(groupLanes.begin(), groupLanes.end());
  groupLanes.erase(std::unique(groupLanes.begin(), groupLanes.end()), groupLanes.end());
  for (const auto &[group, lane] : groupLanes) ++groups[group].lanes;
  for (size_t i = 0; i < groups.size(); ++i) {
    const Accum &g = groups[i];
    if (g.tasks == 0) continue;
    const TimelineGroup &tg = t_.groups[i];
    GroupSummary out;
    out.hashOrder = tg.hashOrder;
    out.key = tg.key;
    out.core = tg.core;
    out.hash = tg.leafHash;
    out.rootHash = tg.rootHash;
    out.groupSize = tg.groupSize;
    out.singleBuffered = tg.singleBuffered;
    out.tasks = g.tasks;
    out.coresUsed = g.lanes;
    out.minUs = us(g.minTicks);
    out.maxUs = us(g.maxTicks);
    out.totalUs = us(g.totalTicks);
    out.avgUs = out.totalUs / g.tasks;
    out.firstStartUs = us(g.firstStart);
    out.readStallUs = us(g.readStallTicks);
    out.fillWaitUs = us(g.fillWaitTicks);
    s_.groups.push_back(std::move(out));
  }
}

void Analyzer::fillTopTasks() {
  std::vector<int> order;
  for (size_t i = 0; i < t_.tasks.size(); ++i)
    if (!control(static_cast<int>(i))) order.push_back(static_cast<int>(i));
  size_t keep = std::min(order.size(), static_cast<size_t>(std::max(options_.summary.topTasks, 0)));
  // Longest first; equal durations in task order, so the list is deterministic.
  std::partial_sort(order.begin(), order.begin() + keep, order.end(), [&](int a, int b) {
    double da = t_.tasks[a].dur, db = t_.tasks[b].dur;
    return da != db ? da > db : a < b;
  });
  for (size_t i = 0; i < keep; ++i) {
    int c = order[i];
    const TimelineTask &task = t_.tasks[c];
    TaskSummary out;
    out.call = c;
    out.subgraph = task.subgraph;
    out.hashOrder = hashOrderOf(c);
    out.group = groupKeyOf(c);
    out.name = t_.nameOf(c);
    out.core = t_.lanes[task.lane].name;
    // Without a clock common to the cores, a start means something only on its core:
    // from that core's first block (the lane's draw shift aligns them there).
    out.startUs =
        us(t_.carries.commonClock ? task.start : task.start + t_.lanes[task.lane].drawShift);
    out.durationUs = us(task.dur);
    s_.topTasks.push_back(std::move(out));
  }
}

void Analyzer::fillCriticalPath() {
  // The last-finishing task on a core (the first of equals), then back through the
  // predecessor whose work ended last; a control node passes on its predecessors'.
  int current = -1;
  for (size_t c = 0; c < t_.tasks.size(); ++c)
    if (!control(static_cast<int>(c)) &&
        (current < 0 || t_.tasks[c].end() > t_.tasks[current].end()))
      current = static_cast<int>(c);
  if (current < 0) return;
  CriticalPath &path = s_.criticalPath;
  std::vector<char> seen(t_.tasks.size(), 0);
  double busy = 0;
  while (!seen[current]) { // a hand-made trace may have cycles; ptoc's never do
    seen[current] = 1;
    path.calls.push_back(current);
    if (control(current)) {
      ++path.controlNodes;
    } else {
      busy += t_.tasks[current].dur;
      s_.coreKinds[kindOf(current) == LaneKind::Aic ? 0 : 1].criticalBusyUs +=
          us(t_.tasks[current].dur);
    }
    llvm::ArrayRef<int> preds = t_.predsOf(current);
    if (preds.empty()) break;
    size_t next = 0;
    for (size_t k = 1; k < preds.size(); ++k)
      if (effectiveEnd_[preds[k]] > effectiveEnd_[preds[next]]) next = k;
    path.writeOrderEdges += t_.isWriteOrderEdge(current, next);
    current = preds[next];
  }
  std::reverse(path.calls.begin(), path.calls.end());
  path.startUs = us(t_.tasks[path.calls.front()].start);
  path.endUs = us(t_.tasks[path.calls.back()].end());
  path.lengthUs = path.endUs - path.startUs;
  path.busyUs = us(busy);
  path.waitUs = std::max(0.0, path.lengthUs - path.busyUs);
  std::vector<int> groupOfEntry; // the group (-1: control) of each hashOrders entry
  for (int c : path.calls) {
    path.stepKeys.push_back(groupKeyOf(c));
    int group = control(c) ? -1 : t_.tasks[c].group;
    auto it = std::find(groupOfEntry.begin(), groupOfEntry.end(), group);
    if (it == groupOfEntry.end()) {
      groupOfEntry.push_back(group);
      path.hashOrders.push_back({hashOrderOf(c), 1});
      path.groupKeys.push_back(groupKeyOf(c));
    } else {
      ++path.hashOrders[it - groupOfEntry.begin()].second;
    }
  }
}

/// Bubbles: each core's span (run start to run end) splits into busy, idle while its
/// next task was ready (sched), idle before it was ready (dep), and after its last task.
void Analyzer::fillBubbles() {
  double runStart = t_.runStart, runEnd = std::max(t_.runEnd, t_.runStart);
  std::vector<TaskWait> waits;
  std::vector<std::vector<int>> perCore;
  for (LaneKind kind : kKinds) {
    int cores = t_.coresOf(kind);
    CoreKindSummary &summary = s_.coreKinds[kind == LaneKind::Aic ? 0 : 1];
    perCore.assign(static_cast<size_t>(std::max(cores, 0)), {});
    double windowStart = std::numeric_limits<double>::infinity(), windowEnd = kNoEnd;
    for (size_t i = 0; i < t_.tasks.size(); ++i) {
      int c = static_cast<int>(i);
      if (kindOf(c) != kind || coreOf(c) < 0 || coreOf(c) >= cores) continue;
      perCore[coreOf(c)].push_back(c);
      windowStart = std::min(windowStart, t_.tasks[i].start);
      windowEnd = std::max(windowEnd, t_.tasks[i].end());
    }
    KindBubbles kb;
    kb.kind = laneKindLabel(kind).str();
    kb.spanUs = s_.spanUs;
    double kindSched = 0, kindDep = 0, kindTail = 0, kindWait = 0, windowDep = 0;
    for (int core = 0; core < cores; ++core) {
      std::vector<int> &tasks = perCore[core];
      auto byStart = [&](int x, int y) {
        const TimelineTask &a = t_.tasks[x], &b = t_.tasks[y];
        return a.start != b.start ? a.start < b.start : x < y;
      };
      // A core's tasks mostly come in start order already.
      if (!std::is_sorted(tasks.begin(), tasks.end(), byStart))
        std::sort(tasks.begin(), tasks.end(), byStart);
      CoreBubbles cb;
      cb.core = t_.coreName(kind, core);
      cb.kind = kb.kind;
      double prevEnd = runStart, busy = 0, sched = 0, dep = 0, wait = 0;
      for (int c : tasks) {
        const TimelineTask &task = t_.tasks[c];
        // Without a ready time a task counts as ready when it started.
        double ready = task.ready.value_or(task.start);
        ++cb.tasks;
        busy += task.dur;
        double gap = std::max(0.0, task.start - prevEnd);
        double depGap = std::clamp(ready - prevEnd, 0.0, gap);
        dep += depGap;
        sched += gap - depGap;
        if (depGap > 0)
          windowDep += std::max(0.0, std::min(prevEnd + depGap, windowEnd) -
                                         std::max(prevEnd, windowStart));
        double schedWait = std::max(0.0, task.start - ready);
        wait += schedWait;
        if (!options_.summaryOnly)
          waits.push_back(TaskWait{c, task.subgraph, hashOrderOf(c), cb.core, us(ready),
                                   us(task.start), us(schedWait),
                                   us(std::max(0.0, std::min(ready, task.start) - prevEnd)),
                                   groupKeyOf(c), t_.nameOf(c)});
        prevEnd = std::max(prevEnd, task.end());
      }
      double tail = std::max(0.0, runEnd - prevEnd);
      cb.busyUs = us(busy);
      cb.schedIdleUs = us(sched);
      cb.depIdleUs = us(dep);
      cb.tailIdleUs = us(tail);
      cb.schedWaitUs = us(wait);
      if (cb.tasks > 0) ++kb.coresUsed;
      kindSched += sched;
      kindDep += dep;
      kindTail += tail;
      kindWait += wait;
      if (!options_.summaryOnly) a_.coreBubbles.push_back(std::move(cb));
    }
    kb.schedIdleUs = us(kindSched);
    kb.depIdleUs = us(kindDep);
    kb.tailIdleUs = us(kindTail);
    kb.schedWaitUs = us(kindWait);
    if (t_.carries.readyTimes) summary.windowDepIdleUs = us(windowDep);
    a_.kindBubbles.push_back(std::move(kb));
  }
  if (options_.summaryOnly) return;
  size_t keep = std::min(waits.size(), static_cast<size_t>(std::max(options_.topWaits, 0)));
  std::partial_sort(waits.begin(), waits.begin() + keep, waits.end(),
                    [](const TaskWait &x, const TaskWait &y) {
                      return x.schedWaitUs != y.schedWaitUs ? x.schedWaitUs > y.schedWaitUs
                                                            : x.call < y.call;
                    });
  waits.resize(keep);
  a_.topWaits = std::move(waits);
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

void Analyzer::fillPipes() {
  s_.hasPipes = !t_.pipes.empty();
  a_.hasPipes = s_.hasPipes;
  if (!s_.hasPipes) return;
  // The summary's totals, in pipe order.
  double transfer = 0, compute = 0;
  for (const TimelinePipe &p : t_.pipes) (p.transfer ? transfer : compute) += p.dur;
  s_.transferPipeUs = us(transfer);
  s_.computePipeUs = us(compute);
  if (options_.summaryOnly) return;
  double spanUs = us(spanTicks());
  for (LaneKind kind : kKinds) {
    std::map<std::string, PipeSummary> byName;
    std::map<std::string, double> busyTicks;
    // Per core: transfer and compute intervals, for the overlap.
    std::map<int, std::pair<std::vector<Interval>, std::vector<Interval>>> perCore;
    for (const TimelinePipe &pipe : t_.pipes) {
      if (pipe.kind != kind) continue;
      PipeSummary &p = byName[pipe.pipe];
      p.kind = laneKindLabel(kind).str();
      p.pipe = pipe.pipe;
      p.transfer = pipe.transfer;
      ++p.events;
      busyTicks[pipe.pipe] += pipe.dur;
      p.bytes += pipe.bytes;
      auto &lanes = perCore[pipe.core];
      (p.transfer ? lanes.first : lanes.second).push_back({pipe.start, pipe.end()});
    }
    if (byName.empty()) continue;
    int cores = t_.coresOf(kind);
    PipeKindSummary pk;
    pk.kind = laneKindLabel(kind).str();
    auto emit = [&](PipeSummary &p) {
      p.busyUs = us(busyTicks[p.pipe]);
      p.utilization = safeRatio(p.busyUs, cores * spanUs);
      p.busyGBps = safeRatio(static_cast<double>(p.bytes), p.busyUs) / kBytesPerUsPerGBps;
      p.spanGBps = safeRatio(static_cast<double>(p.bytes), spanUs) / kBytesPerUsPerGBps;
      (p.transfer ? pk.transferUs : pk.computeUs) += p.busyUs;
      a_.pipes.push_back(p);
    };
    for (const std::string &name : pipeOrder(kind))
      if (auto it = byName.find(name); it != byName.end()) {
        emit(it->second);
        byName.erase(it);
      }
    for (auto &[name, p] : byName) emit(p); // pipes this version does not know, by name
    std::vector<Interval> transferUnion, computeUnion;
    double transferTicks = 0, computeTicks = 0, overlapTicks = 0;
    for (auto &[core, lanes] : perCore) {
      transferTicks += unionOf(lanes.first, transferUnion);
      computeTicks += unionOf(lanes.second, computeUnion);
      overlapTicks += intersection(transferUnion, computeUnion);
    }
    pk.transferUnionUs = us(transferTicks);
    pk.computeUnionUs = us(computeTicks);
    pk.overlapUs = us(overlapTicks);
    pk.transferShare = safeRatio(pk.transferUs, pk.transferUs + pk.computeUs);
    pk.overlapShare = safeRatio(pk.overlapUs, std::min(pk.transferUnionUs, pk.computeUnionUs));
    a_.pipeKinds.push_back(pk);
  }
}

void Analyzer::fillControlAndRoots() {
  if (t_.carries.controlNodes) {
    ControlSummary control;
    double first = std::numeric_limits<double>::infinity(), last = kNoEnd;
    for (size_t i = 0; i < t_.tasks.size(); ++i) {
      control.nodes += this->control(static_cast<int>(i));
      first = std::min(first, t_.tasks[i].start);
      last = std::max(last, t_.tasks[i].end());
    }
    control.spanWithControlUs = t_.tasks.empty() ? 0 : us(last - first);
    a_.control = control;
  }
  std::map<std::string, size_t> rootIndex;
  for (size_t i = 0; i < t_.tasks.size(); ++i) {
    const TimelineGroup *g = groupOf(static_cast<int>(i));
    if (!g || g->rootHash.empty()) continue;
    auto [it, added] = rootIndex.emplace(g->rootHash, a_.roots.size());
    if (added) a_.roots.push_back(RootSummary{g->rootHash, 0, 0, 0});
    RootSummary &root = a_.roots[it->second];
    if (control(static_cast<int>(i))) {
      ++root.controlNodes;
    } else {
      ++root.tasks;
      root.busyUs += us(t_.tasks[i].dur);
    }
  }
}

void Analyzer::fillBlocks() {
  if (!t_.carries.blockSplit || t_.blockTimes.size() != t_.tasks.size()) return;
  std::vector<BlockSummary> blocks(t_.groups.size());
  std::vector<double> maxKernel(t_.groups.size(), -1);
  for (size_t i = 0; i < t_.tasks.size(); ++i) {
    const TimelineTask &task = t_.tasks[i];
    if (task.group < 0) continue;
    BlockSummary &b = blocks[task.group];
    double kernel = us(t_.blockTimes[i].kernel);
    b.minKernelUs = b.blocks ? std::min(b.minKernelUs, kernel) : kernel;
    if (kernel > maxKernel[task.group]) {
      maxKernel[task.group] = kernel;
      b.slowestCore = t_.lanes[task.lane].name;
    }
    ++b.blocks;
    b.kernelUs += kernel;
    b.setupUs += us(t_.blockTimes[i].setup);
  }
  for (size_t g = 0; g < blocks.size(); ++g) {
    BlockSummary &b = blocks[g];
    if (b.blocks == 0) continue;
    b.task = t_.groups[g].key;
    b.core = t_.groups[g].core;
    b.maxKernelUs = maxKernel[g];
    b.meanKernelUs = b.kernelUs / b.blocks;
    b.setupShare = safeRatio(b.setupUs, b.kernelUs + b.setupUs);
    b.imbalance = b.meanKernelUs > 0 ? b.maxKernelUs / b.meanKernelUs - 1 : 0;
    a_.blocks.push_back(std::move(b));
  }
}

/// Loops: per body, its iterations, tasks, busy time and the time any of its tasks
/// ran; the control thread's totals as the source recorded them.
void Analyzer::fillLoops() {
  if (!t_.loops) return;
  const TimelineLoops &in = *t_.loops;
  LoopSummary out;
  out.rootFunctions = static_cast<int>(in.bodies.size());
  out.stitches = in.stitches;
  out.controlBusyUs = us(in.controlBusy);
  out.controlWaitUs = us(in.controlWait);
  out.barrierWaitUs = us(in.barrierWait);
  out.parallelism = in.parallelism;
  out.parallelismDerived = in.parallelismDerived;
  out.workspacePools = in.workspacePools;
  out.workspacePoolBytes = in.workspacePoolBytes;
  out.workspaceWraps = in.workspaceWraps;
  out.controlWaitShare = safeRatio(in.controlWait, spanTicks());
  out.barrierWaitShare = safeRatio(in.barrierWait, spanTicks());
  struct Accum {
    int tasks = 0;
    double busy = 0;
    std::vector<Interval> intervals;
    std::vector<int> instances;
  };
  std::vector<Accum> bodies(in.bodies.size());
  for (size_t i = 0; i < t_.tasks.size(); ++i) {
    const TimelineTask &task = t_.tasks[i];
    int body = task.instance >= 0 && task.instance < static_cast<int>(in.instances.size())
                   ? in.instances[task.instance].body
                   : -1;
    if (body < 0 || body >= static_cast<int>(bodies.size()) || control(static_cast<int>(i))) {
      out.tasksOutsideBodies += !control(static_cast<int>(i));
      continue;
    }
    Accum &b = bodies[body];
    ++b.tasks;
    b.busy += task.dur;
    b.intervals.push_back({task.start, task.end()});
    b.instances.push_back(task.instance);
  }
  std::vector<Interval> merged;
  for (size_t b = 0; b < bodies.size(); ++b) {
    Accum &a = bodies[b];
    if (a.tasks == 0) continue;
    std::sort(a.instances.begin(), a.instances.end());
    BodySummary body;
    body.name = in.bodies[b].name;
    body.hash = in.bodies[b].hash;
    body.iterations = static_cast<int>(
        std::unique(a.instances.begin(), a.instances.end()) - a.instances.begin());
    body.tasks = a.tasks;
    body.busyUs = us(a.busy);
    double active = unionOf(a.intervals, merged);
    body.activeUs = us(active);
    body.spanShare = safeRatio(active, spanTicks());
    out.bodies.push_back(std::move(body));
  }
  s_.loops = std::move(out);
}

void Analyzer::run() {
  a_.family = t_.family;
  a_.source = t_.source;
  a_.runSummary = t_.runSummaryPath;
  a_.notes = t_.notes;
  a_.hasBubbles = t_.carries.commonClock;
  order_ = topologicalOrder(t_);
  effectiveEnd_ = measuredEnds(t_, order_);
  fillRun();
  fillCoreKinds();
  fillGroups();
  fillTopTasks();
  if (t_.carries.commonClock) {
    fillCriticalPath();
    // The summary needs the bubbles only for scheduling_gaps' waiting-for-predecessors
    // share: skip them where the gap could not pass its threshold anyway.
    bool needed = !options_.summaryOnly;
    for (const CoreKindSummary &k : s_.coreKinds)
      needed |= t_.carries.readyTimes && k.tasks >= k.cores && k.tasks > 0 &&
                k.windowIdleShare - k.waveIdleShare > options_.summary.idleShare;
    if (needed) fillBubbles();
  }
  fillPipes();
  fillLoops();
  if (!options_.summaryOnly) {
    double busy = 0;
    for (const CoreKindSummary &k : s_.coreKinds) busy += k.busyUs;
    for (const GroupSummary &g : s_.groups) a_.groupShares.push_back(safeRatio(g.totalUs, busy));
    a_.criticalPathShare = safeRatio(s_.criticalPath.lengthUs, s_.spanUs);
    fillControlAndRoots();
    fillBlocks();
  }
  // The summary's rules first, so `ptoc prof` never contradicts summary.txt; then the
  // rules only a trace's detail can judge.
  s_.verdicts = verdicts(s_, options_.summary);
  a_.verdicts = s_.verdicts;
  if (!options_.summaryOnly) appendAnalysisVerdicts(t_, a_, options_, a_.verdicts);
}

} // namespace

Analysis analyze(const Timeline &timeline, const AnalysisOptions &options) {
  Analysis a;
  Analyzer(timeline, options, a).run();
  return a;
}

} // namespace ptoc::profile
