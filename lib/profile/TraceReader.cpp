// Reading a trace into a Timeline: finding the file (a folder's merged_swimlane.json or
// PyPTO-3's merged_swimlane_<stamp>.json), telling its family from the content and
// handing it to that family's reader; a ptoc trace also takes the bound terms and
// traffic from summary.json beside it.
#include "ptoc/profile/TraceReader.h"

#include <algorithm>
#include <cmath>

#include "TraceFamilies.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "ptoc/profile/RunOutputs.h"
#include "ptoc/support/BoundedJson.h"
#include "ptoc/support/ReadFile.h"
#include "ptoc/support/TextPosition.h"

namespace ptoc::profile {

namespace {

/// The process names each PyPTO family writes.
constexpr const char *kMachineViewProcess = "Machine View";
constexpr const char *kWorkerViewProcess = "Worker View";
/// PyPTO-3 names its trace merged_swimlane_<YYYYmmdd_HHMMSS>.json.
constexpr const char *kStampedPrefix = "merged_swimlane_";

/// The trace in `path`; `note` says which of several stamped traces was taken.
absl::StatusOr<std::string> findTrace(llvm::StringRef path, std::string *note) {
  if (!llvm::sys::fs::is_directory(path)) return path.str();
  llvm::SmallString<256> joined(path);
  llvm::sys::path::append(joined, kSwimlaneFile);
  if (llvm::sys::fs::exists(joined)) return joined.str().str();
  std::vector<std::string> stamped;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(path, ec), end; it != end && !ec; it.increment(ec)) {
    llvm::StringRef file = llvm::sys::path::filename(it->path());
    if (file.startswith(kStampedPrefix) && file.endswith(".json")) stamped.push_back(it->path());
  }
  if (stamped.empty())
    return absl::NotFoundError(absl::StrCat(
        "no ", kSwimlaneFile, " in folder ", path.str(),
        ": a run writes it with runtime_debug_mode=1 or 2 (ptoc run --debug-mode 1); PyPTO's ",
        kStampedPrefix, "<stamp>.json is read too"));
  // The stamps sort in time order: the last is the newest run.
  std::sort(stamped.begin(), stamped.end());
  if (stamped.size() > 1 && note)
    *note = absl::StrCat(stamped.size(), " ", kStampedPrefix, "*.json in ", path.str(),
                         ": read the newest, ", llvm::sys::path::filename(stamped.back()).str());
  return stamped.back();
}

/// Fills the bound terms and traffic from summary.json beside `traceFile`, if it is
/// there, parses and describes the same run; otherwise leaves them out (the
/// analysis needs only the trace).
void readRunSummary(llvm::StringRef traceFile, Timeline &out) {
  if (!out.bound) return;
  llvm::SmallString<256> file(traceFile);
  llvm::sys::path::remove_filename(file);
  llvm::sys::path::append(file, kSummaryJsonFile);
  absl::StatusOr<std::string> text = support::readFileBounded(file, support::kMaxJsonBytes);
  if (!text.ok()) return;
  // An unusable summary is not an error: the analysis needs only the trace.
  absl::StatusOr<llvm::json::Value> parsed = support::parseJson(*text, file);
  if (!parsed.ok()) return;
  const llvm::json::Object *root = parsed->getAsObject();
  if (!root) return;
  const llvm::json::Object *bound = root->getObject("bound");
  const llvm::json::Object *bytes = root->getObject("bytes");
  llvm::Optional<double> simulated = root->getNumber("simulated_us");
  // Three decimals in both files: equal runs agree to the nanosecond.
  constexpr double kSameRunUs = 1e-3;
  if (!bound || !bytes || root->getString("func") != llvm::Optional<llvm::StringRef>(out.func) ||
      !simulated || std::abs(*simulated - out.bound->simulatedUs) > kSameRunUs)
    return;
  // Absent numbers read as 0; a present one out of range makes the summary unusable
  // (times in [0, kMaxTraceUs], byte counts in [0, kMaxTraceBytes], so sums of a few
  // cannot overflow). Nothing is filled in until all of them are read.
  double times[3] = {};
  int64_t counts[5] = {};
  const std::pair<const llvm::json::Object *, const char *> timeKeys[] = {
      {bound, "cube_us"}, {bound, "vector_us"}, {bound, "hbm_us"}};
  const std::pair<const llvm::json::Object *, const char *> countKeys[] = {
      {bound, "compulsory_hbm_bytes"}, {bytes, "hbm_read"}, {bytes, "hbm_write"},
      {bytes, "l2_hit"}, {bytes, "l2_miss"}};
  for (size_t k = 0; k < std::size(timeKeys); ++k) {
    const llvm::json::Value *v = timeKeys[k].first->get(timeKeys[k].second);
    llvm::Optional<double> d = v ? v->getAsNumber() : llvm::Optional<double>(0.0);
    if (!d || !(*d >= 0 && *d <= kMaxTraceUs)) return;
    times[k] = *d;
  }
  for (size_t k = 0; k < std::size(countKeys); ++k) {
    const llvm::json::Value *v = countKeys[k].first->get(countKeys[k].second);
    std::optional<int64_t> i = v ? support::jsonInteger(*v) : std::optional<int64_t>(0);
    if (!i || *i < 0 || *i > kMaxTraceBytes) return;
    counts[k] = *i;
  }
  out.runSummaryPath = file.str().str();
  out.bound->cubeUs = times[0];
  out.bound->vectorUs = times[1];
  out.bound->hbmUs = times[2];
  out.bound->compulsoryHbmBytes = counts[0];
  TimelineTraffic traffic;
  traffic.hbmRead = counts[1];
  traffic.hbmWrite = counts[2];
  traffic.l2Hit = counts[3];
  traffic.l2Miss = counts[4];
  out.traffic = traffic;
}

bool has(const std::vector<std::string> &names, llvm::StringRef name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

} // namespace

void TraceSniff::note(JsonRef event) {
  ++events;
  if (!event.isObject()) return;
  std::optional<llvm::StringRef> ph = event.getString("ph");
  if (ph && *ph == "X") ++completeEvents;
  if (std::optional<llvm::StringRef> cat = event.getString("cat");
      cat && categories.size() < kMaxCategories)
    categories.insert(cat->str());
  if (ph && *ph == "M" && event.getString("name").value_or("") == "process_name" &&
      processNames.size() < kMaxProcessNames)
    if (std::optional<JsonRef> args = event.getObject("args"))
      if (std::optional<llvm::StringRef> name = args->getString("name"))
        processNames.push_back(name->str());
}

std::string TraceSniff::describe() const {
  auto quoted = [](const auto &names) {
    std::vector<std::string> out;
    for (const std::string &n : names) out.push_back(absl::StrCat("\"", n, "\""));
    return out.empty() ? std::string("none") : absl::StrJoin(out, ", ");
  };
  return absl::StrCat(events, " events (", completeEvents, " complete), process names ",
                      quoted(processNames), ", categories ", quoted(categories));
}

bool TraceSniff::pypto() const {
  return has(processNames, kMachineViewProcess) || has(processNames, kWorkerViewProcess);
}

TraceWriter writerOf(const TraceSniff &sniff) {
  if (sniff.pypto()) return TraceWriter::Pypto;
  return sniff.processNames.empty() ? TraceWriter::Unknown : TraceWriter::Ptoc;
}

absl::Status walkProblem(llvm::StringRef name, llvm::StringRef text,
                         const TraceWalkError &problem, TraceWriter writer) {
  auto error = [&](const std::string &message) {
    return absl::InvalidArgumentError(absl::StrCat(name.str(), ": ", message));
  };
  using Kind = TraceWalkError::Kind;
  switch (problem.kind) {
  case Kind::NotObject:
    return error("the trace is not a JSON object (expected {\"traceEvents\": [...]})");
  case Kind::EventsNotArray:
  case Kind::NoEvents:
    return error("no \"traceEvents\" array: not a Chrome trace-event file");
  case Kind::Syntax:
    break;
  }
  if (problem.syntax.tooDeep)
    return error(absl::StrCat(problem.syntax.message, ": not a trace ptoc prof reads"));
  support::TextPosition at = support::positionOf(text, problem.syntax.offset);
  // Only a text that ends inside a value was cut short; anything else is damage.
  // A whole trace comes from where this one came from.
  constexpr const char *kPtocWhole = "re-run with runtime_debug_mode=1 and let the run finish";
  constexpr const char *kPyptoWhole =
      "PyPTO writes it after the device run: copy the whole file again from that run's output";
  std::string whole;
  switch (writer) {
  case TraceWriter::Ptoc: whole = kPtocWhole; break;
  case TraceWriter::Pypto: whole = kPyptoWhole; break;
  case TraceWriter::Unknown:
    whole = absl::StrCat("a ptoc run: ", kPtocWhole, "; a PyPTO device trace: ", kPyptoWhole);
    break;
  }
  return error(absl::StrCat("not valid JSON at line ", at.line, " col ", at.column, ": ",
                            problem.syntax.message, " ",
                            problem.syntax.truncated
                                ? absl::StrCat("(a truncated trace? ", whole, ")")
                                : "(the file was damaged or edited: it is not JSON)"));
}

absl::StatusOr<std::string> findTraceFile(llvm::StringRef path) {
  return findTrace(path, nullptr);
}

absl::StatusOr<Timeline> parseTrace(llvm::StringRef json, llvm::StringRef name,
                                    const TraceReadOptions &options) {
  TraceSniff sniff;
  if (std::optional<absl::StatusOr<Timeline>> ptoc = readPtocTrace(json, name, sniff))
    return std::move(*ptoc);
  if (has(sniff.processNames, kMachineViewProcess)) return readMachineView(json, name, options);
  if (has(sniff.processNames, kWorkerViewProcess)) return readWorkerView(json, name, options);
  return absl::InvalidArgumentError(absl::StrCat(
      name.str(),
      ": no \"otherData\" object: ptoc prof reads traces written by ptoc (a run with "
      "runtime_debug_mode=1 or 2 records its function, device and times in otherData) and "
      "PyPTO's device traces (a process named \"",
      kMachineViewProcess, "\" or \"", kWorkerViewProcess, "\"); this one holds ",
      sniff.describe()));
}

absl::StatusOr<Timeline> loadTrace(llvm::StringRef path, const TraceReadOptions &options) {
  std::string note;
  absl::StatusOr<std::string> file = findTrace(path, &note);
  if (!file.ok()) return file.status();
  // Traces can be GBs (read event at a time): no limit but the file's size.
  absl::StatusOr<std::string> text =
      support::readFile(*file, support::kNoLimit, "trace",
                        "give a merged_swimlane.json or the run folder holding it");
  if (!text.ok()) return text.status();
  absl::StatusOr<Timeline> trace = parseTrace(*text, *file, options);
  if (!trace.ok()) return trace;
  if (!note.empty()) trace->notes.insert(trace->notes.begin(), note);
  if (trace->family == TimelineFamily::PtocTrace) readRunSummary(*file, *trace);
  return trace;
}

} // namespace ptoc::profile
