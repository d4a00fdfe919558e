// Reading PyPTO's "Machine View" trace of a device run into a Timeline: one process,
// a lane per core that ran (AIC_1.., then AIV_<AIC count + 1>.., numbered across both
// kinds from 1), a "Fake Core_0" lane of control nodes, each task's ids in an
// "event-hint" string, dependencies as flows "machine-view-last-dep", absolute
// device-clock microseconds. Tasks are grouped by leaf hash; ready times are derived
// from the flows.
#include <algorithm>
#include <limits>
#include <tuple>

#include "PyptoScan.h"
#include "TraceFamilies.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace ptoc::profile {

namespace {

constexpr const char *kFlowCategory = "machine-view-last-dep";
/// How far a flow end may lie outside its slice and still bind to it (us). PyPTO writes
/// device times with two decimals (10 ns), and at the ~2.4e12 us of a device clock a
/// double resolves only about 0.5 ns, so an end written as "the slice's end" can read
/// a few tenths of a nanosecond past it; 50 ns leaves room for coarser clocks without
/// reaching a neighbouring task (real tasks last microseconds).
constexpr double kFlowSlackUs = 0.05;

/// A task's ids from its event-hint ("Task:[0-1-53], rootHash:..., leafHash:...").
struct Hint {
  std::string task, rootHash, leafHash;
};

Hint hintOf(const PyptoSlice &slice) {
  std::map<std::string, std::string> fields = parsePyptoHint(slice.hint);
  Hint hint;
  hint.task = fields.count("Task") ? fields["Task"] : slice.name;
  hint.rootHash = fields.count("rootHash") ? fields["rootHash"] : "";
  hint.leafHash = fields.count("leafHash") ? fields["leafHash"] : "";
  return hint;
}

class Reader {
public:
  Reader(llvm::StringRef name, const TraceReadOptions &options)
      : name_(name.str()), options_(options) {}

  absl::StatusOr<Timeline> read(llvm::StringRef text) {
    absl::StatusOr<PyptoEvents> events = scanPyptoEvents(text, name_, kFlowCategory);
    if (!events.ok()) return events.status();
    ev_ = std::move(*events);
    t_.family = TimelineFamily::MachineView;
    t_.source = name_;
    if (options_.device) t_.device = options_.device->name;
    if (absl::Status s = readTasks(); !s.ok()) return s;
    if (absl::Status s = numberPyptoCores(t_, /*first=*/1, laneNumbers_, options_.device, name_);
        !s.ok())
      return s;
    if (absl::Status s = bindFlows(); !s.ok()) return s;
    deriveReadyTimes();
    describe();
    return std::move(t_);
  }

private:
  absl::Status error(const std::string &message) const { return pyptoTraceError(name_, message); }
  absl::Status eventError(size_t index, llvm::StringRef label, const std::string &message) const {
    return pyptoEventError(name_, index, label, message);
  }

  /// The timeline lane of a trace lane, created on first use.
  absl::StatusOr<int> laneOf(PyptoLaneKey key, size_t event, llvm::StringRef label) {
    auto found = laneIndex_.find(key);
    if (found != laneIndex_.end()) return found->second;
    const std::string &laneName = ev_.laneNames.at(key);
    std::optional<PyptoLane> lane = parsePyptoLane(laneName);
    if (!lane || (lane->kind != LaneKind::Control && lane->number < 1))
      return eventError(event, label,
                        absl::StrCat("lane '", laneName,
                                     "' is neither a core (AIC_n or AIV_n, numbered from 1 "
                                     "across both kinds) nor the control lane 'Fake Core_0'"));
    int index = static_cast<int>(t_.lanes.size());
    t_.lanes.push_back(TimelineLane{laneName, lane->kind, -1, 0});
    laneNumbers_.push_back(lane->number);
    laneIndex_.emplace(key, index);
    return index;
  }

