// expand-tiles: lowers every tensor-level op to tile ops (docs/ir.md, "The tile
// level") using its vec_tile / cube_tile, and checks the tiles against the device.
//
// Tiles. An op's tile grid is row-major over its iteration shape (the result; the
// input for reductions; the source for assemble) with its vec_tile clamped to the
// shape; the last tile along a dim is smaller when the tile does not divide (a
// tail: its tile type has the real shape). Ops are expanded in body order, tiles
// row-major, so the output is deterministic.
//
// Values. Per tensor value the pass tracks the UB tiles holding its pieces (a
// regular grid: the producer's) and, once it has one, its GM home: a function
// argument, a `gm_tensor` created at the start of the body, or a tensor-typed
// `reshape` / `view` of another home (an alias). A home records the copy_out
// tokens written into it as groups of regular grids, so a copy_in finds the tokens
// overlapping its region by grid arithmetic, not by scanning every token.
//
// Reads. A vector consumer needing region R of V (in V's coordinates; dims where V
// is broadcast collapse to [0, 1), missing leading dims are dropped) uses V's UB
// tile with exactly that region when there is one (fusion, no GM round trip); else
// V is written to GM once (every tile copied out) and the consumer copy_ins R,
// waiting on the writes that overlap R. A UB tile is reused only when
//   - fuse-local is on (the option; off, every intermediate goes through GM),
//   - producer and consumer have the same sg_scope (a local edge forces one
//     subgraph, which must not join two scopes),
//   - one tile of the consumer needs it (a broadcast operand shared by several
//     output tiles is read once per tile: reusing it would chain all of them into
//     one subgraph and serialise the op), and
//   - joining the tile's cluster (the ops local tiles already tie to it) to the
//     consumer's other operands, or making it wait on the accesses a write must
//     follow, would not make a task wait on its own results through GM
//     (FusionClusters): such a read goes through GM instead (statistic
//     unfused-to-avoid-cycles).
// The same rules let later consumers share one copy_in of a GM region. `full`
// values never touch GM unless they must (returned, a matmul operand): a consumer
// gets a fresh `full` tile of the region it needs.
//
// Memory order. Every copy_in and copy_out takes as dependency operands the earlier
// accesses its region conflicts with (ir::MemoryOrder, docs/ir.md "Memory order"):
// a read the overlapping writes, a write the overlapping reads and writes. Writes
// of disjoint regions are independent.
//
// Ops.
//  - elementwise, cast: one tile op per output tile on the operands' regions.
//  - reductions: the input is tiled. No reduced axis split: one reduce per input
//    tile (keepdim as written). A split reduced axis: per output tile, a keepdim
//    reduce of every chunk (sum for mean), the partials combined pairwise (add /
//    max / min), for mean a `mean {count = N}` over the size-1 axes dividing by
//    N = all reduced elements, and a tile `reshape` for keepdim = false.
//  - matmul: operands in GM; per output tile (batch dims by 1, mL1 x nL1, tails) a
//    K loop in kL1 steps (with cube-k-stagger from the tile's staggered first step
//    around to the one before it, passes/StaggeredKOrder.h, a K tail last; else
//    from step 0):
//    copy_in the A and B regions to L1 (transposes respected), `matmul`
//    (accumulating from the second step) into an f32 (i32) L0C tile
//    carrying cube_tile, and one copy_out into the result's gm_tensor (FIXPIPE
//    converts the element type; the matmul's epilogue attributes, scale and relu,
//    move from the mmads to that copy_out, ir/Fixpipe.h). A bias [1, N] (third
//    operand): the output tile's columns of it are copied into L1 and are the
//    third operand of the first K step. Matmul results always live in GM.
//  - transpose: the input is cut by the vec_tile (PyPTO's rule); the output is tiled
//    by that tile permuted, each output tile the transpose of its input region.
//  - view, reshape: GM aliases of the source's home (of a `full`: another `full`).
//    A reshape that only adds or drops size-1 dims of a value held in UB tiles
//    keeps it there: one tile `reshape` per tile, no GM round trip.
//  - assemble (a slice write): only src's tiles move, written at the offsets into
//    the destination's memory. In place when the destination dies here (no op
//    after it reads it, directly or through an alias), it is a gm_tensor of this
//    pass that nothing else still reads as it was, and src does not read that
//    memory; a destination held in UB tiles is first written to GM except the
//    tiles the write covers. Otherwise (an argument, an alias, a value read later)
//    the result is a new gm_tensor whose other parts come from the destination
//    lazily: a part is copied (a fill) only when a read or the return needs it
//    before any write covered it, so a tensor written slice by slice is never
//    copied at all.
//  - concat: a new gm_tensor; each input's tiles are copied to their place.
//  - topk / topk_indices: the input tiled with the selected dim whole (the vec_tile's
//    entry for it widened); per tile a tile topk_indices (i32) and, for topk's values
//    when they are used, a tile gather of the input tile at those indices.
//  - gather: the result tiled like an elementwise op; each tile reads its index region
//    and the input's region with the gathered dim whole.
//  - expand_clone: as an elementwise op (each tile reads its broadcast region).
//  - scatter: the result (the input's shape) tiled with the scattered dim whole; each
//    tile reads the input tile and the index and source regions over the same
//    positions (the index's dim whole); a tile no index position reaches is the
//    input tile itself.
//  - return: values are written to GM; an argument is returned as is (a loop body's is
//    copied, as its results land in windows of other tensors: whole-row tiles of a
//    quarter of UB); an alias is
//    copied into a gm_tensor of its own (tiled with the alias op's vec_tile).
// Every tile op, copies included, takes the location and sg_scope of the tensor op
// it was made for (copy_outs that write V: V's producer; the fresh `full` tile a
// consumer reads: the consumer's scope). Tile ops carry no vec_tile; tile matmuls
// carry cube_tile. Dead tensor ops are not expanded; the tensor ops are erased.
//
// Checks (errors at the op, the pass fails). An op that needs a tile shape and has
// none. UB: each step of a vector op holds one tile per operand and one for the
// result, each counted at the clamped tile size and the largest element size
// (ir::checkVecTile, the verifier's rule; a vec_tile shorter than the op's rank
// applies to its trailing dims, ir::adaptVecTile); a step of a split reduction
// holds the chunk, its partial and the running combine (3 tiles); a copy through UB (assemble, concat, a fill, returning an alias)
// holds 1 (ir::vecTileBuffers). A vec_tile covering the op's whole iteration shape
// that does not fit is split instead (ir::splitWholeVecTile: leading dims halved
// first, reduced axes never cut; a remark at the op, statistic whole-tile-splits);
// only when a slice with the reduced axes whole cannot fit is it an error.
// Tiles are single-buffered here: multi-buffering is
// NBufferMerge's decision, under its own budget. Cube: ir::checkCubeTile (one tile
// each in L0A, L0B, L0C and L1; double buffering is codegen's), and the K loop keeps
// the whole mL1 x nL1 accumulator (clamped to M x N) in L0C. Alignment: the vec_tile's
// last dim of a copy through UB (assemble, concat, a fill; ir::vecTileNeedsAlignedRows);
// any other op's UB rows are padded to whole blocks. A transpose step holds its input
// tile, the permuted output tile and, when the last dim moves, PyPTO's scratch
// (ir::transposeStepBytes).
//
// `--debug-only=expand-tiles` prints one line per tensor op: its tile, grid, tile
// count and tails.
#include "ptoc/passes/Passes.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <deque>
#include <memory>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallVector.h"

#include "ptoc/ir/Context.h"
#include "ptoc/ir/Func.h"
#include "ptoc/ir/Level.h"
#include "ptoc/ir/LoopView.h"
#include "ptoc/ir/MemoryOrder.h"
#include "ptoc/ir/OpViews.h"
#include "ptoc/ir/Region.h"
#include "ptoc/ir/TileShape.h"
#include "ptoc/passes/StaggeredKOrder.h"
#include "ptoc/support/HostMemory.h"
#include "ptoc/target/DeviceSpec.h"

#include "FusionClusters.h"

namespace ptoc::passes {
namespace {

using ir::Attribute;
using ir::Box;
using ir::Dims;
using ir::DType;
using ir::Location;
using ir::MemSpace;
using ir::OpCode;
using ir::Operation;
using ir::Type;
using ir::Value;

// ---------------------------------------------------------------- grids

/// Row-major tiles of `shape` with `tile` (clamped to the shape).
struct Grid {
  Dims shape, tile, counts;
  int64_t numTiles = 1;

  Grid() = default;
  Grid(llvm::ArrayRef<int64_t> shapeIn, llvm::ArrayRef<int64_t> vecTile)
      : shape(shapeIn.begin(), shapeIn.end()) {
    for (size_t d = 0; d < shape.size(); ++d) {
      int64_t t = std::max<int64_t>(1, std::min(vecTile[d], shape[d]));
      tile.push_back(t);
      counts.push_back(shape[d] / t + (shape[d] % t != 0));
      // Saturating: a budget check refuses such a grid before anything is made.
      numTiles = counts.back() > 0 && numTiles > INT64_MAX / counts.back()
                     ? INT64_MAX
                     : numTiles * counts.back();
    }
  }
  unsigned rank() const { return static_cast<unsigned>(shape.size()); }

  /// The region of tile `index`.
  void box(int64_t index, Box &b) const {
    b.off.resize(rank());
    b.size.resize(rank());
    for (int d = int(rank()) - 1; d >= 0; --d) {
      int64_t c = index % counts[d];
      index /= counts[d];
      b.off[d] = c * tile[d];
      b.size[d] = std::min(tile[d], shape[d] - b.off[d]);
    }
  }
  Box box(int64_t index) const {
    Box b;
    box(index, b);
    return b;
  }

  /// The index of the tile whose region is exactly `b`, or -1.
  int64_t exactIndex(const Box &b) const {
    if (b.off.size() != rank()) return -1;
    int64_t index = 0;
    for (unsigned d = 0; d < rank(); ++d) {
      if (b.off[d] % tile[d] != 0) return -1;
      if (b.size[d] != std::min(tile[d], shape[d] - b.off[d])) return -1;
      index = index * counts[d] + b.off[d] / tile[d];
    }
    return index;
  }

