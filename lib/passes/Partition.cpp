// partition (GraphPartition): groups the tile ops of a tile-level function into
// subgraphs, the tasks a core runs, and writes the subgraph table.
//  1. Atomic clusters (union-find): ops joined by a value in a local buffer (ub,
//     l1, l0a, l0b, l0c) must run on one core, so a copy_out joins its producer
//     and a copy_in its consumers; ops with the same sg_scope (not -1) are joined
//     too, and their cluster is scoped: it merges with nothing else. A cluster
//     with AIC and AIV ops, or two scopes, is an error.
//  2. One subgraph per cluster, ids in order of first op; an edge from the definer
//     of every dependency operand (copy_out token -> copy_in; earlier access of a
//     region -> copy_out overwriting it). A cluster that waits on its own results
//     through GM is an error.
//  3. Merging, in rounds, in the spirit of PyPTO's partitioner: a group of
//     isomorphic subgraphs whose members are under pg-lower-bound cycles merges
//     with a neighbouring group (producer or consumer, same core kind, unscoped),
//     member by member in lock-step: each member with its neighbour in that group.
//     Neighbour groups of the same size are tried first, then by fewer cycles.
//     Groups of different sizes merge only if the smaller size is at least
//     pg-parallel-lower-bound or the smaller group's total cycles are at most
//     pg-lower-bound. No merge exceeds pg-upper-bound cycles (0: from the total,
//     automaticUpperBound) or creates a cycle. A round ends when every group had
//     its turn; merged subgraphs wait for the next round (their hashes changed).
//     Rounds stop when one merges nothing.
//  3'. pg-skip-partition=true replaces 3: one subgraph per core kind per connected
//     region (clusters joined along edges between unscoped clusters of one core
//     kind), except where joining would create a cycle.
// Every decision goes through MergeLog; `--debug-only=partition` prints them.
#include "ptoc/passes/Passes.h"

#include <algorithm>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "llvm/ADT/DenseMap.h"

#include "ptoc/analysis/CostModel.h"
#include "ptoc/analysis/Subgraphs.h"
#include "ptoc/ir/Context.h"
#include "ptoc/ir/Func.h"
#include "ptoc/ir/Level.h"
#include "ptoc/passes/MergeOptions.h"
#include "ptoc/passes/MergeRules.h"

namespace ptoc::passes {
namespace {

using analysis::CostModel;
using analysis::hashOrderKey;
using analysis::Subgraph;
using analysis::SubgraphGraph;
using ir::Operation;
using target::CoreKind;

constexpr llvm::StringLiteral kPassName = "partition";
/// A safety valve: merging in rounds normally settles in a handful (each round
/// at least halves the number of small subgraphs along a chain).
constexpr int kMaxRounds = 64;

/// Union-find over tile op indices; the root of a set is its smallest index (its
/// first op in the body).
class OpUnion {
public:
  explicit OpUnion(size_t n) : parent_(n) {
    for (size_t i = 0; i < n; ++i) parent_[i] = static_cast<uint32_t>(i);
  }
  uint32_t find(uint32_t x) {
    while (parent_[x] != x) {
      parent_[x] = parent_[parent_[x]];
      x = parent_[x];
    }
    return x;
  }
  void unite(uint32_t a, uint32_t b) {
    a = find(a);
    b = find(b);
    if (a == b) return;
    if (a < b) parent_[b] = a;
    else parent_[a] = b;
  }

private:
  std::vector<uint32_t> parent_;
};

int64_t scopeOf(const Operation &op) {
  ir::Attribute scope = op.attr("sg_scope");
  return scope && scope.isInt() ? scope.getInt() : -1;
}

bool isLocalTile(ir::Type t) { return t.isTile() && t.space() != ir::MemSpace::GM; }

/// What one run of the pass counted, for the statistics.
struct PartitionCounts {
  uint64_t clusters = 0;
  uint64_t subgraphs = 0;
  uint64_t rounds = 0;
};

/// Partitions one function.
class Partitioner {
public:
  Partitioner(ir::Func &f, unsigned funcIndex, const PartitionOptions &options,
              const CostModel &cost, MergeLog &log, PartitionCounts &counts)
      : f_(f), ctx_(f.context()), funcIndex_(funcIndex), options_(options), cost_(cost),
        log_(log), counts_(counts) {}

