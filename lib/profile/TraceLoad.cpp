// Loading a swimlane trace for the analysis: parse the JSON, check the structure ptoc
// writes (otherData, named lanes, task and pipe events, paired flows) and collect it
// into TraceData. Every problem is an error naming the file, the event and the key.
#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_map>

#include "absl/strings/str_cat.h"
#include "absl/strings/numbers.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Regex.h"
#include "ptoc/profile/RunOutputs.h"
#include "ptoc/profile/TraceAnalysis.h"
#include "ptoc/profile/TraceCheck.h"

namespace ptoc::profile {

namespace {

/// Deeper nesting than any ptoc trace has; checked before parsing so a hostile file
/// cannot exhaust the recursive parser's stack.
constexpr int kMaxDepth = 64;
constexpr const char *kRerunHint =
    "(a truncated trace? re-run with runtime_debug_mode=1 and let the run finish)";

using LaneKey = std::pair<int64_t, int64_t>; // (pid, tid)

/// A lane named "AIV_3" (a core's task lane) or "AIV_3 MTE2" (one of its pipes).
struct Lane {
  std::string kind;
  int core = -1;
  std::string pipe; ///< empty for the task lane
};

class Loader {
public:
  Loader(llvm::StringRef name) : name_(name.str()) {}

  absl::StatusOr<TraceData> load(llvm::StringRef text);

private:
  absl::Status error(const std::string &message) const {
    return absl::InvalidArgumentError(absl::StrCat(name_, ": ", message));
  }
  absl::Status eventError(size_t index, const llvm::json::Object &event,
                          const std::string &message) const {
    std::string label;
    if (llvm::Optional<llvm::StringRef> n = event.getString("name"))
      label = absl::StrCat(" ('", n->str(), "')");
    return error(absl::StrCat("event ", index, label, ": ", message));
  }
  absl::Status checkDepth(llvm::StringRef text) const;
  absl::Status readOtherData(const llvm::json::Object &root, TraceData &out) const;
  absl::Status readMetadata(const llvm::json::Array &events);
  absl::Status readEvents(const llvm::json::Array &events, TraceData &out);
  absl::Status resolveFlows(TraceData &out);
  /// The lane of an event, from its pid/tid and the thread_name metadata.
  absl::StatusOr<Lane> laneOf(size_t index, const llvm::json::Object &event, LaneKey &key) const;

