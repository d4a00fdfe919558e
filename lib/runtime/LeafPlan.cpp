// Checking and planning a leaf for the numeric executor: operand/shape/dtype checks,
// loop structure of every op, and arena slots with reuse of dead tiles.
#include "LeafPlan.h"

#include <algorithm>
#include <string>

#include "TileArena.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ptoc/ir/Diagnostics.h"
#include "ptoc/ir/OpDef.h"

namespace ptoc::runtime::exec {
namespace {

using codegen::Leaf;
using codegen::LeafOp;
using ir::OpClass;
using ir::OpCode;

std::string opName(OpCode code) { return ir::OpRegistry::get().def(code).name.str(); }

std::string shapeStr(llvm::ArrayRef<int64_t> s) { return "[" + absl::StrJoin(s, ", ") + "]"; }

Dims rowMajorStrides(llvm::ArrayRef<int64_t> shape) {
  Dims s(shape.size(), 1);
  for (int d = int(shape.size()) - 2; d >= 0; --d) s[d] = s[d + 1] * shape[d + 1];
  return s;
}

/// Checks one leaf and builds its plan; each check names the op.
class Planner {
public:
  Planner(const Leaf &leaf, int leafIndex) : leaf_(leaf), leafIndex_(leafIndex) {}

  absl::StatusOr<LeafPlan> run() {
    plan_.ops.resize(leaf_.ops.size());
    for (size_t i = 0; i < leaf_.ops.size(); ++i)
      if (absl::Status s = planOp(int(i)); !s.ok()) return s;
    allocateSlots();
    return std::move(plan_);
  }

private:
  absl::Status error(int i, const std::string &what) const {
    return ir::internalError(absl::StrCat("leaf ", leafIndex_, " op ", i, " ('",
                                          opName(leaf_.ops[i].code), "'): ", what));
  }

  // A data operand: an earlier op that produced a local tile.
  absl::Status checkData(int i, int operand) const {
    if (operand < 0 || operand >= i)
      return error(i, absl::StrCat("operand ", operand, " is not an earlier op of the leaf"));
    if (plan_.ops[operand].rep == Rep::None)
      return error(i, absl::StrCat("operand ", operand,
                                   " is a copy_out token, not a local tile"));
    return absl::OkStatus();
  }

  absl::Status checkArity(int i, size_t lo, size_t hi) const {
    size_t n = leaf_.ops[i].operands.size();
    if (n < lo || n > hi)
      return error(i, absl::StrCat("has ", n, " operands, expected ",
                                   lo == hi ? absl::StrCat(lo) : absl::StrCat(lo, "..", hi)));
    for (int o : leaf_.ops[i].operands)
      if (absl::Status s = checkData(i, o); !s.ok()) return s;
    return absl::OkStatus();
  }

  absl::Status checkSameRep(int i, int operand) const {
    if (plan_.ops[operand].rep != plan_.ops[i].rep)
      return error(i, absl::StrCat("operand ", operand, " is ",
                                   dtypeStr(plan_.ops[operand].dtype), " but the result is ",
                                   dtypeStr(plan_.ops[i].dtype),
                                   " (floating-point and integer tiles do not mix)"));
    return absl::OkStatus();
  }

  absl::Status checkSameShape(int i, int operand) const {
    if (plan_.ops[operand].shape != plan_.ops[i].shape)
      return error(i, absl::StrCat("operand ", operand, " has shape ",
                                   shapeStr(plan_.ops[operand].shape), " but the result has ",
                                   shapeStr(plan_.ops[i].shape)));
    return absl::OkStatus();
  }

