// Bindings of the session: Session (a device), Kernel (a compiled function) and
// RunReport, with the GIL released while compiling and running.
#pragma once

#include <pybind11/pybind11.h>

#include "ptoc/target/DeviceSpec.h"

namespace ptoc::python {

/// Adds Session, Kernel and RunReport to the module.
void bindKernels(pybind11::module_ &m);
/// The device of a bound Session object.
const target::DeviceSpec &deviceOf(const pybind11::object &session);

} // namespace ptoc::python
