// The vector-tile rule of default-tiles (see DefaultVecTileRule.h): a chain's candidate
// tiles, each measured as one fused task of tile ops (its UB peak, its pipes' cycles)
// and scored by the estimated span of all its tiles, and the choice among them.
#include "DefaultVecTileRule.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallVector.h"

#include "ptoc/analysis/CostModel.h"
#include "ptoc/analysis/LocalSchedule.h"
#include "ptoc/ir/Context.h"
#include "ptoc/ir/Func.h"
#include "ptoc/ir/OpDef.h"
#include "ptoc/ir/OpViews.h"
#include "ptoc/ir/TileShape.h"
#include "ptoc/passes/MergeRules.h"
#include "ptoc/target/DeviceSpec.h"

namespace ptoc::passes::default_tiles {

using ir::Attribute;
using ir::DType;
using ir::OpClass;
using ir::OpCode;
using ir::Operation;
using ir::Type;
using ir::Value;

VecOp vecOpOf(Operation &op) {
  VecOp v{&op, ir::VecTileView::of(op), {}, {}};
  for (size_t d = 0; d < v.view.keepWhole.size(); ++d)
    if (v.view.keepWhole[d]) {
      v.kept.push_back(int64_t(d));
      v.keptReduced.push_back(true);
    }
  std::optional<int64_t> selected;
  if (std::optional<ir::TopKView> t = ir::TopKView::of(op)) selected = t->dim;
  if (std::optional<ir::ScatterView> s = ir::ScatterView::of(op)) selected = s->dim;
  if (selected && *selected >= 0 && *selected < int64_t(v.view.iter.size())) {
    v.kept.push_back(*selected);
    v.keptReduced.push_back(false);
  }
  return v;
}

Dims writtenTile(llvm::ArrayRef<int64_t> tile, size_t rank) {
  return Dims(tile.end() - rank, tile.end());
}

namespace {

/// DESIGN.md "Passes and their knobs": a vector tile of 16-64 KiB is the sweet spot
/// (below it the per-instruction and per-copy fixed costs dominate; above it a chain's
/// buffers, double buffered, crowd UB).
constexpr int64_t kMinVecTileBytes = int64_t(16) << 10;
constexpr int64_t kMaxVecTileBytes = int64_t(64) << 10;

/// The tile an op iterating over `shape` holds of chain tile `tile` (rank >= the
/// shape's): its trailing sizes, each at most the shape's.
Dims heldTile(llvm::ArrayRef<int64_t> tile, llvm::ArrayRef<int64_t> shape) {
  Dims out;
  size_t lead = tile.size() - shape.size();
  for (size_t d = 0; d < shape.size(); ++d) out.push_back(std::min(tile[lead + d], shape[d]));
  return out;
}

/// The region of a value of shape `shape` an op holding `iterTile` works on (numpy
/// broadcasting, trailing dims aligned): dims where the value has size 1, and leading
/// dims the iteration does not have, are 1; the others the tile's.
Dims regionOf(llvm::ArrayRef<int64_t> iterTile, llvm::ArrayRef<int64_t> shape) {
  Dims out(shape.size(), 1);
  int64_t lead = int64_t(shape.size()) - int64_t(iterTile.size());
  for (size_t i = 0; i < shape.size(); ++i) {
    int64_t j = int64_t(i) - lead;
    if (j < 0 || shape[i] == 1) continue;
    out[i] = std::min(iterTile[j], shape[i]);
  }
  return out;
}

/// The UB buffers op `v` holds per step with chain tile `tile`: a reduction whose
/// reduced axis the tile cuts holds the chunk, its partial and the running combine,
/// as expand-tiles counts.
unsigned buffersWith(const VecOp &v, llvm::ArrayRef<int64_t> tile) {
  if (v.op->def().cls != OpClass::Reduction) return v.view.buffers;
  Dims held = heldTile(tile, v.view.iter);
  for (size_t i = 0; i < v.kept.size(); ++i)
    if (v.keptReduced[i] && held[v.kept[i]] < v.view.iter[v.kept[i]])
      return 3;
  return v.view.buffers;
}

/// What one tile of a chain costs: the UB it holds at its peak and the cycles of its
/// pipes (CostModel of each tile op: copy_ins on MTE2, compute on VEC, copy_outs on
/// MTE3).
struct TileMeasure {
  int64_t peak = 0;
  double mte2 = 0, vec = 0, mte3 = 0;
  double sum() const { return mte2 + vec + mte3; }
  double slowest() const { return std::max({mte2, vec, mte3}); }
};

/// One tile of a chain as tile ops in a scratch function, so that what one fused task
/// of the chain holds in UB is measured the way codegen places it, and its time the
/// way the partitioner estimates it.
class ChainModel {
public:
  ChainModel(ir::Context &ctx, const target::DeviceSpec &device,
             llvm::ArrayRef<const VecOp *> ops)
      : ctx_(ctx), cost_(device), ops_(ops), blockBytes_(device.buffers.blockBytes) {
    for (const VecOp *v : ops) members_.insert(v->op);
  }

