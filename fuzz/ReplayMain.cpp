// Runs a fuzz target's LLVMFuzzerTestOneInput on given files, and on every file in
// given folders, without libFuzzer. The normal build compiles each target this way
// (replay-<name>), so a target never stops compiling unnoticed, and ctest replays the
// inputs of past findings (fuzz/regressions/<name>) and inputs nested 40,000 levels
// deep through it: a finding once fixed stays fixed in the fast suite. A finding
// aborts (fuzz/FuzzCheck.h), which fails the test.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int main(int argc, char **argv) {
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    if (!llvm::sys::fs::is_directory(argv[i])) {
      files.push_back(argv[i]);
      continue;
    }
    std::vector<std::string> inFolder;
    std::error_code ec;
    for (llvm::sys::fs::directory_iterator it(argv[i], ec), end; it != end && !ec;
         it.increment(ec))
      if (llvm::sys::fs::is_regular_file(it->path())) inFolder.push_back(it->path());
    std::sort(inFolder.begin(), inFolder.end());
    files.insert(files.end(), inFolder.begin(), inFolder.end());
  }
  for (const std::string &file : files) {
    auto buffer = llvm::MemoryBuffer::getFile(file, /*IsText=*/false,
                                              /*RequiresNullTerminator=*/false);
    if (!buffer) {
      std::fprintf(stderr, "replay: cannot read '%s': %s\n", file.c_str(),
                   buffer.getError().message().c_str());
      return 1;
    }
    std::fprintf(stderr, "replay: %s\n", file.c_str());
    llvm::StringRef bytes = (*buffer)->getBuffer();
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t *>(bytes.data()), bytes.size());
  }
  std::printf("replayed %zu inputs without a finding\n", files.size());
  return files.empty() ? 1 : 0;
}
