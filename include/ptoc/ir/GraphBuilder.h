// GraphBuilder: builds tensor-level functions from C++ (and from the Python layer),
// with shape inference, numpy broadcasting, and PyPTO-style tile-shape scopes.
#pragma once

#include <optional>
#include <utility>

#include "absl/status/statusor.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include "ptoc/ir/CastMode.h"
#include "ptoc/ir/Context.h"
#include "ptoc/ir/DivPrecision.h"
#include "ptoc/ir/Module.h"
#include "ptoc/ir/TileShape.h"

namespace ptoc::target {
struct DeviceSpec;
}

namespace ptoc::ir {

/// Options of `matmul`.
struct MatmulOptions {
  bool transposeA = false;
  bool transposeB = false;
  /// Result element type; by default the operands' (i32 for i8 operands).
  std::optional<DType> outDType;
  /// FIXPIPE epilogue (ir/Fixpipe.h): dequantisation scale (i8 operands, f16/bf16
  /// result) and ReLU; PyPTO's extend_params 'scale' and 'relu_type'.
  std::optional<double> scale;
  bool relu = false;
  /// PyPTO's bias_tensor: a [1, N] tensor added to every row (f16/f32 for f16
  /// operands, f32 for bf16/f32, i32 for i8), before the scale and the ReLU.
  Value *bias = nullptr;
};

/// Builds one function at a time into a Module. Every op is checked as it is
/// created (types, attributes, and tile shapes against `device` when given); a
/// failure returns an InvalidArgument status "file:line:col: error: 'op' op ..."
/// naming the current location and leaves the function unchanged.
///
/// Tile shapes and scopes work like PyPTO's settings: `setVecTile` applies to the
/// vector ops created after it, `setCubeTile` to the matmuls, `setScope` tags ops
/// for `sg_set_scope`, until changed again. A reshape or view (a GM alias) takes the
/// vector tile whenever it adapts to the alias's rank (ir::adaptVecTile), so the tile
/// set for `x` also copies out a returned row `x[i]`; a tile that does not adapt is
/// left off (an alias needs a tile only when it is returned).
class GraphBuilder {
public:
  explicit GraphBuilder(Module &m, const target::DeviceSpec *device = nullptr);

  /// Starts a function with the given argument types (tensors) and optional names.
  absl::StatusOr<Func *> beginFunc(llvm::StringRef name, llvm::ArrayRef<Type> argTypes,
                                   llvm::ArrayRef<std::string> argNames = {});
  /// Ends the current function with `return results` and sets its result types.
  absl::Status endFunc(llvm::ArrayRef<Value *> results);
  Func *func() const { return func_; }
  Value *arg(unsigned i) const { return func_->arg(i); }
  Context &context() const { return ctx_; }

  // --- settings that apply to the ops created next ---
  void setVecTile(llvm::ArrayRef<int64_t> dims) { vecTile_.emplace(dims.begin(), dims.end()); }
  void clearVecTile() { vecTile_.reset(); }
  void setCubeTile(const CubeTile &tile) { cubeTile_ = tile; }
  void clearCubeTile() { cubeTile_.reset(); }
  /// Ops get `sg_scope = id`; -1 clears.
  void setScope(int64_t id) { scope_ = id; }
  /// The location given to ops created next (e.g. the user's Python file:line).
  void setLocation(Location loc) { loc_ = loc; }
  Location location() const { return loc_; }

  /// The settings above, to save and restore around a scope.
  struct Settings {
    std::optional<llvm::SmallVector<int64_t, 4>> vecTile;
    std::optional<CubeTile> cubeTile;
    int64_t scope = -1;
  };
  Settings settings() const { return {vecTile_, cubeTile_, scope_}; }
  void restore(const Settings &s) {
    vecTile_ = s.vecTile;
    cubeTile_ = s.cubeTile;
    scope_ = s.scope;
  }

  // --- ops ---
  /// The general form: any op, with explicit attributes and (for ops whose result
  /// is not determined by their operands: cast, reshape, view, full) its result type.
  absl::StatusOr<Value *> create(OpCode code, llvm::ArrayRef<Value *> operands,
                                 llvm::ArrayRef<NamedAttr> attrs = {}, Type resultType = {});
  /// The same, returning the op (for ops with several results: topk).
  absl::StatusOr<Operation *> createOp(OpCode code, llvm::ArrayRef<Value *> operands,
                                       llvm::ArrayRef<NamedAttr> attrs = {},
                                       Type resultType = {});

