// The `loop` op (docs/ir.md, "Loops"), decoded once: its body function, index,
// bounds and the windows of its operands that each iteration reads and writes. A
// function with a loop op is a *control function*: the tiling passes leave it alone,
// its bodies are compiled as root functions of their own, and the runtime
// instantiates one call of the body per iteration.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include "ptoc/ir/Attribute.h"
#include "ptoc/ir/LogicalResult.h"
#include "ptoc/ir/SymExpr.h"

namespace ptoc::ir {

class Context;
class Func;
class Module;
class Operation;

/// A window of a loop operand: the box at `offsets` (one expression per operand
/// dimension) of size `sizes`. The body sees it with the sizes' size-1 dimensions
/// dropped or kept as its own type says (same elements in the same order).
/// `valid` (empty: all of it) gives, per dimension, how much of the box from its
/// start holds data in an iteration (PyPTO's valid_shape, for tails whose extent is
/// known only at run time): between 0 (an empty window: nothing is read or written)
/// and the size; only that part must lie inside the operand; the body reads zeros
/// beyond it, but its reductions fold only the valid elements and its matmuls sum over
/// the valid part of K only (the valid part follows the body's ops; docs/ir.md); what
/// it writes beyond it does not land.
/// A size of kDynamicDim (`?`, printed -1) is all of a dynamic axis of the operand, at
/// offset 0: how a tensor with dynamic axes is passed whole into a nested loop's body.
struct LoopWindow {
  int operand = -1;
  std::vector<SymExpr> offsets;
  llvm::SmallVector<int64_t, 4> sizes;
  std::vector<SymExpr> valid;
  /// Where the user made the window (`file:line:col`: a Python slice or view inside
  /// the body), "" when unknown; run-time errors about the window point there. Debug
  /// info: the loop's `locs` attribute, printed with locations only.
  std::string loc;
};

struct LoopView {
  std::string body;  ///< the body function's name
  std::string name;  ///< the loop's name
  std::string index; ///< the index's name in expressions
  SymExpr start, stop, step;
  std::vector<LoopWindow> ins, outs;
  /// `parallel = true`: the user promises the iterations are independent (PyPTO's
  /// `loop(..., parallel=True)`); the control thread submits each iteration as a stitch
  /// of its own and lets up to device_sched_parallelism of them run at once
  /// (docs/runtime.md, "Parallel loops"). Printed only when true.
  bool parallel = false;
  /// The operands `outs` write, each once, in order of first appearance: the loop's
  /// results are these operands, updated.
  llvm::SmallVector<int, 4> written;

  /// Decodes `op` (a loop). Errors say which attribute is malformed and how.
  static absl::StatusOr<LoopView> of(const Operation &op);
  /// The loop's attribute dictionary (the inverse of of(); `written` is derived).
  Attribute toAttr(Context &ctx) const;
};

/// The offsets of a window (`offsets`, `sizes`: one per dimension of a tensor of
/// `shape` named `tensor` in messages) for one iteration's `bindings`, values of
/// tensors read through `reader`, checked to lie inside the tensor. Errors (the caller
/// prefixes the loop and the iteration): "<side> window <i> offset <d>: <why>", or
/// "<side> window <i> [o0 +s0, ...] of <tensor> (AxB) starts at o in dimension d and
/// so reaches [o, e), outside [0, n); fix ...".
absl::StatusOr<llvm::SmallVector<int64_t, 4>>
evaluateWindow(llvm::ArrayRef<SymExpr> offsets, llvm::ArrayRef<int64_t> sizes,
               llvm::ArrayRef<int64_t> shape, llvm::StringRef tensor,
               llvm::ArrayRef<SymBinding> bindings, const SymExpr::ElementReader &reader,
               llvm::StringRef side, size_t i);

/// `sizes` with each whole-dynamic-axis size (kDynamicDim) replaced by `shape`'s
/// size there (the operand's size in this run).
llvm::SmallVector<int64_t, 4> resolveWholeAxes(llvm::ArrayRef<int64_t> sizes,
                                               llvm::ArrayRef<int64_t> shape);

/// How a body sees a window of `sizes` as its argument or result shape `bodyShape`:
/// per body dimension, the window dimension it is, or -1 for a size-1 body dimension
/// (the window's size-1 dimensions are dropped or kept); nullopt when the two do not
/// hold the same elements in the same order. A whole dynamic axis (kDynamicDim)
/// matches a `?` body dimension.
std::optional<llvm::SmallVector<int, 4>> bodyDimsOfWindow(llvm::ArrayRef<int64_t> bodyShape,
                                                          llvm::ArrayRef<int64_t> sizes);

/// The valid extents of a window (`valid`, see LoopWindow; `sizes` when empty) for one
/// iteration's `bindings`, each checked to lie in [0, size]. Errors: "<side> window
/// <i> valid extent <d>: <why>" (the caller prefixes the loop and the iteration).
absl::StatusOr<llvm::SmallVector<int64_t, 4>>
evaluateValidExtents(llvm::ArrayRef<SymExpr> valid, llvm::ArrayRef<int64_t> sizes,
                     llvm::ArrayRef<SymBinding> bindings, const SymExpr::ElementReader &reader,
                     llvm::StringRef side, size_t i);

/// The operands `outs` writes, each once, in order of first appearance (the loop's
/// results, LoopView::written).
llvm::SmallVector<int, 4> writtenOperands(llvm::ArrayRef<LoopWindow> outs);

/// Decodes a windows attribute (`ins` / `outs`); the error names the entry.
absl::StatusOr<std::vector<LoopWindow>> parseWindows(Attribute a);
/// Whether `a` decodes as a windows attribute.
bool isWindowList(Attribute a);
/// The attribute of windows (the inverse of parseWindows).
Attribute windowsAttr(Context &ctx, llvm::ArrayRef<LoopWindow> windows);
/// A bound or offset as an attribute: an Int when constant, else its text.
Attribute symAttr(Context &ctx, const SymExpr &e);

/// The names of the functions the module's loops run.
std::set<std::string> loopBodyNames(const Module &m);
/// Whether `f` is a control function (it has a loop op).
bool isControlFunc(const Func &f);
/// The module's entry when it has loops: its only function that no loop runs as its
/// body; null when it has no loops or several such functions.
Func *loopEntry(Module &m);
const Func *loopEntry(const Module &m);
/// Whether `shape` has the elements of a box of `sizes` in the same order (equal
/// after dropping size-1 dimensions).
bool sameElements(llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<int64_t> sizes);

/// Checks every loop of the module against its body and operands: the body exists
/// and does not (transitively) run itself; windows fit their operands' ranks, sizes
/// and element types and match the body's signature; expressions parse and name only
/// the indices in scope; bounds and offsets are in range where provable (the rest is
/// checked per iteration at run time); the results are the written operands; an
/// operand a loop writes is writable memory and is not read after the loop. Reports
/// at each loop's location.
LogicalResult verifyLoops(const Module &m);

} // namespace ptoc::ir
