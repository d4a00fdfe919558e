// The options every merge pass (partition, nbuffer-merge, cube-nbuffer-merge,
// l1-reuse-merge) shares, declared once: their rows (name, help, bounds) and their
// default values. Each pass's options struct (Passes.h) holds the field; its row in
// the pass's file is the helper below.
#pragma once

#include <cstdint>

#include "ptoc/passes/PassOptions.h"

namespace ptoc::passes {

/// mg-copyin-upper-bound's "no cap" (the default of partition and the NBuffer merges).
inline constexpr int64_t kNoCopyInCap = -1;
/// l1-reuse-merge's default mg-copyin-upper-bound: 1 MiB, PyPTO's early default (later
/// PyPTO versions raised it to 100 MiB). The one per-pass default of a shared option:
/// L1 reuse runs in the default pipeline, and its results are measured with this cap.
inline constexpr int64_t kL1ReuseCopyInCap = int64_t(1) << 20;
/// merge-fuel's "unlimited".
inline constexpr int64_t kUnlimitedFuel = -1;

/// The `mg-copyin-upper-bound` row of a merge pass (`field` holds it): one name, help
/// and bounds for every pass declaring it; the default is the field's initializer.
template <typename Options>
constexpr OptionRow<Options> copyInUpperBoundRow(int64_t Options::*field) {
  return {"mg-copyin-upper-bound", field,
          "byte cap on the copy-in of a merged subgraph; -1 no cap", double(kNoCopyInCap)};
}
/// The `merge-fuel` row of a merge pass (`field` holds it).
template <typename Options> constexpr OptionRow<Options> mergeFuelRow(int64_t Options::*field) {
  return {"merge-fuel", field, "merges allowed before stopping (bisection); -1 unlimited",
          double(kUnlimitedFuel)};
}

} // namespace ptoc::passes
