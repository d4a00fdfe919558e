// The NBuffer merge both `nbuffer-merge` (AIV) and `cube-nbuffer-merge` (AIC) run:
// only the core kind and the option names differ. Internal to lib/passes.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "llvm/ADT/StringRef.h"

#include "ptoc/passes/MergeRules.h"
#include "ptoc/passes/Pass.h"
#include "ptoc/passes/PassOptions.h"
#include "ptoc/target/CoreKind.h"

namespace ptoc::passes {

/// What an NBuffer merge pass asks of the merge.
struct NBufferMergeRequest {
  target::CoreKind core;  ///< only groups of this core kind are merged
  int64_t mode = 0;       ///< 0 off, 1 automatic, 2 from `setting`
  GroupSetting setting;   ///< group -> N (GroupSetting.h), -1 = default
  int64_t cores = 1;      ///< the parallelism the automatic N keeps (< 0: the device's)
  /// mg_copyin_upper_bound: a chunk stops growing before its copy-in bytes would
  /// exceed this; -1 = no cap.
  int64_t copyInUpperBound = -1;
  /// The loop-body rule (controlThreadTaskCycles): whether the groups of the other
  /// core kind are still to be merged by the same rule (nbuffer-merge: the default
  /// pipeline runs cube-nbuffer-merge after it) or count as they are
  /// (cube-nbuffer-merge: nbuffer-merge has run).
  bool otherKindMergesLater = false;
};

/// The pass object both NBuffer passes are: `argument` names it (statistics, logs),
/// `settingName` names its setting option in errors.
std::unique_ptr<Pass> createNBufferMergePassFor(llvm::StringRef argument,
                                                llvm::StringRef settingName,
                                                NBufferMergeRequest request, int64_t fuel);

} // namespace ptoc::passes
