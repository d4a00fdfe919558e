// Unit tests for the whole-tensor reference evaluator (every op class against hand
// computed values, rounding and saturation, argument checks), randomTensor and
// compareTensors.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <memory>
#include <string>
#include <vector>

#include "ptoc/ir/Context.h"
#include "ptoc/ir/Diagnostics.h"
#include "ptoc/ir/Parser.h"
#include "ptoc/ir/Verifier.h"
#include "ptoc/runtime/Reference.h"

using namespace ptoc;
using ir::DType;
using runtime::HostTensor;

namespace {

/// A parsed and verified module with its Context.
struct Parsed {
  ir::Context ctx;
  std::unique_ptr<ir::Module> module;
  const ir::Func &func() const { return module->func(0); }
};

std::unique_ptr<Parsed> parse(const char *text) {
  auto p = std::make_unique<Parsed>();
  ir::DiagnosticCollector diags(p->ctx.diag());
  p->module = ir::parseModule(text, "test.pto", p->ctx);
  INFO(diags.errorText());
  REQUIRE(p->module);
  REQUIRE(succeeded(ir::verify(*p->module)));
  return p;
}

HostTensor tensorOf(DType dtype, std::vector<int64_t> shape, std::vector<double> values) {
  HostTensor t(dtype, shape);
  REQUIRE(int64_t(values.size()) == t.numElements());
  for (size_t i = 0; i < values.size(); ++i) t.set(int64_t(i), values[i]);
  return t;
}

std::vector<double> valuesOf(const HostTensor &t) {
  std::vector<double> v(t.numElements());
  for (int64_t i = 0; i < t.numElements(); ++i) v[i] = t.get(i);
  return v;
}

/// Runs the reference on `text` and returns its single result.
HostTensor run1(const char *text, std::vector<HostTensor> args) {
  auto p = parse(text);
  std::vector<HostTensor> results;
  absl::Status st = runtime::evaluateReference(p->func(), args, results);
  INFO(st.message());
  REQUIRE(st.ok());
  REQUIRE(results.size() == 1);
  return results[0];
}

std::string errorOf(const char *text, std::vector<HostTensor> args) {
  auto p = parse(text);
  std::vector<HostTensor> results;
  absl::Status st = runtime::evaluateReference(p->func(), args, results);
  REQUIRE_FALSE(st.ok());
  return std::string(st.message());
}

using V = std::vector<double>;

} // namespace

// ------------------------------------------------------------------ elementwise

TEST_CASE("reference: binary ops broadcast like numpy", "[reference]") {
  const char *text = R"(func @f(%a: tensor<2x3xf32>, %b: tensor<3xf32>, %c: tensor<2x1xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %s = sub %a, %b : tensor<2x3xf32>
  %m = mul %s, %c : tensor<2x3xf32>
  return %s, %m
}
)";
  auto p = parse(text);
  std::vector<HostTensor> res;
  REQUIRE(runtime::evaluateReference(
              p->func(),
              {tensorOf(DType::F32, {2, 3}, {1, 2, 3, 4, 5, 6}),
               tensorOf(DType::F32, {3}, {10, 20, 30}), tensorOf(DType::F32, {2, 1}, {2, -1})},
              res)
              .ok());
  REQUIRE(res.size() == 2);
  CHECK(valuesOf(res[0]) == V{-9, -18, -27, -6, -15, -24});
  CHECK(valuesOf(res[1]) == V{-18, -36, -54, 6, 15, 24});
  CHECK(res[1].shape() == llvm::ArrayRef<int64_t>{2, 3});
}

