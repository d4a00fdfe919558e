// Unit tests for support::readFileBounded and readFile: whole files, the size limit
// (also on files without a size, such as /dev/zero), no limit, and errors that carry
// the reason (readFile's also name the file and are filed as io).
#include <catch2/catch.hpp>

#include <fstream>
#include <string>

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"

#include "ptoc/support/ErrorCategory.h"
#include "ptoc/support/ReadFile.h"

using ptoc::support::readFile;
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

TEST_CASE("readFile names the file and files its errors as io", "[support]") {
  using ptoc::support::DiagCategory;
  absl::StatusOr<std::string> missing =
      readFile("/nonexistent/ptoc/t.json", 10, "trace", "give the run folder");
  REQUIRE_FALSE(missing.ok());
  CHECK(std::string(missing.status().message()) ==
        "cannot read trace '/nonexistent/ptoc/t.json': No such file or directory (give the run "
        "folder)");
  CHECK(absl::IsNotFound(missing.status()));
  CHECK(ptoc::support::categoryOf(missing.status()) == DiagCategory::IO);

  absl::StatusOr<std::string> zero = readFile("/dev/zero", 1 << 10);
  REQUIRE_FALSE(zero.ok());
  CHECK_THAT(std::string(zero.status().message()),
             Catch::StartsWith("cannot read '/dev/zero': larger than the limit of 1024 bytes"));
  CHECK(ptoc::support::categoryOf(zero.status()) == DiagCategory::IO);

  absl::StatusOr<std::string> folder = readFile("/", ptoc::support::kNoLimit, "bank file");
  REQUIRE_FALSE(folder.ok());
  CHECK_THAT(std::string(folder.status().message()), Catch::StartsWith("cannot read bank file '/': "));
  CHECK(ptoc::support::categoryOf(folder.status()) == DiagCategory::IO);
}

TEST_CASE("readFile without a limit reads a file whole, whatever its size", "[support]") {
  llvm::SmallString<128> path;
  REQUIRE_FALSE(llvm::sys::fs::createTemporaryFile("ptoc-read", "bin", path));
  std::string contents;
  for (int i = 0; i < 300000; ++i) contents += char('a' + i % 26); // several read chunks
  std::ofstream(std::string(path), std::ios::binary) << contents;
  absl::StatusOr<std::string> all = readFile(path, ptoc::support::kNoLimit);
  REQUIRE(all.ok());
  CHECK(*all == contents);
  absl::StatusOr<std::string> exact = readFile(path, contents.size());
  REQUIRE(exact.ok());
  CHECK(exact->size() == contents.size());
  absl::StatusOr<std::string> empty = readFile("/dev/null", ptoc::support::kNoLimit);
  REQUIRE(empty.ok());
  CHECK(empty->empty());
  llvm::sys::fs::remove(path);
}
