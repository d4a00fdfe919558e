// Partition throughput: expand-tiles, partition, nbuffer-merge and
// cube-nbuffer-merge on tile graphs of about 100k and 1M tile ops, with the goal
// that the passes together run at >= 500k tile ops/s at 1M ops and grow about
// linearly (1M/100k time ratio <= 12).
//
// Build and run:
//   ninja -C build bench_partition_throughput && build/benchmarks/bench_partition_throughput
//   build/benchmarks/bench_partition_throughput --sizes=100000   (fewer sizes)
//   build/benchmarks/bench_partition_throughput --reps=3         (best of 3)
//   build/benchmarks/bench_partition_throughput --workloads=rows,chain
//
// Three workloads, each a tensor-level function parsed from text, then expanded:
//   rows     row softmax, one 1x64 tile per row (7 tile ops a row); partition
//            finds one subgraph per row and merges nothing; nbuffer-merge in
//            automatic mode folds the rows down to about 48 per group.
//   chain    four elementwise ops on 1x8 tiles with fuse-local=false, so every
//            op is its own small subgraph (copy_in, op, copy_out): partition
//            merges them back into rows in lock-step (heavy merging).
//   matmul   C = relu(A x B) with 32x32 cube tiles: AIC subgraphs (K loop) and
//            AIV epilogues; cube-nbuffer-merge in automatic mode.
// Times are thread CPU time (immune to other processes on the machine), the best
// of `--reps` repetitions, each on a freshly parsed module. The verifier is not
// run between passes (ptoc-opt runs it by default; that cost is the verifier's).
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "llvm/ADT/StringRef.h"

#include "ptoc/ir/Context.h"
#include "ptoc/ir/Module.h"
#include "ptoc/ir/Parser.h"
#include "ptoc/passes/Pass.h"
#include "ptoc/passes/PassManager.h"
#include "ptoc/passes/Passes.h"
#include "ptoc/target/DeviceSpec.h"

using namespace ptoc;

namespace {

constexpr double kGoalOpsPerSec = 500'000;
constexpr double kGoalRatio = 12.0;

[[noreturn]] void die(const std::string &msg) {
  std::fprintf(stderr, "bench_partition_throughput: %s\n", msg.c_str());
  std::exit(1);
}

double cpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

struct Workload {
  const char *name;
  /// Tensor-level text for about `tileOps` tile ops.
  std::string (*text)(int64_t tileOps);
  /// The passes after expand-tiles, as a pipeline.
  const char *pipeline;
  const char *expand;
};

std::string rowsText(int64_t tileOps) {
  int64_t r = std::max<int64_t>(1, tileOps / 7);
  std::string t = "tensor<" + std::to_string(r) + "x64xf32>";
  std::string c = "tensor<" + std::to_string(r) + "x1xf32>";
  return "func @softmax(%x: " + t + ") -> " + t + " {\n" +
         "  %m = amax %x {axes = [1], keepdim = true, vec_tile = [1, 64]} : " + c + "\n" +
         "  %s = sub %x, %m {vec_tile = [1, 64]} : " + t + "\n" +
         "  %e = exp %s {vec_tile = [1, 64]} : " + t + "\n" +
         "  %u = sum %e {axes = [1], keepdim = true, vec_tile = [1, 64]} : " + c + "\n" +
         "  %y = div %e, %u {vec_tile = [1, 64]} : " + t + "\n  return %y\n}\n";
}

std::string chainText(int64_t tileOps) {
  int64_t r = std::max<int64_t>(1, tileOps / 12);
  std::string t = "tensor<" + std::to_string(r) + "x8xf32>";
  return "func @chain(%x: " + t + ") -> " + t + " {\n" +
         "  %a = exp %x {vec_tile = [1, 8]} : " + t + "\n" +
         "  %b = neg %a {vec_tile = [1, 8]} : " + t + "\n" +
         "  %c = abs %b {vec_tile = [1, 8]} : " + t + "\n" +
         "  %d = relu %c {vec_tile = [1, 8]} : " + t + "\n  return %d\n}\n";
}

std::string matmulText(int64_t tileOps) {
  // Per 32x32 output tile with K = 64 in two kL1 = 32 steps: 2 x (2 copy_in +
  // matmul) + copy_out = 7 cube ops, then copy_in + relu + copy_out = 3 vector ops.
  int64_t tiles = std::max<int64_t>(1, tileOps / 10);
  int64_t side = 1;
  while (side * side < tiles) ++side;
  std::string m = std::to_string(32 * side);
  return "func @mm(%a: tensor<" + m + "x64xf16>, %b: tensor<64x" + m +
         "xf16>) -> tensor<" + m + "x" + m + "xf32> {\n" +
         "  %c = matmul %a, %b {cube_tile = {m = [32, 32], k = [32, 32], n = [32, 32]}} : "
         "tensor<" + m + "x" + m + "xf32>\n" +
         "  %y = relu %c {vec_tile = [32, 32]} : tensor<" + m + "x" + m + "xf32>\n" +
         "  return %y\n}\n";
}

const Workload kWorkloads[] = {
    {"rows", rowsText, "partition,nbuffer-merge{vec-nbuffer-mode=1}", "expand-tiles"},
    {"chain", chainText, "partition,nbuffer-merge{vec-nbuffer-mode=1}",
     "expand-tiles{fuse-local=false}"},
    {"matmul", matmulText,
     "partition,nbuffer-merge{vec-nbuffer-mode=1},cube-nbuffer-merge{cube-nbuffer-mode=1}",
     "expand-tiles"},
};

size_t countTileOps(const ir::Module &m) {
  size_t n = 0;
  for (ir::Func &f : m.funcs())
    for (const ir::Operation &op : f.ops()) n += op.isTileOp();
  return n;
}

struct Run {
  size_t tileOps = 0;
  double expand = 0, passes = 0;
  std::vector<std::pair<std::string, double>> perPass;
};

Run runOnce(const Workload &w, int64_t size, const target::DeviceSpec &device,
            const passes::PassRegistry &registry) {
  ir::Context ctx;
  std::string text = w.text(size);
  std::unique_ptr<ir::Module> m = ir::parseModule(text, w.name, ctx);
  if (!m) die(std::string("cannot parse workload ") + w.name);
  Run run;
  passes::PassManagerOptions options;
  options.verifyEach = false;
  options.timing = true;
  {
    passes::PassManager pm(device, options);
    if (!pm.addPipeline(w.expand, registry).ok()) die("bad pipeline");
    double t0 = cpuSeconds();
    if (failed(pm.run(*m))) die(std::string("expand-tiles failed on ") + w.name);
    run.expand = cpuSeconds() - t0;
  }
  run.tileOps = countTileOps(*m);
  passes::PassManager pm(device, options);
  if (!pm.addPipeline(w.pipeline, registry).ok()) die("bad pipeline");
  double t0 = cpuSeconds();
  if (failed(pm.run(*m))) die(std::string("the passes failed on ") + w.name);
  run.passes = cpuSeconds() - t0;
  for (const passes::PassTiming &t : pm.timings()) run.perPass.push_back({t.pass, t.seconds});
  return run;
}

} // namespace