TEST_CASE("reference: unary ops use the registry's scalar functions", "[reference]") {
  const char *text = R"(func @f(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %r = relu %x : tensor<4xf32>
  %e = exp %x : tensor<4xf32>
  %g = gelu %x : tensor<4xf32>
  %s = sigmoid %x : tensor<4xf32>
  return %r, %e, %g, %s
}
)";
  auto p = parse(text);
  std::vector<HostTensor> res;
  HostTensor x = tensorOf(DType::F32, {4}, {-2, -0.5, 0, 1.5});
  REQUIRE(runtime::evaluateReference(p->func(), {x}, res).ok());
  CHECK(valuesOf(res[0]) == V{0, 0, 0, 1.5});
  for (int i = 0; i < 4; ++i) {
    double v = x.get(i);
    // Each result is the double-precision value rounded once to f32.
    CHECK(res[1].get(i) == double(float(std::exp(v))));
    CHECK(res[2].get(i) == double(float(0.5 * v * (1 + std::erf(v / std::sqrt(2.0))))));
    CHECK(res[3].get(i) == double(float(1 / (1 + std::exp(-v)))));
  }
}

TEST_CASE("reference: every op's result is rounded to its dtype", "[reference]") {
  // 1 + 2^-11 is not an f16 value: it rounds (ties to even) back to 1.
  HostTensor r = run1(R"(func @f(%a: tensor<2xf16>, %b: tensor<2xf16>) -> tensor<2xf16> {
  %c = add %a, %b : tensor<2xf16>
  return %c
}
)",
                      {tensorOf(DType::F16, {2}, {1, 1}),
                       tensorOf(DType::F16, {2}, {std::ldexp(1.0, -11), std::ldexp(3.0, -11)})});
  CHECK(r.get(0) == 1.0);
  CHECK(r.get(1) == 1.0 + std::ldexp(1.0, -9)); // 1 + 3*2^-11 rounds up to 1 + 2^-9
}

TEST_CASE("reference: integer ops saturate and truncate", "[reference]") {
  const char *text = R"(func @f(%a: tensor<4xi8>, %b: tensor<4xi8>) -> (tensor<4xi8>, tensor<4xi8>, tensor<4xi8>) {
  %s = add %a, %b : tensor<4xi8>
  %m = mul %a, %b : tensor<4xi8>
  %d = div %a, %b : tensor<4xi8>
  return %s, %m, %d
}
)";
  auto p = parse(text);
  std::vector<HostTensor> res;
  REQUIRE(runtime::evaluateReference(p->func(),
                                     {tensorOf(DType::I8, {4}, {100, -100, 7, -7}),
                                      tensorOf(DType::I8, {4}, {100, -100, 2, 2})},
                                     res)
              .ok());
  CHECK(valuesOf(res[0]) == V{127, -128, 9, -5});
  CHECK(valuesOf(res[1]) == V{127, 127, 14, -14});
  CHECK(valuesOf(res[2]) == V{1, 1, 3, -3}); // truncation toward zero
}

// ------------------------------------------------------------------ casts, reductions

TEST_CASE("reference: casts round, truncate and saturate", "[reference]") {
  HostTensor x = tensorOf(DType::F32, {4}, {1.7, -1.7, 300, -1e9});
  HostTensor i8 = run1(R"(func @f(%x: tensor<4xf32>) -> tensor<4xi8> {
  %c = cast %x : tensor<4xi8>
  return %c
}
)",
                       {x});
  CHECK(valuesOf(i8) == V{1, -1, 127, -128});
  HostTensor bf = run1(R"(func @f(%x: tensor<4xf32>) -> tensor<4xbf16> {
  %c = cast %x : tensor<4xbf16>
  return %c
}
)",
                       {x});
  CHECK(bf.get(0) == 1.703125); // 8 significant bits
  CHECK(bf.get(2) == 300);
}