  /// "dim0 4, dim1 6" for the tails, or "none".
  std::string tails() const {
    std::vector<std::string> parts;
    for (unsigned d = 0; d < rank(); ++d)
      if (shape[d] % tile[d] != 0)
        parts.push_back(absl::StrCat("dim", d, " ", shape[d] % tile[d]));
    return parts.empty() ? "none" : absl::StrJoin(parts, ", ");
  }
};

std::string shapeText(llvm::ArrayRef<int64_t> dims) {
  return dims.empty() ? std::string("scalar") : absl::StrJoin(dims, "x");
}

/// Whether two shapes differ only in size-1 dims.
bool sameUpToUnitDims(llvm::ArrayRef<int64_t> a, llvm::ArrayRef<int64_t> b) {
  Dims x, y;
  for (int64_t d : a)
    if (d != 1) x.push_back(d);
  for (int64_t d : b)
    if (d != 1) y.push_back(d);
  return x == y;
}

struct ValueInfo;

// ---------------------------------------------------------------- GM homes

/// Where a tensor value lives in GM: a root (a function argument or a `gm_tensor`
/// created at the start of the body) or a `view` / `reshape` alias of another home.
/// The copies into a root and their order are kept by the pass's ir::MemoryOrder.
struct Home {
  enum class Kind : uint8_t { Root, View, Reshape };
  Value *value = nullptr;
  Kind kind = Kind::Root;
  Home *base = nullptr; ///< aliases: the home they alias
  // Roots only:
  bool writable = false; ///< a gm_tensor of this pass (arguments are read-only)
  bool frozen = false;   ///< some value still reads it as it is: no write in place
  /// Where its parts that no write has covered yet come from (a slice write's
  /// destination that could not be updated in place), or null.
  ValueInfo *background = nullptr;
  const Operation *fillOp = nullptr; ///< whose vec_tile tiles a fill
  int64_t uncovered = 0; ///< elements no write has covered yet (while it has a background)
};

Home &rootOf(Home &h) {
  Home *r = &h;
  while (r->kind != Home::Kind::Root) r = r->base;
  return *r;
}

// ---------------------------------------------------------------- values

/// A region of one value as a flat key (offsets then sizes), for copy_in sharing.
/// Regions of rank > kMaxSharedRank are not shared (rare; they are still correct).
constexpr unsigned kMaxSharedRank = 4;
struct RegionKey {
  std::array<int64_t, 2 * kMaxSharedRank> coords{};
  uint32_t size = 0;
  friend bool operator==(const RegionKey &a, const RegionKey &b) {
    return a.size == b.size &&
           std::equal(a.coords.begin(), a.coords.begin() + a.size, b.coords.begin());
  }
  /// A 64-bit hash that is never one of DenseMap<uint64_t>'s two sentinel keys.
  uint64_t hash() const {
    uint64_t h = size;
    for (uint32_t i = 0; i < size; ++i) {
      h = (h ^ uint64_t(coords[i])) * 0x9e3779b97f4a7c15ull;
      h ^= h >> 29;
    }
    return h >= ~uint64_t(1) ? h - 2 : h;
  }
};

std::optional<RegionKey> keyOf(const Box &b) {
  if (b.off.size() > kMaxSharedRank) return std::nullopt;
  RegionKey k;
  k.size = static_cast<uint32_t>(2 * b.off.size());
  std::copy(b.off.begin(), b.off.end(), k.coords.begin());
  std::copy(b.size.begin(), b.size.end(), k.coords.begin() + b.off.size());
  return k;
}

/// Copy_ins of one value's regions that later reads may share: a compact hash
/// index (hash -> first entry) over append-only entries chained on collisions.
class SharedReads {
public:
  bool empty() const { return entries_.empty(); }
  void clear() {
    index_ = llvm::DenseMap<uint64_t, uint32_t>();
    entries_ = {};
  }
  /// The tile read for `key` under `scope`, or null.
  Value *find(const RegionKey &key, Attribute scope) const {
    auto it = index_.find(key.hash());
    if (it == index_.end()) return nullptr;
    for (uint32_t i = it->second; i != kNone; i = entries_[i].next)
      if (entries_[i].key == key && entries_[i].scope == scope) return entries_[i].tile;
    return nullptr;
  }
  void insert(const RegionKey &key, Attribute scope, Value *tile) {
    auto [it, inserted] = index_.try_emplace(key.hash(), uint32_t(entries_.size()));
    entries_.push_back({key, tile, scope, inserted ? kNone : it->second});
    it->second = uint32_t(entries_.size() - 1);
  }

private:
  static constexpr uint32_t kNone = ~0u;
  struct Entry {
    RegionKey key;
    Value *tile;
    Attribute scope;
    uint32_t next;
  };
  llvm::DenseMap<uint64_t, uint32_t> index_;
  std::vector<Entry> entries_;
};

/// What the pass knows about one tensor value.
struct ValueInfo {
  enum class Kind : uint8_t {
    Arg,   ///< a function argument (in GM, read-only)
    Tiles, ///< pieces in UB tiles on a regular grid (written to GM on demand)
    Full,  ///< a constant: any region is a fresh `full` tile
    Gm,    ///< lives in GM only (matmul, assemble, concat results, aliases)
  };
  Kind kind = Kind::Gm;
  Type type;
  Value *value = nullptr;        ///< the tensor value it describes
  Operation *producer = nullptr; ///< the tensor op (null for arguments)
  Operation *tilingOp = nullptr; ///< whose vec_tile cuts it when written in tiles
  Attribute scope;               ///< the producer's sg_scope (null: none)
  Grid grid;                     ///< Tiles
  std::vector<Value *> tiles;    ///< Tiles: by grid index
  Attribute fullValue;           ///< Full
  Home *home = nullptr;
  Value *returnCopy = nullptr; ///< aliases: the gm_tensor a return copied it to
  /// Copy_ins of this value's regions that later consumers may share.
  SharedReads shared;
  unsigned remainingUses = 0;
};

/// The tensor op a tile op is made for: its location and scope.
struct Step {
  Location loc;
  Attribute scope;
};


struct Statistics {
  PassStatistic &tileOps, &copyInBytes, &copyOutBytes, &fused, &sliceWrites, &fillBytes,
      &unfused, &wholeTileSplits, &staggeredTiles;
};

// ---------------------------------------------------------------- the expansion

/// The tile ops the host's memory holds, for one run of the pass over a module: its
/// free memory (support::memoryHeadroom, measured before anything is expanded) over
/// CompileBudget::kBytesPerTileOp, the peak a tile op costs through the rest of the
/// compile and a simulation. Shared by the module's functions: their tile ops live
/// together until the compile ends.
struct HostBudget {
  support::MemoryHeadroom headroom;
  int64_t tileOps = INT64_MAX; ///< what the headroom holds
  int64_t emitted = 0;         ///< tile ops of the module so far

  static HostBudget measure() {
    HostBudget b;
    b.headroom = support::memoryHeadroom();
    b.tileOps = b.headroom.bytes / CompileBudget::kBytesPerTileOp;
    return b;
  }
};

class Expander {
public:
  /// `loopBody`: a loop runs `f` (its results are written into the loop's windows), so
  /// an argument it returns is copied into a tensor of its own like an alias.
  Expander(ir::Func &f, const ExpandTilesOptions &options, const PassContext &pass,
           Statistics stats, bool loopBody, HostBudget &host)
      : f_(f), ctx_(f.context()), options_(options), device_(pass.device), loopBody_(loopBody),
        log_(pass.debugStream("expand-tiles")), budget_(pass.budget), stats_(stats),
        host_(host) {
    offsetsId_ = ctx_.id("offsets");
    scopeId_ = ctx_.id("sg_scope");
    valueId_ = ctx_.id("value");
    axesId_ = ctx_.id("axes");
    keepdimId_ = ctx_.id("keepdim");
  }

  enum class Outcome { Unchanged, Changed, Failed };

  Outcome run() {
    for (const Operation &op : f_.ops())
      if (op.isTileOp() || op.code() == OpCode::GmTensor || op.code() == OpCode::Subgraph)
        return Outcome::Unchanged;
    ret_ = f_.returnOp();
    if (!ret_) return Outcome::Unchanged;
    bool returnsArg = false;
    for (Value *v : ret_->operands()) returnsArg |= v->isArgument();
    if (f_.numOps() == 1 && !(loopBody_ && returnsArg)) return Outcome::Unchanged;
    anchor_ = &f_.ops().front();

    // Liveness: ops whose results reach the return (users follow their definers).
    live_.insert(ret_);
    std::vector<Operation *> original;
    for (auto it = f_.ops().rbegin(); it != f_.ops().rend(); ++it) {
      Operation &op = *it;
      original.push_back(&op);
      for (const Value &r : op.results())
        for (const ir::OpOperand &u : r.uses())
          if (live_.contains(u.owner())) live_.insert(&op);
    }
    for (size_t i = 0; i < original.size(); ++i)
      position_[original[i]] = uint32_t(original.size() - 1 - i);
    for (Operation *op : original) // uses by live ops, for freeing tiles early
      if (live_.contains(op))
        for (Value *v : op->operands()) ++info(v).remainingUses;

    for (auto it = original.rbegin(); it != original.rend(); ++it) {
      Operation *op = *it;
      if (op == ret_ || !live_.contains(op)) continue;
      int64_t before = emitted_;
      if (!expand(*op) || !createdWithinBudget(*op, emitted_ - before)) return Outcome::Failed;
      for (Value *v : op->operands()) release(info(v));
    }
    int64_t beforeReturn = emitted_;
    for (unsigned i = 0; i < ret_->numOperands(); ++i) {
      Value *v = returnValue(info(ret_->operand(i)));
      if (!v || !createdWithinBudget(*ret_, emitted_ - beforeReturn)) return Outcome::Failed;
      ret_->setOperand(i, v);
    }
    for (Operation *op : original) { // reverse body order: users first
      if (op == ret_) continue;
      op->dropOperandUses();
      f_.erase(op);
    }
    return Outcome::Changed;
  }

private:
  // ---------------------------------------------------------------- bookkeeping

  ValueInfo &info(Value *v) {
    auto [it, inserted] = infos_.try_emplace(v, nullptr);
    if (inserted) {
      it->second = &infoStorage_.emplace_back();
      it->second->type = v->type();
      it->second->value = v;
      if (v->isArgument()) {
        it->second->kind = ValueInfo::Kind::Arg;
        it->second->home = newHome(v);
      }
    }
    return *it->second;
  }

  // After a consumer is expanded: a value nobody else reads drops its UB tiles.
  void release(ValueInfo &v) {
    if (v.remainingUses == 0 || --v.remainingUses != 0) return;
    v.tiles = {};
    v.shared.clear();
  }

  Home *newHome(Value *value) {
    Home &h = homes_.emplace_back();
    h.value = value;
    return &h;
  }

  /// A new gm_tensor this pass writes, as a root home.
  Home *newRoot(Type type, const Value *nameFrom, Location loc) {
    Home *h = newHome(newGmTensor(type, nameFrom, loc));
    h->writable = true;
    return h;
  }

  static Attribute scopeOf(const Operation &op) { return op.attr("sg_scope"); }
  static Step stepOf(const Operation &op) { return {op.loc(), scopeOf(op)}; }

  /// Whether a live op after `op` in the body reads `v`, directly or through an
  /// alias (view / reshape) of it.
  bool usedLater(const Value *v, const Operation &op) const {
    uint32_t at = position_.lookup(&op);
    for (const ir::OpOperand &u : v->uses()) {
      const Operation *user = u.owner();
      if (user == &op || !live_.contains(user)) continue;
      if (position_.lookup(user) > at) return true;
      bool alias = (user->code() == OpCode::View || user->code() == OpCode::Reshape) &&
                   user->numResults() == 1;
      if (alias && usedLater(user->result(), op)) return true;
    }
    return false;
  }

