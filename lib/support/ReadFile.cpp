// ReadFile: a bounded read of a whole file.
#include "ptoc/support/ReadFile.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "llvm/Support/Errc.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/FileSystem.h"

namespace ptoc::support {

absl::StatusOr<std::string> readFileBounded(llvm::StringRef path, size_t maxBytes) {
  llvm::Expected<llvm::sys::fs::file_t> file = llvm::sys::fs::openNativeFileForRead(path);
  if (!file) return absl::NotFoundError(llvm::toString(file.takeError()));
  std::string text;
  constexpr size_t kChunk = size_t(1) << 16;
  absl::Status status;
  while (true) {
    // One byte past the limit tells "exactly the limit" from "over it".
    size_t room = std::min(kChunk, maxBytes + 1 - text.size());
    size_t old = text.size();
    text.resize(old + room);
    llvm::Expected<size_t> got =
        llvm::sys::fs::readNativeFile(*file, llvm::MutableArrayRef<char>(&text[old], room));
    if (!got) {
      status = absl::InvalidArgumentError(llvm::toString(got.takeError()));
      break;
    }
    text.resize(old + *got);
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

} // namespace ptoc::support
