// The device fit (see Calibrator.h): a bounded, deterministic pattern search over
// the chosen fields, minimising the mean absolute percentage error over every point.
#include "ptoc/calibrate/Calibrator.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace ptoc::calibrate {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

/// A point of one set, as the fit sees it.
struct PointRef {
  size_t set, point;
};

/// A fitted field's coordinate: u in [0, 1] maps to its bounds, logarithmically when
/// the lower bound is positive (rates and costs spread over factors), else linearly.
struct Coordinate {
  std::string path;
  double lo = 0, hi = 0;
  double value(double u) const {
    if (lo > 0) return lo * std::pow(hi / lo, u);
    return lo + u * (hi - lo);
  }
  double position(double v) const {
    if (hi <= lo) return 0;
    if (lo > 0) return std::log(v / lo) / std::log(hi / lo);
    return (v - lo) / (hi - lo);
  }
};

/// The scale of a field that starts at 0: a fixed cost of up to 1000 cycles or 10 us.
double zeroScale(const std::string &path) {
  llvm::StringRef p(path);
  if (p.endswith("_us")) return 10;
  return 1000;
}

absl::StatusOr<std::vector<Coordinate>> coordinates(const target::DeviceSpec &start,
                                                    const std::vector<std::string> &fields,
                                                    double maxFactor) {
  if (fields.empty())
    return absl::InvalidArgumentError("calibrate: no device fields to fit");
  if (!(maxFactor > 1))
    return absl::InvalidArgumentError(
        absl::StrCat("calibrate: the bound factor must be above 1, got ", maxFactor));
  std::vector<Coordinate> out;
  for (const std::string &path : fields) {
    absl::StatusOr<target::DeviceSpec::FieldInfo> info = target::DeviceSpec::fieldInfo(path);
    if (!info.ok()) return info.status();
    if (info->integral)
      return absl::InvalidArgumentError(absl::StrCat(
          "calibrate: '", path, "' is a count or a size; calibrate fits rates, latencies and "
          "fixed costs (e.g. ", absl::StrJoin(defaultFitFields(), ", "), ")"));
    if (std::find_if(out.begin(), out.end(), [&](const Coordinate &c) { return c.path == path; }) !=
        out.end())
      return absl::InvalidArgumentError(absl::StrCat("calibrate: '", path, "' is named twice"));
    double v = *start.numericField(path);
    Coordinate c;
    c.path = path;
    if (v > 0) {
      c.lo = std::max(info->min, v / maxFactor);
      c.hi = std::min(info->max, v * maxFactor);
    } else {
      c.lo = std::max(0.0, info->min);
      c.hi = std::min(info->max, zeroScale(path));
    }
    out.push_back(c);
  }
  return out;
}

/// Simulates the chosen points on `device`; +inf when the device fails its checks.
class Evaluator {
public:
  Evaluator(const std::vector<MeasurementSet> &sets, const KernelSimulator &simulate)
      : sets_(sets), simulate_(simulate) {}

  /// Simulated kernel times of `points` (in their order), or an error.
  absl::StatusOr<std::vector<SimulatedKernel>> run(const target::DeviceSpec &device,
                                                   const std::vector<PointRef> &points) {
    std::vector<SimulatedKernel> out;
    for (const PointRef &p : points) {
      absl::StatusOr<SimulatedKernel> s =
          simulate_(sets_[p.set], sets_[p.set].points[p.point], device);
      if (!s.ok()) return s.status();
      out.push_back(*s);
    }
    return out;
  }

  /// MAPE over `points`.
  absl::StatusOr<double> error(const target::DeviceSpec &device,
                               const std::vector<PointRef> &points) {
    if (!device.validate().ok()) return kInfinity;
    absl::StatusOr<std::vector<SimulatedKernel>> sim = run(device, points);
    if (!sim.ok()) return sim.status();
    std::vector<double> measured, simulated;
    for (size_t i = 0; i < points.size(); ++i) {
      measured.push_back(sets_[points[i].set].points[points[i].point].measuredUs);
      simulated.push_back((*sim)[i].kernelUs);
    }
    return meanAbsolutePercentageError(measured, simulated);
  }

private:
  const std::vector<MeasurementSet> &sets_;
  const KernelSimulator &simulate_;
};

