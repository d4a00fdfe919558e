// readIntElement: one element of an integer input, bounds-checked.
#include "ptoc/runtime/TensorRef.h"

#include <cstdint>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace ptoc::runtime {

absl::StatusOr<int64_t> readIntElement(const ConstTensorRef &t, llvm::StringRef name,
                                       llvm::ArrayRef<int64_t> index) {
  if (index.size() != t.shape.size() || !ir::isInteger(t.dtype))
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
  const std::byte *p = t.data + linear * int64_t(ir::elementSize(t.dtype));
  auto load = [p](auto v) {
    std::memcpy(&v, p, sizeof v);
    return v;
  };
  switch (t.dtype) {
  case ir::DType::I8: return int64_t(load(int8_t()));
  case ir::DType::I16: return int64_t(load(int16_t()));
  case ir::DType::I32: return int64_t(load(int32_t()));
  case ir::DType::I64: return load(int64_t());
  case ir::DType::Bool: return int64_t(load(uint8_t()) != 0);
  case ir::DType::U8: return int64_t(load(uint8_t()));
  case ir::DType::U16: return int64_t(load(uint16_t()));
  case ir::DType::U32: return int64_t(load(uint32_t()));
  case ir::DType::U64: {
    uint64_t v = load(uint64_t());
    if (v > uint64_t(INT64_MAX))
      return absl::InvalidArgumentError(absl::StrCat(
          "element of input '", name.str(), "' is ", v, ", beyond the int64 range of indices"));
    return int64_t(v);
  }
  default: return int64_t(0); // floats were refused above
  }
}

} // namespace ptoc::runtime
