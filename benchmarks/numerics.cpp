// Numeric executor throughput against plain host baselines, same thread count:
//  (a) fp32 matmul 2048x2048x2048 through ptoc (pipeline + codegen + execute of the
//      cube tiles) vs one Eigen GEMM (Eigen::setNbThreads(N)). Goal: ratio <= 1.5.
//  (b) row softmax 4096x4096 fp32 through ptoc (fused: each row band stays in one
//      task's buffers) vs a straightforward unfused whole-tensor implementation that
//      makes five passes (row max, subtract, exp, row sum, divide), each
//      materialising a freshly allocated full temporary (as numpy would), rows split
//      over N threads. Goal: ratio <= 1.0.
// Only execute() is timed (median of --repeats runs); compile time (parse, pipeline,
// codegen) is reported separately. Each ptoc result is checked against its baseline.
//
// Build and run:
//   ninja -C build bench_numerics && build/benchmarks/bench_numerics
//   build/benchmarks/bench_numerics --threads=2 --repeats=5 --only=matmul|softmax
//   build/benchmarks/bench_numerics --pipeline='...'     (default: the default pipeline)
//
// Known problem: with the default pipeline the softmax does not compile yet.
// Automatic nbuffer-merge puts dozens of row bands into one AIV subgraph, whose ops
// are in body order (every member's copy_in first), so codegen needs all their
// input tiles in UB at once. Until that is fixed, cap the merge:
//   --pipeline='canonicalize,cse,dce,expand-tiles,partition,
//               nbuffer-merge{vec-nbuffer-mode=2 vec-nbuffer-setting={-1:2}},
//               l1-reuse-merge{cube-l1-reuse-mode=1}'      (one line, no spaces)
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <Eigen/Core>

#include "absl/status/statusor.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/ThreadPool.h"

#include "ptoc/codegen/Codegen.h"
#include "ptoc/ir/Context.h"
#include "ptoc/ir/Diagnostics.h"
#include "ptoc/ir/Parser.h"
#include "ptoc/ir/Verifier.h"
#include "ptoc/passes/PassManager.h"
#include "ptoc/passes/Passes.h"
#include "ptoc/runtime/Executor.h"
#include "ptoc/runtime/Reference.h"
#include "ptoc/target/DeviceSpec.h"

using namespace ptoc;
using runtime::HostTensor;

namespace {

constexpr double kGoalMatmulRatio = 1.5;
constexpr double kGoalSoftmaxRatio = 1.0;
constexpr int64_t kMatmulSize = 2048;
constexpr int64_t kSoftmaxSize = 4096;

// fp32 cube tile for a2: L0A 128x64x4 = 32 KiB and L0B 64x128x4 = 32 KiB (half of
// each, double buffered), L0C 128x256x4 = 128 KiB (the whole L1 output tile's
// accumulator), L1 (128x128 + 128x256) x 4 x 2 = 384 KiB <= 512 KiB.
constexpr const char *kMatmulText = R"(func @mm(%a: tensor<2048x2048xf32>, %b: tensor<2048x2048xf32>) -> tensor<2048x2048xf32> {
  %c = matmul %a, %b {cube_tile = {m = [128, 128], k = [64, 128], n = [128, 256]}} : tensor<2048x2048xf32>
  return %c
}
)";

// Two whole rows per vector tile (32 KiB), so the reductions are not split. Four
// rows pass the per-op UB check (3 x 64 KiB = 192 KiB exactly) but not codegen's
// allocation of the fused chain, which also holds the small row max/sum tiles.
constexpr const char *kSoftmaxText = R"(func @softmax(%x: tensor<4096x4096xf32>) -> tensor<4096x4096xf32> {
  %m = amax %x {axes = [1], keepdim = true, vec_tile = [2, 4096]} : tensor<4096x1xf32>
  %d = sub %x, %m {vec_tile = [2, 4096]} : tensor<4096x4096xf32>
  %e = exp %d {vec_tile = [2, 4096]} : tensor<4096x4096xf32>
  %s = sum %e {axes = [1], keepdim = true, vec_tile = [2, 4096]} : tensor<4096x1xf32>
  %y = div %e, %s {vec_tile = [2, 4096]} : tensor<4096x4096xf32>
  return %y
}
)";

