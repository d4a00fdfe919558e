// The one JSON writer of run numbers: summary.json (a simulation's Summary) and
// analysis.json (an Analysis of any timeline) are written by the same code, so a key
// shared by both is declared once. analysis.json adds the bubbles, shares, pipes and,
// after the verdicts, what the timeline's family carries (docs/profiling.md keys);
// numbers the timeline cannot give are null.
#include "JsonNumbers.h"
#include "TextFormat.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"
#include "ptoc/profile/Summary.h"
#include "ptoc/profile/TraceAnalysis.h"

namespace ptoc::profile {

namespace {

constexpr int kGBpsDecimals = 3;

class RunJsonWriter {
public:
  /// `analysis` null: summary.json's keys.
  RunJsonWriter(llvm::json::OStream &json, const Summary &s, const Analysis *analysis)
      : json_(json), s_(s), a_(analysis), c_(s.carries) {}

  void write() {
    json_.object([&] {
      if (a_) {
        json_.attribute("source", a_->source);
        stringOrNull("run_summary", a_->runSummary);
      }
      writeRun();
      writeCores();
      writeBytes();
      if (!a_ && s_.hasPipes)
        json_.attributeObject("pipes", [&] {
          us("transfer_us", s_.transferPipeUs);
          us("compute_us", s_.computePipeUs);
        });
      writeGroups();
      if (a_) writeBubbles();
      writeTopTasks();
      writeCriticalPath();
      if (a_) writePipes();
      text::writeVerdicts(json_, a_ ? a_->verdicts : s_.verdicts);
      if (a_) writeFamily();
      writeLoops();
      if (!a_) writeDerivedTiles();
    });
  }

private:
  void fixed(llvm::StringRef key, double value, int decimals) {
    json_.attributeBegin(key);
    writeFixed(json_, value, decimals);
    json_.attributeEnd();
  }
  void us(llvm::StringRef key, double value) { fixed(key, value, kUsDecimals); }
  void ratio(llvm::StringRef key, double value) { fixed(key, value, kRatioDecimals); }
  void null(llvm::StringRef key) { json_.attribute(key, nullptr); }
  /// `value` when `known`, else null.
  void usIf(bool known, llvm::StringRef key, double value) { known ? us(key, value) : null(key); }
  void ratioIf(bool known, llvm::StringRef key, double value) {
    known ? ratio(key, value) : null(key);
  }
  template <typename T> void intIf(bool known, llvm::StringRef key, T value) {
    if (known) json_.attribute(key, value);
    else null(key);
  }
  void stringOrNull(llvm::StringRef key, const std::string &value) {
    if (value.empty()) null(key);
    else json_.attribute(key, value);
  }

  void writeRun() {
    stringOrNull("func", s_.func);
    stringOrNull("device", s_.device);
    intIf(c_.schedMode, "sched_mode", s_.schedMode);
    if (s_.clockMHz > 0) fixed("clock_mhz", s_.clockMHz, kRatioDecimals);
    else null("clock_mhz");
    json_.attribute("tasks", s_.tasks);
    json_.attribute("edges", s_.edges);
    usIf(c_.bound, "simulated_us", s_.simulatedUs);
    usIf(c_.bound, "head_us", s_.headUs);
    usIf(c_.commonClock, "span_us", s_.spanUs);
    usIf(c_.bound, "bound_us", s_.boundUs);
    ratioIf(c_.bound, "ratio", s_.ratio);
    ratioIf(c_.bound, "span_ratio", s_.spanRatio);
    if (c_.bound) json_.attribute("limiter", s_.limiter);
    else null("limiter");
    if (!c_.bound) {
      null("bound");
      return;
    }
    json_.attributeObject("bound", [&] {
      us("cube_us", s_.cubeBoundUs);
      us("vector_us", s_.vectorBoundUs);
      us("hbm_us", s_.hbmBoundUs);
      us("head_us", s_.headUs);
      json_.attribute("compulsory_hbm_bytes", s_.compulsoryHbmBytes);
    });
  }

