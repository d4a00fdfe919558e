// The vector-tile rule of default-tiles: a function's vector ops with what their tiles
// must respect, and the vec_tile one chain of them takes (the rule is stated in
// DefaultTiles.cpp's header comment). Internal to lib/passes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include "ptoc/ir/OpViews.h"

#include "DefaultTileSupport.h"

namespace llvm {
class raw_ostream;
}
namespace ptoc::ir {
class Context;
}

namespace ptoc::passes::default_tiles {

/// A vector op of the function, with what its tile must respect.
struct VecOp {
  ir::Operation *op = nullptr;
  ir::VecTileView view;
  /// Iteration dims that are never cut: a reduction's axes, topk's and scatter's dim.
  llvm::SmallVector<int64_t, 2> kept;
  /// Which kept dims are a reduction's (the others are selected along).
  llvm::SmallVector<bool, 2> keptReduced;
  bool userTile() const { return !view.tile.empty(); }
};

/// The VecOp of vector op `op`: its tile view and kept dims.
VecOp vecOpOf(ir::Operation &op);

/// The trailing `rank` sizes of chain tile `tile`: what an op of that rank is given.
Dims writtenTile(llvm::ArrayRef<int64_t> tile, size_t rank);

/// One candidate vec_tile of a chain, in chain coordinates, and what it would cost.
struct VecCandidate {
  Dims tile;                 ///< as written: the last dim a whole number of blocks
  bool cutsKept = false;     ///< cuts a kept axis (the fallback)
  int64_t bytes = 0;         ///< one tile at the widest element type
  int64_t peak = 0;          ///< UB bytes one task holds at its peak
  int64_t tiles = 0, merge = 1, tasks = 0, waves = 0;
  double taskCycles = 0;     ///< one task's (N tiles, pipelined)
  double score = 0;          ///< the estimated span (spanCycles)
  bool tail = false;         ///< some dim is not a multiple of the tile
};

/// The vec_tile one chain's derived ops take, and why.
struct VecDecision {
  std::optional<VecCandidate> chosen;
  std::string rule;   ///< short, for the summary
  std::string detail; ///< the remark's extra numbers
  std::string error;  ///< when nothing fits
  std::string shape;  ///< the chain's iteration shape, as the remark gives it ("256x4096")
};

/// The vec_tile of the ops one chain derives a tile for (`ops`, first op first) over
/// `shape`, the broadcast of their iteration shapes, taken by `copies` copies of the
/// chain (the same ops on other data); every measured candidate goes to `log` if set.
/// (`loopBody`: the function is a loop body, see decideCubeTile.)
VecDecision decideVecTile(ir::Context &ctx, const target::DeviceSpec &device,
                          llvm::ArrayRef<const VecOp *> ops, Dims shape, int64_t copies,
                          bool loopBody, llvm::raw_ostream *log);

} // namespace ptoc::passes::default_tiles
