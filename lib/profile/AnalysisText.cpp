// Rendering an analysis as aligned text tables (what `ptoc prof` prints). Numbers the
// timeline's family does not carry print as "-"; analysis.json is AnalysisJson.cpp.
#include <algorithm>

#include "TextFormat.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "ptoc/profile/TraceAnalysis.h"

namespace ptoc::profile {

namespace {

using text::bytes;
using text::percent;
using text::Table;
using text::us3;

std::string familyTitle(TimelineFamily family) {
  switch (family) {
  case TimelineFamily::PtocRun: return "a ptoc simulation";
  case TimelineFamily::PtocTrace: return "a ptoc simulation's trace";
  case TimelineFamily::MachineView: return "PyPTO Machine View of a device run";
  case TimelineFamily::WorkerView: return "PyPTO Worker View of a device run";
  }
  return "?";
}

/// The first lines: what ran, for how long, against what.
void appendHeader(std::string &out, const Analysis &a) {
  const Summary &s = a.summary;
  const TimelineCarries &c = s.carries;
  if (c.bound) {
    absl::StrAppendFormat(&out, "trace %s\n", a.source);
    absl::StrAppendFormat(&out,
                          "simulated %s us (bound %s us, %.0f%% of roofline, limited by %s)\n",
                          us3(s.simulatedUs), us3(s.boundUs), 100 * s.ratio,
                          s.limiter.empty() ? "?" : s.limiter);
    absl::StrAppendFormat(&out, "func %s on %s, sched mode %d, %d tasks, %d edges\n", s.func,
                          s.device, s.schedMode, s.tasks, s.edges);
    absl::StrAppendFormat(&out,
                          "head %s us, then span %s us (%.0f%% of roofline without the head)\n",
                          us3(s.headUs), us3(s.spanUs), 100 * s.spanRatio);
    if (!a.runSummary.empty())
      absl::StrAppendFormat(&out,
                            "bound terms: cube %s us, vector %s us, hbm %s us; HBM read %s, "
                            "write %s (%s compulsory); L2 hit rate %s\n",
                            us3(s.cubeBoundUs), us3(s.vectorBoundUs), us3(s.hbmBoundUs),
                            bytes(s.hbmReadBytes), bytes(s.hbmWriteBytes),
                            bytes(s.compulsoryHbmBytes), percent(s.l2HitRate));
    absl::StrAppendFormat(&out, "bytes: copy-in %s, copy-out %s\n", bytes(s.copyInBytes),
                          bytes(s.copyOutBytes));
    return;
  }
  absl::StrAppendFormat(&out, "trace %s (%s)\n", a.source, familyTitle(a.family));
  if (c.commonClock) {
    absl::StrAppendFormat(&out, "measured span %s us (first task start to last task end",
                          us3(s.spanUs));
    if (a.control)
      absl::StrAppendFormat(&out, "; %s us with the control lane",
                            us3(a.control->spanWithControlUs));
    out += ")\n";
  } else {
    out += "no common clock: each core's times count from its own origin, so spans, "
           "utilisation, bubbles and the critical path across cores are not known\n";
  }
  absl::StrAppendFormat(&out, "device %s, %d tasks on cores", s.device.empty() ? "?" : s.device,
                        s.tasks);
  if (a.control) absl::StrAppendFormat(&out, " + %d control nodes", a.control->nodes);
  absl::StrAppendFormat(&out, ", %d edges\n", s.edges);
  for (const std::string &note : a.notes) absl::StrAppend(&out, "note: ", note, "\n");
}

/// A number the family carries, else "-".
std::string maybe(bool known, const std::string &text) { return known ? text : "-"; }

} // namespace

std::string analysisText(const Analysis &a) {
  const Summary &s = a.summary;
  const TimelineCarries &c = s.carries;
  bool clock = c.commonClock, ready = c.readyTimes && a.hasBubbles;
  std::string out;
  appendHeader(out, a);

  out += "\ncores\n";
  Table cores({"kind", "count", "tasks", "used", "util", "busy_us", "idle_us", "sched_idle_us",
               "dep_idle_us", "tail_idle_us", "waves", "wave_idle", "phases"});
  for (size_t i = 0; i < s.coreKinds.size(); ++i) {
    const CoreKindSummary &k = s.coreKinds[i];
    const KindBubbles *b = i < a.kindBubbles.size() ? &a.kindBubbles[i] : nullptr;
    cores.row({k.kind, absl::StrCat(k.cores), absl::StrCat(k.tasks), absl::StrCat(k.coresUsed),
               maybe(clock, percent(k.utilization)), us3(k.busyUs), maybe(clock, us3(k.idleUs)),
               maybe(ready && b, b ? us3(b->schedIdleUs) : ""),
               maybe(ready && b, b ? us3(b->depIdleUs) : ""),
               maybe(a.hasBubbles && b, b ? us3(b->tailIdleUs) : ""),
               maybe(clock, absl::StrCat(k.waves)), maybe(clock, percent(k.waveIdleShare)),
               maybe(c.edges, absl::StrCat(k.phases))});
  }
  cores.print(out, "  ");

  out += c.hashOrders   ? "\ngroups\n"
         : c.blockSplit ? "\ngroups (the blocks of each task)\n"
                        : "\ngroups (by leaf hash)\n";
  Table groups({"group", "core", "size", "tasks", "cores", "min_us", "avg_us", "max_us",
                "total_us", "share"});
  for (size_t i = 0; i < s.groups.size(); ++i) {
    const GroupSummary &g = s.groups[i];
    groups.row({g.key, g.core, maybe(c.hashOrders, absl::StrCat(g.groupSize)),
                absl::StrCat(g.tasks), absl::StrCat(g.coresUsed), us3(g.minUs), us3(g.avgUs),
                us3(g.maxUs), us3(g.totalUs), percent(a.groupShares[i])});
  }
  groups.print(out, "  ");
  out += singleBufferedNote(s);

  if (a.roots.size() > 1 || (a.roots.size() == 1 && a.control)) {
    out += "\nroot functions\n";
    Table roots({"root_hash", "tasks", "control_nodes", "busy_us"});
    for (const RootSummary &r : a.roots)
      roots.row({r.rootHash, absl::StrCat(r.tasks), absl::StrCat(r.controlNodes), us3(r.busyUs)});
    roots.print(out, "  ");
  }

  if (!a.blocks.empty()) {
    out += "\nblocks (kernel vs local setup per task)\n";
    Table blocks({"task", "core", "blocks", "min_kernel_us", "mean_kernel_us", "max_kernel_us",
                  "setup_us", "setup_share", "imbalance", "slowest"});
    for (const BlockSummary &b : a.blocks)
      blocks.row({b.task, b.core, absl::StrCat(b.blocks), us3(b.minKernelUs),
                  us3(b.meanKernelUs), us3(b.maxKernelUs), us3(b.setupUs),
                  percent(b.setupShare), percent(b.imbalance), b.slowestCore});
    blocks.print(out, "  ");
  }

  if (a.hasPipes) {
    out += "\npipes (summed over the cores of a kind)\n";
    Table pipes({"kind", "pipe", "type", "events", "busy_us", "util", "bytes", "busy_GB/s",
                 "span_GB/s"});
    for (const PipeSummary &p : a.pipes)
      pipes.row({p.kind, p.pipe, p.transfer ? "transfer" : "compute", absl::StrCat(p.events),
                 us3(p.busyUs), percent(p.utilization), p.transfer ? bytes(p.bytes) : "-",
                 p.transfer ? absl::StrFormat("%.1f", p.busyGBps) : "-",
                 p.transfer ? absl::StrFormat("%.1f", p.spanGBps) : "-"});
    pipes.print(out, "  ");
    for (const PipeKindSummary &pk : a.pipeKinds)
      absl::StrAppendFormat(&out, "  %s: transfer %s us vs compute %s us (transfer share %s), "
                                  "overlap %s us (%s of the shorter)\n",
                            pk.kind, us3(pk.transferUs), us3(pk.computeUs),
                            percent(pk.transferShare), us3(pk.overlapUs),
                            percent(pk.overlapShare));
  }

  bool named = c.controlNodes || c.blockSplit;
  out += "\nlongest tasks\n";
  // Without a common clock a start is measured on its own core (TaskSummary::startUs).
  const char *start = clock ? "start_us" : "start_on_core_us";
  Table top({"call", named ? "name" : "sg", "group", "core", start, "dur_us"},
            /*labelColumn=*/false);
  for (const TaskSummary &t : s.topTasks)
    top.row({absl::StrCat(t.call), named ? t.name : absl::StrCat(t.subgraph), t.group, t.core,
             us3(t.startUs), us3(t.durationUs)});
  top.print(out, "  ");
  if (!clock)
    out += "  (start_on_core_us: from the first block on the same core; each core's clock has "
           "its own origin)\n";

  if (ready) {
    out += "\nlongest scheduling waits (ready -> start)\n";
    std::vector<std::string> header = {"call",     "sg",       "group",         "core",
                                       "ready_us", "start_us", "sched_wait_us", "dep_wait_us"};
    if (named) header[1] = "name";
    Table waits(header, /*labelColumn=*/false);
    for (const TaskWait &w : a.topWaits)
      waits.row({absl::StrCat(w.call), named ? w.name : absl::StrCat(w.subgraph), w.group,
                 w.core, us3(w.readyUs), us3(w.startUs), us3(w.schedWaitUs), us3(w.depWaitUs)});
    waits.print(out, "  ");
  }

  if (clock) {
    const CriticalPath &path = s.criticalPath;
    absl::StrAppendFormat(&out, "\ncritical path: %s us (%s of the span; %s to %s us), %d task%s",
                          us3(path.lengthUs), percent(a.criticalPathShare), us3(path.startUs),
                          us3(path.endUs), path.calls.size(), path.calls.size() == 1 ? "" : "s");
    if (path.controlNodes > 0)
      absl::StrAppendFormat(&out, " (%d of them control nodes)", path.controlNodes);
    absl::StrAppendFormat(&out, ", busy %s us, waiting %s us\n", us3(path.busyUs),
                          us3(path.waitUs));
    out += criticalPathStepsText(path);
  }
  out += loopsText(s);

  text::appendVerdicts(out, a.verdicts);
  return out;
}

} // namespace ptoc::profile
