// The roofline bound: the time no schedule of a program on a device can beat.
#include "Bound.h"

#include <algorithm>

#include "ptoc/runtime/Simulator.h"

namespace ptoc::runtime {
namespace sim {
namespace {

/// The cube rate of a matmul whose A operand has `t`, relative to fp16.
double cubeFactor(ir::DType t, const target::ComputeSpec &c) {
  switch (t) {
  case ir::DType::I8: return c.cubeInt8Factor;
  case ir::DType::F32: return c.cubeFp32Factor;
  case ir::DType::BF16: return c.cubeBf16Factor;
  default: return 1.0;
  }
}

} // namespace

RooflineBound computeBound(const codegen::Program &p, const target::DeviceSpec &d,
                           const RegionTable &regions) {
  RooflineBound b;
  setLaunch(b, d, KernelKind::Aicpu, /*usesCube=*/false);

  // Per leaf: cube cycles of AIC leaves and vector cycles of AIV leaves (what their cores'
  // CUBE / VEC pipes are busy for), and the fastest cube rate any matmul may use.
  const size_t numLeaves = p.leaves.size();
  std::vector<double> cubeCycles(numLeaves, 0), vecCycles(numLeaves, 0);
  double bestFactor = 0;
  for (size_t l = 0; l < numLeaves; ++l) {
    const codegen::Leaf &leaf = p.leaves[l];
    for (const codegen::PipeInstr &in : leaf.instrs) {
      if (in.pipe == codegen::Pipe::Cube && leaf.core == target::CoreKind::AIC)
        cubeCycles[l] += static_cast<double>(std::max<int64_t>(in.cycles, 0));
      if (in.pipe == codegen::Pipe::Vec && leaf.core == target::CoreKind::AIV)
        vecCycles[l] += static_cast<double>(std::max<int64_t>(in.cycles, 0));
    }
    for (const codegen::LeafOp &op : leaf.ops) {
      if (op.code != ir::OpCode::Matmul) continue;
      ir::DType a = op.dtype;
      if (!op.operands.empty() && op.operands[0] >= 0 &&
          op.operands[0] < static_cast<int>(leaf.ops.size()))
        a = leaf.ops[op.operands[0]].dtype;
      bestFactor = std::max(bestFactor, cubeFactor(a, d.compute));
    }
  }
  if (bestFactor == 0) bestFactor = 1.0;

  double flops = 0, vectorPeak = 0, cubeInstr = 0, vecInstr = 0;
  for (const codegen::Call &c : p.calls) {
    if (c.leaf < 0 || c.leaf >= static_cast<int>(numLeaves)) continue;
    const codegen::Leaf &leaf = p.leaves[c.leaf];
    flops += static_cast<double>(leaf.flops);
    vectorPeak += leaf.vectorPeakCycles;
    cubeInstr += cubeCycles[c.leaf];
    vecInstr += vecCycles[c.leaf];
  }
  // Each term is the smaller of the physical limit and the pipe time the program's own
  // estimates imply: a core's CUBE (VEC) pipe runs one instruction at a time, so the
  // latter is a lower bound of the simulated time even if a program's cycle estimates
  // undercut the device's peak.
  if (d.aicCores > 0)
    b.cubeCycles = std::min(flops / (d.aicCores * d.compute.cubeFlopsPerCycleFp16 * bestFactor),
                            cubeInstr / d.aicCores);
  if (d.aivCores > 0)
    b.vectorCycles =
        std::min(vectorPeak / d.aivCores, vecInstr / d.aivCores);
  b.hbmBytes = regions.compulsoryHbmBytes();
  const double port = d.memory.coreHbmBytesPerCycle;
  auto through = [&](int64_t bytes, int cores) {
    return bytes > 0 && cores > 0 && port > 0 ? static_cast<double>(bytes) / (cores * port) : 0.0;
  };
  const int64_t aicOnly = regions.compulsoryReadBytes(1), aivOnly = regions.compulsoryReadBytes(2);
  b.portCycles = std::max({through(aicOnly, d.aicCores), through(aivOnly, d.aivCores),
                           through(aicOnly + aivOnly + regions.compulsoryReadBytes(3),
                                   d.aicCores + d.aivCores)});
  b.hbmCycles = std::max(static_cast<double>(b.hbmBytes) / d.hbmBytesPerCycle(), b.portCycles);
  return b;
}

void setLaunch(RooflineBound &b, const target::DeviceSpec &d, KernelKind kind, bool usesCube) {
  b.headCycles = kind == KernelKind::Aicpu ? d.launchOverheadUs * d.cyclesPerUs() : 0.0;
  double startUs = usesCube ? d.plainCubeKernelStartUs : d.plainKernelStartUs;
  b.startCycles = kind == KernelKind::Plain ? startUs * d.cyclesPerUs() : 0.0;
}

} // namespace sim

RooflineBound rooflineBound(const codegen::Program &program, const target::DeviceSpec &device,
                            KernelKind kind) {
  RooflineBound b = sim::computeBound(program, device, sim::RegionTable::build(program));
  bool usesCube = false;
  for (const codegen::Call &c : program.calls)
    usesCube |= c.leaf >= 0 && c.leaf < static_cast<int>(program.leaves.size()) &&
                program.leaves[c.leaf].core == target::CoreKind::AIC;
  sim::setLaunch(b, device, kind, usesCube);
  return b;
}

} // namespace ptoc::runtime
