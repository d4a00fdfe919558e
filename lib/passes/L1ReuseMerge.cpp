// l1-reuse-merge: merges cube (AIC) subgraphs of one isomorphism group that copy
// the same GM region into L1 (e.g. output tiles in different N columns of a matmul
// that read the same A row-panel), then removes the duplicate copy_ins of the
// merged subgraph, so the region is loaded once.
//  - Per group, members are walked in id order. A member that shares an L1 region
//    (same source value, offsets and tile type) with an earlier anchor (as merged so
//    far) merges into the first such anchor with room: at most N members per
//    anchor, the anchor included. A member that merges nowhere becomes an anchor.
//  - N per group: cube-l1-reuse-mode 0 off, 1 automatic, 2 from
//    cube-l1-reuse-setting (see L1ReuseMerge.h).
//  - Refusals (MergeLog): sg_scope on either side, a dependency cycle, copy-in
//    bytes over mg-copyin-upper-bound, an L1 footprint over the device's L1, fuel.
//  - In the merged subgraph, copy_ins with the same region and the same tokens
//    collapse into the earliest one (uses redirected, the others erased). Copy_ins
//    of one region whose tokens differ are all kept (the log says so).
// `--debug-only=l1-reuse-merge` logs each group's N and every decision.
#include "ptoc/passes/L1ReuseMerge.h"

#include "SettingKeys.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <vector>

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"

#include "ptoc/analysis/CostModel.h"
#include "ptoc/analysis/Subgraphs.h"
#include "ptoc/ir/Context.h"
#include "ptoc/ir/Func.h"
#include "ptoc/ir/Level.h"
#include "ptoc/passes/MergeOptions.h"
#include "ptoc/passes/MergeRules.h"
#include "ptoc/target/DeviceSpec.h"

namespace ptoc::passes {

using analysis::CostModel;
using analysis::hashOrderKey;
using analysis::Subgraph;
using analysis::SubgraphGraph;
using ir::Operation;
using ir::OpCode;
using ir::Value;

namespace {

constexpr llvm::StringLiteral kPassName = "l1-reuse-merge";

bool isL1CopyIn(const Operation &op) {
  return op.code() == OpCode::CopyIn && op.resultType().isTile() &&
         op.resultType().space() == ir::MemSpace::L1;
}

/// A GM region read into a local tile: source value, offsets and tile type. Attributes
/// and types are uniqued, so their storage pointers identify them.
using RegionKey = std::tuple<const Value *, const void *, const void *>;

RegionKey regionOf(const Operation &op) {
  return {op.operand(0), op.attr("offsets").storage(), op.resultType().storage()};
}

/// What makes two copy_ins interchangeable: the same region and the same set of
/// tokens (copy_out results) to wait on.
struct DedupeKey {
  RegionKey region;
  std::vector<const Value *> tokens; // sorted, unique
  friend bool operator<(const DedupeKey &a, const DedupeKey &b) {
    return std::tie(a.region, a.tokens) < std::tie(b.region, b.tokens);
  }
};

DedupeKey dedupeKeyOf(const Operation &op) {
  DedupeKey key{regionOf(op), {}};
  for (unsigned i = 1; i < op.numOperands(); ++i) key.tokens.push_back(op.operand(i));
  std::sort(key.tokens.begin(), key.tokens.end());
  key.tokens.erase(std::unique(key.tokens.begin(), key.tokens.end()), key.tokens.end());
  return key;
}

// Sums the byte sizes of the copy_ins accepted by `filter`, once per dedupe key.
template <typename Filter>
int64_t dedupedBytes(llvm::ArrayRef<Operation *> ops, Filter filter) {
  std::set<DedupeKey> seen;
  int64_t bytes = 0;
  for (Operation *op : ops)
    if (op->code() == OpCode::CopyIn && filter(*op) && seen.insert(dedupeKeyOf(*op)).second)
      bytes += CostModel::copyInBytes(*op);
  return bytes;
}

/// `%a[32, 0] tile<32x32xf16, l1>`, for the log.
std::string regionText(const Operation &copyIn) {
  const Value *src = copyIn.operand(0);
  std::string name = src->nameHint() ? ("%" + src->nameHint().str()).str()
                     : src->isArgument() ? "%arg" + std::to_string(src->index())
                                         : std::string("%<unnamed>");
  return name + copyIn.attr("offsets").str() + " " + copyIn.resultType().str();
}

/// The merge counters of one function's run, added to the pass statistics.
struct MergeTotals {
  uint64_t copyInsRemoved = 0;
  uint64_t bytesSaved = 0;
};

/// Runs the merge on one partitioned function.
class L1ReuseMerger {
public:
  L1ReuseMerger(ir::Func &f, unsigned funcIndex, const L1ReuseMergeOptions &options,
                const target::DeviceSpec &device, llvm::raw_ostream *log, MergeLog &mergeLog)
      : f_(f), funcIndex_(funcIndex), options_(options), device_(device), cost_(device),
        graph_(SubgraphGraph::fromFunc(f, cost_)), log_(log), mergeLog_(mergeLog) {}

