// Checks the memory order of a tile-level function's copies (see MemoryOrderCheck.h).
#include "MemoryOrderCheck.h"

#include <string>
#include <vector>

#include "llvm/ADT/SmallPtrSet.h"

#include "ptoc/ir/Context.h"
#include "ptoc/ir/Func.h"
#include "ptoc/ir/MemoryOrder.h"

namespace ptoc::ir {
namespace {

/// Diagnostics beyond this many per function are summarised in one line.
constexpr unsigned kMaxReported = 20;

std::string valueText(const Value *v) {
  if (v->nameHint()) return "%" + v->nameHint().str().str();
  if (v->isArgument()) return "%arg" + std::to_string(v->index());
  return "a " + v->type().str();
}

std::string regionText(const Value *tensor, const Box &b) { return valueText(tensor) + b.str(); }

class Checker {
public:
  explicit Checker(const Func &f) : f_(f), ctx_(f.context()) {}

  bool run() {
    size_t n = f_.numOps();
    base_ = f_.reserveWalkMarks(n);
    uint64_t mark = base_;
    for (const Operation &op : f_.ops()) op.walkMark = ++mark;
    seen_.assign(n, 0);
    accessOf_.assign(n, kNoAccess);
    for (const Operation &op : f_.ops()) {
      if (op.code() == OpCode::CopyIn) check(op, /*write=*/false);
      else if (op.code() == OpCode::CopyOut) check(op, /*write=*/true);
    }
    if (reported_ > kMaxReported)
      ctx_.emitError(f_.loc()) << "function '@" << f_.name() << "' has "
                               << reported_ - kMaxReported
                               << " more memory order errors like the ones above";
    return reported_ == 0;
  }

private:
  size_t position(const Operation &op) const { return op.walkMark - base_ - 1; }

  /// The region `op` accessed, when it is a copy of this function checked so far.
  const GmRegion *accessOf(const Operation &op) const {
    if (op.walkMark <= base_ || position(op) >= accessOf_.size()) return nullptr;
    uint32_t i = accessOf_[position(op)];
    return i == kNoAccess ? nullptr : &accesses_[i];
  }

  InFlightDiagnostic error(const Operation &op) {
    auto d = ctx_.emitError(op.loc());
    d << "'" << op.name() << "' op ";
    return d;
  }
  /// Counts one error; whether it is among those shown.
  bool shown() { return ++reported_ <= kMaxReported; }

  void check(const Operation &op, bool write) {
    Attribute offsets = op.attr("offsets");
    unsigned dataOperand = write ? 1 : 0;
    if (!offsets || !offsets.isIntArray() || op.numOperands() <= dataOperand) return;
    const Value *tensor = op.operand(dataOperand);
    const Value *tileValue = write ? op.operand(0) : op.result();
    Box box(offsets.getIntArray(), tileValue->type().shape());
    if (box.rank() != tensor->type().rank()) return; // the type rule reported it
    if (write) {
      const Operation *def = tensor->definingOp();
      if (!def || def->code() != OpCode::GmTensor) {
        if (shown())
          error(op) << "writes " << valueText(tensor) << ", which is "
                    << (def ? "an alias ('" + def->name().str() + "')" : std::string("a function argument"))
                    << "; copy_out writes only a gm_tensor (arguments are read-only, and an "
                       "alias's writes go to its gm_tensor at the shifted offsets)";
        return;
      }
    }
    GmRegion region = resolveGmRegion(tensor, box);
    if (!region.root) return; // not a GM tensor of the function: the level check says so
    accessOf_[position(op)] = uint32_t(accesses_.size());
    accesses_.push_back(region);

    // Each dependency operand: an earlier access of the same memory it conflicts with.
    llvm::SmallPtrSet<const Operation *, 8> deps;
    for (unsigned i = op.firstDependencyOperand(); i < op.numOperands(); ++i) {
      const Operation *def = op.operand(i)->definingOp();
      bool kindOk = def && (def->code() == OpCode::CopyOut ||
                            (write && def->code() == OpCode::CopyIn));
      if (!kindOk) {
        if (shown())
          error(op) << "operand " << i << " must be "
                    << (write ? "a copy_in or copy_out result (an earlier access of the "
                                "region it writes)"
                              : "a copy_out token (an earlier write of the region it reads)")
                    << ", got " << (def ? "a '" + def->name().str() + "' result"
                                        : std::string("a function argument"));
        continue;
      }
      deps.insert(def);
      const GmRegion *access = accessOf(*def);
      if (!access) continue; // defined later or malformed: reported elsewhere
      const GmRegion &other = *access;
      if (other.root != region.root) {
        if (shown())
          error(op) << "waits on the '" << def->name() << "' at " << def->loc().str()
                    << ", which accesses " << valueText(other.root) << ", not "
                    << valueText(region.root) << "; remove operand " << i;
      } else if (!overlaps(other, region)) {
        if (shown())
          error(op) << "waits on the '" << def->name() << "' at " << def->loc().str()
                    << " of " << regionText(other.root, other.box) << ", which does not overlap "
                    << regionText(region.root, region.box)
                    << "; accesses of disjoint regions are independent: remove operand " << i;
      }
    }

    // Every conflicting earlier access is ordered before this one.
    needed_.clear();
    order_.conflicts(region, write, needed_);
    for (const Operation *earlier : needed_) {
      if (deps.contains(earlier) || reaches(op, *earlier) || !shown()) continue;
      const GmRegion &other = *accessOf(*earlier);
      error(op) << (write ? "overwrites " : "reads ") << regionText(region.root, region.box)
                << ", which the '" << earlier->name() << "' at " << earlier->loc().str()
                << (earlier->code() == OpCode::CopyOut ? " writes" : " reads") << " earlier ("
                << regionText(other.root, other.box)
                << "), but does not wait for it: add that op's result as an operand";
    }
    order_.record(&op, region, write);
  }

  // Whether `target` is an ancestor of `op` through any operands. Only ops after
  // `target` in the body can lead to it.
  bool reaches(const Operation &op, const Operation &target) {
    size_t floor = position(target);
    ++stamp_;
    stack_.clear();
    stack_.push_back(&op);
    while (!stack_.empty()) {
      const Operation *cur = stack_.back();
      stack_.pop_back();
      for (const Value *v : cur->operands()) {
        const Operation *def = v->definingOp();
        if (!def || def->walkMark <= base_) continue;
        if (def == &target) return true;
        size_t p = position(*def);
        if (p <= floor || p >= seen_.size() || seen_[p] == stamp_) continue;
        seen_[p] = stamp_;
        stack_.push_back(def);
      }
    }
    return false;
  }

  const Func &f_;
  Context &ctx_;
  uint64_t base_ = 0;
  unsigned reported_ = 0;
  MemoryOrder order_;
  // Standard containers only: they stay whole when an allocation fails and the
  // exception unwinds through the checker (a DenseMap whose growth failed is not).
  static constexpr uint32_t kNoAccess = UINT32_MAX;
  std::vector<uint32_t> accessOf_; ///< per op position: its index in accesses_
  std::vector<GmRegion> accesses_;
  llvm::SmallVector<const Operation *, 8> needed_;
  std::vector<uint32_t> seen_;
  uint32_t stamp_ = 0;
  std::vector<const Operation *> stack_;
};

} // namespace

bool checkMemoryOrder(const Func &f) { return Checker(f).run(); }

} // namespace ptoc::ir
