// Run output folders.
#include "ptoc/profile/OutputDir.h"

#include <chrono>
#include <cstdlib>
#include <ctime>

#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include "ptoc/support/ErrorCategory.h"

namespace ptoc::profile {

std::string outputBase(llvm::StringRef option) {
  if (!option.empty()) return option.str();
  if (const char *env = std::getenv("PTOC_OUTPUT_DIR"); env && *env) return env;
  return "output";
}

absl::StatusOr<std::string> createRunOutputDir(llvm::StringRef base) {
  if (std::error_code ec = llvm::sys::fs::create_directories(base))
    return support::ioError(absl::StrCat("cannot create output folder '", base.str(), "': ",
                                         ec.message(),
                                         " (set another base folder or PTOC_OUTPUT_DIR)"));
  // The timestamp names the run; the microseconds and pid keep concurrent runs
  // apart, and a suffix covers two runs within one microsecond.
  constexpr int kAttempts = 1000;
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    auto now = std::chrono::system_clock::now();
    std::time_t secs = std::chrono::system_clock::to_time_t(now);
    auto usec = std::chrono::duration_cast<std::chrono::microseconds>(now.time_since_epoch())
                    .count() % 1000000;
    std::tm local{};
    localtime_r(&secs, &local);
    char stamp[32];
    std::strftime(stamp, sizeof stamp, "%Y%m%d_%H%M%S", &local);
    std::string name = absl::StrFormat("output_%s_%06d_%d", stamp, usec, getpid());
    if (attempt > 0) absl::StrAppend(&name, "_", attempt);
    llvm::SmallString<256> path(base);
    llvm::sys::path::append(path, name);
    std::error_code ec = llvm::sys::fs::create_directory(path, /*IgnoreExisting=*/false);
    if (!ec) return std::string(path);
    if (ec != std::errc::file_exists)
      return support::ioError(
          absl::StrCat("cannot create output folder '", std::string(path), "': ", ec.message()));
  }
  // A thousand names taken within one microsecond: the folder is not ours to fill.
  return support::ioError(absl::StrCat("could not find a fresh output folder name under '",
                                       base.str(), "' after ", kAttempts, " tries (clear it out or "
                                       "set another base folder)"));
}

} // namespace ptoc::profile
