// BoundedJson: the limit scan that runs before llvm::json::parse, and errors with
// source and position.
#include "ptoc/support/BoundedJson.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include "ptoc/support/TextPosition.h"

namespace ptoc::support {
namespace {

/// What the scan found: the first broken limit (if any) and where the integers too
/// large for int64 end (to be read as doubles).
struct ScanResult {
  std::optional<absl::Status> error;
  std::vector<size_t> wideIntegerEnds;
};

bool isNumberChar(char c) {
  return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E';
}

std::string prefix(llvm::StringRef source) {
  return source.empty() ? std::string() : absl::StrCat(source.str(), ": ");
}

std::string at(llvm::StringRef text, size_t offset) {
  TextPosition p = positionOf(text, offset);
  return absl::StrCat("line ", p.line, " column ", p.column);
}

/// True if `token` is an integer literal (-?digits) outside the range of int64.
bool isWideInteger(llvm::StringRef token) {
  llvm::StringRef digits = token;
  bool negative = digits.consume_front("-");
  if (digits.empty() || digits.find_first_not_of("0123456789") != llvm::StringRef::npos)
    return false;
  digits = digits.ltrim('0');
  // INT64_MAX = 9223372036854775807 (19 digits); INT64_MIN's magnitude one more.
  llvm::StringRef limit = negative ? "9223372036854775808" : "9223372036854775807";
  if (digits.size() != limit.size()) return digits.size() > limit.size();
  return digits > limit;
}

/// True if `token`, read as a double, is beyond its range (strtod gives +-inf).
bool overflowsDouble(llvm::StringRef token) {
  // Only an exponent or more than 308 digits can reach 1.8e308; skip the rest cheaply.
  if (token.find_first_of("eE") == llvm::StringRef::npos && token.size() <= 308) return false;
  std::string s = token.str();
  char *end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size() && std::isinf(v);
}

/// One pass over `text`, outside strings: bracket depth and number tokens. Never
/// recurses and allocates only for the (rare) wide integers. Its depth is the depth
/// llvm::json's parser would reach, since both see strings end at the same quote.
ScanResult scan(llvm::StringRef text, llvm::StringRef source, const JsonLimits &limits) {
  ScanResult result;
  const size_t n = text.size();
  int depth = 0;
  for (size_t i = 0; i < n; ++i) {
    char c = text[i];
    if (c == '"') {
      for (++i; i < n && text[i] != '"'; ++i)
        if (text[i] == '\\') ++i;
      continue;
    }
    if (c == '[' || c == '{') {
      if (++depth > limits.maxDepth) {
        result.error = absl::InvalidArgumentError(absl::StrCat(
            prefix(source), "JSON nested deeper than ", limits.maxDepth, " levels at ",
            at(text, i), " (the limit bounds the parser's stack; no ptoc file nests more "
            "than ", kOwnJsonDepth, "): check that this is the file you meant"));
        return result;
      }
      continue;
    }
    if (c == ']' || c == '}') {
      if (depth > 0) --depth;
      continue;
    }
    // llvm::json starts a number at any number character ('.5' and '+5' parse), so
    // the scan does too: a token it split differently would be widened wrongly.
    if (isNumberChar(c)) {
      size_t start = i;
      while (i + 1 < n && isNumberChar(text[i + 1])) ++i;
      llvm::StringRef token = text.slice(start, i + 1);
      if (overflowsDouble(token)) {
        std::string shown = token.size() > 24 ? token.take_front(21).str() + "..." : token.str();
        result.error = absl::InvalidArgumentError(
            absl::StrCat(prefix(source), "number ", shown, " at ", at(text, start),
                         " is beyond the range of a double (about 1.8e308); write a finite "
                         "number"));
        return result;
      }
      if (isWideInteger(token)) result.wideIntegerEnds.push_back(i + 1);
    }
  }
  return result;
}

/// llvm::json's error text "[L:C, byte=B]: message" as "invalid JSON at line L
/// column C: message". llvm::json counts the column as the bytes before its read
/// position, which has usually just passed the offending character, so C is that
/// character's 1-based column (0 only at the start of a line: the end of the text).
std::string describeParseError(llvm::Error err, llvm::StringRef source) {
  std::string raw = llvm::toString(std::move(err));
  unsigned line = 0, column = 0, byte = 0;
  int consumed = 0;
  if (std::sscanf(raw.c_str(), "[%u:%u, byte=%u]: %n", &line, &column, &byte, &consumed) == 3 &&
      consumed > 0)
    return absl::StrCat(prefix(source), "invalid JSON at line ", line, " column ",
                        std::max(column, 1u), ": ",
                        raw.substr(consumed));
  return absl::StrCat(prefix(source), "invalid JSON: ", raw);
}

} // namespace

absl::StatusOr<llvm::json::Value> parseJson(llvm::StringRef text, llvm::StringRef source,
                                            const JsonLimits &limits) {
  if (text.size() > limits.maxBytes)
    return absl::InvalidArgumentError(absl::StrCat(
        prefix(source), "JSON text of ", text.size(), " bytes is over the limit of ",
        limits.maxBytes, " bytes for one document (the limit bounds the memory of its parsed "
        "form; no ptoc file read this way is near it): check that this is the file you meant"));
  ScanResult scanned = scan(text, source, limits);
  if (scanned.error) return *scanned.error;

  if (scanned.wideIntegerEnds.empty()) {
    llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(text);
    if (!parsed) return absl::InvalidArgumentError(describeParseError(parsed.takeError(), source));
    return std::move(*parsed);
  }
  // ".0" makes llvm::json read a wide integer with strtod (the nearest double)
  // instead of clamping it. The edit keeps the syntax as it was, so an error is
  // reported from the original text, at the original positions.
  std::string widened;
  widened.reserve(text.size() + 2 * scanned.wideIntegerEnds.size());
  size_t from = 0;
  for (size_t end : scanned.wideIntegerEnds) {
    widened.append(text.data() + from, end - from);
    widened += ".0";
    from = end;
  }
  widened.append(text.data() + from, text.size() - from);
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(widened);
  if (parsed) return std::move(*parsed);
  llvm::consumeError(parsed.takeError());
  llvm::Expected<llvm::json::Value> original = llvm::json::parse(text);
  if (!original)
    return absl::InvalidArgumentError(describeParseError(original.takeError(), source));
  // Unreachable in practice (the two texts differ only inside numbers); say so.
  return absl::InternalError(absl::StrCat(
      prefix(source), "internal error in ptoc: the JSON parsed only before its wide integers "
      "were read as doubles; this is a bug, please report it"));
}

std::optional<int64_t> jsonInteger(const llvm::json::Value &v) {
  llvm::Optional<double> d = v.getAsNumber();
  if (!d) return std::nullopt;
  // getAsInteger's range check lets the double 2^63 (== double(INT64_MAX)) through to
  // an overflowing conversion, so at and above 2^63 only an integer stored exactly
  // (INT64_MAX and its neighbours round to 2^63 as doubles) is read.
  constexpr double kTwoTo63 = 9223372036854775808.0;
  if (*d >= kTwoTo63) {
    llvm::Optional<uint64_t> u = v.getAsUINT64(); // none for doubles
    if (u && *u <= uint64_t(std::numeric_limits<int64_t>::max())) return int64_t(*u);
    return std::nullopt;
  }
  if (llvm::Optional<int64_t> i = v.getAsInteger()) return *i;
  return std::nullopt;
}

std::string jsonPreview(const llvm::json::Value &v) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << v;
  os.flush();
  if (s.size() > 60) s = s.substr(0, 57) + "...";
  return s;
}

std::optional<int64_t> jsonInteger(const llvm::json::Object &o, llvm::StringRef key) {
  const llvm::json::Value *v = o.get(key);
  return v ? jsonInteger(*v) : std::nullopt;
}

} // namespace ptoc::support
