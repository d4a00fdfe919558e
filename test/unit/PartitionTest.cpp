// Unit tests for the subgraph structure (Subgraphs.h: structural hashes, hash
// orders, the subgraph DAG's cycle checks and merges, the table, MergeLog) and the
// rules of partition and the NBuffer merges, through the text form.
#include <catch2/catch.hpp>

#include <random>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "llvm/Support/raw_ostream.h"

#include "ptoc/analysis/CostModel.h"
#include "ptoc/analysis/Subgraphs.h"
#include "ptoc/ir/Context.h"
#include "ptoc/ir/Func.h"
#include "ptoc/ir/Parser.h"
#include "ptoc/ir/Printer.h"
#include "ptoc/ir/Verifier.h"
#include "ptoc/passes/MergeRules.h"
#include "ptoc/passes/Passes.h"
#include "ptoc/target/DeviceSpec.h"

using namespace ptoc;
using namespace ptoc::analysis;
using namespace ptoc::passes;

namespace {

struct Parsed {
  ir::Context ctx;
  std::unique_ptr<ir::Module> module;
  target::DeviceSpec device;
  CostModel cost{device};
  explicit Parsed(const std::string &text) {
    module = ir::parseModule(text, "partition.pto", ctx);
    REQUIRE(module);
    REQUIRE(ptoc::succeeded(ir::verify(*module)));
  }
  ir::Func &func() { return module->func(0); }
  // The tile ops in body order.
  std::vector<ir::Operation *> tileOps() {
    std::vector<ir::Operation *> out;
    for (ir::Operation &op : func().ops())
      if (op.isTileOp()) out.push_back(&op);
    return out;
  }
  std::string print() {
    std::string s;
    llvm::raw_string_ostream os(s);
    ir::printModule(*module, os);
    return os.str();
  }
};

// Four independent rows of copy_in -> exp -> copy_out; rows 0 and 1 read 1x64
// tiles, rows 2 and 3 read 2x64 tiles (a different shape). Row r is in sg r.
constexpr const char *kRows = R"(
func @rows(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %y = gm_tensor : tensor<8x64xf32>
  %a0 = copy_in %x {offsets = [0, 0], sg = 0} : tile<1x64xf32, ub>
  %b0 = exp %a0 {sg = 0} : tile<1x64xf32, ub>
  %c0 = copy_out %b0, %y {offsets = [0, 0], sg = 0} : tile<1x64xf32, gm>
  %a1 = copy_in %x {offsets = [1, 0], sg = 1} : tile<1x64xf32, ub>
  %b1 = exp %a1 {sg = 1} : tile<1x64xf32, ub>
  %c1 = copy_out %b1, %y {offsets = [1, 0], sg = 1} : tile<1x64xf32, gm>
  %a2 = copy_in %x {offsets = [2, 0], sg = 2} : tile<2x64xf32, ub>
  %b2 = exp %a2 {sg = 2} : tile<2x64xf32, ub>
  %c2 = copy_out %b2, %y {offsets = [2, 0], sg = 2} : tile<2x64xf32, gm>
  %a3 = copy_in %x {offsets = [4, 0], sg = 3} : tile<2x64xf32, ub>
  %b3 = neg %a3 {sg = 3} : tile<2x64xf32, ub>
  %c3 = copy_out %b3, %y {offsets = [4, 0], sg = 3} : tile<2x64xf32, gm>
  return %y
}
)";

// A function of `n` AIV subgraphs; subgraph i reads row i of the input, adds row d
// of %w for each d in deps[i] (all < i; each read waits on the write of that row)
// and writes row i of %w: 2 + 2 * deps[i].size() ops. Subgraph i is `sg = i`.
std::string dagText(const std::vector<std::vector<int>> &deps) {
  size_t n = deps.size();
  std::string s = "func @dag(%x: tensor<" + std::to_string(n) + "x8xf32>) -> tensor<" +
                  std::to_string(n) + "x8xf32> {\n  %w = gm_tensor : tensor<" +
                  std::to_string(n) + "x8xf32>\n";
  for (size_t i = 0; i < n; ++i) {
    std::string sg = std::to_string(i), attrs = "sg = " + sg;
    std::string acc = "%t" + sg;
    s += "  " + acc + " = copy_in %x {offsets = [" + sg + ", 0], " + attrs +
         "} : tile<1x8xf32, ub>\n";
    for (size_t k = 0; k < deps[i].size(); ++k) {
      std::string d = std::to_string(deps[i][k]), tag = sg + "_" + std::to_string(k);
      s += "  %r" + tag + " = copy_in %w, %o" + d + " {offsets = [" + d + ", 0], " + attrs +
           "} : tile<1x8xf32, ub>\n";
      s += "  %s" + tag + " = add " + acc + ", %r" + tag + " {" + attrs +
           "} : tile<1x8xf32, ub>\n";
      acc = "%s" + tag;
    }
    s += "  %o" + sg + " = copy_out " + acc + ", %w {offsets = [" + sg + ", 0], " + attrs +
         "} : tile<1x8xf32, gm>\n";
  }
  return s + "  return %w\n}\n";
}

