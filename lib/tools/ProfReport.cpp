// `ptoc prof report` (compile and simulate an operator N times, or read a run folder,
// and write a performance report JSON) and `ptoc prof compare` (diff two reports and
// fail on a regression beyond a threshold, for CI gates).
#include <algorithm>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "llvm/ADT/Optional.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
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
#include "ptoc/tools/ProfMain.h"

namespace ptoc::tools {

using session::Session;
using session::version;
namespace {

/// Exit statuses (docs/profiling.md): compare uses all three so CI can tell a
/// regression from a broken invocation.
constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;   ///< report: an error; compare: a regression
constexpr int kExitUsage = 2;     ///< usage error; compare: also unreadable reports
/// The 40 hex digits of a git commit id.
constexpr size_t kCommitLength = 40;

constexpr const char *kReportUsage =
    "usage: ptoc prof report FILE.pto|RUN_FOLDER [-o REPORT.json] [--repeat N] [--label NAME]\n"
    "         [--commit ID] [--no-host-times] [--device D] [--sched-mode N] [--func NAME]\n"
    "         [--pipeline TEXT] [--pass-option NAME=VALUE]... [--no-double-buffer]";
constexpr const char *kCompareUsage =
    "usage: ptoc prof compare BASE.json NEW.json [--threshold 5%] [--metric NAME]... "
    "[--force]";

/// Parsed `ptoc prof report` arguments.
struct ReportArgs {
  std::string input;
  std::string output;
  int repeat = 1;
  std::string label;
  std::string commit;
  bool hostTimes = true;
  std::string device = "a2";
  int schedMode = 0;
  std::string func;
  std::string pipeline;
  std::vector<std::pair<std::string, std::string>> passOptions;
  bool doubleBuffer = true;
  /// Options that only make sense when compiling (rejected with a run folder).
  std::vector<std::string> compileOptionsGiven;
};

/// Splits "--name=value" / "--name value" / "-o value"; calls `onFlag(name, value,
/// hasValue)` per option and `onPositional(arg)` otherwise. Stops at the first error.
template <typename OnFlag, typename OnPositional>
std::string splitArgs(const std::vector<std::string> &argv,
                      const std::vector<std::string> &valued, OnFlag onFlag,
                      OnPositional onPositional) {
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string &arg = argv[i];
    if (arg == "-o") {
      if (i + 1 >= argv.size()) return "-o needs a value";
      if (std::string e = onFlag("output", argv[++i]); !e.empty()) return e;
      continue;
    }
    if (arg.rfind("--", 0) != 0 || arg == "--") {
      if (std::string e = onPositional(arg); !e.empty()) return e;
      continue;
    }
    std::string name = arg.substr(2), value;
    bool hasValue = false;
    if (size_t eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      hasValue = true;
    }
    bool isValued = std::find(valued.begin(), valued.end(), name) != valued.end();
    if (isValued && !hasValue) {
      if (i + 1 >= argv.size()) return absl::StrCat("--", name, " needs a value");
      value = argv[++i];
    } else if (!isValued && hasValue) {
      return absl::StrCat("--", name, " takes no value");
    }
    if (std::string e = onFlag(name, value); !e.empty()) return e;
  }
  return "";
}

std::string intValue(llvm::StringRef name, const std::string &value, int64_t lo, int64_t hi,
                     int &out) {
  int64_t v;
  if (!absl::SimpleAtoi(value, &v) || v < lo || v > hi)
    return absl::StrCat("--", name.str(), " must be an integer in [", lo, ", ", hi, "], got '",
                        value, "'");
  out = static_cast<int>(v);
  return "";
}

std::string parseReportArgs(const std::vector<std::string> &argv, ReportArgs &out) {
  static const std::vector<std::string> kValued = {
      "output", "repeat", "label", "commit", "device", "sched-mode", "func", "pipeline",
      "pass-option"};
  std::string err = splitArgs(
      argv, kValued,
      [&](const std::string &name, const std::string &value) -> std::string {
        if (name == "device" || name == "sched-mode" || name == "func" || name == "pipeline" ||
            name == "pass-option" || name == "no-double-buffer")
          out.compileOptionsGiven.push_back("--" + name);
        if (name == "output") out.output = value;
        else if (name == "repeat") return intValue(name, value, 1, session::kMaxReportRepeat, out.repeat);
        else if (name == "label") out.label = value;
        else if (name == "commit") out.commit = value;
        else if (name == "no-host-times") out.hostTimes = false;
        else if (name == "device") out.device = value;
        else if (name == "sched-mode") return intValue(name, value, 0, 3, out.schedMode);
        else if (name == "func") out.func = value;
        else if (name == "pipeline") out.pipeline = value;
        else if (name == "no-double-buffer") out.doubleBuffer = false;
        else if (name == "pass-option") {
          size_t eq = value.find('=');
          if (eq == std::string::npos || eq == 0)
            return absl::StrCat(
                "--pass-option takes NAME=VALUE (e.g. pg_lower_bound=1024), got '", value, "'");
          out.passOptions.emplace_back(value.substr(0, eq), value.substr(eq + 1));
        } else {
          return absl::StrCat("unknown option '--", name, "'\n", kReportUsage);
        }
        return "";
      },
      [&](const std::string &arg) -> std::string {
        if (!out.input.empty())
          return absl::StrCat("more than one input ('", out.input, "' and '", arg, "')");
        out.input = arg;
        return "";
      });
  if (!err.empty()) return err;
  if (out.input.empty()) return absl::StrCat("no input file or run folder\n", kReportUsage);
  return "";
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
    if (auto buf = llvm::MemoryBuffer::getFile(out)) {
      llvm::StringRef text = (*buf)->getBuffer().trim();
      if (text.size() == kCommitLength) commit = text.str();
    }
  llvm::sys::fs::remove(out);
  return commit;
}

absl::StatusOr<std::string> readFile(llvm::StringRef path) {
  absl::StatusOr<std::string> text = support::readFileBounded(path, support::kMaxJsonBytes);
  if (!text.ok())
    return absl::NotFoundError(
        absl::StrCat("cannot read '", path.str(), "': ", text.status().message()));
  return text;
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
  absl::StatusOr<std::string> text = readFile(path);
  if (!text.ok()) return text.status();
  return profile::reportFromSummaryJson(*text, path);
}

/// A report from compiling and simulating `args.input` `args.repeat` times
/// (session::reportFromRuns).
absl::StatusOr<profile::PerfReport> reportFromRuns(const ReportArgs &args) {
  absl::StatusOr<Session> session = Session::create(args.device);
  if (!session.ok()) return session.status();
  absl::StatusOr<std::string> text = readFile(args.input);
  if (!text.ok()) return text.status();

  session::ReportRunsOptions options;
  options.compile.funcName = args.func;
  options.compile.pipeline = args.pipeline;
  for (const auto &[name, value] : args.passOptions) {
    if (absl::Status st = options.compile.knobs.setText(name, value); !st.ok())
      return absl::InvalidArgumentError(
          absl::StrCat("--pass-option ", name, "=", value, ": ", std::string(st.message())));
    options.passOptionsText[name] = value;
  }
  options.compile.codegen.doubleBuffer = args.doubleBuffer;
  options.run.schedMode = args.schedMode;
  options.repeat = args.repeat;
  options.hostTimes = args.hostTimes;
  return session::reportFromRuns(*session, *text, args.input, options);
}

/// True when `argv` asks for help (`--help` / `-h`).
bool wantsHelp(const std::vector<std::string> &argv) {
  return std::find(argv.begin(), argv.end(), "--help") != argv.end() ||
         std::find(argv.begin(), argv.end(), "-h") != argv.end();
}

} // namespace

