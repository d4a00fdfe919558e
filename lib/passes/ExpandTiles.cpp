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
// waiting on the tokens that overlap R. A UB tile is reused only when
//   - fuse-local is on (the option; off, every intermediate goes through GM),
//   - producer and consumer have the same sg_scope (a local edge forces one
//     subgraph, which must not join two scopes), and
//   - one tile of the consumer needs it (a broadcast operand shared by several
//     output tiles is read once per tile: reusing it would chain all of them into
//     one subgraph and serialise the op).
// The same rules let later consumers share one copy_in of a GM region. `full`
// values never touch GM unless they must (returned, a matmul operand): a consumer
// gets a fresh `full` tile of the region it needs.
//
// Ops.
//  - elementwise, cast: one tile op per output tile on the operands' regions.
//  - reductions: the input is tiled. No reduced axis split: one reduce per input
//    tile (keepdim as written). A split reduced axis: per output tile, a keepdim
//    reduce of every chunk (sum for mean), the partials combined pairwise (add /
//    max / min), times a `full` 1/N for mean (N = all reduced elements), and a
//    tile `reshape` for keepdim = false.
//  - matmul: operands in GM; per output tile (batch dims by 1, mL1 x nL1, tails) a
//    K loop in kL1 steps: copy_in the A and B regions to L1 (transposes respected),
//    `matmul` (accumulating from the second step) into an f32 (i32) L0C tile
//    carrying cube_tile, and one copy_out into the result's gm_tensor (FIXPIPE
//    converts the element type). Matmul results always live in GM.
//  - transpose: the output is tiled; each tile transposes the permuted input region.
//  - reshape, view: GM aliases of the source's home (of a `full`: another `full`).
//  - assemble / concat: a new gm_tensor; dst's parts outside src (a rectangle
//    difference, tiled with vec_tile) and src's tiles (each concat input's) are
//    read into UB and copied out at their destination offsets.
//  - return: values are written to GM; an argument is returned as is; an alias is
//    copied into a gm_tensor of its own (tiled with the alias op's vec_tile).
// Every tile op, copies included, takes the location and sg_scope of the tensor op
// it was made for (copy_outs that write V: V's producer; the fresh `full` tile a
// consumer reads: the consumer's scope). Tile ops carry no vec_tile; tile matmuls
// carry cube_tile. Dead tensor ops are not expanded; the tensor ops are erased.
//
// Checks (errors at the op, the pass fails). An op that needs a tile shape and has
// none. UB: each step of a vector op holds one tile per operand and one for the
// result, each counted at the clamped tile size and the largest element size
// (ir::checkVecTile, the verifier's rule); a step of a split reduction holds the
// chunk, its partial and the running combine (3 tiles; 4 for mean, with the 1/N
// tile); a copy through UB (assemble, concat, returning an alias) holds 1. Tiles are
// single-buffered here: multi-buffering is NBufferMerge's decision, under its own
// budget. Cube: ir::checkCubeTile (L0A/L0B double buffered, L0C, L1), and the K loop
// keeps the whole mL1 x nL1 accumulator (clamped to M x N) in L0C. Alignment: the
// vec_tile's last dim (ir::checkVecTile), and for transpose the input tile's last
// dim, which is a permuted vec_tile dim.
//
// `--debug-only=expand-tiles` prints one line per tensor op: its tile, grid, tile
// count and tails.
#include "ptoc/passes/Passes.h"

#include <algorithm>
#include <array>
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
#include "ptoc/ir/TileShape.h"
#include "ptoc/target/DeviceSpec.h"