TEST_CASE("reference: cast modes, wrapping, comparisons, logic and where", "[reference]") {
  HostTensor x = tensorOf(DType::F32, {4}, {2.5, -2.5, 300, 0.75});
  HostTensor y = tensorOf(DType::F32, {1}, {0.75});
  std::vector<HostTensor> res;
  auto p = parse(R"(func @f(%x: tensor<4xf32>, %y: tensor<1xf32>) -> (tensor<4xi16>, tensor<4xi16>, tensor<4xu8>, tensor<4xi8>, tensor<4xbool>, tensor<4xbool>, tensor<4xf32>) {
  %round = cast %x {mode = "round"} : tensor<4xi16>
  %floor = cast %x {mode = "floor"} : tensor<4xi16>
  %sat = cast %x : tensor<4xu8>
  %wrap = cast %x {saturate = false} : tensor<4xi8>
  %ge = ge %x, %y : tensor<4xbool>
  %lt = lt %x, %y : tensor<4xbool>
  %neither = logical_not %ge : tensor<4xbool>
  %sel = where %ge, %x, %y : tensor<4xf32>
  return %round, %floor, %sat, %wrap, %neither, %lt, %sel
}
)");
  REQUIRE(runtime::evaluateReference(p->func(), {x, y}, res).ok());
  CHECK(valuesOf(res[0]) == V{3, -3, 300, 1});    // ties away from zero
  CHECK(valuesOf(res[1]) == V{2, -3, 300, 0});    // toward -inf
  CHECK(valuesOf(res[2]) == V{2, 0, 255, 0});     // trunc, saturated to u8
  CHECK(valuesOf(res[3]) == V{2, -2, 44, 0});     // 300 keeps its low 8 bits
  CHECK(valuesOf(res[4]) == V{0, 1, 0, 0});
  CHECK(valuesOf(res[5]) == V{0, 1, 0, 0});
  CHECK(valuesOf(res[6]) == V{2.5, 0.75, 300, 0.75});
}

TEST_CASE("reference: reductions over axes with and without keepdim", "[reference]") {
  const char *text = R"(func @f(%x: tensor<2x3x2xf32>) -> (tensor<2x1x2xf32>, tensor<2xf32>, tensor<3xf32>, tensor<2x2xf32>) {
  %s = sum %x {axes = [1], keepdim = true} : tensor<2x1x2xf32>
  %m = amax %x {axes = [1, 2]} : tensor<2xf32>
  %n = amin %x {axes = [0, 2]} : tensor<3xf32>
  %a = mean %x {axes = [1]} : tensor<2x2xf32>
  return %s, %m, %n, %a
}
)";
  auto p = parse(text);
  std::vector<HostTensor> res;
  // x[i][j][k] = 6i + 2j + k, except one negative entry.
  HostTensor x = tensorOf(DType::F32, {2, 3, 2}, {0, 1, 2, 3, 4, 5, 6, 7, -8, 9, 10, 11});
  REQUIRE(runtime::evaluateReference(p->func(), {x}, res).ok());
  CHECK(valuesOf(res[0]) == V{6, 9, 8, 27});
  CHECK(res[0].shape() == llvm::ArrayRef<int64_t>{2, 1, 2});
  CHECK(valuesOf(res[1]) == V{5, 11});
  CHECK(valuesOf(res[2]) == V{0, -8, 4});
  CHECK(valuesOf(res[3]) == V{2, 3, double(float(8.0 / 3.0)), 9});
}

TEST_CASE("reference: reductions accumulate in double and round once", "[reference]") {
  // 2048 then eight halves: a running f16 sum stays at 2048 (the spacing there is 2),
  // the reference sums exactly (2052, an f16 value) and rounds once.
  HostTensor x = tensorOf(DType::F16, {9}, {2048, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5});
  HostTensor s = run1(R"(func @f(%x: tensor<9xf16>) -> tensor<1xf16> {
  %s = sum %x {axes = [0], keepdim = true} : tensor<1xf16>
  return %s
}
)",
                      {x});
  CHECK(s.get(0) == 2052);
  HostTensor i = run1(R"(func @f(%x: tensor<3xi8>) -> tensor<i8> {
  %s = sum %x {axes = [0]} : tensor<i8>
  return %s
}
)",
                      {tensorOf(DType::I8, {3}, {100, 100, -90})});
  CHECK(i.get(0) == 110); // the exact sum; no intermediate saturation at 127
}

// ------------------------------------------------------------------ matmul

