// LoopView: decoding the loop op's attributes, and the module-level loop check.
#include "ptoc/ir/LoopView.h"

#include <algorithm>
#include <utility>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "llvm/ADT/STLExtras.h"
#include "ptoc/ir/Context.h"
#include "ptoc/ir/Func.h"
#include "ptoc/ir/Module.h"
#include "ptoc/ir/Operation.h"

namespace ptoc::ir {
namespace {

absl::StatusOr<SymExpr> symOf(Attribute a, llvm::StringRef what) {
  if (a.isInt()) return SymExpr::constant(a.getInt());
  if (a.isString()) {
    absl::StatusOr<SymExpr> e = SymExpr::parse(a.getString());
    if (!e.ok())
      return absl::InvalidArgumentError(absl::StrCat(what.str(), ": ", e.status().message()));
    return e;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      what.str(), " must be an integer or an expression string like \"i * 64\", got ", a.str()));
}

absl::StatusOr<LoopWindow> windowOf(Attribute a, size_t entry) {
  std::string where = absl::StrCat("window ", entry);
  if (!a.isDict())
    return absl::InvalidArgumentError(absl::StrCat(
        where, " must be {of = N, offsets = [...], sizes = [...]}, got ", a.str()));
  LoopWindow w;
  Attribute of = a.lookup("of"), offsets = a.lookup("offsets"), sizes = a.lookup("sizes"),
            valid = a.lookup("valid");
  for (const NamedAttr &e : a.getDict())
    if (e.name.str() != "of" && e.name.str() != "offsets" && e.name.str() != "sizes" &&
        e.name.str() != "valid")
      return absl::InvalidArgumentError(absl::StrCat(where, " has unknown key '", e.name.str().str(),
                                                     "' (keys: of, offsets, sizes, valid)"));
  if (!of || !of.isInt() || of.getInt() < 0)
    return absl::InvalidArgumentError(absl::StrCat(where, " needs 'of', the operand index"));
  w.operand = static_cast<int>(std::min<int64_t>(of.getInt(), INT32_MAX));
  if (!sizes || !sizes.isIntArray())
    return absl::InvalidArgumentError(
        absl::StrCat(where, " needs 'sizes', an integer array (the window's box)"));
  w.sizes.assign(sizes.getIntArray().begin(), sizes.getIntArray().end());
  if (!offsets || !(offsets.isIntArray() || offsets.isArray()))
    return absl::InvalidArgumentError(absl::StrCat(
        where, " needs 'offsets', one integer or expression string per dimension"));
  // Offsets and valid extents: one integer or expression per dimension.
  auto exprs = [&](Attribute a, const char *what, std::vector<SymExpr> &into) -> absl::Status {
    if (a.isIntArray()) {
      for (int64_t v : a.getIntArray()) into.push_back(SymExpr::constant(v));
    } else {
      for (Attribute o : a.getArray()) {
        absl::StatusOr<SymExpr> e = symOf(o, absl::StrCat(where, " ", what, " ", into.size()));
        if (!e.ok()) return e.status();
        into.push_back(*std::move(e));
      }
    }
    if (into.size() != w.sizes.size())
      return absl::InvalidArgumentError(absl::StrCat(where, " has ", into.size(), " ", what,
                                                     "s but ", w.sizes.size(),
                                                     " sizes; give one of each per dimension"));
    return absl::OkStatus();
  };
  if (absl::Status st = exprs(offsets, "offset", w.offsets); !st.ok()) return st;
  if (valid) {
    if (!(valid.isIntArray() || valid.isArray()))
      return absl::InvalidArgumentError(absl::StrCat(
          where, " 'valid' must be one integer or expression string per dimension"));
    if (absl::Status st = exprs(valid, "valid extent", w.valid); !st.ok()) return st;
  }
  for (int64_t s : w.sizes)
    if (s <= 0 && s != kDynamicDim)
      return absl::InvalidArgumentError(absl::StrCat(
          where, " has size ", s, "; every size must be positive (or -1: all of a dynamic "
          "axis)"));
  return w;
}

std::string windowStr(const LoopWindow &w) {
  std::vector<std::string> parts;
  for (size_t d = 0; d < w.offsets.size(); ++d)
    parts.push_back(absl::StrCat(w.offsets[d].str(), " +", w.sizes[d]));
  return absl::StrCat("[", absl::StrJoin(parts, ", "), "]");
}

} // namespace

