// Internal to lib/profile: reading a Chrome trace-event file one event at a time.
// A JsonReader validates JSON strictly without building a tree; each event is parsed
// into a JsonDoc whose node and string storage is reused from event to event, so a
// trace of a million tasks costs memory in proportion to what the caller keeps, not
// to its JSON tree. walkTrace drives it over {"traceEvents": [...], ...}; the trace
// checker and the `ptoc prof` loader both read traces through it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "llvm/ADT/StringRef.h"

#include "ptoc/support/BoundedJson.h"

namespace ptoc::profile {

/// A syntax error: where (byte offset) and what.
struct JsonSyntaxError {
  size_t offset = 0;
  std::string message;
  bool truncated = false; ///< the text ended inside a value
  bool tooDeep = false;   ///< nested deeper than support::kMaxJsonDepth
};

class JsonDoc;

/// A read-only view of one value of a JsonDoc, with llvm::json-like accessors:
/// getInteger accepts integral numbers written as doubles (3.0), as llvm::json does.
class JsonRef {
public:
  enum class Kind { Null, Bool, Number, String, Array, Object };
  JsonRef(const JsonDoc *doc, uint32_t node) : doc_(doc), node_(node) {}

  Kind kind() const;
  bool isObject() const { return kind() == Kind::Object; }
  std::optional<llvm::StringRef> asString() const;
  std::optional<double> asNumber() const;
  std::optional<int64_t> asInteger() const;
  std::optional<bool> asBool() const;

  /// Object members (the first with that key); nullopt when absent or not an object.
  std::optional<JsonRef> get(llvm::StringRef key) const;
  std::optional<llvm::StringRef> getString(llvm::StringRef key) const;
  std::optional<double> getNumber(llvm::StringRef key) const;
  std::optional<int64_t> getInteger(llvm::StringRef key) const;
  std::optional<bool> getBool(llvm::StringRef key) const;
  std::optional<JsonRef> getObject(llvm::StringRef key) const;

private:
  const JsonDoc *doc_;
  uint32_t node_;
};

/// One parsed value. Its storage is kept across JsonReader::parse calls, so parsing
/// many events into one JsonDoc allocates only while it grows.
class JsonDoc {
public:
  JsonRef root() const { return JsonRef(this, 0); }

private:
  friend class JsonReader;
  friend class JsonRef;
  struct Node {
    JsonRef::Kind kind = JsonRef::Kind::Null;
    bool isInteger = false;  ///< a number written without fraction or exponent that fits
    bool decoded = false;    ///< string text lives in decoded_, not in the source
    uint32_t firstChild = 0; ///< 0: none (node 0 is always the root)
    uint32_t next = 0;       ///< next sibling, 0: none
    bool keyDecoded = false;
    uint64_t keyBegin = 0, keyLength = 0; ///< member key (source or decoded_, see key())
    uint64_t begin = 0, length = 0; ///< string text (source or decoded_)
    int64_t integer = 0;
    double number = 0;
  };
  llvm::StringRef text(const Node &n) const {
    return n.decoded ? llvm::StringRef(decoded_).substr(n.begin, n.length)
                     : source_.substr(n.begin, n.length);
  }
  llvm::StringRef key(const Node &n) const {
    return n.keyDecoded ? llvm::StringRef(decoded_).substr(n.keyBegin, n.keyLength)
                        : source_.substr(n.keyBegin, n.keyLength);
  }
  void clear(llvm::StringRef source) {
    nodes_.clear();
    decoded_.clear();
    source_ = source;
  }
  std::vector<Node> nodes_;
  std::string decoded_; ///< strings with escapes, decoded
  llvm::StringRef source_;
};

/// A strict JSON reader (RFC 8259: numbers, escapes, UTF-8, no control characters in
/// strings) over one text, positioned between values.
class JsonReader {
public:
  explicit JsonReader(llvm::StringRef text) : text_(text) {}

  size_t pos() const { return pos_; }
  llvm::StringRef text() const { return text_; }
  /// Skips whitespace; true at the end of the text.
  bool atEnd();
  /// Consumes `ch` (after whitespace) if it is next.
  bool consume(char ch);
  /// The next character after whitespace, or 0 at the end.
  char peek();
  /// Parses one value (after whitespace) into `doc`, which is cleared first.
  bool parse(JsonDoc &doc);
  /// Validates and skips one value, storing nothing.
  bool skip();
  /// Reads a string (after whitespace); `scratch` holds it when it has escapes.
  bool string(llvm::StringRef &out, std::string &scratch);
  /// The error after a false return.
  const JsonSyntaxError &error() const { return error_; }
  /// Sets an error at the current position ("expected ...").
  bool fail(const std::string &message);

private:
  void skipSpace();
  bool value(JsonDoc *doc, int depth, uint32_t *node);
  bool scanString(uint64_t &begin, uint64_t &length, bool &decoded, std::string *out);
  bool scanNumber(bool &isInteger, int64_t &integer, double &number);
  bool literal(llvm::StringRef word);
  bool truncated();

  llvm::StringRef text_;
  size_t pos_ = 0;
  JsonSyntaxError error_;
};

/// What went wrong reading the shape of a trace document.
struct TraceWalkError {
  enum class Kind {
    Syntax,         ///< JSON syntax (see `syntax`); `event` / `member` say inside what
    NotObject,      ///< the top level is not an object (the text is valid JSON)
    EventsNotArray, ///< "traceEvents" is not an array
    NoEvents,       ///< no "traceEvents" key
  };
  Kind kind = Kind::Syntax;
  JsonSyntaxError syntax;
  std::optional<size_t> event;   ///< index of the event being read
  size_t eventOffset = 0;        ///< where that event starts
  std::string member;            ///< top-level key whose value was being read
};

/// What walkTrace calls. Any non-OK status from a callback stops the walk and is
/// returned as is.
struct TraceVisitor {
  /// Each element of traceEvents, in order: its index, value and text.
  std::function<absl::Status(size_t index, JsonRef event, llvm::StringRef text)> event;
  /// Top-level members other than traceEvents for which `wants(key)` is true (others
  /// are validated and skipped).
  std::function<bool(llvm::StringRef key)> wants;
  std::function<absl::Status(llvm::StringRef key, JsonRef value)> member;
};

/// Reads a trace document event by event. Returns the status of the first failing
/// callback, else OK with `problem` set when the document is malformed (the caller
/// words it). The whole text is validated: a structural problem (not an object,
/// traceEvents not an array) is reported only when the text is valid JSON.
absl::Status walkTrace(llvm::StringRef text, const TraceVisitor &visitor,
                       std::optional<TraceWalkError> &problem);

} // namespace ptoc::profile
