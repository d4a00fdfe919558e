// PreparedProgram: a Program made ready to simulate on one device — validated,
// flattened into dense arrays, its GM regions identified and its roofline bound
// computed — once, so simulating it under several options (the tuner tries every
// scheduler mode) repeats only the event loop.
#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "ptoc/codegen/Program.h"
#include "ptoc/runtime/RunRecord.h"
#include "ptoc/target/DeviceSpec.h"

namespace ptoc::runtime {

namespace sim {
struct PreparedState;
} // namespace sim

class PreparedProgram {
public:
  /// Validates `program` against `device` and prepares it. Errors name the leaf, call
  /// or instruction that does not fit the device. The result keeps its own copy of what
  /// it needs (not `program` itself), and copies share it.
  static absl::StatusOr<PreparedProgram> prepare(const codegen::Program &program,
                                                 const target::DeviceSpec &device);

  /// The program's roofline bound on the device.
  const RooflineBound &bound() const;
  /// Calls (tasks) of the program.
  int numCalls() const;
  /// An estimate of the heap bytes it holds (for caches that budget memory).
  uint64_t approxBytes() const;

  /// For the simulator.
  const sim::PreparedState &state() const { return *state_; }

private:
  explicit PreparedProgram(std::shared_ptr<const sim::PreparedState> state)
      : state_(std::move(state)) {}
  std::shared_ptr<const sim::PreparedState> state_;
};

} // namespace ptoc::runtime