  /// Merges every AIC group; rewrites the table when anything merged. Fails on a
  /// partition whose subgraphs depend on each other in a cycle.
  PassResult run(MergeTotals &totals) {
    if (int64_t member = graph_.cycleMember(); member >= 0) {
      f_.context().emitError(f_.loc())
          << "'" << kPassName << "': the subgraphs of @" << f_.name()
          << " depend on each other in a cycle (subgraph " << member
          << " is on it), so no task order exists; re-run partition";
      return PassResult::failure();
    }
    unsigned position = 0;
    for (Operation &op : f_.ops()) bodyPosition_[&op] = position++;
    graph_.summarise();
    // A copy: merges below change the graph, and groups are decided up front.
    std::vector<std::vector<int64_t>> groups = graph_.groups();
    bool changed = false;
    for (size_t order = 0; order < groups.size(); ++order) {
      const std::vector<int64_t> &members = groups[order];
      if (members.empty()) continue;
      Subgraph *first = graph_.find(members.front());
      if (!first || first->core != target::CoreKind::AIC) continue;
      std::string why;
      MergeCount n = chooseMergeCount(options_.mode, options_.setting, funcIndex_,
                                      static_cast<int64_t>(order), automaticCount(members, why));
      if (log_)
        mergeLog_.note(("@" + f_.name() + " group " +
                        hashOrderKey(funcIndex_, static_cast<int64_t>(order)) + " (" +
                        std::to_string(members.size()) + " aic subgraphs): N = " +
                        std::to_string(n.n) + " (" + countSourceName(n.source).str() +
                        (n.source == CountSource::SettingKey ? " " + groupKeyToString(n.key)
                                                             : std::string()) +
                        (n.source == CountSource::Automatic && !why.empty() ? ": " + why : "") +
                        ")" + (n.n <= 1 ? ", no merge" : ""))
                           .str());
      if (n.n > 1) changed |= mergeGroup(members, n.n, totals);
    }
    if (changed) graph_.writeTable();
    return PassResult::changed(changed);
  }

private:
  /// The automatic N of a group: at most l1ReuseAutomaticCount (two tasks per cube
  /// core), merged along the region of the first member that the most members read
  /// (a matmul's A row-panel or B column-panel), no more members than fit half of L1
  /// (the leaf double buffers: docs/codegen.md), and a divisor of that region's
  /// readers, so every anchor fills to exactly N and the group stays one group of
  /// equal tasks. `why` says how it was bounded.
  int64_t automaticCount(const std::vector<int64_t> &members, std::string &why) const {
    int64_t n = l1ReuseAutomaticCount(static_cast<int64_t>(members.size()), device_.aicCores);
    const Subgraph *first = graph_.find(members.front());
    if (n <= 1 || !first) return n;
    std::map<RegionKey, int64_t> readers; // the first member's regions
    std::vector<Operation *> firstCopyIns = l1CopyIns(first->ops);
    for (Operation *op : firstCopyIns) readers.try_emplace(regionOf(*op), 0);
    for (int64_t id : members) {
      const Subgraph *m = graph_.find(id);
      if (!m) continue;
      std::set<RegionKey> seen;
      for (Operation *op : m->ops)
        if (isL1CopyIn(*op))
          if (auto it = readers.find(regionOf(*op)); it != readers.end() &&
                                                     seen.insert(it->first).second)
            ++it->second;
    }
    // The most-read region, the earliest in the body on a tie.
    const Operation *widest = nullptr;
    int64_t sharers = 0;
    for (Operation *op : firstCopyIns)
      if (readers[regionOf(*op)] > sharers) {
        sharers = readers[regionOf(*op)];
        widest = op;
      }
    if (sharers < 2) {
      why = "no L1 region is read by two members";
      return 1;
    }
    // What a second reader of that region adds to the first member's L1 bytes.
    Holdings h = holdingsOf(*first);
    int64_t growth = 0;
    for (int64_t id : members) {
      const Subgraph *m = graph_.find(id);
      if (!m || m == first) continue;
      bool shares = false;
      for (Operation *op : m->ops)
        shares |= isL1CopyIn(*op) && regionOf(*op) == regionOf(*widest);
      if (!shares) continue;
      growth = addedBytes(h, std::vector<Operation *>(m->ops.begin(), m->ops.end())).second;
      break;
    }
    int64_t half = device_.buffers.l1 / 2;
    int64_t fit = growth > 0 ? 1 + std::max<int64_t>(0, (half - h.l1Bytes) / growth) : n;
    int64_t cap = std::min({n, fit, sharers});
    int64_t uniform = cap;
    while (uniform > 1 && sharers % uniform != 0) --uniform;
    why = "at most " + std::to_string(n) + " (two tasks per cube core); sharing " +
          regionText(*widest) + ", read by " + std::to_string(sharers) + " members, " +
          std::to_string(fit) + " fit half of L1 (" + std::to_string(h.l1Bytes) + " + " +
          std::to_string(growth) + " bytes per member <= " + std::to_string(half) + "); " +
          std::to_string(uniform) + " divides " + std::to_string(sharers);
    return uniform;
  }

