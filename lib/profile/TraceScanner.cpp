// The event-at-a-time trace reader: a strict recursive-descent JSON reader that
// parses one value into reusable flat storage, and the walk over a trace document.
#include "TraceScanner.h"

#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>

#include "absl/strings/str_cat.h"

namespace ptoc::profile {

// ---- JsonRef ----

JsonRef::Kind JsonRef::kind() const { return doc_->nodes_[node_].kind; }

std::optional<llvm::StringRef> JsonRef::asString() const {
  const JsonDoc::Node &n = doc_->nodes_[node_];
  if (n.kind != Kind::String) return std::nullopt;
  return doc_->text(n);
}

std::optional<double> JsonRef::asNumber() const {
  const JsonDoc::Node &n = doc_->nodes_[node_];
  if (n.kind != Kind::Number) return std::nullopt;
  return n.isInteger ? static_cast<double>(n.integer) : n.number;
}

std::optional<int64_t> JsonRef::asInteger() const {
  const JsonDoc::Node &n = doc_->nodes_[node_];
  if (n.kind != Kind::Number) return std::nullopt;
  if (n.isInteger) return n.integer;
  // As llvm::json: a double with no fractional part that fits is an integer.
  double whole = 0;
  if (std::modf(n.number, &whole) == 0.0 &&
      whole >= static_cast<double>(std::numeric_limits<int64_t>::min()) &&
      whole < static_cast<double>(std::numeric_limits<int64_t>::max()))
    return static_cast<int64_t>(whole);
  return std::nullopt;
}

std::optional<JsonRef> JsonRef::get(llvm::StringRef key) const {
  const JsonDoc::Node &n = doc_->nodes_[node_];
  if (n.kind != Kind::Object) return std::nullopt;
  for (uint32_t child = n.firstChild; child != 0; child = doc_->nodes_[child].next)
    if (doc_->key(doc_->nodes_[child]) == key) return JsonRef(doc_, child);
  return std::nullopt;
}

std::optional<llvm::StringRef> JsonRef::getString(llvm::StringRef key) const {
  std::optional<JsonRef> v = get(key);
  return v ? v->asString() : std::nullopt;
}
std::optional<double> JsonRef::getNumber(llvm::StringRef key) const {
  std::optional<JsonRef> v = get(key);
  return v ? v->asNumber() : std::nullopt;
}
std::optional<bool> JsonRef::asBool() const {
  const JsonDoc::Node &n = doc_->nodes_[node_];
  if (n.kind != Kind::Bool) return std::nullopt;
  return n.integer != 0;
}
std::optional<bool> JsonRef::getBool(llvm::StringRef key) const {
  std::optional<JsonRef> v = get(key);
  return v ? v->asBool() : std::nullopt;
}
std::optional<int64_t> JsonRef::getInteger(llvm::StringRef key) const {
  std::optional<JsonRef> v = get(key);
  return v ? v->asInteger() : std::nullopt;
}
std::optional<JsonRef> JsonRef::getObject(llvm::StringRef key) const {
  std::optional<JsonRef> v = get(key);
  return v && v->isObject() ? v : std::nullopt;
}

// ---- JsonReader ----

namespace {

bool isSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
bool isDigit(char c) { return c >= '0' && c <= '9'; }

int hexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

void appendUtf8(std::string &out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

/// Length of the valid UTF-8 sequence starting at s[0] (a byte >= 0x80), or 0.
size_t utf8Length(const unsigned char *s, size_t available) {
  unsigned char c = s[0];
  size_t length = 0;
  uint32_t min = 0, cp = 0;
  if (c >= 0xC2 && c <= 0xDF) length = 2, min = 0x80, cp = c & 0x1F;
  else if (c >= 0xE0 && c <= 0xEF) length = 3, min = 0x800, cp = c & 0x0F;
  else if (c >= 0xF0 && c <= 0xF4) length = 4, min = 0x10000, cp = c & 0x07;
  else return 0;
  if (available < length) return 0;
  for (size_t i = 1; i < length; ++i) {
    if ((s[i] & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (s[i] & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return length;
}

constexpr uint32_t kReplacement = 0xFFFD; ///< for lone surrogates, as llvm::json does

} // namespace

void JsonReader::skipSpace() {
  while (pos_ < text_.size() && isSpace(text_[pos_])) ++pos_;
}

bool JsonReader::atEnd() {
  skipSpace();
  return pos_ >= text_.size();
}

bool JsonReader::consume(char ch) {
  skipSpace();
  if (pos_ < text_.size() && text_[pos_] == ch) {
    ++pos_;
    return true;
  }
  return false;
}

char JsonReader::peek() {
  skipSpace();
  return pos_ < text_.size() ? text_[pos_] : '\0';
}

bool JsonReader::fail(const std::string &message) {
  if (pos_ >= text_.size()) return truncated();
  error_ = JsonSyntaxError{pos_, message, false, false};
  return false;
}

bool JsonReader::truncated() {
  error_ = JsonSyntaxError{text_.size(), "the text ends inside a value", true, false};
  return false;
}

bool JsonReader::parse(JsonDoc &doc) {
  doc.clear(text_);
  uint32_t root = 0;
  return value(&doc, 0, &root);
}

bool JsonReader::skip() { return value(nullptr, 0, nullptr); }

bool JsonReader::string(llvm::StringRef &out, std::string &scratch) {
  skipSpace();
  if (pos_ >= text_.size()) return truncated();
  if (text_[pos_] != '"') return fail("expected a string");
  scratch.clear();
  uint64_t begin = 0, length = 0;
  bool decoded = false;
  if (!scanString(begin, length, decoded, &scratch)) return false;
  out = decoded ? llvm::StringRef(scratch) : text_.substr(begin, length);
  return true;
}

bool JsonReader::literal(llvm::StringRef word) {
  for (size_t i = 0; i < word.size(); ++i) {
    if (pos_ + i >= text_.size()) return truncated();
    if (text_[pos_ + i] != word[i]) {
      pos_ += i;
      return fail("invalid JSON value");
    }
  }
  pos_ += word.size();
  return true;
}

bool JsonReader::scanString(uint64_t &begin, uint64_t &length, bool &decoded, std::string *out) {
  ++pos_; // the opening quote
  const size_t start = pos_;
  const char *data = text_.data();
  const size_t size = text_.size();
  // Fast path: no escapes.
  while (pos_ < size) {
    unsigned char c = static_cast<unsigned char>(data[pos_]);
    if (c == '"') {
      begin = start;
      length = pos_ - start;
      decoded = false;
      ++pos_;
      return true;
    }
    if (c == '\\') break;
    if (c < 0x20) return fail("control character in a string (escape it)");
    if (c >= 0x80) {
      size_t n = utf8Length(reinterpret_cast<const unsigned char *>(data + pos_), size - pos_);
      if (n == 0) return fail("invalid UTF-8 in a string");
      pos_ += n;
      continue;
    }
    ++pos_;
  }
  if (pos_ >= size) return truncated();
  // Slow path: decode into `out` (or just validate).
  std::string local;
  std::string &dst = out ? *out : local;
  size_t decodedStart = dst.size();
  dst.append(data + start, pos_ - start);
  while (true) {
    if (pos_ >= size) return truncated();
    unsigned char c = static_cast<unsigned char>(data[pos_]);
    if (c == '"') {
      ++pos_;
      break;
    }
    if (c < 0x20) return fail("control character in a string (escape it)");
    if (c >= 0x80) {
      size_t n = utf8Length(reinterpret_cast<const unsigned char *>(data + pos_), size - pos_);
      if (n == 0) return fail("invalid UTF-8 in a string");
      dst.append(data + pos_, n);
      pos_ += n;
      continue;
    }
    if (c != '\\') {
      dst += static_cast<char>(c);
      ++pos_;
      continue;
    }
    if (pos_ + 1 >= size) return truncated();
    char e = data[pos_ + 1];
    pos_ += 2;
    switch (e) {
    case '"': dst += '"'; break;
    case '\\': dst += '\\'; break;
    case '/': dst += '/'; break;
    case 'b': dst += '\b'; break;
    case 'f': dst += '\f'; break;
    case 'n': dst += '\n'; break;
    case 'r': dst += '\r'; break;
    case 't': dst += '\t'; break;
    case 'u': {
      auto hex4 = [&](uint32_t &cp) {
        if (pos_ + 4 > size) return truncated();
        cp = 0;
        for (int i = 0; i < 4; ++i) {
          int h = hexValue(data[pos_ + i]);
          if (h < 0) {
            pos_ += i;
            return fail("invalid \\u escape (expected 4 hex digits)");
          }
          cp = cp * 16 + static_cast<uint32_t>(h);
        }
        pos_ += 4;
        return true;
      };
      uint32_t cp = 0;
      if (!hex4(cp)) return false;
      if (cp >= 0xD800 && cp <= 0xDBFF) {
        // A high surrogate pairs with a following \uDC00..\uDFFF.
        if (pos_ + 1 < size && data[pos_] == '\\' && data[pos_ + 1] == 'u') {
          size_t save = pos_;
          pos_ += 2;
          uint32_t low = 0;
          if (!hex4(low)) return false;
          if (low >= 0xDC00 && low <= 0xDFFF) {
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          } else {
            pos_ = save;
            cp = kReplacement;
          }
        } else {
          cp = kReplacement;
        }
      } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
        cp = kReplacement;
      }
      appendUtf8(dst, cp);
      break;
    }
    default:
      pos_ -= 1;
      return fail(absl::StrCat("invalid escape '\\", std::string(1, e), "' in a string"));
    }
  }
  begin = decodedStart;
  length = dst.size() - decodedStart;
  decoded = true;
  return true;
}

bool JsonReader::scanNumber(bool &isInteger, int64_t &integer, double &number) {
  const size_t start = pos_;
  const size_t size = text_.size();
  const char *data = text_.data();
  auto digits = [&]() {
    size_t from = pos_;
    while (pos_ < size && isDigit(data[pos_])) ++pos_;
    return pos_ - from;
  };
  if (data[pos_] == '-') ++pos_;
  if (pos_ >= size) return truncated();
  if (data[pos_] == '0') {
    ++pos_;
  } else if (digits() == 0) {
    return fail("invalid number (expected a digit)");
  }
  bool whole = true;
  if (pos_ < size && data[pos_] == '.') {
    ++pos_;
    whole = false;
    if (pos_ >= size) return truncated();
    if (digits() == 0) return fail("invalid number (expected a digit after '.')");
  }
  if (pos_ < size && (data[pos_] == 'e' || data[pos_] == 'E')) {
    ++pos_;
    whole = false;
    if (pos_ < size && (data[pos_] == '+' || data[pos_] == '-')) ++pos_;
    if (pos_ >= size) return truncated();
    if (digits() == 0) return fail("invalid number (expected exponent digits)");
  }
  // A number at the very end of the text may have been cut; the callers always
  // expect something after a value, so the next read reports the truncation.
  const char *first = data + start, *last = data + pos_;
  if (whole) {
    auto [ptr, ec] = std::from_chars(first, last, integer);
    if (ec == std::errc() && ptr == last) {
      isInteger = true;
      return true;
    }
  }
  isInteger = false;
  auto [ptr, ec] = std::from_chars(first, last, number);
  if (ec == std::errc::result_out_of_range) {
    // Overflow to +-inf, underflow to 0: callers reject non-finite times.
    number = std::strtod(std::string(first, last).c_str(), nullptr);
  } else if (ec != std::errc() || ptr != last) {
    pos_ = start;
    return fail("invalid number");
  }
  return true;
}

bool JsonReader::value(JsonDoc *doc, int depth, uint32_t *node) {
  skipSpace();
  if (pos_ >= text_.size()) return truncated();
  uint32_t self = 0;
  if (doc) {
    self = static_cast<uint32_t>(doc->nodes_.size());
    doc->nodes_.emplace_back();
    *node = self;
  }
  auto at = [&]() -> JsonDoc::Node & { return doc->nodes_[self]; };
  char c = text_[pos_];
  switch (c) {
  case '{':
  case '[': {
    bool object = c == '{';
    // The one depth limit of every JSON reader (it bounds this recursion's stack).
    if (depth + 1 > support::kMaxJsonDepth) {
      error_ = JsonSyntaxError{pos_,
                               absl::StrCat("JSON nested deeper than ", support::kMaxJsonDepth,
                                            " levels at byte ", pos_),
                               false, true};
      return false;
    }
    ++pos_;
    if (doc) at().kind = object ? JsonRef::Kind::Object : JsonRef::Kind::Array;
    if (consume(object ? '}' : ']')) return true;
    uint32_t previous = 0;
    std::string keyScratch;
    while (true) {
      bool keyDecoded = false;
      uint64_t keyBegin = 0, keyLength = 0;
      if (object) {
        skipSpace();
        if (pos_ >= text_.size()) return truncated();
        if (text_[pos_] != '"') return fail("expected a string key in an object");
        if (!scanString(keyBegin, keyLength, keyDecoded, doc ? &doc->decoded_ : nullptr))
          return false;
        if (!consume(':')) return fail("expected ':' after an object key");
      }
      uint32_t child = 0;
      if (!value(doc, depth + 1, doc ? &child : nullptr)) return false;
      if (doc) {
        JsonDoc::Node &n = doc->nodes_[child];
        n.keyBegin = keyBegin;
        n.keyLength = keyLength;
        n.keyDecoded = keyDecoded;
        if (previous) doc->nodes_[previous].next = child;
        else at().firstChild = child;
        previous = child;
      }
      if (consume(',')) continue;
      if (consume(object ? '}' : ']')) return true;
      return fail(object ? "expected ',' or '}' after an object member"
                         : "expected ',' or ']' after an array element");
    }
  }
  case '"': {
    uint64_t begin = 0, length = 0;
    bool decoded = false;
    if (!scanString(begin, length, decoded, doc ? &doc->decoded_ : nullptr)) return false;
    if (doc) {
      JsonDoc::Node &n = at();
      n.kind = JsonRef::Kind::String;
      n.begin = begin;
      n.length = length;
      n.decoded = decoded;
    }
    return true;
  }
  case 't':
  case 'f':
  case 'n':
    if (!literal(c == 't' ? "true" : c == 'f' ? "false" : "null")) return false;
    if (doc) {
      at().kind = c == 'n' ? JsonRef::Kind::Null : JsonRef::Kind::Bool;
      at().integer = c == 't'; // a bool's value
    }
    return true;
  default: {
    if (c != '-' && !isDigit(c)) return fail("invalid JSON value");
    bool isInteger = false;
    int64_t integer = 0;
    double number = 0;
    if (!scanNumber(isInteger, integer, number)) return false;
    if (doc) {
      JsonDoc::Node &n = at();
      n.kind = JsonRef::Kind::Number;
      n.isInteger = isInteger;
      n.integer = integer;
      n.number = number;
    }
    return true;
  }
  }
}

// ---- walkTrace ----

absl::Status walkTrace(llvm::StringRef text, const TraceVisitor &visitor,
                       std::optional<TraceWalkError> &problem) {
  problem.reset();
  JsonReader reader(text);
  auto syntax = [&](std::optional<size_t> event = std::nullopt, size_t eventOffset = 0,
                    std::string member = "") {
    TraceWalkError e;
    e.kind = TraceWalkError::Kind::Syntax;
    e.syntax = reader.error();
    e.event = event;
    e.eventOffset = eventOffset;
    e.member = std::move(member);
    problem = std::move(e);
    return absl::OkStatus();
  };
  // A structural problem is reported only if the rest of the text is valid JSON.
  std::optional<TraceWalkError> structural;
  // Field by field (an aggregate temporary in the optional trips GCC 12's
  // -Wmaybe-uninitialized on the std::string members).
  auto structuralError = [&](TraceWalkError::Kind kind, std::string member) {
    structural.emplace();
    structural->kind = kind;
    structural->member = std::move(member);
  };
  auto finish = [&]() {
    if (!reader.atEnd()) {
      reader.fail("unexpected text after the top-level value");
      return syntax();
    }
    problem = structural;
    return absl::OkStatus();
  };
  if (reader.peek() != '{') {
    if (!reader.skip()) return syntax();
    structuralError(TraceWalkError::Kind::NotObject, "");
    return finish();
  }
  reader.consume('{');
  bool sawEvents = false;
  JsonDoc doc;
  std::string keyScratch;
  if (!reader.consume('}')) {
    while (true) {
      llvm::StringRef keyView;
      if (!reader.string(keyView, keyScratch)) return syntax();
      std::string key = keyView.str();
      if (!reader.consume(':')) {
        reader.fail("expected ':' after an object key");
        return syntax();
      }
      if (key == "traceEvents" && !sawEvents && reader.peek() == '[') {
        sawEvents = true;
        reader.consume('[');
        if (!reader.consume(']')) {
          for (size_t index = 0;; ++index) {
            reader.peek();
            size_t begin = reader.pos();
            if (!reader.parse(doc)) return syntax(index, begin);
            if (visitor.event)
              if (absl::Status s = visitor.event(index, doc.root(),
                                                 text.slice(begin, reader.pos()));
                  !s.ok())
                return s;
            if (reader.consume(']')) break;
            if (!reader.consume(',')) {
              reader.fail("expected ',' or ']' after a trace event");
              return syntax();
            }
          }
        }
      } else if (key == "traceEvents" && !sawEvents) {
        sawEvents = true;
        if (!reader.skip()) return syntax(std::nullopt, 0, key);
        if (!structural)
          structuralError(TraceWalkError::Kind::EventsNotArray, std::string(key));
      } else if (visitor.wants && visitor.wants(key)) {
        if (!reader.parse(doc)) return syntax(std::nullopt, 0, key);
        if (visitor.member)
          if (absl::Status s = visitor.member(key, doc.root()); !s.ok()) return s;
      } else {
        if (!reader.skip()) return syntax(std::nullopt, 0, key);
      }
      if (reader.consume('}')) break;
      if (!reader.consume(',')) {
        reader.fail("expected ',' or '}' in the top-level object");
        return syntax();
      }
    }
  }
  if (!sawEvents && !structural)
    structuralError(TraceWalkError::Kind::NoEvents, "");
  return finish();
}

} // namespace ptoc::profile
