// The cost model on the index ops' tile forms: topk_indices as the bitonic top-k that
// docs/device-model.md describes (recomputed here from the device fields), gather
// and scatter as their passes.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <tuple>

#include "absl/strings/str_format.h"
#include "llvm/ADT/SmallVector.h"
#include "ptoc/analysis/CostModel.h"
#include "ptoc/ir/Context.h"
#include "ptoc/ir/Diagnostics.h"
#include "ptoc/ir/Func.h"
#include "ptoc/ir/Parser.h"
#include "ptoc/ir/Verifier.h"
#include "ptoc/target/DeviceSpec.h"

using namespace ptoc;

namespace {

/// The cycles of the first op named `name` in a tile-level function.
int64_t cyclesOf(const std::string &text, const char *name, const target::DeviceSpec &device) {
  ir::Context ctx;
  ir::DiagnosticCollector diags(ctx.diag());
  std::unique_ptr<ir::Module> m = ir::parseModule(text, "cost.pto", ctx);
  INFO(diags.errorText());
  REQUIRE(m);
  REQUIRE(succeeded(ir::verify(*m)));
  analysis::CostModel cost(device);
  for (const ir::Operation &op : m->func(0).ops())
    if (op.name() == name) return cost.opCycles(op);
  FAIL("no op " << name);
  return 0;
}

std::string topkText(int64_t rows, int64_t n, int64_t k) {
  return absl::StrFormat(R"(
func @f(%%x: tensor<%dx%dxf32>) -> tensor<%dx%dxi32> {
  %%y = gm_tensor : tensor<%dx%dxi32>
  %%t = copy_in %%x {offsets = [0, 0]} : tile<%dx%dxf32, ub>
  %%i = topk_indices %%t {dim = 1, k = %d} : tile<%dx%dxi32, ub>
  %%o = copy_out %%i, %%y {offsets = [0, 0]} : tile<%dx%dxi32, gm>
  return %%y
}
)",
                         rows, n, rows, k, rows, k, rows, n, k, rows, k, rows, k);
}

/// docs/device-model.md's bitonic top-k, from the device fields.
double bitonicCycles(int64_t rows, int64_t n, int64_t k, const target::ComputeSpec &c) {
  auto log2Up = [](int64_t v) {
    int64_t l = 0;
    while ((int64_t(1) << l) < v) ++l;
    return l;
  };
  int64_t logP = log2Up(n), logK = std::min(log2Up(k), logP);
  double binary = c.vectorBytesPerCycle * c.vectorBinaryRate;
  auto stage = [&](double pairs) {
    double elems = pairs * double(rows);
    return 3 * (c.vectorLatencyCycles + std::ceil(elems * 4 / binary)) +
           2 * (c.vectorLatencyCycles + std::ceil(elems * 4 / binary));
  };
  double p = std::ldexp(1.0, int(logP));
  double total = double(logK * (logK + 1) / 2) * stage(p);
  for (int64_t len = logP; len > logK; --len) {
    p /= 2;
    total += double(1 + logK) * stage(p);
  }
  return total;
}

} // namespace

TEST_CASE("cost: topk_indices is a bitonic top-k from the vector binary rate", "[cost]") {
  target::DeviceSpec a2 = *target::DeviceSpec::preset("a2");
  for (auto [rows, n, k] : {std::tuple<int64_t, int64_t, int64_t>{32, 256, 8}, {8, 256, 256},
                            {16, 37, 5}, {1, 4096, 1}}) {
    INFO(rows << "x" << n << " k=" << k);
    CHECK(cyclesOf(topkText(rows, n, k), "topk_indices", a2) ==
          int64_t(bitonicCycles(rows, n, k, a2.compute)));
  }
  // More to select or more to select from costs more; a full sort (k = n) the most.
  int64_t k8 = cyclesOf(topkText(32, 256, 8), "topk_indices", a2);
  CHECK(cyclesOf(topkText(32, 256, 64), "topk_indices", a2) > k8);
  CHECK(cyclesOf(topkText(32, 512, 8), "topk_indices", a2) > k8);
  CHECK(cyclesOf(topkText(32, 256, 256), "topk_indices", a2) >
        cyclesOf(topkText(32, 256, 64), "topk_indices", a2));
}

TEST_CASE("cost: gather reads per result element, scatter copies then writes", "[cost]") {
  target::DeviceSpec a2 = *target::DeviceSpec::preset("a2");
  const target::ComputeSpec &c = a2.compute;
  double binary = c.vectorBytesPerCycle * c.vectorBinaryRate;
  std::string text = R"(
func @f(%x: tensor<8x256xf32>, %i: tensor<8x16xi32>) -> (tensor<8x16xf32>, tensor<8x256xf32>, tensor<8x256xf32>) {
  %g = gm_tensor : tensor<8x16xf32>
  %s = gm_tensor : tensor<8x256xf32>
  %a = gm_tensor : tensor<8x256xf32>
  %t = copy_in %x {offsets = [0, 0]} : tile<8x256xf32, ub>
  %it = copy_in %i {offsets = [0, 0]} : tile<8x16xi32, ub>
  %r = gather %t, %it {dim = 1} : tile<8x16xf32, ub>
  %u = scatter %t, %it, %r {dim = 1} : tile<8x256xf32, ub>
  %v = scatter %t, %it, %r {dim = 1, reduce = "add"} : tile<8x256xf32, ub>
  %o1 = copy_out %r, %g {offsets = [0, 0]} : tile<8x16xf32, gm>
  %o2 = copy_out %u, %s {offsets = [0, 0]} : tile<8x256xf32, gm>
  %o3 = copy_out %v, %a {offsets = [0, 0]} : tile<8x256xf32, gm>
  return %g, %s, %a
}
)";
  double gather = c.vectorLatencyCycles + std::ceil(8 * 16 * 4 / binary);
  CHECK(cyclesOf(text, "gather", a2) == int64_t(gather));
  ir::Context ctx;
  std::unique_ptr<ir::Module> m = ir::parseModule(text, "cost.pto", ctx);
  REQUIRE(m);
  analysis::CostModel cost(a2);
  llvm::SmallVector<int64_t, 2> scatters;
  for (const ir::Operation &op : m->func(0).ops())
    if (op.name() == "scatter") scatters.push_back(cost.opCycles(op));
  REQUIRE(scatters.size() == 2);
  double copy = c.vectorLatencyCycles + std::ceil(8 * 256 * 4 / c.vectorBytesPerCycle);
  CHECK(scatters[0] == int64_t(copy + gather));
  CHECK(scatters[1] == int64_t(copy + 2 * gather)); // read, combine, write
}