  /// What a merged subgraph holds once its duplicate copy_ins are gone: one L1
  /// copy_in per dedupe key (the earliest in the body), the deduplicated byte
  /// totals, and the token sets read per region (for the log). Kept up to date
  /// member by member, so merging costs the member's size, not the anchor's.
  struct Holdings {
    std::map<DedupeKey, Operation *> kept;
    std::set<DedupeKey> all; ///< every copy_in's key (the copy-in measure)
    int64_t copyInBytes = 0, l1Bytes = 0;
    std::map<RegionKey, std::set<std::vector<const Value *>>> tokenSets;
    /// Duplicates inside the anchor as it was made: removed at its first merge.
    std::vector<std::pair<Operation *, Operation *>> pendingDuplicates;
  };
  struct Anchor {
    int64_t id;
    int64_t members = 1;
    bool merged = false;
    Holdings holdings;
  };
  /// How many sharing anchors (the earliest first) a member tries before it
  /// becomes an anchor itself.
  static constexpr size_t kMaxCandidatesTried = 8;

  unsigned position(const Operation *op) const { return bodyPosition_.lookup(op); }

  /// The L1 copy_ins of `ops` in body order.
  std::vector<Operation *> l1CopyIns(llvm::ArrayRef<Operation *> ops) const {
    std::vector<Operation *> out;
    for (Operation *op : ops)
      if (isL1CopyIn(*op)) out.push_back(op);
    std::sort(out.begin(), out.end(),
              [&](Operation *a, Operation *b) { return position(a) < position(b); });
    return out;
  }

