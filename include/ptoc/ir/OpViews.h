// Typed views of ops whose meaning is spread over attributes and types: read once
// here, so passes, codegen, the runtime and the tuner do not re-derive M, N, K or a
// reduction's axes from attribute strings.
#pragma once

#include <cstdint>
#include <optional>

#include <string>

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include "ptoc/ir/CastMode.h"
#include "ptoc/ir/DType.h"
#include "ptoc/ir/Operation.h"
#include "ptoc/ir/TileShape.h"

namespace ptoc::ir {

/// A matmul (tensor or tile level): `[..., M, K] x [..., K, N] -> [..., M, N]`, with
/// the operands' transposes applied.
struct MatmulView {
  bool transposeA = false, transposeB = false;
  int64_t m = 1, n = 1, k = 1; ///< of one matrix product (batch dims aside)
  DType in = DType::F32;       ///< the operands' element type
  DType out = DType::F32;      ///< the result's element type
  DType acc = DType::F32;      ///< the accumulator's: f32 for floats, i32 for i8
  std::optional<CubeTile> tile; ///< the cube_tile, when it has one

  /// The view of `op`, or nullopt when it is not a well-formed matmul.
  static std::optional<MatmulView> of(const Operation &op);
};

/// A reduction (sum, amax, amin, mean): its axes (ascending) and keepdim.
struct ReduceView {
  llvm::ArrayRef<int64_t> axes;
  bool keepdim = false;
  /// mean's `count`: what it divides by (0: the number of reduced elements).
  int64_t count = 0;

  /// The view of `op`, or nullopt when it is not a reduction with `axes`.
  static std::optional<ReduceView> of(const Operation &op);
};

/// A cast's conversion: its rounding mode (the default for its types when it has no
/// `mode`) and whether an out-of-range integer result saturates (else wraps).
struct CastView {
  CastMode mode = CastMode::Rint;
  bool saturate = true;

  /// The view of cast `op` (the verifier checked its mode's spelling).
  static CastView of(const Operation &op);
};

/// topk or topk_indices: how many, along which dim, largest or smallest.
struct TopKView {
  int64_t k = 1, dim = 0;
  bool largest = true; ///< the attribute's default

  /// The view of `op`, or nullopt when it is not a topk / topk_indices with k and dim.
  static std::optional<TopKView> of(const Operation &op);
};

/// How scatter combines a source element with the element it lands on.
enum class ScatterReduce : uint8_t { Replace, Add, Multiply };

/// A scatter: the dimension its index selects along, and how it combines.
struct ScatterView {
  int64_t dim = 0;
  ScatterReduce reduce = ScatterReduce::Replace;

  /// The view of `op`, or nullopt when it is not a scatter with an integer `dim`.
  static std::optional<ScatterView> of(const Operation &op);
};

/// A vector op's tile footprint: the shape its vec_tile covers, the element sizes of
/// its operands and results, how many of its tiles UB holds together and whether its
/// rows must be aligned. The verifier, expand-tiles and the tuner check tiles through it.
struct VecTileView {
  llvm::ArrayRef<int64_t> tile;         ///< the vec_tile attribute (empty without one)
  llvm::SmallVector<int64_t, 4> iter;   ///< iterationShape: what the tile covers
  unsigned minElemSize = 1, maxElemSize = 1;
  unsigned buffers = 1;                 ///< vecTileBuffers of the op
  bool alignedRows = false;             ///< vecTileNeedsAlignedRows of the op
  llvm::SmallVector<int64_t, 4> transposePerm; ///< a transpose's perm (its own footprint)
  llvm::SmallVector<bool, 4> keepWhole; ///< per iter dim: a reduced axis (never cut by a split)

  /// The view of an op, from its own types (`tile` is empty when it has no vec_tile).
  static VecTileView of(const Operation &op);
  /// The same from explicit operand and result types (the verifier's, checked first).
  static VecTileView of(const Operation &op, llvm::ArrayRef<Type> operands,
                        llvm::ArrayRef<Type> results);

  /// checkVecTile of `candidate` for this op over `over` (default: iter) with
  /// `numBuffers` (default: buffers; a transpose counts its own step,
  /// transposeStepBytes): "" when it fits, else why not.
  std::string check(llvm::ArrayRef<int64_t> candidate, const target::DeviceSpec *device) const;
  std::string check(llvm::ArrayRef<int64_t> candidate, llvm::ArrayRef<int64_t> over,
                    unsigned numBuffers, const target::DeviceSpec *device) const;
  /// splitWholeVecTile of `candidate` for this op (its reduced axes kept whole).
  WholeTileSplit splitWhole(llvm::ArrayRef<int64_t> candidate,
                            const target::DeviceSpec &device) const;
  /// The footprint `check` and `splitWhole` measure, with `numBuffers` tiles.
  VecTileFootprint footprint(unsigned numBuffers) const;
};

} // namespace ptoc::ir