  /// Returns false after emitting diagnostics; `changed` says whether the IR did.
  bool run(bool &changed) {
    std::vector<Subgraph> clusters;
    if (!formClusters(clusters)) return false;
    counts_.clusters += clusters.size();
    SubgraphGraph graph = SubgraphGraph::fromSubgraphs(f_, cost_, std::move(clusters));
    if (int64_t member = graph.cycleMember(); member >= 0) {
      const Subgraph &s = *graph.find(member);
      const Operation &op = *s.ops.front();
      if (s.scope != -1)
        ctx_.emitError(op.loc(), ir::DiagCategory::Option)
            << "'" << op.name() << "' op starts a group of ops that must run as one "
            << "subgraph (sg_scope " << s.scope << ", and ops joined to it by local tiles) "
            << "and that waits, through GM, on its own results; no schedule can run it: "
               "split the sg_scope";
      else // expand-tiles joins tiles into one task only where that keeps the tasks acyclic
        ctx_.emitError(op.loc())
            << "'" << op.name() << "' op starts a group of ops joined by local tiles that "
            << "waits, through GM, on its own results; no schedule can run it: read one of "
               "the tiles through GM instead (expand-tiles never joins tiles this way, so if "
               "this IR came from it, it is a bug in ptoc; set_pass_options(fuse_local="
               "False) works around it)";
      return false;
    }
    note("@" + f_.name().str() + ": " + std::to_string(graph.numLive()) +
         " atomic subgraphs");
    if (options_.skipPartition) mergeRegions(graph);
    else mergeByBounds(graph);
    counts_.subgraphs += graph.numLive();
    changed = graph.writeTable();
    return true;
  }

private:
  void note(const std::string &text) { log_.note(text); }

  // Step 1: atomic clusters, as subgraphs (ops in body order, scope set).
  bool formClusters(std::vector<Subgraph> &out) {
    std::vector<Operation *> ops;
    for (Operation &op : f_.ops())
      if (op.isTileOp()) ops.push_back(&op);
    size_t n = ops.size();
    uint64_t base = f_.reserveWalkMarks(n);
    for (size_t i = 0; i < n; ++i) ops[i]->walkMark = base + 1 + i;
    auto indexOf = [&](const Operation *op) -> int64_t {
      return op && op->walkMark > base && op->walkMark <= base + n
                 ? static_cast<int64_t>(op->walkMark - base - 1)
                 : -1;
    };

    OpUnion sets(n);
    llvm::DenseMap<int64_t, uint32_t> firstOfScope;
    for (size_t i = 0; i < n; ++i) {
      // Dependency operands only order tasks (a copy_out waiting on a read of the
      // region it overwrites names that read's tile): they join nothing.
      for (unsigned o = 0, e = ops[i]->firstDependencyOperand(); o < e; ++o) {
        const ir::Value *v = ops[i]->operand(o);
        int64_t def = indexOf(v->definingOp());
        if (def >= 0 && isLocalTile(v->type())) sets.unite(uint32_t(i), uint32_t(def));
      }
      if (int64_t scope = scopeOf(*ops[i]); scope != -1) {
        auto [it, inserted] = firstOfScope.try_emplace(scope, uint32_t(i));
        if (!inserted) sets.unite(uint32_t(i), it->second);
      }
    }

    // Check each cluster: one scope at most, one core kind.
    std::vector<int64_t> clusterScope(n, -1), idOf(n, -1);
    std::vector<uint8_t> reported(n, 0);
    bool ok = true;
    for (size_t i = 0; i < n; ++i) {
      uint32_t root = sets.find(uint32_t(i));
      int64_t scope = scopeOf(*ops[i]);
      if (scope == -1) continue;
      if (clusterScope[root] == -1) clusterScope[root] = scope;
      else if (clusterScope[root] != scope && !reported[root]) {
        reported[root] = 1;
        ok = false;
        ctx_.emitError(ops[i]->loc(), ir::DiagCategory::Option)
            << "'" << ops[i]->name() << "' op is in sg_scope " << scope
            << " but shares local tiles with ops of sg_scope " << clusterScope[root]
            << "; ops joined by local tiles run as one subgraph: give them one scope";
      }
    }
    for (size_t i = 0; i < n; ++i) {
      uint32_t root = sets.find(uint32_t(i));
      if (reported[root] || ops[i]->coreKind() == ops[root]->coreKind()) continue;
      reported[root] = 1;
      ok = false;
      const Operation &first = *ops[root];
      auto diag = ctx_.emitError(first.loc(), clusterScope[root] != -1
                                                  ? ir::DiagCategory::Option
                                                  : ir::DiagCategory::Internal);
      diag << "'" << first.name() << "' op: ";
      if (clusterScope[root] != -1)
        diag << "sg_scope " << clusterScope[root]
             << " mixes cube and vector ops; a subgraph runs on one core kind: split the "
                "scope";
      else
        diag << "local tiles join it to ops on both core kinds (aic and aiv); a subgraph "
                "runs on one core kind";
    }
    if (!ok) return false;

    // Step 2: one subgraph per cluster, ids in order of first op (the root).
    for (size_t i = 0; i < n; ++i) {
      uint32_t root = sets.find(uint32_t(i));
      if (idOf[root] < 0) {
        idOf[root] = static_cast<int64_t>(out.size());
        out.emplace_back();
        out.back().scope = clusterScope[root];
      }
      out[idOf[root]].ops.push_back(ops[i]);
    }
    return true;
  }

