// FidelityGoals: what ptoc's device model must achieve against the public measurements
// in benchmarks/data/npu-measurements/ (docs/fidelity.md). Declared once, for the
// fidelity benchmark and the tests that hold the model to the data.
#pragma once

namespace ptoc::calibrate {

/// The goals of one measurement set (a negative bound means none).
struct FidelityGoal {
  const char *set;          ///< MeasurementSet::name
  double maxMape;           ///< mean absolute percentage error, 0.15 = 15%
  double minSpearman;       ///< rank correlation of simulated and measured times
  bool bestIdentified;      ///< the measured fastest alternative is the simulated fastest
  const char *busyPipe;     ///< a pipe whose simulated busy share is held to the measured
  double maxBusyError;      ///< largest |simulated - measured| share over the points
};

inline constexpr FidelityGoal kFidelityGoals[] = {
    {"matmul_ranking_256x512x1024", -1, 0.9, true, nullptr, -1},
    {"gemm_scaling_a3", 0.15, -1, false, "cube", 0.10},
    {"rmsnorm_910b4", 0.20, -1, false, nullptr, -1},
};

/// The mean absolute percentage error over every point of every set.
inline constexpr double kOverallMapeGoal = 0.15;

} // namespace ptoc::calibrate
