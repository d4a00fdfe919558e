// Subgraph -> leaf: decodes the tile ops, emits the pipe program (MTE2/VEC/MTE3 on a
// vector core; MTE2/MTE1/CUBE/FIXPIPE on a cube core), places every local tile in its
// buffer (in place over a dying operand where analysis::computesInPlace allows) and adds
// the write-after-read dependencies that slot reuse implies.
#include "LeafBuilder.h"

#include <algorithm>
#include <array>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "llvm/ADT/DenseMap.h"
#include "ptoc/analysis/LocalSchedule.h"
#include "ptoc/analysis/Subgraphs.h"
#include "ptoc/codegen/BufferAllocator.h"
#include "ptoc/ir/DivPrecision.h"
#include "ptoc/ir/Diagnostics.h"
#include "ptoc/ir/OpViews.h"
#include "ptoc/ir/TileShape.h"
#include "ptoc/target/DeviceSpec.h"

namespace ptoc::codegen {
namespace {

using ir::MemSpace;
using ir::OpCode;
using analysis::localTileBytes;

/// The local buffers codegen places tiles in, in the order they are allocated.
constexpr std::array<MemSpace, 5> kLocalSpaces = {MemSpace::UB, MemSpace::L1, MemSpace::L0A,
                                                  MemSpace::L0B, MemSpace::L0C};

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t alignUp(int64_t v, int64_t a) { return ceilDiv(v, a) * a; }
uint8_t pipeBit(Pipe p) { return static_cast<uint8_t>(1u << static_cast<unsigned>(p)); }
llvm::StringRef spaceName(MemSpace s) {
  std::string_view n = ir::memSpaceName(s);
  return {n.data(), n.size()};
}

/// A local value: an op's result tile, or one L0A/L0B block a matmul loads.
struct LocalValue {
  MemSpace space = MemSpace::UB;
  int64_t bytes = 0;                 ///< slot size
  int op = -1;                       ///< the LeafOp that makes it (or loads the block)
  bool isBlock = false;              ///< an L0 block (not an op result)
  int def = -1;                      ///< the first instruction writing it
  int ready = -1;                    ///< the last instruction writing it: readers wait for it
  llvm::SmallVector<int, 4> readers; ///< instructions reading it, ascending
  /// Operand values whose slot it may take over when it is their last reader
  /// (analysis::computesInPlace), in operand order; the first that dies here is used.
  llvm::SmallVector<int, 2> inPlaceOf;
  BufferSlot slot;                   ///< where it was placed
};

class LeafBuilder {
public:
  LeafBuilder(const LeafRequest &request, const target::DeviceSpec &device,
              const analysis::CostModel &cost, const CodegenOptions &options)
      : req_(request), device_(device), cost_(cost), options_(options) {}

  absl::StatusOr<Leaf> build() {
    leaf_.core = req_.core;
    size_t n = req_.ops.size();
    leaf_.ops.resize(n);
    leaf_.slots.resize(n);
    valueOfOp_.assign(n, -1);
    instrOfOp_.assign(n, -1);
    for (size_t k = 0; k < n; ++k)
      if (absl::Status st = addOp(static_cast<int>(k), *req_.ops[k]); !st.ok()) return st;
    if (absl::Status st = allocate(); !st.ok()) return st;
    for (PipeInstr &in : leaf_.instrs) {
      std::sort(in.deps.begin(), in.deps.end());
      in.deps.erase(std::unique(in.deps.begin(), in.deps.end()), in.deps.end());
    }
    return std::move(leaf_);
  }

private:
  // --- errors -------------------------------------------------------------------
  absl::Status opError(const ir::Operation &op, llvm::StringRef what) const {
    return absl::InvalidArgumentError(absl::StrCat("'", op.name().str(), "' op at ",
                                                   op.loc().str(), " in subgraph ",
                                                   req_.subgraphId, ": ", what.str()));
  }

  // --- building blocks ------------------------------------------------------------
  int emit(PipeInstr instr) {
    leaf_.instrs.push_back(std::move(instr));
    instrWrites_.push_back(-1);
    return static_cast<int>(leaf_.instrs.size()) - 1;
  }

