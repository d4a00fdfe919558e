// The whole-tensor reference evaluator (double math, one rounding per op; loops run
// their bodies iteration by iteration), random test tensors and tolerance-aware
// comparison.
#include "ptoc/runtime/Reference.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"

#include "ptoc/ir/DivPrecision.h"
#include "ptoc/ir/Fixpipe.h"
#include "ptoc/ir/OpViews.h"
#include "ptoc/ir/Func.h"
#include "ptoc/ir/Level.h"
#include "ptoc/ir/LoopView.h"
#include "ptoc/ir/Module.h"
#include "ptoc/ir/OpDef.h"
#include "ptoc/ir/Operation.h"
#include "ptoc/runtime/TensorRef.h"

#include "IndexRules.h"

namespace ptoc::runtime {
namespace {

using ir::DType;
using ir::OpClass;
using ir::OpCode;
using Shape = llvm::SmallVector<int64_t, 4>;

/// A tensor while the reference runs: values already rounded to `dtype`, kept as
/// doubles so every op computes in double.
struct Dense {
  DType dtype = DType::F32;
  Shape shape;
  std::vector<double> data;
  /// Per dimension, how much from the origin holds data (a loop window's valid_shape
  /// and what is computed from it); empty when all of it does. Reductions fold only
  /// the valid elements and a matmul sums over the valid part of K only.
  Shape valid;
};

/// Extent `d` of `x` (its size when whole).
int64_t extentOf(const Dense &x, size_t d) { return x.valid.empty() ? x.shape[d] : x.valid[d]; }

/// `e` for a tensor of `shape`, or empty when it covers all of it.
Shape partOrWhole(Shape e, llvm::ArrayRef<int64_t> shape) {
  for (size_t d = 0; d < shape.size() && d < e.size(); ++d)
    if (e[d] < shape[d]) return e;
  return {};
}

/// Narrows `out` (extents of a result of shape `rs`) by operand `x` broadcast to it:
/// a dimension `x` has as 1 counts whole unless it is empty.
void narrowBroadcast(Shape &out, llvm::ArrayRef<int64_t> rs, const Dense &x) {
  if (x.valid.empty() || x.shape.size() > rs.size()) return;
  size_t lead = rs.size() - x.shape.size();
  for (size_t d = 0; d < x.shape.size(); ++d) {
    int64_t v = x.valid[d];
    if (x.shape[d] == 1 && rs[lead + d] != 1) v = v == 0 ? 0 : rs[lead + d];
    out[lead + d] = std::min(out[lead + d], v);
  }
}

int64_t product(llvm::ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

/// Row-major strides of a shape.
Shape rowMajorStrides(llvm::ArrayRef<int64_t> shape) {
  Shape s(shape.size(), 1);
  for (int i = int(shape.size()) - 2; i >= 0; --i) s[i] = s[i + 1] * shape[i + 1];
  return s;
}

/// Strides that read an operand of shape `in` broadcast to `out` (numpy rules,
/// aligned from the right): 0 for dimensions the operand lacks or has as 1.
Shape broadcastStrides(llvm::ArrayRef<int64_t> in, llvm::ArrayRef<int64_t> out) {
  Shape inStrides = rowMajorStrides(in);
  Shape s(out.size(), 0);
  size_t lead = out.size() - in.size();
  for (size_t d = 0; d < in.size(); ++d)
    s[lead + d] = in[d] == 1 && out[lead + d] != 1 ? 0 : inStrides[d];
  return s;
}

/// Calls f(outIndex, offsets...) for every element of `shape` in row-major order,
/// where each offset walks its own strides from its own base (an odometer, so no
/// division per element).
template <size_t N, typename F>
void walk(llvm::ArrayRef<int64_t> shape, const std::array<const Shape *, N> &strides,
          std::array<int64_t, N> offsets, F &&f) {
  int64_t total = product(shape);
  if (total == 0) return;
  size_t rank = shape.size();
  Shape idx(rank, 0);
  for (int64_t o = 0; o < total; ++o) {
    f(o, offsets);
    for (int d = int(rank) - 1; d >= 0; --d) {
      ++idx[d];
      for (size_t k = 0; k < N; ++k) offsets[k] += (*strides[k])[d];
      if (idx[d] < shape[d]) break;
      for (size_t k = 0; k < N; ++k) offsets[k] -= (*strides[k])[d] * shape[d];
      idx[d] = 0;
    }
  }
}

std::string valueName(const ir::Value *v, unsigned fallback) {
  if (v->nameHint()) return "%" + v->nameHint().str().str();
  return absl::StrCat("%arg", fallback);
}

std::string opWhere(const ir::Operation &op) {
  return absl::StrCat("'", op.name().str(), "' at ", op.loc().str());
}

Dense fromHost(const HostTensor &t) {
  Dense d;
  d.dtype = t.dtype();
  d.shape.assign(t.shape().begin(), t.shape().end());
  d.data.resize(t.numElements());
  for (int64_t i = 0; i < t.numElements(); ++i) d.data[i] = t.get(i);
  return d;
}

HostTensor toHost(const Dense &d) {
  HostTensor t(d.dtype, d.shape);
  for (int64_t i = 0; i < int64_t(d.data.size()); ++i) t.set(i, d.data[i]);
  return t;
}

Dense make(const ir::Operation &op) {
  Dense d;
  d.dtype = op.resultType().dtype();
  d.shape.assign(op.resultType().shape().begin(), op.resultType().shape().end());
  d.data.assign(product(d.shape), 0.0);
  return d;
}

void roundAll(Dense &d) {
  for (double &v : d.data) v = ir::roundToDType(v, d.dtype);
}

/// The shape a loop body sees a window as: its argument type `t`, where a dynamic
/// dimension takes the window's resolved size (`windowSizes` as written, `resolved`
/// for this run; ir::bodyDimsOfWindow). `t`'s own shape when the two do not match (the
/// caller reports that).
Shape bodyShapeOf(ir::Type t, llvm::ArrayRef<int64_t> windowSizes, llvm::ArrayRef<int64_t> resolved) {
  std::optional<llvm::SmallVector<int, 4>> dims = ir::bodyDimsOfWindow(t.shape(), windowSizes);
  if (!dims) return Shape(t.shape().begin(), t.shape().end());
  Shape out;
  for (int d : *dims) out.push_back(d < 0 ? 1 : resolved[d]);
  return out;
}

/// Copies a strided window of `in` (base offset and strides per output dimension)
/// into the row-major `out`.
void gather(const Dense &in, int64_t base, const Shape &strides, Dense &out) {
  walk<1>(out.shape, {&strides}, {base},
          [&](int64_t o, const std::array<int64_t, 1> &off) { out.data[o] = in.data[off[0]]; });
}

int64_t offsetOf(llvm::ArrayRef<int64_t> offsets, const Shape &strides) {
  int64_t base = 0;
  for (size_t d = 0; d < offsets.size(); ++d) base += offsets[d] * strides[d];
  return base;
}

Dense evalUnary(const ir::Operation &op, const Dense &x) {
  Dense r = make(op);
  double (*fn)(double) = op.def().unaryFn;
  for (size_t i = 0; i < r.data.size(); ++i) r.data[i] = ir::roundToDType(fn(x.data[i]), r.dtype);
  return r;
}

Dense evalBinary(const ir::Operation &op, const Dense &a, const Dense &b) {
  Dense r = make(op);
  double (*fn)(double, double) = op.def().binaryFn;
  Shape sa = broadcastStrides(a.shape, r.shape), sb = broadcastStrides(b.shape, r.shape);
  bool intrinsic = op.code() == ir::OpCode::Div &&
                   ir::divPrecisionOf(op) == ir::DivPrecision::Intrinsic;
  walk<2>(r.shape, {&sa, &sb}, {0, 0}, [&](int64_t o, const std::array<int64_t, 2> &off) {
    r.data[o] = intrinsic ? ir::intrinsicDivide(a.data[off[0]], b.data[off[1]], r.dtype)
                          : ir::roundToDType(fn(a.data[off[0]], b.data[off[1]]), r.dtype);
  });
  return r;
}

Dense evalWhere(const ir::Operation &op, const Dense &c, const Dense &a, const Dense &b) {
  Dense r = make(op);
  Shape sc = broadcastStrides(c.shape, r.shape), sa = broadcastStrides(a.shape, r.shape),
        sb = broadcastStrides(b.shape, r.shape);
  walk<3>(r.shape, {&sc, &sa, &sb}, {0, 0, 0}, [&](int64_t o, const std::array<int64_t, 3> &off) {
    r.data[o] = c.data[off[0]] != 0 ? a.data[off[1]] : b.data[off[2]];
  });
  return r;
}

Dense evalReduction(const ir::Operation &op, const Dense &x) {
  Dense r = make(op);
  ir::ReduceView reduce = *ir::ReduceView::of(op); // the verifier checked its axes
  llvm::ArrayRef<int64_t> axes = reduce.axes;
  bool keepdim = reduce.keepdim;
  // Output strides seen from the input's dimensions: 0 on reduced axes.
  Shape outStrides = rowMajorStrides(r.shape);
  Shape strides(x.shape.size(), 0);
  int64_t count = 1;
  for (size_t d = 0, o = 0; d < x.shape.size(); ++d) {
    bool reduced = std::binary_search(axes.begin(), axes.end(), int64_t(d));
    if (reduced) count *= x.shape[d];
    if (!reduced)
      strides[d] = outStrides[o++];
    else if (keepdim)
      ++o;
  }
  OpCode code = op.code();
  std::fill(r.data.begin(), r.data.end(), foldIdentity(code));
  // Only the valid elements are folded (all of them when x is whole).
  Shape inStrides = rowMajorStrides(x.shape), extents(x.shape.size());
  for (size_t d = 0; d < x.shape.size(); ++d) extents[d] = extentOf(x, d);
  if (!x.valid.empty()) {
    count = 1;
    for (int64_t a : axes) count *= extents[a];
  }
  walk<2>(extents, {&inStrides, &strides}, {0, 0}, [&](int64_t, const std::array<int64_t, 2> &off) {
    double &acc = r.data[off[1]];
    double v = x.data[off[0]];
    switch (code) {
    case OpCode::Amax: acc = std::isnan(acc) || std::isnan(v) ? NAN : std::max(acc, v); break;
    case OpCode::Amin: acc = std::isnan(acc) || std::isnan(v) ? NAN : std::min(acc, v); break;
    default: acc += v; break;
    }
  });
  if (code == OpCode::Mean) {
    double n = double(reduce.count > 0 ? reduce.count : count);
    for (double &v : r.data) v /= n; // 0 / 0: NaN, a mean of no elements
  }
  roundAll(r);
  // The result holds data along its kept dimensions as far as x does.
  if (!x.valid.empty()) {
    Shape e;
    for (size_t d = 0; d < x.shape.size(); ++d) {
      bool reduced = std::binary_search(axes.begin(), axes.end(), int64_t(d));
      if (!reduced) e.push_back(extents[d]);
      else if (keepdim) e.push_back(1);
    }
    r.valid = partOrWhole(e, r.shape);
  }
  return r;
}

/// `bias`: PyPTO's bias_tensor, one row of N added to every row before the epilogue.
Dense evalMatmul(const ir::Operation &op, const Dense &a, const Dense &b, const Dense *bias) {
  Dense r = make(op);
  ir::MatmulView mm = *ir::MatmulView::of(op); // the verifier checked its shapes
  bool ta = mm.transposeA, tb = mm.transposeB;
  ir::FixpipeEpilogue epilogue = ir::FixpipeEpilogue::of(op);
  int64_t m = mm.m, n = mm.n, k = mm.k;
  // Only the valid part of K is summed (the stored K stays the stride).
  int64_t kValid = k;
  if (!a.valid.empty()) kValid = std::min(kValid, a.valid[a.shape.size() - (ta ? 2 : 1)]);
  if (!b.valid.empty()) kValid = std::min(kValid, b.valid[b.shape.size() - (tb ? 1 : 2)]);
  // Strides of element (i, kk) of the left operand (as used, after any transpose)
  // within one batch matrix, and of (kk, j) of the right one.
  int64_t aI = ta ? 1 : k, aK = ta ? m : 1;
  int64_t bK = tb ? 1 : n, bJ = tb ? k : 1;
  Shape batch(r.shape.begin(), r.shape.end() - 2);
  Shape aBatch(a.shape.begin(), a.shape.end() - 2), bBatch(b.shape.begin(), b.shape.end() - 2);
  // Batch strides in units of whole matrices (0 where a batch dim broadcasts).
  Shape sa = broadcastStrides(aBatch, batch), sb = broadcastStrides(bBatch, batch);
  int64_t aMat = m * k, bMat = k * n, rMat = m * n;
  std::vector<double> packedB(bMat), acc(n);
  walk<2>(batch, {&sa, &sb}, {0, 0}, [&](int64_t bi, const std::array<int64_t, 2> &off) {
    const double *pa = a.data.data() + off[0] * aMat;
    const double *pb = b.data.data() + off[1] * bMat;
    // Row-major K x N copy of the right operand, so the inner loop is contiguous.
    for (int64_t kk = 0; kk < k; ++kk)
      for (int64_t j = 0; j < n; ++j) packedB[kk * n + j] = pb[kk * bK + j * bJ];
    double *pr = r.data.data() + bi * rMat;
    for (int64_t i = 0; i < m; ++i) {
      if (bias) std::copy(bias->data.begin(), bias->data.begin() + n, acc.begin());
      else std::fill(acc.begin(), acc.end(), 0.0);
      for (int64_t kk = 0; kk < kValid; ++kk) {
        double av = pa[i * aI + kk * aK];
        const double *brow = packedB.data() + kk * n;
        for (int64_t j = 0; j < n; ++j) acc[j] += av * brow[j];
      }
      for (int64_t j = 0; j < n; ++j)
        pr[i * n + j] = epilogue.empty() ? ir::roundToDType(acc[j], r.dtype)
                                         : epilogue.apply(acc[j], r.dtype);
    }
  });
  // Valid rows of a, columns of b (and batch dims as far as both, and a bias, hold).
  Shape e(r.shape.begin(), r.shape.end());
  size_t rr = e.size();
  for (const Dense *x : {&a, &b}) {
    if (x->valid.empty()) continue;
    bool left = x == &a;
    size_t nx = x->shape.size();
    int64_t v = x->valid[nx - ((left ? ta : !tb) ? 1 : 2)];
    size_t at = left ? rr - 2 : rr - 1;
    e[at] = std::min(e[at], v);
    for (size_t d = 0; d + 2 < nx; ++d) {
      int64_t bv = x->valid[d];
      if (x->shape[d] == 1 && r.shape[rr - nx + d] != 1) bv = bv == 0 ? 0 : r.shape[rr - nx + d];
      e[rr - nx + d] = std::min(e[rr - nx + d], bv);
    }
  }
  if (bias) narrowBroadcast(e, r.shape, *bias);
  r.valid = partOrWhole(e, r.shape);
  return r;
}

Dense evalTranspose(const ir::Operation &op, const Dense &x) {
  Dense r = make(op);
  llvm::ArrayRef<int64_t> perm = op.attr("perm").getIntArray();
  Shape in = rowMajorStrides(x.shape), strides(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) strides[i] = in[perm[i]];
  gather(x, 0, strides, r);
  return r;
}

Dense evalView(const ir::Operation &op, const Dense &x) {
  Dense r = make(op);
  Shape strides = rowMajorStrides(x.shape);
  gather(x, offsetOf(op.attr("offsets").getIntArray(), strides), strides, r);
  return r;
}

Dense evalAssemble(const ir::Operation &op, const Dense &dst, const Dense &src) {
  Dense r = dst;
  Shape strides = rowMajorStrides(r.shape);
  int64_t base = offsetOf(op.attr("offsets").getIntArray(), strides);
  walk<1>(src.shape, {&strides}, {base}, [&](int64_t i, const std::array<int64_t, 1> &off) {
    r.data[off[0]] = src.data[i];
  });
  return r;
}

Dense evalConcat(const ir::Operation &op, llvm::ArrayRef<const Dense *> xs) {
  Dense r = make(op);
  int64_t axis = op.attr("axis").getInt();
  Shape strides = rowMajorStrides(r.shape);
  int64_t at = 0;
  for (const Dense *x : xs) {
    walk<1>(x->shape, {&strides}, {at * strides[axis]},
            [&](int64_t i, const std::array<int64_t, 1> &off) { r.data[off[0]] = x->data[i]; });
    at += x->shape[axis];
  }
  return r;
}

/// Calls f(base) with the offset of the first element of every row along `dim` of
/// `shape` (row-major over the other dimensions); a row steps by the dim's stride.
template <class F> void forEachRow(llvm::ArrayRef<int64_t> shape, int64_t dim, F &&f) {
  Shape strides = rowMajorStrides(shape);
  Shape outer(shape.begin(), shape.end());
  outer[dim] = 1;
  walk<1>(outer, {&strides}, {0}, [&](int64_t, const std::array<int64_t, 1> &off) { f(off[0]); });
}

/// topk's values (`values`, when asked) and indices along `dim` of x.
void evalTopK(const ir::Operation &op, const Dense &x, Dense *values, Dense &indices) {
  ir::TopKView tv = *ir::TopKView::of(op);
  int64_t k = tv.k, dim = tv.dim;
  bool largest = tv.largest;
  int64_t n = x.shape[dim];
  int64_t inStride = rowMajorStrides(x.shape)[dim];
  int64_t outStride = rowMajorStrides(indices.shape)[dim];
  std::vector<int64_t> order;
  // Rows of x and of the results walk the same outer positions in the same order.
  std::vector<int64_t> outBases;
  forEachRow(indices.shape, dim, [&](int64_t base) { outBases.push_back(base); });
  size_t row = 0;
  forEachRow(x.shape, dim, [&](int64_t base) {
    selectTopK(n, k, largest, [&](int64_t j) { return x.data[base + j * inStride]; }, order);
    int64_t ob = outBases[row++];
    for (int64_t j = 0; j < k; ++j) {
      indices.data[ob + j * outStride] = double(order[j]);
      if (values) values->data[ob + j * outStride] = x.data[base + order[j] * inStride];
    }
  });
}

/// out[..., i, ...] = x[..., index[..., i, ...], ...]; an index outside the input's
/// dimension is the user's data error.
absl::StatusOr<Dense> evalGather(const ir::Operation &op, const Dense &x, const Dense &index) {
  Dense r = make(op);
  int64_t dim = op.attr("dim").getInt();
  Shape xs = rowMajorStrides(x.shape), is = rowMajorStrides(index.shape);
  Shape xNoDim = xs;
  xNoDim[dim] = 0;
  std::string bad;
  walk<1>(index.shape, {&xNoDim}, {0}, [&](int64_t i, const std::array<int64_t, 1> &off) {
    int64_t at = 0;
    if (!readIndex(index.data[i], x.shape[dim], at)) {
      if (bad.empty()) {
        Shape pos(index.shape.size());
        for (size_t d = 0, rest = size_t(i); d < pos.size(); ++d) {
          pos[d] = int64_t(rest) / is[d];
          rest %= size_t(is[d]);
        }
        bad = absl::StrFormat("index[%s] = %.17g is outside 0..%d (dimension %d of the input "
                              "has size %d); gather takes indices in range",
                              absl::StrJoin(pos, ", "), index.data[i], x.shape[dim] - 1, dim,
                              x.shape[dim]);
      }
      return;
    }
    r.data[i] = x.data[off[0] + at * xs[dim]];
  });
  if (!bad.empty())
    return absl::InvalidArgumentError(absl::StrCat(opWhere(op), ": ", bad));
  return r;
}

/// Combines `value` into `slot` the way scatter's `reduce` says.
void scatterInto(double &slot, double value, ir::ScatterReduce reduce) {
  switch (reduce) {
  case ir::ScatterReduce::Replace: slot = value; break;
  case ir::ScatterReduce::Add: slot += value; break;
  case ir::ScatterReduce::Multiply: slot *= value; break;
  }
}

/// x with x[.., index[p], ..] = src[p] for every index position p, in row-major order
/// (so of two equal indices the later wins); an index out of range is an error.
absl::StatusOr<Dense> evalScatter(const ir::Operation &op, const Dense &x, const Dense &index,
                                  const Dense &src) {
  Dense r = x;
  ir::ScatterView sv = *ir::ScatterView::of(op);
  int64_t dim = sv.dim;
  Shape xs = rowMajorStrides(x.shape), ss = rowMajorStrides(src.shape);
  Shape xNoDim = xs;
  xNoDim[dim] = 0;
  std::string bad;
  walk<2>(index.shape, {&xNoDim, &ss}, {0, 0},
          [&](int64_t i, const std::array<int64_t, 2> &off) {
            int64_t at = 0;
            if (!readIndex(index.data[i], x.shape[dim], at)) {
              if (bad.empty())
                bad = absl::StrFormat("index element %d (row-major) = %.17g is outside 0..%d "
                                      "(dimension %d of the input has size %d); scatter takes "
                                      "indices in range",
                                      i, index.data[i], x.shape[dim] - 1, dim, x.shape[dim]);
              return;
            }
            scatterInto(r.data[off[0] + at * xs[dim]], src.data[off[1]], sv.reduce);
          });
  if (!bad.empty()) return absl::InvalidArgumentError(absl::StrCat(opWhere(op), ": ", bad));
  roundAll(r);
  return r;
}

Dense evalExpandClone(const ir::Operation &op, const Dense &x) {
  Dense r = make(op);
  Shape strides = broadcastStrides(x.shape, r.shape);
  walk<1>(r.shape, {&strides}, {0}, [&](int64_t i, const std::array<int64_t, 1> &off) {
    r.data[i] = x.data[off[0]];
  });
  return r;
}

/// The valid extents of `op`'s result (of `shape`) from its operands' (reductions and
/// matmuls set their own): elementwise ops, casts, where and expand_clone the
/// smallest of their operands' (broadcast); a reshape that only adds or drops size-1
/// dimensions its operand's, any other reshape all; a transpose its operand's,
/// permuted; a view the part of its operand's valid part it covers; an assemble the
/// destination's, ended where a partly valid source ends; a concat the smallest of
/// its inputs' across the axis, ended along it where the first partly valid input
/// ends; every other op all of it. Empty when all of it.
Shape validOf(const ir::Operation &op, llvm::ArrayRef<const Dense *> in,
              llvm::ArrayRef<int64_t> shape) {
  bool any = false;
  for (const Dense *d : in) any |= !d->valid.empty();
  if (!any) return {};
  Shape e(shape.begin(), shape.end());
  switch (op.def().cls) {
  case OpClass::ElementwiseUnary:
  case OpClass::ElementwiseBinary:
  case OpClass::Cast:
  case OpClass::Select:
  case OpClass::ExpandClone:
    for (const Dense *d : in) narrowBroadcast(e, shape, *d);
    break;
  case OpClass::Reshape: {
    const Dense &x = *in[0];
    if (x.valid.empty()) return {};
    bool empty = llvm::is_contained(x.valid, 0);
    llvm::SmallVector<size_t, 4> big;
    for (size_t d = 0; d < x.shape.size(); ++d)
      if (x.shape[d] != 1) big.push_back(d);
    size_t k = 0;
    for (size_t d = 0; d < shape.size(); ++d) {
      if (shape[d] == 1) {
        e[d] = empty ? 0 : 1;
        continue;
      }
      if (k >= big.size() || x.shape[big[k]] != shape[d]) return {};
      e[d] = x.valid[big[k++]];
    }
    if (k != big.size()) return {};
    break;
  }
  case OpClass::Transpose: {
    const Dense &x = *in[0];
    llvm::ArrayRef<int64_t> perm = op.attr("perm").getIntArray();
    if (x.valid.empty() || perm.size() != shape.size()) return {};
    for (size_t d = 0; d < shape.size(); ++d) e[d] = x.valid[perm[d]];
    break;
  }
  case OpClass::View: {
    const Dense &x = *in[0];
    llvm::ArrayRef<int64_t> offsets = op.attr("offsets").getIntArray();
    if (x.valid.empty() || offsets.size() != shape.size()) return {};
    for (size_t d = 0; d < shape.size(); ++d)
      e[d] = std::clamp<int64_t>(x.valid[d] - offsets[d], 0, shape[d]);
    break;
  }
  case OpClass::Assemble: {
    const Dense &dst = *in[0], &src = *in[1];
    llvm::ArrayRef<int64_t> offsets = op.attr("offsets").getIntArray();
    if (!dst.valid.empty()) e = dst.valid;
    for (size_t d = 0; !src.valid.empty() && d < src.shape.size() && d < offsets.size(); ++d)
      if (src.valid[d] < src.shape[d]) e[d] = std::min(e[d], offsets[d] + src.valid[d]);
    break;
  }
  case OpClass::Concat: {
    int64_t axis = op.attr("axis").getInt(), at = 0;
    bool ended = false;
    for (const Dense *d : in) {
      for (size_t q = 0; q < shape.size() && !d->valid.empty(); ++q) {
        if (int64_t(q) != axis) e[q] = std::min(e[q], d->valid[q]);
        else if (!ended && d->valid[q] < d->shape[q]) {
          e[q] = at + d->valid[q];
          ended = true;
        }
      }
      at += d->shape[axis];
    }
    break;
  }
  default: return {}; // full, topk, gather, scatter: data everywhere
  }
  return partOrWhole(e, shape);
}

absl::Status checkArgs(const ir::Func &f, llvm::ArrayRef<HostTensor> args) {
  if (args.size() != f.numArgs())
    return absl::InvalidArgumentError(absl::StrFormat(
        "reference for @%s: got %d arguments but the function takes %d", f.name().str(),
        args.size(), f.numArgs()));
  for (unsigned i = 0; i < f.numArgs(); ++i) {
    ir::Type t = f.arg(i)->type();
    const HostTensor &a = args[i];
    bool shapeOk = a.shape().size() == t.rank();
    for (unsigned d = 0; shapeOk && d < t.rank(); ++d)
      shapeOk = t.dim(d) == ir::kDynamicDim || t.dim(d) == a.shape()[d];
    if (a.dtype() != t.dtype() || !shapeOk)
      return absl::InvalidArgumentError(absl::StrFormat(
          "reference for @%s: argument %d (%s) must be %s but is a %s tensor of shape [%s]; "
          "pass a tensor of the declared element type and shape",
          f.name().str(), i, valueName(f.arg(i), i), t.str(),
          std::string(ir::dtypeName(a.dtype())), absl::StrJoin(a.shape(), "x")));
  }
  return absl::OkStatus();
}

/// Rejects tile-level ops (a control function's gm_tensor workspaces are fine).
absl::Status checkLevel(const ir::Func &f) {
  bool control = ir::levelOf(f) == ir::Level::Control;
  for (const ir::Operation &op : f.ops()) {
    if (control && op.code() == OpCode::GmTensor) continue;
    bool tileLevel = op.code() == OpCode::GmTensor || op.code() == OpCode::CopyIn ||
                     op.code() == OpCode::CopyOut || op.code() == OpCode::Subgraph ||
                     op.isTileOp();
    for (const ir::Value &r : op.results()) tileLevel |= r.type().isTile();
    if (tileLevel)
      return absl::InvalidArgumentError(absl::StrFormat(
          "reference for @%s: %s is a tile-level op; the reference evaluates tensor-level "
          "functions (run it before expand-tiles)",
          f.name().str(), opWhere(op)));
  }
  return absl::OkStatus();
}

/// Evaluates functions op by op; a `loop` op runs its body (a function of the module)
/// once per index value on copies of its windows (docs/ir.md, "Loops").
class Evaluator {
public:
  /// `entry` and `args`: the kernel's function and inputs, which loop bounds and
  /// offsets may read values of (`t[i, j]`, ir/SymExpr.h).
  Evaluator(const ir::Module *module, const ir::Func &entry, llvm::ArrayRef<HostTensor> args)
      : module_(module) {
    reader_ = [&entry, args](llvm::StringRef tensor,
                             llvm::ArrayRef<int64_t> index) -> absl::StatusOr<int64_t> {
      for (unsigned a = 0; a < entry.numArgs() && a < args.size(); ++a) {
        ir::Identifier hint = entry.arg(a)->nameHint();
        if (!hint || hint.str() != tensor) continue;
        return readIntElement(args[a], tensor, index);
      }
      return absl::InvalidArgumentError(
          absl::StrCat("no input of @", entry.name().str(), " is named '", tensor.str(), "'"));
    };
    // Dynamic axes take the sizes of the inputs (checkArgs matched the ranks).
    for (unsigned a = 0; a < entry.numArgs() && a < args.size(); ++a) {
      ir::Type t = entry.arg(a)->type();
      ir::Identifier hint = entry.arg(a)->nameHint();
      for (unsigned d = 0; d < t.rank() && d < args[a].shape().size(); ++d)
        if (t.dim(d) == ir::kDynamicDim && hint)
          bindings_.push_back({ir::SymExpr::dimKey(hint.str(), d), args[a].shape()[d],
                               args[a].shape()[d]});
    }
  }

  absl::Status run(const ir::Func &f, std::vector<Dense> args, std::vector<Dense> &results);

private:
  /// The values of `op`'s results (the written operands after every iteration).
  absl::Status runLoop(const ir::Func &f, const ir::Operation &op,
                       llvm::ArrayRef<const Dense *> in, std::vector<Dense> &out);
  /// `<loc>: error: reference for @f: loop 'r' iteration b = 1, r = 5`, in an
  /// iteration: every enclosing loop's index, at the user's statement that made
  /// window `w` when it is known, else at the loop.
  std::string where(const ir::Func &f, const ir::Operation &op, const ir::LoopView &lv,
                    const ir::LoopWindow *w = nullptr) const;
  /// The row-major offset of window `w` of `operand` for the current bindings, and
  /// the extents of its valid part (its sizes without a valid_shape).
  absl::StatusOr<int64_t> windowBase(const ir::Func &f, const ir::Operation &op,
                                     const ir::LoopView &lv,
                                     const ir::LoopWindow &w, const char *side, size_t i,
                                     const Dense &operand, Shape &extents) const;

  const ir::Module *module_;
  ir::SymExpr::ElementReader reader_;
  std::vector<ir::SymBinding> bindings_; ///< the enclosing loops' indices, dynamic sizes
  std::vector<ir::SymBinding> loopIndices_; ///< the enclosing loops' indices, outermost first
  std::vector<const ir::Func *> active_;  ///< the functions being evaluated (a stack)
};

absl::Status Evaluator::run(const ir::Func &f, std::vector<Dense> args,
                            std::vector<Dense> &results) {
  results.clear();
  if (absl::Status st = checkLevel(f); !st.ok()) return st;
  active_.push_back(&f);
  struct Pop {
    std::vector<const ir::Func *> &v;
    ~Pop() { v.pop_back(); }
  } pop{active_};

  llvm::DenseMap<const ir::Value *, Dense> values;
  for (unsigned i = 0; i < f.numArgs(); ++i) values[f.arg(i)] = std::move(args[i]);
  auto get = [&](const ir::Operation &op, unsigned i) -> const Dense * {
    auto it = values.find(op.operand(i));
    return it == values.end() ? nullptr : &it->second;
  };

  for (const ir::Operation &op : f.ops()) {
    llvm::SmallVector<const Dense *, 4> in;
    for (unsigned i = 0; i < op.numOperands(); ++i) {
      const Dense *d = get(op, i);
      if (!d)
        return absl::InvalidArgumentError(absl::StrFormat(
            "reference for @%s: %s uses operand %d before its definition; verify the "
            "function first",
            f.name().str(), opWhere(op), i));
      in.push_back(d);
    }
    if (op.code() == OpCode::Return) {
      for (const Dense *d : in) results.push_back(*d);
      return absl::OkStatus();
    }
    if (op.code() == OpCode::Loop) {
      std::vector<Dense> outs;
      if (absl::Status st = runLoop(f, op, in, outs); !st.ok()) return st;
      for (unsigned r = 0; r < op.numResults(); ++r) values[op.result(r)] = std::move(outs[r]);
      continue;
    }
    if (op.code() == OpCode::TopK) {
      Dense picked = make(op), positions = picked;
      positions.dtype = op.resultType(1).dtype();
      evalTopK(op, *in[0], &picked, positions);
      values[op.result(0)] = std::move(picked);
      values[op.result(1)] = std::move(positions);
      continue;
    }
    Dense out;
    switch (op.def().cls) {
    case OpClass::ElementwiseUnary: out = evalUnary(op, *in[0]); break;
    case OpClass::ElementwiseBinary: out = evalBinary(op, *in[0], *in[1]); break;
    case OpClass::Reduction: out = evalReduction(op, *in[0]); break;
    case OpClass::Matmul:
      out = evalMatmul(op, *in[0], *in[1], in.size() > 2 ? in[2] : nullptr);
      break;
    case OpClass::Cast: {
      out = make(op);
      ir::CastView cast = ir::CastView::of(op);
      for (size_t i = 0; i < out.data.size(); ++i)
        out.data[i] = ir::castValue(in[0]->data[i], in[0]->dtype, out.dtype, cast.mode,
                                    cast.saturate);
      break;
    }
    case OpClass::Select: out = evalWhere(op, *in[0], *in[1], *in[2]); break;
    case OpClass::Reshape:
      out = make(op);
      out.data = in[0]->data;
      break;
    case OpClass::Transpose: out = evalTranspose(op, *in[0]); break;
    case OpClass::View: out = evalView(op, *in[0]); break;
    case OpClass::Assemble: out = evalAssemble(op, *in[0], *in[1]); break;
    case OpClass::Concat: out = evalConcat(op, in); break;
    case OpClass::TopKIndices: out = make(op); evalTopK(op, *in[0], nullptr, out); break;
    case OpClass::Gather: {
      absl::StatusOr<Dense> g = evalGather(op, *in[0], *in[1]);
      if (!g.ok())
        return absl::InvalidArgumentError(absl::StrFormat("reference for @%s: %s",
                                                          f.name().str(), g.status().message()));
      out = std::move(*g);
      break;
    }
    case OpClass::ExpandClone: out = evalExpandClone(op, *in[0]); break;
    case OpClass::Scatter: {
      absl::StatusOr<Dense> sc = evalScatter(op, *in[0], *in[1], *in[2]);
      if (!sc.ok())
        return absl::InvalidArgumentError(absl::StrFormat("reference for @%s: %s",
                                                          f.name().str(), sc.status().message()));
      out = std::move(*sc);
      break;
    }
    case OpClass::Full:
      out = make(op);
      std::fill(out.data.begin(), out.data.end(),
                ir::roundToDType(op.attr("value").getNumber(), out.dtype));
      break;
    case OpClass::GmTensor: out = make(op); break; // a control function's workspace: zeros
    default:
      return absl::InternalError(absl::StrFormat(
          "reference for @%s: %s has no reference semantics (a bug: every tensor-level op "
          "class must be handled)",
          f.name().str(), opWhere(op)));
    }
    if (out.valid.empty()) out.valid = validOf(op, in, out.shape);
    values[op.result()] = std::move(out);
  }
  return absl::InvalidArgumentError(
      absl::StrFormat("reference for @%s: the function has no 'return'", f.name().str()));
}

std::string Evaluator::where(const ir::Func &f, const ir::Operation &op, const ir::LoopView &lv,
                             const ir::LoopWindow *w) const {
  std::vector<std::string> indices;
  for (const ir::SymBinding &b : loopIndices_) indices.push_back(absl::StrCat(b.name, " = ", b.lo));
  return absl::StrCat(w && !w->loc.empty() ? w->loc : op.loc().str(), ": error: reference for @",
                      f.name().str(), ": loop '", lv.name, "' iteration ",
                      absl::StrJoin(indices, ", "));
}

absl::StatusOr<int64_t> Evaluator::windowBase(const ir::Func &f, const ir::Operation &op,
                                              const ir::LoopView &lv,
                                              const ir::LoopWindow &w, const char *side, size_t i,
                                              const Dense &operand, Shape &extents) const {
  std::string name = valueName(op.operand(w.operand), w.operand);
  if (w.offsets.size() != operand.shape.size() || w.sizes.size() != operand.shape.size())
    return absl::InvalidArgumentError(absl::StrCat(
        where(f, op, lv, &w), ": ", side, " window ", i, " has ", w.offsets.size(),
        " offsets and ", w.sizes.size(), " sizes but ", name, " has ", operand.shape.size(),
        " dimensions; verify the module first"));
  llvm::SmallVector<int64_t, 4> sizes = ir::resolveWholeAxes(w.sizes, operand.shape);
  absl::StatusOr<llvm::SmallVector<int64_t, 4>> valid =
      ir::evaluateValidExtents(w.valid, sizes, bindings_, reader_, side, i);
  if (!valid.ok())
    return absl::InvalidArgumentError(
        absl::StrCat(where(f, op, lv, &w), ": ", valid.status().message()));
  extents = Shape(valid->begin(), valid->end());
  absl::StatusOr<llvm::SmallVector<int64_t, 4>> offsets = ir::evaluateWindow(
      w.offsets, *valid, operand.shape, name, bindings_, reader_, side, i);
  if (!offsets.ok())
    return absl::InvalidArgumentError(
        absl::StrCat(where(f, op, lv, &w), ": ", offsets.status().message()));
  Shape strides = rowMajorStrides(operand.shape);
  int64_t base = 0;
  for (size_t d = 0; d < offsets->size(); ++d) base += (*offsets)[d] * strides[d];
  return base;
}

absl::Status Evaluator::runLoop(const ir::Func &f, const ir::Operation &op,
                                llvm::ArrayRef<const Dense *> in, std::vector<Dense> &out) {
  absl::StatusOr<ir::LoopView> view = ir::LoopView::of(op);
  if (!view.ok())
    return absl::InvalidArgumentError(absl::StrCat("reference for @", f.name().str(), ": ",
                                                   opWhere(op), ": ", view.status().message()));
  const ir::LoopView &lv = *view;
  auto bad = [&](const std::string &what) {
    return absl::InvalidArgumentError(absl::StrCat(op.loc().str(), ": error: reference for @",
                                                   f.name().str(), ": loop '", lv.name, "' ",
                                                   what));
  };
  if (!module_)
    return bad(absl::StrCat("runs @", lv.body, ", which the reference cannot find without the "
                            "module: call evaluateReference(module, func, args, results)"));
  const ir::Func *body = module_->lookup(lv.body);
  if (!body) return bad(absl::StrCat("runs @", lv.body, ", which is not in the module"));
  if (std::find(active_.begin(), active_.end(), body) != active_.end())
    return bad(absl::StrCat("runs @", lv.body, ", which is already running (a loop may not run "
                            "itself); verify the module first"));
  if (lv.ins.size() != body->numArgs() || lv.outs.size() != body->resultTypes().size() ||
      lv.written.size() != op.numResults())
    return bad(absl::StrCat("has ", lv.ins.size(), " ins, ", lv.outs.size(), " outs and ",
                            op.numResults(), " results but @", lv.body, " takes ",
                            body->numArgs(), " arguments and returns ",
                            body->resultTypes().size(), " values, and the loop writes ",
                            lv.written.size(), " operands; verify the module first"));
  for (const std::vector<ir::LoopWindow> *ws : {&lv.ins, &lv.outs})
    for (const ir::LoopWindow &w : *ws)
      if (w.operand < 0 || unsigned(w.operand) >= op.numOperands())
        return bad(absl::StrCat("has a window of operand ", w.operand, " but only ",
                                op.numOperands(), " operands; verify the module first"));

  // The written operands' values, updated by every iteration in turn.
  std::vector<int> slot(op.numOperands(), -1);
  out.clear();
  for (int w : lv.written) {
    slot[w] = int(out.size());
    out.push_back(*in[w]);
  }
  auto current = [&](int operand) -> const Dense & {
    return slot[operand] >= 0 ? out[slot[operand]] : *in[operand];
  };

  absl::StatusOr<int64_t> start = lv.start.evaluate(bindings_, reader_), stop = lv.stop.evaluate(bindings_, reader_),
                          step = lv.step.evaluate(bindings_, reader_);
  for (auto [what, v] :
       {std::pair{"start", &start}, std::pair{"stop", &stop}, std::pair{"step", &step}})
    if (!v->ok()) return bad(absl::StrCat("evaluating its ", what, ": ", v->status().message()));
  if (*step <= 0) return bad(absl::StrCat("has step ", *step, ", which is not positive"));

  for (int64_t i = *start; i < *stop; i += *step) {
    bindings_.push_back({lv.index, i, i});
    loopIndices_.push_back({lv.index, i, i});
    struct Unbind {
      std::vector<ir::SymBinding> &b;
      ~Unbind() { b.pop_back(); }
    } unbind{bindings_}, unbindIndex{loopIndices_};
    // Every window's place first: a window out of range fails before the body runs.
    std::vector<int64_t> inBase, outBase;
    std::vector<Shape> inValid(lv.ins.size()), outValid(lv.outs.size());
    for (size_t k = 0; k < lv.ins.size(); ++k) {
      absl::StatusOr<int64_t> b =
          windowBase(f, op, lv, lv.ins[k], "ins", k, current(lv.ins[k].operand), inValid[k]);
      if (!b.ok()) return b.status();
      inBase.push_back(*b);
    }
    for (size_t k = 0; k < lv.outs.size(); ++k) {
      absl::StatusOr<int64_t> b = windowBase(f, op, lv, lv.outs[k], "outs", k,
                                             current(lv.outs[k].operand), outValid[k]);
      if (!b.ok()) return b.status();
      outBase.push_back(*b);
    }
    // The body's arguments: copies of the windows as they are before this iteration.
    std::vector<Dense> args;
    for (size_t k = 0; k < lv.ins.size(); ++k) {
      const ir::LoopWindow &w = lv.ins[k];
      const Dense &src = current(w.operand);
      ir::Type t = body->arg(unsigned(k))->type();
      // A whole dynamic axis (size ?) has the operand's size in this run.
      Shape sizes = ir::resolveWholeAxes(w.sizes, src.shape);
      Shape bodyShape = bodyShapeOf(t, w.sizes, sizes);
      if (t.dtype() != src.dtype || product(bodyShape) != product(sizes))
        return bad(absl::StrCat("ins window ", k, " does not match argument ", k, " of @",
                                lv.body, " (", t.str(), "); verify the module first"));
      Dense a;
      a.dtype = src.dtype;
      a.shape.assign(sizes.begin(), sizes.end());
      a.data.assign(product(sizes), 0.0); // zeros past a valid_shape
      Shape srcStrides = rowMajorStrides(src.shape), winStrides = rowMajorStrides(a.shape);
      walk<2>(inValid[k], {&srcStrides, &winStrides}, {inBase[k], 0},
              [&](int64_t, const std::array<int64_t, 2> &off) {
                a.data[off[1]] = src.data[off[0]];
              });
      a.shape = bodyShape;
      // The body sees the valid part of the window as its argument's valid extents.
      if (std::optional<llvm::SmallVector<int, 4>> dims = ir::bodyDimsOfWindow(t.shape(), w.sizes)) {
        bool empty = llvm::is_contained(inValid[k], 0);
        Shape e;
        for (int d : *dims) e.push_back(d < 0 ? (empty ? 0 : 1) : inValid[k][d]);
        a.valid = partOrWhole(e, a.shape);
      }
      args.push_back(std::move(a));
    }
    std::vector<Dense> results;
    if (absl::Status st = run(*body, std::move(args), results); !st.ok()) return st;
    // Each result into its window of the written operand.
    for (size_t k = 0; k < lv.outs.size(); ++k) {
      const ir::LoopWindow &w = lv.outs[k];
      Dense &dst = out[slot[w.operand]];
      const Dense &r = results[k];
      Shape sizes = ir::resolveWholeAxes(w.sizes, dst.shape);
      if (r.dtype != dst.dtype || product(r.shape) != product(sizes))
        return bad(absl::StrCat("outs window ", k, " does not match result ", k, " of @",
                                lv.body, "; verify the module first"));
      // Only the valid part lands.
      Shape strides = rowMajorStrides(dst.shape);
      Shape winStrides = rowMajorStrides(sizes);
      walk<2>(outValid[k], {&strides, &winStrides}, {outBase[k], 0},
              [&](int64_t, const std::array<int64_t, 2> &off) {
                dst.data[off[0]] = r.data[off[1]];
              });
    }
    if (*stop - i <= *step) break; // i += step would overflow near INT64_MAX
  }
  return absl::OkStatus();
}

} // namespace

namespace {

absl::Status evaluate(const ir::Module *module, const ir::Func &f, llvm::ArrayRef<HostTensor> args,
                      std::vector<HostTensor> &results) {
  results.clear();
  if (absl::Status st = checkLevel(f); !st.ok()) return st;
  if (absl::Status st = checkArgs(f, args); !st.ok()) return st;
  std::vector<Dense> in, out;
  for (const HostTensor &a : args) in.push_back(fromHost(a));
  if (absl::Status st = Evaluator(module, f, args).run(f, std::move(in), out); !st.ok()) return st;
  for (const Dense &d : out) results.push_back(toHost(d));
  return absl::OkStatus();
}

} // namespace

absl::Status evaluateReference(const ir::Func &f, llvm::ArrayRef<HostTensor> args,
                               std::vector<HostTensor> &results) {
  return evaluate(nullptr, f, args, results);
}

absl::Status evaluateReference(const ir::Module &module, const ir::Func &f,
                               llvm::ArrayRef<HostTensor> args, std::vector<HostTensor> &results) {
  return evaluate(&module, f, args, results);
}

// ------------------------------------------------------------------ random tensors

namespace {

/// splitmix64: a tiny counter-based generator with identical output everywhere.
uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

} // namespace

HostTensor randomTensor(ir::DType dtype, llvm::ArrayRef<int64_t> shape, uint64_t seed) {
  HostTensor t(dtype, shape);
  uint64_t key = splitmix64(seed);
  for (int64_t i = 0; i < t.numElements(); ++i) {
    uint64_t bits = splitmix64(key + uint64_t(i));
    if (ir::isFloat(dtype)) {
      // 53 random bits -> [0, 1) -> [-1, 1).
      double u = double(bits >> 11) * 0x1.0p-53;
      t.set(i, 2.0 * u - 1.0);
    } else {
      // Unsigned types take [0, 2 * range], bool 0 or 1: as many distinct values.
      int64_t v = int64_t(bits % uint64_t(2 * kRandomIntRange + 1)) - kRandomIntRange;
      if (dtype == ir::DType::Bool) v = int64_t(bits & 1);
      else if (ir::isUnsigned(dtype)) v += kRandomIntRange;
      t.set(i, double(v));
    }
  }
  return t;
}

// ------------------------------------------------------------------ comparison

Tolerance tolerance(ir::DType dtype) {
  switch (dtype) {
  case DType::F32: return {1e-4, 1e-5};
  case DType::F16: return {1e-2, 1e-3};
  case DType::BF16: return {2e-2, 1e-2};
  default: return {0, 0}; // integers and bool: exact
  }
}

namespace {

std::string indexStr(int64_t i, llvm::ArrayRef<int64_t> shape) {
  Shape idx(shape.size());
  for (int d = int(shape.size()) - 1; d >= 0; --d) {
    idx[d] = shape[d] ? i % shape[d] : 0;
    i = shape[d] ? i / shape[d] : 0;
  }
  return absl::StrCat("[", absl::StrJoin(idx, ", "), "]");
}

std::string typeStr(const HostTensor &t) {
  return absl::StrCat(std::string(ir::dtypeName(t.dtype())), " [", absl::StrJoin(t.shape(), "x"), "]");
}

} // namespace

std::optional<Mismatch> compareTensors(const HostTensor &got, const HostTensor &want,
                                       double rtol, double atol) {
  Mismatch mm;
  if (got.dtype() != want.dtype() || got.shape() != want.shape()) {
    mm.structural = absl::StrCat("got a ", typeStr(got), " tensor, want a ", typeStr(want), " tensor");
    return mm;
  }
  mm.shape.assign(want.shape().begin(), want.shape().end());
  mm.rtol = rtol;
  mm.atol = atol;
  mm.numElements = got.numElements();
  double worstExcess = -1;
  for (int64_t i = 0; i < mm.numElements; ++i) {
    double g = got.get(i), w = want.get(i);
    if (g == w || (std::isnan(g) && std::isnan(w))) continue;
    // A nan or an infinity matches only itself (checked above).
    bool special = !std::isfinite(g) || !std::isfinite(w);
    double err = special ? std::numeric_limits<double>::infinity() : std::fabs(g - w);
    double allowed = atol + rtol * std::fabs(w);
    if (err > mm.maxAbsError) mm.maxAbsError = err;
    if (!special && err <= allowed) continue;
    if (mm.count++ == 0) {
      mm.firstIndex = i;
      mm.firstGot = g;
      mm.firstWant = w;
    }
    double excess = special ? std::numeric_limits<double>::infinity() : err - allowed;
    if (excess > worstExcess) {
      worstExcess = excess;
      mm.worstIndex = i;
      mm.worstGot = g;
      mm.worstWant = w;
    }
  }
  if (mm.count == 0) return std::nullopt;
  return mm;
}

std::string Mismatch::describe() const {
  if (!structural.empty()) return structural;
  return absl::StrFormat(
      "%d of %d elements differ beyond |got - want| <= %g + %g * |want|; first at %s: got "
      "%.9g, want %.9g; worst at %s: got %.9g, want %.9g; max |got - want| = %g",
      count, numElements, atol, rtol, indexStr(firstIndex, shape), firstGot, firstWant,
      indexStr(worstIndex, shape), worstGot, worstWant, maxAbsError);
}

} // namespace ptoc::runtime
