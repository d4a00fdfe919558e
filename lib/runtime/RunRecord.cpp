// RunRecord helpers: the bound's total and limiter, utilisation and L2 hit rate.
#include "ptoc/runtime/RunRecord.h"

#include <algorithm>

namespace ptoc::runtime {

const char *kernelKindName(KernelKind kind) {
  return kind == KernelKind::Plain ? "plain" : "aicpu";
}

double RooflineBound::totalCycles() const {
  return headCycles + startCycles + std::max({cubeCycles, vectorCycles, hbmCycles});
}

const char *RooflineBound::limiter() const {
  if (cubeCycles >= vectorCycles && cubeCycles >= hbmCycles) return "cube";
  if (vectorCycles >= hbmCycles) return "vector";
  return "hbm";
}

double RunRecord::utilization(target::CoreKind kind) const {
  int first = kind == target::CoreKind::AIC ? 0 : aicCores;
  int count = kind == target::CoreKind::AIC ? aicCores : aivCores;
  double span = makespanCycles - bound.headCycles;
  if (count == 0 || span <= 0) return 0;
  double busy = 0;
  for (int i = first; i < first + count && i < static_cast<int>(coreBusyCycles.size()); ++i)
    busy += coreBusyCycles[i];
  return busy / (span * count);
}

double RunRecord::l2HitRate() const {
  int64_t reads = l2ReadHitBytes + l2ReadMissBytes;
  return reads == 0 ? 0.0 : static_cast<double>(l2ReadHitBytes) / static_cast<double>(reads);
}

} // namespace ptoc::runtime
