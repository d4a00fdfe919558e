// ReadFile: the one way ptoc reads a whole input file: with a size limit where one
// applies, so a wrong path (a huge file, a pipe, /dev/zero) is an error instead of a
// read without end, and with errors filed as io that name the file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "llvm/ADT/StringRef.h"

namespace ptoc::support {

/// No size limit: for inputs as large as the user's data (.npy arrays, traces, the
/// knowledge bank), which are read whole whatever their size.
inline constexpr size_t kNoLimit = SIZE_MAX;
/// Program text (.pto files): far above any real kernel's (the largest in this
/// repository is 23 KB), far below a file read by mistake.
inline constexpr size_t kMaxSourceBytes = size_t(64) << 20;

/// The contents of the file at `path`, read whole, at most `maxBytes` (checked while
/// reading). Errors are io errors (category IO) naming the file and the reason:
/// "cannot read <what> '<path>': <reason>", then ` (<hint>)` when a hint is given
/// (what the caller expected there). The code is readFileBounded's.
absl::StatusOr<std::string> readFile(llvm::StringRef path, size_t maxBytes,
                                     llvm::StringRef what = "", llvm::StringRef hint = "");

/// The contents of the file at `path`, read whole. More than `maxBytes` is an error
/// (checked while reading, so a device or a pipe that never ends stops at the limit).
/// Errors carry only the reason ("No such file or directory", "larger than the limit
/// of N bytes (...)"): the caller names the file and what it was for (readFile does).
/// A file that does not exist is NotFound, one over the limit InvalidArgument, one
/// the host's memory cannot hold ResourceExhausted, any other failure (permissions, a
/// failed read) Unavailable.
absl::StatusOr<std::string> readFileBounded(llvm::StringRef path, size_t maxBytes);

} // namespace ptoc::support
