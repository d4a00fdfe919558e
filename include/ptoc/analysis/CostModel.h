// The cost model: estimated cycles of one tile op on one core, from the device
// description. One model, shared by the partitioner (subgraph bounds), the merge
// passes and codegen (compute instructions of pipe programs); every constant it uses
// is a named device field, documented with its source in docs/device-model.md.
#pragma once

#include <cstdint>

#include "ptoc/ir/Operation.h"

namespace ptoc::target {
struct DeviceSpec;
}

namespace ptoc::analysis {

/// Estimates, in core cycles, what a tile op costs on the core that runs it.
class CostModel {
public:
  explicit CostModel(const target::DeviceSpec &device) : device_(device) {}

  /// Cycles of one tile op (copies, vector and cube compute). Ops that move no
  /// data (return, gm_tensor, subgraph, GM aliases, movesNoData tiles) cost 0.
  int64_t opCycles(const ir::Operation &op) const;
  /// The cycles of a vector op's instructions at their classes' peak rates: its bytes
  /// over each class's rate, without per-instruction latency or rounding (0 for other
  /// ops). At most the op's opCycles: what the roofline bound's vector term sums.
  double vectorPeakCycles(const ir::Operation &op) const;
  /// Whether a tile op only renames its operand's data: a tile `reshape` that keeps
  /// the last dimension (it adds or drops size-1 dims), so every row keeps its
  /// place in the buffer.
  static bool movesNoData(const ir::Operation &op);
  /// Cycles of a GM -> UB read of `bytes` that misses L2 (the path's fixed cost plus
  /// the bytes at the slower of the path's rate and the core's HBM rate).
  int64_t transferCycles(int64_t bytes) const;
  /// Bytes a copy_in brings into the core (0 for other ops).
  static int64_t copyInBytes(const ir::Operation &op);
  /// Bytes a vector op works through: the largest tile it touches, each row padded to
  /// whole blocks as UB holds it (a vector instruction covers whole blocks, so a row
  /// shorter than a block costs a block). What its cycles are charged for.
  int64_t vectorBytes(const ir::Operation &op) const;

  /// The device it reads its constants from (every constant is a documented device
  /// field: compute.*, pipes.*, memory.core_hbm_bytes_per_cycle; see
  /// docs/device-model.md).
  const target::DeviceSpec &device() const { return device_; }

private:
  /// Bytes of `t` as a local buffer holds it: a tile's rows padded to whole blocks.
  int64_t paddedBytes(ir::Type t) const;
  /// A vector op's cycles (`peak`: vectorPeakCycles, else opCycles' estimate).
  double vectorWork(const ir::Operation &op, bool peak) const;

  const target::DeviceSpec &device_;
};

} // namespace ptoc::analysis