  absl::Status planOp(int i) {
    const LeafOp &op = leaf_.ops[i];
    OpPlan &p = plan_.ops[i];
    p.code = op.code;
    p.dtype = op.dtype;
    p.shape.assign(op.shape.begin(), op.shape.end());
    p.numElements = 1;
    for (int64_t d : op.shape) {
      if (d < 0) return error(i, "has a negative dimension in shape " + shapeStr(op.shape));
      if (d > 0 && p.numElements > kMaxTileElements / d)
        return error(i, absl::StrCat("tile ", shapeStr(op.shape), " exceeds ", kMaxTileElements,
                                     " elements"));
      p.numElements *= d;
    }
    p.rep = op.code == OpCode::CopyOut ? Rep::None : repOf(op.dtype);
    const ir::OpDef &def = ir::OpRegistry::get().def(op.code);
    switch (def.cls) {
    case OpClass::CopyIn:
      for (int o : op.operands)
        if (o < 0 || o >= i)
          return error(i, absl::StrCat("waits for op ", o, ", which is not an earlier op"));
      return useRegion(i);
    case OpClass::CopyOut: {
      if (absl::Status s = checkArity(i, 1, 1); !s.ok()) return s;
      p.x = op.operands[0];
      if (absl::Status s = checkSameShape(i, p.x); !s.ok()) return s;
      p.epilogue = op.epilogue;
      // A dequantising epilogue writes an i32 accumulator as f16 / bf16.
      if (repOf(op.dtype) != plan_.ops[p.x].rep && !p.epilogue.scale)
        return error(i, absl::StrCat("cannot write a ", dtypeStr(plan_.ops[p.x].dtype),
                                     " tile to ", dtypeStr(op.dtype), " GM"));
      return useRegion(i);
    }
    case OpClass::ElementwiseUnary:
    case OpClass::Cast: {
      if (absl::Status s = checkArity(i, 1, 1); !s.ok()) return s;
      p.x = op.operands[0];
      if (absl::Status s = checkSameShape(i, p.x); !s.ok()) return s;
      if (def.cls == OpClass::Cast) {
        p.castMode = op.castModeWritten ? op.castMode
                                        : ir::defaultCastMode(plan_.ops[p.x].dtype, op.dtype);
        p.saturate = op.saturate;
        return absl::OkStatus();
      }
      if (def.boolResult) return absl::OkStatus(); // logical_not: any operand tile
      return checkSameRep(i, p.x);
    }
    case OpClass::ElementwiseBinary:
      p.divIntrinsic = op.divIntrinsic;
      return planBinary(i);
    case OpClass::Select: return planWhere(i);
    case OpClass::Reduction: return planReduction(i);
    case OpClass::Reshape: {
      if (absl::Status s = checkArity(i, 1, 1); !s.ok()) return s;
      p.x = op.operands[0];
      if (plan_.ops[p.x].numElements != p.numElements)
        return error(i, absl::StrCat("reshapes ", plan_.ops[p.x].numElements, " elements into ",
                                     p.numElements));
      return checkSameRep(i, p.x);
    }
    case OpClass::Transpose: return planTranspose(i);
    case OpClass::Full:
      if (absl::Status s = checkArity(i, 0, 0); !s.ok()) return s;
      p.fillValue = ir::roundToDType(op.value, op.dtype);
      return absl::OkStatus();
    case OpClass::Matmul: return planMatmul(i);
    case OpClass::TopKIndices: return planTopKIndices(i);
    case OpClass::Gather: return planGather(i);
    case OpClass::Scatter: return planScatter(i);
    case OpClass::ExpandClone: {
      if (absl::Status s = checkArity(i, 1, 1); !s.ok()) return s;
      p.x = op.operands[0];
      if (absl::Status s = checkSameRep(i, p.x); !s.ok()) return s;
      const Dims &xs = plan_.ops[p.x].shape;
      bool ok = xs.size() == p.shape.size();
      for (size_t d = 0; ok && d < xs.size(); ++d) ok = xs[d] == p.shape[d] || xs[d] == 1;
      if (!ok)
        return error(i, absl::StrCat("cannot expand ", shapeStr(xs), " to ", shapeStr(p.shape)));
      return absl::OkStatus();
    }
    default:
      return error(i, "the executor has no kernel for this op at the tile level");
    }
  }

  absl::Status useRegion(int i) {
    int r = leaf_.ops[i].region;
    if (r < 0) return error(i, absl::StrCat("has region index ", r));
    plan_.ops[i].region = r;
    plan_.numRegionsUsed = std::max(plan_.numRegionsUsed, r + 1);
    return absl::OkStatus();
  }

