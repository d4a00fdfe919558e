// Diagnostic routing and formatting.
#include "ptoc/ir/Diagnostics.h"

#include <optional>

#include "absl/strings/cord.h"
#include "llvm/Support/raw_ostream.h"

namespace ptoc::ir {

static const char *severityName(Severity s) {
  switch (s) {
  case Severity::Error: return "error";
  case Severity::Warning: return "warning";
  case Severity::Note: return "note";
  case Severity::Remark: return "remark";
  }
  return "error";
}

std::string Diagnostic::str() const {
  std::string prefix = loc.isKnown() ? loc.str() + ": " : "";
  return prefix + severityName(severity) + ": " + message;
}

void DiagnosticEngine::emit(Diagnostic diag) {
  if (diag.severity == Severity::Error) ++numErrors_;
  if (handlers_.empty()) {
    llvm::errs() << diag.str() << "\n";
    return;
  }
  handlers_.back()(diag);
}

InFlightDiagnostic::InFlightDiagnostic(InFlightDiagnostic &&other) noexcept
    : engine_(other.engine_), diag_(std::move(other.diag_)) {
  other.engine_ = nullptr;
}

InFlightDiagnostic::~InFlightDiagnostic() {
  if (engine_) engine_->emit(std::move(diag_));
}

DiagnosticCollector::DiagnosticCollector(DiagnosticEngine &engine) : engine_(engine) {
  engine_.pushHandler([this](const Diagnostic &d) { diags_.push_back(d); });
}

DiagnosticCollector::~DiagnosticCollector() { engine_.popHandler(); }

bool DiagnosticCollector::hasErrors() const {
  for (const Diagnostic &d : diags_)
    if (d.severity == Severity::Error) return true;
  return false;
}

std::string DiagnosticCollector::errorText() const {
  std::string out;
  for (const Diagnostic &d : diags_) {
    if (d.severity != Severity::Error && d.severity != Severity::Note) continue;
    if (!out.empty()) out += '\n';
    out += d.str();
  }
  return out;
}

absl::Status DiagnosticCollector::toStatus() const {
  if (!hasErrors()) return absl::OkStatus();
  const Diagnostic *first = nullptr;
  for (const Diagnostic &d : diags_) {
    if (d.severity != Severity::Error) continue;
    if (d.category == DiagCategory::Internal) return absl::InternalError(errorText());
    if (!first) first = &d;
  }
  if (first->category == DiagCategory::Resource)
    return withCategory(absl::ResourceExhaustedError(errorText()), DiagCategory::Resource);
  return withCategory(absl::InvalidArgumentError(errorText()), first->category);
}

} // namespace ptoc::ir
