// Partitioned function -> Program: the GM tensors, one leaf per distinct subgraph
// (its ops in leaf order, found by a canonical signature of that order, so
// isomorphic subgraphs share it), one call per subgraph with its concrete GM regions,
// and the calls in a deterministic topological order. Per-call work is two passes
// over the subgraph's ops (its leaf order, its signature) with no string building.
#include <algorithm>
#include <optional>
#include <queue>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

#include "GmTensors.h"
#include "LeafBuilder.h"
#include "ptoc/analysis/CostModel.h"
#include "ptoc/analysis/LocalSchedule.h"
#include "ptoc/analysis/Subgraphs.h"
#include "ptoc/codegen/Codegen.h"
#include "ptoc/ir/Context.h"
#include "ptoc/ir/Diagnostics.h"
#include "ptoc/ir/Level.h"
#include "ptoc/ir/StableHash.h"
#include "ptoc/ir/Verifier.h"
#include "ptoc/target/DeviceSpec.h"

namespace ptoc::codegen {
namespace {

using ir::OpCode;

/// One row of the function's `subgraph` table.
struct TableEntry {
  int64_t id = -1;
  target::CoreKind core = target::CoreKind::None;
  llvm::StringRef hash; ///< owned by the Context
  int64_t hashOrder = -1;
  int64_t groupSize = 0;
};

// Signature entries that are not op indices.
constexpr int64_t kGmRegion = -2; ///< a copy's GM side (its region is per call)

class ProgramBuilder {
public:
  ProgramBuilder(const ir::Func &func, const target::DeviceSpec &device,
                 const CodegenOptions &options, unsigned funcIndex)
      : func_(func), device_(device), options_(options), cost_(device) {
    program_.funcIndex = funcIndex;
  }

  absl::StatusOr<Program> build() {
    if (absl::Status st = checkLevel(); !st.ok()) return st;
    absl::StatusOr<GmTensorTable> tensors = collectGmTensors(func_);
    if (!tensors.ok()) return tensors.status();
    tensors_ = std::move(*tensors);
    program_.funcName = func_.name().str();
    if (absl::Status st = readTable(); !st.ok()) return st;
    groupOps();
    std::vector<Call> calls(table_.size());
    for (int s = 0; s < static_cast<int>(table_.size()); ++s)
      if (absl::Status st = compileSubgraph(s, calls[s]); !st.ok()) return st;
    if (absl::Status st = orderCalls(std::move(calls)); !st.ok()) return st;
    numberLeaves();
    program_.tensors = std::move(tensors_.tensors);
    program_.arguments = std::move(tensors_.arguments);
    program_.results = std::move(tensors_.results);
    return std::move(program_);
  }

private:
  absl::Status checkLevel() const {
    ir::Level level = ir::levelOf(func_);
    if (level == ir::Level::Tensor || level == ir::Level::Tile)
      return absl::InvalidArgumentError(absl::StrCat(
          "@", func_.name().str(), " is at the ",
          level == ir::Level::Tensor ? "tensor" : "tile",
          " level, but codegen needs a partitioned function (a subgraph table, every tile op "
          "in a subgraph); run a pipeline that partitions, e.g. --pipeline=default"));
    if (!options_.verify) return absl::OkStatus();
    ir::DiagnosticCollector diags(func_.context().diag());
    if (failed(ir::verify(func_, ir::VerifyOptions{&device_})))
      return absl::InvalidArgumentError(absl::StrCat("@", func_.name().str(),
                                                     " does not verify, so codegen cannot "
                                                     "compile it:\n",
                                                     diags.errorText()));
    return absl::OkStatus();
  }

