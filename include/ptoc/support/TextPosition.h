// TextPosition: the 1-based line and column of a byte offset in a text, for messages.
#pragma once

#include <cstddef>

#include "llvm/ADT/StringRef.h"

namespace ptoc::support {

/// A place in a text: 1-based line and column (columns count bytes), and the 0-based
/// byte offset it was computed from.
struct TextPosition {
  size_t line = 1;
  size_t column = 1;
  size_t offset = 0;
};

/// The position of byte `offset` of `text` (clamped to its end). Linear in `offset`:
/// meant for error paths, not for every token.
TextPosition positionOf(llvm::StringRef text, size_t offset);

} // namespace ptoc::support