  /// Whether reading `v` may read root `target`: v lives there, or in a root whose
  /// unwritten parts come (lazily) from it.
  static bool readsRoot(const ValueInfo &v, const Home *target) {
    if (v.kind == ValueInfo::Kind::Tiles || v.kind == ValueInfo::Kind::Full || !v.home)
      return false;
    for (const Home *r = &rootOf(*v.home); r;) {
      if (r == target) return true;
      const ValueInfo *bg = r->background;
      r = bg && bg->home ? &rootOf(*bg->home) : nullptr;
    }
    return false;
  }

  // ---------------------------------------------------------------- emitting

  Attribute scopeDict(const Step &s) {
    if (!s.scope) return ctx_.emptyDict();
    ir::NamedAttr a[] = {{scopeId_, s.scope}};
    return ctx_.dictAttr(a, true);
  }

  Attribute offsetsDict(llvm::ArrayRef<int64_t> offsets, const Step &s) {
    llvm::SmallVector<ir::NamedAttr, 2> a{{offsetsId_, ctx_.intArrayAttr(offsets)}};
    if (s.scope) a.push_back({scopeId_, s.scope});
    return ctx_.dictAttr(a, true);
  }

  /// The op's attributes without vec_tile (tile ops carry none).
  Attribute withoutVecTile(const Operation &op) {
    llvm::SmallVector<ir::NamedAttr, 4> a;
    for (const ir::NamedAttr &n : op.attrs())
      if (n.name.str() != "vec_tile") a.push_back(n);
    return ctx_.dictAttr(a, true);
  }

  Value *emit(OpCode code, llvm::ArrayRef<Value *> operands, Type type, Attribute attrs,
              Location loc) {
    Operation *n = f_.createOp(ctx_.opDef(code), operands, {type}, attrs, loc, ret_);
    clusters_.add(*n);
    ++stats_.tileOps;
    ++emitted_;
    ++host_.emitted;
    return n->result();
  }

  Value *newGmTensor(Type type, const Value *nameFrom, Location loc) {
    Operation *n = f_.createOp(ctx_.opDef(OpCode::GmTensor), {}, {type}, ctx_.emptyDict(), loc,
                               anchor_);
    if (nameFrom) n->result()->setNameHint(nameFrom->nameHint());
    return n->result();
  }

  /// Reads region `b` of `home` into a local tile, after the writes it overlaps.
  /// Null after an error.
  Value *copyIn(Home &home, const Box &b, MemSpace space, const Step &s) {
    Home &root = rootOf(home);
    ir::GmRegion region = ir::resolveGmRegion(home.value, b);
    if (!region.root) {
      ctx_.emitError(s.loc, ir::DiagCategory::Internal)
          << "internal error in expand-tiles: a read of a value that has "
                               "no GM home (a bug in ptoc)";
      return nullptr;
    }
    if (root.background && !fill(root, region.box)) return nullptr;
    llvm::SmallVector<const Operation *, 8> deps;
    order_.conflicts(region, /*write=*/false, deps);
    llvm::SmallVector<Value *, 8> operands{home.value};
    for (const Operation *d : deps) operands.push_back(const_cast<Operation *>(d)->result());
    Type t = ctx_.tileType(home.value->type().dtype(), b.size, space);
    stats_.copyInBytes += t.sizeInBytes();
    Value *tile = emit(OpCode::CopyIn, operands, t, offsetsDict(b.off, s), s.loc);
    // Only memory that may still be written in place needs its reads remembered.
    if (root.writable && !root.frozen) order_.record(tile->definingOp(), region, false);
    return tile;
  }

  static ir::GmRegion regionOf(const Home &root, const Box &at) {
    return {root.value, at, ir::linearRange(at, root.value->type().shape())};
  }

  /// Writes `tile` at `at` into root `root`, after the accesses it overlaps.
  /// `epilogue`: a matmul's FIXPIPE attributes (scale, relu) for a copy_out from L0C.
  Value *copyOut(Value *tile, Home &root, const Box &at, const Step &s,
                 llvm::ArrayRef<ir::NamedAttr> epilogue = {}) {
    ir::GmRegion region = regionOf(root, at);
    llvm::SmallVector<const Operation *, 8> deps;
    order_.conflicts(region, /*write=*/true, deps);
    return emitCopyOut(tile, root, region, deps, s, epilogue);
  }

  Value *emitCopyOut(Value *tile, Home &root, const ir::GmRegion &region,
                     llvm::ArrayRef<const Operation *> deps, const Step &s,
                     llvm::ArrayRef<ir::NamedAttr> epilogue = {}) {
    llvm::SmallVector<Value *, 8> operands{tile, root.value};
    for (const Operation *d : deps) operands.push_back(const_cast<Operation *>(d)->result());
    Type t = ctx_.tileType(root.value->type().dtype(), tile->type().shape(), MemSpace::GM);
    stats_.copyOutBytes += t.sizeInBytes();
    Attribute attrs = offsetsDict(region.box.off, s);
    if (!epilogue.empty()) {
      llvm::SmallVector<ir::NamedAttr, 4> a(attrs.getDict().begin(), attrs.getDict().end());
      a.append(epilogue.begin(), epilogue.end());
      attrs = ctx_.dictAttr(a, true);
    }
    Value *token = emit(OpCode::CopyOut, operands, t, attrs, s.loc);
    order_.record(token->definingOp(), region, /*write=*/true);
    return token;
  }

  /// Copies region `from` of `src` to `at` in root `root` (which `src` does not
  /// read): through UB, from the tile that holds it when fusion allows. False after
  /// an error.
  bool copyPiece(ValueInfo &src, const Box &from, Home &root, const Box &at, const Step &s) {
    Value *t = fetch(src, from, s, true);
    if (!t) return false;
    ir::GmRegion region = regionOf(root, at);
    llvm::SmallVector<const Operation *, 8> deps;
    order_.conflicts(region, /*write=*/true, deps);
    if (!deps.empty() && clusters_.waitWouldCycle(t, deps)) {
      // The tile's task would wait on an access that waits on it: read through GM.
      ++stats_.unfused;
      t = fetch(src, from, s, false);
      if (!t) return false;
    }
    emitCopyOut(t, root, region, deps, s);
    return true;
  }

  Value *fullTile(Attribute value, DType dtype, llvm::ArrayRef<int64_t> shape, Location loc,
                  const Step &s) {
    llvm::SmallVector<ir::NamedAttr, 2> a;
    if (s.scope) a.push_back({scopeId_, s.scope});
    a.push_back({valueId_, value});
    return emit(OpCode::Full, {}, ctx_.tileType(dtype, shape, MemSpace::UB),
                ctx_.dictAttr(a, true), loc);
  }

  // ---------------------------------------------------------------- diagnostics

  /// Whether `op`, about to cut its result into `tiles` tiles (at least one tile op
  /// each), keeps the function within the compile budget; else an error naming the
  /// op, the count and the fix. Checked before each op; createdWithinBudget after.
  bool withinBudget(const Operation &op, int64_t tiles) {
    return checkBudget(op, tiles,
                       absl::StrCat("cuts its ", shapeText(op.resultType().shape()),
                                    " result into ", tiles, " tiles, taking the function"));
  }

  /// Whether the function, `op` having created `created` tile ops (a return: the
  /// copies of the returned values), is still within the compile budget; else an
  /// error naming the op, the counts and the fix.
  bool createdWithinBudget(const Operation &op, int64_t created) {
    return checkBudget(op, 0,
                       absl::StrCat(&op == ret_ ? "writes the returned values with " : "creates ",
                                    created, " tile ops, taking the function to ", emitted_,
                                    " tile ops,"));
  }

  /// The budget check of withinBudget / createdWithinBudget: `tiles` more than the
  /// function's tile ops so far against max_tile_ops, then `tiles` more than the
  /// module's against what the host's free memory holds. `what` says what the op
  /// does.
  bool checkBudget(const Operation &op, int64_t tiles, const std::string &what) {
    int64_t limit = budget_.maxTileOps;
    if (limit > 0 && tiles > limit - emitted_)
      return opError(
          op, absl::StrCat(what, " past the ", limit,
                           " tile ops a compile may create (host option max_tile_ops; about ",
                           CompileBudget::kBytesPerTileOp, " bytes of host memory each, ",
                           support::bytesText(double(limit) * CompileBudget::kBytesPerTileOp),
                           " in all): use bigger tiles (set_vec_tile_shapes / "
                           "set_cube_tile_shapes), or raise max_tile_ops if the host has the "
                           "memory"));
    if (tiles <= host_.tileOps - host_.emitted) return true;
    return opError(
        op,
        absl::StrCat(what, " past the ", host_.tileOps,
                     " tile ops the host's memory holds (about ", CompileBudget::kBytesPerTileOp,
                     " bytes each; this compile could allocate ",
                     support::bytesText(double(host_.headroom.bytes)), " more, limited by ",
                     host_.headroom.limit,
                     "): raise the memory limit, or use bigger tiles (set_vec_tile_shapes / "
                     "set_cube_tile_shapes)"),
        ir::DiagCategory::Resource);
  }

  /// An error at `op`: about its tiles unless said (every user error of this pass
  /// is a tile shape that does not fit; Internal marks a bug).
  bool opError(const Operation &op, const std::string &msg,
               ir::DiagCategory category = ir::DiagCategory::Tile) {
    ctx_.emitError(op.loc(), category) << "'" << op.name() << "' op " << msg;
    return false;
  }

  /// The op's vec_tile for iteration shape `iter` (a shorter one adapted,
  /// ir::adaptVecTile), or an error saying how to set one (`why` says what for).
  std::optional<Dims> vecTile(const Operation &op, llvm::ArrayRef<int64_t> iter,
                              const char *why = "") {
    Attribute vt = op.attr("vec_tile");
    if (!vt || !vt.isIntArray()) {
      opError(op, absl::StrCat("has no vec_tile", why,
                               "; call set_vec_tile_shapes(...) before it or write vec_tile = "
                               "[...]"));
      return std::nullopt;
    }
    std::optional<Dims> tile = ir::adaptVecTile(vt.getIntArray(), iter);
    if (!tile) {
      opError(op, ir::checkVecTile(vt.getIntArray(), iter, 1, 1, 1, nullptr));
      return std::nullopt;
    }
    return tile;
  }