  absl::Status planBinary(int i) {
    if (absl::Status s = checkArity(i, 2, 2); !s.ok()) return s;
    OpPlan &p = plan_.ops[i];
    p.x = leaf_.ops[i].operands[0];
    p.y = leaf_.ops[i].operands[1];
    // A comparison's operands agree with each other; its result is a bool tile.
    bool boolResult = ir::OpRegistry::get().def(p.code).boolResult;
    if (absl::Status s = checkSameRep(boolResult ? p.x : i, p.y); !s.ok()) return s;
    if (!boolResult)
      if (absl::Status s = checkSameRep(i, p.x); !s.ok()) return s;
    const Dims &sx = plan_.ops[p.x].shape, &sy = plan_.ops[p.y].shape;
    auto b = ir::broadcastShapes(sx, sy);
    if (!b || llvm::ArrayRef<int64_t>(*b) != llvm::ArrayRef<int64_t>(p.shape))
      return error(i, absl::StrCat("operands ", shapeStr(sx), " and ", shapeStr(sy),
                                   " do not broadcast to the result shape ", shapeStr(p.shape)));
    planBroadcast(p, {sx, sy});
    return absl::OkStatus();
  }

  absl::Status planWhere(int i) {
    if (absl::Status s = checkArity(i, 3, 3); !s.ok()) return s;
    OpPlan &p = plan_.ops[i];
    p.x = leaf_.ops[i].operands[0];
    p.y = leaf_.ops[i].operands[1];
    p.z = leaf_.ops[i].operands[2];
    if (plan_.ops[p.x].dtype != ir::DType::Bool)
      return error(i, absl::StrCat("has a ", dtypeStr(plan_.ops[p.x].dtype),
                                   " condition; it must be bool"));
    for (int o : {p.y, p.z})
      if (absl::Status s = checkSameRep(i, o); !s.ok()) return s;
    const Dims &sc = plan_.ops[p.x].shape, &sa = plan_.ops[p.y].shape,
               &sb = plan_.ops[p.z].shape;
    auto ab = ir::broadcastShapes(sa, sb);
    auto b = ab ? ir::broadcastShapes(sc, *ab) : std::nullopt;
    if (!b || llvm::ArrayRef<int64_t>(*b) != llvm::ArrayRef<int64_t>(p.shape))
      return error(i, absl::StrCat("operands ", shapeStr(sc), ", ", shapeStr(sa), " and ",
                                   shapeStr(sb), " do not broadcast to the result shape ",
                                   shapeStr(p.shape)));
    planBroadcast(p, {sc, sa, sb});
    return absl::OkStatus();
  }

  /// The broadcast walk of an elementwise op over its 2 or 3 operand shapes.
  void planBroadcast(OpPlan &p, std::initializer_list<Dims> operandShapes) {
    llvm::SmallVector<Dims, 3> shapes(operandShapes);
    if (shapes.size() < 3) shapes.push_back(Dims{}); // a third operand that never moves
    const Dims &sx = shapes[0], &sy = shapes[1], &sz = shapes[2];
    size_t r = p.shape.size();
    // Operand strides in the result's iteration space (0 where broadcast).
    auto padded = [&](const Dims &s) {
      Dims full(r - s.size(), 1);
      full.append(s.begin(), s.end());
      Dims st = rowMajorStrides(full);
      for (size_t d = 0; d < r; ++d)
        if (full[d] == 1) st[d] = 0;
      return st;
    };
    Dims stx = padded(sx), sty = padded(sy), stz = padded(sz), sto = rowMajorStrides(p.shape);
    BroadcastPlan &bp = p.broadcast;
    // Innermost first, then reversed: merge d into the dimension inside it when all
    // three tiles step through them as one.
    Dims sizes, ax, ay, az, ao;
    for (int d = int(r) - 1; d >= 0; --d) {
      if (p.shape[d] == 1) continue;
      if (!sizes.empty() && ao.back() * sizes.back() == sto[d] &&
          ax.back() * sizes.back() == stx[d] && ay.back() * sizes.back() == sty[d] &&
          az.back() * sizes.back() == stz[d]) {
        sizes.back() *= p.shape[d];
        continue;
      }
      sizes.push_back(p.shape[d]);
      ax.push_back(stx[d]);
      ay.push_back(sty[d]);
      az.push_back(stz[d]);
      ao.push_back(sto[d]);
    }
    if (sizes.empty()) {
      sizes.push_back(1);
      ax.push_back(0);
      ay.push_back(0);
      az.push_back(0);
    }
    bp.sizes.assign(sizes.rbegin(), sizes.rend());
    bp.strideX.assign(ax.rbegin(), ax.rend());
    bp.strideY.assign(ay.rbegin(), ay.rend());
    bp.strideZ.assign(az.rbegin(), az.rend());
  }

