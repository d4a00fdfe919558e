// Program: what codegen makes of a partitioned function. One pipe program (a *leaf*)
// per distinct subgraph, shared by all isomorphic subgraphs, and the execute graph:
// one *call* of a leaf per subgraph, with the concrete GM regions it reads and writes
// and the calls it waits for. Plain data (no IR pointers), so a Program outlives the
// Context it was built from and can be cached, simulated and executed many times.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "ptoc/ir/CastMode.h"
#include "ptoc/ir/DType.h"
#include "ptoc/ir/Fixpipe.h"
#include "ptoc/ir/OpDef.h"
#include "ptoc/ir/OpViews.h"
#include "ptoc/ir/Type.h"
#include "ptoc/target/CoreKind.h"

namespace ptoc::codegen {

/// The pipes of a core. AIC: MTE2 (GM->L1), MTE1 (L1->L0A/L0B), CUBE, FIXPIPE
/// (L0C->GM). AIV: MTE2 (GM->UB), VEC, MTE3 (UB->GM). Pipes of one core run
/// concurrently; instructions on one pipe run in order.
enum class Pipe : uint8_t { Mte2, Mte1, Cube, Fixpipe, Vec, Mte3 };
inline constexpr int kNumPipes = 6;
/// "MTE2", "MTE1", "CUBE", "FIXPIPE", "VEC", "MTE3".
llvm::StringRef pipeName(Pipe p);
/// True for the pipes that move data (MTE2, MTE1, FIXPIPE, MTE3).
inline bool isTransferPipe(Pipe p) { return p != Pipe::Cube && p != Pipe::Vec; }

/// A GM tensor of the function: an argument, a `gm_tensor` the function writes, or an
/// alias (`view`, `reshape`) of one of those. Every tensor is a strided window into the
/// memory of its base tensor (itself unless it is an alias).
struct GmTensor {
  enum class Kind : uint8_t { Argument, Intermediate, Alias };
  std::string name;                       ///< the SSA name in the IR, without '%'
  Kind kind = Kind::Intermediate;
  ir::DType dtype = ir::DType::F32;
  llvm::SmallVector<int64_t, 4> shape;
  int base = -1;                          ///< tensor owning the memory (== own index unless Alias)
  int64_t baseOffset = 0;                 ///< element offset into the base's memory
  llvm::SmallVector<int64_t, 4> strides;  ///< element strides into the base's memory
  int argIndex = -1;                      ///< Argument: position in the signature
  /// Intermediate only: the Argument tensor whose contents it starts with (-1: it
  /// starts as zeros). A loop that updates an argument in place writes such a copy:
  /// on the device it is the argument's own buffer (no transfer is simulated); the
  /// executor keeps the caller's input read-only and returns the copy.
  int initFrom = -1;
  /// Alias only: per dimension, how much of it from its start holds data (a loop
  /// window's valid_shape in one iteration); empty: all of it. A copy_in reads zeros
  /// beyond it and a copy_out writes nothing there; only this part must lie inside the
  /// base's memory.
  llvm::SmallVector<int64_t, 4> valid;
  /// Loops: an intermediate private to one iteration of a loop body lives in recycled
  /// workspace memory, as PyPTO's root-function workspace does: pool `pool` (one per
  /// parallel slot) at byte `poolOffset` (runtime::recycleWorkspaces, docs/runtime.md
  /// "Workspace recycling"). -1: memory of its own. The simulator's L2 sees the memory,
  /// so an iteration that reuses an earlier one's bytes writes over what may still be
  /// resident; numerics keep every tensor's own buffer.
  int pool = -1;
  int64_t poolOffset = 0;
};

/// One op of a leaf, in leaf order: a depth-first order of the subgraph's
/// dependencies (analysis::LocalScheduler), so a merged subgraph runs member by member;
/// not necessarily the function's body order. Local tile values are referred to by
/// the index of the op that produced them.
struct LeafOp {
  ir::OpCode code = ir::OpCode::Return;
  ir::DType dtype = ir::DType::F32;      ///< result element type (copy_out: the GM type)
  llvm::SmallVector<int64_t, 4> shape;   ///< result tile shape (copy_out: the tile written)
  ir::MemSpace space = ir::MemSpace::UB; ///< where the result lives (copy_out: GM)
  /// Indices of earlier LeafOps: the local tile operands in IR order (matmul: a, b
  /// [, acc]; copy_out: the tile written). For copy_in: the copy_outs of this same
  /// leaf whose GM writes it must wait for (ordering only; its data comes from its
  /// region).
  llvm::SmallVector<int, 3> operands;
  int region = -1;                       ///< copy_in/copy_out: index into Call::regions
  // Decoded attributes (only those of the op's kind are meaningful).
  llvm::SmallVector<int64_t, 4> axes;    ///< reductions
  bool keepdim = false;                  ///< reductions
  int64_t count = 0;                     ///< mean: its `count` (0: the reduced elements)
  llvm::SmallVector<int64_t, 4> perm;    ///< transpose
  double value = 0;                      ///< full
  bool transposeA = false, transposeB = false; ///< matmul
  /// cast: its `mode` when castModeWritten, else ir::defaultCastMode of its types.
  ir::CastMode castMode = ir::CastMode::Rint;
  bool castModeWritten = false;                ///< cast: the IR op has a `mode`
  bool saturate = true;                        ///< cast: out-of-range integers clamp
  int64_t dim = 0;                       ///< topk_indices, gather: the dimension
  int64_t k = 0;                         ///< topk_indices: how many are selected
  bool largest = true;                   ///< topk_indices: the largest (else smallest)
  ir::ScatterReduce reduce = ir::ScatterReduce::Replace; ///< scatter
  ir::FixpipeEpilogue epilogue;          ///< copy_out from l0c: scale, relu
  bool divIntrinsic = false;             ///< div: precision = "intrinsic"
  int64_t cycles = 0;                    ///< cost-model estimate (compute ops)
  int64_t bytes = 0;                     ///< bytes of the result tile (copies: bytes moved)
};

/// Where an op's result lives in its core-local buffer. A result computed in place
/// (docs/codegen.md) has the slot of the operand it overwrites.
struct BufferSlot {
  ir::MemSpace space = ir::MemSpace::GM; ///< GM = no local storage (copy_out tokens)
  int64_t offset = 0;
  int64_t bytes = 0;
};

/// One instruction of a leaf's pipe program.
struct PipeInstr {
  Pipe pipe = Pipe::Vec;
  int op = -1;                      ///< the LeafOp it implements
  int64_t cycles = 0;               ///< compute pipes: fixed cycles from the cost model
  int64_t bytes = 0;                ///< transfer pipes: bytes moved
  int region = -1;                  ///< GM transfers (MTE2, FIXPIPE, MTE3): Call::regions index
  /// Where it writes: the local slot for MTE2, MTE1 (an L0A or L0B block slot: MTE1
  /// runs at a different rate into each), CUBE (L0C) and VEC; space GM for MTE3 and
  /// FIXPIPE (the GM side is `region`).
  BufferSlot dst;
  llvm::SmallVector<int, 4> deps;   ///< earlier instructions of this leaf it waits for
                                    ///< (data, and buffer reuse: a slot is rewritten only
                                    ///< after its previous readers finished)
};

/// A compiled subgraph: the pipe program every isomorphic subgraph runs.
struct Leaf {
  int id = -1;
  std::string hash;                 ///< structural hash (hex), as in the subgraph table
  int hashOrder = -1;               ///< isomorphism group (key: Program::groupKey)
  int groupSize = 0;                ///< subgraphs in the group
  target::CoreKind core = target::CoreKind::AIV;
  std::vector<LeafOp> ops;
  std::vector<BufferSlot> slots;    ///< one per op
  std::vector<PipeInstr> instrs;    ///< in issue order; per pipe, this order is kept
  int numRegions = 0;
  /// The function it was compiled from (its position in the module): the F of its
  /// group key. Program::funcIndex unless the program has loop bodies.
  unsigned funcIndex = 0;
  bool doubleBuffered = false;      ///< ping-pong allocation was possible and chosen
  /// Double buffering was asked for (CodegenOptions::doubleBuffer) but some local
  /// buffer has no room for a second copy of its values: the leaf runs single-buffered
  /// (a load waits for the compute that frees its slot). Smaller tiles leave room.
  bool noRoomToDoubleBuffer = false;
  /// Peak bytes used per local buffer (index: ir::MemSpace).
  int64_t peakBytes[6] = {0, 0, 0, 0, 0, 0};
  int64_t cycles = 0;               ///< cost-model estimate of one run
  int64_t copyInBytes = 0, copyOutBytes = 0;
  int64_t flops = 0;                ///< cube FLOPs of one run
  int64_t vectorBytes = 0;          ///< bytes the vector unit processes in one run
  /// Cycles of one run's vector instructions at their classes' peak rates
  /// (CostModel::vectorPeakCycles): the roofline bound's vector work.
  double vectorPeakCycles = 0;
};

/// A concrete GM region: a window of `tensor` starting at `offsets`; its shape is the
/// shape of the leaf op that uses it.
struct Region {
  int tensor = -1;
  llvm::SmallVector<int64_t, 4> offsets;
};

/// One task of the execute graph: a call of a leaf for one subgraph.
struct Call {
  int leaf = -1;
  int subgraph = -1;                ///< the subgraph id in the partitioned IR
  std::vector<Region> regions;      ///< indexed by LeafOp::region / PipeInstr::region
  std::vector<int> preds;           ///< calls it waits for (sorted, unique, all earlier)
  /// The preds it waits for to keep writes of one GM region in program order (it
  /// overwrites what they wrote or read; data may flow from them too, as in a
  /// read-modify-write): a subset of `preds`, sorted. The summary's critical path
  /// counts these edges.
  std::vector<int> writeOrderPreds;
  /// Loops (docs/runtime.md): the iteration of a loop body this call belongs to
  /// (index into Program::instances), -1 for a program without loops.
  int instance = -1;
  /// The scheduling unit (stitch) the AICPU control thread submits the call in. A
  /// stitch's calls start only when the control thread has built it
  /// (Program::stitchReadyCycles), the stitch before it has opened and every call of
  /// the stitches it waits for (Program::stitchWaitFor: the one before it, unless
  /// parallel loops say otherwise) has finished.
  /// 0 for a program without loops (everything is one stitch).
  int stitch = 0;
};

/// A loop body or an implicit segment (code outside loops): a root function compiled
/// once, whose iterations the control thread instantiates.
struct Body {
  std::string name;        ///< the function's name
  std::string hash;        ///< structural hash of its partitioned IR (hex)
  unsigned funcIndex = 0;  ///< the F of its group keys func<F>_<order>
};

/// One iteration of a body: what the swimlane and the summary name a call's work by.
struct Instance {
  int body = -1;           ///< index into Program::bodies
  std::string loop;        ///< the loop's name (`ptoc.loop(name=...)`; a segment's own)
  int64_t iteration = 0;   ///< the loop index's value (0 for a segment)
  /// The innermost `parallel` loop the iteration lies in (docs/runtime.md "Parallel
  /// loops"): which run of it (a number per execution of such a loop op, in program
  /// order; -1: no parallel loop encloses it) and that run's iteration ordinal
  /// (0, 1, ... in index order). A parallel loop's own iterations, and everything
  /// nested in them that no inner parallel loop claims, share their run and ordinal.
  int parallelRun = -1;
  int64_t parallelIteration = 0;
  /// The iteration's own intermediates (tensor indices): its body's values that no
  /// other iteration reads, the root function's inner workspace in PyPTO's terms.
  std::vector<int> workspace;
};

/// The compiled function.
struct Program {
  std::string funcName;
  /// The function's position in its module: the F of its group keys (Leaf::groupKey).
  unsigned funcIndex = 0;
  std::vector<GmTensor> tensors;
  std::vector<int> arguments;       ///< tensor index of each function argument
  std::vector<int> results;         ///< tensor index of each returned value
  std::vector<Leaf> leaves;
  std::vector<Call> calls;          ///< in a topological order of the execute graph