  Holdings holdingsOf(const Subgraph &s) const {
    Holdings h;
    for (Operation *op : s.ops)
      if (op->code() == OpCode::CopyIn && h.all.insert(dedupeKeyOf(*op)).second)
        h.copyInBytes += CostModel::copyInBytes(*op);
    for (Operation *op : l1CopyIns(s.ops)) {
      DedupeKey key = dedupeKeyOf(*op);
      h.tokenSets[key.region].insert(key.tokens);
      auto [it, inserted] = h.kept.try_emplace(key, op);
      if (inserted) h.l1Bytes += CostModel::copyInBytes(*op);
      else h.pendingDuplicates.push_back({op, it->second});
    }
    return h;
  }

  /// Bytes (all copy_ins, L1 copy_ins) that `ops` add to `h`, duplicates counted once.
  static std::pair<int64_t, int64_t> addedBytes(const Holdings &h,
                                                llvm::ArrayRef<Operation *> ops) {
    std::set<DedupeKey> seen;
    int64_t all = 0, l1 = 0;
    for (Operation *op : ops) {
      if (op->code() != OpCode::CopyIn) continue;
      DedupeKey key = dedupeKeyOf(*op);
      if (h.all.count(key) || !seen.insert(key).second) continue;
      all += CostModel::copyInBytes(*op);
      if (isL1CopyIn(*op)) l1 += CostModel::copyInBytes(*op);
    }
    return {all, l1};
  }

  /// Removes copy_in `dup` in favour of `rep` (same region, same tokens): the
  /// earlier of the two stays, and the other's uses move to it. Returns the one
  /// kept. The removed one leaves the IR when the group is done.
  Operation *collapse(Operation *dup, Operation *rep, uint64_t &removed, uint64_t &bytes) {
    if (position(dup) < position(rep)) std::swap(dup, rep);
    dup->result()->replaceAllUsesWith(rep->result());
    bytes += CostModel::copyInBytes(*dup);
    ++removed;
    doomed_.insert(dup);
    return rep;
  }

  /// Takes the member's copy_ins (merged into the anchor) into its holdings,
  /// collapsing duplicates. Returns the copy_ins removed and their bytes; `notes`
  /// gets a line for each region now read by copy_ins that wait on different tokens
  /// (all kept).
  std::pair<uint64_t, uint64_t> absorb(Anchor &anchor, llvm::ArrayRef<Operation *> memberOps,
                                       std::vector<std::string> &notes) {
    Holdings &h = anchor.holdings;
    uint64_t removed = 0, bytes = 0;
    if (!anchor.merged) {
      for (auto [dup, rep] : h.pendingDuplicates) {
        Operation *kept = collapse(dup, rep, removed, bytes);
        h.kept[dedupeKeyOf(*kept)] = kept;
      }
      h.pendingDuplicates.clear();
      anchor.merged = true;
    }
    for (Operation *op : memberOps)
      if (op->code() == OpCode::CopyIn && h.all.insert(dedupeKeyOf(*op)).second)
        h.copyInBytes += CostModel::copyInBytes(*op);
    std::set<RegionKey> grew;
    for (Operation *op : l1CopyIns(memberOps)) {
      DedupeKey key = dedupeKeyOf(*op);
      if (h.tokenSets[key.region].insert(key.tokens).second && h.tokenSets[key.region].size() > 1)
        grew.insert(key.region);
      auto [it, inserted] = h.kept.try_emplace(key, op);
      if (inserted) {
        h.l1Bytes += CostModel::copyInBytes(*op);
        continue;
      }
      it->second = collapse(op, it->second, removed, bytes);
    }
    if (log_)
      for (Operation *op : l1CopyIns(memberOps)) {
        RegionKey region = regionOf(*op);
        if (grew.erase(region))
          notes.push_back("sg " + std::to_string(anchor.id) + ": kept " +
                          std::to_string(h.tokenSets[region].size()) + " copy_ins of " +
                          regionText(*op) + ": they wait on different tokens");
      }
    return {removed, bytes};
  }

