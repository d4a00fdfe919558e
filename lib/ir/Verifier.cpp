// The IR verifier: structure, attributes, type rules, tile shapes, SSA dominance,
// acyclicity and (at the tile level) the memory order of copies. Every problem is
// reported at the op's location with the fix.
#include "ptoc/ir/Verifier.h"

#include <algorithm>

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Allocator.h"

#include "ptoc/ir/Context.h"
#include "ptoc/ir/Level.h"
#include "ptoc/ir/OpViews.h"
#include "ptoc/ir/Printer.h"
#include "ptoc/ir/TileShape.h"
#include "ptoc/target/DeviceSpec.h"

#include "MemoryOrderCheck.h"
#include "ptoc/ir/LoopView.h"

namespace ptoc::ir {
namespace {

std::string attrShapeName(AttrShape s) {
  switch (s) {
  case AttrShape::Int: return "an integer";
  case AttrShape::Number: return "a number";
  case AttrShape::Bool: return "true or false";
  case AttrShape::DType: return "an element type (" + std::string(dtypeNamesText()) + ")";
  case AttrShape::IntArray: return "an integer array like [1, 2]";
  case AttrShape::CubeTile: return "{m = [mL0, mL1], k = [kL0, kL1], n = [nL0, nL1]}";
  case AttrShape::String: return "a string";
  case AttrShape::SymInt: return "an integer or an expression string like \"i * 64\"";
  case AttrShape::Windows:
    return "an array of windows like [{of = 0, offsets = [\"i\", 0], sizes = [1, 64]}]";
  case AttrShape::Locations: return "an array of \"file:line:col\" strings";
  }
  return "?";
}

bool attrHasShape(Attribute a, AttrShape s) {
  switch (s) {
  case AttrShape::Int: return a.isInt();
  case AttrShape::Number: return a.isInt() || a.isFloat();
  case AttrShape::Bool: return a.isBool();
  case AttrShape::DType: return a.isDType();
  case AttrShape::IntArray: return a.isIntArray();
  case AttrShape::CubeTile: return CubeTile::fromAttr(a).has_value();
  case AttrShape::String: return a.isString();
  case AttrShape::SymInt: return a.isInt() || a.isString();
  case AttrShape::Windows: return isWindowList(a);
  case AttrShape::Locations:
    if (a.isIntArray()) return a.getIntArray().empty();
    return a.isArray() && llvm::all_of(a.getArray(), [](Attribute e) { return e.isString(); });
  }
  return false;
}

class FuncVerifier {
public:
  FuncVerifier(const Func &f, const VerifyOptions &opts)
      : f_(f), ctx_(f.context()), opts_(opts) {}

  bool run() {
    verifySignature();
    if (f_.ops().empty()) {
      ctx_.emitError(f_.loc()) << "function '@" << f_.name()
                               << "' has an empty body; it must end with 'return'";
      return false;
    }
    memoize_ = true;
    // Number the ops as they are walked: an operand whose definer has no mark of
    // this walk yet is used before its definition (or the graph has a cycle).
    walkBase_ = f_.reserveWalkMarks(f_.numOps());
    uint64_t mark = walkBase_;
    for (const Operation &op : f_.ops()) {
      verifyOp(op);
      hasCopies_ |= op.code() == OpCode::CopyIn || op.code() == OpCode::CopyOut;
      for (unsigned i = 0, e = op.numOperands(); i < e; ++i) {
        const Value *v = op.operand(i);
        const Operation *def = v ? v->definingOp() : nullptr;
        if (def && def->walkMark <= walkBase_) maybeLateUse_ = true;
      }
      op.walkMark = ++mark;
    }
    const Operation &last = f_.ops().back();
    if (last.code() != OpCode::Return)
      opError(last) << "ends the function; the last operation of '@" << f_.name()
                    << "' must be 'return'";
    if (ok_ && maybeLateUse_) verifyOrder();
    if (ok_) verifyLevel();
    if (ok_ && hasCopies_) ok_ = checkMemoryOrder(f_);
    return ok_;
  }

  /// Checks one op on its own (structure, attributes, types, tiles).
  bool verifySingle(const Operation &op) {
    verifyOp(op);
    return ok_;
  }

private:
  InFlightDiagnostic opError(const Operation &op) {
    ok_ = false;
    auto d = ctx_.emitError(op.loc());
    d << "'" << op.name() << "' op ";
    return d;
  }