  /// One task of the chain cut by chain tile `tile`: the UB bytes live at once
  /// (analysis::localPeakBytes of its tile ops in their local schedule) and its pipes.
  TileMeasure measure(llvm::ArrayRef<int64_t> tile) const {
    Type gmType = ctx_.tensorType(DType::F32, {1});
    ir::Func f(ctx_, "default-tiles.model", {gmType}, {}, ops_.front()->op->loc());
    Value *gm = f.arg(0);
    Attribute none = ctx_.emptyDict();
    auto tileType = [&](Type like, llvm::ArrayRef<int64_t> shape, ir::MemSpace space) {
      return ctx_.tileType(like.dtype(), shape, space);
    };
    auto create = [&](OpCode code, llvm::ArrayRef<Value *> operands,
                      llvm::ArrayRef<Type> results) {
      return f.createOp(ctx_.opDef(code), operands, results, none, f.loc());
    };
    auto writeOut = [&](Value *t) {
      create(OpCode::CopyOut, {t, gm}, {tileType(t->type(), t->type().shape(), ir::MemSpace::GM)});
    };
    llvm::DenseMap<const Value *, Value *> local; // chain value -> its tile in UB
    std::map<std::pair<const Value *, std::vector<int64_t>>, Value *> reads;
    // A region of `v`: the chain's own tile when it is exactly that, a fresh constant
    // tile of a `full`, else one copy_in per distinct region (expand-tiles shares a
    // copy_in among the ops reading it).
    auto read = [&](const Value *v, llvm::ArrayRef<int64_t> region) -> Value * {
      if (auto it = local.find(v); it != local.end() && it->second->type().shape() == region)
        return it->second;
      auto [it, fresh] = reads.try_emplace({v, std::vector<int64_t>(region.begin(), region.end())});
      if (fresh) {
        const Operation *def = v->definingOp();
        bool constant = def && def->code() == OpCode::Full;
        Type t = tileType(v->type(), region, ir::MemSpace::UB);
        it->second = constant ? create(OpCode::Full, {}, {t})->result()
                              : create(OpCode::CopyIn, {gm}, {t})->result();
      }
      return it->second;
    };

    for (const VecOp *v : ops_) {
      Operation &op = *v->op;
      Dims held = heldTile(tile, v->view.iter);
      switch (op.def().cls) {
      case OpClass::Assemble: // only src's tiles move, written out
        writeOut(read(op.operand(1), regionOf(held, op.operandType(1).shape())));
        continue;
      case OpClass::Concat:
        for (unsigned i = 0; i < op.numOperands(); ++i)
          writeOut(read(op.operand(i), regionOf(held, op.operandType(i).shape())));
        continue;
      case OpClass::Reshape:
      case OpClass::View:
        // A GM alias, unless it renames a tile the chain holds (a reshape of size-1
        // dims): its readers copy its regions in.
        if (auto it = local.find(op.operand(0)); it != local.end())
          local[op.result()] =
              create(OpCode::Reshape, {it->second},
                     {tileType(op.resultType(), regionOf(held, op.resultType().shape()),
                               ir::MemSpace::UB)})
                  ->result();
        continue;
      default: break;
      }
      llvm::SmallVector<Value *, 3> operands;
      for (unsigned i = 0; i < op.numOperands(); ++i) {
        Dims region = regionOf(held, op.operandType(i).shape());
        if (op.def().cls == OpClass::Gather && i == 0)
          if (Attribute dim = op.attr("dim"); dim && dim.isInt() && dim.getInt() < int64_t(region.size()))
            region[dim.getInt()] = op.operandType(0).dim(unsigned(dim.getInt()));
        operands.push_back(read(op.operand(i), region));
      }
      llvm::SmallVector<Type, 2> results;
      std::optional<ir::ReduceView> reduce = ir::ReduceView::of(op);
      for (unsigned r = 0; r < op.numResults(); ++r) {
        Dims region;
        if (reduce) {
          for (size_t d = 0; d < held.size(); ++d) {
            bool reduced = llvm::is_contained(reduce->axes, int64_t(d));
            if (!reduced) region.push_back(held[d]);
            else if (reduce->keepdim) region.push_back(1);
          }
        } else if (Attribute perm = op.attr("perm");
                   op.def().cls == OpClass::Transpose && perm && perm.isIntArray() &&
                   perm.getIntArray().size() == held.size()) {
          // The tile cuts a transpose's input; its output tile is that tile permuted.
          for (int64_t p : perm.getIntArray()) region.push_back(held[size_t(p)]);
        } else {
          region = regionOf(held, op.resultType(r).shape());
        }
        results.push_back(tileType(op.resultType(r), region, ir::MemSpace::UB));
      }
      Operation *made = f.createOp(op.def(), operands, results, op.attrDict(), f.loc());
      for (unsigned r = 0; r < op.numResults(); ++r) local[op.result(r)] = made->result(r);
    }
    // What leaves the chain is written out once its last reader in the chain ran.
    for (const VecOp *v : ops_)
      for (unsigned r = 0; r < v->op->numResults(); ++r) {
        auto it = local.find(v->op->result(r));
        if (it == local.end()) continue;
        bool leaves = false;
        for (const ir::OpOperand &u : v->op->result(r)->uses())
          leaves |= !members_.contains(u.owner());
        if (leaves) writeOut(it->second);
      }
    TileMeasure out;
    std::vector<const Operation *> body;
    for (const Operation &o : f.ops()) {
      body.push_back(&o);
      double cycles = double(cost_.opCycles(o));
      (o.code() == OpCode::CopyIn ? out.mte2 : o.code() == OpCode::CopyOut ? out.mte3 : out.vec) +=
          cycles;
    }
    analysis::LocalScheduler scheduler;
    out.peak = analysis::localPeakBytes(analysis::scheduleLocalOps(body, scheduler),
                                        ir::MemSpace::UB, blockBytes_);
    return out;
  }

