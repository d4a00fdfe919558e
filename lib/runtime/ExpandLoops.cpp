// expandLoops: instantiates a LoopProgram into a flat Program.
//
// Tensors. The entry control function's arguments are the program's arguments; an
// argument some loop writes is replaced, for the whole run, by an intermediate that
// starts as a copy of it (GmTensor::initFrom). Workspaces of control functions are
// intermediates (a nested control function's: one per instance). A window is an
// alias of its tensor's base; a body's own intermediates are fresh per iteration (the
// instance lists them; assignStitches places them in recycled workspace memory).
//
// Order between iterations. Every access of a call to memory shared between
// iterations (the bases of control-function tensors) is a box in its base's
// coordinates (a strided window that is not a box is widened to the box of its
// linear range). Per base the boxes' edges cut the tensor into cells; per cell the
// last writer and the readers since are tracked, so a call waits only for the
// accesses that overlap it and the work is linear in the accesses (times the cells a
// box covers). Inside an iteration, reads see the values from before the iteration
// (a body is a function of its windows): its writes wait for its own overlapping
// reads, and the iteration's calls are reordered when that puts a read after a write
// in the body's order.
#include "ptoc/runtime/ExpandLoops.h"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ptoc/ir/Diagnostics.h"
#include "ptoc/ir/LoopView.h"
#include "ptoc/ir/Region.h"
#include "ptoc/ir/StableHash.h"
#include "ptoc/runtime/WorkspaceRecycling.h"

namespace ptoc::runtime {
namespace {

using codegen::Call;
using codegen::ControlFunc;
using codegen::GmTensor;
using codegen::LoopProgram;
using codegen::LoopStep;
using codegen::Program;
using codegen::StepWindow;

llvm::SmallVector<int64_t, 4> contiguousStrides(llvm::ArrayRef<int64_t> shape) {
  llvm::SmallVector<int64_t, 4> s(shape.size(), 1);
  for (int d = int(shape.size()) - 2; d >= 0; --d) s[d] = s[d + 1] * shape[d + 1];
  return s;
}

/// One access of a call to shared memory.
struct Access {
  int call = -1;
  int base = -1;
  ir::Box box;
  bool write = false;
  /// A read of a window this iteration writes (a body result, or a view of one, read
  /// back by another task of the body): it sees this iteration's value, not the one
  /// from before the iteration.
  bool own = false;
};

class Expander {
public:
  Expander(const LoopProgram &lp, llvm::ArrayRef<ConstTensorRef> args) : lp_(lp), args_(args) {
    if (lp.readsTensors)
      reader_ = [this](llvm::StringRef tensor, llvm::ArrayRef<int64_t> index) {
        return readElement(tensor, index);
      };
  }

  absl::StatusOr<Program> run() {
    out_.funcName = lp_.funcName;
    if (lp_.entry < 0 || size_t(lp_.entry) >= lp_.controls.size())
      return ir::internalError("loop program without an entry control function");
    // Bodies and their leaves.
    for (const Program &p : lp_.programs) {
      leafOffset_.push_back(int(out_.leaves.size()));
      for (const codegen::Leaf &l : p.leaves) {
        codegen::Leaf copy = l;
        copy.id = int(out_.leaves.size());
        out_.leaves.push_back(std::move(copy));
      }
      codegen::Body b;
      b.name = p.funcName;
      b.funcIndex = p.funcIndex;
      uint64_t h = ir::hashBytes(p.funcName);
      for (const codegen::Leaf &l : p.leaves) h = ir::hashBytes(l.hash, h);
      b.hash = absl::StrCat(absl::Hex(h, absl::kZeroPad16));
      out_.bodies.push_back(std::move(b));
    }
    out_.funcIndex = lp_.programs.empty() ? 0 : lp_.programs.front().funcIndex;

    // The entry's tensors: arguments, written arguments' copies, workspaces.
    const ControlFunc &entry = lp_.controls[lp_.entry];
    std::vector<bool> written(entry.tensors.size(), false);
    markWritten(entry, written);
    std::vector<int> flat(entry.tensors.size(), -1);
    for (size_t t = 0; t < entry.tensors.size(); ++t) {
      const codegen::ControlTensor &ct = entry.tensors[t];
      if (ct.kind != codegen::ControlTensor::Kind::Argument) continue;
      absl::StatusOr<llvm::SmallVector<int64_t, 4>> shape = bindShape(ct);
      if (!shape.ok()) return shape.status();
      int arg = addOwner(ct.name, ct.dtype, *shape, GmTensor::Kind::Argument);
      out_.tensors[arg].argIndex = ct.argIndex;
      if (out_.arguments.size() <= size_t(ct.argIndex)) out_.arguments.resize(ct.argIndex + 1, -1);
      out_.arguments[ct.argIndex] = arg;
      flat[t] = arg;
      if (written[t]) {
        flat[t] = addOwner(ct.name, ct.dtype, *shape, GmTensor::Kind::Intermediate);
        out_.tensors[flat[t]].initFrom = arg;
      }
    }
    for (size_t t = 0; t < entry.tensors.size(); ++t)
      if (flat[t] < 0) {
        const codegen::ControlTensor &ct = entry.tensors[t];
        flat[t] = addOwner(ct.name, ct.dtype, ct.shape, GmTensor::Kind::Intermediate);
      }
    for (int t : flat) shared_[out_.tensors[t].base] = true;
    if (absl::Status s = runControl(entry, flat); !s.ok()) return s;
    for (int r : entry.results) out_.results.push_back(flat[r]);

    if (absl::Status s = order(); !s.ok()) return s;
    return std::move(out_);
  }

private:
  /// An entry argument's shape in this run: its dynamic axes take the sizes of the
  /// caller's tensor, each bound as `dim(name, axis)` for the expressions.
  absl::StatusOr<llvm::SmallVector<int64_t, 4>> bindShape(const codegen::ControlTensor &ct) {
    llvm::SmallVector<int64_t, 4> shape(ct.shape.begin(), ct.shape.end());
    if (!lp_.dynamicShapes) return shape;
    if (ct.argIndex < 0 || size_t(ct.argIndex) >= args_.size())
      return absl::InvalidArgumentError(absl::StrCat(
          "kernel '", lp_.funcName, "' has dynamic axes: its loops are instantiated for the "
          "sizes of the tensors of a call, and argument ", ct.argIndex, " (%", ct.name,
          ") was not given; pass every argument"));
    const ConstTensorRef &a = args_[ct.argIndex];
    bool fits = a.shape.size() == shape.size();
    for (size_t d = 0; fits && d < shape.size(); ++d)
      fits = shape[d] == ir::kDynamicDim || shape[d] == a.shape[d];
    if (!fits) {
      std::vector<std::string> want;
      for (int64_t d : shape) want.push_back(d == ir::kDynamicDim ? "?" : std::to_string(d));
      return absl::InvalidArgumentError(absl::StrCat(
          "argument ", ct.argIndex, " (%", ct.name, ") of kernel '", lp_.funcName,
          "' must have shape [", absl::StrJoin(want, ", "), "] ('?': any size), got [",
          absl::StrJoin(a.shape, ", "), "]"));
    }
    for (size_t d = 0; d < shape.size(); ++d)
      if (shape[d] == ir::kDynamicDim) {
        shape[d] = a.shape[d];
        bindings_.push_back({ir::SymExpr::dimKey(ct.name, int64_t(d)), a.shape[d], a.shape[d]});
      }
    return shape;
  }

