// Text form of source locations.
#include "ptoc/ir/Location.h"

#include <string>

namespace ptoc::ir {

std::string Location::str() const {
  if (!isKnown()) return "<unknown>";
  return std::string(fileName()) + ":" + std::to_string(line) + ":" + std::to_string(col);
}

} // namespace ptoc::ir