absl::StatusOr<std::vector<LoopWindow>> parseWindows(Attribute a) {
  std::vector<LoopWindow> out;
  if (a.isIntArray() && a.getIntArray().empty()) return out;
  if (!a.isArray())
    return absl::InvalidArgumentError(absl::StrCat(
        "windows must be an array like [{of = 0, offsets = [\"i\", 0], sizes = [1, 64]}], got ",
        a.str()));
  for (Attribute e : a.getArray()) {
    absl::StatusOr<LoopWindow> w = windowOf(e, out.size());
    if (!w.ok()) return w.status();
    out.push_back(*std::move(w));
  }
  return out;
}

bool isWindowList(Attribute a) { return parseWindows(a).ok(); }

Attribute symAttr(Context &ctx, const SymExpr &e) {
  return e.isConstant() ? ctx.intAttr(e.constantValue()) : ctx.stringAttr(e.str());
}

Attribute windowsAttr(Context &ctx, llvm::ArrayRef<LoopWindow> windows) {
  std::vector<Attribute> list;
  for (const LoopWindow &w : windows) {
    std::vector<Attribute> offsets;
    for (const SymExpr &e : w.offsets) offsets.push_back(symAttr(ctx, e));
    std::vector<NamedAttr> entries = {{ctx.id("of"), ctx.intAttr(w.operand)},
                                      {ctx.id("offsets"), ctx.arrayAttr(offsets)},
                                      {ctx.id("sizes"), ctx.intArrayAttr(w.sizes)}};
    if (!w.valid.empty()) {
      std::vector<Attribute> valid;
      for (const SymExpr &e : w.valid) valid.push_back(symAttr(ctx, e));
      entries.push_back({ctx.id("valid"), ctx.arrayAttr(valid)});
    }
    list.push_back(ctx.dictAttr(entries, /*sortByName=*/false));
  }
  return ctx.arrayAttr(list);
}

absl::StatusOr<LoopView> LoopView::of(const Operation &op) {
  LoopView v;
  auto str = [&](llvm::StringRef key) -> std::string {
    Attribute a = op.attr(key);
    return a && a.isString() ? a.getString().str() : "";
  };
  v.body = str("body");
  v.name = str("name");
  v.index = op.attr("index") ? str("index") : v.name;
  if (v.body.empty()) return absl::InvalidArgumentError("needs 'body', the function to run");
  if (v.name.empty()) return absl::InvalidArgumentError("needs 'name', the loop's name");
  if (!isBareIdentifier(v.index) || v.index == "min" || v.index == "max")
    return absl::InvalidArgumentError(absl::StrCat(
        "index '", v.index, "' is not a usable name in expressions; name it like a Python "
        "variable (letters, digits, '_'), not min or max"));
  struct Bound {
    const char *key;
    SymExpr *into;
    int64_t fallback;
  };
  for (Bound b : {Bound{"start", &v.start, 0}, Bound{"stop", &v.stop, -1},
                  Bound{"step", &v.step, 1}}) {
    Attribute a = op.attr(b.key);
    if (!a) {
      if (b.fallback < 0) return absl::InvalidArgumentError("needs 'stop', the end of the range");
      *b.into = SymExpr::constant(b.fallback);
      continue;
    }
    absl::StatusOr<SymExpr> e = symOf(a, b.key);
    if (!e.ok()) return e.status();
    *b.into = *std::move(e);
  }
  if (!v.step.isConstant() || v.step.constantValue() <= 0)
    return absl::InvalidArgumentError(
        absl::StrCat("step must be a positive integer, got ", v.step.str()));
  for (auto [key, into] : {std::pair{"ins", &v.ins}, std::pair{"outs", &v.outs}}) {
    Attribute a = op.attr(key);
    if (!a) return absl::InvalidArgumentError(absl::StrCat("needs '", key, "' (windows)"));
    absl::StatusOr<std::vector<LoopWindow>> w = parseWindows(a);
    if (!w.ok()) return absl::InvalidArgumentError(absl::StrCat(key, ": ", w.status().message()));
    *into = *std::move(w);
  }
  if (Attribute a = op.attr("parallel")) {
    if (!a.isBool())
      return absl::InvalidArgumentError("'parallel' must be true or false");
    v.parallel = a.getBool();
  }
  if (Attribute a = op.attr("locs")) {
    size_t windows = v.ins.size() + v.outs.size();
    bool strings = a.isArray() && llvm::all_of(a.getArray(), [](Attribute e) { return e.isString(); });
    if (!(a.isIntArray() && a.getIntArray().empty()) &&
        (!strings || a.getArray().size() != windows))
      return absl::InvalidArgumentError(absl::StrCat(
          "'locs' must hold one \"file:line:col\" string per window (", windows,
          ": ins then outs), got ", a.str()));
    for (size_t i = 0; strings && i < windows; ++i)
      (i < v.ins.size() ? v.ins[i] : v.outs[i - v.ins.size()]).loc =
          a.getArray()[i].getString().str();
  }
  v.written = writtenOperands(v.outs);
  return v;
}