[[noreturn]] void die(const std::string &msg) {
  std::fprintf(stderr, "bench_numerics: %s\n", msg.c_str());
  std::exit(1);
}

double seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/// Median time of `repeats` calls of `fn`.
double timeIt(int repeats, const std::function<void()> &fn) {
  std::vector<double> t;
  for (int i = 0; i < repeats; ++i) {
    auto start = std::chrono::steady_clock::now();
    fn();
    t.push_back(seconds(start));
  }
  return median(t);
}

/// Parses, runs `pipeline` and builds the program; sets the compile time.
absl::StatusOr<codegen::Program> compile(const char *text, const target::DeviceSpec &device,
                                         const std::string &pipeline, double &secs) {
  auto start = std::chrono::steady_clock::now();
  ir::Context ctx;
  ir::DiagnosticCollector diags(ctx.diag());
  std::unique_ptr<ir::Module> module = ir::parseModule(text, "bench.pto", ctx);
  if (!module || failed(ir::verify(*module, ir::VerifyOptions{&device})))
    die("the benchmark function does not parse or verify: " + diags.errorText());
  passes::PassRegistry registry;
  passes::registerAllPasses(registry);
  passes::PassManager pm(device);
  if (absl::Status st = pm.addPipeline(pipeline, registry); !st.ok())
    die("--pipeline: " + std::string(st.message()));
  if (failed(pm.run(*module)))
    return absl::InvalidArgumentError("the pipeline failed: " + diags.errorText());
  absl::StatusOr<codegen::Program> program = codegen::buildProgram(module->func(0), device);
  secs = seconds(start);
  return program;
}

void execute(const codegen::Program &program, llvm::ArrayRef<HostTensor> args,
             std::vector<HostTensor> &results, unsigned threads) {
  absl::Status st = runtime::execute(program, args, results, {}, runtime::ExecOptions{threads});
  if (!st.ok()) die("execute: " + std::string(st.message()));
}

using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using MapF = Eigen::Map<RowMajor>;
using ConstMapF = Eigen::Map<const RowMajor>;

ConstMapF view(const HostTensor &t) {
  return ConstMapF(reinterpret_cast<const float *>(t.data()), t.shape()[0], t.shape()[1]);
}

/// Largest |got - want| / (1 + |want|) over all elements.
double maxRelError(const HostTensor &got, const float *want) {
  const float *g = reinterpret_cast<const float *>(got.data());
  double worst = 0;
  for (int64_t i = 0; i < got.numElements(); ++i)
    worst = std::max(worst, std::fabs(double(g[i]) - want[i]) / (1 + std::fabs(double(want[i]))));
  return worst;
}

void report(const char *what, double compileSecs, double ptocSecs, double baseSecs,
            const char *baseName, double goal, double err) {
  double ratio = ptocSecs / baseSecs;
  std::printf("%s\n  compile (parse + pipeline + codegen): %.3f s\n"
              "  ptoc execute: %.4f s\n  %s: %.4f s\n  ratio ptoc / baseline: %.2f (goal <= "
              "%.2f: %s)\n  max |ptoc - baseline| / (1 + |baseline|): %.2e\n",
              what, compileSecs, ptocSecs, baseName, baseSecs, ratio, goal,
              ratio <= goal ? "met" : "NOT met", err);
}

