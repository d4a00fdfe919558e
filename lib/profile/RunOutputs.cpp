// Writing one run's output folder: swimlane (streamed to a temporary file, then
// renamed), the two summaries and swimlane.html.
#include "ptoc/profile/RunOutputs.h"


#include "absl/strings/str_cat.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include "ptoc/profile/OutputDir.h"
#include "ptoc/profile/SwimlaneHtml.h"
#include "ptoc/support/AtomicWrite.h"

namespace ptoc::profile {

namespace {

std::string join(llvm::StringRef folder, llvm::StringRef file) {
  llvm::SmallString<256> path(folder);
  llvm::sys::path::append(path, file);
  return std::string(path);
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
  return writeRunOutputs(program, record, *summary, baseDir, swimlane);
}

absl::StatusOr<std::string> writeRunOutputs(const codegen::Program &program,
                                            const runtime::RunRecord &record,
                                            const Summary &summary, llvm::StringRef baseDir,
                                            const SwimlaneOptions &swimlane) {
  absl::StatusOr<std::string> folder = createRunOutputDir(outputBase(baseDir));
  if (!folder.ok()) return folder.status();
  if (absl::Status s = support::writeFileAtomically(join(*folder, kSwimlaneFile),
                                           [&](llvm::raw_ostream &os) {
                                             return writeSwimlane(os, program, record, swimlane);
                                           });
      !s.ok())
    return s;
  if (absl::Status s = support::writeFileAtomically(join(*folder, kSummaryTextFile), summaryText(summary));
      !s.ok())
    return s;
  if (absl::Status s = support::writeFileAtomically(join(*folder, kSummaryJsonFile), summaryJson(summary));
      !s.ok())
    return s;
  // The page reads the files just written, so it shows exactly what they say.
  if (absl::Status s = writeSwimlaneHtmlFile(*folder); !s.ok()) return s;
  return *folder;
}

} // namespace ptoc::profile