/// The number of ops dagText(deps) makes.
size_t dagOps(const std::vector<std::vector<int>> &deps) {
  size_t ops = 0;
  for (const std::vector<int> &d : deps) ops += 2 + 2 * d.size();
  return ops;
}

// Brute force: whether merging a and b creates a cycle (a path between them through
// a third subgraph), from the graph's own producer/consumer lists.
bool bruteForceCycle(const SubgraphGraph &g, int64_t a, int64_t b, size_t n) {
  auto reaches = [&](int64_t from, int64_t to) {
    // Is there a path from -> x -> ... -> to with x != to (length >= 2)?
    std::vector<char> seen(n, 0);
    std::vector<int64_t> stack;
    for (int64_t c : g.consumers(from))
      if (c != to && !seen[c]) seen[c] = 1, stack.push_back(c);
    while (!stack.empty()) {
      int64_t x = stack.back();
      stack.pop_back();
      for (int64_t c : g.consumers(x)) {
        if (c == to) return true;
        if (!seen[c]) seen[c] = 1, stack.push_back(c);
      }
    }
    return false;
  };
  return reaches(a, b) || reaches(b, a);
}

} // namespace

TEST_CASE("hashOrderKey names a group func<F>_<order>", "[partition]") {
  CHECK(hashOrderKey(0, 3) == "func0_3");
  CHECK(hashOrderKey(2, 0) == "func2_0");
}

TEST_CASE("structuralHash ignores offsets but not ops or shapes", "[partition]") {
  Parsed p(kRows);
  std::vector<ir::Operation *> ops = p.tileOps();
  llvm::ArrayRef<ir::Operation *> all(ops);
  uint64_t row0 = structuralHash(all.slice(0, 3)), row1 = structuralHash(all.slice(3, 3));
  uint64_t row2 = structuralHash(all.slice(6, 3)), row3 = structuralHash(all.slice(9, 3));
  CHECK(row0 == row1);    // same ops, tiles at different offsets
  CHECK(row0 != row2);    // another tile shape
  CHECK(row2 != row3);    // another op (exp vs neg)
  CHECK(row0 == structuralHash(all.slice(0, 3))); // stable
  CHECK(structuralHash(all.slice(0, 2)) != row0); // a subset
}

TEST_CASE("structuralHash sees the graph, not the op order or the tokens", "[partition]") {
  // Two rows, each: two copy_ins, an add, a copy_out. Row 1 emits its copy_ins in
  // the other order and waits on a token; row 2 reads one copy_in twice.
  Parsed p(R"(
func @f(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y = gm_tensor : tensor<4x8xf32>
  %a0 = copy_in %x {offsets = [0, 0]} : tile<1x8xf32, ub>
  %b0 = copy_in %x {offsets = [1, 0]} : tile<1x8xf32, ub>
  %s0 = add %a0, %b0 : tile<1x8xf32, ub>
  %t0 = copy_out %s0, %y {offsets = [0, 0]} : tile<1x8xf32, gm>
  %b1 = copy_in %y, %t0 {offsets = [0, 0]} : tile<1x8xf32, ub>
  %a1 = copy_in %x {offsets = [2, 0]} : tile<1x8xf32, ub>
  %s1 = add %a1, %b1 : tile<1x8xf32, ub>
  %t1 = copy_out %s1, %y {offsets = [2, 0]} : tile<1x8xf32, gm>
  %a2 = copy_in %x {offsets = [2, 0]} : tile<1x8xf32, ub>
  %s2 = add %a2, %a2 : tile<1x8xf32, ub>
  %t2 = copy_out %s2, %y {offsets = [3, 0]} : tile<1x8xf32, gm>
  return %y
}
)");
  std::vector<ir::Operation *> ops = p.tileOps();
  llvm::ArrayRef<ir::Operation *> all(ops);
  uint64_t row0 = structuralHash(all.slice(0, 4)), row1 = structuralHash(all.slice(4, 4));
  CHECK(row0 == row1);
  // One shared copy_in is not two identical ones.
  CHECK(structuralHash(all.slice(8, 3)) != row0);
  // Any order with definers first gives the same hash.
  std::vector<ir::Operation *> reordered{ops[5], ops[4], ops[6], ops[7]};
  CHECK(structuralHash(reordered) == row1);
}

