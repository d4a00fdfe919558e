// Reading ptoc's own swimlane trace into a Timeline: read it event by event
// (TraceScanner.h), check the structure ptoc writes (otherData, named lanes, task and
// pipe events, paired flows) and keep only what the timeline holds. Every problem is an
// error naming the file, the event and the key; when a trace has several, the one
// reported is the first in file order, as if the checks ran over a fully parsed
// document. A trace without otherData is handed back for family detection.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <unordered_map>

#include "TraceFamilies.h"
#include "TraceScanner.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/numbers.h"
#include "ptoc/analysis/Subgraphs.h"
#include "ptoc/profile/TraceCheck.h"
#include "ptoc/runtime/SchedParallelism.h"
#include "ptoc/runtime/Simulator.h"

namespace ptoc::profile {

namespace {

/// F of a group key "func<F>_<order>"; 0 for anything else.
int64_t funcOfGroupKey(llvm::StringRef key) {
  int64_t f = 0;
  if (!key.consume_front("func")) return 0;
  llvm::StringRef digits = key.take_until([](char c) { return c == '_'; });
  if (digits.size() > 9 || digits.getAsInteger(10, f)) return 0;
  return f;
}

/// One task ('X' event with cat "task") as read.
struct LoadedTask {
  int64_t call = -1;
  int subgraph = -1, leaf = -1, hashOrder = -1;
  /// The root function of its group key func<F>_<order> (args.group; 0 when absent): a
  /// program with loops has groups of the same hash order in several functions.
  int64_t func = 0;
  std::string kind;          ///< "AIC" / "AIV" (from the lane's process name)
  int coreIndex = -1;        ///< from the lane name "AIV_17"
  double startUs = 0, durUs = 0;
  std::optional<double> readyUs, dispatchUs;
  int thread = -1;
  int64_t bytesIn = 0, bytesOut = 0, l2HitBytes = 0;
  /// args.read_stall_us and fill_wait_us (traces written since they were recorded)
  std::optional<double> readStallUs;
  double fillWaitUs = 0;
  int instance = -1;         ///< index into LoadedTrace::instances (args.loop, ...)
  double endUs() const { return startUs + durUs; }
  std::string core() const { return absl::StrCat(kind, "_", coreIndex); }
};

/// One pipe instruction ('X' event with cat "pipe", runtime_debug_mode=2) as read.
struct LoadedPipe {
  std::string kind;
  int coreIndex = -1;
  std::string pipe;
  int64_t task = -1;
  double startUs = 0, durUs = 0;
  int64_t bytes = 0;
};

/// What a hash order's group is, from its task with the lowest call (kept once per
/// group, not per task).
struct LoadedGroup {
  int64_t call = -1;
  std::string leafHash, key;
  int groupSize = 0;
  bool singleBuffered = false;
};

/// A trace as read: otherData, tasks by call, pipes and the flows bound to tasks.
struct LoadedTrace {
  /// By (function, hash order).
  std::map<std::pair<int64_t, int>, LoadedGroup> groups;
  std::string func, device, limiter;
  int schedMode = 0;
  double clockMHz = 0;
  int aicCores = 0, aivCores = 0, schedulerThreads = 0;
  double simulatedUs = 0, boundUs = 0, headUs = 0, ratio = 0;
  int64_t edges = 0;
  std::vector<LoadedTask> tasks; ///< indexed by call
  std::vector<LoadedPipe> pipes;
  EdgeList flows;
  /// Loops: otherData.loops and the tasks' args.loop / iteration / body / body_hash.
  std::optional<TimelineLoops> loops;
};

/// Largest core, scheduler-thread or small-id count read from a trace (ids, hash
/// orders, group sizes, thread numbers): they are ints in ptoc's records.
constexpr int64_t kMaxTraceIndex = std::numeric_limits<int>::max();
/// For a complete file whose content is not: counts that disagree, a flow with one end.
constexpr const char *kRerunHint =
    "(was the run interrupted or the trace edited? re-run with runtime_debug_mode=1 and let "
    "the run finish)";

using LaneKey = std::pair<int64_t, int64_t>; // (pid, tid)

/// A lane named "AIV_3" (a core's task lane) or "AIV_3 MTE2" (one of its pipes).
struct Lane {
  std::string kind;
  int core = -1;
  std::string pipe; ///< empty for the task lane
};

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

/// The checks of one task or pipe event, in the order they run on it; an error's
/// place in the file is (event, check), so checks that must wait for the end of the
/// file (lane names, otherData, the event count) still report the first problem.
enum Check {
  kLanePidTid,
  kLaneName,
  kTimes,
  kArgs,
  kLaneIsPipe,
  kPipeBytes,
  kCall = kPipeBytes,
  kHashOrder,
  kDuplicateCall,
  kReadyTimes,
  kArgNumbers,
  kCoreCount,
  kCallRange,
};

/// otherData as read (checked once the whole file is read).
struct OtherData {
  bool present = false, isObject = false;
  std::optional<std::string> func, device, limiter;
  std::map<std::string, std::optional<double>> numbers;
  std::optional<double> threads, ratio;
  std::optional<int64_t> tasks, edges;
  /// otherData.loops (a run with loops): its members as read.
  bool loops = false;
  std::optional<int64_t> stitches;
  std::optional<double> controlBusyUs, controlWaitUs, barrierWaitUs;
  std::optional<int64_t> parallelism; ///< absent: no parallel loops
  std::optional<bool> parallelismDerived;
  /// Workspace recycling; absent: no iteration has intermediates of its own.
  std::optional<int64_t> workspacePools, workspacePoolBytes, workspaceWraps;
};

class Loader {
public:
  Loader(llvm::StringRef name) : name_(name.str()) {}