target::DeviceSpec withValues(const target::DeviceSpec &start,
                              const std::vector<Coordinate> &coords,
                              const std::vector<double> &u) {
  target::DeviceSpec d = start;
  for (size_t i = 0; i < coords.size(); ++i)
    (void)d.setNumericField(coords[i].path, coords[i].value(u[i]));
  return d;
}

struct FitOutcome {
  std::vector<double> u;
  double error = 0;
  int evaluations = 0;
};

/// Hooke-Jeeves pattern search: explore each coordinate a step up and down keeping
/// what improves; after an exploration that improved, also try continuing in the
/// direction it moved (so correlated fields can travel together); when nothing
/// improves, halve the step. Deterministic.
absl::StatusOr<FitOutcome> fit(Evaluator &eval, const target::DeviceSpec &start,
                               const std::vector<Coordinate> &coords,
                               const std::vector<PointRef> &points, int maxEvaluations,
                               const std::function<void(int, double)> &progress) {
  FitOutcome best;
  for (const Coordinate &c : coords)
    best.u.push_back(std::clamp(c.position(*start.numericField(c.path)), 0.0, 1.0));
  absl::StatusOr<double> e = eval.error(withValues(start, coords, best.u), points);
  if (!e.ok()) return e.status();
  best.error = *e;
  best.evaluations = 1;
  if (progress) progress(best.evaluations, best.error);
  // Evaluates `u`; true (and `best` updated) if it improves by a relative margin, so
  // rounding noise cannot drive the search.
  auto tryPoint = [&](const std::vector<double> &u, FitOutcome &at) -> absl::StatusOr<bool> {
    if (best.evaluations >= maxEvaluations) return false;
    absl::StatusOr<double> err = eval.error(withValues(start, coords, u), points);
    if (!err.ok()) return err.status();
    ++best.evaluations;
    bool better = *err < at.error * (1 - 1e-9);
    if (better) {
      at.u = u;
      at.error = *err;
    }
    if (progress) progress(best.evaluations, std::min(best.error, at.error));
    return better;
  };
  // Explores every coordinate around `base`; returns the best point found.
  auto explore = [&](FitOutcome base, double step) -> absl::StatusOr<FitOutcome> {
    for (size_t i = 0; i < coords.size(); ++i)
      for (double dir : {+1.0, -1.0}) {
        std::vector<double> u = base.u;
        u[i] = std::clamp(u[i] + dir * step, 0.0, 1.0);
        if (u[i] == base.u[i]) continue;
        absl::StatusOr<bool> better = tryPoint(u, base);
        if (!better.ok()) return better.status();
        if (*better) break;
      }
    return base;
  };
  constexpr double kFirstStep = 0.25, kLastStep = 1.0 / 1024;
  for (double step = kFirstStep; step >= kLastStep && best.evaluations < maxEvaluations;) {
    absl::StatusOr<FitOutcome> moved = explore(best, step);
    if (!moved.ok()) return moved.status();
    if (moved->error >= best.error) {
      step /= 2;
      continue;
    }
    // Pattern moves: keep going the way the exploration went while it pays.
    while (best.evaluations < maxEvaluations) {
      FitOutcome previous = best;
      best.u = moved->u;
      best.error = moved->error;
      std::vector<double> ahead = best.u;
      for (size_t i = 0; i < ahead.size(); ++i)
        ahead[i] = std::clamp(2 * best.u[i] - previous.u[i], 0.0, 1.0);
      FitOutcome trial = best;
      absl::StatusOr<bool> better = tryPoint(ahead, trial);
      if (!better.ok()) return better.status();
      if (!*better) break;
      moved = explore(trial, step);
      if (!moved.ok()) return moved.status();
    }
  }
  return best;
}

} // namespace

std::vector<std::string> defaultFitFields() {
  return {"memory.core_hbm_bytes_per_cycle", "memory.hbm_bytes_per_second",
          "memory.l2_bytes_per_second",      "memory.gm_latency_cycles",
          "pipes.nd2nz_bytes_per_cycle",     "pipes.gm_to_ub_bytes_per_cycle",
          "compute.vector_latency_cycles",   "plain_kernel_start_us",
          "plain_cube_kernel_start_us",      "plain_block_cycles"};
}