  int newValue(MemSpace space, int64_t bytes, int op, bool isBlock, int def) {
    LocalValue v;
    v.space = space;
    v.bytes = alignUp(std::max<int64_t>(bytes, 1), device_.buffers.blockBytes);
    v.op = op;
    v.isBlock = isBlock;
    v.def = v.ready = def;
    values_.push_back(std::move(v));
    int id = static_cast<int>(values_.size()) - 1;
    instrWrites_[def] = id;
    return id;
  }

  /// `instr` reads `value`: it waits for the value's last writer.
  void read(int value, int instr) {
    values_[value].readers.push_back(instr);
    leaf_.instrs[instr].deps.push_back(values_[value].ready);
  }

  /// The local value operand `i` of `op` refers to, or an error.
  absl::StatusOr<int> localOperand(const ir::Operation &op, unsigned i) const {
    const ir::Value *v = op.operand(i);
    const ir::Operation *def = v->definingOp();
    int j = def ? req_.localIndex(def) : -1;
    if (j >= 0 && valueOfOp_[j] >= 0) return valueOfOp_[j];
    if (j >= 0)
      return opError(op, absl::StrCat("operand ", i, " is a '", def->name().str(),
                                      "' result, which holds no local tile"));
    if (!v->type().isTile())
      return opError(op, absl::StrCat("operand ", i, " is a GM tensor; compute ops read local "
                                      "tiles (copy_in the tensor first)"));
    return opError(op, absl::StrCat("operand ", i,
                                    " is a local tile of another subgraph; local tiles cannot "
                                    "cross subgraphs (only copy_out/copy_in through GM can); "
                                    "run partition again"));
  }

  // --- ops --------------------------------------------------------------------------
  absl::Status addOp(int k, const ir::Operation &op) {
    LeafOp &lo = leaf_.ops[k];
    ir::Type result = op.resultType();
    lo.code = op.code();
    lo.dtype = result.dtype();
    lo.shape.assign(result.shape().begin(), result.shape().end());
    lo.space = result.isTile() ? result.space() : MemSpace::GM;
    lo.cycles = cost_.opCycles(op);
    lo.bytes = result.sizeInBytes();
    if (std::optional<ir::ReduceView> reduce = ir::ReduceView::of(op)) {
      lo.axes.assign(reduce->axes.begin(), reduce->axes.end());
      lo.keepdim = reduce->keepdim;
      lo.count = reduce->count;
    }
    if (ir::Attribute a = op.attr("perm"); a && a.isIntArray())
      lo.perm.assign(a.getIntArray().begin(), a.getIntArray().end());
    if (ir::Attribute a = op.attr("value"); a && (a.isInt() || a.isFloat()))
      lo.value = a.getNumber();
    if (std::optional<ir::TopKView> tv = ir::TopKView::of(op)) {
      lo.dim = tv->dim;
      lo.k = tv->k;
      lo.largest = tv->largest;
    }
    if (ir::Attribute a = op.attr("dim"); a && a.isInt() && op.code() == OpCode::Gather)
      lo.dim = a.getInt();
    if (std::optional<ir::ScatterView> sv = ir::ScatterView::of(op)) {
      lo.dim = sv->dim;
      lo.reduce = sv->reduce;
    }
    if (std::optional<ir::MatmulView> mm = ir::MatmulView::of(op)) {
      lo.transposeA = mm->transposeA;
      lo.transposeB = mm->transposeB;
    }
    if (op.code() == OpCode::Cast) {
      ir::CastView cast = ir::CastView::of(op);
      lo.castMode = cast.mode;
      lo.saturate = cast.saturate;
      lo.castModeWritten = static_cast<bool>(op.attr("mode"));
    }
    if (op.code() == OpCode::CopyOut) lo.epilogue = ir::FixpipeEpilogue::of(op);
    if (op.code() == OpCode::Div)
      lo.divIntrinsic = ir::divPrecisionOf(op) == ir::DivPrecision::Intrinsic;
    leaf_.cycles += lo.cycles;
    switch (op.code()) {
    case OpCode::CopyIn: return addCopyIn(k, op);
    case OpCode::CopyOut: return addCopyOut(k, op);
    case OpCode::Matmul: return addMatmul(k, op);
    default: return addVector(k, op);
    }
  }

