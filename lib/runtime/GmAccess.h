// The GM of one execution: memory for every tensor of a Program (the caller's
// arguments, read-only; zeroed intermediates), each tensor as a strided window into
// its base's memory, region checks, and the tile transfers copy_in / copy_out with
// dtype conversion. Internal to lib/runtime.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

#include "LeafPlan.h"
#include "TileArena.h"
#include "absl/status/status.h"
#include "llvm/ADT/ArrayRef.h"
#include "ptoc/codegen/Program.h"
#include "ptoc/runtime/HostTensor.h"
#include "ptoc/runtime/TensorRef.h"

namespace ptoc::runtime::exec {

/// A GM tensor as the executor addresses it: element (i0, i1, ...) lives at element
/// offset + sum(i_d * strides[d]) of its base's memory.
struct GmView {
  const std::byte *data = nullptr; ///< the base's memory
  std::byte *writable = nullptr;   ///< the same, or null when read-only (arguments)
  ir::DType dtype = ir::DType::F32;
  int64_t offset = 0;
  /// The tensor's own (the program's GmTensor, which outlives the run; strides the
  /// GmMemory computed for an owner declared without them): a view is small, and a
  /// program of 100k-iteration loops has hundreds of thousands of them.
  llvm::ArrayRef<int64_t> shape, strides;
  /// GmTensor::valid: the extent per dimension that holds data (empty: all).
  llvm::ArrayRef<int64_t> valid;
};

/// "tensor<256x4096xf32>", for messages.
std::string tensorTypeStr(ir::DType dtype, llvm::ArrayRef<int64_t> shape);

class GmMemory {
public:
  /// Checks the arguments against the program (count, dtype, shape: InvalidArgument
  /// naming the argument) and the program's tensors (kinds, bases, every window
  /// inside its base's memory: internal errors), then allocates zeroed intermediates.
  /// `externalStorage[t]`, when given and non-null, is caller memory (dense, of
  /// tensor t's size) that intermediate tensor t lives in instead of its own.
  absl::Status init(const codegen::Program &program, llvm::ArrayRef<ConstTensorRef> args,
                    llvm::ArrayRef<std::byte *> externalStorage = {});

  /// Checks that op `op` (a copy_in or copy_out of its leaf) of call `call` may
  /// transfer its tile through its region: the region exists, its tensor exists and
  /// has the op's dtype and rank, the tile lies inside the tensor, and a copy_out's
  /// tensor is writable. Errors name the call, region, tensor, offsets and shape.
  absl::Status checkRegion(const codegen::Program &program, int call, const OpPlan &op) const;

  /// copy_in: reads `op`'s tile from `region` into its slot in `mem`.
  void copyIn(const codegen::Region &region, const OpPlan &op, TileMemory mem) const;
  /// copy_out: writes tile `tile` (its slot in `mem`) through `region`, converting to
  /// the GM dtype (f32 -> f16/bf16 rounds to nearest-even; i32 -> i8 saturates).
  /// Concurrent calls write disjoint regions: the execute graph orders the rest.
  void copyOut(const codegen::Region &region, const OpPlan &op, const OpPlan &tile,
               TileMemory mem) const;

  /// A dense copy of tensor `tensor` (through its window) as it is now.
  HostTensor materialize(int tensor) const;
  /// The same, written densely into `dst` (room for the tensor's elements).
  void materializeInto(int tensor, std::byte *dst) const;
  /// Whether `tensor` owns its memory and spans it densely, so `take` can hand the
  /// memory over instead of copying it.
  bool canTake(int tensor) const;
  /// Moves the memory of `tensor` (canTake) out; the tensor must not be read again.
  HostTensor take(int tensor);

  const GmView &view(int tensor) const { return views_[tensor]; }

  /// Whether some tensor of the program is a window with a valid_shape: the calls
  /// then track their tiles' valid extents (PartialTiles.h).
  bool hasPartialData() const { return hasPartialData_; }
  /// The valid extents of copy_in `op`'s tile read through `region` (empty: all of
  /// it): the window's valid part, cut where a partly valid tile written to the same
  /// intermediate (recordPartialWrite) ends.
  Dims readExtents(const codegen::Region &region, const OpPlan &op) const;
  /// Notes that copy_out `op` wrote through `region` a tile whose valid extents are
  /// `extents`: a later read of an overlapping tile of that intermediate is valid only
  /// as far. Only intermediates written directly (a loop body's own tensors) note it;
  /// a write through a window lands what it lands.
  void recordPartialWrite(const codegen::Region &region, const OpPlan &op,
                          llvm::ArrayRef<int64_t> extents) const;

private:
  /// A partly valid tile written to an intermediate: its box [lo, hi) and, per
  /// dimension, where its valid part ends (INT64_MAX where it is whole).
  struct PartialWrite {
    Dims lo, hi, end;
  };
  /// How a tensor's coordinates lie in its owner's: per dimension, the owner
  /// dimension it runs along (-1 for a size-1 one) and where it starts there.
  struct OwnerMap {
    bool ok = false; ///< every dimension above 1 runs along an owner dimension
    int owner = -1;
    llvm::SmallVector<int, 4> ownerDim;
    Dims start; ///< per owner dimension
  };
  bool hasPartialData_ = false;
  std::vector<OwnerMap> ownerMaps_;
  std::vector<bool> recordsWrites_; ///< per tensor: an intermediate owning its memory
  mutable std::mutex partialMutex_;
  /// Per owner: its partly valid writes, and their count (read without the lock).
  mutable std::vector<std::vector<PartialWrite>> partialWrites_;
  std::unique_ptr<std::atomic<uint32_t>[]> partialCounts_;

  void mapOwners(const codegen::Program &program);

  std::vector<GmView> views_;
  /// The memory of the intermediates that own theirs (a deque: growing it moves none,
  /// so the views into them stay valid).
  std::deque<HostTensor> owned_;
  std::vector<int32_t> ownedSlot_;  ///< per tensor: its index in owned_, or -1
  std::deque<Dims> computedStrides_; ///< row-major strides of owners declared without
};

} // namespace ptoc::runtime::exec
