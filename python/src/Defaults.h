// The defaults of the options Python declares, by their Python names, read from the
// C++ option structs (session::CompileOptions, RunOptions, TuneOptions): the Python
// option tables, ptoc.tune and the bindings' keyword defaults take them from here, so
// each default is declared once, in C++.
#pragma once

#include <pybind11/pybind11.h>

#include "ptoc/session/Session.h"
#include "ptoc/session/Tuner.h"

namespace ptoc::python {

/// Default-constructed option structs: the source of every keyword default.
inline const session::CompileOptions kCompileDefaults{};
inline const session::RunOptions kRunDefaults{};
inline const session::TuneOptions kTuneDefaults{};

/// Adds `option_table()` (the runtime, debug and host options of
/// session/OptionTable.h, which python/ptoc/options.py views), `default_options()`
/// ({"runtime_options": {...}, "debug_options": {...}, "host_options": {...},
/// "tune": {...}}) and DEFAULT_DEVICE to the module.
void bindDefaults(pybind11::module_ &m);

} // namespace ptoc::python
