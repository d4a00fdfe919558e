// `ptoc prof PATH`: analyse a run's trace (merged_swimlane.json or its run folder),
// print the analysis and write analysis.json beside the trace; `ptoc prof report` and
// `ptoc prof compare` go to ProfReport.cpp.
#include "ptoc/tools/ProfMain.h"

#include <optional>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include "ptoc/profile/TraceDiff.h"
#include "ptoc/profile/TraceProfile.h"
#include "ptoc/target/DeviceSpec.h"

namespace ptoc::tools {
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

constexpr const char *kDiffUsage = R"(usage: ptoc prof diff A B [--device D] [--json]

Sets two traces side by side (two device runs, two simulations, or a ptoc simulation
against a device run of the same operator): span, per core kind and per group the
task count, total and mean time with their ratios B / A, and where the critical paths
part. A and B are anything `ptoc prof` reads; nothing is written. Groups match by key,
or, with no key in common, by core kind in the order they first ran.

options:
  --device D  the device the PyPTO traces ran on (ptoc prof --device)
  --json      print the comparison as JSON (docs/profiling.md lists its keys)
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

std::optional<int> loadDevice(const std::string &name, std::optional<target::DeviceSpec> &device,
                              profile::TraceReadOptions &read);

int analyzeCommand(const ProfArgs &args) {
  profile::TraceProfileOptions options;
  options.analysis.summary.topTasks = args.top;
  options.analysis.topWaits = args.top;
  std::optional<target::DeviceSpec> device;
  if (std::optional<int> status = loadDevice(args.device, device, options.read)) return *status;
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

/// Loads the device named by --device into `device` (empty name: none).
std::optional<int> loadDevice(const std::string &name, std::optional<target::DeviceSpec> &device,
                              profile::TraceReadOptions &read) {
  if (name.empty()) return std::nullopt;
  absl::StatusOr<target::DeviceSpec> loaded = target::DeviceSpec::load(name);
  if (!loaded.ok()) {
    llvm::errs() << "ptoc prof: --device: " << std::string(loaded.status().message()) << "\n";
    return kExitUsage;
  }
  device = *std::move(loaded);
  read.device = &*device;
  return std::nullopt;
}

int diffCommand(const std::vector<std::string> &args) {
  std::vector<std::string> paths;
  std::string deviceName;
  bool json = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string &arg = args[i];
    if (arg == "--help" || arg == "-h") {
      llvm::outs() << kDiffUsage;
      return kExitOk;
    }
    if (arg == "--json") {
      json = true;
    } else if (arg == "--device" && i + 1 < args.size()) {
      deviceName = args[++i];
    } else if (arg.rfind("--device=", 0) == 0) {
      deviceName = arg.substr(9);
    } else if (!arg.empty() && arg[0] == '-') {
      llvm::errs() << "ptoc prof diff: unknown option '" << arg << "'; see 'ptoc prof diff --help'\n";
      return kExitUsage;
    } else {
      paths.push_back(arg);
    }
  }
  if (paths.size() != 2) {
    llvm::errs() << "ptoc prof diff: give two traces (got " << paths.size() << ")\n" << kDiffUsage;
    return kExitUsage;
  }
  profile::TraceProfileOptions options;
  options.write = false;
  std::optional<target::DeviceSpec> device;
  if (std::optional<int> status = loadDevice(deviceName, device, options.read)) return *status;
  std::vector<profile::TraceProfile> sides;
  for (const std::string &path : paths) {
    absl::StatusOr<profile::TraceProfile> side = profile::profileTrace(path, options);
    if (!side.ok()) {
      llvm::errs() << "ptoc prof diff: " << std::string(side.status().message()) << "\n";
      return kExitError;
    }
    sides.push_back(*std::move(side));
  }
  profile::TraceDiff diff = profile::diffAnalyses(sides[0].analysis, sides[1].analysis);
  llvm::outs() << (json ? profile::traceDiffJson(diff) : profile::traceDiffText(diff));
  llvm::outs().flush();
  return kExitOk;
}

} // namespace

int profMain(const std::vector<std::string> &args) {
  if (!args.empty() && args[0] == "diff")
    return diffCommand(std::vector<std::string>(args.begin() + 1, args.end()));
  if (!args.empty() && args[0] == "report")
    return profReportMain(std::vector<std::string>(args.begin() + 1, args.end()));
  if (!args.empty() && args[0] == "compare")
    return profCompareMain(std::vector<std::string>(args.begin() + 1, args.end()));
  ProfArgs parsed;
  if (std::optional<int> status = parseArgs(args, parsed)) return *status;
  return analyzeCommand(parsed);
}

} // namespace ptoc::tools