  absl::Status readTable() {
    // Interned keys: one pointer comparison per attribute instead of string lookups.
    ir::Context &ctx = func_.context();
    ir::Identifier idKey = ctx.id("id"), coreKey = ctx.id("core"), hashKey = ctx.id("hash"),
                   orderKey = ctx.id("hash_order"), sizeKey = ctx.id("group_size");
    offsetsKey_ = ctx.id("offsets");
    scopeKey_ = ctx.id("sg_scope");
    for (const ir::Operation &op : func_.ops()) {
      if (op.code() != OpCode::Subgraph) continue;
      TableEntry e;
      ir::Attribute id, core, hash, order, size;
      for (const ir::NamedAttr &a : op.attrs()) {
        if (a.name == idKey) id = a.value;
        else if (a.name == coreKey) core = a.value;
        else if (a.name == hashKey) hash = a.value;
        else if (a.name == orderKey) order = a.value;
        else if (a.name == sizeKey) size = a.value;
      }
      std::optional<target::CoreKind> kind;
      if (core && core.isString()) kind = target::parseCoreKind(core.getString().str());
      if (!id || !id.isInt() || !kind || !hash || !hash.isString() || !order ||
          !order.isInt() || !size || !size.isInt())
        return absl::InvalidArgumentError(absl::StrCat(
            "'subgraph' op at ", op.loc().str(), ": codegen needs its id, core, hash, hash_order "
                            "and group_size; run partition again"));
      e.id = id.getInt();
      e.core = *kind;
      e.hash = hash.getString();
      e.hashOrder = order.getInt();
      e.groupSize = size.getInt();
      table_.push_back(std::move(e));
    }
    std::stable_sort(table_.begin(), table_.end(),
                     [](const TableEntry &a, const TableEntry &b) { return a.id < b.id; });
    for (int s = 0; s < static_cast<int>(table_.size()); ++s) indexOfId_[table_[s].id] = s;
    return absl::OkStatus();
  }

  // Numbers every op with its body position (walk marks) and lists each subgraph's ops
  // in function order (a counting sort: one flat array for all subgraphs); the leaf
  // order is computed per subgraph in scheduleSubgraph().
  void groupOps() {
    size_t numOps = func_.numOps();
    markBase_ = func_.reserveWalkMarks(numOps);
    sgOf_.assign(numOps, -1);
    localOf_.assign(numOps, -1);
    start_.assign(table_.size() + 1, 0);
    size_t pos = 0;
    for (const ir::Operation &op : func_.ops()) {
      op.walkMark = markBase_ + 1 + pos;
      if (op.isTileOp() && op.hasSubgraphId()) {
        auto it = indexOfId_.find(op.subgraphId());
        if (it != indexOfId_.end()) {
          sgOf_[pos] = it->second;
          localOf_[pos] = start_[it->second + 1]++; // count, then local index
        }
      }
      ++pos;
    }
    for (size_t s = 0; s < table_.size(); ++s) start_[s + 1] += start_[s];
    ops_.resize(start_.back());
    pos = 0;
    for (const ir::Operation &op : func_.ops()) {
      if (int s = sgOf_[pos]; s >= 0) ops_[start_[s] + localOf_[pos]] = &op;
      ++pos;
    }
  }

  /// The body position of `op` (its walk mark from groupOps()).
  size_t positionOf(const ir::Operation &op) const { return op.walkMark - markBase_ - 1; }

  absl::Status opError(const ir::Operation &op, int s, const std::string &what) const {
    return absl::InvalidArgumentError(absl::StrCat("'", op.name().str(), "' op at ",
                                                   op.loc().str(), " in subgraph ",
                                                   table_[s].id, ": ", what));
  }