TEST_CASE("structuralHash is a fixed function of the text", "[partition]") {
  // Stable across runs and platforms: the same text gives the same hash in two
  // independent contexts (no pointer or per-process salt enters it).
  Parsed a(kRows), b(kRows);
  CHECK(structuralHash(a.tileOps()) == structuralHash(b.tileOps()));
}

TEST_CASE("summarise numbers hash orders by first appearance in id order", "[partition]") {
  Parsed p(kRows);
  SubgraphGraph g = SubgraphGraph::fromFunc(p.func(), p.cost);
  REQUIRE(g.numLive() == 4);
  g.summarise();
  CHECK(g.find(0)->hashOrder == 0);
  CHECK(g.find(1)->hashOrder == 0);
  CHECK(g.find(2)->hashOrder == 1);
  CHECK(g.find(3)->hashOrder == 2);
  CHECK(g.find(0)->groupSize == 2);
  CHECK(g.find(3)->groupSize == 1);
  REQUIRE(g.groups().size() == 3);
  CHECK(g.groups()[0] == std::vector<int64_t>{0, 1});
  CHECK(g.find(0)->core == target::CoreKind::AIV);
  CHECK(g.find(0)->copyInBytes == 256);
  CHECK(g.find(2)->copyInBytes == 512);
  int64_t cycles = 0;
  for (ir::Operation *op : g.find(0)->ops) cycles += p.cost.opCycles(*op);
  CHECK(g.find(0)->cycles == cycles);
}

TEST_CASE("fromFunc renumbers ids densely in order of first op", "[partition]") {
  std::string text = kRows;
  // sg 0 <-> sg 3 swapped in the text: the graph still numbers by first op.
  for (size_t pos; (pos = text.find("sg = 0")) != std::string::npos;) text.replace(pos, 6, "sg = X");
  for (size_t pos; (pos = text.find("sg = 3")) != std::string::npos;) text.replace(pos, 6, "sg = 0");
  for (size_t pos; (pos = text.find("sg = X")) != std::string::npos;) text.replace(pos, 6, "sg = 3");
  Parsed p(text);
  SubgraphGraph g = SubgraphGraph::fromFunc(p.func(), p.cost);
  CHECK(g.find(0)->ops.front() == p.tileOps()[0]);
  CHECK(g.find(3)->ops.front() == p.tileOps()[9]);
}

TEST_CASE("mergeCreatesCycle finds paths through a third subgraph", "[partition]") {
  // 0 -> 1 -> 2, 0 -> 2, 3 independent, 4 <- 2.
  Parsed p(dagText({{}, {0}, {0, 1}, {}, {2}}));
  SubgraphGraph g = SubgraphGraph::fromFunc(p.func(), p.cost);
  REQUIRE(g.cycleMember() == -1);
  CHECK(g.producers(2) == llvm::ArrayRef<int64_t>({0, 1}));
  CHECK(g.consumers(0) == llvm::ArrayRef<int64_t>({1, 2}));
  CHECK(g.mergeCreatesCycle(0, 2));  // 0 -> 1 -> 2
  CHECK(g.mergeCreatesCycle(2, 0));
  CHECK(!g.mergeCreatesCycle(0, 1)); // only the direct edge
  CHECK(!g.mergeCreatesCycle(1, 2));
  CHECK(!g.mergeCreatesCycle(0, 3)); // unrelated
  CHECK(g.mergeCreatesCycle(0, 4));  // 0 -> 2 -> 4
  CHECK(!g.mergeCreatesCycle(3, 4));

  CHECK(!g.merge(0, 2)); // refused: nothing changes
  CHECK(g.numLive() == 5);
  REQUIRE(g.merge(1, 2)); // 0 -> {1,2} -> 4
  CHECK(g.numLive() == 4);
  CHECK(g.find(2) == nullptr);
  CHECK(g.resolve(2) == 1);
  CHECK(g.producers(1) == llvm::ArrayRef<int64_t>({0}));
  CHECK(g.consumers(1) == llvm::ArrayRef<int64_t>({4}));
  CHECK(g.consumers(0) == llvm::ArrayRef<int64_t>({1}));
  CHECK(!g.mergeCreatesCycle(0, 1));
  CHECK(g.mergeCreatesCycle(0, 4));
  REQUIRE(g.merge(3, 4)); // {3,4} now depends on {1,2}
  CHECK(g.mergeCreatesCycle(0, 3));
  CHECK(!g.mergeCreatesCycle(1, 3));
  REQUIRE(g.merge(0, 1));
  REQUIRE(g.merge(0, 3));
  CHECK(g.numLive() == 1);
  CHECK(g.find(0)->ops.size() == 18);
}

