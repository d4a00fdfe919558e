// The ptoc version (the CMake project version), for tools, the Python module and
// cache keys.
#pragma once

#include "llvm/ADT/StringRef.h"

namespace ptoc::session {

/// "0.1.0".
llvm::StringRef version();

} // namespace ptoc::session