  // Builds the subgraph's signature, its call's regions and predecessors, and finds
  // (or compiles) its leaf.
  absl::Status compileSubgraph(int s, Call &call) {
    llvm::ArrayRef<const ir::Operation *> ops = scheduleSubgraph(s);
    sig_.clear();
    preds_.clear();
    orderPreds_.clear();
    sig_.push_back(static_cast<int64_t>(table_[s].core));
    for (const ir::Operation *op : ops) {
      ir::Type type = op->resultType();
      bool isCopyIn = op->code() == OpCode::CopyIn, isCopyOut = op->code() == OpCode::CopyOut;
      // A copy's operand count varies with its dependencies on other subgraphs,
      // which are not code: the data operands count, and its own dependencies are
      // counted below.
      unsigned firstDep = op->firstDependencyOperand();
      sig_.push_back(static_cast<int64_t>(op->code()) | int64_t(type.dtype()) << 16 |
                     int64_t(type.isTile() ? type.space() : ir::MemSpace::GM) << 24 |
                     int64_t(type.rank()) << 32 | int64_t(isCopyIn ? 0 : firstDep) << 40);
      sig_.append(type.shape().begin(), type.shape().end());
      size_t depsAt = sig_.size();
      if (isCopyIn || isCopyOut) sig_.push_back(0);
      for (unsigned i = 0; i < op->numOperands(); ++i) {
        const ir::Value *v = op->operand(i);
        if ((isCopyIn && i == 0) || (isCopyOut && i == 1)) {
          auto it = tensors_.index.find(v);
          if (it == tensors_.index.end())
            return opError(*op, s,
                           absl::StrCat("operand ", i, " is not a GM tensor of the function"));
          ir::Attribute offsets;
          for (const ir::NamedAttr &a : op->attrs())
            if (a.name == offsetsKey_) offsets = a.value;
          if (!offsets || !offsets.isIntArray() ||
              offsets.getIntArray().size() != v->type().rank())
            return opError(*op, s, "needs 'offsets' with one entry per dimension of its tensor");
          Region &r = call.regions.emplace_back();
          r.tensor = it->second;
          r.offsets.assign(offsets.getIntArray().begin(), offsets.getIntArray().end());
          sig_.push_back(kGmRegion);
          continue;
        }
        const ir::Operation *def = v->definingOp();
        int from = def ? sgOf_[positionOf(*def)] : -1;
        bool isDep = i >= firstDep;
        if (from == s) {
          sig_.push_back(rank_[localOf_[positionOf(*def)]]);
          if (isDep) ++sig_[depsAt];
        } else if (isDep && from >= 0) {
          // An access by another subgraph: order, not code. A copy_out's keeps
          // writes of one region in order (data may flow on the edge too).
          (isCopyOut ? orderPreds_ : preds_).push_back(from);
        } else if (!isDep) {
          return opError(*op, s,
                         from >= 0 ? absl::StrCat("operand ", i, " is a local tile of subgraph ",
                                                  table_[from].id,
                                                  "; local tiles cannot cross subgraphs (only "
                                                  "copy_out/copy_in through GM can); run "
                                                  "partition again")
                                   : absl::StrCat("operand ", i, " is not a local tile of "
                                                                 "the subgraph"));
        }
      }
      // Attributes are uniqued per Context: equal handles are equal values.
      size_t countAt = sig_.size();
      sig_.push_back(0);
      for (const ir::NamedAttr &a : op->attrs()) {
        if (a.name == offsetsKey_ || a.name == scopeKey_) continue;
        sig_.push_back(static_cast<int64_t>(reinterpret_cast<uintptr_t>(a.name.data())));
        sig_.push_back(static_cast<int64_t>(reinterpret_cast<uintptr_t>(a.value.storage())));
        ++sig_[countAt];
      }
    }
    std::sort(preds_.begin(), preds_.end());
    preds_.erase(std::unique(preds_.begin(), preds_.end()), preds_.end());
    std::sort(orderPreds_.begin(), orderPreds_.end());
    orderPreds_.erase(std::unique(orderPreds_.begin(), orderPreds_.end()), orderPreds_.end());
    call.writeOrderPreds.assign(orderPreds_.begin(), orderPreds_.end());
    preds_.append(orderPreds_.begin(), orderPreds_.end());
    std::sort(preds_.begin(), preds_.end());
    preds_.erase(std::unique(preds_.begin(), preds_.end()), preds_.end());
    call.subgraph = static_cast<int>(table_[s].id);
    call.preds.assign(preds_.begin(), preds_.end()); // subgraph indices until orderCalls()

    uint64_t h = 0x5eed;
    for (int64_t x : sig_) h = ir::hashMix(h, static_cast<uint64_t>(x));
    llvm::SmallVector<int, 1> &candidates = leavesByHash_[h];
    for (int leaf : candidates) {
      auto [begin, end] = sigRange_[leaf];
      if (static_cast<size_t>(end - begin) == sig_.size() &&
          std::equal(sig_.begin(), sig_.end(), sigArena_.begin() + begin)) {
        call.leaf = leaf;
        return absl::OkStatus();
      }
    }
    LeafRequest request;
    request.ops = ops;
    request.subgraphId = table_[s].id;
    request.hashOrder = table_[s].hashOrder;
    request.funcIndex = program_.funcIndex;
    request.core = table_[s].core;
    auto localIndex = [&](const ir::Operation *op) {
      size_t pos = positionOf(*op);
      return pos < sgOf_.size() && sgOf_[pos] == s ? rank_[localOf_[pos]] : -1;
    };
    request.localIndex = localIndex;
    absl::StatusOr<Leaf> leaf = buildLeaf(request, device_, cost_, options_);
    if (!leaf.ok()) return leaf.status();
    int id = static_cast<int>(program_.leaves.size());
    program_.leaves.push_back(std::move(*leaf));
    sigRange_.push_back({static_cast<int64_t>(sigArena_.size()),
                         static_cast<int64_t>(sigArena_.size() + sig_.size())});
    sigArena_.insert(sigArena_.end(), sig_.begin(), sig_.end());
    candidates.push_back(id);
    call.leaf = id;
    return absl::OkStatus();
  }

