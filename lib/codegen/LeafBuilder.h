// Compiles one subgraph into a leaf: its ops, its pipe program (per-pipe instructions
// with data dependencies), local-buffer slots and the write-after-read dependencies
// that reusing a slot implies, and the leaf's cost statistics.
#pragma once

#include <cstdint>

#include "absl/status/statusor.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "ptoc/analysis/CostModel.h"
#include "ptoc/codegen/Codegen.h"
#include "ptoc/codegen/Program.h"
#include "ptoc/ir/Operation.h"

namespace ptoc::codegen {

/// Matmul L0 blocks beyond this many are merged into this many pipe instructions
/// (each one MTE1 load per L0 buffer and one CUBE step), so a leaf stays small for the
/// simulator while MTE1 of block i+1 still overlaps CUBE of block i.
inline constexpr int64_t kMaxL0BlocksPerMatmul = 16;

/// What buildLeaf needs to know about the subgraph besides its ops.
struct LeafRequest {
  /// The subgraph's tile ops in leaf order (a topological order of their local
  /// dependencies: analysis::LocalScheduler's); LeafOp k is ops[k].
  llvm::ArrayRef<const ir::Operation *> ops;
  int64_t subgraphId = -1;                   ///< for error messages
  int64_t hashOrder = -1;                    ///< for error messages
  /// The F of its group key func<F>_<order>: its function's position in the module
  /// (for error messages).
  unsigned funcIndex = 0;
  target::CoreKind core = target::CoreKind::AIV;
  /// The LeafOp index of `op` if it belongs to this subgraph, else -1.
  llvm::function_ref<int(const ir::Operation *op)> localIndex;
};

/// Builds the leaf (everything but id, hash, hash order and group size). Errors: an op
/// codegen cannot place on the subgraph's core, a local tile from another subgraph, or
/// local tiles that do not fit a buffer (naming the subgraph, hash order, buffer, bytes
/// needed and available, and the fix).
absl::StatusOr<Leaf> buildLeaf(const LeafRequest &request, const target::DeviceSpec &device,
                               const analysis::CostModel &cost, const CodegenOptions &options);

} // namespace ptoc::codegen