  bool mergeGroup(const std::vector<int64_t> &members, int64_t maxMembers,
                  MergeTotals &totals) {
    std::vector<Anchor> anchors;
    // Region -> anchors (indices into `anchors`, ascending) whose subgraph reads it.
    // Anchors only ever fill up, so `cursor` skips the full prefix once.
    struct ReaderList {
      std::vector<size_t> anchors;
      size_t cursor = 0;
    };
    std::map<RegionKey, ReaderList> readers;
    std::vector<llvm::SmallPtrSet<const ReaderList *, 8>> regionsOfAnchor;
    auto addRegions = [&](size_t anchor, llvm::ArrayRef<Operation *> ops) {
      if (regionsOfAnchor.size() <= anchor) regionsOfAnchor.resize(anchor + 1);
      for (Operation *op : ops)
        if (isL1CopyIn(*op)) {
          ReaderList &r = readers[regionOf(*op)];
          if (regionsOfAnchor[anchor].insert(&r).second) r.anchors.push_back(anchor);
        }
    };
    bool changed = false;
    for (int64_t id : members) {
      Subgraph *member = graph_.find(id);
      if (!member || member->ops.empty()) continue;
      // The earliest kMaxCandidatesTried anchors with room that share a region with
      // the member, each with the first of the member's copy_ins that shares. A
      // region shared by a whole group (one weight read by every layer) makes every
      // anchor a candidate: trying them all would be quadratic.
      llvm::SmallVector<std::pair<size_t, const Operation *>, 16> candidates;
      for (Operation *op : member->ops) {
        if (!isL1CopyIn(*op)) continue;
        auto it = readers.find(regionOf(*op));
        if (it == readers.end()) continue;
        ReaderList &r = it->second;
        while (r.cursor < r.anchors.size() && anchors[r.anchors[r.cursor]].members >= maxMembers)
          ++r.cursor;
        size_t taken = 0;
        for (size_t i = r.cursor; i < r.anchors.size() && taken < kMaxCandidatesTried; ++i)
          if (anchors[r.anchors[i]].members < maxMembers) {
            candidates.push_back({r.anchors[i], op});
            ++taken;
          }
      }
      std::stable_sort(candidates.begin(), candidates.end(),
                       [](const auto &x, const auto &y) { return x.first < y.first; });
      candidates.erase(std::unique(candidates.begin(), candidates.end(),
                                   [](const auto &x, const auto &y) { return x.first == y.first; }),
                       candidates.end());
      if (candidates.size() > kMaxCandidatesTried) candidates.resize(kMaxCandidatesTried);
      // The member's own ops: after a merge they are the anchor's newest.
      std::vector<Operation *> memberOps(member->ops.begin(), member->ops.end());
      bool merged = false;
      for (auto [a, shared] : candidates) {
        if (!tryMerge(anchors[a], *member, memberOps, *shared, totals)) {
          if (!mergeLog_.hasFuel()) break; // no later candidate can merge either
          continue;
        }
        ++anchors[a].members;
        addRegions(a, memberOps);
        merged = changed = true;
        break;
      }
      if (!merged) {
        anchors.push_back({id, 1, false, holdingsOf(*member)});
        addRegions(anchors.size() - 1, memberOps);
      }
    }
    // The collapsed copy_ins leave their subgraphs and the IR, once per group.
    if (!doomed_.empty()) {
      for (const Anchor &a : anchors) {
        if (!a.merged) continue;
        std::vector<Operation *> &ops = graph_.find(a.id)->ops;
        ops.erase(std::remove_if(ops.begin(), ops.end(),
                                 [&](Operation *op) { return doomed_.contains(op); }),
                  ops.end());
      }
      for (Operation *op : doomed_) op->dropOperandUses();
      for (Operation *op : doomed_) f_.erase(op);
      doomed_.clear();
    }
    return changed;
  }

