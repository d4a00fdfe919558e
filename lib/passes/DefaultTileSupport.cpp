// Text and cycle estimates default-tiles and its tile rules share (see
// DefaultTileSupport.h).
#include "DefaultTileSupport.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

#include "ptoc/target/DeviceSpec.h"

namespace ptoc::passes::default_tiles {

std::string bytesText(int64_t bytes) {
  if (bytes < 1024) return absl::StrCat(bytes, " B");
  if (bytes % 1024 == 0) return absl::StrCat(bytes / 1024, " KiB");
  return absl::StrFormat("%.1f KiB", double(bytes) / 1024);
}

std::string listText(llvm::ArrayRef<int64_t> v) { return absl::StrJoin(v, ", "); }

std::string tilesOnCores(llvm::StringRef tiles, int64_t count, int64_t cores, llvm::StringRef kind,
                         bool merged) {
  if (!merged) {
    int64_t waves = ceilDiv(count, std::max<int64_t>(cores, 1));
    return absl::StrCat(tiles.str(), " = ", waves, waves == 1 ? " wave" : " waves", " of ", cores,
                        " ", kind.str());
  }
  cores = std::max<int64_t>(cores, 1);
  if (count < cores)
    return absl::StrCat(tiles.str(), " for ", cores, " ", kind.str(), " cores before merging");
  std::string share = count % cores == 0 ? absl::StrCat(count / cores)
                                         : absl::StrFormat("%.1f", double(count) / double(cores));
  return absl::StrCat(tiles.str(), ", ", share, " per ", kind.str(), " core before merging");
}

double pipelinedCycles(int64_t n, double sum, double slowest) {
  return sum + double(std::max<int64_t>(n - 1, 0)) * slowest;
}

double spanCycles(int64_t tasks, double taskCycles, int64_t cores, bool successors,
                  const target::DeviceSpec &d) {
  const target::SchedulerSpec &s = d.scheduler;
  int64_t threads = std::max(s.threads, 1);
  int64_t waves = ceilDiv(tasks, cores);
  double span = double(ceilDiv(std::min(tasks, cores), threads)) * s.dispatchCycles +
                double(waves) * taskCycles;
  if (waves > 1) {
    double perTask = s.dispatchCycles + s.completionCycles +
                     (successors ? s.dependencyResolveCycles : 0.0);
    span = std::max(span, double(tasks) * perTask / double(threads));
  }
  return span;
}

} // namespace ptoc::passes::default_tiles
