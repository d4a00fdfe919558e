// Kernel::runnable: the program a run simulates and executes. A kernel with loops
// instantiates its iterations on first use (the control thread's work happens when the
// kernel runs, so compiling stays independent of the trip counts) and keeps each
// stitch size's (and device_sched_parallelism's) instantiation for later runs; with dynamic axes, per set of argument
// sizes (a bounded number of them).
#include <map>
#include <mutex>

#include "ptoc/runtime/ExpandLoops.h"
#include "ptoc/session/Session.h"

namespace ptoc::session {

/// The instantiations for one set of argument sizes (one, without dynamic axes).
struct Instantiations {
  std::shared_ptr<const codegen::Program> first; ///< the first instantiation
  /// By stitch size and device_sched_parallelism (both shape the stitches).
  std::map<std::pair<int, int>, std::shared_ptr<const codegen::Program>> byStitch;
};

struct Kernel::Expansions {
  std::mutex mutex;
  /// By the arguments' shapes (empty key without dynamic axes).
  std::map<std::vector<std::vector<int64_t>>, Instantiations> bySizes;
};

/// At most this many sets of argument sizes keep their instantiations; beyond it,
/// each call with new sizes instantiates its iterations anew without keeping them
/// (memory stays bounded when sizes vary call after call).
static constexpr size_t kMaxKeptSizes = 16;

std::shared_ptr<Kernel::Expansions> Kernel::newExpansions() { return std::make_shared<Expansions>(); }

absl::StatusOr<std::shared_ptr<const codegen::Program>> Kernel::runnable(
    int stitchMaxNum, int parallelism, llvm::ArrayRef<runtime::ConstTensorRef> args) const {
  if (!loops) // no copy: the kernel outlives its runs
    return std::shared_ptr<const codegen::Program>(std::shared_ptr<void>(), &program);
  if (loops->readsTensors) { // the iterations depend on this call's inputs
    absl::StatusOr<codegen::Program> p = runtime::expandLoops(*loops, device, stitchMaxNum, parallelism, args);
    if (!p.ok()) return p.status();
    return std::make_shared<const codegen::Program>(*std::move(p));
  }
  std::vector<std::vector<int64_t>> sizes; // the key: argument shapes, with dynamic axes
  if (loops->dynamicShapes)
    for (const runtime::ConstTensorRef &a : args) sizes.emplace_back(a.shape.begin(), a.shape.end());
  std::lock_guard<std::mutex> lock(expansions->mutex);
  auto found = expansions->bySizes.find(sizes);
  if (found == expansions->bySizes.end() && expansions->bySizes.size() >= kMaxKeptSizes) {
    absl::StatusOr<codegen::Program> p = runtime::expandLoops(*loops, device, stitchMaxNum, parallelism, args);
    if (!p.ok()) return p.status();
    return std::make_shared<const codegen::Program>(*std::move(p));
  }
  Instantiations &inst = expansions->bySizes[sizes];
  const std::pair<int, int> key{stitchMaxNum, parallelism};
  auto it = inst.byStitch.find(key);
  if (it != inst.byStitch.end()) return it->second;
  std::shared_ptr<const codegen::Program> made;
  if (!inst.first) {
    absl::StatusOr<codegen::Program> p = runtime::expandLoops(*loops, device, stitchMaxNum, parallelism, args);
    if (!p.ok()) {
      expansions->bySizes.erase(sizes);
      return p.status();
    }
    made = std::make_shared<const codegen::Program>(*std::move(p));
    inst.first = made;
  } else { // the same iterations, grouped into other stitches
    auto p = std::make_shared<codegen::Program>(*inst.first);
    if (absl::Status s = runtime::assignStitches(*p, device, stitchMaxNum, parallelism);
        !s.ok()) return s;
    made = std::move(p);
  }
  inst.byStitch[key] = made;
  return made;
}

} // namespace ptoc::session
