// PreparedProgram: validation, flattening, region identities and the bound, done once.
#include "ptoc/runtime/PreparedProgram.h"

#include "Bound.h"
#include "PreparedState.h"

namespace ptoc::runtime {

absl::StatusOr<PreparedProgram> PreparedProgram::prepare(const codegen::Program &program,
                                                         const target::DeviceSpec &device) {
  absl::StatusOr<sim::SimProgram> flat = sim::SimProgram::build(program, device);
  if (!flat.ok()) return flat.status();
  auto state = std::make_shared<sim::PreparedState>();
  state->device = device;
  state->program = *std::move(flat);
  state->regions = sim::RegionTable::build(program);
  state->bound = sim::computeBound(program, device, state->regions);
  return PreparedProgram(std::move(state));
}

const RooflineBound &PreparedProgram::bound() const { return state_->bound; }
int PreparedProgram::numCalls() const {
  return static_cast<int>(state_->program.callLeaf.size());
}
uint64_t PreparedProgram::approxBytes() const {
  return sizeof(sim::PreparedState) + state_->program.approxBytes() + state_->regions.approxBytes();
}

} // namespace ptoc::runtime
