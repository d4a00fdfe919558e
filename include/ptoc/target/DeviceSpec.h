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

/// Compute rates per core per cycle. Sources and confidence of every value:
/// docs/device-model.md.
struct ComputeSpec {
  /// fp16 FLOP per cycle per AIC: one 16x16x16 fractal per cycle = 8192 [H].
  double cubeFlopsPerCycleFp16 = 8192;
  /// int8 runs at this multiple of the fp16 rate; fp32 at `cubeFp32Factor`.
  double cubeInt8Factor = 2.0;
  double cubeFp32Factor = 0.5;
  /// bf16 runs at this multiple of the fp16 rate (same MAC array) [H].
  double cubeBf16Factor = 1.0;
  /// Issue cost of one mmad instruction (one L0 block), cycles, when mmads are
  /// pipelined [M]: a 32x16x16 mmad reaches ~3370 of 8192 FLOP/cycle, 32x16x1024
  /// ~8050 [H], i.e. 2-3 cycles per instruction beyond one cycle per fractal.
  double cubeBlockOverheadCycles = 2;
  /// Pipeline latency of the cube, charged once per tile matmul (the first mmad of a
  /// dependent sequence): about 23 cycles for an isolated instruction [M].
  double cubeLatencyCycles = 23;
  /// Vector unit width: bytes per cycle per AIV of the full-rate op class (one-input
  /// and scalar-operand ops: adds, muls, abs, relu, rec, rsqrt, cast, copy, dup) [H].
  double vectorBytesPerCycle = 256;
  /// Relative rates of the slower op classes (1 = `vectorBytesPerCycle`) [H]:
  /// two-input ops (add, sub, mul, max, min of two tiles) 128 B/cycle;
  /// div 64 B/cycle; transcendentals (exp, ln, sqrt) a fixed element rate, 128 B/cycle
  /// for 32-bit and 64 B/cycle for 16-bit elements; row reductions ~37 B/cycle.
  double vectorBinaryRate = 0.5;
  double vectorDivRate = 0.25;
  double vectorTranscendentalRate = 0.5;
  double vectorReduceRate = 0.14453125;
  /// Latency of one vector instruction, cycles, charged per instruction [M]: the bias
  /// of cycles = slope x elements + bias fits of tile ops (20-60); 3-7 cycles of it
  /// is one repeat.
  double vectorLatencyCycles = 23;
};

/// Per-core data paths: every transfer instruction costs fixed + bytes / rate, the
/// rate being the path's own (one core alone, data resident in L2); GM reads that miss
/// L2 are also capped by MemorySpec::coreHbmBytesPerCycle, and every GM transfer shares
/// the device's L2 and HBM bandwidth [M: fits of measured per-instruction curves].
struct PipeSpec {
  /// MTE2 of a cube core: GM -> L1 without layout change.
  double gmToL1FixedCycles = 175;
  double gmToL1BytesPerCycle = 162;
  /// MTE2 of a cube core converting a row-major (ND) GM tile to the cube's fractal
  /// (NZ) layout in L1, as every cube operand of ptoc's row-major tensors needs.
  double nd2nzFixedCycles = 175;
  double nd2nzBytesPerCycle = 122;
  /// MTE2 of a vector core: GM -> UB.
  double gmToUbFixedCycles = 64;
  double gmToUbBytesPerCycle = 48;
  /// MTE1: L1 -> L0A and L1 -> L0B.
  double mte1FixedCycles = 2;
  double mte1L0aBytesPerCycle = 263;
  double mte1L0bBytesPerCycle = 132;
  /// FIXPIPE: L0C -> GM.
  double fixpipeFixedCycles = 18;
  double fixpipeBytesPerCycle = 123;
  /// MTE3: UB -> GM.
  double mte3FixedCycles = 88;
  double mte3BytesPerCycle = 73;
  /// Latency of a synchronisation between two pipes of a core (a set_flag seen by the
  /// wait_flag of the other pipe): an instruction waiting for another pipe's result
  /// starts this long after it.
  double syncCycles = 0;
};

