// outline-segments: in every control function (one with loops), each maximal run of
// tensor ops between loops becomes a *segment*: a root function of its own, run by a
// one-iteration loop (PyPTO's implicit loop(1)). A value a segment computes and
// something after it needs lands in a workspace (`gm_tensor`) of the control
// function, which the segment's loop writes whole; later uses read the loop's
// result. After it, a control function holds only workspaces, loops and its return,
// and every op that computes is in a body the tiling passes compile on its own.
//
// Segment functions are named `<control>.seg<k>` and appended to the module; their
// loops are named the same, so the swimlane and summary name them. A returned value
// computed by a segment is returned from its workspace.
#include "ptoc/passes/Passes.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "ptoc/ir/Clone.h"
#include "ptoc/ir/Context.h"
#include "ptoc/ir/Func.h"
#include "ptoc/ir/Level.h"
#include "ptoc/ir/LoopView.h"
#include "ptoc/ir/Operation.h"

namespace ptoc::passes {
namespace {

using ir::Operation;
using ir::Value;

bool staysInControl(const Operation &op) {
  return op.code() == ir::OpCode::Loop || op.code() == ir::OpCode::Return ||
         op.code() == ir::OpCode::GmTensor;
}

class Outliner {
public:
  Outliner(ir::Module &m, ir::Func &f) : m_(m), f_(f), ctx_(f.context()) {}

  /// Outlines every segment of `f_`; returns how many.
  int run() {
    int count = 0;
    std::vector<Operation *> run;
    std::vector<Operation *> ops;
    for (Operation &op : f_.ops()) ops.push_back(&op);
    for (Operation *op : ops) {
      if (!staysInControl(*op)) {
        run.push_back(op);
        continue;
      }
      if (!run.empty()) outline(run, count++);
      run.clear();
    }
    return count;
  }

private:
  void outline(const std::vector<Operation *> &ops, int k) {
    llvm::DenseSet<const Operation *> inSegment(ops.begin(), ops.end());
    // Inputs: values used by the segment and defined outside it; outputs: values it
    // defines that something outside it uses.
    std::vector<Value *> inputs, outputs;
    llvm::DenseMap<Value *, unsigned> inputIndex;
    for (Operation *op : ops)
      for (Value *v : op->operands()) {
        bool inside = !v->isArgument() && inSegment.contains(v->definingOp());
        if (!inside && inputIndex.try_emplace(v, inputs.size()).second) inputs.push_back(v);
      }
    for (Operation *op : ops)
      for (Value &r : op->results())
        for (const ir::OpOperand &use : r.uses())
          if (!inSegment.contains(use.owner())) {
            outputs.push_back(&r);
            break;
          }
    if (outputs.empty()) { // nothing after it needs what it computes
      for (auto it = ops.rbegin(); it != ops.rend(); ++it) {
        (*it)->dropOperandUses();
        f_.erase(*it);
      }
      return;
    }
    std::string name = absl::StrCat(f_.name().str(), ".seg", k);
    while (m_.lookup(name)) name += "_";

    llvm::SmallVector<ir::Type, 4> argTypes, resultTypes;
    for (Value *v : inputs) argTypes.push_back(v->type());
    for (Value *v : outputs) resultTypes.push_back(v->type());
    ir::Func &seg = m_.addFunc(name, argTypes, resultTypes, ops.front()->loc());
    llvm::DenseMap<Value *, Value *> mapped;
    for (size_t i = 0; i < inputs.size(); ++i) {
      seg.arg(i)->setNameHint(inputs[i]->nameHint());
      mapped[inputs[i]] = seg.arg(i);
    }
    ir::cloneOpsInto(ops, seg, mapped);
    llvm::SmallVector<Value *, 4> returned;
    for (Value *v : outputs) returned.push_back(mapped.lookup(v));
    seg.createOp(ctx_.opDef(ir::OpCode::Return), returned, {}, ir::Attribute(),
                 ops.back()->loc());

    // In the control function: a workspace per output, the segment's loop writing
    // them whole, later uses reading the loop's results.
    Operation *at = ops.front();
    std::vector<Value *> loopOperands(inputs.begin(), inputs.end());
    ir::LoopView loop;
    loop.body = loop.name = name;
    loop.index = absl::StrCat("seg", k);
    loop.start = ir::SymExpr::constant(0);
    loop.stop = loop.step = ir::SymExpr::constant(1);
    auto whole = [](int operand, ir::Type t) {
      ir::LoopWindow w;
      w.operand = operand;
      for (int64_t d : t.shape()) {
        w.offsets.push_back(ir::SymExpr::constant(0));
        w.sizes.push_back(d);
      }
      return w;
    };
    for (size_t i = 0; i < inputs.size(); ++i)
      loop.ins.push_back(whole(int(i), inputs[i]->type()));
    for (Value *v : outputs) {
      Operation *ws = f_.createOp(ctx_.opDef(ir::OpCode::GmTensor), {}, {v->type()},
                                  ir::Attribute(), v->definingOp()->loc(), at);
      ws->result()->setNameHint(v->nameHint());
      loop.outs.push_back(whole(int(loopOperands.size()), v->type()));
      loopOperands.push_back(ws->result());
    }
    Operation *loopOp = f_.createOp(ctx_.opDef(ir::OpCode::Loop), loopOperands, resultTypes,
                                    loop.toAttr(ctx_), at->loc(), at);
    for (size_t i = 0; i < outputs.size(); ++i) {
      loopOp->result(i)->setNameHint(outputs[i]->nameHint());
      outputs[i]->replaceAllUsesWith(loopOp->result(i));
    }
    for (auto it = ops.rbegin(); it != ops.rend(); ++it) {
      (*it)->dropOperandUses();
      f_.erase(*it);
    }
  }

  ir::Module &m_;
  ir::Func &f_;
  ir::Context &ctx_;
};

class OutlineSegmentsPass final : public Pass {
public:
  llvm::StringRef argument() const override { return "outline-segments"; }

  PassResult run(ir::Module &m, PassContext &) override {
    int count = 0;
    // Functions appended while outlining are segments (no loops): not revisited.
    size_t n = m.numFuncs();
    for (size_t i = 0; i < n; ++i)
      if (ir::levelOf(m.func(i)) == ir::Level::Control) count += Outliner(m, m.func(i)).run();
    segments_ += count;
    return PassResult::changed(count > 0);
  }

private:
  PassStatistic segments_{this, "segments", "Runs of ops between loops made root functions"};
};

} // namespace

std::unique_ptr<Pass> createOutlineSegmentsPass() { return std::make_unique<OutlineSegmentsPass>(); }

void registerOutlineSegmentsPass(PassRegistry &registry) {
  registry.add({"outline-segments",
                "Make each run of ops between the loops of a control function a root "
                "function run by a one-iteration loop",
                {},
                [](const PassOptionValues &) { return createOutlineSegmentsPass(); }});
}

} // namespace ptoc::passes
