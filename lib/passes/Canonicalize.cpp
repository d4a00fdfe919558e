// canonicalize: local simplifications that never change what a function computes.
//  - reshape to the same type, and reshape(reshape(x)), collapse;
//  - casts to the same element type, identity transposes and whole-tensor views
//    disappear; transpose(transpose(x)) composes;
//  - elementwise ops, casts and reshapes/transposes of constants (`full`) fold to a
//    constant (rounded to the result's element type);
//  - x + -0.0, x - 0.0, x * 1, x / 1, x ** 1 (same shape as x) become x (for floats,
//    x + 0.0 stays: it turns -0.0 into +0.0).
// Ops that a rewrite leaves without uses are erased; ops that were already dead
// are left to `dce`. Option fold-constants=false keeps the last two groups off.
// `--debug-only=canonicalize` logs every rewrite with the op's location.
#include "ptoc/passes/Passes.h"

#include <cmath>

#include "llvm/ADT/SmallVector.h"

#include "ptoc/ir/CastMode.h"
#include "ptoc/ir/DivPrecision.h"
#include "ptoc/ir/Context.h"
#include "ptoc/ir/OpViews.h"
#include "ptoc/ir/Func.h"

namespace ptoc::passes {
namespace {

using ir::Attribute;
using ir::Operation;
using ir::OpCode;
using ir::Type;
using ir::Value;

constexpr unsigned kMaxSweeps = 8;

Operation *definingOpIf(Value *v, OpCode code) {
  Operation *def = v->definingOp();
  return def && def->code() == code ? def : nullptr;
}

// The constant a value holds, if it is produced by `full`: the written value as its
// element type holds it (`full {value = 0.1} : tensor<f16>` holds 0.0999755859375).
std::optional<double> constantOf(Value *v) {
  if (Operation *f = definingOpIf(v, OpCode::Full))
    return ir::roundToDType(f->attr("value").getNumber(), v->type().dtype());
  return std::nullopt;
}

// Whether `c` is exactly `identity` for element type `t`: for floats the sign of
// zero counts (x + 0.0 is not x when x is -0.0, but x + -0.0 is).
bool isExactly(double c, double identity, ir::DType t) {
  return c == identity && (ir::isInteger(t) || std::signbit(c) == std::signbit(identity));
}

class Canonicalizer {
public:
  Canonicalizer(ir::Func &f, const CanonicalizeOptions &options, llvm::raw_ostream *log)
      : f_(f), ctx_(f.context()), options_(options), log_(log) {}

  // One forward sweep; operands are simplified before their users, so chains fold
  // in one sweep. Returns the number of rewrites.
  unsigned sweep() {
    unsigned rewrites = 0;
    for (auto it = f_.ops().begin(); it != f_.ops().end();) {
      Operation &op = *it++;
      if (op.code() == OpCode::Return || op.useEmpty()) continue;
      if (Value *replacement = simplify(op)) {
        if (log_) {
          *log_ << "canonicalize: " << op.loc().str() << ": '" << op.name() << "' ";
          Operation *def = replacement->definingOp();
          // New ops are inserted right before `op`.
          bool created = def && def->parentFunc() == op.parentFunc() &&
                         std::next(def->getIterator()) == op.getIterator();
          if (created && def->code() == OpCode::Full && op.code() != OpCode::Full)
            *log_ << "folded to a constant " << def->attr("value").str() << "\n";
          else if (created)
            *log_ << "rewritten as a simpler '" << def->name() << "'\n";
          else
            *log_ << "replaced by an existing value\n";
        }
        op.result()->replaceAllUsesWith(replacement);
        eraseDeadFrom(&op);
        ++rewrites;
      }
    }
    return rewrites;
  }

