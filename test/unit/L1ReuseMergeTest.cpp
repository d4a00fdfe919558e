// Unit tests for l1-reuse-merge's rules (automatic merge count, count precedence,
// L1 footprint and copy-in bytes after deduplication) and for the pass on a small
// hand-partitioned matmul, through the text form.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "ptoc/ir/Context.h"
#include "ptoc/ir/Diagnostics.h"
#include "ptoc/ir/Func.h"
#include "ptoc/ir/Parser.h"
#include "ptoc/ir/Verifier.h"
#include "ptoc/passes/L1ReuseMerge.h"
#include "ptoc/passes/MergeRules.h"
#include "ptoc/passes/Passes.h"
#include "ptoc/target/DeviceSpec.h"

using namespace ptoc;
using namespace ptoc::passes;

namespace {

// C[64x64] = A[64x32] x B[32x64], one AIC subgraph per 32x32 output tile:
// sg 0 = (0,0), sg 1 = (0,1) share A[0, 0]; sg 2 = (1,0) shares B[0, 0] with sg 0.
// Every tile is 32x32xf16 = 2048 bytes.
constexpr const char *kMatmul2x2 = R"(
func @mm(%a: tensor<64x32xf16>, %b: tensor<32x64xf16>) -> tensor<64x64xf32> {
  subgraph {copy_in_bytes = 4096, core = "aic", cycles = 1, group_size = 4, hash = "0", hash_order = 0, id = 0}
  subgraph {copy_in_bytes = 4096, core = "aic", cycles = 1, group_size = 4, hash = "0", hash_order = 0, id = 1}
  subgraph {copy_in_bytes = 4096, core = "aic", cycles = 1, group_size = 4, hash = "0", hash_order = 0, id = 2}
  subgraph {copy_in_bytes = 4096, core = "aic", cycles = 1, group_size = 4, hash = "0", hash_order = 0, id = 3}
  %c = gm_tensor : tensor<64x64xf32>
  %a00 = copy_in %a {offsets = [0, 0], sg = 0} : tile<32x32xf16, l1>
  %b00 = copy_in %b {offsets = [0, 0], sg = 0} : tile<32x32xf16, l1>
  %m00 = matmul %a00, %b00 {sg = 0} : tile<32x32xf32, l0c>
  %t00 = copy_out %m00, %c {offsets = [0, 0], sg = 0} : tile<32x32xf32, gm>
  %a01 = copy_in %a {offsets = [0, 0], sg = 1} : tile<32x32xf16, l1>
  %b01 = copy_in %b {offsets = [0, 32], sg = 1} : tile<32x32xf16, l1>
  %m01 = matmul %a01, %b01 {sg = 1} : tile<32x32xf32, l0c>
  %t01 = copy_out %m01, %c {offsets = [0, 32], sg = 1} : tile<32x32xf32, gm>
  %a10 = copy_in %a {offsets = [32, 0], sg = 2} : tile<32x32xf16, l1>
  %b10 = copy_in %b {offsets = [0, 0], sg = 2} : tile<32x32xf16, l1>
  %m10 = matmul %a10, %b10 {sg = 2} : tile<32x32xf32, l0c>
  %t10 = copy_out %m10, %c {offsets = [32, 0], sg = 2} : tile<32x32xf32, gm>
  %a11 = copy_in %a {offsets = [32, 0], sg = 3} : tile<32x32xf16, l1>
  %b11 = copy_in %b {offsets = [0, 32], sg = 3} : tile<32x32xf16, l1>
  %m11 = matmul %a11, %b11 {sg = 3} : tile<32x32xf32, l0c>
  %t11 = copy_out %m11, %c {offsets = [32, 32], sg = 3} : tile<32x32xf32, gm>
  return %c
}
)";

