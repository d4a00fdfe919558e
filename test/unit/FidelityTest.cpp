// Holds the device presets to the public measurements in
// benchmarks/data/npu-measurements (simulated times are deterministic, so the
// figures bench_fidelity prints are checked here): the goals of
// ptoc/calibrate/FidelityGoals.h that the presets meet, and for the 12-config ranking
// set, which they do not meet (docs/fidelity.md says why), what they do achieve.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "ptoc/calibrate/Fidelity.h"
#include "ptoc/calibrate/FidelityGoals.h"
#include "ptoc/calibrate/Measurements.h"
#include "ptoc/session/MeasurementSimulator.h"
#include "ptoc/target/DeviceSpec.h"

using namespace ptoc;

namespace {

std::string dataFile(const std::string &name) {
  return std::string(PTOC_SOURCE_DIR) + "/benchmarks/data/npu-measurements/" + name + ".json";
}

struct Simulated {
  calibrate::MeasurementSet set;
  std::vector<calibrate::SimulatedKernel> kernels;
  calibrate::SetFidelity fidelity;
};

/// Reads a shipped set and simulates it on the preset of its device.
Simulated simulateSet(const std::string &name) {
  absl::StatusOr<calibrate::MeasurementSet> set = calibrate::readMeasurements(dataFile(name));
  REQUIRE(set.ok());
  absl::StatusOr<target::DeviceSpec> device = target::DeviceSpec::load(set->device);
  REQUIRE(device.ok());
  calibrate::MeasurementSimulator sim = session::measurementSimulator();
  Simulated out{*set, {}, {}};
  for (const calibrate::MeasuredKernel &k : set->points) {
    absl::StatusOr<calibrate::SimulatedKernel> s = sim.simulate(*set, k, *device);
    REQUIRE(s.ok());
    out.kernels.push_back(*s);
  }
  out.fidelity = calibrate::compare(*set, out.kernels);
  return out;
}

const calibrate::FidelityGoal &goal(const std::string &set) {
  for (const calibrate::FidelityGoal &g : calibrate::kFidelityGoals)
    if (set == g.set) return g;
  FAIL("no goal for " << set);
  return calibrate::kFidelityGoals[0];
}

} // namespace

TEST_CASE("large GEMMs on a3: kernel time and cube-busy share within the goals", "[fidelity]") {
  Simulated s = simulateSet("gemm_scaling_a3");
  const calibrate::FidelityGoal &g = goal("gemm_scaling_a3");
  INFO("MAPE " << s.fidelity.mape << ", cube busy error " << s.fidelity.busyMaxError["cube"]);
  CHECK(s.fidelity.mape <= g.maxMape);
  REQUIRE(s.fidelity.busyMaxError.count(g.busyPipe));
  CHECK(s.fidelity.busyMaxError[g.busyPipe] <= g.maxBusyError);
  // Larger GEMMs keep the cube busier, as on the device (54.5% at 1536, 86.7% at 6144).
  CHECK(s.kernels[0].busy["cube"] < s.kernels[2].busy["cube"]);
  // Every size scales: each point within 15%.
  for (size_t i = 0; i < s.kernels.size(); ++i) {
    INFO(s.set.points[i].label << ": " << s.kernels[i].kernelUs << " us vs "
                               << s.set.points[i].measuredUs);
    CHECK(std::abs(s.kernels[i].kernelUs / s.set.points[i].measuredUs - 1) <= 0.15);
  }
}

TEST_CASE("RMSNorm on b4: kernel time within the goal", "[fidelity]") {
  Simulated s = simulateSet("rmsnorm_910b4");
  INFO("MAPE " << s.fidelity.mape);
  CHECK(s.fidelity.mape <= goal("rmsnorm_910b4").maxMape);
  // The smallest whole kernel costs about 3.3 us on the device: the start-up floor.
  CHECK(s.kernels[0].kernelUs > 2.5);
  CHECK(s.kernels[0].kernelUs < 4.5);
}

