// `ptoc prof PATH`: analyse a run's trace (merged_swimlane.json or its run folder),
// print the analysis and write analysis.json beside the trace; `ptoc prof report` and
// `ptoc prof compare` go to ProfReport.cpp.
#include "ptoc/tools/ProfMain.h"

#include <optional>

#include "absl/strings/str_cat.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include "ptoc/profile/TraceDiff.h"
#include "ptoc/profile/TraceProfile.h"
#include "ptoc/target/DeviceSpec.h"
#include "ptoc/tools/ArgParser.h"

namespace ptoc::tools {
namespace {

/// `ptoc prof PATH` arguments.
struct ProfArgs {
  std::string path;
  int top = profile::SummaryOptions{}.topTasks;
  std::string device;
  bool quiet = false;
};

CommandSpec profSpec(ProfArgs &a) {
  return CommandSpec{
      "ptoc prof",
      R"(Analyses a run: PATH is a merged_swimlane.json or the run folder holding one (a run
with --debug-mode 1 or 2), or a PyPTO device trace (Machine View, Worker View).
Prints end-to-end time against the roofline bound, per core kind utilisation and
idle (waiting for the scheduler vs for predecessors), the per-group table, the
per-pipe view (debug mode 2), the critical path, the longest tasks and scheduling
waits, and bottleneck verdicts with the knob to try, each where the trace carries
what it needs; writes the same as analysis.json beside the trace (docs/profiling.md
lists its keys) and refreshes the run folder's swimlane.html (a device trace gets
<stem>.analysis.json and <stem>.swimlane.html).

Other subcommands (each with --help):
  ptoc prof diff A B       set two traces side by side
  ptoc prof report ...     write a performance report (JSON) of an operator or a run
  ptoc prof compare ...    compare two reports; fail on a regression
)",
      ArgPositional{"PATH", &a.path, "PATH", 1, 1,
                    "no PATH given (a merged_swimlane.json or a run folder)"},
      {
          {"top", &a.top, "K", "how many tasks to list by duration and by scheduling wait",
           Bounds::between(0, profile::kMaxTop)},
          {"device", &a.device, "D",
           "the device a PyPTO trace ran on (preset or JSON file): its core counts, so idle "
           "cores without a lane are counted"},
          {"quiet", &a.quiet, "", "print only where analysis.json was written"},
      }};
}

/// `ptoc prof diff A B` arguments.
struct DiffArgs {
  std::vector<std::string> paths;
  std::string device;
  bool json = false;
};

CommandSpec diffSpec(DiffArgs &a) {
  return CommandSpec{
      "ptoc prof diff",
      R"(Sets two traces side by side (two device runs, two simulations, or a ptoc simulation
against a device run of the same operator): span, per core kind and per group the
task count, total and mean time with their ratios B / A, and where the critical paths
part. A and B are anything `ptoc prof` reads; nothing is written. Groups match by key,
or, with no key in common, by core kind in the order they first ran.
)",
      ArgPositional{"A B", &a.paths, "traces", 2, 2},
      {
          {"device", &a.device, "D", "the device the PyPTO traces ran on (ptoc prof --device)"},
          {"json", &a.json, "", "print the comparison as JSON (docs/profiling.md lists its keys)"},
      }};
}

/// Loads the device named by --device into `device` (empty name: none); a device that
/// does not load is a usage error of `parser`'s command.
std::optional<int> loadDevice(const ArgParser &parser, const std::string &name,
                              std::optional<target::DeviceSpec> &device,
                              profile::TraceReadOptions &read) {
  if (name.empty()) return std::nullopt;
  absl::StatusOr<target::DeviceSpec> loaded = target::DeviceSpec::load(name);
  if (!loaded.ok()) return parser.usageError("--device: " + std::string(loaded.status().message()));
  device = *std::move(loaded);
  read.device = &*device;
  return std::nullopt;
}

int analyzeCommand(const std::vector<std::string> &argv) {
  ProfArgs args;
  ArgParser parser(profSpec(args));
  if (std::optional<int> status = parser.parse(argv)) return *status;
  profile::TraceProfileOptions options;
  options.analysis.summary.topTasks = args.top;
  options.analysis.topWaits = args.top;
  std::optional<target::DeviceSpec> device;
  if (std::optional<int> status = loadDevice(parser, args.device, device, options.read))
    return *status;
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

int diffCommand(const std::vector<std::string> &argv) {
  DiffArgs args;
  ArgParser parser(diffSpec(args));
  if (std::optional<int> status = parser.parse(argv)) return *status;
  profile::TraceProfileOptions options;
  options.write = false;
  std::optional<target::DeviceSpec> device;
  if (std::optional<int> status = loadDevice(parser, args.device, device, options.read))
    return *status;
  std::vector<profile::TraceProfile> sides;
  for (const std::string &path : args.paths) {
    absl::StatusOr<profile::TraceProfile> side = profile::profileTrace(path, options);
    if (!side.ok()) {
      llvm::errs() << "ptoc prof diff: " << std::string(side.status().message()) << "\n";
      return kExitError;
    }
    sides.push_back(*std::move(side));
  }
  profile::TraceDiff diff = profile::diffAnalyses(sides[0].analysis, sides[1].analysis);
  llvm::outs() << (args.json ? profile::traceDiffJson(diff) : profile::traceDiffText(diff));
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
  return analyzeCommand(args);
}

} // namespace ptoc::tools
