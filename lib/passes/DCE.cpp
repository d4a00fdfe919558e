// dce: removes operations whose results never reach the function's `return` (or a
// side-effecting op such as copy_out).
#include "ptoc/passes/Passes.h"

#include "llvm/ADT/SmallVector.h"

#include "ptoc/ir/Func.h"

namespace ptoc::passes {
namespace {

class DCEPass final : public Pass {
public:
  llvm::StringRef argument() const override { return "dce"; }

  PassResult run(ir::Module &m, PassContext &ctx) override {
    bool changed = false;
    for (ir::Func &f : m.funcs()) {
      // Walk backwards: erasing a dead op may make its operands' definers dead,
      // and those come earlier in the (topologically ordered) body.
      llvm::SmallVector<ir::Operation *, 64> dead;
      for (auto it = f.ops().rbegin(); it != f.ops().rend();) {
        ir::Operation &op = *it++;
        if (op.code() == ir::OpCode::Return || op.def().hasSideEffects || !op.useEmpty())
          continue;
        op.dropOperandUses();
        dead.push_back(&op);
      }
      for (ir::Operation *op : dead) f.erase(op);
      erased_ += dead.size();
      changed |= !dead.empty();
    }
    return PassResult::changed(changed);
  }

private:
  PassStatistic erased_{this, "erased-ops", "Number of dead operations erased"};
};

} // namespace

std::unique_ptr<Pass> createDCEPass() { return std::make_unique<DCEPass>(); }

void registerDCEPass(PassRegistry &registry) {
  registry.add({"dce", "Remove operations whose results never reach a return", {},
                [](const PassOptionValues &) { return createDCEPass(); }});
}

} // namespace ptoc::passes
