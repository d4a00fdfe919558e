// TextPosition: byte offset to line and column.
#include "ptoc/support/TextPosition.h"

#include <algorithm>

namespace ptoc::support {

TextPosition positionOf(llvm::StringRef text, size_t offset) {
  offset = std::min(offset, text.size());
  size_t line = 1, lineStart = 0;
  for (size_t i = 0; i < offset; ++i)
    if (text[i] == '\n') {
      ++line;
      lineStart = i + 1;
    }
  return {line, offset - lineStart + 1, offset};
}

} // namespace ptoc::support
