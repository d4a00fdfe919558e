// Program helpers: pipe names, group keys, successor lists and totals over the execute
// graph.
#include "ptoc/codegen/Program.h"

#include "ptoc/analysis/Subgraphs.h"

namespace ptoc::codegen {

llvm::StringRef pipeName(Pipe p) {
  switch (p) {
  case Pipe::Mte2: return "MTE2";
  case Pipe::Mte1: return "MTE1";
  case Pipe::Cube: return "CUBE";
  case Pipe::Fixpipe: return "FIXPIPE";
  case Pipe::Vec: return "VEC";
  case Pipe::Mte3: return "MTE3";
  }
  return "?";
}

std::string Program::groupKey(int leaf) const {
  return analysis::hashOrderKey(leaves[leaf].funcIndex, leaves[leaf].hashOrder);
}

std::vector<std::vector<int>> Program::successors() const {
  std::vector<std::vector<int>> succ(calls.size());
  for (size_t c = 0; c < calls.size(); ++c)
    for (int p : calls[c].preds) succ[p].push_back(static_cast<int>(c));
  return succ;
}

int64_t Program::totalFlops() const {
  int64_t total = 0;
  for (const Call &c : calls) total += leaves[c.leaf].flops;
  return total;
}

int64_t Program::totalVectorBytes() const {
  int64_t total = 0;
  for (const Call &c : calls) total += leaves[c.leaf].vectorBytes;
  return total;
}

} // namespace ptoc::codegen
