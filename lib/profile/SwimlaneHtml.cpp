// The swimlane page writer: the HTML shell around the embedded script and style
// (lib/profile/html, embedded at build time) and the run's JSON inputs.
#include "ptoc/profile/SwimlaneHtml.h"

#include <memory>

#include "absl/strings/str_cat.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "ptoc/profile/OutputDir.h"
#include "ptoc/profile/RunOutputs.h"
#include "ptoc/profile/TraceAnalysis.h"
#include "ptoc/support/AtomicWrite.h"
#include "ptoc/support/BoundedJson.h"
#include "ptoc/support/ReadFile.h"

namespace ptoc::profile {

namespace {

struct Asset {
  const char *name;
  const char *text;
};

/// lib/profile/html/* as {file name, text}.
constexpr Asset kAssets[] = {
#include "ptoc/profile/SwimlaneAssets.inc"
};

llvm::StringRef asset(llvm::StringRef name) {
  for (const Asset &a : kAssets)
    if (name == a.name) return a.text;
  return {};
}

/// Writes JSON text so that no byte sequence can end or confuse the enclosing
/// <script> element: every '<' becomes \u003c. In JSON a '<' can only occur inside
/// a string, where \u003c means the same character, so the parsed value is unchanged.
/// Streams in chunks between the '<'s, so a large trace is not copied.
void writeScriptSafeJson(llvm::raw_ostream &os, llvm::StringRef json) {
  while (!json.empty()) {
    size_t lt = json.find('<');
    os << json.substr(0, lt);
    if (lt == llvm::StringRef::npos) return;
    os << "\\u003c";
    json = json.drop_front(lt + 1);
  }
}

void writeDataScript(llvm::raw_ostream &os, llvm::StringRef id, llvm::StringRef json) {
  os << "<script type=\"application/json\" id=\"" << id << "\">";
  writeScriptSafeJson(os, json);
  os << "</script>\n";
}

absl::Status checkJson(llvm::StringRef what, llvm::StringRef text) {
  absl::StatusOr<llvm::json::Value> value = support::parseJson(text, "");
  if (value.ok()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "swimlane.html: ", what.str(), " is not usable JSON (", value.status().message(),
      "); regenerate it with the ptoc run or `ptoc prof` that writes it"));
}

std::string join(llvm::StringRef folder, llvm::StringRef file) {
  llvm::SmallString<256> path(folder);
  llvm::sys::path::append(path, file);
  return std::string(path);
}

/// summary.json or analysis.json: small, so read whole with a size limit.
absl::StatusOr<std::string> readJsonFile(const std::string &path, llvm::StringRef what) {
  return support::readFile(path, support::kMaxJsonBytes, what);
}

} // namespace

absl::Status writeSwimlaneHtml(llvm::raw_ostream &os, const SwimlaneHtmlInputs &inputs) {
  llvm::StringRef trace = inputs.traceJson.ltrim();
  if (trace.empty() || trace.front() != '{')
    return absl::InvalidArgumentError(
        "swimlane.html: the trace is empty or not a JSON object (expected the text of "
        "merged_swimlane.json, which starts with '{')");
  if (absl::Status s = checkJson(kSummaryJsonFile, inputs.summaryJson.empty() ? "{}" : inputs.summaryJson);
      !s.ok())
    return s;
  if (!inputs.analysisJson.empty())
    if (absl::Status s = checkJson(kAnalysisFile, inputs.analysisJson); !s.ok()) return s;

  os << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        "<title>ptoc swimlane</title>\n<style>\n"
     << asset("swimlane.css") << "</style>\n</head>\n<body>\n"
     << asset("swimlane.body.html");
  writeDataScript(os, "ptoc-trace", trace);
  writeDataScript(os, "ptoc-summary", inputs.summaryJson.empty() ? "{}" : inputs.summaryJson);
  writeDataScript(os, "ptoc-analysis", inputs.analysisJson.empty() ? "null" : inputs.analysisJson);
  os << "<script>\n" << asset("swimlane.js") << "</script>\n</body>\n</html>\n";
  return absl::OkStatus();
}

absl::Status writeSwimlaneHtmlFile(llvm::StringRef folder) {
  // The trace can be GBs (it is embedded whole): no limit but its size.
  absl::StatusOr<std::string> trace =
      support::readFile(join(folder, kSwimlaneFile), support::kNoLimit, "swimlane.html's trace");
  if (!trace.ok()) return trace.status();
  absl::StatusOr<std::string> summary =
      readJsonFile(join(folder, kSummaryJsonFile), "swimlane.html's summary");
  if (!summary.ok()) return summary.status();
  std::string analysis;
  std::string analysisPath = join(folder, kAnalysisFile);
  if (llvm::sys::fs::exists(analysisPath)) {
    absl::StatusOr<std::string> read = readJsonFile(analysisPath, "swimlane.html's analysis");
    if (!read.ok()) return read.status();
    analysis = *std::move(read);
  }
  SwimlaneHtmlInputs inputs;
  inputs.traceJson = *trace;
  inputs.summaryJson = *summary;
  inputs.analysisJson = analysis;
  return support::writeFileAtomically(join(folder, kSwimlaneHtmlFile), [&](llvm::raw_ostream &os) {
    absl::Status s = writeSwimlaneHtml(os, inputs);
    if (s.ok()) return s;
    return absl::Status(s.code(), absl::StrCat(folder.str(), ": ", s.message()));
  });
}

} // namespace ptoc::profile
