// AtomicWrite: a file is replaced whole or not at all. The contents go to a fresh
// temporary file beside it (unique across threads and processes), optionally synced to
// the disk, then renamed over the target, so a reader never sees half a file and a
// failed write leaves the old one in place.
#pragma once

#include "absl/status/status.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

namespace ptoc::support {

/// Whether the contents reach the disk (fsync) before the rename: for data that must
/// survive a crash of the machine (the tuning knowledge bank), not for run outputs.
enum class Durability { Rename, Sync };

/// Writes `contents` to `path` atomically. A failure is an IO error naming the file
/// and the reason (support::ioError); the temporary file is removed.
absl::Status writeFileAtomically(llvm::StringRef path, llvm::StringRef contents,
                                 Durability durability = Durability::Rename);

/// The same, with the contents streamed by `write`; its error is returned as is (and
/// nothing is written).
absl::Status writeFileAtomically(llvm::StringRef path,
                                 llvm::function_ref<absl::Status(llvm::raw_ostream &)> write,
                                 Durability durability = Durability::Rename);

} // namespace ptoc::support
