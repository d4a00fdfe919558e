// Cycle estimates for tile ops (see CostModel.h; every constant is a device field,
// docs/device-model.md gives each one's source).
#include "ptoc/analysis/CostModel.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "ptoc/ir/DivPrecision.h"
#include "ptoc/ir/OpViews.h"
#include "ptoc/ir/TileShape.h"
#include "ptoc/target/DeviceSpec.h"

namespace ptoc::analysis {

using ir::OpCode;

namespace {

double ceilDiv(double a, double b) { return std::ceil(a / b); }

/// The vector op classes of the device's ISA, by throughput (docs/device-model.md).
enum class VecClass {
  Full,          ///< one-input and scalar-operand ops: abs, relu, muls, rec, rsqrt, cast, copy
  Binary,        ///< two tile inputs: add, sub, mul, max, min, compares, and/or, where
  Div,           ///< div
  Transcendental,///< exp, ln, sqrt: a fixed element rate
  Reduce,        ///< row reductions: sum, max, min
};

/// Bytes per cycle of `cls` for elements of `elementBytes` bytes.
double classBytesPerCycle(VecClass cls, unsigned elementBytes, const target::ComputeSpec &c) {
  switch (cls) {
  case VecClass::Full: return c.vectorBytesPerCycle;
  case VecClass::Binary: return c.vectorBytesPerCycle * c.vectorBinaryRate;
  case VecClass::Div: return c.vectorBytesPerCycle * c.vectorDivRate;
  case VecClass::Transcendental:
    // The rate is per element: 16-bit elements move half the bytes of 32-bit ones.
    return c.vectorBytesPerCycle * c.vectorTranscendentalRate *
           std::min(1.0, static_cast<double>(elementBytes) / 4.0);
  case VecClass::Reduce: return c.vectorBytesPerCycle * c.vectorReduceRate;
  }
  return c.vectorBytesPerCycle;
}

/// Whether `op`'s operand `i` is a constant tile (a `full`): the op then runs as its
/// scalar-operand form (adds, muls), at the full rate.
bool isConstantOperand(const ir::Operation &op, unsigned i) {
  const ir::Operation *def = op.operand(i)->definingOp();
  return def && def->code() == OpCode::Full;
}

/// A tile topk_indices as a bitonic top-k of (value, index) pairs on the vector unit,
/// each row padded to P = the next power of two of its length n, K = the next power
/// of two of k (at most P): every K-block is sorted (log K (log K + 1) / 2 stages over
/// P), then pairs of sorted blocks are merged keeping the top K (one stage over half
/// the elements, then log K stages to re-sort them) until one block is left. A stage
/// over m pairs is 5 Binary-class instructions: max and min of the values, the
/// compare mask, and two selects of the indices.
double topkIndicesCycles(const ir::Operation &op, const target::ComputeSpec &c, bool peak) {
  ir::Type x = op.operandType(0);
  std::optional<ir::TopKView> tv = ir::TopKView::of(op);
  if (!tv) return 0; // not well-formed: the verifier reports it
  int64_t dim = tv->dim, k = tv->k;
  int64_t n = x.dim(dim);
  if (n <= 0 || x.numElements() == 0) return 0;
  int64_t rows = x.numElements() / n;
  auto log2Up = [](int64_t v) {
    int64_t l = 0;
    while ((int64_t(1) << l) < v) ++l;
    return l;
  };
  int64_t logP = log2Up(n), logK = std::min(log2Up(k), logP);
  double valueBytes = ir::elementSize(x.dtype()), indexBytes = ir::elementSize(op.resultType().dtype());
  double cycles = 0;
  auto stages = [&](int64_t count, double pairs) {
    double bytes = pairs * double(rows);
    double binary = c.vectorBytesPerCycle * c.vectorBinaryRate;
    double latency = peak ? 0.0 : c.vectorLatencyCycles;
    auto instr = [&](double b) { return peak ? b / binary : ceilDiv(b, binary); };
    double one = 3 * (latency + instr(bytes * valueBytes)) + 2 * (latency + instr(bytes * indexBytes));
    cycles += double(count) * one;
  };
  double p = std::ldexp(1.0, int(logP));
  stages(logK * (logK + 1) / 2, p);
  for (int64_t len = logP; len > logK; --len) {
    p /= 2;
    stages(1 + logK, p);
  }
  return cycles;
}

} // namespace

int64_t CostModel::paddedBytes(ir::Type t) const {
  if (!t.isTile()) return t.sizeInBytes();
  return ir::vecTileBytes(t.shape(), ir::elementSize(t.dtype()), device_.buffers.blockBytes);
}

int64_t CostModel::vectorBytes(const ir::Operation &op) const {
  int64_t bytes = op.numResults() ? paddedBytes(op.resultType()) : 0;
  for (const ir::OpOperand &o : op.opOperands()) bytes = std::max(bytes, paddedBytes(o.get()->type()));
  return bytes;
}

int64_t CostModel::transferCycles(int64_t bytes) const {
  const target::DeviceSpec &d = device_;
  double rate = std::min(d.pipes.gmToUbBytesPerCycle, d.memory.coreHbmBytesPerCycle);
  return static_cast<int64_t>(d.pipes.gmToUbFixedCycles + ceilDiv(double(bytes), rate));
}

int64_t CostModel::copyInBytes(const ir::Operation &op) {
  return op.code() == OpCode::CopyIn ? op.resultType().sizeInBytes() : 0;
}

bool CostModel::movesNoData(const ir::Operation &op) {
  if (op.code() != OpCode::Reshape || op.numOperands() != 1 || !op.resultType().isTile())
    return false;
  ir::Type in = op.operandType(0), out = op.resultType();
  return in.isTile() && in.rank() > 0 && out.rank() > 0 &&
         in.dim(in.rank() - 1) == out.dim(out.rank() - 1);
}

int64_t CostModel::opCycles(const ir::Operation &op) const {
  if (movesNoData(op)) return 0;
  const target::DeviceSpec &d = device_;
  switch (op.code()) {
  case OpCode::CopyIn: {
    // A read, estimated as one that misses L2 (the partitioner's cold view). Into L1
    // it converts row-major GM to the cube's fractal layout (ND -> NZ).
    double bytes = static_cast<double>(op.resultType().sizeInBytes());
    bool toL1 = op.resultType().isTile() && op.resultType().space() == ir::MemSpace::L1;
    double fixed = toL1 ? d.pipes.nd2nzFixedCycles : d.pipes.gmToUbFixedCycles;
    double rate = toL1 ? d.pipes.nd2nzBytesPerCycle : d.pipes.gmToUbBytesPerCycle;
    rate = std::min(rate, d.memory.coreHbmBytesPerCycle);
    return static_cast<int64_t>(fixed + ceilDiv(bytes, rate));
  }
  case OpCode::CopyOut: {
    double bytes = static_cast<double>(op.resultType().sizeInBytes());
    bool fromL0c = op.numOperands() > 0 && op.operandType(0).isTile() &&
                   op.operandType(0).space() == ir::MemSpace::L0C;
    double fixed = fromL0c ? d.pipes.fixpipeFixedCycles : d.pipes.mte3FixedCycles;
    double rate = fromL0c ? d.pipes.fixpipeBytesPerCycle : d.pipes.mte3BytesPerCycle;
    return static_cast<int64_t>(fixed + ceilDiv(bytes, rate));
  }
  case OpCode::Matmul: {
    if (!op.resultType().isTile()) return 0;
    std::optional<ir::MatmulView> mm = ir::MatmulView::of(op);
    if (!mm) return 0; // not a well-formed matmul: the verifier reports it
    const int64_t m = mm->m, n = mm->n, k = mm->k;
    ir::Type r = op.resultType();
    int64_t batch = 1;
    for (unsigned i = 0; i + 2 < r.rank(); ++i) batch *= r.dim(i);
    double rate = d.compute.cubeFlopsPerCycleFp16;
    if (mm->in == ir::DType::I8) rate *= d.compute.cubeInt8Factor;
    if (mm->in == ir::DType::F32) rate *= d.compute.cubeFp32Factor;
    if (mm->in == ir::DType::BF16) rate *= d.compute.cubeBf16Factor;
    // The cube works on whole fractals: 16 rows and columns, and 32 bytes of K (16
    // fp16, 32 int8, 8 fp32 elements). Each L0 block is one mmad; its dimensions are
    // padded to whole fractals, so the padded sizes add up per dimension.
    int64_t mL0 = m, kL0 = k, nL0 = n;
    if (mm->tile) {
      const ir::CubeTile &tile = *mm->tile;
      if (tile.m[0] > 0) mL0 = std::min(tile.m[0], m);
      if (tile.k[0] > 0) kL0 = std::min(tile.k[0], k);
      if (tile.n[0] > 0) nL0 = std::min(tile.n[0], n);
    }
    int64_t kFractal = std::max<int64_t>(1, 32 / ir::elementSize(mm->in));
    auto padded = [](int64_t size, int64_t block, int64_t granule, int64_t &blocks) {
      blocks = (size + block - 1) / block;
      int64_t full = size / block, tail = size % block;
      auto up = [&](int64_t v) { return (v + granule - 1) / granule * granule; };
      return static_cast<double>(full * up(block) + (tail ? up(tail) : 0));
    };
    int64_t mBlocks = 1, kBlocks = 1, nBlocks = 1;
    double pm = padded(m, mL0, 16, mBlocks), pk = padded(k, kL0, kFractal, kBlocks),
           pn = padded(n, nL0, 16, nBlocks);
    double blocks = static_cast<double>(batch * mBlocks * kBlocks * nBlocks);
    double cycles = std::ceil(2.0 * batch * pm * pk * pn / rate) +
                    blocks * d.compute.cubeBlockOverheadCycles + d.compute.cubeLatencyCycles;
    return static_cast<int64_t>(cycles);
  }
  default: break;
  }
  return static_cast<int64_t>(vectorWork(op, /*peak=*/false));
}

double CostModel::vectorPeakCycles(const ir::Operation &op) const {
  return movesNoData(op) ? 0.0 : vectorWork(op, /*peak=*/true);
}

double CostModel::vectorWork(const ir::Operation &op, bool peak) const {
  const target::DeviceSpec &d = device_;
  // Transfers and cube work are not vector work (opCycles prices them apart).
  if (!op.isTileOp() || op.coreKind() != target::CoreKind::AIV || op.code() == OpCode::CopyIn ||
      op.code() == OpCode::CopyOut || op.code() == OpCode::Matmul)
    return 0;
  // Vector work: the largest tile the op touches (vectorBytes), in instructions of the
  // op's classes; each instruction pays the vector latency once (not at peak: the
  // bytes at the class's rate only).
  int64_t bytes = vectorBytes(op);
  unsigned elementBytes = op.numResults() ? ir::elementSize(op.resultType().dtype()) : 4;
  for (const ir::OpOperand &o : op.opOperands())
    elementBytes = std::max(elementBytes, ir::elementSize(o.get()->type().dtype()));
  const target::ComputeSpec &c = d.compute;
  double total = 0;
  auto pass = [&](VecClass cls, double passBytes) {
    double rate = classBytesPerCycle(cls, elementBytes, c);
    total += peak ? passBytes / rate : c.vectorLatencyCycles + ceilDiv(passBytes, rate);
  };
  const double b = static_cast<double>(bytes);
  // A composite op: one pass over the tile per instruction, in issue order.
  auto passes = [&](std::initializer_list<VecClass> classes) {
    for (VecClass cls : classes) pass(cls, b);
  };
  switch (op.code()) {
  case OpCode::Add:
  case OpCode::Sub:
  case OpCode::Mul:
  case OpCode::Max:
  case OpCode::Min:
  // Comparisons (vcmp) and logical and/or (vand/vor on the bool tiles) read two tiles
  // like the arithmetic ops, or one and a scalar: the same rates (an assumption; no
  // separate figure is published for them).
  case OpCode::Eq:
  case OpCode::Ne:
  case OpCode::Lt:
  case OpCode::Le:
  case OpCode::Gt:
  case OpCode::Ge:
  case OpCode::LogicalAnd:
  case OpCode::LogicalOr: {
    bool scalarForm = op.numOperands() == 2 &&
                      (isConstantOperand(op, 0) || isConstantOperand(op, 1));
    pass(scalarForm ? VecClass::Full : VecClass::Binary, b);
    break;
  }
  case OpCode::Div:
    // high_precision: the div instruction; intrinsic: a reciprocal (full rate) and a
    // multiply (binary rate) instead (ir/DivPrecision.h).
    if (ir::divPrecisionOf(op) == ir::DivPrecision::Intrinsic)
      passes({VecClass::Full, VecClass::Binary});
    else
      pass(VecClass::Div, b);
    break;
  // where: a select (vsel) of two tiles under a mask, at the two-input rate.
  case OpCode::Where: pass(VecClass::Binary, b); break;
  case OpCode::Exp:
  case OpCode::Log:
  case OpCode::Sqrt: pass(VecClass::Transcendental, b); break;
  case OpCode::Pow: // exp(y * ln(x))
    passes({VecClass::Transcendental, VecClass::Binary, VecClass::Transcendental});
    break;
  case OpCode::Sigmoid: // 1 / (1 + exp(-x)): muls, exp, adds, rec
    passes({VecClass::Full, VecClass::Transcendental, VecClass::Full, VecClass::Full});
    break;
  case OpCode::Tanh: // (exp(2x) - 1) / (exp(2x) + 1): muls, exp, adds, adds, div
    passes({VecClass::Full, VecClass::Transcendental, VecClass::Full, VecClass::Full,
            VecClass::Div});
    break;
  case OpCode::Gelu: // x * sigmoid(1.702 x): muls, the sigmoid, mul
    passes({VecClass::Full, VecClass::Full, VecClass::Transcendental, VecClass::Full,
            VecClass::Full, VecClass::Binary});
    break;
  case OpCode::Exp2: passes({VecClass::Full, VecClass::Transcendental}); break; // muls ln 2, exp
  case OpCode::Expm1: passes({VecClass::Transcendental, VecClass::Full}); break; // exp, adds -1
  case OpCode::Erfc:
    // Abramowitz-Stegun 7.1.26, as a vector unit evaluates it: |x| (abs), t = 1 /
    // (1 + p|x|) (muls, adds, rec), the degree-5 polynomial in t by Horner (4 x (mul,
    // adds) and a mul), x^2 (mul), -x^2 (muls), exp, the product (mul), and the
    // x < 0 branch 2 - y (compare, select).
    passes({VecClass::Full, VecClass::Full, VecClass::Full, VecClass::Full,
            VecClass::Binary, VecClass::Full, VecClass::Binary, VecClass::Full,
            VecClass::Binary, VecClass::Full, VecClass::Binary, VecClass::Full,
            VecClass::Binary, VecClass::Binary, VecClass::Full, VecClass::Transcendental,
            VecClass::Binary, VecClass::Binary, VecClass::Binary});
    break;
  case OpCode::Sum:
  case OpCode::Amax:
  case OpCode::Amin: pass(VecClass::Reduce, b); break;
  case OpCode::Mean: // a sum, then muls by 1/n on the (smaller) result
    pass(VecClass::Reduce, b);
    pass(VecClass::Full, static_cast<double>(paddedBytes(op.resultType())));
    break;
  case OpCode::TopKIndices: total += topkIndicesCycles(op, c, peak); break;
  case OpCode::Gather: // one gathering read per result element (the input is not streamed)
    pass(VecClass::Binary, static_cast<double>(paddedBytes(op.resultType())));
    break;
  case OpCode::Scatter: {
    // The input copied to the result, then one scattering write per index element
    // (a read-combine-write: two passes with reduce).
    pass(VecClass::Full, static_cast<double>(paddedBytes(op.resultType())));
    double written = static_cast<double>(op.operandType(1).numElements()) *
                     ir::elementSize(op.resultType().dtype());
    pass(VecClass::Binary, written);
    if (std::optional<ir::ScatterView> sv = ir::ScatterView::of(op);
        sv && sv->reduce != ir::ScatterReduce::Replace)
      pass(VecClass::Binary, written);
    break;
  }
  // neg, abs, relu, rec, rsqrt, cast (any rounding mode), full, copies, logical_not;
  // ceil, floor, trunc and round are one rounding conversion (vector cast class) each.
  default: pass(VecClass::Full, b); break;
  }
  return total;
}

} // namespace ptoc::analysis
