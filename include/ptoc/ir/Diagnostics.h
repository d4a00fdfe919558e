// Diagnostics: errors, warnings, notes and remarks attached to source locations.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/raw_ostream.h"

#include "ptoc/ir/Location.h"
#include "ptoc/support/ErrorCategory.h"

namespace ptoc::ir {

enum class Severity : uint8_t { Error, Warning, Note, Remark };

/// What an error is about (support/ErrorCategory.h).
using support::DiagCategory;
using support::diagCategoryName;

/// Where a diagnostic points. Unlike Location it owns the file name, so a
/// diagnostic stays valid after the Context that produced it is gone.
struct DiagLocation {
  std::string file; ///< empty when unknown
  uint32_t line = 0;
  uint32_t col = 0;

  DiagLocation() = default;
  DiagLocation(Location l)
      : file(l.file ? l.file : ""), line(l.line), col(l.col) {}
  bool isKnown() const { return !file.empty() && line != 0; }
  llvm::StringRef fileName() const { return file.empty() ? "<unknown>" : llvm::StringRef(file); }
  /// "file:line:col", or "<unknown>".
  std::string str() const {
    return isKnown() ? file + ":" + std::to_string(line) + ":" + std::to_string(col)
                     : "<unknown>";
  }
};

/// One diagnostic: where, how bad, and what (the message names the fix).
struct Diagnostic {
  Severity severity = Severity::Error;
  DiagCategory category = DiagCategory::General;
  DiagLocation loc;
  std::string message;

  /// "file:line:col: error: message" (the form every tool prints).
  std::string str() const;
};

/// Routes diagnostics to a handler. Owned by a Context; handlers are scoped with
/// `ScopedDiagnosticHandler` (so a pass driver, a test or the Python layer can
/// collect them). Without a handler, diagnostics go to stderr.
class DiagnosticEngine {
public:
  using Handler = std::function<void(const Diagnostic &)>;

  void emit(Diagnostic diag);
  unsigned numErrors() const { return numErrors_; }

  /// Pushes a handler; returns an id for `popHandler`.
  void pushHandler(Handler h) { handlers_.push_back(std::move(h)); }
  void popHandler() { handlers_.pop_back(); }

private:
  std::vector<Handler> handlers_;
  unsigned numErrors_ = 0;
};

/// Builds a message with `<<` and emits it when destroyed.
class InFlightDiagnostic {
public:
  InFlightDiagnostic(DiagnosticEngine &engine, Severity sev, Location loc)
      : engine_(&engine) {
    diag_.severity = sev;
    diag_.loc = loc;
  }
  InFlightDiagnostic(InFlightDiagnostic &&other) noexcept;
  InFlightDiagnostic(const InFlightDiagnostic &) = delete;
  ~InFlightDiagnostic();

  /// Files the diagnostic under `c` (General unless said).
  InFlightDiagnostic &in(DiagCategory c) {
    diag_.category = c;
    return *this;
  }
  template <typename T> InFlightDiagnostic &operator<<(const T &v) {
    llvm::raw_string_ostream os(diag_.message);
    os << v;
    return *this;
  }
  /// Lets `return emitError(...) << "...";` work in functions returning LogicalResult.
  operator bool() const { return false; }

private:
  DiagnosticEngine *engine_;
  Diagnostic diag_;
};

/// Collects every diagnostic emitted while it lives (it shadows outer handlers).
class DiagnosticCollector {
public:
  explicit DiagnosticCollector(DiagnosticEngine &engine);
  ~DiagnosticCollector();
  const std::vector<Diagnostic> &diagnostics() const { return diags_; }
  bool hasErrors() const;
  /// All errors joined, one "file:line:col: error: ..." per line.
  std::string errorText() const;
  /// OK when no error was collected; Internal when one is a bug in ptoc; else
  /// InvalidArgument with `errorText()`, filed (withCategory) under the first
  /// error's category.
  absl::Status toStatus() const;

private:
  DiagnosticEngine &engine_;
  std::vector<Diagnostic> diags_;
};

/// The message of a status as a StringRef (Debian's Abseil has its own
/// absl::string_view, which llvm streams do not accept).
inline llvm::StringRef messageOf(const absl::Status &s) {
  return {s.message().data(), s.message().size()};
}

using support::categoryOf;
using support::internalError;
using support::ioError;
using support::withCategory;

} // namespace ptoc::ir