/// Memory system shared by all cores.
struct MemorySpec {
  double hbmBytesPerSecond = 1.6e12;
  int64_t l2Bytes = int64_t(192) << 20;
  /// Aggregate L2 bandwidth (reads and writes of all cores).
  double l2BytesPerSecond = 4.752e12;
  /// Most one core's reads can take from HBM (a read that misses L2), bytes per cycle.
  double coreHbmBytesPerCycle = 32;
  /// Latency a GM read that misses L2 adds before its data is usable, in cycles [L];
  /// it delays the instruction's consumers, not the next transfer on the pipe.
  double gmLatencyCycles = 500;
  /// Latency an L2 hit adds beyond the path's fixed cost (which was measured on
  /// L2-resident data, so it includes the hit latency) [M].
  double l2LatencyCycles = 0;
};

/// AICPU scheduler.
struct SchedulerSpec {
  int threads = 3;
  double dispatchCycles = 200;
  double completionCycles = 240;
  double dependencyResolveCycles = 390;
  // The control thread (loops, docs/runtime.md): it instantiates loop iterations and
  // submits them to the scheduler threads in stitches.
  /// Per iteration of a loop body (or segment): evaluating its bounds and window
  /// offsets [L].
  double controlIterationCycles = 200;
  /// Per task the control thread builds for an iteration (its descriptor and the
  /// dependencies on earlier iterations) [L].
  double controlTaskCycles = 390;
  /// Per stitch it submits to the scheduler threads [L].
  double controlStitchCycles = 240;
};

/// The preset a session, a command or a kernel uses when no device is named (the
/// tools' --device, Python's @ptoc.jit(device=...)); a default-constructed DeviceSpec
/// describes it.
inline constexpr const char *kDefaultPreset = "a2";

/// One die.
struct DeviceSpec {
  std::string name = kDefaultPreset;
  int aicCores = 24;
  int aivCores = 48;
  double clockMHz = 1800;
  BufferSpec buffers;
  ComputeSpec compute;
  PipeSpec pipes;
  MemorySpec memory;
  SchedulerSpec scheduler;
  /// The head of an AICPU-scheduled kernel (ptoc's own kernels, as PyPTO runs them):
  /// from the launch until the scheduler threads dispatch the first task,
  /// microseconds. Not part of the kernel time a profiler reports.
  double launchOverheadUs = 20;
  /// The start-up of a plain kernel (Ascend C, CATLASS, PTO-ISA: launched on all its
  /// cores at once, no AICPU scheduler), microseconds: from the start of its kernel
  /// time until its cores run their first block (core start, scalar prologue).
  double plainKernelStartUs = 1;
  /// The same for a plain kernel that starts cube cores (a matmul, or a mixed cube and
  /// vector kernel), which pays more to start.
  double plainCubeKernelStartUs = 6;
  /// The prologue a core of a plain kernel runs before each block (task) it takes:
  /// tile coordinates, addresses, synchronisation set-up on its scalar unit, cycles.
  double plainBlockCycles = 2000;

  /// Parses a device description. Missing fields keep the values of the preset named
  /// by "base" (default a2). Unknown, mistyped or inconsistent fields are errors that
  /// name the field and `sourceName`.
  static absl::StatusOr<DeviceSpec> fromJson(llvm::StringRef json, llvm::StringRef sourceName);
  /// A built-in preset: a2 (default), a3, b3, b4, tiny.
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

  /// Every numeric field's JSON path ("memory.hbm_bytes_per_second", "aic_cores"), in
  /// the order of the JSON form.
  static std::vector<std::string> numericFieldPaths();
  /// What a numeric field may hold.
  struct FieldInfo {
    double min = 0, max = 0; ///< the closed range every description is checked against
    bool integral = false;   ///< counts and sizes
    std::string why;         ///< the reasoning behind the range
  };
  /// The range of the numeric field at `path`; an error lists the known paths.
  static absl::StatusOr<FieldInfo> fieldInfo(llvm::StringRef path);
  /// The value of the numeric field at `path`; an error lists the known paths.
  absl::StatusOr<double> numericField(llvm::StringRef path) const;
  /// Sets the numeric field at `path` (integers are rounded; a rounded integer out of
  /// range or a value that is not finite is an error). Other rules are validate()'s.
  absl::Status setNumericField(llvm::StringRef path, double value);

  /// Cycles per microsecond (the clock in MHz).
  double cyclesPerUs() const { return clockMHz; }
  /// Device-wide HBM / L2 bandwidth in bytes per core cycle.
  double hbmBytesPerCycle() const { return memory.hbmBytesPerSecond / (clockMHz * 1e6); }
  double l2BytesPerCycle() const { return memory.l2BytesPerSecond / (clockMHz * 1e6); }
};

} // namespace ptoc::target
