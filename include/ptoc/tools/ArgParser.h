// The argument parser of the `ptoc` commands. Each subcommand declares one table: its
// options (name, the field each sets, value name, help, bounds) and its positional
// arguments. Parsing, the usage line, `--help` and every usage error come from that
// table, and the default a help line shows is the field's value before parsing, so a
// command whose fields live in a default-constructed options struct (session::
// RunOptions, tune::SearchOptions, ...) shows that struct's defaults.
//
// ptoc-opt does not use it: its flags are llvm::cl options, and each pass of the
// pass registry is a flag of its own (`--cse`, `--partition=...`), as in mlir-opt.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

namespace ptoc::tools {

/// Exit statuses of every command: 0 success, 1 an error (or a negative answer:
/// a regression, a bank miss), 2 a usage error.
inline constexpr int kExitOk = 0;
inline constexpr int kExitError = 1;
inline constexpr int kExitUsage = 2;

/// A flag that clears a bool: `--no-numerics` sets `numerics` to false.
struct Negated {
  bool *field;
};
/// An option whose value may be left out: `--tune-bank` sets `given`;
/// `--tune-bank=DIR` also sets `value` (an empty value after '=' is an error).
struct OptionalValue {
  bool *given;
  std::string *value;
};
/// Any other value: `set(flag, text)` parses `text` into the caller's field and
/// returns "" or the whole error message, naming `flag` as the user spelled it.
/// `shown` is the field's default as help prints it.
struct CustomValue {
  std::function<std::string(llvm::StringRef flag, const std::string &text)> set;
  std::string shown;
};

/// The field an option sets. Its type is the option's value kind: a bool is a flag
/// that sets it; integers and doubles are numbers checked against the type's range
/// and the option's bounds; a vector collects a repeatable option's values.
using ArgTarget = std::variant<bool *, Negated, int *, unsigned *, int64_t *, uint64_t *,
                               double *, std::string *, std::vector<std::string> *,
                               OptionalValue, CustomValue>;

/// Bounds of a number, inclusive (unset: the type's range).
struct Bounds {
  std::optional<int64_t> min, max;
  /// A double must lie above `min`, not at it.
  bool minExclusive = false;

  static Bounds between(int64_t lo, int64_t hi) { return {lo, hi, false}; }
  static Bounds atLeast(int64_t lo) { return {lo, std::nullopt, false}; }
  static Bounds atMost(int64_t hi) { return {std::nullopt, hi, false}; }
  /// A number above `lo` and at most `hi`.
  static Bounds above(int64_t lo, int64_t hi) { return {lo, hi, true}; }
};

/// One option: `--name VALUE`, `--name=VALUE`, or `-s VALUE` with a short name.
struct ArgOption {
  std::string name;
  ArgTarget target;
  /// The value's placeholder in help and errors ("N", "DIR"); empty for flags.
  std::string valueName;
  std::string help;
  Bounds bounds = {};
  /// What help shows as the default instead of the field's value ("" = the value;
  /// a flag, or an empty string value, shows none unless this says one).
  std::string shown = {};
  char shortName = 0;
  /// Missing it is a usage error.
  bool required = false;
};

/// The positional arguments of a command (at most one kind per command).
struct ArgPositional {
  /// Their placeholder in the usage line ("FILE.pto", "A B", "MEASUREMENTS.json...").
  std::string valueName;
  std::variant<std::string *, std::vector<std::string> *> target;
  /// What they are, in errors ("input file", "reports"): "more than one input file".
  std::string noun;
  size_t min = 1;
  /// The most accepted; 0 = any number.
  size_t max = 1;
  /// The error when none is given ("" = the count error).
  std::string missing = {};
};

/// One command's table.
struct CommandSpec {
  /// As typed: "ptoc run", "ptoc prof report"; starts every error message.
  std::string name;
  /// Help text after the usage line (what the command does; paragraphs).
  std::string about = {};
  std::optional<ArgPositional> positional = {};
  std::vector<ArgOption> options = {};
  /// Where a usage error points ("" = "<name> --help").
  std::string helpCommand = {};
};

/// Parses one command's arguments into the fields its table names. Built per call,
/// on the caller's fields: no process-wide registry, so a command may run many
/// times in one process.
class ArgParser {
public:
  /// Records the fields' current values as the defaults help shows.
  explicit ArgParser(CommandSpec spec);

  /// Parses `args` (the arguments after the command's name). Returns nullopt to go
  /// on, or the exit status the command should return: kExitOk after printing help
  /// (`--help` or `-h` anywhere) to `out`, kExitUsage after printing a usage error
  /// to `err`.
  std::optional<int> parse(const std::vector<std::string> &args,
                           llvm::raw_ostream &out = llvm::outs(),
                           llvm::raw_ostream &err = llvm::errs());

  /// Whether option `name` (its long name) was given.
  bool given(llvm::StringRef name) const { return given_.count(name.str()) != 0; }

  /// "usage: ptoc run FILE.pto [options]".
  std::string usageLine() const;
  /// One line (or more, wrapped) per option: placeholder, help, default.
  std::string optionsHelp() const;
  /// The usage line, the command's text and the options.
  std::string help() const;

  /// Prints "<command>: <message>; see '<command> --help'" to `err` and returns
  /// kExitUsage: the one form of every usage error, the parser's and the command's.
  int usageError(llvm::StringRef message, llvm::raw_ostream &err = llvm::errs()) const;

private:
  /// "" or the error.
  std::string parseArgs(const std::vector<std::string> &args);
  std::string setValue(const ArgOption &option, llvm::StringRef flag, const std::string &text);
  const ArgOption *find(llvm::StringRef longName, char shortName) const;
  std::string suggestion(llvm::StringRef name) const;
  std::string spelling(const ArgOption &option) const;

  CommandSpec spec_;
  std::vector<std::string> shownDefaults_;
  std::set<std::string> given_;
};

/// A CustomValue for an enum spelled by names: help shows the current value's name;
/// anything else is "<flag> must be one of a, b, got 'x'".
template <typename E>
CustomValue choiceOf(E *field, std::vector<std::pair<std::string, E>> names) {
  std::string shown;
  for (const auto &[name, value] : names)
    if (value == *field) shown = name;
  return CustomValue{[field, names](llvm::StringRef flag, const std::string &text) {
                       std::string valid;
                       for (const auto &[name, value] : names) {
                         if (name == text) {
                           *field = value;
                           return std::string();
                         }
                         valid += (valid.empty() ? "" : ", ") + name;
                       }
                       return flag.str() + " must be one of " + valid + ", got '" + text + "'";
                     },
                     shown};
}

} // namespace ptoc::tools
