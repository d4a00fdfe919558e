// Source locations carried by every operation: file, line and column.
#pragma once

#include <cstdint>
#include <string>

#include "llvm/ADT/StringRef.h"

namespace ptoc::ir {

/// A position in a source file (a .pto file, or the user's Python file). The file
/// name is owned by the Context that interned it. Line 0 means "unknown".
struct Location {
  const char *file = nullptr; ///< interned; nullptr when unknown
  uint32_t line = 0;
  uint32_t col = 0;

  bool isKnown() const { return file != nullptr && line != 0; }
  llvm::StringRef fileName() const { return file ? llvm::StringRef(file) : "<unknown>"; }
  /// "file:line:col", or "<unknown>".
  std::string str() const;

  friend bool operator==(const Location &a, const Location &b) {
    return a.file == b.file && a.line == b.line && a.col == b.col;
  }
};

} // namespace ptoc::ir