TEST_CASE("mergeCreatesCycle agrees with brute force under random merges", "[partition]") {
  std::mt19937 rng(12345);
  for (int trial = 0; trial < 20; ++trial) {
    size_t n = 30;
    std::vector<std::vector<int>> deps(n);
    for (size_t i = 1; i < n; ++i)
      for (size_t j = 0; j < i; ++j)
        if (rng() % 10 == 0) deps[i].push_back(int(j));
    Parsed p(dagText(deps));
    SubgraphGraph g = SubgraphGraph::fromFunc(p.func(), p.cost);
    for (int step = 0; step < 200 && g.numLive() > 1; ++step) {
      std::vector<Subgraph *> live = g.subgraphs();
      int64_t a = live[rng() % live.size()]->id, b = live[rng() % live.size()]->id;
      if (a == b) continue;
      bool expected = bruteForceCycle(g, a, b, n);
      REQUIRE(g.mergeCreatesCycle(a, b) == expected);
      if (!expected) REQUIRE(g.merge(a, b));
    }
    // The ops still form the function: every op is in exactly one live subgraph.
    size_t ops = 0;
    for (Subgraph *s : g.subgraphs()) ops += s->ops.size();
    CHECK(ops == dagOps(deps));
  }
}

TEST_CASE("a cycle check between far-apart subgraphs gives up safely", "[partition]") {
  // Two independent chains; 0 starts the first, the second's last subgraph is far
  // above it. No path joins them, but proving it means walking the first chain.
  size_t len = SubgraphGraph::kCycleSearchBudget + 100;
  std::vector<std::vector<int>> deps(2 * len);
  for (size_t i = 1; i < len; ++i) deps[i] = {int(i - 1)};
  for (size_t i = len + 1; i < 2 * len; ++i) deps[i] = {int(i - 1)};
  Parsed p(dagText(deps));
  SubgraphGraph g = SubgraphGraph::fromFunc(p.func(), p.cost);
  int64_t far = int64_t(2 * len - 1), near = int64_t(len + 10);
  CHECK(g.mergeCreatesCycle(0, far));
  CHECK(g.lastCycleCheckGaveUp());
  CHECK(cycleRefusalDetail(g).find("too far apart") != std::string::npos);
  CHECK(!g.merge(0, far));
  CHECK(g.lastCycleCheckGaveUp());
  // Close enough to search: no path, so no cycle.
  CHECK(!g.mergeCreatesCycle(0, near));
  CHECK(!g.lastCycleCheckGaveUp());
  CHECK(g.mergeCreatesCycle(0, 5)); // a real path
  CHECK(!g.lastCycleCheckGaveUp());
  CHECK(cycleRefusalDetail(g) == "a dependency path between them runs through another subgraph");
}