  /// A vec_tile covering the op's whole iteration shape that does not fit UB, split
  /// by ir::splitWholeVecTile (reduced axes kept whole) with a remark at the op;
  /// any other tile is returned as it is (checkVec reports it if it does not fit).
  /// Nullopt after an error (a kept reduced axis alone does not fit).
  std::optional<Dims> fitWholeTile(const Operation &op, const Dims &tile) {
    ir::WholeTileSplit split = ir::VecTileView::of(op).splitWhole(tile, device_);
    if (split.kind == ir::WholeTileSplit::Kind::Impossible) {
      opError(op, split.message);
      return std::nullopt;
    }
    if (split.kind != ir::WholeTileSplit::Kind::Split) return tile;
    ++stats_.wholeTileSplits;
    Grid g(ir::VecTileView::of(op).iter, split.tile);
    ctx_.emitRemark(op.loc())
        << "'" << op.name() << "' op vec_tile " << shapeText(tile)
        << " covers the whole shape but needs " << split.wholeBytes
        << " bytes of UB (the device has " << device_.buffers.ub << "); split into "
        << g.numTiles << " tiles of " << shapeText(split.tile) << " (" << split.bytes
        << " bytes), reduced dimensions kept whole";
    return split.tile;
  }

  /// UB check of a vector op's tile: `buffers` tiles at the largest element size.
  bool checkVec(const Operation &op, llvm::ArrayRef<int64_t> tile, llvm::ArrayRef<int64_t> iter,
                unsigned buffers, const std::string &why = "") {
    std::string err = ir::VecTileView::of(op).check(tile, iter, buffers, &device_);
    if (err.empty()) return true;
    return opError(op, why + err);
  }

  void logOp(const Operation &op, const std::string &text) {
    if (log_) *log_ << "expand-tiles: " << op.loc().str() << ": '" << op.name() << "' " << text
                    << "\n";
  }
  void logGrid(const Operation &op, const Grid &g, const std::string &extra = "") {
    if (!log_) return;
    logOp(op, absl::StrCat("tile ", shapeText(g.tile), " over ", shapeText(g.shape), ", grid ",
                           shapeText(g.counts), " (", g.numTiles, " tiles), tails: ", g.tails(),
                           extra));
  }

  // ---------------------------------------------------------------- reading values

  /// Makes sure `v` is in GM and returns its home (null after an error). Tiles of
  /// a value held in UB that lie wholly inside `except` are not written (a slice
  /// write is about to cover them).
  Home *materialise(ValueInfo &v, const Box *except = nullptr) {
    if (v.home) return v.home;
    switch (v.kind) {
    case ValueInfo::Kind::Tiles: {
      if (v.tiles.size() != size_t(v.grid.numTiles)) {
        opError(*v.producer,
                "lost its tiles before they were written to GM (internal error: a bug in "
                "expand-tiles)",
                ir::DiagCategory::Internal);
        return nullptr;
      }
      Step s{v.producer->loc(), v.scope};
      Home *h = newRoot(v.type, v.value, v.producer->loc());
      Box b;
      for (int64_t i = 0; i < v.grid.numTiles; ++i) {
        v.grid.box(i, b);
        if (except && ir::contains(*except, b)) continue;
        copyOut(v.tiles[i], *h, b, s);
      }
      v.home = h;
      return h;
    }
    case ValueInfo::Kind::Full: {
      const Operation &op = *v.tilingOp;
      auto vt = vecTile(op, v.type.shape(), " and its value must be written to GM in tiles");
      if (!vt || !checkVec(op, *vt, v.type.shape(), 1)) return nullptr;
      Step s = stepOf(op);
      Home *h = newRoot(v.type, op.result(), op.loc());
      Grid g(v.type.shape(), *vt);
      Box b;
      for (int64_t i = 0; i < g.numTiles; ++i) {
        g.box(i, b);
        Value *t = fullTile(v.fullValue, v.type.dtype(), b.size, v.producer->loc(), s);
        copyOut(t, *h, b, s);
      }
      v.home = h;
      return h;
    }
    case ValueInfo::Kind::Arg:
    case ValueInfo::Kind::Gm: break;
    }
    return v.home;
  }

  /// The tile already in UB that may serve region `b` of `v` for step `s` (one of
  /// v's tiles, or a copy_in of that region an earlier consumer made), or null.
  Value *tileInUb(ValueInfo &v, const Box &b, const Step &s) {
    if (!options_.fuseLocal) return nullptr;
    if (v.kind == ValueInfo::Kind::Tiles && v.scope == s.scope && !v.tiles.empty())
      if (int64_t index = v.grid.exactIndex(b); index >= 0) return v.tiles[index];
    if (!v.shared.empty())
      if (std::optional<RegionKey> key = keyOf(b)) return v.shared.find(*key, s.scope);
    return nullptr;
  }

  /// A UB tile holding region `b` of `v` for step `s`; `reusable`: only this tile
  /// of the consumer needs the region, so a tile already in UB may serve it (see
  /// the header). Null after an error.
  Value *fetch(ValueInfo &v, const Box &b, const Step &s, bool reusable) {
    if (v.kind == ValueInfo::Kind::Full)
      return fullTile(v.fullValue, v.type.dtype(), b.size, v.producer->loc(), s);
    if (reusable)
      if (Value *t = tileInUb(v, b, s)) {
        ++stats_.fused;
        return t;
      }
    std::optional<RegionKey> key =
        options_.fuseLocal && reusable ? keyOf(b) : std::nullopt;
    Home *home = materialise(v);
    if (!home) return nullptr;
    Value *t = copyIn(*home, b, MemSpace::UB, s);
    // Worth remembering only if another read may follow (this op's other operand
    // counts: `add %x, %x`).
    if (t && key && v.remainingUses > 1) v.shared.insert(*key, s.scope, t);
    return t;
  }

  /// Region of operand `shape` that output region `out` reads (numpy broadcasting).
  static void broadcastRegion(const Box &out, llvm::ArrayRef<int64_t> shape, Box &in) {
    size_t lead = out.off.size() - shape.size();
    in.off.resize(shape.size());
    in.size.resize(shape.size());
    for (size_t i = 0; i < shape.size(); ++i) {
      bool bcast = shape[i] == 1;
      in.off[i] = bcast ? 0 : out.off[lead + i];
      in.size[i] = bcast ? 1 : out.size[lead + i];
    }
  }

  /// How many tiles of output grid `g` read the same region of operand `shape`.
  static int64_t fanOut(const Grid &g, llvm::ArrayRef<int64_t> shape) {
    size_t lead = g.rank() - shape.size();
    int64_t n = 1;
    for (unsigned d = 0; d < g.rank(); ++d)
      if (d < lead || shape[d - lead] == 1) n *= g.counts[d];
    return n;
  }

  /// Records `op`'s result as pieces in UB tiles on grid `g`.
  ValueInfo &defineTiles(Operation &op, const Grid &g, unsigned result = 0) {
    ValueInfo &out = info(op.result(result));
    out.kind = ValueInfo::Kind::Tiles;
    out.producer = &op;
    out.tilingOp = &op;
    out.scope = scopeOf(op);
    out.grid = g;
    out.tiles.assign(g.numTiles, nullptr);
    return out;
  }

  ValueInfo &defineGm(Operation &op, Home *home) {
    ValueInfo &out = info(op.result());
    out.kind = ValueInfo::Kind::Gm;
    out.producer = &op;
    out.tilingOp = &op;
    out.scope = scopeOf(op);
    out.home = home;
    return out;
  }

  // ---------------------------------------------------------------- backgrounds

  /// The parts of `region` of root `h` that no write has covered yet.
  llvm::SmallVector<Box, 4> unwritten(const Home &h, const Box &region) {
    llvm::SmallVector<Box, 4> parts;
    order_.unwritten(regionOf(h, region), parts);
    return parts;
  }

  /// Elements of `region` of root `h` a write there would cover for the first time
  /// (0 once it has no background: nothing is counted any more).
  int64_t newlyCovered(const Home &h, const Box &region) {
    if (!h.background) return 0;
    int64_t n = 0;
    for (const Box &p : unwritten(h, region)) n += p.volume();
    return n;
  }

  /// Counts `n` more elements of root `h` written; its background goes once every
  /// element is.
  static void covered(Home &h, int64_t n) {
    if (!h.background) return;
    h.uncovered -= n;
    if (h.uncovered <= 0) h.background = nullptr;
  }

  /// Fills the parts of `region` of root `h` that no write has covered yet from its
  /// background. False after an error.
  bool fill(Home &h, const Box &region) {
    if (!h.background) return true;
    for (const Box &p : unwritten(h, region))
      if (!fillPart(h, p)) return false;
    return true;
  }

  /// Copies part `p` of root `h` from its background, in tiles of the fill op's
  /// vec_tile (leading dims 1 when it is shorter) made to fit UB.
  bool fillPart(Home &h, const Box &p) {
    const Operation &op = *h.fillOp;
    llvm::ArrayRef<int64_t> written = op.attr("vec_tile").getIntArray();
    Dims tile(p.rank() - std::min<size_t>(p.rank(), written.size()), 1);
    tile.append(written.begin(), written.end());
    unsigned esize = ir::elementSize(h.value->type().dtype());
    // A fill is a copy through UB: halve the first leading size above 1 (then the
    // last, keeping it aligned) until one tile fits.
    int64_t block = device_.buffers.blockBytes;
    int64_t granule = block / std::gcd<int64_t>(block, esize);
    unsigned r = p.rank();
    for (int guard = 0; guard < 256; ++guard) {
      if (ir::checkVecTile(tile, p.size, esize, esize, 1, &device_).empty()) break;
      bool halved = false;
      for (unsigned d = 0; d + 1 < r && !halved; ++d)
        if (int64_t eff = std::min(tile[d], p.size[d]); eff > 1) {
          tile[d] = (eff + 1) / 2;
          halved = true;
        }
      if (halved) continue;
      int64_t eff = std::min(tile[r - 1], (p.size[r - 1] + granule - 1) / granule * granule);
      if (eff <= granule) break;
      tile[r - 1] = std::max(granule, eff / 2 / granule * granule);
    }
    Grid g(p.size, tile);
    Step s = stepOf(op);
    Box b;
    for (int64_t i = 0; i < g.numTiles; ++i) {
      g.box(i, b);
      for (unsigned d = 0; d < b.rank(); ++d) b.off[d] += p.off[d];
      stats_.fillBytes += b.volume() * int64_t(esize);
      if (!copyPiece(*h.background, b, h, b, s)) return false;
    }
    covered(h, p.volume());
    return true;
  }

  // ---------------------------------------------------------------- ops

