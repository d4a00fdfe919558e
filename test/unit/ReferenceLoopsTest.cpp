// Unit tests for the reference semantics of loops (runtime::evaluateReference with
// the module, docs/ir.md "Loops"): a stepped accumulator, nested loops with an
// outer-index bound, code between loops and a workspace, each against a hand
// computation and against Session::run on the same inputs; window errors naming the
// loop, the iteration and the enclosing indices; a control function without its
// module.
#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_replace.h"
#include "ptoc/ir/Context.h"
#include "ptoc/ir/Diagnostics.h"
#include "ptoc/ir/LoopView.h"
#include "ptoc/ir/Parser.h"
#include "ptoc/ir/Verifier.h"
#include "ptoc/runtime/Reference.h"
#include "ptoc/session/Session.h"

using Catch::Matchers::Contains;
using namespace ptoc;
using ir::DType;
using runtime::HostTensor;

namespace {

struct Parsed {
  ir::Context ctx;
  std::unique_ptr<ir::Module> module;
  /// The function no loop runs.
  const ir::Func &entry() const {
    ir::Func *f = ir::loopEntry(*module);
    REQUIRE(f);
    return *f;
  }
};

std::unique_ptr<Parsed> parse(const std::string &text, bool verify = true) {
  auto p = std::make_unique<Parsed>();
  ir::DiagnosticCollector diags(p->ctx.diag());
  p->module = ir::parseModule(text, "loops.pto", p->ctx);
  INFO(diags.errorText());
  REQUIRE(p->module);
  if (verify) REQUIRE(succeeded(ir::verify(*p->module)));
  return p;
}

/// A tensor whose element at row-major index i is fn(i).
template <typename Fn> HostTensor tensorOf(std::vector<int64_t> shape, Fn fn) {
  HostTensor t(DType::F32, shape);
  for (int64_t i = 0; i < t.numElements(); ++i) t.set(i, fn(i));
  return t;
}

std::vector<HostTensor> reference(const std::string &text, const std::vector<HostTensor> &args) {
  auto p = parse(text);
  std::vector<HostTensor> results;
  absl::Status st = runtime::evaluateReference(*p->module, p->entry(), args, results);
  INFO(st.message());
  REQUIRE(st.ok());
  return results;
}

std::string referenceError(const std::string &text, const std::vector<HostTensor> &args) {
  auto p = parse(text, /*verify=*/false);
  std::vector<HostTensor> results;
  absl::Status st = runtime::evaluateReference(*p->module, p->entry(), args, results);
  REQUIRE_FALSE(st.ok());
  return std::string(st.message());
}

/// The same inputs through the compiled kernel (every iteration simulated and executed).
std::vector<HostTensor> runSession(const std::string &text, const std::vector<HostTensor> &args,
                                int stitchMaxNum = runtime::kDefaultStitchMaxNum) {
  absl::StatusOr<session::Session> s = session::Session::create("tiny");
  REQUIRE(s.ok());
  absl::StatusOr<session::Kernel> k = s->compileText(text, "loops.pto");
  INFO(k.status().message());
  REQUIRE(k.ok());
  std::vector<HostTensor> results;
  session::RunOptions opts;
  opts.stitchMaxNum = stitchMaxNum;
  absl::StatusOr<session::RunReport> r = s->run(*k, args, results, opts);
  INFO(r.status().message());
  REQUIRE(r.ok());
  return results;
}

/// Every element equal (the tests' values are small integers: sums are exact).
void requireEqual(const HostTensor &got, const HostTensor &want) {
  std::optional<runtime::Mismatch> bad = runtime::compareTensors(got, want, 0, 0);
  INFO((bad ? bad->describe() : std::string()));
  REQUIRE_FALSE(bad);
}

/// i = 1, 3, 5 adds row i of %x into row 0 of %acc; row 1 of %acc is never written.
const char *kSteppedAccumulator = R"(
func @acc(%x: tensor<6x64xf32>, %acc: tensor<2x64xf32>) -> tensor<2x64xf32> {
  %a1 = loop %x, %acc {body = "acc_i", name = "i", start = 1, stop = 6, step = 2, ins = [{of = 0, offsets = ["i", 0], sizes = [1, 64]}, {of = 1, offsets = [0, 0], sizes = [1, 64]}], outs = [{of = 1, offsets = [0, 0], sizes = [1, 64]}]} : tensor<2x64xf32>
  return %a1
}
func @acc_i(%xi: tensor<64xf32>, %ai: tensor<1x64xf32>) -> tensor<1x64xf32> {
  %r = reshape %xi : tensor<1x64xf32>
  %s = add %ai, %r {vec_tile = [1, 64]} : tensor<1x64xf32>
  return %s
}
)";

