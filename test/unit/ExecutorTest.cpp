// The numeric executor on hand-built Programs: op semantics against the constant
// folder's scalar functions and per-op dtype rounding, tiling (tail tiles, split
// reductions, K loops), aliases, order/thread independence, and input checking.
#include <catch2/catch.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>
#include <optional>
#include <random>
#include <thread>

#include <Eigen/Core>

#include "ptoc/codegen/Program.h"
#include "ptoc/ir/OpDef.h"
#include "ptoc/runtime/Executor.h"

using namespace ptoc;
using codegen::GmTensor;
using codegen::LeafOp;
using ir::DType;
using ir::MemSpace;
using ir::OpCode;
using runtime::ExecOptions;
using runtime::HostTensor;

namespace {

using Shape = llvm::SmallVector<int64_t, 4>;

int64_t numel(llvm::ArrayRef<int64_t> s) {
  return std::accumulate(s.begin(), s.end(), int64_t(1), std::multiplies<int64_t>());
}

Shape rowMajor(llvm::ArrayRef<int64_t> s) {
  Shape st(s.size(), 1);
  for (int d = int(s.size()) - 2; d >= 0; --d) st[d] = st[d + 1] * s[d + 1];
  return st;
}

/// Builds one leaf op by op; every method returns the new op's index.
struct LeafBuilder {
  codegen::Leaf leaf;

  int add(LeafOp op) {
    leaf.ops.push_back(std::move(op));
    return int(leaf.ops.size()) - 1;
  }
  const LeafOp &at(int i) const { return leaf.ops[i]; }

  int copyIn(DType t, Shape shape, int region, MemSpace space = MemSpace::UB,
             llvm::ArrayRef<int> waits = {}) {
    LeafOp op;
    op.code = OpCode::CopyIn;
    op.dtype = t;
    op.shape = shape;
    op.space = space;
    op.region = region;
    op.operands.assign(waits.begin(), waits.end());
    leaf.numRegions = std::max(leaf.numRegions, region + 1);
    return add(op);
  }
  /// Writes tile `x` as GM dtype `t` (default: the tile's dtype).
  int copyOut(int x, int region, std::optional<DType> t = std::nullopt) {
    LeafOp op;
    op.code = OpCode::CopyOut;
    op.dtype = t.value_or(at(x).dtype);
    op.shape = at(x).shape;
    op.space = MemSpace::GM;
    op.region = region;
    op.operands = {x};
    leaf.numRegions = std::max(leaf.numRegions, region + 1);
    return add(op);
  }
  int unary(OpCode c, int x) {
    LeafOp op;
    op.code = c;
    op.dtype = at(x).dtype;
    op.shape = at(x).shape;
    op.operands = {x};
    return add(op);
  }
  int binary(OpCode c, int x, int y) {
    LeafOp op;
    op.code = c;
    op.dtype = at(x).dtype;
    op.shape = *ir::broadcastShapes(at(x).shape, at(y).shape);
    op.operands = {x, y};
    return add(op);
  }
  int cast(int x, DType t) {
    LeafOp op;
    op.code = OpCode::Cast;
    op.dtype = t;
    op.shape = at(x).shape;
    op.operands = {x};
    return add(op);
  }
  int reduce(OpCode c, int x, Shape axes, bool keepdim) {
    LeafOp op;
    op.code = c;
    op.dtype = at(x).dtype;
    for (size_t d = 0; d < at(x).shape.size(); ++d) {
      bool r = std::find(axes.begin(), axes.end(), int64_t(d)) != axes.end();
      if (!r) op.shape.push_back(at(x).shape[d]);
      else if (keepdim) op.shape.push_back(1);
    }
    op.axes = axes;
    op.keepdim = keepdim;
    op.operands = {x};
    return add(op);
  }
  int transpose(int x, Shape perm) {
    LeafOp op;
    op.code = OpCode::Transpose;
    op.dtype = at(x).dtype;
    for (int64_t p : perm) op.shape.push_back(at(x).shape[p]);
    op.perm = perm;
    op.operands = {x};
    return add(op);
  }
  int reshape(int x, Shape shape) {
    LeafOp op;
    op.code = OpCode::Reshape;
    op.dtype = at(x).dtype;
    op.shape = shape;
    op.operands = {x};
    return add(op);
  }
  int full(DType t, Shape shape, double v) {
    LeafOp op;
    op.code = OpCode::Full;
    op.dtype = t;
    op.shape = shape;
    op.value = v;
    return add(op);
  }
  int matmul(int a, int b, int acc = -1, bool ta = false, bool tb = false) {
    LeafOp op;
    op.code = OpCode::Matmul;
    op.dtype = ir::isFloat(at(a).dtype) ? DType::F32 : DType::I32;
    const Shape &sa = at(a).shape, &sb = at(b).shape;
    op.shape = {ta ? sa[1] : sa[0], tb ? sb[0] : sb[1]};
    op.space = MemSpace::L0C;
    op.transposeA = ta;
    op.transposeB = tb;
    op.operands = {a, b};
    if (acc >= 0) op.operands.push_back(acc);
    return add(op);
  }
};

/// Builds a Program: tensors, leaves, calls.
struct ProgramBuilder {
  codegen::Program p;

  int tensor(const std::string &name, GmTensor::Kind kind, DType t, Shape shape) {
    GmTensor g;
    g.name = name;
    g.kind = kind;
    g.dtype = t;
    g.shape = shape;
    g.strides = rowMajor(shape);
    g.base = int(p.tensors.size());
    p.tensors.push_back(g);
    return g.base;
  }
  int arg(const std::string &name, DType t, Shape shape) {
    int i = tensor(name, GmTensor::Kind::Argument, t, shape);
    p.tensors[i].argIndex = int(p.arguments.size());
    p.arguments.push_back(i);
    return i;
  }
  int temp(const std::string &name, DType t, Shape shape) {
    return tensor(name, GmTensor::Kind::Intermediate, t, shape);
  }
  int alias(const std::string &name, int base, Shape shape, int64_t offset, Shape strides) {
    int i = tensor(name, GmTensor::Kind::Alias, p.tensors[base].dtype, shape);
    p.tensors[i].base = base;
    p.tensors[i].baseOffset = offset;
    p.tensors[i].strides = strides;
    return i;
  }
  int leaf(LeafBuilder &b) {
    b.leaf.id = int(p.leaves.size());
    p.leaves.push_back(b.leaf);
    return b.leaf.id;
  }
  int call(int leaf, std::vector<codegen::Region> regions, std::vector<int> preds = {}) {
    codegen::Call c;
    c.leaf = leaf;
    c.subgraph = int(p.calls.size());
    c.regions = std::move(regions);
    c.preds = std::move(preds);
    p.calls.push_back(std::move(c));
    return int(p.calls.size()) - 1;
  }
};

codegen::Region at(int tensor, Shape offsets) { return {tensor, offsets}; }

HostTensor randomTensor(DType t, Shape shape, uint32_t seed, double lo = -4, double hi = 4) {
  HostTensor x(t, shape);
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  for (int64_t i = 0; i < x.numElements(); ++i) x.set(i, dist(gen));
  return x;
}

HostTensor tensorOf(DType t, Shape shape, std::vector<double> values) {
  HostTensor x(t, shape);
  for (size_t i = 0; i < values.size(); ++i) x.set(int64_t(i), values[i]);
  return x;
}

bool bitwiseEqual(const HostTensor &a, const HostTensor &b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() &&
         std::memcmp(a.data(), b.data(), a.sizeInBytes()) == 0;
}

std::vector<HostTensor> run(const codegen::Program &p, std::vector<HostTensor> args,
                            llvm::ArrayRef<int> order = {}, unsigned threads = 1) {
  std::vector<HostTensor> results;
  absl::Status s = runtime::execute(p, args, results, order, ExecOptions{threads});
  INFO(s.ToString());
  REQUIRE(s.ok());
  return results;
}

std::string runError(const codegen::Program &p, std::vector<HostTensor> args,
                     llvm::ArrayRef<int> order = {}) {
  std::vector<HostTensor> results;
  absl::Status s = runtime::execute(p, args, results, order, ExecOptions{2});
  CHECK_FALSE(s.ok());
  CHECK(results.empty());
  return std::string(s.message());
}

/// Relative-plus-absolute closeness for transcendental results (a few f32 ulps).
bool close(double got, double want, double rel = 1e-5, double abs = 1e-6) {
  if (std::isnan(want)) return std::isnan(got);
  if (std::isinf(want)) return got == want;
  return std::fabs(got - want) <= abs + rel * std::fabs(want);
}

} // namespace

