// Workspace recycling: pools, places and reuse dependencies (see WorkspaceRecycling.h).
#include "ptoc/runtime/WorkspaceRecycling.h"

#include <algorithm>
#include <vector>

namespace ptoc::runtime {
namespace {

using codegen::GmTensor;
using codegen::Program;

int64_t alignedBytes(const GmTensor &g) {
  int64_t n = static_cast<int64_t>(ir::elementSize(g.dtype));
  for (int64_t d : g.shape) n *= std::max<int64_t>(d, 0);
  return (n + kWorkspaceAlignment - 1) / kWorkspaceAlignment * kWorkspaceAlignment;
}

/// An iteration's calls, and those without a predecessor / successor among them.
struct IterationCalls {
  std::vector<int> calls;
  std::vector<int> sources, sinks;
  bool ends = false; ///< sources and sinks computed
};

void findEnds(const Program &p, int instance, IterationCalls &it) {
  if (it.ends) return;
  it.ends = true;
  std::vector<char> hasSuccessor(it.calls.size(), 0);
  for (size_t i = 0; i < it.calls.size(); ++i) {
    bool source = true;
    for (int pred : p.calls[it.calls[i]].preds) {
      if (p.calls[pred].instance != instance) continue;
      source = false;
      auto at = std::lower_bound(it.calls.begin(), it.calls.end(), pred);
      if (at != it.calls.end() && *at == pred) hasSuccessor[at - it.calls.begin()] = 1;
    }
    if (source) it.sources.push_back(it.calls[i]);
  }
  for (size_t i = 0; i < it.calls.size(); ++i)
    if (!hasSuccessor[i]) it.sinks.push_back(it.calls[i]);
}

/// `later` waits for `earlier`: each sink of one precedes each source of the other.
void addReuseEdges(Program &p, const IterationCalls &earlier, const IterationCalls &later) {
  for (int call : later.sources) {
    std::vector<int> &preds = p.calls[call].preds;
    for (int sink : earlier.sinks) {
      if (sink >= call) continue; // calls of earlier iterations come first
      auto at = std::lower_bound(preds.begin(), preds.end(), sink);
      if (at != preds.end() && *at == sink) continue;
      preds.insert(at, sink);
      p.workspaceReuseEdges.push_back({call, sink});
    }
  }
}

} // namespace

void forgetWorkspaces(Program &program) {
  for (auto [call, pred] : program.workspaceReuseEdges) {
    if (call < 0 || static_cast<size_t>(call) >= program.calls.size()) continue;
    std::vector<int> &preds = program.calls[call].preds;
    auto at = std::lower_bound(preds.begin(), preds.end(), pred);
    if (at != preds.end() && *at == pred) preds.erase(at);
  }
  program.workspaceReuseEdges.clear();
  for (const codegen::Instance &in : program.instances)
    for (int t : in.workspace) {
      program.tensors[t].pool = -1;
      program.tensors[t].poolOffset = 0;
    }
  program.workspacePools = 0;
  program.workspacePoolBytes = 0;
  program.workspaceWraps = 0;
}

void recycleWorkspaces(Program &program, int stitchMaxNum, int parallelism) {
  const size_t n = program.instances.size();
  std::vector<char> hasCalls(n, 0);
  for (const codegen::Call &c : program.calls)
    if (c.instance >= 0 && static_cast<size_t>(c.instance) < n) hasCalls[c.instance] = 1;
  // What each iteration needs; an iteration without calls touches no memory.
  std::vector<int64_t> need(n, 0);
  int64_t largest = 0;
  for (size_t i = 0; i < n; ++i) {
    if (!hasCalls[i]) continue;
    for (int t : program.instances[i].workspace) need[i] += alignedBytes(program.tensors[t]);
    largest = std::max(largest, need[i]);
  }
  if (largest == 0) return; // no iteration has intermediates of its own
  std::vector<IterationCalls> iterations(n);
  for (size_t c = 0; c < program.calls.size(); ++c)
    if (int i = program.calls[c].instance; i >= 0 && static_cast<size_t>(i) < n)
      iterations[i].calls.push_back(static_cast<int>(c));
  const int64_t capacity = largest * std::max(stitchMaxNum, 1);
  const int slots = std::max(parallelism, 1);

  struct Placed {
    int instance;
    int64_t begin, end;
  };
  struct Pool {
    int stitch = -1;
    int64_t next = 0;
    std::vector<Placed> previous, current; ///< the last pass over the pool, and this one
    size_t cursor = 0;                     ///< previous[cursor..] may overlap what is next
    bool used = false;
  };
  std::vector<Pool> pools(slots);
  for (size_t i = 0; i < n; ++i) {
    if (need[i] == 0) continue;
    codegen::Instance &in = program.instances[i];
    const int slot = in.parallelRun >= 0 ? static_cast<int>(in.parallelIteration % slots) : 0;
    Pool &pool = pools[slot];
    pool.used = true;
    const int stitch = program.calls[iterations[i].calls.front()].stitch;
    if (stitch != pool.stitch) { // a new stitch takes the pool from its start
      pool.stitch = stitch;
      pool.next = 0;
      pool.previous.clear();
      pool.current.clear();
      pool.cursor = 0;
    }
    if (pool.next + need[i] > capacity) { // full: start over, over this stitch's first
      pool.previous = std::move(pool.current);
      pool.current.clear();
      pool.cursor = 0;
      pool.next = 0;
      ++program.workspaceWraps;
    }
    const int64_t begin = pool.next, end = begin + need[i];
    while (pool.cursor < pool.previous.size() && pool.previous[pool.cursor].end <= begin)
      ++pool.cursor;
    for (size_t k = pool.cursor; k < pool.previous.size() && pool.previous[k].begin < end; ++k) {
      const int earlier = pool.previous[k].instance;
      findEnds(program, earlier, iterations[earlier]);
      findEnds(program, static_cast<int>(i), iterations[i]);
      addReuseEdges(program, iterations[earlier], iterations[i]);
    }
    pool.current.push_back({static_cast<int>(i), begin, end});
    pool.next = end;
    int64_t at = begin;
    for (int t : in.workspace) {
      program.tensors[t].pool = slot;
      program.tensors[t].poolOffset = at;
      at += alignedBytes(program.tensors[t]);
    }
  }
  program.workspacePoolBytes = capacity;
  for (const Pool &pool : pools) program.workspacePools += pool.used;
}

} // namespace ptoc::runtime
