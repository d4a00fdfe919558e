// A performance report from repeated runs (see ReportRuns.h).
#include "ptoc/session/ReportRuns.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "ptoc/profile/Summary.h"
#include "ptoc/session/Version.h"

namespace ptoc::session {
namespace {

std::string hex16(uint64_t v) { return absl::StrFormat("%016x", v); }

std::vector<profile::TensorInfo> tensorInfos(const std::vector<TensorSpec> &specs) {
  std::vector<profile::TensorInfo> out;
  for (const TensorSpec &s : specs)
    out.push_back({s.name, std::string(ir::dtypeName(s.dtype)), s.shape});
  return out;
}

} // namespace

absl::StatusOr<profile::PerfReport> reportFromRuns(const Session &session, llvm::StringRef text,
                                                   llvm::StringRef fileName,
                                                   const ReportRunsOptions &options) {
  if (options.repeat < 1 || options.repeat > kMaxReportRepeat)
    return absl::InvalidArgumentError(absl::StrCat("a report repeats its run 1 to ",
                                                   kMaxReportRepeat, " times, not ",
                                                   options.repeat));
  RunOptions ropts = options.run;
  ropts.numerics = false;

  profile::PerfReport report;
  std::vector<double> simulated, compileS, simulateS;
  for (int i = 0; i < options.repeat; ++i) {
    absl::StatusOr<Kernel> kernel = session.compileText(text, fileName, options.compile);
    if (!kernel.ok()) return kernel.status();
    // Numerics are off, so no inputs are read: empty-but-shaped arguments suffice.
    std::vector<runtime::HostTensor> inputs, results;
    for (const TensorSpec &spec : kernel->args)
      inputs.push_back(runtime::HostTensor(spec.dtype, spec.shape));
    absl::StatusOr<RunReport> run = session.run(*kernel, inputs, results, ropts);
    if (!run.ok()) return run.status();
    simulated.push_back(run->simulatedUs);
    compileS.push_back(kernel->compileSeconds);
    simulateS.push_back(run->simulateSeconds);
    if (i > 0) continue;
    absl::StatusOr<std::shared_ptr<const codegen::Program>> program =
        kernel->runnable(ropts.stitchMaxNum, ropts.schedParallelism, std::vector<runtime::ConstTensorRef>(inputs.begin(), inputs.end()));
    if (!program.ok()) return program.status();
    absl::StatusOr<profile::Summary> summary = profile::summarize(**program, run->record);
    if (!summary.ok()) return summary.status();
    report.func = kernel->funcName;
    report.args = tensorInfos(kernel->args);
    report.results = tensorInfos(kernel->results);
    report.deviceHash = hex16(session.device().contentHash());
    report.pipeline = kernel->pipeline;
    profile::fillMetrics(report, *summary);
  }
  report.ptocVersion = version().str();
  report.file = fileName.str();
  report.schedMode = options.run.schedMode;
  report.passOptions = options.passOptionsText;
  report.doubleBuffer = options.compile.codegen.doubleBuffer;
  report.runs = options.repeat;
  report.simulatedStats = profile::computeStats(simulated);
  report.hasHostTimes = options.hostTimes;
  report.compileSeconds = profile::computeStats(compileS);
  report.simulateSeconds = profile::computeStats(simulateS);
  return report;
}

} // namespace ptoc::session
