// Unit tests for support::readFileBounded: whole files, the size limit (also on
// files without a size, such as /dev/zero), and errors that carry the reason.
#include <catch2/catch.hpp>

#include <fstream>
#include <string>

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"

#include "ptoc/support/ReadFile.h"

using ptoc::support::readFileBounded;

TEST_CASE("readFileBounded reads a file whole, up to the limit", "[support]") {
  llvm::SmallString<128> path;
  REQUIRE_FALSE(llvm::sys::fs::createTemporaryFile("ptoc-read", "txt", path));
  std::string contents(100000, 'x'); // more than one read chunk
  std::ofstream(std::string(path)) << contents;
  absl::StatusOr<std::string> all = readFileBounded(path, contents.size());
  REQUIRE(all.ok());
  CHECK(*all == contents);
  absl::StatusOr<std::string> over = readFileBounded(path, contents.size() - 1);
  REQUIRE_FALSE(over.ok());
  CHECK_THAT(std::string(over.status().message()),
             Catch::Contains("larger than the limit of 99999 bytes"));
  llvm::sys::fs::remove(path);
}

TEST_CASE("readFileBounded stops at the limit on a file that never ends", "[support]") {
  // Before the limit, `--device /dev/zero` read until the host ran out of memory.
  absl::StatusOr<std::string> zero = readFileBounded("/dev/zero", 1 << 20);
  REQUIRE_FALSE(zero.ok());
  CHECK_THAT(std::string(zero.status().message()),
             Catch::Contains("larger than the limit of 1048576 bytes"));
  absl::StatusOr<std::string> missing = readFileBounded("/nonexistent/ptoc/x.json", 10);
  REQUIRE_FALSE(missing.ok());
  CHECK_THAT(std::string(missing.status().message()), Catch::Contains("No such file"));
  absl::StatusOr<std::string> folder = readFileBounded("/", 10);
  CHECK_FALSE(folder.ok());
}
