// The bottleneck rules: what the numbers of an analysis say and which knob to try.
// Every rule first checks that the timeline carries what it needs (ready times, bytes,
// a bound, one clock, the device's core counts), so a device trace without them gets
// no verdict built on a stand-in. docs/profiling.md "verdict rules" lists them.
#include <algorithm>

#include "AnalysisRules.h"
#include "TextFormat.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace ptoc::profile {

namespace {

/// Merge counts worth trying for an n-buffer setting (REFERENCE.md: users try
/// 1/2/4/8/16); the scheduling_gaps verdict suggests the first step.
constexpr int kMergeCounts[] = {2, 4, 8, 16};
constexpr int kFirstMergeCount = kMergeCounts[0];

double safeRatio(double num, double den) { return den > 0 ? num / den : 0.0; }
using text::percent;

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

/// "the ops of group func0_3" or, for a PyPTO leaf hash, "the ops of leaf 8097...".
std::string groupPhrase(const Summary &s, const GroupSummary &g) {
  return s.carries.hashOrders ? absl::StrCat("group ", g.key) : absl::StrCat("leaf ", g.key);
}

/// The `*_setting` entry giving group `g` the count `n`: `{3: 2}`, or, when the run's
/// program has several root functions, `{"func2_3": 2}` (that body's group only; a
/// plain hash order sets it in every root function). Quoted, the key reads the same
/// in Python and in the pass-option text.
std::string settingEntry(const Summary &s, const GroupSummary &g, int n) {
  if (s.loops && s.loops->rootFunctions > 1) return absl::StrFormat("{\"%s\": %d}", g.key, n);
  return absl::StrFormat("{%d: %d}", g.hashOrder, n);
}

/// The group of `kind` whose tasks waited longest for fills other cores started, or null.
const GroupSummary *mostFillWaitGroup(const Summary &s, llvm::StringRef kind) {
  const GroupSummary *best = nullptr;
  for (const GroupSummary &g : s.groups)
    if (g.core == kind && g.fillWaitUs > 0 && (!best || g.fillWaitUs > best->fillWaitUs))
      best = &g;
  return best;
}

/// port_bound for core kind `k`, if its reads stalled for much of its busy time: the
/// cores' own HBM ports (reads that miss L2) and cores reading the same data at once
/// (each waits for the one fill) are what its tasks spent their time on.
std::optional<Verdict> portVerdict(const Summary &s, const CoreKindSummary &k,
                                   const SummaryOptions &options) {
  if (!k.readStallUs || k.tasks == 0 || k.busyUs <= 0) return std::nullopt;
  double share = *k.readStallUs / k.busyUs;
  if (share < options.readStallShare) return std::nullopt;
  if (s.carries.bound && s.spanRatio >= options.fineRatio) return std::nullopt;
  bool vector = k.kind == "AIV";
  llvm::StringRef prefix = vector ? "vec" : "cube";
  double fillShare = safeRatio(k.fillWaitUs, *k.readStallUs);
  double ownShare = 1.0 - fillShare;
  // Cores that read the same data at once: one core runs the tiles that share it, one
  // after another, so its later tiles hit L2 and the other cores' ports fetch other data.
  // Only while the pairs still keep the cores (and their ports) busy: merging that idles
  // more than idleShare of them streams through fewer ports (examples/matmul.pto: 32
  // tasks in 16 pairs on 24 cores run 4% slower).
  std::string colocate;
  const GroupSummary *g = mostFillWaitGroup(s, k.kind);
  bool pairsFill = g && (g->tasks + 1) / 2 >= (1.0 - options.idleShare) * k.cores;
  if (g && pairsFill && fillShare >= options.fillWaitShare)
    colocate = s.carries.hashOrders
                   ? absl::StrFormat("run the tiles that share an operand on one core one after "
                                     "another, so its later tiles hit L2 while the other "
                                     "cores' ports fetch other data: %s_nbuffer_mode=2, "
                                     "%s_nbuffer_setting=%s for group %s",
                                     prefix.str(), prefix.str(), settingEntry(s, *g, 2), g->key)
                   : absl::StrFormat("run the tiles that share an operand on one core one after "
                                     "another (merge them in pairs: %s_nbuffer_mode=2 with N=2 "
                                     "for %s)",
                                     prefix.str(), groupPhrase(s, *g));
  // Every core's port streaming its own data: more reads in flight, fewer re-read.
  std::string spread = absl::StrCat(
      "keep every core's port streaming different data: ",
      s.loops ? "when a loop's iterations each read their own data, mark it "
                "ptoc.loop(..., parallel=True) and raise device_sched_parallelism so more "
                "of them read at once; "
              : "",
      "fewer bytes re-read per output (bigger tiles along the operand that is re-read",
      vector ? ")" : "; cube_l1_reuse_mode / cube_l1_reuse_setting so tiles shared by cube "
                     "tasks are loaded into L1 once)");
  // Cube tiles that read a shared operand in the same K order wait for each other's
  // fills; expand-tiles staggers their first K steps unless told not to.
  if (!vector && fillShare >= options.fillWaitShare)
    colocate = absl::StrCat(
        "matmul tiles that run at once read the same K slabs: keep cube_k_stagger=True (the "
        "default; each tile starts its K loop at its own step)",
        colocate.empty() ? "" : "; ", colocate);
  std::string knob = colocate.empty()        ? spread
                     : fillShare >= ownShare ? absl::StrCat(colocate, "; or ", spread)
                                             : absl::StrCat(spread, "; or ", colocate);
  return Verdict{
      "port_bound", "warn", k.kind,
      absl::StrFormat("%s tasks spent %.3f us, %s of their %.3f us busy time, with reads "
                      "streaming slower than their pipes allow: %s missed L2 and came through "
                      "each core's own HBM port (device field core_hbm_bytes_per_cycle), and "
                      "for %.3f us (%s of the stalls) cores waited for a fill another core "
                      "had started on the same data (cores that read the same data at once "
                      "all go at the pace of that one miss)",
                      k.kind, *k.readStallUs, percent(share), k.busyUs,
                      text::bytes(k.l2MissBytes), k.fillWaitUs, percent(fillShare)),
      knob,
      {{"read_stall_us", *k.readStallUs},
       {"read_stall_share", share},
       {"fill_wait_us", k.fillWaitUs},
       {"fill_wait_share", fillShare},
       {"l2_miss_bytes", static_cast<double>(k.l2MissBytes)},
       {"busy_us", k.busyUs}}};
}

/// The core kind with the most busy time on the critical path ("" when neither has
/// any): its verdicts say what limits the span, so they come before the other kind's.
std::string criticalKind(const Summary &s) {
  const CoreKindSummary *best = nullptr;
  for (const CoreKindSummary &k : s.coreKinds)
    if (k.criticalBusyUs > 0 && (!best || k.criticalBusyUs > best->criticalBusyUs)) best = &k;
  return best ? best->kind : "";
}

/// The largest merge count users try that still leaves a task per core.
int suggestedMerge(const GroupSummary &group, int cores) {
  int best = kMergeCounts[0];
  for (int n : kMergeCounts)
    if (cores > 0 && group.tasks / n >= cores) best = n;
  return best;
}

} // namespace