  bool expand(Operation &op) {
    switch (op.def().cls) {
    case ir::OpClass::ElementwiseUnary:
    case ir::OpClass::ElementwiseBinary:
    case ir::OpClass::Select:
    case ir::OpClass::Cast: return expandElementwise(op);
    case ir::OpClass::Reduction: return expandReduction(op);
    case ir::OpClass::Matmul: return expandMatmul(op);
    case ir::OpClass::Transpose: return expandTranspose(op);
    case ir::OpClass::Reshape:
    case ir::OpClass::View: return expandAlias(op);
    case ir::OpClass::Assemble: return expandAssemble(op);
    case ir::OpClass::Concat: return expandConcat(op);
    case ir::OpClass::TopK:
    case ir::OpClass::TopKIndices: return expandTopK(op);
    case ir::OpClass::Gather: return expandGather(op);
    case ir::OpClass::ExpandClone: return expandElementwise(op);
    case ir::OpClass::Scatter: return expandScatter(op);
    case ir::OpClass::Full: {
      ValueInfo &out = info(op.result());
      out.kind = ValueInfo::Kind::Full;
      out.producer = &op;
      out.tilingOp = &op;
      out.scope = scopeOf(op);
      out.fullValue = op.attr("value");
      logOp(op, "constant: a fresh full tile per read, in GM only if it must be");
      return true;
    }
    default:
      return opError(op, "cannot be expanded to tiles (internal error: unexpected op)",
                     ir::DiagCategory::Internal);
    }
  }

  bool expandElementwise(Operation &op) {
    Type type = op.resultType();
    auto vt = vecTile(op, type.shape());
    if (vt) vt = fitWholeTile(op, *vt);
    if (!vt || !checkVec(op, *vt, type.shape(), ir::vecTileBuffers(op.code(), op.numOperands(), 1)))
      return false;
    Grid g(type.shape(), *vt);
    if (!withinBudget(op, g.numTiles)) return false;
    logGrid(op, g);
    ValueInfo &out = defineTiles(op, g);
    Step s = stepOf(op);
    Attribute attrs = withoutVecTile(op);
    unsigned n = op.numOperands();
    llvm::SmallVector<ValueInfo *, 2> in;
    llvm::SmallVector<bool, 2> reusable;
    for (unsigned i = 0; i < n; ++i) {
      in.push_back(&info(op.operand(i)));
      reusable.push_back(fanOut(g, op.operandType(i).shape()) == 1);
    }
    Box b, ob;
    llvm::SmallVector<Value *, 2> operands(n);
    for (int64_t t = 0; t < g.numTiles; ++t) {
      g.box(t, b);
      for (unsigned i = 0; i < n; ++i) {
        broadcastRegion(b, op.operandType(i).shape(), ob);
        operands[i] = fetch(*in[i], ob, s, reusable[i]);
        if (!operands[i]) return false;
        // Tiles of two tasks where one waits on the other through GM cannot be read
        // by one op: the one whose task comes first is read through GM instead.
        for (unsigned j = 0; j < i; ++j) {
          unsigned k = clusters_.reachesThroughGm(operands[j], operands[i])   ? j
                       : clusters_.reachesThroughGm(operands[i], operands[j]) ? i
                                                                              : n;
          if (k == n) continue;
          ++stats_.unfused;
          Box kb;
          broadcastRegion(b, op.operandType(k).shape(), kb);
          operands[k] = fetch(*in[k], kb, s, false);
          if (!operands[k]) return false;
        }
      }
      out.tiles[t] = emit(op.code(), operands, ctx_.tileType(type.dtype(), b.size, MemSpace::UB),
                          attrs, s.loc);
    }
    return true;
  }

  bool expandReduction(Operation &op) {
    Type inType = op.operandType(0), outType = op.resultType();
    llvm::ArrayRef<int64_t> X = inType.shape();
    auto vt = vecTile(op, X);
    if (!vt) return false;
    vt = fitWholeTile(op, *vt);
    if (!vt) return false;
    ir::ReduceView reduce = *ir::ReduceView::of(op); // the verifier checked its axes
    llvm::ArrayRef<int64_t> axes = reduce.axes;
    bool keepdim = reduce.keepdim;
    Grid in(X, *vt);
    if (!withinBudget(op, in.numTiles)) return false;
    llvm::SmallVector<bool, 4> reduced(X.size(), false);
    llvm::SmallVector<unsigned, 2> split;
    int64_t count = 1; // reduced elements per output element
    for (int64_t a : axes) {
      reduced[a] = true;
      count *= X[a];
      if (in.tile[a] < X[a]) split.push_back(unsigned(a));
    }
    if (split.empty()) {
      if (!checkVec(op, *vt, X, 2)) return false;
    } else {
      std::string why = absl::StrCat(
          "splits reduction axis ", split[0], " (vec_tile ", in.tile[split[0]], " of ",
          X[split[0]], "), so each step holds a chunk, its partial result and the running "
                       "combine: ");
      if (!checkVec(op, *vt, X, 3, why)) return false;
    }

    // The output grid: the input tile with reduced axes at 1 (keepdim) or dropped.
    Dims outTile;
    llvm::SmallVector<int, 4> outDimOf(X.size(), -1); // input dim -> output dim
    for (unsigned d = 0; d < X.size(); ++d) {
      if (reduced[d] && !keepdim) continue;
      outDimOf[d] = int(outTile.size());
      outTile.push_back(reduced[d] ? 1 : in.tile[d]);
    }
    Grid g(outType.shape(), outTile);
    ValueInfo &src = info(op.operand(0));
    ValueInfo &out = defineTiles(op, g);
    Step s = stepOf(op);
    DType dtype = outType.dtype();

    Box ib, ob;
    if (split.empty()) {
      logGrid(op, in, ", reduced axes whole in each tile");
      Attribute attrs = withoutVecTile(op);
      for (int64_t t = 0; t < in.numTiles; ++t) {
        in.box(t, ib);
        Value *x = fetch(src, ib, s, true);
        if (!x) return false;
        ob.off.clear();
        ob.size.clear();
        for (unsigned d = 0; d < X.size(); ++d) {
          if (outDimOf[d] < 0) continue;
          ob.off.push_back(reduced[d] ? 0 : ib.off[d]);
          ob.size.push_back(reduced[d] ? 1 : ib.size[d]);
        }
        out.tiles[g.exactIndex(ob)] =
            emit(op.code(), {x}, ctx_.tileType(dtype, ob.size, MemSpace::UB), attrs, s.loc);
      }
      return true;
    }

    // A split reduced axis: partials per chunk, combined pairwise.
    OpCode partialCode = op.code() == OpCode::Mean ? OpCode::Sum : op.code();
    OpCode combineCode = op.code() == OpCode::Amax   ? OpCode::Max
                         : op.code() == OpCode::Amin ? OpCode::Min
                                                     : OpCode::Add;
    llvm::SmallVector<ir::NamedAttr, 3> pa{{axesId_, op.attr("axes")},
                                           {keepdimId_, ctx_.boolAttr(true)}};
    if (s.scope) pa.push_back({scopeId_, s.scope});
    Attribute partialAttrs = ctx_.dictAttr(pa, true);
    Attribute plainAttrs = scopeDict(s);
    Dims chunkCounts; // chunks along each split axis
    int64_t chunks = 1;
    for (unsigned a : split) {
      chunkCounts.push_back(in.counts[a]);
      chunks *= in.counts[a];
    }
    logGrid(op, in,
            absl::StrCat(", reduced axis ", absl::StrJoin(split, ", "), " split: ", chunks,
                         " partials per output tile, combined with '",
                         ctx_.opDef(combineCode).name.str(), "'",
                         op.code() == OpCode::Mean ? absl::StrCat(", then / ", count) : ""));
    // A mean's last step divides the combined sums by the whole reduced extent (a mean
    // over the size-1 axes with `count`): the executor divides by the elements summed
    // instead when a window's valid_shape left some out.
    llvm::SmallVector<ir::NamedAttr, 4> ma{{axesId_, op.attr("axes")},
                                           {ctx_.id("count"), ctx_.intAttr(count)},
                                           {keepdimId_, ctx_.boolAttr(true)}};
    if (s.scope) ma.push_back({scopeId_, s.scope});
    Attribute meanAttrs = ctx_.dictAttr(ma, true);
    std::vector<Value *> partials, inUb;
    // Chunk c of an output tile's input region: the split axes cut by the tile.
    auto chunkBox = [&](const Box &region, int64_t c, Box &out) {
      out = region;
      for (int i = int(split.size()) - 1; i >= 0; --i) {
        unsigned a = split[i];
        int64_t k = c % chunkCounts[i];
        c /= chunkCounts[i];
        out.off[a] = k * in.tile[a];
        out.size[a] = std::min(in.tile[a], X[a] - out.off[a]);
      }
    };
    for (int64_t t = 0; t < g.numTiles; ++t) {
      g.box(t, ob);
      // The input region of this output tile: kept dims from the output tile,
      // reduced dims whole (cut into chunks along the split ones).
      Box region;
      for (unsigned d = 0; d < X.size(); ++d) {
        region.off.push_back(reduced[d] ? 0 : ob.off[outDimOf[d]]);
        region.size.push_back(reduced[d] ? X[d] : ob.size[outDimOf[d]]);
      }
      Dims keptShape(region.size.begin(), region.size.end());
      for (unsigned d = 0; d < X.size(); ++d)
        if (reduced[d]) keptShape[d] = 1;
      Type partialType = ctx_.tileType(dtype, keptShape, MemSpace::UB);
      partials.clear();
      // The chunks' partials are combined in one task: if tiles already in UB for
      // two chunks belong to tasks where one waits on the other through GM, every
      // chunk is read through GM instead.
      bool reuse = true;
      inUb.clear();
      for (int64_t c = 0; c < chunks && reuse; ++c) {
        chunkBox(region, c, ib);
        if (Value *t = tileInUb(src, ib, s)) {
          for (Value *e : inUb)
            if (clusters_.reachesThroughGm(e, t) || clusters_.reachesThroughGm(t, e))
              reuse = false;
          inUb.push_back(t);
        }
      }
      if (!reuse) ++stats_.unfused;
      for (int64_t c = 0; c < chunks; ++c) {
        chunkBox(region, c, ib);
        Value *x = fetch(src, ib, s, reuse);
        if (!x) return false;
        partials.push_back(emit(partialCode, {x}, partialType, partialAttrs, s.loc));
      }
      while (partials.size() > 1) {
        size_t w = 0;
        for (size_t i = 0; i < partials.size(); i += 2)
          partials[w++] = i + 1 < partials.size()
                              ? emit(combineCode, {partials[i], partials[i + 1]}, partialType,
                                     plainAttrs, s.loc)
                              : partials[i];
        partials.resize(w);
      }
      Value *r = partials[0];
      if (op.code() == OpCode::Mean) r = emit(OpCode::Mean, {r}, partialType, meanAttrs, s.loc);
      if (!keepdim)
        r = emit(OpCode::Reshape, {r}, ctx_.tileType(dtype, ob.size, MemSpace::UB), plainAttrs,
                 s.loc);
      out.tiles[t] = r;
    }
    return true;
  }

