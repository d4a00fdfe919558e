// Tokenizer for the ptoc IR text form (private to lib/ir; used by Parser.cpp).
#pragma once

#include <cstdint>
#include <string>

#include "llvm/ADT/StringRef.h"

namespace ptoc::ir {

enum class TokKind : uint8_t {
  Eof,
  Error,     ///< a lexical error; Lexer::errorMessage() says what
  BareId,    ///< [A-Za-z_][A-Za-z0-9_.]* (keywords, op names, keys, dtypes)
  PercentId, ///< %name
  AtId,      ///< @name or @"quoted name"
  Integer,   ///< -?[0-9]+
  Float,     ///< -?[0-9]+(.[0-9]+)?(e[+-]?[0-9]+)? with '.' or exponent, or -inf
  String,    ///< "..." (spelling includes the quotes; escapes already validated)
  LParen,
  RParen,
  LBrace,
  RBrace,
  LSquare,
  RSquare,
  Less,
  Greater,
  Comma,
  Colon,
  Equal,
  Arrow,    ///< ->
  Question, ///< ? (a dynamic dimension; shape mode only)
};

/// One token: its kind, its exact spelling in the buffer and its 1-based position
/// (line relative to the buffer's first line).
struct Token {
  TokKind kind = TokKind::Eof;
  llvm::StringRef text;
  uint32_t line = 1;
  uint32_t col = 1;

  bool is(TokKind k) const { return kind == k; }
  bool isKeyword(llvm::StringRef kw) const { return kind == TokKind::BareId && text == kw; }
  /// The name after the sigil of a PercentId/AtId (unquoted form only).
  llvm::StringRef sigilName() const { return text.drop_front(); }
};

/// Whether `c` may start / continue a bare identifier.
inline bool isIdStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
inline bool isDigit(char c) { return c >= '0' && c <= '9'; }
inline bool isIdChar(char c) { return isIdStart(c) || isDigit(c) || c == '.'; }
/// True for a non-empty name of digits only (a value named like an unnamed result).
inline bool isNumericName(llvm::StringRef s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!isDigit(c)) return false;
  return true;
}
/// Appends `v` in decimal (the printer's and the namer's numbers).
void appendUInt(std::string &out, uint64_t v);

/// A hand-written lexer over one buffer. It never reads past the end, never
/// allocates per token, and tracks line starts as it goes (no rescanning).
class Lexer {
public:
  explicit Lexer(llvm::StringRef buffer)
      : cur_(buffer.begin()), end_(buffer.end()), lineStart_(buffer.begin()) {}

  /// The next token in normal mode.
  Token lex();

  /// Shape mode (inside `tensor<...>`): skips trivia, then lexes a digit run (an
  /// Integer, possibly negative), a '?' (a dynamic dimension) or an element-type word
  /// ([A-Za-z_][A-Za-z0-9_]*, no '.'); anything else is lexed as in normal mode.
  Token lexShapeElement();
  /// Consumes an 'x' that immediately follows the previous token; false (and
  /// nothing consumed) otherwise.
  bool consumeDimSeparator();
  /// Describes the character at the cursor for "found ..." messages.
  std::string describeCurrentChar() const;
  /// An empty token at the cursor (to place errors about the next character).
  Token cursorToken() const { return makeToken(TokKind::Error, cur_, cur_); }

  /// Where the next token starts (before trivia), for cache probes.
  const char *cursor() const { return cur_; }
  const char *bufferEnd() const { return end_; }
  /// Moves the cursor forward to `p` (which must be on the current line, after the
  /// cursor: used after a cache hit on a single-line span).
  void skipTo(const char *p) { cur_ = p; }

  /// What went wrong, for a TokKind::Error token.
  const std::string &errorMessage() const { return error_; }

  /// Skips whitespace and // comments.
  void skipTrivia();

private:
  Token makeToken(TokKind k, const char *start, const char *end) const {
    Token t;
    t.kind = k;
    t.text = llvm::StringRef(start, static_cast<size_t>(end - start));
    t.line = line_;
    t.col = static_cast<uint32_t>(start - lineStart_) + 1;
    return t;
  }
  Token errorAt(const char *at, std::string message);
  Token lexNumber(const char *start);
  Token lexString(const char *start);
  Token lexName(TokKind kind, const char *start);

  const char *cur_;
  const char *end_;
  const char *lineStart_;
  uint32_t line_ = 1;
  std::string error_;
};

/// Decodes the escapes of a String token's spelling (quotes included) into `out`.
/// The lexer has already validated the escapes.
void unescapeString(llvm::StringRef spelling, std::string &out);

/// Appends `s` quoted and escaped the way the printer writes strings.
void appendQuotedString(std::string &out, llvm::StringRef s);

} // namespace ptoc::ir
