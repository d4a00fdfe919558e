// ErrorCategory: what an error is about, carried by an absl::Status as a payload, so
// that a caller (Python's exception classes, a CLI's exit code) tells the user's
// mistakes from ptoc's own bugs and from a disk that failed without reading the
// message. Every layer files its errors here; ir's diagnostics use the same names.
#pragma once

#include <cstdint>

#include "absl/status/status.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"

namespace ptoc::support {

/// What an error is about, so that a caller (Python's exception classes, a CLI's
/// exit code) can tell the user's mistakes apart from ptoc's own bugs without reading
/// the message: `Internal` is a bug in ptoc; every other category is the user's.
enum class DiagCategory : uint8_t {
  General,  ///< a malformed program or request (no finer category)
  Shape,    ///< shapes that do not fit: broadcasting, regions, ranks, matmul K
  Tile,     ///< tile shapes: missing, misaligned, over a buffer's capacity, the budget
  DType,    ///< element types that do not fit
  Option,   ///< an option, knob, scope or setting
  IO,       ///< reading or writing a file failed (disk, permissions)
  Resource, ///< the host has not the memory (or another resource) for the request
  Internal, ///< an internal invariant broke: a bug in ptoc
};
/// "general", "shape", "tile", "dtype", "option", "io", "resource", "internal".
llvm::StringRef diagCategoryName(DiagCategory c);

/// `s` filed under category `c` (a payload the status carries; OK stays OK).
absl::Status withCategory(absl::Status s, DiagCategory c);
/// The category `s` was filed under: its payload, else Internal for an Internal
/// status, Resource for a ResourceExhausted one, else General.
DiagCategory categoryOf(const absl::Status &s);

/// An internal invariant was broken: a bug in ptoc, never the user's fault.
absl::Status internalError(const llvm::Twine &what);
/// Reading or writing a file failed (category IO; the message names the file).
absl::Status ioError(const llvm::Twine &what);

} // namespace ptoc::support
