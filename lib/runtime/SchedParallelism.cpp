// device_sched_parallelism's range and the automatic value (SchedParallelism.h).
#include "ptoc/runtime/SchedParallelism.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"

namespace ptoc::runtime {

absl::Status checkSchedParallelism(int parallelism) {
  if (parallelism != kAutoSchedParallelism &&
      (parallelism < kMinSchedParallelism || parallelism > kMaxSchedParallelism))
    return absl::InvalidArgumentError(absl::StrCat(
        "device_sched_parallelism must be ", kAutoSchedParallelism,
        " (automatic: derived from the kernel) or between ", kMinSchedParallelism, " and ",
        kMaxSchedParallelism, " (iterations of a parallel loop run at once), got ", parallelism));
  return absl::OkStatus();
}

int automaticSchedParallelism(const codegen::Program &program,
                              const target::DeviceSpec &device) {
  using Iteration = std::pair<int, int64_t>; // (parallel run, its iteration ordinal)
  struct Totals {
    double work = 0, criticalPath = 0;
  };
  std::map<Iteration, Totals> iterations;
  std::map<int, int64_t> iterationsPerRun;
  std::vector<double> finish(program.calls.size(), 0);
  std::vector<const Totals *> of(program.calls.size(), nullptr);
  bool aic = false, aiv = false;
  for (size_t i = 0; i < program.calls.size(); ++i) {
    const codegen::Call &call = program.calls[i];
    if (call.instance < 0 || size_t(call.instance) >= program.instances.size()) continue;
    const codegen::Instance &instance = program.instances[call.instance];
    if (instance.parallelRun < 0 || call.leaf < 0 || size_t(call.leaf) >= program.leaves.size())
      continue;
    Totals &it = iterations[{instance.parallelRun, instance.parallelIteration}];
    int64_t &count = iterationsPerRun[instance.parallelRun];
    count = std::max(count, instance.parallelIteration + 1);
    const codegen::Leaf &leaf = program.leaves[call.leaf];
    double start = 0; // calls come in a topological order: preds are earlier
    for (int pred : call.preds)
      if (pred >= 0 && size_t(pred) < i && of[pred] == &it) start = std::max(start, finish[pred]);
    finish[i] = start + double(leaf.cycles);
    of[i] = &it;
    it.work += double(leaf.cycles);
    it.criticalPath = std::max(it.criticalPath, finish[i]);
    aic |= leaf.core == target::CoreKind::AIC;
    aiv |= leaf.core == target::CoreKind::AIV;
  }
  double work = 0, criticalPath = 0;
  for (const auto &[key, it] : iterations) {
    work += it.work;
    criticalPath += it.criticalPath;
  }
  if (iterations.empty() || work <= 0 || criticalPath <= 0) return kMinSchedParallelism;
  double cores = (aic ? device.aicCores : 0) + (aiv ? device.aivCores : 0);
  double averageBusy = work / criticalPath; // pi
  int64_t most = 0;
  for (const auto &[run, count] : iterationsPerRun) most = std::max(most, count);
  int64_t p = static_cast<int64_t>(std::ceil(cores / averageBusy)) + 1;
  p = std::min<int64_t>({p, kMaxSchedParallelism, std::max<int64_t>(most, 1)});
  return static_cast<int>(std::max<int64_t>(p, kMinSchedParallelism));
}

} // namespace ptoc::runtime
