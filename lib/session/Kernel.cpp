// Kernel::runnable: the program a run simulates and executes. A kernel with loops
// instantiates its iterations on first use (the control thread's work happens when the
// kernel runs, so compiling stays independent of the trip counts) and keeps each
// stitch size's instantiation for later runs.
#include <map>
#include <mutex>

#include "ptoc/runtime/ExpandLoops.h"
#include "ptoc/session/Session.h"

namespace ptoc::session {

struct Kernel::Expansions {
  std::mutex mutex;
  std::shared_ptr<const codegen::Program> first; ///< the first instantiation
  std::map<int, std::shared_ptr<const codegen::Program>> byStitch;
};

std::shared_ptr<Kernel::Expansions> Kernel::newExpansions() { return std::make_shared<Expansions>(); }

absl::StatusOr<std::shared_ptr<const codegen::Program>> Kernel::runnable(
    int stitchMaxNum, llvm::ArrayRef<runtime::ConstTensorRef> args) const {
  if (!loops) // no copy: the kernel outlives its runs
    return std::shared_ptr<const codegen::Program>(std::shared_ptr<void>(), &program);
  if (loops->readsTensors) { // the iterations depend on this call's inputs
    absl::StatusOr<codegen::Program> p = runtime::expandLoops(*loops, device, stitchMaxNum, args);
    if (!p.ok()) return p.status();
    return std::make_shared<const codegen::Program>(*std::move(p));
  }
  std::lock_guard<std::mutex> lock(expansions->mutex);
  auto it = expansions->byStitch.find(stitchMaxNum);
  if (it != expansions->byStitch.end()) return it->second;
  std::shared_ptr<const codegen::Program> made;
  if (!expansions->first) {
    absl::StatusOr<codegen::Program> p = runtime::expandLoops(*loops, device, stitchMaxNum);
    if (!p.ok()) return p.status();
    made = std::make_shared<const codegen::Program>(*std::move(p));
    expansions->first = made;
  } else { // the same iterations, grouped into other stitches
    auto p = std::make_shared<codegen::Program>(*expansions->first);
    if (absl::Status s = runtime::assignStitches(*p, device, stitchMaxNum); !s.ok()) return s;
    made = std::move(p);
  }
  expansions->byStitch[stitchMaxNum] = made;
  return made;
}

} // namespace ptoc::session
