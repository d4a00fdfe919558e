// `ptoc calibrate`: fit a device description to kernels measured on a real part
// (lib/calibrate; docs/fidelity.md).
#pragma once

#include <string>
#include <vector>

namespace ptoc::tools {

/// `ptoc calibrate MEASUREMENTS.json... [--device D] -o OUT.json ...`: `args` are the
/// arguments after `calibrate`. Returns the exit status (0 success, 1 error, 2 usage
/// error); never aborts, and never writes a device that fails the device checks.
int calibrateMain(const std::vector<std::string> &args);

} // namespace ptoc::tools