  absl::Status planReduction(int i) {
    if (absl::Status s = checkArity(i, 1, 1); !s.ok()) return s;
    const LeafOp &op = leaf_.ops[i];
    OpPlan &p = plan_.ops[i];
    p.x = op.operands[0];
    if (absl::Status s = checkSameRep(i, p.x); !s.ok()) return s;
    const Dims &xs = plan_.ops[p.x].shape;
    p.axes.assign(op.axes.begin(), op.axes.end());
    if (op.axes.empty()) return error(i, "has no reduction axes");
    for (size_t a = 0; a < op.axes.size(); ++a)
      if (op.axes[a] < 0 || op.axes[a] >= int64_t(xs.size()) ||
          (a && op.axes[a] <= op.axes[a - 1]))
        return error(i, absl::StrCat("axes ", shapeStr(op.axes),
                                     " are not strictly ascending dimensions of the operand ",
                                     shapeStr(xs)));
    Dims expect;
    llvm::SmallVector<bool, 4> reducedDim(xs.size(), false);
    for (int64_t a : op.axes) reducedDim[a] = true;
    p.keepdim = op.keepdim;
    ReducePlan &rp = p.reduce;
    for (size_t d = 0; d < xs.size(); ++d) {
      if (!reducedDim[d]) expect.push_back(xs[d]);
      else {
        rp.count *= xs[d];
        if (op.keepdim) expect.push_back(1);
      }
    }
    if (op.count > 0) rp.count = p.givenCount = op.count; // a split mean's last step
    if (expect != p.shape)
      return error(i, absl::StrCat("reducing ", shapeStr(xs), " over axes ", shapeStr(op.axes),
                                   op.keepdim ? " (keepdim)" : "", " gives ", shapeStr(expect),
                                   ", not ", shapeStr(p.shape)));
    // Merge: drop size-1 dimensions, join neighbours of the same kind.
    Dims sizes;
    llvm::SmallVector<bool, 4> kinds;
    for (size_t d = 0; d < xs.size(); ++d) {
      if (xs[d] == 1) continue;
      if (!kinds.empty() && kinds.back() == reducedDim[d]) sizes.back() *= xs[d];
      else {
        sizes.push_back(xs[d]);
        kinds.push_back(reducedDim[d]);
      }
    }
    using P = ReducePlan::Pattern;
    auto is = [&](std::initializer_list<bool> k) {
      return kinds.size() == k.size() && std::equal(k.begin(), k.end(), kinds.begin());
    };
    if (p.numElements == 0 || plan_.ops[p.x].numElements == 0) rp.pattern = P::General;
    else if (kinds.empty() || is({false})) rp.pattern = P::Copy;
    else if (is({true})) { rp.pattern = P::All; rp.reduced = sizes[0]; }
    else if (is({false, true})) { rp.pattern = P::Rows; rp.outer = sizes[0]; rp.reduced = sizes[1]; }
    else if (is({true, false})) { rp.pattern = P::Cols; rp.reduced = sizes[0]; rp.inner = sizes[1]; }
    else if (is({false, true, false})) {
      rp.pattern = P::MidCols;
      rp.outer = sizes[0];
      rp.reduced = sizes[1];
      rp.inner = sizes[2];
    } else {
      rp.pattern = P::General;
    }
    // The general walk also serves integer tiles, whatever the pattern.
    rp.sizes = sizes;
    rp.isReduced = kinds;
    rp.strides = rowMajorStrides(sizes);
    return absl::OkStatus();
  }

