// Numeric kernels for planned leaf ops: Eigen array expressions and GEMM on float
// tiles, exact int64 arithmetic with saturation on integer tiles.
#include "TileKernels.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include <Eigen/Core>
#include <unsupported/Eigen/SpecialFunctions>

#include "StridedWalk.h"
#include "ptoc/ir/OpDef.h"

namespace ptoc::runtime::exec {
namespace {

using ir::DType;
using ir::OpCode;
using ArrayF = Eigen::Array<float, Eigen::Dynamic, 1>;
using MapF = Eigen::Map<ArrayF>;
using CMapF = Eigen::Map<const ArrayF>;
template <class T>
using RowMat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using MaxNumbers = Eigen::internal::scalar_max_op<float, float, Eigen::PropagateNumbers>;
using MinNumbers = Eigen::internal::scalar_min_op<float, float, Eigen::PropagateNumbers>;
using MaxNaN = Eigen::internal::scalar_max_op<float, float, Eigen::PropagateNaN>;
using MinNaN = Eigen::internal::scalar_min_op<float, float, Eigen::PropagateNaN>;

/// Eigen's vectorised exp clamps its input to [-88.723, 88.723], so without care
/// exp(-100) and even exp(-inf) would come out as exp(-88.723) ~ 3e-39 instead of
/// (nearly) 0 — visible in softmax with -inf masks. Below this bound the true result
/// is a subnormal under 3e-39; it is flushed to 0.
constexpr float kExpFlushBelow = -88.72f;
constexpr float kInvSqrt2 = 0.70710678118654752440f;
/// Below this, 1 + erf(x/sqrt2) cancels (erf is near -1): gelu takes erfc instead.
constexpr float kGeluErfcBelow = -1.0f;
/// Elements per gelu block (a copy of the block's inputs lives on the stack).
constexpr int64_t kGeluBlock = 256;

/// exp with the flush above, NaN kept; vectorised through Eigen's pexp.
struct FlushingExpOp {
  float operator()(float x) const { return x < kExpFlushBelow ? 0.0f : std::exp(x); }
  template <class Packet>
  Packet packetOp(const Packet &x) const {
    namespace ei = Eigen::internal;
    Packet e = ei::pexp(x);
    e = ei::pselect(ei::pcmp_eq(x, x), e, x); // NaN in, NaN out
    return ei::pandnot(e, ei::pcmp_lt(x, ei::pset1<Packet>(kExpFlushBelow)));
  }
};

/// pow through double, exactly as the constant folder computes it.
struct PowOp {
  float operator()(float a, float b) const {
    return static_cast<float>(std::pow(static_cast<double>(a), static_cast<double>(b)));
  }
};

} // namespace
} // namespace ptoc::runtime::exec

namespace Eigen::internal {
template <>
struct functor_traits<ptoc::runtime::exec::FlushingExpOp> {
  enum {
    Cost = functor_traits<scalar_exp_op<float>>::Cost + 3 * NumTraits<float>::AddCost,
    PacketAccess = packet_traits<float>::HasExp
  };
};
} // namespace Eigen::internal

