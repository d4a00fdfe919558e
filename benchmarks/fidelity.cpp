// Fidelity: how ptoc's simulator compares with kernels timed on real devices. Reads
// every measurement file in benchmarks/data/npu-measurements/ (public measurements,
// each naming its source; docs/fidelity.md), simulates each measured kernel on the
// preset of the device it ran on, and prints per set the mean absolute percentage
// error of the simulated kernel time (the span after the launch head), Spearman's
// rank correlation, whether the measured fastest tiling is the simulated fastest,
// simulated vs measured pipe-busy shares, and the same over every point, each against
// its goal (ptoc/calibrate/FidelityGoals.h). Files of component data (per-instruction
// transfer curves) are checked against the device fields they calibrate.
//
// Build and run (from the repository root):
//   ninja -C build bench_fidelity && build/benchmarks/bench_fidelity
//   build/benchmarks/bench_fidelity --points        (every point, not only the sets)
//   build/benchmarks/bench_fidelity --data=DIR      (another folder of measurements)
//   build/benchmarks/bench_fidelity --device=FILE   (simulate every set on this device
//                                                    instead of each file's own)
//   build/benchmarks/bench_fidelity --dump-kernels=DIR  (write each measured kernel as
//                                                    DIR/<set>.<i>.pto, with its pass
//                                                    options in a comment)
//   build/benchmarks/bench_fidelity --set=memory.gm_latency_cycles=900
//                                                   (change a field of every set's device:
//                                                    "what if"; repeatable)
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "ptoc/calibrate/Fidelity.h"
#include "ptoc/calibrate/FidelityGoals.h"
#include "ptoc/calibrate/Measurements.h"
#include "ptoc/session/MeasurementSimulator.h"
#include "ptoc/support/BoundedJson.h"
#include "ptoc/support/ReadFile.h"
#include "ptoc/target/DeviceSpec.h"

using namespace ptoc;

namespace {

const char *mark(bool ok) { return ok ? "ok" : "MISSED"; }

/// The per-instruction transfer curves (GiB/s by instruction size, at 1.8 GHz)
/// against the device's fixed + bytes / rate for the same path.
void checkTransferCurves(const std::string &path) {
  absl::StatusOr<std::string> text = support::readFileBounded(path, support::kMaxJsonBytes);
  if (!text.ok()) return;
  absl::StatusOr<llvm::json::Value> v = support::parseJson(*text, path);
  if (!v.ok() || !v->getAsObject()) return;
  const llvm::json::Object *curves = v->getAsObject()->getObject("transfers_GiBps_by_instruction_bytes");
  if (!curves) return;
  struct PathField {
    const char *prefix, *fixed, *rate;
  };
  const PathField paths[] = {
      {"gm_to_l1_nd2nz_", "pipes.nd2nz_fixed_cycles", "pipes.nd2nz_bytes_per_cycle"},
      {"gm_to_l1_", "pipes.gm_to_l1_fixed_cycles", "pipes.gm_to_l1_bytes_per_cycle"},
      {"gm_to_ub_", "pipes.gm_to_ub_fixed_cycles", "pipes.gm_to_ub_bytes_per_cycle"},
      {"ub_to_gm_", "pipes.mte3_fixed_cycles", "pipes.mte3_bytes_per_cycle"},
      {"l0c_to_gm_", "pipes.fixpipe_fixed_cycles", "pipes.fixpipe_bytes_per_cycle"},
      {"l1_to_l0a_", "pipes.mte1_fixed_cycles", "pipes.mte1_l0a_bytes_per_cycle"},
      {"l1_to_l0b_", "pipes.mte1_fixed_cycles", "pipes.mte1_l0b_bytes_per_cycle"},
  };
  std::printf("\n%s: per-instruction transfer time, device fields vs measured (1.8 GHz)\n",
              llvm::sys::path::filename(path).str().c_str());
  std::printf("  %-22s %-6s %8s %8s   %s\n", "path", "device", "fixed", "B/cycle",
              "modelled/measured cycles by instruction size");
  std::vector<std::string> names;
  for (const auto &kv : *curves) names.push_back(kv.first.str());
  std::sort(names.begin(), names.end());
  for (const std::string &name : names) {
    const PathField *pf = nullptr;
    for (const PathField &p : paths)
      if (llvm::StringRef(name).startswith(p.prefix)) {
        pf = &p;
        break;
      }
    const llvm::json::Object *points = curves->getObject(name);
    if (!pf || !points) continue;
    std::string device = llvm::StringRef(name).endswith("910b3") ? "b3" : "a2";
    absl::StatusOr<target::DeviceSpec> d = target::DeviceSpec::preset(device);
    if (!d.ok()) continue;
    double fixed = *d->numericField(pf->fixed), rate = *d->numericField(pf->rate);
    std::string line;
    double errSum = 0;
    int n = 0;
    std::vector<std::pair<double, std::string>> sizes;
    for (const auto &kv : *points) {
      llvm::StringRef key = kv.first;
      if (!key.endswith("K")) continue;
      double kib = 0;
      if (key.drop_back().getAsDouble(kib)) continue;
      sizes.push_back({kib, key.str()});
    }
    std::sort(sizes.begin(), sizes.end());
    for (const auto &[kib, key] : sizes) {
      auto gib = points->getNumber(key);
      if (!gib || *gib <= 0) continue;
      double bytes = kib * 1024;
      double measured = bytes / (*gib * 1073741824.0) * 1.8e9;
      double modelled = fixed + bytes / rate;
      errSum += std::abs(modelled - measured) / measured;
      ++n;
      char buf[64];
      std::snprintf(buf, sizeof buf, " %s %.0f/%.0f", key.c_str(), modelled, measured);
      line += buf;
    }
    std::printf("  %-22s %-6s %8.0f %8.0f  %s  (MAPE %.0f%%)\n", name.c_str(), device.c_str(),
                fixed, rate, line.c_str(), n ? 100 * errSum / n : 0.0);
  }
}

} // namespace

