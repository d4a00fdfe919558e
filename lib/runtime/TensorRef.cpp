// readIntElement: one element of an integer input, bounds-checked.
#include "ptoc/runtime/TensorRef.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace ptoc::runtime {

absl::StatusOr<int64_t> readIntElement(const ConstTensorRef &t, llvm::StringRef name,
                                       llvm::ArrayRef<int64_t> index) {
  if (index.size() != t.shape.size() || (t.dtype != ir::DType::I32 && t.dtype != ir::DType::I8))
    return absl::InvalidArgumentError(absl::StrCat(
        "input '", name.str(), "' is not an integer tensor of rank ", index.size()));
  int64_t linear = 0;
  for (size_t d = 0; d < index.size(); ++d) {
    if (index[d] < 0 || index[d] >= t.shape[d])
      return absl::InvalidArgumentError(absl::StrCat(
          "index ", index[d], " in dimension ", d, " of input '", name.str(), "' (shape ",
          absl::StrJoin(t.shape, "x"), ") is out of range"));
    linear = linear * t.shape[d] + index[d];
  }
  if (t.dtype == ir::DType::I8) return int64_t(reinterpret_cast<const int8_t *>(t.data)[linear]);
  int32_t v;
  std::memcpy(&v, t.data + linear * int64_t(sizeof v), sizeof v);
  return int64_t(v);
}

} // namespace ptoc::runtime