TEST_CASE("reference: matmul with every transpose combination", "[reference]") {
  // a = [[1,2,3],[4,5,6]] (2x3), b = [[1,0],[0,1],[1,1]] (3x2): a*b = [[4,5],[10,11]].
  HostTensor a = tensorOf(DType::F32, {2, 3}, {1, 2, 3, 4, 5, 6});
  HostTensor at = tensorOf(DType::F32, {3, 2}, {1, 4, 2, 5, 3, 6});
  HostTensor b = tensorOf(DType::F32, {3, 2}, {1, 0, 0, 1, 1, 1});
  HostTensor bt = tensorOf(DType::F32, {2, 3}, {1, 0, 1, 0, 1, 1});
  V want{4, 5, 10, 11};
  CHECK(valuesOf(run1(R"(func @f(%a: tensor<2x3xf32>, %b: tensor<3x2xf32>) -> tensor<2x2xf32> {
  %c = matmul %a, %b : tensor<2x2xf32>
  return %c
}
)",
                      {a, b})) == want);
  CHECK(valuesOf(run1(R"(func @f(%a: tensor<3x2xf32>, %b: tensor<3x2xf32>) -> tensor<2x2xf32> {
  %c = matmul %a, %b {transpose_a = true} : tensor<2x2xf32>
  return %c
}
)",
                      {at, b})) == want);
  CHECK(valuesOf(run1(R"(func @f(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> tensor<2x2xf32> {
  %c = matmul %a, %b {transpose_b = true} : tensor<2x2xf32>
  return %c
}
)",
                      {a, bt})) == want);
  CHECK(valuesOf(run1(R"(func @f(%a: tensor<3x2xf32>, %b: tensor<2x3xf32>) -> tensor<2x2xf32> {
  %c = matmul %a, %b {transpose_a = true, transpose_b = true} : tensor<2x2xf32>
  return %c
}
)",
                      {at, bt})) == want);
}

TEST_CASE("reference: batched matmul broadcasts batch dims", "[reference]") {
  // Batch 0 of a is the identity, batch 1 is 2*identity; b is shared.
  HostTensor a = tensorOf(DType::F32, {2, 2, 2}, {1, 0, 0, 1, 2, 0, 0, 2});
  HostTensor b = tensorOf(DType::F32, {1, 2, 3}, {1, 2, 3, 4, 5, 6});
  HostTensor c = run1(R"(func @f(%a: tensor<2x2x2xf32>, %b: tensor<1x2x3xf32>) -> tensor<2x2x3xf32> {
  %c = matmul %a, %b : tensor<2x2x3xf32>
  return %c
}
)",
                      {a, b});
  CHECK(valuesOf(c) == V{1, 2, 3, 4, 5, 6, 2, 4, 6, 8, 10, 12});
}

TEST_CASE("reference: matmul accumulates exactly and rounds once to the output type",
          "[reference]") {
  // f16 inputs: 2048 + 1 + 1 is 2050 exactly; per-step f16 rounding would give 2048.
  HostTensor a = tensorOf(DType::F16, {1, 3}, {2048, 1, 1});
  HostTensor b = tensorOf(DType::F16, {3, 1}, {1, 1, 1});
  HostTensor h = run1(R"(func @f(%a: tensor<1x3xf16>, %b: tensor<3x1xf16>) -> tensor<1x1xf16> {
  %c = matmul %a, %b : tensor<1x1xf16>
  return %c
}
)",
                      {a, b});
  CHECK(h.get(0) == 2050);
  HostTensor f = run1(R"(func @f(%a: tensor<1x3xf16>, %b: tensor<3x1xf16>) -> tensor<1x1xf32> {
  %c = matmul %a, %b : tensor<1x1xf32>
  return %c
}
)",
                      {tensorOf(DType::F16, {1, 3}, {0.5, 0.25, std::ldexp(1.0, -14)}), b});
  CHECK(f.get(0) == 0.75 + std::ldexp(1.0, -14)); // not representable in f16, kept in f32
  HostTensor i = run1(R"(func @f(%a: tensor<1x2xi8>, %b: tensor<2x1xi8>) -> tensor<1x1xi32> {
  %c = matmul %a, %b : tensor<1x1xi32>
  return %c
}
)",
                      {tensorOf(DType::I8, {1, 2}, {127, 127}), tensorOf(DType::I8, {2, 1}, {127, 127})});
  CHECK(i.get(0) == 2 * 127 * 127);
}

