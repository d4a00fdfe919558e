// Performance reports and regression gates: the report one `ptoc prof report` run
// writes (who/what/where, simulated metrics, repeated-run statistics, host wall
// times), its JSON form, and the comparison `ptoc prof compare` prints and gates on.
// docs/profiling.md "Reports and regression gates" documents the keys and verdicts.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "llvm/ADT/StringRef.h"
#include "ptoc/profile/Summary.h"

namespace ptoc::profile {

/// The "schema" value of every report, so a reader can tell a report from any JSON.
inline constexpr const char *kPerfReportSchema = "ptoc-perf-report";
/// Bumped when a key changes meaning or disappears (adding keys does not bump it).
inline constexpr int kPerfReportSchemaVersion = 1;

/// Order statistics of repeated measurements.
struct SampleStats {
  int count = 0;
  double min = 0, max = 0, mean = 0;
  double p50 = 0, p95 = 0;   ///< nearest-rank percentiles
  double cv = 0;             ///< population standard deviation / mean (0 when mean is 0)
};

/// Statistics of `samples` (all zero when empty).
SampleStats computeStats(std::vector<double> samples);

/// One argument or result of the operator.
struct TensorInfo {
  std::string name;
  std::string dtype;         ///< IR spelling: f32, f16, ...
  std::vector<int64_t> shape;
  bool operator==(const TensorInfo &o) const {
    return name == o.name && dtype == o.dtype && shape == o.shape;
  }
};

/// Which way a metric should move.
enum class MetricSense {
  LowerIsBetter,
  HigherIsBetter,
  Neutral,                   ///< a count or a property: a change is reported, never "worse"
};

/// A metric a report records: its key in "metrics" and its sense.
struct MetricInfo {
  const char *key;
  MetricSense sense;
  const char *help;
};

/// Every metric a report records, in report order.
const std::vector<MetricInfo> &reportMetrics();
/// The metric named `key`, or null.
const MetricInfo *findMetric(llvm::StringRef key);
/// The metrics `ptoc prof compare` gates on when none is named: simulated_us.
std::vector<std::string> defaultGatedMetrics();

/// One performance report.
struct PerfReport {
  int schemaVersion = kPerfReportSchemaVersion;
  std::string ptocVersion;
  std::string commit = "unknown";
  std::string label;
  /// "run" (compiled and run by `ptoc prof report`) or "run_folder" (read from an
  /// existing run folder's summary.json; then file, device hash, tensors and
  /// options are unknown and left empty).
  std::string source = "run";
  // --- the operator ---
  std::string func, file;
  std::vector<TensorInfo> args, results;
  // --- the device ---
  std::string device;
  std::string deviceHash;    ///< DeviceSpec::contentHash as 16 hex digits ("" unknown)
  // --- the options ---
  std::string pipeline;      ///< the pipeline text that ran ("" unknown)
  int schedMode = 0;
  std::map<std::string, std::string> passOptions; ///< --pass-option NAME=VALUE as given
  bool doubleBuffer = true;
  // --- simulated metrics (deterministic: the simulator is) ---
  /// Keys of reportMetrics(); a key may be missing (e.g. from a run folder).
  std::map<std::string, double> metrics;
  std::string limiter;       ///< cube / vector / hbm
  /// Repeated runs: their count and the simulated time's statistics.
  int runs = 1;
  SampleStats simulatedStats;
  // --- host wall times (vary from run to run and machine to machine; never gated) ---
  bool hasHostTimes = false;
  SampleStats compileSeconds, simulateSeconds;
};

/// Fills the metrics, limiter and device name of `report` from a run summary.
void fillMetrics(PerfReport &report, const Summary &summary);

/// The report as JSON (2-space indent, fixed decimals, stable key order).
std::string perfReportJson(const PerfReport &report);

/// Parses a report written by perfReportJson. Errors name `sourceName`, the key
/// that is missing or of the wrong type, and reject other schemas and newer versions.
absl::StatusOr<PerfReport> parsePerfReport(llvm::StringRef json, llvm::StringRef sourceName);

/// Builds a report (source "run_folder") from the text of a run folder's
/// summary.json (docs/outputs.md). Errors name `sourceName` and the bad key.
absl::StatusOr<PerfReport> reportFromSummaryJson(llvm::StringRef json,
                                                 llvm::StringRef sourceName);

/// One row of a comparison.
struct MetricDiff {
  std::string metric;
  std::optional<double> base, current; ///< missing on one side: nullopt
  /// (new - base) / |base| * 100; nullopt when base is 0 (and new is not) or a side
  /// is missing.
  std::optional<double> deltaPercent;
  bool gated = false;
  /// "same", "better", "worse", "changed" (neutral metric), "REGRESSION" (gated and
  /// worse beyond the threshold), "missing".
  std::string verdict;
};

/// Options of compareReports.
struct CompareOptions {
  /// A gated metric regresses when it moves the wrong way by more than this many
  /// percent of the base value.
  double thresholdPercent = 5.0;
  /// Metrics that gate; empty = defaultGatedMetrics().
  std::vector<std::string> gated;
  /// Compare even when operator or device differ (otherwise that is an error).
  bool force = false;
};

/// A comparison of two reports.
struct Comparison {
  std::vector<MetricDiff> rows;       ///< reportMetrics() order
  std::vector<std::string> warnings;  ///< differing options, commits, forced mismatches
  bool regressed = false;             ///< some gated metric is a REGRESSION
};

/// Compares `base` with `current`. Errors (InvalidArgument): an unknown gated metric,
/// a gated metric missing from a report, a negative threshold, or (without `force`)
/// reports of different operators (function, argument/result shapes and dtypes) or
/// devices (name, content hash) — the message names both sides and says --force.
absl::StatusOr<Comparison> compareReports(const PerfReport &base, const PerfReport &current,
                                          const CompareOptions &options = {});

/// The comparison as an aligned text table (metric, base, new, delta, verdict), then
/// the warnings and a last line "PASS ..." or "FAIL: ...".
std::string comparisonText(const Comparison &cmp, const PerfReport &base,
                           const PerfReport &current, const CompareOptions &options);

/// Parses a threshold: "5%", "5" (percent either way), "0.5%". Must be >= 0.
absl::StatusOr<double> parseThresholdPercent(llvm::StringRef text);

} // namespace ptoc::profile