// ---------------------------------------------------------------- elementwise

TEST_CASE("elementwise chain over two tiles with a tail tile", "[exec]") {
  // z = sigmoid(x * y - 0.5) on 3x40, as a 3x32 tile and a 3x8 tail tile.
  ProgramBuilder pb;
  int x = pb.arg("x", DType::F32, {3, 40});
  int y = pb.arg("y", DType::F32, {3, 40});
  int z = pb.temp("z", DType::F32, {3, 40});
  pb.p.results = {z};
  for (int64_t cols : {32, 8}) {
    LeafBuilder lb;
    int a = lb.copyIn(DType::F32, {3, cols}, 0);
    int b = lb.copyIn(DType::F32, {3, cols}, 1);
    int m = lb.binary(OpCode::Mul, a, b);
    int h = lb.full(DType::F32, {1, 1}, 0.5);
    int s = lb.binary(OpCode::Sub, m, h);
    int g = lb.unary(OpCode::Sigmoid, s);
    lb.copyOut(g, 2);
    int leaf = pb.leaf(lb);
    int64_t off = cols == 32 ? 0 : 32;
    pb.call(leaf, {at(x, {0, off}), at(y, {0, off}), at(z, {0, off})});
  }
  HostTensor xs = randomTensor(DType::F32, {3, 40}, 1), ys = randomTensor(DType::F32, {3, 40}, 2);
  auto out = run(pb.p, {xs, ys});
  REQUIRE(out.size() == 1);
  REQUIRE(out[0].shape() == llvm::ArrayRef<int64_t>({3, 40}));
  auto sigmoid = ir::OpRegistry::get().def(OpCode::Sigmoid).unaryFn;
  for (int64_t i = 0; i < 120; ++i) {
    double s = ir::roundToDType(ir::roundToDType(xs.get(i) * ys.get(i), DType::F32) - 0.5,
                                DType::F32);
    INFO("element " << i);
    CHECK(close(out[0].get(i), sigmoid(s)));
  }
}

TEST_CASE("unary ops follow the folder's scalar functions", "[exec]") {
  // -2.5, 0.5 and 2.5: round's ties go to the even neighbour.
  std::vector<double> vals = {-3.5, -2.5, -0.25, -0.0, 0.5, 0.3, 1.0, 2.5, 7.25, 20.0};
  std::vector<double> pos = {0.01, 0.3, 1.0, 2.0, 4.0, 9.0, 100.0, 1e-3, 12345.0, 0.5};
  for (OpCode code : {OpCode::Neg, OpCode::Exp, OpCode::Log, OpCode::Sqrt, OpCode::Rsqrt,
                      OpCode::Abs, OpCode::Relu, OpCode::Sigmoid, OpCode::Tanh, OpCode::Gelu,
                      OpCode::Reciprocal, OpCode::Ceil, OpCode::Floor, OpCode::Trunc,
                      OpCode::Round, OpCode::Exp2, OpCode::Expm1, OpCode::Erfc}) {
    bool positiveOnly = code == OpCode::Log || code == OpCode::Sqrt || code == OpCode::Rsqrt;
    const auto &in = positiveOnly ? pos : vals;
    ProgramBuilder pb;
    int x = pb.arg("x", DType::F32, {1, 10});
    int y = pb.temp("y", DType::F32, {1, 10});
    pb.p.results = {y};
    LeafBuilder lb;
    lb.copyOut(lb.unary(code, lb.copyIn(DType::F32, {1, 10}, 0)), 1);
    pb.call(pb.leaf(lb), {at(x, {0, 0}), at(y, {0, 0})});
    auto out = run(pb.p, {tensorOf(DType::F32, {1, 10}, in)});
    auto fn = ir::OpRegistry::get().def(code).unaryFn;
    for (size_t i = 0; i < in.size(); ++i) {
      double x32 = ir::roundToDType(in[i], DType::F32);
      INFO(ir::OpRegistry::get().def(code).name.str() << "(" << x32 << ")");
      CHECK(close(out[0].get(int64_t(i)), ir::roundToDType(fn(x32), DType::F32), 4e-6, 1e-30));
    }
  }
}

TEST_CASE("special values: exp underflow and -inf, relu and max with NaN", "[exec]") {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
  ProgramBuilder pb;
  int x = pb.arg("x", DType::F32, {1, 8});
  int e = pb.temp("e", DType::F32, {1, 8});
  int r = pb.temp("r", DType::F32, {1, 8});
  int m = pb.temp("m", DType::F32, {1, 8});
  pb.p.results = {e, r, m};
  LeafBuilder lb;
  int a = lb.copyIn(DType::F32, {1, 8}, 0);
  lb.copyOut(lb.unary(OpCode::Exp, a), 1);
  lb.copyOut(lb.unary(OpCode::Relu, a), 2);
  lb.copyOut(lb.binary(OpCode::Max, a, lb.full(DType::F32, {1, 1}, 1.0)), 3);
  pb.call(pb.leaf(lb), {at(x, {0, 0}), at(e, {0, 0}), at(r, {0, 0}), at(m, {0, 0})});
  auto out = run(pb.p, {tensorOf(DType::F32, {1, 8}, {-inf, -100, -87, 0, 88, inf, nan, -0.0})});
  CHECK(out[0].get(0) == 0.0);
  CHECK(out[0].get(1) == 0.0); // the true value is a subnormal; flushed, never ~3e-39
  CHECK(close(out[0].get(2), std::exp(-87.0)));
  CHECK(out[0].get(3) == 1.0);
  CHECK(close(out[0].get(4), std::exp(88.0)));
  CHECK(std::isinf(out[0].get(5)));
  CHECK(std::isnan(out[0].get(6)));
  CHECK(out[1].get(6) == 0.0); // relu(NaN) = 0 as x > 0 ? x : 0
  CHECK_FALSE(std::signbit(out[1].get(7)));
  CHECK(out[2].get(6) == 1.0); // fmax(NaN, 1) = 1
  CHECK(out[2].get(0) == 1.0);
  CHECK(out[2].get(5) == inf);
}