  /// The trace, or nullopt when the text is a well-formed trace without "otherData"
  /// (another family's; `sniff` says what it holds).
  std::optional<absl::StatusOr<LoadedTrace>> load(llvm::StringRef text, TraceSniff &sniff);

private:
  absl::Status error(const std::string &message) const {
    return absl::InvalidArgumentError(absl::StrCat(name_, ": ", message));
  }
  absl::Status eventError(size_t index, JsonRef event, const std::string &message) const {
    std::string label;
    if (std::optional<llvm::StringRef> n = event.getString("name"))
      label = absl::StrCat(" ('", n->str(), "')");
    return error(absl::StrCat("event ", index, label, ": ", message));
  }
  /// eventError for an event read earlier, re-read from its offset (error paths only).
  absl::Status eventErrorAt(size_t index, size_t offset, const std::string &message) const {
    JsonReader reader(text_.drop_front(offset));
    JsonDoc doc;
    if (reader.parse(doc)) return eventError(index, doc.root(), message);
    return error(absl::StrCat("event ", index, ": ", message));
  }
  /// Keeps the first error in file order: (phase, event, check).
  void propose(int phase, size_t event, int check, absl::Status status) {
    auto key = std::make_tuple(phase, event, check);
    if (!first_ || key < first_->first) first_ = {key, std::move(status)};
  }
  /// Whether events from `index` on can still change the reported error.
  bool eventsMatter(size_t index) const {
    return !first_ || std::make_tuple(1, index, 0) < first_->first;
  }

  absl::Status onEvent(size_t index, JsonRef event, llvm::StringRef eventText);
  void readMetadata(size_t index, JsonRef event);
  void readEvent(size_t index, JsonRef event, size_t offset);
  void readOtherData(JsonRef other);
  absl::Status checkOtherData(LoadedTrace &out) const;
  /// The lane of an event: its checks from kLaneName on (up to `before`), with the
  /// error proposed; nullopt when there is one.
  std::optional<Lane> laneOf(size_t index, size_t offset, LaneKey key, bool pipe, int before);
  void checkDeferred(LoadedTrace &out, size_t events);
  absl::Status resolveFlows(LoadedTrace &out);

  std::string name_;
  llvm::StringRef text_;
  std::optional<std::pair<std::tuple<int, size_t, int>, absl::Status>> first_;
  OtherData other_;
  std::map<int64_t, std::string> processNames_;
  std::map<LaneKey, std::string> threadNames_;

  /// What was read of each task (indexed by call, as LoadedTrace::tasks) and pipe
  /// event, to finish once the lane names and otherData are known.
  struct Source {
    size_t event = 0, offset = 0;
    LaneKey lane;
  };
  std::vector<Source> taskSource_, pipeSource_;
  /// The event whose own checks failed: its lane is still checked (an earlier check).
  struct Failed {
    size_t event = 0, offset = 0;
    LaneKey lane;
    bool pipe = false;
    int check = 0;
  };
  std::optional<Failed> failed_;

