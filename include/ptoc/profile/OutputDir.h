// The per-run output folder: <base>/output_<YYYYmmdd_HHMMSS>_<usec>_<pid>.
#pragma once

#include <string>

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/raw_ostream.h"

#include "absl/status/statusor.h"
#include "llvm/ADT/StringRef.h"

namespace ptoc::profile {

/// The base folder for run outputs: `option` if not empty, else $PTOC_OUTPUT_DIR if
/// set and not empty, else "output" (relative to the working directory).
std::string outputBase(llvm::StringRef option);

/// Creates a fresh folder `output_<YYYYmmdd_HHMMSS>_<usec>_<pid>` under `base`
/// (creating `base` as needed) and returns its path. Two runs in one process get
/// different folders. Errors are io errors (support::ioError) naming the folder and
/// the reason.
absl::StatusOr<std::string> createRunOutputDir(llvm::StringRef base);

} // namespace ptoc::profile