  /// Whether the chain's tasks have successors (a value it computes is read by an op
  /// outside it, not only returned): the scheduler then releases them.
  bool hasSuccessors() const {
    for (const VecOp *v : ops_)
      for (const Value &r : v->op->results())
        for (const ir::OpOperand &u : r.uses())
          if (!members_.contains(u.owner()) && u.owner()->code() != OpCode::Return) return true;
    return false;
  }

private:
  ir::Context &ctx_;
  analysis::CostModel cost_;
  llvm::ArrayRef<const VecOp *> ops_;
  int64_t blockBytes_;
  llvm::DenseSet<const Operation *> members_;
};

/// The vector rule over the ops one chain derives a tile for: its candidate tiles, what
/// each costs, and the choice among them.
class VecRule {
public:
  /// `copies`: how many copies of the chain (the same ops on other data) take the tile.
  VecRule(ir::Context &ctx, const target::DeviceSpec &device,
          llvm::ArrayRef<const VecOp *> ops, Dims shape, int64_t copies, bool loopBody,
          llvm::raw_ostream *log)
      : device_(device), log_(log), ops_(ops), shape_(std::move(shape)), copies_(copies),
        model_(ctx, device, ops), successors_(model_.hasSuccessors()), loopBody_(loopBody) {
    size_t rank = shape_.size();
    kept_.assign(rank, false);
    keptReduced_.assign(rank, false);
    selected_.assign(rank, false);
    unsigned minElem = 8;
    for (const VecOp *v : ops_) {
      size_t lead = rank - v->view.iter.size();
      for (size_t i = 0; i < v->kept.size(); ++i) {
        kept_[lead + v->kept[i]] = true;
        (v->keptReduced[i] ? keptReduced_ : selected_)[lead + v->kept[i]] = true;
      }
      minElem = std::min(minElem, v->view.minElemSize);
      if (v->view.maxElemSize > maxElem_) {
        // Named after the first value of that size the op touches (operands first).
        maxElem_ = v->view.maxElemSize;
        llvm::SmallVector<Type, 4> types;
        for (unsigned i = 0; i < v->op->numOperands(); ++i) types.push_back(v->op->operandType(i));
        for (const Value &r : v->op->results()) types.push_back(r.type());
        for (Type t : llvm::reverse(types))
          if (ir::elementSize(t.dtype()) == maxElem_) widest_ = t.dtype();
      }
    }
    int64_t block = device_.buffers.blockBytes;
    granule_ = block / std::gcd(block, int64_t(std::max(minElem, 1u)));
  }

