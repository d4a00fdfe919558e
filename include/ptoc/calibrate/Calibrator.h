// Calibrator: fits chosen device fields to measured kernels, so the simulator agrees
// with a user's own part (`ptoc calibrate`, docs/fidelity.md). Each field moves
// within bounds around its starting value (and inside the device's physical range),
// the search is deterministic, and a cross-validation (fitting on some points,
// judging on the others) shows whether the fit generalises or only memorises.
// Kernels are simulated through a callback (the session gives one), so this layer
// never calls the session.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ptoc/calibrate/Fidelity.h"
#include "ptoc/calibrate/Measurements.h"
#include "ptoc/target/DeviceSpec.h"

namespace ptoc::calibrate {

/// Simulates one measured kernel of a set on a device.
using KernelSimulator = std::function<absl::StatusOr<SimulatedKernel>(
    const MeasurementSet &, const MeasuredKernel &, const target::DeviceSpec &)>;

/// The fields fitted when none are named: the rates, latencies and start-up costs
/// public data pin down least (docs/fidelity.md).
std::vector<std::string> defaultFitFields();

/// Options (one struct; defaults here).
struct CalibrationOptions {
  /// Device field paths to fit ("memory.core_hbm_bytes_per_cycle"); empty = the
  /// defaults. Counts and sizes cannot be fitted.
  std::vector<std::string> fields;
  /// Each field stays within [start / maxFactor, start * maxFactor] (a field that
  /// starts at 0 within [0, a field-kind scale]), and always within its device range.
  double maxFactor = 4;
  /// Simulations of the whole point set one fit may spend.
  int maxEvaluations = 200;
  /// Cross-validation folds (0 = none): points are dealt round-robin into folds; each
  /// fold is predicted by a fit on the others.
  int folds = 4;
  /// Called after each evaluation of the main fit (evaluations so far, current error).
  std::function<void(int, double)> progress;
};

/// One fitted field.
struct FieldChange {
  std::string path;
  double before = 0, after = 0;
  double lo = 0, hi = 0;        ///< its bounds in this fit
  bool atBound = false;         ///< ended at a bound: the data would move it further
};

/// One set's error before and after.
struct SetChange {
  std::string name;
  size_t points = 0;
  double mapeBefore = 0, mapeAfter = 0;
  double spearmanBefore = 1, spearmanAfter = 1;
  /// Sets of alternatives: the measured fastest point and the simulated fastest before
  /// and after (labels; empty for other sets).
  std::string measuredBest = {}, bestBefore = {}, bestAfter = {};
};

struct CalibrationResult {
  target::DeviceSpec device;      ///< the start with the fitted fields (validated)
  std::vector<FieldChange> fields;
  std::vector<SetChange> sets;
  double mapeBefore = 0, mapeAfter = 0; ///< over every point
  /// Mean error of each fold's points under a fit made without them (-1 without
  /// cross-validation).
  double crossValidatedMape = -1;
  int folds = 0;
  int evaluations = 0;            ///< of the main fit
};

/// Fits `options.fields` of `start` to `sets`. Errors: an unknown or unfittable field,
/// no points, a kernel that does not compile or simulate (named by its set and
/// point), or a start device that fails its checks. The result's device always
/// passes DeviceSpec::validate().
absl::StatusOr<CalibrationResult> calibrate(const std::vector<MeasurementSet> &sets,
                                            const target::DeviceSpec &start,
                                            const KernelSimulator &simulate,
                                            const CalibrationOptions &options = {});

} // namespace ptoc::calibrate