  void verifySignature() {
    bool control = isControlFunc(f_);
    for (const Value &a : f_.args())
      if (a.type().isTensor() && a.type().hasDynamicDims() && !control) {
        ok_ = false;
        ctx_.emitError(f_.loc()) << "argument " << a.index() << " of '@" << f_.name()
                                 << "' has a dynamic axis (" << a.type().str()
                                 << ") but the function has no loops; only a function with "
                                 << "loops takes such tensors, and works on fixed-size windows "
                                 << "of them (docs/ir.md, \"Dynamic axes\")";
      }
    for (const Value &a : f_.args())
      if (!a.type().isTensor()) {
        ok_ = false;
        ctx_.emitError(f_.loc()) << "argument " << a.index() << " of '@" << f_.name()
                                 << "' has type " << a.type().str()
                                 << "; function arguments must be tensors in GM";
      }
    for (Type t : f_.resultTypes())
      if (!t.isTensor()) {
        ok_ = false;
        ctx_.emitError(f_.loc()) << "function '@" << f_.name() << "' returns " << t.str()
                                 << "; function results must be tensors in GM";
      }
  }

  void verifyOp(const Operation &op) {
    const OpDef &def = op.def();
    // Dynamic axes: only loops (through windows of fixed size) and return touch them.
    if (op.code() != OpCode::Loop && op.code() != OpCode::Return) {
      for (unsigned i = 0, e = op.numOperands(); i < e; ++i)
        if (op.operand(i) && op.operandType(i).hasDynamicDims()) {
          opError(op) << "operand " << i << " has a dynamic axis (" << op.operandType(i).str()
                      << "); only loops take such tensors: compute on fixed-size windows of "
                      << "it inside a loop (docs/ir.md, \"Dynamic axes\")";
          return;
        }
      for (unsigned r = 0, e = op.numResults(); r < e; ++r)
        if (op.resultType(r).hasDynamicDims()) {
          opError(op) << "result " << r << " has a dynamic axis (" << op.resultType(r).str()
                      << "); only a function's arguments (and the loops updating them) "
                      << "have dynamic axes";
          return;
        }
    }
    // Structure: operand/result counts, operands defined in this function.
    unsigned n = op.numOperands();
    if (n < def.minOperands || n > def.maxOperands) {
      auto d = opError(op);
      d << "expects ";
      if (def.minOperands == def.maxOperands)
        d << def.minOperands;
      else if (def.maxOperands == OpDef::kVariadic)
        d << "at least " << def.minOperands;
      else
        d << def.minOperands << " to " << def.maxOperands;
      unsigned shown = def.minOperands == def.maxOperands || def.maxOperands == OpDef::kVariadic
                           ? def.minOperands
                           : def.maxOperands;
      d << " operand" << (shown == 1 ? "" : "s") << ", got " << n;
      return;
    }
    if (def.numResults != OpDef::kVariadic && op.numResults() != def.numResults) {
      opError(op) << "produces " << def.numResults << " result"
                  << (def.numResults == 1 ? "" : "s") << ", but " << op.numResults()
                  << (op.numResults() == 1 ? " is" : " are") << " written";
      return;
    }
    for (unsigned i = 0; i < n; ++i) {
      const Value *v = op.operand(i);
      if (!v) {
        opError(op) << "operand " << i << " is missing (null)";
        return;
      }
      const Func *owner = v->isArgument() ? v->argOwner() : v->definingOp()->parentFunc();
      if (owner != &f_) {
        opError(op) << "operand " << i << " is defined in another function";
        return;
      }
    }
    if (op.code() == OpCode::Return) {
      verifyReturn(op);
      return;
    }
    if (op.code() == OpCode::Loop) {
      // Its body, windows and results are checked against the module (verifyLoops).
      (void)verifyAttrs(op);
      return;
    }
    if (!memoize_) {
      verifySemantics(op);
      return;
    }
    signature_.clear();
    signature_.push_back(&def);
    signature_.push_back(op.attrDict().storage());
    for (unsigned i = 0; i < n; ++i) signature_.push_back(op.operandType(i).storage());
    for (const Value &r : op.results()) signature_.push_back(r.type().storage());
    if (cleanSignatures_.contains(signature_)) return;
    bool okBefore = ok_;
    ok_ = true;
    verifySemantics(op);
    if (ok_) {
      const void **copy = signatureAlloc_.Allocate<const void *>(signature_.size());
      std::copy(signature_.begin(), signature_.end(), copy);
      cleanSignatures_.insert(llvm::ArrayRef<const void *>(copy, signature_.size()));
    }
    ok_ = ok_ && okBefore;
  }