  static void markWritten(const ControlFunc &c, std::vector<bool> &written) {
    for (const LoopStep &s : c.steps)
      for (const StepWindow &w : s.outs) written[w.tensor] = true;
  }

  int addOwner(const std::string &name, ir::DType dtype, llvm::ArrayRef<int64_t> shape,
               GmTensor::Kind kind) {
    GmTensor g;
    g.name = name;
    g.kind = kind;
    g.dtype = dtype;
    g.shape.assign(shape.begin(), shape.end());
    g.base = int(out_.tensors.size());
    g.strides = contiguousStrides(shape);
    out_.tensors.push_back(std::move(g));
    shared_.push_back(false);
    return int(out_.tensors.size()) - 1;
  }

  /// An alias of `of`'s memory: `shape` with `strides` at element `offset` of the base.
  int addAlias(const std::string &name, int of, llvm::ArrayRef<int64_t> shape,
               llvm::ArrayRef<int64_t> strides, int64_t offset) {
    const GmTensor &t = out_.tensors[of];
    GmTensor g;
    g.name = name;
    g.kind = GmTensor::Kind::Alias;
    g.dtype = t.dtype;
    g.shape.assign(shape.begin(), shape.end());
    g.base = t.base;
    g.baseOffset = offset;
    g.strides.assign(strides.begin(), strides.end());
    out_.tensors.push_back(std::move(g));
    shared_.push_back(false);
    return int(out_.tensors.size()) - 1;
  }

  /// `<loc>: error: loop 'r' iteration b = 1, r = 7`: every enclosing loop's index
  /// (outermost first, this loop's last), at the user's statement that made window
  /// `w` when it is known, else at the loop.
  std::string where(const LoopStep &s, const StepWindow *w = nullptr) const {
    std::vector<std::string> indices;
    for (const ir::SymBinding &b : loopIndices_) indices.push_back(absl::StrCat(b.name, " = ", b.lo));
    const std::string &loc = w && !w->location.empty() ? w->location : s.location;
    return absl::StrCat(loc, ": error: loop '", s.name, "' iteration ",
                        absl::StrJoin(indices, ", "));
  }

