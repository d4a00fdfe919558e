// Unit tests for expand-tiles: structural facts of expanded graphs (copy counts and
// bytes, fusion, tails), determinism, the tile-level verifier, capacity checks
// through the API, and re-running on tile-level IR.
#include <catch2/catch.hpp>

#include <map>
#include <set>
#include <string_view>

#include "ptoc/ir/Context.h"
#include "ptoc/ir/Diagnostics.h"
#include "ptoc/ir/GraphBuilder.h"
#include "ptoc/ir/Parser.h"
#include "ptoc/ir/Printer.h"
#include "ptoc/ir/Verifier.h"
#include "ptoc/passes/Passes.h"
#include "ptoc/passes/StaggeredKOrder.h"
#include "ptoc/target/DeviceSpec.h"

using namespace ptoc;
using ir::DType;
using ir::MemSpace;
using ir::OpCode;

namespace {

/// What an expanded function contains.
struct Census {
  int copyIns = 0, copyOuts = 0, gmTensors = 0, computeOps = 0;
  int64_t copyInBytes = 0, copyOutBytes = 0;
  int tensorOps = 0; ///< ops left working on whole tensors (must be 0)
};

Census census(const ir::Func &f) {
  Census c;
  for (const ir::Operation &op : f.ops()) {
    switch (op.code()) {
    case OpCode::CopyIn:
      ++c.copyIns;
      c.copyInBytes += op.resultType().sizeInBytes();
      break;
    case OpCode::CopyOut:
      ++c.copyOuts;
      c.copyOutBytes += op.resultType().sizeInBytes();
      break;
    case OpCode::GmTensor: ++c.gmTensors; break;
    case OpCode::Return: break;
    default:
      if (op.isTileOp())
        ++c.computeOps;
      else if (op.coreKind() != target::CoreKind::None)
        ++c.tensorOps;
    }
  }
  return c;
}

/// Builds `softmax` over an 8x1024 f32 input with 2x1024 vector tiles.
void buildSoftmax(ir::Module &m) {
  ir::Context &ctx = m.context();
  ir::GraphBuilder b(m);
  REQUIRE(b.beginFunc("softmax", {ctx.tensorType(DType::F32, {8, 1024})}, {"x"}).ok());
  b.setVecTile({2, 1024});
  ir::Value *x = b.arg(0);
  ir::Value *mx = *b.reduce(OpCode::Amax, x, {1}, true);
  ir::Value *e = *b.unary(OpCode::Exp, *b.binary(OpCode::Sub, x, mx));
  ir::Value *s = *b.reduce(OpCode::Sum, e, {1}, true);
  REQUIRE(b.endFunc({*b.binary(OpCode::Div, e, s)}).ok());
}

/// Runs expand-tiles on `m`; returns the result and the diagnostics' text.
passes::PassResult expand(ir::Module &m, const target::DeviceSpec &device,
                          passes::ExpandTilesOptions options, std::string *errors = nullptr) {
  ir::DiagnosticCollector diags(m.context().diag());
  auto pass = passes::createExpandTilesPass(options);
  passes::PassContext pctx{device, nullptr, {}};
  passes::PassResult r = pass->run(m, pctx);
  if (errors) *errors = diags.errorText();
  return r;
}

/// A device preset; kept alive for the whole test run (verify takes a pointer).
const target::DeviceSpec &device(const char *name = "a2") {
  static const target::DeviceSpec a2 = *target::DeviceSpec::preset("a2");
  static const target::DeviceSpec tiny = *target::DeviceSpec::preset("tiny");
  return std::string_view(name) == "tiny" ? tiny : a2;
}

const char *kMixedText = R"(func @mixed(%x: tensor<64x96xf16>, %w: tensor<96x48xf16>, %d: tensor<64x64xf16>) -> (tensor<64x64xf16>, tensor<48xf32>) {
  %e = exp %x {vec_tile = [16, 96]} : tensor<64x96xf16>
  %c = matmul %e, %w {cube_tile = {m = [32, 32], k = [16, 32], n = [16, 32]}} : tensor<64x48xf16>
  %r = relu %c {vec_tile = [16, 48]} : tensor<64x48xf16>
  %a = assemble %d, %r {offsets = [0, 8], vec_tile = [16, 48]} : tensor<64x64xf16>
  %f = cast %c {vec_tile = [16, 16]} : tensor<64x48xf32>
  %t = transpose %f {perm = [1, 0], vec_tile = [16, 64]} : tensor<48x64xf32>
  %s = mean %t {axes = [1], vec_tile = [16, 32]} : tensor<48xf32>
  return %a, %s
}
)";

} // namespace