TEST_CASE("broadcasting: rows, columns, scalars, middle dims", "[exec]") {
  struct Case {
    Shape x, y;
  };
  std::vector<Case> cases = {{{4, 8}, {1, 8}}, {{4, 8}, {4, 1}}, {{4, 8}, {1, 1}},
                             {{1, 8}, {4, 1}}, {{2, 3, 4}, {2, 1, 4}}, {{2, 3, 4}, {1, 3, 1}},
                             {{2, 1, 4}, {2, 3, 1}}, {{4, 8}, {4, 8}}};
  for (const Case &c : cases)
    for (OpCode code : {OpCode::Add, OpCode::Sub, OpCode::Mul, OpCode::Div, OpCode::Max,
                        OpCode::Min, OpCode::Pow}) {
      Shape out = *ir::broadcastShapes(c.x, c.y);
      ProgramBuilder pb;
      int x = pb.arg("x", DType::F32, c.x);
      int y = pb.arg("y", DType::F32, c.y);
      int z = pb.temp("z", DType::F32, out);
      pb.p.results = {z};
      LeafBuilder lb;
      int a = lb.copyIn(DType::F32, c.x, 0), b = lb.copyIn(DType::F32, c.y, 1);
      lb.copyOut(lb.binary(code, a, b), 2);
      Shape zero(out.size(), 0);
      pb.call(pb.leaf(lb), {at(x, zero), at(y, zero), at(z, zero)});
      HostTensor xs = randomTensor(DType::F32, c.x, 3, 0.5, 3);
      HostTensor ys = randomTensor(DType::F32, c.y, 4, -2, 2);
      auto res = run(pb.p, {xs, ys});
      auto fn = ir::OpRegistry::get().def(code).binaryFn;
      Shape sx = rowMajor(c.x), sy = rowMajor(c.y), so = rowMajor(out);
      for (int64_t i = 0; i < numel(out); ++i) {
        int64_t ix = 0, iy = 0;
        for (size_t d = 0; d < out.size(); ++d) {
          int64_t k = i / so[d] % out[d];
          ix += (c.x[d] == 1 ? 0 : k) * sx[d];
          iy += (c.y[d] == 1 ? 0 : k) * sy[d];
        }
        INFO(ir::OpRegistry::get().def(code).name.str() << " case " << (&c - cases.data())
                                                        << " element " << i);
        // Correctly rounded in f32 for these ops: exactly the folder's value.
        CHECK(res[0].get(i) == ir::roundToDType(fn(xs.get(ix), ys.get(iy)), DType::F32));
      }
    }
}

// ---------------------------------------------------------------- dtypes

TEST_CASE("f16 and bf16 ops round after every op, as a per-op rounded reference", "[exec]") {
  for (DType t : {DType::F16, DType::BF16}) {
    // w = sqrt(x * y + x / y) - y, every op rounded to t.
    ProgramBuilder pb;
    int x = pb.arg("x", t, {8, 32});
    int y = pb.arg("y", t, {8, 32});
    int w = pb.temp("w", t, {8, 32});
    pb.p.results = {w};
    LeafBuilder lb;
    int a = lb.copyIn(t, {8, 32}, 0), b = lb.copyIn(t, {8, 32}, 1);
    int m = lb.binary(OpCode::Mul, a, b);
    int d = lb.binary(OpCode::Div, a, b);
    int s = lb.binary(OpCode::Add, m, d);
    int r = lb.unary(OpCode::Sqrt, s);
    lb.copyOut(lb.binary(OpCode::Sub, r, b), 2);
    pb.call(pb.leaf(lb), {at(x, {0, 0}), at(y, {0, 0}), at(w, {0, 0})});
    HostTensor xs = randomTensor(t, {8, 32}, 5, 0.1, 30), ys = randomTensor(t, {8, 32}, 6, 0.1, 30);
    auto out = run(pb.p, {xs, ys});
    int differsFromUnrounded = 0;
    for (int64_t i = 0; i < 256; ++i) {
      auto rd = [t](double v) { return ir::roundToDType(v, t); };
      double xv = xs.get(i), yv = ys.get(i);
      double want = rd(rd(std::sqrt(rd(rd(xv * yv) + rd(xv / yv)))) - yv);
      double unrounded = rd(std::sqrt(xv * yv + xv / yv) - yv);
      differsFromUnrounded += want != unrounded;
      INFO(ir::dtypeName(t) << " element " << i << ": x=" << xv << " y=" << yv);
      CHECK(out[0].get(i) == want);
    }
    // The inputs are such that rounding only at the end would be caught.
    CHECK(differsFromUnrounded > 10);
  }
}

TEST_CASE("casts round, truncate and saturate like roundToDType", "[exec]") {
  const double nan = std::nan("");
  std::vector<double> vals = {300.7, -300.7, -3.9, 3.9, 0.5, nan, 1e10, -1e10, 65519.0, 65520.0,
                              1.0 + 1.0 / 2048, 1.0 + 3.0 / 2048};
  for (DType to : {DType::I8, DType::I32, DType::F16, DType::BF16}) {
    ProgramBuilder pb;
    int64_t n = int64_t(vals.size());
    int x = pb.arg("x", DType::F32, {1, n});
    int y = pb.temp("y", to, {1, n});
    pb.p.results = {y};
    LeafBuilder lb;
    lb.copyOut(lb.cast(lb.copyIn(DType::F32, {1, n}, 0), to), 1);
    pb.call(pb.leaf(lb), {at(x, {0, 0}), at(y, {0, 0})});
    auto out = run(pb.p, {tensorOf(DType::F32, {1, n}, vals)});
    for (int64_t i = 0; i < n; ++i) {
      double want = ir::roundToDType(ir::roundToDType(vals[i], DType::F32), to);
      INFO("cast " << vals[i] << " to " << ir::dtypeName(to));
      if (std::isnan(want)) CHECK(std::isnan(out[0].get(i)));
      else CHECK(out[0].get(i) == want);
    }
  }
  // Integer to float and integer to narrower integer.
  ProgramBuilder pb;
  int x = pb.arg("x", DType::I32, {1, 4});
  int h = pb.temp("h", DType::F16, {1, 4});
  int b = pb.temp("b", DType::I8, {1, 4});
  pb.p.results = {h, b};
  LeafBuilder lb;
  int a = lb.copyIn(DType::I32, {1, 4}, 0);
  lb.copyOut(lb.cast(a, DType::F16), 1);
  lb.copyOut(lb.cast(a, DType::I8), 2);
  pb.call(pb.leaf(lb), {at(x, {0, 0}), at(h, {0, 0}), at(b, {0, 0})});
  auto out = run(pb.p, {tensorOf(DType::I32, {1, 4}, {2049, -70000, 1000, -129})});
  CHECK(out[0].get(0) == 2048); // f16 spacing is 2 there; ties to even
  CHECK(std::isinf(out[0].get(1)));
  CHECK(out[0].get(2) == 1000);
  CHECK(out[1].get(0) == 127);
  CHECK(out[1].get(1) == -128);
  CHECK(out[1].get(3) == -128);
}