  absl::Status readTasks() {
    double origin = std::numeric_limits<double>::infinity();
    for (const PyptoSlice &slice : ev_.slices) origin = std::min(origin, slice.ts);
    t_.originUs = ev_.slices.empty() ? 0 : origin;
    // Groups by leaf hash within a root function (a loop body is a root function of
    // its own); control nodes apart from tasks on cores.
    std::map<std::tuple<bool, std::string, std::string>, int> groupOf;
    for (const PyptoSlice &slice : ev_.slices) {
      absl::StatusOr<int> lane = laneOf(slice.lane, slice.event, slice.name);
      if (!lane.ok()) return lane.status();
      bool control = t_.lanes[*lane].kind == LaneKind::Control;
      Hint hint = hintOf(slice);
      auto [it, added] = groupOf.emplace(std::make_tuple(control, hint.rootHash, hint.leafHash),
                                         static_cast<int>(t_.groups.size()));
      if (added) {
        TimelineGroup g;
        g.core = control ? "control" : laneKindLabel(t_.lanes[*lane].kind).str();
        g.leafHash = hint.leafHash;
        g.rootHash = hint.rootHash;
        t_.groups.push_back(std::move(g));
      } else if (!control && t_.groups[it->second].core != laneKindLabel(t_.lanes[*lane].kind)) {
        return eventError(slice.event, slice.name,
                          absl::StrCat("leaf hash ", hint.leafHash, " runs on both AIC and AIV "
                                       "lanes: one leaf is code for one core kind"));
      }
      TimelineTask task;
      task.lane = *lane;
      task.group = it->second;
      task.start = slice.ts - origin;
      task.dur = slice.dur;
      t_.tasks.push_back(std::move(task));
      t_.taskNames.push_back(hint.task);
    }
    // A group's key is its leaf hash, with the root hash where one leaf hash occurs in
    // several root functions.
    std::map<std::string, int> roots;
    for (const TimelineGroup &g : t_.groups) ++roots[g.leafHash];
    for (TimelineGroup &g : t_.groups) {
      g.key = g.leafHash.empty() ? "(no leafHash)" : g.leafHash;
      if (roots[g.leafHash] > 1) g.key += "@" + g.rootHash;
    }
    return absl::OkStatus();
  }

  /// The tasks on a lane whose slice lies within the slack of `ts`, nearest first by
  /// the edge a flow end of this phase sits on (a start on its producer's end, a
  /// finish on its consumer's start); only those as near as the nearest.
  std::vector<int> candidates(const PyptoFlowEnd &end, bool atEnd) const {
    auto lane = laneIndex_.find(end.lane);
    if (lane == laneIndex_.end()) return {};
    double ts = end.ts - t_.originUs;
    std::vector<int> near;
    double best = std::numeric_limits<double>::infinity();
    for (int task : tasksOnLane_[lane->second]) {
      const TimelineTask &t = t_.tasks[task];
      if (ts < t.start - kFlowSlackUs || ts > t.end() + kFlowSlackUs) continue;
      double distance = std::abs(ts - (atEnd ? t.end() : t.start));
      // Equal within the clock's resolution: a tie.
      if (distance < best - kFlowSlackUs) {
        near.clear();
        best = distance;
      }
      if (distance <= best + kFlowSlackUs) near.push_back(task);
    }
    std::erase_if(near, [&](int task) {
      const TimelineTask &t = t_.tasks[task];
      return std::abs(ts - (atEnd ? t.end() : t.start)) > best + kFlowSlackUs;
    });
    return near;
  }

