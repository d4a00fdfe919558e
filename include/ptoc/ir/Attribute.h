// Attribute values attached to operations (ints, floats, arrays, dictionaries, ...).
#pragma once

#include <cstdint>
#include <string>

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include "ptoc/ir/DType.h"

namespace ptoc::ir {

class Attribute;
struct NamedAttr;

namespace detail {
struct AttrStorage;
} // namespace detail

/// An interned name (attribute keys, value name hints, file names). Equal names have
/// equal pointers within one Context.
class Identifier {
public:
  Identifier() = default;
  explicit Identifier(const char *p, uint32_t len) : data_(p), size_(len) {}
  llvm::StringRef str() const { return {data_, size_}; }
  const char *data() const { return data_; }
  explicit operator bool() const { return data_ != nullptr; }
  friend bool operator==(Identifier a, Identifier b) { return a.data_ == b.data_; }
  friend bool operator!=(Identifier a, Identifier b) { return a.data_ != b.data_; }
  /// Orders by text, so printing order never depends on addresses.
  friend bool operator<(Identifier a, Identifier b) { return a.str() < b.str(); }

private:
  const char *data_ = nullptr;
  uint32_t size_ = 0;
};

enum class AttrKind : uint8_t {
  Int,      ///< 42
  Float,    ///< 1.5, -inf, nan
  Bool,     ///< true / false
  String,   ///< "text"
  DType,    ///< f32 (an element type)
  IntArray, ///< [64, 512] (also the empty array [])
  Array,    ///< [1.0, "x"] (anything that is not all-int)
  Dict,     ///< {m = [128, 128], k = [64, 256]} (order as written)
};

/// A uniqued, immutable attribute value. Equal values have equal handles within one
/// Context, so comparing attributes is a pointer comparison. Create through Context.
class Attribute {
public:
  Attribute() = default;
  explicit Attribute(const detail::AttrStorage *s) : storage_(s) {}

  explicit operator bool() const { return storage_ != nullptr; }
  AttrKind kind() const;
  bool isInt() const { return storage_ && kind() == AttrKind::Int; }
  bool isFloat() const { return storage_ && kind() == AttrKind::Float; }
  bool isBool() const { return storage_ && kind() == AttrKind::Bool; }
  bool isString() const { return storage_ && kind() == AttrKind::String; }
  bool isDType() const { return storage_ && kind() == AttrKind::DType; }
  bool isIntArray() const { return storage_ && kind() == AttrKind::IntArray; }
  bool isArray() const { return storage_ && kind() == AttrKind::Array; }
  bool isDict() const { return storage_ && kind() == AttrKind::Dict; }

  int64_t getInt() const;
  double getFloat() const;
  /// Int or Float as a double (for numeric values such as `full`'s value).
  double getNumber() const;
  bool getBool() const;
  llvm::StringRef getString() const;
  DType getDType() const;
  llvm::ArrayRef<int64_t> getIntArray() const;
  llvm::ArrayRef<Attribute> getArray() const;
  llvm::ArrayRef<NamedAttr> getDict() const;
  /// Dict lookup by key; null when absent or not a dict.
  Attribute lookup(llvm::StringRef key) const;

  /// Content hash, stable across processes (for structural hashing).
  uint64_t contentHash() const;
  /// The text form, e.g. "[64, 512]".
  std::string str() const;

  const detail::AttrStorage *storage() const { return storage_; }
  friend bool operator==(Attribute a, Attribute b) { return a.storage_ == b.storage_; }
  friend bool operator!=(Attribute a, Attribute b) { return a.storage_ != b.storage_; }

private:
  const detail::AttrStorage *storage_ = nullptr;
};

/// A key/value pair, in op attribute lists and Dict attributes.
struct NamedAttr {
  Identifier name;
  Attribute value;
};

/// Whether `s` prints without quotes as a dictionary key or value name:
/// `[A-Za-z_][A-Za-z0-9_.]*`.
bool isBareIdentifier(llvm::StringRef s);

} // namespace ptoc::ir
