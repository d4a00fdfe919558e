// Fidelity: how close simulated kernel times are to measured ones — per set the mean
// absolute percentage error, the rank correlation, whether the measured fastest
// kernel is the simulated fastest, and how far simulated pipe-busy shares are from
// measured ones.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "ptoc/calibrate/Measurements.h"

namespace ptoc::calibrate {

/// What the simulator says about one measured kernel.
struct SimulatedKernel {
  /// The simulated kernel time (the span after the launch head), microseconds.
  double kernelUs = 0;
  /// Simulated share of the kernel time each pipe was busy, by the names of
  /// MeasuredKernel::measuredBusy (averaged over the cores of the pipe's kind).
  std::map<std::string, double> busy;
};

/// Mean of |simulated - measured| / measured (0.1 = 10%); 0 for no points.
double meanAbsolutePercentageError(const std::vector<double> &measured,
                                   const std::vector<double> &simulated);
/// Spearman's rank correlation (ties get their average rank); 1 with fewer than two
/// points or when either side is constant.
double spearman(const std::vector<double> &a, const std::vector<double> &b);

/// One set, compared.
struct SetFidelity {
  std::string name;
  size_t points = 0;
  double mape = 0;
  double spearman = 1;
  /// Only for sets of alternatives (MeasurementSet::alternatives).
  bool hasBest = false;
  bool bestIdentified = false;
  std::string measuredBest, simulatedBest; ///< labels
  /// Per pipe with measurements: the largest |simulated - measured| share over the
  /// points (0.05 = 5 percentage points), and the mean shares.
  std::map<std::string, double> busyMaxError, busyMeasured, busySimulated;
};

/// Compares one set with its simulated kernels (one per point, in order).
SetFidelity compare(const MeasurementSet &set, const std::vector<SimulatedKernel> &simulated);

} // namespace ptoc::calibrate
