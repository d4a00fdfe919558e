// Conversions between Python values and ptoc's: dtype names, pass knob values,
// tensor specs, and bf16 <-> float32 arrays.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <string>

#include "ptoc/ir/DType.h"
#include "ptoc/passes/PassOptions.h"
#include "ptoc/session/Session.h"

namespace ptoc::python {

/// "f32", "f16", "bf16", "i8", "i32" -> DType (a ValueError-class error otherwise).
ir::DType dtypeFromName(const std::string &name);
std::string dtypeToName(ir::DType t);

/// A Python knob value (bool, int, float, str, or dict {int: int}) as an option value.
passes::OptionValue optionValueFromPython(const std::string &knob, const pybind11::handle &v);
pybind11::object optionValueToPython(const passes::OptionValue &v);
/// A dict of pass knobs ({"pg_lower_bound": 1024, ...}), validated (OptionError).
passes::PassKnobs knobsFromPython(const pybind11::dict &knobs);

/// {"name", "shape", "dtype"} of a kernel argument or result.
pybind11::dict specToPython(const session::TensorSpec &spec);

/// Rounds a float32 array to bf16 (nearest-even), as a uint16 array of bit patterns.
pybind11::array_t<uint16_t> floatToBF16(pybind11::array_t<float, pybind11::array::c_style |
                                                                   pybind11::array::forcecast> a);
/// Widens bf16 bit patterns to float32.
pybind11::array_t<float> bf16ToFloat(pybind11::array_t<uint16_t, pybind11::array::c_style> a);

} // namespace ptoc::python
