// Numeric kernels for planned leaf ops: Eigen array expressions and GEMM on float
// tiles, exact int64 arithmetic with saturation on integer tiles.
#include "TileKernels.h"

#include "IndexRules.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

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

// Integer tiles hold every integer type widened to int64 (u64 as its bits); ops
// compute exactly in 128 bits and bring the result back into the type's range.

using Wide = __int128;

/// The value an integer tile element of type `t` holds.
inline Wide widen(int64_t v, DType t) {
  return t == DType::U64 ? Wide(static_cast<uint64_t>(v)) : Wide(v);
}

/// An exact result stored for type `t`: saturated to its range (bool: nonzero is 1).
inline int64_t saturate(Wide v, DType t) {
  if (t == DType::Bool) return v != 0;
  Wide lo = ir::intMin(t), hi = ir::intMax(t);
  Wide c = v < lo ? lo : (v > hi ? hi : v);
  return static_cast<int64_t>(static_cast<uint64_t>(c));
}

/// ir::roundToDType for integers, from a float or double: NaN -> 0, truncate toward
/// zero, saturate (bool: nonzero or NaN is 1). Exact for every double.
inline int64_t toInt(double v, DType t) {
  if (t == DType::Bool) return v != 0 || std::isnan(v);
  if (std::isnan(v)) return 0;
  double r = std::trunc(v);
  // Beyond +-2^100 every integer type saturates; inside, the double converts exactly.
  if (r >= 0x1p100) return saturate(Wide(1) << 100, t);
  if (r <= -0x1p100) return saturate(-(Wide(1) << 100), t);
  return saturate(static_cast<Wide>(r), t);
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

void unaryInt(OpCode code, const int64_t *x, int64_t *o, int64_t n, DType dtype) {
  switch (code) {
  case OpCode::Neg:
    for (int64_t i = 0; i < n; ++i) o[i] = saturate(-widen(x[i], dtype), dtype);
    break;
  case OpCode::Abs:
    for (int64_t i = 0; i < n; ++i) {
      Wide v = widen(x[i], dtype);
      o[i] = saturate(v < 0 ? -v : v, dtype);
    }
    break;
  case OpCode::Relu:
    for (int64_t i = 0; i < n; ++i) o[i] = widen(x[i], dtype) > 0 ? x[i] : 0;
    break;
  // Rounding to an integral value is the identity on integers.
  case OpCode::Ceil:
  case OpCode::Floor:
  case OpCode::Trunc:
  case OpCode::Round:
    if (o != x) std::memcpy(o, x, size_t(n) * sizeof(int64_t));
    break;
  default: {
    // Float-only functions (the type rules keep them off integer tiles): through
    // double, as the folder would, then rounded like roundToDType.
    double (*fn)(double) = ir::OpRegistry::get().def(code).unaryFn;
    if (!fn) return;
    for (int64_t i = 0; i < n; ++i) o[i] = toInt(fn(double(widen(x[i], dtype))), dtype);
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

/// Calls row(xRow, yRow, outRow, n, strideX, strideY) for every innermost row of a
/// broadcast pair (outRow dense, of n elements).
template <class T, class U, class Row>
void forEachBroadcastRow(const BroadcastPlan &bp, const T *x, const T *y, U *o, Row row) {
  int64_t n = bp.sizes.back();
  int64_t ix = bp.strideX.back(), iy = bp.strideY.back();
  llvm::ArrayRef<int64_t> outer = llvm::ArrayRef<int64_t>(bp.sizes).drop_back();
  llvm::ArrayRef<int64_t> sx = llvm::ArrayRef<int64_t>(bp.strideX).drop_back();
  llvm::ArrayRef<int64_t> sy = llvm::ArrayRef<int64_t>(bp.strideY).drop_back();
  int64_t r = 0;
  walkStrided<2>(outer, {sx, sy}, [&](const std::array<int64_t, 2> &off) {
    row(x + off[0], y + off[1], o + r * n, n, ix, iy);
    ++r;
  });
}

/// Integer binary ops row by row; f(a, b) gets the operands' values and returns the
/// stored result.
template <class F>
void binaryIntRows(const BroadcastPlan &bp, const int64_t *x, const int64_t *y, int64_t *o,
                   DType operandType, F f) {
  forEachBroadcastRow(bp, x, y, o, [&](const int64_t *xr, const int64_t *yr, int64_t *orow,
                                      int64_t n, int64_t ix, int64_t iy) {
    for (int64_t i = 0; i < n; ++i)
      orow[i] = f(widen(xr[i * ix], operandType), widen(yr[i * iy], operandType));
  });
}

void binaryInt(OpCode code, const BroadcastPlan &bp, const int64_t *x, const int64_t *y,
               int64_t *o, DType dtype) {
  DType t = dtype;
  switch (code) {
  case OpCode::Add: binaryIntRows(bp, x, y, o, t, [t](Wide a, Wide b) { return saturate(a + b, t); }); break;
  case OpCode::Sub: binaryIntRows(bp, x, y, o, t, [t](Wide a, Wide b) { return saturate(a - b, t); }); break;
  case OpCode::Mul:
    // u64 * u64 can exceed 128 signed bits: such a product saturates.
    binaryIntRows(bp, x, y, o, t, [t](Wide a, Wide b) {
      Wide p;
      if (__builtin_mul_overflow(a, b, &p)) p = (a < 0) != (b < 0) ? -(Wide(1) << 100) : Wide(1) << 100;
      return saturate(p, t);
    });
    break;
  case OpCode::Div:
    // Truncating division; by zero as the folder's double arithmetic rounded to the
    // dtype: +-inf saturates, 0/0 (NaN) becomes 0 (bool: inf and NaN are nonzero, 1).
    binaryIntRows(bp, x, y, o, t, [t](Wide a, Wide b) {
      if (b == 0) return toInt(a > 0 ? INFINITY : (a < 0 ? -INFINITY : NAN), t);
      return saturate(a / b, t);
    });
    break;
  case OpCode::Max: binaryIntRows(bp, x, y, o, t, [t](Wide a, Wide b) { return saturate(a > b ? a : b, t); }); break;
  case OpCode::Min: binaryIntRows(bp, x, y, o, t, [t](Wide a, Wide b) { return saturate(a < b ? a : b, t); }); break;
  case OpCode::Pow:
    binaryIntRows(bp, x, y, o, t, [t](Wide a, Wide b) {
      return toInt(std::pow(static_cast<double>(a), static_cast<double>(b)), t);
    });
    break;
  default: break;
  }
}

// ---------------------------------------------------------------- cast

/// An integral double in `t`'s range (its ends as doubles, which may be one past the
/// range: 2^63, 2^64) stored for `t`.
inline int64_t storeIntegral(double r, DType t) {
  if (t == DType::U64) return static_cast<int64_t>(r >= 0x1p64 ? UINT64_MAX : static_cast<uint64_t>(r));
  return r >= 0x1p63 ? INT64_MAX : static_cast<int64_t>(r);
}

/// The low bits of `v` as type `t` (two's complement; bool: nonzero is 1).
inline int64_t wrap(Wide v, DType t) {
  if (t == DType::Bool) return v != 0;
  unsigned bits = ir::elementSize(t) * 8;
  uint64_t low = static_cast<uint64_t>(v);
  if (bits == 64) return static_cast<int64_t>(low);
  low &= (uint64_t(1) << bits) - 1;
  if (!ir::isUnsigned(t) && (low >> (bits - 1))) return static_cast<int64_t>(low) - (int64_t(1) << bits);
  return static_cast<int64_t>(low);
}

/// `v` as a double that rounds to every float type, in every mode, as `v` itself
/// would: exact within 2^53; beyond, rounded to 53 bits with the dropped bits
/// folded into the last one (round to odd), which keeps which neighbours bracket v
/// and whether it is exact.
inline double stickyDouble(Wide v) {
  unsigned __int128 a = v < 0 ? -static_cast<unsigned __int128>(v) : static_cast<unsigned __int128>(v);
  int length = 128 - (a >> 64 ? __builtin_clzll(uint64_t(a >> 64)) : 64 + (a ? __builtin_clzll(uint64_t(a)) : 64));
  int shift = length - 53;
  if (shift > 0) {
    unsigned __int128 dropped = a & ((static_cast<unsigned __int128>(1) << shift) - 1);
    a >>= shift;
    if (dropped) a |= 1;
  }
  double d = std::ldexp(static_cast<double>(static_cast<uint64_t>(a)), shift > 0 ? shift : 0);
  return v < 0 ? -d : d;
}

void castTile(const OpPlan &p, const OpPlan &x, TileMemory mem) {
  int64_t n = p.numElements;
  ir::CastMode mode = p.castMode;
  if (x.rep == Rep::Float && p.rep == Rep::Float) {
    float *dst = mem.floats + p.offset;
    const float *src = mem.floats + x.offset;
    if (mode == ir::CastMode::Rint) {
      if (dst != src) std::memcpy(dst, src, size_t(n) * sizeof(float));
      roundFloatTile(dst, n, p.dtype);
    } else {
      for (int64_t i = 0; i < n; ++i)
        dst[i] = static_cast<float>(ir::roundToFloat(src[i], p.dtype, mode));
    }
  } else if (x.rep == Rep::Float) {
    const float *src = mem.floats + x.offset;
    int64_t *dst = mem.ints + p.offset;
    if (mode == ir::CastMode::Trunc && p.saturate) {
      for (int64_t i = 0; i < n; ++i) dst[i] = toInt(src[i], p.dtype);
    } else {
      for (int64_t i = 0; i < n; ++i)
        dst[i] = storeIntegral(ir::castValue(src[i], x.dtype, p.dtype, mode, p.saturate), p.dtype);
    }
  } else if (p.rep == Rep::Float) {
    const int64_t *src = mem.ints + x.offset;
    float *dst = mem.floats + p.offset;
    // From the exact value (stickyDouble), rounded once with the mode; f16/bf16 at rint
    // round through f32 as ir::roundToDType does.
    for (int64_t i = 0; i < n; ++i)
      dst[i] = static_cast<float>(ir::roundToFloat(stickyDouble(widen(src[i], x.dtype)), p.dtype, mode));
  } else {
    const int64_t *src = mem.ints + x.offset;
    int64_t *dst = mem.ints + p.offset;
    if (p.saturate)
      for (int64_t i = 0; i < n; ++i) dst[i] = saturate(widen(src[i], x.dtype), p.dtype);
    else
      for (int64_t i = 0; i < n; ++i) dst[i] = wrap(widen(src[i], x.dtype), p.dtype);
  }
}

// ---------------------------------------------------------------- comparisons, where

/// A bool result per element of a broadcast pair: f(a, b) on floats (as float) or
/// on integers (their exact values).
template <class T, class Load, class F>
void predicateRows(const BroadcastPlan &bp, const T *x, const T *y, int64_t *o, Load load, F f) {
  forEachBroadcastRow(bp, x, y, o, [&](const T *xr, const T *yr, int64_t *orow, int64_t n,
                                      int64_t ix, int64_t iy) {
    for (int64_t i = 0; i < n; ++i) orow[i] = f(load(xr[i * ix]), load(yr[i * iy])) ? 1 : 0;
  });
}

template <class T, class Load>
void predicate(OpCode code, const BroadcastPlan &bp, const T *x, const T *y, int64_t *o,
               Load load) {
  switch (code) {
  case OpCode::Eq: predicateRows(bp, x, y, o, load, [](auto a, auto b) { return a == b; }); break;
  case OpCode::Ne: predicateRows(bp, x, y, o, load, [](auto a, auto b) { return a != b; }); break;
  case OpCode::Lt: predicateRows(bp, x, y, o, load, [](auto a, auto b) { return a < b; }); break;
  case OpCode::Le: predicateRows(bp, x, y, o, load, [](auto a, auto b) { return a <= b; }); break;
  case OpCode::Gt: predicateRows(bp, x, y, o, load, [](auto a, auto b) { return a > b; }); break;
  case OpCode::Ge: predicateRows(bp, x, y, o, load, [](auto a, auto b) { return a >= b; }); break;
  // Nonzero is true; a float NaN is nonzero.
  case OpCode::LogicalAnd:
    predicateRows(bp, x, y, o, load, [](auto a, auto b) { return a != 0 && b != 0; });
    break;
  case OpCode::LogicalOr:
    predicateRows(bp, x, y, o, load, [](auto a, auto b) { return a != 0 || b != 0; });
    break;
  default: break;
  }
}

/// where: o = c ? a : b per element of the broadcast triple.
template <class T>
void whereTile(const BroadcastPlan &bp, const int64_t *c, const T *a, const T *b, T *o) {
  int64_t n = bp.sizes.back();
  int64_t ic = bp.strideX.back(), ia = bp.strideY.back(), ib = bp.strideZ.back();
  llvm::ArrayRef<int64_t> outer = llvm::ArrayRef<int64_t>(bp.sizes).drop_back();
  llvm::ArrayRef<int64_t> sc = llvm::ArrayRef<int64_t>(bp.strideX).drop_back();
  llvm::ArrayRef<int64_t> sa = llvm::ArrayRef<int64_t>(bp.strideY).drop_back();
  llvm::ArrayRef<int64_t> sb = llvm::ArrayRef<int64_t>(bp.strideZ).drop_back();
  int64_t row = 0;
  walkStrided<3>(outer, {sc, sa, sb}, [&](const std::array<int64_t, 3> &off) {
    const int64_t *cr = c + off[0];
    const T *ar = a + off[1], *br = b + off[2];
    T *orow = o + row * n;
    ++row;
    for (int64_t i = 0; i < n; ++i) orow[i] = cr[i * ic] ? ar[i * ia] : br[i * ib];
  });
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

/// `count`: what mean divides by (the plan's count, or the valid elements' of a
/// partly valid tile).
void reduceFloat(const OpPlan &p, const float *x, float *o, int64_t count) {
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
    v /= static_cast<float>(count);
  }
  roundFloatTile(o, p.numElements, p.dtype);
}

void reduceInt(const OpPlan &p, const int64_t *x, int64_t *o, int64_t count) {
  const ReducePlan &rp = p.reduce;
  DType t = p.dtype;
  // Accumulated in 128 bits: a sum of up to 2^63 64-bit values cannot overflow.
  auto step = [t](Wide f(Wide, Wide)) {
    return [t, f](Wide a, int64_t v) { return f(a, widen(v, t)); };
  };
  auto store = [t](Wide a) { return saturate(a, t); };
  switch (p.code) {
  case OpCode::Amax:
    reduceWalk(rp, x, o, -(Wide(1) << 100), step([](Wide a, Wide v) { return v > a ? v : a; }), store);
    break;
  case OpCode::Amin:
    reduceWalk(rp, x, o, Wide(1) << 100, step([](Wide a, Wide v) { return v < a ? v : a; }), store);
    break;
  case OpCode::Mean: {
    double n = static_cast<double>(count);
    reduceWalk(rp, x, o, Wide(0), step([](Wide a, Wide v) { return a + v; }),
               [t, n](Wide a) { return n > 0 ? toInt(double(a) / n, t) : 0; });
    break;
  }
  default:
    reduceWalk(rp, x, o, Wide(0), step([](Wide a, Wide v) { return a + v; }), store);
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

// ---------------------------------------------------------------- index ops

/// Calls f(xBase, oBase) for the first element of every row along `dim`, the rows of
/// x (shape xs) and of the result (shape os) walked together.
template <class F>
void forEachRowPair(const Dims &xs, const Dims &os, int64_t dim, F &&f) {
  Dims outer = xs, xStrides(xs.size(), 1), oStrides(os.size(), 1);
  for (int d = int(xs.size()) - 2; d >= 0; --d) {
    xStrides[d] = xStrides[d + 1] * xs[d + 1];
    oStrides[d] = oStrides[d + 1] * os[d + 1];
  }
  outer[dim] = 1;
  walkStrided<2>(outer, {llvm::ArrayRef<int64_t>(xStrides), llvm::ArrayRef<int64_t>(oStrides)},
                 [&](const std::array<int64_t, 2> &off) { f(off[0], off[1]); });
}

int64_t strideOf(const Dims &shape, int64_t dim) {
  int64_t s = 1;
  for (size_t d = size_t(dim) + 1; d < shape.size(); ++d) s *= shape[d];
  return s;
}

/// topk_indices: the positions selectTopK picks from every row along p.dim.
template <class T>
void topkIndicesTile(const OpPlan &p, const Dims &xs, const T *x, int64_t *o) {
  int64_t n = xs[p.dim], xStep = strideOf(xs, p.dim), oStep = strideOf(p.shape, p.dim);
  std::vector<int64_t> order;
  forEachRowPair(xs, p.shape, p.dim, [&](int64_t xb, int64_t ob) {
    selectTopK(n, p.k, p.largest, [&](int64_t j) { return x[xb + j * xStep]; }, order);
    for (int64_t j = 0; j < p.k; ++j) o[ob + j * oStep] = order[j];
  });
}

/// gather: o[..., i, ...] = x[..., index[..., i, ...], ...]; an index outside the
/// input tile's dimension gives 0 (the reference evaluator reports it as an error).
template <class T, class I>
void gatherTile(const OpPlan &p, const Dims &xs, const T *x, const I *index, T *o) {
  int64_t rank = int64_t(p.shape.size());
  Dims xStrides(size_t(rank), 1);
  for (int64_t d = rank - 2; d >= 0; --d) xStrides[d] = xStrides[d + 1] * xs[d + 1];
  Dims xWalk = xStrides;
  xWalk[p.dim] = 0;
  int64_t i = 0, size = xs[p.dim], step = xStrides[p.dim];
  walkStrided<1>(p.shape, {llvm::ArrayRef<int64_t>(xWalk)}, [&](const std::array<int64_t, 1> &off) {
    int64_t at = 0;
    o[i] = readIndex(index[i], size, at) ? x[off[0] + at * step] : T(0);
    ++i;
  });
}

/// scatter: the input, then every source element at its index position in row-major
/// order (add / multiply combine with what is there); an index outside the input
/// tile's dimension is skipped (the reference evaluator reports it as an error).
template <class T, class I>
void scatterTile(const OpPlan &p, const Dims &xs, const Dims &is, const Dims &ss, const T *x,
                 const I *index, const T *src, T *o) {
  int64_t n = 1;
  for (int64_t d : xs) n *= d;
  if (o != x) std::memcpy(o, x, size_t(n) * sizeof(T));
  int64_t rank = int64_t(xs.size());
  Dims xStrides(size_t(rank), 1), sStrides(size_t(rank), 1);
  for (int64_t d = rank - 2; d >= 0; --d) {
    xStrides[d] = xStrides[d + 1] * xs[d + 1];
    sStrides[d] = sStrides[d + 1] * ss[d + 1];
  }
  Dims xWalk = xStrides;
  xWalk[p.dim] = 0;
  int64_t i = 0, size = xs[p.dim], step = xStrides[p.dim];
  walkStrided<2>(is, {llvm::ArrayRef<int64_t>(xWalk), llvm::ArrayRef<int64_t>(sStrides)},
                 [&](const std::array<int64_t, 2> &off) {
                   int64_t at = 0;
                   if (readIndex(index[i++], size, at)) {
                     T &slot = o[off[0] + at * step];
                     T v = src[off[1]];
                     if constexpr (std::is_integral_v<T>) {
                       // Exactly in 128 bits, clamped to the tile's words (the caller
                       // saturates to the element type after).
                       __int128 r = p.combine == ir::ScatterReduce::Add ? __int128(slot) + v
                                    : p.combine == ir::ScatterReduce::Multiply
                                        ? __int128(slot) * v
                                        : __int128(v);
                       slot = T(std::clamp<__int128>(r, std::numeric_limits<T>::min(),
                                                     std::numeric_limits<T>::max()));
                     } else {
                       slot = p.combine == ir::ScatterReduce::Add        ? slot + v
                              : p.combine == ir::ScatterReduce::Multiply ? slot * v
                                                                        : v;
                     }
                   }
                 });
}

/// expand_clone: every result element from the input element its broadcast maps to.
template <class T> void expandCloneTile(const OpPlan &p, const Dims &xs, const T *x, T *o) {
  int64_t rank = int64_t(p.shape.size());
  Dims strides(size_t(rank), 0);
  for (int64_t d = rank - 1, s = 1; d >= 0; s *= xs[d], --d)
    strides[d] = xs[d] == 1 ? 0 : s;
  int64_t i = 0;
  walkStrided<1>(p.shape, {llvm::ArrayRef<int64_t>(strides)},
                 [&](const std::array<int64_t, 1> &off) { o[i++] = x[off[0]]; });
}

} // namespace

void roundFloatTile(float *data, int64_t n, DType dtype) {
  if (dtype == DType::F16) {
    for (int64_t i = 0; i < n; ++i) data[i] = static_cast<float>(Eigen::half(data[i]));
  } else if (dtype == DType::BF16) {
    for (int64_t i = 0; i < n; ++i) data[i] = static_cast<float>(Eigen::bfloat16(data[i]));
  }
}

void runReductionOn(const LeafPlan &plan, int i, TileMemory mem, const float *xf,
                    const int64_t *xi, int64_t count) {
  const OpPlan &p = plan.ops[i];
  if (p.rep == Rep::Float) reduceFloat(p, xf, mem.floats + p.offset, count);
  else reduceInt(p, xi, mem.ints + p.offset, count);
}

void runMatmulOn(const LeafPlan &plan, int i, TileMemory mem, const float *xf, const float *yf,
                 const int64_t *xi, const int64_t *yi) {
  const OpPlan &p = plan.ops[i];
  int64_t n = p.numElements;
  if (p.rep == Rep::Float) {
    float *o = mem.floats + p.offset;
    matmulTile(p.matmul, xf, yf, p.acc >= 0 ? mem.floats + plan.ops[p.acc].offset : nullptr, o);
    roundFloatTile(o, n, p.dtype);
  } else {
    int64_t *o = mem.ints + p.offset;
    matmulTile(p.matmul, xi, yi, p.acc >= 0 ? mem.ints + plan.ops[p.acc].offset : nullptr, o);
    for (int64_t *v = o, *e = v + n; v != e; ++v) *v = saturate(*v, p.dtype);
  }
}

int64_t intIdentity(ir::OpCode code, ir::DType dtype) {
  if (code == OpCode::Amax) return saturate(-(Wide(1) << 100), dtype);
  if (code == OpCode::Amin) return saturate(Wide(1) << 100, dtype);
  return 0;
}

void runComputeOp(const LeafPlan &plan, int i, TileMemory mem) {
  const OpPlan &p = plan.ops[i];
  auto floats = [&](int op) { return mem.floats + plan.ops[op].offset; };
  auto ints = [&](int op) { return mem.ints + plan.ops[op].offset; };
  bool isFloat = p.rep == Rep::Float;
  int64_t n = p.numElements;
  switch (ir::OpRegistry::get().def(p.code).cls) {
  case ir::OpClass::ElementwiseUnary:
    if (p.code == OpCode::LogicalNot) {
      const OpPlan &x = plan.ops[p.x];
      int64_t *o = ints(i);
      if (x.rep == Rep::Float)
        for (int64_t k = 0; k < n; ++k) o[k] = floats(p.x)[k] == 0.0f;
      else
        for (int64_t k = 0; k < n; ++k) o[k] = ints(p.x)[k] == 0;
      return;
    }
    if (isFloat) {
      unaryFloat(p.code, floats(p.x), floats(i), n);
      roundFloatTile(floats(i), n, p.dtype);
    } else {
      unaryInt(p.code, ints(p.x), ints(i), n, p.dtype);
    }
    return;
  case ir::OpClass::ElementwiseBinary:
    if (ir::OpRegistry::get().def(p.code).boolResult) {
      const OpPlan &x = plan.ops[p.x];
      if (x.rep == Rep::Float)
        predicate(p.code, p.broadcast, floats(p.x), floats(p.y), ints(i), [](float v) { return v; });
      else
        predicate(p.code, p.broadcast, ints(p.x), ints(p.y), ints(i),
                  [t = x.dtype](int64_t v) { return widen(v, t); });
      return;
    }
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
  case ir::OpClass::Select:
    if (isFloat) whereTile(p.broadcast, ints(p.x), floats(p.y), floats(p.z), floats(i));
    else whereTile(p.broadcast, ints(p.x), ints(p.y), ints(p.z), ints(i));
    return;
  case ir::OpClass::Reduction:
    if (isFloat) reduceFloat(p, floats(p.x), floats(i), p.reduce.count);
    else reduceInt(p, ints(p.x), ints(i), p.reduce.count);
    return;
  case ir::OpClass::Reshape:
    if (isFloat && floats(p.x) != floats(i))
      std::memcpy(floats(i), floats(p.x), size_t(n) * sizeof(float));
    else if (!isFloat && ints(p.x) != ints(i))
      std::memcpy(ints(i), ints(p.x), size_t(n) * sizeof(int64_t));
    return;
  case ir::OpClass::Transpose:
    if (isFloat) transposeTile(p.transpose, floats(p.x), floats(i));
    else transposeTile(p.transpose, ints(p.x), ints(i));
    return;
  case ir::OpClass::Full:
    if (isFloat) std::fill_n(floats(i), n, static_cast<float>(p.fillValue));
    else std::fill_n(ints(i), n, toInt(p.fillValue, p.dtype));
    return;
  case ir::OpClass::Matmul:
    if (isFloat) {
      matmulTile(p.matmul, floats(p.x), floats(p.y), p.acc >= 0 ? floats(p.acc) : nullptr,
                 floats(i));
      roundFloatTile(floats(i), n, p.dtype);
    } else {
      matmulTile(p.matmul, ints(p.x), ints(p.y), p.acc >= 0 ? ints(p.acc) : nullptr, ints(i));
      // i8 operands accumulate exactly in int64 (K is far below 2^48); the i32
      // result saturates.
      for (int64_t *v = ints(i), *e = v + n; v != e; ++v) *v = saturate(*v, p.dtype);
    }
    return;
  case ir::OpClass::TopKIndices: {
    const OpPlan &x = plan.ops[p.x];
    if (x.rep == Rep::Float) topkIndicesTile(p, x.shape, floats(p.x), ints(i));
    else topkIndicesTile(p, x.shape, ints(p.x), ints(i));
    return;
  }
  case ir::OpClass::Gather: {
    const Dims &xs = plan.ops[p.x].shape;
    if (isFloat) gatherTile(p, xs, floats(p.x), ints(p.y), floats(i));
    else gatherTile(p, xs, ints(p.x), ints(p.y), ints(i));
    return;
  }
  case ir::OpClass::Scatter: {
    const Dims &xs = plan.ops[p.x].shape, &is = plan.ops[p.y].shape, &ss = plan.ops[p.acc].shape;
    if (isFloat) {
      scatterTile(p, xs, is, ss, floats(p.x), ints(p.y), floats(p.acc), floats(i));
      roundFloatTile(floats(i), n, p.dtype);
    } else {
      scatterTile(p, xs, is, ss, ints(p.x), ints(p.y), ints(p.acc), ints(i));
      for (int64_t *v = ints(i), *e = v + n; v != e; ++v) *v = saturate(*v, p.dtype);
    }
    return;
  }
  case ir::OpClass::ExpandClone:
    if (isFloat) expandCloneTile(p, plan.ops[p.x].shape, floats(p.x), floats(i));
    else expandCloneTile(p, plan.ops[p.x].shape, ints(p.x), ints(i));
    return;
  default: return; // copy_in/copy_out move GM data (GmAccess); others never get planned
  }
}

} // namespace ptoc::runtime::exec