struct Parsed {
  ir::Context ctx;
  std::unique_ptr<ir::Module> module;
  explicit Parsed(const char *text) {
    module = ir::parseModule(text, "l1.pto", ctx);
    REQUIRE(module);
    REQUIRE(ptoc::succeeded(ir::verify(*module)));
  }
  ir::Func &func() { return module->func(0); }
  // The ops whose `sg` is one of `ids`, in body order.
  std::vector<ir::Operation *> opsOf(std::initializer_list<int64_t> ids) {
    std::vector<ir::Operation *> out;
    for (ir::Operation &op : func().ops()) {
      ir::Attribute sg = op.attr("sg");
      if (sg && std::find(ids.begin(), ids.end(), sg.getInt()) != ids.end())
        out.push_back(&op);
    }
    return out;
  }
  int copyIns() {
    int n = 0;
    for (ir::Operation &op : func().ops()) n += op.code() == ir::OpCode::CopyIn;
    return n;
  }
  int subgraphs() {
    int n = 0;
    for (ir::Operation &op : func().ops()) n += op.code() == ir::OpCode::Subgraph;
    return n;
  }
};

} // namespace

TEST_CASE("automatic merge count is floor(group / (2 x AIC cores)), at least 1",
          "[l1-reuse-merge]") {
  CHECK(l1ReuseAutomaticCount(0, 2) == 1);
  CHECK(l1ReuseAutomaticCount(3, 2) == 1);
  CHECK(l1ReuseAutomaticCount(4, 2) == 1); // floor(4 / 4) = 1: no merge
  CHECK(l1ReuseAutomaticCount(7, 2) == 1);
  CHECK(l1ReuseAutomaticCount(8, 2) == 2);
  CHECK(l1ReuseAutomaticCount(17, 2) == 4);
  CHECK(l1ReuseAutomaticCount(47, 24) == 1); // a2: 48 AIC tasks per pair
  CHECK(l1ReuseAutomaticCount(96, 24) == 2);
  CHECK(l1ReuseAutomaticCount(1024, 24) == 21);
  CHECK(l1ReuseAutomaticCount(10, 0) == 1); // no cube cores: never merge
}

TEST_CASE("L1 footprint counts each deduplicated l1 copy_in once", "[l1-reuse-merge]") {
  Parsed p(kMatmul2x2);
  // One tile subgraph: A and B tiles.
  CHECK(l1FootprintBytes(p.opsOf({0})) == 2 * 2048);
  CHECK(dedupedCopyInBytes(p.opsOf({0})) == 2 * 2048);
  // (0,0) + (0,1): A[0, 0] is shared, so 3 tiles, not 4.
  CHECK(l1FootprintBytes(p.opsOf({0, 1})) == 3 * 2048);
  CHECK(dedupedCopyInBytes(p.opsOf({0, 1})) == 3 * 2048);
  // (0,0) + (1,1): nothing shared.
  CHECK(l1FootprintBytes(p.opsOf({0, 3})) == 4 * 2048);
  // All four: A[0], A[32], B[0], B[32].
  CHECK(l1FootprintBytes(p.opsOf({0, 1, 2, 3})) == 4 * 2048);
  // Non-copy ops contribute nothing.
  CHECK(l1FootprintBytes({}) == 0);
}