namespace ptoc::passes {
namespace {

using ir::Attribute;
using ir::DType;
using ir::Location;
using ir::MemSpace;
using ir::OpCode;
using ir::Operation;
using ir::Type;
using ir::Value;
using Dims = llvm::SmallVector<int64_t, 4>;

// ---------------------------------------------------------------- regions and grids

/// A rectangular region: per dim an offset and a size.
struct Box {
  Dims off, size;
};

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
      counts.push_back((shape[d] + t - 1) / t);
      numTiles *= counts.back();
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

/// Row-major linear index of `coords` in `shape`.
int64_t ravel(llvm::ArrayRef<int64_t> coords, llvm::ArrayRef<int64_t> shape) {
  int64_t index = 0;
  for (size_t d = 0; d < shape.size(); ++d) index = index * shape[d] + coords[d];
  return index;
}

/// The first and last linear element indices of `b` in `shape`.
std::pair<int64_t, int64_t> linearRange(const Box &b, llvm::ArrayRef<int64_t> shape) {
  Dims last(b.off.begin(), b.off.end());
  for (size_t d = 0; d < last.size(); ++d) last[d] += b.size[d] - 1;
  return {ravel(b.off, shape), ravel(last, shape)};
}

/// The smallest box of `shape` holding every element whose linear index lies in
/// [first, last]: fixed leading coordinates, a range in the first dim where the
/// two ends differ, full extent after it.
Box boundingBox(int64_t first, int64_t last, llvm::ArrayRef<int64_t> shape) {
  size_t r = shape.size();
  Dims cf(r), cl(r);
  for (int d = int(r) - 1; d >= 0; --d) {
    cf[d] = first % shape[d];
    first /= shape[d];
    cl[d] = last % shape[d];
    last /= shape[d];
  }
  Box b;
  bool differ = false;
  for (size_t d = 0; d < r; ++d) {
    if (differ) {
      b.off.push_back(0);
      b.size.push_back(shape[d]);
    } else {
      b.off.push_back(cf[d]);
      b.size.push_back(cl[d] - cf[d] + 1);
      differ = cf[d] != cl[d];
    }
  }
  return b;
}

// ---------------------------------------------------------------- GM homes

/// copy_out tokens written into a home as one regular grid placed at `origin`
/// (null entries: pieces not written).
struct TokenGroup {
  Dims origin;
  Grid grid;
  std::vector<Value *> tokens;
};

/// Where a tensor value lives in GM.
struct Home {
  enum class Kind : uint8_t { Root, View, Reshape };
  Value *value = nullptr;
  Kind kind = Kind::Root;
  Home *base = nullptr; ///< aliases: the home they alias
  Dims offsets;         ///< views: where the view starts in `base`
  std::vector<TokenGroup> groups; ///< roots: the writes into it
};

/// Appends the tokens of `g` whose pieces overlap `b` (root coordinates). With
/// `linear`, a piece also needs its linear element range to meet [first, last].
void collectTokens(const TokenGroup &g, const Box &b, llvm::ArrayRef<int64_t> rootShape,
                   const std::pair<int64_t, int64_t> *linear,
                   llvm::SmallVectorImpl<Value *> &out) {
  unsigned r = g.grid.rank();
  Dims lo(r), hi(r);
  for (unsigned d = 0; d < r; ++d) {
    int64_t s = std::max(b.off[d], g.origin[d]);
    int64_t e = std::min(b.off[d] + b.size[d], g.origin[d] + g.grid.shape[d]);
    if (s >= e) return;
    lo[d] = (s - g.origin[d]) / g.grid.tile[d];
    hi[d] = (e - 1 - g.origin[d]) / g.grid.tile[d];
  }
  Dims c(lo.begin(), lo.end());
  Box piece;
  while (true) {
    int64_t index = 0;
    for (unsigned d = 0; d < r; ++d) index = index * g.grid.counts[d] + c[d];
    if (Value *t = g.tokens[index]) {
      bool keep = true;
      if (linear) {
        g.grid.box(index, piece);
        for (unsigned d = 0; d < r; ++d) piece.off[d] += g.origin[d];
        auto [first, last] = linearRange(piece, rootShape);
        keep = first <= linear->second && linear->first <= last;
      }
      if (keep) out.push_back(t);
    }
    int d = int(r) - 1;
    for (; d >= 0; --d) {
      if (++c[d] <= hi[d]) break;
      c[d] = lo[d];
    }
    if (d < 0) break;
  }
}

/// Appends the tokens a read of region `b` of `home` must wait for: every write
/// into the memory the region covers (through aliases, conservatively).
void lookupTokens(const Home &home, const Box &b, llvm::SmallVectorImpl<Value *> &out) {
  switch (home.kind) {
  case Home::Kind::Root:
    for (const TokenGroup &g : home.groups)
      collectTokens(g, b, home.value->type().shape(), nullptr, out);
    return;
  case Home::Kind::View: {
    Box shifted = b;
    for (size_t d = 0; d < shifted.off.size(); ++d) shifted.off[d] += home.offsets[d];
    lookupTokens(*home.base, shifted, out);
    return;
  }
  case Home::Kind::Reshape: {
    // A reshape keeps the linear element order: the region's elements lie in its
    // linear range, whose bounding box in the base contains every piece it meets.
    auto range = linearRange(b, home.value->type().shape());
    llvm::ArrayRef<int64_t> baseShape = home.base->value->type().shape();
    Box box = boundingBox(range.first, range.second, baseShape);
    if (home.base->kind == Home::Kind::Root) {
      for (const TokenGroup &g : home.base->groups)
        collectTokens(g, box, baseShape, &range, out);
    } else {
      lookupTokens(*home.base, box, out);
    }
    return;
  }
  }
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
  PassStatistic &tileOps, &copyInBytes, &copyOutBytes, &fused;
};

// ---------------------------------------------------------------- the expansion

class Expander {
public:
  Expander(ir::Func &f, const ExpandTilesOptions &options, const target::DeviceSpec &device,
           llvm::raw_ostream *log, Statistics stats)
      : f_(f), ctx_(f.context()), options_(options), device_(device), log_(log),
        stats_(stats) {
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
    if (!ret_ || f_.numOps() == 1) return Outcome::Unchanged;
    anchor_ = &f_.ops().front();

    // Liveness: ops whose results reach the return (users follow their definers).
    llvm::DenseSet<const Operation *> live;
    live.insert(ret_);
    std::vector<Operation *> original;
    for (auto it = f_.ops().rbegin(); it != f_.ops().rend(); ++it) {
      Operation &op = *it;
      original.push_back(&op);
      for (const Value &r : op.results())
        for (const ir::OpOperand &u : r.uses())
          if (live.contains(u.owner())) live.insert(&op);
    }
    for (Operation *op : original) // uses by live ops, for freeing tiles early
      if (live.contains(op))
        for (Value *v : op->operands()) ++info(v).remainingUses;

    for (auto it = original.rbegin(); it != original.rend(); ++it) {
      Operation *op = *it;
      if (op == ret_ || !live.contains(op)) continue;
      if (!expand(*op)) return Outcome::Failed;
      for (Value *v : op->operands()) release(info(v));
    }
    for (unsigned i = 0; i < ret_->numOperands(); ++i) {
      Value *v = returnValue(info(ret_->operand(i)));
      if (!v) return Outcome::Failed;
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

  static Attribute scopeOf(const Operation &op) { return op.attr("sg_scope"); }
  static Step stepOf(const Operation &op) { return {op.loc(), scopeOf(op)}; }

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
    ++stats_.tileOps;
    return n->result();
  }

  Value *newGmTensor(Type type, const Value *nameFrom, Location loc) {
    Operation *n = f_.createOp(ctx_.opDef(OpCode::GmTensor), {}, {type}, ctx_.emptyDict(), loc,
                               anchor_);
    if (nameFrom) n->result()->setNameHint(nameFrom->nameHint());
    return n->result();
  }

  Value *copyIn(const Home &home, const Box &b, MemSpace space, const Step &s) {
    llvm::SmallVector<Value *, 8> operands{home.value};
    lookupTokens(home, b, operands);
    Type t = ctx_.tileType(home.value->type().dtype(), b.size, space);
    stats_.copyInBytes += t.sizeInBytes();
    return emit(OpCode::CopyIn, operands, t, offsetsDict(b.off, s), s.loc);
  }

  Value *copyOut(Value *tile, Value *dst, llvm::ArrayRef<int64_t> offsets, const Step &s) {
    Type t = ctx_.tileType(dst->type().dtype(), tile->type().shape(), MemSpace::GM);
    stats_.copyOutBytes += t.sizeInBytes();
    Value *v = emit(OpCode::CopyOut, {tile, dst}, t, offsetsDict(offsets, s), s.loc);
    return v;
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

  bool opError(const Operation &op, const std::string &msg) {
    ctx_.emitError(op.loc()) << "'" << op.name() << "' op " << msg;
    return false;
  }

  /// The op's vec_tile, or an error saying how to set one (`why` says what for).
  std::optional<llvm::ArrayRef<int64_t>> vecTile(const Operation &op, const char *why = "") {
    Attribute vt = op.attr("vec_tile");
    if (vt && vt.isIntArray()) return vt.getIntArray();
    opError(op, absl::StrCat("has no vec_tile", why,
                             "; call set_vec_tile_shapes(...) before it or write vec_tile = [...]"));
    return std::nullopt;
  }

  /// UB check of a vector op's tile: `buffers` tiles at the largest element size.
  bool checkVec(const Operation &op, llvm::ArrayRef<int64_t> tile, llvm::ArrayRef<int64_t> iter,
                unsigned buffers, const std::string &why = "") {
    unsigned minE = 8, maxE = 1;
    auto see = [&](Type t) {
      minE = std::min(minE, ir::elementSize(t.dtype()));
      maxE = std::max(maxE, ir::elementSize(t.dtype()));
    };
    for (Value *v : op.operands()) see(v->type());
    for (const Value &r : op.results()) see(r.type());
    std::string err = ir::checkVecTile(tile, iter, minE, maxE, buffers, &device_);
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

  /// Makes sure `v` is in GM and returns its home (null after an error).
  Home *materialise(ValueInfo &v) {
    if (v.home) return v.home;
    switch (v.kind) {
    case ValueInfo::Kind::Tiles: {
      if (v.tiles.size() != size_t(v.grid.numTiles)) {
        opError(*v.producer, "lost its tiles before they were written to GM (internal error: "
                             "a bug in expand-tiles)");
        return nullptr;
      }
      Step s{v.producer->loc(), v.scope};
      Home *h = newHome(newGmTensor(v.type, v.producer->result(), v.producer->loc()));
      TokenGroup &g = h->groups.emplace_back();
      g.origin.assign(v.type.rank(), 0);
      g.grid = v.grid;
      g.tokens.resize(v.grid.numTiles);
      Box b;
      for (int64_t i = 0; i < v.grid.numTiles; ++i) {
        v.grid.box(i, b);
        g.tokens[i] = copyOut(v.tiles[i], h->value, b.off, s);
      }
      v.home = h;
      return h;
    }
    case ValueInfo::Kind::Full: {
      const Operation &op = *v.tilingOp;
      auto vt = vecTile(op, " and its value must be written to GM in tiles");
      if (!vt || !checkVec(op, *vt, v.type.shape(), 1)) return nullptr;
      Step s = stepOf(op);
      Home *h = newHome(newGmTensor(v.type, op.result(), op.loc()));
      TokenGroup &g = h->groups.emplace_back();
      g.origin.assign(v.type.rank(), 0);
      g.grid = Grid(v.type.shape(), *vt);
      g.tokens.resize(g.grid.numTiles);
      Box b;
      for (int64_t i = 0; i < g.grid.numTiles; ++i) {
        g.grid.box(i, b);
        Value *t = fullTile(v.fullValue, v.type.dtype(), b.size, v.producer->loc(), s);
        g.tokens[i] = copyOut(t, h->value, b.off, s);
      }
      v.home = h;
      return h;
    }
    case ValueInfo::Kind::Arg:
    case ValueInfo::Kind::Gm: break;
    }
    return v.home;
  }

  /// A UB tile holding region `b` of `v` for step `s`; `reusable`: only this tile
  /// of the consumer needs the region (see the header). Null after an error.
  Value *fetch(ValueInfo &v, const Box &b, const Step &s, bool reusable) {
    if (v.kind == ValueInfo::Kind::Full)
      return fullTile(v.fullValue, v.type.dtype(), b.size, v.producer->loc(), s);
    bool share = options_.fuseLocal && reusable;
    if (share && v.kind == ValueInfo::Kind::Tiles && v.scope == s.scope && !v.tiles.empty()) {
      int64_t index = v.grid.exactIndex(b);
      if (index >= 0) {
        ++stats_.fused;
        return v.tiles[index];
      }
    }
    std::optional<RegionKey> key = share ? keyOf(b) : std::nullopt;
    if (key && !v.shared.empty()) {
      if (Value *t = v.shared.find(*key, s.scope)) {
        ++stats_.fused;
        return t;
      }
    }
    Home *home = materialise(v);
    if (!home) return nullptr;
    Value *t = copyIn(*home, b, MemSpace::UB, s);
    // Worth remembering only if another read may follow (this op's other operand
    // counts: `add %x, %x`).
    if (key && v.remainingUses > 1) v.shared.insert(*key, s.scope, t);
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
  ValueInfo &defineTiles(Operation &op, const Grid &g) {
    ValueInfo &out = info(op.result());
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

  // ---------------------------------------------------------------- ops

  bool expand(Operation &op) {
    switch (op.def().cls) {
    case ir::OpClass::ElementwiseUnary:
    case ir::OpClass::ElementwiseBinary:
    case ir::OpClass::Cast: return expandElementwise(op);
    case ir::OpClass::Reduction: return expandReduction(op);
    case ir::OpClass::Matmul: return expandMatmul(op);
    case ir::OpClass::Transpose: return expandTranspose(op);
    case ir::OpClass::Reshape:
    case ir::OpClass::View: return expandAlias(op);
    case ir::OpClass::Assemble: return expandAssemble(op);
    case ir::OpClass::Concat: return expandConcat(op);
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
      return opError(op, "cannot be expanded to tiles (internal error: unexpected op)");
    }
  }

  bool expandElementwise(Operation &op) {
    auto vt = vecTile(op);
    Type type = op.resultType();
    if (!vt || !checkVec(op, *vt, type.shape(), op.numOperands() + 1)) return false;
    Grid g(type.shape(), *vt);
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
      }
      out.tiles[t] = emit(op.code(), operands, ctx_.tileType(type.dtype(), b.size, MemSpace::UB),
                          attrs, s.loc);
    }
    return true;
  }

  bool expandReduction(Operation &op) {
    auto vt = vecTile(op);
    if (!vt) return false;
    Type inType = op.operandType(0), outType = op.resultType();
    llvm::ArrayRef<int64_t> X = inType.shape();
    llvm::ArrayRef<int64_t> axes = op.attr("axes").getIntArray();
    Attribute keepAttr = op.attr("keepdim");
    bool keepdim = keepAttr && keepAttr.getBool();
    Grid in(X, *vt);
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
                       "combine",
          op.code() == OpCode::Mean ? " and the 1/N tile" : "", ": ");
      if (!checkVec(op, *vt, X, op.code() == OpCode::Mean ? 4 : 3, why)) return false;
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
                         op.code() == OpCode::Mean ? absl::StrCat(", then x 1/", count) : ""));
    Attribute scale = ctx_.floatAttr(1.0 / double(count));
    std::vector<Value *> partials;
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
      for (int64_t c = 0; c < chunks; ++c) {
        ib = region;
        int64_t rest = c;
        for (int i = int(split.size()) - 1; i >= 0; --i) {
          unsigned a = split[i];
          int64_t k = rest % chunkCounts[i];
          rest /= chunkCounts[i];
          ib.off[a] = k * in.tile[a];
          ib.size[a] = std::min(in.tile[a], X[a] - ib.off[a]);
        }
        Value *x = fetch(src, ib, s, true);
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
      if (op.code() == OpCode::Mean) {
        Value *k = fullTile(scale, dtype, keptShape, s.loc, s);
        r = emit(OpCode::Mul, {r, k}, partialType, plainAttrs, s.loc);
      }
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
    auto flag = [&](const char *n) {
      Attribute a = op.attr(n);
      return a && a.getBool();
    };
    bool ta = flag("transpose_a"), tb = flag("transpose_b");
    unsigned r = cType.rank(), ra = aType.rank();
    int64_t M = cType.dim(r - 2), N = cType.dim(r - 1);
    int64_t K = ta ? aType.dim(ra - 2) : aType.dim(ra - 1);
    DType acc = ir::isFloat(aType.dtype()) ? DType::F32 : DType::I32;

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
    Value *c = newGmTensor(cType, op.result(), op.loc());
    Home *cHome = newHome(c);
    defineGm(op, cHome);

    Dims outTile(r, 1);
    outTile[r - 2] = ct.m[1];
    outTile[r - 1] = ct.n[1];
    Grid g(cType.shape(), outTile);
    TokenGroup &tokens = cHome->groups.emplace_back();
    tokens.origin.assign(r, 0);
    tokens.grid = g;
    tokens.tokens.resize(g.numTiles);
    int64_t kSteps = (K + ct.k[1] - 1) / ct.k[1];
    logGrid(op, g,
            absl::StrCat(", K ", K, " in ", kSteps, " steps of ", std::min(ct.k[1], K),
                         K % ct.k[1] ? absl::StrCat(" (tail ", K % ct.k[1], ")") : ""));

    Step s = stepOf(op);
    Attribute attrs = op.attrDict();
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
      for (int64_t k0 = 0; k0 < K; k0 += ct.k[1]) {
        int64_t ks = std::min(ct.k[1], K - k0);
        Box ab = ta ? operandBox(aType.shape(), k0, ks, m0, ms)
                    : operandBox(aType.shape(), m0, ms, k0, ks);
        Box bb = tb ? operandBox(bType.shape(), n0, ns, k0, ks)
                    : operandBox(bType.shape(), k0, ks, n0, ns);
        Value *a = copyIn(*aHome, ab, MemSpace::L1, s);
        Value *b = copyIn(*bHome, bb, MemSpace::L1, s);
        partial = partial ? emit(OpCode::Matmul, {a, b, partial}, accType, attrs, s.loc)
                          : emit(OpCode::Matmul, {a, b}, accType, attrs, s.loc);
      }
      tokens.tokens[t] = copyOut(partial, c, ob.off, s);
    }
    return true;
  }