int main(int argc, char **argv) {
  std::string dir = "benchmarks/data/npu-measurements", deviceOverride, dumpDir;
  bool showPoints = false;
  std::vector<std::pair<std::string, double>> overrides;
  for (int i = 1; i < argc; ++i) {
    llvm::StringRef a = argv[i];
    if (a.consume_front("--set=")) {
      auto [field, value] = a.rsplit('=');
      double v = 0;
      if (value.getAsDouble(v)) {
        std::fprintf(stderr, "bench_fidelity: --set takes FIELD=NUMBER, got '%s'\n", argv[i]);
        return 2;
      }
      overrides.push_back({field.str(), v});
    } else if (a.consume_front("--data=")) dir = a.str();
    else if (a.consume_front("--dump-kernels=")) dumpDir = a.str();
    else if (a.consume_front("--device=")) deviceOverride = a.str();
    else if (a == "--points") showPoints = true;
    else {
      std::fprintf(stderr, "bench_fidelity: unknown argument '%s' (see the file's header)\n",
                   argv[i]);
      return 2;
    }
  }
  std::vector<std::string> files;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec; it.increment(ec))
    if (llvm::StringRef(it->path()).endswith(".json")) files.push_back(it->path());
  if (ec || files.empty()) {
    std::fprintf(stderr, "bench_fidelity: no measurement files in '%s' (run from the "
                         "repository root, or pass --data=DIR)\n", dir.c_str());
    return 1;
  }
  std::sort(files.begin(), files.end());

  calibrate::MeasurementSimulator sim = session::measurementSimulator();
  std::vector<double> allMeasured, allSimulated;
  std::map<std::string, calibrate::SetFidelity> results;
  std::vector<std::string> componentFiles;
  std::printf("%-30s %-6s %6s %8s %9s  %s\n", "set", "device", "points", "MAPE", "Spearman",
              "best (measured / simulated)");
  for (const std::string &file : files) {
    if (!calibrate::holdsMeasuredKernels(file)) {
      componentFiles.push_back(file);
      continue;
    }
    absl::StatusOr<calibrate::MeasurementSet> set = calibrate::readMeasurements(file);
    if (!set.ok()) {
      std::fprintf(stderr, "bench_fidelity: %s\n", std::string(set.status().message()).c_str());
      return 1;
    }
    absl::StatusOr<target::DeviceSpec> device = deviceOverride.empty()
                                                    ? calibrate::loadMeasuredDevice(*set)
                                                    : target::DeviceSpec::load(deviceOverride);
    if (!device.ok()) {
      std::fprintf(stderr, "bench_fidelity: %s\n", std::string(device.status().message()).c_str());
      return 1;
    }
    for (const auto &[field, value] : overrides)
      if (absl::Status st = device->setNumericField(field, value); !st.ok()) {
        std::fprintf(stderr, "bench_fidelity: --set: %s\n", std::string(st.message()).c_str());
        return 2;
      }
    std::vector<calibrate::SimulatedKernel> simulated;
    for (const calibrate::MeasuredKernel &k : set->points) {
      if (!dumpDir.empty()) {
        std::string path = dumpDir + "/" + set->name + "." + std::to_string(&k - &set->points[0]) + ".pto";
        if (FILE *f = std::fopen(path.c_str(), "w")) {
          std::fprintf(f, "// %s %s: measured %g us on %s (%s kernel)\n", set->name.c_str(),
                       k.label.c_str(), k.measuredUs, set->device.c_str(),
                       set->plainKernel ? "plain" : "aicpu");
          for (const auto &[name, value] : k.passOptions)
            std::fprintf(f, "// pass option %s=%s\n", name.c_str(), value.c_str());
          std::fputs(k.ptoText.c_str(), f);
          std::fclose(f);
        }
      }
      absl::StatusOr<calibrate::SimulatedKernel> s = sim.simulate(*set, k, *device);
      if (!s.ok()) {
        std::fprintf(stderr, "bench_fidelity: %s\n", std::string(s.status().message()).c_str());
        return 1;
      }
      simulated.push_back(*s);
      allMeasured.push_back(k.measuredUs);
      allSimulated.push_back(s->kernelUs);
    }
    calibrate::SetFidelity f = calibrate::compare(*set, simulated);
    std::string best = f.hasBest ? f.measuredBest + " / " + f.simulatedBest +
                                       (f.bestIdentified ? " (identified)" : " (not identified)")
                                 : "-";
    std::printf("%-30s %-6s %6zu %7.1f%% %9.3f  %s\n", set->name.c_str(), device->name.c_str(),
                f.points, 100 * f.mape, f.spearman, best.c_str());
    for (const auto &[pipe, err] : f.busyMaxError)
      std::printf("  busy %-10s measured %4.1f%%  simulated %4.1f%%  (mean; largest error %.1f "
                  "points)\n",
                  pipe.c_str(), 100 * f.busyMeasured[pipe], 100 * f.busySimulated[pipe],
                  100 * err);
    if (showPoints)
      for (size_t i = 0; i < set->points.size(); ++i) {
        const calibrate::MeasuredKernel &k = set->points[i];
        std::printf("    %-18s measured %9.2f us  simulated %9.2f us  %+6.1f%%", k.label.c_str(),
                    k.measuredUs, simulated[i].kernelUs,
                    100 * (simulated[i].kernelUs - k.measuredUs) / k.measuredUs);
        for (const auto &[pipe, share] : k.measuredBusy)
          if (simulated[i].busy.count(pipe))
            std::printf("  %s %.0f/%.0f%%", pipe.c_str(), 100 * simulated[i].busy[pipe],
                        100 * share);
        std::printf("\n");
      }
    results[set->name] = f;
  }
  double overall = calibrate::meanAbsolutePercentageError(allMeasured, allSimulated);
  std::printf("%-30s %-6s %6zu %7.1f%% %9.3f\n", "overall", "", allMeasured.size(),
              100 * overall, calibrate::spearman(allMeasured, allSimulated));

  std::printf("\ngoals\n");
  for (const calibrate::FidelityGoal &g : calibrate::kFidelityGoals) {
    auto it = results.find(g.set);
    if (it == results.end()) {
      std::printf("  %-30s not measured (no such file)\n", g.set);
      continue;
    }
    const calibrate::SetFidelity &f = it->second;
    if (g.minSpearman >= 0)
      std::printf("  %-30s Spearman %.3f >= %.2f: %s\n", g.set, f.spearman, g.minSpearman,
                  mark(f.spearman >= g.minSpearman));
    if (g.bestIdentified)
      std::printf("  %-30s measured best %s identified: %s\n", g.set, f.measuredBest.c_str(),
                  mark(f.bestIdentified));
    if (g.maxMape >= 0)
      std::printf("  %-30s MAPE %.1f%% <= %.0f%%: %s\n", g.set, 100 * f.mape, 100 * g.maxMape,
                  mark(f.mape <= g.maxMape));
    if (g.busyPipe) {
      auto e = f.busyMaxError.find(g.busyPipe);
      bool ok = e != f.busyMaxError.end() && e->second <= g.maxBusyError;
      std::printf("  %-30s %s busy within %.0f points of measured (largest error %.1f): %s\n",
                  g.set, g.busyPipe, 100 * g.maxBusyError,
                  e == f.busyMaxError.end() ? -1.0 : 100 * e->second, mark(ok));
    }
  }
  std::printf("  %-30s MAPE %.1f%% <= %.0f%%: %s\n", "overall", 100 * overall,
              100 * calibrate::kOverallMapeGoal, mark(overall <= calibrate::kOverallMapeGoal));

  for (const std::string &file : componentFiles) checkTransferCurves(file);
  std::printf("\n(%d kernels compiled)\n", sim.compilations());
  return 0;
}
