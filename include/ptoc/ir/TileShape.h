// Tile shapes (vec_tile, cube_tile) and the alignment and capacity rules they obey.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "llvm/ADT/ArrayRef.h"

#include "ptoc/ir/Attribute.h"
#include "ptoc/ir/DType.h"

namespace ptoc::target {
struct DeviceSpec;
}

namespace ptoc::ir {

class Context;

/// A cube tile: {L0, L1} sizes for M, K and N (`set_cube_tile_shapes`).
struct CubeTile {
  std::array<int64_t, 2> m{}, k{}, n{};

  /// From a `cube_tile` attribute `{m = [a, b], k = [c, d], n = [e, f]}`; nullopt
  /// when malformed.
  static std::optional<CubeTile> fromAttr(Attribute a);
  Attribute toAttr(Context &ctx) const;
  friend bool operator==(const CubeTile &, const CubeTile &) = default;
};

/// Checks a vector tile for an op iterating over `iterShape` whose operands and
/// results have element sizes in [minElemSize, maxElemSize]; `numBuffers` tiles of
/// the op must fit in UB together. Returns "" when valid, else a message naming
/// the rule broken and a fix. `device` may be null (capacity not checked).
std::string checkVecTile(llvm::ArrayRef<int64_t> tile, llvm::ArrayRef<int64_t> iterShape,
                         unsigned minElemSize, unsigned maxElemSize, unsigned numBuffers,
                         const target::DeviceSpec *device);

/// Checks a cube tile for inputs of type `in` (alignment, L0 divides L1, L0A/L0B
/// double-buffer, L0C fp32 accumulator and L1 capacity). "" when valid.
std::string checkCubeTile(const CubeTile &tile, DType in, const target::DeviceSpec *device);

} // namespace ptoc::ir