  bool expandMatmul(Operation &op) {
    Attribute ctAttr = op.attr("cube_tile");
    if (!ctAttr)
      return opError(op, "has no cube_tile; call set_cube_tile_shapes([mL0, mL1], [kL0, kL1], "
                         "[nL0, nL1]) before it or write cube_tile = {m = [..], k = [..], n = "
                         "[..]}");
    ir::CubeTile ct = *ir::CubeTile::fromAttr(ctAttr);
    Type aType = op.operandType(0), bType = op.operandType(1), cType = op.resultType();
    if (std::string err = ir::checkCubeTile(ct, aType.dtype(), &device_); !err.empty())
      return opError(op, err);
    ir::MatmulView mm = *ir::MatmulView::of(op); // the verifier checked its shapes
    bool ta = mm.transposeA, tb = mm.transposeB;
    unsigned r = cType.rank();
    int64_t M = mm.m, N = mm.n, K = mm.k;
    DType acc = mm.acc;

    // The K loop keeps the whole mL1 x nL1 accumulator in L0C.
    int64_t mt = std::min(ct.m[1], M), nt = std::min(ct.n[1], N);
    int64_t accBytes = mt * nt * 4;
    if (accBytes > device_.buffers.l0c) {
      ir::CubeTile fix = ct;
      while (std::min(fix.m[1], M) * std::min(fix.n[1], N) * 4 > device_.buffers.l0c &&
             (fix.m[1] > 16 || fix.n[1] > 16)) {
        std::array<int64_t, 2> &axis = fix.n[1] >= fix.m[1] ? fix.n : fix.m;
        axis[1] = std::max<int64_t>(16, axis[1] / 2 / 16 * 16);
        axis[0] = std::gcd(axis[0], axis[1]); // L0 must still divide L1
      }
      return opError(
          op, absl::StrCat("cube_tile accumulates an mL1 x nL1 output tile in L0C across the K "
                           "loop: ",
                           mt, "x", nt, "x4 bytes = ", accBytes, " bytes, but the device has ",
                           device_.buffers.l0c, "; try m = [", fix.m[0], ", ", fix.m[1],
                           "], n = [", fix.n[0], ", ", fix.n[1], "]"));
    }

    Home *aHome = materialise(info(op.operand(0)));
    Home *bHome = materialise(info(op.operand(1)));
    if (!aHome || !bHome) return false;
    // A bias [1, N]: its columns of the output tile, copied into L1, initialise the
    // accumulator on the first K step (the cube's bias table).
    Home *biasHome = op.numOperands() == 3 ? materialise(info(op.operand(2))) : nullptr;
    if (op.numOperands() == 3 && !biasHome) return false;
    Home *cHome = newRoot(cType, op.result(), op.loc());
    defineGm(op, cHome);

    Dims outTile(r, 1);
    outTile[r - 2] = ct.m[1];
    outTile[r - 1] = ct.n[1];
    Grid g(cType.shape(), outTile);
    int64_t kSteps = (K + ct.k[1] - 1) / ct.k[1];
    if (!withinBudget(op, g.numTiles > INT64_MAX / kSteps ? INT64_MAX : g.numTiles * kSteps))
      return false;
    // The staggered order rotates the whole kL1 steps; a K tail stays the last step of
    // every tile, so the tiles' tasks keep one shape (one isomorphism group).
    int64_t wholeSteps = K / ct.k[1];
    bool stagger = options_.cubeKStagger && wholeSteps > 1 && g.numTiles > 1;
    logGrid(op, g,
            absl::StrCat(", K ", K, " in ", kSteps, " steps of ", std::min(ct.k[1], K),
                         K % ct.k[1] ? absl::StrCat(" (tail ", K % ct.k[1], ")") : "",
                         stagger ? ", each tile's first step staggered" : ""));

    Step s = stepOf(op);
    // The mmads get the op's attributes but its FIXPIPE epilogue (scale, relu), which
    // the copy_out of each output tile from L0C applies (ir/Fixpipe.h).
    llvm::SmallVector<ir::NamedAttr, 6> mmadAttrs, epilogue;
    for (const ir::NamedAttr &a : op.attrs())
      (a.name.str() == "scale" || a.name.str() == "relu" ? epilogue : mmadAttrs).push_back(a);
    Attribute attrs = ctx_.dictAttr(mmadAttrs, true);
    Box ob;
    // A region of operand `shape` (rank `ro`) for output tile `ob`: batch dims
    // broadcast, then the two matrix dims (rows, cols) as given.
    auto operandBox = [&](llvm::ArrayRef<int64_t> shape, int64_t r0, int64_t rs, int64_t c0,
                          int64_t cs) {
      Box b;
      size_t lead = (r - 2) - (shape.size() - 2);
      for (size_t i = 0; i + 2 < shape.size(); ++i) {
        b.off.push_back(shape[i] == 1 ? 0 : ob.off[lead + i]);
        b.size.push_back(1);
      }
      b.off.append({r0, c0});
      b.size.append({rs, cs});
      return b;
    };
    for (int64_t t = 0; t < g.numTiles; ++t) {
      g.box(t, ob);
      int64_t m0 = ob.off[r - 2], ms = ob.size[r - 2], n0 = ob.off[r - 1], ns = ob.size[r - 1];
      Dims accShape(r, 1);
      accShape[r - 2] = ms;
      accShape[r - 1] = ns;
      Type accType = ctx_.tileType(acc, accShape, MemSpace::L0C);
      Value *partial = nullptr;
      int64_t first = stagger ? staggeredFirstKStep(t, wholeSteps) : 0;
      if (first) ++stats_.staggeredTiles;
      for (int64_t step = 0; step < kSteps; ++step) {
        int64_t k0 = (step < wholeSteps ? (first + step) % wholeSteps : step) * ct.k[1];
        int64_t ks = std::min(ct.k[1], K - k0);
        Box ab = ta ? operandBox(aType.shape(), k0, ks, m0, ms)
                    : operandBox(aType.shape(), m0, ms, k0, ks);
        Box bb = tb ? operandBox(bType.shape(), n0, ns, k0, ks)
                    : operandBox(bType.shape(), k0, ks, n0, ns);
        Value *a = copyIn(*aHome, ab, MemSpace::L1, s);
        Value *b = copyIn(*bHome, bb, MemSpace::L1, s);
        if (!a || !b) return false;
        if (!partial && biasHome) {
          Box bias{{0, n0}, {1, ns}};
          Value *row = copyIn(*biasHome, bias, MemSpace::L1, s);
          if (!row) return false;
          partial = emit(OpCode::Matmul, {a, b, row}, accType, attrs, s.loc);
          continue;
        }
        partial = partial ? emit(OpCode::Matmul, {a, b, partial}, accType, attrs, s.loc)
                          : emit(OpCode::Matmul, {a, b}, accType, attrs, s.loc);
      }
      if (!copyOut(partial, *cHome, ob, s, epilogue)) return false;
    }
    return true;
  }

  bool expandTranspose(Operation &op) {
    Type type = op.resultType();
    llvm::ArrayRef<int64_t> X = op.operandType(0).shape();
    // The vec_tile cuts the input (PyPTO's rule); each output tile is its input tile
    // permuted, its rows padded to whole blocks in UB like any compute tile's.
    auto vt = vecTile(op, X);
    if (vt) vt = fitWholeTile(op, *vt);
    if (!vt || !checkVec(op, *vt, X, 2)) return false;
    llvm::ArrayRef<int64_t> perm = op.attr("perm").getIntArray();
    Grid in(X, *vt);
    Dims outTile(perm.size());
    for (size_t d = 0; d < perm.size(); ++d) outTile[d] = in.tile[perm[d]];
    Grid g(type.shape(), outTile);
    if (!withinBudget(op, g.numTiles)) return false;
    logGrid(op, g, absl::StrCat(", reading input tiles of ", shapeText(in.tile)));
    ValueInfo &src = info(op.operand(0));
    ValueInfo &out = defineTiles(op, g);
    Step s = stepOf(op);
    Attribute attrs = withoutVecTile(op);
    Box b, ib;
    ib.off.resize(X.size());
    ib.size.resize(X.size());
    for (int64_t t = 0; t < g.numTiles; ++t) {
      g.box(t, b);
      for (size_t d = 0; d < perm.size(); ++d) {
        ib.off[perm[d]] = b.off[d];
        ib.size[perm[d]] = b.size[d];
      }
      Value *x = fetch(src, ib, s, true);
      if (!x) return false;
      out.tiles[t] =
          emit(OpCode::Transpose, {x}, ctx_.tileType(type.dtype(), b.size, MemSpace::UB), attrs,
               s.loc);
    }
    return true;
  }

  bool expandAlias(Operation &op) {
    ValueInfo &src = info(op.operand(0));
    Type type = op.resultType();
    if (src.kind == ValueInfo::Kind::Full) {
      // A slice or reshape of a constant is a constant.
      ValueInfo &out = info(op.result());
      out.kind = ValueInfo::Kind::Full;
      out.producer = src.producer;
      out.tilingOp = &op;
      out.scope = scopeOf(op);
      out.fullValue = src.fullValue;
      logOp(op, "of a constant: a constant");
      return true;
    }
    if (op.code() == OpCode::Reshape && src.kind == ValueInfo::Kind::Tiles &&
        src.tiles.size() == size_t(src.grid.numTiles) &&
        sameUpToUnitDims(src.type.shape(), type.shape()))
      return reshapeTiles(op, src);
    Home *base = materialise(src);
    if (!base) return false;
    bool isView = op.code() == OpCode::View;
    Attribute attrs = ctx_.emptyDict();
    if (isView) {
      ir::NamedAttr a[] = {{offsetsId_, op.attr("offsets")}};
      attrs = ctx_.dictAttr(a, true);
    }
    // GM aliases move no data: they are not tile ops and take no scope.
    Operation *alias =
        f_.createOp(op.def(), {base->value}, {type}, attrs, op.loc(), ret_);
    alias->result()->setNameHint(op.result()->nameHint());
    Home *h = newHome(alias->result());
    h->base = base;
    h->kind = isView ? Home::Kind::View : Home::Kind::Reshape;
    defineGm(op, h);
    logOp(op, "GM alias: no tiles");
    return true;
  }

  /// A reshape that only adds or drops size-1 dims of a value held in UB tiles:
  /// each tile is reshaped in UB (the grid keeps its tiles, with size 1 in the unit
  /// dims).
  bool reshapeTiles(Operation &op, ValueInfo &src) {
    llvm::ArrayRef<int64_t> to = op.resultType().shape();
    // The source grid's tile sizes of its non-unit dims, in order.
    Dims kept;
    for (unsigned d = 0; d < src.grid.rank(); ++d)
      if (src.grid.shape[d] != 1) kept.push_back(src.grid.tile[d]);
    Dims tile;
    size_t k = 0;
    for (int64_t n : to) tile.push_back(n == 1 ? 1 : kept[k++]);
    Grid g(to, tile);
    ValueInfo &out = defineTiles(op, g);
    out.scope = src.scope; // the tiles stay in the source's tasks
    out.tilingOp = src.tilingOp;
    Step s{op.loc(), src.scope};
    Attribute attrs = scopeDict(s);
    Box b;
    for (int64_t i = 0; i < g.numTiles; ++i) {
      g.box(i, b);
      Value *t = src.tiles[i];
      out.tiles[i] = t->type().shape() == llvm::ArrayRef<int64_t>(b.size)
                         ? t
                         : emit(OpCode::Reshape, {t},
                                ctx_.tileType(t->type().dtype(), b.size, MemSpace::UB), attrs,
                                s.loc);
    }
    logGrid(op, g, ", size-1 dims only: each tile reshaped in UB");
    return true;
  }

