// Tiling and partitioning throughput: expand-tiles, partition and the merge passes
// on generated graphs that expand to about 10k, 100k and 1M tile ops. Prints tile
// ops/s per stage and end to end, and peak memory. Goals (issue "Tiling and the
// partition/merge pipeline"): >= 500k tile ops/s end to end at 1M tile ops, and
// time(1M)/time(100k) <= 12.
//
// Build and run:
//   ninja -C build bench_passes_throughput && build/benchmarks/bench_passes_throughput
//   build/benchmarks/bench_passes_throughput --sizes=10000,100000   (fewer sizes)
//
// Each graph repeats a transformer-like layer: cast to f16, a matmul with a cube
// tile (K loop of several steps), then a row softmax on vector tiles. The number of
// layers is chosen from a one-layer probe so the expanded function has about the
// requested number of tile ops. The pipeline is the one a user gets with every merge
// pass in automatic mode. Stage times come from the pass manager's timing; the
// verifier runs once at the end, outside the timed region, and must pass.
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "llvm/ADT/StringRef.h"

#include "ptoc/ir/Context.h"
#include "ptoc/ir/GraphBuilder.h"
#include "ptoc/ir/Module.h"
#include "ptoc/ir/Verifier.h"
#include "ptoc/passes/PassManager.h"
#include "ptoc/passes/Passes.h"
#include "ptoc/target/DeviceSpec.h"

using namespace ptoc;

namespace {

constexpr double kGoalTileOpsPerSec = 500e3;
constexpr double kGoalRatio = 12.0;
constexpr const char *kPipeline =
    "expand-tiles,partition,nbuffer-merge{vec-nbuffer-mode=1},"
    "cube-nbuffer-merge{cube-nbuffer-mode=1},l1-reuse-merge{cube-l1-reuse-mode=1}";

constexpr int64_t kRows = 256;
constexpr int64_t kHidden = 512;

[[noreturn]] void die(const std::string &msg) {
  std::fprintf(stderr, "bench_passes_throughput: %s\n", msg.c_str());
  std::exit(1);
}

template <typename T> T must(absl::StatusOr<T> v) {
  if (!v.ok()) die(std::string(v.status().message()));
  return *v;
}

double peakRssMB() {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss / 1024.0;
}

/// A function of `layers` layers: x = softmax(cast(x, f16) @ w) per layer.
void buildGraph(ir::Module &m, int64_t layers) {
  ir::Context &ctx = m.context();
  ir::GraphBuilder b(m);
  auto x0 = ctx.tensorType(ir::DType::F32, {kRows, kHidden});
  auto w = ctx.tensorType(ir::DType::F16, {kHidden, kHidden});
  must(b.beginFunc("layers", {x0, w}, {"x", "w"}));
  b.setVecTile({4, kHidden});
  b.setCubeTile(ir::CubeTile{{64, 64}, {64, 128}, {128, 128}});
  ir::Value *x = b.arg(0);
  for (int64_t l = 0; l < layers; ++l) {
    ir::Value *h = must(b.cast(x, ir::DType::F16));
    ir::Value *s = must(b.matmul(h, b.arg(1)));
    ir::Value *mx = must(b.reduce(ir::OpCode::Amax, s, {1}, true));
    ir::Value *e = must(b.unary(ir::OpCode::Exp, must(b.binary(ir::OpCode::Sub, s, mx))));
    ir::Value *sum = must(b.reduce(ir::OpCode::Sum, e, {1}, true));
    x = must(b.binary(ir::OpCode::Div, e, sum));
  }
  if (!b.endFunc({x}).ok()) die("endFunc failed");
}

struct Result {
  size_t tileOps = 0;
  size_t subgraphs = 0;
  std::vector<passes::PassTiming> timings;
  double total = 0;
  double rssMB = 0;
};

Result run(int64_t layers, const target::DeviceSpec &device,
           const passes::PassRegistry &registry) {
  ir::Context ctx;
  ir::Module m(ctx);
  buildGraph(m, layers);
  passes::PassManagerOptions opts;
  opts.verifyEach = false; // measured: the passes; the verifier runs once below
  opts.timing = true;
  passes::PassManager pm(device, opts);
  if (!pm.addPipeline(kPipeline, registry).ok()) die("bad pipeline");
  ir::DiagnosticCollector diags(ctx.diag());
  if (failed(pm.run(m))) die("pipeline failed: " + diags.errorText());
  Result r;
  r.timings = pm.timings();
  for (const auto &t : r.timings) r.total += t.seconds;
  for (const ir::Operation &op : m.func(0).ops()) {
    r.tileOps += op.isTileOp();
    r.subgraphs += op.code() == ir::OpCode::Subgraph;
  }
  if (failed(ir::verify(m, ir::VerifyOptions{&device})))
    die("the pipeline's output does not verify: " + diags.errorText());
  r.rssMB = peakRssMB();
  return r;
}

std::vector<int64_t> parseSizes(int argc, char **argv) {
  std::vector<int64_t> sizes = {10000, 100000, 1000000};
  for (int i = 1; i < argc; ++i) {
    llvm::StringRef a(argv[i]);
    if (!a.consume_front("--sizes=")) die("unknown argument '" + a.str() + "' (--sizes=N,M)");
    sizes.clear();
    while (!a.empty()) {
      auto [head, rest] = a.split(',');
      int64_t n;
      if (head.getAsInteger(10, n) || n <= 0) die("bad size '" + head.str() + "'");
      sizes.push_back(n);
      a = rest;
    }
  }
  return sizes;
}

} // namespace

