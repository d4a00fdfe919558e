// cse: replaces an operation by an earlier identical one (same op, operands,
// attributes and result types). All ptoc ops are pure, so this is always safe.
#include "ptoc/passes/Passes.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/Hashing.h"

#include "ptoc/ir/Func.h"

namespace ptoc::passes {
namespace {

using ir::Operation;

// Hashes and compares operations by what they compute, not by identity.
struct ComputeKeyInfo {
  static Operation *getEmptyKey() { return llvm::DenseMapInfo<Operation *>::getEmptyKey(); }
  static Operation *getTombstoneKey() {
    return llvm::DenseMapInfo<Operation *>::getTombstoneKey();
  }
  static bool isSentinel(const Operation *op) {
    return op == getEmptyKey() || op == getTombstoneKey();
  }
  static unsigned getHashValue(const Operation *op) {
    // The subgraph id is not in the dictionary: ops of different subgraphs differ.
    llvm::hash_code h =
        llvm::hash_combine(op->code(), op->attrDict().storage(), op->subgraphId());
    for (const ir::OpOperand &o : op->opOperands()) h = llvm::hash_combine(h, o.get());
    for (const ir::Value &r : op->results()) h = llvm::hash_combine(h, r.type().storage());
    return static_cast<unsigned>(h);
  }
  static bool isEqual(const Operation *a, const Operation *b) {
    if (a == b) return true;
    if (isSentinel(a) || isSentinel(b)) return false;
    if (a->code() != b->code() || a->attrDict() != b->attrDict() ||
        a->subgraphId() != b->subgraphId() ||
        a->numOperands() != b->numOperands() || a->numResults() != b->numResults())
      return false;
    for (unsigned i = 0; i < a->numOperands(); ++i)
      if (a->operand(i) != b->operand(i)) return false;
    for (unsigned i = 0; i < a->numResults(); ++i)
      if (a->resultType(i) != b->resultType(i)) return false;
    return true;
  }
};

class CSEPass final : public Pass {
public:
  llvm::StringRef argument() const override { return "cse"; }

  PassResult run(ir::Module &m, PassContext &ctx) override {
    bool changed = false;
    for (ir::Func &f : m.funcs()) {
      llvm::DenseMap<Operation *, Operation *, ComputeKeyInfo> seen;
      for (auto it = f.ops().begin(); it != f.ops().end();) {
        Operation &op = *it++;
        if (op.code() == ir::OpCode::Return || op.def().hasSideEffects) continue;
        auto [entry, inserted] = seen.try_emplace(&op, &op);
        if (inserted) continue;
        Operation *earlier = entry->second;
        for (unsigned i = 0; i < op.numResults(); ++i)
          op.result(i)->replaceAllUsesWith(earlier->result(i));
        f.erase(&op);
        ++eliminated_;
        changed = true;
      }
    }
    return PassResult::changed(changed);
  }

private:
  PassStatistic eliminated_{this, "eliminated-ops", "Number of duplicate operations removed"};
};

} // namespace

std::unique_ptr<Pass> createCSEPass() { return std::make_unique<CSEPass>(); }

void registerCSEPass(PassRegistry &registry) {
  registry.add({"cse", "Replace operations by identical earlier ones", {},
                [](const PassOptionValues &) { return createCSEPass(); }});
}

} // namespace ptoc::passes
