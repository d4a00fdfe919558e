// The simulator: a discrete-event model of the device running a Program — AICPU
// scheduler threads dispatching tasks to cores, the pipes inside each core, HBM and L2
// bandwidth shared by all cores, an LRU L2 over GM regions, the kernel head overhead.
#pragma once

#include "absl/status/statusor.h"
#include "ptoc/codegen/Program.h"
#include "ptoc/runtime/PreparedProgram.h"
#include "ptoc/runtime/RunRecord.h"
#include "ptoc/target/DeviceSpec.h"

namespace ptoc::runtime {

/// The device_sched_mode values (SimOptions::schedMode).
inline constexpr int kMinSchedMode = 0, kMaxSchedMode = 3;

/// Runtime options (one struct; defaults here).
struct SimOptions {
  /// device_sched_mode: 0 shared FIFO; 1 L2 affinity (LIFO + a task readied by a
  /// completion goes straight to an idle core of the same thread); 2 fair (threads hand
  /// work over, automatic in the tail); 3 = 1 and 2.
  int schedMode = 0;
  /// Record per-pipe instructions (runtime_debug_mode 2).
  bool recordPipes = false;
  /// How the kernel is launched: AICPU-scheduled (ptoc's kernels) or plain (every core
  /// starts at once and runs its tasks without scheduler costs; for comparing with
  /// hand-written kernels measured on a device).
  KernelKind kernelKind = KernelKind::Aicpu;
};

/// Simulates one run. Errors: a bad scheduler mode, a program inconsistent with the
/// device (a leaf for a core kind the device lacks).
absl::StatusOr<RunRecord> simulate(const codegen::Program &program,
                                   const target::DeviceSpec &device, const SimOptions &options);
/// The same for a program prepared once (PreparedProgram::prepare) on its device:
/// simulating it again, e.g. under another scheduler mode, skips the preparation and
/// gives what simulate(program, device, options) gives.
absl::StatusOr<RunRecord> simulate(const PreparedProgram &prepared, const SimOptions &options);

/// The roofline bound of a program on a device (also filled into every RunRecord).
RooflineBound rooflineBound(const codegen::Program &program, const target::DeviceSpec &device,
                            KernelKind kind = KernelKind::Aicpu);

} // namespace ptoc::runtime
