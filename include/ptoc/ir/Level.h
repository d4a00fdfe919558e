// How far a function's IR has come (docs/ir.md): the tensor level, the tile level
// after expand-tiles, the partitioned level after partition. Judged from its ops;
// declared once, read by the verifier, the passes, codegen and the session.
#pragma once

#include <cstdint>

#include "llvm/ADT/StringRef.h"

namespace ptoc::ir {

class Func;

/// `Control`: it has a `loop` op (its work is in the bodies the loops run; the tiling
/// passes leave it alone); `Partitioned`: it has a `subgraph` table; `Tile`: some op works on tiles;
/// `Tensor`: some op works on whole tensors; `Empty`: nothing to run (only aliases,
/// workspaces and the return).
enum class Level : uint8_t { Empty, Control, Tensor, Tile, Partitioned };

Level levelOf(const Func &f);
/// "empty", "control", "tensor", "tile", "partitioned".
llvm::StringRef levelName(Level level);

} // namespace ptoc::ir
