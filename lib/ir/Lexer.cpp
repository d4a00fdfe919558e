// Tokenizer for the ptoc IR text form: one pass over the buffer, no allocation per
// token, line starts tracked while skipping newlines.
#include "Lexer.h"

#include <charconv>

namespace ptoc::ir {

namespace {

bool isHexDigit(char c) {
  return isDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

int hexValue(char c) {
  if (isDigit(c)) return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return c - 'A' + 10;
}

std::string describeChar(char c) {
  auto u = static_cast<unsigned char>(c);
  if (u >= 0x20 && u < 0x7f) return std::string("'") + c + "'";
  static const char *hex = "0123456789abcdef";
  return std::string("'\\x") + hex[u >> 4] + hex[u & 0xf] + "'";
}

} // namespace

void Lexer::skipTrivia() {
  while (cur_ != end_) {
    char c = *cur_;
    if (c == ' ' || c == '\t' || c == '\r') {
      ++cur_;
    } else if (c == '\n') {
      ++cur_;
      ++line_;
      lineStart_ = cur_;
    } else if (c == '/' && cur_ + 1 != end_ && cur_[1] == '/') {
      while (cur_ != end_ && *cur_ != '\n') ++cur_;
    } else {
      return;
    }
  }
}

Token Lexer::errorAt(const char *at, std::string message) {
  error_ = std::move(message);
  Token t = makeToken(TokKind::Error, at, at == end_ ? at : at + 1);
  cur_ = end_; // nothing after a lexical error is looked at
  return t;
}

Token Lexer::lex() {
  skipTrivia();
  const char *start = cur_;
  if (cur_ == end_) return makeToken(TokKind::Eof, cur_, cur_);
  char c = *cur_;
  if (isIdStart(c)) {
    ++cur_;
    while (cur_ != end_ && isIdChar(*cur_)) ++cur_;
    return makeToken(TokKind::BareId, start, cur_);
  }
  if (isDigit(c)) return lexNumber(start);
  switch (c) {
  case '%': return lexName(TokKind::PercentId, start);
  case '@': return lexName(TokKind::AtId, start);
  case '"': return lexString(start);
  case '(': ++cur_; return makeToken(TokKind::LParen, start, cur_);
  case ')': ++cur_; return makeToken(TokKind::RParen, start, cur_);
  case '{': ++cur_; return makeToken(TokKind::LBrace, start, cur_);
  case '}': ++cur_; return makeToken(TokKind::RBrace, start, cur_);
  case '[': ++cur_; return makeToken(TokKind::LSquare, start, cur_);
  case ']': ++cur_; return makeToken(TokKind::RSquare, start, cur_);
  case '<': ++cur_; return makeToken(TokKind::Less, start, cur_);
  case '>': ++cur_; return makeToken(TokKind::Greater, start, cur_);
  case ',': ++cur_; return makeToken(TokKind::Comma, start, cur_);
  case ':': ++cur_; return makeToken(TokKind::Colon, start, cur_);
  case '=': ++cur_; return makeToken(TokKind::Equal, start, cur_);
  case '-': {
    const char *next = cur_ + 1;
    if (next != end_ && *next == '>') {
      cur_ += 2;
      return makeToken(TokKind::Arrow, start, cur_);
    }
    if (next != end_ && isDigit(*next)) return lexNumber(start);
    if (end_ - next >= 3 && llvm::StringRef(next, 3) == "inf" &&
        (next + 3 == end_ || !isIdChar(next[3]))) {
      cur_ = next + 3;
      return makeToken(TokKind::Float, start, cur_);
    }
    return errorAt(start, "expected a number, 'inf' or '>' after '-'");
  }
  default: break;
  }
  return errorAt(start, "invalid character " + describeChar(c));
}

Token Lexer::lexNumber(const char *start) {
  if (*cur_ == '-') ++cur_;
  while (cur_ != end_ && isDigit(*cur_)) ++cur_;
  bool isFloat = false;
  if (cur_ + 1 < end_ && *cur_ == '.' && isDigit(cur_[1])) {
    isFloat = true;
    cur_ += 2;
    while (cur_ != end_ && isDigit(*cur_)) ++cur_;
  }
  if (cur_ != end_ && (*cur_ == 'e' || *cur_ == 'E')) {
    const char *p = cur_ + 1;
    if (p != end_ && (*p == '+' || *p == '-')) ++p;
    if (p != end_ && isDigit(*p)) {
      isFloat = true;
      cur_ = p;
      while (cur_ != end_ && isDigit(*cur_)) ++cur_;
    }
  }
  return makeToken(isFloat ? TokKind::Float : TokKind::Integer, start, cur_);
}

Token Lexer::lexString(const char *start) {
  ++cur_; // opening quote
  while (true) {
    if (cur_ == end_ || *cur_ == '\n') return errorAt(start, "unterminated string");
    char c = *cur_;
    if (c == '"') {
      ++cur_;
      return makeToken(TokKind::String, start, cur_);
    }
    if (c != '\\') {
      ++cur_;
      continue;
    }
    const char *esc = cur_;
    if (esc + 1 == end_ || esc[1] == '\n') return errorAt(start, "unterminated string");
    switch (esc[1]) {
    case '"':
    case '\\':
    case 'n':
    case 't':
    case 'r': cur_ += 2; continue;
    case 'x':
      if (end_ - esc >= 4 && isHexDigit(esc[2]) && isHexDigit(esc[3])) {
        cur_ += 4;
        continue;
      }
      return errorAt(esc, "invalid escape sequence in string: '\\x' needs two hex digits");
    default: {
      // Report the position of the backslash.
      std::string what = describeChar(esc[1]);
      what.insert(1, "\\");
      return errorAt(esc, "invalid escape sequence " + what + " in string");
    }
    }
  }
}

Token Lexer::lexName(TokKind kind, const char *start) {
  ++cur_; // sigil
  if (cur_ != end_ && isDigit(*cur_)) {
    while (cur_ != end_ && isDigit(*cur_)) ++cur_;
    return makeToken(kind, start, cur_);
  }
  if (cur_ != end_ && isIdStart(*cur_)) {
    while (cur_ != end_ && isIdChar(*cur_)) ++cur_;
    return makeToken(kind, start, cur_);
  }
  if (kind == TokKind::AtId && cur_ != end_ && *cur_ == '"') {
    Token s = lexString(cur_);
    if (s.is(TokKind::Error)) return s;
    return makeToken(kind, start, cur_);
  }
  return errorAt(start, kind == TokKind::PercentId
                            ? "expected a value name after '%' ([0-9]+ or [A-Za-z_][A-Za-z0-9_.]*)"
                            : "expected a function name after '@'");
}

Token Lexer::lexShapeElement() {
  skipTrivia();
  const char *start = cur_;
  if (cur_ == end_) return makeToken(TokKind::Eof, cur_, cur_);
  char c = *cur_;
  if (isDigit(c) || (c == '-' && cur_ + 1 != end_ && isDigit(cur_[1]))) {
    ++cur_;
    while (cur_ != end_ && isDigit(*cur_)) ++cur_;
    return makeToken(TokKind::Integer, start, cur_);
  }
  if (isIdStart(c)) {
    ++cur_;
    while (cur_ != end_ && (isIdStart(*cur_) || isDigit(*cur_))) ++cur_;
    return makeToken(TokKind::BareId, start, cur_);
  }
  if (c == '?') {
    ++cur_;
    return makeToken(TokKind::Question, start, cur_);
  }
  return lex();
}

bool Lexer::consumeDimSeparator() {
  if (cur_ != end_ && *cur_ == 'x') {
    ++cur_;
    return true;
  }
  return false;
}

std::string Lexer::describeCurrentChar() const {
  if (cur_ == end_) return "end of file";
  return describeChar(*cur_);
}

void unescapeString(llvm::StringRef spelling, std::string &out) {
  out.clear();
  llvm::StringRef body = spelling.drop_front().drop_back();
  out.reserve(body.size());
  for (size_t i = 0; i < body.size(); ++i) {
    char c = body[i];
    if (c != '\\' || i + 1 >= body.size()) {
      out += c;
      continue;
    }
    char e = body[++i];
    switch (e) {
    case 'n': out += '\n'; break;
    case 't': out += '\t'; break;
    case 'r': out += '\r'; break;
    case 'x':
      if (i + 2 < body.size()) {
        out += static_cast<char>(hexValue(body[i + 1]) * 16 + hexValue(body[i + 2]));
        i += 2;
      }
      break;
    default: out += e; break; // '"' and '\\'
    }
  }
}

void appendUInt(std::string &out, uint64_t v) {
  char buf[24];
  auto res = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, res.ptr);
}

void appendQuotedString(std::string &out, llvm::StringRef s) {
  static const char *hex = "0123456789abcdef";
  out += '"';
  for (char c : s) {
    switch (c) {
    case '"': out += "\\\""; break;
    case '\\': out += "\\\\"; break;
    case '\n': out += "\\n"; break;
    case '\t': out += "\\t"; break;
    default:
      if (static_cast<unsigned char>(c) < 0x20) {
        out += "\\x";
        out += hex[(c >> 4) & 0xf];
        out += hex[c & 0xf];
      } else {
        out += c;
      }
    }
  }
  out += '"';
}

} // namespace ptoc::ir
