// Tensor and tile types: an element type, a static shape and (for tiles) a memory space.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/DenseMapInfo.h"
#include "llvm/ADT/Hashing.h"

#include "ptoc/ir/DType.h"

namespace ptoc::ir {

/// A dimension whose size is known only when the kernel is called (`?` in the text
/// form): allowed in the argument types of a control function (docs/ir.md, "Dynamic
/// axes"), never in a tile.
inline constexpr int64_t kDynamicDim = -1;

/// Where a tile lives. Tensors always live in GM (global memory).
enum class MemSpace : uint8_t { GM, UB, L1, L0A, L0B, L0C };

std::string_view memSpaceName(MemSpace s);
std::optional<MemSpace> parseMemSpace(std::string_view name);

namespace detail {
struct TypeStorage {
  bool isTile;
  DType dtype;
  MemSpace space;
  uint32_t rank;
  const int64_t *dims; // owned by the Context's allocator
  uint64_t hash;       // content hash, stable across runs
};
} // namespace detail

/// A uniqued type handle: `tensor<64x512xf32>` or `tile<64x512xf32, ub>`. Two types
/// are equal exactly when their handles are equal. Create through `Context`.
class Type {
public:
  Type() = default;
  explicit Type(const detail::TypeStorage *s) : storage_(s) {}

  explicit operator bool() const { return storage_ != nullptr; }
  bool isTensor() const { return !storage_->isTile; }
  bool isTile() const { return storage_->isTile; }
  DType dtype() const { return storage_->dtype; }
  MemSpace space() const { return storage_->space; }
  llvm::ArrayRef<int64_t> shape() const { return {storage_->dims, storage_->rank}; }
  unsigned rank() const { return storage_->rank; }
  int64_t dim(unsigned i) const { return storage_->dims[i]; }
  /// Whether some dimension is kDynamicDim.
  bool hasDynamicDims() const;
  /// The element count (-1 with a dynamic dimension: no static size).
  int64_t numElements() const;
  int64_t sizeInBytes() const { return numElements() * elementSize(dtype()); }
  /// Content hash: equal for equal types in any process (used by structural hashes).
  uint64_t contentHash() const { return storage_->hash; }

  /// The text form, e.g. "tensor<64x512xf32>".
  std::string str() const;

  const detail::TypeStorage *storage() const { return storage_; }
  friend bool operator==(Type a, Type b) { return a.storage_ == b.storage_; }
  friend bool operator!=(Type a, Type b) { return a.storage_ != b.storage_; }

private:
  const detail::TypeStorage *storage_ = nullptr;
};

/// "64x512" for a shape ("?" for a dynamic dimension; empty string for rank 0).
std::string shapeStr(llvm::ArrayRef<int64_t> shape);

} // namespace ptoc::ir

namespace llvm {
template <> struct DenseMapInfo<ptoc::ir::Type> {
  static ptoc::ir::Type getEmptyKey() {
    return ptoc::ir::Type(
        reinterpret_cast<const ptoc::ir::detail::TypeStorage *>(uintptr_t(-1) << 4));
  }
  static ptoc::ir::Type getTombstoneKey() {
    return ptoc::ir::Type(
        reinterpret_cast<const ptoc::ir::detail::TypeStorage *>(uintptr_t(-2) << 4));
  }
  static unsigned getHashValue(ptoc::ir::Type t) {
    return DenseMapInfo<const void *>::getHashValue(t.storage());
  }
  static bool isEqual(ptoc::ir::Type a, ptoc::ir::Type b) { return a == b; }
};
} // namespace llvm
