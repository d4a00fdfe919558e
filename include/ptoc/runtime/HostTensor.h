// HostTensor: a dense, row-major tensor in host memory holding elements of one ptoc
// dtype in their storage format (f16/bf16 as Eigen::half/bfloat16 bits, integers in
// their width, bool as one byte 0/1).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "ptoc/ir/DType.h"

namespace ptoc::runtime {

class HostTensor {
public:
  HostTensor() = default;
  /// Zero-filled.
  HostTensor(ir::DType dtype, llvm::ArrayRef<int64_t> shape);

  ir::DType dtype() const { return dtype_; }
  llvm::ArrayRef<int64_t> shape() const { return shape_; }
  int64_t numElements() const;
  size_t sizeInBytes() const { return bytes_.size(); }
  std::byte *data() { return bytes_.data(); }
  const std::byte *data() const { return bytes_.data(); }

  /// Element i (row-major) converted to double / stored from double (rounded to the
  /// dtype by ir::roundToDType: nearest-even for floats, saturating for integers,
  /// nonzero-is-1 for bool). i64/u64 values beyond 2^53 in magnitude round to the
  /// nearest double on the way out; the bytes (data()) hold them exactly.
  double get(int64_t i) const;
  void set(int64_t i, double v);

private:
  ir::DType dtype_ = ir::DType::F32;
  llvm::SmallVector<int64_t, 4> shape_;
  std::vector<std::byte> bytes_;
};

} // namespace ptoc::runtime
