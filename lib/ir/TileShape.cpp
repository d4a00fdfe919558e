// Tile shapes: the cube_tile attribute and the alignment and capacity rules that
// vec_tile and cube_tile must obey (DESIGN.md, "Passes and their knobs").
#include "ptoc/ir/TileShape.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include "ptoc/ir/Context.h"
#include "ptoc/target/DeviceSpec.h"

namespace ptoc::ir {
namespace {

/// Cube tile sizes are multiples of one 16-element fractal edge.
constexpr int64_t kCubeAlign = 16;
/// The cube accumulates in L0C in fp32 (or int32 for int8 inputs).
constexpr int64_t kAccumulatorBytes = 4;
/// PyPTO's transpose scratch pads the dimension that becomes the output's last to a
/// multiple of 16 elements (pypto-transpose.md, constraint 5: align(t2, 16) when the
/// last two dims swap).
constexpr int64_t kTransposeScratchAlign = 16;
/// How far (in 16-element steps, so 1M elements) checkCubeTile looks either side of a
/// cube L0 size for the nearest divisors of its L1 to propose.
constexpr int64_t kDivisorSearchSteps = 1 << 16;

/// a * b, saturating at INT64_MAX (sizes come from users and may be absurd).
int64_t mulSat(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return std::numeric_limits<int64_t>::max();
  return r;
}

int64_t roundUp(int64_t v, int64_t multiple) {
  return mulSat(v / multiple + (v % multiple != 0), multiple); // v + multiple - 1 may overflow
}

std::string shapeText(llvm::ArrayRef<int64_t> shape) {
  if (shape.empty()) return "()";
  return absl::StrJoin(shape, "x");
}

/// A tile for which `fits` holds, found by halving: leading dims first (largest
/// first), then the last dim in steps of `granule` elements. Rows stay long because
/// the last dim is usually the contiguous axis and often the reduction axis, which
/// should not be split. Empty when none fits.
std::vector<int64_t> proposeVecTile(std::vector<int64_t> tile, int64_t granule,
                                    llvm::function_ref<bool(llvm::ArrayRef<int64_t>)> fits) {
  while (!fits(tile)) {
    auto leading = llvm::MutableArrayRef<int64_t>(tile).drop_back();
    auto largest = std::max_element(leading.begin(), leading.end());
    if (largest != leading.end() && *largest > 1) {
      *largest /= 2;
    } else if (tile.back() > granule) {
      tile.back() = std::max(granule, tile.back() / 2 / granule * granule);
    } else {
      return {};
    }
  }
  return tile;
}

int64_t &cubeValue(CubeTile &t, char axis, int level) {
  std::array<int64_t, 2> &a = axis == 'm' ? t.m : axis == 'k' ? t.k : t.n;
  return a[level];
}

std::string cubeName(char axis, int level) {
  return absl::StrCat(std::string(1, axis), level == 0 ? "L0" : "L1");
}

/// Finds a fix for a broken cube capacity rule by halving, largest first, the sizes
/// in `candidates` (axis, level) until `fits` holds, keeping every size a multiple
/// of 16 and every L0 a divisor of its L1 (an L1 equal to its L0 takes the L0 down
/// with it). Returns e.g. "halve kL0 to 128", or "" when halving cannot fit.
template <typename Fits>
std::string proposeCubeFix(const CubeTile &tile,
                           std::initializer_list<std::pair<char, int>> candidates, Fits fits) {
  CubeTile fix = tile;
  while (!fits(fix)) {
    char bestAxis = 0;
    int bestLevel = 0;
    int64_t bestValue = 0;
    for (auto [axis, level] : candidates) {
      int64_t v = cubeValue(fix, axis, level), l0 = cubeValue(fix, axis, 0);
      int64_t half = v / 2;
      bool ok =
          v % 2 == 0 && half % kCubeAlign == 0 && half > 0 &&
          (level == 0 || half % l0 == 0 || (l0 % (2 * kCubeAlign) == 0 && half % (l0 / 2) == 0));
      if (ok && v > bestValue) {
        bestAxis = axis;
        bestLevel = level;
        bestValue = v;
      }
    }
    if (!bestAxis) return "";
    int64_t &v = cubeValue(fix, bestAxis, bestLevel);
    v /= 2;
    if (int64_t &l0 = cubeValue(fix, bestAxis, 0); v % l0 != 0) l0 /= 2;
  }
  std::vector<std::string> changes;
  CubeTile orig = tile;
  for (char axis : {'m', 'k', 'n'})
    for (int level : {0, 1}) {
      int64_t before = cubeValue(orig, axis, level), after = cubeValue(fix, axis, level);
      if (before == after) continue;
      changes.push_back(absl::StrCat(after * 2 == before ? "halve " : "reduce ",
                                     cubeName(axis, level), " to ", after));
    }
  return absl::StrJoin(changes, " and ");
}

/// Nearest multiples of `granule` below and above `v` (below omitted when 0).
std::string nearestAligned(int64_t v, int64_t granule) {
  int64_t lo = v / granule * granule;
  if (lo > std::numeric_limits<int64_t>::max() - granule) return absl::StrCat(lo);
  int64_t hi = lo + granule;
  if (lo == 0) return absl::StrCat(hi);
  return absl::StrCat(lo, " or ", hi);
}

} // namespace

int64_t vecTileBytes(llvm::ArrayRef<int64_t> tile, unsigned elemSize, int64_t blockBytes) {
  if (tile.empty()) return roundUp(elemSize, blockBytes);
  int64_t bytes = roundUp(mulSat(tile.back(), elemSize), blockBytes);
  for (int64_t d : tile.drop_back()) bytes = mulSat(bytes, d);
  return bytes;
}

std::optional<CubeTile> CubeTile::fromAttr(Attribute a) {
  if (!a.isDict() || a.getDict().size() != 3) return std::nullopt;
  CubeTile t;
  for (auto [key, out] : {std::pair{"m", &t.m}, {"k", &t.k}, {"n", &t.n}}) {
    Attribute v = a.lookup(key);
    if (!v.isIntArray() || v.getIntArray().size() != 2) return std::nullopt;
    (*out)[0] = v.getIntArray()[0];
    (*out)[1] = v.getIntArray()[1];
  }
  return t;
}

Attribute CubeTile::toAttr(Context &ctx) const {
  NamedAttr entries[] = {{ctx.id("m"), ctx.intArrayAttr(m)},
                         {ctx.id("k"), ctx.intArrayAttr(k)},
                         {ctx.id("n"), ctx.intArrayAttr(n)}};
  return ctx.dictAttr(entries, /*sortByName=*/false);
}

std::optional<llvm::SmallVector<int64_t, 4>> adaptVecTile(llvm::ArrayRef<int64_t> tile,
                                                         llvm::ArrayRef<int64_t> iterShape) {
  if (tile.size() > iterShape.size()) // the trailing sizes, as for the row `x[i]`
    return llvm::SmallVector<int64_t, 4>(tile.end() - iterShape.size(), tile.end());
  size_t lead = iterShape.size() - tile.size();
  for (size_t d = 0; d < lead; ++d)
    if (iterShape[d] != 1) return std::nullopt;
  llvm::SmallVector<int64_t, 4> out(lead, 1);
  out.append(tile.begin(), tile.end());
  return out;
}

unsigned vecTileBuffers(OpCode code, unsigned numOperands, unsigned numResults) {
  if (code == OpCode::Assemble || code == OpCode::Concat) return 1;
  return std::max(numOperands + numResults, 1u);
}

bool vecTileNeedsAlignedRows(OpCode code) {
  return code == OpCode::Assemble || code == OpCode::Concat;
}

namespace {

/// The parts of a transpose step (transposeStepBytes): input, output and scratch bytes.
std::array<int64_t, 3> transposeParts(llvm::ArrayRef<int64_t> inTile, llvm::ArrayRef<int64_t> perm,
                                      unsigned elemSize, int64_t blockBytes) {
  std::vector<int64_t> out(inTile.size());
  for (size_t d = 0; d < perm.size() && d < out.size(); ++d)
    out[d] = perm[d] >= 0 && size_t(perm[d]) < inTile.size() ? inTile[perm[d]] : 1;
  int64_t in = vecTileBytes(inTile, elemSize, blockBytes);
  int64_t result = vecTileBytes(out, elemSize, blockBytes);
  int64_t scratch = 0;
  if (!inTile.empty() && perm.size() == inTile.size()) {
    size_t last = inTile.size() - 1;
    auto toLast = size_t(perm[last]); // the input dim that becomes the output's last
    if (toLast != last && toLast < inTile.size()) {
      int64_t granule = blockBytes / std::gcd(blockBytes, int64_t(std::max(elemSize, 1u)));
      scratch = mulSat(roundUp(inTile[toLast], kTransposeScratchAlign),
                       mulSat(roundUp(inTile[last], granule), elemSize));
      for (size_t d = 0; d < last; ++d)
        if (d != toLast) scratch = mulSat(scratch, inTile[d]);
    }
  }
  return {in, result, scratch};
}

int64_t addSat(int64_t a, int64_t b) {
  return a > std::numeric_limits<int64_t>::max() - b ? std::numeric_limits<int64_t>::max()
                                                      : a + b;
}

} // namespace

int64_t transposeStepBytes(llvm::ArrayRef<int64_t> inTile, llvm::ArrayRef<int64_t> perm,
                           unsigned elemSize, int64_t blockBytes) {
  auto [in, out, scratch] = transposeParts(inTile, perm, elemSize, blockBytes);
  return addSat(addSat(in, out), scratch);
}

int64_t VecTileFootprint::bytes(llvm::ArrayRef<int64_t> held, int64_t blockBytes) const {
  unsigned esize = std::max({maxElemSize, minElemSize, 1u});
  if (!transposePerm.empty()) return transposeStepBytes(held, transposePerm, esize, blockBytes);
  return mulSat(vecTileBytes(held, esize, blockBytes), std::max(buffers, 1u));
}

std::string VecTileFootprint::describe(llvm::ArrayRef<int64_t> held, int64_t blockBytes) const {
  unsigned esize = std::max({maxElemSize, minElemSize, 1u});
  if (!transposePerm.empty()) {
    auto [in, out, scratch] = transposeParts(held, transposePerm, esize, blockBytes);
    return absl::StrCat("an input tile of ", in, " bytes, an output tile of ", out, " bytes",
                        scratch ? absl::StrCat(" and ", scratch,
                                               " bytes of scratch (the last dimension moves)")
                                : "",
                        " = ", bytes(held, blockBytes), " bytes");
  }
  unsigned n = std::max(buffers, 1u);
  return absl::StrCat(n, " buffers x ", vecTileBytes(held, esize, blockBytes),
                      " bytes = ", bytes(held, blockBytes), " bytes");
}

std::string checkVecTile(llvm::ArrayRef<int64_t> written, llvm::ArrayRef<int64_t> iterShape,
                         unsigned minElemSize, unsigned maxElemSize, unsigned numBuffers,
                         const target::DeviceSpec *device, bool alignedRows) {
  VecTileFootprint footprint;
  footprint.minElemSize = minElemSize;
  footprint.maxElemSize = maxElemSize;
  footprint.buffers = numBuffers;
  footprint.alignedRows = alignedRows;
  return checkVecTile(written, iterShape, footprint, device);
}

std::string checkVecTile(llvm::ArrayRef<int64_t> written, llvm::ArrayRef<int64_t> iterShape,
                         const VecTileFootprint &footprint, const target::DeviceSpec *device) {
  std::optional<llvm::SmallVector<int64_t, 4>> adapted = adaptVecTile(written, iterShape);
  if (!adapted)
    return absl::StrCat("vec_tile has rank ", written.size(), " but the op iterates over a rank-",
                        iterShape.size(), " shape ", shapeText(iterShape),
                        " whose leading dimensions are not all 1 (a shorter vec_tile "
                        "applies to the trailing dimensions only when the others are 1)",
                        "; give set_vec_tile_shapes one size per dimension");
  llvm::ArrayRef<int64_t> tile = *adapted;
  for (size_t i = 0; i < tile.size(); ++i)
    if (tile[i] <= 0)
      return absl::StrCat("vec_tile ", shapeText(tile), " has size ", tile[i], " in dimension ", i,
                          "; every size must be positive");
  if (tile.empty()) return "";

  unsigned minElemSize = std::max(footprint.minElemSize, 1u);
  int64_t blockBytes = device ? device->buffers.blockBytes : target::BufferSpec{}.blockBytes;
  // Elements per block for the smallest type: the step between aligned sizes.
  int64_t granule = blockBytes / std::gcd(blockBytes, int64_t(minElemSize));
  if (footprint.alignedRows) {
    // Checking the smallest element size suffices: element sizes are powers of two, so
    // a last dim aligned for the smallest is aligned for every larger one.
    int64_t lastBytes = mulSat(tile.back(), minElemSize);
    if (lastBytes % blockBytes != 0)
      return absl::StrCat("vec_tile last dimension ", tile.back(), " x ", minElemSize,
                          " bytes = ", lastBytes, " bytes is not a multiple of ", blockBytes,
                          " bytes (a copy through UB moves whole blocks); use ",
                          nearestAligned(tile.back(), granule));
  }

  if (!device) return "";
  // What the op really holds: a tile never exceeds the iteration space.
  std::vector<int64_t> effective(tile.begin(), tile.end());
  for (size_t i = 0; i < effective.size(); ++i)
    if (iterShape[i] > 0) effective[i] = std::min(effective[i], iterShape[i]);
  int64_t capacity = device->buffers.ub;
  if (footprint.bytes(effective, blockBytes) <= capacity) return "";

  std::string clamped;
  if (!llvm::equal(effective, tile))
    clamped = absl::StrCat(" (", shapeText(effective), " within the iteration shape ",
                           shapeText(iterShape), ")");
  std::string msg = absl::StrCat("vec_tile ", shapeText(tile), clamped, " needs ",
                                 footprint.describe(effective, blockBytes),
                                 " of UB but the device has ", capacity);
  std::vector<int64_t> start = effective;
  start.back() = roundUp(start.back(), granule);
  std::vector<int64_t> proposal = proposeVecTile(start, granule, [&](llvm::ArrayRef<int64_t> t) {
    return footprint.bytes(t, blockBytes) <= capacity;
  });
  if (proposal.empty()) return absl::StrCat(msg, "; no vec_tile fits, use fewer buffers");
  return absl::StrCat(msg, "; try ", shapeText(proposal));
}

WholeTileSplit splitWholeVecTile(llvm::ArrayRef<int64_t> written,
                                 llvm::ArrayRef<int64_t> iterShape,
                                 llvm::ArrayRef<bool> keepWhole,
                                 const VecTileFootprint &footprint,
                                 const target::DeviceSpec &device) {
  WholeTileSplit out;
  std::optional<llvm::SmallVector<int64_t, 4>> adapted = adaptVecTile(written, iterShape);
  if (!adapted || adapted->empty() || adapted->size() != iterShape.size()) return out;
  for (size_t d = 0; d < iterShape.size(); ++d)
    if ((*adapted)[d] < iterShape[d] || iterShape[d] <= 0) return out; // not the whole shape
  // Alignment errors stay errors; only the capacity is repaired.
  if (!checkVecTile(written, iterShape, footprint, nullptr).empty()) return out;
  if (checkVecTile(written, iterShape, footprint, &device).empty()) return out;
  int64_t block = device.buffers.blockBytes;
  int64_t granule = block / std::gcd(block, int64_t(std::max(footprint.minElemSize, 1u)));
  int64_t capacity = device.buffers.ub;
  size_t r = iterShape.size();
  auto kept = [&](size_t d) { return d < keepWhole.size() && keepWhole[d]; };
  llvm::SmallVector<int64_t, 4> tile(iterShape.begin(), iterShape.end());
  // The written last size when it is longer than the shape (aligned, unlike the shape's).
  tile.back() = (*adapted)[r - 1] > iterShape[r - 1] ? roundUp(iterShape[r - 1], granule)
                                                      : iterShape[r - 1];
  auto bytes = [&] { return footprint.bytes(tile, block); };
  out.wholeBytes = bytes();
  while (bytes() > capacity) {
    size_t best = r;
    for (size_t d = 0; d + 1 < r; ++d)
      if (!kept(d) && tile[d] > 1 && (best == r || tile[d] > tile[best])) best = d;
    if (best != r) {
      tile[best] = (tile[best] + 1) / 2;
      continue;
    }
    if (!kept(r - 1) && tile[r - 1] > granule) {
      tile[r - 1] = std::max(granule, tile[r - 1] / 2 / granule * granule);
      continue;
    }
    out.kind = WholeTileSplit::Kind::Impossible;
    out.tile = tile;
    out.bytes = bytes();
    std::vector<size_t> keptDims;
    for (size_t d = 0; d < r; ++d)
      if (kept(d)) keptDims.push_back(d);
    std::string needs = absl::StrCat(" needs ", footprint.describe(tile, block),
                                     " of UB and the device has ", capacity);
    if (keptDims.empty()) {
      out.message = absl::StrCat("vec_tile ", shapeText(*adapted),
                                 " covers the whole iteration shape ", shapeText(iterShape),
                                 " but does not fit UB, and no smaller tile does: the smallest, ",
                                 shapeText(tile), ",", needs, "; use a device with a larger UB");
      return out;
    }
    // The fix: an explicit vec_tile that cuts the kept axes too (a split reduction
    // holds a chunk, its partial and the running combine: 3 tiles, 4 for mean).
    std::vector<int64_t> start(tile.begin(), tile.end());
    start.back() = roundUp(start.back(), granule);
    VecTileFootprint split = footprint;
    split.buffers = std::max(footprint.buffers + 1, 3u);
    std::vector<int64_t> fix = proposeVecTile(start, granule, [&](llvm::ArrayRef<int64_t> t) {
      return split.bytes(t, block) <= capacity;
    });
    out.message = absl::StrCat(
        "vec_tile ", shapeText(*adapted), " covers the whole iteration shape ",
        shapeText(iterShape), " but does not fit UB; ptoc splits such a tile keeping the "
        "reduced dimension", keptDims.size() == 1 ? " " : "s ", absl::StrJoin(keptDims, ", "),
        " whole, yet the smallest such tile ", shapeText(tile), needs,
        fix.empty() ? "; no vec_tile fits, even with the reduction split"
                    : absl::StrCat("; split the reduction with an explicit vec_tile such as ",
                                   shapeText(fix), " (partials are combined across tiles)"));
    return out;
  }
  out.kind = WholeTileSplit::Kind::Split;
  out.tile = tile;
  out.bytes = bytes();
  return out;
}

std::string checkCubeTile(const CubeTile &tile, DType in, const target::DeviceSpec *device) {
  const target::BufferSpec defaults;
  const target::BufferSpec &buffers = device ? device->buffers : defaults;
  CubeTile t = tile;

  for (char axis : {'m', 'k', 'n'}) {
    int64_t l0 = cubeValue(t, axis, 0), l1 = cubeValue(t, axis, 1);
    if (l0 <= 0 || l1 <= 0)
      return absl::StrCat("cube_tile ", std::string(1, axis), " = [", l0, ", ", l1,
                          "]: sizes must be positive");
  }
  for (char axis : {'m', 'k', 'n'})
    for (int level : {0, 1}) {
      int64_t v = cubeValue(t, axis, level);
      if (v % kCubeAlign != 0)
        return absl::StrCat("cube_tile ", cubeName(axis, level), " = ", v, " is not a multiple of ",
                            kCubeAlign, " elements; use ", nearestAligned(v, kCubeAlign));
    }
  for (char axis : {'m', 'k', 'n'}) {
    int64_t l0 = cubeValue(t, axis, 0), l1 = cubeValue(t, axis, 1);
    if (l1 % l0 == 0) continue;
    // The aligned divisors of L1 nearest to the requested L0. Both are multiples of
    // 16, so the candidates are L0 -+ 16 k; they are searched at most
    // kDivisorSearchSteps steps either way, which covers every tile that could fit a
    // buffer, so that an absurd L1 (1e15 elements) does not make the check run for
    // hours. Past that, 16 and L1 itself, which always divide L1, stand in.
    int64_t below = 0, above = 0;
    if (l0 > l1) {
      below = l1;
    } else {
      below = kCubeAlign; // L0 > 16 here: 16 divides every aligned L1
      for (int64_t d = l0 - kCubeAlign, step = 0; d > kCubeAlign && step < kDivisorSearchSteps;
           d -= kCubeAlign, ++step)
        if (l1 % d == 0) {
          below = d;
          break;
        }
      above = l1;
      for (int64_t d = l0 + kCubeAlign, step = 0; d < l1 && step < kDivisorSearchSteps;
           d += kCubeAlign, ++step)
        if (l1 % d == 0) {
          above = d;
          break;
        }
    }
    std::string options =
        below && above ? absl::StrCat(below, " or ", above) : absl::StrCat(below ? below : above);
    return absl::StrCat("cube_tile ", cubeName(axis, 0), " = ", l0, " does not divide ",
                        cubeName(axis, 1), " = ", l1, "; the L0 size must divide the L1 size, use ",
                        cubeName(axis, 0), " = ", options);
  }

  const int64_t esize = elementSize(in);
  const std::string typeBytes = absl::StrCat(esize);
  auto l0aBytes = [&](const CubeTile &c) { return mulSat(mulSat(c.m[0], c.k[0]), esize); };
  auto l0bBytes = [&](const CubeTile &c) { return mulSat(mulSat(c.k[0], c.n[0]), esize); };
  auto l0cBytes = [&](const CubeTile &c) {
    return mulSat(mulSat(c.m[0], c.n[0]), kAccumulatorBytes);
  };
  auto l1Bytes = [&](const CubeTile &c) {
    int64_t elems = mulSat(c.m[1], c.k[1]);
    int64_t other = mulSat(c.k[1], c.n[1]);
    elems = elems > std::numeric_limits<int64_t>::max() - other
                ? std::numeric_limits<int64_t>::max()
                : elems + other;
    return mulSat(elems, esize);
  };
  auto withFix = [](std::string msg, const std::string &fix) {
    return fix.empty() ? absl::StrCat(msg, "; use smaller tile sizes")
                       : absl::StrCat(msg, "; ", fix);
  };

  // PyPTO's capacity rules (set_cube_tile_shapes): one tile of each operand fits its
  // L0 buffer, both L1 tiles fit L1 together. Room for a second copy of each (double
  // buffering: the next tile loads while the cube reads this one) is codegen's choice:
  // a leaf whose buffers leave none runs single-buffered, and the summary says so.
  if (int64_t need = l0aBytes(t), avail = buffers.l0a; need > avail)
    return withFix(absl::StrCat("cube_tile needs mL0 x kL0 x ", typeBytes, " bytes = ", t.m[0], "x",
                                t.k[0], "x", typeBytes, " = ", need,
                                " bytes of L0A, but the device has ", avail),
                   proposeCubeFix(t, {{'k', 0}, {'m', 0}},
                                  [&](const CubeTile &c) { return l0aBytes(c) <= avail; }));
  if (int64_t need = l0bBytes(t), avail = buffers.l0b; need > avail)
    return withFix(absl::StrCat("cube_tile needs kL0 x nL0 x ", typeBytes, " bytes = ", t.k[0], "x",
                                t.n[0], "x", typeBytes, " = ", need,
                                " bytes of L0B, but the device has ", avail),
                   proposeCubeFix(t, {{'k', 0}, {'n', 0}},
                                  [&](const CubeTile &c) { return l0bBytes(c) <= avail; }));
  if (int64_t need = l0cBytes(t), avail = buffers.l0c; need > avail)
    return withFix(absl::StrCat("cube_tile needs mL0 x nL0 x 4 bytes (fp32 accumulator) = ", t.m[0],
                                "x", t.n[0], "x4 = ", need, " bytes of L0C, but the device has ",
                                avail),
                   proposeCubeFix(t, {{'n', 0}, {'m', 0}},
                                  [&](const CubeTile &c) { return l0cBytes(c) <= avail; }));
  if (int64_t need = l1Bytes(t), avail = buffers.l1; need > avail)
    return withFix(absl::StrCat("cube_tile needs (mL1 x kL1 + kL1 x nL1) x ", typeBytes,
                                " bytes = (", t.m[1], "x", t.k[1], " + ", t.k[1], "x", t.n[1],
                                ") x ", typeBytes, " = ", need,
                                " bytes of L1, but the device has ", avail),
                   proposeCubeFix(t, {{'k', 1}, {'m', 1}, {'n', 1}},
                                  [&](const CubeTile &c) { return l1Bytes(c) <= avail; }));
  return "";
}

} // namespace ptoc::ir