Attribute LoopView::toAttr(Context &ctx) const {
  std::vector<NamedAttr> attrs = {
      {ctx.id("body"), ctx.stringAttr(body)},   {ctx.id("index"), ctx.stringAttr(index)},
      {ctx.id("ins"), windowsAttr(ctx, ins)},   {ctx.id("name"), ctx.stringAttr(name)},
      {ctx.id("outs"), windowsAttr(ctx, outs)}, {ctx.id("stop"), symAttr(ctx, stop)},
  };
  // Defaults are left out (start 0, step 1), as of() reads them.
  if (!start.isConstant() || start.constantValue() != 0)
    attrs.push_back({ctx.id("start"), symAttr(ctx, start)});
  if (!step.isConstant() || step.constantValue() != 1)
    attrs.push_back({ctx.id("step"), symAttr(ctx, step)});
  if (parallel) attrs.push_back({ctx.id("parallel"), ctx.boolAttr(true)});
  std::vector<Attribute> locs;
  bool anyLoc = false;
  for (const std::vector<LoopWindow> *ws : {&ins, &outs})
    for (const LoopWindow &w : *ws) {
      locs.push_back(ctx.stringAttr(w.loc));
      anyLoc |= !w.loc.empty();
    }
  if (anyLoc) attrs.push_back({ctx.id("locs"), ctx.arrayAttr(locs)});
  return ctx.dictAttr(attrs, /*sortByName=*/true);
}

llvm::SmallVector<int, 4> writtenOperands(llvm::ArrayRef<LoopWindow> outs) {
  llvm::SmallVector<int, 4> written;
  for (const LoopWindow &w : outs)
    if (std::find(written.begin(), written.end(), w.operand) == written.end())
      written.push_back(w.operand);
  return written;
}

absl::StatusOr<llvm::SmallVector<int64_t, 4>>
evaluateWindow(llvm::ArrayRef<SymExpr> offsets, llvm::ArrayRef<int64_t> sizes,
               llvm::ArrayRef<int64_t> shape, llvm::StringRef tensor,
               llvm::ArrayRef<SymBinding> bindings, const SymExpr::ElementReader &reader,
               llvm::StringRef side, size_t i) {
  llvm::SmallVector<int64_t, 4> out;
  for (size_t d = 0; d < offsets.size() && d < sizes.size() && d < shape.size(); ++d) {
    absl::StatusOr<int64_t> o = offsets[d].evaluate(bindings, reader);
    if (!o.ok())
      return absl::InvalidArgumentError(absl::StrCat(side.str(), " window ", i, " offset ", d,
                                                     ": ", o.status().message()));
    if (*o < 0 || sizes[d] < 0 || *o > shape[d] - sizes[d]) {
      std::vector<std::string> parts;
      for (size_t e = 0; e < offsets.size() && e < sizes.size(); ++e)
        parts.push_back(absl::StrCat(offsets[e].str(), " +", sizes[e]));
      // Wide: an offset near INT64_MAX plus the size must not overflow.
      __int128 end = __int128(*o) + sizes[d];
      return absl::InvalidArgumentError(absl::StrCat(
          side.str(), " window ", i, " [", absl::StrJoin(parts, ", "), "] of ", tensor.str(),
          " (", absl::StrJoin(shape, "x"), ") starts at ", *o, " in dimension ", d,
          " and so reaches [", *o, ", ",
          end > INT64_MAX ? std::string("2^63 or beyond") : std::to_string(int64_t(end)),
          "), outside [0, ", shape[d], "); fix the window's offsets or the loop's bounds"));
    }
    out.push_back(*o);
  }
  return out;
}