  VecDecision decide() {
    std::vector<VecCandidate> fit = evaluate(/*cutKept=*/false);
    if (fit.empty() && llvm::is_contained(keptReduced_, true)) fit = evaluate(/*cutKept=*/true);
    return choose(fit);
  }

  std::string shapeText() const { return absl::StrJoin(shape_, "x"); }

private:
  static bool inWindow(const VecCandidate &c) {
    return c.bytes >= kMinVecTileBytes && c.bytes <= kMaxVecTileBytes;
  }

  VecDecision choose(const std::vector<VecCandidate> &fit) const {
    VecDecision out;
    if (fit.empty()) {
      std::vector<int64_t> selected;
      for (size_t d = 0; d < shape_.size(); ++d)
        if (selected_[d]) selected.push_back(int64_t(d));
      out.error = absl::StrCat(
          "no tile of its chain's ", shapeText(), " iteration fits the ", device_.buffers.ub,
          " bytes of UB of '", device_.name, "'",
          selected.empty()
              ? ", even one block wide; use a device with more UB"
              : absl::StrCat(" with axis ", absl::StrJoin(selected, ", "),
                             " whole (topk and scatter hold their dim whole): make that "
                             "dimension smaller or use a device with more UB"));
      return out;
    }
    std::vector<VecCandidate> pool;
    for (const VecCandidate &c : fit)
      if (2 * c.peak <= device_.buffers.ub) pool.push_back(c);
    bool singleBuffered = pool.empty();
    if (singleBuffered) pool = fit;
    std::vector<VecCandidate> window;
    for (const VecCandidate &c : pool)
      if (inWindow(c)) window.push_back(c);
    if (!window.empty()) {
      double best = window.front().score;
      for (const VecCandidate &c : window) best = std::min(best, c.score);
      const VecCandidate *pick = nullptr;
      for (const VecCandidate &c : window) {
        if (c.score > best * kTieTolerance) continue;
        if (!pick || (pick->tail && !c.tail) ||
            (pick->tail == c.tail && (c.bytes > pick->bytes ||
                                      (c.bytes == pick->bytes && c.score < pick->score))))
          pick = &c;
      }
      out.chosen = *pick;
    } else {
      auto distance = [](const VecCandidate &c) {
        return c.bytes < kMinVecTileBytes ? double(kMinVecTileBytes) / double(std::max<int64_t>(c.bytes, 1))
                                          : double(c.bytes) / double(kMaxVecTileBytes);
      };
      const VecCandidate *pick = nullptr;
      for (const VecCandidate &c : pool)
        if (!pick || distance(c) < distance(*pick) ||
            (distance(c) == distance(*pick) && pick->tail && !c.tail))
          pick = &c;
      out.chosen = *pick;
    }
    describe(*out.chosen, singleBuffered, !window.empty(), out);
    return out;
  }