  // Step 3': one subgraph per core kind per connected region.
  void mergeRegions(SubgraphGraph &g) {
    std::vector<std::pair<int64_t, int64_t>> edges;
    for (Subgraph *s : g.subgraphs())
      for (int64_t c : g.consumers(s->id)) edges.push_back({s->id, c});
    for (auto [p, c] : edges) {
      int64_t a = g.resolve(p), b = g.resolve(c);
      if (a == b) continue;
      int64_t into = std::min(a, b), from = std::max(a, b);
      MergeVerdict v = rules(g).tryMerge(MergeProposal{*g.find(into), *g.find(from)},
                                         "same region");
      if (v == MergeVerdict::RefusedFuel) return;
    }
  }

  // Step 3: bound-driven merging of isomorphic groups in lock-step.
  void mergeByBounds(SubgraphGraph &g) {
    g.summarise();
    int64_t total = 0;
    for (Subgraph *s : g.subgraphs()) total += s->cycles;
    upper_ = options_.upperBound > 0 ? options_.upperBound : automaticUpperBound(total);
    note("@" + f_.name().str() + ": " + std::to_string(total) +
         " cycles in total; pg-lower-bound " + std::to_string(options_.lowerBound) +
         ", pg-upper-bound " + std::to_string(upper_) +
         (options_.upperBound > 0 ? "" : " (automatic)") + ", pg-parallel-lower-bound " +
         std::to_string(options_.parallelLowerBound));
    for (int round = 1; round <= kMaxRounds; ++round) {
      g.summarise();
      std::vector<std::vector<int64_t>> groups = g.groups();
      touched_.assign(g.idBound(), 0);
      absorbing_.assign(g.idBound(), 0);
      int64_t merged = 0;
      for (size_t order = 0; order < groups.size() && !fuelSpent_; ++order)
        merged += mergeGroup(g, groups, int64_t(order));
      ++counts_.rounds;
      note("@" + f_.name().str() + ": round " + std::to_string(round) + ": " +
           std::to_string(merged) + " merges, " + std::to_string(g.numLive()) +
           " subgraphs");
      if (merged == 0 || fuelSpent_) return;
    }
    note("@" + f_.name().str() + ": stopped after " + std::to_string(kMaxRounds) + " rounds");
  }

