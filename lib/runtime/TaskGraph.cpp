// Dependency-counting task runner on std::thread workers with a priority ready queue.
#include "TaskGraph.h"

#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <new>
#include <queue>
#include <system_error>
#include <thread>

#include "absl/strings/str_cat.h"
#include "ptoc/ir/Diagnostics.h"

namespace ptoc::runtime::exec {
namespace {

class Runner {
public:
  Runner(const std::vector<std::vector<int>> &successors, std::vector<int> predCounts,
         llvm::ArrayRef<int> order, llvm::function_ref<absl::Status(int, unsigned)> run)
      : successors_(successors), remaining_(std::move(predCounts)), order_(order), run_(run),
        rank_(order.size()) {
    for (size_t r = 0; r < order.size(); ++r) rank_[order[r]] = int(r);
    for (size_t t = 0; t < remaining_.size(); ++t)
      if (remaining_[t] == 0) ready_.push(rank_[t]);
  }

  void work(unsigned worker) {
    std::unique_lock<std::mutex> lock(mutex_);
    while (true) {
      wake_.wait(lock, [&] { return failed_ || finished_ == total() || !ready_.empty() ||
                                    running_ == 0; });
      if (failed_ || finished_ == total()) return;
      if (ready_.empty()) {
        // Nothing runs and nothing is ready, yet tasks remain: they wait on a cycle.
        fail(ir::internalError(absl::StrCat("execute graph: ", total() - finished_,
                                            " calls can never start (a dependency cycle)")));
        return;
      }
      int task = order_[ready_.top()];
      ready_.pop();
      ++running_;
      lock.unlock();
      absl::Status status = guardedRun(task, worker);
      lock.lock();
      --running_;
      if (!status.ok()) {
        fail(std::move(status));
        return;
      }
      ++finished_;
      int readied = 0;
      for (int s : successors_[task])
        if (--remaining_[s] == 0) {
          ready_.push(rank_[s]);
          ++readied;
        }
      if (finished_ == total() || running_ == 0) wake_.notify_all();
      else
        // This worker takes one of the readied tasks itself.
        for (int i = 1; i < readied; ++i) wake_.notify_one();
    }
  }

  absl::Status result() const { return error_; }

private:
  size_t total() const { return remaining_.size(); }

  void fail(absl::Status s) {
    if (!failed_) error_ = std::move(s);
    failed_ = true;
    wake_.notify_all();
  }

  absl::Status guardedRun(int task, unsigned worker) {
    try {
      return run_(task, worker);
    } catch (const std::bad_alloc &) {
      // The host's memory, not a bug: the caller's message names what did not fit.
      return absl::ResourceExhaustedError(absl::StrCat(
          "call ", task, " ran out of host memory: raise the memory limit, or simulate only "
          "(run_numerics=False, ptoc run --no-numerics)"));
    } catch (const std::exception &e) {
      return ir::internalError(absl::StrCat("call ", task, " threw: ", e.what()));
    } catch (...) {
      return ir::internalError(absl::StrCat("call ", task, " threw an unknown exception"));
    }
  }

  const std::vector<std::vector<int>> &successors_;
  std::vector<int> remaining_;
  llvm::ArrayRef<int> order_;
  llvm::function_ref<absl::Status(int, unsigned)> run_;
  std::vector<int> rank_;

  std::mutex mutex_;
  std::condition_variable wake_;
  /// Ranks (positions in order_) of ready tasks; smallest first.
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready_;
  size_t finished_ = 0;
  int running_ = 0;
  bool failed_ = false;
  absl::Status error_;
};

} // namespace

absl::Status runTaskGraph(const std::vector<std::vector<int>> &successors,
                          std::vector<int> predCounts, llvm::ArrayRef<int> order,
                          unsigned workers,
                          llvm::function_ref<absl::Status(int task, unsigned worker)> run) {
  if (successors.empty()) return absl::OkStatus();
  Runner runner(successors, std::move(predCounts), order, run);
  std::vector<std::thread> threads;
  for (unsigned w = 1; w < workers; ++w) {
    try {
      threads.emplace_back([&runner, w] { runner.work(w); });
    } catch (const std::system_error &) {
      break; // fewer threads than asked for still run everything
    }
  }
  runner.work(0);
  for (std::thread &t : threads) t.join();
  return runner.result();
}

} // namespace ptoc::runtime::exec
