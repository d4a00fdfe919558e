// The cost model's estimates for the comparison, logical and where ops and for the
// integer and bool element types: the vector rates they reuse (docs/device-model.md).
#include <catch2/catch.hpp>

#include <map>
#include <memory>
#include <string>

#include "ptoc/analysis/CostModel.h"
#include "ptoc/ir/Context.h"
#include "ptoc/ir/Func.h"
#include "ptoc/ir/Parser.h"
#include "ptoc/target/DeviceSpec.h"

using namespace ptoc;

namespace {

/// The cost model's estimates (default device) of every op of `text`'s first function
/// that has a result, by the result's name.
struct Estimates {
  std::map<std::string, int64_t> cycles, bytes;
  std::map<std::string, double> peak;
};

Estimates estimate(const char *text) {
  ir::Context ctx;
  std::unique_ptr<ir::Module> module = ir::parseModule(text, "cost.pto", ctx);
  REQUIRE(module);
  target::DeviceSpec device; // the cost model keeps a reference to it
  analysis::CostModel cost(device);
  Estimates e;
  for (ir::Operation &op : module->func(0).ops()) {
    if (!op.numResults()) continue;
    std::string name = op.result()->nameHint().str().str();
    e.cycles[name] = cost.opCycles(op);
    e.bytes[name] = cost.vectorBytes(op);
    e.peak[name] = cost.vectorPeakCycles(op);
  }
  return e;
}

} // namespace

TEST_CASE("cost: comparisons, logic and where run at the vector rates", "[cost]") {
  const char *text = R"(func @f(%x: tensor<16x64xf32>, %y: tensor<16x64xf32>, %i: tensor<16x64xi64>, %u: tensor<16x64xu8>) {
  %a = copy_in %x {offsets = [0, 0]} : tile<16x64xf32, ub>
  %b = copy_in %y {offsets = [0, 0]} : tile<16x64xf32, ub>
  %add = add %a, %b : tile<16x64xf32, ub>
  %lt = lt %a, %b : tile<16x64xbool, ub>
  %eq = eq %a, %b : tile<16x64xbool, ub>
  %and = logical_and %lt, %eq : tile<16x64xbool, ub>
  %not = logical_not %lt : tile<16x64xbool, ub>
  %where = where %lt, %a, %b : tile<16x64xf32, ub>
  %neg = neg %a : tile<16x64xf32, ub>
  %cast = cast %a {mode = "floor", saturate = false} : tile<16x64xi16, ub>
  %c = copy_in %i {offsets = [0, 0]} : tile<16x64xi64, ub>
  %d = copy_in %u {offsets = [0, 0]} : tile<16x64xu8, ub>
  %add64 = add %c, %c : tile<16x64xi64, ub>
  %add8 = add %d, %d : tile<16x64xu8, ub>
  return
}
)";
  std::map<std::string, int64_t> cycles = estimate(text).cycles;
  REQUIRE(cycles.count("where"));
  // Two-tile ops at the binary rate over the largest tile touched (the f32 operands).
  CHECK(cycles["lt"] == cycles["add"]);
  CHECK(cycles["eq"] == cycles["add"]);
  CHECK(cycles["where"] == cycles["add"]);
  // logical_and reads two bool tiles: a quarter of the bytes of the f32 add.
  CHECK(cycles["and"] < cycles["add"]);
  CHECK(cycles["and"] > 0);
  // One-input ops at the full rate, as neg; a cast with any mode is one conversion.
  CHECK(cycles["not"] > 0);
  CHECK(cycles["cast"] == cycles["neg"]);
  // Priced by bytes: 8-byte elements take 8x the bytes of 1-byte ones.
  CHECK(cycles["add64"] > cycles["add"]);
  CHECK(cycles["add8"] < cycles["add"]);
}

TEST_CASE("cost: peak vector cycles are the bytes at each class's rate, no latency",
          "[cost]") {
  const char *text = R"(func @f(%x: tensor<16x64xf32>) {
  %a = copy_in %x {offsets = [0, 0]} : tile<16x64xf32, ub>
  %neg = neg %a : tile<16x64xf32, ub>
  %add = add %a, %a : tile<16x64xf32, ub>
  %exp = exp %a : tile<16x64xf32, ub>
  %sum = sum %a {axes = [1], keepdim = true} : tile<16x1xf32, ub>
  return
}
)";
  Estimates e = estimate(text);
  std::map<std::string, double> &peak = e.peak;
  std::map<std::string, int64_t> &cycles = e.cycles;
  target::DeviceSpec device;
  const double bytes = 16 * 64 * 4, full = device.compute.vectorBytesPerCycle;
  CHECK(peak["neg"] == Approx(bytes / full));
  CHECK(peak["add"] == Approx(bytes / (full * device.compute.vectorBinaryRate)));
  CHECK(peak["exp"] == Approx(bytes / (full * device.compute.vectorTranscendentalRate)));
  // A row reduction runs at its own (slow) rate, not the full one.
  CHECK(peak["sum"] == Approx(bytes / (full * device.compute.vectorReduceRate)));
  CHECK(peak["sum"] > 6 * peak["neg"]);
  // Copies are not vector work; every estimate is at least its peak.
  CHECK(peak["a"] == 0);
  for (const char *name : {"neg", "add", "exp", "sum"})
    CHECK(static_cast<double>(cycles[name]) >= peak[name]);
}

TEST_CASE("cost: a vector op works through its UB rows padded to whole blocks", "[cost]") {
  // A 64x8 f16 tile holds 16-byte rows in 32-byte slots: the vector unit covers the
  // padding, so it costs what a 64x16 tile does; its 64x8 transpose source too.
  const char *text = R"(func @f(%x: tensor<64x16xf16>) {
  %narrow = copy_in %x {offsets = [0, 0]} : tile<64x8xf16, ub>
  %wide = copy_in %x {offsets = [0, 0]} : tile<64x16xf16, ub>
  %short = copy_in %x {offsets = [0, 0]} : tile<8x64xf16, ub>
  %neg8 = neg %narrow : tile<64x8xf16, ub>
  %neg16 = neg %wide : tile<64x16xf16, ub>
  %negs = neg %short : tile<8x64xf16, ub>
  %t = transpose %short {perm = [1, 0]} : tile<64x8xf16, ub>
  return
}
)";
  Estimates e = estimate(text);
  std::map<std::string, int64_t> &cycles = e.cycles, &bytes = e.bytes;
  REQUIRE(cycles.count("t"));
  CHECK(bytes["neg8"] == 64 * 32);
  CHECK(bytes["neg16"] == 64 * 32);
  CHECK(cycles["neg8"] == cycles["neg16"]);
  // 8 rows of 128 bytes need no padding: half the bytes of the padded 64x8.
  CHECK(bytes["negs"] == 8 * 128);
  CHECK(cycles["negs"] < cycles["neg8"]);
  // A transpose is charged for its larger, padded output tile.
  CHECK(bytes["t"] == 64 * 32);
  CHECK(cycles["t"] == cycles["neg8"]);
}
