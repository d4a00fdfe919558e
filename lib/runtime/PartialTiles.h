// Tiles that hold data only in part: a loop window's valid_shape (docs/ir.md,
// "Dynamic axes"), and what is computed from it. Per tile, the valid extents (how
// much from its origin holds data, per dimension) follow the ops of a leaf; a
// reduction folds only the valid elements (mean divides by their count) and a
// matmul sums over the valid part of K only. Internal to lib/runtime.
#pragma once

#include <cstdint>
#include <vector>

#include "GmAccess.h"
#include "LeafPlan.h"
#include "TileArena.h"
#include "llvm/ADT/ArrayRef.h"

namespace ptoc::runtime::exec {

/// A tile's valid extents: per dimension, how much from its origin holds data; empty
/// when all of it does.
using Extents = Dims;

/// Whether extents `e` of a tile of `shape` cover all of it.
bool coversAll(llvm::ArrayRef<int64_t> e, llvm::ArrayRef<int64_t> shape);

/// The valid extents of compute op `i`'s result from its operands' (`valid[j]`: op
/// j's, empty when whole): elementwise ops, casts and where the smallest of their
/// operands' (a broadcast dimension counts whole unless empty); a reduction its
/// operand's kept dimensions (a reduced one holds one value); a reshape its operand's
/// dimensions of size above 1, in order; a transpose its operand's, permuted; a matmul
/// the valid rows of its left operand and columns of its right (and the accumulator's);
/// full, topk_indices, gather and scatter hold data everywhere. Empty when whole.
Extents resultExtents(const LeafPlan &plan, int i, llvm::ArrayRef<Extents> valid);

/// Per-worker scratch of runPartial: copies of operand tiles.
struct PartialScratch {
  std::vector<float> a, b;
  std::vector<int64_t> ia, ib;
};

/// Runs compute op `i` of a call whose tiles hold data only in part (`valid[j]`: op
/// j's extents): a reduction folds only its operand's valid elements (amax, amin and
/// sum skip the rest; mean divides by `meanCount` when it is not negative, else by
/// the number of valid elements it folds); a matmul sums over the valid part of K
/// only; any other op computes as usual (what lies beyond the extents is whatever
/// the op makes of it: the zeros a window reads there, or values computed from them).
void runPartial(const LeafPlan &plan, int i, TileMemory mem, llvm::ArrayRef<Extents> valid,
                PartialScratch &scratch, int64_t meanCount = -1);

/// One worker's calls in a program with windows that hold data only in part
/// (GmMemory::hasPartialData): each call's ops run as usual, with its tiles' valid
/// extents followed from the copy_ins (GmMemory::readExtents) to the copy_outs (a
/// partly valid tile written to an intermediate is noted: recordPartialWrite), and
/// with the elements a sum folds counted, so that a split mean's last step (a mean
/// with `count`, over the combined partial sums) divides by the partials' total.
class PartialCalls {
public:
  void run(const GmMemory &gm, const codegen::Call &call, const LeafPlan &plan, TileMemory mem);

private:
  std::vector<Extents> valid_;
  /// Per op: the elements a sum folded into each of its values (partial sums
  /// combined: their total), -1 for other ops.
  std::vector<int64_t> folded_;
  PartialScratch scratch_;
};

/// Sets the elements of the dense row-major tile `data` of `shape` beyond `extents` to
/// `fill`.
template <class T>
void fillBeyond(T *data, llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<int64_t> extents, T fill);

} // namespace ptoc::runtime::exec
