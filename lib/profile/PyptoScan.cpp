// One pass over a PyPTO trace keeping what its readers need, and the grammars of its
// lane names and event hints (see PyptoScan.h).
#include "PyptoScan.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "TraceFamilies.h"
#include "TraceScanner.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace ptoc::profile {

absl::Status pyptoTraceError(llvm::StringRef name, const std::string &message) {
  return absl::InvalidArgumentError(absl::StrCat(name.str(), ": ", message));
}

absl::Status pyptoEventError(llvm::StringRef name, size_t index, llvm::StringRef label,
                             const std::string &message) {
  return pyptoTraceError(
      name, absl::StrCat("event ", index, label.empty() ? "" : " ('" + label.str() + "')", ": ",
                         message));
}

namespace {

class Scanner {
public:
  Scanner(llvm::StringRef name, llvm::StringRef flowCategory)
      : name_(name.str()), flowCategory_(flowCategory.str()) {}

  absl::StatusOr<PyptoEvents> scan(llvm::StringRef text) {
    TraceVisitor visitor;
    visitor.event = [&](size_t index, JsonRef event, llvm::StringRef) {
      return onEvent(index, event);
    };
    visitor.wants = [](llvm::StringRef) { return false; };
    visitor.member = [](llvm::StringRef, JsonRef) { return absl::OkStatus(); };
    std::optional<TraceWalkError> problem;
    if (absl::Status s = walkTrace(text, visitor, problem); !s.ok()) return s;
    if (problem) return walkProblem(name_, text, *problem, TraceWriter::Pypto);
    // Lanes are named by metadata that may come after the events on them.
    for (const PyptoSlice &slice : out_.slices)
      if (!out_.laneNames.count(slice.lane))
        return laneError(slice.event, slice.name, slice.lane);
    for (const PyptoFlow &flow : out_.flows) {
      for (const std::optional<PyptoFlowEnd> &end : {flow.start, flow.finish})
        if (end && !out_.laneNames.count(end->lane))
          return laneError(end->event, "", end->lane);
      if (!flow.start || !flow.finish) {
        const PyptoFlowEnd &seen = flow.start ? *flow.start : *flow.finish;
        return error(absl::StrCat("flow id ", flow.id, " has a '", flow.start ? "s" : "f",
                                  "' event (event ", seen.event, ") but no '",
                                  flow.start ? "f" : "s",
                                  "': the trace lost one end of a dependency (was it edited?)"));
      }
    }
    return std::move(out_);
  }

private:
  absl::Status error(const std::string &message) const { return pyptoTraceError(name_, message); }
  absl::Status eventError(size_t index, llvm::StringRef label, const std::string &message) const {
    return pyptoEventError(name_, index, label, message);
  }
  absl::Status laneError(size_t index, llvm::StringRef label, PyptoLaneKey lane) const {
    return eventError(index, label,
                      absl::StrCat("lane pid ", lane.first, " tid ", lane.second,
                                   " has no thread_name metadata (cannot tell its core)"));
  }

  /// A time in [0, kMaxTraceUs], or the problem.
  static std::optional<double> time(JsonRef event, llvm::StringRef key) {
    std::optional<double> v = event.getNumber(key);
    if (!v || !(*v >= 0 && *v <= kMaxTraceUs)) return std::nullopt;
    return v;
  }

  absl::Status onEvent(size_t index, JsonRef event) {
    if (!event.isObject()) return error(absl::StrCat("event ", index, " is not a JSON object"));
    std::string label = event.getString("name").value_or("").str();
    std::optional<llvm::StringRef> ph = event.getString("ph");
    if (!ph) return eventError(index, label, "no string \"ph\" (event phase)");
    std::optional<int64_t> pid = event.getInteger("pid"), tid = event.getInteger("tid");
    if (*ph == "M") {
      if (label != "thread_name") return absl::OkStatus();
      std::optional<JsonRef> args = event.getObject("args");
      std::optional<llvm::StringRef> lane = args ? args->getString("name") : std::nullopt;
      if (!pid || !tid || !lane)
        return eventError(index, label,
                          "thread_name without integer \"pid\" and \"tid\" and a string args.name");
      out_.laneNames[{*pid, *tid}] = lane->str();
      return absl::OkStatus();
    }
    if (*ph == "C") {
      ++out_.counters;
      return absl::OkStatus();
    }
    if (*ph == "X") {
      if (!pid || !tid) return eventError(index, label, "no integer \"pid\" and \"tid\"");
      std::optional<double> ts = time(event, "ts"), dur = time(event, "dur");
      if (!ts || !dur)
        return eventError(index, label,
                          absl::StrCat("\"ts\" and \"dur\" must be numbers between 0 and ",
                                       kMaxTraceUs, " (us)"));
      PyptoSlice slice{index, {*pid, *tid}, *ts, *dur, label, "", std::nullopt, std::nullopt};
      if (std::optional<JsonRef> args = event.getObject("args")) {
        slice.hint = args->getString("event-hint").value_or("").str();
        for (auto [key, slot] : {std::pair{"kernel-duration-us", &slice.kernelUs},
                                 std::pair{"local_setup_us", &slice.setupUs}}) {
          if (!args->get(key)) continue;
          std::optional<double> v = args->getNumber(key);
          if (!v || !(*v >= 0 && *v <= kMaxTraceUs))
            return eventError(index, label,
                              absl::StrCat("args.", key, " must be a number between 0 and ",
                                           kMaxTraceUs, " (us)"));
          *slot = v;
        }
      }
      out_.slices.push_back(std::move(slice));
      return absl::OkStatus();
    }
    if ((*ph == "s" || *ph == "f") && event.getString("cat").value_or("") == flowCategory_) {
      std::optional<JsonRef> id = event.get("id");
      std::string key;
      if (id && id->asInteger()) key = absl::StrCat(*id->asInteger());
      else if (id && id->asString()) key = absl::StrCat("\"", id->asString()->str(), "\"");
      else return eventError(index, label, "flow event without an integer or string \"id\"");
      std::optional<double> ts = time(event, "ts");
      if (!pid || !tid || !ts)
        return eventError(index, label,
                          absl::StrCat("flow event without integer pid/tid and a time \"ts\" "
                                       "between 0 and ",
                                       kMaxTraceUs, " (us)"));
      auto [it, added] = flowIndex_.emplace(key, out_.flows.size());
      if (added) out_.flows.push_back(PyptoFlow{key, std::nullopt, std::nullopt});
      PyptoFlow &flow = out_.flows[it->second];
      std::optional<PyptoFlowEnd> &end = *ph == "s" ? flow.start : flow.finish;
      if (end)
        return eventError(index, label,
                          absl::StrCat("flow id ", key, " has a second '", ph->str(),
                                       "' (first at event ", end->event, ")"));
      end = PyptoFlowEnd{index, {*pid, *tid}, *ts};
    }
    return absl::OkStatus();
  }

