// `ptoc prof` throughput and memory: loadTrace + analyze on swimlane traces of layered
// programs of about 10k, 100k and 1M tasks (the simulator's run of the same program
// as bench_sim_throughput, written with profile::writeSwimlane to a temporary file),
// against a baseline measured in the same run: llvm::json::parse of the same file
// into a tree (how loadTrace read traces before it read them event by event; the
// baseline only parses, it does not analyse). Goal: peak memory proportional to the
// tasks, flows and pipe events kept, far below the tree's.
//
// Build and run:
//   ninja -C build bench_prof_throughput && build/benchmarks/bench_prof_throughput
//   build/benchmarks/bench_prof_throughput --sizes=10000,100000   (fewer sizes)
//   build/benchmarks/bench_prof_throughput --pipes                (runtime_debug_mode=2:
//                                                                  6 pipe events per task)
//
// Times are thread CPU time (the load is single-threaded; reading the file is
// included). Peak memory is the growth of the resident set during the step: the
// high-water mark is reset (/proc/self/clear_refs) after freeing what came before,
// then read (/proc/self/status VmHWM) when the step is done. It includes the
// trace file's pages, which both the baseline and loadTrace read through a mapping.
// The tree baseline is skipped when it would need more than half the memory
// available (estimated from the smaller sizes' bytes per file byte, else 100).
#include <malloc.h>
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"
#include "LayeredProgram.h"
#include "ptoc/codegen/Program.h"
#include "ptoc/profile/Swimlane.h"
#include "ptoc/profile/TraceAnalysis.h"
#include "ptoc/runtime/Simulator.h"
#include "ptoc/target/DeviceSpec.h"

using namespace ptoc;
using namespace ptoc::bench;

namespace {

constexpr double kMiB = 1024.0 * 1024.0;
/// The baseline may take at most this share of MemAvailable.
constexpr double kBaselineMemoryShare = 0.5;
/// The tree's peak per file byte before a smaller size has measured it (measured
/// 60-100 here; the high end, so a first large size is skipped rather than swapping).
constexpr double kTreeBytesPerFileByteGuess = 100;

double threadSeconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

/// A "Key:   N kB" line of /proc/self/status or /proc/meminfo, in bytes (-1: absent).
int64_t procKiB(const char *file, const char *key) {
  std::ifstream in(file);
  std::string line;
  std::string prefix = std::string(key) + ":";
  while (std::getline(in, line))
    if (line.rfind(prefix, 0) == 0) return std::atoll(line.c_str() + prefix.size()) * 1024;
  return -1;
}

/// Measures the peak resident growth of one step.
class PeakMeter {
public:
  /// Frees what malloc holds, resets the high-water mark and notes the resident set.
  void start() {
    malloc_trim(0);
    std::ofstream("/proc/self/clear_refs") << "5";
    base_ = procKiB("/proc/self/status", "VmRSS");
  }
  /// The high-water mark's growth since start().
  int64_t peakGrowth() const { return procKiB("/proc/self/status", "VmHWM") - base_; }

private:
  int64_t base_ = 0;
};

/// Simulates the program of about `size` tasks and writes its trace to `file`;
/// returns the task count (0 on error).
size_t writeTrace(int size, bool pipes, const target::DeviceSpec &device, const std::string &file) {
  codegen::Program p = layeredProgram(size);
  runtime::SimOptions o;
  o.recordPipes = pipes;
  auto record = runtime::simulate(p, device, o);
  if (!record.ok()) {
    std::fprintf(stderr, "%s\n", std::string(record.status().message()).c_str());
    return 0;
  }
  std::error_code ec;
  llvm::raw_fd_ostream os(file, ec);
  if (ec) {
    std::fprintf(stderr, "cannot write %s: %s\n", file.c_str(), ec.message().c_str());
    return 0;
  }
  if (absl::Status s = profile::writeSwimlane(os, p, *record); !s.ok()) {
    std::fprintf(stderr, "%s\n", std::string(s.message()).c_str());
    return 0;
  }
  return p.calls.size();
}

} // namespace

