// default-tiles: gives every tensor-level op that needs a tile shape and has none (a
// vector op without `vec_tile`, a matmul without `cube_tile`) a tile derived from the
// op and the device, so a kernel that sets no tile shapes compiles, fused as a user
// would fuse it. A tile the user set is never changed. docs/passes.md, "default-tiles",
// gives the rules with worked numbers; in short:
//
// Chains. Vector ops joined by a value whose iteration shapes broadcast together
// (trailing dims aligned, as numpy) form a chain (a slice write's destination does not
// join: it is written in GM). expand-tiles fuses a consumer with its producer only when
// their tiles cut the same regions, so all untiled ops of a chain take one tile (each
// op its trailing sizes, as ir::adaptVecTile reads a longer tile). When the user set a
// tile on some op of the chain, its untiled ops take the first such tile that fits
// them; only ops none fits are derived. Chains whose derived ops compute the same thing
// on other data (a batch or head per step) are copies: decided once, their tiles
// counted together, as they share the cores.
//
// Vector rule, over the ops a chain derives for. S = the broadcast of their iteration
// shapes. Kept axes: every reduced axis, topk's and scatter's dim (never cut, so no
// cross-tile combine is needed). Candidates keep the kept axes whole and cut the
// others outermost first: dims inside the cut whole, the cut dim a balanced split
// ceil(extent / p) (the last dim in whole 32-byte blocks of the smallest element
// type, ir::checkVecTile's alignment), dims outside it 1. Per candidate:
//   bytes  one tile at the widest element type the chain touches, the last dim padded
//          to blocks (ir::vecTileBytes): UB's capacity rule counts every buffer of an
//          op at that size, and the 16-64 KiB rule is about one buffer;
//   peak   the UB bytes one fused task of the chain holds at its peak: the chain's ops
//          on one tile as tile ops (copy_ins of what it reads from outside, copy_outs
//          of what leaves it), measured by analysis::localPeakBytes in
//          analysis::scheduleLocalOps order, as nbuffer-merge measures a task;
//   span   the estimated time of all its tiles: the default pipeline's nbuffer-merge
//          merges N tiles per task (automaticNBuffer; N = 1 when two tasks do not fit
//          UB), a task costs its tile ops' CostModel cycles, pipelined over its N tiles
//          (spanCycles: waves of tasks after the AICPU threads dispatched the first).
// A candidate must fit: every op's own check (ir::VecTileView) and peak <= UB.
// Preferred: 2 x peak <= UB (a merged task double buffers two tiles). Among those, the
// ones with 16 KiB <= bytes <= 64 KiB, the least span; within 5% of it, no tail tile
// first, then the biggest tile. With none in that window (the whole shape is smaller,
// a kept slice is bigger, or UB is small), the candidate nearest it (by ratio). Only
// when no candidate with the reduced axes whole fits are they cut too (expand-tiles
// then combines partials; the record says so).
//
// Cube rule, per matmul. mL1 and nL1 from the balanced 16-aligned splits of M and N
// (roundUp16(ceil(extent / p)), at most kMaxCubeL1) whose fp32 (int32) accumulator
// mL1 x nL1 fits L0C; kL1 the largest of 256, 128, 64, 32, 16 (K rounded up to 16 when
// that is smaller) for which two copies of both L1 tiles fit L1; mL0 = mL1, nL0 = nL1
// and kL0 the largest of 128, 64, 32, 16 dividing kL1 for which two copies of the L0A
// and L0B tiles fit (halving mL0 / nL0 when none does); ir::checkCubeTile must pass.
// With no such tile, one copy each (single-buffered). Score: T output tiles (batch
// included), merged N' per task by the default pipeline's l1-reuse-merge
// (l1ReuseAutomaticCount); one tile costs its K steps pipelined, each step loading its
// two L1 tiles at the ND->NZ path's rate (an L2 hit: every panel is read by a whole row
// or column of tiles) while the cube works (CostModel of the tile matmul), plus its
// FIXPIPE write (CostModel); score = max(the span of ceil(T / N') tasks of N' tiles,
// every tile's loads at the device's L2 bandwidth). Within 5% of the least score:
// mL1 and nL1 multiples of 128 (or the whole extent) first, then whole waves (the
// fewest idle core slots in the last wave of AIC cores), then the score, then taller
// tiles.
//
// Every derived tile is a remark at the first op that takes it and a DerivedTile
// (PassContext::derivedTiles, the run summary's "tiles" line).
#include "ptoc/passes/Passes.h"

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
#include "ptoc/ir/Level.h"
#include "ptoc/ir/OpDef.h"
#include "ptoc/ir/OpViews.h"
#include "ptoc/ir/TileShape.h"
#include "ptoc/passes/MergeRules.h"
#include "ptoc/target/DeviceSpec.h"