TEST_CASE("integer ops saturate, truncate and divide by zero like the folder", "[exec]") {
  const double lo32 = std::numeric_limits<int32_t>::min(), hi32 = std::numeric_limits<int32_t>::max();
  std::vector<double> xs = {2e9, -2e9, 7, -7, 5, -5, 0, lo32, hi32, 100, -100, 3};
  std::vector<double> ys = {2e9, 2e9, 2, 2, 0, 0, 0, -1, -1, 100, 100, -2};
  for (DType t : {DType::I32, DType::I8}) {
    int64_t n = int64_t(xs.size());
    for (OpCode code : {OpCode::Add, OpCode::Sub, OpCode::Mul, OpCode::Div, OpCode::Max,
                        OpCode::Min, OpCode::Pow}) {
      ProgramBuilder pb;
      int x = pb.arg("x", t, {1, n});
      int y = pb.arg("y", t, {1, n});
      int z = pb.temp("z", t, {1, n});
      pb.p.results = {z};
      LeafBuilder lb;
      lb.copyOut(lb.binary(code, lb.copyIn(t, {1, n}, 0), lb.copyIn(t, {1, n}, 1)), 2);
      pb.call(pb.leaf(lb), {at(x, {0, 0}), at(y, {0, 0}), at(z, {0, 0})});
      HostTensor xt = tensorOf(t, {1, n}, xs), yt = tensorOf(t, {1, n}, ys);
      auto out = run(pb.p, {xt, yt});
      auto fn = ir::OpRegistry::get().def(code).binaryFn;
      for (int64_t i = 0; i < n; ++i) {
        INFO(ir::dtypeName(t) << " " << ir::OpRegistry::get().def(code).name.str() << "("
                              << xt.get(i) << ", " << yt.get(i) << ")");
        CHECK(out[0].get(i) == ir::roundToDType(fn(xt.get(i), yt.get(i)), t));
      }
    }
    // Unary: neg and abs of the minimum saturate.
    ProgramBuilder pb;
    int x = pb.arg("x", t, {1, 3});
    int ng = pb.temp("neg", t, {1, 3});
    int ab = pb.temp("abs", t, {1, 3});
    pb.p.results = {ng, ab};
    LeafBuilder lb;
    int a = lb.copyIn(t, {1, 3}, 0);
    lb.copyOut(lb.unary(OpCode::Neg, a), 1);
    lb.copyOut(lb.unary(OpCode::Abs, a), 2);
    pb.call(pb.leaf(lb), {at(x, {0, 0}), at(ng, {0, 0}), at(ab, {0, 0})});
    double lo = t == DType::I8 ? -128 : lo32, hi = t == DType::I8 ? 127 : hi32;
    auto out = run(pb.p, {tensorOf(t, {1, 3}, {lo, -5, 9})});
    CHECK(out[0].get(0) == hi);
    CHECK(out[0].get(1) == 5);
    CHECK(out[1].get(0) == hi);
    CHECK(out[1].get(2) == 9);
  }
}

// ---------------------------------------------------------------- reductions

TEST_CASE("a row reduction split over two tiles with a combine", "[exec]") {
  // s = sum(x, 1), m = amax(x, 1), a = mean(x, 1) of 4x64 from two 4x32 tiles.
  ProgramBuilder pb;
  int x = pb.arg("x", DType::F32, {4, 64});
  int s = pb.temp("s", DType::F32, {4, 1});
  int m = pb.temp("m", DType::F32, {4, 1});
  int a = pb.temp("a", DType::F32, {4});
  pb.p.results = {s, m, a};
  LeafBuilder lb;
  int t0 = lb.copyIn(DType::F32, {4, 32}, 0), t1 = lb.copyIn(DType::F32, {4, 32}, 1);
  int s0 = lb.reduce(OpCode::Sum, t0, {1}, true), s1 = lb.reduce(OpCode::Sum, t1, {1}, true);
  int ss = lb.binary(OpCode::Add, s0, s1);
  lb.copyOut(ss, 2);
  int m0 = lb.reduce(OpCode::Amax, t0, {1}, true), m1 = lb.reduce(OpCode::Amax, t1, {1}, true);
  lb.copyOut(lb.binary(OpCode::Max, m0, m1), 3);
  int mean = lb.binary(OpCode::Mul, ss, lb.full(DType::F32, {1, 1}, 1.0 / 64));
  lb.copyOut(lb.reshape(mean, {4}), 4);
  pb.call(pb.leaf(lb), {at(x, {0, 0}), at(x, {0, 32}), at(s, {0, 0}), at(m, {0, 0}), at(a, {0})});
  HostTensor xs = randomTensor(DType::F32, {4, 64}, 7);
  auto out = run(pb.p, {xs});
  for (int64_t r = 0; r < 4; ++r) {
    double sum = 0, mx = -INFINITY;
    for (int64_t c = 0; c < 64; ++c) {
      sum += xs.get(r * 64 + c);
      mx = std::max(mx, xs.get(r * 64 + c));
    }
    CHECK(close(out[0].get(r), sum, 1e-5, 1e-5));
    CHECK(out[1].get(r) == mx);
    CHECK(close(out[2].get(r), sum / 64, 1e-5, 1e-6));
  }
}

