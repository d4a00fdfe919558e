// Checks emitted diagnostics against `// expected-error@+1 {{text}}` comments in a
// source buffer (ptoc-opt --verify-diagnostics).
#pragma once

#include <string>
#include <vector>

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include "ptoc/ir/Diagnostics.h"

namespace ptoc::tools {

/// Expectations are comments of the form
///   // expected-<severity>[@<where>] {{<substring of the message>}}
/// with severity error, warning, note or remark, and <where> `+N`/`-N` (lines
/// relative to the comment) or `N` (an absolute line); without it, the comment's
/// own line. A diagnostic matches an expectation of the same severity on the same
/// line whose text is a substring of its message; each expectation is matched once.
class DiagnosticVerifier {
public:
  /// Scans `text` (whose first line is line `firstLine` of `fileName`).
  DiagnosticVerifier(llvm::StringRef text, llvm::StringRef fileName, unsigned firstLine);

  /// Records one emitted diagnostic.
  void record(const ir::Diagnostic &d) { seen_.push_back(d); }
  /// Problems found while scanning the comments (malformed expectations).
  const std::vector<std::string> &scanErrors() const { return scanErrors_; }

  /// Matches diagnostics to expectations; prints every unmatched expectation and
  /// unexpected diagnostic to `os`. Returns true when everything matched.
  bool verify(llvm::raw_ostream &os);

private:
  struct Expected {
    ir::Severity severity;
    unsigned line;
    unsigned commentLine;
    std::string text;
    bool matched = false;
  };
  std::string fileName_;
  std::vector<Expected> expected_;
  std::vector<ir::Diagnostic> seen_;
  std::vector<std::string> scanErrors_;
};

} // namespace ptoc::tools
