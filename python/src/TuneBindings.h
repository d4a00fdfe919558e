// Bindings of the tuner: `_ptoc.tune_text` (search a tensor-level module's knobs),
// `_ptoc.TuneProgress` (its progress bar, as text) and `Session.compile_text` (compile a
// tuned module for the jit cache).
#pragma once

#include <pybind11/pybind11.h>

namespace ptoc::python {

/// Adds tune_text to the module and compile_text to the bound Session.
void bindTune(pybind11::module_ &m);

} // namespace ptoc::python