  std::string name_, flowCategory_;
  PyptoEvents out_;
  std::unordered_map<std::string, size_t> flowIndex_;
};

} // namespace

absl::StatusOr<PyptoEvents> scanPyptoEvents(llvm::StringRef text, llvm::StringRef name,
                                            llvm::StringRef flowCategory) {
  return Scanner(name, flowCategory).scan(text);
}

std::optional<PyptoLane> parsePyptoLane(llvm::StringRef name) {
  auto [prefix, number] = name.rsplit('_');
  int n = 0;
  if (number.empty() || !absl::SimpleAtoi(absl::string_view(number.data(), number.size()), &n) ||
      n < 0)
    return std::nullopt;
  if (prefix == "AIC") return PyptoLane{LaneKind::Aic, n};
  if (prefix == "AIV") return PyptoLane{LaneKind::Aiv, n};
  if (prefix == "Fake Core") return PyptoLane{LaneKind::Control, n};
  return std::nullopt;
}

std::map<std::string, std::string> parsePyptoHint(llvm::StringRef hint) {
  std::map<std::string, std::string> out;
  while (!hint.empty()) {
    auto [item, rest] = hint.split(',');
    hint = rest;
    auto [key, value] = item.split(':');
    key = key.trim();
    value = value.trim();
    if (value.size() >= 2 && value.front() == '[' && value.back() == ']')
      value = value.drop_front().drop_back();
    if (!key.empty()) out.emplace(key.str(), value.str());
  }
  return out;
}

absl::Status numberPyptoCores(Timeline &t, int first, const std::vector<int> &laneNumbers,
                              const target::DeviceSpec *device, llvm::StringRef name) {
  int maxAic = first - 1, minAiv = -1, maxAiv = -1;
  for (size_t l = 0; l < t.lanes.size(); ++l) {
    int n = laneNumbers[l];
    if (t.lanes[l].kind == LaneKind::Aic) maxAic = std::max(maxAic, n);
    if (t.lanes[l].kind == LaneKind::Aiv) {
      minAiv = minAiv < 0 ? n : std::min(minAiv, n);
      maxAiv = std::max(maxAiv, n);
    }
  }
  auto error = [&](const std::string &message) {
    return absl::InvalidArgumentError(absl::StrCat(name.str(), ": ", message));
  };
  if (device) {
    t.aicCores = device->aicCores;
    t.aivCores = device->aivCores;
    t.carries.deviceCores = true;
  } else {
    // AIC cores up to the highest AIC lane; AIV numbering starts after them.
    t.aicCores = maxAic - first + 1;
    t.aivCores = minAiv < 0 ? 0 : maxAiv - (first + t.aicCores) + 1;
  }
  t.aicNameBase = first;
  t.aivNameBase = first + t.aicCores;
  for (size_t l = 0; l < t.lanes.size(); ++l) {
    TimelineLane &lane = t.lanes[l];
    if (lane.kind == LaneKind::Control) continue;
    int n = laneNumbers[l];
    bool aic = lane.kind == LaneKind::Aic;
    lane.core = n - (aic ? t.aicNameBase : t.aivNameBase);
    int cores = aic ? t.aicCores : t.aivCores;
    if (lane.core >= 0 && lane.core < cores) continue;
    std::string range = absl::StrCat(t.coreName(LaneKind::Aic, 0), "..",
                                     t.coreName(LaneKind::Aic, t.aicCores - 1), ", ",
                                     t.coreName(LaneKind::Aiv, 0), "..",
                                     t.coreName(LaneKind::Aiv, t.aivCores - 1));
    if (device)
      return error(absl::StrCat("lane '", lane.name, "' is not a core of device ", device->name,
                                " (", t.aicCores, " AIC + ", t.aivCores, " AIV cores: ", range,
                                "): was the trace recorded on another device? (--device)"));
    return error(absl::StrCat("lane '", lane.name, "' is numbered among the ",
                              aic ? "AIV" : "AIC", " cores (", range,
                              " from the lanes): the lane names are inconsistent"));
  }
  if (!device)
    t.notes.push_back(absl::StrCat(
        "core counts from the lane names (", t.aicCores, " AIC, ", t.aivCores,
        " AIV): a device trace has lanes only for cores that ran, so idle cores beyond them "
        "are not counted and no verdict judges waves or idle cores; --device NAME gives the "
        "device's counts"));
  return absl::OkStatus();
}

} // namespace ptoc::profile