/// For every b, r runs from b to 7 (inner start = outer index) and doubles row r of
/// block b; rows r < b of %y keep their values. INNER is the inner window's offset.
const char *kTriangular = R"(
func @tri(%x: tensor<4x8x64xf32>, %y: tensor<4x8x64xf32>) -> tensor<4x8x64xf32> {
  %y1 = loop %x, %y {body = "tri_b", name = "b", stop = 4, ins = [{of = 0, offsets = ["b", 0, 0], sizes = [1, 8, 64]}, {of = 1, offsets = ["b", 0, 0], sizes = [1, 8, 64]}], outs = [{of = 1, offsets = ["b", 0, 0], sizes = [1, 8, 64]}]} : tensor<4x8x64xf32>
  return %y1
}
func @tri_b(%x: tensor<8x64xf32>, %y: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %y1 = loop %x, %y {body = "tri_r", name = "r", start = "b", stop = 8, ins = [{of = 0, offsets = ["INNER", 0], sizes = [1, 64]}], outs = [{of = 1, offsets = ["r", 0], sizes = [1, 64]}]} : tensor<8x64xf32>
  return %y1
}
func @tri_r(%r: tensor<64xf32>) -> tensor<64xf32> {
  %d = add %r, %r {vec_tile = [64]} : tensor<64xf32>
  return %d
}
)";

/// Code before, between and after loops: %a = x + x, rows of a workspace %w = -a,
/// then %b = w + y.
const char *kSegments = R"(
func @ctl(%x: tensor<8x64xf32>, %y: tensor<8x64xf32>) -> (tensor<8x64xf32>, tensor<8x64xf32>) {
  %a = add %x, %x {vec_tile = [8, 64]} : tensor<8x64xf32>
  %w = gm_tensor : tensor<8x64xf32>
  %w1 = loop %a, %w {body = "row", name = "i", stop = 8, ins = [{of = 0, offsets = ["i", 0], sizes = [1, 64]}], outs = [{of = 1, offsets = ["i", 0], sizes = [1, 64]}]} : tensor<8x64xf32>
  %b = add %w1, %y {vec_tile = [8, 64]} : tensor<8x64xf32>
  return %b, %w1
}
func @row(%r: tensor<64xf32>) -> tensor<64xf32> {
  %e = neg %r {vec_tile = [64]} : tensor<64xf32>
  return %e
}
)";

} // namespace

TEST_CASE("reference: a stepped accumulator chains its iterations", "[reference][loops]") {
  HostTensor x = tensorOf({6, 64}, [](int64_t i) { return double((i / 64) * 100 + i % 64); });
  HostTensor acc = tensorOf({2, 64}, [](int64_t i) { return -double((i / 64) * 10 + i % 64); });
  // Row 0: -j + (100 + j) + (300 + j) + (500 + j); row 1 keeps -(10 + j).
  HostTensor want = tensorOf({2, 64}, [](int64_t i) {
    int64_t j = i % 64;
    return i < 64 ? double(900 + 2 * j) : -double(10 + j);
  });
  std::vector<HostTensor> got = reference(kSteppedAccumulator, {x, acc});
  REQUIRE(got.size() == 1);
  requireEqual(got[0], want);
  std::vector<HostTensor> ran = runSession(kSteppedAccumulator, {x, acc});
  REQUIRE(ran.size() == 1);
  requireEqual(ran[0], want);
  // The caller's argument is not updated by either.
  CHECK(acc.get(0) == 0.0);
  CHECK(acc.get(64) == -10.0);
}

