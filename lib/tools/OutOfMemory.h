// What the ptoc tools do when the host runs out of memory: end the process at once
// with a message and exit status 1, instead of throwing std::bad_alloc through code
// that cannot unwind safely (LLVM's DenseMap is not exception safe; LLVM's own
// allocations abort). Internal to lib/tools; docs/reliability.md.
#pragma once

#include "llvm/ADT/StringRef.h"

namespace ptoc::tools {

/// Installs, for the rest of the process, a new-handler (std::set_new_handler) and
/// LLVM's bad-alloc handler that print `<tool>: ran out of host memory while
/// <doing>: raise the memory limit or use bigger tiles / lower max_tile_ops`, flush
/// the standard streams and _exit(1) without unwinding. A tool's main calls it once,
/// first: process-wide handlers belong to the program, never to the library.
void exitOnOutOfMemory(llvm::StringRef tool, llvm::StringRef doing);

/// Says what the tool is doing now ("compiling big.pto"), for the message. Call it
/// from the tool's main thread between phases; other threads only read it.
void setOutOfMemoryDoing(llvm::StringRef doing);

} // namespace ptoc::tools
