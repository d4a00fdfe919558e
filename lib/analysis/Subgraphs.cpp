// The subgraph structure shared by partition and the merge passes: structural
// hashes, the subgraph DAG with an incrementally maintained topological order
// (cheap cycle checks) and the `subgraph` table.
#include "ptoc/analysis/Subgraphs.h"

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <string>

#include "llvm/ADT/DenseMap.h"

#include "ptoc/ir/Context.h"
#include "ptoc/ir/Module.h"
#include "ptoc/ir/StableHash.h"
#include "ptoc/target/DeviceSpec.h"

namespace ptoc::analysis {

using ir::Operation;

std::string hashOrderKey(unsigned funcIndex, int64_t hashOrder) {
  return "func" + std::to_string(funcIndex) + "_" + std::to_string(hashOrder);
}

// ---------------------------------------------------------------- structural hash

namespace {
// The hash, given how to find an op's index in `ops` (-1 when not in it). Each op
// gets a signature covering what it computes and, recursively, the signatures of
// its operands' definers inside the set (a Merkle hash of its upstream cone); the
// set hashes as the sorted multiset of signatures. So the hash does not depend on
// the order the ops appear in (isomorphic subgraphs whose tiles were emitted in
// another interleaving hash equally), and the counts tell one shared op from two
// identical ones.
template <typename LocalIndex>
uint64_t hashOps(llvm::ArrayRef<Operation *> ops, LocalIndex localIndex) {
  llvm::SmallVector<uint64_t, 16> sigs(ops.size());
  for (size_t k = 0; k < ops.size(); ++k) {
    const Operation *op = ops[k];
    uint64_t h = ir::hashMix(0x9b1ceULL, static_cast<uint64_t>(op->code()) + 1);
    for (const ir::NamedAttr &a : op->attrs()) {
      llvm::StringRef name = a.name.str();
      // Offsets say which tile, `sg`/`sg_scope` where it is grouped: not what it
      // computes.
      if (name == "offsets" || name == "sg" || name == "sg_scope") continue;
      h = ir::hashMix(h, ir::hashBytes(name));
      h = ir::hashMix(h, a.value.contentHash());
    }
    for (const ir::Value &r : op->results()) h = ir::hashMix(h, r.type().contentHash());
    // A copy's dependency operands vary with what else touched its region: the
    // data operands count, and (for all but copy_in, whose count was never mixed
    // in) their number is part of the hash.
    bool isCopyIn = op->code() == ir::OpCode::CopyIn;
    if (!isCopyIn) h = ir::hashMix(h, op->firstDependencyOperand());
    for (unsigned i = 0; i < op->numOperands(); ++i) {
      const ir::Value *v = op->operand(i);
      int64_t local = localIndex(v->definingOp());
      // Definers come first in body order; a later one (a use before its
      // definition, which the verifier rejects) counts as external.
      if (local >= 0 && size_t(local) < k) {
        h = ir::hashMix(h, sigs[local]);
        h = ir::hashMix(h, v->index());
      } else if (op->isDependencyOperand(i)) {
        continue; // an access by another subgraph orders tasks; it is not code
      } else {
        h = ir::hashMix(h, 0x2);
        h = ir::hashMix(h, v->type().contentHash());
      }
    }
    sigs[k] = h;
  }
  std::sort(sigs.begin(), sigs.end());
  uint64_t h = ir::hashMix(0x5ab9a9b5ULL, ops.size());
  for (uint64_t sig : sigs) h = ir::hashMix(h, sig);
  return h;
}
} // namespace

uint64_t structuralHash(llvm::ArrayRef<Operation *> ops) {
  llvm::SmallDenseMap<const Operation *, int64_t, 32> index;
  for (size_t i = 0; i < ops.size(); ++i) index.try_emplace(ops[i], int64_t(i));
  return hashOps(ops, [&](const Operation *def) -> int64_t {
    auto it = def ? index.find(def) : index.end();
    return it == index.end() ? -1 : it->second;
  });
}

// Inside a graph, ops carry their body position in walkMark and each subgraph's
// ops are sorted by it: a binary search finds a definer without a side table.
uint64_t SubgraphGraph::hashSubgraph(const Subgraph &s) const {
  llvm::ArrayRef<Operation *> ops = s.ops;
  return hashOps(ops, [&](const Operation *def) -> int64_t {
    if (!def) return -1;
    auto it = std::lower_bound(ops.begin(), ops.end(), def->walkMark,
                               [](const Operation *o, uint64_t m) { return o->walkMark < m; });
    return it != ops.end() && *it == def ? it - ops.begin() : -1;
  });
}

// ---------------------------------------------------------------- construction

SubgraphGraph SubgraphGraph::fromFunc(ir::Func &f, const CostModel &cost) {
  std::vector<Subgraph> subgraphs;
  std::vector<int64_t> attrIds; // the `sg` its ops carry now
  llvm::DenseMap<int64_t, int64_t> denseId;
  // Attribute keys compared as interned identifiers, not as strings.
  ir::Identifier sgKey = f.context().sgKey(), scopeKey = f.context().id("sg_scope");
  for (Operation &op : f.ops()) {
    if (!op.isTileOp()) continue;
    // The subgraph id is the op's field; only bad input leaves an `sg` (negative
    // or not an Int) in the dictionary.
    int64_t sgId = op.subgraphId();
    bool hasSg = sgId >= 0;
    ir::Attribute scope;
    for (const ir::NamedAttr &a : op.attrs()) {
      if (a.name == scopeKey) scope = a.value;
      else if (!hasSg && a.name == sgKey && a.value.isInt()) {
        sgId = a.value.getInt();
        hasSg = true;
      }
    }
    int64_t id;
    if (hasSg) {
      auto [it, inserted] = denseId.try_emplace(sgId, int64_t(subgraphs.size()));
      if (inserted) {
        subgraphs.emplace_back();
        attrIds.push_back(sgId);
      }
      id = it->second;
    } else {
      id = static_cast<int64_t>(subgraphs.size());
      subgraphs.emplace_back();
      attrIds.push_back(-1);
    }
    Subgraph &s = subgraphs[id];
    s.ops.push_back(&op);
    if (s.scope == -1 && scope && scope.isInt()) s.scope = scope.getInt();
  }
  SubgraphGraph g = fromSubgraphs(f, cost, std::move(subgraphs));
  g.attrId_ = std::move(attrIds);
  return g;
}

SubgraphGraph SubgraphGraph::fromSubgraphs(ir::Func &f, const CostModel &cost,
                                           std::vector<Subgraph> subgraphs) {
  SubgraphGraph g;
  g.func_ = &f;
  g.cost_ = &cost;
  g.subgraphs_ = std::move(subgraphs);
  g.build();
  return g;
}

// Puts every subgraph's ops in body order, sets its core, and computes the edges
// and levels. Everything becomes dirty (summarise() computes hashes and costs).
// Leaves each op's body position in its walkMark (posBase_ + 1 + position).
void SubgraphGraph::resetMergeScratch(size_t n) {
  mergeEpoch_ = 1;
  producersEpoch_.assign(n, mergeEpoch_);
  consumersEpoch_.assign(n, mergeEpoch_);
  parent_.resize(n);
  std::iota(parent_.begin(), parent_.end(), int64_t(0));
  visited_.assign(n, 0);
  visitStamp_ = 0;
}

void SubgraphGraph::build() {
  size_t n = subgraphs_.size();
  ir::Func &f = *func_;
  // First each op's mark names its subgraph; the walk below replaces it with the
  // op's position and remembers the subgraph by position (definers come first).
  uint64_t idBase = f.reserveWalkMarks(n);
  for (size_t id = 0; id < n; ++id)
    for (Operation *op : subgraphs_[id].ops) op->walkMark = idBase + 1 + id;
  posBase_ = f.reserveWalkMarks(f.numOps());
  std::vector<int32_t> idAtPos(f.numOps(), -1);
  auto sgOf = [&](const Operation *op) -> int64_t {
    if (!op) return -1;
    uint64_t m = op->walkMark;
    if (m > posBase_ && m <= posBase_ + idAtPos.size()) return idAtPos[m - posBase_ - 1];
    if (m > idBase && m <= idBase + n) return static_cast<int64_t>(m - idBase - 1);
    return -1;
  };

  producers_.assign(n, {});
  consumers_.assign(n, {});
  for (Subgraph &s : subgraphs_) s.ops.clear();
  idsInBodyOrder_ = true;
  int64_t lastNew = -1;
  size_t pos = 0;
  for (Operation &op : f.ops()) {
    int64_t id = sgOf(&op);
    idAtPos[pos] = static_cast<int32_t>(id);
    op.walkMark = posBase_ + 1 + pos++;
    if (id < 0) continue;
    if (subgraphs_[id].ops.empty()) {
      idsInBodyOrder_ &= id > lastNew;
      lastNew = id;
    }
    subgraphs_[id].ops.push_back(&op);
    for (const ir::OpOperand &o : op.opOperands()) {
      int64_t p = sgOf(o.get()->definingOp());
      if (p < 0 || p == id) continue;
      producers_[id].push_back(p);
      consumers_[p].push_back(id);
    }
  }
  auto sortUnique = [](std::vector<int64_t> &v) {
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
  };
  live_ = 0;
  for (size_t id = 0; id < n; ++id) {
    sortUnique(producers_[id]);
    sortUnique(consumers_[id]);
    Subgraph &s = subgraphs_[id];
    s.id = static_cast<int64_t>(id);
    if (s.ops.empty()) continue;
    ++live_;
    s.core = s.ops.front()->coreKind();
  }
  resetMergeScratch(n);
  dirty_.assign(n, 1);
  attrId_.assign(n, -1);
  groups_.clear();

  // Kahn's algorithm: level = 1 + the highest level among the producers.
  level_.assign(n, 0);
  std::vector<int64_t> indegree(n, 0), queue;
  queue.reserve(live_);
  for (size_t id = 0; id < n; ++id) {
    indegree[id] = static_cast<int64_t>(producers_[id].size());
    if (!subgraphs_[id].ops.empty() && indegree[id] == 0) queue.push_back(int64_t(id));
  }
  for (size_t head = 0; head < queue.size(); ++head) {
    int64_t id = queue[head];
    for (int64_t c : consumers_[id]) {
      level_[c] = std::max(level_[c], level_[id] + 1);
      if (--indegree[c] == 0) queue.push_back(c);
    }
  }
  cycleMember_ = -1;
  if (queue.size() < live_) {
    // Every unvisited subgraph has an unvisited producer; walking producers must
    // come back to a subgraph already seen, which is on a cycle.
    int64_t x = -1;
    for (size_t id = 0; id < n && x < 0; ++id)
      if (!subgraphs_[id].ops.empty() && indegree[id] > 0) x = int64_t(id);
    std::vector<uint8_t> seen(n, 0);
    while (!seen[x]) {
      seen[x] = 1;
      for (int64_t p : producers_[x])
        if (indegree[p] > 0) {
          x = p;
          break;
        }
    }
    cycleMember_ = x;
  }
}

// ---------------------------------------------------------------- queries

std::vector<Subgraph *> SubgraphGraph::subgraphs() {
  std::vector<Subgraph *> out;
  out.reserve(live_);
  for (Subgraph &s : subgraphs_)
    if (!s.ops.empty()) out.push_back(&s);
  return out;
}

Subgraph *SubgraphGraph::find(int64_t id) {
  return const_cast<Subgraph *>(static_cast<const SubgraphGraph *>(this)->find(id));
}

const Subgraph *SubgraphGraph::find(int64_t id) const {
  if (id < 0 || id >= static_cast<int64_t>(subgraphs_.size())) return nullptr;
  const Subgraph &s = subgraphs_[id];
  return s.ops.empty() || parent_[id] != id ? nullptr : &s;
}

int64_t SubgraphGraph::findRoot(int64_t id) const {
  int64_t root = id;
  while (parent_[root] != root) root = parent_[root];
  while (parent_[id] != root) {
    int64_t next = parent_[id];
    parent_[id] = root;
    id = next;
  }
  return root;
}

int64_t SubgraphGraph::resolve(int64_t id) const {
  if (id < 0 || id >= static_cast<int64_t>(subgraphs_.size())) return -1;
  return findRoot(id);
}

llvm::ArrayRef<int64_t> SubgraphGraph::compacted(std::vector<int64_t> &list, uint64_t &epoch,
                                                 int64_t self) const {
  if (epoch == mergeEpoch_) return list;
  epoch = mergeEpoch_;
  if (++visitStamp_ == 0) {
    std::fill(visited_.begin(), visited_.end(), 0);
    visitStamp_ = 1;
  }
  size_t out = 0;
  for (int64_t e : list) {
    int64_t r = findRoot(e);
    if (r == self || visited_[r] == visitStamp_) continue;
    visited_[r] = visitStamp_;
    list[out++] = r;
  }
  list.resize(out);
  std::sort(list.begin(), list.end());
  return list;
}

llvm::ArrayRef<int64_t> SubgraphGraph::producers(int64_t id) const {
  if (!find(id)) return {};
  return compacted(producers_[id], producersEpoch_[id], id);
}

llvm::ArrayRef<int64_t> SubgraphGraph::consumers(int64_t id) const {
  if (!find(id)) return {};
  return compacted(consumers_[id], consumersEpoch_[id], id);
}

bool SubgraphGraph::reachesThroughOther(int64_t from, int64_t target) const {
  lastCheckGaveUp_ = false;
  int64_t limit = level_[target];
  size_t budget = kCycleSearchBudget;
  if (++visitStamp_ == 0) {
    std::fill(visited_.begin(), visited_.end(), 0);
    visitStamp_ = 1;
  }
  std::vector<int64_t> stack{from};
  visited_[from] = visitStamp_;
  while (!stack.empty()) {
    int64_t x = stack.back();
    stack.pop_back();
    if (budget-- == 0) {
      // Far apart in the DAG: proving there is no path would cost too much. Say
      // there may be one; refusing a merge is always safe.
      lastCheckGaveUp_ = true;
      return true;
    }
    // Raw lists (stale ids resolved on the fly): compacting a hub's list on every
    // search would cost its whole degree each time.
    for (int64_t e : consumers_[x]) {
      int64_t y = findRoot(e);
      if (y == x) continue;
      if (y == target) {
        if (x != from) return true;
        continue;
      }
      // A subgraph at or above target's level cannot reach it.
      if (level_[y] >= limit || visited_[y] == visitStamp_) continue;
      visited_[y] = visitStamp_;
      stack.push_back(y);
    }
  }
  return false;
}

bool SubgraphGraph::mergeCreatesCycle(int64_t a, int64_t b) const {
  lastCheckGaveUp_ = false;
  if (a == b || !find(a) || !find(b)) return false;
  if (cycleMember_ >= 0) return true;
  // Any path strictly raises the level: subgraphs of one level are unrelated.
  if (level_[a] == level_[b]) return false;
  int64_t lo = level_[a] < level_[b] ? a : b, hi = lo == a ? b : a;
  return reachesThroughOther(lo, hi);
}

// ---------------------------------------------------------------- merging

bool SubgraphGraph::merge(int64_t into, int64_t from) {
  lastCheckGaveUp_ = false;
  if (into == from || !find(into) || !find(from) || cycleMember_ >= 0) return false;
  if (mergeCreatesCycle(into, from)) return false;
  int64_t level = std::max(level_[into], level_[from]);
  // Only the consumers of the lower side can end up at or below the merged level;
  // note them before the lists are combined (a hub's list can be long).
  std::vector<int64_t> raise;
  if (level_[into] != level_[from]) {
    int64_t low = level_[into] < level_[from] ? into : from;
    for (int64_t e : consumers_[low]) {
      int64_t y = findRoot(e);
      if (y != into && y != from && level_[y] <= level) raise.push_back(y);
    }
  }

  Subgraph &dst = subgraphs_[into], &src = subgraphs_[from];
  // Small into large: the vectors' contents belong to the merged set, whichever
  // id keeps them.
  auto absorb = [](auto &keep, auto &gone) {
    if (keep.size() < gone.size()) std::swap(keep, gone);
    keep.insert(keep.end(), gone.begin(), gone.end());
    std::decay_t<decltype(gone)>().swap(gone);
  };
  absorb(dst.ops, src.ops);
  absorb(producers_[into], producers_[from]);
  absorb(consumers_[into], consumers_[from]);
  dst.cycles += src.cycles;
  dst.copyInBytes += src.copyInBytes;
  if (dst.scope == -1) dst.scope = src.scope;
  src.cycles = src.copyInBytes = 0;
  parent_[from] = into;
  dirty_[into] = 2; // ops no longer in body order
  if (attrId_[into] != attrId_[from]) attrId_[into] = -1;
  // Ids stay in order of first op as long as the earlier id survives.
  if (into > from) idsInBodyOrder_ = false;
  dirty_[from] = 0;
  ++mergeEpoch_;
  --live_;

  // The merged subgraph sits at the higher level; consumers of the lower one may
  // now be at or below it: raise them (and what they feed) until levels increase
  // along every edge again.
  level_[into] = level;
  std::vector<int64_t> work;
  for (int64_t y : raise)
    if (level_[y] <= level) {
      level_[y] = level + 1;
      work.push_back(y);
    }
  while (!work.empty()) {
    int64_t x = work.back();
    work.pop_back();
    for (int64_t e : consumers_[x]) {
      int64_t y = findRoot(e);
      if (y == x || level_[y] > level_[x]) continue;
      level_[y] = level_[x] + 1;
      work.push_back(y);
    }
  }
  return true;
}

// ---------------------------------------------------------------- summaries

void SubgraphGraph::summarise() {
  auto byPosition = [](const Operation *a, const Operation *b) {
    return a->walkMark < b->walkMark;
  };
  for (size_t id = 0; id < subgraphs_.size(); ++id) {
    Subgraph &s = subgraphs_[id];
    if (!dirty_[id] || s.ops.empty()) continue;
    if (dirty_[id] == 2) std::sort(s.ops.begin(), s.ops.end(), byPosition);
    dirty_[id] = 0;
    s.hash = ir::hashMix(hashSubgraph(s), static_cast<uint64_t>(s.core));
    s.cycles = s.copyInBytes = 0;
    for (const Operation *op : s.ops) {
      s.cycles += cost_->opCycles(*op);
      s.copyInBytes += CostModel::copyInBytes(*op);
    }
  }
  groups_.clear();
  llvm::DenseMap<uint64_t, int64_t> orderOf;
  for (Subgraph &s : subgraphs_) {
    if (s.ops.empty()) continue;
    auto [it, inserted] = orderOf.try_emplace(s.hash, int64_t(groups_.size()));
    if (inserted) groups_.emplace_back();
    groups_[it->second].push_back(s.id);
    s.hashOrder = it->second;
  }
  for (Subgraph &s : subgraphs_)
    if (!s.ops.empty()) s.groupSize = static_cast<int64_t>(groups_[s.hashOrder].size());
}

void SubgraphGraph::renumber() {
  // Live ids in order of their first op (ops are sorted after summarise()).
  std::vector<int64_t> order;
  order.reserve(live_);
  for (size_t id = 0; id < subgraphs_.size(); ++id)
    if (find(int64_t(id))) order.push_back(int64_t(id));
  if (!idsInBodyOrder_)
    std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      return subgraphs_[a].ops.front()->walkMark < subgraphs_[b].ops.front()->walkMark;
    });
  idsInBodyOrder_ = true;
  bool identity = order.size() == subgraphs_.size();
  for (size_t i = 0; identity && i < order.size(); ++i) identity = order[i] == int64_t(i);
  if (identity) return;

  size_t n = order.size();
  std::vector<int64_t> newId(subgraphs_.size(), -1);
  for (size_t i = 0; i < n; ++i) newId[order[i]] = int64_t(i);
  auto remap = [&](std::vector<int64_t> &list, int64_t self) {
    std::vector<int64_t> out;
    out.reserve(list.size());
    for (int64_t e : list) {
      int64_t r = findRoot(e);
      if (r != self) out.push_back(newId[r]);
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  };
  std::vector<Subgraph> subgraphs(n);
  std::vector<std::vector<int64_t>> producers(n), consumers(n);
  std::vector<int64_t> level(n), attrId(n);
  std::vector<uint8_t> dirty(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t old = order[i];
    producers[i] = remap(producers_[old], old);
    consumers[i] = remap(consumers_[old], old);
    subgraphs[i] = std::move(subgraphs_[old]);
    subgraphs[i].id = int64_t(i);
    level[i] = level_[old];
    attrId[i] = attrId_[old];
    dirty[i] = dirty_[old];
  }
  subgraphs_ = std::move(subgraphs);
  producers_ = std::move(producers);
  consumers_ = std::move(consumers);
  level_ = std::move(level);
  attrId_ = std::move(attrId);
  dirty_ = std::move(dirty);
  resetMergeScratch(n);
  if (cycleMember_ >= 0) cycleMember_ = newId[cycleMember_];
}