  struct Candidate {
    int64_t order;
    int64_t a, b; // a representative pair (member of A, its neighbour in the group)
  };

  // Tries to merge the members of group `order` with a neighbouring group.
  // Returns the number of merges.
  int64_t mergeGroup(SubgraphGraph &g, const std::vector<std::vector<int64_t>> &groups,
                     int64_t order) {
    // sg_scope is not part of the hash: a group may mix scoped and unscoped
    // members. Scoped ones never merge.
    std::vector<int64_t> members;
    for (int64_t id : groups[order])
      if (!touched_[id] && g.find(id) && g.find(id)->scope == -1) members.push_back(id);
    if (members.empty()) return 0;
    const Subgraph &rep = *g.find(members.front());
    if (rep.cycles >= options_.lowerBound) return 0;

    std::vector<Candidate> candidates;
    for (int64_t a : members)
      for (bool up : {true, false})
        for (int64_t n : up ? g.producers(a) : g.consumers(a)) {
          if (touched_[n]) continue;
          const Subgraph &neighbour = *g.find(n);
          if (neighbour.scope != -1) {
            if (scopeLogged_.insert(std::minmax(a, n)).second)
              refuse(g, MergeProposal{*g.find(std::min(a, n)), *g.find(std::max(a, n))});
            continue;
          }
          int64_t o = neighbour.hashOrder;
          if (std::none_of(candidates.begin(), candidates.end(),
                           [&](const Candidate &c) { return c.order == o; }))
            candidates.push_back({o, a, n});
        }
    auto rank = [&](const Candidate &c) {
      bool sizesDiffer = groups[c.order].size() != groups[order].size();
      return std::make_tuple(sizesDiffer, g.find(c.b)->cycles, c.order);
    };
    std::sort(candidates.begin(), candidates.end(),
              [&](const Candidate &x, const Candidate &y) { return rank(x) < rank(y); });

    for (const Candidate &c : candidates) {
      const Subgraph &a = *g.find(c.a), &b = *g.find(c.b);
      std::pair<uint64_t, uint64_t> hashes = std::minmax(a.hash, b.hash);
      if (settled_.count(hashes)) continue;
      // The group-level rules (core kind, parallelism floor) on a representative pair:
      // they hold for every pair of the two groups.
      int64_t sizeA = static_cast<int64_t>(groups[order].size());
      int64_t sizeB = static_cast<int64_t>(groups[c.order].size());
      bool aFirst = c.a < c.b;
      MergeProposal p{aFirst ? a : b, aFirst ? b : a};
      p.groups = MergeProposal::Groups{aFirst ? sizeA : sizeB, aFirst ? sizeB : sizeA,
                                       sizeA < sizeB ? sizeA * a.cycles : sizeB * b.cycles,
                                       options_.parallelLowerBound, options_.lowerBound};
      std::string reason;
      MergeVerdict v = rules(g).check(p, reason);
      if (v == MergeVerdict::RefusedCoreKind || v == MergeVerdict::RefusedParallelism) {
        settled_.insert(hashes);
        log_.record(p.into.id, p.from.id, v, reason);
        continue;
      }
      if (int64_t merges = mergeLockStep(g, members, order, c.order); merges > 0 || fuelSpent_)
        return merges;
    }
    return 0;
  }

  /// The rules over graph `g` (a graph is made per function).
  MergeRules rules(SubgraphGraph &g) { return MergeRules(g, log_); }

  /// Checks `p` and records the refusal it gets (a scoped neighbour).
  void refuse(SubgraphGraph &g, const MergeProposal &p) {
    std::string reason;
    MergeVerdict v = rules(g).check(p, reason);
    if (v != MergeVerdict::Merged) log_.record(p.into.id, p.from.id, v, reason);
  }