  bool expandTranspose(Operation &op) {
    auto vt = vecTile(op);
    Type type = op.resultType();
    if (!vt || !checkVec(op, *vt, type.shape(), 2)) return false;
    llvm::ArrayRef<int64_t> perm = op.attr("perm").getIntArray();
    llvm::ArrayRef<int64_t> X = op.operandType(0).shape();
    Grid g(type.shape(), *vt);
    // The input tile's last dim is the vec_tile dim i with perm[i] == last: it
    // must be aligned unless it covers the whole input dim.
    if (!X.empty()) {
      unsigned last = unsigned(X.size() - 1), i = 0;
      while (perm[i] != int64_t(last)) ++i;
      int64_t esize = ir::elementSize(type.dtype());
      int64_t block = device_.buffers.blockBytes;
      int64_t granule = block / std::gcd(block, esize);
      if (g.tile[i] < X[last] && (g.tile[i] * esize) % block != 0) {
        Dims inTile(X.size());
        for (size_t d = 0; d < perm.size(); ++d) inTile[perm[d]] = g.tile[d];
        return opError(op, absl::StrCat(
                               "reads its input in tiles of ", shapeText(inTile), " (vec_tile ",
                               shapeText(*vt), " permuted by ", ctx_.intArrayAttr(perm).str(),
                               "): the input tile's last dimension ", g.tile[i], " x ", esize,
                               " bytes = ", g.tile[i] * esize, " bytes is not a multiple of ",
                               block, " bytes; make vec_tile dimension ", i, " a multiple of ",
                               granule));
      }
    }
    logGrid(op, g);
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
    if (isView) {
      llvm::ArrayRef<int64_t> off = op.attr("offsets").getIntArray();
      h->offsets.assign(off.begin(), off.end());
    }
    defineGm(op, h);
    logOp(op, "GM alias: no tiles");
    return true;
  }

