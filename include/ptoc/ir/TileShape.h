// Tile shapes (vec_tile, cube_tile) and the alignment and capacity rules they obey.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include "ptoc/ir/Attribute.h"
#include "ptoc/ir/DType.h"
#include "ptoc/ir/OpDef.h"

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

/// The vec_tile an op iterating over `iterShape` uses: `tile` itself when the ranks
/// match; a longer tile gives its trailing sizes (the tile set for a 2-D `x` cuts
/// its row `x[i]` by its last size); a shorter tile applies to the trailing
/// dimensions when every leading dimension it leaves out has size 1 (those get size
/// 1), so the tile set for `r` (S x D) also cuts the 1 x S x D slice `o[h]` it is
/// written to. Nullopt otherwise.
std::optional<llvm::SmallVector<int64_t, 4>> adaptVecTile(llvm::ArrayRef<int64_t> tile,
                                                         llvm::ArrayRef<int64_t> iterShape);

/// Bytes `tile` (as it is held: clamp it to the iteration shape first) occupies in one
/// UB buffer with elements of `elemSize` bytes: the last dim padded up to whole
/// `blockBytes` blocks, times the other dims. The measure checkVecTile's capacity rule
/// counts per buffer.
int64_t vecTileBytes(llvm::ArrayRef<int64_t> tile, unsigned elemSize, int64_t blockBytes);

/// How many tiles of a vector op are held in UB together for one step: one per
/// operand and result, except copies through UB (assemble, concat), which hold the
/// one tile on its way.
unsigned vecTileBuffers(OpCode code, unsigned numOperands, unsigned numResults);

/// Checks a vector tile for an op iterating over `iterShape` whose operands and
/// results have element sizes in [minElemSize, maxElemSize]; `numBuffers` tiles of
/// the op must fit in UB together. Returns "" when valid, else a message naming
/// the rule broken and a fix. `device` may be null (capacity not checked).
std::string checkVecTile(llvm::ArrayRef<int64_t> tile, llvm::ArrayRef<int64_t> iterShape,
                         unsigned minElemSize, unsigned maxElemSize, unsigned numBuffers,
                         const target::DeviceSpec *device);

/// The split of a vec_tile that covers the op's whole iteration shape but does not
/// fit UB (PyPTO documents no rule for this case; this is ptoc's, docs/passes.md
/// "expand-tiles"): starting from the iteration shape, halve (rounding up) the
/// largest leading dimension not in `keepWhole`, then the last one (if not kept) in
/// steps of one 32-byte block, until `numBuffers` tiles fit UB. Dimensions in
/// `keepWhole` (a reduction's axes) are never cut, so no cross-tile combine is
/// needed.
struct WholeTileSplit {
  enum class Kind {
    NotApplicable, ///< the tile is not a whole-shape tile too big for UB (or is misaligned)
    Split,         ///< `tile` fits
    Impossible,    ///< even one slice with the kept dimensions whole does not fit
  };
  Kind kind = Kind::NotApplicable;
  llvm::SmallVector<int64_t, 4> tile; ///< Split: the tile; Impossible: the smallest tried
  int64_t bytes = 0;                  ///< UB bytes of `numBuffers` tiles of `tile`
  int64_t wholeBytes = 0;             ///< UB bytes of `numBuffers` whole-shape tiles
  std::string message;                ///< Impossible: what does not fit and the fix
};
WholeTileSplit splitWholeVecTile(llvm::ArrayRef<int64_t> tile, llvm::ArrayRef<int64_t> iterShape,
                                 llvm::ArrayRef<bool> keepWhole, unsigned minElemSize,
                                 unsigned maxElemSize, unsigned numBuffers,
                                 const target::DeviceSpec &device);

/// Checks a cube tile for inputs of type `in` (alignment, L0 divides L1, one tile
/// each in L0A and L0B, the fp32 accumulator tile in L0C, both L1 tiles in L1: PyPTO's
/// rules; double buffering is codegen's choice where room is left). "" when valid.
std::string checkCubeTile(const CubeTile &tile, DType in, const target::DeviceSpec *device);

} // namespace ptoc::ir
