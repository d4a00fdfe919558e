// The cube-tile rule of default-tiles: the cube_tile a matmul without one takes (the
// rule is stated in DefaultTiles.cpp's header comment). Internal to lib/passes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "ptoc/ir/OpViews.h"
#include "ptoc/ir/TileShape.h"

namespace llvm {
class raw_ostream;
}
namespace ptoc::ir {
class Context;
}
namespace ptoc::target {
struct DeviceSpec;
}

namespace ptoc::passes::default_tiles {

/// One candidate cube tile and its estimated cost.
struct CubeCandidate {
  ir::CubeTile tile;
  int64_t tiles = 0, merge = 1, tasks = 0, waves = 0;
  double tileCycles = 0;
  double score = 0; ///< max(the estimated span, the L2's time for every tile's loads)
  bool aligned = false;
  bool singleBuffered = false; ///< no tile leaves room for two copies
};

/// The cube_tile one matmul takes, and why.
struct CubeDecision {
  std::optional<CubeCandidate> chosen; ///< none when no tile fits the cube buffers
  std::string rule;   ///< short, for the summary
  std::string detail; ///< the remark's extra numbers
};

/// The cube_tile of matmul `mm` with `batch` output matrices; `successors`: ops other
/// than the return read its result (the scheduler then releases its tasks); `loopBody`:
/// the function is a loop body (the rule text then leaves the tiles per task to the
/// merge passes, tilesOnCores). Every candidate goes to `log` if set.
CubeDecision decideCubeTile(ir::Context &ctx, const target::DeviceSpec &device,
                            const ir::MatmulView &mm, int64_t batch, bool successors,
                            bool loopBody, llvm::raw_ostream *log);

} // namespace ptoc::passes::default_tiles
