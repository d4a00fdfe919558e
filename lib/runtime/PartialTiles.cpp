// Partly valid tiles: valid extents through a leaf's ops, and reductions that skip
// the elements beyond them.
#include "PartialTiles.h"

#include <algorithm>
#include <cstring>

#include "IndexRules.h"
#include "TileKernels.h"
#include "llvm/ADT/STLExtras.h"
#include "ptoc/ir/OpDef.h"

namespace ptoc::runtime::exec {
namespace {

using ir::OpClass;
using ir::OpCode;

/// Narrows `out` (extents of a result of shape `rs`) by an operand of `shape` with
/// extents `e` broadcast to it (numpy rules, aligned from the right): a dimension the
/// operand has as 1 counts whole unless it is empty.
void narrowBroadcast(Extents &out, llvm::ArrayRef<int64_t> rs, llvm::ArrayRef<int64_t> shape,
                     llvm::ArrayRef<int64_t> e) {
  if (e.empty() || shape.size() > rs.size()) return;
  size_t lead = rs.size() - shape.size();
  for (size_t d = 0; d < shape.size(); ++d) {
    int64_t v = e[d];
    if (shape[d] == 1 && rs[lead + d] != 1) v = v == 0 ? 0 : rs[lead + d];
    out[lead + d] = std::min(out[lead + d], v);
  }
}

/// Calls f(element index, inside) for every element of a dense row-major tile.
template <class F> void forEachElement(llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<int64_t> e, F f) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  if (n == 0) return;
  size_t rank = shape.size();
  Dims idx(rank, 0);
  size_t outside = 0; // dimensions whose index is at or beyond its extent
  for (size_t d = 0; d < rank; ++d) outside += e[d] <= 0;
  for (int64_t k = 0; k < n; ++k) {
    f(k, outside == 0);
    for (int d = int(rank) - 1; d >= 0; --d) {
      bool was = idx[d] >= e[d];
      if (++idx[d] < shape[d]) {
        outside += (idx[d] >= e[d]) - was;
        break;
      }
      idx[d] = 0;
      outside += (0 >= e[d]) - was;
    }
  }
}

} // namespace

bool coversAll(llvm::ArrayRef<int64_t> e, llvm::ArrayRef<int64_t> shape) {
  if (e.empty()) return true;
  for (size_t d = 0; d < shape.size() && d < e.size(); ++d)
    if (e[d] < shape[d]) return false;
  return true;
}

template <class T>
void fillBeyond(T *data, llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<int64_t> extents, T fill) {
  if (extents.size() != shape.size()) return;
  forEachElement(shape, extents, [&](int64_t k, bool inside) {
    if (!inside) data[k] = fill;
  });
}
template void fillBeyond<float>(float *, llvm::ArrayRef<int64_t>, llvm::ArrayRef<int64_t>, float);
template void fillBeyond<int64_t>(int64_t *, llvm::ArrayRef<int64_t>, llvm::ArrayRef<int64_t>,
                                  int64_t);

