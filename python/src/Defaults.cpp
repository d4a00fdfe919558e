// `_ptoc.option_table()`, `_ptoc.default_options()` and `_ptoc.DEFAULT_DEVICE` (see
// Defaults.h).
#include "Defaults.h"

#include <type_traits>
#include <variant>

#include <pybind11/stl.h>

#include "ptoc/session/OptionTable.h"
#include "ptoc/target/DeviceSpec.h"
#include "ptoc/tune/Search.h"

namespace py = pybind11;

namespace ptoc::python {
namespace {

/// A table option's field in default-constructed option structs, and what it holds:
/// the Python kind ("bool", "int", "str", "stage") and its value there.
struct FieldDefault {
  const char *kind = "int";
  py::object value = py::none();
};

FieldDefault fieldDefault(const session::SessionOption &o) {
  session::CompileOptions compile = kCompileDefaults;
  session::RunOptions run = kRunDefaults;
  session::OptionField field = o.field(compile, run);
  FieldDefault out;
  if (bool **p = std::get_if<bool *>(&field)) out = {"bool", py::bool_(**p)};
  else if (int **p = std::get_if<int *>(&field)) out = {"int", py::int_(**p)};
  else if (unsigned **p = std::get_if<unsigned *>(&field)) out = {"int", py::int_(**p)};
  else if (int64_t **p = std::get_if<int64_t *>(&field)) out = {"int", py::int_(**p)};
  else if (std::string **p = std::get_if<std::string *>(&field)) out = {"str", py::str(**p)};
  else if (session::Stage **p = std::get_if<session::Stage *>(&field))
    out = {"stage", py::str(session::stageName(**p).str())};
  // Python's own default, where the row declares one (a bool's as a bool).
  if (o.pythonDefault)
    out.value = std::string_view(out.kind) == "bool" ? py::object(py::bool_(*o.pythonDefault != 0))
                                                     : py::object(py::int_(*o.pythonDefault));
  return out;
}

} // namespace

void bindDefaults(py::module_ &m) {
  m.attr("DEFAULT_DEVICE") = target::kDefaultPreset;
  m.def(
      "option_table",
      [] {
        py::list rows;
        for (const session::SessionOption &o : session::sessionOptions()) {
          FieldDefault d = fieldDefault(o);
          py::dict row;
          row["name"] = o.name;
          row["dict"] = session::optionDictName(o.dict).str();
          row["kind"] = d.kind;
          row["default"] = d.value;
          row["min"] = o.min ? py::object(py::int_(*o.min)) : py::none();
          row["max"] = o.max ? py::object(py::int_(*o.max)) : py::none();
          row["help"] = o.help;
          row["shown_default"] = o.shownDefault;
          row["flag"] = o.flag;
          if (std::string_view(d.kind) == "stage") {
            py::list stages;
            for (session::Stage s : session::kAllStages)
              stages.append(session::stageName(s).str());
            row["choices"] = stages;
          }
          rows.append(row);
        }
        return rows;
      },
      "The runtime, debug and host options (session/OptionTable.h), one dict each: name, "
      "dict, kind, default, min, max, help, shown_default, flag (the `ptoc run` flag or \"\"), "
      "choices (stages).");
  m.def(
      "default_options",
      [] {
        const session::TuneOptions &t = kTuneDefaults;
        py::dict all;
        for (const session::SessionOption &o : session::sessionOptions()) {
          py::str dict(session::optionDictName(o.dict).str());
          if (!all.contains(dict)) all[dict] = py::dict();
          py::dict entries = all[dict].cast<py::dict>();
          entries[py::str(o.name)] = fieldDefault(o).value;
        }
        py::dict tune;
        tune["strategy"] = tune::strategyName(t.search.strategy).str();
        tune["budget"] = t.search.budget;
        tune["seed"] = t.search.seed;
        tune["threads"] = t.threads;
        tune["use_bank"] = t.useBank;
        all["tune"] = tune;
        return all;
      },
      "The defaults of the Python options, by name: the option table's (from the C++ "
      "option structs) and ptoc.tune's.");
}

} // namespace ptoc::python
