// The check every merge pass makes of its `*_setting` option against the module it
// runs on (nbuffer-merge, cube-nbuffer-merge, l1-reuse-merge). Internal to lib/passes.
#pragma once

#include <cstdint>

#include "llvm/ADT/StringRef.h"

#include "ptoc/ir/Module.h"
#include "ptoc/passes/GroupSetting.h"
#include "ptoc/target/CoreKind.h"

namespace ptoc::passes {

/// The merge pass and option a setting belongs to, for the diagnostics.
struct SettingOwner {
  llvm::StringRef pass;         ///< "nbuffer-merge"
  llvm::StringRef option;       ///< "vec-nbuffer-setting"
  llvm::StringRef countMeaning; ///< "N, the subgraphs merged into one"
  target::CoreKind core;        ///< the kind of groups it sets
};

/// Checks `setting` before the pass runs in `mode` over `m`:
///  - an entry whose key is not valid (GroupKey::valid) or whose count is below 1 is
///    an error (in every mode);
///  - in mode 2 (the only mode that reads the setting), a `func<F>_<order>` key whose
///    F is not a root function of `m` (no such position, or a control function) is
///    an error: no tile shape or knob makes it name anything;
///  - in mode 2, a key whose hash order names no group of `owner.core` (for a
///    plain key: in no root function; for `func<F>_<order>`: not in F) is a warning,
///    and the entry is not used: which groups exist depends on the tile shapes (a
///    tuner candidate's tiles may drop a group its setting names).
/// Each diagnostic names the key and lists the valid keys (the groups of the
/// owner's core kind, by the subgraph tables of the partitioned functions). Returns
/// false after an error.
bool checkGroupSetting(ir::Module &m, const GroupSetting &setting, int64_t mode,
                       const SettingOwner &owner);

} // namespace ptoc::passes