std::optional<llvm::SmallVector<int, 4>> bodyDimsOfWindow(llvm::ArrayRef<int64_t> bodyShape,
                                                          llvm::ArrayRef<int64_t> sizes) {
  llvm::SmallVector<int, 4> dims;
  size_t d = 0;
  for (int64_t extent : bodyShape) {
    if (extent == 1) {
      dims.push_back(-1);
      continue;
    }
    while (d < sizes.size() && sizes[d] == 1) ++d;
    if (d >= sizes.size() || sizes[d] != extent) return std::nullopt;
    dims.push_back(int(d++));
  }
  while (d < sizes.size() && sizes[d] == 1) ++d;
  if (d != sizes.size()) return std::nullopt; // elements the body does not see
  return dims;
}

llvm::SmallVector<int64_t, 4> resolveWholeAxes(llvm::ArrayRef<int64_t> sizes,
                                               llvm::ArrayRef<int64_t> shape) {
  llvm::SmallVector<int64_t, 4> out(sizes.begin(), sizes.end());
  for (size_t d = 0; d < out.size() && d < shape.size(); ++d)
    if (out[d] == kDynamicDim) out[d] = shape[d];
  return out;
}

absl::StatusOr<llvm::SmallVector<int64_t, 4>>
evaluateValidExtents(llvm::ArrayRef<SymExpr> valid, llvm::ArrayRef<int64_t> sizes,
                     llvm::ArrayRef<SymBinding> bindings, const SymExpr::ElementReader &reader,
                     llvm::StringRef side, size_t i) {
  llvm::SmallVector<int64_t, 4> out(sizes.begin(), sizes.end());
  for (size_t d = 0; d < valid.size() && d < sizes.size(); ++d) {
    absl::StatusOr<int64_t> v = valid[d].evaluate(bindings, reader);
    if (!v.ok())
      return absl::InvalidArgumentError(absl::StrCat(side.str(), " window ", i, " valid extent ",
                                                     d, ": ", v.status().message()));
    if (*v < 0 || *v > sizes[d])
      return absl::InvalidArgumentError(absl::StrCat(
          side.str(), " window ", i, " valid extent ", d, " '", valid[d].str(), "' is ", *v,
          ", outside [0, ", sizes[d], "] (the window's size); a valid_shape covers between none "
          "of the window (nothing is read or written) and all of it in each dimension"));
    out[d] = *v;
  }
  return out;
}

bool isControlFunc(const Func &f) {
  for (const Operation &op : f.ops())
    if (op.code() == OpCode::Loop) return true;
  return false;
}

std::set<std::string> loopBodyNames(const Module &m) {
  std::set<std::string> bodies;
  for (const Func &f : m.funcs())
    for (const Operation &op : f.ops())
      if (op.code() == OpCode::Loop)
        if (Attribute b = op.attr("body"); b && b.isString()) bodies.insert(b.getString().str());
  return bodies;
}

Func *loopEntry(Module &m) { return const_cast<Func *>(loopEntry(std::as_const(m))); }

const Func *loopEntry(const Module &m) {
  std::set<std::string> bodies = loopBodyNames(m);
  if (bodies.empty()) return nullptr;
  const Func *entry = nullptr;
  for (const Func &f : m.funcs()) {
    if (bodies.count(f.name().str())) continue;
    if (entry) return nullptr;
    entry = &f;
  }
  return entry;
}

bool sameElements(llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<int64_t> sizes) {
  return bodyDimsOfWindow(shape, sizes).has_value();
}