namespace ptoc::passes {
namespace {

using ir::Attribute;
using ir::DType;
using ir::OpClass;
using ir::OpCode;
using ir::Operation;
using ir::Type;
using ir::Value;
using Dims = llvm::SmallVector<int64_t, 4>;

constexpr llvm::StringLiteral kPassName = "default-tiles";
/// DESIGN.md "Passes and their knobs": a vector tile of 16-64 KiB is the sweet spot
/// (below it the per-instruction and per-copy fixed costs dominate; above it a chain's
/// buffers, double buffered, crowd UB).
constexpr int64_t kMinVecTileBytes = int64_t(16) << 10;
constexpr int64_t kMaxVecTileBytes = int64_t(64) << 10;
/// Cube sizes are multiples of one 16-element fractal edge (ir::checkCubeTile).
constexpr int64_t kCubeAlign = 16;
/// The largest mL1 / nL1 tried: 256 x 128 fp32 accumulators fill a2's L0C (128 KiB), so
/// a bigger edge only pays on a device with a bigger L0C, and leaves fewer tiles to
/// spread over the cores.
constexpr int64_t kMaxCubeL1 = 256;
/// kL1 sizes tried, largest first: a deep K step amortises the copies' fixed cost.
constexpr int64_t kCubeKL1[] = {256, 128, 64, 32, 16};
/// kL0 sizes tried, largest first.
constexpr int64_t kCubeKL0[] = {128, 64, 32, 16};
/// Fractal-friendly cube sizes: multiples of this many elements win near-ties.
constexpr int64_t kCubePreferredAlign = 128;
/// Scores within this factor of the best are ties, decided by the other preferences.
constexpr double kTieTolerance = 1.05;

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t roundUp(int64_t v, int64_t m) { return ceilDiv(v, m) * m; }

std::string bytesText(int64_t bytes) {
  if (bytes < 1024) return absl::StrCat(bytes, " B");
  if (bytes % 1024 == 0) return absl::StrCat(bytes / 1024, " KiB");
  return absl::StrFormat("%.1f KiB", double(bytes) / 1024);
}

std::string listText(llvm::ArrayRef<int64_t> v) { return absl::StrJoin(v, ", "); }

/// The tile an op iterating over `shape` holds of chain tile `tile` (rank >= the
/// shape's): its trailing sizes, each at most the shape's.
Dims heldTile(llvm::ArrayRef<int64_t> tile, llvm::ArrayRef<int64_t> shape) {
  Dims out;
  size_t lead = tile.size() - shape.size();
  for (size_t d = 0; d < shape.size(); ++d) out.push_back(std::min(tile[lead + d], shape[d]));
  return out;
}

/// The trailing `rank` sizes of chain tile `tile`: what an op of that rank is given.
Dims writtenTile(llvm::ArrayRef<int64_t> tile, size_t rank) {
  return Dims(tile.end() - rank, tile.end());
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

// ---------------------------------------------------------------- vector ops

/// A vector op of the function, with what its tile must respect.
struct VecOp {
  Operation *op = nullptr;
  ir::VecTileView view;
  /// Iteration dims that are never cut: a reduction's axes, topk's and scatter's dim.
  llvm::SmallVector<int64_t, 2> kept;
  /// Which kept dims are a reduction's (the others are selected along).
  llvm::SmallVector<bool, 2> keptReduced;
  bool userTile() const { return !view.tile.empty(); }
};

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

/// The UB buffers op `v` holds per step with chain tile `tile`: a reduction whose
/// reduced axis the tile cuts holds the chunk, its partial and the running combine
/// (and the 1/N tile for mean), as expand-tiles counts.
unsigned buffersWith(const VecOp &v, llvm::ArrayRef<int64_t> tile) {
  if (v.op->def().cls != OpClass::Reduction) return v.view.buffers;
  Dims held = heldTile(tile, v.view.iter);
  for (size_t i = 0; i < v.kept.size(); ++i)
    if (v.keptReduced[i] && held[v.kept[i]] < v.view.iter[v.kept[i]])
      return v.op->code() == OpCode::Mean ? 4 : 3;
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

/// The cycles of a task running `n` tiles (or K steps) one after another, each
/// `sum` cycles with its slowest pipe `slowest`: the pipes overlap across tiles
/// (double buffering), so after the first tile each adds its slowest pipe.
double pipelinedCycles(int64_t n, double sum, double slowest) {
  return sum + double(std::max<int64_t>(n - 1, 0)) * slowest;
}

/// The estimated span of `tasks` tasks of `taskCycles` each on `cores` cores, as the
/// AICPU scheduler runs them: its threads dispatch the first wave one task at a time
/// each (the last core starts ceil(first wave / threads) dispatches late), later waves
/// go to the cores' pending slots while they run, and over several waves the threads
/// must keep up with every task's dispatch, completion and (with successors) release.
double spanCycles(int64_t tasks, double taskCycles, int64_t cores, bool successors,
                  const target::DeviceSpec &d) {
  const target::SchedulerSpec &s = d.scheduler;
  int64_t threads = std::max(s.threads, 1);
  int64_t waves = ceilDiv(tasks, cores);
  double span = double(ceilDiv(std::min(tasks, cores), threads)) * s.dispatchCycles +
                double(waves) * taskCycles;
  if (waves > 1) {
    double perTask = s.dispatchCycles + s.completionCycles +
                     (successors ? s.dependencyResolveCycles : 0.0);
    span = std::max(span, double(tasks) * perTask / double(threads));
  }
  return span;
}

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

/// One candidate vec_tile of a chain, in chain coordinates, and what it would cost.
struct VecCandidate {
  Dims tile;                 ///< as written: the last dim a whole number of blocks
  bool cutsKept = false;     ///< cuts a kept axis (the fallback)
  int64_t bytes = 0;         ///< one tile at the widest element type
  int64_t peak = 0;          ///< UB bytes one task holds at its peak
  int64_t tiles = 0, merge = 1, tasks = 0, waves = 0;
  double taskCycles = 0;     ///< one task's (N tiles, pipelined)
  double score = 0;          ///< the estimated span (spanCycles)
  bool tail = false;         ///< some dim is not a multiple of the tile
};

/// The vec_tile one chain's derived ops take, and why.
struct VecDecision {
  std::optional<VecCandidate> chosen;
  std::string rule;   ///< short, for the summary
  std::string detail; ///< the remark's extra numbers
  std::string error;  ///< when nothing fits
};

class VecRule {
public:
  /// `copies`: how many copies of the chain (the same ops on other data) take the tile.
  VecRule(ir::Context &ctx, const target::DeviceSpec &device,
          llvm::ArrayRef<const VecOp *> ops, Dims shape, int64_t copies,
          llvm::raw_ostream *log)
      : device_(device), log_(log), ops_(ops), shape_(std::move(shape)), copies_(copies),
        model_(ctx, device, ops), successors_(model_.hasSuccessors()) {
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
    std::string cores = absl::StrCat(device_.aivCores, " AIV");
    std::string tiles = copies_ > 1 ? absl::StrCat(c.tiles, " tiles (", copies_,
                                                   " copies of the chain)")
                                    : absl::StrCat(c.tiles, c.tiles == 1 ? " tile" : " tiles");
    if (c.merge > 1)
      parts.push_back(absl::StrCat(tiles, ", ", c.merge, " per task = ", c.tasks,
                                   " tasks, ", c.waves, c.waves == 1 ? " wave" : " waves", " of ",
                                   cores));
    else
      parts.push_back(absl::StrCat(tiles, " = ", c.waves,
                                   c.waves == 1 ? " wave" : " waves", " of ", cores));
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
  /// Per dim of the chain's shape: kept whole; a reduction's axis; topk's or scatter's
  /// dim (expand-tiles holds those whole whatever the tile says, so they are never cut).
  std::vector<bool> kept_, keptReduced_, selected_;
  unsigned maxElem_ = 0;
  DType widest_ = DType::F32;
  int64_t granule_ = 1;
};

// ---------------------------------------------------------------- cube rule

/// One candidate cube tile and its estimated cost.
struct CubeCandidate {
  ir::CubeTile tile;
  int64_t tiles = 0, merge = 1, tasks = 0, waves = 0;
  double tileCycles = 0;
  double score = 0; ///< max(the estimated span, the L2's time for every tile's loads)
  bool aligned = false;
  bool singleBuffered = false; ///< no tile leaves room for two copies

};

class CubeRule {
public:
  CubeRule(ir::Context &ctx, const target::DeviceSpec &device, const ir::MatmulView &mm,
           int64_t batch, bool successors, llvm::raw_ostream *log)
      : ctx_(ctx), device_(device), cost_(device), mm_(mm), batch_(batch),
        successors_(successors), log_(log) {}

  std::optional<CubeCandidate> decide() {
    std::vector<CubeCandidate> all;
    // Two copies of each L0A / L0B / L1 tile (double buffering), or when no tile leaves
    // room for two, one (the capacity rules' minimum; the leaf runs single-buffered).
    for (int64_t copies : {2, 1}) {
      if (!all.empty()) break;
      for (int64_t mL1 : splits(mm_.m))
        for (int64_t nL1 : splits(mm_.n))
          if (std::optional<ir::CubeTile> t = fit(mL1, nL1, copies)) {
            all.push_back(evaluate(*t));
            all.back().singleBuffered = copies == 1;
            if (log_)
              *log_ << kPassName << ":   candidate " << t->toAttr(ctx_).str() << ": "
                    << all.back().tiles << " tiles, " << all.back().merge << " per task, "
                    << all.back().waves << " waves, tile " << int64_t(all.back().tileCycles)
                    << ", score " << int64_t(all.back().score) << "\n";
          }
    }
    if (all.empty()) return std::nullopt;
    double best = all.front().score;
    for (const CubeCandidate &c : all) best = std::min(best, c.score);
    // Near-ties: fractal-friendly sizes, then whole waves (the fewest idle core slots
    // in the last wave), then the better score, then taller tiles.
    auto idle = [&](const CubeCandidate &c) { return c.waves * device_.aicCores - c.tasks; };
    auto better = [&](const CubeCandidate &c, const CubeCandidate &p) {
      if (c.aligned != p.aligned) return c.aligned;
      if (idle(c) != idle(p)) return idle(c) < idle(p);
      if (c.score != p.score) return c.score < p.score;
      return c.tile.m[1] > p.tile.m[1];
    };
    const CubeCandidate *pick = nullptr;
    for (const CubeCandidate &c : all)
      if (c.score <= best * kTieTolerance && (!pick || better(c, *pick))) pick = &c;
    return *pick;
  }

  std::string rule(const CubeCandidate &c) const {
    std::string cores = absl::StrCat(device_.aicCores, " AIC");
    std::string waves = absl::StrCat(c.waves, c.waves == 1 ? " wave" : " waves");
    if (c.merge > 1)
      return absl::StrCat(c.tiles, " tiles, merged up to ", c.merge,
                          " per task by l1-reuse-merge = ", waves, " of ", cores);
    return absl::StrCat(c.tiles, c.tiles == 1 ? " tile = " : " tiles = ", waves, " of ", cores);
  }

  std::string detail(const CubeCandidate &c) const {
    const ir::CubeTile &t = c.tile;
    int64_t e = ir::elementSize(mm_.in);
    int64_t steps = ceilDiv(mm_.k, t.k[1]);
    return absl::StrCat(mm_.m, "x", mm_.n, " output in tiles of ", t.m[1], "x", t.n[1], ", K ",
                        mm_.k, " in ", steps, steps == 1 ? " step" : " steps", " of ", t.k[1],
                        "; L0A ", bytesText(t.m[0] * t.k[0] * e), ", L0B ",
                        bytesText(t.k[0] * t.n[0] * e), ", L0C ", bytesText(t.m[1] * t.n[1] * 4),
                        ", L1 ", bytesText((t.m[1] + t.n[1]) * t.k[1] * e), " per copy",
                        c.singleBuffered ? " (no tile leaves room for two: single-buffered)"
                                         : "");
  }

private:
  /// mL1 (nL1) candidates: the balanced 16-aligned splits of `extent`, at most kMaxCubeL1.
  static std::vector<int64_t> splits(int64_t extent) {
    std::vector<int64_t> out;
    int64_t units = ceilDiv(std::max<int64_t>(extent, 1), kCubeAlign);
    for (int64_t p = 1; p <= units; ++p) {
      int64_t size = ceilDiv(units, p) * kCubeAlign;
      if (size > kMaxCubeL1 || (!out.empty() && out.back() == size)) continue;
      out.push_back(size);
    }
    return out;
  }

  /// The tile of mL1 x nL1 output elements whose L0A, L0B and L1 tiles fit their
  /// buffers `copies` times (the accumulator once), or nullopt.
  std::optional<ir::CubeTile> fit(int64_t mL1, int64_t nL1, int64_t copies) const {
    const target::BufferSpec &b = device_.buffers;
    int64_t e = ir::elementSize(mm_.in);
    if (mL1 * nL1 * 4 > b.l0c) return std::nullopt; // the whole fp32 / int32 accumulator
    int64_t kWhole = roundUp(std::max<int64_t>(mm_.k, 1), kCubeAlign);
    std::vector<int64_t> kOptions;
    if (kWhole < kCubeKL1[0]) kOptions.push_back(kWhole);
    for (int64_t k : kCubeKL1)
      if (k < kWhole || (k == kWhole && kOptions.empty())) kOptions.push_back(k);
    int64_t kL1 = 0;
    for (int64_t k : kOptions)
      if (copies * (mL1 + nL1) * k * e <= b.l1) {
        kL1 = k;
        break;
      }
    if (!kL1) return std::nullopt;
    int64_t mL0 = mL1, nL0 = nL1;
    for (;;) {
      for (int64_t k : kCubeKL0)
        if (kL1 % k == 0 && copies * mL0 * k * e <= b.l0a && copies * k * nL0 * e <= b.l0b) {
          ir::CubeTile t;
          t.m = {mL0, mL1};
          t.k = {k, kL1};
          t.n = {nL0, nL1};
          if (!ir::checkCubeTile(t, mm_.in, &device_).empty()) return std::nullopt;
          return t;
        }
      int64_t &bigger = mL0 >= nL0 ? mL0 : nL0;
      if ((bigger / 2) % kCubeAlign != 0) return std::nullopt;
      bigger /= 2;
    }
  }

  /// One K step over `k` on an mL1 x nL1 tile: the loads of its two L1 tiles at the
  /// ND->NZ path rate (first) and the cube's work (CostModel of the tile matmul).
  std::pair<double, double> stepCycles(const ir::CubeTile &t, int64_t k) const {
    int64_t m = t.m[1], n = t.n[1], e = ir::elementSize(mm_.in);
    Type a = ctx_.tileType(mm_.in, {m, k}, ir::MemSpace::L1);
    Type b = ctx_.tileType(mm_.in, {k, n}, ir::MemSpace::L1);
    ir::Func f(ctx_, "default-tiles.cube-model", {a, b}, {}, ir::Location());
    ir::NamedAttr attrs[] = {{ctx_.id("cube_tile"), t.toAttr(ctx_)}};
    Operation *mm = f.createOp(ctx_.opDef(OpCode::Matmul), {f.arg(0), f.arg(1)},
                               {ctx_.tileType(mm_.acc, {m, n}, ir::MemSpace::L0C)},
                               ctx_.dictAttr(attrs, true), f.loc());
    const target::PipeSpec &p = device_.pipes;
    double load = 2 * p.nd2nzFixedCycles + double((m + n) * k * e) / p.nd2nzBytesPerCycle;
    return {load, double(cost_.opCycles(*mm))};
  }

  double fixpipeCycles(const ir::CubeTile &t) const {
    Type acc = ctx_.tileType(mm_.acc, {t.m[1], t.n[1]}, ir::MemSpace::L0C);
    Type gm = ctx_.tensorType(mm_.out, {t.m[1], t.n[1]});
    ir::Func f(ctx_, "default-tiles.cube-model", {acc, gm}, {}, ir::Location());
    Operation *out = f.createOp(ctx_.opDef(OpCode::CopyOut), {f.arg(0), f.arg(1)},
                                {ctx_.tileType(mm_.out, {t.m[1], t.n[1]}, ir::MemSpace::GM)},
                                ctx_.emptyDict(), f.loc());
    return double(cost_.opCycles(*out));
  }

  CubeCandidate evaluate(const ir::CubeTile &t) const {
    CubeCandidate c;
    c.tile = t;
    c.tiles = batch_ * ceilDiv(mm_.m, t.m[1]) * ceilDiv(mm_.n, t.n[1]);
    int64_t cores = device_.aicCores;
    c.merge = l1ReuseAutomaticCount(c.tiles, cores);
    c.tasks = ceilDiv(c.tiles, c.merge);
    c.waves = ceilDiv(c.tasks, cores);
    // The K steps pipeline (the next step loads while the cube works on this one); a
    // last, shorter step covers a K tail.
    int64_t full = mm_.k / t.k[1], tailK = mm_.k % t.k[1];
    auto [load, cube] = stepCycles(t, t.k[1]);
    c.tileCycles = pipelinedCycles(full, load + cube, std::max(load, cube));
    if (tailK) {
      auto [tailLoad, tailCube] = stepCycles(t, roundUp(tailK, kCubeAlign));
      c.tileCycles += full ? std::max(tailLoad, tailCube) : tailLoad + tailCube;
    }
    c.tileCycles += fixpipeCycles(t);
    double loads = double(c.tiles) * double((t.m[1] + t.n[1]) * mm_.k * ir::elementSize(mm_.in));
    c.score = std::max(spanCycles(c.tasks, double(c.merge) * c.tileCycles, cores, successors_,
                                  device_),
                       loads / device_.l2BytesPerCycle());
    auto alignedTo = [](int64_t size, int64_t extent) {
      return size % kCubePreferredAlign == 0 || size >= roundUp(extent, kCubeAlign);
    };
    c.aligned = alignedTo(t.m[1], mm_.m) && alignedTo(t.n[1], mm_.n);
    return c;
  }

  ir::Context &ctx_;
  const target::DeviceSpec &device_;
  analysis::CostModel cost_;
  ir::MatmulView mm_;
  int64_t batch_;
  bool successors_;
  llvm::raw_ostream *log_;
};

// ---------------------------------------------------------------- the pass

/// Union-find over a function's vector ops whose sets carry the broadcast of their
/// members' iteration shapes.
class ChainSets {
public:
  explicit ChainSets(const std::vector<VecOp> &ops) : parent_(ops.size()) {
    for (size_t i = 0; i < ops.size(); ++i) {
      parent_[i] = i;
      shape_.push_back(ops[i].view.iter);
    }
  }
  size_t find(size_t x) {
    while (parent_[x] != x) x = parent_[x] = parent_[parent_[x]];
    return x;
  }
  /// Joins the sets of a and b when their shapes broadcast together.
  void join(size_t a, size_t b) {
    a = find(a);
    b = find(b);
    if (a == b) return;
    std::optional<Dims> both = ir::broadcastShapes(shape_[a], shape_[b]);
    if (!both) return;
    if (b < a) std::swap(a, b);
    parent_[b] = a;
    shape_[a] = *both;
  }
  const Dims &shape(size_t root) const { return shape_[root]; }

private:
  std::vector<size_t> parent_;
  std::vector<Dims> shape_;
};

class DefaultTilesPass final : public Pass {
public:
  llvm::StringRef argument() const override { return kPassName; }

  PassResult run(ir::Module &m, PassContext &ctx) override {
    bool changed = false;
    for (ir::Func &f : m.funcs()) {
      if (ir::levelOf(f) != ir::Level::Tensor) continue; // control functions, tile level
      std::optional<bool> c = runOnFunc(f, ctx);
      if (!c) return PassResult::failure();
      changed |= *c;
    }
    return PassResult::changed(changed);
  }

private:
  std::optional<bool> runOnFunc(ir::Func &f, PassContext &pctx) {
    ir::Context &ctx = f.context();
    const target::DeviceSpec &device = pctx.device;
    llvm::raw_ostream *log = pctx.debugStream(kPassName);
    bool changed = false;

    std::vector<VecOp> vecOps;
    llvm::DenseMap<const Operation *, size_t> vecIndex;
    for (Operation &op : f.ops()) {
      if (op.def().tile == ir::TileKind::Vec) {
        vecIndex[&op] = vecOps.size();
        vecOps.push_back(vecOpOf(op));
      }
    }
    ChainSets sets(vecOps);
    llvm::DenseSet<const Operation *> joinedConstants;
    for (size_t i = 0; i < vecOps.size(); ++i)
      for (unsigned o = 0; o < vecOps[i].op->numOperands(); ++o) {
        // A slice write's destination is written in GM, never fused with its producer.
        if (vecOps[i].op->code() == OpCode::Assemble && o == 0) continue;
        const Operation *def = vecOps[i].op->operand(o)->definingOp();
        if (!def) continue;
        // A constant is made afresh for every read, so one `full` (cse shares them) does
        // not tie its readers' chains together: it joins its first reader's only.
        if (def->code() == OpCode::Full && !joinedConstants.insert(def).second) continue;
        if (auto it = vecIndex.find(def); it != vecIndex.end()) sets.join(i, it->second);
      }
    std::map<size_t, std::vector<const VecOp *>> chains; // by root: first op first
    for (size_t i = 0; i < vecOps.size(); ++i) chains[sets.find(i)].push_back(&vecOps[i]);

    // The ops each chain derives a tile for, grouped by what they compute: copies of one
    // chain over different data (a loop body unrolled, one head or batch per step) run
    // side by side, so they are decided once with their tiles counted together.
    std::map<std::string, std::vector<std::vector<const VecOp *>>> groups;
    std::vector<std::string> groupOrder;
    for (auto &[root, members] : chains) {
      std::vector<const VecOp *> user, untiled;
      for (const VecOp *v : members) (v->userTile() ? user : untiled).push_back(v);
      if (untiled.empty()) continue;
      changed = true;
      std::vector<const VecOp *> derive;
      for (const VecOp *v : untiled)
        if (!takeChainTile(*v, user, ctx, device, log)) derive.push_back(v);
      if (derive.empty()) continue;
      std::string key = signature(derive);
      auto [it, fresh] = groups.try_emplace(key);
      if (fresh) groupOrder.push_back(key);
      it->second.push_back(std::move(derive));
    }
    for (const std::string &key : groupOrder) {
      const std::vector<std::vector<const VecOp *>> &copies = groups[key];
      const std::vector<const VecOp *> &derive = copies.front();
      Dims shape = derive.front()->view.iter;
      for (const VecOp *v : derive)
        if (std::optional<Dims> b = ir::broadcastShapes(shape, v->view.iter)) shape = *b;
      VecRule rule(ctx, device, derive, shape, int64_t(copies.size()), log);
      VecDecision d = rule.decide();
      if (!d.chosen) {
        ctx.emitError(derive.front()->op->loc(), ir::DiagCategory::Tile)
            << "'" << derive.front()->op->name() << "' op has no vec_tile, and " << d.error;
        return std::nullopt;
      }
      record(copies, d, rule.shapeText(), f, ctx, pctx, log);
    }

    for (Operation &op : f.ops()) {
      if (op.def().tile != ir::TileKind::Cube || op.attr("cube_tile")) continue;
      std::optional<ir::MatmulView> mm = ir::MatmulView::of(op);
      if (!mm) continue; // the verifier reports it
      int64_t batch = 1;
      Type r = op.resultType();
      for (unsigned d = 0; d + 2 < r.rank(); ++d) batch *= r.dim(d);
      bool successors = false;
      for (const ir::OpOperand &u : op.result()->uses())
        successors |= u.owner()->code() != OpCode::Return;
      CubeRule rule(ctx, device, *mm, batch, successors, log);
      std::optional<CubeCandidate> c = rule.decide();
      if (!c) {
        ctx.emitError(op.loc(), ir::DiagCategory::Tile)
            << "'" << op.name() << "' op has no cube_tile and no cube tile of its "
            << ir::dtypeName(mm->in) << " operands fits the buffers of '" << device.name
            << "' (L0A " << device.buffers.l0a << ", L0B " << device.buffers.l0b << ", L0C "
            << device.buffers.l0c << ", L1 " << device.buffers.l1
            << " bytes), not even one 16x16x16 block and its accumulator: use a "
               "device with bigger cube buffers";
        return std::nullopt;
      }
      Attribute attr = c->tile.toAttr(ctx);
      op.setAttr("cube_tile", attr);
      ++cubeTiles_;
      changed = true;
      std::string ruleText = rule.rule(*c);
      ctx.emitRemark(op.loc()) << "'" << op.name() << "' op has no cube_tile: " << kPassName
                               << " gives it " << attr.str() << " (" << ruleText << "; "
                               << rule.detail(*c) << ")";
      if (log)
        *log << kPassName << ": " << op.loc().str() << ": 'matmul' cube_tile " << attr.str()
             << ": " << ruleText << "; score " << int64_t(c->score) << " cycles\n";
      if (pctx.derivedTiles)
        pctx.derivedTiles->push_back({DerivedTile::Kind::Cube, f.name().str(), attr.str(), 1,
                                      absl::StrCat("'", op.name().str(), "' at ", op.loc().str()),
                                      ruleText, c->tiles});
    }
    return changed;
  }

  /// What a chain's derived ops compute, as a key: op, iteration shape, operand and
  /// result types, in order (not their data, offsets or locations).
  static std::string signature(llvm::ArrayRef<const VecOp *> ops) {
    std::string key;
    for (const VecOp *v : ops) {
      absl::StrAppend(&key, v->op->name().str(), "(", listText(v->view.iter), ")");
      for (unsigned i = 0; i < v->op->numOperands(); ++i)
        absl::StrAppend(&key, " ", v->op->operandType(i).str());
      for (const Value &r : v->op->results()) absl::StrAppend(&key, " -> ", r.type().str());
      if (std::optional<ir::ReduceView> reduce = ir::ReduceView::of(*v->op))
        absl::StrAppend(&key, " axes ", listText(reduce->axes), reduce->keepdim ? " keep" : "");
      absl::StrAppend(&key, ";");
    }
    return key;
  }

  /// Gives untiled `v` the first tile the user set on an op of its chain that fits it;
  /// false when none does (or the user set none).
  bool takeChainTile(const VecOp &v, llvm::ArrayRef<const VecOp *> user, ir::Context &ctx,
                     const target::DeviceSpec &device, llvm::raw_ostream *log) {
    for (const VecOp *u : user) {
      if (!ir::adaptVecTile(u->view.tile, v.view.iter)) continue;
      if (!v.view.check(u->view.tile, &device).empty()) {
        ir::WholeTileSplit split = v.view.splitWhole(u->view.tile, device);
        if (split.kind != ir::WholeTileSplit::Kind::Split) continue;
      }
      Attribute attr = u->op->attr("vec_tile");
      v.op->setAttr("vec_tile", attr);
      ++chainTiles_;
      ctx.emitRemark(v.op->loc()) << "'" << v.op->name() << "' op has no vec_tile: " << kPassName
                                  << " gives it " << attr.str() << ", the tile of '"
                                  << u->op->name() << "' at " << u->op->loc().str()
                                  << " in its chain (so the two fuse)";
      if (log)
        *log << kPassName << ": " << v.op->loc().str() << ": '" << v.op->name() << "' vec_tile "
             << attr.str() << " from its chain's '" << u->op->name() << "'\n";
      return true;
    }
    return false;
  }

  void record(const std::vector<std::vector<const VecOp *>> &copies, const VecDecision &d,
              const std::string &shape, ir::Func &f, ir::Context &ctx, PassContext &pctx,
              llvm::raw_ostream *log) {
    const VecCandidate &c = *d.chosen;
    ++vecTiles_;
    int64_t numOps = 0;
    for (const std::vector<const VecOp *> &ops : copies)
      for (const VecOp *v : ops) {
        v->op->setAttr("vec_tile", ctx.intArrayAttr(writtenTile(c.tile, v->view.iter.size())));
        ++numOps;
      }
    vecTileOps_ += uint64_t(numOps);
    llvm::ArrayRef<const VecOp *> ops = copies.front();
    std::string tile = absl::StrCat("[", listText(c.tile), "]");
    const Operation &first = *ops.front()->op;
    std::vector<std::string> others;
    for (const VecOp *v : ops.drop_front()) others.push_back(v->op->name().str());
    std::string more = copies.size() > 1
                           ? absl::StrCat(", and the ", copies.size() - 1, " other cop",
                                          copies.size() == 2 ? "y" : "ies",
                                          " of the chain (the same ops on other data)")
                           : "";
    ctx.emitRemark(first.loc())
        << "'" << first.name() << "' op has no vec_tile: " << kPassName << " gives it"
        << (others.empty() ? std::string()
                           : absl::StrCat(" and ", others.size(), " more op",
                                          others.size() == 1 ? "" : "s", " of its chain (",
                                          absl::StrJoin(others, ", "), ")"))
        << more << " " << tile << " over " << shape << " (" << d.rule << "; " << d.detail << ")";
    if (log)
      *log << kPassName << ": " << first.loc().str() << ": chain of " << ops.size()
           << " op(s) over " << shape << " (" << copies.size() << " cop"
           << (copies.size() == 1 ? "y" : "ies") << "): vec_tile " << tile << ": " << d.rule
           << "; " << d.detail << "\n";
    if (pctx.derivedTiles)
      pctx.derivedTiles->push_back({DerivedTile::Kind::Vec, f.name().str(), tile, numOps,
                                    absl::StrCat("'", first.name().str(), "' at ", first.loc().str()),
                                    d.rule, c.tiles});
  }

  PassStatistic vecTiles_{this, "derived-vec-tiles",
                          "Vector chains (with their copies) given a derived vec_tile"};
  PassStatistic vecTileOps_{this, "derived-vec-tile-ops", "Ops given a derived vec_tile"};
  PassStatistic chainTiles_{this, "chain-tiles",
                            "Untiled ops given the tile the user set on their chain"};
  PassStatistic cubeTiles_{this, "derived-cube-tiles", "Matmuls given a derived cube_tile"};
};

} // namespace

std::unique_ptr<Pass> createDefaultTilesPass() { return std::make_unique<DefaultTilesPass>(); }

void registerDefaultTilesPass(PassRegistry &registry) {
  registry.add({"default-tiles",
                "Give ops without a tile shape one derived from the op and the device "
                "(vector chains: 16-64 KiB, kept axes whole, shared along the chain; "
                "matmuls: cube tiles in whole waves); user tiles are kept",
                {},
                [](const PassOptionValues &) { return createDefaultTilesPass(); }});
}

} // namespace ptoc::passes