TEST_CASE("copy_ins of one region that wait on different tokens count separately, ub "
          "copy_ins count as copy-in but not as L1",
          "[l1-reuse-merge]") {
  // %w is written twice (subgraphs 1 and 2); %p reads the first write, %q and %r the
  // second, so they wait on different tokens.
  Parsed p(R"(
func @f(%x: tensor<32x32xf16>) -> tensor<32x32xf32> {
  subgraph {copy_in_bytes = 0, core = "aic", cycles = 1, group_size = 1, hash = "0", hash_order = 0, id = 0}
  subgraph {copy_in_bytes = 0, core = "aiv", cycles = 1, group_size = 1, hash = "1", hash_order = 1, id = 1}
  subgraph {copy_in_bytes = 0, core = "aiv", cycles = 1, group_size = 1, hash = "2", hash_order = 2, id = 2}
  subgraph {copy_in_bytes = 0, core = "aic", cycles = 1, group_size = 1, hash = "3", hash_order = 3, id = 3}
  %w = gm_tensor : tensor<32x32xf16>
  %c0 = gm_tensor : tensor<32x32xf32>
  %c = gm_tensor : tensor<32x32xf32>
  %u = copy_in %x {offsets = [0, 0], sg = 1} : tile<32x32xf16, ub>
  %e = exp %u {sg = 1} : tile<32x32xf16, ub>
  %k = copy_out %e, %w {offsets = [0, 0], sg = 1} : tile<32x32xf16, gm>
  %p = copy_in %w, %k {offsets = [0, 0], sg = 0} : tile<32x32xf16, l1>
  %m0 = matmul %p, %p {sg = 0} : tile<32x32xf32, l0c>
  %t0 = copy_out %m0, %c0 {offsets = [0, 0], sg = 0} : tile<32x32xf32, gm>
  %u2 = copy_in %x {offsets = [0, 0], sg = 2} : tile<32x32xf16, ub>
  %e2 = exp %u2 {sg = 2} : tile<32x32xf16, ub>
  %k2 = copy_out %e2, %w, %k, %p {offsets = [0, 0], sg = 2} : tile<32x32xf16, gm>
  %q = copy_in %w, %k2 {offsets = [0, 0], sg = 3} : tile<32x32xf16, l1>
  %r = copy_in %w, %k2, %k2 {offsets = [0, 0], sg = 3} : tile<32x32xf16, l1>
  %m = matmul %q, %r {sg = 3} : tile<32x32xf32, l0c>
  %t = copy_out %m, %c {offsets = [0, 0], sg = 3} : tile<32x32xf32, gm>
  return %c
}
)");
  // %p waits on {%k}; %q and %r on {%k2} (a token listed twice is one token).
  CHECK(l1FootprintBytes(p.opsOf({0, 3})) == 2 * 2048);
  CHECK(dedupedCopyInBytes(p.opsOf({0, 3})) == 2 * 2048);
  // The ub copy_in is copy-in, not L1.
  CHECK(l1FootprintBytes(p.opsOf({0, 1, 3})) == 2 * 2048);
  CHECK(dedupedCopyInBytes(p.opsOf({0, 1, 3})) == 3 * 2048);
}

TEST_CASE("the pass merges sharing pairs and removes the duplicate copy_ins",
          "[l1-reuse-merge]") {
  Parsed p(kMatmul2x2);
  auto device = target::DeviceSpec::preset("a2");
  REQUIRE(device.ok());
  L1ReuseMergeOptions o;
  o.mode = 2;
  o.setting = {{0, 2}};
  auto pass = createL1ReuseMergePass(o);
  PassContext ctx{*device, nullptr, {}};
  PassResult r = pass->run(*p.module, ctx);
  REQUIRE(!r.failed());
  CHECK(r.didChange());
  CHECK(p.subgraphs() == 2);
  CHECK(p.copyIns() == 6);
  CHECK(ptoc::succeeded(ir::verify(*p.module)));
  for (const PassStatistic *s : pass->statistics()) {
    if (std::string(s->name()) == "merges") CHECK(s->value() == 2);
    if (std::string(s->name()) == "copy-ins-removed") CHECK(s->value() == 2);
    if (std::string(s->name()) == "bytes-saved") CHECK(s->value() == 2 * 2048);
  }
}

TEST_CASE("mode 0 changes nothing, an unpartitioned function is an error",
          "[l1-reuse-merge]") {
  auto device = target::DeviceSpec::preset("a2");
  REQUIRE(device.ok());
  {
    Parsed p(kMatmul2x2);
    auto pass = createL1ReuseMergePass({});
    PassContext ctx{*device, nullptr, {}};
    PassResult r = pass->run(*p.module, ctx);
    CHECK(!r.failed());
    CHECK(!r.didChange());
    CHECK(p.copyIns() == 8);
  }
  {
    Parsed p(R"(
func @t(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y = exp %x : tensor<4x8xf32>
  return %y
}
)");
    ir::DiagnosticCollector diags(p.ctx.diag());
    L1ReuseMergeOptions o;
    o.mode = 1;
    auto pass = createL1ReuseMergePass(o);
    PassContext ctx{*device, nullptr, {}};
    CHECK(pass->run(*p.module, ctx).failed());
    CHECK_THAT(diags.errorText(), Catch::Contains("run partition first"));
  }
}