  absl::Status bindFlows() {
    tasksOnLane_.assign(t_.lanes.size(), {});
    for (size_t i = 0; i < t_.tasks.size(); ++i)
      tasksOnLane_[t_.tasks[i].lane].push_back(static_cast<int>(i));
    EdgeList edges;
    int ties = 0;
    for (const PyptoFlow &flow : ev_.flows) {
      std::vector<int> producers = candidates(*flow.start, /*atEnd=*/true);
      std::vector<int> consumers = candidates(*flow.finish, /*atEnd=*/false);
      for (auto [list, end, phase] : {std::tuple{&producers, &*flow.start, "s"},
                                      std::tuple{&consumers, &*flow.finish, "f"}})
        if (list->empty())
          return error(absl::StrFormat(
              "flow id %s: its '%s' event (event %d) at %.3f us lies on no task of lane '%s' "
              "(within %.3f us)",
              flow.id, phase, end->event, end->ts, ev_.laneNames.at(end->lane), kFlowSlackUs));
      // Control nodes overlap (each is drawn 1 us wide), so an end can sit on several
      // at once: take a pair that is not a self-loop, then one in one root function,
      // then the first in the file.
      std::pair<int, int> best{-1, -1};
      int bestScore = -1;
      for (int p : producers)
        for (int c : consumers) {
          int score = 2 * (p != c) + (rootOf(p) == rootOf(c));
          if (score > bestScore) {
            bestScore = score;
            best = {p, c};
          }
        }
      ties += producers.size() > 1 || consumers.size() > 1;
      if (best.first == best.second) continue; // a node cannot wait for itself
      edges.add(best.second, best.first);
    }
    edges.moveInto(t_);
    if (ties > 0)
      t_.notes.push_back(absl::StrCat(
          ties, " flows end where control nodes overlap (PyPTO draws each 1 us wide); each was "
                "bound to the node of the same root function"));
    return absl::OkStatus();
  }

  const std::string &rootOf(int task) const { return t_.groups[t_.tasks[task].group].rootHash; }

  void deriveReadyTimes() {
    // The run: first start to last end of a task on a core.
    double first = std::numeric_limits<double>::infinity(), last = 0;
    bool any = false;
    for (size_t i = 0; i < t_.tasks.size(); ++i)
      if (!t_.isControl(static_cast<int>(i))) {
        first = std::min(first, t_.tasks[i].start);
        last = std::max(last, t_.tasks[i].end());
        any = true;
      }
    t_.runStart = any ? first : 0;
    t_.runEnd = any ? last : 0;
    // A task is ready when the last work it waits for (through control nodes) ended;
    // one that waits for no measured task, when the run started.
    std::vector<double> ends = measuredEnds(t_, topologicalOrder(t_));
    int early = 0;
    double earliest = 0;
    for (size_t i = 0; i < t_.tasks.size(); ++i) {
      int c = static_cast<int>(i);
      if (t_.isControl(c)) continue;
      TimelineTask &task = t_.tasks[i];
      double ready = t_.runStart;
      for (int p : t_.predsOf(c)) ready = std::max(ready, ends[p]);
      if (ready > task.start) {
        ++early;
        earliest = std::max(earliest, ready - task.start);
        ready = task.start;
      }
      task.ready = ready;
    }
    if (early > 0)
      t_.notes.push_back(absl::StrFormat(
          "%d tasks started before a task they wait for had ended (by up to %.3f us): their "
          "ready time is taken as their start",
          early, earliest));
  }

  void describe() {
    t_.carries.edges = true;
    t_.carries.readyTimes = true;
    t_.carries.readyFromEdges = true;
    int control = 0;
    for (size_t i = 0; i < t_.tasks.size(); ++i) control += t_.isControl(static_cast<int>(i));
    t_.carries.controlNodes = control > 0;
    if (control > 0)
      t_.notes.push_back(absl::StrCat(
          control, " control nodes on the control lane: graph nodes the device log did not "
                   "record; PyPTO places them 1 us wide (before their first successor, after "
                   "their last predecessor, or on a 3 us grid), so their times are not "
                   "measured and no core time is counted for them"));
  }

  std::string name_;
  const TraceReadOptions &options_;
  PyptoEvents ev_;
  Timeline t_;
  std::map<PyptoLaneKey, int> laneIndex_;
  std::vector<int> laneNumbers_;
  std::vector<std::vector<int>> tasksOnLane_;
};

} // namespace

absl::StatusOr<Timeline> readMachineView(llvm::StringRef text, llvm::StringRef name,
                                         const TraceReadOptions &options) {
  return Reader(name, options).read(text);
}

} // namespace ptoc::profile