namespace {

/// The loop indices in scope at a body, with their ranges. A range is *exact* when
/// every index value in it is the first or last of its loop and the indices vary
/// independently (a loop with constant bounds): then a window whose offset bounds are
/// exact (SymExpr::boundsAreExact) and out of range is out of range in some
/// iteration. An index of a loop whose bounds depend on other indices, or are not
/// known, only has an enclosure (`enclosed`): its windows are checked per iteration
/// at run time.
struct LoopScope {
  std::vector<SymBinding> ranges;
  std::set<std::string> enclosed;
};

/// The module-level check: walks control functions from the roots (functions no loop
/// runs), so each body knows the indices in scope and their ranges.
class LoopChecker {
public:
  explicit LoopChecker(const Module &m)
      : m_(m), ctx_(m.context()), entry_(loopEntry(m)) {}

  bool run() {
    // Which loop runs each body.
    for (const Func &f : m_.funcs())
      for (const Operation &op : f.ops()) {
        if (op.code() != OpCode::Loop) continue;
        absl::StatusOr<LoopView> v = LoopView::of(op);
        if (!v.ok()) {
          error(op) << std::string(v.status().message());
          continue;
        }
        const Func *body = m_.lookup(v->body);
        if (!body) {
          error(op) << "runs '@" << v->body << "', which is not a function of the module; "
                    << "define the body function or name an existing one";
          continue;
        }
        if (body == &f) {
          error(op) << "runs its own function '@" << f.name() << "' as its body; a body must "
                    << "be another function";
          continue;
        }
        auto [it, fresh] = runner_.try_emplace(body, &op);
        if (!fresh) {
          error(op) << "runs '@" << v->body << "', which another loop (at "
                    << it->second->loc().str() << ") runs too; give each loop its own body";
          continue;
        }
      }
    // Roots first, then bodies as their loops are reached (a cycle is never reached).
    for (const Func &f : m_.funcs())
      if (!runner_.count(&f)) visit(f, LoopScope());
    for (auto &[body, op] : runner_)
      if (!reached_.count(body))
        error(*op) << "runs '@" << body->name() << "', which (through its own loops) runs this "
                   << "loop again; loops cannot recurse";
    return ok_;
  }

private:
  InFlightDiagnostic error(const Operation &op) {
    ok_ = false;
    InFlightDiagnostic d = ctx_.emitError(op.loc());
    d << "'loop' op ";
    return d;
  }

  void visit(const Func &f, const LoopScope &scope) {
    if (!visited_.insert(&f).second) return;
    for (const Operation &op : f.ops())
      if (op.code() == OpCode::Loop) checkLoop(f, op, scope);
  }