// ------------------------------------------------------------------ layout, constants

TEST_CASE("reference: reshape, transpose, view, assemble, concat, full", "[reference]") {
  const char *text = R"(func @f(%x: tensor<2x3xf32>) -> (tensor<3x2xf32>, tensor<3x2xf32>, tensor<2x2xf32>, tensor<2x3xf32>, tensor<4x3xf32>, tensor<2x2xf32>) {
  %r = reshape %x : tensor<3x2xf32>
  %t = transpose %x {perm = [1, 0]} : tensor<3x2xf32>
  %v = view %x {offsets = [0, 1]} : tensor<2x2xf32>
  %z = full {value = 7.5} : tensor<2x2xf32>
  %a = assemble %x, %z {offsets = [0, 1]} : tensor<2x3xf32>
  %c = concat %x, %a {axis = 0} : tensor<4x3xf32>
  return %r, %t, %v, %a, %c, %z
}
)";
  auto p = parse(text);
  std::vector<HostTensor> res;
  REQUIRE(runtime::evaluateReference(p->func(), {tensorOf(DType::F32, {2, 3}, {0, 1, 2, 3, 4, 5})},
                                     res)
              .ok());
  REQUIRE(res.size() == 6);
  CHECK(valuesOf(res[0]) == V{0, 1, 2, 3, 4, 5});
  CHECK(res[0].shape() == llvm::ArrayRef<int64_t>{3, 2});
  CHECK(valuesOf(res[1]) == V{0, 3, 1, 4, 2, 5});
  CHECK(valuesOf(res[2]) == V{1, 2, 4, 5});
  CHECK(valuesOf(res[3]) == V{0, 7.5, 7.5, 3, 7.5, 7.5});
  CHECK(valuesOf(res[4]) == V{0, 1, 2, 3, 4, 5, 0, 7.5, 7.5, 3, 7.5, 7.5});
  CHECK(valuesOf(res[5]) == V{7.5, 7.5, 7.5, 7.5});
}

TEST_CASE("reference: 3-d transpose and a concat along the last axis", "[reference]") {
  const char *text = R"(func @f(%x: tensor<2x1x3xi32>, %y: tensor<2x1x1xi32>) -> (tensor<3x2x1xi32>, tensor<2x1x4xi32>) {
  %t = transpose %x {perm = [2, 0, 1]} : tensor<3x2x1xi32>
  %c = concat %x, %y {axis = 2} : tensor<2x1x4xi32>
  return %t, %c
}
)";
  auto p = parse(text);
  std::vector<HostTensor> res;
  REQUIRE(runtime::evaluateReference(p->func(),
                                     {tensorOf(DType::I32, {2, 1, 3}, {0, 1, 2, 3, 4, 5}),
                                      tensorOf(DType::I32, {2, 1, 1}, {-1, -2})},
                                     res)
              .ok());
  CHECK(valuesOf(res[0]) == V{0, 3, 1, 4, 2, 5});
  CHECK(valuesOf(res[1]) == V{0, 1, 2, -1, 3, 4, 5, -2});
}

// ------------------------------------------------------------------ errors

TEST_CASE("reference: argument errors name the argument", "[reference]") {
  const char *text = R"(func @f(%x: tensor<2x3xf32>, %w: tensor<3xf16>) -> tensor<2x3xf32> {
  %e = exp %x : tensor<2x3xf32>
  return %e
}
)";
  std::string e = errorOf(text, {HostTensor(DType::F32, {2, 3}), HostTensor(DType::F32, {3})});
  CHECK(e.find("argument 1 (%w)") != std::string::npos);
  CHECK(e.find("tensor<3xf16>") != std::string::npos);
  CHECK(e.find("f32") != std::string::npos);
  e = errorOf(text, {HostTensor(DType::F32, {3, 2}), HostTensor(DType::F16, {3})});
  CHECK(e.find("argument 0 (%x)") != std::string::npos);
  CHECK(e.find("3x2") != std::string::npos);
  e = errorOf(text, {HostTensor(DType::F32, {2, 3})});
  CHECK(e.find("got 1 arguments but the function takes 2") != std::string::npos);
}

