// The space an autotuner searches: ordered named knobs, each with a finite list of values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/JSON.h"

namespace ptoc::tune {

/// One value of a knob, as it appears in JSON: an integer (a merge count, a scheduler
/// mode), a flag, a string, or a list of integers (a tile shape such as [64, 512]; a
/// cube tile is the session's business and may be flattened to
/// [mL0, mL1, kL0, kL1, nL0, nL1]). Values compare by type, then contents.
using KnobValue = std::variant<int64_t, bool, std::string, std::vector<int64_t>>;

/// The JSON form of a value: a number, a bool, a string or an array of numbers.
llvm::json::Value knobValueToJson(const KnobValue &value);
/// Parses a value from its JSON form; `where` names it in errors.
absl::StatusOr<KnobValue> knobValueFromJson(const llvm::json::Value &json,
                                            llvm::StringRef where);
/// The value as compact JSON text, for messages and progress lines.
std::string knobValueToString(const KnobValue &value);

/// Which core kind a knob mostly affects; `auto` strategy choice looks at it.
enum class DimensionKind { Other, Cube, Vector };

/// "other", "cube" or "vector".
llvm::StringRef dimensionKindName(DimensionKind kind);

/// One knob: a name (the key in a config's JSON, e.g. "vec_tile[0]" or
/// "device_sched_mode"), its candidate values in a meaningful order (strategies that
/// search locally treat neighbouring values as similar), and its kind.
struct Dimension {
  std::string name;
  std::vector<KnobValue> values;
  DimensionKind kind = DimensionKind::Other;
};

/// A point of the space: the index of the chosen value in each dimension, in the
/// space's dimension order.
using Config = std::vector<std::size_t>;

/// An ordered list of dimensions. The space is their Cartesian product.
class SearchSpace {
public:
  /// Appends a dimension. Fails (and changes nothing) if the name is empty or already
  /// used, if there are no values, or if a value is listed twice (two equal values
  /// would be one candidate evaluated twice).
  absl::Status addDimension(Dimension dimension);

  const std::vector<Dimension> &dimensions() const { return dimensions_; }
  std::size_t numDimensions() const { return dimensions_.size(); }
  /// The index of the dimension named `name`, or -1.
  int findDimension(llvm::StringRef name) const;
  /// True if some dimension is flagged Cube.
  bool hasCubeDimension() const;

  /// The number of configs (the product of the dimension sizes); saturates at
  /// UINT64_MAX, in which case `isEnumerable()` is false. An empty space (no
  /// dimensions) has exactly one config: the empty one.
  uint64_t size() const;
  /// True if every config has a 64-bit ordinal (`size()` did not saturate).
  bool isEnumerable() const;

  /// The config with ordinal `ordinal` in enumeration order: mixed radix with the last
  /// dimension varying fastest. Requires isEnumerable() and ordinal < size().
  Config configAt(uint64_t ordinal) const;
  /// The ordinal of `config` (inverse of configAt). Requires isEnumerable() and a
  /// config that `isValid`.
  uint64_t ordinalOf(const Config &config) const;
  /// True if `config` has one in-range index per dimension.
  bool isValid(const Config &config) const;

  /// Calls `visit` for every config in enumeration order, stopping early when it
  /// returns false. Works for any size (it never materialises the space).
  void enumerate(const std::function<bool(const Config &)> &visit) const;

  /// The JSON of a config: `{"dim": value, ...}` (llvm::json prints keys sorted).
  llvm::json::Object configToJson(const Config &config) const;
  /// Parses a config from its JSON: every dimension must be present with one of its
  /// values, and no unknown key may appear. Errors name the dimension and the value.
  absl::StatusOr<Config> configFromJson(const llvm::json::Value &json) const;
  /// The config as compact JSON text, for progress and result lines.
  std::string configToString(const Config &config) const;

  /// The space's own JSON: `[{"name": .., "kind": .., "values": [..]}, ...]`, in
  /// dimension order, and its parser.
  llvm::json::Array toJson() const;
  static absl::StatusOr<SearchSpace> fromJson(const llvm::json::Value &json);

private:
  std::vector<Dimension> dimensions_;
};

} // namespace ptoc::tune
