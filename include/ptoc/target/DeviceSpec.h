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
  /// bf16 runs at this multiple of the fp16 rate (same MAC array) [H].
  double cubeBf16Factor = 1.0;
  /// Fixed cycles per L0 block of a tile matmul (L1->L0 issue, mmad start) [L]; makes
  /// small matmuls inefficient, as measured (a 32x16x16 mmad reaches ~3370 of 8192
  /// FLOP/cycle) [H].
  double cubeBlockOverheadCycles = 32;
  /// Vector unit width: bytes processed per cycle per AIV at full rate (add, mul) [H].
  double vectorBytesPerCycle = 256;
  /// Relative rates of the slower vector op classes (1 = full width) [H]: div and
  /// reciprocal run at about half rate (div fp32 ~64 vs mul ~127 ops/cycle); exp,
  /// log, sqrt, rsqrt, sigmoid, tanh, gelu and pow likewise (exp fp16 ~65 vs add ~128);
  /// reductions (sum, amax, amin, mean) at full rate.
  double vectorDivRate = 0.5;
  double vectorTranscendentalRate = 0.5;
  double vectorReduceRate = 1.0;
  /// Pipeline latency of one vector instruction, cycles: 4-23 [H]; the worst case,
  /// charged once per tile op.
  double vectorLatencyCycles = 23;
};

/// Per-core transfer pipes other than MTE2's GM reads (whose caps are in MemorySpec).
struct PipeSpec {
  /// MTE1: L1 -> L0A and L1 -> L0B, bytes per cycle [H].
  double mte1L0aBytesPerCycle = 512;
  double mte1L0bBytesPerCycle = 256;
  /// FIXPIPE: L0C -> GM, bytes per cycle (~200 GB/s measured at 1.8 GHz) [H].
  double fixpipeBytesPerCycle = 111;
  /// MTE3: UB -> GM, bytes per cycle [H].
  double mte3BytesPerCycle = 64;
  /// Fixed cost of issuing one DMA transfer (descriptor set-up, first burst) [L];
  /// small transfers are dominated by it (1 KB bursts reach ~10 GB/s against ~260
  /// GB/s for large ones [H]).
  double dmaIssueCycles = 64;
  /// Latency of an on-chip move (MTE1 L1 -> L0) before its data is usable [L].
  double localLatencyCycles = 16;
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
  /// Latency of a GM access that misses L2, in cycles (order of 1 us) [M].
  double gmLatencyCycles = 1800;
  /// Latency of a GM access served by L2, in cycles [L] (about half a miss).
  double l2LatencyCycles = 900;
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
  PipeSpec pipes;
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

  /// Cycles per microsecond (the clock in MHz).
  double cyclesPerUs() const { return clockMHz; }
  /// Device-wide HBM / L2 bandwidth in bytes per core cycle.
  double hbmBytesPerCycle() const { return memory.hbmBytesPerSecond / (clockMHz * 1e6); }
  double l2BytesPerCycle() const { return memory.l2BytesPerSecond / (clockMHz * 1e6); }
};

} // namespace ptoc::target
