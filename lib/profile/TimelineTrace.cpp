// Writing a timeline as a trace in ptoc's layout (TimelineTrace.h), one event per line.
#include "ptoc/profile/TimelineTrace.h"

#include <map>

#include "JsonNumbers.h"
#include "absl/strings/str_cat.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"

namespace ptoc::profile {

namespace {

// Process ids, in display order: the control lane above the cores.
constexpr int kControlPid = 1;
constexpr int kAicPid = 2;
constexpr int kAivPid = 3;

int pidOf(LaneKind kind) {
  return kind == LaneKind::Control ? kControlPid : kind == LaneKind::Aic ? kAicPid : kAivPid;
}

class Writer {
public:
  Writer(llvm::raw_ostream &os, const Timeline &t) : os_(os), t_(t) {}

  void write() {
    os_ << "{\"traceEvents\":[";
    writeLanes();
    writeTasks();
    writeFlows();
    os_ << "\n],\n\"displayTimeUnit\":\"ns\",\n\"otherData\":";
    writeOtherData();
    os_ << "}\n";
  }

private:
  template <typename Body> void event(Body &&body) {
    os_ << (first_ ? "\n" : ",\n");
    first_ = false;
    llvm::json::OStream json(os_);
    json.object([&] { body(json); });
  }
  void metadata(llvm::StringRef name, int pid, std::optional<int> tid, llvm::StringRef key,
                llvm::json::Value value) {
    event([&](llvm::json::OStream &json) {
      json.attribute("ph", "M");
      json.attribute("name", name);
      json.attribute("pid", pid);
      if (tid) json.attribute("tid", *tid);
      json.attributeObject("args", [&] { json.attribute(key, std::move(value)); });
    });
  }
  void time(llvm::json::OStream &json, llvm::StringRef key, double us) {
    json.attributeBegin(key);
    writeFixed(json, us, kUsDecimals);
    json.attributeEnd();
  }
  /// The tid of a lane: a core's index (the control lane 0).
  static int tidOf(const TimelineLane &lane) { return std::max(lane.core, 0); }

  void writeLanes() {
    bool control = false;
    for (const TimelineLane &lane : t_.lanes) control |= lane.kind == LaneKind::Control;
    if (control) metadata("process_name", kControlPid, std::nullopt, "name", "Control");
    for (LaneKind kind : {LaneKind::Aic, LaneKind::Aiv}) {
      metadata("process_name", pidOf(kind), std::nullopt, "name", laneKindLabel(kind));
      // Every core of the kind, so the page can show the idle ones too.
      std::map<int, std::string> names;
      for (int core = 0; core < t_.coresOf(kind); ++core) names[core] = t_.coreName(kind, core);
      for (const TimelineLane &lane : t_.lanes)
        if (lane.kind == kind) names[tidOf(lane)] = lane.name;
      for (const auto &[tid, name] : names)
        metadata("thread_name", pidOf(kind), tid, "name", name);
    }
    for (const TimelineLane &lane : t_.lanes)
      if (lane.kind == LaneKind::Control)
        metadata("thread_name", kControlPid, tidOf(lane), "name", lane.name);
  }

  void writeTasks() {
    for (size_t i = 0; i < t_.tasks.size(); ++i) {
      const TimelineTask &task = t_.tasks[i];
      const std::string &name = t_.nameOf(static_cast<int>(i));
      const TimelineLane &lane = t_.lanes[task.lane];
      const TimelineGroup *group = task.group >= 0 ? &t_.groups[task.group] : nullptr;
      bool control = lane.kind == LaneKind::Control;
      std::string key = control ? "control" : group ? group->key : "?";
      int order = control || !group ? -1 : t_.carries.hashOrders ? group->hashOrder : task.group;
      event([&](llvm::json::OStream &json) {
        json.attribute("ph", "X");
        json.attribute("name", name.empty() ? key : absl::StrCat(key, " ", name));
        json.attribute("cat", "task");
        json.attribute("pid", pidOf(lane.kind));
        json.attribute("tid", tidOf(lane));
        time(json, "ts", t_.toUs(task.start + lane.drawShift));
        time(json, "dur", t_.toUs(task.dur));
        json.attributeObject("args", [&] {
          json.attribute("call", static_cast<int64_t>(i));
          if (!name.empty()) json.attribute("name", name);
          json.attribute("group", key);
          json.attribute("hash_order", order);
          if (group && !group->leafHash.empty()) json.attribute("leaf_hash", group->leafHash);
          if (group && !group->rootHash.empty()) json.attribute("root_hash", group->rootHash);
          if (t_.carries.hashOrders) {
            json.attribute("subgraph", task.subgraph);
            json.attribute("leaf", task.leaf);
            json.attribute("group_size", group ? group->groupSize : 0);
          }
          if (control) json.attribute("control", true);
          if (task.ready && !control) time(json, "ready_us", t_.toUs(*task.ready + lane.drawShift));
          if (i < t_.blockTimes.size()) {
            time(json, "kernel_us", t_.toUs(t_.blockTimes[i].kernel));
            time(json, "setup_us", t_.toUs(t_.blockTimes[i].setup));
          }
          if (t_.carries.bytes) {
            json.attribute("bytes_in", task.bytesIn);
            json.attribute("bytes_out", task.bytesOut);
          }
          json.attribute("preds", static_cast<int64_t>(t_.predsOf(static_cast<int>(i)).size()));
        });
      });
    }
  }

  /// One pair per edge; each end names its task (args.call), as control nodes overlap
  /// and a time alone could not tell which one an arrow belongs to.
  void writeFlows() {
    int64_t id = 0;
    for (size_t c = 0; c < t_.tasks.size(); ++c)
      for (int p : t_.predsOf(static_cast<int>(c))) {
        ++id;
        auto end = [&](const char *phase, int task, double ticks) {
          const TimelineLane &lane = t_.lanes[t_.tasks[task].lane];
          event([&](llvm::json::OStream &json) {
            json.attribute("ph", phase);
            json.attribute("id", id);
            json.attribute("cat", "dep");
            json.attribute("name", "dep");
            if (phase[0] == 'f') json.attribute("bp", "e");
            json.attribute("pid", pidOf(lane.kind));
            json.attribute("tid", tidOf(lane));
            time(json, "ts", t_.toUs(ticks + lane.drawShift));
            json.attributeObject("args", [&] { json.attribute("call", task); });
          });
        };
        end("s", p, t_.tasks[p].end());
        end("f", static_cast<int>(c), t_.tasks[c].start);
      }
  }

  void writeOtherData() {
    llvm::json::OStream json(os_);
    json.object([&] {
      json.attribute("func", t_.func.empty() ? llvm::sys::path::filename(t_.source) : t_.func);
      json.attribute("device", t_.device.empty() ? "?" : t_.device);
      json.attribute("family", familyName(t_.family));
      json.attribute("aic_cores", t_.aicCores);
      json.attribute("aiv_cores", t_.aivCores);
      json.attribute("tasks", static_cast<int64_t>(t_.tasks.size()));
      json.attribute("edges", t_.edges());
      json.attribute("origin_us", t_.originUs);
      json.attributeArray("notes", [&] {
        for (const std::string &note : t_.notes) json.value(note);
      });
    });
  }

  llvm::raw_ostream &os_;
  const Timeline &t_;
  bool first_ = true;
};

} // namespace

absl::Status writeTimelineTrace(llvm::raw_ostream &os, const Timeline &timeline) {
  Writer(os, timeline).write();
  return absl::OkStatus();
}

} // namespace ptoc::profile
