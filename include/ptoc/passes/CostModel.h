// The cost model: estimated cycles of one tile op on one core, from the device
// description. One model, shared by the partitioner (subgraph bounds), the merge
// passes and, later, codegen; every constant is named below with its source.
#pragma once

#include <cstdint>

#include "ptoc/ir/Operation.h"

namespace ptoc::target {
struct DeviceSpec;
}

namespace ptoc::passes {

/// Estimates, in core cycles, what a tile op costs on the core that runs it.
class CostModel {
public:
  explicit CostModel(const target::DeviceSpec &device) : device_(device) {}

  /// Cycles of one tile op (copies, vector and cube compute). Ops that move no
  /// data (return, gm_tensor, subgraph, GM aliases) cost 0.
  int64_t opCycles(const ir::Operation &op) const;
  /// Cycles to move `bytes` between GM and a core-local buffer.
  int64_t transferCycles(int64_t bytes) const;
  /// Bytes a copy_in brings into the core (0 for other ops).
  static int64_t copyInBytes(const ir::Operation &op);

  // --- named constants (cycles) ---
  /// Fixed cost of issuing one DMA transfer (descriptor set-up, first burst). Model
  /// default [L]; small transfers are dominated by it (REFERENCE.md: 1 KB bursts
  /// reach ~10 GB/s against ~260 GB/s for large ones).
  static constexpr int64_t kDmaIssueCycles = 64;
  /// Pipeline latency of one vector instruction: 4-23 cycles [H]; the worst case.
  static constexpr int64_t kVectorLatencyCycles = 23;
  /// Vector ops that run at about half rate: div, exp, log, sqrt, ... [H] (exp
  /// fp16 ~65 ops/cycle vs add ~128).
  static constexpr int64_t kSlowVectorFactor = 2;
  /// Fixed cost of one cube instruction sequence (L1->L0 moves, mmad start) per
  /// L0 block [L]; makes small matmuls inefficient, as measured (a 32x16x16 mmad
  /// reaches ~3370 of 8192 FLOP/cycle) [H].
  static constexpr int64_t kCubeBlockOverheadCycles = 32;

private:
  const target::DeviceSpec &device_;
};

} // namespace ptoc::passes
