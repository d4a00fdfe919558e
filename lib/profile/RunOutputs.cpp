// Writing one run's output folder: swimlane (streamed to a temporary file, then
// renamed) and the two summaries.
#include "ptoc/profile/RunOutputs.h"

#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include "ptoc/profile/OutputDir.h"

namespace ptoc::profile {

namespace {

std::string join(llvm::StringRef folder, llvm::StringRef file) {
  llvm::SmallString<256> path(folder);
  llvm::sys::path::append(path, file);
  return std::string(path);
}

/// Like writeFileAtomically, but the contents are streamed by `write` (which may
/// fail), so a large trace never exists as one string.
template <typename Write>
absl::Status streamFileAtomically(const std::string &path, Write &&write) {
  std::string temp = absl::StrFormat("%s.tmp%d", path, getpid());
  absl::Status written;
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(temp, ec);
    if (ec)
      return absl::InvalidArgumentError(absl::StrCat("cannot write '", temp, "': ", ec.message()));
    written = write(os);
    os.close();
    if (written.ok() && os.has_error()) {
      written = absl::InvalidArgumentError(
          absl::StrCat("cannot write '", temp, "': ", os.error().message()));
      os.clear_error();
    }
  }
  if (!written.ok()) {
    llvm::sys::fs::remove(temp);
    return written;
  }
  if (std::error_code ec = llvm::sys::fs::rename(temp, path)) {
    llvm::sys::fs::remove(temp);
    return absl::InvalidArgumentError(
        absl::StrCat("cannot rename '", temp, "' to '", path, "': ", ec.message()));
  }
  return absl::OkStatus();
}

} // namespace

absl::StatusOr<std::string> writeRunOutputs(const codegen::Program &program,
                                            const runtime::RunRecord &record,
                                            llvm::StringRef baseDir,
                                            const SwimlaneOptions &swimlane,
                                            const SummaryOptions &summaryOptions) {
  // Summarise first: it validates the record, so a mismatch leaves no folder behind.
  absl::StatusOr<Summary> summary = summarize(program, record, summaryOptions);
  if (!summary.ok()) return summary.status();
  absl::StatusOr<std::string> folder = createRunOutputDir(outputBase(baseDir));
  if (!folder.ok()) return folder.status();
  if (absl::Status s = streamFileAtomically(join(*folder, kSwimlaneFile),
                                            [&](llvm::raw_ostream &os) {
                                              return writeSwimlane(os, program, record, swimlane);
                                            });
      !s.ok())
    return s;
  if (absl::Status s = writeFileAtomically(join(*folder, kSummaryTextFile), summaryText(*summary));
      !s.ok())
    return s;
  if (absl::Status s = writeFileAtomically(join(*folder, kSummaryJsonFile), summaryJson(*summary));
      !s.ok())
    return s;
  return *folder;
}

} // namespace ptoc::profile