  /// Attributes, type rule and tile shapes: everything that depends only on the
  /// OpDef, the attribute dictionary and the operand and result types.
  void verifySemantics(const Operation &op) {
    const OpDef &def = op.def();
    unsigned n = op.numOperands();
    if (!verifyAttrs(op)) return;

    // Type rule.
    llvm::SmallVector<Type, 4> operandTypes;
    for (unsigned i = 0; i < n; ++i) operandTypes.push_back(op.operandType(i));
    RuleError error;
    Type declared = op.numResults() ? op.resultType(0) : Type();
    Type inferred = def.inferType(TypeRuleInput{ctx_, operandTypes, op.attrDict(), declared},
                                  error);
    if (!error.empty()) {
      opError(op).in(error.category) << error.message;
      return;
    }
    if (declared && inferred != declared) {
      opError(op).in(inferred.dtype() != declared.dtype() ? DiagCategory::DType
                                                          : DiagCategory::Shape)
          << "result type " << declared.str() << " does not match the type "
          << inferred.str() << " its operands and attributes give";
      return;
    }
    if (def.extraResults && inferred) {
      llvm::SmallVector<Type, 2> rest;
      def.extraResults(TypeRuleInput{ctx_, operandTypes, op.attrDict(), declared}, inferred,
                       rest);
      for (unsigned i = 0; i < rest.size() && i + 1 < op.numResults(); ++i)
        if (op.resultType(i + 1) != rest[i]) {
          opError(op).in(rest[i].dtype() != op.resultType(i + 1).dtype() ? DiagCategory::DType
                                                                         : DiagCategory::Shape)
              << "result " << i + 1 << " has type " << op.resultType(i + 1).str()
              << " but its operands and attributes give " << rest[i].str();
          return;
        }
    }
    verifyTiles(op, operandTypes);
  }

  void verifyReturn(const Operation &op) {
    if (&op != &f_.ops().back()) {
      opError(op) << "must be the last operation of '@" << f_.name() << "'";
      return;
    }
    llvm::ArrayRef<Type> want = f_.resultTypes();
    if (op.numOperands() != want.size()) {
      opError(op) << "returns " << op.numOperands() << " value"
                  << (op.numOperands() == 1 ? "" : "s") << " but '@" << f_.name()
                  << "' declares " << want.size() << " result"
                  << (want.size() == 1 ? "" : "s");
      return;
    }
    for (unsigned i = 0; i < want.size(); ++i)
      if (op.operandType(i) != want[i])
        opError(op) << "operand " << i << " has type " << op.operandType(i).str()
                    << " but '@" << f_.name() << "' declares result " << i << " as "
                    << want[i].str();
  }

  bool verifyAttrs(const Operation &op) {
    const OpDef &def = op.def();
    for (const NamedAttr &a : op.attrs()) {
      llvm::StringRef name = a.name.str();
      const AttrSpec *spec = def.findAttr(name);
      if (!spec) {
        for (const AttrSpec &c : commonAttrSpecs())
          if (c.name == name) spec = &c;
        if (spec && ((name == "vec_tile" && def.tile != TileKind::Vec) ||
                     (name == "cube_tile" && def.tile != TileKind::Cube))) {
          opError(op) << "does not take '" << name << "'"
                      << (def.tile == TileKind::Cube ? "; cube ops take 'cube_tile'"
                          : def.tile == TileKind::Vec ? "; vector ops take 'vec_tile'"
                                                      : "");
          return false;
        }
      }
      if (!spec) {
        auto d = opError(op);
        d << "has unknown attribute '" << name << "'";
        std::string known;
        for (const AttrSpec &s : def.attrs) known += (known.empty() ? "" : ", ") + s.name.str();
        for (const AttrSpec &c : commonAttrSpecs()) {
          // `sg` is set by the partition pass, never by hand: not worth suggesting.
          if ((c.name == "vec_tile" && def.tile != TileKind::Vec) ||
              (c.name == "cube_tile" && def.tile != TileKind::Cube) || c.name == "sg")
            continue;
          known += (known.empty() ? "" : ", ") + c.name.str();
        }
        d << " (it accepts: " << known << ")";
        return false;
      }
      if (!attrHasShape(a.value, spec->shape)) {
        InFlightDiagnostic d = opError(op);
        d << "attribute '" << name << "' must be " << attrShapeName(spec->shape) << ", got "
          << a.value.str();
        // Which window entry is wrong, and why (a bad offset expression: its column).
        if (spec->shape == AttrShape::Windows)
          d << "; " << std::string(parseWindows(a.value).status().message());
        return false;
      }
    }
    for (const AttrSpec &s : def.attrs)
      if (s.required && !op.attr(s.name)) {
        opError(op) << "needs attribute '" << s.name << "' (" << s.help << ")";
        return false;
      }
    return true;
  }

