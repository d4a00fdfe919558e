// Fuzz target: the performance-report readers of `ptoc prof report` / `ptoc prof
// compare`: a report file (parsePerfReport) and a run folder's summary.json
// (reportFromSummaryJson), each input read both ways. An accepted report must print
// with perfReportJson and read back to the same text, and compare with itself.
// Findings: crashes and sanitizer reports, an internal error, a report that does not
// read back the same, a report that regresses against itself.
#include <cstddef>
#include <cstdint>
#include <string>

#include "FuzzCheck.h"
#include "ptoc/profile/PerfReport.h"

using namespace ptoc;

namespace {

void checkReport(const profile::PerfReport &report, llvm::StringRef reader) {
  std::string printed = profile::perfReportJson(report);
  absl::StatusOr<profile::PerfReport> again = profile::parsePerfReport(printed, "printed.json");
  if (!again.ok())
    fuzz::finding(reader.str() + ": the printed report does not read back: " +
                  std::string(again.status().message()) + "\n" + printed);
  if (profile::perfReportJson(*again) != printed)
    fuzz::finding(reader.str() + ": the printed report reads back different:\n" + printed);
  profile::CompareOptions options;
  options.force = true;
  absl::StatusOr<profile::Comparison> cmp = profile::compareReports(report, *again, options);
  if (!cmp.ok()) {
    fuzz::checkNotABug(cmp.status(), "compareReports");
    return;
  }
  if (cmp->regressed) fuzz::finding(reader.str() + ": a report regresses against itself");
  (void)profile::comparisonText(*cmp, report, *again, options);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef json(reinterpret_cast<const char *>(data), size);
  absl::StatusOr<profile::PerfReport> report = profile::parsePerfReport(json, "fuzz.json");
  if (report.ok()) checkReport(*report, "parsePerfReport");
  else fuzz::checkNotABug(report.status(), "parsePerfReport");
  absl::StatusOr<profile::PerfReport> fromSummary =
      profile::reportFromSummaryJson(json, "summary.json");
  if (fromSummary.ok()) checkReport(*fromSummary, "reportFromSummaryJson");
  else fuzz::checkNotABug(fromSummary.status(), "reportFromSummaryJson");
  return 0;
}