TEST_CASE("reductions over any axes, float and integer", "[exec]") {
  Shape shape = {3, 4, 5};
  std::vector<Shape> axesList = {{0}, {1}, {2}, {0, 1}, {1, 2}, {0, 2}, {0, 1, 2}};
  HostTensor xf = randomTensor(DType::F32, shape, 8);
  HostTensor xi = randomTensor(DType::I32, shape, 9, -1e9, 1e9);
  xf.set(17, std::nan("")); // amax/amin propagate NaN, as numpy
  for (DType t : {DType::F32, DType::I32})
    for (const Shape &axes : axesList)
      for (OpCode code : {OpCode::Sum, OpCode::Amax, OpCode::Amin, OpCode::Mean})
        for (bool keep : {false, true}) {
          const HostTensor &xs = t == DType::F32 ? xf : xi;
          ProgramBuilder pb;
          int x = pb.arg("x", t, shape);
          LeafBuilder lb;
          int r = lb.reduce(code, lb.copyIn(t, shape, 0), axes, keep);
          Shape rs = lb.at(r).shape;
          int y = pb.temp("y", t, rs);
          pb.p.results = {y};
          lb.copyOut(r, 1);
          pb.call(pb.leaf(lb), {at(x, {0, 0, 0}), at(y, Shape(rs.size(), 0))});
          auto out = run(pb.p, {xs});
          // Reference: walk the input, accumulate per kept index in double.
          Shape kept;
          for (int d = 0; d < 3; ++d)
            if (std::find(axes.begin(), axes.end(), d) == axes.end()) kept.push_back(d);
          int64_t outN = numel(rs);
          std::vector<double> acc(outN, code == OpCode::Amax   ? -INFINITY
                                        : code == OpCode::Amin ? INFINITY
                                                               : 0.0);
          int64_t count = 60 / outN;
          for (int64_t i = 0; i < 60; ++i) {
            int64_t idx[3] = {i / 20, i / 5 % 4, i % 5}, o = 0;
            for (int64_t d : kept) o = o * shape[d] + idx[d];
            double v = xs.get(i);
            double &a = acc[o];
            if (code == OpCode::Amax) a = std::isnan(a) || std::isnan(v) ? NAN : std::max(a, v);
            else if (code == OpCode::Amin) a = std::isnan(a) || std::isnan(v) ? NAN : std::min(a, v);
            else a += v;
          }
          for (int64_t o = 0; o < outN; ++o) {
            double want = ir::roundToDType(code == OpCode::Mean ? acc[o] / count : acc[o], t);
            INFO(ir::dtypeName(t) << " " << ir::OpRegistry::get().def(code).name.str() << " axes "
                                  << axes.size() << "/" << axes[0] << " keepdim " << keep
                                  << " output " << o);
            if (t == DType::I32) CHECK(out[0].get(o) == want);
            else CHECK(close(out[0].get(o), want, 1e-5, 1e-5));
          }
        }
}

// ---------------------------------------------------------------- matmul

TEST_CASE("matmul K loop with an accumulator, transposes, f16 inputs narrowing out", "[exec]") {
  const int64_t M = 32, K = 48, N = 16, KT = 24;
  HostTensor a = randomTensor(DType::F16, {M, K}, 10), b = randomTensor(DType::F16, {K, N}, 11);
  // Transposed copies for the transpose_a / transpose_b variants.
  HostTensor at_(DType::F16, {K, M}), bt(DType::F16, {N, K});
  for (int64_t i = 0; i < M; ++i)
    for (int64_t k = 0; k < K; ++k) at_.set(k * M + i, a.get(i * K + k));
  for (int64_t k = 0; k < K; ++k)
    for (int64_t j = 0; j < N; ++j) bt.set(j * K + k, b.get(k * N + j));
  std::vector<double> want(M * N, 0.0);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j)
      for (int64_t k = 0; k < K; ++k) want[i * N + j] += a.get(i * K + k) * b.get(k * N + j);

  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      ProgramBuilder pb;
      int x = pb.arg("a", DType::F16, ta ? Shape{K, M} : Shape{M, K});
      int y = pb.arg("b", DType::F16, tb ? Shape{N, K} : Shape{K, N});
      int c = pb.temp("c", DType::F32, {M, N});
      int h = pb.temp("h", DType::F16, {M, N});
      pb.p.results = {c, h};
      LeafBuilder lb;
      Shape aTile = ta ? Shape{KT, M} : Shape{M, KT}, bTile = tb ? Shape{N, KT} : Shape{KT, N};
      int a0 = lb.copyIn(DType::F16, aTile, 0, MemSpace::L1);
      int b0 = lb.copyIn(DType::F16, bTile, 1, MemSpace::L1);
      int p0 = lb.matmul(a0, b0, -1, ta, tb);
      int a1 = lb.copyIn(DType::F16, aTile, 2, MemSpace::L1);
      int b1 = lb.copyIn(DType::F16, bTile, 3, MemSpace::L1);
      int p1 = lb.matmul(a1, b1, p0, ta, tb);
      lb.copyOut(p1, 4);
      lb.copyOut(p1, 5, DType::F16); // FIXPIPE narrows the f32 accumulator
      auto aAt = [&](int64_t k) { return ta ? at(x, {k, 0}) : at(x, {0, k}); };
      auto bAt = [&](int64_t k) { return tb ? at(y, {0, k}) : at(y, {k, 0}); };
      pb.call(pb.leaf(lb), {aAt(0), bAt(0), aAt(KT), bAt(KT), at(c, {0, 0}), at(h, {0, 0})});
      auto out = run(pb.p, {ta ? at_ : a, tb ? bt : b});
      for (int64_t i = 0; i < M * N; ++i) {
        INFO("ta " << ta << " tb " << tb << " element " << i);
        CHECK(close(out[0].get(i), want[i], 1e-5, 1e-4));
        // Narrowing rounds the f32 result once.
        CHECK(out[1].get(i) == ir::roundToDType(out[0].get(i), DType::F16));
      }
    }
}

TEST_CASE("int8 matmul accumulates exactly in i32", "[exec]") {
  const int64_t M = 16, K = 128, N = 8;
  HostTensor a = randomTensor(DType::I8, {M, K}, 12, -128, 128);
  HostTensor b = randomTensor(DType::I8, {K, N}, 13, -128, 128);
  for (int64_t k = 0; k < K; ++k) { // extremes, so the sum leaves the i16 range
    a.set(k, -128);
    b.set(k * N, -128);
  }
  ProgramBuilder pb;
  int x = pb.arg("a", DType::I8, {M, K});
  int y = pb.arg("b", DType::I8, {K, N});
  int c = pb.temp("c", DType::I32, {M, N});
  pb.p.results = {c};
  LeafBuilder lb;
  int acc = -1;
  for (int64_t k = 0; k < K; k += 64) {
    int ai = lb.copyIn(DType::I8, {M, 64}, int(k / 32), MemSpace::L1);
    int bi = lb.copyIn(DType::I8, {64, N}, int(k / 32) + 1, MemSpace::L1);
    acc = lb.matmul(ai, bi, acc);
  }
  lb.copyOut(acc, 4);
  pb.call(pb.leaf(lb), {at(x, {0, 0}), at(y, {0, 0}), at(x, {0, 64}), at(y, {64, 0}), at(c, {0, 0})});
  auto out = run(pb.p, {a, b});
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      int64_t want = 0;
      for (int64_t k = 0; k < K; ++k) want += int64_t(a.get(i * K + k)) * int64_t(b.get(k * N + j));
      CHECK(out[0].get(i * N + j) == double(want));
    }
  CHECK(out[0].get(0) == 128.0 * 128 * K);
}

// ---------------------------------------------------------------- layout

