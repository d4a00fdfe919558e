// `ptoc prof report` (compile and simulate an operator N times, or read a run folder,
// and write a performance report JSON) and `ptoc prof compare` (diff two reports and
// fail on a regression beyond a threshold, for CI gates).
#include <algorithm>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "CommonOptions.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "llvm/ADT/Optional.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"
#include "ptoc/ir/Diagnostics.h"
#include "ptoc/profile/PerfReport.h"
#include "ptoc/profile/RunOutputs.h"
#include "ptoc/session/ReportRuns.h"
#include "ptoc/session/Session.h"
#include "ptoc/session/Version.h"
#include "ptoc/support/AtomicWrite.h"
#include "ptoc/support/BoundedJson.h"
#include "ptoc/support/ReadFile.h"
#include "ptoc/target/DeviceSpec.h"
#include "ptoc/tools/ArgParser.h"
#include "ptoc/tools/ProfMain.h"

namespace ptoc::tools {

using session::Session;
using session::version;
namespace {

// Exit statuses (docs/profiling.md): compare uses all three so CI can tell a
// regression (kExitError) from a broken invocation or unreadable reports (kExitUsage).

/// The 40 hex digits of a git commit id.
constexpr size_t kCommitLength = 40;
/// What of `git rev-parse HEAD`'s output is read: one line is expected, and a few KB
/// tell it from anything else.
constexpr size_t kGitOutputBytes = 4096;

/// `ptoc prof report` arguments: what to compile and run is the session's
/// ReportRunsOptions, so its defaults are the session's.
struct ReportArgs {
  std::string input;
  std::string output;
  std::string label;
  std::string commit;
  std::string device = target::kDefaultPreset;
  session::ReportRunsOptions runs;
  PassOptionTexts passOptions;
};

/// The options that only apply when compiling (rejected with an existing run).
constexpr const char *kCompileOnlyOptions[] = {"device",   "sched-mode",  "func",
                                               "pipeline", "pass-option", "no-double-buffer"};

CommandSpec reportSpec(ReportArgs &a) {
  return CommandSpec{
      "ptoc prof report",
      R"(Writes a performance report (JSON; docs/profiling.md lists its keys): of FILE.pto,
compiled and simulated --repeat times, or of an existing run folder (its summary.json;
the options of compiling do not apply).
)",
      ArgPositional{"FILE.pto|RUN_FOLDER", &a.input, "input", 1, 1,
                    "no input file or run folder"},
      {
          {"output", &a.output, "REPORT.json", "where the report goes ('-': stdout)", {},
           "stdout", 'o'},
          {"repeat", &a.runs.repeat, "N", "compile and simulate this many times",
           Bounds::between(1, session::kMaxReportRepeat)},
          {"label", &a.label, "NAME", "a label recorded in the report"},
          {"commit", &a.commit, "ID", "the commit the report belongs to", {},
           "$PTOC_COMMIT, else git rev-parse HEAD beside the input, else unknown"},
          {"no-host-times", Negated{&a.runs.hostTimes}, "",
           "leave the host wall times out (a baseline meant for diffs)"},
          deviceOption(&a.device),
          schedModeOption(&a.runs.run.schedMode),
          funcOption(&a.runs.compile.funcName),
          pipelineOption(&a.runs.compile.pipeline),
          passOptionOption(&a.passOptions),
          noDoubleBufferOption(&a.runs.compile.codegen.doubleBuffer),
      }};
}

/// `ptoc prof compare` arguments.
struct CompareArgs {
  std::vector<std::string> files;
  profile::CompareOptions options;
};

CommandSpec compareSpec(CompareArgs &a) {
  profile::CompareOptions &o = a.options;
  CustomValue threshold{[&o](llvm::StringRef flag, const std::string &text) {
                          absl::StatusOr<double> t = profile::parseThresholdPercent(text);
                          if (!t.ok())
                            return absl::StrCat(flag.str(), ": ", t.status().message());
                          o.thresholdPercent = *t;
                          return std::string();
                        },
                        absl::StrCat(o.thresholdPercent, "%")};
  return CommandSpec{
      "ptoc prof compare",
      R"(Compares two performance reports metric by metric and fails (exit status 1) when a
gated metric moved the wrong way by more than the threshold; exit status 2 for
reports that cannot be read or compared.
)",
      ArgPositional{"BASE.json NEW.json", &a.files, "reports", 2, 2},
      {
          {"threshold", threshold, "PERCENT",
           "a gated metric regresses when it is worse by more than this ('5%', '0.5')"},
          {"metric", &o.gated, "NAME", "gate on this metric", {},
           absl::StrJoin(profile::defaultGatedMetrics(), ", ")},
          {"force", &o.force, "", "compare reports of different operators or devices"},
      }};
}

/// The commit the report belongs to: $PTOC_COMMIT, else `git rev-parse HEAD` in the
/// folder holding `path` (the operator's repository), else "unknown". Never fails:
/// a report without a commit is still a report.
std::string detectCommit(llvm::StringRef path) {
  if (const char *env = std::getenv("PTOC_COMMIT"); env && *env) return env;
  llvm::ErrorOr<std::string> git = llvm::sys::findProgramByName("git");
  if (!git) return "unknown";
  llvm::SmallString<256> dir(path);
  llvm::sys::fs::make_absolute(dir);
  if (!llvm::sys::fs::is_directory(dir)) llvm::sys::path::remove_filename(dir);
  llvm::SmallString<128> out;
  if (llvm::sys::fs::createTemporaryFile("ptoc-commit", "txt", out)) return "unknown";
  llvm::Optional<llvm::StringRef> redirects[] = {llvm::StringRef(""), llvm::StringRef(out),
                                                 llvm::StringRef("")};
  llvm::StringRef gitArgs[] = {*git, "-C", dir, "rev-parse", "HEAD"};
  int rc = llvm::sys::ExecuteAndWait(*git, gitArgs, llvm::None, redirects);
  std::string commit = "unknown";
  if (rc == 0)
    if (absl::StatusOr<std::string> text = support::readFile(out, kGitOutputBytes); text.ok())
      if (llvm::StringRef line = llvm::StringRef(*text).trim(); line.size() == kCommitLength)
        commit = line.str();
  llvm::sys::fs::remove(out);
  return commit;
}


