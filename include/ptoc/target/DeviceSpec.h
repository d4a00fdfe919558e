// DeviceSpec: the description of one NPU die (core counts, clock, buffers, rates,
// scheduler costs). Devices are data: JSON files, with built-in presets.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "llvm/ADT/StringRef.h"

namespace ptoc::target {

/// On-chip buffer capacities in bytes.
struct BufferSpec {
  int64_t l1 = 512 * 1024;
  int64_t l0a = 64 * 1024;
  int64_t l0b = 64 * 1024;
  int64_t l0c = 128 * 1024;
  int64_t ub = 192 * 1024;
  /// Transfer/alignment granule (bytes); the last tile dim must be a multiple.
  int64_t blockBytes = 32;
};

/// Compute rates per core per cycle.
struct ComputeSpec {
  /// fp16 FLOP per cycle per AIC (16x16x16 MACs = 8192).
  double cubeFlopsPerCycleFp16 = 8192;
  /// int8 runs at this multiple of the fp16 rate; fp32 at `cubeFp32Factor`.
  double cubeInt8Factor = 2.0;
  double cubeFp32Factor = 0.5;
  /// Vector unit width: bytes processed per cycle per AIV.
  double vectorBytesPerCycle = 256;
};

/// Memory system.
struct MemorySpec {
  double hbmBytesPerSecond = 1.6e12;
  int64_t l2Bytes = int64_t(192) << 20;
  double l2BytesPerSecond = 4.7e12;
  /// Per-core DMA caps in bytes per cycle.
  double coreHbmBytesPerCycle = 32;
  double coreL2ReadBytesPerCycle = 110;
  double coreL2WriteBytesPerCycle = 86;
  /// Latency of a GM access in cycles (order of 1 us).
  double gmLatencyCycles = 1800;
};

/// AICPU scheduler.
struct SchedulerSpec {
  int threads = 3;
  double dispatchCycles = 200;
  double completionCycles = 240;
  double dependencyResolveCycles = 390;
};

/// One die.
struct DeviceSpec {
  std::string name = "a2";
  int aicCores = 24;
  int aivCores = 48;
  double clockMHz = 1800;
  BufferSpec buffers;
  ComputeSpec compute;
  MemorySpec memory;
  SchedulerSpec scheduler;
  /// Fixed overhead per kernel launch, microseconds.
  double launchOverheadUs = 20;

  /// Parses a device description. Missing fields keep the values of the preset named
  /// by "base" (default a2). Unknown, mistyped or inconsistent fields are errors that
  /// name the field and `sourceName`.
  static absl::StatusOr<DeviceSpec> fromJson(llvm::StringRef json, llvm::StringRef sourceName);
  /// A built-in preset: a2 (default), b3, a3, tiny.
  static absl::StatusOr<DeviceSpec> preset(llvm::StringRef name);
  /// A preset name, or a path to a JSON file.
  static absl::StatusOr<DeviceSpec> load(llvm::StringRef nameOrPath);
  static std::vector<std::string> presetNames();

  /// The full description as JSON (every field); fromJson(toJson()) is identical.
  std::string toJson() const;
  /// Checks values for consistency (positive sizes, AIV a multiple of AIC, ...).
  absl::Status validate() const;
  /// A hash of every field, stable across processes (cache keys).
  uint64_t contentHash() const;
};

} // namespace ptoc::target