  /// The window `w` of flat tensor `t` for the current bindings, seen with `bodyShape`.
  absl::StatusOr<int> window(const LoopStep &s, const StepWindow &w,
                             const char *side, size_t i, int t, llvm::ArrayRef<int64_t> bodyShape) {
    const GmTensor &g = out_.tensors[t];
    // A whole dynamic axis (size ?) takes the tensor's size in this run.
    llvm::SmallVector<int64_t, 4> sizes = ir::resolveWholeAxes(w.sizes, g.shape);
    // Only the valid part of the box must lie inside the tensor.
    absl::StatusOr<llvm::SmallVector<int64_t, 4>> extents =
        ir::evaluateValidExtents(w.valid, sizes, bindings_, reader_, side, i);
    if (!extents.ok())
      return absl::InvalidArgumentError(
          absl::StrCat(where(s, &w), ": ", extents.status().message()));
    if (!g.valid.empty())
      return absl::UnimplementedError(absl::StrCat(
          where(s, &w), ": ", side, " window ", i, " is a window of %", g.name,
          ", itself a window with a valid_shape in this iteration; ptoc clips windows of the "
          "kernel's tensors only: give the valid_shape to the inner loop's windows instead"));
    absl::StatusOr<llvm::SmallVector<int64_t, 4>> offsets = ir::evaluateWindow(
        w.offsets, *extents, g.shape, absl::StrCat("%", g.name), bindings_, reader_, side, i);
    if (!offsets.ok())
      return absl::InvalidArgumentError(
          absl::StrCat(where(s, &w), ": ", offsets.status().message()));
    int64_t offset = g.baseOffset;
    for (size_t d = 0; d < offsets->size(); ++d) offset += (*offsets)[d] * g.strides[d];
    // The body's dims are the window's dims of size > 1 in order; its size-1 dims
    // take any stride (their coordinate is always 0).
    std::optional<llvm::SmallVector<int, 4>> dims = ir::bodyDimsOfWindow(bodyShape, w.sizes);
    if (!dims)
      return ir::internalError(absl::StrCat(s.location, ": loop '", s.name, "' ", side,
                                            " window ", i, " does not match its body's type"));
    llvm::SmallVector<int64_t, 4> strides, valid, shape;
    bool clipped = false; // some dimension holds less than its size
    for (int d : *dims) {
      bool one = d < 0;
      strides.push_back(one ? 0 : g.strides[d]);
      valid.push_back(one ? 1 : (*extents)[d]);
      shape.push_back(one ? 1 : sizes[d]); // a whole dynamic axis: this run's size
      clipped |= !one && (*extents)[d] < sizes[d];
    }
    int alias = addAlias(g.name, t, shape, strides, offset);
    if (clipped) out_.tensors[alias].valid = std::move(valid);
    return alias;
  }

  absl::Status runControl(const ControlFunc &c, llvm::ArrayRef<int> tensors) {
    for (const LoopStep &s : c.steps) {
      absl::StatusOr<int64_t> start = s.start.evaluate(bindings_, reader_),
                              stop = s.stop.evaluate(bindings_, reader_),
                              step = s.step.evaluate(bindings_, reader_);
      // `<loc>: error: loop 'j' (in iteration b = 3 of the loops around it)`.
      auto loopWhere = [&] {
        std::string w = absl::StrCat(s.location, ": error: loop '", s.name, "'");
        if (!loopIndices_.empty()) {
          std::vector<std::string> outer;
          for (const ir::SymBinding &b : loopIndices_) outer.push_back(absl::StrCat(b.name, " = ", b.lo));
          absl::StrAppend(&w, " (in iteration ", absl::StrJoin(outer, ", "),
                          " of the loops around it)");
        }
        return w;
      };
      for (auto [what, v] : {std::pair{"start", &start}, std::pair{"stop", &stop},
                             std::pair{"step", &step}})
        if (!v->ok())
          return absl::InvalidArgumentError(
              absl::StrCat(loopWhere(), ": its ", what, " ", v->status().message()));
      if (*step <= 0)
        return absl::InvalidArgumentError(
            absl::StrCat(loopWhere(), ": step ", *step, " is not positive"));
      // A parallel loop's execution is a run of its own; its iterations (and whatever
      // they nest that no inner parallel loop claims) carry the run and their ordinal.
      const Parallel outer = parallel_;
      if (s.parallel) parallel_ = {numParallelRuns_++, 0};
      for (int64_t i = *start; i < *stop; i += *step) {
        bindings_.push_back({s.index, i, i});
        loopIndices_.push_back({s.index, i, i});
        absl::Status st = runIteration(s, i, tensors);
        loopIndices_.pop_back();
        bindings_.pop_back();
        if (!st.ok()) return st;
        if (s.parallel) ++parallel_.iteration;
        if (*stop - i <= *step) break; // i += step would overflow near INT64_MAX
      }
      parallel_ = outer;
    }
    return absl::OkStatus();
  }