  void verifyTiles(const Operation &op, llvm::ArrayRef<Type> operandTypes) {
    const target::DeviceSpec *device = opts_.device;
    llvm::SmallVector<Type, 2> resultTypes;
    for (const Value &r : op.results()) resultTypes.push_back(r.type());
    if (Attribute vt = op.attr("vec_tile")) {
      VecTileView view = VecTileView::of(op, operandTypes, resultTypes);
      std::string err = view.check(vt.getIntArray(), device);
      // A whole-shape tile too big for UB is split by expand-tiles (splitWholeVecTile).
      if (!err.empty() && device) {
        WholeTileSplit split = view.splitWhole(vt.getIntArray(), *device);
        if (split.kind == WholeTileSplit::Kind::Split) err.clear();
        if (split.kind == WholeTileSplit::Kind::Impossible) err = split.message;
      }
      if (!err.empty()) opError(op).in(DiagCategory::Tile) << err;
    }
    if (Attribute ct = op.attr("cube_tile")) {
      std::string err = checkCubeTile(*CubeTile::fromAttr(ct), operandTypes[0].dtype(), device);
      if (!err.empty()) opError(op).in(DiagCategory::Tile) << err;
    }
  }

  // Every operand must be defined before its use; a use that is not is either part
  // of a cycle (reported as such) or a plain use before definition.
  // Level invariants. Tile level (some op works on tiles): every compute op works
  // on tiles (only GM aliases and workspaces stay tensors), vector ops on ub tiles.
  // Partitioned level (some `subgraph` op): every tile op names a declared
  // subgraph of its own core kind.
  void verifyLevel() {
    if (levelOf(f_) < Level::Tile) return;
    llvm::DenseMap<int64_t, const Operation *> subgraphs;
    for (const Operation &op : f_.ops()) {
      if (op.code() != OpCode::Subgraph) continue;
      int64_t id = op.attr("id").getInt();
      auto [it, inserted] = subgraphs.try_emplace(id, &op);
      if (!inserted)
        opError(op) << "redeclares subgraph " << id << " (first declared at "
                    << it->second->loc().str() << ")";
    }
    for (const Operation &op : f_.ops()) {
      switch (op.code()) {
      case OpCode::Return:
      case OpCode::GmTensor:
      case OpCode::Subgraph: continue;
      default: break;
      }
      if (!op.isTileOp()) {
        if (op.coreKind() != target::CoreKind::None)
          opError(op) << "works on whole tensors in a function at the tile level; run "
                         "expand-tiles on the whole function";
        continue;
      }
      if (op.coreKind() == target::CoreKind::AIV && op.code() != OpCode::CopyIn &&
          op.code() != OpCode::CopyOut) {
        for (const OpOperand &o : op.opOperands())
          if (!o.get()->type().isTile() || o.get()->type().space() != MemSpace::UB) {
            opError(op) << "is a vector op: its operands must be ub tiles, got "
                        << o.get()->type().str();
            break;
          }
        if (op.resultType().space() != MemSpace::UB)
          opError(op) << "is a vector op: its result must be a ub tile, got "
                      << op.resultType().str();
      }
      if (subgraphs.empty()) continue;
      // The subgraph id field; a (negative) `sg` left in the dictionary otherwise.
      int64_t sgId = op.subgraphId();
      if (sgId < 0) {
        Attribute sg = op.attr("sg");
        if (!sg) {
          opError(op) << "belongs to no subgraph; every tile op of a partitioned function "
                         "needs 'sg'";
          continue;
        }
        sgId = sg.getInt();
      }
      auto it = subgraphs.find(sgId);
      if (it == subgraphs.end()) {
        opError(op) << "names subgraph " << sgId << ", which is not declared";
        continue;
      }
      llvm::StringRef core = it->second->attr("core").getString();
      if (core != llvm::StringRef(target::coreKindName(op.coreKind())))
        opError(op) << "runs on " << target::coreKindName(op.coreKind()) << " but subgraph "
                    << sgId << " is an " << core << " subgraph";
    }
  }