TEST_CASE("transposes of tiles, 2-D and 3-D", "[exec]") {
  for (Shape perm : {Shape{1, 0}, Shape{0, 2, 1}, Shape{2, 0, 1}, Shape{1, 0, 2}}) {
    Shape in = perm.size() == 2 ? Shape{6, 10} : Shape{2, 3, 4};
    Shape out;
    for (int64_t p : perm) out.push_back(in[p]);
    ProgramBuilder pb;
    int x = pb.arg("x", DType::I32, in);
    int y = pb.temp("y", DType::I32, out);
    pb.p.results = {y};
    LeafBuilder lb;
    lb.copyOut(lb.transpose(lb.copyIn(DType::I32, in, 0), perm), 1);
    pb.call(pb.leaf(lb), {at(x, Shape(in.size(), 0)), at(y, Shape(in.size(), 0))});
    HostTensor xs(DType::I32, in);
    for (int64_t i = 0; i < xs.numElements(); ++i) xs.set(i, double(i));
    auto res = run(pb.p, {xs});
    Shape si = rowMajor(in), so = rowMajor(out);
    for (int64_t o = 0; o < numel(out); ++o) {
      int64_t src = 0;
      for (size_t d = 0; d < out.size(); ++d) src += (o / so[d] % out[d]) * si[perm[d]];
      CHECK(res[0].get(o) == double(src));
    }
  }
}

TEST_CASE("alias tensors: views with offsets, strided views, reshapes, results", "[exec]") {
  // x: 8x16 argument. v = x[2:6, 4:12] (a view); vt = transposed view of x[0:4, 0:2]
  // (strides [1, 16]); t: 4x8 intermediate written from v + 1, read back through its
  // reshape r (2x16) by a second call; w: 6x6 intermediate whose inner 4x4 window
  // (an alias) is written, and returned through the alias as well.
  ProgramBuilder pb;
  int x = pb.arg("x", DType::F32, {8, 16});
  int v = pb.alias("v", x, {4, 8}, 2 * 16 + 4, {16, 1});
  int vt = pb.alias("vt", x, {2, 4}, 0, {1, 16});
  int t = pb.temp("t", DType::F32, {4, 8});
  int r = pb.alias("r", t, {2, 16}, 0, {16, 1});
  int q = pb.temp("q", DType::F32, {2, 16});
  int w = pb.temp("w", DType::F32, {6, 6});
  int wi = pb.alias("wi", w, {4, 4}, 6 + 1, {6, 1});
  int z = pb.temp("z", DType::F32, {2, 4});
  pb.p.results = {q, w, wi, z};

  LeafBuilder l0;
  l0.copyOut(l0.binary(OpCode::Add, l0.copyIn(DType::F32, {4, 8}, 0),
                       l0.full(DType::F32, {1, 1}, 1.0)),
             1);
  int c0 = pb.call(pb.leaf(l0), {at(v, {0, 0}), at(t, {0, 0})});
  LeafBuilder l1;
  l1.copyOut(l1.unary(OpCode::Neg, l1.copyIn(DType::F32, {2, 16}, 0)), 1);
  pb.call(pb.leaf(l1), {at(r, {0, 0}), at(q, {0, 0})}, {c0});
  LeafBuilder l2;
  l2.copyOut(l2.copyIn(DType::F32, {4, 4}, 0), 1);
  pb.call(pb.leaf(l2), {at(x, {4, 4}), at(wi, {0, 0})});
  LeafBuilder l3;
  l3.copyOut(l3.copyIn(DType::F32, {2, 4}, 0), 1);
  pb.call(pb.leaf(l3), {at(vt, {0, 0}), at(z, {0, 0})});

  HostTensor xs(DType::F32, {8, 16});
  for (int64_t i = 0; i < 128; ++i) xs.set(i, double(i));
  auto out = run(pb.p, {xs}, {}, 2);
  // q = -(v + 1) read as 2x16: element (i, j) of t is x[2 + i][4 + j] + 1.
  for (int64_t e = 0; e < 32; ++e) {
    int64_t i = e / 8, j = e % 8;
    CHECK(out[0].get(e) == -(double((2 + i) * 16 + 4 + j) + 1));
  }
  for (int64_t i = 0; i < 6; ++i)
    for (int64_t j = 0; j < 6; ++j) {
      bool inner = i >= 1 && i <= 4 && j >= 1 && j <= 4;
      double want = inner ? double((4 + i - 1) * 16 + 4 + j - 1) : 0.0;
      CHECK(out[1].get(i * 6 + j) == want);
      if (inner) CHECK(out[2].get((i - 1) * 4 + j - 1) == want);
    }
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 4; ++j) CHECK(out[3].get(i * 4 + j) == double(j * 16 + i));
}

// ---------------------------------------------------------------- scheduling

namespace {

/// A two-stage program with dependencies: per 4-row tile, a softmax of x (16 calls,
/// shuffled leaves of two shapes); then per column block, y = softmax^T-weighted
/// matmul with w that reads every row tile of the first stage (4 calls, each
/// waiting for all first-stage calls).
codegen::Program twoStageProgram() {
  ProgramBuilder pb;
  int x = pb.arg("x", DType::F32, {64, 96});
  int w = pb.arg("w", DType::F32, {64, 32});
  int s = pb.temp("s", DType::F32, {64, 96});
  int y = pb.temp("y", DType::F32, {96, 32});
  pb.p.results = {s, y};
  LeafBuilder l0;
  int a = l0.copyIn(DType::F32, {4, 96}, 0);
  int m = l0.reduce(OpCode::Amax, a, {1}, true);
  int e = l0.unary(OpCode::Exp, l0.binary(OpCode::Sub, a, m));
  int sum = l0.reduce(OpCode::Sum, e, {1}, true);
  l0.copyOut(l0.binary(OpCode::Div, e, sum), 1);
  int leaf0 = pb.leaf(l0);
  std::vector<int> stage1;
  for (int64_t r = 0; r < 64; r += 4)
    stage1.push_back(pb.call(leaf0, {at(x, {r, 0}), at(s, {r, 0})}));
  LeafBuilder l1;
  int acc = -1;
  for (int k = 0; k < 2; ++k) {
    int st = l1.copyIn(DType::F32, {32, 24}, 2 * k, MemSpace::L1);
    int wt = l1.copyIn(DType::F32, {32, 32}, 2 * k + 1, MemSpace::L1);
    acc = l1.matmul(st, wt, acc, /*ta=*/true);
  }
  l1.copyOut(l1.unary(OpCode::Tanh, acc), 4);
  int leaf1 = pb.leaf(l1);
  for (int64_t c = 0; c < 96; c += 24)
    pb.call(leaf1, {at(s, {0, c}), at(w, {0, 0}), at(s, {32, c}), at(w, {32, 0}), at(y, {c, 0})},
            stage1);
  return pb.p;
}

} // namespace

