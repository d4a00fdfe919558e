// The roofline bound from an already-built region table (simulate() builds one anyway).
#pragma once

#include "RegionTable.h"
#include "ptoc/codegen/Program.h"
#include "ptoc/runtime/RunRecord.h"
#include "ptoc/target/DeviceSpec.h"

namespace ptoc::runtime::sim {

/// rooflineBound() with the program's region table given.
RooflineBound computeBound(const codegen::Program &program, const target::DeviceSpec &device,
                           const RegionTable &regions);

} // namespace ptoc::runtime::sim
