// Simulator throughput: simulate() on layered programs of about 10k, 100k and 1M tasks
// (mixed AIC / AIV, 6 pipe instructions per leaf), in scheduler modes 0, 1 and 2, on
// the a2 preset. Goal: >= 1M simulated tasks per second and linear growth
// (time(1M) / time(100k) <= about 10.5).
//
// Build and run:
//   ninja -C build bench_sim_throughput && build/benchmarks/bench_sim_throughput
//   build/benchmarks/bench_sim_throughput --sizes=10000,100000   (fewer sizes)
//   build/benchmarks/bench_sim_throughput --reps=3                (best of 3)
//   build/benchmarks/bench_sim_throughput --modes=0               (one mode)
//
// The program: layers of `width` tasks (1000); layers alternate AIC (matmul-like: two
// MTE2 loads, two MTE1 moves, CUBE, FIXPIPE) and AIV (two loads, three VEC, MTE3).
// Each task waits for 1-2 tasks of the previous layer and reads their output tiles
// plus one of 16 shared weight tiles; the last layer writes the result. Times are
// thread CPU time of simulate() alone (program generation is not timed), the best of
// `--reps` repetitions. Before each repetition the caches are flushed (a 64 MiB
// buffer is rewritten), so every size starts cold, as a program built earlier by
// codegen would: otherwise a small program is still cache-resident from its
// generation and the 1M / 100k ratio compares a warm run with a cold one.
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include "LayeredProgram.h"
#include "llvm/ADT/StringRef.h"
#include "ptoc/codegen/Program.h"
#include "ptoc/runtime/Simulator.h"
#include "ptoc/target/DeviceSpec.h"

using namespace ptoc;
using namespace ptoc::bench;

namespace {

/// Evicts the program and everything else from the caches (L3 is 32 MiB here).
void flushCaches() {
  constexpr size_t kFlushBytes = size_t(64) << 20;
  static std::vector<char> buffer(kFlushBytes);
  for (size_t i = 0; i < buffer.size(); i += 64) buffer[i] = static_cast<char>(buffer[i] + 1);
}

double threadSeconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

} // namespace

int main(int argc, char **argv) {
  std::vector<int> sizes = {10000, 100000, 1000000};
  std::vector<int> modes = {0, 1, 2};
  int reps = 1;
  for (int i = 1; i < argc; ++i) {
    llvm::StringRef a(argv[i]);
    if (a.consume_front("--sizes=")) sizes = parseList(a.data());
    else if (a.consume_front("--modes=")) modes = parseList(a.data());
    else if (a.consume_front("--reps=")) reps = std::max(1, std::atoi(a.data()));
    else {
      std::fprintf(stderr, "usage: %s [--sizes=N,...] [--modes=M,...] [--reps=R]\n", argv[0]);
      return 2;
    }
  }
  auto device = target::DeviceSpec::preset("a2");
  if (!device.ok()) {
    std::fprintf(stderr, "%s\n", std::string(device.status().message()).c_str());
    return 1;
  }
  std::printf("%-6s %10s %10s %14s %12s %10s %8s\n", "mode", "tasks", "seconds", "tasks/s",
              "makespan_us", "bound_us", "l2_hit");
  for (int mode : modes) {
    double t100k = 0, t1m = 0;
    for (int size : sizes) {
      codegen::Program p = layeredProgram(size);
      runtime::SimOptions o;
      o.schedMode = mode;
      double best = std::numeric_limits<double>::infinity();
      runtime::RunRecord rec;
      for (int r = 0; r < reps; ++r) {
        flushCaches();
        double t0 = threadSeconds();
        auto result = runtime::simulate(p, *device, o);
        double t = threadSeconds() - t0;
        if (!result.ok()) {
          std::fprintf(stderr, "%s\n", std::string(result.status().message()).c_str());
          return 1;
        }
        best = std::min(best, t);
        rec = std::move(*result);
      }
      double n = static_cast<double>(p.calls.size());
      std::printf("%-6d %10zu %10.3f %14.0f %12.1f %10.1f %8.3f\n", mode, p.calls.size(), best,
                  n / best, rec.simulatedUs(), rec.boundUs(), rec.l2HitRate());
      if (size == 100000) t100k = best;
      if (size == 1000000) t1m = best;
    }
    if (t100k > 0 && t1m > 0)
      std::printf("mode %d: time(1M) / time(100k) = %.2f (goal <= 10.5)\n", mode, t1m / t100k);
  }
  return 0;
}