TEST_CASE("writeTable renumbers, rewrites sg and replaces the table", "[partition]") {
  Parsed p(kRows);
  SubgraphGraph g = SubgraphGraph::fromFunc(p.func(), p.cost);
  REQUIRE(g.merge(1, 0)); // ids 1 and 3 survive with 2
  REQUIRE(g.merge(3, 2));
  CHECK(g.writeTable());
  std::string text = p.print();
  INFO(text);
  // Two subgraphs at the start of the body, ids 0 and 1 in order of first op.
  CHECK(text.find("  subgraph {copy_in_bytes = 512, core = \"aiv\", cycles = ") !=
        std::string::npos);
  CHECK(text.find("hash_order = 0, id = 0}\n  subgraph {") != std::string::npos);
  CHECK(text.find("hash_order = 1, id = 1}\n  %y = gm_tensor") != std::string::npos);
  CHECK(text.find("sg = 2") == std::string::npos);
  CHECK(text.find("%c1 = copy_out %b1, %y {offsets = [1, 0], sg = 0}") != std::string::npos);
  CHECK(text.find("%a2 = copy_in %x {offsets = [2, 0], sg = 1}") != std::string::npos);
  REQUIRE(ptoc::succeeded(ir::verify(*p.module)));
  // The hash is 16 hex digits.
  size_t h = text.find("hash = \"");
  REQUIRE(h != std::string::npos);
  CHECK(text.substr(h + 8, 17).find('"') == 16);
  // Writing again changes nothing; a graph read back gives the same table.
  CHECK(!g.writeTable());
  SubgraphGraph again = SubgraphGraph::fromFunc(p.func(), p.cost);
  CHECK(!again.writeTable());
  CHECK(p.print() == text);
}

TEST_CASE("MergeLog counts verdicts, spends fuel and writes one line each", "[partition]") {
  std::string out;
  llvm::raw_string_ostream os(out);
  MergeLog log("partition", &os, /*fuel=*/2);
  CHECK(log.hasFuel());
  log.record(3, 7, MergeVerdict::RefusedCycleBound, "2100 > 1536 cycles");
  log.record(1, 2, MergeVerdict::Merged);
  CHECK(log.hasFuel());
  log.record(1, 4, MergeVerdict::Merged, "lock-step");
  CHECK(!log.hasFuel());
  log.record(1, 5, MergeVerdict::RefusedFuel);
  CHECK(log.count(MergeVerdict::Merged) == 2);
  CHECK(log.count(MergeVerdict::RefusedCycleBound) == 1);
  CHECK(log.count(MergeVerdict::RefusedFuel) == 1);
  CHECK(log.count(MergeVerdict::RefusedCycle) == 0);
  CHECK(os.str() == "partition: merge sg 3 <- sg 7: refused (cycle-bound): 2100 > 1536 cycles\n"
                    "partition: merge sg 1 <- sg 2: merged\n"
                    "partition: merge sg 1 <- sg 4: merged: lock-step\n"
                    "partition: merge sg 1 <- sg 5: refused (fuel)\n");
  MergeLog unlimited("x", nullptr, -1);
  for (int i = 0; i < 100; ++i) unlimited.record(0, i, MergeVerdict::Merged);
  CHECK(unlimited.hasFuel());
  MergeLog none("x", nullptr, 0);
  CHECK(!none.hasFuel());
}

TEST_CASE("mergeVerdictName spells every verdict", "[partition]") {
  CHECK(mergeVerdictName(MergeVerdict::Merged) == "merged");
  CHECK(mergeVerdictName(MergeVerdict::RefusedParallelism) == "parallelism-floor");
  CHECK(mergeVerdictName(MergeVerdict::RefusedCopyInCap) == "copy-in-cap");
  CHECK(mergeVerdictName(MergeVerdict::RefusedL1Capacity) == "l1-capacity");
  CHECK(mergeVerdictName(MergeVerdict::RefusedScope) == "scope");
  CHECK(mergeVerdictName(MergeVerdict::RefusedCycleBound) == "cycle-bound");
  CHECK(mergeVerdictName(MergeVerdict::RefusedCycle) == "would-create-cycle");
  CHECK(mergeVerdictName(MergeVerdict::RefusedCoreKind) == "core-kind");
  CHECK(mergeVerdictName(MergeVerdict::RefusedFuel) == "fuel");
}