  absl::Status addCopyIn(int k, const ir::Operation &op) {
    LeafOp &lo = leaf_.ops[k];
    MemSpace want = req_.core == target::CoreKind::AIC ? MemSpace::L1 : MemSpace::UB;
    if (lo.space != want)
      return opError(op, absl::StrCat("copies into ", spaceName(lo.space).str(), ", but an ",
                                      std::string(target::coreKindName(req_.core)), " subgraph reads GM into ",
                                      spaceName(want).str()));
    lo.region = leaf_.numRegions++;
    PipeInstr in;
    in.pipe = Pipe::Mte2;
    in.op = k;
    in.bytes = lo.bytes;
    in.region = lo.region;
    // Tokens of this subgraph's own copy_outs order the read after those writes.
    for (unsigned i = 1; i < op.numOperands(); ++i) {
      const ir::Operation *def = op.operand(i)->definingOp();
      int j = def ? req_.localIndex(def) : -1;
      if (j < 0) continue; // another subgraph's write: a dependency between calls
      if (j >= k || instrOfOp_[j] < 0 || leaf_.ops[j].code != OpCode::CopyOut)
        return opError(op, absl::StrCat("operand ", i, " is not a copy_out token written "
                                        "earlier in the subgraph"));
      lo.operands.push_back(j);
      in.deps.push_back(instrOfOp_[j]);
    }
    int instr = emit(std::move(in));
    instrOfOp_[k] = instr;
    valueOfOp_[k] =
        newValue(lo.space, localTileBytes(op.resultType(), device_.buffers.blockBytes), k,
                 false, instr);
    leaf_.copyInBytes += lo.bytes;
    return absl::OkStatus();
  }

  absl::Status addCopyOut(int k, const ir::Operation &op) {
    LeafOp &lo = leaf_.ops[k];
    absl::StatusOr<int> src = localOperand(op, 0);
    if (!src.ok()) return src.status();
    MemSpace from = values_[*src].space;
    Pipe pipe;
    if (req_.core == target::CoreKind::AIV && from == MemSpace::UB) {
      pipe = Pipe::Mte3;
    } else if (req_.core == target::CoreKind::AIC && from == MemSpace::L0C) {
      pipe = Pipe::Fixpipe;
    } else {
      return opError(op, absl::StrCat("writes GM from ", spaceName(from).str(), "; an ",
                                      std::string(target::coreKindName(req_.core)),
                                      " subgraph writes GM from ",
                                      req_.core == target::CoreKind::AIC ? "l0c" : "ub"));
    }
    lo.operands.push_back(values_[*src].op);
    lo.region = leaf_.numRegions++;
    PipeInstr out;
    out.pipe = pipe;
    out.op = k;
    out.bytes = lo.bytes;
    out.region = lo.region;
    // Earlier accesses of the region by this subgraph (a read or a write it
    // overwrites) complete first; other subgraphs' are dependencies between calls.
    for (unsigned i = op.firstDependencyOperand(); i < op.numOperands(); ++i) {
      const ir::Operation *def = op.operand(i)->definingOp();
      int j = def ? req_.localIndex(def) : -1;
      if (j < 0) continue;
      if (j >= k || instrOfOp_[j] < 0 ||
          (leaf_.ops[j].code != OpCode::CopyOut && leaf_.ops[j].code != OpCode::CopyIn))
        return opError(op, absl::StrCat("operand ", i, " is not a copy_in or copy_out of "
                                        "the subgraph before it"));
      out.deps.push_back(instrOfOp_[j]);
    }
    int instr = emit(std::move(out));
    read(*src, instr);
    instrOfOp_[k] = instr;
    leaf_.copyOutBytes += lo.bytes;
    return absl::OkStatus();
  }

