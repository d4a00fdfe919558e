// Pass options: parsing option values from text, printing them back, and the
// per-pass table of values that pipelines and the Python layer fill in.
#include "ptoc/passes/PassOptions.h"

#include <cmath>
#include <cstdlib>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/ErrorHandling.h"

namespace ptoc::passes {

namespace {

/// Bounds at or beyond this magnitude mean "unbounded" (the declaration defaults).
constexpr double kUnbounded = 1e299;

/// Option names are declared with dashes; the Python API spells them with
/// underscores.
std::string normaliseName(llvm::StringRef name) {
  std::string out = name.trim().str();
  for (char &c : out)
    if (c == '_') c = '-';
  return out;
}

std::string boundToString(double b, OptionKind kind) {
  if (kind == OptionKind::Float) return absl::StrFormat("%g", b);
  return absl::StrCat(static_cast<int64_t>(b));
}

/// "" when `v` is within the declaration's bounds, else the problem.
std::string checkBounds(const PassOptionDecl &decl, double v, const std::string &shown) {
  bool hasMin = decl.min > -kUnbounded, hasMax = decl.max < kUnbounded;
  if ((!hasMin || v >= decl.min) && (!hasMax || v <= decl.max)) return "";
  if (hasMin && hasMax)
    return absl::StrCat("must be between ", boundToString(decl.min, decl.kind), " and ",
                        boundToString(decl.max, decl.kind), ", got ", shown);
  if (hasMin) return absl::StrCat("must be at least ", boundToString(decl.min, decl.kind), ", got ", shown);
  return absl::StrCat("must be at most ", boundToString(decl.max, decl.kind), ", got ", shown);
}

/// A decimal integer, optionally negative.
std::optional<int64_t> parseInt(llvm::StringRef text) {
  int64_t v;
  text = text.trim();
  if (text.empty() || text.getAsInteger(10, v)) return std::nullopt;
  return v;
}

/// Characters a string may consist of to be printed without quotes; none of them
/// means anything to the pipeline parser.
bool isBareStringChar(char c) {
  return llvm::isAlnum(c) || llvm::StringRef("_-./+:@").contains(c);
}

/// Parses `{0:4,func1_2:8,-1:2}`: braces required; `key:value` entries separated by
/// commas or spaces (spaces may also surround ':'); keys as parseGroupKey reads them,
/// unique.
std::optional<GroupSetting> parseGroupSettingText(llvm::StringRef text,
                                                  const PassOptionDecl &decl,
                                                  std::string &problem) {
  llvm::StringRef s = text.trim();
  if (!s.consume_front("{") || !s.consume_back("}")) {
    problem = absl::StrCat("expected a map in braces like {0:4,func1_2:8,-1:2}, got '",
                           text.str(), "'");
    return std::nullopt;
  }
  auto isSpace = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  auto skipSpaces = [&] { s = s.drop_while(isSpace); };
  // A token: everything up to the next separator or ':'.
  auto takeToken = [&] {
    llvm::StringRef token =
        s.take_until([&](char c) { return isSpace(c) || c == ',' || c == ':'; });
    s = s.drop_front(token.size());
    return token;
  };
  auto badEntry = [&](llvm::StringRef entryStart) {
    llvm::StringRef entry = entryStart.take_until([](char c) { return c == ','; }).rtrim();
    problem = absl::StrCat("expected 'key:count' entries in map '", text.str(), "', got '",
                           entry.str(), "'; a key is ", kGroupKeyForms, ", a count an integer");
    return std::nullopt;
  };
  GroupSetting map;
  while (true) {
    s = s.drop_while([&](char c) { return isSpace(c) || c == ','; });
    if (s.empty()) break;
    llvm::StringRef entryStart = s;
    std::optional<GroupKey> key = parseGroupKey(takeToken());
    skipSpaces();
    if (!key || !s.consume_front(":")) return badEntry(entryStart);
    skipSpaces();
    std::optional<int64_t> value = parseInt(takeToken());
    if (!value || (!s.empty() && !isSpace(s.front()) && s.front() != ','))
      return badEntry(entryStart);
    std::string bounds = checkBounds(decl, double(*value), absl::StrCat(*value));
    if (!bounds.empty()) {
      problem = absl::StrCat("value for key ", groupKeyToString(*key), " ", bounds);
      return std::nullopt;
    }
    if (!map.emplace(*key, *value).second) {
      problem = absl::StrCat("duplicate key ", groupKeyToString(*key), " in map '", text.str(),
                             "'");
      return std::nullopt;
    }
  }
  return map;
}

/// Parses `text` as a value of `decl`; on error returns nullopt and fills `problem`
/// (without the option name, which callers add).
std::optional<OptionValue> parseValue(const PassOptionDecl &decl, llvm::StringRef text,
                                      std::string &problem) {
  llvm::StringRef t = text.trim();
  switch (decl.kind) {
  case OptionKind::Bool:
    if (t == "true" || t == "1") return OptionValue(true);
    if (t == "false" || t == "0") return OptionValue(false);
    problem = absl::StrCat("expected true or false (or 1/0), got '", text.str(), "'");
    return std::nullopt;
  case OptionKind::Int: {
    std::optional<int64_t> v = parseInt(t);
    if (!v) {
      problem = absl::StrCat("expected an integer, got '", text.str(), "'");
      return std::nullopt;
    }
    problem = checkBounds(decl, double(*v), absl::StrCat(*v));
    if (!problem.empty()) return std::nullopt;
    return OptionValue(*v);
  }
  case OptionKind::Float: {
    double v;
    if (t.empty() || t.getAsDouble(v)) {
      problem = absl::StrCat("expected a number, got '", text.str(), "'");
      return std::nullopt;
    }
    problem = checkBounds(decl, v, t.str());
    if (!problem.empty()) return std::nullopt;
    return OptionValue(v);
  }
  case OptionKind::String: {
    if (!t.startswith("\"")) return OptionValue(t.str());
    std::string out;
    for (size_t i = 1; i < t.size(); ++i) {
      char c = t[i];
      if (c == '\\' && i + 1 < t.size()) {
        out += t[++i];
        continue;
      }
      if (c == '"') {
        if (i + 1 != t.size()) {
          problem = absl::StrCat("unexpected text after the closing quote in ", text.str());
          return std::nullopt;
        }
        return OptionValue(std::move(out));
      }
      out += c;
    }
    problem = absl::StrCat("unterminated string ", text.str(), "; close it with '\"'");
    return std::nullopt;
  }
  case OptionKind::GroupSetting: {
    std::optional<GroupSetting> m = parseGroupSettingText(text, decl, problem);
    if (!m) return std::nullopt;
    return std::optional<OptionValue>(std::in_place, std::in_place_type<GroupSetting>,
                                      std::move(*m));
  }
  }
  llvm_unreachable("unknown option kind");
}

/// The kind a typed value has, for error messages.
std::string_view valueKindName(const OptionValue &v) {
  return optionKindName(static_cast<OptionKind>(v.index()));
}

} // namespace

std::string_view optionKindName(OptionKind k) {
  switch (k) {
  case OptionKind::Bool: return "bool";
  case OptionKind::Int: return "int";
  case OptionKind::Float: return "float";
  case OptionKind::String: return "string";
  case OptionKind::GroupSetting: return "group-setting";
  }
  return "?";
}

absl::StatusOr<OptionValue> parseOptionValue(const PassOptionDecl &decl, llvm::StringRef text) {
  std::string problem;
  std::optional<OptionValue> v = parseValue(decl, text, problem);
  if (!v) return absl::InvalidArgumentError(absl::StrCat("option '", decl.name, "': ", problem));
  return std::move(*v);
}

std::string optionValueToString(const OptionValue &v) {
  switch (static_cast<OptionKind>(v.index())) {
  case OptionKind::Bool: return std::get<bool>(v) ? "true" : "false";
  case OptionKind::Int: return absl::StrCat(std::get<int64_t>(v));
  case OptionKind::Float: {
    // The shortest form that parses back to the same double.
    double d = std::get<double>(v);
    for (int precision = 1; precision <= 17; ++precision) {
      std::string s = absl::StrFormat("%.*g", precision, d);
      if (std::strtod(s.c_str(), nullptr) == d || std::isnan(d)) return s;
    }
    return absl::StrFormat("%.17g", d);
  }
  case OptionKind::String: {
    const std::string &s = std::get<std::string>(v);
    if (!s.empty() && s.front() != '"' && llvm::all_of(s, isBareStringChar)) return s;
    std::string out = "\"";
    for (char c : s) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
    return out + "\"";
  }
  case OptionKind::GroupSetting: return groupSettingToString(std::get<GroupSetting>(v));
  }
  llvm_unreachable("unknown option kind");
}

PassOptionValues::PassOptionValues(const std::vector<PassOptionDecl> &decls,
                                   llvm::StringRef passName)
    : passName_(passName.str()), decls_(decls), explicit_(decls.size(), false) {
  values_.reserve(decls.size());
  for (const PassOptionDecl &d : decls_) {
    if (d.defaultValue.index() != static_cast<size_t>(d.kind))
      llvm::report_fatal_error(llvm::Twine("ptoc bug: option '") + d.name +
                               "' declares a default of the wrong kind");
    values_.push_back(d.defaultValue);
  }
}

const PassOptionDecl *PassOptionValues::find(llvm::StringRef name) const {
  std::string normal = normaliseName(name);
  for (const PassOptionDecl &d : decls_)
    if (d.name == normal) return &d;
  return nullptr;
}

namespace {
absl::Status unknownOptionError(llvm::StringRef name, const std::string &passName,
                                const std::vector<PassOptionDecl> &decls) {
  std::string forPass = passName.empty() ? "" : absl::StrCat(" for pass '", passName, "'");
  if (decls.empty())
    return absl::InvalidArgumentError(
        absl::StrCat("unknown option '", name.str(), "'", forPass, "; it takes no options"));
  std::vector<std::string> names;
  for (const PassOptionDecl &d : decls) names.push_back(d.name);
  return absl::InvalidArgumentError(absl::StrCat("unknown option '", name.str(), "'", forPass,
                                                 "; valid options: ", absl::StrJoin(names, ", ")));
}

std::string optionContext(llvm::StringRef option, llvm::StringRef pass) {
  if (pass.empty()) return absl::StrCat("option '", option.str(), "'");
  return absl::StrCat("option '", option.str(), "' of pass '", pass.str(), "'");
}
} // namespace

absl::Status PassOptionValues::set(llvm::StringRef name, llvm::StringRef valueText) {
  const PassOptionDecl *decl = find(name);
  if (!decl) return unknownOptionError(name, passName_, decls_);
  std::string problem;
  std::optional<OptionValue> v = parseValue(*decl, valueText, problem);
  if (!v)
    return absl::InvalidArgumentError(absl::StrCat(optionContext(decl->name, passName_), ": ", problem));
  size_t i = decl - decls_.data();
  values_[i] = std::move(*v);
  explicit_[i] = true;
  return absl::OkStatus();
}

absl::Status PassOptionValues::set(llvm::StringRef name, const OptionValue &value) {
  const PassOptionDecl *decl = find(name);
  if (!decl) return unknownOptionError(name, passName_, decls_);
  auto fail = [&](const std::string &problem) {
    return absl::InvalidArgumentError(absl::StrCat(optionContext(decl->name, passName_), ": ", problem));
  };
  // Accept the conversions a dynamically typed caller (Python) naturally makes:
  // an int for a float, 0/1 for a bool.
  OptionValue v = value;
  if (decl->kind == OptionKind::Float && std::holds_alternative<int64_t>(v))
    v = double(std::get<int64_t>(v));
  if (decl->kind == OptionKind::Bool && std::holds_alternative<int64_t>(v) &&
      (std::get<int64_t>(v) == 0 || std::get<int64_t>(v) == 1))
    v = std::get<int64_t>(v) == 1;
  if (v.index() != static_cast<size_t>(decl->kind))
    return fail(absl::StrCat("expected a value of kind ", std::string(optionKindName(decl->kind)),
                             ", got a ", std::string(valueKindName(value)), " (",
                             optionValueToString(value), ")"));
  std::string problem;
  if (decl->kind == OptionKind::Int)
    problem = checkBounds(*decl, double(std::get<int64_t>(v)), absl::StrCat(std::get<int64_t>(v)));
  else if (decl->kind == OptionKind::Float)
    problem = checkBounds(*decl, std::get<double>(v), optionValueToString(v));
  else if (decl->kind == OptionKind::GroupSetting)
    for (const auto &[key, n] : std::get<GroupSetting>(v)) {
      std::string bounds = checkBounds(*decl, double(n), absl::StrCat(n));
      if (!bounds.empty()) {
        problem = absl::StrCat("value for key ", groupKeyToString(key), " ", bounds);
        break;
      }
    }
  if (!problem.empty()) return fail(problem);
  size_t i = decl - decls_.data();
  values_[i] = std::move(v);
  explicit_[i] = true;
  return absl::OkStatus();
}

const OptionValue &PassOptionValues::get(llvm::StringRef name) const {
  const PassOptionDecl *decl = find(name);
  if (!decl)
    llvm::report_fatal_error(llvm::Twine("ptoc bug: pass '") + passName_ +
                             "' reads undeclared option '" + name + "'");
  return values_[decl - decls_.data()];
}

namespace {
template <typename T>
const T &getAs(const OptionValue &v, llvm::StringRef name, OptionKind wanted) {
  if (!std::holds_alternative<T>(v))
    llvm::report_fatal_error(llvm::Twine("ptoc bug: option '") + name + "' read as " +
                             llvm::StringRef(optionKindName(wanted)) + " but declared as " +
                             llvm::StringRef(valueKindName(v)));
  return std::get<T>(v);
}
} // namespace

bool PassOptionValues::getBool(llvm::StringRef name) const {
  return getAs<bool>(get(name), name, OptionKind::Bool);
}
int64_t PassOptionValues::getInt(llvm::StringRef name) const {
  return getAs<int64_t>(get(name), name, OptionKind::Int);
}
double PassOptionValues::getFloat(llvm::StringRef name) const {
  return getAs<double>(get(name), name, OptionKind::Float);
}
const std::string &PassOptionValues::getString(llvm::StringRef name) const {
  return getAs<std::string>(get(name), name, OptionKind::String);
}
const GroupSetting &PassOptionValues::getGroupSetting(llvm::StringRef name) const {
  return getAs<GroupSetting>(get(name), name, OptionKind::GroupSetting);
}

bool PassOptionValues::isExplicit(llvm::StringRef name) const {
  const PassOptionDecl *decl = find(name);
  return decl && explicit_[decl - decls_.data()];
}

std::string PassOptionValues::str() const {
  std::vector<std::string> parts;
  for (size_t i = 0; i < decls_.size(); ++i)
    if (explicit_[i]) parts.push_back(absl::StrCat(decls_[i].name, "=", optionValueToString(values_[i])));
  if (parts.empty()) return "";
  return absl::StrCat("{", absl::StrJoin(parts, " "), "}");
}

} // namespace ptoc::passes