  // Runs after the walk, when every op carries its walk mark.
  void verifyOrder() {
    llvm::SmallVector<std::pair<const Operation *, unsigned>, 4> lateUses;
    for (const Operation &op : f_.ops())
      for (unsigned i = 0; i < op.numOperands(); ++i) {
        const Operation *def = op.operand(i)->definingOp();
        if (def && def->walkMark >= op.walkMark) lateUses.push_back({&op, i});
      }
    if (lateUses.empty()) return;
    if (reportCycle()) return;
    for (auto [op, i] : lateUses) {
      const Operation *def = op->operand(i)->definingOp();
      opError(*op) << "uses operand " << i << " before its definition at "
                   << def->loc().str() << "; move the definition above its first use";
    }
  }

  // Iterative DFS over use->def edges; reports one cycle. Returns whether one exists.
  bool reportCycle() {
    enum State : uint8_t { Unvisited, OnStack, Done };
    llvm::DenseMap<const Operation *, State> state;
    for (const Operation &root : f_.ops()) {
      if (state.lookup(&root) != Unvisited) continue;
      llvm::SmallVector<std::pair<const Operation *, unsigned>, 32> stack;
      stack.push_back({&root, 0});
      state[&root] = OnStack;
      while (!stack.empty()) {
        auto &[op, next] = stack.back();
        if (next == op->numOperands()) {
          state[op] = Done;
          stack.pop_back();
          continue;
        }
        const Operation *def = op->operand(next++)->definingOp();
        if (!def) continue;
        State s = state.lookup(def);
        if (s == Done) continue;
        if (s == OnStack) {
          // The cycle is the stack suffix starting at `def`.
          auto it = std::find_if(stack.begin(), stack.end(),
                                 [&](auto &e) { return e.first == def; });
          // Name at most kShownCycleOps ops, so a long cycle stays one readable line.
          constexpr size_t kShownCycleOps = 8;
          size_t length = static_cast<size_t>(stack.end() - it);
          std::string path;
          for (auto e = it; e != stack.end() && size_t(e - it) < kShownCycleOps; ++e)
            path += "'" + e->first->name().str() + "' at " + e->first->loc().str() + " -> ";
          if (length > kShownCycleOps)
            path += "... (" + std::to_string(length - kShownCycleOps) + " more) -> ";
          path += "'" + def->name().str() + "' at " + def->loc().str();
          ok_ = false;
          ctx_.emitError(def->loc()) << "'" << def->name()
                                     << "' op is part of a dependency cycle: " << path
                                     << "; the graph must be acyclic";
          return true;
        }
        state[def] = OnStack;
        stack.push_back({def, 0});
      }
    }
    return false;
  }

  const Func &f_;
  Context &ctx_;
  const VerifyOptions &opts_;
  bool ok_ = true;

  uint64_t walkBase_ = 0;
  bool maybeLateUse_ = false;
  bool hasCopies_ = false;

  /// Whether `verifyOp` skips ops whose signature was already checked clean: the
  /// checks after the structural ones read only the OpDef, the attribute dictionary
  /// and the operand and result types, all uniqued, so a graph that repeats a few
  /// signatures pays for each once per function. Only clean results are kept, so
  /// every diagnostic is still produced by the full check.
  bool memoize_ = false;
  llvm::DenseSet<llvm::ArrayRef<const void *>> cleanSignatures_;
  llvm::BumpPtrAllocator signatureAlloc_;
  llvm::SmallVector<const void *, 8> signature_;
};

} // namespace

LogicalResult verify(const Func &f, const VerifyOptions &opts) {
  return success(FuncVerifier(f, opts).run());
}

LogicalResult verifyOp(const Operation &op, const VerifyOptions &opts) {
  return success(FuncVerifier(*op.parentFunc(), opts).verifySingle(op));
}

LogicalResult verify(const Module &m, const VerifyOptions &opts) {
  bool ok = true;
  llvm::StringSet<> names;
  for (const Func &f : m.funcs()) {
    if (!names.insert(f.name()).second) {
      ok = false;
      m.context().emitError(f.loc()) << "redefinition of function '@" << f.name() << "'";
    }
    ok &= succeeded(verify(f, opts));
  }
  if (ok) ok = succeeded(verifyLoops(m));
  return success(ok);
}

absl::Status verifyOrError(const Module &m, const VerifyOptions &opts) {
  DiagnosticCollector diags(m.context().diag());
  (void)verify(m, opts);
  return diags.toStatus();
}

} // namespace ptoc::ir