  absl::StatusOr<Value *> matmul(Value *a, Value *b, const MatmulOptions &opts = {});
  /// add, sub, mul, div, max, min, pow; eq, ne, lt, le, gt, ge, logical_and,
  /// logical_or (bool results) (numpy broadcasting).
  absl::StatusOr<Value *> binary(OpCode code, Value *a, Value *b);
  /// div with a precision mode (ir/DivPrecision.h); HighPrecision writes no attribute.
  absl::StatusOr<Value *> div(Value *a, Value *b, DivPrecision precision);
  /// neg, exp, log, sqrt, rsqrt, abs, relu, sigmoid, tanh, gelu, reciprocal, ceil,
  /// floor, trunc, round (ties to even), exp2, expm1, erfc, logical_not.
  absl::StatusOr<Value *> unary(OpCode code, Value *x);
  /// `x` converted to `to`; `mode` (default: defaultCastMode) rounds an inexact
  /// result; `saturate` false wraps an out-of-range integer result (docs/ir.md).
  absl::StatusOr<Value *> cast(Value *x, DType to, std::optional<CastMode> mode = std::nullopt,
                               bool saturate = true);
  /// `a` where `cond` (bool) is true, else `b` (numpy broadcasting of all three).
  absl::StatusOr<Value *> where(Value *cond, Value *a, Value *b);
  /// sum, amax, amin, mean over `axes` (negative counts from the end).
  absl::StatusOr<Value *> reduce(OpCode code, Value *x, llvm::ArrayRef<int64_t> axes,
                                 bool keepdim);
  absl::StatusOr<Value *> reshape(Value *x, llvm::ArrayRef<int64_t> shape);
  /// Swaps two dimensions (negative counts from the end).
  absl::StatusOr<Value *> transpose(Value *x, int64_t dim0, int64_t dim1);
  absl::StatusOr<Value *> permute(Value *x, llvm::ArrayRef<int64_t> perm);
  /// The static slice of `shape` starting at `offsets`.
  absl::StatusOr<Value *> view(Value *x, llvm::ArrayRef<int64_t> offsets,
                               llvm::ArrayRef<int64_t> shape);
  /// `dst` with `src` written at `offsets`.
  absl::StatusOr<Value *> assemble(Value *dst, Value *src, llvm::ArrayRef<int64_t> offsets);
  absl::StatusOr<Value *> concat(llvm::ArrayRef<Value *> values, int64_t axis);
  absl::StatusOr<Value *> full(llvm::ArrayRef<int64_t> shape, double value, DType dtype);
  /// The k largest (smallest) elements along `dim` (negative counts from the end),
  /// sorted, and their indices (i32); equal values keep index order (docs/ir.md).
  absl::StatusOr<std::pair<Value *, Value *>> topk(Value *x, int64_t k, int64_t dim,
                                                   bool largest);
  /// out[..., i, ...] = x[..., index[..., i, ...], ...] with i at `dim` (PyPTO's gather).
  absl::StatusOr<Value *> gather(Value *x, int64_t dim, Value *index);
  /// `x` with x[.., index[p], ..] = src[p] (index at `dim`) for every position p of
  /// `index`, in row-major order; `reduce` "" (replace), "add" or "multiply".
  absl::StatusOr<Value *> scatter(Value *x, int64_t dim, Value *index, Value *src,
                                  llvm::StringRef reduce);
  /// `x` broadcast to `shape` (its size-1 dimensions repeated), materialised.
  absl::StatusOr<Value *> expandClone(Value *x, llvm::ArrayRef<int64_t> shape);

private:
  absl::Status error(llvm::StringRef opName, const std::string &msg,
                     DiagCategory category = DiagCategory::Shape) const;

  Module &module_;
  Context &ctx_;
  const target::DeviceSpec *device_;
  Func *func_ = nullptr;
  Location loc_;
  std::optional<llvm::SmallVector<int64_t, 4>> vecTile_;
  std::optional<CubeTile> cubeTile_;
  int64_t scope_ = -1;
};

} // namespace ptoc::ir