Extents resultExtents(const LeafPlan &plan, int i, llvm::ArrayRef<Extents> valid) {
  const OpPlan &p = plan.ops[i];
  const Dims &rs = p.shape;
  Extents out(rs.begin(), rs.end());
  auto operand = [&](int j) -> const OpPlan & { return plan.ops[j]; };
  auto ext = [&](int j) -> llvm::ArrayRef<int64_t> { return valid[j]; };
  switch (ir::OpRegistry::get().def(p.code).cls) {
  case OpClass::ElementwiseUnary:
  case OpClass::ElementwiseBinary:
  case OpClass::Cast:
  case OpClass::Select:
  case OpClass::ExpandClone:
    for (int j : {p.x, p.y, p.z})
      if (j >= 0) narrowBroadcast(out, rs, operand(j).shape, ext(j));
    break;
  case OpClass::Reduction: {
    const Dims &xs = operand(p.x).shape;
    llvm::ArrayRef<int64_t> e = ext(p.x);
    if (e.empty()) return {};
    out.clear();
    for (size_t d = 0; d < xs.size(); ++d) {
      bool reduced = std::find(p.axes.begin(), p.axes.end(), int64_t(d)) != p.axes.end();
      if (!reduced) out.push_back(e[d]);
      else if (p.keepdim) out.push_back(1); // the fold of its valid elements (or the identity)
    }
    break;
  }
  case OpClass::Reshape: {
    const Dims &xs = operand(p.x).shape;
    llvm::ArrayRef<int64_t> e = ext(p.x);
    if (e.empty()) return {};
    // The dimensions above 1 in order; size-1 ones hold data unless the tile is empty.
    bool empty = llvm::is_contained(e, 0);
    llvm::SmallVector<size_t, 4> big; // xs's dimensions above 1
    for (size_t d = 0; d < xs.size(); ++d)
      if (xs[d] != 1) big.push_back(d);
    size_t k = 0;
    for (size_t d = 0; d < rs.size(); ++d) {
      if (rs[d] == 1) {
        out[d] = empty ? 0 : 1;
        continue;
      }
      if (k >= big.size() || xs[big[k]] != rs[d]) return {}; // not a pure 1-dims reshape
      out[d] = e[big[k++]];
    }
    if (k != big.size()) return {};
    break;
  }
  case OpClass::Transpose: {
    llvm::ArrayRef<int64_t> e = ext(p.x);
    if (e.empty() || p.perm.size() != rs.size()) return {};
    for (size_t d = 0; d < rs.size(); ++d) out[d] = e[p.perm[d]];
    break;
  }
  case OpClass::Matmul: {
    const MatmulPlan &mp = p.matmul;
    const OpPlan &a = operand(p.x), &b = operand(p.y);
    size_t r = rs.size();
    if (r < 2) return {};
    // An operand's valid extents narrow the result's: its matrix dim `fromEnd` places
    // from its last (A's rows, B's columns; the other one when transposed) narrows
    // result dim `outDim`, and its batch dims the result's (a broadcast batch dim of 1
    // stands for the whole result dim, or for none of it when empty).
    auto narrowBy = [&](int operandId, const OpPlan &operandPlan, size_t fromEnd,
                        size_t outDim) {
      if (valid[operandId].empty()) return;
      llvm::ArrayRef<int64_t> v = valid[operandId];
      size_t n = operandPlan.shape.size();
      out[outDim] = std::min(out[outDim], v[n - fromEnd]);
      for (size_t d = 0; d + 2 < n && d + 2 < r; ++d) {
        int64_t e = v[d];
        if (operandPlan.shape[d] == 1 && rs[r - n + d] != 1) e = e == 0 ? 0 : rs[r - n + d];
        out[r - n + d] = std::min(out[r - n + d], e);
      }
    };
    narrowBy(p.x, a, mp.transposeX ? 1 : 2, r - 2);
    narrowBy(p.y, b, mp.transposeY ? 2 : 1, r - 1);
    if (p.acc >= 0) narrowBroadcast(out, rs, operand(p.acc).shape, ext(p.acc));
    break;
  }
  default: return {}; // full, topk_indices, gather, scatter: data everywhere
  }
  if (coversAll(out, rs)) return {};
  return out;
}

