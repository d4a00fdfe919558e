// The IR level of a function, from its ops (see Level.h).
#include "ptoc/ir/Level.h"

#include "ptoc/ir/Func.h"

namespace ptoc::ir {

Level levelOf(const Func &f) {
  Level level = Level::Empty;
  for (const Operation &op : f.ops())
    if (op.code() == OpCode::Loop) return Level::Control;
  for (const Operation &op : f.ops()) {
    if (op.code() == OpCode::Subgraph) return Level::Partitioned;
    if (op.isTileOp()) level = Level::Tile;
    else if (level == Level::Empty && op.coreKind() != target::CoreKind::None)
      level = Level::Tensor;
  }
  return level;
}

llvm::StringRef levelName(Level level) {
  switch (level) {
  case Level::Empty: return "empty";
  case Level::Control: return "control";
  case Level::Tensor: return "tensor";
  case Level::Tile: return "tile";
  case Level::Partitioned: return "partitioned";
  }
  return "?";
}

} // namespace ptoc::ir