  void checkLoop(const Func &f, const Operation &op, const LoopScope &scope) {
    absl::StatusOr<LoopView> view = LoopView::of(op);
    if (!view.ok()) return; // reported in run()
    const LoopView &v = *view;
    const Func *body = m_.lookup(v.body);
    if (!body || body == &f) return;
    // Reached from a root (not a cycle), even when an error below stops the check
    // before its body is visited.
    reached_.insert(body);
    for (const SymBinding &b : scope.ranges)
      if (b.name == v.index) {
        error(op) << "index '" << v.index << "' is already the index of an enclosing loop; "
                  << "give the inner loop another name";
        return;
      }
    // Bounds: names in scope only.
    std::optional<std::pair<int64_t, int64_t>> startRange, stopRange;
    for (auto [key, e, range] : {std::tuple{"start", &v.start, &startRange},
                                 std::tuple{"stop", &v.stop, &stopRange}}) {
      if (!namesInScope(op, *e, scope.ranges, key)) return;
      *range = e->bounds(scope.ranges);
    }
    // The index runs over start, start + step, ... below stop: with constant bounds
    // its first and last values are known exactly, else [min start, max stop - 1]
    // encloses them. (Wide: stop - 1 and last - start may not fit in 64 bits.)
    LoopScope inner = scope;
    bool ranged = startRange && stopRange;
    int64_t lo = ranged ? startRange->first : 0, hi = lo;
    bool empty = false;
    if (ranged) {
      __int128 last = __int128(stopRange->second) - 1;
      empty = last < lo;
      if (!empty && v.start.names().empty()) {
        __int128 step = v.step.constantValue();
        last = lo + (last - lo) / step * step;
      }
      if (!empty) hi = int64_t(last);
    }
    bool indexExact = ranged && !empty && v.start.names().empty() && v.stop.names().empty();
    // An index without a known range is still in scope; its windows are checked per
    // iteration at run time.
    inner.ranges.push_back({v.index, lo, hi});
    if (!indexExact) inner.enclosed.insert(v.index);

    // Windows against operands and the body's signature.
    unsigned numOperands = op.numOperands();
    auto checkWindows = [&](llvm::ArrayRef<LoopWindow> windows, bool writes) {
      llvm::ArrayRef<Type> bodyTypes = writes ? body->resultTypes() : llvm::ArrayRef<Type>();
      llvm::SmallVector<Type, 4> argTypes;
      if (!writes)
        for (const Value &a : body->args()) argTypes.push_back(a.type());
      llvm::ArrayRef<Type> sig = writes ? bodyTypes : llvm::ArrayRef<Type>(argTypes);
      const char *what = writes ? "outs" : "ins";
      const char *side = writes ? "result" : "argument";
      if (sig.size() != windows.size()) {
        error(op) << "has " << windows.size() << " '" << what << "' windows but its body '@"
                  << body->name() << "' has " << sig.size() << " " << side << "s; give one "
                  << "window per body " << side;
        return;
      }
      for (size_t i = 0; i < windows.size(); ++i) {
        const LoopWindow &w = windows[i];
        if (w.operand < 0 || unsigned(w.operand) >= numOperands) {
          error(op) << what << " window " << i << " is of operand " << w.operand << ", but the "
                    << "loop has " << numOperands << " operands";
          continue;
        }
        Type t = op.operandType(w.operand);
        llvm::ArrayRef<int64_t> shape = t.shape();
        if (!t.isTensor() || w.sizes.size() != shape.size()) {
          error(op) << what << " window " << i << " has " << w.sizes.size()
                    << " dimensions but operand " << w.operand << " is " << t.str()
                    << "; give one offset and size per dimension of the operand";
          continue;
        }
        bool wholeOk = true;
        for (size_t d = 0; d < shape.size() && wholeOk; ++d)
          if (w.sizes[d] == kDynamicDim && shape[d] != kDynamicDim) {
            error(op) << what << " window " << i << " has size -1 (all of a dynamic axis) in "
                      << "dimension " << d << ", but operand " << w.operand << " (" << t.str()
                      << ") is static there; give the size";
            wholeOk = false;
          }
        if (!wholeOk) continue;
        if (sig[i].dtype() != t.dtype() || !sameElements(sig[i].shape(), w.sizes)) {
          error(op) << what << " window " << i << " (sizes [" << absl::StrJoin(w.sizes, ", ")
                    << "] of " << t.str() << ") does not match body " << side << " " << i
                    << " of '@" << body->name() << "', " << sig[i].str()
                    << "; the body sees the window's elements with size-1 dimensions dropped "
                    << "or kept, in the operand's element type";
          continue;
        }
        if (!w.valid.empty() && llvm::is_contained(w.sizes, kDynamicDim)) {
          error(op) << what << " window " << i << " takes a whole dynamic axis (size -1) and "
                    << "has a 'valid' part; a whole axis is valid whole: drop 'valid'";
          continue;
        }
        for (size_t d = 0; d < shape.size(); ++d) {
          if (w.sizes[d] == kDynamicDim) { // all of a dynamic axis, from 0
            if (!w.offsets[d].isConstant() || w.offsets[d].constantValue() != 0) {
              error(op) << what << " window " << i << " has size -1 (all of a dynamic axis) in "
                        << "dimension " << d << ", but its offset is '" << w.offsets[d].str()
                        << "'; a whole axis starts at 0";
              break;
            }
            continue;
          }
          if (shape[d] == kDynamicDim) { // checked per iteration, when the size is known
            if (!namesInScope(op, w.offsets[d], inner.ranges, what)) return;
            continue;
          }
          if (w.sizes[d] > shape[d]) {
            error(op) << what << " window " << i << " has size " << w.sizes[d] << " in dimension "
                      << d << " but operand " << w.operand << " (" << t.str() << ") has "
                      << shape[d];
            break;
          }
          if (!namesInScope(op, w.offsets[d], inner.ranges, what)) return;
          std::vector<std::string> names = w.offsets[d].names();
          if (std::any_of(names.begin(), names.end(),
                          [&](const std::string &n) { return inner.enclosed.count(n) > 0; }))
            continue; // checked per iteration
          std::optional<std::pair<int64_t, int64_t>> b = w.offsets[d].bounds(inner.ranges);
          if (!b || !w.offsets[d].boundsAreExact()) continue; // checked per iteration
          if (!w.valid.empty()) continue; // the valid part is checked per iteration
          // Wide: an offset near INT64_MAX plus the size must not overflow.
          __int128 end = __int128(b->second) + w.sizes[d];
          if (b->first < 0 || end > shape[d]) {
            error(op) << what << " window " << i << " " << windowStr(w) << " of operand "
                      << w.operand << " (" << t.str() << ") reaches [" << b->first << ", "
                      << (end > INT64_MAX ? std::string("2^63 or beyond")
                                          : std::to_string(int64_t(end)))
                      << ") in dimension " << d << " for "
                      << v.index << " in [" << lo << ", " << hi << "], outside [0, " << shape[d]
                      << "); fix the offsets, the sizes or the loop's bounds";
            break;
          }
        }
      }
    };
    checkWindows(v.ins, false);
    checkWindows(v.outs, true);
    for (const std::vector<LoopWindow> *ws : {&v.ins, &v.outs})
      for (const LoopWindow &w : *ws)
        for (size_t d = 0; d < w.valid.size(); ++d) {
          if (!namesInScope(op, w.valid[d], inner.ranges, "valid")) return;
          if (d < w.sizes.size())
            if (auto b = w.valid[d].bounds(inner.ranges);
                b && w.valid[d].boundsAreExact() && (b->first < 0 || b->second > w.sizes[d])) {
              error(op) << "valid extent " << d << " '" << w.valid[d].str() << "' ranges over ["
                        << b->first << ", " << b->second << "], outside [0, " << w.sizes[d]
                        << "] (the window's size); a valid_shape covers between none of the "
                        << "window (an empty one: nothing is read or written) and all of it";
              return;
            }
        }

    // Results: the written operands, updated.
    if (op.numResults() != v.written.size()) {
      error(op) << "writes " << v.written.size() << " operand" << (v.written.size() == 1 ? "" : "s")
                << " but has " << op.numResults() << " result" << (op.numResults() == 1 ? "" : "s")
                << "; it has one result per written operand (the operand updated), in the "
                << "order its 'outs' first name them";
    } else {
      for (unsigned r = 0; r < op.numResults(); ++r) {
        int w = v.written[r];
        if (w < 0 || unsigned(w) >= numOperands) continue;
        if (op.resultType(r) != op.operandType(w))
          error(op) << "result " << r << " has type " << op.resultType(r).str() << " but the "
                    << "operand it updates (operand " << w << ") is " << op.operandType(w).str();
      }
    }
    // Written operands: writable memory, dead after the loop.
    for (int w : v.written) {
      if (w < 0 || unsigned(w) >= numOperands) continue;
      const Value *x = op.operand(w);
      if (!x->isArgument()) {
        OpCode c = x->definingOp()->code();
        if (c == OpCode::View || c == OpCode::Reshape || c == OpCode::Transpose) {
          error(op) << "writes operand " << w << ", the result of a '"
                    << x->definingOp()->def().name << "' (an alias); write into the tensor it "
                    << "aliases, with the window's offsets selecting the part";
          continue;
        }
      }
      for (const OpOperand &use : x->uses()) {
        const Operation *user = use.owner();
        if (user == &op || user->parentFunc() != &f) continue;
        if (isAfter(f, user, &op)) {
          error(op) << "writes operand " << w << " in place, but the op at " << user->loc().str()
                    << " reads it after the loop; read the loop's result instead";
          break;
        }
      }
      for (unsigned o = 0; o < numOperands; ++o)
        if (o != unsigned(w) && op.operand(o) == x) {
          error(op) << "names the value it writes (operand " << w << ") again as operand " << o
                    << "; name each tensor once and give it several windows";
          break;
        }
    }
    visit(*body, inner);
  }

