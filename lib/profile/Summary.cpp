// The run summary of a simulation: the analysis of its timeline (summary part) and the
// summary.txt rendering. summary.json is written by the analysis's JSON writer
// (AnalysisJson.cpp), the verdicts by Verdicts.cpp.
#include "ptoc/profile/Summary.h"

#include "TextFormat.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "ptoc/profile/TraceAnalysis.h"

namespace ptoc::profile {

absl::StatusOr<Summary> summarize(const codegen::Program &program,
                                  const runtime::RunRecord &record,
                                  const SummaryOptions &options) {
  absl::StatusOr<Timeline> timeline = timelineOf(program, record);
  if (!timeline.ok()) return timeline.status();
  AnalysisOptions analysis;
  analysis.summary = options;
  analysis.summaryOnly = true;
  return analyze(*timeline, analysis).summary;
}

// ---------------------------------------------------------------------------
// Text

namespace {

using text::bytes;
using text::percent;
using text::Table;
using text::us3;

/// Microseconds with about four significant digits, for prose.
std::string us(double value) {
  if (value < 10) return absl::StrFormat("%.3f", value);
  if (value < 100) return absl::StrFormat("%.2f", value);
  return absl::StrFormat("%.1f", value);
}


} // namespace

std::string singleBufferedNote(const Summary &s) {
  std::vector<std::string> keys;
  for (const GroupSummary &g : s.groups)
    if (g.singleBuffered) keys.push_back(g.key);
  if (keys.empty()) return "";
  return absl::StrCat("  single-buffered (no room in a local buffer for a second copy, so each "
                      "load waits for the compute before it): ",
                      absl::StrJoin(keys, ", "),
                      "; smaller tiles for their ops leave room to overlap loads with compute\n");
}

std::string derivedTilesText(const Summary &s) {
  if (s.derivedTiles.empty()) return "";
  std::vector<std::string> items;
  for (size_t i = 0; i < s.derivedTiles.size() && i < kDerivedTilesListed; ++i) {
    const passes::DerivedTile &t = s.derivedTiles[i];
    items.push_back(absl::StrCat(passes::derivedTileKindName(t.kind), " ", t.tile, " for ", t.ops,
                                 t.ops == 1 ? " op" : " ops", " (", t.rule, ")"));
  }
  if (s.derivedTiles.size() > kDerivedTilesListed)
    items.push_back(absl::StrCat("and ", s.derivedTiles.size() - kDerivedTilesListed,
                                 " more (summary.json lists them)"));
  return absl::StrCat("tiles: derived ", absl::StrJoin(items, "; "), "\n");
}

std::vector<std::string> criticalPathSteps(const CriticalPath &path) {
  std::vector<std::string> out;
  for (size_t i = 0; i < path.stepKeys.size();) {
    size_t j = i;
    while (j < path.stepKeys.size() && path.stepKeys[j] == path.stepKeys[i]) ++j;
    out.push_back(absl::StrCat(path.stepKeys[i], " x", j - i));
    i = j;
  }
  return out;
}

std::string criticalPathStepsText(const CriticalPath &path) {
  std::vector<std::string> steps = criticalPathSteps(path);
  if (steps.empty()) return "";
  if (steps.size() > kPathStepsListed) {
    // The start and the end of the chain, where it leaves and joins the run.
    constexpr size_t kTail = 3;
    size_t head = kPathStepsListed - kTail, hidden = steps.size() - head - kTail;
    steps.erase(steps.begin() + head, steps.end() - kTail);
    steps.insert(steps.begin() + head, absl::StrCat("(", hidden, " more)"));
  }
  return absl::StrCat("  steps: ", absl::StrJoin(steps, " -> "), "\n");
}

std::string loopsText(const Summary &s) {
  if (!s.loops) return "";
  const LoopSummary &l = *s.loops;
  std::string out = absl::StrFormat(
      "\nloops: %d stitch%s; control thread busy %s us; cores idle waiting for a stitch to be "
      "built %s us (%s of the span), built stitches waiting at the barrier %s us (%s)\n",
      l.stitches, l.stitches == 1 ? "" : "es", us(l.controlBusyUs), us(l.controlWaitUs),
      percent(l.controlWaitShare), us(l.barrierWaitUs), percent(l.barrierWaitShare));
  if (l.parallelism > 0)
    absl::StrAppendFormat(
        &out, "  parallel loops: %d iteration%s at once (%s)\n", l.parallelism,
        l.parallelism == 1 ? "" : "s",
        l.parallelismDerived
            ? "derived from the kernel and the device: device_sched_parallelism 0"
            : absl::StrCat("device_sched_parallelism ", l.parallelism));
  if (l.workspacePools > 0)
    absl::StrAppendFormat(
        &out,
        "  workspace: the iterations' own intermediates in %d pool%s of %s (%s), %s\n",
        l.workspacePools, l.workspacePools == 1 ? "" : "s", bytes(l.workspacePoolBytes),
        l.workspacePools == 1 ? "one for all iterations" : "one per parallel slot",
        l.workspaceWraps == 0
            ? "taken from the start by each stitch"
            : absl::StrCat("taken from the start by each stitch and ", l.workspaceWraps,
                           " time", l.workspaceWraps == 1 ? "" : "s",
                           " by an iteration that found its pool full"));
  Table bodies({"body", "hash", "iterations", "tasks", "busy_us", "active_us", "span_share"});
  for (const BodySummary &b : l.bodies)
    bodies.row({b.name, b.hash, absl::StrCat(b.iterations), absl::StrCat(b.tasks), us3(b.busyUs),
                us3(b.activeUs), percent(b.spanShare)});
  bodies.print(out, "  ");
  if (l.tasksOutsideBodies > 0)
    absl::StrAppendFormat(&out, "  %d task%s outside loop bodies\n", l.tasksOutsideBodies,
                          l.tasksOutsideBodies == 1 ? "" : "s");
  return out;
}

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
  out += derivedTilesText(s);

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
  // How much of each kind's busy time its reads spent waiting on the memory system.
  std::vector<std::string> stalls;
  for (const CoreKindSummary &k : s.coreKinds)
    if (k.readStallUs && k.tasks > 0)
      stalls.push_back(absl::StrFormat(
          "%s %s us (%s of busy; %s us waiting for fills other cores started; %s missed L2)",
          k.kind, us(*k.readStallUs), percent(k.busyUs > 0 ? *k.readStallUs / k.busyUs : 0),
          us(k.fillWaitUs), bytes(k.l2MissBytes)));
  if (!stalls.empty())
    absl::StrAppend(&out, "read stalls: ", absl::StrJoin(stalls, ", "), "\n");
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
  out += singleBufferedNote(s);