int main(int argc, char **argv) {
  std::vector<int64_t> sizes = {100'000, 1'000'000};
  int reps = 1;
  std::string only;
  for (int i = 1; i < argc; ++i) {
    llvm::StringRef a(argv[i]);
    if (a.consume_front("--sizes=")) {
      sizes.clear();
      llvm::SmallVector<llvm::StringRef, 4> parts;
      a.split(parts, ',');
      for (llvm::StringRef p : parts) sizes.push_back(std::atoll(p.str().c_str()));
    } else if (a.consume_front("--workloads=")) {
      only = "," + a.str() + ",";
    } else if (a.consume_front("--reps=")) {
      reps = std::max(1, std::atoi(a.str().c_str()));
    } else {
      die("unknown argument " + a.str() + " (--sizes=a,b --reps=n --workloads=rows,chain)");
    }
  }
  target::DeviceSpec device;
  passes::PassRegistry registry;
  passes::registerAllPasses(registry);
  bool ok = true;
  for (const Workload &w : kWorkloads) {
    if (!only.empty() && only.find("," + std::string(w.name) + ",") == std::string::npos)
      continue;
    std::vector<double> totals;
    std::vector<size_t> opCounts;
    for (int64_t size : sizes) {
      Run best;
      double bestTotal = std::numeric_limits<double>::infinity();
      for (int r = 0; r < reps; ++r) {
        Run run = runOnce(w, size, device, registry);
        if (run.expand + run.passes < bestTotal) {
          bestTotal = run.expand + run.passes;
          best = run;
        }
      }
      std::printf("%-7s %8zu tile ops: expand %.3f s, passes %.3f s (", w.name, best.tileOps,
                  best.expand, best.passes);
      for (size_t i = 0; i < best.perPass.size(); ++i)
        std::printf("%s%s %.3f", i ? ", " : "", best.perPass[i].first.c_str(),
                    best.perPass[i].second);
      std::printf("), %.0f tile ops/s end to end\n", double(best.tileOps) / bestTotal);
      totals.push_back(bestTotal);
      opCounts.push_back(best.tileOps);
    }
    if (totals.size() >= 2) {
      double ratio = totals.back() / totals.front();
      double rate = double(opCounts.back()) / totals.back();
      bool pass = rate >= kGoalOpsPerSec && ratio <= kGoalRatio;
      std::printf("%-7s time(%zu)/time(%zu) = %.1f (goal <= %.0f), %.0f ops/s (goal >= %.0f): %s\n",
                  w.name, opCounts.back(), opCounts.front(), ratio, kGoalRatio, rate,
                  kGoalOpsPerSec, pass ? "ok" : "BELOW GOAL");
      ok &= pass;
    }
  }
  return ok ? 0 : 1;
}