int main(int argc, char **argv) {
  std::vector<int> sizes = {10000, 100000, 1000000};
  bool pipes = false;
  for (int i = 1; i < argc; ++i) {
    llvm::StringRef a(argv[i]);
    if (a.consume_front("--sizes=")) sizes = parseList(a.data());
    else if (a == "--pipes") pipes = true;
    else {
      std::fprintf(stderr, "usage: %s [--sizes=N,...] [--pipes]\n", argv[0]);
      return 2;
    }
  }
  auto device = target::DeviceSpec::preset("a2");
  if (!device.ok()) {
    std::fprintf(stderr, "%s\n", std::string(device.status().message()).c_str());
    return 1;
  }
  llvm::SmallString<128> file;
  if (std::error_code ec = llvm::sys::fs::createTemporaryFile("ptoc-prof-bench", "json", file)) {
    std::fprintf(stderr, "cannot create a temporary file: %s\n", ec.message().c_str());
    return 1;
  }
  std::printf("%-8s %9s | %9s %10s %9s | %9s %10s %12s %10s | %9s %9s\n", "tasks", "file_MB",
              "tree_s", "tree_MB", "tree_B/t", "prof_s", "prof_MB", "prof_tasks/s", "prof_B/t",
              "time_x", "memory_x");
  double treeBytesPerFileByte = kTreeBytesPerFileByteGuess; // then the last size measured
  PeakMeter meter;
  for (int size : sizes) {
    size_t tasks = writeTrace(size, pipes, *device, file.str().str());
    if (tasks == 0) return 1;
    uint64_t fileBytes = 0;
    llvm::sys::fs::file_size(file, fileBytes);
    double n = static_cast<double>(tasks);

    // Baseline: the whole file as one llvm::json tree.
    double treeSeconds = -1;
    int64_t treePeak = -1;
    double available = static_cast<double>(procKiB("/proc/meminfo", "MemAvailable"));
    if (treeBytesPerFileByte * static_cast<double>(fileBytes) <
        kBaselineMemoryShare * available) {
      meter.start();
      double t0 = threadSeconds();
      {
        auto buffer = llvm::MemoryBuffer::getFile(file);
        if (!buffer) return 1;
        llvm::Expected<llvm::json::Value> tree = llvm::json::parse((*buffer)->getBuffer());
        if (!tree) {
          std::fprintf(stderr, "baseline: %s\n", llvm::toString(tree.takeError()).c_str());
          return 1;
        }
      }
      treeSeconds = threadSeconds() - t0;
      treePeak = meter.peakGrowth();
      treeBytesPerFileByte = static_cast<double>(treePeak) / static_cast<double>(fileBytes);
    }

    // ptoc prof: load and analyse.
    meter.start();
    double t0 = threadSeconds();
    size_t analysed = 0;
    {
      absl::StatusOr<profile::Timeline> trace = profile::loadTrace(file.str());
      if (!trace.ok()) {
        std::fprintf(stderr, "loadTrace: %s\n", std::string(trace.status().message()).c_str());
        return 1;
      }
      profile::Analysis analysis = profile::analyze(*trace);
      analysed = static_cast<size_t>(analysis.summary.tasks);
    }
    double profSeconds = threadSeconds() - t0;
    int64_t profPeak = meter.peakGrowth();
    if (analysed != tasks) {
      std::fprintf(stderr, "analysed %zu tasks, expected %zu\n", analysed, tasks);
      return 1;
    }

    std::printf("%-8zu %9.1f | ", tasks, static_cast<double>(fileBytes) / kMiB);
    if (treeSeconds >= 0)
      std::printf("%9.3f %10.1f %9.0f | ", treeSeconds, static_cast<double>(treePeak) / kMiB,
                  static_cast<double>(treePeak) / n);
    else
      std::printf("%9s %10s %9s | ", "skipped", "skipped", "-");
    std::printf("%9.3f %10.1f %12.0f %10.0f | ", profSeconds,
                static_cast<double>(profPeak) / kMiB, n / profSeconds,
                static_cast<double>(profPeak) / n);
    if (treeSeconds >= 0)
      std::printf("%9.2f %9.1f\n", treeSeconds / profSeconds,
                  static_cast<double>(treePeak) / static_cast<double>(profPeak));
    else
      std::printf("%9s %9s\n", "-", "-");
  }
  llvm::sys::fs::remove(file);
  std::printf("tree = llvm::json::parse of the file (parse only); prof = loadTrace + analyze;\n"
              "time_x = tree_s / prof_s, memory_x = tree_MB / prof_MB (peak resident growth)\n");
  return 0;
}