  absl::Status runIteration(const LoopStep &s, int64_t iteration,
                            llvm::ArrayRef<int> tensors) {
    if (s.control >= 0) return runNested(s, tensors);
    const Program &body = lp_.programs[s.program];
    // Windows for the body's arguments and results.
    std::vector<int> ins, outs;
    for (size_t i = 0; i < s.ins.size(); ++i) {
      int arg = i < body.arguments.size() ? body.arguments[i] : -1;
      if (arg < 0) return ir::internalError(absl::StrCat("body @", body.funcName, " has no argument ", i));
      absl::StatusOr<int> w = window(s, s.ins[i], "ins", i, tensors[s.ins[i].tensor],
                                     body.tensors[arg].shape);
      if (!w.ok()) return w.status();
      ins.push_back(*w);
    }
    for (size_t j = 0; j < s.outs.size(); ++j) {
      if (j >= body.results.size())
        return ir::internalError(absl::StrCat("body @", body.funcName, " has no result ", j));
      absl::StatusOr<int> w = window(s, s.outs[j], "outs", j, tensors[s.outs[j].tensor],
                                     body.tensors[body.results[j]].shape);
      if (!w.ok()) return w.status();
      outs.push_back(*w);
    }
    // The body's tensors, instantiated.
    std::vector<int> map(body.tensors.size(), -1);
    for (size_t t = 0; t < body.tensors.size(); ++t) {
      const GmTensor &g = body.tensors[t];
      if (g.kind == GmTensor::Kind::Argument) map[t] = ins[g.argIndex];
    }
    for (size_t j = 0; j < body.results.size(); ++j) {
      int t = body.results[j];
      if (body.tensors[t].kind != GmTensor::Kind::Intermediate || map[t] >= 0)
        return absl::UnimplementedError(absl::StrCat(
            where(s, &s.outs[j]), ": body @", body.funcName, " returns ",
            body.tensors[t].kind == GmTensor::Kind::Intermediate
                ? "one value twice"
                : "a value it does not compute (an argument or a view of one)",
            " as result ", j, "; ptoc loops need each written window to be computed in the "
            "body: write a computed value (e.g. x + 0) or read the source outside the loop"));
      map[t] = outs[j];
    }
    std::vector<int> workspace; // the iteration's own intermediates
    for (size_t t = 0; t < body.tensors.size(); ++t) {
      const GmTensor &g = body.tensors[t];
      if (map[t] >= 0 || g.kind != GmTensor::Kind::Intermediate) continue;
      map[t] = addOwner(g.name, g.dtype, g.shape, GmTensor::Kind::Intermediate);
      workspace.push_back(map[t]);
    }
    for (size_t t = 0; t < body.tensors.size(); ++t) {
      const GmTensor &g = body.tensors[t];
      if (g.kind != GmTensor::Kind::Alias) continue;
      absl::StatusOr<int> a = rebaseAlias(s, body, int(t), map);
      if (!a.ok()) return a.status();
      map[t] = *a;
    }
    // The tensors that are this iteration's results (or views of them): a task reading
    // one reads what another task of the iteration wrote there.
    std::vector<int> own;
    for (size_t t = 0; t < body.tensors.size(); ++t) {
      int b = body.tensors[t].base;
      bool result = std::find(body.results.begin(), body.results.end(), int(t)) != body.results.end();
      bool viewOfResult = body.tensors[t].kind == GmTensor::Kind::Alias && b >= 0 &&
                          std::find(body.results.begin(), body.results.end(), b) != body.results.end();
      if (result || viewOfResult) own.push_back(map[t]);
    }
    // Its calls.
    int instance = int(out_.instances.size());
    out_.instances.push_back(
        {s.program, s.name, iteration, parallel_.run, parallel_.iteration, std::move(workspace)});
    int callBase = int(out_.calls.size());
    instanceBegin_.push_back(callBase);
    int leafBase = leafOffset_[s.program];
    for (const Call &bc : body.calls) {
      Call call;
      call.leaf = bc.leaf + leafBase;
      call.subgraph = bc.subgraph;
      call.instance = instance;
      call.regions = bc.regions;
      for (codegen::Region &r : call.regions) r.tensor = map[r.tensor];
      for (int p : bc.preds) call.preds.push_back(p + callBase);
      for (int p : bc.writeOrderPreds) call.writeOrderPreds.push_back(p + callBase);
      int callIndex = int(out_.calls.size());
      recordAccesses(call, callIndex, own);
      out_.calls.push_back(std::move(call));
    }
    return absl::OkStatus();
  }

  /// A body's alias of `t`'s base, moved onto the base's instance: composed with the
  /// window's strides where the base is a window.
  absl::StatusOr<int> rebaseAlias(const LoopStep &s, const Program &body, int t,
                                  llvm::ArrayRef<int> map) {
    const GmTensor &g = body.tensors[t];
    int b = g.base;
    if (b < 0 || size_t(b) >= map.size() || map[b] < 0)
      return ir::internalError(absl::StrCat("body @", body.funcName, ": alias %", g.name,
                                            " has no instantiated base"));
    const GmTensor &inst = out_.tensors[map[b]];
    if (!inst.valid.empty())
      return absl::UnimplementedError(absl::StrCat(
          where(s), ": body @", body.funcName, " views or reshapes %", g.name,
          ", part of a window with a valid_shape; ptoc clips only the window itself: compute "
          "on the window as the body receives it, or drop the valid_shape"));
    llvm::ArrayRef<int64_t> bshape = body.tensors[b].shape;
    llvm::SmallVector<int64_t, 4> cstr = contiguousStrides(bshape);
    bool contiguous = true;
    for (size_t d = 0; d < bshape.size(); ++d)
      contiguous &= bshape[d] == 1 || inst.strides[d] == cstr[d];
    if (contiguous)
      return addAlias(g.name, map[b], g.shape, g.strides, inst.baseOffset + g.baseOffset);
    // Map each alias dimension onto the dimension of the base with its stride.
    llvm::SmallVector<int64_t, 4> coords(bshape.size());
    int64_t rest = g.baseOffset;
    for (size_t d = 0; d < bshape.size(); ++d) {
      coords[d] = cstr[d] ? rest / cstr[d] : 0;
      rest -= coords[d] * cstr[d];
    }
    int64_t offset = inst.baseOffset;
    for (size_t d = 0; d < bshape.size(); ++d) offset += coords[d] * inst.strides[d];
    llvm::SmallVector<int64_t, 4> strides;
    for (size_t d = 0; d < g.shape.size(); ++d) {
      if (g.shape[d] == 1) {
        strides.push_back(0);
        continue;
      }
      int found = -1;
      for (size_t e = 0; e < bshape.size(); ++e)
        if (bshape[e] > 1 && cstr[e] == g.strides[d]) found = int(e);
      // A dimension that runs past the end of base dimension `found` continues into the
      // dimensions before it: one stride only where the window keeps them evenly spaced
      // (a [2, 4, 64] window of heads x rows seen as 8 rows is not, when the heads are
      // further apart than 4 rows).
      bool strided = found >= 0;
      if (strided) {
        int64_t pos = coords[found], extent = bshape[found];
        for (int e = found - 1; strided && pos + g.shape[d] > extent; --e) {
          if (e < 0) {
            strided = false;
          } else if (bshape[e] > 1) {
            strided = inst.strides[e] == inst.strides[found] * extent;
            pos += coords[e] * extent;
            extent *= bshape[e];
          }
        }
      }
      if (!strided)
        return absl::UnimplementedError(absl::StrCat(
            where(s), ": body @", body.funcName, " reshapes %", g.name,
            ", a window that is not contiguous in its tensor; ptoc cannot express that "
            "reshape as a strided view: reshape outside the loop, or make the window span "
            "whole rows"));
      strides.push_back(inst.strides[found]);
    }
    return addAlias(g.name, map[b], g.shape, strides, offset);
  }