  absl::Status addVector(int k, const ir::Operation &op) {
    LeafOp &lo = leaf_.ops[k];
    if (req_.core != target::CoreKind::AIV || lo.space != MemSpace::UB)
      return opError(op, absl::StrCat("is a vector op producing a ", spaceName(lo.space).str(),
                                      " tile in an ", std::string(target::coreKindName(req_.core)),
                                      " subgraph; codegen places vector ops on aiv cores, in ub"));
    PipeInstr in;
    in.pipe = Pipe::Vec;
    in.op = k;
    in.cycles = lo.cycles;
    int instr = emit(std::move(in));
    llvm::SmallVector<int, 2> inPlace;
    for (unsigned i = 0; i < op.numOperands(); ++i) {
      absl::StatusOr<int> v = localOperand(op, i);
      if (!v.ok()) return v.status();
      lo.operands.push_back(values_[*v].op);
      read(*v, instr);
      if (analysis::computesInPlace(op, i)) inPlace.push_back(*v);
    }
    // The quantity the cost model charges: the largest tile the op touches, rows
    // padded to blocks (nothing for an op that moves no data).
    if (!analysis::CostModel::movesNoData(op)) leaf_.vectorBytes += cost_.vectorBytes(op);
    leaf_.vectorPeakCycles += cost_.vectorPeakCycles(op);
    instrOfOp_[k] = instr;
    valueOfOp_[k] = newValue(MemSpace::UB,
                             localTileBytes(op.resultType(), device_.buffers.blockBytes), k,
                             false, instr);
    values_[valueOfOp_[k]].inPlaceOf = std::move(inPlace);
    return absl::OkStatus();
  }

