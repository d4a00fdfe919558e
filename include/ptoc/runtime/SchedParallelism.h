// device_sched_parallelism, PyPTO's runtime option: how many iterations of a parallel
// loop may be in flight at once (docs/runtime.md "Parallel loops"), its range, and the
// value ptoc derives from the kernel and the device when the option is left automatic.
#pragma once

#include "absl/status/status.h"
#include "ptoc/codegen/Program.h"
#include "ptoc/target/DeviceSpec.h"

namespace ptoc::runtime {

/// The range a user may set (PyPTO's: each iteration in flight takes workspace slot
/// j mod P).
inline constexpr int kMinSchedParallelism = 1, kMaxSchedParallelism = 8;
/// The value that asks for automaticSchedParallelism; ptoc's default. (PyPTO's own
/// default is 1: no two iterations of a parallel loop overlap.)
inline constexpr int kAutoSchedParallelism = 0;
inline constexpr int kDefaultSchedParallelism = kAutoSchedParallelism;

/// An error naming device_sched_parallelism, the value and what it may be when it is
/// neither kAutoSchedParallelism nor in [kMinSchedParallelism, kMaxSchedParallelism].
absl::Status checkSchedParallelism(int parallelism);

/// The iterations of parallel loops that keep the cores busy, for an expanded program
/// (its calls' Instance::parallelRun / parallelIteration say which parallel iteration
/// each belongs to). An iteration run alone keeps on average pi = work / critical path
/// cores busy: its calls' cost-model cycles (Leaf::cycles) over the longest chain of
/// them through their dependencies inside the iteration; over all parallel iterations,
/// pi = (sum of work) / (sum of critical paths). Filling the C cores the iterations
/// run on (AIC and/or AIV) takes ceil(C / pi) iterations at once; one more is in
/// flight while the oldest drains, as a double-buffered pipe loads the next tile while
/// it finishes this one (a stitch opens only when an earlier one has finished, so
/// without it the cores idle through every tail). So
///   P = ceil(C / pi) + 1,
/// at most kMaxSchedParallelism and the most iterations of one run of a parallel loop,
/// at least kMinSchedParallelism. A program without parallel loops: 1.
int automaticSchedParallelism(const codegen::Program &program,
                              const target::DeviceSpec &device);

} // namespace ptoc::runtime
