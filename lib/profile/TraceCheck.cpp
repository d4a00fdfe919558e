// The swimlane validator: reads a trace once, event by event (TraceScanner.h), into
// lanes of slices and flow ends, then checks lanes, flows and names;
// checkTraceMatches adds the Program's edges.
#include "ptoc/profile/TraceCheck.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "TraceScanner.h"
#include "absl/strings/str_format.h"

namespace ptoc::profile {

namespace {

using LaneKey = std::pair<int64_t, int64_t>; // (pid, tid)

/// One complete event on a lane.
struct Slice {
  double start = 0, end = 0;
  size_t event = 0;
  int64_t call = -1;  ///< task events ('X', cat "task", integer args.call)
  size_t offset = 0;  ///< where its text starts, to name it in messages
  size_t length = 0;
};

/// One end of a flow.
struct FlowEnd {
  size_t event = 0;
  LaneKey lane;
  double ts = 0;
  int cat = -1, name = -1; ///< indices into ParsedTrace::strings
};

struct Flow {
  std::string id; ///< as written ("#12" for integers, "\"x\"" for strings), for messages
  std::optional<FlowEnd> start, finish;
};

/// A trace parsed into what the checks need. The events are parsed one at a time
/// (never the whole document at once), so a trace of a million tasks takes memory in
/// proportion to its slices and flows, not to its JSON tree.
struct ParsedTrace {
  llvm::StringRef text;
  std::map<LaneKey, std::vector<Slice>> lanes;        ///< sorted by start after parse
  std::map<LaneKey, size_t> laneFirstUse;             ///< first event on each lane
  std::map<int64_t, size_t> processFirstUse;          ///< first event of each pid
  std::map<int64_t, std::string> processNames;
  std::map<LaneKey, std::string> threadNames;
  std::vector<Flow> flows;                            ///< in order of first sight
  std::unordered_map<std::string, size_t> flowIndex;  ///< id -> index into flows
  std::vector<std::string> strings;                   ///< flow cats and names, interned
  std::unordered_map<std::string, int> stringIndex;

