// Identities of the GM regions a program's transfers touch, and the static facts the
// L2 model and the roofline bound need about them: which written regions a read is
// served from, which tensors are visible outside the kernel (their writes go to HBM),
// and the compulsory HBM traffic.
#pragma once

#include <cstdint>
#include <vector>

#include "llvm/ADT/ArrayRef.h"
#include "ptoc/codegen/Program.h"

namespace ptoc::runtime::sim {

/// Region identities of one program. A region's identity is a 64-bit hash of the
/// memory it addresses (base tensor, first element, extents and strides of the
/// transferring op's tile); windows over the same bytes share one dense id, whichever
/// tensor or alias names them.
///
/// A read of region R is an L2 hit if R itself is resident, or if R is not written
/// exactly by any transfer and the program's written regions of R's base tensor that
/// overlap R cover it and are all resident (its `cover` list). So a consumer whose tile
/// differs from its producers' tiles still hits when all those producers' outputs are
/// in L2. Overlap is exact for windows that are boxes of their base tensor (the tensor
/// itself or a same-rank slice of it); other aliases (reshapes) compare linear element
/// spans, which may over-estimate overlap.
class RegionTable {
public:
  /// Builds the table. Out-of-range indices are skipped (simulate() validates first).
  static RegionTable build(const codegen::Program &program);

  /// The id of region index `region` of call `call`; -1 if no transfer of the call
  /// touches it.
  int id(int call, int region) const { return ids_[callBegin_[call] + region]; }
  int numIds() const { return static_cast<int>(bytes_.size()); }
  /// The smallest transfer of the region, in bytes (its L2 footprint).
  int64_t bytes(int id) const { return bytes_[id]; }
  /// Writes of this region also go to HBM: its base tensor is a result of the function
  /// or a written argument (visible after the kernel).
  bool writeBack(int id) const { return writeBack_[id] != 0; }
  /// The written regions a read of `id` is served from when all are resident (empty:
  /// only `id` itself can serve it).
  llvm::ArrayRef<int> cover(int id) const {
    return {coverIds_.data() + coverBegin_[id], coverIds_.data() + coverBegin_[id + 1]};
  }
  /// Compulsory HBM bytes: for every base tensor that no transfer writes, min(its size,
  /// distinct bytes read from it) (the first read of each region misses the cold L2);
  /// for every written base visible outside the kernel, min(its size, distinct bytes
  /// written to it) (every such write goes to HBM). Written intermediates count zero.
  int64_t compulsoryHbmBytes() const { return compulsoryHbmBytes_; }
  /// Of the compulsory bytes, those read from base tensors no transfer writes, by which
  /// core kinds read them: index 1 only AIC tasks, 2 only AIV tasks, 3 both. Their
  /// first reads miss L2 and come through the reading cores' own HBM ports.
  int64_t compulsoryReadBytes(int kinds) const { return compulsoryReadBytes_[kinds & 3]; }
  /// The heap bytes the table holds.
  uint64_t approxBytes() const;

private:
  std::vector<int> callBegin_; ///< per call (+1): offset into ids_
  std::vector<int> ids_;       ///< per (call, region index)
  std::vector<int64_t> bytes_;
  std::vector<uint8_t> writeBack_;
  std::vector<int> coverBegin_; ///< per id (+1): offset into coverIds_
  std::vector<int> coverIds_;
  int64_t compulsoryHbmBytes_ = 0;
  int64_t compulsoryReadBytes_[4] = {0, 0, 0, 0};
};

} // namespace ptoc::runtime::sim
