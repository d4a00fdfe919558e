// `ptoc prof PATH`: analyse a run's trace (merged_swimlane.json or its run folder),
// print the analysis and write analysis.json beside the trace; `ptoc prof report` and
// `ptoc prof compare` go to ProfReport.cpp.
#include "ptoc/session/ProfMain.h"

#include <optional>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include "ptoc/profile/OutputDir.h"
#include "ptoc/profile/SwimlaneHtml.h"
#include "ptoc/profile/TraceAnalysis.h"
#include "ptoc/support/AtomicWrite.h"

namespace ptoc::session {
namespace {

constexpr int kExitOk = 0;
constexpr int kExitError = 1;
constexpr int kExitUsage = 2;

constexpr const char *kProfUsage = R"(usage: ptoc prof PATH [--top K] [--quiet]
       ptoc prof report ...     (ptoc prof report --help)
       ptoc prof compare ...    (ptoc prof compare --help)

Analyses a run: PATH is a merged_swimlane.json or the run folder holding one (a run
with --debug-mode 1 or 2). Prints end-to-end time against the roofline bound, per
core kind utilisation and idle (waiting for the scheduler vs for predecessors), the
per-group table, the per-pipe view (debug mode 2), the critical path, the longest
tasks and scheduling waits, and bottleneck verdicts with the knob to try; writes the
same as analysis.json beside the trace (docs/profiling.md lists its keys).

options:
  --top K     how many tasks to list by duration and by scheduling wait   [10]
  --quiet     print only where analysis.json was written
)";

struct ProfArgs {
  std::string path;
  int top = profile::SummaryOptions{}.topTasks;
  bool quiet = false;
};

/// Parses the arguments; returns the exit status on a usage error or --help.
std::optional<int> parseArgs(const std::vector<std::string> &args, ProfArgs &out) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string &arg = args[i];
    if (arg == "--help" || arg == "-h") {
      llvm::outs() << kProfUsage;
      return kExitOk;
    }
    if (arg == "--quiet") {
      out.quiet = true;
    } else if (arg == "--top" || arg.rfind("--top=", 0) == 0) {
      std::string value;
      if (arg == "--top") {
        if (i + 1 >= args.size()) {
          llvm::errs() << "ptoc prof: --top needs a number (e.g. --top 20)\n";
          return kExitUsage;
        }
        value = args[++i];
      } else {
        value = arg.substr(6);
      }
      if (!absl::SimpleAtoi(value, &out.top) || out.top < 0 || out.top > profile::kMaxTop) {
        llvm::errs() << "ptoc prof: --top '" << value << "' is not a count from 0 to " << profile::kMaxTop
                     << "\n";
        return kExitUsage;
      }
    } else if (!arg.empty() && arg[0] == '-') {
      llvm::errs() << "ptoc prof: unknown option '" << arg << "'; see 'ptoc prof --help'\n";
      return kExitUsage;
    } else if (out.path.empty()) {
      out.path = arg;
    } else {
      llvm::errs() << "ptoc prof: one PATH only (got '" << out.path << "' and '" << arg << "')\n";
      return kExitUsage;
    }
  }
  if (out.path.empty()) {
    llvm::errs() << "ptoc prof: no PATH given (a merged_swimlane.json or a run folder)\n"
                 << kProfUsage;
    return kExitUsage;
  }
  return std::nullopt;
}

int analyzeCommand(const ProfArgs &args) {
  absl::StatusOr<profile::TraceData> trace = profile::loadTrace(args.path);
  if (!trace.ok()) {
    llvm::errs() << "ptoc prof: " << std::string(trace.status().message()) << "\n";
    return kExitError;
  }
  profile::AnalysisOptions options;
  options.summary.topTasks = args.top;
  options.topWaits = args.top;
  profile::Analysis analysis = profile::analyze(*trace, options);
  if (!args.quiet) llvm::outs() << profile::analysisText(analysis);

  llvm::SmallString<256> folder(trace->path);
  llvm::sys::path::remove_filename(folder);
  if (folder.empty()) folder = ".";
  llvm::SmallString<256> out(folder);
  llvm::sys::path::append(out, profile::kAnalysisFile);
  if (absl::Status s = support::writeFileAtomically(out, profile::analysisJson(analysis));
      !s.ok()) {
    llvm::errs() << "ptoc prof: " << std::string(s.message()) << "\n";
    return kExitError;
  }
  llvm::outs() << (args.quiet ? "" : "\n") << "analysis: " << out << "\n";
  // A run folder's page shows the analysis once it exists: refresh it.
  llvm::SmallString<256> html(folder);
  llvm::sys::path::append(html, profile::kSwimlaneHtmlFile);
  if (llvm::sys::fs::exists(html)) {
    if (absl::Status s = profile::writeSwimlaneHtmlFile(folder); !s.ok())
      llvm::errs() << "ptoc prof: warning: " << std::string(s.message()) << "\n";
    else
      llvm::outs() << "swimlane page: " << html << "\n";
  }
  llvm::outs().flush();
  return kExitOk;
}

} // namespace

int profMain(const std::vector<std::string> &args) {
  if (!args.empty() && args[0] == "report")
    return profReportMain(std::vector<std::string>(args.begin() + 1, args.end()));
  if (!args.empty() && args[0] == "compare")
    return profCompareMain(std::vector<std::string>(args.begin() + 1, args.end()));
  ProfArgs parsed;
  if (std::optional<int> status = parseArgs(args, parsed)) return *status;
  return analyzeCommand(parsed);
}

} // namespace ptoc::session
