// The tools' out-of-memory exit (see OutOfMemory.h).
#include "OutOfMemory.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <new>

#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/raw_ostream.h"

namespace ptoc::tools {
namespace {

// The message lives in fixed buffers, composed ahead of time: the handler runs when
// nothing can be allocated. Two buffers, so a new phase is written into the one not
// shown and then published: a handler on another thread never reads half a message.
// Process-wide by nature (so are the handlers); only a tool's main thread writes.
constexpr size_t kMessageBytes = 1024;
char gTool[64];
char gMessages[2][kMessageBytes];
std::atomic<int> gShown{-1};
std::atomic<bool> gExiting{false};

void writeAll(const char *text) {
  size_t left = std::strlen(text);
  while (left > 0) {
    ssize_t n = ::write(STDERR_FILENO, text, left);
    if (n <= 0) return;
    text += n;
    left -= size_t(n);
  }
}

[[noreturn]] void exitOutOfMemory() {
  // A second thread out of memory at the same time, or an allocation inside the
  // flushes below, only waits for the first to exit.
  if (gExiting.exchange(true)) {
    for (;;) pause();
  }
  // What the tool printed so far still reaches its reader (both streams were made
  // when the handler was installed, so flushing allocates nothing).
  llvm::outs().flush();
  llvm::errs().flush();
  std::fflush(nullptr);
  int shown = gShown.load();
  writeAll(shown >= 0 ? gMessages[shown] : "ptoc: ran out of host memory\n");
  ::_exit(1);
}

void onNewFailure() { exitOutOfMemory(); }

void onLlvmBadAlloc(void *, const char *, bool) { exitOutOfMemory(); }

void copyTruncated(char *to, size_t size, llvm::StringRef from) {
  size_t n = std::min(from.size(), size - 1);
  std::memcpy(to, from.data(), n);
  to[n] = '\0';
}

} // namespace

void setOutOfMemoryDoing(llvm::StringRef doing) {
  int next = gShown.load() == 0 ? 1 : 0;
  // "<tool>: ran out of host memory while <doing>: <fix>\n", the middle cut to fit.
  static constexpr llvm::StringLiteral kFix =
      ": raise the memory limit or use bigger tiles / lower max_tile_ops\n";
  llvm::StringRef tool(gTool);
  llvm::StringRef lead = ": ran out of host memory while ";
  size_t room = kMessageBytes - 1 - tool.size() - lead.size() - kFix.size();
  char *out = gMessages[next];
  size_t at = 0;
  for (llvm::StringRef part : {tool, lead, doing.take_front(room), llvm::StringRef(kFix)}) {
    std::memcpy(out + at, part.data(), part.size());
    at += part.size();
  }
  out[at] = '\0';
  gShown.store(next);
}

void exitOnOutOfMemory(llvm::StringRef tool, llvm::StringRef doing) {
  copyTruncated(gTool, sizeof gTool, tool);
  setOutOfMemoryDoing(doing);
  (void)llvm::outs();
  (void)llvm::errs();
  std::set_new_handler(onNewFailure);
  llvm::install_bad_alloc_error_handler(onLlvmBadAlloc);
}

} // namespace ptoc::tools