  int intern(llvm::StringRef value) {
    auto [it, inserted] = stringIndex.try_emplace(value.str(), static_cast<int>(strings.size()));
    if (inserted) strings.push_back(value.str());
    return it->second;
  }
};

absl::Status invalid(const std::string &message) {
  return absl::InvalidArgumentError(absl::StrCat("invalid swimlane trace: ", message));
}

/// The "name" of the event whose text is `slice`'s (re-read: only messages need it).
std::string eventName(const ParsedTrace &trace, const Slice &slice) {
  JsonReader reader(trace.text.substr(slice.offset, slice.length));
  JsonDoc event;
  if (!reader.parse(event)) return "";
  return event.root().getString("name").value_or("").str();
}

std::string laneText(const ParsedTrace &trace, LaneKey lane) {
  auto process = trace.processNames.find(lane.first);
  auto thread = trace.threadNames.find(lane);
  std::string named;
  if (process != trace.processNames.end() && thread != trace.threadNames.end())
    named = absl::StrCat(process->second, "/", thread->second, " ");
  return absl::StrCat("lane ", named, "(pid ", lane.first, ", tid ", lane.second, ")");
}

std::string us(double value) { return absl::StrFormat("%.3f", value); }

/// The lane of an event: integer pid and tid.
absl::Status laneOf(JsonRef event, size_t index, llvm::StringRef phase,
                    LaneKey &lane) {
  std::optional<int64_t> pid = event.getInteger("pid");
  std::optional<int64_t> tid = event.getInteger("tid");
  if (!pid || !tid)
    return invalid(absl::StrCat("event ", index, " ('", phase.str(),
                                "') needs integer \"pid\" and \"tid\""));
  lane = {*pid, *tid};
  return absl::OkStatus();
}

/// Reads one metadata event: process and thread names.
absl::Status readMetadata(JsonRef event, size_t index, ParsedTrace &trace) {
  std::optional<llvm::StringRef> name = event.getString("name");
  if (!name) return invalid(absl::StrCat("metadata event ", index, " has no \"name\""));
  if (*name != "process_name" && *name != "thread_name") return absl::OkStatus();
  std::optional<JsonRef> args = event.getObject("args");
  std::optional<llvm::StringRef> value = args ? args->getString("name") : std::nullopt;
  std::optional<int64_t> pid = event.getInteger("pid");
  if (!value || !pid)
    return invalid(absl::StrCat("metadata event ", index, " (", name->str(),
                                ") needs an integer \"pid\" and a string args.name"));
  if (*name == "process_name") {
    trace.processNames[*pid] = value->str();
    return absl::OkStatus();
  }
  std::optional<int64_t> tid = event.getInteger("tid");
  if (!tid)
    return invalid(absl::StrCat("metadata event ", index, " (thread_name) needs an integer \"tid\""));
  trace.threadNames[{*pid, *tid}] = value->str();
  return absl::OkStatus();
}

void noteUse(ParsedTrace &trace, LaneKey lane, size_t index, bool withThread) {
  trace.processFirstUse.emplace(lane.first, index);
  if (withThread) trace.laneFirstUse.emplace(lane, index);
}

absl::Status readEvent(JsonRef value, size_t index, llvm::StringRef text,
                       ParsedTrace &trace) {
  std::optional<JsonRef> event;
  if (value.isObject()) event = value;
  if (!event) return invalid(absl::StrCat("event ", index, " is not a JSON object"));
  std::optional<llvm::StringRef> ph = event->getString("ph");
  if (!ph || ph->empty())
    return invalid(absl::StrCat("event ", index, " has no string \"ph\" (phase)"));
  char phase = ph->front();
  auto needTime = [&](llvm::StringRef key, double &out) -> absl::Status {
    std::optional<double> v = event->getNumber(key);
    if (!v || !std::isfinite(*v))
      return invalid(absl::StrCat("event ", index, " ('", ph->str(), "' '",
                                  event->getString("name").value_or("").str(),
                                  "') needs a finite numeric \"", key.str(), "\""));
    out = *v;
    return absl::OkStatus();
  };
  switch (phase) {
  case 'M':
    return readMetadata(*event, index, trace);
  case 'X': {
    LaneKey lane;
    Slice slice;
    double dur = 0;
    if (absl::Status s = laneOf(*event, index, *ph, lane); !s.ok()) return s;
    if (absl::Status s = needTime("ts", slice.start); !s.ok()) return s;
    if (absl::Status s = needTime("dur", dur); !s.ok()) return s;
    if (dur < 0)
      return invalid(absl::StrCat("event ", index, " ('",
                                  event->getString("name").value_or("").str(),
                                  "') has negative duration ", dur, " us"));
    slice.end = slice.start + dur;
    slice.event = index;
    slice.offset = static_cast<size_t>(text.data() - trace.text.data());
    slice.length = text.size();
    if (event->getString("cat").value_or("") == "task")
      if (std::optional<JsonRef> args = event->getObject("args"))
        slice.call = args->getInteger("call").value_or(-1);
    trace.lanes[lane].push_back(slice);
    noteUse(trace, lane, index, true);
    return absl::OkStatus();
  }
  case 's':
  case 'f': {
    FlowEnd end;
    end.event = index;
    if (absl::Status s = laneOf(*event, index, *ph, end.lane); !s.ok()) return s;
    if (absl::Status s = needTime("ts", end.ts); !s.ok()) return s;
    end.cat = trace.intern(event->getString("cat").value_or(""));
    end.name = trace.intern(event->getString("name").value_or(""));
    std::optional<JsonRef> id = event->get("id");
    std::string key;
    if (id && id->asInteger()) key = absl::StrCat("#", *id->asInteger());
    else if (id && id->asString()) key = absl::StrCat("\"", id->asString()->str(), "\"");
    else
      return invalid(absl::StrCat("flow event ", index, " ('", ph->str(),
                                  "') needs an integer or string \"id\""));
    auto [it, inserted] = trace.flowIndex.try_emplace(key, trace.flows.size());
    if (inserted) trace.flows.push_back(Flow{key, std::nullopt, std::nullopt});
    Flow &flow = trace.flows[it->second];
    std::optional<FlowEnd> &slot = phase == 's' ? flow.start : flow.finish;
    if (slot)
      return invalid(absl::StrCat("flow id ", key, " has two '", ph->str(), "' events (", slot->event,
                                  " and ", index, "); flow ids must be unique per edge"));
    slot = std::move(end);
    noteUse(trace, slot->lane, index, true);
    return absl::OkStatus();
  }
  case 'C': {
    std::optional<int64_t> pid = event->getInteger("pid");
    double ts = 0;
    if (!pid) return invalid(absl::StrCat("counter event ", index, " needs an integer \"pid\""));
    if (absl::Status s = needTime("ts", ts); !s.ok()) return s;
    if (!event->getObject("args"))
      return invalid(absl::StrCat("counter event ", index, " needs an \"args\" object of values"));
    noteUse(trace, {*pid, 0}, index, false);
    return absl::OkStatus();
  }
  case 'i':
  case 'I': {
    double ts = 0;
    if (absl::Status s = needTime("ts", ts); !s.ok()) return s;
    llvm::StringRef scope = event->getString("s").value_or("t");
    if (scope == "g") return absl::OkStatus();
    std::optional<int64_t> pid = event->getInteger("pid");
    if (!pid) return invalid(absl::StrCat("instant event ", index, " needs an integer \"pid\""));
    if (scope == "p") {
      noteUse(trace, {*pid, 0}, index, false);
      return absl::OkStatus();
    }
    LaneKey lane;
    if (absl::Status s = laneOf(*event, index, *ph, lane); !s.ok()) return s;
    noteUse(trace, lane, index, true);
    return absl::OkStatus();
  }
  default:
    return absl::OkStatus(); // other phases are legal trace events we do not produce
  }
}

absl::Status parseTrace(llvm::StringRef text, ParsedTrace &trace) {
  trace.text = text;
  TraceVisitor visitor;
  visitor.event = [&](size_t index, JsonRef event, llvm::StringRef eventText) {
    return readEvent(event, index, eventText, trace);
  };
  std::optional<TraceWalkError> problem;
  if (absl::Status s = walkTrace(text, visitor, problem); !s.ok()) return s;
  if (problem) {
    using Kind = TraceWalkError::Kind;
    const JsonSyntaxError &syntax = problem->syntax;
    switch (problem->kind) {
    case Kind::NotObject:
      return invalid("the top level is not a JSON object");
    case Kind::EventsNotArray:
      return invalid("no \"traceEvents\" array at the top level (\"traceEvents\" is not an array)");
    case Kind::NoEvents:
      return invalid("no \"traceEvents\" array at the top level");
    case Kind::Syntax:
      if (syntax.truncated)
        return invalid(absl::StrCat("the JSON ends early (truncated?) after ", text.size(),
                                    " bytes"));
      if (syntax.tooDeep) return invalid(syntax.message);
      if (problem->event)
        return invalid(absl::StrCat("event ", *problem->event, " (at byte ", problem->eventOffset,
                                    ") is not valid JSON: ", syntax.message, " at byte ",
                                    syntax.offset));
      if (!problem->member.empty())
        return invalid(absl::StrCat("the value of \"", problem->member,
                                    "\" is not valid JSON: ", syntax.message, " at byte ",
                                    syntax.offset));
      return invalid(absl::StrCat(syntax.message, " at byte ", syntax.offset, ", found '",
                                  std::string(1, text[syntax.offset]), "'"));
    }
  }
  for (auto &[lane, slices] : trace.lanes)
    std::sort(slices.begin(), slices.end(), [](const Slice &a, const Slice &b) {
      if (a.start != b.start) return a.start < b.start;
      if (a.end != b.end) return a.end < b.end;
      return a.event < b.event;
    });
  return absl::OkStatus();
}

absl::Status checkNames(const ParsedTrace &trace) {
  // Report the unnamed process or lane that is used first in the file.
  std::optional<std::pair<size_t, std::string>> first;
  auto consider = [&](size_t index, std::string message) {
    if (!first || index < first->first) first = {index, std::move(message)};
  };
  for (const auto &[pid, index] : trace.processFirstUse)
    if (!trace.processNames.count(pid))
      consider(index, absl::StrCat("process ", pid, " (first used by event ", index,
                                   ") has no process_name metadata"));
  for (const auto &[lane, index] : trace.laneFirstUse)
    if (!trace.threadNames.count(lane))
      consider(index, absl::StrCat("lane (pid ", lane.first, ", tid ", lane.second,
                                   ") (first used by event ", index,
                                   ") has no thread_name metadata"));
  return first ? invalid(first->second) : absl::OkStatus();
}

absl::Status checkOverlaps(const ParsedTrace &trace) {
  for (const auto &[lane, slices] : trace.lanes) {
    size_t latest = 0; // the slice that ends last so far
    for (size_t i = 1; i < slices.size(); ++i) {
      if (slices[i].start < slices[latest].end - kTraceTimeSlackUs) {
        const Slice &a = slices[latest], &b = slices[i];
        return invalid(absl::StrCat("on ", laneText(trace, lane), " event ", b.event, " ('",
                                    eventName(trace, b), "', ", us(b.start), "..",
                                    us(b.end), " us) overlaps event ", a.event, " ('",
                                    eventName(trace, a), "', ", us(a.start), "..",
                                    us(a.end), " us); one lane must hold one event at a time"));
      }
      if (slices[i].end >= slices[latest].end) latest = i;
    }
  }
  return absl::OkStatus();
}

enum class Bind { Start, Finish };

/// The slice a flow end binds to on its lane: among the slices containing `ts`
/// (within the slack), for a flow start the one ending first (then the latest
/// starting), for a flow finish the one starting last (then the earliest ending).
/// Null when no slice contains it.
const Slice *bindSlice(const ParsedTrace &trace, const FlowEnd &end, Bind bind) {
  auto lane = trace.lanes.find(end.lane);
  if (lane == trace.lanes.end()) return nullptr;
  const std::vector<Slice> &slices = lane->second;
  auto after = std::upper_bound(slices.begin(), slices.end(), end.ts + kTraceTimeSlackUs,
                                [](double t, const Slice &s) { return t < s.start; });
  const Slice *best = nullptr;
  // Lanes do not overlap, so once a slice ends before `ts` every earlier one does.
  for (auto it = after; it != slices.begin();) {
    --it;
    if (it->end < end.ts - kTraceTimeSlackUs) break;
    bool better = false;
    if (!best) better = true;
    else if (bind == Bind::Start)
      better = it->end < best->end || (it->end == best->end && it->start > best->start);
    else
      better = it->start > best->start || (it->start == best->start && it->end < best->end);
    if (better) best = &*it;
  }
  return best;
}

absl::Status checkFlows(const ParsedTrace &trace) {
  for (const Flow &flow : trace.flows) {
    const std::string &key = flow.id;
    if (!flow.start || !flow.finish) {
      const FlowEnd &present = flow.start ? *flow.start : *flow.finish;
      return invalid(absl::StrCat("flow id ", key, ": the '", flow.start ? "s" : "f",
                                  "' event ", present.event, " on ", laneText(trace, present.lane),
                                  " has no matching '", flow.start ? "f" : "s", "' event"));
    }
    const FlowEnd &s = *flow.start, &f = *flow.finish;
    if (s.cat != f.cat || s.name != f.name)
      return invalid(absl::StrCat("flow id ", key, ": start event ", s.event, " (cat '",
                                  trace.strings[s.cat], "', name '", trace.strings[s.name],
                                  "') and end event ", f.event, " (cat '", trace.strings[f.cat],
                                  "', name '", trace.strings[f.name],
                                  "') differ; viewers pair flows by id, cat and name"));
    if (f.ts < s.ts - kTraceTimeSlackUs)
      return invalid(absl::StrCat("flow id ", key, " ends (event ", f.event, ", ", us(f.ts),
                                  " us) before it starts (event ", s.event, ", ", us(s.ts), " us)"));
    for (const FlowEnd *end : {&s, &f})
      if (!bindSlice(trace, *end, end == &s ? Bind::Start : Bind::Finish))
        return invalid(absl::StrCat("flow id ", key, ": event ", end->event, " at ", us(end->ts),
                                    " us on ", laneText(trace, end->lane),
                                    " is not inside any complete event of that lane"));
  }
  return absl::OkStatus();
}

absl::Status checkParsed(const ParsedTrace &trace) {
  if (absl::Status s = checkNames(trace); !s.ok()) return s;
  if (absl::Status s = checkOverlaps(trace); !s.ok()) return s;
  return checkFlows(trace);
}

absl::Status checkEdges(const ParsedTrace &trace, const codegen::Program &program) {
  int64_t numCalls = static_cast<int64_t>(program.calls.size());
  std::vector<const Slice *> taskSlice(program.calls.size(), nullptr);
  for (const auto &[lane, slices] : trace.lanes)
    for (const Slice &slice : slices) {
      if (slice.call < 0) continue;
      if (slice.call >= numCalls)
        return invalid(absl::StrCat("task event ", slice.event, " names call ", slice.call,
                                    " but the program has ", numCalls, " calls"));
      if (taskSlice[slice.call])
        return invalid(absl::StrCat("call ", slice.call, " has two task events (", 
                                    taskSlice[slice.call]->event, " and ", slice.event, ")"));
      taskSlice[slice.call] = &slice;
    }
  for (int64_t c = 0; c < numCalls; ++c)
    if (!taskSlice[c]) return invalid(absl::StrCat("call ", c, " has no task event"));

  // Each flow pair must connect the task events of one edge.
  std::vector<std::pair<int64_t, int64_t>> found; // (pred, succ)
  for (const Flow &flow : trace.flows) {
    const std::string &key = flow.id;
    const Slice *from = bindSlice(trace, *flow.start, Bind::Start);
    const Slice *to = bindSlice(trace, *flow.finish, Bind::Finish);
    if (from->call < 0 || to->call < 0)
      return invalid(absl::StrCat("flow id ", key, " connects event ", from->event, " ('",
                                  eventName(trace, *from), "') to event ", to->event, " ('",
                                  eventName(trace, *to),
                                  "'); both ends must be task events"));
    found.push_back({from->call, to->call});
  }
  std::vector<std::pair<int64_t, int64_t>> expected;
  for (int64_t c = 0; c < numCalls; ++c)
    for (int p : program.calls[c].preds) expected.push_back({p, c});
  std::sort(found.begin(), found.end());
  std::sort(expected.begin(), expected.end());
  for (size_t i = 1; i < found.size(); ++i)
    if (found[i] == found[i - 1])
      return invalid(absl::StrCat("edge call ", found[i].first, " -> call ", found[i].second,
                                  " has more than one flow pair"));
  std::vector<std::pair<int64_t, int64_t>> missing, extra;
  std::set_difference(expected.begin(), expected.end(), found.begin(), found.end(),
                      std::back_inserter(missing));
  std::set_difference(found.begin(), found.end(), expected.begin(), expected.end(),
                      std::back_inserter(extra));
  if (!missing.empty())
    return invalid(absl::StrCat("edge call ", missing.front().first, " -> call ",
                                missing.front().second, " has no flow pair (", missing.size(),
                                " of ", expected.size(), " edges missing)"));
  if (!extra.empty())
    return invalid(absl::StrCat("a flow pair runs from call ", extra.front().first, " to call ",
                                extra.front().second, ", which is not a dependency edge"));
  return absl::OkStatus();
}

} // namespace

absl::Status checkTrace(llvm::StringRef json) {
  ParsedTrace trace;
  if (absl::Status s = parseTrace(json, trace); !s.ok()) return s;
  return checkParsed(trace);
}

absl::Status checkTraceMatches(llvm::StringRef json, const codegen::Program &program) {
  ParsedTrace trace;
  if (absl::Status s = parseTrace(json, trace); !s.ok()) return s;
  if (absl::Status s = checkParsed(trace); !s.ok()) return s;
  return checkEdges(trace, program);
}

} // namespace ptoc::profile
