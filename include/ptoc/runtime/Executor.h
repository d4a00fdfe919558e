// The numeric executor: runs every call of a Program for real on host buffers (Eigen),
// on a host thread pool, in the order a simulated schedule chose.
#pragma once

#include <vector>

#include "absl/status/status.h"
#include "llvm/ADT/ArrayRef.h"
#include "ptoc/codegen/Program.h"
#include "ptoc/runtime/HostTensor.h"
#include "ptoc/runtime/TensorRef.h"

namespace ptoc::runtime {

/// The most host threads a run (or a tuning search) may ask for: far beyond any
/// host's cores, and small enough that a mistyped count cannot start millions of
/// threads. ptoc run --threads, ptoc tune --threads, host_threads and
/// ptoc.tune(threads=) share it.
inline constexpr unsigned kMaxHostThreads = 4096;

struct ExecOptions {
  /// Host threads; 0 = hardware concurrency; at most kMaxHostThreads.
  unsigned threads = 0;
};

/// Executes `program`. `args` are the function's arguments (shapes and dtypes must
/// match the program's; errors name the argument). `results` is resized and filled
/// with one tensor per returned value. `order` is the order to start calls in (e.g.
/// by simulated start time; empty = program order); each call still waits for its
/// predecessors, so any order gives identical results.
absl::Status execute(const codegen::Program &program, llvm::ArrayRef<HostTensor> args,
                     std::vector<HostTensor> &results, llvm::ArrayRef<int> order = {},
                     const ExecOptions &options = {});

/// As execute(), on caller-owned buffers: `args` are read in place and each result
/// is written into `results[i]` (count, dtype and shape checked; errors name the
/// result). A result buffer may alias an argument (an in-place update): such a
/// result is computed aside and copied in after every call has run.
absl::Status executeInto(const codegen::Program &program, llvm::ArrayRef<ConstTensorRef> args,
                         llvm::ArrayRef<TensorRef> results, llvm::ArrayRef<int> order = {},
                         const ExecOptions &options = {});

/// The host memory, in bytes, that executing `program` on `args` allocates for its
/// tensors (saturating at INT64_MAX). `results` null: execute(), which allocates
/// every intermediate tensor and a copy of each result that is not one (an upper
/// bound: an intermediate result moves out without a copy). `results` given:
/// executeInto() on those buffers, which allocates the intermediates that cannot
/// live in a caller's result buffer.
int64_t executionBytes(const codegen::Program &program, llvm::ArrayRef<ConstTensorRef> args,
                       const llvm::ArrayRef<TensorRef> *results);

} // namespace ptoc::runtime