void runPartial(const LeafPlan &plan, int i, TileMemory mem, llvm::ArrayRef<Extents> valid,
                PartialScratch &scratch, int64_t meanCount) {
  const OpPlan &p = plan.ops[i];
  OpClass cls = ir::OpRegistry::get().def(p.code).cls;
  if (cls == OpClass::Reduction) {
    const OpPlan &x = plan.ops[p.x];
    llvm::ArrayRef<int64_t> e = valid[p.x];
    int64_t count = meanCount;
    if (count < 0) {
      count = 1;
      for (int64_t a : p.axes) count *= e.empty() ? x.shape[a] : e[a];
    }
    if (e.empty()) {
      if (x.rep == Rep::Float) runReductionOn(plan, i, mem, mem.floats + x.offset, nullptr, count);
      else runReductionOn(plan, i, mem, nullptr, mem.ints + x.offset, count);
      return;
    }
    // The operand's elements beyond its extents become the fold's identity.
    if (x.rep == Rep::Float) {
      scratch.a.assign(mem.floats + x.offset, mem.floats + x.offset + x.numElements);
      fillBeyond(scratch.a.data(), x.shape, e, static_cast<float>(foldIdentity(p.code)));
      runReductionOn(plan, i, mem, scratch.a.data(), nullptr, count);
    } else {
      scratch.ia.assign(mem.ints + x.offset, mem.ints + x.offset + x.numElements);
      fillBeyond(scratch.ia.data(), x.shape, e, intIdentity(p.code, x.dtype));
      runReductionOn(plan, i, mem, nullptr, scratch.ia.data(), count);
    }
    return;
  }
  if (cls == OpClass::Matmul) {
    // Only the valid part of K is summed: zeros beyond either operand's K extent.
    const OpPlan &a = plan.ops[p.x], &b = plan.ops[p.y];
    const MatmulPlan &mp = p.matmul;
    size_t na = a.shape.size(), nb = b.shape.size();
    size_t ka = mp.transposeX ? na - 2 : na - 1, kb = mp.transposeY ? nb - 1 : nb - 2;
    int64_t k = mp.k;
    if (!valid[p.x].empty()) k = std::min(k, valid[p.x][ka]);
    if (!valid[p.y].empty()) k = std::min(k, valid[p.y][kb]);
    if (k >= mp.k) {
      runComputeOp(plan, i, mem);
      return;
    }
    Extents ea(a.shape.begin(), a.shape.end()), eb(b.shape.begin(), b.shape.end());
    ea[ka] = k;
    eb[kb] = k;
    if (p.rep == Rep::Float) {
      scratch.a.assign(mem.floats + a.offset, mem.floats + a.offset + a.numElements);
      scratch.b.assign(mem.floats + b.offset, mem.floats + b.offset + b.numElements);
      fillBeyond(scratch.a.data(), a.shape, ea, 0.0f);
      fillBeyond(scratch.b.data(), b.shape, eb, 0.0f);
      runMatmulOn(plan, i, mem, scratch.a.data(), scratch.b.data(), nullptr, nullptr);
    } else {
      scratch.ia.assign(mem.ints + a.offset, mem.ints + a.offset + a.numElements);
      scratch.ib.assign(mem.ints + b.offset, mem.ints + b.offset + b.numElements);
      fillBeyond(scratch.ia.data(), a.shape, ea, int64_t(0));
      fillBeyond(scratch.ib.data(), b.shape, eb, int64_t(0));
      runMatmulOn(plan, i, mem, nullptr, nullptr, scratch.ia.data(), scratch.ib.data());
    }
    return;
  }
  runComputeOp(plan, i, mem);
}

void PartialCalls::run(const GmMemory &gm, const codegen::Call &call, const LeafPlan &plan,
                       TileMemory mem) {
  size_t n = plan.ops.size();
  valid_.assign(n, Extents());
  folded_.assign(n, -1);
  for (size_t i = 0; i < n; ++i) {
    const OpPlan &op = plan.ops[i];
    if (op.code == OpCode::CopyIn) {
      gm.copyIn(call.regions[op.region], op, mem);
      valid_[i] = gm.readExtents(call.regions[op.region], op);
      continue;
    }
    if (op.code == OpCode::CopyOut) {
      gm.copyOut(call.regions[op.region], op, plan.ops[op.x], mem);
      if (!valid_[op.x].empty()) gm.recordPartialWrite(call.regions[op.region], op, valid_[op.x]);
      continue;
    }
    int64_t meanCount = -1;
    if (op.code == OpCode::Mean && op.givenCount > 0) {
      meanCount = folded_[op.x] >= 0 ? folded_[op.x] : op.givenCount;
    } else if (op.code == OpCode::Sum) {
      const OpPlan &x = plan.ops[op.x];
      int64_t count = 1;
      for (int64_t a : op.axes) count *= valid_[op.x].empty() ? x.shape[a] : valid_[op.x][a];
      folded_[i] = count;
    } else if (op.code == OpCode::Add && folded_[op.x] >= 0 && folded_[op.y] >= 0) {
      folded_[i] = folded_[op.x] + folded_[op.y]; // partial sums combined
    }
    valid_[i] = resultExtents(plan, int(i), valid_);
    runPartial(plan, int(i), mem, valid_, scratch_, meanCount);
  }
}

} // namespace ptoc::runtime::exec
