// GroupSetting: the value of a `*_setting` pass option (vec_nbuffer_setting,
// cube_nbuffer_setting, cube_l1_reuse_setting): a count per isomorphism group, keyed
// by a plain hash order (that group in every root function), by `func<F>_<order>`
// (that group of root function F only, the key the compile statistics, pass logs and
// the summary print) or by -1 (the default), and the one lookup the merge passes make.
#pragma once

#include <compare>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "llvm/ADT/StringRef.h"

namespace ptoc::passes {

/// The key of one setting entry.
struct GroupKey {
  /// `func` of a plain key: it applies in every root function.
  static constexpr int64_t kEveryFunc = -1;
  /// The root function's position in its module (the F of `func<F>_<order>`:
  /// analysis::hashOrderKey), or kEveryFunc.
  int64_t func = kEveryFunc;
  /// The hash order (>= 0), or -1 for the default entry (plain keys only).
  int64_t order = -1;

  constexpr GroupKey() = default;
  /// A plain key: hash order `order` in every root function (-1: the default). Not
  /// explicit, so a setting reads as it is written: `GroupSetting{{0, 4}, {-1, 2}}`.
  constexpr GroupKey(int64_t order) : order(order) {} // NOLINT(google-explicit-constructor)
  /// The key `func<F>_<order>`.
  static constexpr GroupKey inFunc(int64_t func, int64_t order) {
    GroupKey k(order);
    k.func = func;
    return k;
  }

  bool perFunction() const { return func != kEveryFunc; }
  bool isDefault() const { return !perFunction() && order == -1; }
  /// Whether the key names something: a plain hash order >= 0, the default -1, or
  /// `func<F>_<order>` with F >= 0 and order >= 0.
  bool valid() const { return perFunction() ? func >= 0 && order >= 0 : order >= -1; }
  auto operator<=>(const GroupKey &) const = default;
};

/// `3`, `-1` or `func1_0`: the text form (parseGroupKey reads it back).
std::string groupKeyToString(const GroupKey &key);

/// A key written as an integer (`3`, `-1`) or as `func<F>_<order>` (decimal F and
/// order, no sign); surrounding spaces are ignored and so are matching double or
/// single quotes (`"func1_0"`, as Python and JSON write a string key). nullopt for
/// anything else (including `func1_-1`: a per-function key names one group).
std::optional<GroupKey> parseGroupKey(llvm::StringRef text);

/// What a setting's keys may be, for error messages.
inline constexpr const char *kGroupKeyForms =
    "a hash order (an integer; -1 = the default for groups without an entry) or "
    "func<F>_<order> (one root function's group, as the compile statistics and the summary "
    "print it)";

/// Count per group (counts >= 1; what a count means is the option's; or
/// kAutomaticCount).
using GroupSetting = std::map<GroupKey, int64_t>;

/// The count that asks for the option's automatic count for the groups of its key, as
/// if the setting had no entry for them and no -1 default: a group can stay automatic
/// while -1 sets the others (the tuner's "auto" for one group of a kernel that sets -1).
inline constexpr int64_t kAutomaticCount = 0;

/// `{0:4,func1_0:2,-1:1}`: plain hash orders ascending, then per-function keys (by
/// function, then order), then the default; parses back to the same setting.
std::string groupSettingToString(const GroupSetting &setting);

/// The entry that applies to group `order` of root function `func`, the rule of every
/// `*_setting`: its `func<F>_<order>` key, else its plain hash order, else -1; nullopt
/// when the setting has none of them.
std::optional<std::pair<GroupKey, int64_t>> lookupGroupSetting(const GroupSetting &setting,
                                                               unsigned func, int64_t order);

} // namespace ptoc::passes