  out += "\nlongest tasks\n";
  Table top({"call", "sg", "group", "core", "start_us", "dur_us"}, /*labelColumn=*/false);
  for (const TaskSummary &t : s.topTasks)
    top.row({absl::StrCat(t.call), absl::StrCat(t.subgraph), t.group, t.core,
             us3(t.startUs), us3(t.durationUs)});
  top.print(out, "  ");

  const CriticalPath &path = s.criticalPath;
  absl::StrAppendFormat(&out, "\ncritical path: %s us (%s to %s us), %d task%s, busy %s us, "
                              "waiting %s us\n",
                        us(path.lengthUs), us(path.startUs), us(path.endUs), path.calls.size(),
                        path.calls.size() == 1 ? "" : "s", us(path.busyUs), us(path.waitUs));
  out += criticalPathStepsText(path);
  if (path.writeOrderEdges > 0)
    absl::StrAppendFormat(&out,
                          "  write order: along %d of its %d edges a task overwrites what the "
                          "one before wrote or read (in-place updates of one region: a real "
                          "chain; to shorten it, update disjoint regions or keep the running "
                          "value in one task)\n",
                          path.writeOrderEdges, int(path.calls.size()) - 1);
  out += loopsText(s);

  text::appendVerdicts(out, s.verdicts);
  return out;
}

} // namespace ptoc::profile