  absl::Status runNested(const LoopStep &s,
                         llvm::ArrayRef<int> tensors) {
    const ControlFunc &inner = lp_.controls[s.control];
    std::vector<int> flat(inner.tensors.size(), -1);
    std::vector<int> args;
    for (const codegen::ControlTensor &ct : inner.tensors)
      if (ct.kind == codegen::ControlTensor::Kind::Argument) args.push_back(&ct - inner.tensors.data());
    if (args.size() != s.ins.size() || inner.results.size() != s.outs.size())
      return ir::internalError(absl::StrCat(s.location, ": loop '", s.name,
                                            "': windows do not match its body's signature"));
    for (size_t i = 0; i < s.ins.size(); ++i) {
      int t = args[i];
      absl::StatusOr<int> w = window(s, s.ins[i], "ins", i, tensors[s.ins[i].tensor],
                                     inner.tensors[t].shape);
      if (!w.ok()) return w.status();
      flat[t] = *w;
    }
    for (size_t j = 0; j < s.outs.size(); ++j) {
      int t = inner.results[j];
      absl::StatusOr<int> w = window(s, s.outs[j], "outs", j, tensors[s.outs[j].tensor],
                                     inner.tensors[t].shape);
      if (!w.ok()) return w.status();
      if (inner.tensors[t].kind == codegen::ControlTensor::Kind::Argument) {
        // An argument updated in place and returned: its window must be the same memory.
        const GmTensor &a = out_.tensors[flat[t]], &o = out_.tensors[*w];
        if (a.base != o.base || a.baseOffset != o.baseOffset || a.strides != o.strides)
          return absl::UnimplementedError(absl::StrCat(
              where(s, &s.outs[j]), ": the body returns its argument %", inner.tensors[t].name,
              " into a different window; write the result into the window it reads"));
        continue;
      }
      if (flat[t] >= 0)
        return absl::UnimplementedError(absl::StrCat(where(s, &s.outs[j]),
                                                     ": the body returns one value twice"));
      flat[t] = *w;
    }
    for (size_t t = 0; t < inner.tensors.size(); ++t)
      if (flat[t] < 0) {
        const codegen::ControlTensor &ct = inner.tensors[t];
        flat[t] = addOwner(ct.name, ct.dtype, ct.shape, GmTensor::Kind::Intermediate);
        shared_[flat[t]] = true;
      }
    return runControl(inner, flat);
  }

  /// The box of `shape` at `offsets` of flat tensor `t`, in its base's coordinates.
  ir::Box baseBox(int t, llvm::ArrayRef<int64_t> offsets, llvm::ArrayRef<int64_t> shape) const {
    const GmTensor &g = out_.tensors[t];
    const GmTensor &b = out_.tensors[g.base];
    llvm::SmallVector<int64_t, 4> bstr = contiguousStrides(b.shape);
    int64_t first = g.baseOffset, last = g.baseOffset;
    for (size_t d = 0; d < shape.size(); ++d) {
      first += offsets[d] * g.strides[d];
      last += (offsets[d] + shape[d] - 1) * g.strides[d];
    }
    ir::Box box;
    box.off.resize(b.shape.size());
    box.size.assign(b.shape.size(), 1);
    int64_t rest = first;
    for (size_t e = 0; e < b.shape.size(); ++e) {
      box.off[e] = rest / bstr[e];
      rest -= box.off[e] * bstr[e];
    }
    llvm::SmallVector<bool, 4> used(b.shape.size(), false);
    bool exact = true;
    for (size_t d = 0; d < shape.size() && exact; ++d) {
      if (shape[d] == 1) continue;
      int found = -1;
      for (size_t e = 0; e < b.shape.size(); ++e)
        if (!used[e] && b.shape[e] > 1 && bstr[e] == g.strides[d]) found = int(e);
      if (found < 0 || box.off[found] + shape[d] > b.shape[found]) {
        exact = false;
        break;
      }
      used[found] = true;
      box.size[found] = shape[d];
    }
    if (exact) return box;
    return ir::boundingBox({first, last}, b.shape);
  }