/// Returns whether the benchmark ran (compilation can fail for a pipeline).
bool benchMatmul(const target::DeviceSpec &device, const std::string &pipeline,
                 unsigned threads, int repeats) {
  double compileSecs = 0;
  absl::StatusOr<codegen::Program> compiled = compile(kMatmulText, device, pipeline, compileSecs);
  if (!compiled.ok()) {
    std::printf("fp32 matmul: FAILED to compile: %s\n", std::string(compiled.status().message()).c_str());
    return false;
  }
  const codegen::Program &program = *compiled;
  std::vector<HostTensor> args = {
      runtime::randomTensor(ir::DType::F32, {kMatmulSize, kMatmulSize}, 1),
      runtime::randomTensor(ir::DType::F32, {kMatmulSize, kMatmulSize}, 2)};
  std::vector<HostTensor> results;
  execute(program, args, results, threads); // warm-up (page faults, pool start)
  double ptocSecs = timeIt(repeats, [&] { execute(program, args, results, threads); });

  Eigen::setNbThreads(int(threads));
  RowMajor c(kMatmulSize, kMatmulSize);
  c.noalias() = view(args[0]) * view(args[1]); // warm-up
  double eigenSecs = timeIt(repeats, [&] { c.noalias() = view(args[0]) * view(args[1]); });
  std::printf("%zu calls of %zu leaves\n", program.calls.size(), program.leaves.size());
  report("fp32 matmul 2048x2048x2048", compileSecs, ptocSecs, eigenSecs, "Eigen GEMM",
         kGoalMatmulRatio, maxRelError(results[0], c.data()));
  return true;
}

/// The unfused baseline: five whole-tensor passes over row blocks on `threads`
/// threads, each writing a full temporary.
void unfusedSoftmax(const float *x, float *rowMax, float *shifted, float *e, float *rowSum,
                    float *y, int64_t rows, int64_t cols, llvm::ThreadPool &pool,
                    unsigned threads) {
  auto parallelRows = [&](const std::function<void(int64_t, int64_t)> &body) {
    int64_t chunk = (rows + threads - 1) / threads;
    for (int64_t r0 = 0; r0 < rows; r0 += chunk) {
      int64_t r1 = std::min(rows, r0 + chunk);
      pool.async([&body, r0, r1] { body(r0, r1); });
    }
    pool.wait();
  };
  using Arr = Eigen::Map<Eigen::Array<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>;
  using CArr =
      Eigen::Map<const Eigen::Array<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>;
  using Col = Eigen::Map<Eigen::ArrayXf>;
  parallelRows([&](int64_t r0, int64_t r1) {
    Col(rowMax + r0, r1 - r0) = CArr(x + r0 * cols, r1 - r0, cols).rowwise().maxCoeff();
  });
  parallelRows([&](int64_t r0, int64_t r1) {
    Arr(shifted + r0 * cols, r1 - r0, cols) =
        CArr(x + r0 * cols, r1 - r0, cols).colwise() - Col(rowMax + r0, r1 - r0);
  });
  parallelRows([&](int64_t r0, int64_t r1) {
    Arr(e + r0 * cols, r1 - r0, cols) = CArr(shifted + r0 * cols, r1 - r0, cols).exp();
  });
  parallelRows([&](int64_t r0, int64_t r1) {
    Col(rowSum + r0, r1 - r0) = CArr(e + r0 * cols, r1 - r0, cols).rowwise().sum();
  });
  parallelRows([&](int64_t r0, int64_t r1) {
    Arr(y + r0 * cols, r1 - r0, cols) =
        CArr(e + r0 * cols, r1 - r0, cols).colwise() / Col(rowSum + r0, r1 - r0);
  });
}

