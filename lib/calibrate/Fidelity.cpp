// Fidelity metrics (see Fidelity.h).
#include "ptoc/calibrate/Fidelity.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace ptoc::calibrate {
namespace {

/// Ranks 1..n, ties sharing their average rank.
std::vector<double> ranks(const std::vector<double> &v) {
  std::vector<size_t> order(v.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return v[a] < v[b]; });
  std::vector<double> r(v.size());
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j + 1 < order.size() && v[order[j + 1]] == v[order[i]]) ++j;
    double rank = (static_cast<double>(i) + static_cast<double>(j)) / 2.0 + 1.0;
    for (size_t t = i; t <= j; ++t) r[order[t]] = rank;
    i = j + 1;
  }
  return r;
}

size_t argmin(const std::vector<double> &v) {
  return static_cast<size_t>(std::min_element(v.begin(), v.end()) - v.begin());
}

} // namespace

double meanAbsolutePercentageError(const std::vector<double> &measured,
                                   const std::vector<double> &simulated) {
  if (measured.empty()) return 0;
  double sum = 0;
  for (size_t i = 0; i < measured.size(); ++i)
    sum += std::abs(simulated[i] - measured[i]) / measured[i];
  return sum / static_cast<double>(measured.size());
}

double spearman(const std::vector<double> &a, const std::vector<double> &b) {
  if (a.size() < 2) return 1;
  std::vector<double> ra = ranks(a), rb = ranks(b);
  double n = static_cast<double>(a.size());
  double ma = std::accumulate(ra.begin(), ra.end(), 0.0) / n;
  double mb = std::accumulate(rb.begin(), rb.end(), 0.0) / n;
  double cov = 0, va = 0, vb = 0;
  for (size_t i = 0; i < ra.size(); ++i) {
    cov += (ra[i] - ma) * (rb[i] - mb);
    va += (ra[i] - ma) * (ra[i] - ma);
    vb += (rb[i] - mb) * (rb[i] - mb);
  }
  if (va == 0 || vb == 0) return 1;
  return cov / std::sqrt(va * vb);
}

SetFidelity compare(const MeasurementSet &set, const std::vector<SimulatedKernel> &simulated) {
  SetFidelity f;
  f.name = set.name;
  f.points = set.points.size();
  std::vector<double> measured, sim;
  for (size_t i = 0; i < set.points.size(); ++i) {
    measured.push_back(set.points[i].measuredUs);
    sim.push_back(simulated[i].kernelUs);
  }
  f.mape = meanAbsolutePercentageError(measured, sim);
  f.spearman = spearman(measured, sim);
  if (set.alternatives && !measured.empty()) {
    f.hasBest = true;
    size_t mb = argmin(measured), sb = argmin(sim);
    f.measuredBest = set.points[mb].label;
    f.simulatedBest = set.points[sb].label;
    f.bestIdentified = mb == sb;
  }
  std::map<std::string, int> count;
  for (size_t i = 0; i < set.points.size(); ++i)
    for (const auto &[pipe, share] : set.points[i].measuredBusy) {
      auto it = simulated[i].busy.find(pipe);
      if (it == simulated[i].busy.end()) continue;
      double err = std::abs(it->second - share);
      f.busyMaxError[pipe] = std::max(f.busyMaxError[pipe], err);
      f.busyMeasured[pipe] += share;
      f.busySimulated[pipe] += it->second;
      ++count[pipe];
    }
  for (auto &[pipe, n] : count) {
    f.busyMeasured[pipe] /= n;
    f.busySimulated[pipe] /= n;
  }
  return f;
}

} // namespace ptoc::calibrate