  // Merges `member` into the anchor when no merge rule refuses (MergeRules; the
  // copy-in and L1 bytes are those of the merged subgraph, duplicates counted once).
  bool tryMerge(Anchor &anchor, Subgraph &member, llvm::ArrayRef<Operation *> memberOps,
                const Operation &shared, MergeTotals &totals) {
    int64_t anchorId = anchor.id, memberId = member.id;
    auto [addedAll, addedL1] = addedBytes(anchor.holdings, memberOps);
    int64_t footprint = anchor.holdings.l1Bytes + addedL1;
    MergeProposal p{*graph_.find(anchorId), member};
    p.copyInCap = options_.copyInUpperBound;
    p.copyInMerged = anchor.holdings.copyInBytes + addedAll;
    if (footprint > device_.buffers.l1)
      p.bufferOverflow = MergeProposal::Buffer{
          MergeVerdict::RefusedL1Capacity,
          std::to_string(footprint) + " > " + std::to_string(device_.buffers.l1) +
              " bytes of L1 on device '" + device_.name + "'"};
    // The merge is logged after the duplicates it removes are known.
    std::string reason;
    MergeVerdict v = MergeRules(graph_, mergeLog_).check(p, reason);
    if (v == MergeVerdict::Merged && !graph_.merge(anchorId, memberId)) {
      v = MergeVerdict::RefusedCycle;
      reason = cycleRefusalDetail(graph_);
    }
    if (v != MergeVerdict::Merged) {
      mergeLog_.record(anchorId, memberId, v, reason);
      return false;
    }
    std::vector<std::string> keptNotes;
    auto [removed, bytes] = absorb(anchor, memberOps, keptNotes);
    totals.copyInsRemoved += removed;
    totals.bytesSaved += bytes;
    mergeLog_.record(anchorId, memberId, MergeVerdict::Merged,
                     "shares " + regionText(shared) + "; removed " + std::to_string(removed) +
                         " copy_in(s), " + std::to_string(bytes) + " bytes; L1 footprint " +
                         std::to_string(footprint) + " bytes");
    for (const std::string &note : keptNotes) mergeLog_.note(note);
    return true;
  }

  ir::Func &f_;
  unsigned funcIndex_;
  const L1ReuseMergeOptions &options_;
  const target::DeviceSpec &device_;
  CostModel cost_;
  SubgraphGraph graph_;
  llvm::raw_ostream *log_;
  MergeLog &mergeLog_;
  llvm::DenseMap<const Operation *, unsigned> bodyPosition_;
  llvm::DenseSet<Operation *> doomed_; ///< collapsed copy_ins, erased once per group
};

class L1ReuseMergePass final : public Pass {
public:
  explicit L1ReuseMergePass(const L1ReuseMergeOptions &options) : options_(options) {}
  llvm::StringRef argument() const override { return kPassName; }

