// The timeline model's small helpers: names of families, lane kinds and cores, and the
// dependency lists every producer builds.
#include "ptoc/profile/Timeline.h"

#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"

namespace ptoc::profile {

llvm::StringRef familyName(TimelineFamily family) {
  switch (family) {
  case TimelineFamily::PtocRun: return "ptoc-run";
  case TimelineFamily::PtocTrace: return "ptoc-trace";
  case TimelineFamily::MachineView: return "pypto-machine-view";
  case TimelineFamily::WorkerView: return "pypto-worker-view";
  }
  return "?";
}

llvm::StringRef laneKindLabel(LaneKind kind) {
  switch (kind) {
  case LaneKind::Aic: return "AIC";
  case LaneKind::Aiv: return "AIV";
  case LaneKind::Control: return "control";
  }
  return "?";
}

std::string mergedCoreLabel(llvm::StringRef a, llvm::StringRef b) {
  if (a == b) return a.str();
  auto has = [&](llvm::StringRef kind) { return a.contains(kind) || b.contains(kind); };
  if (has(laneKindLabel(LaneKind::Aic)) && has(laneKindLabel(LaneKind::Aiv)))
    return kBothKindsLabel.str();
  return a.str();
}

std::string Timeline::coreName(LaneKind kind, int index) const {
  int base = kind == LaneKind::Aic ? aicNameBase : aivNameBase;
  return absl::StrCat(laneKindLabel(kind).str(), "_", base + index);
}

void EdgeList::moveInto(Timeline &timeline) {
  auto byConsumer = [](const Edge &a, const Edge &b) { return a.consumer < b.consumer; };
  // Producers mostly add edges consumer by consumer already.
  if (!std::is_sorted(edges.begin(), edges.end(), byConsumer))
    std::stable_sort(edges.begin(), edges.end(), byConsumer);
  size_t tasks = timeline.tasks.size();
  timeline.predStart.assign(tasks + 1, 0);
  timeline.preds.clear();
  timeline.writeOrder.clear();
  timeline.preds.reserve(edges.size());
  bool anyWriteOrder = false;
  for (const Edge &e : edges) anyWriteOrder |= e.writeOrder;
  if (anyWriteOrder) timeline.writeOrder.reserve(edges.size());
  size_t next = 0;
  for (size_t t = 0; t < tasks; ++t) {
    timeline.predStart[t] = static_cast<int>(timeline.preds.size());
    for (; next < edges.size() && edges[next].consumer == static_cast<int>(t); ++next) {
      timeline.preds.push_back(edges[next].producer);
      if (anyWriteOrder) timeline.writeOrder.push_back(edges[next].writeOrder ? 1 : 0);
    }
  }
  timeline.predStart[tasks] = static_cast<int>(timeline.preds.size());
  std::vector<Edge>().swap(edges);
}

std::vector<int> topologicalOrder(const Timeline &t) {
  size_t n = t.tasks.size();
  // ptoc's calls come in a topological order already (every predecessor earlier).
  bool indexOrder = true;
  for (size_t c = 0; c < n && indexOrder; ++c)
    for (int p : t.predsOf(static_cast<int>(c))) indexOrder &= p < static_cast<int>(c);
  if (indexOrder) {
    std::vector<int> order(n);
    for (size_t i = 0; i < n; ++i) order[i] = static_cast<int>(i);
    return order;
  }
  std::vector<int> indegree(n, 0), succStart(n + 1, 0), succ(t.preds.size());
  for (size_t c = 0; c < n; ++c)
    for (int p : t.predsOf(static_cast<int>(c))) {
      ++indegree[c];
      ++succStart[p + 1];
    }
  for (size_t i = 0; i < n; ++i) succStart[i + 1] += succStart[i];
  std::vector<int> fill(succStart.begin(), succStart.end() - 1);
  for (size_t c = 0; c < n; ++c)
    for (int p : t.predsOf(static_cast<int>(c))) succ[fill[p]++] = static_cast<int>(c);
  std::vector<int> order;
  order.reserve(n);
  std::vector<char> queued(n, 0);
  auto push = [&](int v) {
    queued[v] = 1;
    order.push_back(v);
  };
  for (size_t i = 0; i < n; ++i)
    if (indegree[i] == 0) push(static_cast<int>(i));
  // When only tasks on a cycle (or after one) are left, the earliest-starting of them
  // goes next as if its remaining predecessors were done: a cycle is broken there.
  std::vector<int> byStart;
  size_t nextByStart = 0;
  for (size_t head = 0; order.size() < n || head < order.size();) {
    if (head == order.size()) {
      if (byStart.empty()) {
        for (size_t i = 0; i < n; ++i) byStart.push_back(static_cast<int>(i));
        std::stable_sort(byStart.begin(), byStart.end(), [&](int a, int b) {
          return t.tasks[a].start < t.tasks[b].start;
        });
      }
      while (queued[byStart[nextByStart]]) ++nextByStart;
      push(byStart[nextByStart]);
    }
    int v = order[head++];
    for (int k = succStart[v]; k < succStart[v + 1]; ++k)
      if (--indegree[succ[k]] == 0 && !queued[succ[k]]) push(succ[k]);
  }
  return order;
}

std::vector<double> measuredEnds(const Timeline &t, const std::vector<int> &order) {
  constexpr double kNone = -std::numeric_limits<double>::infinity();
  std::vector<double> ends(t.tasks.size(), kNone);
  // Predecessors come first in `order`, except across a broken cycle.
  for (size_t v = 0; v < t.tasks.size(); ++v)
    if (!t.isControl(static_cast<int>(v))) ends[v] = t.tasks[v].end();
  for (int v : order)
    if (t.isControl(v))
      for (int p : t.predsOf(v)) ends[v] = std::max(ends[v], ends[p]);
  return ends;
}

} // namespace ptoc::profile