  struct FlowEnd {
    size_t event = 0;
    LaneKey lane;
    double ts = 0;
  };
  struct Flow {
    std::optional<FlowEnd> start, finish;
    int64_t id = 0;
    int stringId = -1; ///< index into flowStrings_, or -1 for an integer id
    bool writeOrder = false; ///< named "write order": keeps writes of one region in order
  };
  std::string flowKey(const Flow &flow) const {
    return flow.stringId < 0 ? absl::StrCat("#", flow.id)
                             : absl::StrCat("\"", flowStrings_[flow.stringId], "\"");
  }
  std::vector<Flow> flows_; ///< in order of first sight
  std::unordered_map<int64_t, size_t> intFlows_;
  std::unordered_map<std::string, size_t> stringFlows_;
  std::vector<std::string> flowStrings_;
  std::vector<LoadedTask> tasks_;
  std::map<std::pair<int64_t, int>, LoadedGroup> groups_;
  std::vector<LoadedPipe> pipes_;
  /// Running totals of the byte counts, so the analysis's sums cannot overflow.
  int64_t bytesIn_ = 0, bytesOut_ = 0, pipeBytes_ = 0;
  /// Loop bodies (name, hash) and iterations (body, loop, iteration) named by tasks.
  std::map<std::pair<std::string, std::string>, size_t> bodyIndex_;
  /// (body, loop, iteration, args.instance or -1): iteration values repeat under an
  /// enclosing loop, the instance number tells the runs apart.
  std::map<std::tuple<int, std::string, int64_t, int64_t>, size_t> instanceIndex_;
  std::vector<TimelineBody> bodies_;
  std::vector<TimelineInstance> instances_;
};

void Loader::readOtherData(JsonRef other) {
  other_.present = true;
  if (!other.isObject()) return;
  other_.isObject = true;
  auto str = [&](llvm::StringRef key) -> std::optional<std::string> {
    if (std::optional<llvm::StringRef> v = other.getString(key)) return v->str();
    return std::nullopt;
  };
  other_.func = str("func");
  other_.device = str("device");
  other_.limiter = str("limiter");
  for (const char *key : {"simulated_us", "bound_us", "head_us", "clock_mhz", "sched_mode",
                          "aic_cores", "aiv_cores"})
    other_.numbers[key] = other.getNumber(key);
  other_.threads = other.getNumber("scheduler_threads");
  other_.ratio = other.getNumber("ratio");
  other_.tasks = other.getInteger("tasks");
  other_.edges = other.getInteger("edges");
  if (std::optional<JsonRef> loops = other.getObject("loops")) {
    other_.loops = true;
    other_.stitches = loops->getInteger("stitches");
    other_.controlBusyUs = loops->getNumber("control_busy_us");
    other_.controlWaitUs = loops->getNumber("control_wait_us");
    other_.barrierWaitUs = loops->getNumber("barrier_wait_us");
    other_.parallelism = loops->getInteger("parallelism");
    other_.parallelismDerived = loops->getBool("parallelism_derived");
    other_.workspacePools = loops->getInteger("workspace_pools");
    other_.workspacePoolBytes = loops->getInteger("workspace_pool_bytes");
    other_.workspaceWraps = loops->getInteger("workspace_wraps");
  }
}

absl::Status Loader::checkOtherData(LoadedTrace &out) const {
  if (!other_.isObject)
    return error("\"otherData\" is not an object: ptoc's traces record the run's function, "
                 "device and times there (is this a trace written by ptoc?)");
  auto fail = [&](const std::string &message) {
    return error(absl::StrCat(message, " (is this a trace written by ptoc?)"));
  };
  if (!other_.func || !other_.device) return fail("otherData.func or otherData.device is missing");
  out.func = *other_.func;
  out.device = *other_.device;
  if (other_.limiter) out.limiter = *other_.limiter;
  // Times are in [0, kMaxTraceUs]; the counts are whole numbers that fit ptoc's ints
  // (the core counts are the lanes' bounds, so they must be exact).
  double schedMode = 0, aic = 0, aiv = 0, threads = 0;
  constexpr double kMaxIndex = static_cast<double>(kMaxTraceIndex);
  struct Field {
    const char *key;
    double *slot;
    double lo, hi;
    bool whole;
  };
  for (const Field &f : {Field{"simulated_us", &out.simulatedUs, 0, kMaxTraceUs, false},
                         Field{"bound_us", &out.boundUs, 0, kMaxTraceUs, false},
                         Field{"head_us", &out.headUs, 0, kMaxTraceUs, false},
                         Field{"clock_mhz", &out.clockMHz, 0, kMaxTraceUs, false},
                         Field{"sched_mode", &schedMode, runtime::kMinSchedMode,
                               runtime::kMaxSchedMode, true},
                         Field{"aic_cores", &aic, 0, kMaxIndex, true},
                         Field{"aiv_cores", &aiv, 0, kMaxIndex, true}}) {
    const std::optional<double> &v = other_.numbers.at(f.key);
    if (!v || !std::isfinite(*v))
      return fail(absl::StrCat("otherData.", f.key, " is missing or not a number"));
    if (!(*v >= f.lo && *v <= f.hi) || (f.whole && std::floor(*v) != *v) ||
        (f.slot == &out.clockMHz && *v <= 0))
      return fail(absl::StrCat("otherData.", f.key, " is ", *v, "; it must be ",
                               f.whole ? "a whole number" : "a number", " between ", f.lo,
                               " and ", f.hi, f.slot == &out.clockMHz ? " (and above 0)" : ""));
    *f.slot = *v;
  }
  if (other_.threads) {
    threads = *other_.threads;
    if (!(threads >= 0 && threads <= kMaxIndex) || std::floor(threads) != threads)
      return fail(absl::StrCat("otherData.scheduler_threads is ", threads,
                               "; it must be a whole number between 0 and ", kMaxIndex));
  }
  out.schedMode = static_cast<int>(schedMode);
  out.aicCores = static_cast<int>(aic);
  out.aivCores = static_cast<int>(aiv);
  out.schedulerThreads = static_cast<int>(threads);
  if (other_.ratio && !(*other_.ratio >= 0 && std::isfinite(*other_.ratio)))
    return fail(absl::StrCat("otherData.ratio is ", *other_.ratio,
                             "; it must be a finite number >= 0"));
  out.ratio = other_.ratio.value_or(out.simulatedUs > 0 ? out.boundUs / out.simulatedUs : 0.0);
  if (other_.tasks && *other_.tasks < 0) return error("otherData.tasks is negative");
  if (other_.loops) {
    if (!other_.stitches || *other_.stitches < 1 || *other_.stitches > kMaxTraceIndex)
      return fail(absl::StrCat("otherData.loops.stitches must be a whole number between 1 and ",
                               kMaxTraceIndex));
    TimelineLoops loops;
    loops.stitches = static_cast<int>(*other_.stitches);
    for (auto [key, value, slot] :
         {std::tuple{"control_busy_us", other_.controlBusyUs, &loops.controlBusy},
          {"control_wait_us", other_.controlWaitUs, &loops.controlWait},
          {"barrier_wait_us", other_.barrierWaitUs, &loops.barrierWait}}) {
      if (!value || !(*value >= 0 && *value <= kMaxTraceUs))
        return fail(absl::StrCat("otherData.loops.", key, " must be a number between 0 and ",
                                 kMaxTraceUs, " (us)"));
      *slot = *value;
    }
    if (other_.parallelism) {
      if (*other_.parallelism < runtime::kMinSchedParallelism ||
          *other_.parallelism > runtime::kMaxSchedParallelism)
        return fail(absl::StrCat("otherData.loops.parallelism must be a whole number between ",
                                 runtime::kMinSchedParallelism, " and ",
                                 runtime::kMaxSchedParallelism));
      loops.parallelism = static_cast<int>(*other_.parallelism);
      loops.parallelismDerived = other_.parallelismDerived.value_or(false);
    }
    if (other_.workspacePools) {
      // One pool per parallel slot.
      if (*other_.workspacePools < 0 || *other_.workspacePools > runtime::kMaxSchedParallelism)
        return fail(absl::StrCat("otherData.loops.workspace_pools must be a whole number "
                                 "between 0 and ", runtime::kMaxSchedParallelism));
      if (!other_.workspacePoolBytes || *other_.workspacePoolBytes < 0 ||
          !other_.workspaceWraps || *other_.workspaceWraps < 0)
        return fail("otherData.loops.workspace_pool_bytes and workspace_wraps must be whole "
                    "numbers >= 0 when workspace_pools is given");
      loops.workspacePools = static_cast<int>(*other_.workspacePools);
      loops.workspacePoolBytes = *other_.workspacePoolBytes;
      loops.workspaceWraps = *other_.workspaceWraps;
    }
    out.loops = std::move(loops);
  }
  return absl::OkStatus();
}

void Loader::readMetadata(size_t index, JsonRef event) {
  std::optional<llvm::StringRef> kind = event.getString("name");
  if (!kind || (*kind != "process_name" && *kind != "thread_name")) return;
  std::optional<int64_t> pid = event.getInteger("pid");
  std::optional<JsonRef> args = event.getObject("args");
  // Assigned in a branch rather than by a conditional expression: GCC 12 warns that the
  // latter's optional may be read uninitialised (-Wmaybe-uninitialized).
  std::optional<llvm::StringRef> label;
  if (args) label = args->getString("name");
  if (!pid || !label)
    return propose(0, index, 0,
                   eventError(index, event,
                              "metadata without an integer \"pid\" or a string args.name"));
  if (*kind == "process_name") {
    processNames_[*pid] = label->str();
    return;
  }
  std::optional<int64_t> tid = event.getInteger("tid");
  if (!tid)
    return propose(0, index, 0, eventError(index, event, "thread_name without an integer \"tid\""));
  threadNames_[{*pid, *tid}] = label->str();
}

absl::Status Loader::onEvent(size_t index, JsonRef event, llvm::StringRef eventText) {
  // Metadata problems come first (the names are needed to read every other event).
  if (first_ && std::get<0>(first_->first) == 0) return absl::OkStatus();
  if (!event.isObject()) {
    propose(0, index, 0, error(absl::StrCat("event ", index, " is not a JSON object")));
    return absl::OkStatus();
  }
  std::optional<llvm::StringRef> ph = event.getString("ph");
  if (!ph) {
    propose(0, index, 0, eventError(index, event, "no string \"ph\" (event phase)"));
    return absl::OkStatus();
  }
  if (*ph == "M") {
    readMetadata(index, event);
    return absl::OkStatus();
  }
  if (eventsMatter(index))
    readEvent(index, event, static_cast<size_t>(eventText.data() - text_.data()));
  return absl::OkStatus();
}

/// A required time of an event, in [0, kMaxTraceUs].
bool readTime(JsonRef object, llvm::StringRef key, double &out) {
  std::optional<double> v = object.getNumber(key);
  if (!v || !(*v >= 0 && *v <= kMaxTraceUs)) return false;
  out = *v;
  return true;
}

/// An optional integer member of `args` in [lo, hi] (`absent` when missing); "" or
/// the problem, naming the member and its range.
std::string readIntArg(JsonRef args, llvm::StringRef key, int64_t lo, int64_t hi,
                       int64_t absent, int64_t &out) {
  std::optional<JsonRef> v = args.get(key);
  if (!v) {
    out = absent;
    return "";
  }
  std::optional<int64_t> i = v->asInteger();
  if (i && *i >= lo && *i <= hi) {
    out = *i;
    return "";
  }
  std::string got = "not an integer";
  if (i) got = absl::StrCat(*i);
  else if (std::optional<double> d = v->asNumber()) got = absl::StrCat(*d);
  return absl::StrCat("args.", key.str(), " must be an integer between ", lo, " and ", hi,
                      ", got ", got);
}

/// Adds `bytes` to `total`; false when the sum would pass INT64_MAX.
bool addBytes(int64_t &total, int64_t bytes) { return !__builtin_add_overflow(total, bytes, &total); }

void Loader::readEvent(size_t i, JsonRef event, size_t offset) {
  llvm::StringRef ph = *event.getString("ph");
  llvm::StringRef cat = event.getString("cat").value_or("");
  if (ph == "X" && (cat == "task" || cat == "pipe")) {
    bool isPipe = cat == "pipe";
    std::optional<int64_t> pid = event.getInteger("pid"), tid = event.getInteger("tid");
    if (!pid || !tid)
      return propose(1, i, kLanePidTid, eventError(i, event, "no integer \"pid\" and \"tid\""));
    LaneKey key{*pid, *tid};
    // A failing check of this event; its lane checks (earlier ones) run at the end.
    auto fail = [&](int check, const std::string &message) {
      propose(1, i, check, eventError(i, event, message));
      failed_ = Failed{i, offset, key, isPipe, check};
    };
    double ts = 0, dur = 0;
    if (!readTime(event, "ts", ts) || !readTime(event, "dur", dur))
      return fail(kTimes, absl::StrCat("\"ts\" and \"dur\" must be numbers between 0 and ",
                                       kMaxTraceUs, " (us)"));
    std::optional<JsonRef> args = event.getObject("args");
    if (!args) return fail(kArgs, "no \"args\" object");
    if (isPipe) {
      LoadedPipe pipe{"", -1, "", args->getInteger("task").value_or(-1), ts, dur, 0};
      if (std::string why = readIntArg(*args, "bytes", 0, kMaxTraceBytes, 0, pipe.bytes);
          !why.empty())
        return fail(kPipeBytes, why);
      if (!addBytes(pipeBytes_, pipe.bytes))
        return fail(kPipeBytes, "args.bytes: the pipe events' bytes add up to more than "
                                "2^63 - 1 (a trace of a real run never does)");
      pipes_.push_back(std::move(pipe));
      pipeSource_.push_back(Source{i, offset, key});
      return;
    }
    std::optional<int64_t> call = args->getInteger("call");
    std::optional<int64_t> order = args->getInteger("hash_order");
    if (!call || *call < 0) return fail(kCall, "args.call is missing or not an integer >= 0");
    if (!order) return fail(kHashOrder, "args.hash_order is missing or not an integer");
    if (static_cast<size_t>(*call) < tasks_.size() && tasks_[*call].call >= 0)
      return fail(kDuplicateCall, absl::StrCat("call ", *call, " already has task event ",
                                               taskSource_[*call].event));
    LoadedTask task;
    task.call = *call;
    task.startUs = ts;
    task.durUs = dur;
    task.readyUs = args->getNumber("ready_us");
    task.dispatchUs = args->getNumber("dispatch_us");
    bool present = args->get("ready_us") || args->get("dispatch_us");
    if (args->get("read_stall_us")) {
      task.readStallUs = args->getNumber("read_stall_us");
      std::optional<double> fill = args->getNumber("fill_wait_us");
      task.fillWaitUs = fill.value_or(0);
      if (!task.readStallUs || !(*task.readStallUs >= 0) || !(*task.readStallUs <= kMaxTraceUs) ||
          (args->get("fill_wait_us") && !fill) || !(task.fillWaitUs >= 0) ||
          !(task.fillWaitUs <= *task.readStallUs))
        return fail(kArgNumbers, absl::StrCat("args.read_stall_us must be a number between 0 "
                                              "and ", kMaxTraceUs, " (us), and args.fill_wait_us "
                                              "one between 0 and read_stall_us (it is a part "
                                              "of it)"));
    }
    if (present && (!task.readyUs || !task.dispatchUs || !(*task.readyUs >= 0) ||
                    !(*task.readyUs <= kMaxTraceUs) || !(*task.dispatchUs >= 0) ||
                    !(*task.dispatchUs <= kMaxTraceUs)))
      return fail(kReadyTimes, absl::StrCat("args.ready_us / dispatch_us must be numbers "
                                            "between 0 and ", kMaxTraceUs, " (us)"));
    // The ids and counts are ints in ptoc's records; the byte counts are summed.
    int64_t order64 = 0, subgraph = 0, leaf = 0, groupSize = 0, thread = 0;
    for (auto [key, lo, hi, absent, out] :
         {std::tuple<const char *, int64_t, int64_t, int64_t, int64_t *>{
              "hash_order", -1, kMaxTraceIndex, -1, &order64},
          {"subgraph", -1, kMaxTraceIndex, -1, &subgraph},
          {"leaf", -1, kMaxTraceIndex, -1, &leaf},
          {"group_size", 0, kMaxTraceIndex, 0, &groupSize},
          {"thread", -1, kMaxTraceIndex, -1, &thread},
          {"bytes_in", 0, kMaxTraceBytes, 0, &task.bytesIn},
          {"bytes_out", 0, kMaxTraceBytes, 0, &task.bytesOut},
          {"l2_hit_bytes", 0, kMaxTraceBytes, 0, &task.l2HitBytes}})
      if (std::string why = readIntArg(*args, key, lo, hi, absent, *out); !why.empty())
        return fail(kArgNumbers, why);
    task.hashOrder = static_cast<int>(order64);
    task.func = funcOfGroupKey(args->getString("group").value_or(""));
    task.subgraph = static_cast<int>(subgraph);
    task.leaf = static_cast<int>(leaf);
    task.thread = static_cast<int>(thread);
    if (task.l2HitBytes > task.bytesIn)
      return fail(kArgNumbers, absl::StrCat("args.l2_hit_bytes (", task.l2HitBytes,
                                            ") exceeds args.bytes_in (", task.bytesIn,
                                            "): L2 hits are part of the bytes read"));
    if (!addBytes(bytesIn_, task.bytesIn) || !addBytes(bytesOut_, task.bytesOut))
      return fail(kArgNumbers, "args.bytes_in / bytes_out: the tasks' bytes add up to more "
                               "than 2^63 - 1 (a trace of a real run never does)");
    if (args->get("loop")) {
      std::optional<llvm::StringRef> loop = args->getString("loop");
      std::optional<llvm::StringRef> body = args->getString("body");
      std::optional<llvm::StringRef> hash = args->getString("body_hash");
      std::optional<int64_t> iteration = args->getInteger("iteration");
      if (!loop || !body || !hash || !iteration)
        return fail(kArgNumbers, "a task of a loop iteration needs a string args.loop, "
                                 "args.body and args.body_hash and an integer args.iteration");
      auto [b, newBody] = bodyIndex_.try_emplace({body->str(), hash->str()}, bodies_.size());
      if (newBody) bodies_.push_back({body->str(), hash->str()});
      int64_t run = args->getInteger("instance").value_or(-1);
      auto [it, newInstance] = instanceIndex_.try_emplace(
          std::make_tuple(static_cast<int>(b->second), loop->str(), *iteration, run),
          instances_.size());
      if (newInstance)
        instances_.push_back({static_cast<int>(b->second), loop->str(), *iteration});
      task.instance = static_cast<int>(it->second);
    }
    // Every event takes at least two bytes, so a call beyond the text's size is beyond
    // the number of events (checked exactly at the end); this bounds the resize. The
    // core count check, before it, runs at the end (see checkDeferred).
    if (static_cast<uint64_t>(task.call) > text_.size())
      return fail(kCallRange,
                  absl::StrCat("args.call ", task.call, " is beyond the number of events"));
    if (static_cast<size_t>(task.call) >= tasks_.size()) {
      tasks_.resize(task.call + 1);
      taskSource_.resize(task.call + 1);
    }
    taskSource_[task.call] = Source{i, offset, key};
    LoadedGroup &group = groups_[{task.func, task.hashOrder}];
    if (group.call < 0 || task.call < group.call)
      group = LoadedGroup{task.call, args->getString("leaf_hash").value_or("").str(),
                          args->getString("group").value_or("").str(),
                          static_cast<int>(groupSize),
                          args->getBool("single_buffered").value_or(false)};
    tasks_[task.call] = std::move(task);
    return;
  }
  if ((ph == "s" || ph == "f") && cat == "dep") {
    std::optional<JsonRef> id = event.get("id");
    if (!id || (!id->asInteger() && !id->asString()))
      return propose(1, i, 0,
                     eventError(i, event, "flow event without an integer or string \"id\""));
    std::optional<int64_t> pid = event.getInteger("pid"), tid = event.getInteger("tid");
    double ts = 0;
    if (!pid || !tid || !readTime(event, "ts", ts))
      return propose(1, i, 0, eventError(i, event,
                                         "flow event without integer pid/tid and a time \"ts\""));
    size_t index = flows_.size();
    bool inserted = false;
    if (std::optional<int64_t> n = id->asInteger()) {
      auto it = intFlows_.try_emplace(*n, index);
      inserted = it.second;
      index = it.first->second;
      if (inserted) flows_.push_back(Flow{std::nullopt, std::nullopt, *n, -1});
    } else {
      auto it = stringFlows_.try_emplace(id->asString()->str(), index);
      inserted = it.second;
      index = it.first->second;
      if (inserted) {
        flows_.push_back(Flow{std::nullopt, std::nullopt, 0, static_cast<int>(flowStrings_.size())});
        flowStrings_.push_back(id->asString()->str());
      }
    }
    Flow &flow = flows_[index];
    if (ph == "s" && event.getString("name").value_or("") == "write order")
      flow.writeOrder = true;
    std::optional<FlowEnd> &end = ph == "s" ? flow.start : flow.finish;
    if (end)
      return propose(1, i, 0,
                     eventError(i, event, absl::StrCat("flow id ", flowKey(flow), " has a second '",
                                                       ph.str(), "' (first at event ", end->event,
                                                       ")")));
    end = FlowEnd{i, {*pid, *tid}, ts};
  }
}

std::optional<Lane> Loader::laneOf(size_t index, size_t offset, LaneKey key, bool pipe,
                                   int before) {
  auto [pid, tid] = key;
  auto name = threadNames_.find(key);
  if (name == threadNames_.end()) {
    propose(1, index, kLaneName,
            eventErrorAt(index, offset,
                         absl::StrCat("lane pid ", pid, " tid ", tid,
                                      " has no thread_name metadata (cannot tell its core)")));
    return std::nullopt;
  }
  std::optional<Lane> lane = parseLaneName(name->second);
  if (!lane) {
    propose(1, index, kLaneName,
            eventErrorAt(index, offset,
                         absl::StrCat("lane pid ", pid, " tid ", tid, " is named '", name->second,
                                      "', not a core lane like 'AIV_3' or 'AIV_3 MTE2'")));
    return std::nullopt;
  }
  auto process = processNames_.find(pid);
  if (process != processNames_.end() && process->second != lane->kind) {
    propose(1, index, kLaneName,
            eventErrorAt(index, offset,
                         absl::StrCat("lane '", name->second, "' is in process '",
                                      process->second, "', expected '", lane->kind, "'")));
    return std::nullopt;
  }
  if (before > kLaneIsPipe && pipe && lane->pipe.empty()) {
    propose(1, index, kLaneIsPipe,
            eventErrorAt(index, offset, "a pipe event on a core's task lane (expected a lane "
                                        "named like 'AIV_3 MTE2')"));
    return std::nullopt;
  }
  if (before > kLaneIsPipe && !pipe && !lane->pipe.empty()) {
    propose(1, index, kLaneIsPipe, eventErrorAt(index, offset, "a task event on a pipe lane"));
    return std::nullopt;
  }
  return lane;
}

void Loader::checkDeferred(LoadedTrace &out, size_t events) {
  if (failed_) {
    std::optional<Lane> lane =
        laneOf(failed_->event, failed_->offset, failed_->lane, failed_->pipe, failed_->check);
    int cores = lane && lane->kind == "AIC" ? out.aicCores : out.aivCores;
    if (lane && failed_->check == kCallRange && lane->core >= cores)
      propose(1, failed_->event, kCoreCount,
              eventErrorAt(failed_->event, failed_->offset,
                           absl::StrCat("runs on ", lane->kind, "_", lane->core,
                                        " but otherData says the device has ", cores, " ",
                                        lane->kind, " cores")));
  }
  for (size_t p = 0; p < pipes_.size(); ++p) {
    const Source &source = pipeSource_[p];
    std::optional<Lane> lane = laneOf(source.event, source.offset, source.lane, true, kCallRange + 1);
    if (!lane) continue;
    pipes_[p].kind = lane->kind;
    pipes_[p].coreIndex = lane->core;
    pipes_[p].pipe = lane->pipe;
  }
  for (size_t c = 0; c < tasks_.size(); ++c) {
    LoadedTask &task = tasks_[c];
    if (task.call < 0) continue;
    const Source &source = taskSource_[c];
    std::optional<Lane> lane = laneOf(source.event, source.offset, source.lane, false,
                                      kCallRange + 1);
    if (!lane) continue;
    task.kind = lane->kind;
    task.coreIndex = lane->core;
    int cores = task.kind == "AIC" ? out.aicCores : out.aivCores;
    if (task.coreIndex >= cores) {
      propose(1, source.event, kCoreCount,
              eventErrorAt(source.event, source.offset,
                           absl::StrCat("runs on ", task.core(), " but otherData says the device "
                                        "has ", cores, " ", task.kind, " cores")));
      continue;
    }
    if (task.call > static_cast<int64_t>(events))
      propose(1, source.event, kCallRange,
              eventErrorAt(source.event, source.offset,
                           absl::StrCat("args.call ", task.call, " is beyond the number of events")));
  }
}

absl::Status Loader::resolveFlows(LoadedTrace &out) {
  // Per task lane, the calls on it sorted by start (to bind flow ends to slices).
  std::map<LaneKey, std::vector<int64_t>> laneTasks;
  for (size_t c = 0; c < out.tasks.size(); ++c) laneTasks[taskSource_[c].lane].push_back(c);
  std::vector<Source>().swap(taskSource_);
  for (auto &[key, calls] : laneTasks)
    std::sort(calls.begin(), calls.end(), [&](int64_t a, int64_t b) {
      return out.tasks[a].startUs < out.tasks[b].startUs;
    });
  // The task on `lane` whose slice holds `ts` (flow ends sit just inside their slice).
  auto taskAt = [&](const FlowEnd &end) -> int64_t {
    auto lane = laneTasks.find(end.lane);
    if (lane == laneTasks.end()) return -1;
    const std::vector<int64_t> &calls = lane->second;
    auto it = std::upper_bound(calls.begin(), calls.end(), end.ts + kTraceTimeSlackUs,
                               [&](double t, int64_t c) { return t < out.tasks[c].startUs; });
    if (it == calls.begin()) return -1;
    const LoadedTask &task = out.tasks[*(it - 1)];
    return end.ts <= task.endUs() + kTraceTimeSlackUs ? task.call : -1;
  };
  for (const Flow &flow : flows_) {
    if (!flow.start || !flow.finish)
      return error(absl::StrCat("flow id ", flowKey(flow), " has a '", flow.start ? "s" : "f",
                                "' event (event ", (flow.start ? flow.start : flow.finish)->event,
                                ") but no '", flow.start ? "f" : "s", "' ", kRerunHint));
    int64_t producer = taskAt(*flow.start), consumer = taskAt(*flow.finish);
    if (producer < 0 || consumer < 0)
      return error(absl::StrCat("flow id ", flowKey(flow), ": its '", producer < 0 ? "s" : "f",
                                "' event (event ",
                                (producer < 0 ? flow.start : flow.finish)->event,
                                ") does not lie on a task slice"));
    out.flows.add(static_cast<int>(consumer), static_cast<int>(producer),
                  flow.writeOrder);
    ++out.edges;
  }
  return absl::OkStatus();
}

std::optional<absl::StatusOr<LoadedTrace>> Loader::load(llvm::StringRef text,
                                                       TraceSniff &sniff) {
  text_ = text;
  size_t events = 0;
  TraceVisitor visitor;
  visitor.event = [&](size_t index, JsonRef event, llvm::StringRef eventText) {
    events = index + 1;
    sniff.note(event);
    return onEvent(index, event, eventText);
  };
  visitor.wants = [&](llvm::StringRef key) { return key == "otherData" && !other_.present; };
  visitor.member = [&](llvm::StringRef, JsonRef value) {
    readOtherData(value);
    return absl::OkStatus();
  };
  std::optional<TraceWalkError> problem;
  if (absl::Status s = walkTrace(text, visitor, problem); !s.ok()) return s;
  if (problem) return walkProblem(name_, text, *problem, writerOf(sniff));
  sniff.otherData = other_.present;
  if (!other_.present) return std::nullopt;
  LoadedTrace out;
  if (absl::Status s = checkOtherData(out); !s.ok()) return s;
  checkDeferred(out, events);
  if (first_) return first_->second;
  out.tasks = std::move(tasks_);
  out.groups = std::move(groups_);
  if (out.loops) {
    out.loops->bodies = std::move(bodies_);
    out.loops->instances = std::move(instances_);
  }
  out.pipes = std::move(pipes_);
  std::vector<Source>().swap(pipeSource_);
  for (size_t c = 0; c < out.tasks.size(); ++c)
    if (out.tasks[c].call < 0)
      return error(absl::StrCat("no task event for call ", c, " (calls ", 0, "..",
                                out.tasks.size() - 1, " have gaps) ", kRerunHint));
  if (other_.tasks && *other_.tasks != static_cast<int64_t>(out.tasks.size()))
    return error(absl::StrCat("the trace holds ", out.tasks.size(),
                              " task events but otherData.tasks is ", *other_.tasks, " ",
                              kRerunHint));
  if (absl::Status s = resolveFlows(out); !s.ok()) return s;
  if (other_.edges && *other_.edges != out.edges)
    return error(absl::StrCat("the trace holds ", out.edges,
                              " dependency flow pairs but otherData.edges is ", *other_.edges,
                              " (a trace written without flows cannot give a critical path) ",
                              kRerunHint));
  for (const LoadedPipe &pipe : out.pipes)
    if (pipe.task >= static_cast<int64_t>(out.tasks.size()))
      return error(absl::StrCat("a pipe event names task ", pipe.task, " but the trace has ",
                                out.tasks.size(), " tasks"));
  return out;
}

} // namespace

std::optional<absl::StatusOr<Timeline>> readPtocTrace(llvm::StringRef text,
                                                      llvm::StringRef name, TraceSniff &sniff) {
  std::optional<absl::StatusOr<LoadedTrace>> loaded = Loader(name).load(text, sniff);
  if (!loaded) return std::nullopt;
  if (!loaded->ok()) return absl::StatusOr<Timeline>(loaded->status());
  LoadedTrace &in = **loaded;
  Timeline t;
  t.family = TimelineFamily::PtocTrace;
  t.source = name.str();
  t.carries.edges = true;
  t.carries.bytes = true;
  t.carries.bound = true;
  t.carries.schedMode = true;
  t.carries.deviceCores = true;
  t.carries.hashOrders = true;
  t.carries.pipes = !in.pipes.empty();
  t.func = in.func;
  t.device = in.device;
  t.schedMode = in.schedMode;
  t.clockMHz = in.clockMHz;
  t.aicCores = in.aicCores;
  t.aivCores = in.aivCores;
  t.schedulerThreads = in.schedulerThreads;
  t.runStart = in.headUs;
  t.runEnd = in.simulatedUs;
  TimelineBound bound;
  bound.simulatedUs = in.simulatedUs;
  bound.headUs = in.headUs;
  bound.boundUs = in.boundUs;
  bound.ratio = in.ratio;
  bound.limiter = in.limiter;
  t.bound = bound;

  // Groups by hash order, each described by its first task in call order.
  std::map<std::pair<int64_t, int>, int> groupOfOrder;
  for (const auto &[funcAndOrder, loaded] : in.groups) {
    int order = funcAndOrder.second;
    groupOfOrder.emplace(funcAndOrder, static_cast<int>(t.groups.size()));
    TimelineGroup g;
    // A trace from before ptoc wrote args.group names groups of function 0.
    g.key = loaded.key.empty() ? analysis::hashOrderKey(0, order) : loaded.key;
    g.hashOrder = order;
    g.leafHash = loaded.leafHash;
    g.groupSize = loaded.groupSize;
    g.singleBuffered = loaded.singleBuffered;
    t.groups.push_back(std::move(g));
  }
  std::vector<char> described(t.groups.size(), 0);
  // One lane per core, in first-use order.
  std::map<std::pair<std::string, int>, int> laneOf;
  bool readyTimes = !in.tasks.empty();
  bool readStalls = !in.tasks.empty();
  t.tasks.resize(in.tasks.size());
  for (size_t c = 0; c < in.tasks.size(); ++c) {
    const LoadedTask &task = in.tasks[c];
    int group = groupOfOrder[{task.func, task.hashOrder}];
    if (!described[group]) { // its first task in call order gives its core kind
      described[group] = 1;
      t.groups[group].core = task.kind;
    }
    auto [lane, added] = laneOf.emplace(std::make_pair(task.kind, task.coreIndex),
                                        static_cast<int>(t.lanes.size()));
    if (added) {
      LaneKind kind = task.kind == "AIC" ? LaneKind::Aic : LaneKind::Aiv;
      t.lanes.push_back(TimelineLane{t.coreName(kind, task.coreIndex), kind, task.coreIndex, 0});
    }
    TimelineTask &out = t.tasks[c];
    out.lane = lane->second;
    out.group = group;
    out.start = task.startUs;
    out.dur = task.durUs;
    out.ready = task.readyUs;
    out.dispatch = task.dispatchUs;
    readyTimes &= task.readyUs.has_value();
    out.thread = task.thread;
    out.subgraph = task.subgraph;
    out.leaf = task.leaf;
    out.bytesIn = task.bytesIn;
    out.bytesOut = task.bytesOut;
    out.l2HitBytes = task.l2HitBytes;
    out.readStall = task.readStallUs.value_or(0);
    out.fillWait = task.fillWaitUs;
    readStalls &= task.readStallUs.has_value();
    out.instance = in.loops ? task.instance : -1;
  }
  t.carries.readyTimes = readyTimes;
  t.carries.readStalls = readStalls;
  t.loops = std::move(in.loops);
  in.flows.moveInto(t);
  for (const LoadedPipe &pipe : in.pipes)
    t.pipes.push_back(TimelinePipe{static_cast<int>(pipe.task),
                                   pipe.kind == "AIC" ? LaneKind::Aic : LaneKind::Aiv,
                                   pipe.coreIndex, pipe.pipe,
                                   pipe.pipe != "CUBE" && pipe.pipe != "VEC", pipe.startUs,
                                   pipe.durUs, pipe.bytes});
  return absl::StatusOr<Timeline>(std::move(t));
}

} // namespace ptoc::profile