std::vector<Verdict> verdicts(const Summary &s, const SummaryOptions &options) {
  std::vector<Verdict> out;
  for (const CoreKindSummary &k : s.coreKinds) {
    if (k.tasks == 0 || k.cores == 0) continue;
    bool vector = k.kind == "AIV";
    const char *tileCall = vector ? "set_vec_tile_shapes" : "set_cube_tile_shapes";
    // Without the device's core count (a device trace names only the cores that ran)
    // idle cores cannot be counted.
    // A Worker View's tasks are blocks of SPMD tasks: blockVerdicts judges those.
    if (k.tasks < k.cores && s.carries.deviceCores && s.carries.commonClock) {
      const GroupSummary *group = heaviestGroup(s, k.kind);
      out.push_back(Verdict{
          "under_parallelised", "warn", k.kind,
          absl::StrFormat("%d %s tasks for %d %s cores: %d cores never ran a task "
                          "(utilisation %s)",
                          k.tasks, k.kind, k.cores, k.kind, k.cores - k.coresUsed,
                          percent(k.utilization)),
          absl::StrCat("smaller tiles, so the ", k.kind, " work splits into at least ", k.cores,
                       " tasks: ", tileCall,
                       group ? absl::StrCat(" for the ops of ", groupPhrase(s, *group)) : ""),
          {{"tasks", k.tasks},
           {"cores", k.cores},
           {"cores_used", k.coresUsed},
           {"utilisation", k.utilization}}});
      continue;
    }
    // Waves and gaps compare cores on one clock.
    if (!s.carries.commonClock) continue;
    // Waves are counted in the device's cores: the lanes of a device trace name only
    // the cores that ran (a Machine View's AIV lanes end at AIV_60 on a2's 48 AIV).
    bool waves = s.carries.deviceCores && k.waveIdleShare > options.idleShare;
    if (waves && k.phases <= 1) {
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
    } else if (waves) {
      // Dependent phases: each fills its own waves, so the core slots its part-filled
      // waves leave empty are what more tasks per phase would use. The phase with the
      // most empty slots (the last of equals) names the example counts.
      std::vector<std::string> sizes;
      int worst = 0, worstEmpty = -1;
      for (int n : k.phaseTasks) {
        sizes.push_back(absl::StrCat(n));
        int empty = (n + k.cores - 1) / k.cores * k.cores - n;
        if (empty >= worstEmpty) {
          worstEmpty = empty;
          worst = n;
        }
      }
      int worstWaves = (worst + k.cores - 1) / k.cores;
      int lastWave = worst - (worstWaves - 1) * k.cores;
      int lower = (worstWaves - 1) * k.cores, upper = worstWaves * k.cores;
      if (lower == 0) {
        lower = upper;
        upper += k.cores;
      }
      int slots = k.waves * k.cores;
      out.push_back(Verdict{
          "wave_imbalance", "warn", k.kind,
          absl::StrFormat("%d %s tasks run in %d dependent phases (%s tasks) on %d cores: %d "
                          "waves, %d of their %d core slots empty, which alone idles %s of the "
                          "cores",
                          k.tasks, k.kind, k.phases, absl::StrJoin(sizes, ", "), k.cores,
                          k.waves, slots - k.tasks, slots, percent(k.waveIdleShare)),
          absl::StrFormat("tile shapes (%s) that give each phase a multiple of %d tasks (e.g. "
                          "%d or %d) for its phase of %d task%s",
                          tileCall, k.cores, lower, upper, worst, worst == 1 ? "" : "s"),
          {{"tasks", k.tasks},
           {"cores", k.cores},
           {"waves", k.waves},
           {"last_wave_tasks", lastWave},
           {"wave_idle_share", k.waveIdleShare},
           {"phases", k.phases}}});
    }
    // Idle the waves do not explain, nor (with ready times) waiting for predecessors:
    // time between tasks on busy cores. Over several dependent phases, waiting for the
    // phase before can only be told apart with ready times.
    double depShare = k.windowDepIdleUs && k.windowUs > 0
                          ? *k.windowDepIdleUs / (k.cores * k.windowUs)
                          : 0.0;
    double gapShare = k.windowIdleShare - k.waveIdleShare - depShare;
    if (gapShare > options.idleShare && (k.phases <= 1 || k.windowDepIdleUs)) {
      const GroupSummary *group = mostNumerousGroup(s, k.kind);
      // Merging N tasks into one keeps every core busy only while tasks / N >= cores.
      int maxMerge = group ? group->tasks / k.cores : 0;
      llvm::StringRef prefix = vector ? "vec" : "cube";
      std::string knob =
          maxMerge >= kFirstMergeCount && s.carries.hashOrders
              ? absl::StrFormat("merge small subgraphs so each task does more: "
                                "%s_nbuffer_mode=2, %s_nbuffer_setting=%s for group %s "
                                "(up to %d keeps every core busy)",
                                prefix.str(), prefix.str(),
                                settingEntry(s, *group, kFirstMergeCount), group->key, maxMerge)
          : maxMerge >= kFirstMergeCount
              ? absl::StrFormat("merge small tasks so each does more: %s_nbuffer_mode=2 with "
                                "N=%d for the group of %s (up to %d keeps every core busy)",
                                prefix.str(), kFirstMergeCount, groupPhrase(s, *group), maxMerge)
              : "device_sched_mode=3 (a consumer runs right after its producer and scheduler "
                "threads share work); too few tasks to merge without idling cores";
      double idleUs = std::max(0.0, k.cores * k.windowUs - k.busyUs);
      std::string explained =
          depShare > 0
              ? absl::StrFormat("the wave count explains %s, waiting for predecessors %s, the "
                                "other %s are gaps between tasks",
                                percent(k.waveIdleShare), percent(depShare), percent(gapShare))
              : absl::StrFormat("the wave count explains %s, the other %s are gaps between "
                                "tasks",
                                percent(k.waveIdleShare), percent(gapShare));
      Verdict v{"scheduling_gaps", "warn", k.kind,
                absl::StrFormat("%s cores idle %s of their active window (%.3f us of %d x "
                                "%.3f us); %s; average task %.3f us",
                                k.kind, percent(k.windowIdleShare), idleUs, k.cores, k.windowUs,
                                explained, k.busyUs / k.tasks),
                knob,
                {{"idle_share", k.windowIdleShare},
                 {"gap_share", gapShare},
                 {"idle_us", idleUs},
                 {"window_us", k.windowUs},
                 {"cores", k.cores},
                 {"tasks", k.tasks},
                 {"avg_task_us", k.busyUs / k.tasks}}};
      if (depShare > 0) v.evidence.push_back({"dep_idle_share", depShare});
      if (group) v.evidence.push_back({"group_tasks", group->tasks});
      out.push_back(std::move(v));
    }
  }

  // Transfer share: measured per pipe when pipe records exist, otherwise the run's
  // HBM traffic at the device bandwidth (derived from the bound's HBM term) against
  // the bound's compute term. A source with neither has no verdict on it.
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

  for (const CoreKindSummary &k : s.coreKinds)
    if (std::optional<Verdict> v = portVerdict(s, k, options)) out.push_back(std::move(*v));

  // Loops: the cores waited for the control thread to build the next stitch. Bigger
  // stitches pay the per-stitch cost and the barrier fewer times; fewer, bigger
  // iterations (or views) give the control thread fewer iterations and tasks to build
  // for the same work.
  // Or the barrier between stitches held built stitches back (small stitches serialise
  // iterations that could overlap).
  // When the control thread was busy for most of the span it is the limiter: its
  // verdict goes first.
  bool controlLimits = s.loops && s.spanUs > 0 &&
                       s.loops->controlBusyUs >= options.controlBusyShare * s.spanUs;
  if (s.loops && s.spanUs > 0 &&
      (controlLimits || s.loops->controlWaitShare > options.controlWaitShare ||
       (s.loops->stitches > 1 && s.loops->barrierWaitShare > options.controlWaitShare))) {
    const LoopSummary &l = *s.loops;
    const BodySummary *busiest = nullptr;
    for (const BodySummary &b : l.bodies)
      if (!busiest || b.iterations > busiest->iterations) busiest = &b;
    std::string body =
        busiest ? absl::StrFormat(" (body %s: %d iterations, %d tasks)", busiest->name,
                                  busiest->iterations, busiest->tasks)
                : "";
    out.push_back(Verdict{
        "control_bound", "warn", "run",
        absl::StrFormat("every core sat idle %.3f us, %s of the %.3f us span, waiting for the "
                        "AICPU control thread to build the next stitch: it was busy %.3f us "
                        "(%s of the span) building %d stitch%s%s; built stitches waited %.3f "
                        "us (%s of the span) at the barrier for earlier stitches to finish",
                        l.controlWaitUs, percent(l.controlWaitShare), s.spanUs, l.controlBusyUs,
                        percent(safeRatio(l.controlBusyUs, s.spanUs)), l.stitches,
                        l.stitches == 1 ? "" : "es", body, l.barrierWaitUs,
                        percent(l.barrierWaitShare)),
        absl::StrCat(
            "bigger stitches (runtime option stitch_function_max_num), fewer and bigger "
            "iterations (ptoc.loop_unroll with a larger unroll_list factor), a bigger view "
            "per iteration, or more tiles per task (vec_nbuffer_mode=2 / "
            "cube_nbuffer_mode=2 with a larger N in vec_nbuffer_setting / "
            "cube_nbuffer_setting), so the control thread builds fewer iterations and tasks "
            "for the same work",
            // Built stitches held at the barrier: independent iterations need not wait.
            l.stitches > 1 && l.barrierWaitShare > options.controlWaitShare
                ? "; or, when a loop's iterations are independent, mark it "
                  "ptoc.loop(..., parallel=True) and set runtime option "
                  "device_sched_parallelism (up to 8) so several iterations run at once "
                  "instead of waiting at the barrier"
                : ""),
        {{"control_wait_us", l.controlWaitUs},
         {"control_wait_share", l.controlWaitShare},
         {"control_busy_us", l.controlBusyUs},
         {"control_busy_share", safeRatio(l.controlBusyUs, s.spanUs)},
         {"barrier_wait_us", l.barrierWaitUs},
         {"stitches", l.stitches}}});
  }

  if (s.carries.bound && s.spanUs > 0 && s.spanRatio >= options.fineRatio) {
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

  // What limits the span first: control_bound when the control thread was busy for
  // most of it (nothing the others suggest takes the run under its busy time), then the
  // verdicts on the core kind that carries the critical path, the run's, and the other
  // kind's, each in the order above.
  std::string critical = criticalKind(s);
  auto rank = [&](const Verdict &v) {
    if (v.rule == "control_bound" && controlLimits) return 0;
    if (critical.empty()) return 1;
    return v.scope == critical ? 1 : v.scope == "run" ? 2 : 3;
  };
  std::stable_sort(out.begin(), out.end(),
                   [&](const Verdict &a, const Verdict &b) { return rank(a) < rank(b); });
  return out;
}

namespace {

void schedulerVerdicts(const Timeline &t, const Analysis &a, const AnalysisOptions &options,
                       std::vector<Verdict> &out) {
  // Idle "while the next task was ready" needs ready times on one clock.
  if (!t.carries.readyTimes || !t.carries.commonClock) return;
  const Summary &s = a.summary;
  for (const KindBubbles &kb : a.kindBubbles) {
    double capacity = kb.coresUsed * kb.spanUs;
    double share = safeRatio(kb.schedIdleUs, capacity);
    if (kb.coresUsed == 0 || share <= options.schedulerIdleShare || kb.schedIdleUs <= kb.depIdleUs)
      continue;
    std::string knob;
    switch (t.schedMode.value_or(-1)) {
    case 0:
      knob = "device_sched_mode=1 (L2 affinity: a task readied by a completion goes straight "
             "to an idle core of the same scheduler thread) or 3 (also fair hand-over "
             "between scheduler threads)";
      break;
    case 1:
    case 2:
      knob = "device_sched_mode=3 (L2 affinity and fair hand-over between scheduler threads)";
      break;
    case 3: {
      const GroupSummary *g = heaviestGroup(s, kb.kind);
      llvm::StringRef prefix = kb.kind == "AIV" ? "vec" : "cube";
      knob = g ? absl::StrFormat("fewer, longer tasks so dispatch cost weighs less: "
                                 "%s_nbuffer_mode=2, %s_nbuffer_setting=%s (group %s)",
                                 prefix.str(), prefix.str(),
                                 settingEntry(s, *g,
                                              suggestedMerge(*g, t.coresOf(kb.kind == "AIC"
                                                                               ? LaneKind::Aic
                                                                               : LaneKind::Aiv))),
                                 g->key)
               : "fewer, longer tasks (bigger tiles) so dispatch cost weighs less";
      break;
    }
    default: // the trace does not say which mode ran
      knob = "device_sched_mode=1 or 3 if the run used the default 0 (a task readied by a "
             "completion goes straight to an idle core); otherwise fewer, longer tasks so "
             "dispatch cost weighs less";
    }
    std::string mode =
        t.schedMode ? absl::StrCat("sched mode ", *t.schedMode) : "sched mode not in the trace";
    Verdict v{"scheduler_bound", "warn", kb.kind,
              absl::StrFormat("%s cores sat idle with their next task already ready for %.3f "
                              "us, %s of the %d used cores x %.3f us span (waiting for "
                              "predecessors: %.3f us); %s",
                              kb.kind, kb.schedIdleUs, percent(share), kb.coresUsed, kb.spanUs,
                              kb.depIdleUs, mode),
              knob,
              {{"sched_idle_us", kb.schedIdleUs},
               {"dep_idle_us", kb.depIdleUs},
               {"sched_idle_share", share},
               {"cores_used", kb.coresUsed}}};
    if (t.schedMode) v.evidence.push_back({"sched_mode", *t.schedMode});
    out.push_back(std::move(v));
  }
}

void doubleBufferVerdicts(const Timeline &t, const Analysis &a, const AnalysisOptions &options,
                          std::vector<Verdict> &out) {
  for (const PipeKindSummary &pk : a.pipeKinds) {
    if (pk.transferUnionUs <= 0 || pk.computeUnionUs <= 0) continue;
    if (pk.transferShare < options.doubleBufferTransferShare ||
        pk.overlapShare >= options.doubleBufferOverlap)
      continue;
    const GroupSummary *g = heaviestGroup(a.summary, pk.kind);
    int cores = t.coresOf(pk.kind == "AIC" ? LaneKind::Aic : LaneKind::Aiv);
    llvm::StringRef prefix = pk.kind == "AIV" ? "vec" : "cube";
    std::string knob;
    if (g) {
      int n = suggestedMerge(*g, cores);
      knob = absl::StrFormat("merge isomorphic tasks so one task streams several tiles through "
                             "ping-pong buffers: %s_nbuffer_mode=2, %s_nbuffer_setting=%s "
                             "for group %s",
                             prefix.str(), prefix.str(), settingEntry(a.summary, *g, n), g->key);
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

/// Worker View: how much of each block is local setup, and how uneven the blocks of
/// one task are (the slowest block sets the task's time).
void blockVerdicts(const Timeline &t, const Analysis &a, const AnalysisOptions &options,
                   std::vector<Verdict> &out) {
  if (!t.carries.blockSplit || a.blocks.empty()) return;
  double kernel = 0, setup = 0;
  int blocks = 0;
  const BlockSummary *worst = nullptr;
  for (const BlockSummary &b : a.blocks) {
    kernel += b.kernelUs;
    setup += b.setupUs;
    blocks += b.blocks;
    if (!worst || b.setupShare > worst->setupShare) worst = &b;
  }
  double share = safeRatio(setup, kernel + setup);
  if (share > options.setupShare)
    out.push_back(Verdict{
        "setup_overhead", "warn", "run",
        absl::StrFormat("local setup takes %s of the blocks' time (%.3f us of %.3f us over %d "
                        "blocks; task %s %s): each block does too little work to amortise it",
                        percent(share), setup, kernel + setup, blocks, worst->task,
                        percent(worst->setupShare)),
        "give each block more work: fewer, bigger blocks (larger tiles per block, or more "
        "loop iterations inside one block) so the setup is paid fewer times",
        {{"setup_share", share}, {"setup_us", setup}, {"kernel_us", kernel}, {"blocks", blocks}}});
  // The task that takes the most block time: on how many cores of each kind it ran.
  const BlockSummary *heaviest = nullptr;
  for (const BlockSummary &b : a.blocks)
    if (!heaviest || b.kernelUs + b.setupUs > heaviest->kernelUs + heaviest->setupUs) heaviest = &b;
  // Splitting a task whose blocks are mostly setup makes that worse: then only
  // setup_overhead speaks.
  if (heaviest && t.carries.deviceCores && heaviest->setupShare <= options.setupShare) {
    for (LaneKind kind : {LaneKind::Aic, LaneKind::Aiv}) {
      int blocksOfKind = 0;
      for (const TimelineTask &task : t.tasks)
        if (task.group >= 0 && t.groups[task.group].key == heaviest->task &&
            t.lanes[task.lane].kind == kind)
          ++blocksOfKind;
      int cores = t.coresOf(kind);
      if (blocksOfKind == 0 || blocksOfKind >= cores) continue;
      std::string label = laneKindLabel(kind).str();
      double share = safeRatio(heaviest->kernelUs + heaviest->setupUs, kernel + setup);
      out.push_back(Verdict{
          "under_parallelised", "warn", label,
          absl::StrFormat("task %s, %s of the blocks' time, runs %d blocks on %s cores: %d of "
                          "the device's %d %s cores take no part",
                          heaviest->task, percent(share), blocksOfKind, label,
                          cores - blocksOfKind, cores, label),
          absl::StrFormat("split task %s into at least %d blocks (more, smaller tiles) so every "
                          "%s core takes a share",
                          heaviest->task, cores, label),
          {{"blocks", blocksOfKind}, {"cores", cores}, {"time_share", share}}});
    }
  }
  for (const BlockSummary &b : a.blocks) {
    if (b.blocks < 2 || b.imbalance <= options.blockImbalance) continue;
    out.push_back(Verdict{
        "block_imbalance", "warn", b.core,
        absl::StrFormat("the blocks of task %s are uneven: the slowest (%s) runs its kernel "
                        "%.3f us, %s longer than their mean %.3f us (fastest %.3f us); the task "
                        "takes as long as its slowest block",
                        b.task, b.slowestCore, b.maxKernelUs, percent(b.imbalance),
                        b.meanKernelUs, b.minKernelUs),
        "split the work evenly over the blocks (a block count that divides the work, or "
        "tile shapes that do)",
        {{"imbalance", b.imbalance},
         {"max_kernel_us", b.maxKernelUs},
         {"mean_kernel_us", b.meanKernelUs},
         {"blocks", b.blocks}}});
  }
}

} // namespace

void appendAnalysisVerdicts(const Timeline &timeline, const Analysis &analysis,
                            const AnalysisOptions &options, std::vector<Verdict> &out) {
  schedulerVerdicts(timeline, analysis, options, out);
  doubleBufferVerdicts(timeline, analysis, options, out);
  blockVerdicts(timeline, analysis, options, out);
}

} // namespace ptoc::profile