bool benchSoftmax(const target::DeviceSpec &device, const std::string &pipeline,
                  unsigned threads, int repeats) {
  double compileSecs = 0;
  absl::StatusOr<codegen::Program> compiled = compile(kSoftmaxText, device, pipeline, compileSecs);
  if (!compiled.ok()) {
    std::printf("fp32 softmax: FAILED to compile: %s\n", std::string(compiled.status().message()).c_str());
    return false;
  }
  const codegen::Program &program = *compiled;
  std::vector<HostTensor> args = {
      runtime::randomTensor(ir::DType::F32, {kSoftmaxSize, kSoftmaxSize}, 3)};
  std::vector<HostTensor> results;
  execute(program, args, results, threads);
  double ptocSecs = timeIt(repeats, [&] { execute(program, args, results, threads); });

  int64_t n = kSoftmaxSize;
  const float *x = reinterpret_cast<const float *>(args[0].data());
  llvm::ThreadPool pool(llvm::hardware_concurrency(threads));
  // Like numpy, every pass allocates its result (uninitialised, as numpy.empty), so
  // the baseline pays for fresh memory as execute() does for its outputs.
  std::unique_ptr<float[]> y;
  auto run = [&] {
    std::unique_ptr<float[]> rowMax(new float[n]), rowSum(new float[n]);
    std::unique_ptr<float[]> shifted(new float[n * n]), e(new float[n * n]);
    y.reset(new float[n * n]);
    unfusedSoftmax(x, rowMax.get(), shifted.get(), e.get(), rowSum.get(), y.get(), n, n, pool,
                   threads);
  };
  run(); // warm-up
  double baseSecs = timeIt(repeats, run);
  // For information: the same passes into temporaries allocated once and kept warm
  // (no page faults), a lower bound for any unfused implementation.
  std::unique_ptr<float[]> wMax(new float[n]), wSum(new float[n]);
  std::unique_ptr<float[]> wShifted(new float[n * n]), wE(new float[n * n]), wY(new float[n * n]);
  auto warm = [&] {
    unfusedSoftmax(x, wMax.get(), wShifted.get(), wE.get(), wSum.get(), wY.get(), n, n, pool,
                   threads);
  };
  warm();
  double warmSecs = timeIt(repeats, warm);
  std::printf("%zu calls of %zu leaves\n", program.calls.size(), program.leaves.size());
  report("fp32 softmax 4096x4096", compileSecs, ptocSecs, baseSecs,
         "unfused whole-tensor softmax", kGoalSoftmaxRatio, maxRelError(results[0], y.get()));
  std::printf("  (information) unfused into warm preallocated temporaries: %.4f s, ratio %.2f\n",
              warmSecs, ptocSecs / warmSecs);
  return true;
}

} // namespace

int main(int argc, char **argv) {
  unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  int repeats = 5;
  std::string only;
  std::string pipeline(passes::defaultPipelineText());
  for (int i = 1; i < argc; ++i) {
    llvm::StringRef a(argv[i]);
    if (a.consume_front("--threads=")) {
      if (a.getAsInteger(10, threads) || threads == 0) die("--threads needs a positive integer");
    } else if (a.consume_front("--repeats=")) {
      if (a.getAsInteger(10, repeats) || repeats <= 0) die("--repeats needs a positive integer");
    } else if (a.consume_front("--pipeline=")) {
      pipeline = a.str();
    } else if (a.consume_front("--only=")) {
      only = a.str();
      if (only != "matmul" && only != "softmax") die("--only takes matmul or softmax");
    } else {
      die("unknown argument '" + a.str() +
          "' (use --threads=N, --repeats=N, --only=matmul|softmax, --pipeline=TEXT)");
    }
  }
  absl::StatusOr<target::DeviceSpec> device = target::DeviceSpec::preset("a2");
  if (!device.ok()) die(std::string(device.status().message()));
  std::printf("host threads: %u, repeats: %d (median), pipeline: %s\n", threads, repeats,
              pipeline.c_str());
  bool ok = true;
  if (only.empty() || only == "matmul") ok &= benchMatmul(*device, pipeline, threads, repeats);
  if (only.empty() || only == "softmax") ok &= benchSoftmax(*device, pipeline, threads, repeats);
  return ok ? 0 : 1;
}