TEST_CASE("results are bit-identical for any order and thread count", "[exec]") {
  codegen::Program p = twoStageProgram();
  std::vector<HostTensor> args = {randomTensor(DType::F32, {64, 96}, 14),
                                  randomTensor(DType::F32, {64, 32}, 15)};
  auto base = run(p, args, {}, 1);
  // Sanity: softmax rows sum to 1, and y is not all zeros (it saw stage 1's output).
  for (int64_t r = 0; r < 64; ++r) {
    double sum = 0;
    for (int64_t c = 0; c < 96; ++c) sum += base[0].get(r * 96 + c);
    CHECK(close(sum, 1.0, 1e-5));
  }
  double yAbs = 0;
  for (int64_t i = 0; i < base[1].numElements(); ++i) yAbs += std::fabs(base[1].get(i));
  CHECK(yAbs > 1.0);

  int n = int(p.calls.size());
  std::vector<int> reversed(n), shuffled(n);
  std::iota(reversed.rbegin(), reversed.rend(), 0);
  std::iota(shuffled.begin(), shuffled.end(), 0);
  std::shuffle(shuffled.begin(), shuffled.end(), std::mt19937(16));
  for (const std::vector<int> &order : {std::vector<int>(), reversed, shuffled})
    for (unsigned threads : {1u, 2u, 4u}) {
      auto out = run(p, args, order, threads);
      INFO("threads " << threads << " order " << (order.empty() ? "program" : "permuted"));
      CHECK(bitwiseEqual(out[0], base[0]));
      CHECK(bitwiseEqual(out[1], base[1]));
    }
}

// ---------------------------------------------------------------- errors

TEST_CASE("argument mismatches are errors naming the argument", "[exec]") {
  ProgramBuilder pb;
  pb.arg("a", DType::F32, {4, 8});
  int b = pb.arg("b", DType::F16, {4, 8});
  pb.p.results = {b};
  HostTensor good0(DType::F32, {4, 8}), good1(DType::F16, {4, 8});
  std::string m = runError(pb.p, {good0});
  CHECK_THAT(m, Catch::Contains("takes 2 arguments, got 1"));
  m = runError(pb.p, {good0, HostTensor(DType::F32, {4, 8})});
  CHECK_THAT(m, Catch::Contains("argument 1 (%b)"));
  CHECK_THAT(m, Catch::Contains("expected tensor<4x8xf16>, got tensor<4x8xf32>"));
  m = runError(pb.p, {HostTensor(DType::F32, {4, 9}), good1});
  CHECK_THAT(m, Catch::Contains("argument 0 (%a)"));
  CHECK_THAT(m, Catch::Contains("got tensor<4x9xf32>"));
  // Returning an argument copies it.
  auto out = run(pb.p, {good0, randomTensor(DType::F16, {4, 8}, 17)});
  CHECK(out[0].get(5) != 0.0);
}

TEST_CASE("results can be passed back in as the next run's arguments", "[exec]") {
  ProgramBuilder pb;
  int x = pb.arg("x", DType::F32, {4, 8});
  int y = pb.temp("y", DType::F32, {4, 8});
  pb.p.results = {y};
  LeafBuilder lb;
  lb.copyOut(lb.binary(OpCode::Add, lb.copyIn(DType::F32, {4, 8}, 0),
                       lb.full(DType::F32, {1, 1}, 1.0)),
             1);
  pb.call(pb.leaf(lb), {at(x, {0, 0}), at(y, {0, 0})});
  HostTensor xs = randomTensor(DType::F32, {4, 8}, 21);
  std::vector<HostTensor> r;
  REQUIRE(runtime::execute(pb.p, {xs}, r).ok());
  REQUIRE(runtime::execute(pb.p, r, r).ok());
  REQUIRE(r.size() == 1);
  for (int64_t i = 0; i < 32; ++i)
    CHECK(r[0].get(i) == ir::roundToDType(ir::roundToDType(xs.get(i) + 1, DType::F32) + 1,
                                          DType::F32));
}

TEST_CASE("bad programs are rejected before anything runs", "[exec]") {
  auto program = [](Shape offsets, bool writeArg = false) {
    ProgramBuilder pb;
    int x = pb.arg("x", DType::F32, {3, 40});
    int y = pb.temp("y", DType::F32, {3, 40});
    pb.p.results = {y};
    LeafBuilder lb;
    lb.copyOut(lb.copyIn(DType::F32, {3, 32}, 0), 1);
    pb.call(pb.leaf(lb), {at(x, offsets), at(writeArg ? x : y, {0, 0})});
    return pb.p;
  };
  HostTensor x(DType::F32, {3, 40});
  std::string m = runError(program({0, 36}), {x});
  CHECK_THAT(m, Catch::Contains("call 0"));
  CHECK_THAT(m, Catch::Contains("region 0"));
  CHECK_THAT(m, Catch::Contains("%x tensor<3x40xf32>"));
  CHECK_THAT(m, Catch::Contains("offsets [0, 36]"));
  CHECK_THAT(m, Catch::Contains("tile [3, 32]"));
  CHECK_THAT(m, Catch::Contains("dimension 1"));
  CHECK_THAT(runError(program({-1, 0}), {x}), Catch::Contains("out of bounds in dimension 0"));
  CHECK_THAT(runError(program({0, 0, 0}), {x}), Catch::Contains("ranks differ"));
  CHECK_THAT(runError(program({0, 0}, true), {x}), Catch::Contains("read-only"));

  codegen::Program p = program({0, 0});
  p.calls[0].regions.pop_back();
  CHECK_THAT(runError(p, {x}), Catch::Contains("only 1 regions"));
  p = program({0, 0});
  p.calls[0].regions[1].tensor = 7;
  CHECK_THAT(runError(p, {x}), Catch::Contains("tensor index 7"));
  p = program({0, 0});
  p.calls[0].leaf = 3;
  CHECK_THAT(runError(p, {x}), Catch::Contains("calls leaf 3"));
  p = program({0, 0});
  p.calls[0].preds = {0};
  CHECK_THAT(runError(p, {x}), Catch::Contains("not an earlier call"));
  p = program({0, 0});
  p.leaves[0].ops[1].operands = {5};
  CHECK_THAT(runError(p, {x}), Catch::Contains("not an earlier op"));
  p = program({0, 0});
  p.leaves[0].ops[0].code = OpCode::View;
  m = runError(p, {x});
  CHECK_THAT(m, Catch::Contains("internal error"));
  CHECK_THAT(m, Catch::Contains("'view'"));
  p = program({0, 0});
  p.leaves[0].ops[1].shape = {3, 33};
  CHECK_THAT(runError(p, {x}), Catch::Contains("operand 0 has shape [3, 32]"));

  // An alias window must stay inside its base.
  ProgramBuilder pb;
  int base = pb.arg("x", DType::F32, {3, 40});
  pb.alias("v", base, {3, 8}, 36, {40, 1});
  pb.p.results = {base};
  CHECK_THAT(runError(pb.p, {x}), Catch::Contains("window"));

  // Orders must name every call once.
  p = program({0, 0});
  CHECK_THAT(runError(p, {x}, std::vector<int>{0, 0}), Catch::Contains("has 2 entries"));
  CHECK_THAT(runError(p, {x}, std::vector<int>{1}), Catch::Contains("names call 1"));
}

// ---------------------------------------------------------------- timing

