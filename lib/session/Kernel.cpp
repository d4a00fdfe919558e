// Kernel::runnable: the program a run simulates and executes. A kernel with loops
// instantiates its iterations on first use (the control thread's work happens when the
// kernel runs, so compiling stays independent of the trip counts) and keeps each
// stitch size's (and device_sched_parallelism's) instantiation, and its prepared form,
// for later runs; with dynamic axes, per set of argument sizes (a bounded number of
// them).
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
  /// The kept programs' prepared forms (kernel without loops: its own program's, under
  /// the null key; copies of a kernel share both, and their programs are the same).
  std::map<const codegen::Program *, std::shared_ptr<const runtime::PreparedProgram>> prepared;
  /// The kernel's device as JSON, computed on first use: what a run's device must be
  /// for the kept prepared forms to apply.
  std::string deviceJson;
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
    absl::StatusOr<codegen::Program> p =
        runtime::expandLoops(*loops, device, stitchMaxNum, parallelism, args);
    if (!p.ok()) return p.status();
    return std::make_shared<const codegen::Program>(*std::move(p));
  }
  std::vector<std::vector<int64_t>> sizes; // the key: argument shapes, with dynamic axes
  if (loops->dynamicShapes)
    for (const runtime::ConstTensorRef &a : args) sizes.emplace_back(a.shape.begin(), a.shape.end());
  std::lock_guard<std::mutex> lock(expansions->mutex);
  auto found = expansions->bySizes.find(sizes);
  if (found == expansions->bySizes.end() && expansions->bySizes.size() >= kMaxKeptSizes) {
    absl::StatusOr<codegen::Program> p =
        runtime::expandLoops(*loops, device, stitchMaxNum, parallelism, args);
    if (!p.ok()) return p.status();
    return std::make_shared<const codegen::Program>(*std::move(p));
  }
  Instantiations &inst = expansions->bySizes[sizes];
  const std::pair<int, int> key{stitchMaxNum, parallelism};
  auto it = inst.byStitch.find(key);
  if (it != inst.byStitch.end()) return it->second;
  std::shared_ptr<const codegen::Program> made;
  if (!inst.first) {
    absl::StatusOr<codegen::Program> p =
        runtime::expandLoops(*loops, device, stitchMaxNum, parallelism, args);
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

absl::StatusOr<std::shared_ptr<const runtime::PreparedProgram>> Kernel::prepared(
    const std::shared_ptr<const codegen::Program> &program, const target::DeviceSpec &runDevice,
    llvm::StringRef runDeviceJson) const {
  auto prepare = [&]() -> absl::StatusOr<std::shared_ptr<const runtime::PreparedProgram>> {
    absl::StatusOr<runtime::PreparedProgram> p = runtime::PreparedProgram::prepare(*program, runDevice);
    if (!p.ok()) return p.status();
    return std::make_shared<const runtime::PreparedProgram>(*std::move(p));
  };
  std::unique_lock<std::mutex> lock(expansions->mutex);
  if (expansions->deviceJson.empty()) expansions->deviceJson = device.toJson();
  if (runDeviceJson != expansions->deviceJson) return prepare();
  // Kept only for a program the kernel keeps (a pointer that stays valid and names
  // the same program as long as the kernel lives).
  const codegen::Program *key = nullptr;
  bool kept = !loops && program.get() == &this->program;
  if (!kept)
    for (const auto &[sizes, inst] : expansions->bySizes)
      for (const auto &[stitch, p] : inst.byStitch)
        if (p == program) {
          kept = true;
          key = p.get();
        }
  if (!kept) return prepare();
  auto found = expansions->prepared.find(key);
  if (found != expansions->prepared.end()) return found->second;
  lock.unlock(); // preparing a big program takes a while: other runs may go on
  absl::StatusOr<std::shared_ptr<const runtime::PreparedProgram>> made = prepare();
  if (!made.ok()) return made.status();
  lock.lock();
  return expansions->prepared.emplace(key, *made).first->second;
}

} // namespace ptoc::session