TEST_CASE("the 12 tilings of one matmul on b3: times, ranking and the fastest", "[fidelity]") {
  Simulated s = simulateSet("matmul_ranking_256x512x1024");
  // Every tiling within 10% of its measured time (the previous model was 25% off on
  // average, up to 44%).
  for (size_t i = 0; i < s.kernels.size(); ++i) {
    INFO(s.set.points[i].label << ": " << s.kernels[i].kernelUs << " us vs "
                               << s.set.points[i].measuredUs);
    CHECK(std::abs(s.kernels[i].kernelUs / s.set.points[i].measuredUs - 1) <= 0.10);
  }
  // The ranking: better than before (0.762), short of the goal of 0.9.
  INFO("Spearman " << s.fidelity.spearman);
  CHECK(s.fidelity.spearman >= 0.8);
  // The groups the device separates are separated: the three fastest tilings (64x64
  // L0, 16 tasks) beat the 4-task ones (No.0, No.1) by over 25%.
  double fastGroup = std::max({s.kernels[3].kernelUs, s.kernels[4].kernelUs, s.kernels[5].kernelUs});
  CHECK(fastGroup * 1.25 < std::min(s.kernels[0].kernelUs, s.kernels[1].kernelUs));
  // The measured fastest (No.4) is within 1% of the simulated fastest: the model has
  // No.4 and No.5 tied (it charges each K step's copies and the last step's compute,
  // which nearly cancel between kL1 = 256 and 512).
  double best = std::min_element(s.kernels.begin(), s.kernels.end(),
                                 [](const auto &a, const auto &b) { return a.kernelUs < b.kernelUs; })
                    ->kernelUs;
  CHECK(s.fidelity.measuredBest == "No.4");
  CHECK(s.kernels[4].kernelUs <= best * 1.01);
}

TEST_CASE("over every measured kernel: within the overall goal", "[fidelity]") {
  std::vector<double> measured, simulated;
  for (const char *name : {"gemm_scaling_a3", "matmul_ranking_256x512x1024", "rmsnorm_910b4"}) {
    Simulated s = simulateSet(name);
    for (size_t i = 0; i < s.kernels.size(); ++i) {
      measured.push_back(s.set.points[i].measuredUs);
      simulated.push_back(s.kernels[i].kernelUs);
    }
  }
  double mape = calibrate::meanAbsolutePercentageError(measured, simulated);
  INFO("overall MAPE " << mape);
  CHECK(mape <= calibrate::kOverallMapeGoal);
}

TEST_CASE("fidelity metrics", "[fidelity]") {
  CHECK(calibrate::meanAbsolutePercentageError({10, 20}, {11, 18}) == Approx(0.1));
  CHECK(calibrate::meanAbsolutePercentageError({}, {}) == 0);
  CHECK(calibrate::spearman({1, 2, 3, 4}, {10, 20, 30, 40}) == Approx(1));
  CHECK(calibrate::spearman({1, 2, 3, 4}, {40, 30, 20, 10}) == Approx(-1));
  // Ties share their average rank.
  CHECK(calibrate::spearman({1, 2, 2, 3}, {1, 2, 2, 3}) == Approx(1));
  CHECK(calibrate::spearman({1, 2, 3}, {5, 5, 5}) == 1); // constant: no ranking to get wrong
  calibrate::MeasurementSet set;
  set.name = "s";
  set.alternatives = true;
  for (double us : {3.0, 1.0, 2.0}) {
    calibrate::MeasuredKernel k;
    k.label = "No." + std::to_string(set.points.size());
    k.measuredUs = us;
    k.measuredBusy["cube"] = 0.5;
    set.points.push_back(k);
  }
  std::vector<calibrate::SimulatedKernel> sim(3);
  sim[0].kernelUs = 3;
  sim[1].kernelUs = 2;
  sim[2].kernelUs = 1.5;
  sim[0].busy["cube"] = 0.6;
  sim[1].busy["cube"] = 0.45;
  sim[2].busy["cube"] = 0.5;
  calibrate::SetFidelity f = calibrate::compare(set, sim);
  CHECK(f.hasBest);
  CHECK(f.measuredBest == "No.1");
  CHECK(f.simulatedBest == "No.2");
  CHECK_FALSE(f.bestIdentified);
  CHECK(f.busyMaxError["cube"] == Approx(0.1));
  CHECK(f.busyMeasured["cube"] == Approx(0.5));
  CHECK(f.busySimulated["cube"] == Approx(0.5166666));
}
