// Clusters of emitted tile ops and their dependency graph (see FusionClusters.h).
#include "FusionClusters.h"

#include <algorithm>

namespace ptoc::passes {

namespace {
bool isLocalTile(ir::Type t) { return t.isTile() && t.space() != ir::MemSpace::GM; }
} // namespace

uint32_t FusionClusters::find(uint32_t x) {
  while (parent_[x] != x) {
    parent_[x] = parent_[parent_[x]];
    x = parent_[x];
  }
  return x;
}

int64_t FusionClusters::clusterOf(const ir::Value *v) {
  const ir::Operation *def = v ? v->definingOp() : nullptr;
  auto it = def ? node_.find(def) : node_.end();
  return it == node_.end() ? -1 : int64_t(find(it->second));
}

void FusionClusters::raise(uint32_t c, int64_t level) {
  if (level_[c] >= level) return;
  level_[c] = level;
  stack_.clear();
  stack_.push_back(c);
  while (!stack_.empty()) {
    uint32_t x = stack_.back();
    stack_.pop_back();
    for (uint32_t &s : succ_[x]) {
      s = find(s);
      if (s == x || level_[s] > level_[x]) continue;
      // Levels never exceed the number of clusters unless the graph has a cycle
      // (which the fusion checks exist to prevent): stop, and refuse from now on.
      if (level_[x] + 1 > int64_t(parent_.size())) {
        cyclic_ = true;
        continue;
      }
      level_[s] = level_[x] + 1;
      stack_.push_back(s);
    }
  }
}

void FusionClusters::addEdge(uint32_t from, uint32_t to) {
  from = find(from);
  to = find(to);
  if (from == to) return;
  succ_[from].push_back(to);
  raise(to, level_[from] + 1);
}

void FusionClusters::unite(uint32_t a, uint32_t b) {
  a = find(a);
  b = find(b);
  if (a == b) return;
  if (succ_[a].size() < succ_[b].size()) std::swap(a, b);
  parent_[b] = a;
  succ_[a].append(succ_[b].begin(), succ_[b].end());
  succ_[b].clear();
  // Drop edges that became internal, resolve and dedupe the rest.
  llvm::SmallVector<uint32_t, 2> &s = succ_[a];
  for (uint32_t &x : s) x = find(x);
  std::sort(s.begin(), s.end());
  s.erase(std::unique(s.begin(), s.end()), s.end());
  s.erase(std::remove(s.begin(), s.end(), a), s.end());
  int64_t level = std::max(level_[a], level_[b]);
  level_[a] = -1;
  raise(a, level);
}

void FusionClusters::add(const ir::Operation &op) {
  uint32_t self = static_cast<uint32_t>(parent_.size());
  node_[&op] = self;
  parent_.push_back(self);
  level_.push_back(0);
  succ_.emplace_back();
  seen_.push_back(0);
  unsigned firstDep = op.firstDependencyOperand();
  for (unsigned i = 0; i < op.numOperands(); ++i) {
    const ir::Value *v = op.operand(i);
    int64_t c = clusterOf(v);
    if (c < 0) continue;
    if (i >= firstDep) addEdge(uint32_t(c), self);
    else if (isLocalTile(v->type())) unite(uint32_t(c), self);
  }
}

bool FusionClusters::reaches(uint32_t from, uint32_t to) {
  if (cyclic_) return true;
  if (level_[from] >= level_[to]) return false; // levels rise along every edge
  ++stamp_;
  stack_.clear();
  stack_.push_back(from);
  seen_[from] = stamp_;
  size_t visited = 0;
  while (!stack_.empty()) {
    uint32_t x = stack_.back();
    stack_.pop_back();
    if (++visited > kSearchBudget) return true;
    for (uint32_t s : succ_[x]) {
      s = find(s);
      if (s == to) return true;
      if (seen_[s] == stamp_ || level_[s] >= level_[to]) continue;
      seen_[s] = stamp_;
      stack_.push_back(s);
    }
  }
  return false;
}

bool FusionClusters::reachesThroughGm(const ir::Value *from, const ir::Value *to) {
  int64_t cf = clusterOf(from), ct = clusterOf(to);
  if (cf < 0 || ct < 0 || cf == ct) return false;
  return reaches(uint32_t(cf), uint32_t(ct));
}

bool FusionClusters::waitWouldCycle(const ir::Value *tile,
                                    llvm::ArrayRef<const ir::Operation *> deps) {
  int64_t ct = clusterOf(tile);
  if (ct < 0) return false;
  for (const ir::Operation *d : deps) {
    auto it = node_.find(d);
    if (it == node_.end()) continue;
    uint32_t cd = find(it->second);
    if (cd != uint32_t(ct) && reaches(uint32_t(ct), cd)) return true;
  }
  return false;
}

} // namespace ptoc::passes
