// The merge rules shared by every merge pass (see MergeRules.h).
#include "ptoc/passes/MergeRules.h"

#include <algorithm>
#include <cmath>

#include "ptoc/target/CoreKind.h"

namespace ptoc::passes {

using analysis::Subgraph;
using analysis::SubgraphGraph;

// ---------------------------------------------------------------- merge counts

llvm::StringRef countSourceName(CountSource s) {
  switch (s) {
  case CountSource::Off: return "off";
  case CountSource::Automatic: return "automatic";
  case CountSource::SettingKey: return "setting key";
  case CountSource::SettingDefault: return "setting default -1";
  }
  return "";
}

MergeCount chooseMergeCount(int64_t mode, const GroupSetting &setting, unsigned funcIndex,
                            int64_t hashOrder, int64_t automatic) {
  if (mode == 0) return {1, CountSource::Off, GroupKey()};
  if (mode == 2)
    if (auto entry = lookupGroupSetting(setting, funcIndex, hashOrder);
        entry && entry->second != kAutomaticCount)
      return {entry->second,
              entry->first.isDefault() ? CountSource::SettingDefault : CountSource::SettingKey,
              entry->first};
  return {automatic, CountSource::Automatic, GroupKey()};
}

int64_t automaticNBuffer(int64_t groupSize, int64_t cores) {
  if (cores <= 0 || groupSize <= cores) return 1;
  auto ceilDiv = [](int64_t a, int64_t b) { return (a + b - 1) / b; };
  int64_t n = ceilDiv(groupSize, cores);
  while (n > 1 && ceilDiv(groupSize, n) < cores) --n;
  return n;
}

int64_t pipelinedNBuffer(int64_t groupSize, int64_t cores, int64_t hiddenCycles,
                         int64_t steadyCycles) {
  int64_t oneWave = automaticNBuffer(groupSize, cores);
  if (oneWave <= 1 || hiddenCycles <= 0) return 1;
  if (steadyCycles <= 0) return oneWave;
  double perCore = double(groupSize) / double(cores);
  double best = std::ceil(std::sqrt(perCore * double(hiddenCycles) / double(steadyCycles)));
  return std::clamp<int64_t>(static_cast<int64_t>(best), 1, oneWave);
}

int64_t controlThreadNBuffer(int64_t taskCycles, int64_t groupSize, int64_t memberCycles) {
  if (groupSize <= 1 || taskCycles <= 0) return 1;
  if (memberCycles <= 0) return groupSize;
  int64_t n = std::clamp<int64_t>((taskCycles + memberCycles - 1) / memberCycles, 1, groupSize);
  // The same number of tasks with the members spread as evenly as chunks allow.
  int64_t tasks = (groupSize + n - 1) / n;
  return (groupSize + tasks - 1) / tasks;
}

int64_t controlThreadTaskCycles(llvm::ArrayRef<BodyGroup> groups,
                                const target::DeviceSpec &device) {
  double build = device.scheduler.controlTaskCycles;
  if (groups.empty()) return 0;
  double aic = 0, aiv = 0;
  int64_t longest = 0;
  for (const BodyGroup &g : groups) {
    double work = double(g.size) * double(std::max<int64_t>(g.memberCycles, 0));
    if (g.core == target::CoreKind::AIC) aic += work;
    else if (g.core == target::CoreKind::AIV) aiv += work;
    if (g.mergeable) longest = std::max(longest, g.size * std::max<int64_t>(g.memberCycles, 0));
  }
  double bound = std::max(device.aicCores > 0 ? aic / device.aicCores : 0.0,
                          device.aivCores > 0 ? aiv / device.aivCores : 0.0);
  double iteration = device.scheduler.controlIterationCycles;
  auto fits = [&](int64_t tau) {
    int64_t tasks = 0;
    for (const BodyGroup &g : groups) {
      int64_t n = g.mergeable ? controlThreadNBuffer(tau, g.size, g.memberCycles) : 1;
      tasks += (g.size + n - 1) / n;
    }
    return iteration + build * double(tasks) <= bound;
  };
  if (fits(0)) return 0;
  if (!fits(longest)) return longest;
  int64_t lo = 0, hi = longest; // fits(hi), !fits(lo): the least fitting tau in (lo, hi]
  while (hi - lo > 1) {
    int64_t mid = lo + (hi - lo) / 2;
    (fits(mid) ? hi : lo) = mid;
  }
  return hi;
}

int64_t l1ReuseAutomaticCount(int64_t groupSize, int64_t aicCores) {
  if (aicCores <= 0) return 1;
  return std::max<int64_t>(1, groupSize / (2 * aicCores));
}

int64_t automaticUpperBound(int64_t totalCycles) {
  if (totalCycles >= 10'000'000) return 5'000'000;
  if (totalCycles >= 290'000) return 150'000;
  if (totalCycles >= 50'000) return 10'000;
  return 1536;
}

// ---------------------------------------------------------------- verdicts and the log

llvm::StringRef mergeVerdictName(MergeVerdict v) {
  switch (v) {
  case MergeVerdict::Merged: return "merged";
  case MergeVerdict::RefusedParallelism: return "parallelism-floor";
  case MergeVerdict::RefusedCopyInCap: return "copy-in-cap";
  case MergeVerdict::RefusedL1Capacity: return "l1-capacity";
  case MergeVerdict::RefusedUbCapacity: return "ub-capacity";
  case MergeVerdict::RefusedScope: return "scope";
  case MergeVerdict::RefusedCycleBound: return "cycle-bound";
  case MergeVerdict::RefusedCycle: return "would-create-cycle";
  case MergeVerdict::RefusedCoreKind: return "core-kind";
  case MergeVerdict::RefusedFuel: return "fuel";
  }
  return "?";
}

void MergeLog::record(int64_t into, int64_t from, MergeVerdict verdict, llvm::StringRef detail) {
  ++counts_[static_cast<unsigned>(verdict)];
  if (verdict == MergeVerdict::Merged) ++merged_;
  if (!debug_) return;
  *debug_ << pass_ << ": merge sg " << into << " <- sg " << from << ": ";
  if (verdict == MergeVerdict::Merged) *debug_ << "merged";
  else *debug_ << "refused (" << mergeVerdictName(verdict) << ")";
  if (!detail.empty()) *debug_ << ": " << detail;
  *debug_ << "\n";
}

void MergeLog::note(llvm::StringRef text) {
  if (debug_) *debug_ << pass_ << ": " << text << "\n";
}

std::string cycleRefusalDetail(const SubgraphGraph &graph) {
  if (graph.lastCycleCheckGaveUp())
    return "too far apart to prove there is no path between them (searched " +
           std::to_string(SubgraphGraph::kCycleSearchBudget) + " subgraphs)";
  return "a dependency path between them runs through another subgraph";
}

// ---------------------------------------------------------------- the rules

MergeVerdict MergeRules::check(const MergeProposal &p, std::string &reason) const {
  const Subgraph &a = p.into, &b = p.from;
  auto sg = [](const Subgraph &s) { return "sg " + std::to_string(s.id); };
  if (a.scope != -1 || b.scope != -1) {
    const Subgraph &scoped = a.scope != -1 ? a : b;
    reason = sg(scoped) + " is in sg_scope " + std::to_string(scoped.scope);
    return MergeVerdict::RefusedScope;
  }
  if (a.core != b.core) {
    reason = sg(a) + " runs on " + std::string(target::coreKindName(a.core)) + ", " + sg(b) +
             " on " + std::string(target::coreKindName(b.core));
    return MergeVerdict::RefusedCoreKind;
  }
  if (const MergeProposal::Groups *g = p.groups ? &*p.groups : nullptr;
      g && g->sizeInto != g->sizeFrom) {
    int64_t smaller = std::min(g->sizeInto, g->sizeFrom);
    if (smaller < g->parallelLowerBound && g->smallerCycles > g->lowerBound) {
      reason = "groups of " + std::to_string(g->sizeInto) + " and " +
               std::to_string(g->sizeFrom) + " subgraphs: the smaller has " +
               std::to_string(smaller) + " < pg-parallel-lower-bound " +
               std::to_string(g->parallelLowerBound) + " members and " +
               std::to_string(g->smallerCycles) + " > pg-lower-bound " +
               std::to_string(g->lowerBound) + " cycles in total";
      return MergeVerdict::RefusedParallelism;
    }
  }
  if (p.cycleBound) {
    int64_t sum = a.cycles + b.cycles;
    if (sum > *p.cycleBound) {
      reason = std::to_string(a.cycles) + " + " + std::to_string(b.cycles) + " = " +
               std::to_string(sum) + " > " + std::to_string(*p.cycleBound) +
               " cycles (pg-upper-bound)";
      return MergeVerdict::RefusedCycleBound;
    }
  }
  if (p.copyInCap >= 0) {
    int64_t bytes = p.copyInMerged ? *p.copyInMerged : a.copyInBytes + b.copyInBytes;
    if (bytes > p.copyInCap) {
      reason = (p.copyInMerged ? std::to_string(bytes)
                               : std::to_string(a.copyInBytes) + " + " +
                                     std::to_string(b.copyInBytes)) +
               " > " + std::to_string(p.copyInCap) + " copy-in bytes (mg-copyin-upper-bound)";
      return MergeVerdict::RefusedCopyInCap;
    }
  }
  if (p.bufferOverflow) {
    reason = p.bufferOverflow->why;
    return p.bufferOverflow->verdict;
  }
  if (!log_.hasFuel()) {
    reason = "merge-fuel spent";
    return MergeVerdict::RefusedFuel;
  }
  return MergeVerdict::Merged;
}

MergeVerdict MergeRules::tryMerge(const MergeProposal &p, llvm::StringRef mergedDetail,
                                  llvm::StringRef consequence) {
  int64_t into = p.into.id, from = p.from.id;
  std::string reason;
  MergeVerdict v = check(p, reason);
  if (v == MergeVerdict::Merged && !graph_.merge(into, from)) {
    v = MergeVerdict::RefusedCycle;
    reason = cycleRefusalDetail(graph_);
  }
  if (v == MergeVerdict::Merged) log_.record(into, from, v, mergedDetail);
  else log_.record(into, from, v, reason + consequence.str());
  return v;
}

} // namespace ptoc::passes
