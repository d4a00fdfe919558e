// Unit tests for the local schedule of a subgraph (analysis/LocalSchedule.h): the
// depth-first leaf order, eager copy_outs, the in-place rule and the per-chain UB
// peak that codegen and nbuffer-merge's UB estimate share.
#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

#include "ptoc/analysis/LocalSchedule.h"
#include "ptoc/ir/Context.h"
#include "ptoc/ir/Func.h"
#include "ptoc/ir/Parser.h"
#include "ptoc/ir/Verifier.h"

using namespace ptoc;
using namespace ptoc::analysis;

namespace {

std::vector<int> orderOf(LocalScheduler &s) {
  llvm::ArrayRef<int> o = s.run();
  return {o.begin(), o.end()};
}

/// One function's tile ops, in body order.
struct TileOps {
  ir::Context ctx;
  std::unique_ptr<ir::Module> module;
  std::vector<const ir::Operation *> ops;
  explicit TileOps(const std::string &text) {
    module = ir::parseModule(text, "schedule.pto", ctx);
    REQUIRE(module);
    REQUIRE(succeeded(ir::verify(*module)));
    for (const ir::Operation &op : module->func(0).ops())
      if (op.isTileOp()) ops.push_back(&op);
  }
  const ir::Operation &op(size_t i) const { return *ops[i]; }
};

} // namespace

TEST_CASE("merged members run one after another, not loop by loop", "[schedule]") {
  // Body order as expand-tiles emits three merged rows: the copy_ins, then the exps,
  // then the copy_outs (0-2 copy_in, 3-5 exp of row i, 6-8 copy_out of row i).
  LocalScheduler s;
  s.reset(9);
  for (int i = 0; i < 3; ++i) s.addDep(3 + i, i);
  for (int i = 0; i < 3; ++i) {
    s.addDep(6 + i, 3 + i);
    s.setEager(6 + i);
  }
  CHECK(orderOf(s) == std::vector<int>{0, 3, 6, 1, 4, 7, 2, 5, 8});
  // The same structure gives the same order (the scratch is reused).
  s.reset(9);
  for (int i = 0; i < 3; ++i) s.addDep(3 + i, i);
  for (int i = 0; i < 3; ++i) {
    s.addDep(6 + i, 3 + i);
    s.setEager(6 + i);
  }
  CHECK(orderOf(s) == std::vector<int>{0, 3, 6, 1, 4, 7, 2, 5, 8});
}

TEST_CASE("a copy_out is issued right after the tile it writes", "[schedule]") {
  // 0 copy_in, 1 exp(0), 2 copy_out(1), 3 copy_out(0): the copy_out of the input
  // comes before the exp, so the input could die early.
  LocalScheduler s;
  s.reset(4);
  s.addDep(1, 0);
  s.addDep(2, 1);
  s.addDep(3, 0);
  s.setEager(2);
  s.setEager(3);
  CHECK(orderOf(s) == std::vector<int>{0, 3, 1, 2});
  // Not eager: the copy_out is a sink of its own, issued in body order of sinks.
  s.reset(4);
  s.addDep(1, 0);
  s.addDep(2, 1);
  s.addDep(3, 0);
  CHECK(orderOf(s) == std::vector<int>{0, 1, 2, 3});
}

TEST_CASE("operands are issued in body order, ordering dependencies included",
          "[schedule]") {
  // A K loop: 0 a0, 1 b0, 2 mm0(0, 1), 3 a1, 4 b1, 5 mm1(3, 4, acc 2), 6 copy_out.
  // mm1's earliest dependency is the previous step: the loop keeps its order.
  LocalScheduler s;
  s.reset(7);
  s.addDep(2, 0);
  s.addDep(2, 1);
  s.addDep(5, 3);
  s.addDep(5, 4);
  s.addDep(5, 2);
  s.addDep(6, 5);
  s.setEager(6);
  CHECK(orderOf(s) == std::vector<int>{0, 1, 2, 3, 4, 5, 6});
  // A copy_in (3) ordered after a copy_out (2) of the same subgraph, read by 4.
  s.reset(6);
  s.addDep(1, 0); // exp
  s.addDep(2, 1); // copy_out
  s.addDep(3, 2); // copy_in after the copy_out
  s.addDep(4, 3); // neg
  s.addDep(5, 4); // copy_out
  s.setEager(2);
  s.setEager(5);
  CHECK(orderOf(s) == std::vector<int>{0, 1, 2, 3, 4, 5});
}

TEST_CASE("a dependency cycle yields no order", "[schedule]") {
  LocalScheduler s;
  s.reset(3);
  s.addDep(0, 2);
  s.addDep(1, 0);
  s.addDep(2, 1);
  CHECK(s.run().empty());
}

