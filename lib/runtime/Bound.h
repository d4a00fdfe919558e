// The roofline bound from an already-built region table (simulate() builds one anyway).
#pragma once

#include "RegionTable.h"
#include "ptoc/codegen/Program.h"
#include "ptoc/runtime/RunRecord.h"
#include "ptoc/target/DeviceSpec.h"

namespace ptoc::runtime::sim {

/// rooflineBound() of an AICPU-scheduled kernel with the program's region table given.
RooflineBound computeBound(const codegen::Program &program, const target::DeviceSpec &device,
                           const RegionTable &regions);
/// Sets what a kernel of `kind` pays before its first task: the launch head (aicpu) or
/// its start-up (plain; more when it starts cube cores, `usesCube`).
void setLaunch(RooflineBound &bound, const target::DeviceSpec &device, KernelKind kind,
               bool usesCube);

} // namespace ptoc::runtime::sim
