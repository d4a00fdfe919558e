// Typed op views, read from the text form: a matmul's M, N, K, transposes and types,
// a reduction's axes, a vector op's tile footprint.
#include <catch2/catch.hpp>

#include "ptoc/ir/Context.h"
#include "ptoc/ir/Func.h"
#include "ptoc/ir/OpViews.h"
#include "ptoc/ir/Parser.h"
#include "ptoc/target/DeviceSpec.h"

using namespace ptoc::ir;

TEST_CASE("MatmulView reads M, N, K through the transposes", "[ir]") {
  Context ctx;
  auto module = parseModule(R"(
func @f(%a: tensor<2x64x32xf16>, %b: tensor<48x64xf16>) -> (tensor<2x32x48xf32>, tensor<2x64xf32>) {
  %c = matmul %a, %b {cube_tile = {m = [16, 32], k = [16, 64], n = [16, 48]}, transpose_a = true, transpose_b = true} : tensor<2x32x48xf32>
  %x = cast %b : tensor<48x64xf32>
  %s = sum %a {axes = [2], keepdim = false} : tensor<2x64xf16>
  %t = cast %s : tensor<2x64xf32>
  return %c, %t
}
)", "views.pto", ctx);
  REQUIRE(module);
  auto it = module->func(0).ops().begin();
  const Operation &mm = *it++;
  std::optional<MatmulView> v = MatmulView::of(mm);
  REQUIRE(v);
  CHECK(v->transposeA);
  CHECK(v->transposeB);
  CHECK(v->m == 32);
  CHECK(v->n == 48);
  CHECK(v->k == 64); // from a's second-to-last dim: it is transposed
  CHECK(v->in == DType::F16);
  CHECK(v->out == DType::F32);
  CHECK(v->acc == DType::F32);
  REQUIRE(v->tile);
  CHECK(v->tile->k[1] == 64);
  const Operation &cast = *it++;
  CHECK_FALSE(MatmulView::of(cast));
  CHECK_FALSE(ReduceView::of(cast));
  const Operation &sum = *it++;
  std::optional<ReduceView> r = ReduceView::of(sum);
  REQUIRE(r);
  CHECK(r->axes.size() == 1);
  CHECK(r->axes[0] == 2);
  CHECK_FALSE(r->keepdim);
}

TEST_CASE("VecTileView: what a vec_tile covers, its element sizes and its UB buffers",
          "[ir]") {
  Context ctx;
  auto module = parseModule(R"(
func @f(%a: tensor<8x64xf16>, %b: tensor<8x64xf32>, %c: tensor<4x64xf32>) -> (tensor<8x64xf32>, tensor<8x1xf32>, tensor<12x64xf32>, tensor<64x8xf16>) {
  %x = cast %a {vec_tile = [2, 64]} : tensor<8x64xf32>
  %y = add %x, %b {vec_tile = [4, 64]} : tensor<8x64xf32>
  %s = sum %y {axes = [1], keepdim = true, vec_tile = [8, 64]} : tensor<8x1xf32>
  %j = concat %b, %c {axis = 0, vec_tile = [4, 64]} : tensor<12x64xf32>
  %t = transpose %a {perm = [1, 0], vec_tile = [8, 16]} : tensor<64x8xf16>
  return %y, %s, %j, %t
}
)", "views.pto", ctx);
  REQUIRE(module);
  auto it = module->func(0).ops().begin();
  VecTileView cast = VecTileView::of(*it++);
  CHECK(cast.tile == llvm::ArrayRef<int64_t>({2, 64}));
  CHECK(cast.minElemSize == 2);
  CHECK(cast.maxElemSize == 4);
  CHECK(cast.buffers == 2);
  VecTileView add = VecTileView::of(*it++);
  CHECK(add.buffers == 3);
  CHECK(add.minElemSize == 4);
  // A reduction's tile covers its input, not its [8, 1] result.
  VecTileView sum = VecTileView::of(*it++);
  CHECK(sum.iter == llvm::SmallVector<int64_t, 4>({8, 64}));
  // A concat holds the one tile on its way through UB, whatever its input count.
  VecTileView concat = VecTileView::of(*it++);
  CHECK(concat.buffers == 1);
  CHECK(concat.iter == llvm::SmallVector<int64_t, 4>({12, 64}));
  // Only a copy through UB needs whole-block rows.
  CHECK(concat.alignedRows);
  CHECK_FALSE(add.alignedRows);
  // A transpose's tile cuts its input, and it counts its own footprint.
  VecTileView transpose = VecTileView::of(*it++);
  CHECK(transpose.iter == llvm::SmallVector<int64_t, 4>({8, 64}));
  CHECK(transpose.transposePerm == llvm::SmallVector<int64_t, 4>({1, 0}));
  CHECK_FALSE(transpose.alignedRows);
  CHECK(transpose.footprint(transpose.buffers).bytes({8, 16}, 32) ==
        transposeStepBytes({8, 16}, {1, 0}, 2, 32));

  // check() is the verifier's rule: a copy's last dim that is not 32-byte aligned
  // fails (a compute op pads it), and so does a tile of more bytes than UB holds for
  // the op's buffers (a tile is clamped to what it covers, so the big one is checked
  // over a big shape).
  ptoc::target::DeviceSpec a2 = *ptoc::target::DeviceSpec::preset("a2");
  CHECK(add.check({4, 64}, &a2).empty());
  CHECK(add.check({4, 3}, &a2).empty());
  CHECK(concat.check({4, 3}, &a2).find("last dimension") != std::string::npos);
  std::vector<int64_t> half = {a2.buffers.ub / 4 / 64 / 2, 64}; // half of UB in f32
  std::vector<int64_t> big = {1 << 20, 64};
  CHECK_FALSE(add.check(half, big, add.buffers, &a2).empty()); // 3 halves do not fit
  CHECK(concat.check(half, big, concat.buffers, &a2).empty());  // 1 does
}
