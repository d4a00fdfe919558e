// The `ptoc._ptoc` extension module: a thin face over the session (compile, run),
// the builder the tracer drives, and conversions. The `ptoc` package wraps it.
#include <algorithm>
#include <optional>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "absl/strings/str_cat.h"
#include "Builder.h"
#include "ptoc/ir/Type.h"
#include "ptoc/runtime/ExpandLoops.h"
#include "Conversions.h"
#include "Defaults.h"
#include "Errors.h"
#include "KernelBindings.h"
#include "ProfileBindings.h"
#include "TuneBindings.h"
#include "ptoc/passes/Pass.h"
#include "ptoc/profile/OutputDir.h"
#include "ptoc/profile/Summary.h"
#include "ptoc/profile/TraceAnalysis.h"
#include "ptoc/runtime/Executor.h"
#include "ptoc/runtime/Simulator.h"
#include "ptoc/passes/PassKnobs.h"
#include "ptoc/session/Version.h"
#include "ptoc/target/DeviceSpec.h"

namespace py = pybind11;
using namespace ptoc;
using namespace ptoc::python;

PYBIND11_MODULE(_ptoc, m) {
  m.doc() = "ptoc's C++ core (use the `ptoc` package, not this module)";
  registerErrorTranslator();
  m.attr("__version__") = session::version().str();
  bindDefaults(m);

  py::class_<Builder>(m, "Builder")
      .def(py::init([](const py::object &session, const std::string &name, const py::list &args) {
             std::vector<Builder::Arg> specs;
             for (py::handle a : args) {
               auto t = a.cast<py::tuple>();
               specs.push_back({t[0].cast<std::vector<int64_t>>(), t[1].cast<std::string>(),
                                t[2].cast<std::string>()});
             }
             return std::make_unique<Builder>(deviceOf(session), name, specs);
           }),
           py::arg("session"), py::arg("name"), py::arg("args"))
      .def("body",
           [](Builder &parent, const std::string &name, const py::list &args) {
             std::vector<Builder::Arg> specs;
             for (py::handle a : args) {
               auto t = a.cast<py::tuple>();
               specs.push_back({t[0].cast<std::vector<int64_t>>(), t[1].cast<std::string>(),
                                t[2].cast<std::string>()});
             }
             return Builder::body(parent, name, specs);
           })
      .def("adopt_settings", &Builder::adoptSettings)
      .def("loop", &Builder::loop, py::arg("operands"), py::arg("body"), py::arg("name"),
           py::arg("index"), py::arg("start"), py::arg("stop"), py::arg("step"), py::arg("ins"),
           py::arg("outs"), py::arg("parallel") = false)
      .def("placeholder", &Builder::placeholder)
      .def("finish_body", &Builder::finishBody)
      .def("discard_body", &Builder::discardBody)
      .def("binary", &Builder::binary)
      .def("unary", &Builder::unary)
      .def("cast", &Builder::cast, py::arg("x"), py::arg("dtype"), py::arg("mode") = "",
           py::arg("saturate") = true)
      .def("where", &Builder::where)
      .def("reduce", &Builder::reduce)
      .def("matmul", &Builder::matmul)
      .def("div", &Builder::div)
      .def("reshape", &Builder::reshape)
      .def("transpose", &Builder::transpose)
      .def("view", &Builder::view)
      .def("assemble", &Builder::assemble)
      .def("concat", &Builder::concat)
      .def("full", &Builder::full)
      .def("topk", &Builder::topk)
      .def("gather", &Builder::gather)
      .def("expand_clone", &Builder::expandClone)
      .def("scatter", &Builder::scatter)
      .def("shape", &Builder::shape)
      .def("dtype", &Builder::dtype)
      .def("set_location", &Builder::setLocation)
      .def("set_vec_tile", &Builder::setVecTile)
      .def("clear_vec_tile", &Builder::clearVecTile)
      .def("set_cube_tile", &Builder::setCubeTile)
      .def("clear_cube_tile", &Builder::clearCubeTile)
      .def("set_scope", &Builder::setScope)
      .def("finish", &Builder::finish)
      .def("text", &Builder::text, py::arg("locations") = false);

  bindKernels(m);
  bindProfile(m);
  bindTune(m);

  m.def("pass_option_names", &passes::PassKnobs::names,
        "Every pass option name set_pass_options accepts.");
  // Bounds the Python layer checks options against (declared once, in C++).
  m.attr("MAX_HOST_THREADS") = runtime::kMaxHostThreads;
  m.attr("DYNAMIC_DIM") = ir::kDynamicDim;
  m.attr("MIN_SCHED_MODE") = runtime::kMinSchedMode;
  m.attr("MAX_SCHED_MODE") = runtime::kMaxSchedMode;
  m.attr("MAX_DEBUG_MODE") = session::kMaxDebugMode;
  m.attr("MIN_STITCH") = runtime::kMinStitchMaxNum;
  m.attr("MAX_STITCH") = runtime::kMaxStitchMaxNum;
  m.attr("MIN_SCHED_PARALLELISM") = runtime::kMinSchedParallelism;
  m.attr("AUTO_SCHED_PARALLELISM") = runtime::kAutoSchedParallelism;
  m.attr("MAX_SCHED_PARALLELISM") = runtime::kMaxSchedParallelism;
  m.attr("MAX_TOP") = profile::kMaxTop;
  m.attr("DEFAULT_TOP") = profile::SummaryOptions{}.topTasks;
  m.attr("MIN_MAX_TILE_OPS") = passes::CompileBudget::kMinMaxTileOps;
  m.attr("MAX_MAX_TILE_OPS") = passes::CompileBudget::kMaxMaxTileOps;
  m.def(
      "check_pass_option",
      [](const py::handle &nameObj, const py::handle &value) {
        if (!py::isinstance<py::str>(nameObj))
          throw StatusError(ErrorStage::Option,
                            absl::InvalidArgumentError(absl::StrCat(
                                "pass option names are strings, got ",
                                py::repr(nameObj).cast<std::string>())));
        std::string name = nameObj.cast<std::string>();
        passes::PassKnobs knobs;
        throwIfError(ErrorStage::Option, knobs.set(name, optionValueFromPython(name, value)));
      },
      "Raises if `name` is not a pass option or `value` is not valid for it.");
  m.def(
      "pass_option_default",
      [](const std::string &name, const std::optional<std::string> &passName) -> py::object {
        auto defaults = passes::PassKnobs::defaults(name);
        if (passName) {
          for (const auto &[pass, value] : defaults)
            if (pass == *passName) return optionValueToPython(value);
          return py::none();
        }
        if (defaults.empty()) return py::none();
        bool one = std::all_of(defaults.begin(), defaults.end(),
                               [&](const auto &d) { return d.second == defaults[0].second; });
        if (one) return optionValueToPython(defaults[0].second);
        py::dict byPass;
        for (const auto &[pass, value] : defaults) byPass[py::str(pass)] = optionValueToPython(value);
        return byPass;
      },
      py::arg("name"), py::arg("pass_name") = py::none(),
      "The default of a pass option: one value when every pass declaring it agrees, else "
      "{pass: default} (mg_copyin_upper_bound: 1 MiB in l1-reuse-merge, -1 elsewhere); with "
      "pass_name, that pass's default. None for an unknown name or a pass without it.");
  m.def("device_presets", &target::DeviceSpec::presetNames);
  m.def("float_to_bf16", &floatToBF16, "float32 array -> bf16 bit patterns (uint16), nearest-even");
  m.def("bf16_to_float", &bf16ToFloat, "bf16 bit patterns (uint16) -> float32 array");
  m.def(
      "create_output_dir",
      [](const std::string &option) {
        return valueOrThrow(ErrorStage::Run,
                            profile::createRunOutputDir(profile::outputBase(option)));
      },
      "Creates a new run folder under the output base (option, $PTOC_OUTPUT_DIR or ./output).");
}
