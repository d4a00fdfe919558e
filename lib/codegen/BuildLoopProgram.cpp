// buildLoopProgram: a module with loops (after outline-segments and the pipeline) ->
// LoopProgram. Each root function a loop runs is compiled by buildProgram; each
// control function reachable from the entry becomes its tensor table and steps.
#include "ptoc/codegen/BuildLoopProgram.h"

#include <map>

#include "absl/strings/str_cat.h"
#include "llvm/ADT/DenseMap.h"
#include "ptoc/ir/Diagnostics.h"
#include "ptoc/ir/Func.h"
#include "ptoc/ir/Level.h"
#include "ptoc/ir/LoopView.h"
#include "ptoc/ir/Module.h"
#include "ptoc/ir/Operation.h"

namespace ptoc::codegen {
namespace {

class LoopProgramBuilder {
public:
  LoopProgramBuilder(const ir::Module &m, const target::DeviceSpec &device,
                     const CodegenOptions &options)
      : m_(m), device_(device), options_(options) {}

  absl::StatusOr<LoopProgram> build(const ir::Func &entry) {
    out_.funcName = entry.name().str();
    absl::StatusOr<int> e = control(entry);
    if (!e.ok()) return e.status();
    out_.entry = *e;
    return std::move(out_);
  }

private:
  unsigned indexOf(const ir::Func &f) const {
    unsigned i = 0;
    while (i < m_.numFuncs() && &m_.func(i) != &f) ++i;
    return i;
  }

  absl::StatusOr<int> control(const ir::Func &f) {
    ControlFunc c;
    c.name = f.name().str();
    llvm::DenseMap<const ir::Value *, int> tensorOf;
    for (unsigned i = 0; i < f.numArgs(); ++i) {
      const ir::Value *a = f.arg(i);
      ControlTensor t;
      t.kind = ControlTensor::Kind::Argument;
      t.name = a->nameHint() ? a->nameHint().str().str() : absl::StrCat("arg", i);
      t.dtype = a->type().dtype();
      t.shape.assign(a->type().shape().begin(), a->type().shape().end());
      t.argIndex = int(i);
      out_.dynamicShapes |= a->type().hasDynamicDims();
      tensorOf[a] = int(c.tensors.size());
      c.tensors.push_back(std::move(t));
    }
    for (const ir::Operation &op : f.ops()) {
      switch (op.code()) {
      case ir::OpCode::GmTensor: {
        ControlTensor t;
        const ir::Value *r = op.result();
        t.name = r->nameHint() ? r->nameHint().str().str() : absl::StrCat("ws", c.tensors.size());
        t.dtype = r->type().dtype();
        t.shape.assign(r->type().shape().begin(), r->type().shape().end());
        tensorOf[r] = int(c.tensors.size());
        c.tensors.push_back(std::move(t));
        break;
      }
      case ir::OpCode::Loop: {
        absl::StatusOr<ir::LoopView> v = ir::LoopView::of(op);
        if (!v.ok()) return ir::internalError(absl::StrCat(op.loc().str(), ": ", v.status().message()));
        LoopStep s;
        s.name = v->name;
        s.index = v->index;
        s.start = v->start;
        s.stop = v->stop;
        s.step = v->step;
        s.parallel = v->parallel;
        s.location = op.loc().str();
        const ir::Func *body = m_.lookup(v->body);
        if (!body) return ir::internalError(absl::StrCat("loop body @", v->body, " is missing"));
        if (ir::levelOf(*body) == ir::Level::Control) {
          absl::StatusOr<int> inner = control(*body);
          if (!inner.ok()) return inner.status();
          s.control = *inner;
        } else {
          absl::StatusOr<Program> p = buildProgram(*body, device_, options_, indexOf(*body));
          if (!p.ok()) return p.status();
          s.program = int(out_.programs.size());
          out_.programs.push_back(*std::move(p));
        }
        auto windows = [&](llvm::ArrayRef<ir::LoopWindow> in,
                           std::vector<StepWindow> &into) -> absl::Status {
          for (const ir::LoopWindow &w : in) {
            auto it = tensorOf.find(op.operand(w.operand));
            if (it == tensorOf.end())
              return ir::internalError(absl::StrCat(
                  op.loc().str(), ": loop operand ", w.operand,
                  " is not an argument, workspace or loop result of @", f.name().str(),
                  " (run outline-segments before codegen)"));
            into.push_back({it->second, w.offsets, w.sizes, w.valid, w.loc});
          }
          return absl::OkStatus();
        };
        if (absl::Status st = windows(v->ins, s.ins); !st.ok()) return st;
        if (absl::Status st = windows(v->outs, s.outs); !st.ok()) return st;
        auto reads = [](const ir::SymExpr &e) { return !e.tensorReads().empty(); };
        out_.readsTensors |= reads(s.start) || reads(s.stop) || reads(s.step);
        for (const std::vector<StepWindow> *ws : {&s.ins, &s.outs})
          for (const StepWindow &w : *ws)
            for (const std::vector<ir::SymExpr> *es : {&w.offsets, &w.valid})
              for (const ir::SymExpr &e : *es) out_.readsTensors |= reads(e);
        // A loop's results are its written operands, updated in place.
        for (size_t r = 0; r < v->written.size(); ++r)
          tensorOf[op.result(r)] = tensorOf.lookup(op.operand(v->written[r]));
        c.steps.push_back(std::move(s));
        break;
      }
      case ir::OpCode::Return:
        for (const ir::Value *v : op.operands()) {
          auto it = tensorOf.find(v);
          if (it == tensorOf.end())
            return ir::internalError(absl::StrCat(
                op.loc().str(), ": @", f.name().str(),
                " returns a value that is not an argument, workspace or loop result"));
          c.results.push_back(it->second);
        }
        break;
      default:
        return ir::internalError(absl::StrCat(
            op.loc().str(), ": control function @", f.name().str(), " still has a '",
            op.name().str(), "' op; outline-segments must run before codegen"));
      }
    }
    out_.controls.push_back(std::move(c));
    return int(out_.controls.size()) - 1;
  }

  const ir::Module &m_;
  const target::DeviceSpec &device_;
  const CodegenOptions &options_;
  LoopProgram out_;
};

} // namespace

absl::StatusOr<LoopProgram> buildLoopProgram(const ir::Module &module, const ir::Func &entry,
                                             const target::DeviceSpec &device,
                                             const CodegenOptions &options) {
  return LoopProgramBuilder(module, device, options).build(entry);
}

} // namespace ptoc::codegen