  /// Copies `grid`'s pieces of `v` (v's coordinates, shifted by `srcOrigin`) into
  /// root `root` at `shift` more. False after an error.
  bool copyPieces(ValueInfo &v, const Grid &grid, llvm::ArrayRef<int64_t> srcOrigin,
                  llvm::ArrayRef<int64_t> shift, Home &root, const Step &s) {
    Box b, at;
    for (int64_t t = 0; t < grid.numTiles; ++t) {
      grid.box(t, b);
      at = b;
      for (size_t d = 0; d < b.off.size(); ++d) {
        b.off[d] += srcOrigin[d];
        at.off[d] = b.off[d] + shift[d];
      }
      if (!copyPiece(v, b, root, at, s)) return false;
    }
    return true;
  }

  /// Where a slice write `op` of region `w` puts its result: the destination's own
  /// memory when it may be updated in place (see the header), else a new root whose
  /// other parts come from the destination when needed. `why` says why not in place.
  Home *writeTarget(Operation &op, ValueInfo &dst, ValueInfo &src, const Box &w,
                    std::string &why) {
    Home *dstRoot = dst.home ? &rootOf(*dst.home) : nullptr;
    if (usedLater(op.operand(0), op))
      why = "the destination is read later as it was";
    else if (dst.kind == ValueInfo::Kind::Arg)
      why = "the destination is a function argument (read-only)";
    else if (dst.kind == ValueInfo::Kind::Full)
      why = "the destination is a constant";
    else if (dst.kind == ValueInfo::Kind::Gm && dst.home->kind != Home::Kind::Root)
      why = "the destination is a view or reshape of another tensor";
    else if (dstRoot && dstRoot->frozen)
      why = "the destination's memory is still read as it was";
    else if (dstRoot && readsRoot(src, dstRoot))
      why = "the written value reads the destination's memory";
    if (why.empty()) {
      if (dst.kind == ValueInfo::Kind::Tiles) return materialise(dst, &w);
      return dst.home;
    }
    // A new tensor; its other parts come from the destination as it is now.
    if (dst.kind == ValueInfo::Kind::Tiles && !materialise(dst)) return nullptr;
    if (dst.home) rootOf(*dst.home).frozen = true;
    Home *h = newRoot(op.resultType(), op.result(), op.loc());
    h->background = &dst;
    h->fillOp = &op;
    h->uncovered = Box::whole(op.resultType().shape()).volume();
    return h;
  }

  bool expandAssemble(Operation &op) {
    Type srcType = op.operandType(1);
    auto vt = vecTile(op, srcType.shape());
    if (!vt || !checkVec(op, *vt, srcType.shape(), ir::vecTileBuffers(op.code(), 2, 1)))
      return false;
    llvm::ArrayRef<int64_t> off = op.attr("offsets").getIntArray();
    Box w(off, srcType.shape());
    ValueInfo &dst = info(op.operand(0)), &src = info(op.operand(1));
    std::string why;
    Home *target = writeTarget(op, dst, src, w, why);
    if (!target) return false;
    defineGm(op, target);
    ++stats_.sliceWrites;
    Grid g(srcType.shape(), *vt);
    if (!withinBudget(op, g.numTiles)) return false;
    logGrid(op, g,
            why.empty() ? absl::StrCat(", written in place at ", w.str())
                        : absl::StrCat(", written at ", w.str(), " of a new tensor (", why,
                                       "; its other parts are copied only if read)"));
    Dims zero(srcType.rank(), 0);
    int64_t fresh = newlyCovered(*target, w);
    if (!copyPieces(src, g, zero, off, *target, stepOf(op))) return false;
    covered(*target, fresh);
    return true;
  }

  bool expandConcat(Operation &op) {
    Type type = op.resultType();
    auto vt = vecTile(op, type.shape());
    if (!vt || !checkVec(op, *vt, type.shape(), ir::vecTileBuffers(op.code(), op.numOperands(), 1)))
      return false;
    int64_t axis = op.attr("axis").getInt();
    unsigned r = type.rank();
    Home *h = newRoot(type, op.result(), op.loc());
    defineGm(op, h);
    Step s = stepOf(op);
    Dims zero(r, 0), shift(r, 0);
    int64_t tiles = 0;
    for (Value *x : op.operands()) {
      Grid g(x->type().shape(), *vt);
      tiles += g.numTiles;
      if (!withinBudget(op, g.numTiles) || !copyPieces(info(x), g, zero, shift, *h, s))
        return false;
      shift[axis] += x->type().dim(axis);
    }
    logOp(op, absl::StrCat("tile ", shapeText(*vt), ", ", op.numOperands(), " inputs in ", tiles,
                           " tiles copied along axis ", axis));
    return true;
  }

  /// Attributes of a tile op made for `s`: `attrs` plus its scope.
  Attribute tileAttrs(llvm::SmallVector<ir::NamedAttr, 4> attrs, const Step &s) {
    if (s.scope) attrs.push_back({scopeId_, s.scope});
    return ctx_.dictAttr(attrs, true);
  }

  // topk, topk_indices: the input is tiled with the selected dim whole in each tile
  // (the vec_tile's entry for it is widened); per tile a topk_indices, and for topk's
  // values (when used) a gather of the input tile at those indices.
  bool expandTopK(Operation &op) {
    Type inType = op.operandType(0);
    llvm::ArrayRef<int64_t> X = inType.shape();
    auto vt = vecTile(op, X);
    if (!vt) return false;
    ir::TopKView tv = *ir::TopKView::of(op); // the verifier checked k and dim
    int64_t dim = tv.dim, k = tv.k;
    bool isTopK = op.code() == OpCode::TopK;
    // Whole, rounded up to whole 32-byte blocks (the grid clamps it to the size).
    (*vt)[dim] = wholeBlocks(X[dim], inType.dtype());
    // UB holds the input tile, the indices and (topk) the gathered values.
    if (!checkVec(op, *vt, X, isTopK ? 3 : 2,
                  absl::StrCat("keeps dimension ", dim, " (size ", X[dim],
                               ") whole in each tile: ")))
      return false;
    Grid in(X, *vt);
    bool wantValues = isTopK && info(op.result(0)).remainingUses > 0;
    int64_t tiles = !wantValues ? in.numTiles
                    : in.numTiles > INT64_MAX / 2 ? INT64_MAX
                                                  : in.numTiles * 2;
    if (!withinBudget(op, tiles)) return false;
    logGrid(op, in, absl::StrCat(", dimension ", dim, " whole in each tile"));
    Dims outShape(X.begin(), X.end()), outTile = in.tile;
    outShape[dim] = k;
    outTile[dim] = k;
    Grid g(outShape, outTile);
    ValueInfo &src = info(op.operand(0));
    unsigned indexResult = isTopK ? 1 : 0;
    ValueInfo &indices = defineTiles(op, g, indexResult);
    ValueInfo *values = wantValues ? &defineTiles(op, g, 0) : nullptr;
    Step s = stepOf(op);
    Attribute selectAttrs = tileAttrs({{ctx_.id("k"), op.attr("k")},
                                       {ctx_.id("dim"), op.attr("dim")},
                                       {ctx_.id("largest"), ctx_.boolAttr(tv.largest)}},
                                      s);
    Attribute gatherAttrs = tileAttrs({{ctx_.id("dim"), op.attr("dim")}}, s);
    Box ib, ob;
    for (int64_t t = 0; t < in.numTiles; ++t) {
      in.box(t, ib);
      Value *x = fetch(src, ib, s, true);
      if (!x) return false;
      ob = ib;
      ob.off[dim] = 0;
      ob.size[dim] = k;
      int64_t at = g.exactIndex(ob);
      Value *idx = emit(OpCode::TopKIndices, {x},
                        ctx_.tileType(op.resultType(indexResult).dtype(), ob.size, MemSpace::UB),
                        selectAttrs, s.loc);
      indices.tiles[at] = idx;
      if (values)
        values->tiles[at] = emit(OpCode::Gather, {x, idx},
                                 ctx_.tileType(inType.dtype(), ob.size, MemSpace::UB),
                                 gatherAttrs, s.loc);
    }
    return true;
  }

  // gather: the result (the index's shape) is tiled; each tile reads the index tile
  // of its region and the input over the same region except the gathered dim, whole.
  bool expandGather(Operation &op) {
    Type type = op.resultType(), xType = op.operandType(0);
    auto vt = vecTile(op, type.shape());
    if (!vt) return false;
    int64_t dim = op.attr("dim").getInt();
    // UB: the input tile (its gathered dim whole), the index tile and the result,
    // counted at the input tile's size.
    Dims checkTile = *vt, checkShape(type.shape().begin(), type.shape().end());
    checkShape[dim] = xType.dim(dim);
    checkTile[dim] = wholeBlocks(xType.dim(dim), xType.dtype());
    if (!checkVec(op, checkTile, checkShape, 3,
                  absl::StrCat("reads dimension ", dim, " of the input (size ", xType.dim(dim),
                               ") whole in each tile: ")))
      return false;
    Grid g(type.shape(), *vt);
    if (!withinBudget(op, g.numTiles)) return false;
    logGrid(op, g, absl::StrCat(", input dimension ", dim, " whole in each tile"));
    ValueInfo &out = defineTiles(op, g);
    ValueInfo &x = info(op.operand(0)), &index = info(op.operand(1));
    bool xReusable = g.counts[dim] == 1;
    Step s = stepOf(op);
    Attribute attrs = withoutVecTile(op);
    Box b, xb;
    for (int64_t t = 0; t < g.numTiles; ++t) {
      g.box(t, b);
      xb = b;
      xb.off[dim] = 0;
      xb.size[dim] = xType.dim(dim);
      Value *xt = fetch(x, xb, s, xReusable);
      if (!xt) return false;
      Value *it = fetch(index, b, s, true);
      if (!it) return false;
      // As for elementwise operands: one op cannot read tiles of two tasks where one
      // waits on the other through GM; the earlier one is read through GM instead.
      if (clusters_.reachesThroughGm(xt, it)) {
        ++stats_.unfused;
        if (!(xt = fetch(x, xb, s, false))) return false;
      } else if (clusters_.reachesThroughGm(it, xt)) {
        ++stats_.unfused;
        if (!(it = fetch(index, b, s, false))) return false;
      }
      out.tiles[t] = emit(OpCode::Gather, {xt, it},
                          ctx_.tileType(type.dtype(), b.size, MemSpace::UB), attrs, s.loc);
    }
    return true;
  }