  absl::Status planTranspose(int i) {
    if (absl::Status s = checkArity(i, 1, 1); !s.ok()) return s;
    const LeafOp &op = leaf_.ops[i];
    OpPlan &p = plan_.ops[i];
    p.x = op.operands[0];
    if (absl::Status s = checkSameRep(i, p.x); !s.ok()) return s;
    const Dims &xs = plan_.ops[p.x].shape;
    llvm::SmallVector<bool, 4> seen(xs.size(), false);
    bool ok = op.perm.size() == xs.size();
    for (int64_t q : op.perm) {
      if (!ok || q < 0 || q >= int64_t(xs.size()) || seen[q]) {
        ok = false;
        break;
      }
      seen[q] = true;
    }
    if (!ok)
      return error(i, absl::StrCat("perm ", shapeStr(op.perm), " is not a permutation of the ",
                                   xs.size(), " dimensions of ", shapeStr(xs)));
    Dims expect, inStrides = rowMajorStrides(xs);
    p.perm.assign(op.perm.begin(), op.perm.end());
    for (int64_t q : op.perm) expect.push_back(xs[q]);
    if (expect != p.shape)
      return error(i, absl::StrCat("transposing ", shapeStr(xs), " by ", shapeStr(op.perm),
                                   " gives ", shapeStr(expect), ", not ", shapeStr(p.shape)));
    Dims sizes, strides; // innermost first
    for (int d = int(p.shape.size()) - 1; d >= 0; --d) {
      int64_t st = inStrides[op.perm[d]];
      if (p.shape[d] == 1) continue;
      if (!sizes.empty() && strides.back() * sizes.back() == st) {
        sizes.back() *= p.shape[d];
        continue;
      }
      sizes.push_back(p.shape[d]);
      strides.push_back(st);
    }
    if (sizes.empty()) {
      sizes.push_back(1);
      strides.push_back(1);
    }
    p.transpose.sizes.assign(sizes.rbegin(), sizes.rend());
    p.transpose.inStrides.assign(strides.rbegin(), strides.rend());
    return absl::OkStatus();
  }

  absl::Status planMatmul(int i) {
    if (absl::Status s = checkArity(i, 2, 3); !s.ok()) return s;
    const LeafOp &op = leaf_.ops[i];
    OpPlan &p = plan_.ops[i];
    p.x = op.operands[0];
    p.y = op.operands[1];
    const OpPlan &a = plan_.ops[p.x], &b = plan_.ops[p.y];
    if (a.rep != b.rep || a.rep != p.rep)
      return error(i, absl::StrCat("multiplies ", dtypeStr(a.dtype), " by ",
                                   dtypeStr(b.dtype), " into ", dtypeStr(p.dtype),
                                   "; operands must both be floating-point (result f32) or both "
                                   "integer (result i32)"));
    if (a.shape.size() < 2 || b.shape.size() < 2 || p.shape.size() < 2)
      return error(i, absl::StrCat("needs rank >= 2 tiles, got ", shapeStr(a.shape), " x ",
                                   shapeStr(b.shape), " -> ", shapeStr(p.shape)));
    MatmulPlan &mp = p.matmul;
    mp.transposeX = op.transposeA;
    mp.transposeY = op.transposeB;
    mp.rowsX = a.shape[a.shape.size() - 2];
    mp.colsX = a.shape.back();
    mp.rowsY = b.shape[b.shape.size() - 2];
    mp.colsY = b.shape.back();
    mp.m = mp.transposeX ? mp.colsX : mp.rowsX;
    mp.k = mp.transposeX ? mp.rowsX : mp.colsX;
    int64_t kb = mp.transposeY ? mp.colsY : mp.rowsY;
    mp.n = mp.transposeY ? mp.rowsY : mp.colsY;
    llvm::ArrayRef<int64_t> batchX = llvm::ArrayRef<int64_t>(a.shape).drop_back(2);
    llvm::ArrayRef<int64_t> batchY = llvm::ArrayRef<int64_t>(b.shape).drop_back(2);
    llvm::ArrayRef<int64_t> batchOut = llvm::ArrayRef<int64_t>(p.shape).drop_back(2);
    auto batch = ir::broadcastShapes(batchX, batchY);
    if (mp.k != kb || !batch || llvm::ArrayRef<int64_t>(*batch) != batchOut ||
        p.shape[p.shape.size() - 2] != mp.m || p.shape.back() != mp.n)
      return error(i, absl::StrCat("shapes do not multiply: ", shapeStr(a.shape),
                                   mp.transposeX ? "^T" : "", " x ", shapeStr(b.shape),
                                   mp.transposeY ? "^T" : "", " -> ", shapeStr(p.shape)));
    size_t nb = batchOut.size();
    auto batchStrides = [&](llvm::ArrayRef<int64_t> s, int64_t matrix) {
      Dims full(nb - s.size(), 1);
      full.append(s.begin(), s.end());
      Dims st = rowMajorStrides(full);
      for (size_t d = 0; d < nb; ++d) st[d] = full[d] == 1 ? 0 : st[d] * matrix;
      return st;
    };
    mp.batchSizes.assign(batchOut.begin(), batchOut.end());
    mp.batchStrideX = batchStrides(batchX, mp.rowsX * mp.colsX);
    mp.batchStrideY = batchStrides(batchY, mp.rowsY * mp.colsY);
    for (int64_t d : batchOut) mp.batchCount *= d;
    if (op.operands.size() == 3) {
      p.acc = op.operands[2];
      // A bias row (one row of N, in L1) initialises every row of the accumulator.
      mp.accIsRow = plan_.ops[p.acc].numElements == mp.n && p.numElements != mp.n;
      if (!mp.accIsRow)
        if (absl::Status s = checkSameShape(i, p.acc); !s.ok()) return s;
      if (absl::Status s = checkSameRep(i, p.acc); !s.ok()) return s;
    }
    return absl::OkStatus();
  }

