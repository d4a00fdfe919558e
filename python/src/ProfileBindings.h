// Bindings of the trace analysis (`ptoc prof` from Python).
#pragma once

#include <pybind11/pybind11.h>

namespace ptoc::python {

/// Adds `analyze_trace(path, top=10, write=False) -> str` to the module.
void bindProfile(pybind11::module_ &m);

} // namespace ptoc::python
