// CandidateCompiler: one compile per distinct candidate, a size-bounded LRU of programs.
#include "ptoc/tune/CandidateCompiler.h"

#include <optional>

#include "absl/strings/str_cat.h"
#include "llvm/Support/ThreadPool.h"

namespace ptoc::tune {
namespace {

/// What decides a candidate's kernel: the pipeline its knobs configure and the
/// function text with its tile shapes.
std::string compileKey(const TunedConfig &config) {
  std::string key = config.knobs.pipeline();
  key += '\n';
  key += config.moduleText;
  return key;
}

/// What decides a candidate's program: its kernel and device_sched_parallelism (which
/// shapes the stitches of a parallel loop).
std::string programKey(const std::string &compileKey, int parallelism) {
  return absl::StrCat("parallelism ", parallelism, "\n", compileKey);
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
    keys[i] = programKey(kernelKey, parallelismOf(*batch[i]));
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
  std::vector<PrepareCandidate> kernels(kernelWork.size());
  for (size_t k = 0; k < kernelWork.size(); ++k)
    pool.async([&, k] { kernels[k] = compile_(*batch[kernelWork[k]]); });
  pool.wait();
  std::vector<CompiledCandidate> compiled(work.size());
  for (size_t w = 0; w < work.size(); ++w)
    pool.async([&, w] {
      const TunedConfig &config = *batch[work[w]];
      compiled[w] = std::make_shared<const absl::StatusOr<runtime::PreparedProgram>>(
          kernels[kernelOf[w]](parallelismOf(config)));
    });
  pool.wait();
  compiles_ += kernelWork.size();
  for (size_t w = 0; w < work.size(); ++w) insert(keys[work[w]], compiled[w]);
  for (size_t i = 0; i < batch.size(); ++i)
    if (waitsFor[i]) out[i] = compiled[*waitsFor[i]];
  return out;
}

} // namespace ptoc::tune
