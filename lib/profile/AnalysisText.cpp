// Rendering a trace analysis: aligned text tables (what `ptoc prof` prints) and
// analysis.json (keys documented in docs/profiling.md).
#include <algorithm>

#include "JsonNumbers.h"
#include "TextFormat.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"
#include "ptoc/profile/TraceAnalysis.h"

namespace ptoc::profile {

namespace {

using text::bytes;
using text::percent;
using text::Table;
using text::us3;

std::string groupKeyOf(int order) { return absl::StrCat("func0_", order); }

} // namespace

std::string analysisText(const Analysis &a) {
  const Summary &s = a.summary;
  std::string out;
  absl::StrAppendFormat(&out, "trace %s\n", a.source);
  absl::StrAppendFormat(&out, "simulated %s us (bound %s us, %.0f%% of roofline, limited by %s)\n",
                        us3(s.simulatedUs), us3(s.boundUs), 100 * s.ratio,
                        s.limiter.empty() ? "?" : s.limiter);
  absl::StrAppendFormat(&out, "func %s on %s, sched mode %d, %d tasks, %d edges\n", s.func,
                        s.device, s.schedMode, s.tasks, s.edges);
  absl::StrAppendFormat(&out, "head %s us, then span %s us (%.0f%% of roofline without the head)\n",
                        us3(s.headUs), us3(s.spanUs), 100 * s.spanRatio);
  if (!a.runSummary.empty())
    absl::StrAppendFormat(&out, "bound terms: cube %s us, vector %s us, hbm %s us; HBM read %s, "
                                "write %s (%s compulsory); L2 hit rate %s\n",
                          us3(s.cubeBoundUs), us3(s.vectorBoundUs), us3(s.hbmBoundUs),
                          bytes(s.hbmReadBytes), bytes(s.hbmWriteBytes),
                          bytes(s.compulsoryHbmBytes), percent(s.l2HitRate));
  absl::StrAppendFormat(&out, "bytes: copy-in %s, copy-out %s\n", bytes(s.copyInBytes),
                        bytes(s.copyOutBytes));

  out += "\ncores\n";
  Table cores({"kind", "count", "tasks", "used", "util", "busy_us", "idle_us", "sched_idle_us",
               "dep_idle_us", "tail_idle_us", "waves", "wave_idle"});
  for (size_t i = 0; i < s.coreKinds.size(); ++i) {
    const CoreKindSummary &k = s.coreKinds[i];
    const KindBubbles &b = a.kindBubbles[i];
    cores.row({k.kind, absl::StrCat(k.cores), absl::StrCat(k.tasks), absl::StrCat(k.coresUsed),
               percent(k.utilization), us3(k.busyUs), us3(k.idleUs), us3(b.schedIdleUs),
               us3(b.depIdleUs), us3(b.tailIdleUs), absl::StrCat(k.waves),
               percent(k.waveIdleShare)});
  }
  cores.print(out, "  ");

  out += "\ngroups\n";
  Table groups({"group", "core", "size", "tasks", "cores", "min_us", "avg_us", "max_us",
                "total_us", "share"});
  for (size_t i = 0; i < s.groups.size(); ++i) {
    const GroupSummary &g = s.groups[i];
    groups.row({g.key, g.core, absl::StrCat(g.groupSize), absl::StrCat(g.tasks),
                absl::StrCat(g.coresUsed), us3(g.minUs), us3(g.avgUs), us3(g.maxUs),
                us3(g.totalUs), percent(a.groupShares[i])});
  }
  groups.print(out, "  ");

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

  out += "\nlongest tasks\n";
  Table top({"call", "sg", "group", "core", "start_us", "dur_us"}, /*labelColumn=*/false);
  for (const TaskSummary &t : s.topTasks)
    top.row({absl::StrCat(t.call), absl::StrCat(t.subgraph), groupKeyOf(t.hashOrder), t.core,
             us3(t.startUs), us3(t.durationUs)});
  top.print(out, "  ");

  out += "\nlongest scheduling waits (ready -> start)\n";
  Table waits({"call", "sg", "group", "core", "ready_us", "start_us", "sched_wait_us",
               "dep_wait_us"},
              /*labelColumn=*/false);
  for (const TaskWait &w : a.topWaits)
    waits.row({absl::StrCat(w.call), absl::StrCat(w.subgraph), groupKeyOf(w.hashOrder), w.core,
               us3(w.readyUs), us3(w.startUs), us3(w.schedWaitUs), us3(w.depWaitUs)});
  waits.print(out, "  ");

  const CriticalPath &path = s.criticalPath;
  absl::StrAppendFormat(&out, "\ncritical path: %s us (%s of the span; %s to %s us), %d task%s, "
                              "busy %s us, waiting %s us\n",
                        us3(path.lengthUs), percent(a.criticalPathShare), us3(path.startUs),
                        us3(path.endUs), path.calls.size(), path.calls.size() == 1 ? "" : "s",
                        us3(path.busyUs), us3(path.waitUs));
  if (!path.hashOrders.empty()) {
    std::vector<std::string> steps;
    for (const auto &[order, count] : path.hashOrders)
      steps.push_back(absl::StrCat(groupKeyOf(order), " x", count));
    absl::StrAppend(&out, "  groups on it: ", absl::StrJoin(steps, " -> "), "\n");
  }

  text::appendVerdicts(out, a.verdicts);
  return out;
}

std::string analysisJson(const Analysis &a) {
  const Summary &s = a.summary;
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
  constexpr int kGBpsDecimals = 3;

  json.object([&] {
    json.attribute("source", a.source);
    json.attributeBegin("run_summary");
    if (a.runSummary.empty())
      json.value(nullptr);
    else
      json.value(a.runSummary);
    json.attributeEnd();
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
      for (size_t i = 0; i < s.coreKinds.size(); ++i) {
        const CoreKindSummary &k = s.coreKinds[i];
        const KindBubbles &b = a.kindBubbles[i];
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
          usKey("sched_idle_us", b.schedIdleUs);
          usKey("dep_idle_us", b.depIdleUs);
          usKey("tail_idle_us", b.tailIdleUs);
          usKey("sched_wait_us", b.schedWaitUs);
        });
      }
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
    json.attributeArray("groups", [&] {
      for (size_t i = 0; i < s.groups.size(); ++i) {
        const GroupSummary &g = s.groups[i];
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
          ratioKey("share", a.groupShares[i]);
        });
      }
    });
    json.attributeObject("bubbles", [&] {
      json.attributeArray("per_core", [&] {
        for (const CoreBubbles &b : a.coreBubbles)
          json.object([&] {
            json.attribute("core", b.core);
            json.attribute("kind", b.kind);
            json.attribute("tasks", b.tasks);
            usKey("busy_us", b.busyUs);
            usKey("sched_idle_us", b.schedIdleUs);
            usKey("dep_idle_us", b.depIdleUs);
            usKey("tail_idle_us", b.tailIdleUs);
            usKey("sched_wait_us", b.schedWaitUs);
          });
      });
      json.attributeArray("top_sched_waits", [&] {
        for (const TaskWait &w : a.topWaits)
          json.object([&] {
            json.attribute("call", w.call);
            json.attribute("subgraph", w.subgraph);
            json.attribute("hash_order", w.hashOrder);
            json.attribute("core", w.core);
            usKey("ready_us", w.readyUs);
            usKey("start_us", w.startUs);
            usKey("sched_wait_us", w.schedWaitUs);
            usKey("dep_wait_us", w.depWaitUs);
          });
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
      ratioKey("share_of_span", a.criticalPathShare);
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
    json.attributeBegin("pipes");
    if (!a.hasPipes) {
      json.value(nullptr);
    } else {
      json.object([&] {
        json.attributeArray("per_pipe", [&] {
          for (const PipeSummary &p : a.pipes)
            json.object([&] {
              json.attribute("kind", p.kind);
              json.attribute("pipe", p.pipe);
              json.attribute("transfer", p.transfer);
              json.attribute("events", p.events);
              usKey("busy_us", p.busyUs);
              ratioKey("utilisation", p.utilization);
              json.attribute("bytes", p.bytes);
              fixed("busy_gbps", p.busyGBps, kGBpsDecimals);
              fixed("span_gbps", p.spanGBps, kGBpsDecimals);
            });
        });
        json.attributeArray("per_kind", [&] {
          for (const PipeKindSummary &pk : a.pipeKinds)
            json.object([&] {
              json.attribute("kind", pk.kind);
              usKey("transfer_us", pk.transferUs);
              usKey("compute_us", pk.computeUs);
              ratioKey("transfer_share", pk.transferShare);
              usKey("transfer_union_us", pk.transferUnionUs);
              usKey("compute_union_us", pk.computeUnionUs);
              usKey("overlap_us", pk.overlapUs);
              ratioKey("overlap_share", pk.overlapShare);
            });
        });
      });
    }
    json.attributeEnd();
    text::writeVerdicts(json, a.verdicts);
  });
  os << "\n";
  os.flush();
  return text;
}

} // namespace ptoc::profile
