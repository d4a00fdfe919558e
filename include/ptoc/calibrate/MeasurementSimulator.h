// MeasurementSimulator: simulates a measured kernel (MeasuredKernel) on a device the
// way it ran on the real one (plain or AICPU-scheduled), for the fidelity benchmark
// and `ptoc calibrate`. Compiled programs are cached per kernel and per the device
// fields compilation reads, so calibrating fields the compiler does not read
// (bandwidths, latencies, scheduler and launch costs) only re-simulates. Kernels are
// compiled through a callback the session gives (session::measurementSimulator()),
// so calibrate never calls the session.
#pragma once

#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "ptoc/calibrate/Fidelity.h"
#include "ptoc/calibrate/Measurements.h"
#include "ptoc/codegen/Program.h"
#include "ptoc/target/DeviceSpec.h"

namespace ptoc::calibrate {

/// Compiles a measured kernel (its text, function and pass options) for `device` to a
/// program.
using KernelCompiler = std::function<absl::StatusOr<codegen::Program>(
    const MeasuredKernel &kernel, const target::DeviceSpec &device)>;

class MeasurementSimulator {
public:
  /// Compiles through `compile`; `maxCachedPrograms` bounds the compiled programs kept
  /// (least recently used go).
  explicit MeasurementSimulator(KernelCompiler compile, size_t maxCachedPrograms = 64)
      : compile_(std::move(compile)), maxCached_(maxCachedPrograms) {}

  /// Compile every kernel with the transfer costs (pipes, per-core HBM rate) of
  /// `device` instead of the simulated device's. The partitioner reads them only for
  /// its estimates, and a measured kernel's structure does not change when a model of
  /// its transfers does: calibrating transfer fields then re-simulates the same
  /// programs (smoothly) instead of recompiling them into others.
  void fixTransferCostsForCompile(const target::DeviceSpec &device) {
    compileTransfers_ = device;
  }

  /// Compiles `kernel` for `device` (or takes it from the cache) and simulates it as a
  /// kernel of `set`'s kind. Errors name the set and the point.
  absl::StatusOr<SimulatedKernel> simulate(const MeasurementSet &set,
                                           const MeasuredKernel &kernel,
                                           const target::DeviceSpec &device);

  /// Compilations so far (cache misses).
  int compilations() const { return compilations_; }

private:
  using Key = std::pair<uint64_t, uint64_t>; ///< (kernel text, device fields compilation reads)
  KernelCompiler compile_;
  size_t maxCached_;
  std::list<Key> lru_;
  std::map<Key, std::pair<std::shared_ptr<const codegen::Program>, std::list<Key>::iterator>>
      cache_;
  int compilations_ = 0;
  std::optional<target::DeviceSpec> compileTransfers_;
};

} // namespace ptoc::calibrate