  absl::Status checkDim(int i, int64_t dim, const Dims &shape) const {
    if (dim < 0 || dim >= int64_t(shape.size()))
      return error(i, absl::StrCat("dim ", dim, " is not a dimension of ", shapeStr(shape)));
    return absl::OkStatus();
  }

  absl::Status planTopKIndices(int i) {
    if (absl::Status s = checkArity(i, 1, 1); !s.ok()) return s;
    const LeafOp &op = leaf_.ops[i];
    OpPlan &p = plan_.ops[i];
    p.x = op.operands[0];
    p.dim = op.dim;
    p.k = op.k;
    p.largest = op.largest;
    const Dims &xs = plan_.ops[p.x].shape;
    if (absl::Status s = checkDim(i, p.dim, xs); !s.ok()) return s;
    if (p.rep != Rep::Int) return error(i, "produces non-integer indices");
    Dims expect = xs;
    expect[p.dim] = p.k;
    if (p.k < 1 || p.k > xs[p.dim] || expect != p.shape)
      return error(i, absl::StrCat("selecting k = ", p.k, " along dim ", p.dim, " of ",
                                   shapeStr(xs), " does not give ", shapeStr(p.shape)));
    return absl::OkStatus();
  }

  absl::Status planGather(int i) {
    if (absl::Status s = checkArity(i, 2, 2); !s.ok()) return s;
    const LeafOp &op = leaf_.ops[i];
    OpPlan &p = plan_.ops[i];
    p.x = op.operands[0];
    p.y = op.operands[1];
    p.dim = op.dim;
    if (absl::Status s = checkSameRep(i, p.x); !s.ok()) return s;
    const Dims &xs = plan_.ops[p.x].shape, &is = plan_.ops[p.y].shape;
    if (plan_.ops[p.y].rep != Rep::Int)
      return error(i, absl::StrCat("operand ", p.y, " (the index) is not an integer tile"));
    if (absl::Status s = checkDim(i, p.dim, xs); !s.ok()) return s;
    bool ok = xs.size() == is.size() && is == p.shape;
    for (size_t d = 0; ok && d < xs.size(); ++d) ok = int64_t(d) == p.dim || is[d] <= xs[d];
    if (!ok)
      return error(i, absl::StrCat("gathering ", shapeStr(xs), " at an index ", shapeStr(is),
                                   " along dim ", p.dim, " does not give ", shapeStr(p.shape)));
    return absl::OkStatus();
  }

  absl::Status planScatter(int i) {
    if (absl::Status s = checkArity(i, 3, 3); !s.ok()) return s;
    const LeafOp &op = leaf_.ops[i];
    OpPlan &p = plan_.ops[i];
    p.x = op.operands[0];
    p.y = op.operands[1];
    p.acc = op.operands[2];
    p.dim = op.dim;
    p.combine = op.reduce;
    for (int o : {p.x, p.acc})
      if (absl::Status s = checkSameRep(i, o); !s.ok()) return s;
    if (plan_.ops[p.y].rep != Rep::Int)
      return error(i, absl::StrCat("operand ", p.y, " (the index) is not an integer tile"));
    const Dims &xs = plan_.ops[p.x].shape, &is = plan_.ops[p.y].shape,
               &ss = plan_.ops[p.acc].shape;
    if (absl::Status s = checkDim(i, p.dim, xs); !s.ok()) return s;
    bool ok = xs == p.shape && is.size() == xs.size() && ss.size() == xs.size();
    for (size_t d = 0; ok && d < xs.size(); ++d)
      ok = (int64_t(d) == p.dim || is[d] <= xs[d]) && is[d] <= ss[d];
    if (!ok)
      return error(i, absl::StrCat("scattering a source ", shapeStr(ss), " at an index ",
                                   shapeStr(is), " along dim ", p.dim, " into ", shapeStr(xs),
                                   " does not fit or does not give ", shapeStr(p.shape)));
    return absl::OkStatus();
  }