  void writeCores() {
    bool clock = c_.commonClock;
    json_.attributeArray("cores", [&] {
      for (size_t i = 0; i < s_.coreKinds.size(); ++i) {
        const CoreKindSummary &k = s_.coreKinds[i];
        json_.object([&] {
          json_.attribute("kind", k.kind);
          json_.attribute("cores", k.cores);
          json_.attribute("tasks", k.tasks);
          json_.attribute("cores_used", k.coresUsed);
          ratioIf(clock, "utilisation", k.utilization);
          us("busy_us", k.busyUs);
          usIf(clock, "idle_us", k.idleUs);
          usIf(clock, "window_us", k.windowUs);
          ratioIf(clock, "window_idle_share", k.windowIdleShare);
          intIf(clock, "waves", k.waves);
          ratioIf(clock, "wave_idle_share", k.waveIdleShare);
          usIf(k.readStallUs.has_value(), "read_stall_us", k.readStallUs.value_or(0));
          usIf(k.readStallUs.has_value(), "fill_wait_us", k.fillWaitUs);
          intIf(c_.bytes, "l2_miss_bytes", k.l2MissBytes);
          if (!a_) return;
          bool bubbles = a_->hasBubbles && i < a_->kindBubbles.size();
          const KindBubbles *b = bubbles ? &a_->kindBubbles[i] : nullptr;
          bool ready = bubbles && c_.readyTimes;
          usIf(ready, "sched_idle_us", b ? b->schedIdleUs : 0);
          usIf(ready, "dep_idle_us", b ? b->depIdleUs : 0);
          usIf(bubbles, "tail_idle_us", b ? b->tailIdleUs : 0);
          usIf(ready, "sched_wait_us", b ? b->schedWaitUs : 0);
          intIf(c_.edges, "phases", k.phases);
        });
      }
    });
  }

  void writeBytes() {
    if (!c_.bytes) {
      null("bytes");
      return;
    }
    json_.attributeObject("bytes", [&] {
      json_.attribute("copy_in", s_.copyInBytes);
      json_.attribute("copy_out", s_.copyOutBytes);
      json_.attribute("hbm_read", s_.hbmReadBytes);
      json_.attribute("hbm_write", s_.hbmWriteBytes);
      json_.attribute("l2_hit", s_.l2HitBytes);
      json_.attribute("l2_miss", s_.l2MissBytes);
      ratio("l2_hit_rate", s_.l2HitRate);
    });
  }

  void writeGroups() {
    bool roots = a_ && !a_->roots.empty();
    json_.attributeArray("groups", [&] {
      for (size_t i = 0; i < s_.groups.size(); ++i) {
        const GroupSummary &g = s_.groups[i];
        json_.object([&] {
          json_.attribute("key", g.key);
          intIf(c_.hashOrders, "hash_order", g.hashOrder);
          json_.attribute("core", g.core);
          json_.attribute("hash", g.hash);
          if (roots) json_.attribute("root_hash", g.rootHash);
          intIf(c_.hashOrders, "group_size", g.groupSize);
          if (c_.hashOrders) json_.attribute("single_buffered", g.singleBuffered);
          json_.attribute("tasks", g.tasks);
          json_.attribute("cores_used", g.coresUsed);
          us("min_us", g.minUs);
          us("avg_us", g.avgUs);
          us("max_us", g.maxUs);
          us("total_us", g.totalUs);
          if (a_) ratio("share", a_->groupShares[i]);
        });
      }
    });
  }

  void writeBubbles() {
    if (!a_->hasBubbles) {
      null("bubbles");
      return;
    }
    bool ready = c_.readyTimes;
    json_.attributeObject("bubbles", [&] {
      json_.attributeArray("per_core", [&] {
        for (const CoreBubbles &b : a_->coreBubbles)
          json_.object([&] {
            json_.attribute("core", b.core);
            json_.attribute("kind", b.kind);
            json_.attribute("tasks", b.tasks);
            us("busy_us", b.busyUs);
            usIf(ready, "sched_idle_us", b.schedIdleUs);
            usIf(ready, "dep_idle_us", b.depIdleUs);
            us("tail_idle_us", b.tailIdleUs);
            usIf(ready, "sched_wait_us", b.schedWaitUs);
          });
      });
      json_.attributeArray("top_sched_waits", [&] {
        if (!ready) return;
        for (const TaskWait &w : a_->topWaits)
          json_.object([&] {
            taskIdentity(w.call, w.name, w.group, w.subgraph, w.hashOrder, w.core);
            us("ready_us", w.readyUs);
            us("start_us", w.startUs);
            us("sched_wait_us", w.schedWaitUs);
            us("dep_wait_us", w.depWaitUs);
          });
      });
    });
  }

