// CompileStats: counted from the partitioned function's subgraph table.
#include "ptoc/session/CompileStats.h"

#include <algorithm>

#include "ptoc/analysis/CostModel.h"
#include "ptoc/analysis/Subgraphs.h"
#include "ptoc/ir/Func.h"
#include "ptoc/ir/Level.h"
#include "ptoc/ir/Operation.h"

namespace ptoc::session {

uint64_t CompileStats::statistic(llvm::StringRef pass, llvm::StringRef name) const {
  uint64_t total = 0;
  for (const passes::PassStatisticValue &s : passStatistics)
    if (s.pass == pass && s.name == name) total += s.value;
  return total;
}

void collectSubgraphStats(ir::Func &func, unsigned funcIndex, const target::DeviceSpec &device,
                          CompileStats &stats) {
  if (ir::levelOf(func) != ir::Level::Partitioned) return;
  analysis::CostModel cost(device);
  analysis::SubgraphGraph graph = analysis::SubgraphGraph::fromFunc(func, cost);
  graph.summarise();
  // A module with loops adds each root function's groups after the previous ones'.
  size_t first = stats.groups.size();
  for (const analysis::Subgraph *sg : graph.subgraphs()) {
    ++stats.subgraphs;
    if (sg->core == target::CoreKind::AIC) ++stats.aicSubgraphs;
    if (sg->core == target::CoreKind::AIV) ++stats.aivSubgraphs;
    size_t order = first + size_t(std::max<int64_t>(sg->hashOrder, 0));
    if (stats.groups.size() <= order) stats.groups.resize(order + 1);
    GroupStats &g = stats.groups[order];
    g.hashOrder = sg->hashOrder;
    g.key = analysis::hashOrderKey(funcIndex, sg->hashOrder);
    g.funcIndex = funcIndex;
    g.core = sg->core;
    ++g.size;
    g.cycles = std::max(g.cycles, sg->cycles);
    g.copyInBytes = std::max(g.copyInBytes, sg->copyInBytes);
  }
}

} // namespace ptoc::session
