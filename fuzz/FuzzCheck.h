// What a fuzz target counts as a finding besides a crash, a sanitizer report, a hang
// or a leak: ptoc reporting a bug in itself (an internal error) or breaking a promise
// of its own (a round trip that differs, a pass failing on verified IR). Either stops
// the run with a message, which libFuzzer records as a crash with its input.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/status/status.h"
#include "llvm/ADT/StringRef.h"

namespace ptoc::fuzz {

/// Stops the process: libFuzzer saves the input as crash-<sha1>.
[[noreturn]] inline void finding(llvm::StringRef what) {
  std::fprintf(stderr, "\nptoc fuzz finding: %.*s\n", static_cast<int>(what.size()),
               what.data());
  std::abort();
}

/// A status is fine when OK or a user-facing error; an internal error is a finding.
/// ptoc reports a bug in itself as absl::StatusCode::kInternal (ir::internalError, the
/// simulator's record checks), so the code decides, never the wording: a message may
/// quote the input, and libFuzzer learns the strings a target compares against.
/// `where` names the call.
inline void checkNotABug(const absl::Status &status, llvm::StringRef where) {
  if (status.ok() || status.code() != absl::StatusCode::kInternal) return;
  finding(where.str() + ": " + std::string(status.message()));
}

} // namespace ptoc::fuzz