TEST_CASE("reference: tile-level functions are rejected", "[reference]") {
  const char *text = R"(func @f(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %y = gm_tensor : tensor<8x8xf32>
  %0 = copy_in %x {offsets = [0, 0]} : tile<8x8xf32, ub>
  %1 = exp %0 : tile<8x8xf32, ub>
  %2 = copy_out %1, %y {offsets = [0, 0]} : tile<8x8xf32, gm>
  return %y
}
)";
  std::string e = errorOf(text, {HostTensor(DType::F32, {8, 8})});
  CHECK(e.find("'gm_tensor' at test.pto:2:3 is a tile-level op") != std::string::npos);
  CHECK(e.find("before expand-tiles") != std::string::npos);
}

// ------------------------------------------------------------------ random tensors

TEST_CASE("randomTensor is deterministic and in range", "[reference]") {
  for (DType t : ir::kAllDTypes) {
    HostTensor a = runtime::randomTensor(t, {7, 13}, 42);
    HostTensor b = runtime::randomTensor(t, {7, 13}, 42);
    HostTensor c = runtime::randomTensor(t, {7, 13}, 43);
    REQUIRE(a.sizeInBytes() == b.sizeInBytes());
    CHECK(std::equal(a.data(), a.data() + a.sizeInBytes(), b.data()));
    CHECK_FALSE(std::equal(a.data(), a.data() + a.sizeInBytes(), c.data()));
    double lo = 1e9, hi = -1e9;
    std::set<double> distinct;
    for (int64_t i = 0; i < a.numElements(); ++i) {
      lo = std::min(lo, a.get(i));
      hi = std::max(hi, a.get(i));
      distinct.insert(a.get(i));
      if (ir::isInteger(t)) CHECK(a.get(i) == std::trunc(a.get(i)));
    }
    if (ir::isFloat(t)) {
      CHECK(lo >= -1.0);
      CHECK(hi < 1.0);
      CHECK(distinct.size() > 80); // 91 values; bf16 has few enough bits for a tie or two
    } else {
      bool isBool = t == DType::Bool, isUnsigned = ir::isUnsigned(t);
      CHECK(lo >= (isUnsigned ? 0 : -runtime::kRandomIntRange));
      CHECK(hi <= (isBool ? 1 : isUnsigned ? 2 * runtime::kRandomIntRange : runtime::kRandomIntRange));
      CHECK(distinct.size() == (isBool ? 2 : 2 * runtime::kRandomIntRange + 1));
    }
  }
  // Fixed values pin the generator, so seeds mean the same inputs on every platform
  // and in every version (recorded goldens stay valid).
  CHECK(valuesOf(runtime::randomTensor(DType::I32, {4}, 1)) == V{2, 0, -5, -2});
  HostTensor f = runtime::randomTensor(DType::F32, {2}, 1);
  CHECK(f.get(0) == double(-0.263620973f));
  CHECK(f.get(1) == double(0.0534359924f));
}

// ------------------------------------------------------------------ comparison

TEST_CASE("compareTensors reports the first and the worst element", "[reference]") {
  HostTensor want = tensorOf(DType::F32, {2, 3}, {1, 2, 3, 4, 5, 6});
  CHECK_FALSE(runtime::compareTensors(want, want, 0, 0));
  HostTensor got = tensorOf(DType::F32, {2, 3}, {1, 2.01, 3, 4, 5.5, 6.0001});
  std::optional<runtime::Mismatch> mm = runtime::compareTensors(got, want, 1e-3, 0);
  REQUIRE(mm);
  CHECK(mm->structural.empty());
  CHECK(mm->count == 2); // 6.0001 is within 1e-3 relative
  CHECK(mm->numElements == 6);
  CHECK(mm->firstIndex == 1);
  CHECK(mm->firstWant == 2);
  CHECK(mm->worstIndex == 4);
  CHECK(mm->worstGot == 5.5);
  CHECK(mm->maxAbsError == Approx(0.5));
  CHECK(mm->describe().find("first at [0, 1]") != std::string::npos);
  CHECK(mm->describe().find("worst at [1, 1]") != std::string::npos);
  // Looser tolerance accepts both.
  CHECK_FALSE(runtime::compareTensors(got, want, 0.2, 0));
  CHECK_FALSE(runtime::compareTensors(got, want, 0, 0.6));
}

