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
#include "ptoc/profile/TraceProfile.h"
#include "ptoc/target/DeviceSpec.h"

namespace ptoc::session {
namespace {

constexpr int kExitOk = 0;
constexpr int kExitError = 1;
constexpr int kExitUsage = 2;

constexpr const char *kProfUsage = R"(usage: ptoc prof PATH [--top K] [--quiet] [--device D]
       ptoc prof diff A B ...   (ptoc prof diff --help)
       ptoc prof report ...     (ptoc prof report --help)
       ptoc prof compare ...    (ptoc prof compare --help)

Analyses a run: PATH is a merged_swimlane.json or the run folder holding one (a run
with --debug-mode 1 or 2), or a PyPTO device trace (Machine View, Worker View).
Prints end-to-end time against the roofline bound, per core kind utilisation and
idle (waiting for the scheduler vs for predecessors), the per-group table, the
per-pipe view (debug mode 2), the critical path, the longest tasks and scheduling
waits, and bottleneck verdicts with the knob to try, each where the trace carries
what it needs; writes the same as analysis.json beside the trace (docs/profiling.md
lists its keys) and refreshes the run folder's swimlane.html (a device trace gets
<stem>.analysis.json and <stem>.swimlane.html).

options:
  --top K     how many tasks to list by duration and by scheduling wait   [10]
  --device D  the device a PyPTO trace ran on (preset or JSON file): its core
              counts, so idle cores without a lane are counted
  --quiet     print only where analysis.json was written
)";

struct ProfArgs {
  std::string path;
  int top = profile::SummaryOptions{}.topTasks;
  std::string device;
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
    } else if (arg == "--device" || arg.rfind("--device=", 0) == 0) {
      if (arg == "--device" && i + 1 >= args.size()) {
        llvm::errs() << "ptoc prof: --device needs a preset name or a JSON file (e.g. "
                        "--device a2)\n";
        return kExitUsage;
      }
      out.device = arg == "--device" ? args[++i] : arg.substr(9);
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
  profile::TraceProfileOptions options;
  options.analysis.summary.topTasks = args.top;
  options.analysis.topWaits = args.top;
  std::optional<target::DeviceSpec> device;
  if (!args.device.empty()) {
    absl::StatusOr<target::DeviceSpec> loaded = target::DeviceSpec::load(args.device);
    if (!loaded.ok()) {
      llvm::errs() << "ptoc prof: --device: " << std::string(loaded.status().message()) << "\n";
      return kExitUsage;
    }
    device = *std::move(loaded);
    options.read.device = &*device;
  }
  absl::StatusOr<profile::TraceProfile> result = profile::profileTrace(args.path, options);
  if (!result.ok()) {
    llvm::errs() << "ptoc prof: " << std::string(result.status().message()) << "\n";
    return kExitError;
  }
  if (!args.quiet) llvm::outs() << profile::analysisText(result->analysis);
  llvm::outs() << (args.quiet ? "" : "\n") << "analysis: " << result->analysisPath << "\n";
  if (!result->htmlWarning.empty())
    llvm::errs() << "ptoc prof: warning: " << result->htmlWarning << "\n";
  if (!result->htmlPath.empty()) llvm::outs() << "swimlane page: " << result->htmlPath << "\n";
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