TEST_CASE("which results may be computed in place", "[schedule]") {
  TileOps t(R"(
func @f(%x: tensor<2x64xf32>, %a: tensor<32x32xf16>) -> (tensor<2x64xf16>, tensor<2x64xi32>, tensor<32x32xf32>) {
  %h = gm_tensor : tensor<2x64xf16>
  %i = gm_tensor : tensor<2x64xi32>
  %c = gm_tensor : tensor<32x32xf32>
  %t = copy_in %x {offsets = [0, 0]} : tile<2x64xf32, ub>
  %m = amax %t {axes = [1], keepdim = true} : tile<2x1xf32, ub>
  %d = sub %t, %m : tile<2x64xf32, ub>
  %n = cast %d : tile<2x64xf16, ub>
  %k = cast %d : tile<2x64xi32, ub>
  %w1 = copy_out %n, %h {offsets = [0, 0]} : tile<2x64xf16, gm>
  %w2 = copy_out %k, %i {offsets = [0, 0]} : tile<2x64xi32, gm>
  %l = copy_in %a {offsets = [0, 0]} : tile<32x32xf16, l1>
  %p = matmul %l, %l : tile<32x32xf32, l0c>
  %q = matmul %l, %l, %p : tile<32x32xf32, l0c>
  %w3 = copy_out %q, %c {offsets = [0, 0]} : tile<32x32xf32, gm>
  return %h, %i, %c
}
)");
  const ir::Operation &amax = t.op(1), &sub = t.op(2), &toF16 = t.op(3), &toI32 = t.op(4);
  const ir::Operation &mm = t.op(8), &acc = t.op(9);
  CHECK_FALSE(computesInPlace(amax, 0)); // a reduction changes the shape
  CHECK(computesInPlace(sub, 0));
  CHECK_FALSE(computesInPlace(sub, 1)); // the broadcast row max
  CHECK_FALSE(computesInPlace(toF16, 0)); // narrower elements
  CHECK(computesInPlace(toI32, 0));       // same element size
  CHECK_FALSE(computesInPlace(mm, 0));
  CHECK(computesInPlace(acc, 2));
  CHECK_FALSE(computesInPlace(acc, 0));
  CHECK_FALSE(computesInPlace(sub, 7)); // no such operand
}

TEST_CASE("the per-chain peak of a leaf order", "[schedule]") {
  // Softmax of one 4x4096 f32 row band: the band's tile (64 KiB) plus its row max or
  // sum (4 rows padded to a 32-byte block each); sub, exp and div are in place.
  TileOps band(R"(
func @band(%x: tensor<4x4096xf32>) -> tensor<4x4096xf32> {
  %y = gm_tensor : tensor<4x4096xf32>
  %t = copy_in %x {offsets = [0, 0]} : tile<4x4096xf32, ub>
  %m = amax %t {axes = [1], keepdim = true} : tile<4x1xf32, ub>
  %d = sub %t, %m : tile<4x4096xf32, ub>
  %e = exp %d : tile<4x4096xf32, ub>
  %s = sum %e {axes = [1], keepdim = true} : tile<4x1xf32, ub>
  %r = div %e, %s : tile<4x4096xf32, ub>
  %w = copy_out %r, %y {offsets = [0, 0]} : tile<4x4096xf32, gm>
  return %y
}
)");
  LocalScheduler s;
  std::vector<const ir::Operation *> ordered = scheduleLocalOps(band.ops, s);
  CHECK(ordered == band.ops);
  CHECK(localPeakBytes(ordered, ir::MemSpace::UB, 32) == 65536 + 4 * 32);
  CHECK(localPeakBytes(ordered, ir::MemSpace::L1, 32) == 0);

  // Both inputs are read twice: x, y and the sum live at once (the product then
  // takes x's place, the difference the sum's).
  TileOps products(R"(
func @products(%x: tensor<2x1024xf32>, %y: tensor<2x1024xf32>) -> tensor<2x1024xf32> {
  %v = gm_tensor : tensor<2x1024xf32>
  %a = copy_in %x {offsets = [0, 0]} : tile<2x1024xf32, ub>
  %b = copy_in %y {offsets = [0, 0]} : tile<2x1024xf32, ub>
  %t = add %a, %b : tile<2x1024xf32, ub>
  %u = mul %a, %b : tile<2x1024xf32, ub>
  %d = sub %t, %u : tile<2x1024xf32, ub>
  %w = copy_out %d, %v {offsets = [0, 0]} : tile<2x1024xf32, gm>
  return %v
}
)");
  CHECK(localPeakBytes(scheduleLocalOps(products.ops, s), ir::MemSpace::UB, 32) == 3 * 8192);

  // Two merged rows in loop-by-loop body order: scheduled, one row's tile at a time;
  // in body order, both.
  TileOps rows(R"(
func @rows(%x: tensor<2x64xf32>) -> tensor<2x64xf32> {
  %y = gm_tensor : tensor<2x64xf32>
  %a0 = copy_in %x {offsets = [0, 0]} : tile<1x64xf32, ub>
  %a1 = copy_in %x {offsets = [1, 0]} : tile<1x64xf32, ub>
  %e0 = exp %a0 : tile<1x64xf32, ub>
  %e1 = exp %a1 : tile<1x64xf32, ub>
  %w0 = copy_out %e0, %y {offsets = [0, 0]} : tile<1x64xf32, gm>
  %w1 = copy_out %e1, %y {offsets = [1, 0]} : tile<1x64xf32, gm>
  return %y
}
)");
  std::vector<const ir::Operation *> byRow = scheduleLocalOps(rows.ops, s);
  CHECK(byRow == std::vector<const ir::Operation *>{rows.ops[0], rows.ops[2], rows.ops[4],
                                                     rows.ops[1], rows.ops[3], rows.ops[5]});
  CHECK(localPeakBytes(byRow, ir::MemSpace::UB, 32) == 256);
  CHECK(localPeakBytes(rows.ops, ir::MemSpace::UB, 32) == 512);
}