TEST_CASE("compareTensors: nan, infinities and structure", "[reference]") {
  double inf = std::numeric_limits<double>::infinity();
  HostTensor want = tensorOf(DType::F32, {3}, {NAN, inf, -inf});
  CHECK_FALSE(runtime::compareTensors(want, want, 0, 0));
  HostTensor got = tensorOf(DType::F32, {3}, {0, inf, inf});
  auto mm = runtime::compareTensors(got, want, 1, 1);
  REQUIRE(mm);
  CHECK(mm->count == 2);
  CHECK(mm->firstIndex == 0);
  mm = runtime::compareTensors(HostTensor(DType::F16, {3}), HostTensor(DType::F32, {3}), 1, 1);
  REQUIRE(mm);
  CHECK(mm->structural == "got a f16 [3] tensor, want a f32 [3] tensor");
  CHECK(mm->describe() == mm->structural);
  mm = runtime::compareTensors(HostTensor(DType::F32, {3, 1}), HostTensor(DType::F32, {3}), 1, 1);
  REQUIRE(mm);
  CHECK(!mm->structural.empty());
}

TEST_CASE("tolerance: exact for integers, looser for narrower floats", "[reference]") {
  CHECK(runtime::tolerance(DType::I8).rtol == 0);
  CHECK(runtime::tolerance(DType::I32).atol == 0);
  CHECK(runtime::tolerance(DType::F32).rtol < runtime::tolerance(DType::F16).rtol);
  CHECK(runtime::tolerance(DType::F16).rtol < runtime::tolerance(DType::BF16).rtol);
  // Each float tolerance admits at least one ulp of its type at magnitude 1.
  CHECK(runtime::tolerance(DType::F16).rtol > std::ldexp(1.0, -10));
  CHECK(runtime::tolerance(DType::BF16).rtol > std::ldexp(1.0, -7));
}

// ------------------------------------------------------------------ index ops

TEST_CASE("reference: topk gives sorted values and indices, ties by lower index", "[reference]") {
  auto p = parse(R"(
func @f(%x: tensor<2x6xf32>) -> (tensor<2x3xf32>, tensor<2x3xi32>, tensor<2x6xi32>) {
  %v, %i = topk %x {dim = 1, k = 3} : tensor<2x3xf32>, tensor<2x3xi32>
  %s = topk_indices %x {dim = 1, k = 6, largest = false} : tensor<2x6xi32>
  return %v, %i, %s
}
)");
  double nan = std::numeric_limits<double>::quiet_NaN();
  HostTensor x = tensorOf(DType::F32, {2, 6}, {1, 5, 5, 2, 5, 0, /**/ 3, nan, -1, 3, 7, 3});
  std::vector<HostTensor> results;
  absl::Status st = runtime::evaluateReference(p->func(), {x}, results);
  INFO(st.message());
  REQUIRE(st.ok());
  REQUIRE(results.size() == 3);
  CHECK(results[1].dtype() == DType::I32);
  CHECK(valuesOf(results[1]) == V{1, 2, 4, /**/ 1, 4, 0});
  std::vector<double> v = valuesOf(results[0]);
  CHECK(v[0] == 5);
  CHECK(v[1] == 5);
  CHECK(v[2] == 5);
  CHECK(std::isnan(v[3])); // NaN ranks above every number
  CHECK(v[4] == 7);
  CHECK(v[5] == 3);
  // k = n with largest = false: a stable ascending sort, NaN last.
  CHECK(valuesOf(results[2]) == V{5, 0, 3, 1, 2, 4, /**/ 2, 0, 3, 5, 4, 1});
}