  // The ops of subgraph s in leaf order (analysis::LocalScheduler: depth first, so a
  // merged subgraph runs member by member); fills rank_ (body index -> leaf index).
  // The order comes before the signature, so isomorphic subgraphs still share a leaf.
  llvm::ArrayRef<const ir::Operation *> scheduleSubgraph(int s) {
    llvm::ArrayRef<const ir::Operation *> body(ops_.data() + start_[s],
                                               ops_.data() + start_[s + 1]);
    int n = static_cast<int>(body.size());
    scheduler_.reset(n);
    for (int i = 0; i < n; ++i) {
      const ir::Operation &op = *body[i];
      if (op.code() == OpCode::CopyOut) scheduler_.setEager(i);
      for (unsigned o = 0; o < op.numOperands(); ++o) {
        const ir::Operation *def = op.operand(o)->definingOp();
        if (!def) continue;
        size_t pos = positionOf(*def);
        if (sgOf_[pos] == s) scheduler_.addDep(i, localOf_[pos]);
      }
    }
    llvm::ArrayRef<int> order = scheduler_.run();
    rank_.resize(n);
    scheduled_.resize(n);
    // Operands are defined before their users in the body, so the in-subgraph
    // dependencies are acyclic and run() always orders every op; keep the body
    // order if it ever did not.
    bool ordered = static_cast<int>(order.size()) == n;
    for (int k = 0; k < n; ++k) {
      int i = ordered ? order[k] : k;
      rank_[i] = k;
      scheduled_[k] = body[i];
    }
    return scheduled_;
  }

  // Kahn's algorithm, ready subgraphs taken in id order: deterministic, and the
  // identity when subgraph ids already follow the dependencies.
  absl::Status orderCalls(std::vector<Call> calls) {
    size_t n = calls.size();
    std::vector<int> pending(n), succStart(n + 1, 0), succ;
    for (size_t c = 0; c < n; ++c) {
      pending[c] = static_cast<int>(calls[c].preds.size());
      for (int p : calls[c].preds) ++succStart[p + 1];
    }
    for (size_t c = 0; c < n; ++c) succStart[c + 1] += succStart[c];
    succ.resize(succStart[n]);
    std::vector<int> fill(succStart.begin(), succStart.end() - 1);
    for (size_t c = 0; c < n; ++c)
      for (int p : calls[c].preds) succ[fill[p]++] = static_cast<int>(c);
    std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
    for (size_t c = 0; c < n; ++c)
      if (pending[c] == 0) ready.push(static_cast<int>(c));
    std::vector<int> callOf(n, -1), order;
    order.reserve(n);
    while (!ready.empty()) {
      int c = ready.top();
      ready.pop();
      callOf[c] = static_cast<int>(order.size());
      order.push_back(c);
      for (int i = succStart[c]; i < succStart[c + 1]; ++i)
        if (--pending[succ[i]] == 0) ready.push(succ[i]);
    }
    if (order.size() < n) return cycleError(calls, pending);
    program_.calls.reserve(n);
    for (int c : order) {
      Call &call = calls[c];
      for (int &p : call.preds) p = callOf[p];
      std::sort(call.preds.begin(), call.preds.end());
      for (int &p : call.writeOrderPreds) p = callOf[p];
      std::sort(call.writeOrderPreds.begin(), call.writeOrderPreds.end());
      program_.calls.push_back(std::move(call));
    }
    return absl::OkStatus();
  }