absl::StatusOr<CalibrationResult> calibrate(const std::vector<MeasurementSet> &sets,
                                            const target::DeviceSpec &start,
                                            const KernelSimulator &simulate,
                                            const CalibrationOptions &options) {
  if (absl::Status st = start.validate(); !st.ok()) return st;
  std::vector<PointRef> all;
  for (size_t s = 0; s < sets.size(); ++s)
    for (size_t p = 0; p < sets[s].points.size(); ++p) all.push_back({s, p});
  if (all.empty()) return absl::InvalidArgumentError("calibrate: no measured kernels to fit");
  absl::StatusOr<std::vector<Coordinate>> coords = coordinates(
      start, options.fields.empty() ? defaultFitFields() : options.fields, options.maxFactor);
  if (!coords.ok()) return coords.status();
  if (options.maxEvaluations < 1)
    return absl::InvalidArgumentError(
        absl::StrCat("calibrate: the evaluation budget must be at least 1, got ",
                     options.maxEvaluations));

  Evaluator eval(sets, simulate);
  absl::StatusOr<FitOutcome> outcome =
      fit(eval, start, *coords, all, options.maxEvaluations, options.progress);
  if (!outcome.ok()) return outcome.status();

  CalibrationResult result;
  result.device = withValues(start, *coords, outcome->u);
  if (absl::Status st = result.device.validate(); !st.ok())
    return absl::InternalError(absl::StrCat(
        "calibrate: internal error (a bug in ptoc, not in the measurements): the fitted "
        "device fails its checks: ", st.message()));
  result.evaluations = outcome->evaluations;
  for (size_t i = 0; i < coords->size(); ++i) {
    const Coordinate &c = (*coords)[i];
    FieldChange f;
    f.path = c.path;
    f.before = *start.numericField(c.path);
    f.after = *result.device.numericField(c.path);
    f.lo = c.lo;
    f.hi = c.hi;
    f.atBound = f.after != f.before && (outcome->u[i] <= 0 || outcome->u[i] >= 1);
    result.fields.push_back(f);
  }

  // Per set, before and after.
  absl::StatusOr<std::vector<SimulatedKernel>> before = eval.run(start, all);
  if (!before.ok()) return before.status();
  absl::StatusOr<std::vector<SimulatedKernel>> after = eval.run(result.device, all);
  if (!after.ok()) return after.status();
  std::vector<double> measured, simBefore, simAfter;
  size_t k = 0;
  for (const MeasurementSet &set : sets) {
    std::vector<SimulatedKernel> b(before->begin() + k, before->begin() + k + set.points.size());
    std::vector<SimulatedKernel> a(after->begin() + k, after->begin() + k + set.points.size());
    k += set.points.size();
    SetFidelity fb = compare(set, b), fa = compare(set, a);
    SetChange change{set.name, set.points.size(), fb.mape, fa.mape, fb.spearman, fa.spearman};
    if (fb.hasBest) {
      change.measuredBest = fb.measuredBest;
      change.bestBefore = fb.simulatedBest;
      change.bestAfter = fa.simulatedBest;
    }
    result.sets.push_back(change);
    for (size_t i = 0; i < set.points.size(); ++i) {
      measured.push_back(set.points[i].measuredUs);
      simBefore.push_back(b[i].kernelUs);
      simAfter.push_back(a[i].kernelUs);
    }
  }
  result.mapeBefore = meanAbsolutePercentageError(measured, simBefore);
  result.mapeAfter = meanAbsolutePercentageError(measured, simAfter);

  // Cross-validation: deal the points into folds; fit without each fold, judge on it.
  int folds = std::min<int>(options.folds, static_cast<int>(all.size()));
  if (folds >= 2) {
    std::vector<double> heldMeasured, heldSimulated;
    for (int f = 0; f < folds; ++f) {
      std::vector<PointRef> train, test;
      for (size_t i = 0; i < all.size(); ++i)
        (static_cast<int>(i % folds) == f ? test : train).push_back(all[i]);
      absl::StatusOr<FitOutcome> o =
          fit(eval, start, *coords, train, options.maxEvaluations, nullptr);
      if (!o.ok()) return o.status();
      absl::StatusOr<std::vector<SimulatedKernel>> sim =
          eval.run(withValues(start, *coords, o->u), test);
      if (!sim.ok()) return sim.status();
      for (size_t i = 0; i < test.size(); ++i) {
        heldMeasured.push_back(sets[test[i].set].points[test[i].point].measuredUs);
        heldSimulated.push_back((*sim)[i].kernelUs);
      }
    }
    result.folds = folds;
    result.crossValidatedMape = meanAbsolutePercentageError(heldMeasured, heldSimulated);
  }
  return result;
}

} // namespace ptoc::calibrate
