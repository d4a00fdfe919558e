// TensorRef: a caller-owned dense row-major buffer seen as a ptoc tensor (element type,
// shape, pointer), so embedders and the Python module run kernels without copies.
#pragma once

#include <cstddef>
#include <cstdint>

#include "absl/status/statusor.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "ptoc/ir/DType.h"
#include "ptoc/runtime/HostTensor.h"

namespace ptoc::runtime {

/// A read-only view of a caller's tensor. `data` holds shape-product elements of
/// `dtype` in their storage format (f16/bf16 as 16-bit patterns), row-major, dense.
/// The view does not own the memory or the shape array; both must outlive its use.
struct ConstTensorRef {
  ir::DType dtype = ir::DType::F32;
  llvm::ArrayRef<int64_t> shape;
  const std::byte *data = nullptr;

  ConstTensorRef() = default;
  ConstTensorRef(ir::DType dtype, llvm::ArrayRef<int64_t> shape, const void *data)
      : dtype(dtype), shape(shape), data(static_cast<const std::byte *>(data)) {}
  ConstTensorRef(const HostTensor &t) : dtype(t.dtype()), shape(t.shape()), data(t.data()) {}

  int64_t numElements() const {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
  }
  size_t sizeInBytes() const { return size_t(numElements()) * ir::elementSize(dtype); }
};

/// A writable view of a caller's tensor (same layout rules as ConstTensorRef).
struct TensorRef {
  ir::DType dtype = ir::DType::F32;
  llvm::ArrayRef<int64_t> shape;
  std::byte *data = nullptr;

  TensorRef() = default;
  TensorRef(ir::DType dtype, llvm::ArrayRef<int64_t> shape, void *data)
      : dtype(dtype), shape(shape), data(static_cast<std::byte *>(data)) {}
  TensorRef(HostTensor &t) : dtype(t.dtype()), shape(t.shape()), data(t.data()) {}

  operator ConstTensorRef() const { return ConstTensorRef(dtype, shape, data); }
  int64_t numElements() const { return ConstTensorRef(*this).numElements(); }
  size_t sizeInBytes() const { return ConstTensorRef(*this).sizeInBytes(); }
};

/// Element `index` of integer (i32, i8) input `t`, named `name` in errors: a value
/// the loops' control thread reads (ir/SymExpr.h element terms). Errors: not an
/// integer tensor of that rank, an index out of range.
absl::StatusOr<int64_t> readIntElement(const ConstTensorRef &t, llvm::StringRef name,
                                       llvm::ArrayRef<int64_t> index);

} // namespace ptoc::runtime