  std::string name_;
  std::map<int64_t, std::string> processNames_;
  std::map<LaneKey, std::string> threadNames_;
  /// Per task lane, the calls on it sorted by start (to bind flow ends to slices).
  std::map<LaneKey, std::vector<int64_t>> laneTasks_;
  struct FlowEnd {
    size_t event = 0;
    LaneKey lane;
    double ts = 0;
  };
  struct Flow {
    std::optional<FlowEnd> start, finish;
  };
  std::map<std::string, Flow> flows_;
  std::vector<std::string> flowOrder_;
};

absl::Status Loader::checkDepth(llvm::StringRef text) const {
  int depth = 0;
  bool inString = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (inString) {
      if (c == '\\') ++i;
      else if (c == '"') inString = false;
      continue;
    }
    if (c == '"') inString = true;
    else if (c == '[' || c == '{') {
      if (++depth > kMaxDepth)
        return error(absl::StrCat("JSON nested deeper than ", kMaxDepth, " levels at byte ", i,
                                  ": not a ptoc trace"));
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return absl::OkStatus();
}

/// A required number of otherData.
absl::Status need(const llvm::json::Object &other, llvm::StringRef key, double &out,
                  const std::function<absl::Status(const std::string &)> &fail) {
  llvm::Optional<double> v = other.getNumber(key);
  if (!v || !std::isfinite(*v))
    return fail(absl::StrCat("otherData.", key.str(), " is missing or not a number"));
  out = *v;
  return absl::OkStatus();
}

absl::Status Loader::readOtherData(const llvm::json::Object &root, TraceData &out) const {
  const llvm::json::Object *other = root.getObject("otherData");
  if (!other)
    return error("no \"otherData\" object: ptoc prof reads traces written by ptoc (a run "
                 "with runtime_debug_mode=1 or 2), which record the run's function, device "
                 "and times there " +
                 std::string(kRerunHint));
  auto fail = [&](const std::string &message) {
    return error(absl::StrCat(message, " (is this a trace written by ptoc?)"));
  };
  llvm::Optional<llvm::StringRef> func = other->getString("func");
  llvm::Optional<llvm::StringRef> device = other->getString("device");
  if (!func || !device) return fail("otherData.func or otherData.device is missing");
  out.func = func->str();
  out.device = device->str();
  if (llvm::Optional<llvm::StringRef> limiter = other->getString("limiter"))
    out.limiter = limiter->str();
  double schedMode = 0, aic = 0, aiv = 0, threads = 0;
  for (auto [key, slot] : {std::pair<llvm::StringRef, double *>{"simulated_us", &out.simulatedUs},
                           {"bound_us", &out.boundUs},
                           {"head_us", &out.headUs},
                           {"clock_mhz", &out.clockMHz},
                           {"sched_mode", &schedMode},
                           {"aic_cores", &aic},
                           {"aiv_cores", &aiv}})
    if (absl::Status s = need(*other, key, *slot, fail); !s.ok()) return s;
  if (llvm::Optional<double> t = other->getNumber("scheduler_threads")) threads = *t;
  constexpr double kMaxCores = 1 << 20;
  if (aic < 0 || aiv < 0 || aic > kMaxCores || aiv > kMaxCores)
    return fail("otherData.aic_cores / aiv_cores out of range");
  out.schedMode = static_cast<int>(schedMode);
  out.aicCores = static_cast<int>(aic);
  out.aivCores = static_cast<int>(aiv);
  out.schedulerThreads = static_cast<int>(threads);
  out.ratio = other->getNumber("ratio").getValueOr(
      out.simulatedUs > 0 ? out.boundUs / out.simulatedUs : 0.0);
  return absl::OkStatus();
}

/// Parses "AIV_17" / "AIV_17 MTE2".
std::optional<Lane> parseLaneName(llvm::StringRef name) {
  auto [coreName, pipe] = name.split(' ');
  auto [kind, index] = coreName.split('_');
  if (kind != "AIC" && kind != "AIV") return std::nullopt;
  int core = -1;
  if (!absl::SimpleAtoi(absl::string_view(index.data(), index.size()), &core) || core < 0)
    return std::nullopt;
  return Lane{kind.str(), core, pipe.trim().str()};
}

absl::Status Loader::readMetadata(const llvm::json::Array &events) {
  for (size_t i = 0; i < events.size(); ++i) {
    const llvm::json::Object *event = events[i].getAsObject();
    if (!event) return error(absl::StrCat("event ", i, " is not a JSON object"));
    llvm::Optional<llvm::StringRef> ph = event->getString("ph");
    if (!ph) return eventError(i, *event, "no string \"ph\" (event phase)");
    if (*ph != "M") continue;
    llvm::Optional<llvm::StringRef> kind = event->getString("name");
    if (!kind || (*kind != "process_name" && *kind != "thread_name")) continue;
    llvm::Optional<int64_t> pid = event->getInteger("pid");
    const llvm::json::Object *args = event->getObject("args");
    llvm::Optional<llvm::StringRef> label = args ? args->getString("name") : llvm::None;
    if (!pid || !label)
      return eventError(i, *event, "metadata without an integer \"pid\" or a string args.name");
    if (*kind == "process_name") {
      processNames_[*pid] = label->str();
      continue;
    }
    llvm::Optional<int64_t> tid = event->getInteger("tid");
    if (!tid) return eventError(i, *event, "thread_name without an integer \"tid\"");
    threadNames_[{*pid, *tid}] = label->str();
  }
  return absl::OkStatus();
}

absl::StatusOr<Lane> Loader::laneOf(size_t index, const llvm::json::Object &event,
                                    LaneKey &key) const {
  llvm::Optional<int64_t> pid = event.getInteger("pid"), tid = event.getInteger("tid");
  if (!pid || !tid) return eventError(index, event, "no integer \"pid\" and \"tid\"");
  key = {*pid, *tid};
  auto name = threadNames_.find(key);
  if (name == threadNames_.end())
    return eventError(index, event,
                      absl::StrCat("lane pid ", *pid, " tid ", *tid,
                                   " has no thread_name metadata (cannot tell its core)"));
  std::optional<Lane> lane = parseLaneName(name->second);
  if (!lane)
    return eventError(index, event,
                      absl::StrCat("lane pid ", *pid, " tid ", *tid, " is named '", name->second,
                                   "', not a core lane like 'AIV_3' or 'AIV_3 MTE2'"));
  auto process = processNames_.find(*pid);
  if (process != processNames_.end() && process->second != lane->kind)
    return eventError(index, event,
                      absl::StrCat("lane '", name->second, "' is in process '", process->second,
                                   "', expected '", lane->kind, "'"));
  return *lane;
}

/// A required non-negative finite time of an event.
bool readTime(const llvm::json::Object &object, llvm::StringRef key, double &out) {
  llvm::Optional<double> v = object.getNumber(key);
  if (!v || !std::isfinite(*v) || *v < 0) return false;
  out = *v;
  return true;
}

absl::Status Loader::readEvents(const llvm::json::Array &events, TraceData &out) {
  std::unordered_map<int64_t, size_t> callEvent;
  for (size_t i = 0; i < events.size(); ++i) {
    const llvm::json::Object &event = *events[i].getAsObject(); // checked by readMetadata
    llvm::StringRef ph = *event.getString("ph");
    llvm::StringRef cat = event.getString("cat").getValueOr("");
    if (ph == "X" && (cat == "task" || cat == "pipe")) {
      LaneKey key;
      absl::StatusOr<Lane> lane = laneOf(i, event, key);
      if (!lane.ok()) return lane.status();
      double ts = 0, dur = 0;
      if (!readTime(event, "ts", ts) || !readTime(event, "dur", dur))
        return eventError(i, event, "\"ts\" and \"dur\" must be finite numbers >= 0");
      const llvm::json::Object *args = event.getObject("args");
      if (!args) return eventError(i, event, "no \"args\" object");
      if (cat == "pipe") {
        if (lane->pipe.empty())
          return eventError(i, event, "a pipe event on a core's task lane (expected a lane "
                                      "named like 'AIV_3 MTE2')");
        TracePipe pipe{lane->kind, lane->core, lane->pipe, args->getInteger("task").getValueOr(-1),
                       ts, dur, args->getInteger("bytes").getValueOr(0)};
        if (pipe.bytes < 0) return eventError(i, event, "args.bytes is negative");
        out.pipes.push_back(std::move(pipe));
        continue;
      }
      if (!lane->pipe.empty())
        return eventError(i, event, "a task event on a pipe lane");
      TraceTask task;
      llvm::Optional<int64_t> call = args->getInteger("call");
      llvm::Optional<int64_t> order = args->getInteger("hash_order");
      if (!call || *call < 0)
        return eventError(i, event, "args.call is missing or not an integer >= 0");
      if (!order) return eventError(i, event, "args.hash_order is missing or not an integer");
      if (auto [it, inserted] = callEvent.try_emplace(*call, i); !inserted)
        return eventError(i, event,
                          absl::StrCat("call ", *call, " already has task event ", it->second));
      task.call = *call;
      task.hashOrder = static_cast<int>(*order);
      task.subgraph = static_cast<int>(args->getInteger("subgraph").getValueOr(-1));
      task.leaf = static_cast<int>(args->getInteger("leaf").getValueOr(-1));
      task.groupSize = static_cast<int>(args->getInteger("group_size").getValueOr(0));
      task.leafHash = args->getString("leaf_hash").getValueOr("").str();
      task.kind = lane->kind;
      task.coreIndex = lane->core;
      task.startUs = ts;
      task.durUs = dur;
      // A trace without ready times reads as "ready when started" (no scheduling wait).
      task.readyUs = args->getNumber("ready_us").getValueOr(ts);
      task.dispatchUs = args->getNumber("dispatch_us").getValueOr(ts);
      if (!std::isfinite(task.readyUs) || !std::isfinite(task.dispatchUs))
        return eventError(i, event, "args.ready_us / dispatch_us are not finite");
      task.thread = static_cast<int>(args->getInteger("thread").getValueOr(-1));
      task.bytesIn = args->getInteger("bytes_in").getValueOr(0);
      task.bytesOut = args->getInteger("bytes_out").getValueOr(0);
      task.l2HitBytes = args->getInteger("l2_hit_bytes").getValueOr(0);
      int cores = task.kind == "AIC" ? out.aicCores : out.aivCores;
      if (task.coreIndex >= cores)
        return eventError(i, event,
                          absl::StrCat("runs on ", task.core(), " but otherData says the device "
                                       "has ", cores, " ", task.kind, " cores"));
      laneTasks_[key].push_back(task.call);
      if (static_cast<size_t>(task.call) >= out.tasks.size()) {
        // Calls count from 0; a call far beyond the task count is caught below.
        if (task.call > static_cast<int64_t>(events.size()))
          return eventError(i, event, absl::StrCat("args.call ", task.call,
                                                   " is beyond the number of events"));
        out.tasks.resize(task.call + 1);
      }
      out.tasks[task.call] = std::move(task);
      continue;
    }
    if ((ph == "s" || ph == "f") && cat == "dep") {
      const llvm::json::Value *id = event.get("id");
      if (!id || (!id->getAsInteger() && !id->getAsString()))
        return eventError(i, event, "flow event without an integer or string \"id\"");
      std::string key = id->getAsInteger() ? absl::StrCat("#", *id->getAsInteger())
                                            : absl::StrCat("\"", id->getAsString()->str(), "\"");
      llvm::Optional<int64_t> pid = event.getInteger("pid"), tid = event.getInteger("tid");
      double ts = 0;
      if (!pid || !tid || !readTime(event, "ts", ts))
        return eventError(i, event, "flow event without integer pid/tid and a time \"ts\"");
      auto [it, inserted] = flows_.try_emplace(key);
      if (inserted) flowOrder_.push_back(key);
      std::optional<FlowEnd> &end = ph == "s" ? it->second.start : it->second.finish;
      if (end)
        return eventError(i, event, absl::StrCat("flow id ", key, " has a second '", ph.str(),
                                                 "' (first at event ", end->event, ")"));
      end = FlowEnd{i, {*pid, *tid}, ts};
    }
  }
  for (size_t c = 0; c < out.tasks.size(); ++c)
    if (out.tasks[c].call < 0)
      return error(absl::StrCat("no task event for call ", c, " (calls ", 0, "..",
                                out.tasks.size() - 1, " have gaps) ", kRerunHint));
  return absl::OkStatus();
}

absl::Status Loader::resolveFlows(TraceData &out) {
  for (auto &[key, calls] : laneTasks_)
    std::sort(calls.begin(), calls.end(), [&](int64_t a, int64_t b) {
      return out.tasks[a].startUs < out.tasks[b].startUs;
    });
  // The task on `lane` whose slice holds `ts` (flow ends sit just inside their slice).
  auto taskAt = [&](const FlowEnd &end) -> int64_t {
    auto lane = laneTasks_.find(end.lane);
    if (lane == laneTasks_.end()) return -1;
    const std::vector<int64_t> &calls = lane->second;
    auto it = std::upper_bound(calls.begin(), calls.end(), end.ts + kTraceTimeSlackUs,
                               [&](double t, int64_t c) { return t < out.tasks[c].startUs; });
    if (it == calls.begin()) return -1;
    const TraceTask &task = out.tasks[*(it - 1)];
    return end.ts <= task.endUs() + kTraceTimeSlackUs ? task.call : -1;
  };
  for (const std::string &key : flowOrder_) {
    const Flow &flow = flows_[key];
    if (!flow.start || !flow.finish)
      return error(absl::StrCat("flow id ", key, " has a '", flow.start ? "s" : "f",
                                "' event (event ", (flow.start ? flow.start : flow.finish)->event,
                                ") but no '", flow.start ? "f" : "s", "' ", kRerunHint));
    int64_t producer = taskAt(*flow.start), consumer = taskAt(*flow.finish);
    if (producer < 0 || consumer < 0)
      return error(absl::StrCat("flow id ", key, ": its '", producer < 0 ? "s" : "f",
                                "' event (event ",
                                (producer < 0 ? flow.start : flow.finish)->event,
                                ") does not lie on a task slice"));
    out.tasks[consumer].preds.push_back(producer);
    ++out.edges;
  }
  return absl::OkStatus();
}

absl::StatusOr<TraceData> Loader::load(llvm::StringRef text) {
  if (absl::Status s = checkDepth(text); !s.ok()) return s;
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(text);
  if (!parsed) {
    std::string message = llvm::toString(parsed.takeError());
    // llvm::json reports "[line:col, byte=N]: message".
    llvm::SmallVector<llvm::StringRef, 4> m;
    if (llvm::Regex("^\\[([0-9]+):([0-9]+), byte=[0-9]+\\]: (.*)$").match(message, &m))
      message = absl::StrCat("line ", m[1].str(), " col ", m[2].str(), ": ", m[3].str());
    return error(absl::StrCat("not valid JSON at ", message, " ", kRerunHint));
  }
  const llvm::json::Object *root = parsed->getAsObject();
  if (!root) return error("the trace is not a JSON object (expected {\"traceEvents\": [...]})");
  const llvm::json::Array *events = root->getArray("traceEvents");
  if (!events) return error("no \"traceEvents\" array: not a Chrome trace-event file");
  TraceData out;
  out.path = name_;
  if (absl::Status s = readOtherData(*root, out); !s.ok()) return s;
  if (llvm::Optional<int64_t> tasks = root->getObject("otherData")->getInteger("tasks");
      tasks && *tasks < 0)
    return error("otherData.tasks is negative");
  if (absl::Status s = readMetadata(*events); !s.ok()) return s;
  if (absl::Status s = readEvents(*events, out); !s.ok()) return s;
  const llvm::json::Object &other = *root->getObject("otherData");
  if (llvm::Optional<int64_t> tasks = other.getInteger("tasks");
      tasks && *tasks != static_cast<int64_t>(out.tasks.size()))
    return error(absl::StrCat("the trace holds ", out.tasks.size(),
                              " task events but otherData.tasks is ", *tasks, " ", kRerunHint));
  if (absl::Status s = resolveFlows(out); !s.ok()) return s;
  if (llvm::Optional<int64_t> edges = other.getInteger("edges"); edges && *edges != out.edges)
    return error(absl::StrCat("the trace holds ", out.edges,
                              " dependency flow pairs but otherData.edges is ", *edges,
                              " (a trace written without flows cannot give a critical path) ",
                              kRerunHint));
  for (const TracePipe &pipe : out.pipes)
    if (pipe.task >= static_cast<int64_t>(out.tasks.size()))
      return error(absl::StrCat("a pipe event names task ", pipe.task, " but the trace has ",
                                out.tasks.size(), " tasks"));
  return out;
}

/// Fills the bound terms and traffic from summary.json beside `traceFile`, if it is
/// there, parses and describes the same run; otherwise leaves them zero (the
/// analysis needs only the trace).
void readRunSummary(llvm::StringRef traceFile, TraceData &out) {
  llvm::SmallString<256> file(traceFile);
  llvm::sys::path::remove_filename(file);
  llvm::sys::path::append(file, kSummaryJsonFile);
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer = llvm::MemoryBuffer::getFile(file);
  if (!buffer) return;
  llvm::StringRef text = (*buffer)->getBuffer();
  // summary.json is flat and small; the depth check guards the recursive parser anyway.
  constexpr size_t kMaxSummaryBytes = 64 << 20;
  if (text.size() > kMaxSummaryBytes) return;
  int depth = 0, maxDepth = 0;
  for (char c : text) {
    if (c == '{' || c == '[') maxDepth = std::max(maxDepth, ++depth);
    if (c == '}' || c == ']') --depth;
  }
  if (maxDepth > kMaxDepth) return;
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(text);
  if (!parsed) {
    llvm::consumeError(parsed.takeError());
    return;
  }
  const llvm::json::Object *root = parsed->getAsObject();
  if (!root) return;
  const llvm::json::Object *bound = root->getObject("bound");
  const llvm::json::Object *bytes = root->getObject("bytes");
  llvm::Optional<double> simulated = root->getNumber("simulated_us");
  // Three decimals in both files: equal runs agree to the nanosecond.
  constexpr double kSameRunUs = 1e-3;
  if (!bound || !bytes || root->getString("func") != llvm::Optional<llvm::StringRef>(out.func) ||
      !simulated || std::abs(*simulated - out.simulatedUs) > kSameRunUs)
    return;
  out.runSummaryPath = file.str().str();
  out.cubeBoundUs = bound->getNumber("cube_us").getValueOr(0);
  out.vectorBoundUs = bound->getNumber("vector_us").getValueOr(0);
  out.hbmBoundUs = bound->getNumber("hbm_us").getValueOr(0);
  out.compulsoryHbmBytes = bound->getInteger("compulsory_hbm_bytes").getValueOr(0);
  out.hbmReadBytes = bytes->getInteger("hbm_read").getValueOr(0);
  out.hbmWriteBytes = bytes->getInteger("hbm_write").getValueOr(0);
  out.l2HitBytes = bytes->getInteger("l2_hit").getValueOr(0);
  out.l2MissBytes = bytes->getInteger("l2_miss").getValueOr(0);
}

} // namespace

std::string TraceTask::core() const { return absl::StrCat(kind, "_", coreIndex); }

absl::StatusOr<TraceData> parseTrace(llvm::StringRef json, llvm::StringRef name) {
  return Loader(name).load(json);
}

absl::StatusOr<TraceData> loadTrace(llvm::StringRef path) {
  std::string file = path.str();
  if (llvm::sys::fs::is_directory(path)) {
    llvm::SmallString<256> joined(path);
    llvm::sys::path::append(joined, kSwimlaneFile);
    file = joined.str().str();
    if (!llvm::sys::fs::exists(file))
      return absl::NotFoundError(absl::StrCat(
          "no ", kSwimlaneFile, " in folder ", path.str(),
          ": a run writes it with runtime_debug_mode=1 or 2 (ptoc run --debug-mode 1)"));
  }
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer = llvm::MemoryBuffer::getFile(file);
  if (!buffer)
    return absl::NotFoundError(
        absl::StrCat("cannot read trace ", file, ": ", buffer.getError().message(),
                     " (give a merged_swimlane.json or the run folder holding it)"));
  absl::StatusOr<TraceData> trace = parseTrace((*buffer)->getBuffer(), file);
  if (trace.ok()) readRunSummary(file, *trace);
  return trace;
}

} // namespace ptoc::profile