bool SubgraphGraph::writeTable() {
  ir::Func &f = *func_;
  ir::Context &ctx = f.context();
  summarise(); // op lists in body order, hashes and costs
  renumber();
  summarise(); // hash orders follow the new ids

  // The subgraph id is a field of each op: rewriting it uniques nothing.
  bool changed = false;
  std::vector<ir::Attribute> idAttrs(subgraphs_.size());
  for (Subgraph &s : subgraphs_) {
    idAttrs[s.id] = ctx.intAttr(s.id);
    // Untouched since read from the IR under the same id: its ops are right.
    if (attrId_[s.id] == s.id) continue;
    attrId_[s.id] = s.id;
    for (Operation *op : s.ops) {
      if (op->subgraphId() == s.id) continue;
      // A bad `sg` left in the dictionary (see fromFunc) goes.
      if (op->subgraphId() < 0)
        for (const ir::NamedAttr &a : op->attrs())
          if (a.name == ctx.sgKey()) {
            op->setAttr("sg", {});
            break;
          }
      op->setSubgraphId(s.id);
      changed = true;
    }
  }

  // Table rows: ints and strings repeat across rows; unique each value once.
  llvm::DenseMap<int64_t, ir::Attribute> ints;
  auto intAttr = [&](int64_t v) {
    auto [it, inserted] = ints.try_emplace(v);
    if (inserted) it->second = ctx.intAttr(v);
    return it->second;
  };
  std::vector<ir::Attribute> hashAttrs(groups_.size());
  ir::Attribute coreAttrs[3];
  ir::Identifier kCopyIn = ctx.id("copy_in_bytes"), kCore = ctx.id("core"),
                 kCycles = ctx.id("cycles"), kGroupSize = ctx.id("group_size"),
                 kHash = ctx.id("hash"), kHashOrder = ctx.id("hash_order"), kId = ctx.id("id");
  std::vector<ir::Attribute> table;
  table.reserve(subgraphs_.size());
  for (const Subgraph &s : subgraphs_) {
    ir::Attribute &hash = hashAttrs[s.hashOrder];
    if (!hash) {
      char hex[17];
      std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(s.hash));
      hash = ctx.stringAttr(hex);
    }
    ir::Attribute &core = coreAttrs[static_cast<unsigned>(s.core)];
    if (!core) core = ctx.stringAttr(target::coreKindName(s.core));
    // Keys in sorted order, so the dictionary needs no sorting.
    table.push_back(ctx.dictAttr({{kCopyIn, intAttr(s.copyInBytes)},
                                  {kCore, core},
                                  {kCycles, intAttr(s.cycles)},
                                  {kGroupSize, intAttr(s.groupSize)},
                                  {kHash, hash},
                                  {kHashOrder, intAttr(s.hashOrder)},
                                  {kId, idAttrs[s.id]}},
                                 /*sortByName=*/true));
  }
  std::vector<Operation *> old;
  for (Operation &op : f.ops())
    if (op.code() == ir::OpCode::Subgraph) old.push_back(&op);
  bool sameTable = old.size() == table.size();
  for (size_t i = 0; sameTable && i < old.size(); ++i) {
    sameTable = old[i]->attrDict() == table[i];
    // A table op after a tile op is out of place: rewrite the table at the start.
    if (i == 0) sameTable &= &f.ops().front() == old[0];
    else sameTable &= std::next(old[i - 1]->getIterator()) == old[i]->getIterator();
  }
  if (sameTable) return changed;
  for (Operation *op : old) f.erase(op);
  Operation *front = &f.ops().front();
  for (size_t i = 0; i < table.size(); ++i) {
    ir::Location loc = subgraphs_[i].ops.empty() ? f.loc() : subgraphs_[i].ops.front()->loc();
    f.createOp(ctx.opDef(ir::OpCode::Subgraph), {}, {}, table[i], loc, front);
  }
  return true;
}

} // namespace ptoc::analysis
