// The run summary: computing it from a Program and its RunRecord, the bottleneck
// verdicts, and the text and JSON renderings.
#include "ptoc/profile/Summary.h"

#include <algorithm>
#include <limits>
#include <map>

#include "JsonNumbers.h"
#include "TextFormat.h"
#include "RecordCheck.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

namespace ptoc::profile {

using codegen::Program;
using runtime::RunRecord;
using runtime::TaskRecord;
using target::CoreKind;

namespace {

constexpr CoreKind kKinds[] = {CoreKind::AIC, CoreKind::AIV};
/// Merge counts worth trying for an n-buffer setting (REFERENCE.md: users try
/// 1/2/4/8/16); the verdict suggests the first step.
constexpr int kFirstMergeCount = 2;

double safeRatio(double num, double den) { return den > 0 ? num / den : 0.0; }

struct GroupAccum {
  int leaf = -1;
  int tasks = 0;
  double minCycles = std::numeric_limits<double>::infinity();
  double maxCycles = 0, totalCycles = 0;
  std::vector<char> coreUsed;
};

void summarizeCoreKinds(const RunRecord &record, Summary &s) {
  double span = std::max(0.0, record.makespanCycles - record.bound.headCycles);
  for (CoreKind kind : kKinds) {
    CoreKindSummary k;
    k.kind = coreKindLabel(kind).str();
    k.cores = kind == CoreKind::AIC ? record.aicCores : record.aivCores;
    std::vector<char> used(static_cast<size_t>(std::max(k.cores, 0)), 0);
    double busy = 0;
    double first = std::numeric_limits<double>::infinity(), last = 0;
    for (const TaskRecord &task : record.tasks) {
      if (task.core != kind) continue;
      ++k.tasks;
      busy += task.endCycle - task.startCycle;
      first = std::min(first, task.startCycle);
      last = std::max(last, task.endCycle);
      used[task.coreIndex] = 1;
    }
    k.coresUsed = static_cast<int>(std::count(used.begin(), used.end(), 1));
    k.busyUs = record.toUs(busy);
    k.idleUs = record.toUs(std::max(0.0, k.cores * span - busy));
    k.utilization = safeRatio(busy, k.cores * span);
    if (k.tasks > 0) {
      double window = last - first;
      k.windowUs = record.toUs(window);
      k.windowIdleShare = window > 0 ? std::max(0.0, 1.0 - busy / (k.cores * window)) : 0.0;
      if (k.cores > 0) {
        k.waves = (k.tasks + k.cores - 1) / k.cores;
        k.waveIdleShare = 1.0 - static_cast<double>(k.tasks) / (k.waves * k.cores);
      }
    }
    s.coreKinds.push_back(std::move(k));
  }
}

void summarizeGroups(const Program &program, const RunRecord &record, Summary &s) {
  std::map<int, GroupAccum> groups;
  for (size_t c = 0; c < program.calls.size(); ++c) {
    const codegen::Leaf &leaf = program.leaves[program.calls[c].leaf];
    const TaskRecord &task = record.tasks[c];
    GroupAccum &g = groups[leaf.hashOrder];
    if (g.leaf < 0) {
      g.leaf = program.calls[c].leaf;
      g.coreUsed.assign(static_cast<size_t>(std::max(
                            leaf.core == CoreKind::AIC ? record.aicCores : record.aivCores, 0)),
                        0);
    }
    double duration = task.endCycle - task.startCycle;
    ++g.tasks;
    g.minCycles = std::min(g.minCycles, duration);
    g.maxCycles = std::max(g.maxCycles, duration);
    g.totalCycles += duration;
    if (task.coreIndex < static_cast<int>(g.coreUsed.size())) g.coreUsed[task.coreIndex] = 1;
  }
  for (const auto &[order, g] : groups) {
    const codegen::Leaf &leaf = program.leaves[g.leaf];
    GroupSummary out;
    out.hashOrder = order;
    out.key = groupKey(order);
    out.core = coreKindLabel(leaf.core).str();
    out.hash = leaf.hash;
    out.groupSize = leaf.groupSize;
    out.tasks = g.tasks;
    out.coresUsed = static_cast<int>(std::count(g.coreUsed.begin(), g.coreUsed.end(), 1));
    out.minUs = record.toUs(g.minCycles);
    out.maxUs = record.toUs(g.maxCycles);
    out.totalUs = record.toUs(g.totalCycles);
    out.avgUs = out.totalUs / g.tasks;
    s.groups.push_back(std::move(out));
  }
}

void summarizeTopTasks(const Program &program, const RunRecord &record, int count, Summary &s) {
  std::vector<int> order(record.tasks.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  auto duration = [&](int c) { return record.tasks[c].endCycle - record.tasks[c].startCycle; };
  size_t keep = std::min(order.size(), static_cast<size_t>(std::max(count, 0)));
  // Longest first; equal durations in call order, so the list is deterministic.
  std::partial_sort(order.begin(), order.begin() + keep, order.end(), [&](int a, int b) {
    double da = duration(a), db = duration(b);
    return da != db ? da > db : a < b;
  });
  for (size_t i = 0; i < keep; ++i) {
    int c = order[i];
    const TaskRecord &task = record.tasks[c];
    TaskSummary t;
    t.call = c;
    t.subgraph = program.calls[c].subgraph;
    t.hashOrder = program.leaves[program.calls[c].leaf].hashOrder;
    t.core = absl::StrCat(coreKindLabel(task.core).str(), "_", task.coreIndex);
    t.startUs = record.toUs(task.startCycle);
    t.durationUs = record.toUs(duration(c));
    s.topTasks.push_back(std::move(t));
  }
}

void summarizeCriticalPath(const Program &program, const RunRecord &record, Summary &s) {
  if (record.tasks.empty()) return;
  // The last-finishing task (the first of equals), then back through the predecessor
  // that finished last: the chain that held the end of the run.
  int current = 0;
  for (size_t c = 1; c < record.tasks.size(); ++c)
    if (record.tasks[c].endCycle > record.tasks[current].endCycle) current = static_cast<int>(c);
  CriticalPath &path = s.criticalPath;
  double busy = 0;
  while (true) {
    path.calls.push_back(current);
    busy += record.tasks[current].endCycle - record.tasks[current].startCycle;
    const std::vector<int> &preds = program.calls[current].preds;
    if (preds.empty()) break;
    int next = preds.front();
    for (int p : preds)
      if (record.tasks[p].endCycle > record.tasks[next].endCycle) next = p;
    current = next; // preds are earlier calls, so this terminates
  }
  std::reverse(path.calls.begin(), path.calls.end());
  path.startUs = record.toUs(record.tasks[path.calls.front()].startCycle);
  path.endUs = record.toUs(record.tasks[path.calls.back()].endCycle);
  path.lengthUs = path.endUs - path.startUs;
  path.busyUs = record.toUs(busy);
  path.waitUs = std::max(0.0, path.lengthUs - path.busyUs);
  for (int c : path.calls) {
    int order = program.leaves[program.calls[c].leaf].hashOrder;
    auto it = std::find_if(path.hashOrders.begin(), path.hashOrders.end(),
                           [&](const auto &entry) { return entry.first == order; });
    if (it == path.hashOrders.end())
      path.hashOrders.push_back({order, 1});
    else
      ++it->second;
  }
}

void summarizePipes(const RunRecord &record, Summary &s) {
  s.hasPipes = !record.pipes.empty();
  double transfer = 0, compute = 0;
  for (const runtime::PipeRecord &pipe : record.pipes)
    (codegen::isTransferPipe(pipe.pipe) ? transfer : compute) += pipe.endCycle - pipe.startCycle;
  s.transferPipeUs = record.toUs(transfer);
  s.computePipeUs = record.toUs(compute);
}

/// The group of `kind` with the most tasks (ties: the shortest average), or null.
const GroupSummary *mostNumerousGroup(const Summary &s, llvm::StringRef kind) {
  const GroupSummary *best = nullptr;
  for (const GroupSummary &g : s.groups)
    if (g.core == kind &&
        (!best || g.tasks > best->tasks || (g.tasks == best->tasks && g.avgUs < best->avgUs)))
      best = &g;
  return best;
}

/// The group of `kind` that takes the most time, or null.
const GroupSummary *heaviestGroup(const Summary &s, llvm::StringRef kind) {
  const GroupSummary *best = nullptr;
  for (const GroupSummary &g : s.groups)
    if (g.core == kind && (!best || g.totalUs > best->totalUs)) best = &g;
  return best;
}

using text::percent;

} // namespace

std::vector<Verdict> verdicts(const Summary &s, const SummaryOptions &options) {
  std::vector<Verdict> out;
  for (const CoreKindSummary &k : s.coreKinds) {
    if (k.tasks == 0 || k.cores == 0) continue;
    bool vector = k.kind == "AIV";
    const char *tileCall = vector ? "set_vec_tile_shapes" : "set_cube_tile_shapes";
    if (k.tasks < k.cores) {
      const GroupSummary *group = heaviestGroup(s, k.kind);
      out.push_back(Verdict{
          "under_parallelised", "warn", k.kind,
          absl::StrFormat("%d %s tasks for %d %s cores: %d cores never ran a task "
                          "(utilisation %s)",
                          k.tasks, k.kind, k.cores, k.kind, k.cores - k.coresUsed,
                          percent(k.utilization)),
          absl::StrCat("smaller tiles, so the ", k.kind, " work splits into at least ", k.cores,
                       " tasks: ", tileCall,
                       group ? absl::StrCat(" for the ops of group ", group->key) : ""),
          {{"tasks", k.tasks},
           {"cores", k.cores},
           {"cores_used", k.coresUsed},
           {"utilisation", k.utilization}}});
      continue;
    }
    if (k.waveIdleShare > options.idleShare) {
      int lastWave = k.tasks - (k.waves - 1) * k.cores;
      out.push_back(Verdict{
          "wave_imbalance", "warn", k.kind,
          absl::StrFormat("%d %s tasks on %d cores run in %d waves, the last %d/%d full: "
                          "that alone idles %s of the cores",
                          k.tasks, k.kind, k.cores, k.waves, lastWave, k.cores,
                          percent(k.waveIdleShare)),
          absl::StrFormat("tile shapes (%s) that give a multiple of %d tasks (e.g. %d or %d)",
                          tileCall, k.cores, (k.waves - 1) * k.cores, k.waves * k.cores),
          {{"tasks", k.tasks},
           {"cores", k.cores},
           {"waves", k.waves},
           {"last_wave_tasks", lastWave},
           {"wave_idle_share", k.waveIdleShare}}});
    }
    // Idle the wave count does not explain: time between tasks on busy cores.
    double gapShare = k.windowIdleShare - k.waveIdleShare;
    if (gapShare > options.idleShare) {
      const GroupSummary *group = mostNumerousGroup(s, k.kind);
      // Merging N tasks into one keeps every core busy only while tasks / N >= cores.
      int maxMerge = group ? group->tasks / k.cores : 0;
      llvm::StringRef prefix = vector ? "vec" : "cube";
      std::string knob =
          maxMerge >= kFirstMergeCount
              ? absl::StrFormat("merge small subgraphs so each task does more: "
                                "%s_nbuffer_mode=2, %s_nbuffer_setting={%d: %d} for group %s "
                                "(up to %d keeps every core busy)",
                                prefix.str(), prefix.str(), group->hashOrder, kFirstMergeCount,
                                group->key, maxMerge)
              : "device_sched_mode=3 (a consumer runs right after its producer and scheduler "
                "threads share work); too few tasks to merge without idling cores";
      double idleUs = std::max(0.0, k.cores * k.windowUs - k.busyUs);
      Verdict v{"scheduling_gaps", "warn", k.kind,
                absl::StrFormat("%s cores idle %s of their active window (%.3f us of %d x "
                                "%.3f us); the wave count explains %s, the other %s are gaps "
                                "between tasks; average task %.3f us",
                                k.kind, percent(k.windowIdleShare), idleUs, k.cores, k.windowUs,
                                percent(k.waveIdleShare), percent(gapShare), k.busyUs / k.tasks),
                knob,
                {{"idle_share", k.windowIdleShare},
                 {"gap_share", gapShare},
                 {"idle_us", idleUs},
                 {"window_us", k.windowUs},
                 {"cores", k.cores},
                 {"tasks", k.tasks},
                 {"avg_task_us", k.busyUs / k.tasks}}};
      if (group) v.evidence.push_back({"group_tasks", group->tasks});
      out.push_back(std::move(v));
    }
  }

  // Transfer share: measured per pipe when pipe records exist, otherwise the run's
  // HBM traffic at the device bandwidth (derived from the bound's HBM term) against
  // the bound's compute term.
  double transferUs = 0, computeUs = 0;
  const char *basis = "";
  if (s.hasPipes && s.transferPipeUs + s.computePipeUs > 0) {
    transferUs = s.transferPipeUs;
    computeUs = s.computePipeUs;
    basis = "pipe busy time";
  } else if (s.compulsoryHbmBytes > 0 && s.hbmBoundUs > 0) {
    double usPerByte = s.hbmBoundUs / static_cast<double>(s.compulsoryHbmBytes);
    transferUs = static_cast<double>(s.hbmReadBytes + s.hbmWriteBytes) * usPerByte;
    computeUs = std::max(s.cubeBoundUs, s.vectorBoundUs);
    basis = "HBM traffic at device bandwidth vs compute at peak";
  }
  double share = safeRatio(transferUs, transferUs + computeUs);
  if (share > options.transferShare && s.spanRatio < options.fineRatio) {
    bool hasCube = !s.coreKinds.empty() && s.coreKinds[0].tasks > 0;
    double rereads = safeRatio(static_cast<double>(s.hbmReadBytes + s.hbmWriteBytes),
                               static_cast<double>(s.compulsoryHbmBytes));
    Verdict v{"memory_bound", "warn", "run",
              absl::StrFormat("transfers take %s of transfer + compute time (%s: %.3f us vs "
                              "%.3f us); HBM traffic %.2fx the compulsory bytes, L2 hit rate %s",
                              percent(share), basis, transferUs, computeUs, rereads,
                              percent(s.l2HitRate)),
              absl::StrCat("bigger tiles so each byte loaded feeds more compute "
                           "(set_vec_tile_shapes / set_cube_tile_shapes)",
                           hasCube ? "; cube_l1_reuse_mode / cube_l1_reuse_setting so tiles "
                                     "shared by cube tasks are loaded into L1 once"
                                   : ""),
              {{"transfer_share", share},
               {"transfer_us", transferUs},
               {"compute_us", computeUs},
               {"hbm_bytes", static_cast<double>(s.hbmReadBytes + s.hbmWriteBytes)},
               {"compulsory_hbm_bytes", static_cast<double>(s.compulsoryHbmBytes)},
               {"l2_hit_rate", s.l2HitRate}}};
    out.push_back(std::move(v));
  }

  if (s.spanUs > 0 && s.spanRatio >= options.fineRatio) {
    Verdict v{"near_roofline", "ok", "run",
              absl::StrFormat("after the head overhead the run takes %s us against a bound of "
                              "%s us (%s, limited by %s): little headroom left",
                              absl::StrFormat("%.3f", s.spanUs),
                              absl::StrFormat("%.3f", s.boundUs - s.headUs),
                              percent(s.spanRatio), s.limiter),
              "none needed; device_sched_mode may still shave the scheduling overhead",
              {{"span_ratio", s.spanRatio},
               {"ratio", s.ratio},
               {"bound_us", s.boundUs},
               {"simulated_us", s.simulatedUs}}};
    out.push_back(std::move(v));
  }
  return out;
}

absl::StatusOr<Summary> summarize(const Program &program, const RunRecord &record,
                                  const SummaryOptions &options) {
  if (absl::Status status = checkRunRecord(program, record); !status.ok()) return status;
  Summary s;
  s.func = program.funcName;
  s.device = record.device;
  s.schedMode = record.schedMode;
  s.clockMHz = record.clockMHz;
  s.tasks = static_cast<int>(program.calls.size());
  for (const codegen::Call &call : program.calls) s.edges += static_cast<int64_t>(call.preds.size());
  s.simulatedUs = record.simulatedUs();
  s.headUs = record.toUs(record.bound.headCycles);
  s.spanUs = std::max(0.0, s.simulatedUs - s.headUs);
  s.boundUs = record.boundUs();
  s.limiter = record.bound.limiter();
  s.cubeBoundUs = record.toUs(record.bound.cubeCycles);
  s.vectorBoundUs = record.toUs(record.bound.vectorCycles);
  s.hbmBoundUs = record.toUs(record.bound.hbmCycles);
  s.compulsoryHbmBytes = record.bound.hbmBytes;
  s.ratio = safeRatio(s.boundUs, s.simulatedUs);
  s.spanRatio = safeRatio(s.boundUs - s.headUs, s.spanUs);
  s.copyInBytes = record.copyInBytes;
  s.copyOutBytes = record.copyOutBytes;
  s.hbmReadBytes = record.hbmReadBytes;
  s.hbmWriteBytes = record.hbmWriteBytes;
  s.l2HitBytes = record.l2ReadHitBytes;
  s.l2MissBytes = record.l2ReadMissBytes;
  s.l2HitRate = record.l2HitRate();
  summarizeCoreKinds(record, s);
  summarizeGroups(program, record, s);
  summarizeTopTasks(program, record, options.topTasks, s);
  summarizeCriticalPath(program, record, s);
  summarizePipes(record, s);
  s.verdicts = verdicts(s, options);
  return s;
}

// ---------------------------------------------------------------------------
// Text

namespace {

using text::bytes;
using text::Table;
using text::us3;

/// Microseconds with about four significant digits, for prose.
std::string us(double value) {
  if (value < 10) return absl::StrFormat("%.3f", value);
  if (value < 100) return absl::StrFormat("%.2f", value);
  return absl::StrFormat("%.1f", value);
}


} // namespace

std::string summaryText(const Summary &s) {
  std::string out = absl::StrFormat("simulated %s us (bound %s us, %.0f%% of roofline, limited "
                                    "by %s)\n",
                                    us(s.simulatedUs), us(s.boundUs), 100 * s.ratio, s.limiter);
  absl::StrAppendFormat(&out, "func %s on %s, sched mode %d, %d tasks, %d edges\n", s.func,
                        s.device, s.schedMode, s.tasks, s.edges);
  absl::StrAppendFormat(&out, "head %s us, then span %s us (bound %s us: %.0f%% of roofline "
                              "without the head)\n",
                        us(s.headUs), us(s.spanUs), us(s.boundUs - s.headUs), 100 * s.spanRatio);
  absl::StrAppendFormat(&out, "bound terms: cube %s us, vector %s us, hbm %s us (%s compulsory)\n",
                        us(s.cubeBoundUs), us(s.vectorBoundUs), us(s.hbmBoundUs),
                        bytes(s.compulsoryHbmBytes));

  out += "\n";
  Table cores({"cores", "count", "tasks", "used", "util", "busy_us", "idle_us", "window_us",
               "window_idle", "waves", "wave_idle"});
  for (const CoreKindSummary &k : s.coreKinds)
    cores.row({k.kind, absl::StrCat(k.cores), absl::StrCat(k.tasks), absl::StrCat(k.coresUsed),
               percent(k.utilization), us3(k.busyUs), us3(k.idleUs), us3(k.windowUs),
               percent(k.windowIdleShare), absl::StrCat(k.waves), percent(k.waveIdleShare)});
  cores.print(out);

  out += "\n";
  absl::StrAppendFormat(&out, "bytes: copy-in %s, copy-out %s, HBM read %s, HBM write %s\n",
                        bytes(s.copyInBytes), bytes(s.copyOutBytes), bytes(s.hbmReadBytes),
                        bytes(s.hbmWriteBytes));
  absl::StrAppendFormat(&out, "L2: hit rate %s (%s hit, %s missed)\n", percent(s.l2HitRate),
                        bytes(s.l2HitBytes), bytes(s.l2MissBytes));
  if (s.hasPipes)
    absl::StrAppendFormat(&out, "pipes: transfer %s us, compute %s us (summed over cores)\n",
                          us(s.transferPipeUs), us(s.computePipeUs));

  out += "\ngroups\n";
  Table groups({"group", "core", "size", "tasks", "cores", "min_us", "avg_us", "max_us",
                "total_us"});
  for (const GroupSummary &g : s.groups)
    groups.row({g.key, g.core, absl::StrCat(g.groupSize), absl::StrCat(g.tasks),
                absl::StrCat(g.coresUsed), us3(g.minUs), us3(g.avgUs), us3(g.maxUs),
                us3(g.totalUs)});
  groups.print(out, "  ");

  out += "\nlongest tasks\n";
  Table top({"call", "sg", "group", "core", "start_us", "dur_us"}, /*labelColumn=*/false);
  for (const TaskSummary &t : s.topTasks)
    top.row({absl::StrCat(t.call), absl::StrCat(t.subgraph), groupKey(t.hashOrder), t.core,
             us3(t.startUs), us3(t.durationUs)});
  top.print(out, "  ");

  const CriticalPath &path = s.criticalPath;
  absl::StrAppendFormat(&out, "\ncritical path: %s us (%s to %s us), %d task%s, busy %s us, "
                              "waiting %s us\n",
                        us(path.lengthUs), us(path.startUs), us(path.endUs), path.calls.size(),
                        path.calls.size() == 1 ? "" : "s", us(path.busyUs), us(path.waitUs));
  if (!path.hashOrders.empty()) {
    std::vector<std::string> steps;
    for (const auto &[order, count] : path.hashOrders)
      steps.push_back(absl::StrCat(groupKey(order), " x", count));
    absl::StrAppend(&out, "  groups on it: ", absl::StrJoin(steps, " -> "), "\n");
  }

  text::appendVerdicts(out, s.verdicts);
  return out;
}

// ---------------------------------------------------------------------------
// JSON

std::string summaryJson(const Summary &s) {
  std::string text;
  llvm::raw_string_ostream os(text);
  constexpr unsigned kIndent = 2;
  llvm::json::OStream json(os, kIndent);
  auto fixed = [&](llvm::StringRef key, double value, int decimals) {
    json.attributeBegin(key);
    writeFixed(json, value, decimals);
    json.attributeEnd();
  };
  auto usKey = [&](llvm::StringRef key, double value) { fixed(key, value, kUsDecimals); };
  auto ratioKey = [&](llvm::StringRef key, double value) { fixed(key, value, kRatioDecimals); };

  json.object([&] {
    json.attribute("func", s.func);
    json.attribute("device", s.device);
    json.attribute("sched_mode", s.schedMode);
    fixed("clock_mhz", s.clockMHz, kRatioDecimals);
    json.attribute("tasks", s.tasks);
    json.attribute("edges", s.edges);
    usKey("simulated_us", s.simulatedUs);
    usKey("head_us", s.headUs);
    usKey("span_us", s.spanUs);
    usKey("bound_us", s.boundUs);
    ratioKey("ratio", s.ratio);
    ratioKey("span_ratio", s.spanRatio);
    json.attribute("limiter", s.limiter);
    json.attributeObject("bound", [&] {
      usKey("cube_us", s.cubeBoundUs);
      usKey("vector_us", s.vectorBoundUs);
      usKey("hbm_us", s.hbmBoundUs);
      usKey("head_us", s.headUs);
      json.attribute("compulsory_hbm_bytes", s.compulsoryHbmBytes);
    });
    json.attributeArray("cores", [&] {
      for (const CoreKindSummary &k : s.coreKinds)
        json.object([&] {
          json.attribute("kind", k.kind);
          json.attribute("cores", k.cores);
          json.attribute("tasks", k.tasks);
          json.attribute("cores_used", k.coresUsed);
          ratioKey("utilisation", k.utilization);
          usKey("busy_us", k.busyUs);
          usKey("idle_us", k.idleUs);
          usKey("window_us", k.windowUs);
          ratioKey("window_idle_share", k.windowIdleShare);
          json.attribute("waves", k.waves);
          ratioKey("wave_idle_share", k.waveIdleShare);
        });
    });
    json.attributeObject("bytes", [&] {
      json.attribute("copy_in", s.copyInBytes);
      json.attribute("copy_out", s.copyOutBytes);
      json.attribute("hbm_read", s.hbmReadBytes);
      json.attribute("hbm_write", s.hbmWriteBytes);
      json.attribute("l2_hit", s.l2HitBytes);
      json.attribute("l2_miss", s.l2MissBytes);
      ratioKey("l2_hit_rate", s.l2HitRate);
    });
    if (s.hasPipes)
      json.attributeObject("pipes", [&] {
        usKey("transfer_us", s.transferPipeUs);
        usKey("compute_us", s.computePipeUs);
      });
    json.attributeArray("groups", [&] {
      for (const GroupSummary &g : s.groups)
        json.object([&] {
          json.attribute("key", g.key);
          json.attribute("hash_order", g.hashOrder);
          json.attribute("core", g.core);
          json.attribute("hash", g.hash);
          json.attribute("group_size", g.groupSize);
          json.attribute("tasks", g.tasks);
          json.attribute("cores_used", g.coresUsed);
          usKey("min_us", g.minUs);
          usKey("avg_us", g.avgUs);
          usKey("max_us", g.maxUs);
          usKey("total_us", g.totalUs);
        });
    });
    json.attributeArray("top_tasks", [&] {
      for (const TaskSummary &t : s.topTasks)
        json.object([&] {
          json.attribute("call", t.call);
          json.attribute("subgraph", t.subgraph);
          json.attribute("hash_order", t.hashOrder);
          json.attribute("core", t.core);
          usKey("start_us", t.startUs);
          usKey("dur_us", t.durationUs);
        });
    });
    const CriticalPath &path = s.criticalPath;
    json.attributeObject("critical_path", [&] {
      usKey("length_us", path.lengthUs);
      usKey("start_us", path.startUs);
      usKey("end_us", path.endUs);
      usKey("busy_us", path.busyUs);
      usKey("wait_us", path.waitUs);
      json.attribute("tasks", static_cast<int64_t>(path.calls.size()));
      json.attributeArray("calls", [&] {
        for (int c : path.calls) json.value(c);
      });
      json.attributeArray("hash_orders", [&] {
        // Named copies: a lambda may not capture a structured binding before C++20,
        // and clang 14 does not implement C++20's permission.
        for (const auto &entry : path.hashOrders)
          json.object([&, order = entry.first, count = entry.second] {
            json.attribute("hash_order", order);
            json.attribute("tasks", count);
          });
      });
    });
    text::writeVerdicts(json, s.verdicts);
  });
  os << "\n";
  os.flush();
  return text;
}

} // namespace ptoc::profile