TEST_CASE("automatic NBuffer count keeps at least C subgraphs", "[partition]") {
  struct Row {
    int64_t s, c, n;
  };
  // S <= C: no merge; else start at ceil(S/C), decrease while ceil(S/N) < C.
  for (Row r : {Row{1, 48, 1}, Row{48, 48, 1}, Row{49, 48, 1}, Row{95, 48, 2},
                Row{96, 48, 2}, Row{100, 48, 2}, Row{144, 48, 3}, Row{200, 48, 4},
                Row{256, 48, 5}, Row{1000, 48, 21}, Row{8, 2, 4}, Row{9, 2, 5},
                Row{16, 4, 4}, Row{17, 4, 5}, Row{20, 4, 5}, Row{5, 0, 1}}) {
    INFO("S = " << r.s << ", C = " << r.c);
    CHECK(automaticNBuffer(r.s, r.c) == r.n);
  }
}

TEST_CASE("pipelined merge count: sqrt of members per core x hidden / steady, within one wave",
          "[partition]") {
  // S = 8192 softmax rows on 48 cores (170.7 per core), 2.1 us hidden of 3.67 steady:
  // sqrt(170.7 x 0.572) = 9.9 -> 10, where one wave would be 171.
  CHECK(pipelinedNBuffer(8192, 48, 2100, 3670) == 10);
  CHECK(automaticNBuffer(8192, 48) == 171);
  // Clamped to one wave when hiding is worth more than the fill.
  CHECK(pipelinedNBuffer(64, 4, 100000, 1) == automaticNBuffer(64, 4));
  // Nothing hidden, or a group within one wave: no merge.
  CHECK(pipelinedNBuffer(8192, 48, 0, 3670) == 1);
  CHECK(pipelinedNBuffer(40, 48, 2100, 3670) == 1);
  // A member with no steady cost (nothing to fill): one wave.
  CHECK(pipelinedNBuffer(64, 4, 10, 0) == 16);
  // Rounds up: sqrt(16 x 323 / 103) = 7.08 -> 8 (test/passes/nbuffer-merge-pipelined.pto).
  CHECK(pipelinedNBuffer(64, 4, 323, 103) == 8);
}

TEST_CASE("loop-body merge count: the control thread builds an iteration within its work",
          "[partition]") {
  auto tiny = target::DeviceSpec::preset("tiny");
  REQUIRE(tiny.ok());
  using target::CoreKind;
  // test/passes/nbuffer-merge-loop-body.pto: 16 matmul tiles of 478 cycles (2 AIC
  // cores: 3824 per iteration), 16 relu tiles of 103. 200 + 390 x tasks <= 3824 allows
  // 9 tasks; the least task length giving at most 9 is 957 (n 3 and 10: 6 + 2 tasks);
  // 2 tasks of 8 relus rather than 10 + 6.
  std::vector<BodyGroup> body = {{CoreKind::AIC, 16, 478}, {CoreKind::AIV, 16, 103}};
  int64_t tau = controlThreadTaskCycles(body, *tiny);
  CHECK(tau == 957);
  CHECK(controlThreadNBuffer(tau, 16, 478) == 3);
  CHECK(controlThreadNBuffer(tau, 16, 103) == 8);
  CHECK(controlThreadNBuffer(13 * 100, 32, 100) == 11);
  // One cycle less: N 2 and 10 (8 + 2 = 10 tasks, 4100 cycles of the control thread).
  CHECK(controlThreadNBuffer(tau - 1, 16, 478) == 2);
  // Work enough for the unmerged tasks: no floor (a cube-heavy body, as MoE experts').
  std::vector<BodyGroup> heavy = {{CoreKind::AIC, 16, 181832}, {CoreKind::AIV, 32, 2176}};
  CHECK(controlThreadTaskCycles(heavy, *tiny) == 0);
  CHECK(controlThreadNBuffer(0, 32, 2176) == 1);
  // Not even one task per group fits: every group whole (the longest group's cycles).
  std::vector<BodyGroup> tiny_work = {{CoreKind::AIV, 4, 10}, {CoreKind::AIV, 8, 5}};
  CHECK(controlThreadTaskCycles(tiny_work, *tiny) == 40);
  CHECK(controlThreadNBuffer(40, 4, 10) == 4);
  CHECK(controlThreadNBuffer(40, 8, 5) == 8);
  // The count never exceeds the group.
  CHECK(controlThreadNBuffer(1000000, 7, 3) == 7);
  // The rule reads the device: with free task building, nothing merges.
  target::DeviceSpec free = *tiny;
  free.scheduler.controlTaskCycles = 0;
  free.scheduler.controlIterationCycles = 0;
  CHECK(controlThreadTaskCycles(body, free) == 0);
}

