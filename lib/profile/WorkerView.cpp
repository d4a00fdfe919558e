// Reading PyPTO-3's "Worker View" trace of a device run into a Timeline: one event per
// block of a task on each core that ran it ("Task:r1t0, FuncId:-1, CoreId:10" in its
// event-hint), with the block's kernel-duration-us and local_setup_us. There are no
// dependencies, and each core's clock has its own origin, so times compare only on
// one lane: the timeline says so (carries.commonClock false) and lanes are drawn
// aligned at their first block.
#include <algorithm>
#include <limits>
#include <set>

#include "PyptoScan.h"
#include "TraceFamilies.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace ptoc::profile {

namespace {

/// How far kernel + setup may exceed a block's duration before it is worth a note
/// (us): the trace writes each with float noise around 1e-9 us.
constexpr double kSplitSlackUs = 0.01;

} // namespace

absl::StatusOr<Timeline> readWorkerView(llvm::StringRef text, llvm::StringRef name,
                                        const TraceReadOptions &options) {
  absl::StatusOr<PyptoEvents> events = scanPyptoEvents(text, name, /*flowCategory=*/"");
  if (!events.ok()) return events.status();
  auto eventError = [&](size_t index, llvm::StringRef label, const std::string &message) {
    return absl::InvalidArgumentError(absl::StrCat(
        name.str(), ": event ", index, label.empty() ? "" : " ('" + label.str() + "')", ": ",
        message));
  };
  Timeline t;
  t.family = TimelineFamily::WorkerView;
  t.source = name.str();
  if (options.device) t.device = options.device->name;
  t.carries.commonClock = false;
  t.carries.blockSplit = true;
  std::map<PyptoLaneKey, int> laneIndex;
  std::vector<int> laneNumbers;
  std::map<std::string, int> groupOf;
  int noSplit = 0, overlong = 0, coreIdMismatch = 0;
  for (const PyptoSlice &slice : events->slices) {
    auto [lane, added] = laneIndex.emplace(slice.lane, static_cast<int>(t.lanes.size()));
    const std::string &laneName = events->laneNames.at(slice.lane);
    std::optional<PyptoLane> parsed = parsePyptoLane(laneName);
    if (added) {
      if (!parsed || parsed->kind == LaneKind::Control)
        return eventError(slice.event, slice.name,
                          absl::StrCat("lane '", laneName,
                                       "' is not a core (AIC_n or AIV_n, numbered by core id "
                                       "across both kinds)"));
      t.lanes.push_back(TimelineLane{laneName, parsed->kind, -1, 0});
      laneNumbers.push_back(parsed->number);
    }
    std::map<std::string, std::string> hint = parsePyptoHint(slice.hint);
    std::string key = hint.count("Task") ? hint["Task"] : slice.name;
    if (hint.count("CoreId") && hint["CoreId"] != std::to_string(parsed->number)) ++coreIdMismatch;
    LaneKind kind = t.lanes[lane->second].kind;
    auto [group, newGroup] = groupOf.emplace(key, static_cast<int>(t.groups.size()));
    if (newGroup) {
      TimelineGroup g;
      g.key = key;
      g.core = laneKindLabel(kind).str();
      t.groups.push_back(std::move(g));
    } else {
      // A mixed task runs blocks on both kinds.
      std::string &core = t.groups[group->second].core;
      core = mergedCoreLabel(core, laneKindLabel(kind));
    }
    TimelineTask task;
    task.lane = lane->second;
    task.group = group->second;
    task.start = slice.ts;
    task.dur = slice.dur;
    BlockTime block;
    if (slice.kernelUs && slice.setupUs) {
      block = BlockTime{*slice.kernelUs, *slice.setupUs};
      overlong += block.kernel + block.setup > task.dur + kSplitSlackUs;
    } else {
      // Without the split the whole block counts as kernel.
      block.kernel = task.dur;
      ++noSplit;
    }
    t.tasks.push_back(std::move(task));
    t.taskNames.push_back(key);
    t.blockTimes.push_back(block);
  }
  if (absl::Status s = numberPyptoCores(t, /*first=*/0, laneNumbers, options.device, name);
      !s.ok())
    return s;
  // Each lane drawn from its own first block.
  std::vector<double> first(t.lanes.size(), std::numeric_limits<double>::infinity());
  for (const TimelineTask &task : t.tasks) first[task.lane] = std::min(first[task.lane], task.start);
  for (size_t l = 0; l < t.lanes.size(); ++l) t.lanes[l].drawShift = -first[l];
  t.notes.push_back("each core's clock has its own origin in a Worker View: times compare "
                    "only within one lane (lanes are drawn aligned at their first block), so "
                    "there is no span, utilisation, bubble or critical path across cores");
  if (noSplit > 0)
    t.notes.push_back(absl::StrCat(noSplit, " blocks lack kernel-duration-us or "
                                            "local_setup_us: their whole time counts as kernel"));
  if (overlong > 0)
    t.notes.push_back(absl::StrCat(overlong, " blocks have kernel + setup longer than the block"));
  if (coreIdMismatch > 0)
    t.notes.push_back(absl::StrCat(coreIdMismatch, " blocks name a CoreId other than their "
                                                   "lane's number; the lane is used"));
  return t;
}

} // namespace ptoc::profile