  /// The members that name a task in top_tasks and top_sched_waits: a ptoc task by its
  /// hash order, a device trace's by its group (and its name when it has one).
  void taskIdentity(int call, const std::string &name, const std::string &group, int subgraph,
                    int hashOrder, const std::string &core) {
    json_.attribute("call", call);
    if (!name.empty()) json_.attribute("name", name);
    if (!c_.hashOrders) json_.attribute("group", group);
    json_.attribute("subgraph", subgraph);
    intIf(c_.hashOrders, "hash_order", hashOrder);
    json_.attribute("core", core);
  }

  void writeTopTasks() {
    json_.attributeArray("top_tasks", [&] {
      for (const TaskSummary &t : s_.topTasks)
        json_.object([&] {
          taskIdentity(t.call, t.name, t.group, t.subgraph, t.hashOrder, t.core);
          us("start_us", t.startUs);
          us("dur_us", t.durationUs);
        });
    });
  }

  void writeCriticalPath() {
    if (!c_.commonClock) {
      null("critical_path");
      return;
    }
    const CriticalPath &path = s_.criticalPath;
    json_.attributeObject("critical_path", [&] {
      us("length_us", path.lengthUs);
      if (a_) ratio("share_of_span", a_->criticalPathShare);
      us("start_us", path.startUs);
      us("end_us", path.endUs);
      us("busy_us", path.busyUs);
      us("wait_us", path.waitUs);
      json_.attribute("tasks", static_cast<int64_t>(path.calls.size()));
      if (c_.controlNodes) json_.attribute("control_nodes", path.controlNodes);
      if (!a_) json_.attribute("write_order_edges", static_cast<int64_t>(path.writeOrderEdges));
      json_.attributeArray("calls", [&] {
        for (int c : path.calls) json_.value(c);
      });
      if (c_.hashOrders) {
        json_.attributeArray("hash_orders", [&] {
          for (const auto &entry : path.hashOrders)
            json_.object([&] {
              json_.attribute("hash_order", entry.first);
              json_.attribute("tasks", entry.second);
            });
        });
      } else {
        json_.attributeArray("groups", [&] {
          for (size_t i = 0; i < path.hashOrders.size(); ++i)
            json_.object([&] {
              json_.attribute("key", path.groupKeys[i]);
              json_.attribute("tasks", path.hashOrders[i].second);
            });
        });
      }
    });
  }

  void writePipes() {
    if (!a_->hasPipes) {
      null("pipes");
      return;
    }
    json_.attributeObject("pipes", [&] {
      json_.attributeArray("per_pipe", [&] {
        for (const PipeSummary &p : a_->pipes)
          json_.object([&] {
            json_.attribute("kind", p.kind);
            json_.attribute("pipe", p.pipe);
            json_.attribute("transfer", p.transfer);
            json_.attribute("events", p.events);
            us("busy_us", p.busyUs);
            ratio("utilisation", p.utilization);
            json_.attribute("bytes", p.bytes);
            fixed("busy_gbps", p.busyGBps, kGBpsDecimals);
            fixed("span_gbps", p.spanGBps, kGBpsDecimals);
          });
      });
      json_.attributeArray("per_kind", [&] {
        for (const PipeKindSummary &pk : a_->pipeKinds)
          json_.object([&] {
            json_.attribute("kind", pk.kind);
            us("transfer_us", pk.transferUs);
            us("compute_us", pk.computeUs);
            ratio("transfer_share", pk.transferShare);
            us("transfer_union_us", pk.transferUnionUs);
            us("compute_union_us", pk.computeUnionUs);
            us("overlap_us", pk.overlapUs);
            ratio("overlap_share", pk.overlapShare);
          });
      });
    });
  }

  /// Loops (null for a run without them): the control thread and the bodies.
  /// The tile shapes the compile derived (a run's summary only).
  void writeDerivedTiles() {
    json_.attributeArray("derived_tiles", [&] {
      for (const passes::DerivedTile &t : s_.derivedTiles)
        json_.object([&] {
          json_.attribute("kind", passes::derivedTileKindName(t.kind));
          json_.attribute("tile", t.tile);
          json_.attribute("ops", t.ops);
          json_.attribute("first_op", t.firstOp);
          json_.attribute("func", t.func);
          json_.attribute("tiles", t.tiles);
          json_.attribute("rule", t.rule);
        });
    });
  }

