// Atomic file replacement (see AtomicWrite.h).
#include "ptoc/support/AtomicWrite.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"

#include "ptoc/support/ErrorCategory.h"

namespace ptoc::support {

absl::Status writeFileAtomically(llvm::StringRef path, llvm::StringRef contents,
                                 Durability durability) {
  return writeFileAtomically(
      path,
      [&](llvm::raw_ostream &os) {
        os << contents;
        return absl::OkStatus();
      },
      durability);
}

absl::Status writeFileAtomically(llvm::StringRef path,
                                 llvm::function_ref<absl::Status(llvm::raw_ostream &)> write,
                                 Durability durability) {
  auto failed = [&](const std::string &why) {
    return ioError("cannot write '" + path + "': " + why);
  };
  // Beside the target, so the rename stays on one file system.
  llvm::SmallString<256> model(path);
  model += ".tmp-%%%%%%%%";
  llvm::SmallString<256> temp;
  int fd = -1;
  if (std::error_code ec = llvm::sys::fs::createUniqueFile(model, fd, temp))
    return failed("cannot create a temporary file beside it (" + ec.message() + ")");
  absl::Status status;
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/false);
    status = write(os);
    os.flush();
    if (status.ok() && os.has_error()) status = failed(os.error().message());
    os.clear_error();
  }
  if (status.ok() && durability == Durability::Sync && ::fsync(fd) != 0)
    status = failed(std::string("cannot sync it to the disk: ") + std::strerror(errno));
  if (::close(fd) != 0 && status.ok()) status = failed(std::strerror(errno));
  if (status.ok())
    if (std::error_code ec = llvm::sys::fs::rename(temp, path))
      status = failed("cannot rename '" + std::string(temp) + "' over it: " + ec.message());
  if (!status.ok()) llvm::sys::fs::remove(temp);
  return status;
}

} // namespace ptoc::support