  /// Copies `grid`'s pieces of `v` (v's coordinates) into `dst` at `shift`,
  /// recording the tokens as one group of `home`.
  bool copyPieces(ValueInfo &v, const Grid &grid, llvm::ArrayRef<int64_t> srcOrigin,
                  llvm::ArrayRef<int64_t> shift, Home &home, const Step &s) {
    TokenGroup g;
    g.grid = grid;
    g.tokens.resize(grid.numTiles);
    for (size_t d = 0; d < shift.size(); ++d) g.origin.push_back(srcOrigin[d] + shift[d]);
    Box b;
    Dims at(shift.size());
    for (int64_t t = 0; t < grid.numTiles; ++t) {
      grid.box(t, b);
      for (size_t d = 0; d < b.off.size(); ++d) {
        b.off[d] += srcOrigin[d];
        at[d] = b.off[d] + shift[d];
      }
      Value *x = fetch(v, b, s, true);
      if (!x) return false;
      g.tokens[t] = copyOut(x, home.value, at, s);
    }
    home.groups.push_back(std::move(g));
    return true;
  }

  bool expandAssemble(Operation &op) {
    auto vt = vecTile(op);
    Type type = op.resultType(), srcType = op.operandType(1);
    if (!vt || !checkVec(op, *vt, srcType.shape(), 1)) return false;
    llvm::ArrayRef<int64_t> off = op.attr("offsets").getIntArray();
    unsigned r = type.rank();
    Home *h = newHome(newGmTensor(type, op.result(), op.loc()));
    defineGm(op, h);
    Step s = stepOf(op);
    Dims zero(r, 0);

    // dst outside the src box: per dim, the slabs before and after it within the
    // part of the box not yet covered.
    std::vector<Box> pieces;
    Box rest{zero, Dims(type.shape().begin(), type.shape().end())};
    for (unsigned d = 0; d < r; ++d) {
      int64_t lo = off[d], hi = off[d] + srcType.dim(d);
      int64_t end = rest.off[d] + rest.size[d];
      if (lo > rest.off[d]) {
        Box p = rest;
        p.size[d] = lo - rest.off[d];
        pieces.push_back(p);
      }
      if (hi < end) {
        Box p = rest;
        p.off[d] = hi;
        p.size[d] = end - hi;
        pieces.push_back(p);
      }
      rest.off[d] = lo;
      rest.size[d] = hi - lo;
    }
    int64_t tiles = 0;
    ValueInfo &dst = info(op.operand(0));
    for (const Box &p : pieces) {
      Grid g(p.size, *vt);
      tiles += g.numTiles;
      if (!copyPieces(dst, g, p.off, zero, *h, s)) return false;
    }
    Grid g(srcType.shape(), *vt);
    logGrid(op, g, absl::StrCat(" for src, plus ", tiles, " tiles of dst in ", pieces.size(),
                                " pieces around it"));
    return copyPieces(info(op.operand(1)), g, zero, off, *h, s);
  }