TEST_CASE("merge count: func<F>_<order> beats the hash order, which beats -1, which beats "
          "automatic, and mode 0 is off",
          "[partition]") {
  // One rule for every merge pass's mode and setting knobs (nbuffer, cube nbuffer, L1
  // reuse); only the automatic count differs.
  GroupSetting setting{{0, 4}, {-1, 2}};
  int64_t automatic = automaticNBuffer(100, 4);
  CHECK(chooseMergeCount(0, setting, 0, 0, automatic).n == 1);
  CHECK(chooseMergeCount(0, setting, 0, 0, automatic).source == CountSource::Off);
  CHECK(chooseMergeCount(1, setting, 0, 0, automatic).n == automatic); // the setting is ignored
  CHECK(chooseMergeCount(1, setting, 0, 0, automatic).source == CountSource::Automatic);
  CHECK(chooseMergeCount(2, setting, 0, 0, automatic).n == 4);
  CHECK(chooseMergeCount(2, setting, 0, 0, automatic).source == CountSource::SettingKey);
  CHECK(chooseMergeCount(2, setting, 0, 5, automatic).n == 2);
  CHECK(chooseMergeCount(2, setting, 0, 5, automatic).source == CountSource::SettingDefault);
  CHECK(chooseMergeCount(2, GroupSetting{{0, 4}}, 0, 5, automatic).source ==
        CountSource::Automatic);
  CHECK(chooseMergeCount(2, GroupSetting{{0, 4}}, 0, 5, automatic).n == automatic);
  CHECK(countSourceName(CountSource::SettingDefault) == "setting default -1");
  // A plain key applies in every root function; a func<F>_<order> key in F only, and wins.
  setting[GroupKey::inFunc(2, 0)] = 8;
  for (unsigned f : {0u, 1u, 3u}) CHECK(chooseMergeCount(2, setting, f, 0, automatic).n == 4);
  MergeCount own = chooseMergeCount(2, setting, 2, 0, automatic);
  CHECK(own.n == 8);
  CHECK(own.source == CountSource::SettingKey);
  CHECK(own.key == GroupKey::inFunc(2, 0));
  CHECK(chooseMergeCount(2, setting, 2, 1, automatic).n == 2); // F 2's group 1: the default
}