  absl::Status cycleError(const std::vector<Call> &calls, const std::vector<int> &pending) const {
    // Every subgraph left waits for another one left: walk such waits until one repeats.
    size_t n = calls.size();
    int x = 0;
    while (pending[x] == 0) ++x;
    std::vector<int> seenAt(n, -1), path;
    while (seenAt[x] < 0) {
      seenAt[x] = static_cast<int>(path.size());
      path.push_back(x);
      for (int p : calls[x].preds)
        if (pending[p] > 0) {
          x = p;
          break;
        }
    }
    std::string text;
    for (size_t i = path.size(); i-- > static_cast<size_t>(seenAt[x]);)
      absl::StrAppend(&text, "sg ", table_[path[i]].id, " -> ");
    absl::StrAppend(&text, "sg ", table_[path.back()].id);
    return ir::internalError(absl::StrCat(
        "codegen: the subgraphs of @", func_.name().str(),
        " wait for each other's GM writes in a cycle (", text,
        "); partitioning must keep the subgraph graph acyclic"));
  }

  // Leaf ids by first use in call order; each leaf's table fields from that first call.
  void numberLeaves() {
    std::vector<int> newId(program_.leaves.size(), -1);
    std::vector<Leaf> leaves;
    leaves.reserve(program_.leaves.size());
    for (Call &call : program_.calls) {
      int &id = newId[call.leaf];
      if (id < 0) {
        id = static_cast<int>(leaves.size());
        Leaf &leaf = leaves.emplace_back(std::move(program_.leaves[call.leaf]));
        const TableEntry &e = table_[indexOfId_.lookup(call.subgraph)];
        leaf.id = id;
        leaf.hash = e.hash.str();
        leaf.hashOrder = static_cast<int>(e.hashOrder);
        leaf.funcIndex = program_.funcIndex;
        leaf.groupSize = static_cast<int>(e.groupSize);
      }
      call.leaf = id;
    }
    program_.leaves = std::move(leaves);
  }

  const ir::Func &func_;
  const target::DeviceSpec &device_;
  const CodegenOptions &options_;
  analysis::CostModel cost_;
  Program program_;
  GmTensorTable tensors_;
  std::vector<TableEntry> table_;
  llvm::DenseMap<int64_t, int> indexOfId_;
  ir::Identifier offsetsKey_, scopeKey_; ///< interned attribute keys
  uint64_t markBase_ = 0;
  std::vector<int> sgOf_, localOf_;    ///< per body position: subgraph index, LeafOp index
  std::vector<size_t> start_;          ///< subgraph s's ops are ops_[start_[s], start_[s+1])
  std::vector<const ir::Operation *> ops_;
  // Leaf order of the subgraph being compiled (scheduleSubgraph()).
  analysis::LocalScheduler scheduler_;
  std::vector<int> rank_;                          ///< body index in subgraph -> leaf index
  std::vector<const ir::Operation *> scheduled_;   ///< the subgraph's ops in leaf order
  // Leaf deduplication: signatures of compiled leaves in one arena, found by hash.
  llvm::SmallVector<int64_t, 64> sig_;
  llvm::SmallVector<int, 8> preds_, orderPreds_;
  std::vector<int64_t> sigArena_;
  std::vector<std::pair<int64_t, int64_t>> sigRange_;
  llvm::DenseMap<uint64_t, llvm::SmallVector<int, 1>> leavesByHash_;
};

} // namespace

absl::StatusOr<Program> buildProgram(const ir::Func &func, const target::DeviceSpec &device,
                                     const CodegenOptions &options, unsigned funcIndex) {
  return ProgramBuilder(func, device, options, funcIndex).build();
}

} // namespace ptoc::codegen
