// The local schedule of one subgraph: the order its leaf runs the tile ops in (depth
// first, so one chain of a merged subgraph finishes before the next one's copy_in),
// which results may overwrite an operand in place, and the local-buffer footprint
// that order needs. Shared by codegen (which compiles leaves in this order) and the
// merge passes (which estimate whether a merged subgraph still fits a local buffer).
#pragma once

#include <cstdint>
#include <vector>

#include "llvm/ADT/ArrayRef.h"
#include "ptoc/ir/Operation.h"
#include "ptoc/ir/Type.h"

namespace ptoc::analysis {

/// Bytes a tile of `type` occupies in a local buffer: the last dimension padded to
/// whole `blockBytes` blocks (rows start on block boundaries), times the rest.
int64_t localTileBytes(ir::Type type, int64_t blockBytes);

/// Whether `op` may write its result over the tile of operand `operand` when this op
/// is that tile's last reader: an elementwise unary or binary op or a cast whose
/// operand has the result's shape and element size (the kernel reads each element
/// before writing it, and the tiles take equal space), or a tile matmul over its
/// accumulator (operand 2, accumulating in L0C).
bool computesInPlace(const ir::Operation &op, unsigned operand);

/// Orders the ops of one subgraph for its leaf. Ops are numbered 0..n-1 in body order;
/// the caller declares what each op waits for inside the subgraph (its local operands
/// and, for a copy_in, the copy_outs of the same subgraph it is ordered after).
///
/// The order is a depth-first schedule from the sinks (ops nothing in the subgraph
/// waits for), taken in body order, except that the sinks of one member (a weakly
/// connected part of the dependencies) are taken together, at the place of its
/// first sink, so a member with several outputs finishes all of them before the next
/// member starts: a sink is issued as soon as what it waits for
/// is, which is issued operands first, in body order (so an accumulating matmul's
/// previous K step comes before this step's loads). Ops marked eager (copy_outs) are
/// issued right after the last op they wait for, so their tile dies early. For a
/// subgraph made of several isomorphic members, every member's chain runs to its
/// copy_out before the next member's copy_in: the tiles of one member are live at a
/// time, not all of them. Deterministic, and a function of the dependency structure
/// and body order only, so isomorphic subgraphs get the same order.
///
/// Scratch storage is reused between subgraphs (one scheduler per pass or codegen run).
class LocalScheduler {
public:
  /// Starts a subgraph of `numOps` ops with no dependencies.
  void reset(int numOps);
  /// Op `op` waits for op `on` (both in 0..numOps-1; duplicates are fine). Calls for
  /// one `op` must be contiguous, and `op` must ascend between them (declare the
  /// dependencies while walking the ops in body order).
  void addDep(int op, int on);
  /// Issues `op` as soon as everything it waits for is issued (copy_outs).
  void setEager(int op);
  /// The order: element k is the op issued k-th. Fails (returns an empty array for a
  /// non-empty subgraph) only if the dependencies contain a cycle.
  llvm::ArrayRef<int> run();

private:
  void issue(int op);

  int numOps_ = 0;
  int lastOp_ = -1;
  std::vector<int> depStart_, deps_;    // CSR: op -> ops it waits for
  std::vector<int> userStart_, users_;  // CSR: op -> ops waiting for it
  std::vector<int> userFill_;
  std::vector<uint8_t> eager_, issued_;
  std::vector<int> component_;             // union-find over the dependencies
  std::vector<int> sinks_, firstSink_;     // sinks in issue order; per component
  std::vector<int> order_;
  std::vector<std::pair<int, int>> stack_; // (op, next dependency to visit)
};

/// Orders `ops` (the ops of one subgraph, in body order) with LocalScheduler: the
/// dependencies are the operands defined by ops of the set. `scheduler` provides the
/// scratch. Returns the ops in schedule order.
std::vector<const ir::Operation *> scheduleLocalOps(llvm::ArrayRef<const ir::Operation *> ops,
                                                    LocalScheduler &scheduler);

/// The most bytes of `space` tiles live at once when `ordered` (one subgraph's ops in
/// schedule order) run in that order: a tile is live from its op to its last reader
/// in the set (a tile nothing in the set reads dies at once), takes localTileBytes,
/// and a result computed in place (computesInPlace, over an operand whose last reader
/// it is) takes no space of its own. The per-chain peak codegen's tight placement
/// needs at least (it may need a little more to fragmentation).
int64_t localPeakBytes(llvm::ArrayRef<const ir::Operation *> ordered, ir::MemSpace space,
                       int64_t blockBytes);

} // namespace ptoc::analysis
