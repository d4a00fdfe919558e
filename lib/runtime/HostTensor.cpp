// HostTensor: storage, element access with dtype rounding.
#include "ptoc/runtime/HostTensor.h"

#include <cstdint>
#include <cstring>

#include <Eigen/Core>

namespace ptoc::runtime {

HostTensor::HostTensor(ir::DType dtype, llvm::ArrayRef<int64_t> shape)
    : dtype_(dtype), shape_(shape.begin(), shape.end()) {
  bytes_.assign(static_cast<size_t>(numElements()) * ir::elementSize(dtype), std::byte{0});
}

int64_t HostTensor::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape_) n *= d;
  return n;
}

double HostTensor::get(int64_t i) const {
  const std::byte *p = bytes_.data() + i * ir::elementSize(dtype_);
  switch (dtype_) {
  case ir::DType::F32: { float v; std::memcpy(&v, p, 4); return v; }
  case ir::DType::F16: { Eigen::half v; std::memcpy(&v, p, 2); return static_cast<float>(v); }
  case ir::DType::BF16: { Eigen::bfloat16 v; std::memcpy(&v, p, 2); return static_cast<float>(v); }
  case ir::DType::I8: { int8_t v; std::memcpy(&v, p, 1); return v; }
  case ir::DType::I32: { int32_t v; std::memcpy(&v, p, 4); return v; }
  case ir::DType::I64: { int64_t v; std::memcpy(&v, p, 8); return static_cast<double>(v); }
  case ir::DType::Bool: { uint8_t v; std::memcpy(&v, p, 1); return v != 0; }
  case ir::DType::I16: { int16_t v; std::memcpy(&v, p, 2); return v; }
  case ir::DType::U8: { uint8_t v; std::memcpy(&v, p, 1); return v; }
  case ir::DType::U16: { uint16_t v; std::memcpy(&v, p, 2); return v; }
  case ir::DType::U32: { uint32_t v; std::memcpy(&v, p, 4); return v; }
  case ir::DType::U64: { uint64_t v; std::memcpy(&v, p, 8); return static_cast<double>(v); }
  }
  return 0;
}

void HostTensor::set(int64_t i, double v) {
  std::byte *p = bytes_.data() + i * ir::elementSize(dtype_);
  double r = ir::roundToDType(v, dtype_);
  switch (dtype_) {
  case ir::DType::F32: { float f = static_cast<float>(r); std::memcpy(p, &f, 4); break; }
  case ir::DType::F16: { Eigen::half h(static_cast<float>(r)); std::memcpy(p, &h, 2); break; }
  case ir::DType::BF16: { Eigen::bfloat16 h(static_cast<float>(r)); std::memcpy(p, &h, 2); break; }
  case ir::DType::I8: { int8_t x = static_cast<int8_t>(r); std::memcpy(p, &x, 1); break; }
  case ir::DType::I32: { int32_t x = static_cast<int32_t>(r); std::memcpy(p, &x, 4); break; }
  // r is integral and within [2^-63, 2^63] (i64) or [0, 2^64] (u64): the top, which is
  // one past the range, stores as the largest value.
  case ir::DType::I64: {
    int64_t x = r >= 0x1p63 ? INT64_MAX : static_cast<int64_t>(r);
    std::memcpy(p, &x, 8);
    break;
  }
  case ir::DType::U64: {
    uint64_t x = r >= 0x1p64 ? UINT64_MAX : static_cast<uint64_t>(r);
    std::memcpy(p, &x, 8);
    break;
  }
  case ir::DType::Bool:
  case ir::DType::U8: { uint8_t x = static_cast<uint8_t>(r); std::memcpy(p, &x, 1); break; }
  case ir::DType::I16: { int16_t x = static_cast<int16_t>(r); std::memcpy(p, &x, 2); break; }
  case ir::DType::U16: { uint16_t x = static_cast<uint16_t>(r); std::memcpy(p, &x, 2); break; }
  case ir::DType::U32: { uint32_t x = static_cast<uint32_t>(r); std::memcpy(p, &x, 4); break; }
  }
}

} // namespace ptoc::runtime
