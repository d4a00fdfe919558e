// The whole-tensor reference evaluator: runs a tensor-level function op by op on host
// tensors, in double precision, as the golden that tiled execution is checked against
// (a module with loops iteration by iteration);
// plus deterministic random inputs and a tolerance-aware tensor comparison.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "ptoc/ir/DType.h"
#include "ptoc/runtime/HostTensor.h"

namespace ptoc::ir {
class Func;
class Module;
}

namespace ptoc::runtime {

/// Evaluates a tensor-level function (no tile ops; an error names the first tile op
/// found) on `args`, filling `results` with one tensor per returned value.
///
/// Semantics, op by op (one rounding per op, so the reference sees the same
/// per-op rounding a tiled execution does):
///  - every op computes in double from its (already rounded) operands and rounds its
///    result once to the result element type with ir::roundToDType: floats to
///    nearest-even, integers truncated toward zero and saturated;
///  - elementwise ops use the op registry's scalar functions (the constant folder's
///    semantics), with numpy broadcasting; integer division by zero therefore gives
///    +-inf or nan in double, which saturates (or becomes 0 for nan) when rounded;
///  - matmul (transpose_a/b, broadcast batch dims) accumulates in double and rounds
///    once to the result type. A tiled run accumulates in f32 per K tile, so results
///    differ by accumulation error: compare with tolerance(); a matmul's FIXPIPE
///    epilogue (scale, relu) is applied as ir::FixpipeEpilogue defines it;
///  - sum/amax/amin/mean accumulate in double over the reduced axes; mean divides by
///    the number of reduced elements;
///  - cast rounds to the target type; full rounds `value` to the result type;
///  - reshape, transpose, view, assemble and concat only move elements.
/// Argument dtypes and shapes must match the signature (errors name the argument).
///
/// A function with loops (a control function, docs/ir.md "Loops") needs the module
/// that holds its bodies: use the overload below; this one reports such a loop as
/// an error.
absl::Status evaluateReference(const ir::Func &f, llvm::ArrayRef<HostTensor> args,
                               std::vector<HostTensor> &results);

/// Evaluates `f` of `module` as above; a `loop` op runs its body, a function of
/// `module`, once per index value in order, as written (before outline-segments):
///  - start, stop and step are evaluated with the indices of the enclosing loops;
///  - per index value, each `ins` window of its operand's current value is copied and
///    shaped as the body's argument, the body is evaluated (a body with loops of its
///    own recursively, with this index in scope), then each body result is written
///    into its `outs` window of the written operand;
///  - the loop's results are its written operands after the last iteration (parts
///    no iteration writes keep their values); a `gm_tensor` workspace starts as zeros;
///  - ordinary ops of a control function (between its loops) are evaluated as above.
/// A window out of range at some iteration is an error naming the loop, the
/// iteration (and the enclosing indices) and the window.
absl::Status evaluateReference(const ir::Module &module, const ir::Func &f,
                               llvm::ArrayRef<HostTensor> args, std::vector<HostTensor> &results);

/// A deterministic tensor for tests and benchmarks: the same (dtype, shape, seed)
/// gives the same bits on every platform (a counter-based generator, no std::
/// distributions). Floats are uniform in [-1, 1) rounded to the dtype; signed integer
/// types get small integers in [-kRandomIntRange, kRandomIntRange], unsigned ones in
/// [0, 2 * kRandomIntRange], bool 0 or 1, so sums and products stay far from
/// saturation in typical tests.
HostTensor randomTensor(ir::DType dtype, llvm::ArrayRef<int64_t> shape, uint64_t seed);
/// The magnitude bound of randomTensor's integers.
inline constexpr int64_t kRandomIntRange = 5;

/// Suggested comparison tolerances for results of one dtype, as numpy.allclose reads
/// them: |got - want| <= atol + rtol * |want|.
///  - f32: rtol 1e-4 — covers f32 accumulation per K tile of a matmul and reductions
///    split across tiles (partials combined in f32), both vs. a double reference;
///  - f16: rtol 1e-2 (about 10 ulp: per-op rounding in a different order compounds
///    along a chain such as softmax); bf16: rtol 2e-2 (8 mantissa bits);
///  - integers and bool: exact (0, 0).
/// `atol` is stated for values of magnitude about 1 (randomTensor's range). When a
/// result combines many terms (a matmul over K, a sum of n elements), scale atol by
/// the size of the partial results, e.g. by sqrt(K) for random inputs: near-zero
/// outputs of a cancelling sum carry the absolute error of their partials.
struct Tolerance {
  double rtol = 0;
  double atol = 0;
};
Tolerance tolerance(ir::DType dtype);

/// Where two tensors differ beyond tolerance.
struct Mismatch {
  /// Set when the tensors cannot be compared element by element (dtype or shape
  /// differ); the index fields are then meaningless.
  std::string structural;
  llvm::SmallVector<int64_t, 4> shape; ///< the compared shape (for multi-dim indices)
  double rtol = 0, atol = 0;           ///< the tolerance compared with
  int64_t count = 0;          ///< elements out of tolerance
  int64_t numElements = 0;    ///< elements compared
  int64_t firstIndex = -1;    ///< row-major index of the first element out of tolerance
  double firstGot = 0, firstWant = 0;
  int64_t worstIndex = -1;    ///< the element with the largest |got - want| - allowed
  double worstGot = 0, worstWant = 0;
  double maxAbsError = 0;     ///< largest |got - want| over all elements

  /// One paragraph: counts, the first and worst element with multi-dimensional
  /// indices, their values, and the tolerance (or the structural difference).
  std::string describe() const;
};

/// Compares `got` with `want` element-wise: equal when |got - want| <= atol + rtol *
/// |want|, or both are nan, or both are the same infinity. Returns nullopt when
/// every element is within tolerance (and dtype and shape agree).
std::optional<Mismatch> compareTensors(const HostTensor &got, const HostTensor &want,
                                       double rtol, double atol);

} // namespace ptoc::runtime