  void recordAccesses(const Call &call, int callIndex, llvm::ArrayRef<int> own) {
    const codegen::Leaf &leaf = out_.leaves[call.leaf];
    for (const codegen::LeafOp &op : leaf.ops) {
      if (op.region < 0 || size_t(op.region) >= call.regions.size()) continue;
      if (op.code != ir::OpCode::CopyIn && op.code != ir::OpCode::CopyOut) continue;
      const codegen::Region &r = call.regions[op.region];
      if (r.tensor < 0 || size_t(r.tensor) >= out_.tensors.size()) continue;
      int base = out_.tensors[r.tensor].base;
      if (!shared_[base]) continue;
      if (r.offsets.size() != op.shape.size()) continue;
      // A window with a valid_shape: only the valid part is accessed.
      llvm::SmallVector<int64_t, 4> shape(op.shape.begin(), op.shape.end());
      const llvm::SmallVector<int64_t, 4> &valid = out_.tensors[r.tensor].valid;
      bool empty = false;
      for (size_t d = 0; d < valid.size() && d < shape.size(); ++d) {
        shape[d] = std::min(shape[d], valid[d] - r.offsets[d]);
        empty |= shape[d] <= 0;
      }
      if (empty) continue;
      bool write = op.code == ir::OpCode::CopyOut;
      accesses_.push_back({callIndex, base, baseBox(r.tensor, r.offsets, shape), write,
                           !write && llvm::is_contained(own, r.tensor)});
    }
  }

  struct Cell {
    int lastWriter = -1;
    std::vector<int> readers;
  };
  struct BaseCells {
    std::vector<std::vector<int64_t>> edges; ///< per dim: sorted unique box edges
    std::unordered_map<uint64_t, Cell> cells;
  };

  /// Calls `fn(cell)` for every cell of `box` in `bc`.
  template <typename Fn> void forCells(BaseCells &bc, const ir::Box &box, Fn fn) {
    size_t rank = box.off.size();
    llvm::SmallVector<int64_t, 4> lo(rank), hi(rank), cur(rank), count(rank);
    for (size_t d = 0; d < rank; ++d) {
      const std::vector<int64_t> &e = bc.edges[d];
      lo[d] = std::lower_bound(e.begin(), e.end(), box.off[d]) - e.begin();
      hi[d] = std::lower_bound(e.begin(), e.end(), box.end(d)) - e.begin();
      count[d] = int64_t(e.size());
      cur[d] = lo[d];
      if (hi[d] <= lo[d]) return;
    }
    while (true) {
      uint64_t key = 0;
      for (size_t d = 0; d < rank; ++d) key = key * uint64_t(count[d]) + uint64_t(cur[d]);
      fn(bc.cells[key]);
      size_t d = rank;
      while (d > 0) {
        --d;
        if (++cur[d] < hi[d]) break;
        cur[d] = lo[d];
        if (d == 0) return;
      }
      if (rank == 0) return;
    }
  }

  /// Cross-iteration dependencies from the accesses, then per-iteration reordering.
  absl::Status order() {
    std::unordered_map<int, BaseCells> bases;
    for (const Access &a : accesses_) {
      BaseCells &bc = bases[a.base];
      bc.edges.resize(a.box.off.size());
      for (size_t d = 0; d < a.box.off.size(); ++d) {
        bc.edges[d].push_back(a.box.off[d]);
        bc.edges[d].push_back(a.box.end(d));
      }
    }
    for (auto &[base, bc] : bases) {
      // Cell keys are mixed-radix numbers: the cell counts' product must fit.
      unsigned __int128 cells = 1;
      for (std::vector<int64_t> &e : bc.edges) {
        std::sort(e.begin(), e.end());
        e.erase(std::unique(e.begin(), e.end()), e.end());
        cells *= e.size();
      }
      if (cells > (unsigned __int128)UINT64_MAX)
        return absl::ResourceExhaustedError(absl::StrCat(
            "loops of @", out_.funcName, " access %", out_.tensors[base].name,
            " through too many distinct regions to order; use fewer, larger windows"));
    }
    size_t numCalls = out_.calls.size();
    std::vector<std::vector<int>> extra(numCalls), extraWrite(numCalls);
    bool backward = false;
    instanceBegin_.push_back(int(numCalls));
    size_t a = 0;
    for (size_t inst = 0; inst + 1 < instanceBegin_.size(); ++inst) {
      size_t begin = a;
      int endCall = instanceBegin_[inst + 1];
      while (a < accesses_.size() && accesses_[a].call < endCall) ++a;
      // Reads first: they see the values from before this iteration (all but the
      // reads of what the iteration itself writes, last below).
      for (size_t i = begin; i < a; ++i) {
        const Access &x = accesses_[i];
        if (x.write || x.own) continue;
        forCells(bases[x.base], x.box, [&](Cell &c) {
          if (c.lastWriter >= 0) extra[x.call].push_back(c.lastWriter);
        });
      }
      for (size_t i = begin; i < a; ++i) {
        const Access &x = accesses_[i];
        if (x.write || x.own) continue;
        forCells(bases[x.base], x.box, [&](Cell &c) {
          if (c.readers.empty() || c.readers.back() != x.call) c.readers.push_back(x.call);
        });
      }
      for (size_t i = begin; i < a; ++i) {
        const Access &x = accesses_[i];
        if (!x.write) continue;
        forCells(bases[x.base], x.box, [&](Cell &c) {
          auto wait = [&](int p) {
            if (p == x.call) return;
            extraWrite[x.call].push_back(p);
            backward |= p > x.call;
          };
          if (c.lastWriter >= 0) wait(c.lastWriter);
          for (int r : c.readers) wait(r);
          c.lastWriter = x.call;
          c.readers.clear();
        });
      }
      // Reads of what this iteration wrote: after its writers (the body orders them
      // already), and before the next iteration's writes.
      for (size_t i = begin; i < a; ++i) {
        const Access &x = accesses_[i];
        if (!x.own) continue;
        forCells(bases[x.base], x.box, [&](Cell &c) {
          if (c.lastWriter >= 0 && c.lastWriter != x.call) {
            extra[x.call].push_back(c.lastWriter);
            backward |= c.lastWriter > x.call;
          }
          if (c.readers.empty() || c.readers.back() != x.call) c.readers.push_back(x.call);
        });
      }
    }
    for (size_t c = 0; c < numCalls; ++c) {
      Call &call = out_.calls[c];
      call.preds.insert(call.preds.end(), extra[c].begin(), extra[c].end());
      call.preds.insert(call.preds.end(), extraWrite[c].begin(), extraWrite[c].end());
      call.writeOrderPreds.insert(call.writeOrderPreds.end(), extraWrite[c].begin(),
                                  extraWrite[c].end());
      for (std::vector<int> *v : {&call.preds, &call.writeOrderPreds}) {
        std::sort(v->begin(), v->end());
        v->erase(std::unique(v->begin(), v->end()), v->end());
      }
    }
    if (backward) return reorder();
    return absl::OkStatus();
  }

