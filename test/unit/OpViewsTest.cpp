// Typed op views: a matmul's M, N, K, transposes and types, a reduction's axes,
// read from the text form.
#include <catch2/catch.hpp>

#include "ptoc/ir/Context.h"
#include "ptoc/ir/Func.h"
#include "ptoc/ir/OpViews.h"
#include "ptoc/ir/Parser.h"

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