  /// `n` elements of `dtype` rounded up to whole 32-byte blocks (a tile size that is
  /// aligned and, clamped by a grid, covers the whole dimension).
  int64_t wholeBlocks(int64_t n, DType dtype) const {
    int64_t block = device_.buffers.blockBytes, esize = ir::elementSize(dtype);
    int64_t granule = block / std::gcd(block, esize);
    return (n + granule - 1) / granule * granule;
  }

  bool expandScatter(Operation &op) {
    Type type = op.resultType(), iType = op.operandType(1);
    llvm::ArrayRef<int64_t> X = type.shape();
    auto vt = vecTile(op, X);
    if (!vt) return false;
    int64_t dim = ir::ScatterView::of(op)->dim;
    int64_t whole = std::max(X[dim], iType.dim(dim));
    // UB: the input tile, the result, and the index and source tiles, each counted
    // with the scattered dim whole (the longer of the input's and the index's).
    Dims checkTile = *vt, checkShape(X.begin(), X.end());
    checkShape[dim] = whole;
    checkTile[dim] = wholeBlocks(whole, type.dtype());
    if (!checkVec(op, checkTile, checkShape, 4,
                  absl::StrCat("keeps dimension ", dim, " (size ", whole,
                               ") whole in each tile: ")))
      return false;
    (*vt)[dim] = wholeBlocks(X[dim], type.dtype());
    Grid g(X, *vt);
    if (!withinBudget(op, g.numTiles)) return false;
    logGrid(op, g, absl::StrCat(", dimension ", dim, " whole in each tile"));
    ValueInfo &out = defineTiles(op, g);
    ValueInfo *in[3] = {&info(op.operand(0)), &info(op.operand(1)), &info(op.operand(2))};
    Step s = stepOf(op);
    Attribute attrs = withoutVecTile(op);
    Box boxes[3];
    Value *tiles[3];
    for (int64_t t = 0; t < g.numTiles; ++t) {
      g.box(t, boxes[0]);
      // The index positions of this tile: its region, clipped to the index, with the
      // index's dim whole.
      boxes[1] = boxes[0];
      bool empty = false;
      for (unsigned d = 0; d < boxes[1].rank(); ++d) {
        if (int64_t(d) == dim) {
          boxes[1].off[d] = 0;
          boxes[1].size[d] = iType.dim(d);
          continue;
        }
        boxes[1].size[d] = std::min(boxes[1].size[d], iType.dim(d) - boxes[1].off[d]);
        empty |= boxes[1].size[d] <= 0;
      }
      boxes[2] = boxes[1];
      unsigned n = empty ? 1 : 3;
      for (unsigned i = 0; i < n; ++i) {
        if (!(tiles[i] = fetch(*in[i], boxes[i], s, true))) return false;
        // As for elementwise operands: no op reads tiles of two tasks where one waits
        // on the other through GM; the earlier is read through GM instead.
        for (unsigned j = 0; j < i; ++j) {
          unsigned k = clusters_.reachesThroughGm(tiles[j], tiles[i])   ? j
                       : clusters_.reachesThroughGm(tiles[i], tiles[j]) ? i
                                                                        : n;
          if (k == n) continue;
          ++stats_.unfused;
          if (!(tiles[k] = fetch(*in[k], boxes[k], s, false))) return false;
        }
      }
      out.tiles[t] = empty ? tiles[0]
                           : emit(OpCode::Scatter, {tiles[0], tiles[1], tiles[2]},
                                  ctx_.tileType(type.dtype(), boxes[0].size, MemSpace::UB),
                                  attrs, s.loc);
    }
    return true;
  }

  // ---------------------------------------------------------------- return

  /// The GM tensor to return for `v` (null after an error).
  Value *returnValue(ValueInfo &v) {
    if (v.kind == ValueInfo::Kind::Arg && !loopBody_) return v.home->value;
    if (v.kind == ValueInfo::Kind::Arg) {
      // A loop body's result lands in a window of another tensor: copy the argument,
      // in whole rows of the largest tile a copy through UB (one buffer) allows.
      if (v.returnCopy) return v.returnCopy;
      Dims vt = copyTile(v.type);
      if (!checkVec(*ret_, vt, v.type.shape(), 1, "a loop body returns its argument, which is copied in tiles: "))
        return nullptr;
      Home *copy = newRoot(v.type, v.home->value, ret_->loc());
      Grid g(v.type.shape(), vt);
      Dims zero(v.type.rank(), 0);
      if (!copyPieces(v, g, zero, zero, *copy, stepOf(*ret_))) return nullptr;
      v.returnCopy = copy->value;
      return copy->value;
    }
    Home *h = materialise(v);
    if (!h) return nullptr;
    if (h->kind == Home::Kind::Root) {
      // Parts never written come from the background now.
      if (!fill(*h, Box::whole(h->value->type().shape()))) return nullptr;
      return h->value;
    }
    // An alias is copied out so every result is a tensor of its own.
    if (v.returnCopy) return v.returnCopy;
    const Operation &op = *v.tilingOp;
    auto vt = vecTile(op, v.type.shape(), " and its result is returned, so it is copied to GM in tiles");
    if (!vt || !checkVec(op, *vt, v.type.shape(), 1)) return nullptr;
    Home *copy = newRoot(v.type, op.result(), op.loc());
    Grid g(v.type.shape(), *vt);
    Dims zero(v.type.rank(), 0);
    if (!copyPieces(v, g, zero, zero, *copy, stepOf(op))) return nullptr;
    v.returnCopy = copy->value;
    return copy->value;
  }

  /// The tile of a copy of `t` through UB: the last dim whole (rounded up to the
  /// transfer granule), as many rows of the second-last as a quarter of UB holds.
  Dims copyTile(Type t) const {
    Dims tile(t.rank(), 1);
    if (t.rank() == 0) return tile;
    int64_t esize = ir::elementSize(t.dtype());
    int64_t granule = std::max<int64_t>(1, device_.buffers.blockBytes / esize);
    int64_t last = t.shape().back();
    int64_t budget = std::max<int64_t>(granule, device_.buffers.ub / 4 / esize);
    int64_t cols = std::min((last + granule - 1) / granule * granule, budget / granule * granule);
    tile.back() = cols;
    if (t.rank() >= 2)
      tile[t.rank() - 2] = std::max<int64_t>(1, std::min(t.shape()[t.rank() - 2], budget / cols));
    return tile;
  }

  ir::Func &f_;
  ir::Context &ctx_;
  const ExpandTilesOptions &options_;
  const target::DeviceSpec &device_;
  const bool loopBody_;
  llvm::raw_ostream *log_;
  CompileBudget budget_;
  Statistics stats_;
  int64_t emitted_ = 0; ///< tile ops of this function so far
  HostBudget &host_;
  Operation *ret_ = nullptr;
  Operation *anchor_ = nullptr; ///< gm_tensors go before it: the start of the body
  llvm::DenseSet<const Operation *> live_;          ///< tensor ops whose results reach the return
  llvm::DenseMap<const Operation *, uint32_t> position_; ///< tensor ops' body positions
  llvm::DenseMap<Value *, ValueInfo *> infos_;
  std::deque<ValueInfo> infoStorage_;
  std::deque<Home> homes_;
  ir::MemoryOrder order_;    ///< the copies of every root and their order
  FusionClusters clusters_;  ///< the tasks the tile ops will form
  ir::Identifier offsetsId_, scopeId_, valueId_, axesId_, keepdimId_;
};

class ExpandTilesPass final : public Pass {
public:
  explicit ExpandTilesPass(const ExpandTilesOptions &options) : options_(options) {}
  llvm::StringRef argument() const override { return "expand-tiles"; }

  PassResult run(ir::Module &m, PassContext &ctx) override {
    bool changed = false;
    std::set<std::string> bodies = ir::loopBodyNames(m); // functions some loop runs
    HostBudget host = HostBudget::measure();
    for (ir::Func &f : m.funcs()) {
      if (ir::levelOf(f) == ir::Level::Control) continue; // its loops' bodies are expanded
      Expander e(f, options_, ctx,
                 {tileOps_, copyInBytes_, copyOutBytes_, fused_, sliceWrites_, fillBytes_,
                  unfused_, wholeTileSplits_, staggeredTiles_},
                 bodies.count(f.name().str()) > 0, host);
      switch (e.run()) {
      case Expander::Outcome::Failed: return PassResult::failure();
      case Expander::Outcome::Changed: changed = true; break;
      case Expander::Outcome::Unchanged: break;
      }
    }
    return PassResult::changed(changed);
  }

private:
  ExpandTilesOptions options_;
  PassStatistic tileOps_{this, "tile-ops", "Number of tile operations created"};
  PassStatistic copyInBytes_{this, "copy-in-bytes", "Bytes read from GM by the copy_ins created"};
  PassStatistic copyOutBytes_{this, "copy-out-bytes",
                              "Bytes written to GM by the copy_outs created"};
  PassStatistic fused_{this, "fused-tiles",
                       "Reads served by a tile already in UB instead of a copy_in"};
  PassStatistic sliceWrites_{this, "slice-writes",
                             "Slice writes (assemble) lowered; each moves only its slice"};
  PassStatistic fillBytes_{this, "fill-bytes",
                           "Bytes of a destination copied because a slice write could not "
                           "update it in place and a read or the return needed its other parts"};
  PassStatistic wholeTileSplits_{this, "whole-tile-splits",
                                 "Whole-shape vec_tiles too big for UB, split to fit"};
  PassStatistic staggeredTiles_{this, "staggered-k-tiles",
                                "Matmul output tiles whose K loop starts past step 0 "
                                "(cube-k-stagger)"};
  PassStatistic unfused_{this, "unfused-to-avoid-cycles",
                         "Reads made through GM because fusing them would make a task wait on "
                         "its own results"};
};

} // namespace

std::unique_ptr<Pass> createExpandTilesPass(const ExpandTilesOptions &options) {
  return std::make_unique<ExpandTilesPass>(options);
}

void registerExpandTilesPass(PassRegistry &registry) {
  static const OptionRow<ExpandTilesOptions> kRows[] = {
      {"fuse-local", &ExpandTilesOptions::fuseLocal,
       "reuse a producer's UB tile when a consumer needs exactly it (no GM round trip); "
       "false: every intermediate goes through GM"},
      {"cube-k-stagger", &ExpandTilesOptions::cubeKStagger,
       "each matmul output tile starts its K loop at its own step, so cube tasks that run "
       "at once read different slabs of a shared operand; false: every tile steps K from 0"},
  };
  registry.add({"expand-tiles",
                "Lower tensor ops to tile ops (copy_in, compute on tiles, copy_out) using "
                "their vec_tile / cube_tile",
                declareOptions(kRows), [](const PassOptionValues &v) {
                  return createExpandTilesPass(readOptions(kRows, v));
                }});
}

} // namespace ptoc::passes