  // ---------------------------------------------------------------- slots

  /// Whether op `i` may write its result over operand `o` (which dies at `i`):
  /// the kernel reads each element before writing the same element.
  bool canRunInPlace(int i, int o) const {
    const OpPlan &p = plan_.ops[i], &q = plan_.ops[o];
    if (q.rep != p.rep || q.numElements != p.numElements) return false;
    switch (ir::OpRegistry::get().def(p.code).cls) {
    case OpClass::ElementwiseUnary:
    case OpClass::Cast:
    case OpClass::Reshape: return o == p.x;
    case OpClass::ElementwiseBinary: return q.shape == p.shape;
    // Accumulating onto the accumulator's own slot; never over an a/b operand.
    case OpClass::Matmul: return o == p.acc && o != p.x && o != p.y;
    default: return false;
    }
  }

  void allocateSlots() {
    size_t n = plan_.ops.size();
    std::vector<int> lastUse(n, -1);
    auto dataOperands = [&](int i) {
      llvm::SmallVector<int, 3> ops;
      const OpPlan &p = plan_.ops[i];
      for (int o : {p.x, p.y, p.acc})
        if (o >= 0 && std::find(ops.begin(), ops.end(), o) == ops.end()) ops.push_back(o);
      return ops;
    };
    for (size_t i = 0; i < n; ++i)
      for (int o : dataOperands(int(i))) lastUse[o] = int(i);

    struct Block {
      int64_t offset, words;
    };
    struct Arena {
      std::vector<Block> free;
      int64_t top = 0;
      Block take(int64_t words) {
        // Best fit among freed blocks, else fresh space at the top.
        int best = -1;
        for (size_t b = 0; b < free.size(); ++b)
          if (free[b].words >= words && (best < 0 || free[b].words < free[best].words))
            best = int(b);
        if (best >= 0) {
          Block blk = free[best];
          free.erase(free.begin() + best);
          return blk;
        }
        Block blk{top, words};
        top += words;
        return blk;
      }
    };
    Arena arenas[2];
    auto arenaOf = [&](Rep r) -> Arena & { return arenas[r == Rep::Int ? 1 : 0]; };
    std::vector<Block> held(n, Block{0, 0});
    std::vector<bool> live(n, false);

    for (size_t i = 0; i < n; ++i) {
      OpPlan &p = plan_.ops[i];
      auto operands = dataOperands(int(i));
      int reused = -1;
      if (p.rep != Rep::None) {
        for (int o : operands)
          if (lastUse[o] == int(i) && live[o] && canRunInPlace(int(i), o)) {
            reused = o;
            break;
          }
        if (reused >= 0) {
          held[i] = held[reused];
          live[reused] = false;
        } else {
          int64_t words = (std::max<int64_t>(p.numElements, 1) + kTileAlignWords - 1) /
                          kTileAlignWords * kTileAlignWords;
          held[i] = arenaOf(p.rep).take(words);
        }
        p.offset = held[i].offset;
        live[i] = true;
      }
      for (int o : operands)
        if (lastUse[o] == int(i) && live[o]) {
          arenaOf(plan_.ops[o].rep).free.push_back(held[o]);
          live[o] = false;
        }
      if (live[i] && lastUse[i] < 0) {
        arenaOf(p.rep).free.push_back(held[i]);
        live[i] = false;
      }
    }
    plan_.floatWords = arenas[0].top;
    plan_.intWords = arenas[1].top;
  }

  const Leaf &leaf_;
  int leafIndex_;
  LeafPlan plan_;
};

} // namespace

absl::StatusOr<LeafPlan> planLeaf(const codegen::Leaf &leaf, int leafIndex) {
  return Planner(leaf, leafIndex).run();
}

} // namespace ptoc::runtime::exec
