// Cycle estimates for tile ops (see CostModel.h for the constants' sources).
#include "ptoc/passes/CostModel.h"

#include <algorithm>
#include <cmath>

#include "ptoc/ir/TileShape.h"
#include "ptoc/target/DeviceSpec.h"

namespace ptoc::passes {

using ir::OpCode;

static int64_t ceilDiv(double a, double b) { return static_cast<int64_t>(std::ceil(a / b)); }

int64_t CostModel::transferCycles(int64_t bytes) const {
  return static_cast<int64_t>(device_.pipes.dmaIssueCycles) + ceilDiv(static_cast<double>(bytes),
                                   device_.memory.coreHbmBytesPerCycle);
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
  switch (op.code()) {
  case OpCode::CopyIn: return transferCycles(op.resultType().sizeInBytes());
  case OpCode::CopyOut: return transferCycles(op.resultType().sizeInBytes());
  case OpCode::Matmul: {
    if (!op.resultType().isTile()) return 0;
    ir::Type a = op.operandType(0), r = op.resultType();
    bool ta = op.attr("transpose_a") && op.attr("transpose_a").getBool();
    int64_t k = ta ? a.dim(a.rank() - 2) : a.dim(a.rank() - 1);
    int64_t m = r.dim(r.rank() - 2), n = r.dim(r.rank() - 1);
    double rate = device_.compute.cubeFlopsPerCycleFp16;
    if (a.dtype() == ir::DType::I8) rate *= device_.compute.cubeInt8Factor;
    if (a.dtype() == ir::DType::F32) rate *= device_.compute.cubeFp32Factor;
    if (a.dtype() == ir::DType::BF16) rate *= device_.compute.cubeBf16Factor;
    // L0 blocks: how many mmad sequences the L1 tile is cut into.
    int64_t blocks = 1;
    if (auto tile = ir::CubeTile::fromAttr(op.attr("cube_tile")))
      blocks = std::max<int64_t>(1, ceilDiv(double(m), double(tile->m[0])) *
                                        ceilDiv(double(k), double(tile->k[0])) *
                                        ceilDiv(double(n), double(tile->n[0])));
    return ceilDiv(2.0 * double(m) * double(n) * double(k), rate) +
           blocks * static_cast<int64_t>(device_.compute.cubeBlockOverheadCycles);
  }
  default: break;
  }
  if (!op.isTileOp() || op.coreKind() != target::CoreKind::AIV) return 0;
  // Vector work: the largest tile the op touches, at the vector unit's width.
  int64_t bytes = op.numResults() ? op.resultType().sizeInBytes() : 0;
  for (const ir::OpOperand &o : op.opOperands())
    bytes = std::max(bytes, o.get()->type().sizeInBytes());
  const target::ComputeSpec &c = device_.compute;
  double rate = 1.0;
  switch (op.code()) {
  case OpCode::Div:
  case OpCode::Reciprocal: rate = c.vectorDivRate; break;
  case OpCode::Exp:
  case OpCode::Log:
  case OpCode::Sqrt:
  case OpCode::Rsqrt:
  case OpCode::Sigmoid:
  case OpCode::Tanh:
  case OpCode::Gelu:
  case OpCode::Pow: rate = c.vectorTranscendentalRate; break;
  case OpCode::Sum:
  case OpCode::Amax:
  case OpCode::Amin:
  case OpCode::Mean: rate = c.vectorReduceRate; break;
  default: break;
  }
  // Full-width passes over the data, then stretched by the op class's rate.
  int64_t passes = ceilDiv(static_cast<double>(bytes), c.vectorBytesPerCycle);
  return static_cast<int64_t>(c.vectorLatencyCycles) + ceilDiv(double(passes), rate);
}

} // namespace ptoc::passes
