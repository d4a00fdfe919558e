// MergeRules: a proposal that breaks several rules at once is refused by the first of
// them in the documented order (MergeRules.h; docs/passes.md, "Merge rules"), with
// that rule's reason, whichever pass proposes it.
#include <catch2/catch.hpp>

#include <memory>
#include <set>
#include <string>

#include "llvm/Support/raw_ostream.h"

#include "ptoc/analysis/CostModel.h"
#include "ptoc/analysis/Subgraphs.h"
#include "ptoc/ir/Context.h"
#include "ptoc/ir/Parser.h"
#include "ptoc/passes/MergeRules.h"
#include "ptoc/target/DeviceSpec.h"

using namespace ptoc;
using namespace ptoc::analysis;
using namespace ptoc::passes;

namespace {

// Three AIV subgraphs in a chain, 0 -> 1 -> 2: merging 2 into 0 would put 1 on a
// cycle (rule 8). Each copies 32 bytes in.
constexpr const char *kChain = R"(
func @chain(%x: tensor<3x8xf32>) -> tensor<3x8xf32> {
  %w = gm_tensor : tensor<3x8xf32>
  %a0 = copy_in %x {offsets = [0, 0], sg = 0} : tile<1x8xf32, ub>
  %o0 = copy_out %a0, %w {offsets = [0, 0], sg = 0} : tile<1x8xf32, gm>
  %a1 = copy_in %w, %o0 {offsets = [0, 0], sg = 1} : tile<1x8xf32, ub>
  %o1 = copy_out %a1, %w {offsets = [1, 0], sg = 1} : tile<1x8xf32, gm>
  %a2 = copy_in %w, %o1 {offsets = [1, 0], sg = 2} : tile<1x8xf32, ub>
  %o2 = copy_out %a2, %w {offsets = [2, 0], sg = 2} : tile<1x8xf32, gm>
  return %w
}
)";

/// The rules in their documented order, as numbered in MergeRules.h.
enum Rule { kScope = 1, kCoreKind, kParallelism, kCycleBound, kCopyInCap, kBuffer, kFuel, kCycle };

struct Expected {
  MergeVerdict verdict;
  const char *reason; ///< a part of the logged reason that only this rule writes
};

Expected expectedOf(int rule) {
  switch (rule) {
  case kScope: return {MergeVerdict::RefusedScope, "is in sg_scope 7"};
  case kCoreKind: return {MergeVerdict::RefusedCoreKind, " runs on aiv, sg"};
  case kParallelism: return {MergeVerdict::RefusedParallelism, "< pg-parallel-lower-bound 20"};
  case kCycleBound: return {MergeVerdict::RefusedCycleBound, "> 150 cycles (pg-upper-bound)"};
  case kCopyInCap: return {MergeVerdict::RefusedCopyInCap, "> 10 copy-in bytes"};
  case kBuffer: return {MergeVerdict::RefusedUbCapacity, "needs more UB than the device has"};
  case kFuel: return {MergeVerdict::RefusedFuel, "merge-fuel spent"};
  default: return {MergeVerdict::RefusedCycle, "a dependency path between them"};
  }
}

/// Proposes merging sg 2 into sg 0 of kChain, breaking exactly `broken`; returns the
/// verdict and the line the log wrote.
std::pair<MergeVerdict, std::string> propose(const std::set<int> &broken) {
  ir::Context ctx;
  std::unique_ptr<ir::Module> module = ir::parseModule(kChain, "rules.pto", ctx);
  REQUIRE(module);
  target::DeviceSpec device;
  CostModel cost(device);
  SubgraphGraph graph = SubgraphGraph::fromFunc(module->func(0), cost);
  graph.summarise();
  REQUIRE(graph.numLive() == 3);
  // Copies of the two subgraphs carry the facts a rule looks at; the ids name the
  // graph's subgraphs, which the dependency rule (8) merges.
  Subgraph into = *graph.find(0), from = *graph.find(2);
  REQUIRE(into.copyInBytes == 32);
  into.cycles = from.cycles = 100;
  if (broken.count(kScope)) into.scope = 7;
  if (broken.count(kCoreKind)) from.core = target::CoreKind::AIC;

  MergeProposal p{into, from};
  // Groups of 4 and 2: the smaller is under 20 members; over 512 cycles in total
  // breaks the floor, at most 512 does not.
  p.groups = MergeProposal::Groups{4, 2, broken.count(kParallelism) ? 1000 : 100, 20, 512};
  p.cycleBound = broken.count(kCycleBound) ? 150 : 1000;
  p.copyInCap = broken.count(kCopyInCap) ? 10 : 1000;
  if (broken.count(kBuffer))
    p.bufferOverflow = MergeProposal::Buffer{MergeVerdict::RefusedUbCapacity,
                                             "the merged leaf needs more UB than the device has"};
  if (!broken.count(kCycle)) {
    // Without rule 8 broken, merge two neighbours instead: sg 1 into sg 0.
    from.id = 1;
  }

  std::string out;
  llvm::raw_string_ostream os(out);
  MergeLog log("test", &os, /*fuel=*/broken.count(kFuel) ? 0 : -1);
  MergeRules rules(graph, log);
  MergeVerdict v = rules.tryMerge(p, "ok");
  os.flush();
  return {v, out};
}

} // namespace

TEST_CASE("each rule alone refuses with its own reason", "[merge-rules]") {
  auto [merged, line] = propose({});
  CHECK(merged == MergeVerdict::Merged);
  CHECK(line == "test: merge sg 0 <- sg 1: merged: ok\n");
  for (int rule = kScope; rule <= kCycle; ++rule) {
    INFO("rule " << rule);
    auto [verdict, text] = propose({rule});
    Expected e = expectedOf(rule);
    CHECK(verdict == e.verdict);
    CHECK_THAT(text, Catch::Contains(mergeVerdictName(e.verdict).str()) &&
                         Catch::Contains(e.reason));
  }
}

TEST_CASE("of two rules broken at once, the earlier in the documented order decides",
          "[merge-rules]") {
  for (int first = kScope; first <= kCycle; ++first)
    for (int second = first + 1; second <= kCycle; ++second) {
      INFO("rules " << first << " and " << second);
      auto [verdict, text] = propose({first, second});
      Expected e = expectedOf(first), later = expectedOf(second);
      CHECK(verdict == e.verdict);
      CHECK_THAT(text, Catch::Contains("refused (" + mergeVerdictName(e.verdict).str() + ")") &&
                           Catch::Contains(e.reason));
      CHECK_THAT(text, !Catch::Contains(later.reason));
    }
}

TEST_CASE("every rule broken at once: the scope decides", "[merge-rules]") {
  auto [verdict, text] = propose({kScope, kCoreKind, kParallelism, kCycleBound, kCopyInCap,
                                  kBuffer, kFuel, kCycle});
  CHECK(verdict == MergeVerdict::RefusedScope);
  CHECK(text == "test: merge sg 0 <- sg 2: refused (scope): sg 0 is in sg_scope 7\n");
}