namespace ptoc::runtime::exec {
namespace {

// ---------------------------------------------------------------- integers

struct IntRange {
  int64_t lo, hi;
};

IntRange rangeOf(DType t) {
  if (t == DType::I8) return {-128, 127};
  return {std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max()};
}

inline int32_t saturate(int64_t v, IntRange r) {
  return static_cast<int32_t>(v < r.lo ? r.lo : (v > r.hi ? r.hi : v));
}

/// ir::roundToDType for integers: NaN -> 0, truncate toward zero, saturate.
inline int32_t toInt(double v, IntRange r) {
  if (std::isnan(v)) return 0;
  double t = std::trunc(v);
  return static_cast<int32_t>(t < double(r.lo) ? r.lo : (t > double(r.hi) ? r.hi : t));
}

// ---------------------------------------------------------------- elementwise

/// gelu = 0.5 x (1 + erf(x / sqrt2)) vectorised, with the negative tail recomputed as
/// 0.5 x erfc(-x / sqrt2) to keep its relative accuracy. Blocks keep a copy of their
/// inputs because the output may be written over them.
void gelu(const float *xp, float *op, int64_t n) {
  alignas(kTileAlignBytes) float saved[kGeluBlock];
  for (int64_t s = 0; s < n; s += kGeluBlock) {
    int64_t m = std::min(kGeluBlock, n - s);
    std::memcpy(saved, xp + s, size_t(m) * sizeof(float));
    CMapF x(saved, m);
    MapF o(op + s, m);
    o = 0.5f * x * ((x * kInvSqrt2).erf() + 1.0f);
    for (int64_t i = 0; i < m; ++i)
      if (saved[i] < kGeluErfcBelow)
        op[s + i] = 0.5f * saved[i] * std::erfc(-saved[i] * kInvSqrt2);
  }
}

void unaryFloat(OpCode code, const float *xp, float *op, int64_t n) {
  CMapF x(xp, n);
  MapF o(op, n);
  switch (code) {
  case OpCode::Neg: o = -x; break;
  case OpCode::Exp: o = x.unaryExpr(FlushingExpOp()); break;
  case OpCode::Log: o = x.log(); break;
  case OpCode::Sqrt: o = x.sqrt(); break;
  // Not Eigen's rsqrt: with EIGEN_FAST_MATH it is an approximation plus one Newton step.
  case OpCode::Rsqrt: o = x.sqrt().inverse(); break;
  case OpCode::Abs: o = x.abs(); break;
  // As the folder: x > 0 ? x : 0 (NaN and -0 give +0).
  case OpCode::Relu:
    for (int64_t i = 0; i < n; ++i) op[i] = xp[i] > 0.0f ? xp[i] : 0.0f;
    break;
  case OpCode::Sigmoid: o = ((-x).exp() + 1.0f).inverse(); break;
  case OpCode::Tanh: o = x.tanh(); break;
  case OpCode::Gelu: gelu(xp, op, n); break;
  case OpCode::Reciprocal: o = x.inverse(); break;
  case OpCode::Ceil: o = x.ceil(); break;
  case OpCode::Floor: o = x.floor(); break;
  // Element by element with the C library (ties to even for round, in the default
  // rounding mode ptoc never changes), as the folder's double evaluation rounds.
  case OpCode::Trunc:
    for (int64_t i = 0; i < n; ++i) op[i] = std::trunc(xp[i]);
    break;
  case OpCode::Round:
    for (int64_t i = 0; i < n; ++i) op[i] = std::nearbyint(xp[i]);
    break;
  case OpCode::Exp2:
    for (int64_t i = 0; i < n; ++i) op[i] = std::exp2(xp[i]);
    break;
  case OpCode::Expm1:
    for (int64_t i = 0; i < n; ++i) op[i] = std::expm1(xp[i]);
    break;
  case OpCode::Erfc:
    for (int64_t i = 0; i < n; ++i) op[i] = std::erfc(xp[i]);
    break;
  default: break; // the planner admits only elementwise unary ops here
  }
}

void unaryInt(OpCode code, const int32_t *x, int32_t *o, int64_t n, DType dtype) {
  IntRange r = rangeOf(dtype);
  switch (code) {
  case OpCode::Neg:
    for (int64_t i = 0; i < n; ++i) o[i] = saturate(-int64_t(x[i]), r);
    break;
  case OpCode::Abs:
    for (int64_t i = 0; i < n; ++i) o[i] = saturate(x[i] < 0 ? -int64_t(x[i]) : x[i], r);
    break;
  case OpCode::Relu:
    for (int64_t i = 0; i < n; ++i) o[i] = x[i] > 0 ? x[i] : 0;
    break;
  default: {
    // Float-only functions (the type rules keep them off integer tiles): through
    // double, as the folder would, then rounded like roundToDType.
    double (*fn)(double) = ir::OpRegistry::get().def(code).unaryFn;
    if (!fn) return;
    for (int64_t i = 0; i < n; ++i) o[i] = toInt(fn(double(x[i])), r);
  }
  }
}

/// Calls f(outRow, xRow, yRow) per innermost row of the broadcast; the operands are
/// Eigen maps, or constants where an operand is broadcast along the row.
template <class F>
void binaryFloatRows(const BroadcastPlan &bp, const float *x, const float *y, float *o, F f) {
  int64_t n = bp.sizes.back();
  bool vx = bp.strideX.back() != 0, vy = bp.strideY.back() != 0;
  llvm::ArrayRef<int64_t> outer = llvm::ArrayRef<int64_t>(bp.sizes).drop_back();
  llvm::ArrayRef<int64_t> sx = llvm::ArrayRef<int64_t>(bp.strideX).drop_back();
  llvm::ArrayRef<int64_t> sy = llvm::ArrayRef<int64_t>(bp.strideY).drop_back();
  int64_t row = 0;
  walkStrided<2>(outer, {sx, sy}, [&](const std::array<int64_t, 2> &off) {
    const float *xr = x + off[0], *yr = y + off[1];
    MapF out(o + row * n, n);
    ++row;
    if (vx && vy) f(out, CMapF(xr, n), CMapF(yr, n));
    else if (vx) f(out, CMapF(xr, n), ArrayF::Constant(n, *yr));
    else if (vy) f(out, ArrayF::Constant(n, *xr), CMapF(yr, n));
    else f(out, ArrayF::Constant(n, *xr), ArrayF::Constant(n, *yr));
  });
}

void binaryFloat(OpCode code, const BroadcastPlan &bp, const float *x, const float *y, float *o) {
  switch (code) {
  case OpCode::Add:
    binaryFloatRows(bp, x, y, o, [](auto &&r, const auto &a, const auto &b) { r = a + b; });
    break;
  case OpCode::Sub:
    binaryFloatRows(bp, x, y, o, [](auto &&r, const auto &a, const auto &b) { r = a - b; });
    break;
  case OpCode::Mul:
    binaryFloatRows(bp, x, y, o, [](auto &&r, const auto &a, const auto &b) { r = a * b; });
    break;
  case OpCode::Div:
    binaryFloatRows(bp, x, y, o, [](auto &&r, const auto &a, const auto &b) { r = a / b; });
    break;
  // fmax/fmin semantics (a NaN operand yields the other one), as the folder.
  case OpCode::Max:
    binaryFloatRows(bp, x, y, o,
                    [](auto &&r, const auto &a, const auto &b) { r = a.binaryExpr(b, MaxNumbers()); });
    break;
  case OpCode::Min:
    binaryFloatRows(bp, x, y, o,
                    [](auto &&r, const auto &a, const auto &b) { r = a.binaryExpr(b, MinNumbers()); });
    break;
  case OpCode::Pow:
    binaryFloatRows(bp, x, y, o,
                    [](auto &&r, const auto &a, const auto &b) { r = a.binaryExpr(b, PowOp()); });
    break;
  default: break;
  }
}

/// One float rounded to `t` (f16, bf16; f32 unchanged).
float roundFloat(float v, DType t) {
  if (t == DType::F16) return static_cast<float>(Eigen::half(v));
  if (t == DType::BF16) return static_cast<float>(Eigen::bfloat16(v));
  return v;
}

/// div with precision = "intrinsic" (ir::intrinsicDivide): a x round_t(1 / b), the
/// reciprocal in f32 then rounded to t (exactly ir's rounding: f32 holds the
/// reciprocal to more than twice t's bits); the caller rounds the product to t.
void divIntrinsicFloat(const BroadcastPlan &bp, const float *x, const float *y, float *o, DType t) {
  binaryFloatRows(bp, x, y, o, [t](auto &&r, const auto &a, const auto &b) {
    r = a * b.inverse().unaryExpr([t](float v) { return roundFloat(v, t); });
  });
}

/// Integer binary ops row by row; f(a, b) returns the saturated result.
template <class F>
void binaryIntRows(const BroadcastPlan &bp, const int32_t *x, const int32_t *y, int32_t *o,
                   F f) {
  int64_t n = bp.sizes.back();
  int64_t ix = bp.strideX.back(), iy = bp.strideY.back();
  llvm::ArrayRef<int64_t> outer = llvm::ArrayRef<int64_t>(bp.sizes).drop_back();
  llvm::ArrayRef<int64_t> sx = llvm::ArrayRef<int64_t>(bp.strideX).drop_back();
  llvm::ArrayRef<int64_t> sy = llvm::ArrayRef<int64_t>(bp.strideY).drop_back();
  int64_t row = 0;
  walkStrided<2>(outer, {sx, sy}, [&](const std::array<int64_t, 2> &off) {
    const int32_t *xr = x + off[0], *yr = y + off[1];
    int32_t *orow = o + row * n;
    ++row;
    for (int64_t i = 0; i < n; ++i) orow[i] = f(int64_t(xr[i * ix]), int64_t(yr[i * iy]));
  });
}

void binaryInt(OpCode code, const BroadcastPlan &bp, const int32_t *x, const int32_t *y,
               int32_t *o, DType dtype) {
  IntRange r = rangeOf(dtype);
  switch (code) {
  case OpCode::Add: binaryIntRows(bp, x, y, o, [r](int64_t a, int64_t b) { return saturate(a + b, r); }); break;
  case OpCode::Sub: binaryIntRows(bp, x, y, o, [r](int64_t a, int64_t b) { return saturate(a - b, r); }); break;
  case OpCode::Mul: binaryIntRows(bp, x, y, o, [r](int64_t a, int64_t b) { return saturate(a * b, r); }); break;
  case OpCode::Div:
    // Truncating division; by zero as the folder's double arithmetic rounded to the
    // dtype: +-inf saturates, 0/0 (NaN) becomes 0.
    binaryIntRows(bp, x, y, o, [r](int64_t a, int64_t b) {
      if (b == 0) return static_cast<int32_t>(a > 0 ? r.hi : (a < 0 ? r.lo : 0));
      return saturate(a / b, r);
    });
    break;
  case OpCode::Max: binaryIntRows(bp, x, y, o, [](int64_t a, int64_t b) { return int32_t(a > b ? a : b); }); break;
  case OpCode::Min: binaryIntRows(bp, x, y, o, [](int64_t a, int64_t b) { return int32_t(a < b ? a : b); }); break;
  case OpCode::Pow:
    binaryIntRows(bp, x, y, o, [r](int64_t a, int64_t b) {
      return toInt(std::pow(static_cast<double>(a), static_cast<double>(b)), r);
    });
    break;
  default: break;
  }
}

// ---------------------------------------------------------------- cast

void castTile(const OpPlan &p, const OpPlan &x, TileMemory mem) {
  int64_t n = p.numElements;
  if (x.rep == Rep::Float && p.rep == Rep::Float) {
    float *dst = mem.floats + p.offset;
    const float *src = mem.floats + x.offset;
    if (dst != src) std::memcpy(dst, src, size_t(n) * sizeof(float));
    roundFloatTile(dst, n, p.dtype);
  } else if (x.rep == Rep::Float) {
    IntRange r = rangeOf(p.dtype);
    const float *src = mem.floats + x.offset;
    int32_t *dst = mem.ints + p.offset;
    for (int64_t i = 0; i < n; ++i) dst[i] = toInt(src[i], r);
  } else if (p.rep == Rep::Float) {
    const int32_t *src = mem.ints + x.offset;
    float *dst = mem.floats + p.offset;
    // int -> f32 rounds to nearest like roundToDType(v, F32); f16/bf16 round once more
    // from that float, as roundToDType does for bf16 and exactly for f16 (any integer
    // that f32 rounds is beyond the f16 range).
    for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<float>(src[i]);
    roundFloatTile(dst, n, p.dtype);
  } else {
    IntRange r = rangeOf(p.dtype);
    const int32_t *src = mem.ints + x.offset;
    int32_t *dst = mem.ints + p.offset;
    for (int64_t i = 0; i < n; ++i) dst[i] = saturate(src[i], r);
  }
}

// ---------------------------------------------------------------- reductions

float reduceRow(OpCode code, const float *x, int64_t n) {
  CMapF v(x, n);
  switch (code) {
  case OpCode::Amax: return v.maxCoeff<Eigen::PropagateNaN>();
  case OpCode::Amin: return v.minCoeff<Eigen::PropagateNaN>();
  default: return v.sum(); // sum, mean
  }
}

void combineRow(OpCode code, float *acc, const float *x, int64_t n) {
  MapF a(acc, n);
  CMapF v(x, n);
  switch (code) {
  case OpCode::Amax: a = a.binaryExpr(v, MaxNaN()); break;
  case OpCode::Amin: a = a.binaryExpr(v, MinNaN()); break;
  default: a += v; break;
  }
}

/// [reduced, inner]: the first row, combined with every other row.
void reduceCols(OpCode code, const float *x, float *o, int64_t reduced, int64_t inner) {
  std::memcpy(o, x, size_t(inner) * sizeof(float));
  for (int64_t r = 1; r < reduced; ++r) combineRow(code, o, x + r * inner, inner);
}

/// The kept and the reduced dimensions of a reduction's operand, apart.
struct SplitDims {
  Dims keptSizes, keptStrides, reducedSizes, reducedStrides;
};

SplitDims splitDims(const ReducePlan &rp) {
  SplitDims s;
  for (size_t d = 0; d < rp.sizes.size(); ++d) {
    (rp.isReduced[d] ? s.reducedSizes : s.keptSizes).push_back(rp.sizes[d]);
    (rp.isReduced[d] ? s.reducedStrides : s.keptStrides).push_back(rp.strides[d]);
  }
  return s;
}

/// For each output: fold `step` over its reduced elements from `init`, store `finish`.
template <class T, class Acc, class Step, class Finish>
void reduceWalk(const ReducePlan &rp, const T *x, T *o, Acc init, Step step, Finish finish) {
  SplitDims s = splitDims(rp);
  int64_t out = 0;
  walkStrided<1>(s.keptSizes, {llvm::ArrayRef<int64_t>(s.keptStrides)},
                 [&](const std::array<int64_t, 1> &base) {
                   Acc acc = init;
                   walkStrided<1>(s.reducedSizes, {llvm::ArrayRef<int64_t>(s.reducedStrides)},
                                  [&](const std::array<int64_t, 1> &off) {
                                    acc = step(acc, x[base[0] + off[0]]);
                                  });
                   o[out++] = finish(acc);
                 });
}

void reduceFloat(const OpPlan &p, const float *x, float *o) {
  const ReducePlan &rp = p.reduce;
  using P = ReducePlan::Pattern;
  OpCode code = p.code;
  switch (rp.pattern) {
  case P::Copy: std::memcpy(o, x, size_t(p.numElements) * sizeof(float)); break;
  case P::All: o[0] = reduceRow(code, x, rp.reduced); break;
  case P::Rows:
    for (int64_t r = 0; r < rp.outer; ++r) o[r] = reduceRow(code, x + r * rp.reduced, rp.reduced);
    break;
  case P::Cols: reduceCols(code, x, o, rp.reduced, rp.inner); break;
  case P::MidCols:
    for (int64_t q = 0; q < rp.outer; ++q)
      reduceCols(code, x + q * rp.reduced * rp.inner, o + q * rp.inner, rp.reduced, rp.inner);
    break;
  case P::General: {
    auto same = [](float a) { return a; };
    if (code == OpCode::Amax)
      reduceWalk(rp, x, o, -std::numeric_limits<float>::infinity(),
                 [](float a, float v) { return std::isnan(a) || std::isnan(v) ? NAN : (v > a ? v : a); },
                 same);
    else if (code == OpCode::Amin)
      reduceWalk(rp, x, o, std::numeric_limits<float>::infinity(),
                 [](float a, float v) { return std::isnan(a) || std::isnan(v) ? NAN : (v < a ? v : a); },
                 same);
    else
      reduceWalk(rp, x, o, 0.0f, [](float a, float v) { return a + v; }, same);
    break;
  }
  }
  if (code == OpCode::Mean) {
    MapF v(o, p.numElements);
    v /= static_cast<float>(rp.count);
  }
  roundFloatTile(o, p.numElements, p.dtype);
}

void reduceInt(const OpPlan &p, const int32_t *x, int32_t *o) {
  const ReducePlan &rp = p.reduce;
  IntRange r = rangeOf(p.dtype);
  switch (p.code) {
  case OpCode::Amax:
    reduceWalk(rp, x, o, std::numeric_limits<int64_t>::min(),
               [](int64_t a, int32_t v) { return v > a ? int64_t(v) : a; },
               [r](int64_t a) { return saturate(a, r); });
    break;
  case OpCode::Amin:
    reduceWalk(rp, x, o, std::numeric_limits<int64_t>::max(),
               [](int64_t a, int32_t v) { return v < a ? int64_t(v) : a; },
               [r](int64_t a) { return saturate(a, r); });
    break;
  case OpCode::Mean: {
    double count = static_cast<double>(rp.count);
    reduceWalk(rp, x, o, int64_t(0), [](int64_t a, int32_t v) { return a + v; },
               [r, count](int64_t a) { return toInt(double(a) / count, r); });
    break;
  }
  default:
    reduceWalk(rp, x, o, int64_t(0), [](int64_t a, int32_t v) { return a + v; },
               [r](int64_t a) { return saturate(a, r); });
    break;
  }
}

// ---------------------------------------------------------------- data movement

template <class T>
void transposeTile(const TransposePlan &tp, const T *x, T *o) {
  const Dims &sz = tp.sizes, &st = tp.inStrides;
  if (sz.size() == 2 && st[0] == 1 && st[1] == sz[0]) {
    // A plain 2-D transpose: x is [sz[1], sz[0]] row-major.
    Eigen::Map<const RowMat<T>> in(x, sz[1], sz[0]);
    Eigen::Map<RowMat<T>> out(o, sz[0], sz[1]);
    out = in.transpose();
    return;
  }
  int64_t n = sz.back(), inner = st.back();
  int64_t row = 0;
  walkStrided<1>(llvm::ArrayRef<int64_t>(sz).drop_back(),
                 {llvm::ArrayRef<int64_t>(st).drop_back()}, [&](const std::array<int64_t, 1> &off) {
                   const T *src = x + off[0];
                   T *dst = o + row * n;
                   ++row;
                   if (inner == 1) std::memcpy(dst, src, size_t(n) * sizeof(T));
                   else
                     for (int64_t i = 0; i < n; ++i) dst[i] = src[i * inner];
                 });
}

// ---------------------------------------------------------------- matmul

template <class C, class X, class Y>
void gemm(C &c, const X &x, const Y &y, bool tx, bool ty, bool accumulate) {
  if (!tx && !ty) {
    if (accumulate) c.noalias() += x * y;
    else c.noalias() = x * y;
  } else if (tx && !ty) {
    if (accumulate) c.noalias() += x.transpose() * y;
    else c.noalias() = x.transpose() * y;
  } else if (!tx && ty) {
    if (accumulate) c.noalias() += x * y.transpose();
    else c.noalias() = x * y.transpose();
  } else {
    if (accumulate) c.noalias() += x.transpose() * y.transpose();
    else c.noalias() = x.transpose() * y.transpose();
  }
}

/// Eigen's own GEMM on maps of the tiles (no copies; the accumulator is copied into
/// the result only when the planner could not place the result over it). Eigen is
/// built without OpenMP here, so each product runs on the calling worker only.
template <class T>
void matmulTile(const MatmulPlan &mp, const T *x, const T *y, const T *acc, T *o) {
  int64_t mn = mp.m * mp.n;
  int64_t b = 0;
  walkStrided<2>(mp.batchSizes, {llvm::ArrayRef<int64_t>(mp.batchStrideX),
                                 llvm::ArrayRef<int64_t>(mp.batchStrideY)},
                 [&](const std::array<int64_t, 2> &off) {
                   Eigen::Map<const RowMat<T>> a(x + off[0], mp.rowsX, mp.colsX);
                   Eigen::Map<const RowMat<T>> bm(y + off[1], mp.rowsY, mp.colsY);
                   T *ob = o + b * mn;
                   Eigen::Map<RowMat<T>> c(ob, mp.m, mp.n);
                   if (acc && mp.accIsRow) {
                     for (int64_t r = 0; r < mp.m; ++r)
                       std::memcpy(ob + r * mp.n, acc, size_t(mp.n) * sizeof(T));
                   } else if (acc) {
                     const T *ab = acc + b * mn;
                     if (ab != ob) std::memcpy(ob, ab, size_t(mn) * sizeof(T));
                   }
                   gemm(c, a, bm, mp.transposeX, mp.transposeY, acc != nullptr);
                   ++b;
                 });
}

} // namespace

void roundFloatTile(float *data, int64_t n, DType dtype) {
  if (dtype == DType::F16) {
    for (int64_t i = 0; i < n; ++i) data[i] = static_cast<float>(Eigen::half(data[i]));
  } else if (dtype == DType::BF16) {
    for (int64_t i = 0; i < n; ++i) data[i] = static_cast<float>(Eigen::bfloat16(data[i]));
  }
}

void runComputeOp(const LeafPlan &plan, int i, TileMemory mem) {
  const OpPlan &p = plan.ops[i];
  auto floats = [&](int op) { return mem.floats + plan.ops[op].offset; };
  auto ints = [&](int op) { return mem.ints + plan.ops[op].offset; };
  bool isFloat = p.rep == Rep::Float;
  int64_t n = p.numElements;
  switch (ir::OpRegistry::get().def(p.code).cls) {
  case ir::OpClass::ElementwiseUnary:
    if (isFloat) {
      unaryFloat(p.code, floats(p.x), floats(i), n);
      roundFloatTile(floats(i), n, p.dtype);
    } else {
      unaryInt(p.code, ints(p.x), ints(i), n, p.dtype);
    }
    return;
  case ir::OpClass::ElementwiseBinary:
    if (isFloat && p.divIntrinsic) {
      divIntrinsicFloat(p.broadcast, floats(p.x), floats(p.y), floats(i), p.dtype);
      roundFloatTile(floats(i), n, p.dtype);
    } else if (isFloat) {
      binaryFloat(p.code, p.broadcast, floats(p.x), floats(p.y), floats(i));
      roundFloatTile(floats(i), n, p.dtype);
    } else {
      binaryInt(p.code, p.broadcast, ints(p.x), ints(p.y), ints(i), p.dtype);
    }
    return;
  case ir::OpClass::Cast: castTile(p, plan.ops[p.x], mem); return;
  case ir::OpClass::Reduction:
    if (isFloat) reduceFloat(p, floats(p.x), floats(i));
    else reduceInt(p, ints(p.x), ints(i));
    return;
  case ir::OpClass::Reshape:
    if (isFloat && floats(p.x) != floats(i))
      std::memcpy(floats(i), floats(p.x), size_t(n) * sizeof(float));
    else if (!isFloat && ints(p.x) != ints(i))
      std::memcpy(ints(i), ints(p.x), size_t(n) * sizeof(int32_t));
    return;
  case ir::OpClass::Transpose:
    if (isFloat) transposeTile(p.transpose, floats(p.x), floats(i));
    else transposeTile(p.transpose, ints(p.x), ints(i));
    return;
  case ir::OpClass::Full:
    if (isFloat) std::fill_n(floats(i), n, static_cast<float>(p.fillValue));
    else std::fill_n(ints(i), n, static_cast<int32_t>(p.fillValue));
    return;
  case ir::OpClass::Matmul:
    if (isFloat) {
      matmulTile(p.matmul, floats(p.x), floats(p.y), p.acc >= 0 ? floats(p.acc) : nullptr,
                 floats(i));
      roundFloatTile(floats(i), n, p.dtype);
    } else {
      matmulTile(p.matmul, ints(p.x), ints(p.y), p.acc >= 0 ? ints(p.acc) : nullptr, ints(i));
      if (p.dtype != DType::I32) {
        IntRange r = rangeOf(p.dtype);
        for (int32_t *v = ints(i), *e = v + n; v != e; ++v) *v = saturate(*v, r);
      }
    }
    return;
  default: return; // copy_in/copy_out move GM data (GmAccess); others never get planned
  }
}

} // namespace ptoc::runtime::exec
