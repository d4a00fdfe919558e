// DerivedTile: a tile shape the compiler chose for ops the user gave none
// (default-tiles), with the rule that chose it. The compile keeps them
// (session::Kernel::derivedTiles) and the run summary lists them (docs/outputs.md,
// "summary.txt").
#pragma once

#include <cstdint>
#include <string>

namespace ptoc::passes {

struct DerivedTile {
  enum class Kind { Vec, Cube };
  Kind kind = Kind::Vec;
  /// The function whose ops took it.
  std::string func;
  /// The attribute as the IR prints it: `[3, 4096]` or `{m = [..], k = [..], n = [..]}`.
  std::string tile;
  /// How many ops took it (a vector chain's untiled ops; one matmul).
  int64_t ops = 0;
  /// The first of them, as "'amax' at softmax.py:12:5".
  std::string firstOp;
  /// Why this tile, in a few words with the numbers: "whole reduction axis 1, 48 KiB
  /// at f32, 86 tiles = 2 waves of 48 AIV" (the summary line's parenthesis).
  std::string rule;
  /// Tiles the (largest) op is cut into.
  int64_t tiles = 0;
};

/// "vec_tile" or "cube_tile".
inline const char *derivedTileKindName(DerivedTile::Kind kind) {
  return kind == DerivedTile::Kind::Vec ? "vec_tile" : "cube_tile";
}

} // namespace ptoc::passes