  // A tile matmul: for each L0 block (batch, m, n, then k innermost so partial sums
  // accumulate), MTE1 loads its A part into L0A and its B part into L0B and CUBE
  // multiplies them into the L0C result. Blocks beyond kMaxL0BlocksPerMatmul are
  // merged into that many groups.
  absl::Status addMatmul(int k, const ir::Operation &op) {
    LeafOp &lo = leaf_.ops[k];
    if (req_.core != target::CoreKind::AIC || lo.space != MemSpace::L0C)
      return opError(op, "is a tile matmul outside an aic subgraph or not into l0c");
    llvm::SmallVector<int, 3> operands;
    for (unsigned i = 0; i < op.numOperands(); ++i) {
      absl::StatusOr<int> v = localOperand(op, i);
      if (!v.ok()) return v.status();
      // Operand 2: the previous partial product (l0c) or a bias row (l1).
      MemSpace want = i < 2 ? MemSpace::L1 : MemSpace::L0C;
      if (i == 2 && values_[*v].space == MemSpace::L1) want = MemSpace::L1;
      if (values_[*v].space != want)
        return opError(op, absl::StrCat("operand ", i, " is in ",
                                        spaceName(values_[*v].space).str(), "; expected ",
                                        spaceName(want).str()));
      operands.push_back(*v);
      lo.operands.push_back(values_[*v].op);
    }
    std::optional<ir::MatmulView> mm = ir::MatmulView::of(op);
    if (!mm) return opError(op, "is not a well-formed tile matmul");
    ir::Type ta = op.operandType(0), tb = op.operandType(1), tr = op.resultType();
    unsigned rank = tr.rank();
    int64_t m = mm->m, n = mm->n, kk = mm->k;
    int64_t batch = 1;
    for (unsigned d = 0; d + 2 < rank; ++d) batch *= tr.dim(d);
    int64_t mL0 = m, kL0 = kk, nL0 = n;
    if (const std::optional<ir::CubeTile> &tile = mm->tile) {
      if (tile->m[0] > 0) mL0 = std::min(tile->m[0], m);
      if (tile->k[0] > 0) kL0 = std::min(tile->k[0], kk);
      if (tile->n[0] > 0) nL0 = std::min(tile->n[0], n);
    }
    int64_t mBlocks = ceilDiv(m, mL0), kBlocks = ceilDiv(kk, kL0), nBlocks = ceilDiv(n, nL0);
    int64_t blocks = batch * mBlocks * nBlocks * kBlocks;
    int64_t groups = std::min(blocks, kMaxL0BlocksPerMatmul);
    int64_t esA = ir::elementSize(ta.dtype()), esB = ir::elementSize(tb.dtype());
    std::vector<int64_t> aBytes(groups, 0), bBytes(groups, 0), flops(groups, 0);
    for (int64_t t = 0; t < blocks; ++t) {
      int64_t ki = t % kBlocks, ni = (t / kBlocks) % nBlocks,
              mi = (t / (kBlocks * nBlocks)) % mBlocks;
      int64_t me = std::min(mL0, m - mi * mL0), ke = std::min(kL0, kk - ki * kL0),
              ne = std::min(nL0, n - ni * nL0);
      int64_t g = t * groups / blocks;
      aBytes[g] += me * ke * esA;
      bBytes[g] += ke * ne * esB;
      flops[g] += 2 * me * ne * ke;
    }
    int64_t totalFlops = 0;
    for (int64_t f : flops) totalFlops += f;
    leaf_.flops += totalFlops;
    // Every block slot holds the largest physical L0 block.
    int64_t slotA = mL0 * kL0 * esA, slotB = kL0 * nL0 * esB;

    int64_t cyclesSoFar = 0, flopsSoFar = 0;
    int lastCube = -1;
    int result = -1;
    for (int64_t g = 0; g < groups; ++g) {
      PipeInstr loadA;
      loadA.pipe = Pipe::Mte1;
      loadA.op = k;
      loadA.bytes = aBytes[g];
      int ia = emit(std::move(loadA));
      read(operands[0], ia);
      int blockA = newValue(MemSpace::L0A, slotA, k, true, ia);
      PipeInstr loadB;
      loadB.pipe = Pipe::Mte1;
      loadB.op = k;
      loadB.bytes = bBytes[g];
      int ib = emit(std::move(loadB));
      read(operands[1], ib);
      int blockB = newValue(MemSpace::L0B, slotB, k, true, ib);
      // The op's cycles, split over the groups by their share of the FLOPs (exact sum).
      flopsSoFar += flops[g];
      int64_t cumCycles = totalFlops > 0 ? static_cast<int64_t>(static_cast<__int128>(lo.cycles) *
                                                                flopsSoFar / totalFlops)
                                         : (g + 1 == groups ? lo.cycles : 0);
      PipeInstr cube;
      cube.pipe = Pipe::Cube;
      cube.op = k;
      cube.cycles = cumCycles - cyclesSoFar;
      cyclesSoFar = cumCycles;
      int ic = emit(std::move(cube));
      read(blockA, ic);
      read(blockB, ic);
      if (g == 0) {
        if (operands.size() > 2) read(operands[2], ic);
        result = newValue(MemSpace::L0C, localTileBytes(tr, device_.buffers.blockBytes), k,
                          false, ic);
        if (operands.size() > 2 && analysis::computesInPlace(op, 2))
          values_[result].inPlaceOf.push_back(operands[2]);
      } else {
        leaf_.instrs[ic].deps.push_back(lastCube); // accumulates the previous partial sum
        instrWrites_[ic] = result;
      }
      lastCube = ic;
    }
    values_[result].ready = lastCube;
    valueOfOp_[k] = result;
    instrOfOp_[k] = lastCube;
    return absl::OkStatus();
  }

  // --- buffers ----------------------------------------------------------------------
  int64_t capacityOf(MemSpace s) const {
    switch (s) {
    case MemSpace::UB: return device_.buffers.ub;
    case MemSpace::L1: return device_.buffers.l1;
    case MemSpace::L0A: return device_.buffers.l0a;
    case MemSpace::L0B: return device_.buffers.l0b;
    case MemSpace::L0C: return device_.buffers.l0c;
    case MemSpace::GM: break;
    }
    return 0;
  }

