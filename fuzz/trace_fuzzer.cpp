// Fuzz target: the trace reader behind `ptoc prof` (profile::parseTrace, which
// loadTrace runs on a trace file of any family) and the analysis it feeds: analyze, the
// text tables and analysis.json. Findings: crashes and sanitizer reports, an internal
// error, analysis.json that is not valid JSON.
#include <cstddef>
#include <cstdint>
#include <string>

#include "FuzzCheck.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"
#include "ptoc/profile/TraceAnalysis.h"
#include "ptoc/profile/TraceReader.h"

using namespace ptoc;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef json(reinterpret_cast<const char *>(data), size);
  absl::StatusOr<profile::Timeline> trace = profile::parseTrace(json, "fuzz.json");
  if (!trace.ok()) {
    fuzz::checkNotABug(trace.status(), "parseTrace");
    return 0;
  }
  profile::Analysis analysis = profile::analyze(*trace);
  std::string text = profile::analysisText(analysis);
  std::string written = profile::analysisJson(analysis);
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(written);
  if (!parsed)
    fuzz::finding("analysis.json is not valid JSON: " + llvm::toString(parsed.takeError()) +
                  "\n" + written);
  return 0;
}