  /// Puts every iteration's calls into a topological order of their (now complete)
  /// dependencies; iterations keep their places.
  absl::Status reorder() {
    size_t n = out_.calls.size();
    std::vector<int> newIndex(n, -1), order;
    order.reserve(n);
    for (size_t inst = 0; inst + 1 < instanceBegin_.size(); ++inst) {
      int b = instanceBegin_[inst], e = instanceBegin_[inst + 1];
      std::vector<int> pending(e - b, 0);
      std::vector<std::vector<int>> succ(e - b);
      for (int c = b; c < e; ++c)
        for (int p : out_.calls[c].preds)
          if (p >= b && p < e) {
            ++pending[c - b];
            succ[p - b].push_back(c);
          }
      std::vector<int> ready;
      for (int c = e - 1; c >= b; --c)
        if (!pending[c - b]) ready.push_back(c);
      int placed = 0;
      while (!ready.empty()) {
        int c = ready.back();
        ready.pop_back();
        newIndex[c] = int(order.size());
        order.push_back(c);
        ++placed;
        for (int s : succ[c - b])
          if (--pending[s - b] == 0) ready.push_back(s);
        std::sort(ready.begin(), ready.end(), std::greater<int>());
      }
      if (placed != e - b) {
        const codegen::Instance &in = out_.instances[inst];
        return absl::UnimplementedError(absl::StrCat(
            "loop '", in.loop, "' iteration ", in.iteration, ": a task of body @",
            out_.bodies[in.body].name, " both writes a window and reads an overlapping window "
            "after another task wrote it; ptoc cannot order that iteration. Write the result "
            "into a window the body does not read, or split the body"));
      }
    }
    std::vector<Call> calls(n);
    for (size_t i = 0; i < n; ++i) {
      Call c = std::move(out_.calls[order[i]]);
      for (std::vector<int> *v : {&c.preds, &c.writeOrderPreds}) {
        for (int &p : *v) p = newIndex[p];
        std::sort(v->begin(), v->end());
      }
      calls[i] = std::move(c);
    }
    out_.calls = std::move(calls);
    return absl::OkStatus();
  }

  /// The control thread reading element `index` of kernel input `tensor` (an
  /// argument of the entry function, by name) from GM.
  absl::StatusOr<int64_t> readElement(llvm::StringRef tensor, llvm::ArrayRef<int64_t> index) const {
    const ControlFunc &entry = lp_.controls[lp_.entry];
    const codegen::ControlTensor *t = nullptr;
    for (const codegen::ControlTensor &c : entry.tensors)
      if (c.kind == codegen::ControlTensor::Kind::Argument && c.name == tensor) t = &c;
    if (!t) return absl::InvalidArgumentError(absl::StrCat("no kernel input named '", tensor.str(), "'"));
    if (t->argIndex < 0 || size_t(t->argIndex) >= args_.size())
      return absl::InvalidArgumentError(absl::StrCat(
          "reads input '", tensor.str(), "', which this run did not provide (the iterations "
          "depend on its values: run the kernel with its inputs)"));
    return readIntElement(args_[t->argIndex], tensor, index);
  }

