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
// type: what a copy needs, rows without padding for any other op), dims outside it 1.
// A transpose iterates over its input, so it joins its producer's chain. Per candidate:
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

#include <map>
#include <set>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

#include "ptoc/ir/Context.h"
#include "ptoc/ir/Func.h"
#include "ptoc/ir/Level.h"
#include "ptoc/ir/LoopView.h"
#include "ptoc/ir/OpDef.h"
#include "ptoc/ir/OpViews.h"
#include "ptoc/ir/TileShape.h"
#include "ptoc/target/DeviceSpec.h"

#include "DefaultCubeTileRule.h"
#include "DefaultTileSupport.h"
#include "DefaultVecTileRule.h"

namespace ptoc::passes {
namespace {

using ir::Attribute;
using ir::OpCode;
using ir::Operation;
using ir::Type;
using ir::Value;
using default_tiles::CubeCandidate;
using default_tiles::CubeDecision;
using default_tiles::decideCubeTile;
using default_tiles::decideVecTile;
using default_tiles::Dims;
using default_tiles::kPassName;
using default_tiles::listText;
using default_tiles::VecCandidate;
using default_tiles::VecDecision;
using default_tiles::VecOp;
using default_tiles::vecOpOf;
using default_tiles::writtenTile;

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
    std::set<std::string> bodies = ir::loopBodyNames(m);
    for (ir::Func &f : m.funcs()) {
      if (ir::levelOf(f) != ir::Level::Tensor) continue; // control functions, tile level
      std::optional<bool> c = runOnFunc(f, bodies.count(f.name().str()) > 0, ctx);
      if (!c) return PassResult::failure();
      changed |= *c;
    }
    return PassResult::changed(changed);
  }

private:
  /// `loopBody`: a loop runs `f` (the merge passes also merge its tiles for the AICPU
  /// control thread).
  std::optional<bool> runOnFunc(ir::Func &f, bool loopBody, PassContext &pctx) {
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
      VecDecision d =
          decideVecTile(ctx, device, derive, shape, int64_t(copies.size()), loopBody, log);
      if (!d.chosen) {
        ctx.emitError(derive.front()->op->loc(), ir::DiagCategory::Tile)
            << "'" << derive.front()->op->name() << "' op has no vec_tile, and " << d.error;
        return std::nullopt;
      }
      record(copies, d, f, ctx, pctx, log);
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
      CubeDecision decision = decideCubeTile(ctx, device, *mm, batch, successors, loopBody, log);
      const std::optional<CubeCandidate> &c = decision.chosen;
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
      const std::string &ruleText = decision.rule;
      ctx.emitRemark(op.loc()) << "'" << op.name() << "' op has no cube_tile: " << kPassName
                               << " gives it " << attr.str() << " (" << ruleText << "; "
                               << decision.detail << ")";
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
              ir::Func &f, ir::Context &ctx, PassContext &pctx, llvm::raw_ostream *log) {
    const VecCandidate &c = *d.chosen;
    const std::string &shape = d.shape;
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
