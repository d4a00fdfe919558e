// The runtime, debug and host options, declared once: each option's Python name and
// dict, the field of the session's option structs it sets (whose initializer is its
// default), its bounds, its help, and the flag the `ptoc` commands spell it with.
// Python's option dicts (python/ptoc/options.py, through `_ptoc.option_table()`) and
// the commands' rows (lib/tools, tableOption) are views of this table.
#pragma once

#include <cstdint>
#include <optional>
#include <variant>

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include "ptoc/session/Session.h"

namespace ptoc::session {

/// The Python dict an option belongs to.
enum class OptionDict : uint8_t { Runtime, Debug, Host };
/// "runtime_options", "debug_options", "host_options".
llvm::StringRef optionDictName(OptionDict d);

/// The field an option sets in the options of one call. Its type is the option's
/// kind: a bool, an integer (checked against the row's bounds), a string, or a Stage
/// (one of stageName()'s names). std::monostate: the option has no field in the
/// structs (a Python-only option; the row declares its default).
using OptionField = std::variant<std::monostate, bool *, int *, unsigned *, int64_t *,
                                 std::string *, Stage *>;

/// One option.
struct SessionOption {
  /// Python's name ("device_sched_mode"); also the `ptoc` flag's help starts with it.
  const char *name;
  OptionDict dict;
  /// The field it sets in `compile` or `run`.
  OptionField (*field)(CompileOptions &compile, RunOptions &run);
  const char *help;
  /// Inclusive bounds of an integer option.
  std::optional<int64_t> min = std::nullopt, max = std::nullopt;
  /// The `ptoc run` flag ("" = none). A bool whose flag starts with "no-" is on by
  /// default and the flag clears it (`--no-numerics`).
  const char *flag = "";
  /// The flag's value placeholder in help ("N", "DIR").
  const char *valueName = "";
  /// What help shows as the default when the field's value does not say it ("" = the
  /// value): an empty output_dir means "$PTOC_OUTPUT_DIR, else ./output".
  const char *shownDefault = "";
  /// Python's default where Python has a policy of its own (use_tune_bank: @ptoc.jit
  /// consults the knowledge bank, a C++ compile does not unless asked) or the option
  /// has no field (compile_debug_mode); unset: the field's initializer.
  std::optional<int64_t> pythonDefault = std::nullopt;
};

/// Every runtime, debug and host option, by dict, then in the order Python lists them.
llvm::ArrayRef<SessionOption> sessionOptions();
/// The option named `name` (Python's name), or null.
const SessionOption *findSessionOption(llvm::StringRef name);

} // namespace ptoc::session
