// The argument parser of the `ptoc` commands (see ArgParser.h).
#include "ptoc/tools/ArgParser.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"

namespace ptoc::tools {
namespace {

/// Help lines wrap at this width; the placeholder column is at most kMaxLeft wide
/// (a longer placeholder puts its help on the next line).
constexpr size_t kWidth = 88;
constexpr size_t kMaxLeft = 28;

/// "two" for 2: counts in messages read as words up to ten.
std::string countWord(size_t n) {
  static const char *kWords[] = {"no",  "one", "two",   "three", "four", "five",
                                 "six", "seven", "eight", "nine",  "ten"};
  return n < std::size(kWords) ? kWords[n] : std::to_string(n);
}

/// Sets an integer field from `text`: parsed as the widest integer of the field's
/// signedness, then checked against the field's range narrowed by `bounds`.
template <typename T>
std::string setInteger(T *field, const Bounds &bounds, llvm::StringRef flag,
                       const std::string &text) {
  using Wide = std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>;
  Wide lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
  if (bounds.min && (std::is_signed_v<T> || *bounds.min > 0)) lo = std::max(lo, Wide(*bounds.min));
  if (bounds.max) {
    if constexpr (std::is_signed_v<T>)
      hi = std::min(hi, Wide(*bounds.max));
    else
      hi = *bounds.max < 0 ? 0 : std::min(hi, Wide(*bounds.max));
  }
  Wide v = 0;
  // absl parses "-1" into an unsigned as a wrapped value: an unsigned field takes digits only.
  bool ok = !text.empty() && (std::is_signed_v<T> || text[0] != '-') &&
            absl::SimpleAtoi(text, &v) && v >= lo && v <= hi;
  if (!ok)
    return absl::StrCat(flag.str(), " must be an integer in [", lo, ", ", hi, "], got '", text,
                        "'");
  *field = static_cast<T>(v);
  return "";
}

std::string setDouble(double *field, const Bounds &bounds, llvm::StringRef flag,
                      const std::string &text) {
  double v = 0;
  bool ok = absl::SimpleAtod(text, &v) && std::isfinite(v);
  if (ok && bounds.min)
    ok = bounds.minExclusive ? v > double(*bounds.min) : v >= double(*bounds.min);
  if (ok && bounds.max) ok = v <= double(*bounds.max);
  if (ok) {
    *field = v;
    return "";
  }
  std::string range;
  if (bounds.min && bounds.minExclusive)
    range = absl::StrCat(" above ", *bounds.min,
                         bounds.max ? absl::StrCat(" (at most ", *bounds.max, ")") : "");
  else if (bounds.min && bounds.max)
    range = absl::StrCat(" in [", *bounds.min, ", ", *bounds.max, "]");
  else if (bounds.min)
    range = absl::StrCat(" of at least ", *bounds.min);
  else if (bounds.max)
    range = absl::StrCat(" of at most ", *bounds.max);
  return absl::StrCat(flag.str(), " must be a number", range, ", got '", text, "'");
}

/// The default help shows for a field's current value ("" = none).
std::string shownValue(const ArgTarget &target) {
  return std::visit(
      [](const auto &t) -> std::string {
        using T = std::decay_t<decltype(t)>;
        if constexpr (std::is_same_v<T, bool *> || std::is_same_v<T, Negated> ||
                      std::is_same_v<T, OptionalValue> ||
                      std::is_same_v<T, std::vector<std::string> *>)
          return "";
        else if constexpr (std::is_same_v<T, CustomValue>)
          return t.shown;
        else if constexpr (std::is_same_v<T, std::string *>)
          return *t;
        else if constexpr (std::is_same_v<T, double *>)
          return absl::StrFormat("%g", *t);
        else
          return std::to_string(*t);
      },
      target);
}

bool takesValue(const ArgTarget &target) {
  return !std::holds_alternative<bool *>(target) && !std::holds_alternative<Negated>(target);
}

/// Appends `text` word-wrapped to lines of at most kWidth, each after `indent`
/// spaces (the first line continues whatever `out` ends with, at column `column`).
void appendWrapped(std::string &out, size_t column, size_t indent, llvm::StringRef text) {
  for (absl::string_view word :
       absl::StrSplit(absl::string_view(text.data(), text.size()), ' ', absl::SkipEmpty())) {
    if (column > indent && column + 1 + word.size() > kWidth) {
      out += "\n" + std::string(indent, ' ');
      column = indent;
    } else if (column > indent) {
      out += " ";
      ++column;
    } else if (column < indent) {
      out += std::string(indent - column, ' ');
      column = indent;
    }
    out.append(word.data(), word.size());
    column += word.size();
  }
}

} // namespace

ArgParser::ArgParser(CommandSpec spec) : spec_(std::move(spec)) {
  for (const ArgOption &o : spec_.options)
    shownDefaults_.push_back(o.shown.empty() ? shownValue(o.target) : o.shown);
  if (spec_.helpCommand.empty()) spec_.helpCommand = spec_.name + " --help";
}

std::string ArgParser::spelling(const ArgOption &o) const {
  std::string flag = o.shortName && o.required ? std::string("-") + o.shortName : "--" + o.name;
  if (std::holds_alternative<OptionalValue>(o.target)) return flag + "[=" + o.valueName + "]";
  return takesValue(o.target) ? flag + " " + o.valueName : flag;
}

std::string ArgParser::usageLine() const {
  std::vector<std::string> items;
  if (spec_.positional) items.push_back(spec_.positional->valueName);
  for (const ArgOption &o : spec_.options)
    if (o.required) items.push_back(spelling(o));
  if (std::any_of(spec_.options.begin(), spec_.options.end(),
                  [](const ArgOption &o) { return !o.required; }))
    items.push_back("[options]");
  // Wrapped after the command's name; an item (a flag and its value) stays whole.
  std::string line = "usage: " + spec_.name;
  size_t indent = line.size() + 1, column = line.size();
  for (const std::string &item : items) {
    if (column + 1 + item.size() > kWidth && column > indent) {
      line += "\n" + std::string(indent - 1, ' ');
      column = indent - 1;
    }
    line += " " + item;
    column += 1 + item.size();
  }
  return line;
}

std::string ArgParser::optionsHelp() const {
  std::vector<std::string> left;
  size_t width = 0;
  for (const ArgOption &o : spec_.options) {
    std::string flag = o.shortName ? absl::StrCat("-", std::string(1, o.shortName), ", --", o.name)
                                   : "--" + o.name;
    if (std::holds_alternative<OptionalValue>(o.target))
      flag += "[=" + o.valueName + "]";
    else if (takesValue(o.target))
      flag += " " + o.valueName;
    left.push_back("  " + flag);
    if (left.back().size() <= kMaxLeft) width = std::max(width, left.back().size());
  }
  std::string out;
  for (size_t i = 0; i < spec_.options.size(); ++i) {
    const ArgOption &o = spec_.options[i];
    std::string help = o.help;
    if (std::holds_alternative<std::vector<std::string> *>(o.target)) help += " (repeatable)";
    if (o.required) help += " (required)";
    if (!shownDefaults_[i].empty() && !o.required) help += " [" + shownDefaults_[i] + "]";
    out += left[i];
    size_t column = left[i].size();
    if (column > width) {
      out += "\n";
      column = 0;
    }
    appendWrapped(out, column, width + 2, help);
    out += "\n";
  }
  return out;
}

std::string ArgParser::help() const {
  std::string out = usageLine() + "\n";
  if (!spec_.about.empty()) {
    out += "\n" + spec_.about;
    if (out.back() != '\n') out += "\n";
  }
  if (!spec_.options.empty()) out += "\noptions:\n" + optionsHelp();
  return out;
}

int ArgParser::usageError(llvm::StringRef message, llvm::raw_ostream &err) const {
  err << spec_.name << ": " << message << "; see '" << spec_.helpCommand << "'\n";
  return kExitUsage;
}

std::optional<int> ArgParser::parse(const std::vector<std::string> &args, llvm::raw_ostream &out,
                                    llvm::raw_ostream &err) {
  for (const std::string &a : args) {
    if (a == "--") break;
    if (a == "--help" || a == "-h") {
      out << help();
      return kExitOk;
    }
  }
  if (std::string e = parseArgs(args); !e.empty()) return usageError(e, err);
  return std::nullopt;
}

const ArgOption *ArgParser::find(llvm::StringRef longName, char shortName) const {
  for (const ArgOption &o : spec_.options)
    if (shortName ? o.shortName == shortName : o.name == longName) return &o;
  return nullptr;
}

std::string ArgParser::suggestion(llvm::StringRef name) const {
  const ArgOption *best = nullptr;
  unsigned bestDistance = 3; // a typo, not another word
  for (const ArgOption &o : spec_.options) {
    unsigned d = name.edit_distance(o.name, /*AllowReplacements=*/true, bestDistance);
    if (d < bestDistance) {
      best = &o;
      bestDistance = d;
    }
  }
  return best ? " (did you mean '--" + best->name + "'?)" : "";
}

std::string ArgParser::setValue(const ArgOption &o, llvm::StringRef flag,
                                const std::string &text) {
  return std::visit(
      [&](const auto &t) -> std::string {
        using T = std::decay_t<decltype(t)>;
        if constexpr (std::is_same_v<T, int *> || std::is_same_v<T, unsigned *> ||
                      std::is_same_v<T, int64_t *> || std::is_same_v<T, uint64_t *>)
          return setInteger(t, o.bounds, flag, text);
        else if constexpr (std::is_same_v<T, double *>)
          return setDouble(t, o.bounds, flag, text);
        else if constexpr (std::is_same_v<T, std::string *>)
          *t = text;
        else if constexpr (std::is_same_v<T, std::vector<std::string> *>)
          t->push_back(text);
        else if constexpr (std::is_same_v<T, CustomValue>)
          return t.set(flag, text);
        // Flags and optional values are set by parseArgs.
        return "";
      },
      o.target);
}

std::string ArgParser::parseArgs(const std::vector<std::string> &args) {
  std::vector<std::string> positionals;
  bool optionsEnded = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string &arg = args[i];
    if (optionsEnded || arg.size() < 2 || arg[0] != '-') {
      positionals.push_back(arg);
      continue;
    }
    if (arg == "--") {
      optionsEnded = true;
      continue;
    }
    llvm::StringRef body = llvm::StringRef(arg).drop_front(arg[1] == '-' ? 2 : 1);
    auto [name, value] = body.split('=');
    bool hasValue = body.contains('=');
    bool isShort = arg[1] != '-';
    const ArgOption *o = isShort ? (name.size() == 1 ? find("", name[0]) : nullptr)
                                 : find(name, 0);
    std::string flag = (isShort ? "-" : "--") + name.str();
    if (!o) return absl::StrCat("unknown option '", flag, "'", isShort ? "" : suggestion(name));
    given_.insert(o->name);
    if (bool *const *b = std::get_if<bool *>(&o->target)) {
      if (hasValue) return flag + " takes no value";
      **b = true;
      continue;
    }
    if (const Negated *n = std::get_if<Negated>(&o->target)) {
      if (hasValue) return flag + " takes no value";
      *n->field = false;
      continue;
    }
    if (const OptionalValue *ov = std::get_if<OptionalValue>(&o->target)) {
      *ov->given = true;
      if (hasValue && value.empty())
        return absl::StrCat(flag, "= needs a ", o->valueName, " (or no '=' for the default)");
      if (hasValue) *ov->value = value.str();
      continue;
    }
    std::string text = value.str();
    if (!hasValue) {
      if (i + 1 >= args.size()) return absl::StrCat(flag, " needs a value (", o->valueName, ")");
      text = args[++i];
    }
    if (std::string e = setValue(*o, flag, text); !e.empty()) return e;
  }

  if (const std::optional<ArgPositional> &p = spec_.positional) {
    size_t n = positionals.size();
    if (n == 0 && p->min > 0 && !p->missing.empty()) return p->missing;
    if (n < p->min || (p->max && n > p->max)) {
      if (p->max == 1 && n > 1)
        return absl::StrCat("more than one ", p->noun, " ('", positionals[0], "' and '",
                            positionals[1], "')");
      std::string want = p->min == p->max ? countWord(p->min)
                         : p->max == 0    ? "at least " + countWord(p->min)
                                          : absl::StrCat(p->min, " to ", p->max);
      return absl::StrCat("expected ", want, " ", p->noun, " (", p->valueName, "), got ", n);
    }
    if (std::string *const *one = std::get_if<std::string *>(&p->target)) {
      if (n) **one = positionals[0];
    } else {
      *std::get<std::vector<std::string> *>(p->target) = positionals;
    }
  } else if (!positionals.empty()) {
    return "unexpected argument '" + positionals[0] + "'";
  }

  for (const ArgOption &o : spec_.options)
    if (o.required && !given(o.name)) return spelling(o) + " is required";
  return "";
}

} // namespace ptoc::tools