  void writeLoops() {
    if (!s_.loops) {
      null("loops");
      return;
    }
    const LoopSummary &l = *s_.loops;
    json_.attributeObject("loops", [&] {
      json_.attribute("stitches", l.stitches);
      us("control_busy_us", l.controlBusyUs);
      us("control_wait_us", l.controlWaitUs);
      ratio("control_wait_share", l.controlWaitShare);
      us("barrier_wait_us", l.barrierWaitUs);
      ratio("barrier_wait_share", l.barrierWaitShare);
      json_.attribute("parallelism", l.parallelism);
      json_.attribute("parallelism_derived", l.parallelismDerived);
      json_.attribute("workspace_pools", static_cast<int64_t>(l.workspacePools));
      json_.attribute("workspace_pool_bytes", l.workspacePoolBytes);
      json_.attribute("workspace_wraps", l.workspaceWraps);
      json_.attribute("tasks_outside_bodies", l.tasksOutsideBodies);
      json_.attributeArray("bodies", [&] {
        for (const BodySummary &b : l.bodies)
          json_.object([&] {
            json_.attribute("name", b.name);
            json_.attribute("hash", b.hash);
            json_.attribute("iterations", b.iterations);
            json_.attribute("tasks", b.tasks);
            us("busy_us", b.busyUs);
            us("active_us", b.activeUs);
            ratio("span_share", b.spanShare);
          });
      });
    });
  }

  /// What the family carries, the reader's notes, and the family's own sections.
  void writeFamily() {
    json_.attribute("family", familyName(s_.family));
    json_.attributeObject("carries", [&] {
      json_.attribute("common_clock", c_.commonClock);
      json_.attribute("edges", c_.edges);
      json_.attribute("ready_times", c_.readyTimes);
      json_.attribute("ready_from_edges", c_.readyFromEdges);
      json_.attribute("bytes", c_.bytes);
      json_.attribute("read_stalls", c_.readStalls);
      json_.attribute("bound", c_.bound);
      json_.attribute("sched_mode", c_.schedMode);
      json_.attribute("device_cores", c_.deviceCores);
      json_.attribute("hash_orders", c_.hashOrders);
      json_.attribute("pipes", c_.pipes);
      json_.attribute("block_split", c_.blockSplit);
      json_.attribute("control_nodes", c_.controlNodes);
    });
    json_.attributeArray("notes", [&] {
      for (const std::string &note : a_->notes) json_.value(note);
    });
    if (a_->control) {
      json_.attributeObject("control", [&] {
        json_.attribute("nodes", a_->control->nodes);
        us("span_with_control_us", a_->control->spanWithControlUs);
      });
    } else {
      null("control");
    }
    json_.attributeArray("roots", [&] {
      for (const RootSummary &r : a_->roots)
        json_.object([&] {
          json_.attribute("root_hash", r.rootHash);
          json_.attribute("tasks", r.tasks);
          json_.attribute("control_nodes", r.controlNodes);
          us("busy_us", r.busyUs);
        });
    });
    if (!c_.blockSplit) {
      null("blocks");
      return;
    }
    json_.attributeArray("blocks", [&] {
      for (const BlockSummary &b : a_->blocks)
        json_.object([&] {
          json_.attribute("task", b.task);
          json_.attribute("core", b.core);
          json_.attribute("blocks", b.blocks);
          us("min_kernel_us", b.minKernelUs);
          us("mean_kernel_us", b.meanKernelUs);
          us("max_kernel_us", b.maxKernelUs);
          us("kernel_us", b.kernelUs);
          us("setup_us", b.setupUs);
          ratio("setup_share", b.setupShare);
          ratio("imbalance", b.imbalance);
          json_.attribute("slowest_core", b.slowestCore);
        });
    });
  }

  llvm::json::OStream &json_;
  const Summary &s_;
  const Analysis *a_;
  const TimelineCarries &c_;
};

std::string render(const Summary &s, const Analysis *analysis) {
  std::string text;
  llvm::raw_string_ostream os(text);
  constexpr unsigned kIndent = 2;
  llvm::json::OStream json(os, kIndent);
  RunJsonWriter(json, s, analysis).write();
  os << "\n";
  os.flush();
  return text;
}

} // namespace

std::string summaryJson(const Summary &summary) { return render(summary, nullptr); }

std::string analysisJson(const Analysis &analysis) {
  return render(analysis.summary, &analysis);
}

} // namespace ptoc::profile