  bool expandConcat(Operation &op) {
    auto vt = vecTile(op);
    Type type = op.resultType();
    if (!vt || !checkVec(op, *vt, type.shape(), 1)) return false;
    int64_t axis = op.attr("axis").getInt();
    unsigned r = type.rank();
    Home *h = newHome(newGmTensor(type, op.result(), op.loc()));
    defineGm(op, h);
    Step s = stepOf(op);
    Dims zero(r, 0), shift(r, 0);
    int64_t tiles = 0;
    for (Value *x : op.operands()) {
      Grid g(x->type().shape(), *vt);
      tiles += g.numTiles;
      if (!copyPieces(info(x), g, zero, shift, *h, s)) return false;
      shift[axis] += x->type().dim(axis);
    }
    logOp(op, absl::StrCat("tile ", shapeText(*vt), ", ", op.numOperands(), " inputs in ", tiles,
                           " tiles copied along axis ", axis));
    return true;
  }

  // ---------------------------------------------------------------- return

  /// The GM tensor to return for `v` (null after an error).
  Value *returnValue(ValueInfo &v) {
    if (v.kind == ValueInfo::Kind::Arg) return v.home->value;
    Home *h = materialise(v);
    if (!h) return nullptr;
    if (h->kind == Home::Kind::Root) return h->value;
    // An alias is copied out so every result is a tensor of its own.
    if (v.returnCopy) return v.returnCopy;
    const Operation &op = *v.tilingOp;
    auto vt = vecTile(op, " and its result is returned, so it is copied to GM in tiles");
    if (!vt || !checkVec(op, *vt, v.type.shape(), 1)) return nullptr;
    Home *copy = newHome(newGmTensor(v.type, op.result(), op.loc()));
    Grid g(v.type.shape(), *vt);
    Dims zero(v.type.rank(), 0);
    if (!copyPieces(v, g, zero, zero, *copy, stepOf(op))) return nullptr;
    v.returnCopy = copy->value;
    return copy->value;
  }

