// The files one profiled run leaves behind: a fresh output_<stamp> folder holding
// merged_swimlane.json, summary.txt, summary.json and swimlane.html (docs/outputs.md).
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "llvm/ADT/StringRef.h"
#include "ptoc/codegen/Program.h"
#include "ptoc/profile/Summary.h"
#include "ptoc/profile/Swimlane.h"
#include "ptoc/runtime/RunRecord.h"

namespace ptoc::profile {

/// File names inside a run folder.
inline constexpr const char *kSwimlaneFile = "merged_swimlane.json";
inline constexpr const char *kSummaryTextFile = "summary.txt";
inline constexpr const char *kSummaryJsonFile = "summary.json";

/// Creates `<outputBase(baseDir)>/output_<YYYYmmdd_HHMMSS>_<usec>_<pid>/` and writes
/// the swimlane and both summaries into it, each atomically (a reader never sees a
/// half-written file; the swimlane streams to disk, so a million-task trace is never
/// held in memory). `baseDir` empty: $PTOC_OUTPUT_DIR, else "output". Returns the
/// folder path. Errors: the folder or a file cannot be written (the message names
/// it), or the record does not belong to the program (InternalError).
absl::StatusOr<std::string> writeRunOutputs(const codegen::Program &program,
                                            const runtime::RunRecord &record,
                                            llvm::StringRef baseDir,
                                            const SwimlaneOptions &swimlane = {},
                                            const SummaryOptions &summary = {});
/// The same with a summary already computed by `summarize` for this record (the
/// caller has validated the record that way), so it is not computed twice.
absl::StatusOr<std::string> writeRunOutputs(const codegen::Program &program,
                                            const runtime::RunRecord &record,
                                            const Summary &summary, llvm::StringRef baseDir,
                                            const SwimlaneOptions &swimlane = {});

} // namespace ptoc::profile