TEST_CASE("expand-tiles: fused softmax reads the input once and writes the output once",
          "[expand-tiles]") {
  ir::Context ctx;
  ir::Module m(ctx);
  buildSoftmax(m);
  std::string errors;
  auto r = expand(m, device(), {}, &errors);
  REQUIRE(!r.failed());
  CHECK(r.didChange());
  CHECK(errors.empty());
  Census c = census(m.func(0));
  // 4 row tiles: x copied in once per tile (amax and sub share it), the result
  // copied out once per tile, everything else stays in UB.
  CHECK(c.copyIns == 4);
  CHECK(c.copyInBytes == 8 * 1024 * 4);
  CHECK(c.copyOuts == 4);
  CHECK(c.copyOutBytes == 8 * 1024 * 4);
  CHECK(c.computeOps == 5 * 4);
  CHECK(c.gmTensors == 1);
  CHECK(c.tensorOps == 0);
  CHECK(succeeded(ir::verify(m, {&device()})));
}

TEST_CASE("expand-tiles: without fusion every intermediate goes through GM", "[expand-tiles]") {
  ir::Context ctx;
  ir::Module m(ctx);
  buildSoftmax(m);
  REQUIRE(!expand(m, device(), {.fuseLocal = false}).failed());
  Census c = census(m.func(0));
  // amax: x (4); sub: x, m (8); exp: shifted (4); sum: e (4); div: e, s (8).
  CHECK(c.copyIns == 28);
  const int64_t full = 8 * 1024 * 4, column = 8 * 4;
  CHECK(c.copyInBytes == 2 * full + column + full + 2 * full + column);
  // Every op's result is written: m, shifted, e, s, y.
  CHECK(c.copyOuts == 20);
  CHECK(c.copyOutBytes == 3 * full + 2 * column);
  CHECK(c.gmTensors == 5);
  CHECK(succeeded(ir::verify(m, {&device()})));
}

TEST_CASE("expand-tiles: tail tiles have their real shapes", "[expand-tiles]") {
  ir::Context ctx;
  ir::Module m(ctx);
  ir::GraphBuilder b(m);
  REQUIRE(b.beginFunc("tails", {ctx.tensorType(DType::F32, {100, 70})}, {"x"}).ok());
  b.setVecTile({32, 32});
  REQUIRE(b.endFunc({*b.unary(OpCode::Exp, b.arg(0))}).ok());
  REQUIRE(!expand(m, device(), {}).failed());
  std::map<std::vector<int64_t>, int> shapes;
  for (const ir::Operation &op : m.func(0).ops())
    if (op.code() == OpCode::Exp) {
      auto s = op.resultType().shape();
      ++shapes[std::vector<int64_t>(s.begin(), s.end())];
    }
  CHECK(shapes == std::map<std::vector<int64_t>, int>{
                      {{32, 32}, 6}, {{32, 6}, 3}, {{4, 32}, 2}, {{4, 6}, 1}});
  CHECK(census(m.func(0)).copyInBytes == 100 * 70 * 4);
}

TEST_CASE("expand-tiles: output is deterministic and verifies", "[expand-tiles]") {
  auto run = [](passes::ExpandTilesOptions options) {
    ir::Context ctx;
    auto m = ir::parseModule(kMixedText, "mixed.pto", ctx);
    REQUIRE(m);
    REQUIRE(!expand(*m, device(), options).failed());
    REQUIRE(succeeded(ir::verify(*m, {&device()})));
    CHECK(census(m->func(0)).tensorOps == 0);
    return ir::toString(*m);
  };
  std::string first = run({});
  CHECK(first == run({}));
  CHECK(first.find("matmul") != std::string::npos);
  std::string unfused = run({.fuseLocal = false});
  CHECK(unfused == run({.fuseLocal = false}));
  CHECK(unfused != first);
}

TEST_CASE("expand-tiles: every copy_in waits on exactly the writes it overlaps",
          "[expand-tiles]") {
  // exp writes 2x64 row tiles; neg reads 4x32 tiles: each read overlaps two
  // writes (rows 0-1 and 2-3 of its row band) and none of the other band.
  ir::Context ctx;
  auto m = ir::parseModule(R"(func @f(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %e = exp %x {vec_tile = [2, 64]} : tensor<8x64xf32>
  %n = neg %e {vec_tile = [4, 32]} : tensor<8x64xf32>
  return %n
}
)",
                           "f.pto", ctx);
  REQUIRE(m);
  REQUIRE(!expand(*m, device(), {}).failed());
  int reads = 0;
  for (const ir::Operation &op : m->func(0).ops()) {
    if (op.code() != OpCode::CopyIn || op.operand(0)->isArgument()) continue;
    ++reads;
    REQUIRE(op.numOperands() == 3);
    int64_t row = op.attr("offsets").getIntArray()[0];
    for (unsigned i = 1; i < 3; ++i) {
      const ir::Operation *write = op.operand(i)->definingOp();
      REQUIRE(write->code() == OpCode::CopyOut);
      int64_t wrow = write->attr("offsets").getIntArray()[0];
      CHECK(wrow >= row);
      CHECK(wrow < row + 4);
    }
  }
  CHECK(reads == 4);
}