TEST_CASE("reference: nested loops see the outer index in the inner bounds",
          "[reference][loops]") {
  std::string text = absl::StrReplaceAll(kTriangular, {{"INNER", "r"}});
  HostTensor x = tensorOf({4, 8, 64}, [](int64_t i) { return double(i % 97); });
  HostTensor y = tensorOf({4, 8, 64}, [](int64_t i) { return -1.0 - double(i % 5); });
  HostTensor want = y;
  for (int64_t b = 0; b < 4; ++b)
    for (int64_t r = b; r < 8; ++r)
      for (int64_t j = 0; j < 64; ++j) {
        int64_t e = (b * 8 + r) * 64 + j;
        want.set(e, 2 * x.get(e));
      }
  std::vector<HostTensor> got = reference(text, {x, y});
  REQUIRE(got.size() == 1);
  requireEqual(got[0], want);
  std::vector<HostTensor> ran = runSession(text, {x, y}, /*stitchMaxNum=*/3);
  REQUIRE(ran.size() == 1);
  requireEqual(ran[0], want);
}

TEST_CASE("reference: code between loops and a zero workspace", "[reference][loops]") {
  HostTensor x = tensorOf({8, 64}, [](int64_t i) { return double(i % 13) - 6; });
  HostTensor y = tensorOf({8, 64}, [](int64_t i) { return double(i % 7); });
  HostTensor w = tensorOf({8, 64}, [&](int64_t i) { return -2 * x.get(i); });
  HostTensor b = tensorOf({8, 64}, [&](int64_t i) { return -2 * x.get(i) + y.get(i); });
  std::vector<HostTensor> got = reference(kSegments, {x, y});
  REQUIRE(got.size() == 2);
  requireEqual(got[0], b);
  requireEqual(got[1], w);
  std::vector<HostTensor> ran = runSession(kSegments, {x, y});
  REQUIRE(ran.size() == 2);
  requireEqual(ran[0], b);
  requireEqual(ran[1], w);

  // A workspace no iteration writes stays zero: only rows 2..5 are written here.
  std::string partial = absl::StrReplaceAll(kSegments, {{"stop = 8", "start = 2, stop = 6"}});
  std::vector<HostTensor> part = reference(partial, {x, y});
  REQUIRE(part.size() == 2);
  for (int64_t i = 0; i < 8 * 64; ++i) {
    bool written = i / 64 >= 2 && i / 64 < 6;
    INFO("element " << i);
    REQUIRE(part[1].get(i) == (written ? w.get(i) : 0.0));
  }
}

TEST_CASE("reference: a window out of range names the loop, the iteration and the window",
          "[reference][loops]") {
  const char *oob = R"(
func @oob(%x: tensor<8x64xf32>, %y: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %y1 = loop %x, %y {body = "row", name = "b", stop = 8, ins = [{of = 0, offsets = ["b % 6 + 3", 0], sizes = [1, 64]}], outs = [{of = 1, offsets = ["b", 0], sizes = [1, 64]}]} : tensor<8x64xf32>
  return %y1
}
func @row(%r: tensor<64xf32>) -> tensor<64xf32> {
  %e = exp %r {vec_tile = [64]} : tensor<64xf32>
  return %e
}
)";
  HostTensor x = tensorOf({8, 64}, [](int64_t) { return 0.0; });
  std::string msg = referenceError(oob, {x, x});
  CHECK_THAT(msg, Contains("loops.pto:3:3: error: reference for @oob: loop 'b' iteration b = 5: "
                           "ins window 0 [b % 6 + 3 +1, 0 +64] of %x (8x64) starts at 8 in "
                           "dimension 0 and so reaches [8, 9), outside [0, 8)"));

  // Inside a nested loop: every enclosing index is named, outermost first, at the
  // inner loop (the window has no location of its own here).
  std::string nested = absl::StrReplaceAll(kTriangular, {{"INNER", "r + b"}});
  HostTensor t = tensorOf({4, 8, 64}, [](int64_t) { return 0.0; });
  std::string msg2 = referenceError(nested, {t, t});
  CHECK_THAT(msg2, Contains("loops.pto:7:3: error: reference for @tri_b: loop 'r' iteration "
                            "b = 1, r = 7: ins window 0 [r + b +1, 0 +64]"));
  CHECK_THAT(msg2, Contains("reaches [8, 9), outside [0, 8)"));

  // A window with a location (`locs`, the user's statement that made it) is reported
  // there, not at the loop.
  std::string located = absl::StrReplaceAll(
      nested, {{"outs = [{of = 1, offsets = [\"r\", 0], sizes = [1, 64]}]}",
                "outs = [{of = 1, offsets = [\"r\", 0], sizes = [1, 64]}], locs = "
                "[\"model.py:12:17\", \"model.py:12:9\"]}"}});
  REQUIRE(located != nested);
  std::string msg3 = referenceError(located, {t, t});
  CHECK_THAT(msg3, Contains("model.py:12:17: error: reference for @tri_b: loop 'r' iteration "
                            "b = 1, r = 7: ins window 0"));
}