  /// The most bytes live at once (whatever the placement): a lower bound on the need.
  static int64_t maxLiveBytes(llvm::ArrayRef<BufferValue> values) {
    int64_t most = 0;
    for (size_t v = 0; v < values.size(); ++v) {
      int64_t live = 0;
      for (size_t u = 0; u <= v; ++u) {
        bool inPlace = values[v].inPlaceOf == static_cast<int>(u) &&
                       values[u].lastUse == values[v].def;
        if (values[u].lastUse >= values[v].def && !inPlace) live += values[u].bytes;
      }
      most = std::max(most, live);
    }
    return most;
  }

  absl::Status capacityError(MemSpace space, const LocalValue &v, int64_t needed) const {
    const ir::Operation &op = *req_.ops[v.op];
    bool cube = req_.core == target::CoreKind::AIC;
    std::string what =
        v.isBlock ? absl::StrCat("an L0 block of this 'matmul' (", op.loc().str(), ")")
                  : absl::StrCat("the result of '", op.name().str(), "' at ", op.loc().str());
    std::string fix =
        v.isBlock ? "use smaller L0 sizes in set_cube_tile_shapes"
                  : absl::StrCat("use a smaller tile shape (",
                                 cube ? "set_cube_tile_shapes" : "set_vec_tile_shapes",
                                 "), or merge fewer subgraphs into one: a lower ",
                                 cube ? "cube_nbuffer_setting or cube_l1_reuse_setting"
                                      : "vec_nbuffer_setting",
                                 " for group ",
                                 analysis::hashOrderKey(req_.funcIndex, req_.hashOrder));
    return ir::withCategory(
        absl::InvalidArgumentError(absl::StrCat(
            "subgraph ", req_.subgraphId, " (hash order ", req_.hashOrder, ") does not fit ",
            spaceName(space).str(), ": its local tiles need ", needed, " bytes of ",
            spaceName(space).str(), " at once, but the device has ", capacityOf(space),
            " (placement failed at ", what, "); ", fix)),
        ir::DiagCategory::Tile);
  }