  unsigned erased() const { return erased_; }

private:
  // Returns the value `op` can be replaced by, creating a new op if needed.
  Value *simplify(Operation &op) {
    Value *x = op.numOperands() ? op.operand(0) : nullptr;
    Type type = op.resultType();
    switch (op.code()) {
    case OpCode::Reshape:
      if (x->type() == type) return x;
      if (Operation *inner = definingOpIf(x, OpCode::Reshape))
        return inner->operand(0)->type() == type ? inner->operand(0)
                                                 : rebuild(op, {inner->operand(0)}, {});
      if (auto c = foldable(x)) return makeFull(op, *c);
      return nullptr;
    case OpCode::Cast: {
      if (x->type() == type) return x;
      ir::CastView cast = ir::CastView::of(op);
      if (auto c = foldable(x))
        return makeFull(op, ir::castValue(*c, x->type().dtype(), type.dtype(), cast.mode,
                                          cast.saturate));
      return nullptr;
    }
    case OpCode::Transpose: {
      llvm::ArrayRef<int64_t> perm = op.attr("perm").getIntArray();
      if (isIdentity(perm)) return x;
      if (auto c = foldable(x)) return makeFull(op, *c);
      if (Operation *inner = definingOpIf(x, OpCode::Transpose)) {
        // out[i] = mid[perm[i]] = in[innerPerm[perm[i]]].
        llvm::ArrayRef<int64_t> innerPerm = inner->attr("perm").getIntArray();
        llvm::SmallVector<int64_t, 4> composed;
        for (int64_t p : perm) composed.push_back(innerPerm[p]);
        if (isIdentity(composed)) return inner->operand(0);
        llvm::SmallVector<ir::NamedAttr, 2> replaced{
            {ctx_.id("perm"), ctx_.intArrayAttr(composed)}};
        // The vec_tile cuts a transpose's input: op's cut mid, whose dim j is x's dim
        // innerPerm[j], so the composed op cuts x by op's tile moved to x's dims (the
        // same output tiles).
        if (Attribute vt = op.attr("vec_tile"); vt && vt.isIntArray())
          if (auto midTile = ir::adaptVecTile(vt.getIntArray(), x->type().shape())) {
            llvm::SmallVector<int64_t, 4> inTile(midTile->size());
            for (size_t j = 0; j < innerPerm.size(); ++j) inTile[innerPerm[j]] = (*midTile)[j];
            replaced.push_back({ctx_.id("vec_tile"), ctx_.intArrayAttr(inTile)});
          }
        return rebuild(op, {inner->operand(0)}, replaced);
      }
      return nullptr;
    }
    case OpCode::Full: {
      // A constant only elementwise ops read, each against an operand of its result's
      // shape, is the same as its one-element broadcast: PyPTO's full(x.shape, 1.0)
      // then holds one element of UB, not a whole tile.
      llvm::ArrayRef<int64_t> shape = type.shape();
      if (!options_.foldConstants ||
          std::all_of(shape.begin(), shape.end(), [](int64_t d) { return d == 1; }))
        return nullptr;
      for (const ir::OpOperand &use : op.result()->uses()) {
        const Operation *user = use.owner();
        if (user->def().cls != ir::OpClass::ElementwiseBinary || user->numOperands() != 2)
          return nullptr;
        const Value *other = user->operand(1 - use.index());
        if (other == op.result() || other->type().shape() != user->resultType().shape())
          return nullptr;
      }
      llvm::SmallVector<int64_t, 4> ones(shape.size(), 1);
      Operation *one = f_.createOp(ctx_.opDef(OpCode::Full), {}, {ctx_.withShape(type, ones)},
                                   op.attrDict(), op.loc(), &op);
      one->result()->setNameHint(op.result()->nameHint());
      return one->result();
    }
    case OpCode::View: {
      llvm::ArrayRef<int64_t> off = op.attr("offsets").getIntArray();
      bool zero = std::all_of(off.begin(), off.end(), [](int64_t o) { return o == 0; });
      if (zero && x->type() == type) return x;
      if (auto c = foldable(x)) return makeFull(op, *c);
      return nullptr;
    }
    default: break;
    }
    const ir::OpDef &def = op.def();
    if (!options_.foldConstants) return nullptr;
    if (def.cls == ir::OpClass::ElementwiseUnary) {
      if (auto c = constantOf(x)) return makeFull(op, def.unaryFn(*c));
      return nullptr;
    }
    if (def.cls == ir::OpClass::ElementwiseBinary) {
      Value *y = op.operand(1);
      auto cx = constantOf(x), cy = constantOf(y);
      bool intDivByZero = ir::isInteger(type.dtype()) && cy && *cy == 0 &&
                          (op.code() == OpCode::Div || op.code() == OpCode::Pow);
      if (cx && cy && !intDivByZero)
        return makeFull(op, op.code() == OpCode::Div &&
                                    ir::divPrecisionOf(op) == ir::DivPrecision::Intrinsic
                                ? ir::intrinsicDivide(*cx, *cy, type.dtype())
                                : def.binaryFn(*cx, *cy));
      if (def.rightIdentity) {
        double id = *def.rightIdentity;
        if (cy && isExactly(*cy, id, type.dtype()) && x->type() == type) return x;
        if (def.commutative && cx && isExactly(*cx, id, type.dtype()) && y->type() == type)
          return y;
      }
    }
    return nullptr;
  }

  // The constant `v` holds, when constant folding is enabled.
  std::optional<double> foldable(Value *v) const {
    return options_.foldConstants ? constantOf(v) : std::nullopt;
  }

  static bool isIdentity(llvm::ArrayRef<int64_t> perm) {
    for (size_t i = 0; i < perm.size(); ++i)
      if (perm[i] != int64_t(i)) return false;
    return true;
  }

