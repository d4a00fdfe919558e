// Measured kernels compiled by the session: calibrate::MeasurementSimulator's compile
// callback, and a simulator that uses it (for `ptoc calibrate` and the fidelity
// benchmark).
#pragma once

#include <cstddef>

#include "absl/status/statusor.h"
#include "ptoc/calibrate/Measurements.h"
#include "ptoc/calibrate/MeasurementSimulator.h"
#include "ptoc/codegen/Program.h"
#include "ptoc/target/DeviceSpec.h"

namespace ptoc::session {

/// Compiles `kernel` (its text, function and pass options, set as the default
/// pipeline's knobs) for `device`: no IR text, no statistics. Matmul tiles step K from
/// 0 as the measured kernels do (cube_k_stagger false) unless the kernel's options set
/// it. A pass option that does not parse is an error naming it.
absl::StatusOr<codegen::Program> compileMeasuredKernel(const calibrate::MeasuredKernel &kernel,
                                                       const target::DeviceSpec &device);

/// A MeasurementSimulator whose kernels compileMeasuredKernel compiles.
calibrate::MeasurementSimulator measurementSimulator(size_t maxCachedPrograms = 64);

} // namespace ptoc::session
