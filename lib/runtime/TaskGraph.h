// Running a DAG of tasks on host worker threads: a task starts once all its
// predecessors finished, ready tasks start in a given priority order, and the first
// error stops new starts. Internal to lib/runtime (the executor's scheduler).
#pragma once

#include <vector>

#include "absl/status/status.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"

namespace ptoc::runtime::exec {

/// Runs tasks 0..n-1 (n = successors.size()). `predCounts[t]` is how many tasks
/// list t as a successor; `order` is a permutation of 0..n-1 giving each task's start
/// priority (earlier = sooner, among ready tasks). `workers` threads run tasks (the
/// calling thread is one of them; 1 = everything on the caller). `run(task, worker)`
/// gets a worker index < workers, so per-worker state needs no locking. Returns the
/// first error a task returned (or threw), or an internal error if tasks remain that
/// can never become ready (a cycle).
absl::Status runTaskGraph(const std::vector<std::vector<int>> &successors,
                          std::vector<int> predCounts, llvm::ArrayRef<int> order,
                          unsigned workers,
                          llvm::function_ref<absl::Status(int task, unsigned worker)> run);

} // namespace ptoc::runtime::exec