TEST_CASE("expand-tiles: capacity is checked even when the input was never verified",
          "[expand-tiles]") {
  // The builder has no device, so nothing checked the 32x256 f32 tile (32 KiB)
  // against tiny's 32 KiB UB: exp holds an input and a result tile.
  ir::Context ctx;
  ir::Module m(ctx);
  ir::GraphBuilder b(m);
  REQUIRE(b.beginFunc("big", {ctx.tensorType(DType::F32, {64, 256})}, {"x"}).ok());
  b.setVecTile({32, 256});
  REQUIRE(b.endFunc({*b.unary(OpCode::Exp, b.arg(0))}).ok());
  std::string errors;
  CHECK(expand(m, device("tiny"), {}, &errors).failed());
  CHECK(errors.find("'exp' op vec_tile 32x256 needs 2 buffers x 32768 bytes = 65536 bytes of "
                    "UB but the device has 32768; try 16x256") != std::string::npos);
}

TEST_CASE("expand-tiles: a function at the tile level is left unchanged", "[expand-tiles]") {
  ir::Context ctx;
  ir::Module m(ctx);
  buildSoftmax(m);
  REQUIRE(expand(m, device(), {}).didChange());
  std::string once = ir::toString(m);
  passes::PassResult again = expand(m, device(), {});
  CHECK(!again.failed());
  CHECK(!again.didChange());
  CHECK(ir::toString(m) == once);
}

TEST_CASE("expand-tiles: matmul K loop and L1 traffic", "[expand-tiles]") {
  // 64x96 @ 96x48 with mL1 = 32, kL1 = 32, nL1 = 32: 2x2 output tiles (the second
  // column a 16-wide tail), 3 K steps each.
  ir::Context ctx;
  ir::Module m(ctx);
  ir::GraphBuilder b(m);
  REQUIRE(b.beginFunc("mm",
                      {ctx.tensorType(DType::F16, {64, 96}), ctx.tensorType(DType::F16, {96, 48})},
                      {"a", "b"})
              .ok());
  b.setCubeTile({{16, 32}, {16, 32}, {16, 32}});
  REQUIRE(b.endFunc({*b.matmul(b.arg(0), b.arg(1))}).ok());
  REQUIRE(!expand(m, device(), {}).failed());
  int matmuls = 0, accumulating = 0;
  int64_t l1Bytes = 0;
  for (const ir::Operation &op : m.func(0).ops()) {
    if (op.code() == OpCode::Matmul) {
      ++matmuls;
      accumulating += op.numOperands() == 3;
      CHECK(op.resultType().space() == MemSpace::L0C);
      CHECK(op.attr("cube_tile"));
    }
    if (op.code() == OpCode::CopyIn && op.resultType().space() == MemSpace::L1)
      l1Bytes += op.resultType().sizeInBytes();
  }
  CHECK(matmuls == 4 * 3);
  CHECK(accumulating == 4 * 2);
  // A is read once per output column of tiles (2), B once per output row (2).
  CHECK(l1Bytes == 2 * 64 * 96 * 2 + 2 * 96 * 48 * 2);
  Census c = census(m.func(0));
  CHECK(c.copyOuts == 4);
  CHECK(c.copyOutBytes == 64 * 48 * 2);
  CHECK(succeeded(ir::verify(m, {&device()})));
}

TEST_CASE("staggered K order: tiles that start together start far apart, every step is "
          "used",
          "[expand]") {
  using passes::staggeredFirstKStep;
  // Nothing to stagger: one step (or none).
  CHECK(staggeredFirstKStep(5, 1) == 0);
  CHECK(staggeredFirstKStep(5, 0) == 0);
  CHECK(staggeredFirstKStep(0, 28) == 0);
  // moe_gating's router (K 7168 in 28 steps of 256): the 24 tiles that start at once
  // on a2's 24 cube cores start at steps in [0, 28) that cover most of the loop (the
  // three-gap spread of a Weyl sequence: 22 distinct steps), and two neighbours (which
  // share a row strip of x) at least a quarter of the loop apart.
  std::set<int64_t> firsts;
  for (int64_t t = 0; t < 24; ++t) {
    int64_t first = staggeredFirstKStep(t, 28);
    REQUIRE(first >= 0);
    REQUIRE(first < 28);
    firsts.insert(first);
    if (t > 0) {
      int64_t apart = std::abs(first - staggeredFirstKStep(t - 1, 28));
      CHECK(std::min(apart, 28 - apart) >= 7);
    }
  }
  CHECK(firsts.size() * 4 >= 28 * 3);
  // test/passes/expand-tiles-k-stagger.pto's four tiles in four steps: 0, 2, 0, 3.
  CHECK(staggeredFirstKStep(1, 4) == 2);
  CHECK(staggeredFirstKStep(2, 4) == 0);
  CHECK(staggeredFirstKStep(3, 4) == 3);
  // Any tile index: the fixed-point product wraps, the step stays in range.
  for (int64_t t : {int64_t(1) << 40, INT64_MAX})
    CHECK(staggeredFirstKStep(t, 28) < 28);
}