int profReportMain(const std::vector<std::string> &argv) {
  if (wantsHelp(argv)) {
    llvm::outs() << kReportUsage << "\n";
    return kExitOk;
  }
  ReportArgs args;
  if (std::string err = parseReportArgs(argv, args); !err.empty()) {
    llvm::errs() << "ptoc prof report: " << err << "\n";
    return kExitUsage;
  }
  bool fromFolder = llvm::sys::fs::is_directory(args.input) ||
                    llvm::StringRef(args.input).endswith(".json");
  if (fromFolder && !args.compileOptionsGiven.empty()) {
    llvm::errs() << "ptoc prof report: " << args.compileOptionsGiven.front()
                 << " applies when compiling a .pto file, not to the existing run '"
                 << args.input << "'\n";
    return kExitUsage;
  }
  absl::StatusOr<profile::PerfReport> report =
      fromFolder ? reportFromFolder(args) : reportFromRuns(args);
  if (!report.ok()) {
    llvm::errs() << "ptoc prof report: " << ir::messageOf(report.status()) << "\n";
    return kExitFailure;
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
    return kExitFailure;
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
  if (wantsHelp(argv)) {
    llvm::outs() << kCompareUsage << "\n";
    return kExitOk;
  }
  std::vector<std::string> files;
  profile::CompareOptions options;
  static const std::vector<std::string> kValued = {"threshold", "metric"};
  std::string err = splitArgs(
      argv, kValued,
      [&](const std::string &name, const std::string &value) -> std::string {
        if (name == "threshold") {
          absl::StatusOr<double> t = profile::parseThresholdPercent(value);
          if (!t.ok()) return absl::StrCat("--threshold: ", std::string(t.status().message()));
          options.thresholdPercent = *t;
        } else if (name == "metric") {
          options.gated.push_back(value);
        } else if (name == "force") {
          options.force = true;
        } else {
          return absl::StrCat("unknown option '--", name, "'\n", kCompareUsage);
        }
        return "";
      },
      [&](const std::string &arg) -> std::string {
        files.push_back(arg);
        return "";
      });
  if (err.empty() && files.size() != 2)
    err = absl::StrCat("expected two reports (BASE.json NEW.json), got ", files.size(), "\n",
                       kCompareUsage);
  if (!err.empty()) {
    llvm::errs() << "ptoc prof compare: " << err << "\n";
    return kExitUsage;
  }
  profile::PerfReport reports[2];
  for (int i = 0; i < 2; ++i) {
    absl::StatusOr<std::string> text = readFile(files[i]);
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
  return cmp->regressed ? kExitFailure : kExitOk;
}

} // namespace ptoc::tools