  ir::Func &f_;
  ir::Context &ctx_;
  const ExpandTilesOptions &options_;
  const target::DeviceSpec &device_;
  llvm::raw_ostream *log_;
  Statistics stats_;
  Operation *ret_ = nullptr;
  Operation *anchor_ = nullptr; ///< gm_tensors go before it: the start of the body
  llvm::DenseMap<Value *, ValueInfo *> infos_;
  std::deque<ValueInfo> infoStorage_;
  std::deque<Home> homes_;
  ir::Identifier offsetsId_, scopeId_, valueId_, axesId_, keepdimId_;
};

class ExpandTilesPass final : public Pass {
public:
  explicit ExpandTilesPass(const ExpandTilesOptions &options) : options_(options) {}
  llvm::StringRef argument() const override { return "expand-tiles"; }

  PassResult run(ir::Module &m, PassContext &ctx) override {
    bool changed = false;
    for (ir::Func &f : m.funcs()) {
      Expander e(f, options_, ctx.device, ctx.debugStream(argument()),
                 {tileOps_, copyInBytes_, copyOutBytes_, fused_});
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
};

} // namespace

std::unique_ptr<Pass> createExpandTilesPass(const ExpandTilesOptions &options) {
  return std::make_unique<ExpandTilesPass>(options);
}

void registerExpandTilesPass(PassRegistry &registry) {
  registry.add({"expand-tiles",
                "Lower tensor ops to tile ops (copy_in, compute on tiles, copy_out) using "
                "their vec_tile / cube_tile",
                {{"fuse-local", OptionKind::Bool, true,
                  "reuse a producer's UB tile when a consumer needs exactly it (no GM round "
                  "trip); false: every intermediate goes through GM"}},
                [](const PassOptionValues &v) {
                  return createExpandTilesPass({.fuseLocal = v.getBool("fuse-local")});
                }});
}

} // namespace ptoc::passes