  // Keeps the tile shape and scope of the op being replaced.
  llvm::SmallVector<ir::NamedAttr, 4> inheritedAttrs(const Operation &op) {
    llvm::SmallVector<ir::NamedAttr, 4> out;
    for (const ir::NamedAttr &a : op.attrs())
      if (a.name.str() == "vec_tile" || a.name.str() == "sg_scope") out.push_back(a);
    return out;
  }

  Value *makeFull(Operation &op, double value) {
    Type type = op.resultType();
    double v = ir::roundToDType(value, type.dtype());
    // An integer attribute is an int64: a larger u64 constant stays unfolded.
    if (ir::isInteger(type.dtype()) && v >= 0x1p63) return nullptr;
    auto attrs = inheritedAttrs(op);
    attrs.push_back({ctx_.id("value"), ir::isInteger(type.dtype())
                                           ? ctx_.intAttr(static_cast<int64_t>(v))
                                           : ctx_.floatAttr(v)});
    Operation *full = f_.createOp(ctx_.opDef(OpCode::Full), {}, {type},
                                  ctx_.dictAttr(attrs, true), op.loc(), &op);
    // The replaced op is erased, so its readable name carries over.
    full->result()->setNameHint(op.result()->nameHint());
    return full->result();
  }

  // The same op on new operands, with some attributes replaced.
  Value *rebuild(Operation &op, llvm::ArrayRef<Value *> operands,
                 llvm::ArrayRef<ir::NamedAttr> replaced) {
    llvm::SmallVector<ir::NamedAttr, 4> attrs;
    for (const ir::NamedAttr &a : op.attrs()) {
      bool overridden = std::any_of(replaced.begin(), replaced.end(),
                                    [&](const ir::NamedAttr &r) { return r.name == a.name; });
      if (!overridden) attrs.push_back(a);
    }
    attrs.append(replaced.begin(), replaced.end());
    Operation *n = f_.createOp(op.def(), operands, {op.resultType()},
                               ctx_.dictAttr(attrs, true), op.loc(), &op);
    n->setSubgraphId(op.subgraphId());
    n->result()->setNameHint(op.result()->nameHint());
    return n->result();
  }

  // Erases `op` (now unused) and every operand definer it leaves unused.
  void eraseDeadFrom(Operation *op) {
    llvm::SmallVector<Operation *, 8> work{op};
    while (!work.empty()) {
      Operation *cur = work.pop_back_val();
      if (!cur->useEmpty() || cur->def().hasSideEffects) continue;
      for (unsigned i = 0; i < cur->numOperands(); ++i)
        if (Operation *def = cur->operand(i)->definingOp()) work.push_back(def);
      cur->dropOperandUses();
      f_.erase(cur);
      ++erased_;
      // Definers pushed twice are harmless: the second visit sees them erased only
      // if they are no longer in `work`, so de-duplicate before erasing again.
      work.erase(std::remove(work.begin(), work.end(), cur), work.end());
    }
  }

  ir::Func &f_;
  ir::Context &ctx_;
  const CanonicalizeOptions &options_;
  llvm::raw_ostream *log_;
  unsigned erased_ = 0;
};

class CanonicalizePass final : public Pass {
public:
  explicit CanonicalizePass(const CanonicalizeOptions &options) : options_(options) {}
  llvm::StringRef argument() const override { return "canonicalize"; }

  PassResult run(ir::Module &m, PassContext &ctx) override {
    bool changed = false;
    for (ir::Func &f : m.funcs()) {
      Canonicalizer c(f, options_, ctx.debugStream(argument()));
      for (unsigned i = 0; i < kMaxSweeps; ++i) {
        unsigned n = c.sweep();
        rewrites_ += n;
        changed |= n > 0;
        if (n == 0) break;
      }
      erased_ += c.erased();
    }
    return PassResult::changed(changed);
  }

private:
  CanonicalizeOptions options_;
  PassStatistic rewrites_{this, "rewrites", "Number of operations simplified or folded"};
  PassStatistic erased_{this, "erased-ops", "Number of operations left dead and erased"};
};

} // namespace

std::unique_ptr<Pass> createCanonicalizePass(const CanonicalizeOptions &options) {
  return std::make_unique<CanonicalizePass>(options);
}

void registerCanonicalizePass(PassRegistry &registry) {
  static const OptionRow<CanonicalizeOptions> kRows[] = {
      {"fold-constants", &CanonicalizeOptions::foldConstants,
       "fold ops on constants and drop x+0, x*1 identities"},
  };
  registry.add({"canonicalize",
                "Fold reshape chains, drop identity casts/transposes/views, fold constants",
                declareOptions(kRows), [](const PassOptionValues &v) {
                  return createCanonicalizePass(readOptions(kRows, v));
                }});
}

} // namespace ptoc::passes