TEST_CASE("local tiles are padded to whole blocks per row", "[schedule]") {
  ir::Context ctx;
  CHECK(localTileBytes(ctx.tileType(ir::DType::F32, {4, 1}, ir::MemSpace::UB), 32) == 128);
  CHECK(localTileBytes(ctx.tileType(ir::DType::F16, {2, 40}, ir::MemSpace::UB), 32) == 192);
  CHECK(localTileBytes(ctx.tileType(ir::DType::F32, {8, 64}, ir::MemSpace::UB), 32) == 2048);
}

TEST_CASE("a member with two outputs finishes both before the next member starts",
          "[schedule]") {
  // Two merged members, each writing two results from the same input tile (as the
  // two halves of a rotary embedding do), in expand-tiles' loop-by-loop body order:
  // the first output of both members, then the second. Taking the sinks in body
  // order would keep both members' inputs live (the regression: a merged RoPE leaf
  // needed one input tile more per member and overflowed UB).
  TileOps two(R"(
func @two(%x: tensor<2x64xf32>) -> (tensor<2x64xf32>, tensor<2x64xf32>) {
  %y = gm_tensor : tensor<2x64xf32>
  %z = gm_tensor : tensor<2x64xf32>
  %a0 = copy_in %x {offsets = [0, 0]} : tile<1x64xf32, ub>
  %a1 = copy_in %x {offsets = [1, 0]} : tile<1x64xf32, ub>
  %n0 = neg %a0 : tile<1x64xf32, ub>
  %n1 = neg %a1 : tile<1x64xf32, ub>
  %w0 = copy_out %n0, %y {offsets = [0, 0]} : tile<1x64xf32, gm>
  %w1 = copy_out %n1, %y {offsets = [1, 0]} : tile<1x64xf32, gm>
  %e0 = exp %a0 : tile<1x64xf32, ub>
  %e1 = exp %a1 : tile<1x64xf32, ub>
  %v0 = copy_out %e0, %z {offsets = [0, 0]} : tile<1x64xf32, gm>
  %v1 = copy_out %e1, %z {offsets = [1, 0]} : tile<1x64xf32, gm>
  return %y, %z
}
)");
  LocalScheduler s;
  std::vector<const ir::Operation *> byMember = scheduleLocalOps(two.ops, s);
  std::vector<const ir::Operation *> expected;
  for (int i : {0, 2, 4, 6, 8, 1, 3, 5, 7, 9}) expected.push_back(two.ops[i]);
  CHECK(byMember == expected);
  // One member's input and its negation (the exp then takes the input's place).
  CHECK(localPeakBytes(byMember, ir::MemSpace::UB, 32) == 2 * 256);

  // The same at the scheduler's level: sinks 4, 5, 8, 9; member 0 is {0, 2, 4, 6, 8}.
  s.reset(10);
  s.addDep(2, 0);
  s.addDep(3, 1);
  s.addDep(4, 2);
  s.addDep(5, 3);
  s.addDep(6, 0);
  s.addDep(7, 1);
  s.addDep(8, 6);
  s.addDep(9, 7);
  for (int w : {4, 5, 8, 9}) s.setEager(w);
  CHECK(orderOf(s) == std::vector<int>{0, 2, 4, 6, 8, 1, 3, 5, 7, 9});
}
