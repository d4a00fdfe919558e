// Conversions between Python values and ptoc's.
#include "Conversions.h"

#include <pybind11/stl.h>

#include <cstring>

#include <Eigen/Core>

#include "Errors.h"
#include "absl/strings/str_cat.h"
#include "ptoc/runtime/HostTensor.h"

namespace py = pybind11;

namespace ptoc::python {

ir::DType dtypeFromName(const std::string &name) {
  if (std::optional<ir::DType> t = ir::parseDType(name)) return *t;
  throw StatusError(ErrorStage::Input,
                    absl::InvalidArgumentError(absl::StrCat(
                        "unknown dtype '", name, "'; valid: f32, f16, bf16, i8, i32")));
}

std::string dtypeToName(ir::DType t) { return std::string(ir::dtypeName(t)); }

namespace {

/// A Python int as int64; an option error naming `knob` when it does not fit (pybind11
/// would raise its own RuntimeError).
int64_t int64FromPython(const std::string &knob, const py::handle &v) {
  int overflow = 0;
  long long x = PyLong_AsLongLongAndOverflow(v.ptr(), &overflow);
  if (overflow == 0 && !(x == -1 && PyErr_Occurred())) return x;
  PyErr_Clear();
  throw StatusError(ErrorStage::Option,
                    absl::InvalidArgumentError(absl::StrCat(
                        "pass option '", knob, "': ", py::repr(v).cast<std::string>(),
                        " does not fit in a 64-bit integer")));
}

} // namespace

passes::OptionValue optionValueFromPython(const std::string &knob, const py::handle &v) {
  // bool before int: Python's bool is an int.
  if (py::isinstance<py::bool_>(v)) return v.cast<bool>();
  if (py::isinstance<py::int_>(v)) return int64FromPython(knob, v);
  if (py::isinstance<py::float_>(v)) return v.cast<double>();
  if (py::isinstance<py::str>(v)) return v.cast<std::string>();
  if (py::isinstance<py::dict>(v)) {
    // A setting: keys are hash orders (ints, -1 = default) or "func<F>_<order>".
    passes::GroupSetting map;
    for (auto [key, value] : v.cast<py::dict>()) {
      std::optional<passes::GroupKey> parsed;
      if (py::isinstance<py::int_>(key) && !py::isinstance<py::bool_>(key))
        parsed = passes::GroupKey(int64FromPython(knob, key));
      else if (py::isinstance<py::str>(key))
        if (std::optional<passes::GroupKey> k = passes::parseGroupKey(key.cast<std::string>());
            k && k->perFunction())
          parsed = k;
      if (!parsed || !py::isinstance<py::int_>(value) || py::isinstance<py::bool_>(value))
        throw StatusError(ErrorStage::Option,
                          absl::InvalidArgumentError(absl::StrCat(
                              "pass option '", knob, "': a setting maps groups to counts: each "
                              "key is a hash order (an int; -1 = the default) or a \"func<F>_"
                              "<order>\" str (one root function's group, as the compile "
                              "statistics and the summary print it), each count an int, e.g. "
                              "{0: 4, \"func1_0\": 2, -1: 2}; got ",
                              py::repr(key).cast<std::string>(), ": ",
                              py::repr(value).cast<std::string>(), " in ",
                              py::repr(v).cast<std::string>())));
      if (!map.emplace(*parsed, int64FromPython(knob, value)).second)
        throw StatusError(ErrorStage::Option,
                          absl::InvalidArgumentError(absl::StrCat(
                              "pass option '", knob, "': key ",
                              passes::groupKeyToString(*parsed), " appears twice in ",
                              py::repr(v).cast<std::string>())));
    }
    return map;
  }
  throw StatusError(ErrorStage::Option,
                    absl::InvalidArgumentError(absl::StrCat(
                        "pass option '", knob, "': expected a bool, int, float, str or a "
                        "setting dict ({0: 4, \"func1_0\": 2, -1: 2}), got ",
                        py::repr(v).cast<std::string>())));
}

passes::PassKnobs knobsFromPython(const py::dict &knobs) {
  passes::PassKnobs out;
  for (auto [name, value] : knobs) {
    if (!py::isinstance<py::str>(name))
      throw StatusError(ErrorStage::Option,
                        absl::InvalidArgumentError(absl::StrCat(
                            "pass option names are strings, got ",
                            py::repr(name).cast<std::string>())));
    std::string n = name.cast<std::string>();
    throwIfError(ErrorStage::Option, out.set(n, optionValueFromPython(n, value)));
  }
  return out;
}

py::object optionValueToPython(const passes::OptionValue &v) {
  return std::visit(
      [](const auto &x) -> py::object {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, passes::GroupSetting>) {
          // Plain keys as ints, per-function keys as "func<F>_<order>" (what
          // optionValueFromPython reads back).
          py::dict d;
          for (const auto &[k, n] : x) {
            if (k.perFunction()) d[py::str(passes::groupKeyToString(k))] = py::int_(n);
            else d[py::int_(k.order)] = py::int_(n);
          }
          return d;
        } else {
          return py::cast(x);
        }
      },
      v);
}

py::dict specToPython(const session::TensorSpec &spec) {
  py::dict d;
  d["name"] = spec.name;
  d["shape"] = py::tuple(py::cast(spec.shape));
  d["dtype"] = dtypeToName(spec.dtype);
  return d;
}

py::array_t<uint16_t> floatToBF16(
    py::array_t<float, py::array::c_style | py::array::forcecast> a) {
  std::vector<int64_t> shape(a.shape(), a.shape() + a.ndim());
  py::array_t<uint16_t> out(std::vector<py::ssize_t>(shape.begin(), shape.end()));
  const float *src = a.data();
  uint16_t *dst = out.mutable_data();
  for (py::ssize_t i = 0; i < a.size(); ++i) {
    // Eigen rounds to nearest-even (NaN stays NaN), as the executor's copy_out does.
    Eigen::bfloat16 h(src[i]);
    std::memcpy(&dst[i], &h, sizeof h);
  }
  return out;
}

py::array_t<float> bf16ToFloat(py::array_t<uint16_t, py::array::c_style> a) {
  py::array_t<float> out(std::vector<py::ssize_t>(a.shape(), a.shape() + a.ndim()));
  const uint16_t *src = a.data();
  float *dst = out.mutable_data();
  for (py::ssize_t i = 0; i < a.size(); ++i) {
    uint32_t bits = uint32_t(src[i]) << 16;
    std::memcpy(&dst[i], &bits, sizeof bits);
  }
  return out;
}

} // namespace ptoc::python
