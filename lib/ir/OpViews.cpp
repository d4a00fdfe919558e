// Typed views of matmuls and reductions (see OpViews.h).
#include "ptoc/ir/OpViews.h"

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

std::optional<ReduceView> ReduceView::of(const Operation &op) {
  if (op.def().cls != OpClass::Reduction) return std::nullopt;
  Attribute axes = op.attr("axes");
  if (!axes || !axes.isIntArray()) return std::nullopt;
  ReduceView v;
  v.axes = axes.getIntArray();
  Attribute keepdim = op.attr("keepdim");
  v.keepdim = keepdim && keepdim.isBool() && keepdim.getBool();
  return v;
}

} // namespace ptoc::ir