TEST_CASE("reference: a control function needs its module", "[reference][loops]") {
  auto p = parse(kSteppedAccumulator);
  HostTensor x = tensorOf({6, 64}, [](int64_t) { return 0.0; });
  HostTensor acc = tensorOf({2, 64}, [](int64_t) { return 0.0; });
  std::vector<HostTensor> results;
  absl::Status st = runtime::evaluateReference(p->entry(), {x, acc}, results);
  REQUIRE_FALSE(st.ok());
  CHECK_THAT(std::string(st.message()), Contains("runs @acc_i"));
  CHECK_THAT(std::string(st.message()), Contains("evaluateReference(module, func"));
}

TEST_CASE("reference: window offsets read from an integer input, like the run",
          "[reference][loops]") {
  // y[i] = x[idx[i]] * 2: the reference reads idx as the control thread does.
  const std::string text = R"(
func @gather(%x: tensor<8x64xf32>, %idx: tensor<4xi32>, %y: tensor<4x64xf32>) -> tensor<4x64xf32> {
  %y1 = loop %x, %y {body = "gather_i", name = "i", stop = 4, ins = [{of = 0, offsets = ["idx[i]", 0], sizes = [1, 64]}], outs = [{of = 1, offsets = ["i", 0], sizes = [1, 64]}]} : tensor<4x64xf32>
  return %y1
}
func @gather_i(%r: tensor<64xf32>) -> tensor<64xf32> {
  %two = full {value = 2.0, vec_tile = [64]} : tensor<1xf32>
  %s = mul %r, %two {vec_tile = [64]} : tensor<64xf32>
  return %s
}
)";
  HostTensor x = tensorOf({8, 64}, [](int64_t i) { return double(i % 97) - 40; });
  HostTensor idx(DType::I32, {4});
  const int picks[] = {5, 0, 7, 5};
  for (int i = 0; i < 4; ++i) idx.set(i, picks[i]);
  HostTensor y(DType::F32, {4, 64});
  std::vector<HostTensor> want = reference(text, {x, idx, y});
  REQUIRE(want.size() == 1);
  for (int i = 0; i < 4; ++i)
    for (int c = 0; c < 64; ++c)
      CHECK(want[0].get(i * 64 + c) == 2 * x.get(picks[i] * 64 + c));
  std::vector<HostTensor> got = runSession(text, {x, idx, y});
  for (int64_t e = 0; e < got[0].numElements(); ++e) CHECK(got[0].get(e) == want[0].get(e));
  // A value that puts the window past x: the error names the iteration and the window.
  idx.set(2, 8);
  std::string err = referenceError(text, {x, idx, y});
  CHECK_THAT(err, Contains("loop 'i' iteration i = 2"));
  CHECK_THAT(err, Contains("[idx[i] +1, 0 +64] of %x (8x64) starts at 8"));
  // Reading past idx itself (five iterations, four values).
  idx.set(2, 7);
  std::string five = absl::StrReplaceAll(text, {{"stop = 4", "stop = 5"}});
  CHECK_THAT(referenceError(five, {x, idx, y}),
             Contains("index 4 in dimension 0 of input 'idx' (shape 4) is out of range"));
}
