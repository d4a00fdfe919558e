// ReadFile: reading a whole (small) input file with a size limit, so a wrong path
// (a huge file, a pipe, /dev/zero) is an error instead of a read without end.
#pragma once

#include <cstddef>
#include <string>

#include "absl/status/statusor.h"
#include "llvm/ADT/StringRef.h"

namespace ptoc::support {

/// The contents of the file at `path`, read whole. More than `maxBytes` is an error
/// (checked while reading, so a device or a pipe that never ends stops at the limit).
/// Errors carry only the reason ("No such file or directory", "larger than the limit
/// of N bytes (...)"): the caller names the file and what it was for.
absl::StatusOr<std::string> readFileBounded(llvm::StringRef path, size_t maxBytes);

} // namespace ptoc::support
