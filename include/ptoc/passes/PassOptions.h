// Typed pass options: declarations (name, type, default, help) and parsed values.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"
#include "llvm/ADT/StringRef.h"
#include "ptoc/passes/GroupSetting.h"

namespace ptoc::passes {

/// The value types a pass option can have. GroupSetting is the `*_setting` form
/// `{0: 4, func1_2: 8, -1: 2}` (group -> count; GroupSetting.h).
enum class OptionKind : uint8_t { Bool, Int, Float, String, GroupSetting };

using OptionValue = std::variant<bool, int64_t, double, std::string, GroupSetting>;

/// One option a pass accepts. Names use dashes (`pg-lower-bound`); the parser also
/// accepts underscores (`pg_lower_bound`), the spelling of the Python API.
struct PassOptionDecl {
  std::string name;
  OptionKind kind;
  OptionValue defaultValue;
  std::string help;
  /// Inclusive bounds for Int/Float options.
  double min = -1e300;
  double max = 1e300;
};

/// Parses one option value written as text, checking kind and bounds; the error
/// names the option and what is accepted.
absl::StatusOr<OptionValue> parseOptionValue(const PassOptionDecl &decl, llvm::StringRef text);
/// The text form of a value (parses back to the same value).
std::string optionValueToString(const OptionValue &v);
std::string_view optionKindName(OptionKind k);

/// The values of all of one pass's options (defaults filled in).
class PassOptionValues {
public:
  PassOptionValues() = default;
  /// `passName` (may be empty) is named in error messages ("of pass 'partition'").
  explicit PassOptionValues(const std::vector<PassOptionDecl> &decls,
                            llvm::StringRef passName = "");

  /// Sets `name` from text; error if the name is unknown (listing the valid names)
  /// or the value does not parse.
  absl::Status set(llvm::StringRef name, llvm::StringRef valueText);
  /// Text too (without these, a literal or std::string would be ambiguous between
  /// the StringRef and the OptionValue overloads).
  absl::Status set(llvm::StringRef name, const char *valueText) {
    return set(name, llvm::StringRef(valueText));
  }
  absl::Status set(llvm::StringRef name, const std::string &valueText) {
    return set(name, llvm::StringRef(valueText));
  }
  /// Sets an already-typed value (from the Python layer); same checks.
  absl::Status set(llvm::StringRef name, const OptionValue &value);

  bool getBool(llvm::StringRef name) const;
  int64_t getInt(llvm::StringRef name) const;
  double getFloat(llvm::StringRef name) const;
  const std::string &getString(llvm::StringRef name) const;
  const GroupSetting &getGroupSetting(llvm::StringRef name) const;
  /// Whether `name` was set explicitly (not left at its default).
  bool isExplicit(llvm::StringRef name) const;

  /// `{a=1 b=true}` listing explicitly set options in declaration order; "" if none.
  std::string str() const;

private:
  const PassOptionDecl *find(llvm::StringRef name) const;
  const OptionValue &get(llvm::StringRef name) const;
  std::string passName_;
  std::vector<PassOptionDecl> decls_;
  std::vector<OptionValue> values_;
  std::vector<bool> explicit_;
};

/// One option of a pass, declared once: its name, the field of the pass's options
/// struct it sets (its kind follows the field's type, its default is the struct's
/// default member initializer), its help, and bounds for numbers. A pass lists its
/// rows in one array; declareOptions() and readOptions() derive the registry's
/// declarations and the factory's struct from it.
template <typename Options> struct OptionRow {
  using Field = std::variant<bool Options::*, int64_t Options::*, double Options::*,
                             std::string Options::*, GroupSetting Options::*>;
  const char *name;
  Field field;
  const char *help;
  double min = -1e300;
  double max = 1e300;
};

// A row's field is a variant over a pointer to a member of every option type, so the
// visits below compile an access of each type for every options struct, also of types
// the struct has no member of. Those branches never run (a row's alternative is always
// a member the struct has), but GCC 12 cannot rule them out and warns about them
// (-Warray-bounds, -Wmaybe-uninitialized) where they are inlined.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Warray-bounds"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

/// The declarations of `rows` (defaults from a default-constructed `Options`).
template <typename Options, size_t N>
std::vector<PassOptionDecl> declareOptions(const OptionRow<Options> (&rows)[N]) {
  const Options defaults{};
  std::vector<PassOptionDecl> decls;
  for (const OptionRow<Options> &row : rows) {
    PassOptionDecl d;
    d.name = row.name;
    d.help = row.help;
    d.min = row.min;
    d.max = row.max;
    std::visit(
        [&](auto member) {
          using T = std::decay_t<decltype(defaults.*member)>;
          d.kind = std::is_same_v<T, bool>      ? OptionKind::Bool
                   : std::is_same_v<T, int64_t> ? OptionKind::Int
                   : std::is_same_v<T, double>  ? OptionKind::Float
                   : std::is_same_v<T, GroupSetting> ? OptionKind::GroupSetting
                                                : OptionKind::String;
          d.defaultValue = defaults.*member;
        },
        row.field);
    decls.push_back(std::move(d));
  }
  return decls;
}

/// The options struct with every row's field set from `values`.
template <typename Options, size_t N>
Options readOptions(const OptionRow<Options> (&rows)[N], const PassOptionValues &values) {
  Options out{};
  for (const OptionRow<Options> &row : rows)
    std::visit(
        [&](auto member) {
          using T = std::decay_t<decltype(out.*member)>;
          if constexpr (std::is_same_v<T, bool>) out.*member = values.getBool(row.name);
          else if constexpr (std::is_same_v<T, int64_t>) out.*member = values.getInt(row.name);
          else if constexpr (std::is_same_v<T, double>) out.*member = values.getFloat(row.name);
          else if constexpr (std::is_same_v<T, GroupSetting>)
            out.*member = values.getGroupSetting(row.name);
          else out.*member = values.getString(row.name);
        },
        row.field);
  return out;
}

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

} // namespace ptoc::passes