  absl::Status allocate() {
    struct SpacePlan {
      std::vector<int> values; // LocalValue ids in this space, by def
      std::vector<BufferValue> requests;
      BufferAllocation tight, pingPong;
    };
    std::array<SpacePlan, kLocalSpaces.size()> plans;
    bool pingPongFits = options_.doubleBuffer;
    // Some buffer would ping-pong (a slot would move) if it had room for twice its
    // tight footprint, but the device's capacity is less than that.
    bool roomLacking = false;
    for (size_t s = 0; s < kLocalSpaces.size(); ++s) {
      SpacePlan &plan = plans[s];
      for (int v = 0; v < static_cast<int>(values_.size()); ++v)
        if (values_[v].space == kLocalSpaces[s]) plan.values.push_back(v);
      if (plan.values.empty()) continue;
      std::stable_sort(plan.values.begin(), plan.values.end(),
                       [&](int a, int b) { return values_[a].def < values_[b].def; });
      llvm::DenseMap<int, int> localIndex;
      for (int i = 0; i < static_cast<int>(plan.values.size()); ++i)
        localIndex[plan.values[i]] = i;
      auto lastUse = [&](const LocalValue &lv) {
        int last = lv.def;
        for (int r : lv.readers) last = std::max(last, r);
        return last;
      };
      for (int v : plan.values) {
        const LocalValue &lv = values_[v];
        BufferValue bv;
        bv.bytes = lv.bytes;
        bv.def = lv.def;
        bv.lastUse = lastUse(lv);
        bv.writerPipes = pipeBit(leaf_.instrs[lv.def].pipe);
        for (int r : lv.readers) bv.readerPipes |= pipeBit(leaf_.instrs[r].pipe);
        if (lv.readers.empty()) bv.readerPipes = bv.writerPipes;
        // In place over the first candidate operand whose last reader is this op and
        // whose slot is large enough.
        for (int c : lv.inPlaceOf) {
          auto it = localIndex.find(c);
          if (it != localIndex.end() && lastUse(values_[c]) == lv.def &&
              values_[c].bytes >= lv.bytes) {
            bv.inPlaceOf = it->second;
            break;
          }
        }
        plan.requests.push_back(bv);
      }
      MemSpace space = kLocalSpaces[s];
      int64_t capacity = capacityOf(space), align = device_.buffers.blockBytes;
      plan.tight = allocateBuffer(plan.requests, capacity, align, AllocPolicy::Tight);
      if (!plan.tight.ok)
        return capacityError(space, values_[plan.values[plan.tight.failedValue]],
                             std::max(plan.tight.neededBytes, maxLiveBytes(plan.requests)));
      if (pingPongFits) {
        int64_t budget = std::min(capacity, 2 * plan.tight.peakBytes);
        plan.pingPong =
            allocateBuffer(plan.requests, capacity, align, AllocPolicy::PingPong, budget);
        pingPongFits = plan.pingPong.ok;
      }
      if (options_.doubleBuffer && 2 * plan.tight.peakBytes > capacity) {
        int64_t room = 2 * plan.tight.peakBytes;
        BufferAllocation roomy =
            allocateBuffer(plan.requests, room, align, AllocPolicy::PingPong, room);
        const BufferAllocation &got = plan.pingPong.ok ? plan.pingPong : plan.tight;
        roomLacking |= roomy.ok && roomy.offsets != got.offsets;
      }
    }
    // Ping-pong everywhere, or (when it does not fit some buffer) tight everywhere.
    bool usePingPong = pingPongFits;
    bool differs = false;
    for (size_t s = 0; s < kLocalSpaces.size(); ++s) {
      SpacePlan &plan = plans[s];
      if (plan.values.empty()) continue;
      const BufferAllocation &chosen = usePingPong ? plan.pingPong : plan.tight;
      if (usePingPong) differs |= plan.pingPong.offsets != plan.tight.offsets;
      leaf_.peakBytes[static_cast<unsigned>(kLocalSpaces[s])] = chosen.peakBytes;
      for (size_t i = 0; i < plan.values.size(); ++i) {
        LocalValue &lv = values_[plan.values[i]];
        lv.slot = BufferSlot{lv.space, chosen.offsets[i], lv.bytes};
        if (!lv.isBlock) leaf_.slots[lv.op] = lv.slot;
        // Write after read: the writer waits for the last reader, per pipe, of every
        // value whose space it overwrites (pipes run in order, so the last one suffices).
        std::array<int, kNumPipes> lastReader;
        lastReader.fill(-1);
        for (int u : chosen.overwrites[i]) {
          const LocalValue &prev = values_[plan.values[u]];
          if (prev.readers.empty()) {
            int p = static_cast<int>(leaf_.instrs[prev.ready].pipe);
            lastReader[p] = std::max(lastReader[p], prev.ready);
          }
          for (int r : prev.readers) {
            int p = static_cast<int>(leaf_.instrs[r].pipe);
            lastReader[p] = std::max(lastReader[p], r);
          }
        }
        for (int r : lastReader)
          if (r >= 0 && r < lv.def) leaf_.instrs[lv.def].deps.push_back(r);
      }
    }
    for (size_t i = 0; i < leaf_.instrs.size(); ++i)
      if (int v = instrWrites_[i]; v >= 0) leaf_.instrs[i].dst = values_[v].slot;
    leaf_.doubleBuffered = usePingPong && differs;
    leaf_.noRoomToDoubleBuffer = roomLacking && !leaf_.doubleBuffered;
    return absl::OkStatus();
  }

  const LeafRequest &req_;
  const target::DeviceSpec &device_;
  const analysis::CostModel &cost_;
  const CodegenOptions &options_;
  Leaf leaf_;
  std::vector<LocalValue> values_;
  std::vector<int> valueOfOp_;   ///< per LeafOp: the value it makes, or -1
  std::vector<int> instrOfOp_;   ///< per LeafOp: its last instruction, or -1
  std::vector<int> instrWrites_; ///< per instruction: the value it writes, or -1
};

} // namespace

absl::StatusOr<Leaf> buildLeaf(const LeafRequest &request, const target::DeviceSpec &device,
                               const analysis::CostModel &cost, const CodegenOptions &options) {
  return LeafBuilder(request, device, cost, options).build();
}

} // namespace ptoc::codegen
