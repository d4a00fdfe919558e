// The version string compiled in from CMake's project version.
#include "ptoc/session/Version.h"

namespace ptoc::session {

llvm::StringRef version() { return PTOC_VERSION; }

} // namespace ptoc::session
