// The local schedule of a subgraph (see LocalSchedule.h): a depth-first order from the
// sinks, the in-place rule, and the peak local-buffer bytes of an order.
#include "ptoc/analysis/LocalSchedule.h"

#include <algorithm>

#include "llvm/ADT/DenseMap.h"
#include "ptoc/ir/DType.h"
#include "ptoc/ir/OpDef.h"

namespace ptoc::analysis {

int64_t localTileBytes(ir::Type type, int64_t blockBytes) {
  auto alignUp = [&](int64_t v) { return (v + blockBytes - 1) / blockBytes * blockBytes; };
  int64_t es = ir::elementSize(type.dtype());
  llvm::ArrayRef<int64_t> shape = type.shape();
  if (shape.empty()) return alignUp(es);
  int64_t bytes = alignUp(shape.back() * es);
  for (int64_t d : shape.drop_back()) bytes *= d;
  return bytes;
}

bool computesInPlace(const ir::Operation &op, unsigned operand) {
  if (operand >= op.numOperands() || op.numResults() != 1) return false;
  ir::Type result = op.resultType(), in = op.operandType(operand);
  if (!result.isTile() || !in.isTile() || result.space() != in.space()) return false;
  switch (op.def().cls) {
  case ir::OpClass::ElementwiseUnary:
  case ir::OpClass::ElementwiseBinary:
  case ir::OpClass::Cast:
    // Same shape (not a broadcast operand) and element size: the result takes exactly
    // the operand's space, element i over element i.
    return result.shape() == in.shape() &&
           ir::elementSize(result.dtype()) == ir::elementSize(in.dtype());
  case ir::OpClass::Matmul:
    // Accumulates onto its acc, never over an a/b operand (those are L1 tiles anyway).
    return operand == 2 && result.space() == ir::MemSpace::L0C && result.shape() == in.shape();
  default: return false;
  }
}

// ---------------------------------------------------------------- scheduler

void LocalScheduler::reset(int numOps) {
  numOps_ = numOps;
  lastOp_ = -1;
  depStart_.assign(numOps + 1, 0);
  deps_.clear();
  eager_.assign(numOps, 0);
}

void LocalScheduler::addDep(int op, int on) {
  // Contiguous per op, ops ascending: depStart_[op + 1] counts op's entries so far.
  if (op != lastOp_) {
    for (int o = lastOp_ + 1; o <= op; ++o) depStart_[o] = static_cast<int>(deps_.size());
    lastOp_ = op;
  }
  deps_.push_back(on);
}

void LocalScheduler::setEager(int op) { eager_[op] = 1; }

void LocalScheduler::issue(int op) {
  issued_[op] = 1;
  order_.push_back(op);
  // A copy_out goes right behind the last thing it waits for: its tile can die.
  for (int i = userStart_[op]; i < userStart_[op + 1]; ++i) {
    int u = users_[i];
    if (!eager_[u] || issued_[u]) continue;
    bool ready = true;
    for (int j = depStart_[u]; j < depStart_[u + 1] && ready; ++j) ready = issued_[deps_[j]];
    if (ready) issue(u); // an eager op's users are copy_ins (not eager): depth 1
  }
}

llvm::ArrayRef<int> LocalScheduler::run() {
  int n = numOps_;
  for (int o = lastOp_ + 1; o <= n; ++o) depStart_[o] = static_cast<int>(deps_.size());
  lastOp_ = n - 1;
  // Each op's dependencies ascending (body order) and unique: operands are visited
  // earliest first, so a K loop's previous step comes before this step's loads.
  for (int op = 0; op < n; ++op) {
    auto begin = deps_.begin() + depStart_[op], end = deps_.begin() + depStart_[op + 1];
    std::sort(begin, end);
  }
  userStart_.assign(n + 1, 0);
  for (int op = 0; op < n; ++op)
    for (int j = depStart_[op]; j < depStart_[op + 1]; ++j)
      if (j == depStart_[op] || deps_[j] != deps_[j - 1]) ++userStart_[deps_[j] + 1];
  for (int op = 0; op < n; ++op) userStart_[op + 1] += userStart_[op];
  users_.resize(userStart_[n]);
  userFill_.assign(userStart_.begin(), userStart_.end() - 1);
  for (int op = 0; op < n; ++op)
    for (int j = depStart_[op]; j < depStart_[op + 1]; ++j)
      if (j == depStart_[op] || deps_[j] != deps_[j - 1]) users_[userFill_[deps_[j]]++] = op;

  // The sinks, grouped by member: a member (a weakly connected part of the
  // dependencies) with several sinks, e.g. two outputs, runs all of them before the
  // next member starts, whose sinks come later in body order than the first member's
  // first sink. Taken in plain body order, expand-tiles' one loop per tensor op
  // would issue every member's first output, then every member's second, keeping
  // the tiles the outputs share live for all members at once.
  component_.resize(n);
  for (int op = 0; op < n; ++op) component_[op] = op;
  auto find = [&](int op) {
    while (component_[op] != op) op = component_[op] = component_[component_[op]];
    return op;
  };
  for (int op = 0; op < n; ++op)
    for (int j = depStart_[op]; j < depStart_[op + 1]; ++j) {
      int a = find(op), b = find(deps_[j]);
      if (a != b) component_[std::max(a, b)] = std::min(a, b);
    }
  // firstSink_[c]: the body position of component c's first sink (c = its least op).
  sinks_.clear();
  firstSink_.assign(n, n);
  for (int op = 0; op < n; ++op) {
    if (userStart_[op] != userStart_[op + 1]) continue; // not a sink
    sinks_.push_back(op);
    int c = find(op);
    firstSink_[c] = std::min(firstSink_[c], op);
  }
  std::stable_sort(sinks_.begin(), sinks_.end(),
                   [&](int a, int b) { return firstSink_[find(a)] < firstSink_[find(b)]; });

  issued_.assign(n, 0);
  order_.clear();
  order_.reserve(n);
  for (int root : sinks_) {
    if (issued_[root]) continue;
    stack_.clear();
    stack_.push_back({root, depStart_[root]});
    while (!stack_.empty()) {
      auto &[op, next] = stack_.back();
      while (next < depStart_[op + 1] && issued_[deps_[next]]) ++next;
      if (next < depStart_[op + 1]) {
        int dep = deps_[next];
        // On a cycle the walk would come back to an op on the stack: give up.
        if (stack_.size() > static_cast<size_t>(n)) return {};
        stack_.push_back({dep, depStart_[dep]});
        continue;
      }
      int done = op;
      stack_.pop_back();
      if (!issued_[done]) issue(done);
    }
  }
  if (static_cast<int>(order_.size()) != n) return {}; // a cycle: some op never became a sink's ancestor
  return order_;
}

// ---------------------------------------------------------------- helpers on ops

std::vector<const ir::Operation *> scheduleLocalOps(llvm::ArrayRef<const ir::Operation *> ops,
                                                    LocalScheduler &scheduler) {
  llvm::DenseMap<const ir::Operation *, int> index;
  for (size_t i = 0; i < ops.size(); ++i) index[ops[i]] = static_cast<int>(i);
  scheduler.reset(static_cast<int>(ops.size()));
  for (size_t i = 0; i < ops.size(); ++i) {
    const ir::Operation &op = *ops[i];
    if (op.code() == ir::OpCode::CopyOut) scheduler.setEager(static_cast<int>(i));
    for (unsigned o = 0; o < op.numOperands(); ++o)
      if (const ir::Operation *def = op.operand(o)->definingOp())
        if (auto it = index.find(def); it != index.end())
          scheduler.addDep(static_cast<int>(i), it->second);
  }
  llvm::ArrayRef<int> order = scheduler.run();
  if (order.size() != ops.size()) return {ops.begin(), ops.end()}; // cyclic: keep body order
  std::vector<const ir::Operation *> out;
  out.reserve(ops.size());
  for (int i : order) out.push_back(ops[i]);
  return out;
}

int64_t localPeakBytes(llvm::ArrayRef<const ir::Operation *> ordered, ir::MemSpace space,
                       int64_t blockBytes) {
  llvm::DenseMap<const ir::Operation *, int> index;
  for (size_t i = 0; i < ordered.size(); ++i) index[ordered[i]] = static_cast<int>(i);
  size_t n = ordered.size();
  // Per op: its tile bytes in `space` (0 if elsewhere), its last reader in the set.
  std::vector<int64_t> bytes(n, 0);
  std::vector<int> lastUse(n);
  for (size_t i = 0; i < n; ++i) {
    lastUse[i] = static_cast<int>(i);
    const ir::Operation &op = *ordered[i];
    if (op.numResults() != 1) continue;
    ir::Type t = op.resultType();
    if (t.isTile() && t.space() == space) bytes[i] = localTileBytes(t, blockBytes);
  }
  auto localOperand = [&](const ir::Operation &op, unsigned o) {
    const ir::Operation *def = op.operand(o)->definingOp();
    auto it = def ? index.find(def) : index.end();
    return it == index.end() ? -1 : it->second;
  };
  // Dependency operands only order ops: they do not keep a tile alive.
  for (size_t i = 0; i < n; ++i)
    for (unsigned o = 0; o < ordered[i]->firstDependencyOperand(); ++o)
      if (int d = localOperand(*ordered[i], o); d >= 0)
        lastUse[d] = std::max(lastUse[d], static_cast<int>(i));
  // Sweep: at op i, live = results defined earlier and read at or after i, plus i's
  // own result unless it takes over an operand that dies here.
  std::vector<int64_t> freedAt(n, 0); // bytes leaving after op i
  int64_t live = 0, peak = 0;
  for (size_t i = 0; i < n; ++i) {
    const ir::Operation &op = *ordered[i];
    int64_t own = bytes[i];
    if (own > 0)
      for (unsigned o = 0; o < op.numOperands(); ++o) {
        int d = localOperand(op, o);
        if (d < 0 || lastUse[d] != static_cast<int>(i) || bytes[d] < own ||
            !computesInPlace(op, o))
          continue;
        // The result takes the operand's space: the operand's bytes stay, passed on.
        freedAt[i] -= bytes[d];
        freedAt[lastUse[i]] += bytes[d];
        own = 0;
        break;
      }
    live += own;
    peak = std::max(peak, live);
    freedAt[lastUse[i]] += own; // a result nothing reads leaves at once
    live -= freedAt[i];
  }
  return peak;
}

} // namespace ptoc::analysis