  // Merges each member of group A with its first neighbour in group B (several A
  // members may merge into one B member when B is smaller; within one group,
  // members pair up).
  int64_t mergeLockStep(SubgraphGraph &g, const std::vector<int64_t> &members, int64_t orderA,
                        int64_t orderB) {
    bool self = orderA == orderB;
    std::string groupsText = hashOrderKey(funcIndex_, orderA) + " + " +
                             hashOrderKey(funcIndex_, orderB);
    int64_t merges = 0;
    bool allOverBound = true;
    uint64_t hashA = 0, hashB = 0;
    // B members that took A members in this call (they may take more).
    std::vector<int64_t> absorbed;
    auto done = [&] {
      for (int64_t id : absorbed) absorbing_[id] = 0;
      return merges;
    };
    for (int64_t a : members) {
      if (touched_[a] || !g.find(a)) continue;
      int64_t partner = -1;
      for (bool up : {true, false}) {
        for (int64_t n : up ? g.producers(a) : g.consumers(a)) {
          const Subgraph &s = *g.find(n);
          bool inB = absorbing_[n] ||
                     (!touched_[n] && s.scope == -1 && s.hashOrder == orderB);
          if (inB && (partner < 0 || n < partner)) partner = n;
        }
      }
      if (partner < 0) continue;
      const Subgraph &sa = *g.find(a), &sb = *g.find(partner);
      if (!absorbing_[partner]) {
        hashA = sa.hash;
        hashB = sb.hash;
      }
      int64_t into = std::min(a, partner), from = std::max(a, partner);
      int64_t sum = sa.cycles + sb.cycles;
      MergeProposal p{*g.find(into), *g.find(from)};
      p.cycleBound = upper_;
      p.copyInCap = options_.copyInUpperBound;
      MergeVerdict v = rules(g).tryMerge(p, groupsText + ": " + std::to_string(sum) + " cycles");
      if (v != MergeVerdict::RefusedCycleBound && v != MergeVerdict::RefusedCopyInCap)
        allOverBound = false;
      if (v == MergeVerdict::RefusedFuel) {
        fuelSpent_ = true;
        return done();
      }
      if (v != MergeVerdict::Merged) continue;
      ++merges;
      touched_[into] = touched_[from] = 1;
      if (!self) {
        absorbing_[into] = absorbing_[from] = 1;
        absorbed.push_back(into);
        absorbed.push_back(from);
      }
    }
    // Isomorphic pairs cost the same: when every pair was over the bound, this
    // pair of groups never merges; skip it in later rounds.
    if (merges == 0 && allOverBound && hashA) settled_.insert(std::minmax(hashA, hashB));
    return done();
  }

  ir::Func &f_;
  ir::Context &ctx_;
  unsigned funcIndex_;
  const PartitionOptions &options_;
  const CostModel &cost_;
  MergeLog &log_;
  PartitionCounts &counts_;
  int64_t upper_ = 0;
  bool fuelSpent_ = false;
  std::vector<uint8_t> touched_;   // merged (or merged into) this round
  std::vector<uint8_t> absorbing_; // B members taking A members in the current lock-step
  std::set<std::pair<uint64_t, uint64_t>> settled_; // group pairs that never merge
  std::set<std::pair<int64_t, int64_t>> scopeLogged_; // scope refusals already logged
};

class PartitionPass final : public Pass {
public:
  explicit PartitionPass(const PartitionOptions &options) : options_(options) {}
  llvm::StringRef argument() const override { return kPassName; }