int main(int argc, char **argv) {
  std::vector<int64_t> sizes = parseSizes(argc, argv);
  auto device = must(target::DeviceSpec::preset("a2"));
  passes::PassRegistry registry;
  passes::registerAllPasses(registry);

  // Tile ops per layer, from a two-layer probe (the first layer differs a little).
  Result probe1 = run(1, device, registry), probe2 = run(2, device, registry);
  double perLayer = double(probe2.tileOps - probe1.tileOps);

  std::printf("pipeline: %s\n", kPipeline);
  std::printf("%-9s %-10s %-10s %12s %12s %12s %12s %12s %12s %10s\n", "target", "tile_ops",
              "subgraphs", "expand/s", "partition/s", "nbuffer/s", "cube_nbuf/s",
              "l1_reuse/s", "end2end/s", "peak_MB");
  double time100k = 0, time1M = 0, rate1M = 0;
  for (int64_t target : sizes) {
    int64_t layers = std::max<int64_t>(1, int64_t(double(target) / perLayer + 0.5));
    Result r = run(layers, device, registry);
    std::printf("%-9lld %-10zu %-10zu", (long long)target, r.tileOps, r.subgraphs);
    for (const auto &t : r.timings)
      std::printf(" %11.2fM", double(r.tileOps) / std::max(t.seconds, 1e-9) / 1e6);
    double rate = double(r.tileOps) / r.total;
    std::printf(" %11.2fM %10.0f\n", rate / 1e6, r.rssMB);
    if (target == 100000) time100k = r.total / double(r.tileOps) * 1e5;
    if (target == 1000000) {
      time1M = r.total / double(r.tileOps) * 1e6;
      rate1M = rate;
    }
  }
  std::printf("(rates in tile ops per second; per-stage rates divide all tile ops by that "
              "stage's time)\n");
  if (time100k > 0 && time1M > 0)
    std::printf("time ratio 1M/100k (normalised to exactly 1M and 100k tile ops): %.1f "
                "(goal <= %.0f)\n",
                time1M / time100k, kGoalRatio);
  if (rate1M > 0)
    std::printf("end to end at 1M: %.2fM tile ops/s (goal >= %.1fM)\n", rate1M / 1e6,
                kGoalTileOpsPerSec / 1e6);
  return 0;
}
