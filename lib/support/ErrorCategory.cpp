// Error categories as status payloads (see ErrorCategory.h).
#include "ptoc/support/ErrorCategory.h"

#include <string>

#include "absl/strings/cord.h"

namespace ptoc::support {

llvm::StringRef diagCategoryName(DiagCategory c) {
  switch (c) {
  case DiagCategory::General: return "general";
  case DiagCategory::Shape: return "shape";
  case DiagCategory::Tile: return "tile";
  case DiagCategory::DType: return "dtype";
  case DiagCategory::Option: return "option";
  case DiagCategory::IO: return "io";
  case DiagCategory::Resource: return "resource";
  case DiagCategory::Internal: return "internal";
  }
  return "general";
}

namespace {
constexpr const char *kCategoryPayload = "ptoc/diag-category";
} // namespace

absl::Status withCategory(absl::Status s, DiagCategory c) {
  if (s.ok()) return s;
  llvm::StringRef name = diagCategoryName(c);
  s.SetPayload(kCategoryPayload, absl::Cord(std::string(name)));
  return s;
}

DiagCategory categoryOf(const absl::Status &s) {
  if (auto payload = s.GetPayload(kCategoryPayload)) {
    std::string name(*payload);
    for (DiagCategory c : {DiagCategory::General, DiagCategory::Shape, DiagCategory::Tile,
                           DiagCategory::DType, DiagCategory::Option, DiagCategory::IO,
                           DiagCategory::Resource, DiagCategory::Internal})
      if (diagCategoryName(c) == name) return c;
  }
  switch (s.code()) {
  case absl::StatusCode::kInternal: return DiagCategory::Internal;
  case absl::StatusCode::kResourceExhausted: return DiagCategory::Resource;
  default: return DiagCategory::General;
  }
}

absl::Status internalError(const llvm::Twine &what) {
  return withCategory(absl::InternalError("internal error in ptoc (a bug; please report it): " +
                                          what.str()),
                      DiagCategory::Internal);
}

absl::Status ioError(const llvm::Twine &what) {
  return withCategory(absl::UnavailableError(what.str()), DiagCategory::IO);
}

} // namespace ptoc::support
