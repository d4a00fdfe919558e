// CandidateCompiler: one compile per distinct candidate, a size-bounded LRU of programs.
#include "CandidateCompiler.h"

#include <optional>

#include "absl/strings/str_cat.h"
#include "llvm/Support/ThreadPool.h"
#include "ptoc/session/Session.h"
#include "ptoc/session/Tuner.h"

namespace ptoc::session {
namespace {

/// The name compile errors of candidates carry (the text is the rewritten function,
/// whose ops keep the user's locations when it was given with them).
constexpr const char *kCandidateFileName = "<tune candidate>";

/// What decides a candidate's kernel: the pipeline its knobs configure and the
/// function text with its tile shapes.
std::string compileKey(const TunedConfig &config) {
  std::string key = config.knobs.pipeline();
  key += '\n';
  key += config.moduleText;
  return key;
}

/// The iterations of a parallel loop in flight the config runs with.
int parallelismOf(const TunedConfig &config, const CandidateInputs &inputs) {
  return config.schedParallelism.value_or(inputs.schedParallelism);
}

/// What decides a candidate's program: its kernel and device_sched_parallelism (which
/// shapes the stitches of a parallel loop).
std::string programKey(const std::string &compileKey, int parallelism) {
  return absl::StrCat("parallelism ", parallelism, "\n", compileKey);
}

using CompiledKernel = std::shared_ptr<const absl::StatusOr<Kernel>>;

CompiledKernel compileKernel(const Session &session, const TunedConfig &config) {
  CompileOptions compile;
  compile.knobs = config.knobs;
  // Codegen still verifies the partitioned function it is given; per-pass
  // verification, IR text and statistics only slow the search down.
  compile.verifyEach = false;
  compile.keepIr = false;
  compile.collectStats = false;
  return std::make_shared<const absl::StatusOr<Kernel>>(
      session.compileText(config.moduleText, kCandidateFileName, compile));
}

/// `compiled` instantiated with `inputs` and `parallelism`, prepared for simulation.
absl::StatusOr<runtime::PreparedProgram> prepareCandidate(const Session &session,
                                                          const absl::StatusOr<Kernel> &compiled,
                                                          const CandidateInputs &inputs,
                                                          int parallelism) {
  if (!compiled.ok()) return compiled.status();
  const Kernel *kernel = &*compiled;
  // A kernel whose loops read values of its inputs is instantiated with the call's
  // data; one with dynamic axes for the sizes being tuned.
  const std::vector<std::vector<int64_t>> &argShapes = inputs.argShapes;
  bool readsTensors = kernel->loops && kernel->loops->readsTensors;
  if (readsTensors && (inputs.argData.size() != kernel->args.size() ||
                       argShapes.size() != kernel->args.size()))
    return absl::InvalidArgumentError(absl::StrCat(
        "kernel '", kernel->funcName, "' has loops that read values of its inputs (t[i, j] "
        "in a bound or an offset), so its iterations depend on them: give the tuner its ",
        kernel->args.size(), " arguments with their data (TuneOptions::argShapes and argData; "
        "ptoc.tune passes the call's), the inputs to tune for"));
  std::vector<runtime::ConstTensorRef> args;
  if (readsTensors || (kernel->loops && kernel->loops->dynamicShapes)) {
    if (argShapes.size() != kernel->args.size())
      return absl::InvalidArgumentError(absl::StrCat(
          "kernel '", kernel->funcName, "' has dynamic axes: give the tuner the shapes of its ",
          kernel->args.size(), " arguments (TuneOptions::argShapes; ptoc.tune passes the "
          "call's), the sizes to tune for"));
    for (size_t i = 0; i < argShapes.size(); ++i)
      args.emplace_back(kernel->args[i].dtype, argShapes[i],
                        readsTensors ? inputs.argData[i] : nullptr);
  }
  absl::StatusOr<std::shared_ptr<const codegen::Program>> program = kernel->runnable(
      static_cast<int>(inputs.stitchMaxNum), parallelism, args);
  if (!program.ok()) return program.status();
  return runtime::PreparedProgram::prepare(**program, session.device());
}

} // namespace

CompiledCandidate CandidateCompiler::lookup(const std::string &key) {
  auto it = index_.find(key);
  if (it == index_.end()) return nullptr;
  lru_.splice(lru_.begin(), lru_, it->second);
  return it->second->compiled;
}

void CandidateCompiler::insert(std::string key, CompiledCandidate compiled) {
  uint64_t bytes = key.size() + (compiled->ok() ? (*compiled)->approxBytes() : 0);
  if (bytes > capacityBytes_) return;
  while (!lru_.empty() && cachedBytes_ + bytes > capacityBytes_) {
    cachedBytes_ -= lru_.back().bytes;
    index_.erase(lru_.back().key);
    lru_.pop_back();
  }
  lru_.push_front(Entry{key, std::move(compiled), bytes});
  index_.emplace(std::move(key), lru_.begin());
  cachedBytes_ += bytes;
}

std::vector<CompiledCandidate>
CandidateCompiler::compileBatch(llvm::ArrayRef<const TunedConfig *> batch, llvm::ThreadPool &pool) {
  std::vector<CompiledCandidate> out(batch.size());
  // The distinct program keys not cached, each with the first config that needs it,
  // and the distinct kernels they need.
  std::vector<std::string> keys(batch.size());
  std::unordered_map<std::string, size_t> missing; // program key -> index into `work`
  std::vector<size_t> work;                         // batch index prepared for each key
  std::vector<size_t> kernelOf;                     // work index -> index into `kernels`
  std::unordered_map<std::string, size_t> kernelIndex; // compile key -> index into `kernels`
  std::vector<size_t> kernelWork;                   // batch index compiled for each kernel
  std::vector<std::optional<size_t>> waitsFor(batch.size());
  for (size_t i = 0; i < batch.size(); ++i) {
    if (!batch[i]) continue;
    std::string kernelKey = compileKey(*batch[i]);
    keys[i] = programKey(kernelKey, parallelismOf(*batch[i], inputs_));
    if ((out[i] = lookup(keys[i]))) continue;
    auto [it, inserted] = missing.try_emplace(keys[i], work.size());
    if (inserted) {
      work.push_back(i);
      auto [k, newKernel] = kernelIndex.try_emplace(std::move(kernelKey), kernelWork.size());
      if (newKernel) kernelWork.push_back(i);
      kernelOf.push_back(k->second);
    }
    waitsFor[i] = it->second;
  }
  std::vector<CompiledKernel> kernels(kernelWork.size());
  for (size_t k = 0; k < kernelWork.size(); ++k)
    pool.async([&, k] { kernels[k] = compileKernel(session_, *batch[kernelWork[k]]); });
  pool.wait();
  std::vector<CompiledCandidate> compiled(work.size());
  for (size_t w = 0; w < work.size(); ++w)
    pool.async([&, w] {
      const TunedConfig &config = *batch[work[w]];
      compiled[w] = std::make_shared<const absl::StatusOr<runtime::PreparedProgram>>(
          prepareCandidate(session_, *kernels[kernelOf[w]], inputs_,
                           parallelismOf(config, inputs_)));
    });
  pool.wait();
  compiles_ += kernelWork.size();
  for (size_t w = 0; w < work.size(); ++w) insert(keys[work[w]], compiled[w]);
  for (size_t i = 0; i < batch.size(); ++i)
    if (waitsFor[i]) out[i] = compiled[*waitsFor[i]];
  return out;
}

} // namespace ptoc::session