TEST_CASE("timing: 2048^3 f32 matmul from 256^3 tiles vs one Eigen GEMM", "[.][exec-bench]") {
  const int64_t S = 2048, T = 256;
  ProgramBuilder pb;
  int a = pb.arg("a", DType::F32, {S, S});
  int b = pb.arg("b", DType::F32, {S, S});
  int c = pb.temp("c", DType::F32, {S, S});
  pb.p.results = {c};
  LeafBuilder lb;
  int acc = -1;
  for (int64_t k = 0; k < S / T; ++k) {
    int at_ = lb.copyIn(DType::F32, {T, T}, int(2 * k), MemSpace::L1);
    int bt = lb.copyIn(DType::F32, {T, T}, int(2 * k + 1), MemSpace::L1);
    acc = lb.matmul(at_, bt, acc);
  }
  lb.copyOut(acc, int(2 * (S / T)));
  int leaf = pb.leaf(lb);
  for (int64_t i = 0; i < S; i += T)
    for (int64_t j = 0; j < S; j += T) {
      std::vector<codegen::Region> regions;
      for (int64_t k = 0; k < S; k += T) {
        regions.push_back(at(a, {i, k}));
        regions.push_back(at(b, {k, j}));
      }
      regions.push_back(at(c, {i, j}));
      pb.call(leaf, regions);
    }
  std::vector<HostTensor> args = {randomTensor(DType::F32, {S, S}, 18),
                                  randomTensor(DType::F32, {S, S}, 19)};
  using Mat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  Eigen::Map<const Mat> A(reinterpret_cast<const float *>(args[0].data()), S, S);
  Eigen::Map<const Mat> B(reinterpret_cast<const float *>(args[1].data()), S, S);
  Mat C(S, S);
  auto seconds = [](auto f) {
    double best = 1e30;
    for (int rep = 0; rep < 2; ++rep) {
      auto t0 = std::chrono::steady_clock::now();
      f();
      best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    return best;
  };
  double flops = 2.0 * S * S * S;
  unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  for (unsigned threads : {1u, hw}) {
    double eigen = seconds([&] {
      // One GEMM per thread over a row block: Eigen's own threading needs OpenMP.
      std::vector<std::thread> ts;
      int64_t rows = S / threads;
      for (unsigned t = 0; t < threads; ++t)
        ts.emplace_back([&, t] {
          int64_t r0 = t * rows, nr = t + 1 == threads ? S - r0 : rows;
          C.middleRows(r0, nr).noalias() = A.middleRows(r0, nr) * B;
        });
      for (auto &t : ts) t.join();
    });
    std::vector<HostTensor> out;
    double ptoc = seconds([&] {
      REQUIRE(runtime::execute(pb.p, args, out, {}, ExecOptions{threads}).ok());
    });
    std::printf("matmul 2048^3 f32, %u thread(s): ptoc %.3f s (%.1f GFLOP/s), Eigen %.3f s "
                "(%.1f GFLOP/s), ratio %.2f\n",
                threads, ptoc, flops / ptoc * 1e-9, eigen, flops / eigen * 1e-9, ptoc / eigen);
    CHECK(std::fabs(out[0].get(12345) - C(12345 / S, 12345 % S)) <= 1e-2);
  }
}

TEST_CASE("timing: 4096x4096 f32 softmax in fused row tiles vs whole-tensor passes",
          "[.][exec-bench]") {
  const int64_t S = 4096;
  std::vector<HostTensor> args = {randomTensor(DType::F32, {S, S}, 20)};
  using Arr = Eigen::Array<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  Eigen::Map<const Arr> X(reinterpret_cast<const float *>(args[0].data()), S, S);
  auto seconds = [](auto f) {
    double best = 1e30;
    for (int rep = 0; rep < 3; ++rep) {
      auto t0 = std::chrono::steady_clock::now();
      f();
      best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    return best;
  };
  // Unfused: every op a pass over the whole tensor with a materialised temporary.
  Arr Y;
  double whole = seconds([&] {
    Eigen::Array<float, Eigen::Dynamic, 1> m = X.rowwise().maxCoeff();
    Arr shifted = X.colwise() - m;
    Arr e = shifted.exp();
    Eigen::Array<float, Eigen::Dynamic, 1> s = e.rowwise().sum();
    Y = e.colwise() / s;
  });
  for (int64_t rows : {1, 4, 16}) {
    ProgramBuilder pb;
    int x = pb.arg("x", DType::F32, {S, S});
    int y = pb.temp("y", DType::F32, {S, S});
    pb.p.results = {y};
    LeafBuilder lb;
    int a = lb.copyIn(DType::F32, {rows, S}, 0);
    int m = lb.reduce(OpCode::Amax, a, {1}, true);
    int e = lb.unary(OpCode::Exp, lb.binary(OpCode::Sub, a, m));
    int s = lb.reduce(OpCode::Sum, e, {1}, true);
    lb.copyOut(lb.binary(OpCode::Div, e, s), 1);
    int leaf = pb.leaf(lb);
    for (int64_t r = 0; r < S; r += rows) pb.call(leaf, {at(x, {r, 0}), at(y, {r, 0})});
    for (unsigned threads : {1u, 2u}) {
      std::vector<HostTensor> out;
      double fused = seconds([&] {
        REQUIRE(runtime::execute(pb.p, args, out, {}, ExecOptions{threads}).ok());
      });
      std::printf("softmax 4096^2 f32, %lldx4096 tiles, %u thread(s): ptoc %.3f s, whole-tensor "
                  "passes (1 thread) %.3f s, ratio %.2f\n",
                  (long long)rows, threads, fused, whole, fused / whole);
      CHECK(close(out[0].get(4097), Y(1, 1), 1e-5, 1e-9));
    }
  }
}

// ---------------------------------------------------------------- host memory

TEST_CASE("executionBytes: the intermediates, and copies of results that are not one",
          "[exec]") {
  // t = x + 1 (an intermediate, read again) and r = t * x (returned), plus x itself
  // returned: execute() allocates t and r and copies x; executeInto() computes r in
  // the caller's buffer, so it allocates only t.
  ProgramBuilder pb;
  int x = pb.arg("x", DType::F32, {64, 128});
  pb.temp("t", DType::F32, {64, 128});
  int r = pb.temp("r", DType::F16, {64, 128});
  pb.p.results = {r, x};
  const int64_t f32 = 64 * 128 * 4, f16 = 64 * 128 * 2;
  CHECK(runtime::executionBytes(pb.p, {}, nullptr) == f32 + f16 + f32);
  HostTensor xs(DType::F32, {64, 128}), rs(DType::F16, {64, 128}), xs2(DType::F32, {64, 128});
  std::vector<runtime::ConstTensorRef> in{xs};
  std::vector<runtime::TensorRef> out{rs, xs2};
  llvm::ArrayRef<runtime::TensorRef> outs(out);
  CHECK(runtime::executionBytes(pb.p, in, &outs) == f32);
  // Shapes beyond int64 saturate instead of wrapping.
  pb.temp("huge", DType::F32, {int64_t(1) << 40, int64_t(1) << 40});
  CHECK(runtime::executionBytes(pb.p, {}, nullptr) == INT64_MAX);
}