  const LoopProgram &lp_;
  llvm::ArrayRef<ConstTensorRef> args_;
  ir::SymExpr::ElementReader reader_;
  Program out_;
  std::vector<int> leafOffset_;
  std::vector<bool> shared_;      ///< per flat tensor: a base iterations share
  std::vector<ir::SymBinding> bindings_;
  /// The indices of the loops being run, outermost first (bindings_ also holds the
  /// sizes of dynamic axes): what an error names.
  std::vector<ir::SymBinding> loopIndices_;
  std::vector<Access> accesses_;  ///< in call order
  std::vector<int> instanceBegin_;
  /// The innermost parallel loop being expanded: its run and iteration ordinal.
  struct Parallel {
    int run = -1;
    int64_t iteration = 0;
  };
  Parallel parallel_;
  int numParallelRuns_ = 0;
};

} // namespace

absl::StatusOr<Program> expandLoops(const LoopProgram &lp, const target::DeviceSpec &device,
                                    int stitchMaxNum, int parallelism,
                                    llvm::ArrayRef<ConstTensorRef> args) {
  absl::StatusOr<Program> p = Expander(lp, args).run();
  if (!p.ok()) return p.status();
  if (absl::Status s = assignStitches(*p, device, stitchMaxNum, parallelism); !s.ok()) return s;
  return p;
}

absl::Status assignStitches(Program &program, const target::DeviceSpec &device, int stitchMaxNum,
                            int parallelism) {
  if (stitchMaxNum < kMinStitchMaxNum || stitchMaxNum > kMaxStitchMaxNum)
    return absl::InvalidArgumentError(absl::StrCat(
        "stitch_function_max_num must be between ", kMinStitchMaxNum, " and ", kMaxStitchMaxNum,
        " (iterations per stitch), got ", stitchMaxNum));
  if (absl::Status s = checkSchedParallelism(parallelism); !s.ok()) return s;
  forgetWorkspaces(program);
  program.stitchWaitFor.clear();
  program.parallelLoops = false;
  if (program.instances.empty()) return absl::OkStatus();
  program.schedParallelismDerived = parallelism == kAutoSchedParallelism;
  if (parallelism == kAutoSchedParallelism)
    parallelism = automaticSchedParallelism(program, device);
  program.schedParallelism = parallelism;
  const size_t n = program.instances.size();
  std::vector<int64_t> tasks(n, 0);
  for (const Call &c : program.calls)
    if (c.instance >= 0 && size_t(c.instance) < tasks.size()) ++tasks[c.instance];

  // Segmentation: a new stitch at a full stitch, and wherever the innermost parallel
  // loop iteration changes (entering, leaving, or the next iteration of one). Inside a
  // parallel iteration a stitch holds up to kParallelStitchMaxNum iterations.
  std::vector<int> stitchOf(n, 0);
  bool anyParallel = false;
  int k = -1;
  size_t inStitch = 0;
  for (size_t i = 0; i < n; ++i) {
    const codegen::Instance &in = program.instances[i];
    anyParallel |= in.parallelRun >= 0;
    const size_t limit = in.parallelRun >= 0 ? size_t(kParallelStitchMaxNum) : size_t(stitchMaxNum);
    const codegen::Instance *prev = i > 0 ? &program.instances[i - 1] : nullptr;
    bool sameIteration = prev && in.parallelRun == prev->parallelRun &&
                         (in.parallelRun < 0 || in.parallelIteration == prev->parallelIteration);
    if (k < 0 || !sameIteration || inStitch == limit) {
      ++k;
      inStitch = 0;
    }
    stitchOf[i] = k;
    ++inStitch;
  }
  const size_t numStitches = size_t(k) + 1;

  // The control thread builds the stitches in order.
  const target::SchedulerSpec &sched = device.scheduler;
  program.stitchReadyCycles.assign(numStitches, 0);
  double clock = 0;
  for (size_t i = 0; i < n; ++i) {
    clock += sched.controlIterationCycles + double(tasks[i]) * sched.controlTaskCycles;
    if (i + 1 == n || stitchOf[i + 1] != stitchOf[i]) {
      clock += sched.controlStitchCycles;
      program.stitchReadyCycles[stitchOf[i]] = clock;
    }
  }
  for (Call &c : program.calls)
    c.stitch = c.instance >= 0 && size_t(c.instance) < n ? stitchOf[c.instance] : 0;
  program.parallelLoops = anyParallel;
  if (!anyParallel) { // k - 1 for every stitch
    recycleWorkspaces(program, stitchMaxNum, parallelism);
    return absl::OkStatus();
  }

  // What each stitch waits for. The first stitch of iteration j of a parallel run
  // waits for every stitch before the run's iteration j - P + 1 (the last stitch of
  // iteration j - P), or before the run for j < P; other stitches for the one before.
  // Iterations without stitches of their own (empty, or all nested in an inner
  // parallel loop) are skipped: the next iteration that has some stands in.
  struct RunStarts {
    std::vector<int64_t> ordinal; ///< increasing
    std::vector<int> firstStitch; ///< of that iteration
  };
  std::map<int, RunStarts> runs;
  program.stitchWaitFor.assign(numStitches, 0);
  for (size_t s = 0; s < numStitches; ++s) program.stitchWaitFor[s] = int(s) - 1;
  for (size_t i = 0; i < n; ++i) {
    const codegen::Instance &in = program.instances[i];
    if (in.parallelRun < 0) continue;
    RunStarts &r = runs[in.parallelRun];
    if (!r.ordinal.empty() && r.ordinal.back() == in.parallelIteration) continue;
    const int first = stitchOf[i];
    r.ordinal.push_back(in.parallelIteration);
    r.firstStitch.push_back(first);
    const int64_t from = std::max<int64_t>(0, in.parallelIteration - parallelism + 1);
    size_t at = size_t(std::lower_bound(r.ordinal.begin(), r.ordinal.end(), from) - r.ordinal.begin());
    program.stitchWaitFor[first] = r.firstStitch[at] - 1;
  }
  recycleWorkspaces(program, stitchMaxNum, parallelism);
  return absl::OkStatus();
}

} // namespace ptoc::runtime
