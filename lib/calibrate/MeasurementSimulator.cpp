// Simulating measured kernels with a cache of compiled programs (see
// MeasurementSimulator.h).
#include "ptoc/calibrate/MeasurementSimulator.h"

#include "absl/strings/str_cat.h"
#include "llvm/Support/xxhash.h"
#include "ptoc/calibrate/MeasuredPipes.h"
#include "ptoc/runtime/Simulator.h"

namespace ptoc::calibrate {
namespace {

/// The device with every field compilation does not read reset to a2's: the passes
/// and codegen read core counts, buffers, compute rates and the transfer paths (the
/// cost model), never the shared bandwidths, latencies, scheduler or launch costs.
uint64_t compileKey(const target::DeviceSpec &device) {
  target::DeviceSpec d = device;
  const target::DeviceSpec a2;
  d.name = a2.name;
  d.clockMHz = a2.clockMHz;
  double coreHbm = d.memory.coreHbmBytesPerCycle; // the cost model's cold-read rate
  d.memory = a2.memory;
  d.memory.coreHbmBytesPerCycle = coreHbm;
  d.scheduler = a2.scheduler;
  d.scheduler.threads = std::min(d.scheduler.threads, d.aicCores);
  d.launchOverheadUs = a2.launchOverheadUs;
  d.plainKernelStartUs = a2.plainKernelStartUs;
  d.plainCubeKernelStartUs = a2.plainCubeKernelStartUs;
  d.plainBlockCycles = a2.plainBlockCycles;
  d.pipes.syncCycles = a2.pipes.syncCycles;
  return d.contentHash();
}

} // namespace

absl::StatusOr<SimulatedKernel> MeasurementSimulator::simulate(const MeasurementSet &set,
                                                               const MeasuredKernel &kernel,
                                                               const target::DeviceSpec &device) {
  auto where = [&](const absl::Status &s) {
    return absl::Status(s.code(), absl::StrCat(set.path, ": ", kernel.label, ": ", s.message()));
  };
  target::DeviceSpec compileDevice = device;
  if (compileTransfers_) {
    compileDevice.pipes = compileTransfers_->pipes;
    compileDevice.memory.coreHbmBytesPerCycle = compileTransfers_->memory.coreHbmBytesPerCycle;
  }
  std::string source = kernel.ptoText;
  for (const auto &[name, value] : kernel.passOptions)
    absl::StrAppend(&source, "\n// pass option ", name, "=", value);
  Key key{llvm::xxHash64(source), compileKey(compileDevice)};
  std::shared_ptr<const codegen::Program> program;
  if (auto it = cache_.find(key); it != cache_.end()) {
    lru_.splice(lru_.begin(), lru_, it->second.second);
    program = it->second.first;
  } else {
    absl::StatusOr<codegen::Program> compiled = compile_(kernel, compileDevice);
    if (!compiled.ok()) return where(compiled.status());
    ++compilations_;
    program = std::make_shared<const codegen::Program>(*std::move(compiled));
    lru_.push_front(key);
    cache_[key] = {program, lru_.begin()};
    if (cache_.size() > maxCached_) {
      cache_.erase(lru_.back());
      lru_.pop_back();
    }
  }

  runtime::SimOptions options;
  options.kernelKind = set.plainKernel ? runtime::KernelKind::Plain : runtime::KernelKind::Aicpu;
  options.recordPipes = !kernel.measuredBusy.empty();
  absl::StatusOr<runtime::RunRecord> record = runtime::simulate(*program, device, options);
  if (!record.ok()) return where(record.status());

  SimulatedKernel out;
  out.kernelUs = record->kernelUs();
  if (options.recordPipes) {
    const double span = record->makespanCycles - record->bound.headCycles;
    for (const MeasuredPipe &p : kMeasuredPipes) {
      if (!kernel.measuredBusy.count(p.name)) continue;
      double busy = 0;
      for (const runtime::PipeRecord &pr : record->pipes)
        if (pr.pipe == p.pipe && record->tasks[pr.task].core == p.core)
          busy += pr.endCycle - pr.startCycle;
      int cores = p.core == target::CoreKind::AIC ? record->aicCores : record->aivCores;
      out.busy[p.name] = span > 0 && cores > 0 ? busy / (span * cores) : 0;
    }
  }
  return out;
}

} // namespace ptoc::calibrate
