// What a PreparedProgram holds (ptoc/runtime/PreparedProgram.h): the flattened program,
// its region table and roofline bound, and the device they were made for.
#pragma once

#include "RegionTable.h"
#include "SimProgram.h"
#include "ptoc/runtime/RunRecord.h"
#include "ptoc/target/DeviceSpec.h"

namespace ptoc::runtime::sim {

struct PreparedState {
  target::DeviceSpec device;
  SimProgram program;
  RegionTable regions;
  RooflineBound bound;
};

} // namespace ptoc::runtime::sim