  /// The candidates (kept axes whole, or with cutKept the reduced ones cuttable too) that
  /// fit. The window's are measured first: when one of them leaves room for two tasks
  /// the others cannot be chosen (choose()), so they are not measured.
  std::vector<VecCandidate> evaluate(bool cutKept) {
    std::vector<VecCandidate> listed;
    for (Dims &tile : candidates(cutKept)) {
      VecCandidate c;
      c.tile = std::move(tile);
      c.cutsKept = cutKept;
      c.bytes = ir::vecTileBytes(heldTile(c.tile, shape_), maxElem_, device_.buffers.blockBytes);
      if (fitsEveryOp(c.tile)) listed.push_back(std::move(c));
    }
    std::vector<VecCandidate> out;
    for (VecCandidate &c : listed)
      if (inWindow(c) && measure(c)) out.push_back(c);
    bool settled = llvm::any_of(out, [&](const VecCandidate &c) {
      return 2 * c.peak <= device_.buffers.ub;
    });
    if (!settled)
      for (VecCandidate &c : listed)
        if (!inWindow(c) && measure(c)) out.push_back(c);
    return out;
  }

  /// Fills `c`'s peak, tile counts and score; false when its peak does not fit UB.
  bool measure(VecCandidate &c) {
    Dims held = heldTile(c.tile, shape_);
    TileMeasure m = model_.measure(c.tile);
    c.peak = m.peak;
    if (c.peak > device_.buffers.ub) return false;
    c.tiles = copies_;
    for (size_t d = 0; d < shape_.size(); ++d) {
      c.tiles *= ceilDiv(shape_[d], held[d]);
      c.tail |= shape_[d] % held[d] != 0;
    }
    int64_t cores = device_.aivCores;
    c.merge = 2 * c.peak <= device_.buffers.ub ? automaticNBuffer(c.tiles, cores) : 1;
    c.tasks = ceilDiv(c.tiles, c.merge);
    c.waves = ceilDiv(c.tasks, cores);
    c.taskCycles = pipelinedCycles(c.merge, m.sum(), m.slowest());
    c.score = spanCycles(c.tasks, c.taskCycles, cores, successors_, device_);
    if (log_)
      *log_ << kPassName << ":   candidate [" << listText(c.tile) << "]: " << c.bytes
            << " bytes, peak " << c.peak << ", " << c.tiles << " tiles, " << c.merge
            << " per task, " << c.waves << " waves, task " << int64_t(c.taskCycles)
            << ", span " << int64_t(c.score) << (c.tail ? ", tail" : "") << "\n";
    return true;
  }

  /// Every op of the chain accepts the tile on its own (alignment, its buffers in UB).
  bool fitsEveryOp(llvm::ArrayRef<int64_t> tile) const {
    for (const VecOp *v : ops_) {
      Dims own = writtenTile(tile, v->view.iter.size());
      if (!v->view.check(own, v->view.iter, buffersWith(*v, tile), &device_).empty())
        return false;
    }
    return true;
  }

  /// Candidate tiles: cuttable dims cut outermost first, the cut dim in balanced splits
  /// ceil(extent / p) (the last dim in whole granules), dims inside it whole, dims
  /// outside it 1. The whole shape first.
  std::vector<Dims> candidates(bool cutKept) const {
    size_t rank = shape_.size();
    Dims whole(shape_);
    whole.back() = roundUp(shape_.back(), granule_);
    std::vector<Dims> out{whole};
    std::vector<size_t> cuttable;
    for (size_t d = 0; d < rank; ++d)
      if ((!kept_[d] || (cutKept && !selected_[d])) && shape_[d] > 1) cuttable.push_back(d);
    for (size_t k = 0; k < cuttable.size(); ++k) {
      size_t j = cuttable[k];
      Dims base = whole;
      for (size_t o = 0; o < k; ++o) base[cuttable[o]] = 1;
      int64_t unit = j + 1 == rank ? granule_ : 1;
      int64_t units = ceilDiv(shape_[j], unit);
      int64_t previous = -1;
      for (int64_t p = 2; p <= units; ++p) {
        int64_t size = ceilDiv(units, p) * unit;
        if (size == previous) continue;
        previous = size;
        Dims t = base;
        t[j] = size;
        out.push_back(std::move(t));
      }
    }
    return out;
  }