/// A report from an existing run folder (or its summary.json): no rerun.
absl::StatusOr<profile::PerfReport> reportFromFolder(const ReportArgs &args) {
  llvm::SmallString<256> path(args.input);
  // The trace sits beside summary.json in a run folder; take the folder's summary.
  if (llvm::sys::path::filename(path) == profile::kSwimlaneFile)
    llvm::sys::path::remove_filename(path);
  if (llvm::sys::fs::is_directory(path)) {
    llvm::sys::path::append(path, profile::kSummaryJsonFile);
    if (!llvm::sys::fs::exists(path))
      return absl::NotFoundError(absl::StrCat(
          "'", args.input, "' is a folder without ", profile::kSummaryJsonFile,
          "; give a run folder written with --debug-mode 1 or 2, or a .pto file"));
  }
  absl::StatusOr<std::string> text = support::readFile(path, support::kMaxJsonBytes);
  if (!text.ok()) return text.status();
  return profile::reportFromSummaryJson(*text, path);
}

/// A report from compiling and simulating `args.input` `args.runs.repeat` times
/// (session::reportFromRuns).
absl::StatusOr<profile::PerfReport> reportFromRuns(ReportArgs &args) {
  absl::StatusOr<Session> session = Session::create(args.device);
  if (!session.ok()) return session.status();
  absl::StatusOr<std::string> text = support::readFile(args.input, support::kMaxSourceBytes);
  if (!text.ok()) return text.status();
  if (absl::Status st = setPassOptions(args.passOptions, args.runs.compile.knobs); !st.ok())
    return st;
  for (const auto &[name, value] : args.passOptions) args.runs.passOptionsText[name] = value;
  return session::reportFromRuns(*session, *text, args.input, args.runs);
}

} // namespace

int profReportMain(const std::vector<std::string> &argv) {
  ReportArgs args;
  ArgParser parser(reportSpec(args));
  if (std::optional<int> status = parser.parse(argv)) return *status;
  bool fromFolder = llvm::sys::fs::is_directory(args.input) ||
                    llvm::StringRef(args.input).endswith(".json");
  for (const char *name : kCompileOnlyOptions)
    if (fromFolder && parser.given(name))
      return parser.usageError(absl::StrCat("--", name,
                                            " applies when compiling a .pto file, not to the "
                                            "existing run '",
                                            args.input, "'"));
  absl::StatusOr<profile::PerfReport> report =
      fromFolder ? reportFromFolder(args) : reportFromRuns(args);
  if (!report.ok()) {
    llvm::errs() << "ptoc prof report: " << ir::messageOf(report.status()) << "\n";
    return kExitError;
  }
  report->ptocVersion = version().str();
  report->label = args.label;
  report->commit = args.commit.empty() ? detectCommit(args.input) : args.commit;
  std::string json = profile::perfReportJson(*report);
  if (args.output.empty() || args.output == "-") {
    llvm::outs() << json;
    return kExitOk;
  }
  // Replaced whole: a failed run never leaves half a report where a baseline is expected.
  if (absl::Status st = support::writeFileAtomically(args.output, json); !st.ok()) {
    llvm::errs() << "ptoc prof report: " << ir::messageOf(st) << "\n";
    return kExitError;
  }
  auto metric = [&](const char *key) {
    auto it = report->metrics.find(key);
    return it == report->metrics.end() ? 0.0 : it->second;
  };
  llvm::outs() << absl::StrFormat(
      "report: %s on %s: simulated %.3f us (bound %.3f us, ratio %.2f), %d run%s -> %s\n",
      report->func, report->device, metric("simulated_us"), metric("bound_us"),
      metric("ratio"), report->runs, report->runs == 1 ? "" : "s", args.output);
  return kExitOk;
}

int profCompareMain(const std::vector<std::string> &argv) {
  CompareArgs args;
  ArgParser parser(compareSpec(args));
  if (std::optional<int> status = parser.parse(argv)) return *status;
  const std::vector<std::string> &files = args.files;
  const profile::CompareOptions &options = args.options;
  profile::PerfReport reports[2];
  for (int i = 0; i < 2; ++i) {
    absl::StatusOr<std::string> text = support::readFile(files[i], support::kMaxJsonBytes);
    absl::StatusOr<profile::PerfReport> r =
        text.ok() ? profile::parsePerfReport(*text, files[i])
                  : absl::StatusOr<profile::PerfReport>(text.status());
    if (!r.ok()) {
      llvm::errs() << "ptoc prof compare: " << ir::messageOf(r.status()) << "\n";
      return kExitUsage;
    }
    reports[i] = *std::move(r);
  }
  absl::StatusOr<profile::Comparison> cmp =
      profile::compareReports(reports[0], reports[1], options);
  if (!cmp.ok()) {
    llvm::errs() << "ptoc prof compare: " << ir::messageOf(cmp.status()) << "\n";
    return kExitUsage;
  }
  llvm::outs() << profile::comparisonText(*cmp, reports[0], reports[1], options);
  return cmp->regressed ? kExitError : kExitOk;
}

} // namespace ptoc::tools
