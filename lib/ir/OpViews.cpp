// Typed views of matmuls, reductions and vector tiles (see OpViews.h).
#include "ptoc/ir/OpViews.h"

#include <algorithm>

#include "ptoc/ir/OpDef.h"

namespace ptoc::ir {

std::optional<MatmulView> MatmulView::of(const Operation &op) {
  if (op.def().cls != OpClass::Matmul || op.numOperands() < 2 || op.numResults() != 1)
    return std::nullopt;
  Type a = op.operandType(0), c = op.resultType();
  if (a.rank() < 2 || c.rank() < 2) return std::nullopt;
  MatmulView v;
  auto flag = [&](const char *name) {
    Attribute attr = op.attr(name);
    return attr && attr.isBool() && attr.getBool();
  };
  v.transposeA = flag("transpose_a");
  v.transposeB = flag("transpose_b");
  v.m = c.dim(c.rank() - 2);
  v.n = c.dim(c.rank() - 1);
  v.k = v.transposeA ? a.dim(a.rank() - 2) : a.dim(a.rank() - 1);
  v.in = a.dtype();
  v.out = c.dtype();
  v.acc = isFloat(v.in) ? DType::F32 : DType::I32;
  if (Attribute t = op.attr("cube_tile")) v.tile = CubeTile::fromAttr(t);
  return v;
}

std::optional<TopKView> TopKView::of(const Operation &op) {
  if (op.def().cls != OpClass::TopK && op.def().cls != OpClass::TopKIndices) return std::nullopt;
  Attribute k = op.attr("k"), dim = op.attr("dim"), largest = op.attr("largest");
  if (!k || !k.isInt() || !dim || !dim.isInt()) return std::nullopt;
  TopKView v;
  v.k = k.getInt();
  v.dim = dim.getInt();
  if (largest && largest.isBool()) v.largest = largest.getBool();
  return v;
}

std::optional<ScatterView> ScatterView::of(const Operation &op) {
  if (op.def().cls != OpClass::Scatter) return std::nullopt;
  Attribute dim = op.attr("dim");
  if (!dim || !dim.isInt()) return std::nullopt;
  ScatterView v;
  v.dim = dim.getInt();
  if (Attribute r = op.attr("reduce"); r && r.isString())
    v.reduce = r.getString() == "add"        ? ScatterReduce::Add
               : r.getString() == "multiply" ? ScatterReduce::Multiply
                                             : ScatterReduce::Replace;
  return v;
}

std::optional<ReduceView> ReduceView::of(const Operation &op) {
  if (op.def().cls != OpClass::Reduction) return std::nullopt;
  Attribute axes = op.attr("axes");
  if (!axes || !axes.isIntArray()) return std::nullopt;
  ReduceView v;
  v.axes = axes.getIntArray();
  Attribute keepdim = op.attr("keepdim");
  v.keepdim = keepdim && keepdim.isBool() && keepdim.getBool();
  if (Attribute count = op.attr("count"); count && count.isInt()) v.count = count.getInt();
  return v;
}

CastView CastView::of(const Operation &op) {
  CastView v;
  DType from = op.numOperands() ? op.operandType(0).dtype() : DType::F32;
  DType to = op.numResults() ? op.resultType().dtype() : DType::F32;
  v.mode = defaultCastMode(from, to);
  if (Attribute m = op.attr("mode"); m && m.isString())
    if (std::optional<CastMode> parsed = parseCastMode(m.getString())) v.mode = *parsed;
  if (Attribute s = op.attr("saturate"); s && s.isBool()) v.saturate = s.getBool();
  return v;
}

VecTileView VecTileView::of(const Operation &op, llvm::ArrayRef<Type> operands,
                            llvm::ArrayRef<Type> results) {
  VecTileView v;
  if (Attribute t = op.attr("vec_tile"); t && t.isIntArray()) v.tile = t.getIntArray();
  llvm::ArrayRef<int64_t> iter = iterationShape(op.def(), operands, results);
  v.iter.assign(iter.begin(), iter.end());
  unsigned lo = 8, hi = 1;
  auto see = [&](Type t) {
    lo = std::min(lo, elementSize(t.dtype()));
    hi = std::max(hi, elementSize(t.dtype()));
  };
  for (Type t : operands) see(t);
  for (Type t : results) see(t);
  v.minElemSize = std::min(lo, hi);
  v.maxElemSize = hi;
  v.buffers = vecTileBuffers(op.code(), unsigned(operands.size()), unsigned(results.size()));
  v.alignedRows = vecTileNeedsAlignedRows(op.code());
  if (op.def().cls == OpClass::Transpose)
    if (Attribute perm = op.attr("perm"); perm && perm.isIntArray() &&
                                          perm.getIntArray().size() == v.iter.size())
      v.transposePerm.assign(perm.getIntArray().begin(), perm.getIntArray().end());
  v.keepWhole.assign(v.iter.size(), false);
  if (std::optional<ReduceView> reduce = ReduceView::of(op))
    for (int64_t a : reduce->axes)
      if (a >= 0 && a < int64_t(v.iter.size())) v.keepWhole[a] = true;
  return v;
}

VecTileView VecTileView::of(const Operation &op) {
  llvm::SmallVector<Type, 4> operands, results;
  for (unsigned i = 0; i < op.numOperands(); ++i) operands.push_back(op.operandType(i));
  for (const Value &r : op.results()) results.push_back(r.type());
  return of(op, operands, results);
}

std::string VecTileView::check(llvm::ArrayRef<int64_t> candidate,
                               const target::DeviceSpec *device) const {
  return check(candidate, iter, buffers, device);
}

std::string VecTileView::check(llvm::ArrayRef<int64_t> candidate, llvm::ArrayRef<int64_t> over,
                               unsigned numBuffers, const target::DeviceSpec *device) const {
  return checkVecTile(candidate, over, footprint(numBuffers), device);
}

WholeTileSplit VecTileView::splitWhole(llvm::ArrayRef<int64_t> candidate,
                                       const target::DeviceSpec &device) const {
  return splitWholeVecTile(candidate, iter, keepWhole, footprint(buffers), device);
}

VecTileFootprint VecTileView::footprint(unsigned numBuffers) const {
  VecTileFootprint f;
  f.minElemSize = minElemSize;
  f.maxElemSize = maxElemSize;
  f.buffers = numBuffers;
  f.alignedRows = alignedRows;
  f.transposePerm = transposePerm;
  return f;
}

} // namespace ptoc::ir