TEST_CASE("reference: gather along each dim and expand_clone", "[reference]") {
  HostTensor x = tensorOf(DType::I32, {3, 5}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14});
  HostTensor index = tensorOf(DType::I32, {3, 4}, {0, 1, 2, 0, 1, 2, 0, 1, 2, 2, 1, 0});
  HostTensor g0 = run1(R"(
func @f(%x: tensor<3x5xi32>, %i: tensor<3x4xi32>) -> tensor<3x4xi32> {
  %g = gather %x, %i {dim = 0} : tensor<3x4xi32>
  return %g
}
)", {x, index});
  CHECK(valuesOf(g0) == V{0, 6, 12, 3, 5, 11, 2, 8, 10, 11, 7, 3});
  HostTensor g1 = run1(R"(
func @f(%x: tensor<3x5xi32>, %i: tensor<3x4xi32>) -> tensor<3x4xi32> {
  %g = gather %x, %i {dim = 1} : tensor<3x4xi32>
  return %g
}
)", {x, index});
  CHECK(valuesOf(g1) == V{0, 1, 2, 0, 6, 7, 5, 6, 12, 12, 11, 10});
  HostTensor e = run1(R"(
func @f(%x: tensor<2x1xf32>) -> tensor<2x3xf32> {
  %e = expand_clone %x : tensor<2x3xf32>
  return %e
}
)", {tensorOf(DType::F32, {2, 1}, {1.5, -2})});
  CHECK(valuesOf(e) == V{1.5, 1.5, 1.5, -2, -2, -2});
}

TEST_CASE("reference: a gather index out of range is an error naming it", "[reference]") {
  std::string msg = errorOf(R"(
func @f(%x: tensor<2x4xf32>, %i: tensor<2x2xi32>) -> tensor<2x2xf32> {
  %g = gather %x, %i {dim = 1} : tensor<2x2xf32>
  return %g
}
)", {tensorOf(DType::F32, {2, 4}, {0, 1, 2, 3, 4, 5, 6, 7}),
      tensorOf(DType::I32, {2, 2}, {0, 1, 3, 4})});
  CHECK(msg.find("index[1, 1] = 4 is outside 0..3 (dimension 1 of the input has size 4)") !=
        std::string::npos);
}

TEST_CASE("reference: scatter replaces in index order, add and multiply combine", "[reference]") {
  const char *text = R"(
func @f(%x: tensor<2x4xf32>, %i: tensor<2x3xi32>, %s: tensor<2x3xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) {
  %r = scatter %x, %i, %s {dim = 1} : tensor<2x4xf32>
  %a = scatter %x, %i, %s {dim = 1, reduce = "add"} : tensor<2x4xf32>
  %m = scatter %x, %i, %s {dim = 1, reduce = "multiply"} : tensor<2x4xf32>
  return %r, %a, %m
}
)";
  auto p = parse(text);
  HostTensor x = tensorOf(DType::F32, {2, 4}, {1, 1, 1, 1, 2, 2, 2, 2});
  HostTensor index = tensorOf(DType::I32, {2, 3}, {3, 0, 3, 1, 1, 2});
  HostTensor src = tensorOf(DType::F32, {2, 3}, {5, 6, 7, 3, 4, 10});
  std::vector<HostTensor> results;
  absl::Status st = runtime::evaluateReference(p->func(), {x, index, src}, results);
  INFO(st.message());
  REQUIRE(st.ok());
  REQUIRE(results.size() == 3);
  CHECK(valuesOf(results[0]) == V{6, 1, 1, 7, 2, 4, 10, 2});
  CHECK(valuesOf(results[1]) == V{7, 1, 1, 13, 2, 9, 12, 2});
  CHECK(valuesOf(results[2]) == V{6, 1, 1, 35, 2, 24, 20, 2});
}