TEST_CASE("automatic partition upper bound follows total latency", "[partition]") {
  CHECK(automaticUpperBound(0) == 1536);
  CHECK(automaticUpperBound(49'999) == 1536);
  CHECK(automaticUpperBound(50'000) == 10'000);
  CHECK(automaticUpperBound(289'999) == 10'000);
  CHECK(automaticUpperBound(290'000) == 150'000);
  CHECK(automaticUpperBound(9'999'999) == 150'000);
  CHECK(automaticUpperBound(10'000'000) == 5'000'000);
}

namespace {

// A random tile-level function: `n` chains of one to three vector ops on 1x8
// tiles, each reading the input or (through GM, waiting on its token) an earlier
// chain's output, sometimes adding a second earlier output, some in an sg_scope of
// their own.
std::string randomTileFunc(std::mt19937 &rng, int n) {
  std::string s = "func @r(%x: tensor<" + std::to_string(n) + "x8xf32>) -> tensor<" +
                  std::to_string(n) + "x8xf32> {\n  %w = gm_tensor : tensor<" +
                  std::to_string(n) + "x8xf32>\n";
  const char *unary[] = {"exp", "neg", "abs"};
  for (int i = 0; i < n; ++i) {
    std::string r = std::to_string(i);
    std::string scope = rng() % 8 == 0 ? ", sg_scope = " + std::to_string(100 + i) : "";
    std::string scopeOnly = scope.empty() ? "" : " {" + scope.substr(2) + "}";
    int src = i > 0 && rng() % 2 ? int(rng() % i) : -1;
    int other = i > 1 && rng() % 3 == 0 ? int(rng() % i) : -1;
    if (other == src) other = -1;
    // A read of row `row` of %w waits on the write of that row.
    auto read = [&](const std::string &name, int row) {
      return "  " + name + " = copy_in %w, %o" + std::to_string(row) + " {offsets = [" +
             std::to_string(row) + ", 0]" + scope + "} : tile<1x8xf32, ub>\n";
    };
    std::string first = other >= 0 ? "%t" + r + "_a" : "%t" + r + "_0";
    s += src >= 0 ? read(first, src)
                  : "  " + first + " = copy_in %x {offsets = [" + r + ", 0]" + scope +
                        "} : tile<1x8xf32, ub>\n";
    if (other >= 0) {
      s += read("%t" + r + "_b", other);
      s += "  %t" + r + "_0 = add %t" + r + "_a, %t" + r + "_b" + scopeOnly +
           " : tile<1x8xf32, ub>\n";
    }
    int len = 1 + int(rng() % 3);
    for (int k = 1; k <= len; ++k)
      s += "  %t" + r + "_" + std::to_string(k) + " = " + unary[rng() % 3] + " %t" + r + "_" +
           std::to_string(k - 1) + scopeOnly + " : tile<1x8xf32, ub>\n";
    s += "  %o" + r + " = copy_out %t" + r + "_" + std::to_string(len) + ", %w {offsets = [" +
         r + ", 0]" + scope + "} : tile<1x8xf32, gm>\n";
  }
  return s + "  return %w\n}\n";
}

} // namespace

TEST_CASE("partition and the NBuffer merges keep random graphs schedulable", "[partition]") {
  std::mt19937 rng(777);
  auto device = target::DeviceSpec::preset("tiny");
  REQUIRE(device.ok());
  uint64_t merged[2] = {0, 0}, cycleRefusals = 0;
  for (int trial = 0; trial < 30; ++trial) {
    Parsed p(randomTileFunc(rng, 12 + int(rng() % 30)));
    PartitionOptions po;
    po.skipPartition = trial % 5 == 4;
    po.lowerBound = std::vector<int64_t>{100, 512, 5000}[rng() % 3];
    po.upperBound = std::vector<int64_t>{0, 400, 100000}[rng() % 3];
    po.parallelLowerBound = std::vector<int64_t>{1, 20}[rng() % 2];
    NBufferMergeOptions no;
    no.mode = 1 + int(rng() % 2);
    no.setting = {{-1, 1 + int64_t(rng() % 4)}};
    no.parallelLowerBound = 1 + int64_t(rng() % 3);
    INFO("trial " << trial);
    std::vector<std::unique_ptr<Pass>> passes;
    passes.push_back(createPartitionPass(po));
    passes.push_back(createNBufferMergePass(no));
    for (std::unique_ptr<Pass> &pass : passes) {
      PassContext ctx{*device, nullptr, {}};
      REQUIRE(!pass->run(*p.module, ctx).failed());
      for (const PassStatistic *st : pass->statistics()) {
        if (std::string(st->name()) == "merged") merged[&pass == &passes[1]] += st->value();
        if (std::string(st->name()) == "refused-would-create-cycle") cycleRefusals += st->value();
      }
      REQUIRE(ptoc::succeeded(ir::verify(*p.module)));
      SubgraphGraph g = SubgraphGraph::fromFunc(p.func(), p.cost);
      REQUIRE(g.cycleMember() == -1);
      // Every tile op is in exactly one subgraph; a scope is one subgraph of its own.
      size_t ops = 0;
      std::map<int64_t, std::set<int64_t>> sgOfScope, scopesOfSg;
      for (Subgraph *s : g.subgraphs()) {
        ops += s->ops.size();
        for (ir::Operation *op : s->ops)
          if (ir::Attribute scope = op->attr("sg_scope")) {
            sgOfScope[scope.getInt()].insert(s->id);
            scopesOfSg[s->id].insert(scope.getInt());
          }
      }
      CHECK(ops == p.tileOps().size());
      for (auto &[scope, sgs] : sgOfScope) CHECK(sgs.size() == 1);
      for (auto &[sg, scopes] : scopesOfSg) {
        CHECK(scopes.size() == 1);
        size_t scoped = 0;
        for (ir::Operation *op : g.find(sg)->ops) scoped += bool(op->attr("sg_scope"));
        CHECK(scoped == g.find(sg)->ops.size());
      }
    }
  }
  // The trials exercise merging in both passes, and the cycle check.
  INFO("partition merges " << merged[0] << ", nbuffer merges " << merged[1]
                           << ", cycle refusals " << cycleRefusals);
  CHECK(merged[0] > 100);
  CHECK(merged[1] > 10);
  CHECK(cycleRefusals > 0);
}