  void describe(const VecCandidate &c, bool singleBuffered, bool inWindow, VecDecision &out) const {
    std::vector<std::string> parts;
    std::vector<int64_t> reduced, selected;
    for (size_t d = 0; d < shape_.size(); ++d) {
      if (!kept_[d] || shape_[d] <= 1) continue;
      (selected_[d] ? selected : reduced).push_back(int64_t(d));
    }
    auto axes = [](const std::vector<int64_t> &a) {
      return absl::StrCat(a.size() == 1 ? "axis " : "axes ", absl::StrJoin(a, ", "));
    };
    if (c.cutsKept)
      parts.push_back(absl::StrCat("reduction ", axes(reduced),
                                   " cut: no slice with it whole fits UB"));
    else {
      if (!reduced.empty()) parts.push_back("whole reduction " + axes(reduced));
      if (!selected.empty()) parts.push_back("whole selected " + axes(selected));
    }
    Dims held = heldTile(c.tile, shape_);
    std::string size = absl::StrCat(bytesText(c.bytes), " at ", std::string(ir::dtypeName(widest_)));
    if (!inWindow) {
      if (c.bytes < kMinVecTileBytes)
        absl::StrAppend(&size, llvm::equal(held, shape_) ? " (the whole shape)"
                                                         : " (UB leaves no bigger tile)");
      else
        absl::StrAppend(&size, " (the smallest with the kept axes whole)");
    }
    parts.push_back(size);
    std::string tiles = copies_ > 1 ? absl::StrCat(c.tiles, " tiles (", copies_,
                                                   " copies of the chain)")
                                    : absl::StrCat(c.tiles, c.tiles == 1 ? " tile" : " tiles");
    parts.push_back(tilesOnCores(tiles, c.tiles, device_.aivCores, "AIV",
                                 c.merge > 1 || loopBody_));
    out.rule = absl::StrJoin(parts, ", ");
    out.detail = absl::StrCat(
        "UB peak of a task ", bytesText(c.peak), " of ", bytesText(device_.buffers.ub),
        singleBuffered ? " (no tile leaves room for two: single-buffered)" : "",
        absl::StrFormat("; estimated %.0f cycles a task, a span of %.0f", c.taskCycles,
                        c.score));
  }

  const target::DeviceSpec &device_;
  llvm::raw_ostream *log_;
  llvm::ArrayRef<const VecOp *> ops_;
  Dims shape_;
  int64_t copies_;
  ChainModel model_;
  bool successors_;
  bool loopBody_; ///< the function is a loop body (its merges also serve the control thread)
  /// Per dim of the chain's shape: kept whole; a reduction's axis; topk's or scatter's
  /// dim (expand-tiles holds those whole whatever the tile says, so they are never cut).
  std::vector<bool> kept_, keptReduced_, selected_;
  unsigned maxElem_ = 0;
  DType widest_ = DType::F32;
  int64_t granule_ = 1;
};

} // namespace

VecDecision decideVecTile(ir::Context &ctx, const target::DeviceSpec &device,
                          llvm::ArrayRef<const VecOp *> ops, Dims shape, int64_t copies,
                          bool loopBody, llvm::raw_ostream *log) {
  VecRule rule(ctx, device, ops, std::move(shape), copies, loopBody, log);
  VecDecision d = rule.decide();
  d.shape = rule.shapeText();
  return d;
}

} // namespace ptoc::passes::default_tiles
