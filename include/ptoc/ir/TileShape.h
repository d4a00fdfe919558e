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

/// Whether an op's vec_tile must have aligned rows (its last size times each element
/// size a multiple of the block): only the ops that copy tiles through UB as they are
/// (assemble, concat), as PyPTO checks the rule for its copy ops only (an assemble, a
/// register copy). Any other op accepts any last size: each row of its UB tiles is
/// padded to whole blocks, which vecTileBytes counts and the cost model charges.
bool vecTileNeedsAlignedRows(OpCode code);

/// UB bytes one step of a transpose holds with input tile `inTile` (clamped to the
/// input; PyPTO cuts a transpose's input by its vec_tile): the input tile, the output
/// tile (`inTile` permuted: output dim i is input dim perm[i]), each row padded to
/// whole blocks, and, when the input's last dim moves, the scratch PyPTO reserves for
/// the move (pypto-transpose.md, constraint 5): the tile with the input dim that
/// becomes the output's last padded to 16 elements and the input's last dim padded to
/// whole blocks.
int64_t transposeStepBytes(llvm::ArrayRef<int64_t> inTile, llvm::ArrayRef<int64_t> perm,
                           unsigned elemSize, int64_t blockBytes);

/// What one step of a vector op holds in UB, for the capacity and alignment rules.
struct VecTileFootprint {
  unsigned minElemSize = 1, maxElemSize = 1; ///< over the op's operands and results
  unsigned buffers = 1;    ///< tiles of the (clamped) tile shape, each at maxElemSize
  bool alignedRows = true; ///< the last size must fill whole blocks (vecTileNeedsAlignedRows)
  /// Non-empty for a transpose (its perm): a step then holds what transposeStepBytes
  /// counts (at maxElemSize) instead of `buffers` equal tiles.
  llvm::SmallVector<int64_t, 4> transposePerm;

  /// UB bytes of one step with tile `held` (clamped to the iteration shape).
  int64_t bytes(llvm::ArrayRef<int64_t> held, int64_t blockBytes) const;
  /// The same as a message reads it: "2 buffers x 16384 bytes = 32768 bytes".
  std::string describe(llvm::ArrayRef<int64_t> held, int64_t blockBytes) const;
};

/// Checks a vector tile for an op iterating over `iterShape` whose operands and
/// results have element sizes in [minElemSize, maxElemSize]; `numBuffers` tiles of
/// the op must fit in UB together, and with `alignedRows` the last size must fill
/// whole blocks. Returns "" when valid, else a message naming the rule broken and a
/// fix. `device` may be null (capacity not checked).
std::string checkVecTile(llvm::ArrayRef<int64_t> tile, llvm::ArrayRef<int64_t> iterShape,
                         unsigned minElemSize, unsigned maxElemSize, unsigned numBuffers,
                         const target::DeviceSpec *device, bool alignedRows = true);
/// The same for any footprint (a transpose's).
std::string checkVecTile(llvm::ArrayRef<int64_t> tile, llvm::ArrayRef<int64_t> iterShape,
                         const VecTileFootprint &footprint, const target::DeviceSpec *device);

/// The split of a vec_tile that covers the op's whole iteration shape but does not
/// fit UB (PyPTO documents no rule for this case; this is ptoc's, docs/passes.md
/// "expand-tiles"): starting from the iteration shape, halve (rounding up) the
/// largest leading dimension not in `keepWhole`, then the last one (if not kept) in
/// steps of one 32-byte block, until one step (`footprint`) fits UB. Dimensions in
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
  int64_t bytes = 0;                  ///< UB bytes of one step with `tile`
  int64_t wholeBytes = 0;             ///< UB bytes of one step with the whole shape
  std::string message;                ///< Impossible: what does not fit and the fix
};
WholeTileSplit splitWholeVecTile(llvm::ArrayRef<int64_t> tile, llvm::ArrayRef<int64_t> iterShape,
                                 llvm::ArrayRef<bool> keepWhole,
                                 const VecTileFootprint &footprint,
                                 const target::DeviceSpec &device);

/// Checks a cube tile for inputs of type `in` (alignment, L0 divides L1, one tile
/// each in L0A and L0B, the fp32 accumulator tile in L0C, both L1 tiles in L1: PyPTO's
/// rules; double buffering is codegen's choice where room is left). "" when valid.
std::string checkCubeTile(const CubeTile &tile, DType in, const target::DeviceSpec *device);

} // namespace ptoc::ir
