// Errors crossing into Python: an absl::Status becomes a ptoc.Error subclass chosen
// by ptoc/errors.py from what failed (building an op, an option, compiling, running).
#pragma once

#include <stdexcept>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace ptoc::python {

/// What was being done when a status failed; ptoc/errors.py maps it (and the
/// message) to an exception class.
enum class ErrorStage { Build, Option, Compile, Run, Input };

/// Thrown by the bindings; translated into a Python exception (registered in
/// Module.cpp) with the GIL held.
class StatusError : public std::exception {
public:
  StatusError(ErrorStage stage, absl::Status status)
      : stage_(stage), status_(std::move(status)), what_(status_.ToString()) {}
  const char *what() const noexcept override { return what_.c_str(); }
  ErrorStage stage() const { return stage_; }
  const absl::Status &status() const { return status_; }

private:
  ErrorStage stage_;
  absl::Status status_;
  std::string what_;
};

inline void throwIfError(ErrorStage stage, const absl::Status &st) {
  if (!st.ok()) throw StatusError(stage, st);
}

template <typename T>
T valueOrThrow(ErrorStage stage, absl::StatusOr<T> v) {
  if (!v.ok()) throw StatusError(stage, v.status());
  return *std::move(v);
}

/// Registers the translator of StatusError.
void registerErrorTranslator();

} // namespace ptoc::python