  // Loops only (empty otherwise): the bodies the calls were instantiated from, their
  // iterations, and the AICPU control thread's schedule.
  std::vector<Body> bodies;
  std::vector<Instance> instances;
  /// Per stitch: the cycle, counted from the end of the kernel head, at which the
  /// control thread has built it (evaluated bounds, built every task of its iterations
  /// and submitted it). Empty: one stitch, ready at the head.
  std::vector<double> stitchReadyCycles;
  /// Per stitch k: the stitch up to which every stitch must have finished before k may
  /// open (-1: none; stitches open in order regardless). Empty: k - 1 for every stitch
  /// (a barrier between consecutive stitches), the rule without parallel loops. With
  /// parallel loops the first stitch of an iteration waits only for the iteration
  /// device_sched_parallelism places before it (runtime::assignStitches).
  std::vector<int> stitchWaitFor;
  /// The device_sched_parallelism the stitches were assigned with (the automatic
  /// value resolved, runtime::automaticSchedParallelism); 1 without loops.
  int schedParallelism = 1;
  /// Some loop iteration of the program belongs to a parallel loop (schedParallelism
  /// applies), and whether schedParallelism was derived (device_sched_parallelism 0)
  /// rather than given.
  bool parallelLoops = false;
  bool schedParallelismDerived = false;
  /// Workspace recycling (runtime::recycleWorkspaces): the pools the iterations' own
  /// intermediates live in (one per parallel slot in use), each pool's bytes
  /// (stitch_function_max_num x the largest iteration's workspace), how often an
  /// iteration found its pool full inside a stitch and started over at its beginning,
  /// and the dependencies that added (call, pred): the iteration waits for the ones
  /// whose bytes it reuses. Kept so that assigning stitches anew can take them out.
  int workspacePools = 0;
  int64_t workspacePoolBytes = 0;
  int64_t workspaceWraps = 0;
  std::vector<std::pair<int, int>> workspaceReuseEdges;

  /// The user key of leaf `leaf`'s isomorphism group, `func<F>_<hashOrder>` with F =
  /// the leaf's funcIndex (analysis::hashOrderKey): the key of the *_setting pass options, as the
  /// compile statistics and pass logs spell it.
  std::string groupKey(int leaf) const;
  /// Successor lists, computed from `preds` (index: call).
  std::vector<std::vector<int>> successors() const;
  /// Totals over all calls.
  int64_t totalFlops() const;
  int64_t totalVectorBytes() const;
};

} // namespace ptoc::codegen
