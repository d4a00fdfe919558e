// PassKnobs: the user's pass options by their Python names (`pg_lower_bound`,
// `vec_nbuffer_setting`, ...), validated, and the default pipeline they configure
// (pipeline policy, beside defaultPipelineText()).
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "llvm/ADT/StringRef.h"
#include "ptoc/passes/PassOptions.h"

namespace ptoc::passes {

/// A set of pass knobs. Each knob is an option of one or more passes of the default
/// pipeline (a knob declared by several passes, e.g. `mg_copyin_upper_bound`, sets
/// all of them). Knobs are spelled with underscores (dashes are accepted too).
class PassKnobs {
public:
  /// Sets a knob, checking its name (the error lists every valid name), kind and
  /// range. `sg_set_scope` is not a pipeline knob: it tags the ops created after it
  /// (GraphBuilder::setScope), so it is rejected here with that advice.
  absl::Status set(llvm::StringRef name, const OptionValue &value);
  /// The same with the value written as text (`4`, `true`, `{0: 4, -1: 2}`).
  absl::Status setText(llvm::StringRef name, llvm::StringRef text);

  bool empty() const { return values_.empty(); }
  /// The knobs set, by underscore name.
  const std::map<std::string, OptionValue> &values() const { return values_; }

  /// The default pipeline (passes::defaultPipelineText) with these knobs applied. With
  /// `throughExpandTiles`, only the passes up to expand-tiles (the tile stage).
  std::string pipeline(bool throughExpandTiles = false) const;

  /// Every knob name a user may set (sorted, underscores), `sg_set_scope` included.
  static std::vector<std::string> names();
  /// The knob's declaration (kind, default, bounds, help) from the first pass of the
  /// pipeline declaring it, or null for an unknown name or `sg_set_scope`.
  static const PassOptionDecl *find(llvm::StringRef name);
  /// The knob's default in each pass of the pipeline declaring it, as (pass argument,
  /// default) in pipeline order; empty for an unknown name. A shared knob usually has
  /// one default; `mg_copyin_upper_bound` has a documented per-pass one (1 MiB in
  /// l1-reuse-merge, no cap elsewhere: MergeOptions.h).
  static std::vector<std::pair<std::string, OptionValue>> defaults(llvm::StringRef name);

private:
  std::map<std::string, OptionValue> values_;
};

} // namespace ptoc::passes
