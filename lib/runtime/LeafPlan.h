// The executor's plan of one leaf: every LeafOp checked (operands, shapes, dtypes,
// attributes) so kernels never index out of bounds, given a slot in the per-worker
// tile arena (dead tiles' slots reused, some ops in place), and with its loop
// structure (broadcast strides, reduction pattern, transpose strides, GEMM sizes)
// worked out once instead of per call. Internal to lib/runtime.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "llvm/ADT/SmallVector.h"
#include "ptoc/codegen/Program.h"

namespace ptoc::runtime::exec {

/// How a tile's elements are held locally: f32/f16/bf16 as float (values always
/// representable in the tile's dtype), i8/i32 as int32; None for copy_out tokens.
enum class Rep : uint8_t { None, Float, Int };

inline Rep repOf(ir::DType t) { return ir::isFloat(t) ? Rep::Float : Rep::Int; }

/// The dtype's IR spelling as a std::string (Abseil's string_view here is not std's).
inline std::string dtypeStr(ir::DType t) { return std::string(ir::dtypeName(t)); }

using Dims = llvm::SmallVector<int64_t, 4>;

/// Elementwise binary op: the result's iteration space with dimensions merged where
/// all three tiles are contiguous together (innermost last, at least one dimension).
/// The result is dense; operand strides are 0 along broadcast dimensions.
struct BroadcastPlan {
  Dims sizes, strideX, strideY;
  Dims strideZ; ///< where: the third operand (cond, a, b are x, y, z)
};

/// Reduction: the operand's dimensions with size-1 ones dropped and neighbours of the
/// same kind (kept / reduced) merged, so most reductions are one of a few patterns.
struct ReducePlan {
  enum class Pattern : uint8_t {
    Copy,    ///< nothing is reduced (every reduced dimension has size 1)
    All,     ///< everything is reduced into one element
    Rows,    ///< [outer, reduced]: each output reduces one contiguous row
    Cols,    ///< [reduced, inner]: outputs are a row combined with every other row
    MidCols, ///< [outer, reduced, inner]: Cols for each outer index
    General, ///< anything else: per output, walk the reduced dimensions
  };
  Pattern pattern = Pattern::Copy;
  int64_t outer = 1, reduced = 1, inner = 1;
  int64_t count = 1; ///< reduced elements per output (mean divides by it)
  /// Merged operand dimensions, whether each is reduced, and their operand strides
  /// (walked by the General pattern and by integer reductions).
  Dims sizes, strides;
  llvm::SmallVector<bool, 4> isReduced;
};

/// Transpose: result dimensions (merged where the permutation keeps neighbours
/// together) and the operand stride of each.
struct TransposePlan {
  Dims sizes, inStrides;
};

/// Matmul: the 2-D product per batch element and the batch iteration.
struct MatmulPlan {
  int64_t m = 0, n = 0, k = 0;
  int64_t rowsX = 0, colsX = 0, rowsY = 0, colsY = 0; ///< operand tiles as stored
  bool transposeX = false, transposeY = false;
  Dims batchSizes, batchStrideX, batchStrideY; ///< in elements; 0 = broadcast
  int64_t batchCount = 1;
  bool accIsRow = false; ///< the accumulator operand is a bias row: every row starts from it
};

/// One op of a leaf, ready to run.
struct OpPlan {
  ir::OpCode code = ir::OpCode::Return;
  ir::DType dtype = ir::DType::F32;
  Rep rep = Rep::None;
  Dims shape;
  int64_t numElements = 0;
  int64_t offset = 0;   ///< element offset of the result in the arena of `rep`
  int x = -1, y = -1;   ///< operand op indices (binary, matmul a/b, unary x)
  int z = -1;           ///< where: the third operand (x is the condition)
  int acc = -1;         ///< matmul accumulator op index
  int region = -1;      ///< copy_in / copy_out
  double fillValue = 0; ///< full: the value, rounded to dtype
  ir::CastMode castMode = ir::CastMode::Rint; ///< cast
  bool saturate = true;                       ///< cast
  llvm::SmallVector<int64_t, 4> axes; ///< reductions
  bool keepdim = false;               ///< reductions
  int64_t givenCount = 0;             ///< mean: its `count` attribute (0: none)
  llvm::SmallVector<int64_t, 4> perm; ///< transpose: result dim d is operand dim perm[d]
  int64_t dim = 0, k = 0;  ///< topk_indices, gather: the dimension; topk_indices: k
  bool largest = true;     ///< topk_indices
  ir::ScatterReduce combine = ir::ScatterReduce::Replace; ///< scatter (its source is `acc`)
  BroadcastPlan broadcast;
  ReducePlan reduce;
  TransposePlan transpose;
  MatmulPlan matmul;
  ir::FixpipeEpilogue epilogue; ///< copy_out from l0c: applied to each element written
  bool divIntrinsic = false;    ///< div: reciprocal then multiply (ir/DivPrecision.h)
};

/// A leaf ready to run: one OpPlan per LeafOp and the arena words it needs.
struct LeafPlan {
  std::vector<OpPlan> ops;
  int64_t floatWords = 0, intWords = 0;
  int numRegionsUsed = 0; ///< 1 + the largest region index any op uses
};

/// Upper bound on the elements of one tile (keeps all index arithmetic far from
/// overflow; a real tile is at most a few hundred KiB).
inline constexpr int64_t kMaxTileElements = int64_t(1) << 30;

/// Checks `leaf` (index `leafIndex` in its Program, for messages) and plans it.
/// Errors are internal errors (codegen produced an inconsistent leaf) naming the
/// leaf, the op and what is wrong.
absl::StatusOr<LeafPlan> planLeaf(const codegen::Leaf &leaf, int leafIndex);

} // namespace ptoc::runtime::exec