  PassResult run(ir::Module &m, PassContext &ctx) override {
    bool failed = false;
    for (ir::Func &f : m.funcs())
      if (ir::Level l = ir::levelOf(f); l == ir::Level::Tensor || l == ir::Level::Tile) {
        m.context().emitError(f.loc())
            << "'" << argument() << "' needs a partitioned function, but @" << f.name()
            << " has no subgraph table; run partition first";
        failed = true;
      }
    if (failed) return PassResult::failure();
    if (!checkGroupSetting(m, options_.setting, options_.mode,
                           {argument(), "cube-l1-reuse-setting", "members per anchor",
                            target::CoreKind::AIC}))
      return PassResult::failure();
    if (options_.mode == 0) return PassResult::unchanged();

    llvm::raw_ostream *log = ctx.debugStream(argument());
    MergeLog mergeLog(argument(), log, options_.fuel);
    MergeTotals totals;
    bool changed = false;
    unsigned funcIndex = 0;
    for (ir::Func &f : m.funcs()) {
      if (ir::levelOf(f) == ir::Level::Partitioned) {
        L1ReuseMerger merger(f, funcIndex, options_, ctx.device, log, mergeLog);
        PassResult r = merger.run(totals);
        failed |= r.failed();
        changed |= r.didChange();
      }
      ++funcIndex;
    }
    merges_ += mergeLog.count(MergeVerdict::Merged);
    copyInsRemoved_ += totals.copyInsRemoved;
    bytesSaved_ += totals.bytesSaved;
    refusedCopyInCap_ += mergeLog.count(MergeVerdict::RefusedCopyInCap);
    refusedL1_ += mergeLog.count(MergeVerdict::RefusedL1Capacity);
    refusedCycle_ += mergeLog.count(MergeVerdict::RefusedCycle);
    refusedScope_ += mergeLog.count(MergeVerdict::RefusedScope);
    refusedFuel_ += mergeLog.count(MergeVerdict::RefusedFuel);
    return failed ? PassResult::failure() : PassResult::changed(changed);
  }

private:
  L1ReuseMergeOptions options_;
  PassStatistic merges_{this, "merges", "Cube subgraphs merged into an anchor"};
  PassStatistic copyInsRemoved_{this, "copy-ins-removed",
                                "Duplicate L1 copy_ins removed from merged subgraphs"};
  PassStatistic bytesSaved_{this, "bytes-saved", "GM bytes no longer copied in"};
  PassStatistic refusedCopyInCap_{this, "refused-copy-in-cap",
                                  "Merges refused: copy-in bytes over mg-copyin-upper-bound"};
  PassStatistic refusedL1_{this, "refused-l1-capacity",
                           "Merges refused: L1 footprint over the device's L1"};
  PassStatistic refusedCycle_{this, "refused-cycle",
                              "Merges refused: would create a dependency cycle"};
  PassStatistic refusedScope_{this, "refused-scope", "Merges refused: an sg_scope"};
  PassStatistic refusedFuel_{this, "refused-fuel", "Merges refused: merge-fuel ran out"};
};

} // namespace

int64_t l1FootprintBytes(llvm::ArrayRef<Operation *> ops) {
  return dedupedBytes(ops, [](const Operation &op) { return isL1CopyIn(op); });
}

int64_t dedupedCopyInBytes(llvm::ArrayRef<Operation *> ops) {
  return dedupedBytes(ops, [](const Operation &) { return true; });
}

std::unique_ptr<Pass> createL1ReuseMergePass(const L1ReuseMergeOptions &options) {
  return std::make_unique<L1ReuseMergePass>(options);
}

void registerL1ReuseMergePass(PassRegistry &registry) {
  static const OptionRow<L1ReuseMergeOptions> kRows[] = {
      {"cube-l1-reuse-mode", &L1ReuseMergeOptions::mode,
       "0 off, 1 automatic (N = group size / (2 x AIC cores)), 2 from cube-l1-reuse-setting",
       0, 2},
      {"cube-l1-reuse-setting", &L1ReuseMergeOptions::setting,
       "mode 2: {hash_order: members per anchor, func<F>_<order>: members per anchor, -1: "
       "default} (a func<F>_ key wins in its root function); groups without an entry, and a "
       "count of 0, use the automatic count",
       double(kAutomaticCount)},
      copyInUpperBoundRow(&L1ReuseMergeOptions::copyInUpperBound),
      mergeFuelRow(&L1ReuseMergeOptions::fuel),
  };
  registry.add({"l1-reuse-merge",
                "Merge cube subgraphs that copy the same GM region into L1, so it is loaded once",
                declareOptions(kRows), [](const PassOptionValues &v) {
                  return createL1ReuseMergePass(readOptions(kRows, v));
                }});
}

} // namespace ptoc::passes