  PassResult run(ir::Module &m, PassContext &ctx) override {
    CostModel cost(ctx.device);
    MergeLog log(argument(), ctx.debugStream(argument()), options_.fuel);
    PartitionCounts counts;
    bool changed = false, failed = false;
    unsigned funcIndex = 0;
    for (ir::Func &f : m.funcs()) {
      unsigned index = funcIndex++;
      switch (ir::levelOf(f)) {
      case ir::Level::Empty:
      case ir::Level::Control: continue;
      case ir::Level::Tensor:
        m.context().emitError(f.loc())
            << "'" << argument() << "' needs a tile-level function, but @" << f.name()
            << " works on whole tensors; run expand-tiles first";
        failed = true;
        continue;
      case ir::Level::Partitioned:
        log.note("@" + f.name().str() + " is already partitioned: partitioning its tile ops "
                 "again");
        break;
      case ir::Level::Tile: break;
      }
      Partitioner p(f, index, options_, cost, log, counts);
      bool fchanged = false;
      if (!p.run(fchanged)) failed = true;
      changed |= fchanged;
    }
    clusters_ += counts.clusters;
    subgraphs_ += counts.subgraphs;
    rounds_ += counts.rounds;
    merges_ += log.count(MergeVerdict::Merged);
    refusedParallelism_ += log.count(MergeVerdict::RefusedParallelism);
    refusedScope_ += log.count(MergeVerdict::RefusedScope);
    refusedCycleBound_ += log.count(MergeVerdict::RefusedCycleBound);
    refusedCycle_ += log.count(MergeVerdict::RefusedCycle);
    refusedCoreKind_ += log.count(MergeVerdict::RefusedCoreKind);
    refusedFuel_ += log.count(MergeVerdict::RefusedFuel);
    refusedCopyIn_ += log.count(MergeVerdict::RefusedCopyInCap);
    if (failed) return PassResult::failure();
    return PassResult::changed(changed);
  }

private:
  PartitionOptions options_;
  PassStatistic clusters_{this, "atomic-subgraphs",
                          "Subgraphs before merging (ops joined by local tiles or a scope)"};
  PassStatistic subgraphs_{this, "subgraphs", "Subgraphs created"};
  PassStatistic rounds_{this, "rounds", "Merge rounds run"};
  PassStatistic merges_{this, "merged", "Merges done"};
  PassStatistic refusedParallelism_{this, "refused-parallelism-floor",
                                    "Group merges refused: unequal sizes, smaller group too "
                                    "small (pg-parallel-lower-bound)"};
  PassStatistic refusedScope_{this, "refused-scope", "Merges refused: an sg_scope"};
  PassStatistic refusedCycleBound_{this, "refused-cycle-bound",
                                   "Merges refused: over pg-upper-bound cycles"};
  PassStatistic refusedCycle_{this, "refused-would-create-cycle",
                              "Merges refused: would create a dependency cycle"};
  PassStatistic refusedCopyIn_{this, "refused-copy-in-cap",
                               "Merges refused: copy-in bytes over mg-copyin-upper-bound"};
  PassStatistic refusedCoreKind_{this, "refused-core-kind",
                                 "Merges refused: neighbours on different core kinds"};
  PassStatistic refusedFuel_{this, "refused-fuel", "Merges refused: merge-fuel ran out"};
};

} // namespace

std::unique_ptr<Pass> createPartitionPass(const PartitionOptions &options) {
  return std::make_unique<PartitionPass>(options);
}

void registerPartitionPass(PassRegistry &registry) {
  static const OptionRow<PartitionOptions> kRows[] = {
      {"pg-skip-partition", &PartitionOptions::skipPartition,
       "no bound-driven merging: one subgraph per core kind per connected region"},
      {"pg-lower-bound", &PartitionOptions::lowerBound,
       "subgraphs under this many estimated cycles try to merge with a neighbour", 0},
      {"pg-upper-bound", &PartitionOptions::upperBound,
       "no merge exceeds this many estimated cycles; 0 = automatic from the total latency", 0},
      {"pg-parallel-lower-bound", &PartitionOptions::parallelLowerBound,
       "groups of different sizes merge only if the smaller has at least this many members "
       "(or is tiny in total: <= pg-lower-bound cycles)",
       0},
      copyInUpperBoundRow(&PartitionOptions::copyInUpperBound),
      mergeFuelRow(&PartitionOptions::fuel),
  };
  registry.add({"partition",
                "Group tile ops into subgraphs (one task each) and merge small ones within "
                "bounds",
                declareOptions(kRows),
                [](const PassOptionValues &v) { return createPartitionPass(readOptions(kRows, v)); }});
}

} // namespace ptoc::passes
