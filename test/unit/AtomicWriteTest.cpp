// Unit tests for support::writeFileAtomically: a file is replaced whole, a failed
// write (the writer's error, a folder that does not exist) leaves the old file and no
// temporary behind, and disk failures are IO errors, not bugs.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <string>

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include "ptoc/support/AtomicWrite.h"
#include "ptoc/support/ErrorCategory.h"

using namespace ptoc::support;

namespace {

std::string slurp(const std::string &path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

/// The entries of `dir`.
int entries(const std::string &dir) {
  std::error_code ec;
  int n = 0;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec; it.increment(ec)) ++n;
  return n;
}

} // namespace

TEST_CASE("writeFileAtomically replaces a file whole, a failed write keeps the old one",
          "[support]") {
  llvm::SmallString<128> dir;
  REQUIRE_FALSE(llvm::sys::fs::createUniqueDirectory("ptoc-atomic", dir));
  std::string path = (dir + "/out.txt").str();

  REQUIRE(writeFileAtomically(path, "first").ok());
  CHECK(slurp(path) == "first");
  REQUIRE(writeFileAtomically(path, "second, synced", Durability::Sync).ok());
  CHECK(slurp(path) == "second, synced");

  // The writer fails halfway: its error comes back, the old contents stay, and the
  // temporary file is gone.
  absl::Status failed = writeFileAtomically(path, [](llvm::raw_ostream &os) {
    os << "half of a ";
    return absl::InvalidArgumentError("the writer gave up");
  });
  CHECK(failed.message() == "the writer gave up");
  CHECK(slurp(path) == "second, synced");
  CHECK(entries(std::string(dir)) == 1);

  // A folder that does not exist: an IO error naming the file.
  std::string missing = (dir + "/no/such/folder/out.txt").str();
  absl::Status io = writeFileAtomically(missing, "x");
  REQUIRE_FALSE(io.ok());
  CHECK(categoryOf(io) == DiagCategory::IO);
  CHECK_THAT(std::string(io.message()), Catch::Contains("cannot write '" + missing + "'"));

  // A folder where the file should be: the rename fails, nothing is left behind.
  std::string folder = (dir + "/taken").str();
  REQUIRE_FALSE(llvm::sys::fs::create_directory(folder));
  REQUIRE(llvm::sys::fs::create_directory(folder + "/inside") == std::error_code());
  absl::Status taken = writeFileAtomically(folder, "x");
  REQUIRE_FALSE(taken.ok());
  CHECK(categoryOf(taken) == DiagCategory::IO);
  CHECK(entries(std::string(dir)) == 2); // out.txt and taken/

  llvm::sys::fs::remove_directories(dir);
}