  bool namesInScope(const Operation &op, const SymExpr &e, llvm::ArrayRef<SymBinding> scope,
                    llvm::StringRef what) {
    for (const std::string &n : e.names()) {
      bool found = false;
      for (const SymBinding &b : scope) found |= b.name == n;
      if (!found) {
        std::vector<std::string> known;
        for (const SymBinding &b : scope) known.push_back(b.name);
        error(op) << what << " expression '" << e.str() << "' names '" << n << "', which is not "
                  << "a loop index in scope (in scope: "
                  << (known.empty() ? std::string("none") : absl::StrJoin(known, ", ")) << ")";
        return false;
      }
    }
    // Sizes of dynamic axes: of the kernel's arguments.
    for (const auto &[name, axis] : e.dims()) {
      const Value *arg = entryArg(name);
      if (!arg || axis >= int64_t(arg->type().rank()) ||
          arg->type().dim(unsigned(axis)) != kDynamicDim) {
        error(op) << what << " expression '" << e.str() << "' uses dim(" << name << ", " << axis
                  << "), but "
                  << (!arg ? absl::StrCat("'", name, "' is not an argument of the kernel's function")
                           : absl::StrCat("axis ", axis, " of '", name, "' (", arg->type().str(),
                                          ") is not dynamic"))
                  << "; dim(t, k) is the size of a dynamic ('?') axis of an argument";
        return false;
      }
    }
    // Values read from tensors: the control thread reads them from the kernel's inputs.
    for (const auto &[name, rank] : e.tensorReads()) {
      const Value *arg = entryArg(name);
      if (!arg) {
        error(op) << what << " expression '" << e.str() << "' reads '" << name << "', which is "
                  << "not an argument of the kernel's function"
                  << (entry_ ? absl::StrCat(" '@", entry_->name().str(), "'") : std::string())
                  << "; only the kernel's integer inputs can be read as values";
        return false;
      }
      Type t = arg->type();
      if (!isInteger(t.dtype())) {
        error(op) << what << " expression '" << e.str() << "' reads '" << name << "' of type "
                  << t.str() << "; values read as loop bounds or offsets come from integer "
                  << "tensors (i8, i16, i32, i64, u8, u16, u32, u64)";
        return false;
      }
      if (t.shape().size() != rank) {
        error(op) << what << " expression '" << e.str() << "' indexes '" << name << "' ("
                  << t.str() << ") with " << rank << " index" << (rank == 1 ? "" : "es")
                  << "; give one per dimension";
        return false;
      }
      for (const OpOperand &use : arg->uses())
        if (use.owner()->code() == OpCode::Loop) {
          absl::StatusOr<LoopView> w = LoopView::of(*use.owner());
          if (w.ok() && std::find(w->written.begin(), w->written.end(), int(use.index())) !=
                            w->written.end()) {
            error(op) << what << " expression '" << e.str() << "' reads '" << name
                      << "', which the loop at " << use.owner()->loc().str() << " writes; "
                      << "values are read when the kernel starts: read a tensor no loop writes";
            return false;
          }
        }
    }
    return true;
  }

  /// The argument of the entry function named `name`, or null.
  const Value *entryArg(llvm::StringRef name) const {
    if (!entry_) return nullptr;
    for (const Value &a : entry_->args())
      if (a.nameHint() && a.nameHint().str() == name) return &a;
    return nullptr;
  }

  static bool isAfter(const Func &f, const Operation *a, const Operation *b) {
    for (const Operation &op : f.ops()) {
      if (&op == b) return true;
      if (&op == a) return false;
    }
    return false;
  }

  const Module &m_;
  Context &ctx_;
  const Func *entry_; ///< the kernel's function (the only one no loop runs)
  bool ok_ = true;
  std::map<const Func *, const Operation *> runner_;
  std::set<const Func *> visited_;
  std::set<const Func *> reached_; ///< bodies of loops in functions reached from a root
};

} // namespace

LogicalResult verifyLoops(const Module &m) { return success(LoopChecker(m).run()); }

} // namespace ptoc::ir
