// ReadFile: a bounded read of a whole file.
#include "ptoc/support/ReadFile.h"

#include <algorithm>
#include <new>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "llvm/Support/Errc.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/FileSystem.h"

#include "ptoc/support/ErrorCategory.h"

namespace ptoc::support {

absl::StatusOr<std::string> readFileBounded(llvm::StringRef path, size_t maxBytes) {
  llvm::Expected<llvm::sys::fs::file_t> file = llvm::sys::fs::openNativeFileForRead(path);
  if (!file) {
    std::error_code ec = llvm::errorToErrorCode(file.takeError());
    if (ec == std::errc::no_such_file_or_directory) return absl::NotFoundError(ec.message());
    return absl::UnavailableError(ec.message()); // e.g. permission denied
  }
  std::string text;
  // A regular file says its size: read it in one go. Anything else (a pipe, a device)
  // is read in chunks until it ends or passes the limit.
  constexpr size_t kChunk = size_t(1) << 16;
  size_t chunk = kChunk;
  llvm::sys::fs::file_status info;
  if (!llvm::sys::fs::status(*file, info) && info.type() == llvm::sys::fs::file_type::regular_file)
    chunk = std::max(kChunk, size_t(std::min<uint64_t>(info.getSize(), maxBytes)) + 1);
  absl::Status status;
  while (true) {
    // One byte past the limit tells "exactly the limit" from "over it" (the text is
    // never over the limit here: the loop ends when it is).
    size_t left = maxBytes - text.size();
    size_t room = left < chunk ? left + 1 : chunk;
    size_t old = text.size();
    try {
      text.resize(old + room);
    } catch (const std::bad_alloc &) {
      status = absl::ResourceExhaustedError(absl::StrCat(
          "more than this host's memory can hold (read ", old, " bytes so far)"));
      break;
    }
    llvm::Expected<size_t> got =
        llvm::sys::fs::readNativeFile(*file, llvm::MutableArrayRef<char>(&text[old], room));
    if (!got) {
      status = absl::UnavailableError(llvm::toString(got.takeError()));
      break;
    }
    text.resize(old + *got);
    chunk = kChunk; // after a whole regular file, only its end remains to be seen
    if (*got == 0) break;
    if (text.size() > maxBytes) {
      status = absl::InvalidArgumentError(absl::StrCat(
          "larger than the limit of ", maxBytes, " bytes for this kind of file (is it the file "
          "you meant?)"));
      break;
    }
  }
  llvm::sys::fs::closeFile(*file);
  if (!status.ok()) return status;
  return text;
}

absl::StatusOr<std::string> readFile(llvm::StringRef path, size_t maxBytes, llvm::StringRef what,
                                     llvm::StringRef hint) {
  absl::StatusOr<std::string> text = readFileBounded(path, maxBytes);
  if (text.ok()) return text;
  std::string message =
      absl::StrCat("cannot read ", what.str(), what.empty() ? "" : " ", "'", path.str(),
                   "': ", std::string(text.status().message()));
  if (!hint.empty()) absl::StrAppend(&message, " (", hint.str(), ")");
  return withCategory(absl::Status(text.status().code(), message), DiagCategory::IO);
}

} // namespace ptoc::support
